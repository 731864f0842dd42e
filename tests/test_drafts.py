"""Drafts: a labeler's unsaved input on a claim survives a reload, stays private, and goes when
the label is saved. Service tests on SQLite and PostgreSQL; page tests through AppTest, where a
new AppTest is a new browser session (a reload or a reconnect)."""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from sqlmodel import func, select

from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.errors import InvalidValueError, PermissionDeniedError, StaleWriteError
from annotator.models import Claim, Draft, Label, LabelEvent, utcnow
from annotator.services import drafts
from annotator.services.drafts import discard_draft, get_draft, save_draft
from annotator.services.labeling import assigned_claims, save_label
from annotator.services.users import add_user, get_user
from annotator.ui import language
from tests.factories import PASSWORD, pilot
from tests.test_ui_app import MARKER, engine, open_app, page_dump, shown_claim  # noqa: F401 - engine: the app's fixture
from tests.conftest import label_button

RESTORED = re.compile(r"Restored your unsaved draft from \d\d:\d\d UTC\.")


# --- the service -------------------------------------------------------------------------------


@pytest.fixture
def team_db(any_engine):
    with session_scope(any_engine) as session:
        pilot(session)
        add_user(session, OPERATOR, "dana", ["labeler"], PASSWORD)  # a labeler with no assignment
    return any_engine


def _first_claim(engine) -> int:  # noqa: ANN001
    with session_scope(engine) as s:
        return assigned_claims(s, get_user(s, "alice"))[0]


def _drafts(engine) -> list[Draft]:  # noqa: ANN001
    with session_scope(engine) as s:
        return list(s.exec(select(Draft)))


def test_save_draft_upserts_one_row_per_user_and_claim_and_keeps_the_text_as_typed(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        first = save_draft(s, get_user(s, "alice"), claim_pk, rationale="first ")
    with session_scope(team_db) as s:
        second = save_draft(s, get_user(s, "alice"), claim_pk, value="contradict", rationale="  second\n",
                            passage_ids=["pilot-p1-2"], severity="legal", expected_updated_at=first.updated_at)
    assert second.updated_at > first.updated_at
    assert (first.replaced_at, second.replaced_at) == (None, None)
    with session_scope(team_db) as s:
        draft = get_draft(s, get_user(s, "alice"), claim_pk)
    assert draft == drafts.DraftView("contradict", ("pilot-p1-2",), "  second\n", "legal", second.updated_at)
    assert len(_drafts(team_db)) == 1


def test_a_save_over_a_draft_written_elsewhere_reports_it(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        other_tab = save_draft(s, get_user(s, "alice"), claim_pk, rationale="from the other tab")
    with session_scope(team_db) as s:  # this tab saw no draft
        this_tab = save_draft(s, get_user(s, "alice"), claim_pk, rationale="from this tab")
    assert this_tab.replaced_at == other_tab.updated_at
    with session_scope(team_db) as s:
        assert get_draft(s, get_user(s, "alice"), claim_pk).rationale == "from this tab"


def test_a_draft_is_read_only_by_its_owner(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        save_draft(s, get_user(s, "alice"), claim_pk, value="support", rationale=MARKER)
    with session_scope(team_db) as s:
        assert get_draft(s, get_user(s, "bob"), claim_pk) is None  # bob labels the same claim
        assert discard_draft(s, get_user(s, "bob"), claim_pk) is False
        for name in ("carol", "root", "dana"):  # adjudicator, admin, a labeler not assigned
            with pytest.raises(PermissionDeniedError):
                get_draft(s, get_user(s, name), claim_pk)
            with pytest.raises(PermissionDeniedError):
                save_draft(s, get_user(s, name), claim_pk, rationale="x")
            with pytest.raises(PermissionDeniedError):
                discard_draft(s, get_user(s, name), claim_pk)
    assert [(d.labeler_pk, d.rationale) for d in _drafts(team_db)] == [(_pk(team_db, "alice"), MARKER)]


def _pk(engine, name: str) -> int:  # noqa: ANN001
    with session_scope(engine) as s:
        return get_user(s, name).id


def test_a_draft_is_no_audit_event(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        before = s.exec(select(func.count(LabelEvent.id))).one()
        saved = save_draft(s, get_user(s, "alice"), claim_pk, rationale="typing")
        save_draft(s, get_user(s, "alice"), claim_pk, rationale="typing more", expected_updated_at=saved.updated_at)
        discard_draft(s, get_user(s, "alice"), claim_pk)
        assert s.exec(select(func.count(LabelEvent.id))).one() == before


@pytest.mark.parametrize("field, bad, words", [
    ("value", "maybe", "unknown label 'maybe'"),
    ("severity", "huge", "unknown severity 'huge'"),
    ("passage_ids", ["pilot-p2-1"], "not shown with this claim"),
])
def test_a_draft_with_an_unknown_value_is_refused(team_db, field, bad, words):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s, pytest.raises(InvalidValueError, match=words):
        save_draft(s, get_user(s, "alice"), claim_pk, **{field: bad})


def test_saving_the_label_deletes_the_draft_on_create_and_on_revise(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        save_draft(s, get_user(s, "alice"), claim_pk, rationale="before the first label")
        save_draft(s, get_user(s, "bob"), claim_pk, rationale="bob's own draft")
    with session_scope(team_db) as s:
        label = save_label(s, get_user(s, "alice"), claim_pk, "support")
        assert get_draft(s, get_user(s, "alice"), claim_pk) is None
        revision = label.revision
        save_draft(s, get_user(s, "alice"), claim_pk, rationale="revising")
    with session_scope(team_db) as s:
        assert get_draft(s, get_user(s, "alice"), claim_pk).rationale == "revising"
        save_label(s, get_user(s, "alice"), claim_pk, "contradict", expected_revision=revision)
    assert [d.rationale for d in _drafts(team_db)] == ["bob's own draft"]  # only alice's went


def test_a_refused_save_keeps_the_draft(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        save_label(s, get_user(s, "alice"), claim_pk, "support")  # in another tab
        save_draft(s, get_user(s, "alice"), claim_pk, value="contradict", rationale="this tab's reason")
    with session_scope(team_db) as s:
        with pytest.raises(StaleWriteError):
            save_label(s, get_user(s, "alice"), claim_pk, "contradict", rationale="this tab's reason")
        assert get_draft(s, get_user(s, "alice"), claim_pk).value == "contradict"


def test_a_draft_older_than_the_label_is_not_offered(team_db):
    claim_pk = _first_claim(team_db)
    with session_scope(team_db) as s:
        save_draft(s, get_user(s, "alice"), claim_pk, rationale="old")
        now = utcnow() + timedelta(seconds=1)  # e.g. `annotator labels import` after the draft
        s.add(Label(claim_pk=claim_pk, labeler_pk=get_user(s, "alice").id, value="support", passage_ids=[],
                    source="import", created_at=now, updated_at=now))
    with session_scope(team_db) as s:
        assert get_draft(s, get_user(s, "alice"), claim_pk) is None
        assert save_draft(s, get_user(s, "alice"), claim_pk, rationale="new").replaced_at is None


def test_two_sessions_saving_the_first_draft_at_once_both_succeed(team_db, monkeypatch):
    """Both read "no draft" before either writes (forced on PostgreSQL; on SQLite the second waits
    at BEGIN IMMEDIATE): the loser of the insert updates the winner's row, no error."""
    claim_pk = _first_claim(team_db)
    both_read = threading.Barrier(2, timeout=1.0)
    reads: list[str] = []
    stored = drafts._stored

    def held_read(session, user, claim_pk, *, lock=False):  # noqa: ANN001, ANN202
        found = stored(session, user, claim_pk, lock=lock)
        reads.append(threading.current_thread().name)
        if len(reads) <= 2:
            try:
                both_read.wait()
            except threading.BrokenBarrierError:
                pass
        return found

    monkeypatch.setattr(drafts, "_stored", held_read)
    results, errors = {}, []

    def tab(name: str) -> None:
        try:
            with session_scope(team_db) as s:
                results[name] = save_draft(s, get_user(s, "alice"), claim_pk, rationale=f"typed in {name}")
        except Exception as error:  # noqa: BLE001 - the test reports any error
            errors.append(error)

    threads = [threading.Thread(target=tab, args=(name,), name=name) for name in ("tab-1", "tab-2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    rows = _drafts(team_db)
    assert len(rows) == 1
    winner = next(name for name in results if rows[0].rationale == f"typed in {name}")
    loser = next(name for name in results if name != winner)
    assert results[winner].replaced_at == results[loser].updated_at  # the later write says so
    assert results[loser].replaced_at is None
    if team_db.dialect.name == "postgresql":
        assert len(reads) == 3  # the loser's insert hit the unique constraint and re-read


# --- the Label page ----------------------------------------------------------------------------


def _claim_pk(engine, claim_id: str) -> int:  # noqa: ANN001
    with session_scope(engine) as s:
        return s.exec(select(Claim.id).where(Claim.claim_id == claim_id)).one()


def _page_drafts(engine) -> list[tuple]:  # noqa: ANN001
    with session_scope(engine) as s:
        return [(d.value, d.rationale, d.passage_ids, d.severity) for d in s.exec(select(Draft))]


def _type(at, claim_pk: int, rationale: str = "", cite: tuple[str, ...] = (), severity: str | None = None) -> None:  # noqa: ANN001
    """Change inputs one at a time, as a person does (each change is one rerun)."""
    if rationale:
        at.text_area(key=f"label.rationale.{claim_pk}").input(rationale).run()
    for passage_id in cite:
        at.checkbox(key=f"label.cite.{claim_pk}.{passage_id}").check().run()
    if severity:
        at.selectbox(key=f"label.severity.{claim_pk}").set_value(severity).run()
    assert not at.exception and [e.value for e in at.error] == []


def _notes(at) -> list[str]:  # noqa: ANN001
    return [i.value for i in at.info] + [w.value for w in at.warning]


def test_a_typed_draft_survives_a_reload_and_goes_when_the_label_is_saved(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    _type(at, claim_pk, f"{MARKER} typed", cite=("case-1-p2",), severity="amount_or_deadline")
    assert _page_drafts(engine) == [(None, f"{MARKER} typed", ["case-1-p2"], "amount_or_deadline")]
    assert any(c.value.startswith("Your input is kept as a draft") for c in at.caption)

    reloaded = open_app("aoi")  # a new browser session: nothing of the old one's state
    assert shown_claim(reloaded) == "case-1-c1"
    assert reloaded.text_area(key=f"label.rationale.{claim_pk}").value == f"{MARKER} typed"
    assert reloaded.checkbox(key=f"label.cite.{claim_pk}.case-1-p2").value is True
    assert reloaded.checkbox(key=f"label.cite.{claim_pk}.case-1-p1").value is False
    assert reloaded.selectbox(key=f"label.severity.{claim_pk}").value == "amount_or_deadline"
    assert len(reloaded.info) == 1 and RESTORED.fullmatch(reloaded.info[0].value)
    shown = [node for node in reloaded.main.children.values()  # the page's language tag shows nothing
             if not getattr(node.proto, "id", "").endswith(f"-{language.TAG_CONTAINER}")]
    first = shown[0]  # the row of the title and the progress bar
    while first.type != "title" and getattr(first, "children", None):
        first = next(iter(first.children.values()))
    assert first.type == "title"  # no stray text above it

    label_button(reloaded, "contradict").click().run()
    assert [t.value for t in reloaded.toast] == ["Saved contradict on claim case-1-c1."]
    assert _page_drafts(engine) == []
    with session_scope(engine) as s:
        saved = s.exec(select(Label).where(Label.claim_pk == claim_pk)).one()
        assert (saved.value, saved.rationale, saved.passage_ids, saved.severity) == (
            "contradict", f"{MARKER} typed", ["case-1-p2"], "amount_or_deadline")
    again = open_app("aoi", query={"claim": "case-1-c1"})
    assert _notes(again) == [] and "Discard draft" not in page_dump(again)


def test_typing_and_pressing_a_label_in_one_go_leaves_no_draft(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    at.text_area(key=f"label.rationale.{claim_pk}").input("typed then saved at once")
    at.checkbox(key=f"label.cite.{claim_pk}.case-1-p1").check()
    label_button(at, "support").click().run()  # the inputs' callbacks run in the same rerun
    assert [t.value for t in at.toast] == ["Saved support on claim case-1-c1."]
    assert _page_drafts(engine) == []


def test_going_to_another_claim_and_back_keeps_the_typed_input(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    _type(at, claim_pk, "typed before moving on")
    at.button(key="label.next").click().run()
    at.button(key="label.previous").click().run()
    assert shown_claim(at) == "case-1-c1"
    assert at.text_area(key=f"label.rationale.{claim_pk}").value == "typed before moving on"


def test_a_stale_refusal_keeps_the_input_and_the_chosen_label_across_a_reload(engine):
    first_tab = open_app("aoi")
    second_tab = open_app("aoi")
    claim_pk = first_tab.session_state["label.claim_pk"]
    label_button(second_tab, "support").click().run()  # the other tab saves first
    _type(first_tab, claim_pk, "typed in the first tab")
    label_button(first_tab, "contradict").click().run()
    assert len(first_tab.error) == 1 and "changed elsewhere" in first_tab.error[0].value
    assert any(w.value.startswith("Your input is kept below, also as a draft") for w in first_tab.warning)
    assert first_tab.text_area(key=f"label.rationale.{claim_pk}").value == "typed in the first tab"
    assert _page_drafts(engine) == [("contradict", "typed in the first tab", [], None)]

    reloaded = open_app("aoi", query={"claim": "case-1-c1"})
    assert reloaded.text_area(key=f"label.rationale.{claim_pk}").value == "typed in the first tab"
    assert len(reloaded.info) == 1
    assert re.fullmatch(r"Restored your unsaved draft from \d\d:\d\d UTC\. You had chosen contradict; "
                        r"it is not saved until you press a label button\.", reloaded.info[0].value)
    label_button(reloaded, "contradict").click().run()  # now against the label it shows
    assert [e.value for e in reloaded.error] == []
    assert _page_drafts(engine) == []
    with session_scope(engine) as s:
        assert s.exec(select(Label.value).where(Label.claim_pk == claim_pk)).one() == "contradict"


def test_two_tabs_editing_one_draft_are_each_told(engine):
    first_tab = open_app("aoi")
    second_tab = open_app("aoi")
    claim_pk = first_tab.session_state["label.claim_pk"]
    _type(first_tab, claim_pk, "first tab's words")
    second_tab.text_area(key=f"label.rationale.{claim_pk}").input("second tab's words").run()
    assert len(second_tab.warning) == 1
    assert second_tab.warning[0].value.startswith("This replaced the draft another tab or window of yours had kept at")
    first_tab.run()  # its next rerun, whatever triggers it
    assert [w.value for w in first_tab.warning if w.value.startswith("Another tab or window of yours changed")] != []
    assert first_tab.text_area(key=f"label.rationale.{claim_pk}").value == "first tab's words"  # kept on screen
    assert _page_drafts(engine) == [(None, "second tab's words", [], None)]


def test_discarding_the_draft_starts_the_inputs_again_from_the_saved_label(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    at.text_area(key=f"label.rationale.{claim_pk}").input("saved reason")
    label_button(at, "insufficient").click().run()
    at.button(key="label.previous").click().run()
    _type(at, claim_pk, "second thoughts", cite=("case-1-p1",))
    reloaded = open_app("aoi", query={"claim": "case-1-c1"})
    assert reloaded.text_area(key=f"label.rationale.{claim_pk}").value == "second thoughts"
    reloaded.button(key="label.draft_discard").click().run()
    assert [t.value for t in reloaded.toast] == ["Draft discarded."]
    assert reloaded.text_area(key=f"label.rationale.{claim_pk}").value == "saved reason"
    assert reloaded.checkbox(key=f"label.cite.{claim_pk}.case-1-p1").value is False
    assert _notes(reloaded) == [] and _page_drafts(engine) == []


def test_no_other_labeler_adjudicator_or_admin_ever_sees_a_draft(engine):
    ren_before = page_dump(open_app("ren"))
    aoi = open_app("aoi")
    claim_pk = aoi.session_state["label.claim_pk"]
    _type(aoi, claim_pk, f"{MARKER} draft", cite=("case-1-p1",), severity="leak")
    aoi.button(key="label.next").click().run()  # a draft on case-1-c2 too, with a chosen label
    _type(aoi, _claim_pk(engine, "case-1-c2"), f"{MARKER} second draft")
    assert len(_page_drafts(engine)) == 2

    ren = open_app("ren")
    assert page_dump(ren) == ren_before  # the same page, byte for byte
    ren.button(key="label.next").click().run()
    assert MARKER not in page_dump(ren) and _notes(ren) == []
    for name, pages in (("mika", ("views/adjudicate.py",)),
                        ("admin", ("views/admin.py", "views/releases.py", "views/agreement.py"))):
        at = open_app(name)
        for page in pages:
            at.switch_page(page).run()
            assert not at.exception
            assert MARKER not in page_dump(at), (name, page)


def test_a_draft_on_a_held_case_is_kept_but_not_offered_for_saving_until_the_hold_is_lifted(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    _type(at, claim_pk, "typed before the hold")
    with session_scope(engine) as s:
        case_pk = s.get(Claim, claim_pk).case_pk
    at.selectbox(key=f"label.hold_reason.{case_pk}").set_value("missing_logs")
    at.button(key="label.hold_button").click().run()
    held = open_app("aoi", query={"claim": "case-1-c1"})
    assert [c.value for c in held.caption if "unsaved draft" in c.value] != []
    assert [c.value for c in held.caption if "unsaved draft" in c.value][0].endswith("it cannot become a label now.")
    assert [b.key for b in held.button if b.key and b.key.startswith("label.button.")] == []
    held.button(key="label.lift").click().run()
    assert held.text_area(key=f"label.rationale.{claim_pk}").value == "typed before the hold"
    assert len(held.info) == 1 and RESTORED.fullmatch(held.info[0].value)
