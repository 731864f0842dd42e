"""Pages never end or restart a script run inside an open transaction: no st.rerun, st.switch_page
or st.stop within a `with ui.db()` (or read_db, session_scope, read_scope) block. Such a call
raises through the block, so its writes would roll back after the user was told they landed, or
(rerun) a new run would start while this one still holds SQLite's write lock."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

UI = REPO / "annotator" / "ui"
TRANSACTIONS = frozenset({"db", "read_db", "session_scope", "read_scope"})
RUN_ENDERS = frozenset({"rerun", "switch_page", "stop"})


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _opens_transaction(item: ast.withitem) -> bool:
    expr = item.context_expr
    return isinstance(expr, ast.Call) and _name(expr.func) in TRANSACTIONS


def _run_enders_in(block: ast.With) -> list[int]:
    return [node.lineno for statement in block.body for node in ast.walk(statement)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in RUN_ENDERS and _name(node.func.value) == "st"]


def run_enders_inside_transactions(source: str) -> list[int]:
    """Line numbers of st.rerun / st.switch_page / st.stop calls inside a transaction block."""
    return [line for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.With) and any(_opens_transaction(item) for item in node.items)
            for line in _run_enders_in(node)]


@pytest.mark.parametrize("path", sorted(UI.rglob("*.py")), ids=lambda p: str(p.relative_to(UI)))
def test_no_page_ends_its_run_inside_a_transaction(path: Path):
    assert run_enders_inside_transactions(path.read_text(encoding="utf-8")) == []


def test_the_check_finds_a_rerun_inside_a_transaction():
    source = "with ui.db() as session:\n    save(session)\n    if done:\n        st.rerun()\nst.stop()\n"
    assert run_enders_inside_transactions(source) == [4]
