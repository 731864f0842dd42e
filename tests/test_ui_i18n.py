"""The UI catalogs cover every key the app uses in English and Japanese, no page shows a string
from outside them, numbers and dates follow the language, the language is chosen per user (else
by the browser), and pages stay thin (no database code)."""

from __future__ import annotations

import ast
import re
import string
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from annotator.agreement import METRICS
from annotator.db import init_db, session_scope
from annotator.errors import InvalidValueError
from annotator.models import User
from annotator.services.users import get_user, set_locale
from annotator.ui import i18n
from annotator.ui.catalog_ja import JAPANESE
from annotator.ui.components import PAGE_ROLES
from annotator.ui.i18n import ENGLISH, date_text, datetime_text, language_for, number_text, t, time_text, use_language
from annotator.vocabulary import HOLD_REASONS, LABELS, ROLES, SEVERITIES
from annotator.workflow import State
from tests.factories import PASSWORD, pilot
from tests.conftest import label_button

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


# --- the Japanese catalog ----------------------------------------------------------------------


def _fields(text: str) -> list[str]:
    return sorted({name for _, name, _, _ in string.Formatter().parse(text) if name is not None})


def test_every_english_key_has_a_japanese_entry():
    assert [key for key in ENGLISH if key not in JAPANESE] == []
    assert [key for key in JAPANESE if key not in ENGLISH] == []  # a key renamed in English is renamed here too


def test_every_japanese_entry_has_the_fields_of_its_english_one():
    differ = {key: (_fields(ENGLISH[key]), _fields(JAPANESE[key])) for key in ENGLISH
              if key in JAPANESE and _fields(ENGLISH[key]) != _fields(JAPANESE[key])}
    assert differ == {}


def test_japanese_strings_are_japanese_except_names_ids_and_coefficients():
    def words(text: str) -> str:  # the text without its fields
        return "".join(literal for literal, _, _, _ in string.Formatter().parse(text))

    latin_only = {key for key, text in JAPANESE.items()
                  if re.search(r"[A-Za-z]", words(text)) and not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text)}
    allowed = {key for key in latin_only if key.startswith(("metric.", "metric_short.")) or key.endswith(("_hint", "sha256"))}
    assert latin_only - allowed == {"language.en", "agreement.n"}  # English is named in English; "n = 3 / 5"


def test_a_key_missing_in_japanese_falls_back_to_english(monkeypatch):
    monkeypatch.setitem(ENGLISH, "test.only_in_english", "Only {what} in English")
    with use_language("ja"):
        assert t("test.only_in_english", what="this") == "Only this in English"
        assert t("label.saved", value="支持", claim_id="c1") == "主張 c1 に 支持 を保存しました。"
        assert t("no.such.key") == "no.such.key"


def test_outside_a_streamlit_run_the_language_is_english():
    assert t("page.label") == "Label"
    with use_language("ja"):
        assert t("page.label") == "ラベル付け"
    assert t("page.label") == "Label"


@pytest.mark.parametrize("tag, language", [
    ("ja", "ja"), ("ja-JP", "ja"), ("JA_jp", "ja"), ("en-US", "en"), ("en", "en"), ("fr-FR", "en"), ("jam", "en"),
    ("", "en"), (None, "en"),
])
def test_the_browser_s_language_tag_chooses_the_catalog(tag, language):
    assert language_for(tag) == language


def test_use_language_refuses_a_language_without_a_catalog():
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        with use_language("fr"):
            pass


# --- numbers and dates ---------------------------------------------------------------------------

MOMENT = datetime(2026, 11, 29, 14, 5, 33, tzinfo=UTC)


@pytest.mark.parametrize("language, expected", [
    ("ja", ("2026年11月29日 14:05", "2026年11月29日", "14:05")),
    ("en", ("2026-11-29 14:05", "2026-11-29", "14:05")),  # ISO 8601 and a 24-hour clock
])
def test_dates_and_times_are_written_as_the_language_writes_them(language, expected):
    with use_language(language):
        assert (datetime_text(MOMENT), date_text(MOMENT), time_text(MOMENT)) == expected
        assert date_text(MOMENT.date()) == expected[1]
        assert datetime_text(MOMENT, seconds=True) == expected[0].replace("14:05", "14:05:33")


@pytest.mark.parametrize("value, spec, language, expected", [
    (1234567, "", "en", "1,234,567"),  # a bare integer is grouped
    (1234567, "", "ja", "1,234,567"),
    (1234.5, ",.1f", "de", "1.234,5"),  # the signs come from the locale's data (CLDR)
    (-0.25, ".3f", "de", "-0,250"),
    (0.456, ".0%", "ja", "46%"),
    (2.675, ".2f", "en", "2.67"),  # Python's rounding (of the binary value, 2.67499...), as before
    (0.25, ".0%", "de", "25\xa0%"),  # the locale's percent pattern
    (-0.125, ".1%", "en", "-12.5%"),
    (7, "d", "en", "7"),
    (-8.326672684688674e-17, ".3f", "en", "0.000"),  # a negative number that rounds to zero is zero
    (-0.0, ".3f", "ja", "0.000"),
    (-0.0004, ".3f", "de", "0,000"),
    (-0.004, ".0%", "en", "0%"),
    (-0.0005, ".3f", "en", "-0.001"),  # one that does not keeps its sign
    (-1e-5, ".2e", "en", "-1.00e-05"),
])
def test_numbers_are_written_with_the_language_s_signs(value, spec, language, expected):
    assert number_text(value, spec, language) == expected


def test_numbers_in_a_catalog_string_follow_the_language(monkeypatch):
    monkeypatch.setitem(ENGLISH, "test.number", "{n} claims, {x:.2f}, {share:.0%}")
    monkeypatch.setitem(i18n.CATALOGS, "de", {"test.number": "{n} Aussagen, {x:.2f}, {share:.0%}"})
    monkeypatch.setattr(i18n, "LANGUAGES", (*i18n.LANGUAGES, "de"))
    assert t("test.number", n=12345, x=0.5, share=0.25) == "12,345 claims, 0.50, 25%"
    with use_language("de"):
        assert t("test.number", n=12345, x=0.5, share=0.25) == "12.345 Aussagen, 0,50, 25\xa0%"


def test_the_theme_font_falls_back_to_a_japanese_font_on_every_desktop():
    theme = tomllib.loads((UI.parents[1] / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]
    families = [family.strip().strip("'\"") for family in theme["font"].split(",")]
    assert families[0] == "Source Sans" and families[-1] == "sans-serif"
    assert {"Hiragino Sans", "Noto Sans CJK JP", "Yu Gothic"} <= set(families)


# --- no string outside the catalogs --------------------------------------------------------------

_SHOWN_BY = {  # Streamlit calls whose first argument and text keywords are shown to people
    "title", "header", "subheader", "markdown", "caption", "write", "text", "code_label", "badge", "button",
    "link_button", "download_button", "form_submit_button", "page_link", "text_input", "text_area", "number_input",
    "checkbox", "toggle", "radio", "selectbox", "multiselect", "select_slider", "slider", "segmented_control", "pills",
    "date_input", "time_input", "file_uploader", "color_picker", "chat_input", "info", "warning", "error", "success",
    "toast", "exception", "expander", "popover", "status", "spinner", "tabs", "metric", "progress", "dialog",
    "set_page_config", "Page", "Column", "TextColumn", "NumberColumn", "CheckboxColumn", "SelectboxColumn",
    "LinkColumn", "ListColumn", "DatetimeColumn", "DateColumn", "TimeColumn", "ProgressColumn", "LineChartColumn",
    "BarChartColumn", "AreaChartColumn", "ImageColumn", "JSONColumn", "MultiselectColumn",
}
_TEXT_KEYWORDS = {"label", "help", "placeholder", "caption", "text", "title", "page_title", "format_func", "value_label"}
_NOT_STREAMLIT = {"alt", "pd", "np"}  # Altair's alt.Column(...) is an encoding, not a shown label
_ICON = re.compile(r":material/[a-z0-9_]+:")


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _literal_parts(node: ast.expr) -> list[ast.Constant]:
    """The string literals an argument shows as they are: the literal itself, the literal parts of
    an f-string, a concatenation, a conditional, a list (st.tabs) or a lambda's result
    (format_func). A call (t(...), a helper) or a name computes its text and is not looked into."""
    if isinstance(node, ast.Constant):
        return [node] if isinstance(node.value, str) else []
    if isinstance(node, ast.JoinedStr):
        return [part for value in node.values
                for part in ([value] if isinstance(value, ast.Constant) else _literal_parts(value.value))]
    children = {ast.BinOp: lambda n: [n.left, n.right], ast.IfExp: lambda n: [n.body, n.orelse],
                ast.BoolOp: lambda n: n.values, ast.List: lambda n: n.elts, ast.Tuple: lambda n: n.elts,
                ast.Lambda: lambda n: [n.body]}
    for kind, parts in children.items():
        if isinstance(node, kind):
            return [found for child in parts(node) for found in _literal_parts(child)]
    return []


def hard_coded_strings(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every literal with letters (beyond `:material/icon:` codes) that a
    Streamlit call would show as it is, instead of a string from the catalog."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SHOWN_BY
                and _root(node.func) not in _NOT_STREAMLIT):
            continue
        shown = [*node.args[:1], *(k.value for k in node.keywords if k.arg in _TEXT_KEYWORDS)]
        found += [(part.lineno, part.value) for arg in shown for part in _literal_parts(arg)
                  if re.search(r"[^\W\d_]", _ICON.sub("", part.value))]
    return found


@pytest.mark.parametrize("source, expected", [
    ('st.button("Save")', [(1, "Save")]),
    ('st.title(t("page.label"))', []),
    ('st.markdown(f"**{t(\'case.question\')}**")', []),
    ('st.markdown(f":material/block: **{t(\'passage.forbidden\')}**")', []),
    ('st.caption(f"Saved {n} labels")', [(1, "Saved "), (1, " labels")]),
    ('st.text_input(t("a"), placeholder="gold-v1")', [(1, "gold-v1")]),
    ('st.selectbox(t("a"), xs, format_func=lambda x: "none" if x is None else x)', [(1, "none")]),
    ('col.metric("Cases", 3)', [(1, "Cases")]),
    ('st.tabs([t("a"), "Other"])', [(1, "Other")]),
    ('st.column_config.TextColumn(label="Name", help=t("b"))', [(1, "Name")]),
    ('st.Page(run, title="Home")', [(1, "Home")]),
    ('st.progress(0.5, text="Importing")', [(1, "Importing")]),
    ('st.markdown("**")', []),
    ('st.write("—", 3)', []),
    ('alt.Column("panel:N", title=None)', []),
    ('st.toast(str(error))', []),
])
def test_the_hard_coded_string_check_finds_literals_shown_as_they_are(source, expected):
    assert hard_coded_strings(source) == expected


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: str(p.relative_to(UI)))
def test_no_page_shows_a_string_from_outside_the_catalog(path):
    assert hard_coded_strings(path.read_text(encoding="utf-8")) == []


def magic_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal standing alone as a statement outside a function or
    class, but the module's docstring: Streamlit's "magic" writes such a string on the page
    (an attribute docstring under a page's constant would show as text)."""
    found = []

    def walk(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)):
                found.append((statement.lineno, statement.value.value))
            for field in ("body", "orelse", "finalbody", "handlers"):
                walk([s for s in getattr(statement, field, []) if isinstance(s, ast.stmt | ast.excepthandler)])

    body = ast.parse(source).body
    walk(body[1:] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body)
    return found


@pytest.mark.parametrize("source, expected", [
    ('"""The page."""\nN = 1\n"""About N."""\n', [(3, "About N.")]),
    ('"""The page."""\ndef f():\n    """Docstring."""\n', []),
    ('if x:\n    "shown"\n', [(2, "shown")]),
    ('N = 1  # a comment\n', []),
])
def test_the_magic_string_check_finds_strings_streamlit_would_write(source, expected):
    assert magic_strings(source) == expected


@pytest.mark.parametrize("path", sorted((UI / "views").glob("*.py")), ids=lambda p: p.name)
def test_no_page_holds_a_bare_string_that_streamlit_would_write(path):
    assert magic_strings(path.read_text(encoding="utf-8")) == []


# --- choosing the language: the browser, the login page, the user's stored choice ----------------

APP = UI / "app.py"


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    """A migrated SQLite database with a pilot (alice and bob label; carol adjudicates; root is
    the admin), for AppTest runs of the app."""
    url = f"sqlite:///{tmp_path}/a.db"
    engine = init_db(url)
    with session_scope(engine) as session:
        pilot(session)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def _open(locale: str | None, name: str | None = None) -> AppTest:
    """A new browser session whose browser asks for `locale`; logged in as `name` when given."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.context["locale"] = locale
    at.run()
    if name is not None:
        at.text_input(key="login.name").input(name)
        at.text_input(key="login.password").input(PASSWORD)
        at.form_submit_button[0].click().run()
    assert not at.exception
    return at


def _stored_locale(engine, name: str) -> str | None:  # noqa: ANN001
    with session_scope(engine) as session:
        return session.exec(select(User.locale).where(User.name == name)).one()


def _store_locale(engine, name: str, locale: str | None) -> None:  # noqa: ANN001
    with session_scope(engine) as session:
        set_locale(session, get_user(session, name), locale)


def test_a_japanese_browser_gets_the_login_page_in_japanese(app_db):
    at = _open("ja-JP")
    assert [x.value for x in at.title] == ["RAG 主張アノテーター"]
    assert at.text_input(key="login.name").label == "ユーザー名"
    assert at.form_submit_button[0].label == "ログイン"
    assert at.selectbox(key="language.login").value == "browser"


def test_an_english_browser_gets_english(app_db):
    at = _open("en-US", "alice")
    at.switch_page("views/label.py").run()
    assert [x.value for x in at.title] == ["Label"]
    assert label_button(at, "support").label == "support"


def test_a_japanese_browser_gets_every_page_text_in_japanese(app_db):
    at = _open("ja", "alice")
    at.switch_page("views/label.py").run()
    assert not at.exception
    assert [x.value for x in at.title] == ["ラベル付け"]
    assert [label_button(at, v).label for v in LABELS] == ["支持", "矛盾", "根拠不足"]
    assert at.sidebar.selectbox(key="language.sidebar").label == "表示言語"
    shown = " ".join([x.value for x in at.caption] + [x.value for x in at.header] + [x.value for x in at.markdown])
    assert "Claim" not in shown and "claim" not in shown and "主張" in shown


def test_the_login_page_choice_holds_for_the_visit(app_db):
    at = _open("en-US")
    at.selectbox(key="language.login").set_value("ja").run()
    assert [x.value for x in at.title] == ["RAG 主張アノテーター"]
    at.text_input(key="login.name").input("alice")
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    at.switch_page("views/label.py").run()
    assert [x.value for x in at.title] == ["ラベル付け"]
    assert _stored_locale(app_db, "alice") is None  # chosen before logging in: not stored


def test_the_sidebar_switch_stores_the_choice_and_shows_it_in_the_same_run(app_db):
    at = _open("en-US", "alice")
    at.switch_page("views/label.py").run()
    assert [x.value for x in at.title] == ["Label"]
    at.sidebar.selectbox(key="language.sidebar").set_value("ja").run()
    assert not at.exception
    assert [x.value for x in at.title] == ["ラベル付け"]
    assert at.sidebar.button(key="app.logout").label == "ログアウト"
    assert _stored_locale(app_db, "alice") == "ja"
    # AppTest reads the widgets of the run it shows by calling their format_func in the test's
    # thread, outside any run: it must read them in the language that run was in.
    with use_language("ja"):
        at.sidebar.selectbox(key="language.sidebar").set_value("browser").run()
    assert [x.value for x in at.title] == ["Label"]
    assert _stored_locale(app_db, "alice") is None


@pytest.mark.parametrize("stored, browser, title", [
    ("en", "ja-JP", "Label"),  # the stored choice wins over the browser
    ("ja", "en-US", "ラベル付け"),
    (None, "ja-JP", "ラベル付け"),  # no stored choice: the browser's
    (None, None, "Label"),
])
def test_the_stored_choice_wins_over_the_browser(app_db, stored, browser, title):
    _store_locale(app_db, "alice", stored)
    at = _open(browser, "alice")
    at.switch_page("views/label.py").run()
    assert [x.value for x in at.title] == [title]
    assert at.sidebar.selectbox(key="language.sidebar").value == (stored or "browser")


def test_a_stored_choice_is_en_ja_or_none(app_db):
    with session_scope(app_db) as session:
        alice = get_user(session, "alice")
        assert set_locale(session, alice, "ja").locale == "ja"
        assert set_locale(session, alice, None).locale is None
        with pytest.raises(InvalidValueError, match="unknown language 'fr'"):
            set_locale(session, alice, "fr")
