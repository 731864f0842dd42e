"""Admin corrections of a stored label (services/corrections.py), on the command line and on the
Admin page's Claim history tab.

A correction keeps the label's labeler, raises its revision, marks it `correction`, records one
audit event with who, before, after and the reason, and makes an adjudicated claim stale until it
is decided again. Only admins correct, never on a claim they label themselves; a stale revision,
a bad value or a missing reason is refused and changes nothing.
"""

from __future__ import annotations

import json
import threading

import pytest
from sqlmodel import func, select
from streamlit.testing.v1 import AppTest

from annotator.db import session_scope
from annotator.errors import (
    InvalidValueError,
    NotFoundError,
    PermissionDeniedError,
    ReleaseBlockedError,
    StaleWriteError,
)
from annotator.models import Claim, Label, LabelEvent, User
from annotator.services import corrections
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate, adjudication_queue
from annotator.services.corrections import correct_label, corrected_content, correction_view
from annotator.services.history import NO_ACTOR, claim_history_view
from annotator.services.labeling import assign_cases, save_label
from annotator.services.releases import create_release
from annotator.services.states import claim_states
from annotator.services.users import add_user, get_user
from annotator.workflow import State
from tests.factories import PASSWORD, pilot
from tests.test_cli import run
from tests.test_history import _history_table, _label_and_adjudicate, app_db  # noqa: F401 - app_db is a fixture
from tests.test_ui_app import open_app

REASON = "bob reported pressing 2 instead of 1"


# --- helpers -------------------------------------------------------------------------------------


def claim_pk_of(session, claim_id: str) -> int:  # noqa: ANN001
    return session.exec(select(Claim.id).where(Claim.claim_id == claim_id)).one()


def stored(engine, claim_id: str = "case-1-c1") -> dict[str, tuple]:  # noqa: ANN001
    """labeler -> (value, passage ids, rationale, severity, revision, source) of the claim's labels."""
    with session_scope(engine) as s:
        rows = s.exec(select(User.name, Label).join(Label, Label.labeler_pk == User.id)
                      .where(Label.claim_pk == claim_pk_of(s, claim_id)))
        return {name: (l.value, list(l.passage_ids or []), l.rationale, l.severity, l.revision, l.source)
                for name, l in rows}


def n_events(engine) -> int:  # noqa: ANN001
    with session_scope(engine) as s:
        return s.exec(select(func.count()).select_from(LabelEvent)).one()


def snapshot(engine) -> tuple:  # noqa: ANN001
    """Everything a refused correction must leave as it was: every label and the event count."""
    return stored(engine), n_events(engine)


def correct(engine, who, claim_id: str = "case-1-c1", labeler: str = "bob", value: str = "support", **options):  # noqa: ANN001, ANN201
    """Correct `labeler`'s label as `who` (a user name or OPERATOR) in one transaction."""
    options.setdefault("reason", REASON)
    options.setdefault("expected_revision", 1)
    with session_scope(engine) as s:
        actor = OPERATOR if who is OPERATOR else get_user(s, who)
        return correct_label(s, actor, claim_pk_of(s, claim_id), labeler, value, **options)


@pytest.fixture
def disputed(any_engine):
    """The pilot team (alice, bob labelers; carol adjudicator; root admin), case-1-c1 disputed:
    alice support citing pilot-p1-1, bob contradict (amount_or_deadline)."""
    with session_scope(any_engine) as s:
        pilot(s)
        claim_pk = claim_pk_of(s, "case-1-c1")
        save_label(s, get_user(s, "alice"), claim_pk, "support", passage_ids=["pilot-p1-1"], rationale="p1 says so")
        save_label(s, get_user(s, "bob"), claim_pk, "contradict", severity="amount_or_deadline", rationale="p2 differs")
    return any_engine


@pytest.fixture
def adjudicated(disputed):
    """As `disputed`, and carol decided case-1-c1 contradict."""
    with session_scope(disputed) as s:
        adjudicate(s, get_user(s, "carol"), claim_pk_of(s, "case-1-c1"), "contradict", rationale="p2 is newer")
    return disputed


def state_of(engine, claim_id: str = "case-1-c1") -> State:  # noqa: ANN001
    with session_scope(engine) as s:
        pk = claim_pk_of(s, claim_id)
        return claim_states(s, claim_pks=[pk])[pk]


# --- the service -----------------------------------------------------------------------------------


def test_a_correction_keeps_the_labeler_raises_the_revision_and_records_one_event_with_the_reason(disputed):
    with session_scope(disputed) as s:
        since = s.exec(select(func.max(LabelEvent.id))).one()
        before_time = s.exec(select(Label.updated_at).join(User, User.id == Label.labeler_pk).where(User.name == "bob")).one()
    done = correct(disputed, "root", value="support", passage_ids=["pilot-p1-2"], rationale="  p2 agrees, read again ",
                   reason="  " + REASON + " ")
    assert (done.changed, done.before.value, done.after.value, done.after.revision) == (True, "contradict", "support", 2)
    assert stored(disputed)["bob"] == ("support", ["pilot-p1-2"], "p2 agrees, read again", None, 2, "correction")
    assert stored(disputed)["alice"] == ("support", ["pilot-p1-1"], "p1 says so", None, 1, "app")  # the other label untouched
    with session_scope(disputed) as s:
        bob_label = s.exec(select(Label).join(User, User.id == Label.labeler_pk).where(User.name == "bob")).one()
        events = s.exec(select(LabelEvent).where(LabelEvent.id > since)).all()
        root = get_user(s, "root")
    assert bob_label.labeler_pk != root.id and bob_label.updated_at > before_time
    assert len(events) == 1
    event = events[0]
    assert (event.entity, event.action, event.actor_pk, event.entity_pk) == ("label", "update", root.id, bob_label.id)
    assert event.before == {"labeler": "bob", "value": "contradict", "passage_ids": [], "rationale": "p2 differs",
                            "severity": "amount_or_deadline", "guideline_version": "", "source": "app", "revision": 1}
    assert event.after == {"labeler": "bob", "value": "support", "passage_ids": ["pilot-p1-2"],
                           "rationale": "p2 agrees, read again", "severity": None, "guideline_version": "",
                           "source": "correction", "revision": 2, "reason": REASON}


def test_the_claims_history_shows_the_correction_with_who_before_after_and_the_reason(disputed):
    correct(disputed, "root", value="support", rationale="p2 differs", reason=REASON)
    correct(disputed, OPERATOR, labeler="alice", value="insufficient", passage_ids=["pilot-p1-1"], rationale="",
            severity="other", reason="wrong file imported")
    with session_scope(disputed) as s:
        rows = claim_history_view(s, get_user(s, "root"), "case-1-c1").rows
    assert [(r.who, r.what, r.change) for r in rows[-2:]] == [
        ("root", "label corrected by an admin", f"labeler: bob; value: contradict -> support; severity: amount_or_deadline -> -; "
                                  f"reason: {REASON}; source: app -> correction; revision: 1 -> 2"),
        (NO_ACTOR, "label corrected by an admin", 'labeler: alice; value: support -> insufficient; rationale: "p1 says so" -> -; '
                                    "severity: - -> other; reason: wrong file imported; source: app -> correction; "
                                    "revision: 1 -> 2"),
    ]


@pytest.mark.parametrize("who", ["alice", "carol", "labeling adjudicator"])
def test_only_an_admin_may_correct_and_a_refusal_changes_nothing(disputed, who):
    with session_scope(disputed) as s:
        add_user(s, OPERATOR, "labeling adjudicator", ["labeler", "adjudicator"], PASSWORD)
    before = snapshot(disputed)
    with pytest.raises(PermissionDeniedError, match="only an admin may correct"):
        correct(disputed, who)
    with pytest.raises(PermissionDeniedError, match="only an admin may correct"):  # checked before the claim is looked up
        with session_scope(disputed) as s:
            correction_view(s, get_user(s, who), "no-such-claim")
    assert snapshot(disputed) == before


def test_an_admin_who_labels_the_claim_may_correct_no_label_on_it_but_another_admin_may(disputed):
    with session_scope(disputed) as s:
        add_user(s, OPERATOR, "ana", ["labeler", "admin"], PASSWORD)
        add_user(s, OPERATOR, "ida", ["admin", "labeler"], PASSWORD)  # assigned below, has not labeled yet
        case_pk = s.exec(select(Claim.case_pk).where(Claim.claim_id == "case-1-c1")).one()
        assign_cases(s, OPERATOR, [case_pk], ["ana", "ida"])
        save_label(s, get_user(s, "ana"), claim_pk_of(s, "case-1-c1"), "insufficient")
    before = snapshot(disputed)
    for admin, labeler in (("ana", "bob"), ("ana", "ana"), ("ida", "bob")):
        with pytest.raises(PermissionDeniedError, match="you label this claim yourself"):
            correct(disputed, admin, labeler=labeler, value="support")
        with session_scope(disputed) as s:
            assert correction_view(s, get_user(s, admin), "case-1-c1").refused == corrections.OWN_CLAIM
    assert snapshot(disputed) == before
    correct(disputed, "root", labeler="ana", value="contradict", severity="other")
    assert stored(disputed)["ana"][::5] == ("contradict", "correction")
    with session_scope(disputed) as s:
        assert correction_view(s, get_user(s, "root"), "case-1-c1").refused is None
        assert correction_view(s, get_user(s, "ana"), "case-1-c2").refused == corrections.OWN_CLAIM  # assigned case


def test_a_correction_after_adjudication_makes_the_claim_stale_until_it_is_decided_again(adjudicated, tmp_path):
    with session_scope(adjudicated) as s:  # one more final claim, so that an --only-final release has something
        for name in ("alice", "bob"):
            save_label(s, get_user(s, name), claim_pk_of(s, "case-1-c2"), "insufficient")
    assert state_of(adjudicated) is State.ADJUDICATED
    done = correct(adjudicated, "root", value="support", reason=REASON)
    assert (done.state_before, done.state_after, done.made_stale) == (State.ADJUDICATED, State.STALE, True)
    assert state_of(adjudicated) is State.STALE
    with session_scope(adjudicated) as s:
        waiting = adjudication_queue(s, get_user(s, "carol"))
        assert [(item.claim_id, item.state, item.labels) for item in waiting] == [("case-1-c1", "stale", ("support", "support"))]
        with pytest.raises(ReleaseBlockedError, match="stale 1"):
            create_release(s, OPERATOR, "gold-v1", out_dir=tmp_path, n_bootstrap=0)
    assert not (tmp_path / "gold-v1").exists()
    with session_scope(adjudicated) as s:
        partial = create_release(s, OPERATOR, "only-final", out_dir=tmp_path, only_final=True, n_bootstrap=0)
    released = [json.loads(line)["claim_id"] for line in (tmp_path / "only-final" / "gold.jsonl").read_text().splitlines()]
    assert released == ["case-1-c2"] and partial.excluded.get("stale") == 1

    with session_scope(adjudicated) as s:
        adjudicate(s, get_user(s, "carol"), claim_pk_of(s, "case-1-c1"), "support", rationale="p1 says so",
                   expected_revision=1)
    assert state_of(adjudicated) is State.ADJUDICATED
    with session_scope(adjudicated) as s:
        assert adjudication_queue(s, get_user(s, "carol")) == []
        final = create_release(s, OPERATOR, "gold-v2", out_dir=tmp_path, only_final=True, n_bootstrap=0)
    gold = {r["claim_id"]: r for r in map(json.loads, (tmp_path / "gold-v2" / "gold.jsonl").read_text().splitlines())}
    assert (gold["case-1-c1"]["gold_label"], gold["case-1-c1"]["resolution"]) == ("support", "adjudicated")
    assert "stale" not in final.excluded


def test_a_correction_of_a_claim_nobody_decided_only_changes_its_labels(disputed):
    done = correct(disputed, "root", value="support")
    assert (done.state_before, done.state_after, done.made_stale) == (State.DISPUTED, State.AGREED, False)


def test_a_correction_against_an_old_revision_is_refused_and_changes_nothing(disputed):
    correct(disputed, "root", value="insufficient", reason="first fix")
    before = snapshot(disputed)
    with pytest.raises(StaleWriteError, match="revision 1, now 2"):
        correct(disputed, "root", value="support", expected_revision=1)
    assert snapshot(disputed) == before
    correct(disputed, "root", value="support", expected_revision=2)
    assert stored(disputed)["bob"][0::4] == ("support", 3)


def test_the_same_content_again_writes_nothing(disputed):
    first = correct(disputed, "root", value="support", rationale="p2 differs")
    before = snapshot(disputed)
    again = correct(disputed, "root", value="support", rationale="p2 differs", expected_revision=1)  # a double submit
    assert (first.changed, again.changed, again.after.revision) == (True, False, 2)
    assert snapshot(disputed) == before
    unchanged = correct(disputed, OPERATOR, labeler="alice", value="support", passage_ids=["pilot-p1-1"], rationale="p1 says so")
    assert not unchanged.changed and stored(disputed)["alice"][4:] == (1, "app")


@pytest.mark.parametrize("options, message", [
    ({"value": "maybe"}, "unknown label 'maybe'"),
    ({"value": "support", "severity": "legal"}, "a supported claim has no severity"),
    ({"value": "contradict", "severity": "fatal"}, "unknown severity 'fatal'"),
    ({"value": "support", "passage_ids": ["pilot-p2-1"]}, "not shown with this claim"),
    ({"value": "support", "reason": "   "}, "give a reason"),
    ({"value": "support", "reason": ""}, "give a reason"),
])
def test_an_invalid_correction_is_refused_and_changes_nothing(disputed, options, message):
    before = snapshot(disputed)
    with pytest.raises(InvalidValueError, match=message):
        correct(disputed, "root", **options)
    assert snapshot(disputed) == before


def test_an_unknown_claim_or_a_labeler_without_a_label_on_it_is_refused(disputed):
    before = snapshot(disputed)
    with pytest.raises(NotFoundError, match="'carol' has no label on claim 'case-1-c1' \\(labeled by: alice, bob\\)"):
        correct(disputed, "root", labeler="carol")
    with pytest.raises(NotFoundError, match="'nobody' has no label"):
        correct(disputed, "root", labeler="nobody")
    with pytest.raises(NotFoundError, match="no claim with key 999999"):
        with session_scope(disputed) as s:
            correct_label(s, get_user(s, "root"), 999999, "bob", "support", reason=REASON, expected_revision=1)
    with pytest.raises(NotFoundError, match="no claim with id 'nope'"):
        with session_scope(disputed) as s:
            correction_view(s, get_user(s, "root"), "nope")
    assert snapshot(disputed) == before


def test_the_view_lists_the_labels_by_labeler_and_the_passages_a_label_may_cite(disputed):
    with session_scope(disputed) as s:
        view = correction_view(s, get_user(s, "root"), " case-1-c1 ")
    assert (view.claim_id, view.dataset, view.state, view.passage_ids) == ("case-1-c1", "pilot", State.DISPUTED,
                                                                           ("pilot-p1-1", "pilot-p1-2"))
    assert [(l.labeler, l.value, l.passage_ids, l.severity, l.revision, l.source) for l in view.labels] == [
        ("alice", "support", ("pilot-p1-1",), None, 1, "app"),
        ("bob", "contradict", (), "amount_or_deadline", 1, "app")]
    with pytest.raises(NotFoundError, match="'carol' has no label"):
        view.label_of("carol")


def test_corrected_content_changes_only_what_is_given():
    bob = corrections.CorrectableLabel("bob", "contradict", ("p1",), "p2 differs", "legal", 1, "app")
    assert corrected_content(bob, "insufficient") == {"value": "insufficient", "passage_ids": ("p1",),
                                                      "rationale": "p2 differs", "severity": "legal"}
    assert corrected_content(bob, "support") == {"value": "support", "passage_ids": ("p1",),
                                                 "rationale": "p2 differs", "severity": None}
    assert corrected_content(bob, "contradict", passage_ids=[], rationale="", severity="none") == {
        "value": "contradict", "passage_ids": (), "rationale": "", "severity": None}
    assert corrected_content(bob, "support", severity="other")["severity"] == "other"  # given: correct_label refuses it


def test_two_corrections_of_one_label_at_once_land_one_and_the_other_is_told_it_is_stale(disputed, monkeypatch):
    """Both read revision 1 unless the claim lock makes the second wait for the first to commit."""
    original, meeting = corrections._labels, threading.Barrier(2)

    def held(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - both writers have read before either writes
        result = original(*args, **kwargs)
        try:
            meeting.wait(timeout=1.0)
        except threading.BrokenBarrierError:
            pass  # the other writer waits for our lock
        return result

    monkeypatch.setattr(corrections, "_labels", held)
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def attempt(value: str) -> None:
        start.wait(timeout=30)
        try:
            correct(disputed, "root", value=value)
            outcomes.append("ok")
        except StaleWriteError:
            outcomes.append("stale")

    threads = [threading.Thread(target=attempt, args=(value,)) for value in ("support", "insufficient")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["ok", "stale"]
    assert stored(disputed)["bob"][4] == 2
    with session_scope(disputed) as s:
        assert s.exec(select(func.count()).select_from(LabelEvent)
                      .where(LabelEvent.entity == "label", LabelEvent.action == "update")).one() == 1


# --- the command line ------------------------------------------------------------------------------


@pytest.fixture
def cli_db(tmp_path):
    """An adjudicated SQLite database for the command line: `adjudicated` on a file."""
    from annotator.db import init_db

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = init_db(url)
    with session_scope(engine) as s:
        pilot(s)
        claim_pk = claim_pk_of(s, "case-1-c1")
        save_label(s, get_user(s, "alice"), claim_pk, "support", passage_ids=["pilot-p1-1"], rationale="p1 says so")
        save_label(s, get_user(s, "bob"), claim_pk, "contradict", severity="amount_or_deadline", rationale="p2 differs")
        adjudicate(s, get_user(s, "carol"), claim_pk, "contradict", rationale="p2 differs")
    yield engine, url
    engine.dispose()


def test_labels_correct_on_the_command_line_keeps_what_is_not_given_and_says_the_claim_is_stale(cli_db, tmp_path):
    engine, url = cli_db
    done = run("labels", "correct", "case-1-c1", "--labeler", "bob", "--label", "insufficient", "--reason", REASON,
               db=url, cwd=tmp_path)
    assert done.stdout.splitlines() == [
        "Corrected bob's label on claim case-1-c1 (dataset pilot): contradict -> insufficient, revision 1 -> 2.",
        "  claim state: adjudicated -> stale",
        "  The claim had been adjudicated: it is back in the adjudication queue, and a release refuses it until it "
        "is decided again.",
    ]
    assert stored(engine)["bob"] == ("insufficient", [], "p2 differs", "amount_or_deadline", 2, "correction")
    assert json.loads(run("status", "--json", db=url, cwd=tmp_path).stdout)["claims_by_state"]["stale"] == 1
    assert [item["state"] for item in json.loads(run("queue", "adjudication", "--json", db=url, cwd=tmp_path).stdout)] == ["stale"]

    run("labels", "correct", "case-1-c1", "--labeler", "bob", "--label", "support", "--reason", "second look",
        "--passages", "pilot-p1-1, pilot-p1-2", "--rationale", "", "--dataset", "pilot", "--revision", "2", db=url, cwd=tmp_path)
    assert stored(engine)["bob"] == ("support", ["pilot-p1-1", "pilot-p1-2"], "", None, 3, "correction")
    again = run("labels", "correct", "case-1-c1", "--labeler", "bob", "--label", "support", "--reason", "x", db=url, cwd=tmp_path)
    assert again.stdout.startswith("Nothing changed: bob's label on claim case-1-c1 (dataset pilot) already says that")


@pytest.mark.parametrize("args, message", [
    (["--labeler", "bob", "--label", "support", "--reason", "x", "--revision", "7"], "changed since you read it (revision 7, now 1)"),
    (["--labeler", "bob", "--label", "maybe", "--reason", "x"], "unknown label 'maybe'"),
    (["--labeler", "bob", "--label", "support", "--reason", " "], "give a reason"),
    (["--labeler", "bob", "--label", "support", "--severity", "leak", "--reason", "x"], "a supported claim has no severity"),
    (["--labeler", "carol", "--label", "support", "--reason", "x"], "'carol' has no label on claim 'case-1-c1'"),
    (["--labeler", "bob", "--label", "support", "--reason", "x", "--dataset", "other"], "no dataset named 'other'"),
])
def test_a_refused_correction_on_the_command_line_says_why_exits_1_and_changes_nothing(cli_db, tmp_path, args, message):
    engine, url = cli_db
    before = snapshot(engine)
    done = run("labels", "correct", "case-1-c1", *args, db=url, cwd=tmp_path, ok=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Error: ") and message in done.stderr
    assert snapshot(engine) == before


def test_labels_correct_of_an_unknown_claim_exits_1(cli_db, tmp_path):
    _, url = cli_db
    done = run("labels", "correct", "no-such", "--labeler", "bob", "--label", "support", "--reason", "x", db=url, cwd=tmp_path, ok=False)
    assert (done.returncode, done.stderr.strip()) == (1, "Error: no claim with id 'no-such'")


# --- the Admin page -----------------------------------------------------------------------------------


def _open_history(claim_id: str) -> AppTest:
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.text_input(key="admin.history_claim").input(claim_id).run()
    assert not at.exception and [e.value for e in at.error] == []
    return at


def _pk(engine, claim_id: str) -> int:  # noqa: ANN001
    with session_scope(engine) as s:
        return claim_pk_of(s, claim_id)


def test_an_admin_corrects_a_label_below_the_history_and_the_claim_turns_stale(app_db):
    _label_and_adjudicate()  # case-1-c2: aoi support, ren contradict; mika decided contradict
    at = _open_history("case-1-c2")
    pk = _pk(app_db, "case-1-c2")
    assert at.selectbox(key=f"admin.correct.{pk}.labeler").options == ["aoi", "ren"]
    at.selectbox(key=f"admin.correct.{pk}.labeler").set_value("ren").run()
    assert at.selectbox(key=f"admin.correct.{pk}.ren.value").value == "contradict"  # starts from the stored label
    assert any("Stored label of ren: revision 1, source app" in m.value.replace("\\", "") for m in at.markdown)
    at.selectbox(key=f"admin.correct.{pk}.ren.value").set_value("support")
    at.multiselect(key=f"admin.correct.{pk}.ren.passages").set_value(["case-1-p2"])
    at.text_input(key=f"admin.correct.{pk}.ren.reason").input("ren reported a slip")
    at.button(key=f"admin.correct.{pk}.submit").click().run()
    assert not at.exception and [e.value for e in at.error] == []
    assert [s.value for s in at.success] == [
        "Corrected ren's label on claim case-1-c2: contradict -> support (revision 2). The claim had been adjudicated, "
        "so it is now stale: it is back in the adjudication queue, and a release refuses it until it is decided again."]
    last = _history_table(at).iloc[-1]
    assert (last["Who"], last["What"]) == ("admin", "label corrected by an admin")
    assert last["Change (before -> after)"] == ("labeler: ren; value: contradict -> support; passage ids: - -> case-1-p2; "
                                                "reason: ren reported a slip; source: app -> correction; revision: 1 -> 2")
    assert at.selectbox(key=f"admin.correct.{pk}.ren.value").value == "support"  # the inputs start from the new label
    assert at.text_input(key=f"admin.correct.{pk}.ren.reason").value == ""
    assert state_of(app_db, "case-1-c2") is State.STALE
    with session_scope(app_db) as s:
        assert [item.claim_id for item in adjudication_queue(s, get_user(s, "mika"))] == ["case-1-c2"]


def test_a_stale_correction_on_the_page_keeps_the_input_and_the_next_press_corrects_the_label_now_shown(app_db):
    _label_and_adjudicate()
    at = _open_history("case-1-c2")
    pk = _pk(app_db, "case-1-c2")
    at.selectbox(key=f"admin.correct.{pk}.labeler").set_value("aoi").run()
    with session_scope(app_db) as s:  # someone else corrects aoi's label meanwhile
        correct_label(s, OPERATOR, pk, "aoi", "insufficient", reason="done elsewhere", expected_revision=1)
    at.selectbox(key=f"admin.correct.{pk}.aoi.value").set_value("contradict")
    at.text_input(key=f"admin.correct.{pk}.aoi.reason").input("aoi misread p2")
    at.button(key=f"admin.correct.{pk}.submit").click().run()
    assert len(at.error) == 1 and "changed since you read it (revision 1, now 2)" in at.error[0].value
    assert stored(app_db, "case-1-c2")["aoi"][0::4] == ("insufficient", 2)
    assert at.selectbox(key=f"admin.correct.{pk}.aoi.value").value == "contradict"  # the input is kept
    assert at.text_input(key=f"admin.correct.{pk}.aoi.reason").value == "aoi misread p2"
    assert any("revision 2, source correction" in m.value.replace("\\", "") for m in at.markdown)  # the label now stored
    at.button(key=f"admin.correct.{pk}.submit").click().run()
    assert [e.value for e in at.error] == [] and len(at.success) == 1
    assert stored(app_db, "case-1-c2")["aoi"][0::4] == ("contradict", 3)


def test_a_correction_without_a_reason_is_refused_on_the_page_and_nothing_changes(app_db):
    _label_and_adjudicate()
    at = _open_history("case-1-c1")  # agreed, not adjudicated
    pk = _pk(app_db, "case-1-c1")
    before = snapshot(app_db)
    at.selectbox(key=f"admin.correct.{pk}.aoi.value").set_value("insufficient")
    at.button(key=f"admin.correct.{pk}.submit").click().run()
    assert [e.value for e in at.error] == ["give a reason for the correction: it is recorded in the claim's history"]
    assert snapshot(app_db) == before
    at.text_input(key=f"admin.correct.{pk}.aoi.reason").input("aoi asked for it").run()
    at.button(key=f"admin.correct.{pk}.submit").click().run()
    assert [s.value for s in at.success] == ["Corrected aoi's label on claim case-1-c1: support -> insufficient (revision 2)."]
    assert state_of(app_db, "case-1-c1") is State.DISPUTED


def test_a_claim_without_labels_says_there_is_nothing_to_correct(app_db):
    at = _open_history("case-3-c1")
    assert "This claim has no label to correct yet." in [c.value for c in at.caption]
    assert not [b for b in at.button if b.key and b.key.startswith("admin.correct.")]
