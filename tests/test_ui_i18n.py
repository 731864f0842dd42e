"""The UI catalog covers every key the app uses, and pages stay thin (no database code)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from annotator.agreement import METRICS
from annotator.ui.components import PAGE_ROLES
from annotator.ui.i18n import ENGLISH, t
from annotator.vocabulary import HOLD_REASONS, LABELS, ROLES, SEVERITIES
from annotator.workflow import State

UI = Path(__file__).resolve().parents[1] / "annotator" / "ui"
UI_FILES = sorted(UI.rglob("*.py"))


def _t_calls(path: Path) -> list[ast.expr]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.args[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args
    ]


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: str(p.relative_to(UI)))
def test_every_literal_key_used_in_the_ui_is_in_the_catalog(path):
    missing = [arg.value for arg in _t_calls(path) if isinstance(arg, ast.Constant) and arg.value not in ENGLISH]
    assert missing == []


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: str(p.relative_to(UI)))
def test_every_computed_key_has_a_known_prefix(path):
    prefixes = [
        arg.values[0].value
        for arg in _t_calls(path)
        if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant)
    ]
    assert [p for p in prefixes if not any(key.startswith(p) for key in ENGLISH)] == []


@pytest.mark.parametrize("prefix, names", [
    ("value", LABELS), ("severity", SEVERITIES), ("hold", HOLD_REASONS), ("role", ROLES),
    ("state", [s.value for s in State]), ("metric", METRICS), ("page", list(PAGE_ROLES)),
])
def test_every_vocabulary_word_has_a_ui_string(prefix, names):
    assert [name for name in names if f"{prefix}.{name}" not in ENGLISH] == []


def test_t_fills_fields_and_shows_an_unknown_key_as_itself():
    assert t("label.saved", value="support", claim_id="c1") == "Saved support on claim c1."
    assert t("no.such.key") == "no.such.key"


@pytest.mark.parametrize("path", sorted((UI / "views").glob("*.py")), ids=lambda p: p.name)
def test_pages_hold_no_database_code(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    forbidden = {"sqlmodel", "sqlalchemy", "annotator.models", "annotator.db"}
    assert {name for name in imported if name and name.split(".")[0] in {"sqlmodel", "sqlalchemy"} or name in forbidden} == set()
