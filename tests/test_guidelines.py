"""The labeling guideline: publishing versions (who, what is refused), every label recording the
version current when it was saved (both save paths, SQLite and PostgreSQL), the command line,
the demo's guideline, and the side panel and the admin's Guideline tab in the app."""

from __future__ import annotations

import hashlib
import subprocess
import unicodedata
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import func, select
from streamlit.proto.Block_pb2 import Block
from streamlit.testing.v1 import AppTest

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.errors import (
    ImportFileError, InvalidValueError, NotFoundError, PermissionDeniedError, StaleWriteError,
)
from annotator.models import Guideline, Label, LabelEvent
from annotator.services.access import OPERATOR
from annotator.services.guidelines import (
    current_guideline, get_guideline, guideline_text, list_guidelines, publish_guideline, read_guideline_file,
)
from annotator.services.imports import import_labels
from annotator.services.labeling import assigned_claims, save_label, save_label_as
from annotator.services.users import add_user, get_user
from tests.factories import PASSWORD, pilot
from tests.conftest import annotator_in, label_button

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "annotator" / "ui" / "app.py"
V1 = "# Guideline v1\n\n- **support**: the passage states the claim.\n"
V2 = "# Guideline v2\n\n- **support**: the passage states the claim, numbers exactly.\n"


@pytest.fixture
def team(any_engine):
    """pilot(): alice and bob label every case; carol adjudicates; root is the admin."""
    with session_scope(any_engine) as s:
        pilot(s)
    return any_engine


def _publish(engine, version: str, markdown: str, by: str = "root"):  # noqa: ANN202 - GuidelineView
    with session_scope(engine) as s:
        return publish_guideline(s, get_user(s, by), version, markdown)


def _counts(engine) -> tuple[int, int]:
    """(guidelines, guideline audit events)."""
    with session_scope(engine) as s:
        return (s.exec(select(func.count(Guideline.id))).one(),
                s.exec(select(func.count(LabelEvent.id)).where(LabelEvent.entity == "guideline")).one())


def _label(engine, claim_pk: int, name: str) -> Label:
    with session_scope(engine) as s:
        return s.exec(select(Label).where(Label.claim_pk == claim_pk, Label.labeler_pk == get_user(s, name).id)).one()


def _claims(engine) -> list[int]:
    with session_scope(engine) as s:
        return assigned_claims(s, get_user(s, "alice"))


# --- publishing ------------------------------------------------------------------------------------


def test_a_published_version_is_current_with_its_hash_publisher_and_one_audit_event(team):
    with session_scope(team) as s:
        assert current_guideline(s) is None and list_guidelines(s) == []
    published = _publish(team, " v1 ", V1)
    assert (published.version, published.markdown, published.published_by) == ("v1", V1, "root")
    assert published.sha256 == hashlib.sha256(V1.encode("utf-8")).hexdigest()
    _publish(team, "2026-11", V2)
    with session_scope(team) as s:
        assert current_guideline(s).version == "2026-11"
        assert [g.version for g in list_guidelines(s)] == ["2026-11", "v1"]
        assert get_guideline(s, "v1").markdown == V1
        events = s.exec(select(LabelEvent).where(LabelEvent.entity == "guideline").order_by(LabelEvent.id)).all()
        assert [(e.action, e.actor_pk, e.after["version"]) for e in events] == [
            ("create", get_user(s, "root").id, "v1"), ("create", get_user(s, "root").id, "2026-11")]
        assert events[0].after["sha256"] == published.sha256


def test_the_text_is_stored_nfc_with_newline_line_ends(team):
    published = _publish(team, "v1", unicodedata.normalize("NFD", "# ガイドライン\r\nです\r\n"))
    assert published.markdown == "# ガイドライン\nです\n"
    assert published.sha256 == hashlib.sha256("# ガイドライン\nです\n".encode()).hexdigest()


@pytest.mark.parametrize("by, version, text, error, words", [
    ("alice", "v2", V2, PermissionDeniedError, "only an admin may publish"),
    ("carol", "v2", V2, PermissionDeniedError, "only an admin may publish"),
    ("disabled root", "v2", V2, PermissionDeniedError, "only an admin may publish"),
    ("operator", "v2", V2, InvalidValueError, "named admin"),
    ("root", "v2", " \n\t\n", InvalidValueError, "text is empty"),
    ("root", "v2", "", InvalidValueError, "text is empty"),
    ("root", "v1", V2, InvalidValueError, "version 'v1' exists already"),
    ("root", "v2", V1, InvalidValueError, "is the current guideline, version 'v1'"),
    ("root", "v2", V1.replace("\n", "\r\n"), InvalidValueError, "is the current guideline"),
    ("root", "  ", V2, InvalidValueError, "version is empty"),
    ("root", "v\n2", V2, InvalidValueError, "invisible character"),
    ("root", "v" * 65, V2, InvalidValueError, "at most 64"),
    ("root", "v2", "# a\x00b", InvalidValueError, r"U\+0000"),
])
def test_a_refused_publish_says_why_and_writes_nothing(team, by, version, text, error, words):
    _publish(team, "v1", V1)
    before = _counts(team)
    with session_scope(team) as s, pytest.raises(error, match=words):
        if by == "operator":
            publish_guideline(s, OPERATOR, version, text)
        else:
            admin = get_user(s, by.removeprefix("disabled "))
            if by.startswith("disabled"):
                s.expunge(admin)
                admin.active = False  # an admin disabled since they logged in
            publish_guideline(s, admin, version, text)
    assert _counts(team) == before
    with session_scope(team) as s:
        assert current_guideline(s).version == "v1"


def test_an_older_text_may_come_back_as_a_new_version(team):
    _publish(team, "v1", V1)
    _publish(team, "v2", V2)
    assert _publish(team, "v3", V1).version == "v3"  # only the CURRENT text is refused


def test_an_unknown_version_names_the_published_ones(team):
    _publish(team, "v1", V1)
    with session_scope(team) as s, pytest.raises(NotFoundError, match="no guideline version 'v9'; published: v1"):
        get_guideline(s, "v9")


@pytest.mark.parametrize("data, words", [
    (b"", "g.md is empty"),
    (b" \n\n", "g.md is empty"),
    (b"\xff\xfe#\x00 \x00", "g.md: UTF-16"),
    (b"# caf\xe9\n", r"g.md: not UTF-8 text \(byte 0xE9 at byte 6\)"),
])
def test_an_upload_that_is_no_utf8_text_is_refused_naming_it(data, words):
    with pytest.raises(ImportFileError, match=words):
        guideline_text(data, "g.md")


def test_an_upload_with_a_byte_order_mark_loses_it():
    assert guideline_text("\ufeff# G\n".encode(), "g.md") == "# G\n"


def test_a_missing_file_or_a_folder_is_refused_naming_it(tmp_path):
    with pytest.raises(ImportFileError, match=f"{tmp_path / 'no.md'}: no such file"):
        read_guideline_file(tmp_path / "no.md")
    with pytest.raises(ImportFileError, match="is a folder"):
        read_guideline_file(tmp_path)


# --- labels record the current version ----------------------------------------------------------------


def _save(engine, how: str, name: str, claim_pk: int, value: str, **options):  # noqa: ANN202
    with session_scope(engine) as s:
        if how == "save_label":
            return save_label(s, get_user(s, name), claim_pk, value, **options)
        return save_label_as(s, name, get_user(s, name).id, claim_pk, value, **options)


@pytest.mark.parametrize("how", ["save_label", "save_label_as"])
def test_a_label_records_the_version_current_when_it_was_saved(team, how):
    first, second, third = _claims(team)[:3]
    _save(team, how, "alice", first, "support")
    assert _label(team, first, "alice").guideline_version == ""  # nothing published yet
    _publish(team, "v1", V1)
    _save(team, how, "alice", second, "contradict", severity="legal")
    assert _label(team, second, "alice").guideline_version == "v1"
    _publish(team, "v2", V2)
    assert _label(team, first, "alice").guideline_version == ""  # a later version changes no stored label
    assert _label(team, second, "alice").guideline_version == "v1"
    _save(team, how, "alice", third, "support")
    assert _label(team, third, "alice").guideline_version == "v2"
    with session_scope(team) as s:
        event = s.exec(select(LabelEvent).where(LabelEvent.claim_pk == third, LabelEvent.entity == "label")).one()
        assert event.after["guideline_version"] == "v2"


@pytest.mark.parametrize("how", ["save_label", "save_label_as"])
def test_a_revised_label_records_the_version_it_was_revised_under(team, how):
    claim = _claims(team)[0]
    _publish(team, "v1", V1)
    _save(team, how, "alice", claim, "support")
    _publish(team, "v2", V2)
    _save(team, how, "alice", claim, "support")  # the same content again: nothing written, v1 stays
    assert (_label(team, claim, "alice").guideline_version, _label(team, claim, "alice").revision) == ("v1", 1)
    _save(team, how, "alice", claim, "insufficient", expected_revision=1)
    assert (_label(team, claim, "alice").guideline_version, _label(team, claim, "alice").revision) == ("v2", 2)
    with session_scope(team) as s:
        update = s.exec(select(LabelEvent).where(LabelEvent.claim_pk == claim, LabelEvent.action == "update")).one()
        assert (update.before["guideline_version"], update.after["guideline_version"]) == ("v1", "v2")


@pytest.mark.parametrize("how", ["save_label", "save_label_as"])
def test_a_label_saved_for_a_version_no_longer_current_is_refused(team, how):
    claim = _claims(team)[0]
    _publish(team, "v1", V1)
    shown = "v1"  # the page was shown v1 ...
    _publish(team, "v2", V2)  # ... then v2 was published
    with pytest.raises(StaleWriteError, match="guideline is now version 'v2'.*shown version 'v1'"):
        _save(team, how, "alice", claim, "support", guideline_version=shown)
    with session_scope(team) as s:
        assert s.exec(select(Label).where(Label.claim_pk == claim)).all() == []
        assert s.exec(select(LabelEvent).where(LabelEvent.claim_pk == claim)).all() == []
    _save(team, how, "alice", claim, "support", guideline_version="v2")
    assert _label(team, claim, "alice").guideline_version == "v2"


@pytest.mark.parametrize("how", ["save_label", "save_label_as"])
def test_without_a_published_guideline_the_callers_version_is_recorded(team, how):
    claim = _claims(team)[0]
    _save(team, how, "alice", claim, "support", guideline_version="team-wiki-3")
    assert _label(team, claim, "alice").guideline_version == "team-wiki-3"


def test_the_two_labels_of_a_claim_can_differ_in_version_and_each_keeps_its_own(team):
    claim = _claims(team)[0]
    _publish(team, "v1", V1)
    _save(team, "save_label_as", "alice", claim, "support")
    _publish(team, "v2", V2)
    _save(team, "save_label", "bob", claim, "contradict")
    assert (_label(team, claim, "alice").guideline_version, _label(team, claim, "bob").guideline_version) == ("v1", "v2")


def test_imported_labels_keep_what_the_file_says_not_the_current_version(team, tmp_path):
    _publish(team, "v1", V1)
    labels = tmp_path / "labels.csv"
    labels.write_text("claim_id,labeler,label\ncase-1-c1,dana,support\n", encoding="utf-8")
    with session_scope(team) as s:
        import_labels(s, OPERATOR, labels)
    with session_scope(team) as s:
        imported = s.exec(select(Label).where(Label.labeler_pk == get_user(s, "dana").id)).one()
        assert (imported.source, imported.guideline_version) == ("import", "")


# --- the demo -------------------------------------------------------------------------------------------


def test_the_demo_publishes_its_japanese_guideline_as_v1_once(tmp_path):
    from annotator.services.demo import DEMO_GUIDELINE, seed_demo

    engine = init_db(f"sqlite:///{tmp_path / 'demo.db'}")
    with session_scope(engine) as s:
        assert seed_demo(s, release_dir=tmp_path / "releases")
    with session_scope(engine) as s:
        current = current_guideline(s)
        assert (current.version, current.published_by) == ("v1", "admin")
        assert current.markdown == DEMO_GUIDELINE.read_text(encoding="utf-8")
        for word in ("support", "contradict", "insufficient", "leak", "gold_undetermined", "引用", "重大度", "保留"):
            assert word in current.markdown
        assert seed_demo(s, release_dir=tmp_path / "releases") is None
        assert len(list_guidelines(s)) == 1
    engine.dispose()


# --- the command line ---------------------------------------------------------------------------------


def cli(*args: str, db: str, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    """`annotator ARGS --db DB` in the folder `cwd`, in this process (conftest.annotator_in)."""
    done = annotator_in(cwd, *args, "--db", db)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def cli_db(tmp_path):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    cli("init", db=db, cwd=tmp_path)
    cli("users", "add", "root", "--role", "admin", "--password", PASSWORD, db=db, cwd=tmp_path)
    cli("users", "add", "alice", "--role", "labeler", "--password", PASSWORD, db=db, cwd=tmp_path)
    return db


def test_the_command_line_publishes_shows_and_lists_versions(cli_db, tmp_path):
    assert cli("guideline", "list", db=cli_db, cwd=tmp_path).stdout == "No guideline published yet.\n"
    (tmp_path / "v1.md").write_text(V1, encoding="utf-8")
    (tmp_path / "v2.md").write_text(V2, encoding="utf-8")
    published = cli("guideline", "publish", "v1.md", "--version", "v1", "--by", "root", db=cli_db, cwd=tmp_path)
    assert published.stdout.startswith("Published guideline v1 from v1.md by root (")
    cli("guideline", "publish", "v2.md", "--version", "v2", "--by", "root", db=cli_db, cwd=tmp_path)
    shown = cli("guideline", "show", db=cli_db, cwd=tmp_path)
    assert shown.stdout == V2  # the Markdown as published, to redirect into a file
    assert shown.stderr.startswith("guideline v2, published ") and "by root" in shown.stderr
    assert cli("guideline", "show", "--version", "v1", db=cli_db, cwd=tmp_path).stdout == V1
    lines = cli("guideline", "list", db=cli_db, cwd=tmp_path).stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["v2", "v1"]
    assert lines[0].endswith("(current)") and not lines[1].endswith("(current)")
    import json

    rows = json.loads(cli("guideline", "list", "--json", db=cli_db, cwd=tmp_path).stdout)
    assert [(r["version"], r["current"], r["published_by"]) for r in rows] == [("v2", True, "root"), ("v1", False, "root")]
    assert rows[1]["sha256"] == hashlib.sha256(V1.encode()).hexdigest()


@pytest.mark.parametrize("content, by, words", [
    (None, "root", "missing.md: no such file"),
    (b"", "root", "missing.md is empty"),
    (b"\n \n", "root", "missing.md is empty"),
    (b"# caf\xe9", "root", "missing.md: not UTF-8 text"),
    (V1.encode(), "alice", "only an admin may publish"),
    (V1.encode(), "nobody", "nobody"),
])
def test_a_bad_publish_is_an_error_naming_the_file_or_the_person_and_nothing_lands(cli_db, tmp_path, content, by, words):
    if content is not None:
        (tmp_path / "missing.md").write_bytes(content)
    failed = cli("guideline", "publish", "missing.md", "--version", "v1", "--by", by, db=cli_db, cwd=tmp_path, ok=False)
    assert failed.returncode == 1 and failed.stderr.startswith("Error: ") and words in failed.stderr
    assert cli("guideline", "list", db=cli_db, cwd=tmp_path).stdout == "No guideline published yet.\n"


def test_show_without_a_guideline_or_with_an_unknown_version_is_an_error(cli_db, tmp_path):
    failed = cli("guideline", "show", db=cli_db, cwd=tmp_path, ok=False)
    assert failed.returncode == 1 and "no guideline is published yet" in failed.stderr
    (tmp_path / "v1.md").write_text(V1, encoding="utf-8")
    cli("guideline", "publish", "v1.md", "--version", "v1", "--by", "root", db=cli_db, cwd=tmp_path)
    failed = cli("guideline", "show", "--version", "v7", db=cli_db, cwd=tmp_path, ok=False)
    assert failed.returncode == 1 and "no guideline version 'v7'; published: v1" in failed.stderr


def test_publish_requires_a_version_and_an_admin(cli_db, tmp_path):
    (tmp_path / "v1.md").write_text(V1, encoding="utf-8")
    usage = cli("guideline", "publish", "v1.md", "--by", "root", db=cli_db, cwd=tmp_path, ok=False)
    assert usage.returncode == 2 and "--version" in usage.stderr


# --- the app ------------------------------------------------------------------------------------------


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    """A pilot database for AppTest (DATABASE_URL): alice and bob label, carol adjudicates, root administers."""
    url = f"sqlite:///{tmp_path / 'app.db'}"
    engine = init_db(url)
    with session_scope(engine) as s:
        pilot(s)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def open_app(name: str, page: str) -> AppTest:
    """A new browser session, logged in as `name`, on `page` (e.g. "views/label.py")."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def panel(at: AppTest) -> tuple[list[str], list[str]]:
    """(the sidebar's expander labels, the Markdown shown in the sidebar)."""
    return [e.label for e in at.sidebar.expander], [m.value for m in at.sidebar.markdown]


def test_the_label_page_shows_the_current_guideline_in_the_side_panel(app_db):
    at = open_app("alice", "views/label.py")
    assert [t.value for t in at.title] == ["Label"]
    assert "No labeling guideline is published yet." in [c.value for c in at.sidebar.caption]
    _publish(app_db, "v1", V1)
    _publish(app_db, "v2", V2)
    at.run()
    labels, shown = panel(at)
    assert len(labels) == 1 and labels[0].startswith("Guideline v2 · published ")
    assert V2.strip() in shown and V1.strip() not in shown


def test_a_label_page_showing_an_older_guideline_refuses_the_save_then_records_the_one_it_shows(app_db):
    _publish(app_db, "v1", V1)
    at = open_app("alice", "views/label.py")
    claim = at.session_state["label.claim_pk"]
    at.text_area(key=f"label.rationale.{claim}").input("kept through the refusal").run()
    _publish(app_db, "v2", V2)  # published after the page showed v1: the label must not claim v2 unread
    label_button(at, "support").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "the labeling guideline is now version 'v2', published after you were shown version 'v1'; your input is "
        "kept: read the new version in the side panel, then save again"]
    with session_scope(app_db) as s:
        assert s.exec(select(Label).where(Label.claim_pk == claim)).all() == []
    assert at.session_state["label.claim_pk"] == claim
    assert at.text_area(key=f"label.rationale.{claim}").value == "kept through the refusal"
    assert panel(at)[0][0].startswith("Guideline v2 · published ")  # the page now shows v2
    label_button(at, "support").click().run()
    assert [e.value for e in at.error] == []
    assert _label(app_db, claim, "alice").guideline_version == "v2"


def test_a_guideline_published_while_the_label_page_is_open_is_announced_once_and_opened(app_db):
    _publish(app_db, "v1", V1)
    at = open_app("alice", "views/label.py")
    claim = at.session_state["label.claim_pk"]
    assert [i.value for i in at.info if "guideline" in i.value] == []
    _publish(app_db, "v2", V2)
    at.text_area(key=f"label.rationale.{claim}").input("a rerun, not a save").run()  # the draft's rerun
    assert [i.value for i in at.info if "guideline" in i.value] == [
        "A new guideline version, v2, was published: read it in the sidebar. Your labels from now on record it."]
    assert at.sidebar.expander[0].proto.expanded
    at.run()
    assert [i.value for i in at.info if "guideline" in i.value] == []  # said once
    assert not at.sidebar.expander[0].proto.expanded


def test_the_guideline_opens_in_a_dialog_as_wide_as_the_page_from_its_panel(app_db):
    _publish(app_db, "v1", V1)
    at = open_app("alice", "views/label.py")
    assert _dialogs(at) == []
    at.sidebar.button(key="guideline.open_wide").click().run()
    assert not at.exception
    (dialog,) = _dialogs(at)
    assert dialog.proto.dialog.title.startswith("Guideline v1 · published ") and dialog.proto.dialog.width == Block.Dialog.DialogWidth.LARGE
    assert [m.value for m in dialog.get("markdown")] == [V1.strip()]
    at.run()  # any other click closes it
    assert _dialogs(at) == []


def _dialogs(at) -> list:  # noqa: ANN001 - an AppTest; its dialog blocks
    found = []

    def walk(node) -> None:  # noqa: ANN001
        if getattr(node, "type", None) == "dialog":
            found.append(node)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def test_the_adjudicate_page_shows_the_guideline_too(app_db):
    _publish(app_db, "v1", V1)
    at = open_app("carol", "views/adjudicate.py")
    assert [t.value for t in at.title] == ["Adjudicate"]
    labels, shown = panel(at)
    assert labels[0].startswith("Guideline v1 · published ") and V1.strip() in shown


def test_an_admin_previews_and_publishes_a_guideline_on_the_admin_page(app_db):
    at = open_app("root", "views/admin.py")
    at.text_area(key="admin.guideline_text").input(V1).run()
    assert V1.strip() in [m.value for m in at.main.markdown]  # the preview renders the text box
    at.text_input(key="admin.guideline_version").input("v1")
    at.button(key="admin.guideline_publish").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Published guideline v1: labels saved from now on record it."]
    versions = at.dataframe[-1].value
    assert list(versions["Version"]) == ["v1"] and list(versions["Current"]) == [True]
    at.button(key="admin.guideline_publish").click().run()  # the same text again, with no version
    assert [e.value for e in at.error] == ["the guideline version is empty; give it a name such as v1 or 2026-11"]
    at.text_input(key="admin.guideline_version").input("v2")
    at.button(key="admin.guideline_publish").click().run()
    assert [e.value for e in at.error] == [
        "this text is the current guideline, version 'v1', unchanged; edit it before publishing a new version"]
    with session_scope(app_db) as s:
        assert [g.version for g in list_guidelines(s)] == ["v1"]



def test_a_version_name_differing_only_in_case_and_a_text_differing_only_in_its_ending_are_refused(any_engine):
    with session_scope(any_engine) as session:
        admin = add_user(session, OPERATOR, "boss", ["admin"], "boss-pass-1234")
        publish_guideline(session, admin, "v2", "# Guideline\n\nSupport needs a passage.\n")
    with session_scope(any_engine) as session, pytest.raises(InvalidValueError, match="differs only in case from the published version 'v2'"):
        publish_guideline(session, get_user(session, "boss"), "V2", "# Guideline\n\nAnother text.\n")
    with session_scope(any_engine) as session, pytest.raises(InvalidValueError, match="this text is the current guideline"):
        publish_guideline(session, get_user(session, "boss"), "v3", "# Guideline\n\nSupport needs a passage.\n\n\n  ")
    with session_scope(any_engine) as session:
        assert [g.version for g in list_guidelines(session)] == ["v2"]
