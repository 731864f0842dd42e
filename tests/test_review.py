"""`import --update` marks labels for review: a label last written before its claim's text or
passages changed is "to review" (workflow.label_to_review); its claim is stale (release refused,
counted stale) until each such labeler saves their label again on the Label page, or an
adjudicator decides the claim after the change. Labels are never deleted or silently changed.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.errors import ReleaseBlockedError, StaleWriteError
from annotator.models import Adjudication, Claim, Label, LabelEvent, utcnow
from annotator.services import labeling
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate, adjudication_queue, view_for_adjudicator
from annotator.services.imports import import_cases
from annotator.services.labeling import claim_for_labeler, next_claim_for, progress_for, save_label
from annotator.services.releases import create_release
from annotator.services.states import claim_facts, claim_states
from annotator.services.status import project_status
from annotator.services.users import get_user
from annotator.workflow import State, claim_state, label_to_review, may_revise
from tests.factories import make_team, pilot

MARKER = "MARKER-bob-rationale-4e1c"


def _case(text: str = "The policy was updated in April.", p2_text: str = "Approved by the board.",
          c2_passages: tuple[str, ...] = ("p2",)) -> dict:
    return {
        "case_id": "r1", "question": "When was the policy updated?", "answer": "In April, approved by the board.",
        "slice": "normal", "split": "dev", "metadata": {},
        "passages": [{"passage_id": "p1", "doc_id": "handbook", "version": "1", "title": "Handbook", "text": "Updated in April."},
                     {"passage_id": "p2", "doc_id": "memo", "version": "1", "title": "Memo", "text": p2_text}],
        "claims": [{"claim_id": "r1-c1", "text": text, "passage_ids": ["p1"]},
                   {"claim_id": "r1-c2", "text": "The board approved it.", "passage_ids": list(c2_passages)}],
    }


def _write(tmp_path: Path, name: str, case: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(case, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _pk(session, claim_id: str) -> int:  # noqa: ANN001 - Session
    return session.exec(select(Claim.id).where(Claim.claim_id == claim_id)).one()


@pytest.fixture
def agreed(any_engine, tmp_path):
    """Case r1 imported and assigned to alice and bob, who both label both claims support: agreed."""
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, _write(tmp_path, "cases.jsonl", _case()))
        make_team(session)
        labeling.assign_cases(session, OPERATOR, labeling.first_cases(session, 1), ["alice", "bob"])
    with session_scope(any_engine) as session:
        for name in ("alice", "bob"):
            user = get_user(session, name)
            for claim_id in ("r1-c1", "r1-c2"):
                rationale = MARKER if name == "bob" else "alice's reason"
                save_label(session, user, _pk(session, claim_id), "support", passage_ids=["p1"] if claim_id == "r1-c1" else [],
                           rationale=rationale)
    with session_scope(any_engine) as session:
        assert set(claim_states(session).values()) == {State.AGREED}
    return any_engine


def _update(engine, tmp_path: Path, case: dict):  # noqa: ANN001, ANN202 - Engine; ImportReport
    with session_scope(engine) as session:
        return import_cases(session, OPERATOR, _write(tmp_path, "changed.jsonl", case), update=True)


def _state(engine, claim_id: str) -> State:  # noqa: ANN001
    with session_scope(engine) as session:
        pk = _pk(session, claim_id)
        return claim_states(session, claim_pks=[pk])[pk]


def _release(engine, tmp_path: Path, name: str):  # noqa: ANN001, ANN202
    with session_scope(engine) as session:
        return create_release(session, OPERATOR, name, out_dir=tmp_path / "releases", n_bootstrap=0)


def test_a_changed_text_makes_an_agreed_claim_stale_until_both_labelers_review_it(agreed, tmp_path):
    engine = agreed
    report = _update(engine, tmp_path, _case(text="The policy was updated in May."))
    assert report.labels_to_review == 2
    assert any(line.startswith("Marked 2 labels for review") for line in report.summary_lines())
    assert _state(engine, "r1-c1") is State.STALE
    assert _state(engine, "r1-c2") is State.AGREED
    with session_scope(engine) as session:
        assert project_status(session, OPERATOR)["claims_by_state"]["stale"] == 1
        # the adjudicator may settle it too: it waits in their queue as stale
        assert [(item.claim_id, item.state) for item in adjudication_queue(session, get_user(session, "carol"))] == [
            ("r1-c1", "stale")]
    with pytest.raises(ReleaseBlockedError, match=r"not final \(stale 1\)"):
        _release(engine, tmp_path, "gold-v1")
    assert not (tmp_path / "releases" / "gold-v1").exists()

    with session_scope(engine) as session:
        pk = _pk(session, "r1-c1")
        for name in ("alice", "bob"):
            user = get_user(session, name)
            assert next_claim_for(session, user) == pk
            assert progress_for(session, user) == (1, 2)
            view = claim_for_labeler(session, user, pk)
            assert view.changed_since_label == ("text",)
            assert view.can_revise and view.text == "The policy was updated in May."
            assert (view.own_label.value, view.own_label.revision) == ("support", 1)
        alice_view = claim_for_labeler(session, get_user(session, "alice"), pk)
        assert MARKER not in repr(alice_view)  # blind: nothing of bob's label

    with session_scope(engine) as session:  # alice saves the same label again: a write, revision 2
        label = save_label(session, get_user(session, "alice"), _pk(session, "r1-c1"), "support", passage_ids=["p1"],
                           rationale="alice's reason", expected_revision=1)
        assert label.revision == 2
    with session_scope(engine) as session:
        alice = get_user(session, "alice")
        assert next_claim_for(session, alice) is None
        assert claim_for_labeler(session, alice, _pk(session, "r1-c1")).changed_since_label == ()
        again = labeling.save_label_as(session, "alice", alice.id, _pk(session, "r1-c1"), "support", passage_ids=["p1"],
                                       rationale="alice's reason", expected_revision=2)
        assert (again.written, again.revision) == (False, 2)  # a double click writes once
    assert _state(engine, "r1-c1") is State.STALE  # bob's label is still to review

    with session_scope(engine) as session:
        save_label(session, get_user(session, "bob"), _pk(session, "r1-c1"), "support", passage_ids=["p1"],
                   rationale=MARKER, expected_revision=1)
    assert _state(engine, "r1-c1") is State.AGREED
    with session_scope(engine) as session:
        pk = _pk(session, "r1-c1")
        events = session.exec(select(LabelEvent).where(LabelEvent.entity == "label", LabelEvent.claim_pk == pk,
                                                       LabelEvent.action == "update").order_by(LabelEvent.id)).all()
        changed_at = session.get(Claim, pk).updated_at.isoformat()
        assert [(e.before["revision"], e.after["revision"], e.after["value"], e.after["reviewed_change_at"])
                for e in events] == [(1, 2, "support", changed_at)] * 2
        assert session.exec(select(LabelEvent).where(LabelEvent.entity == "claim", LabelEvent.claim_pk == pk)).one().after[
            "text"] == "The policy was updated in May."
        assert len(session.exec(select(Label)).all()) == 4  # nothing deleted
    created = _release(engine, tmp_path, "gold-v1")
    assert (created.counts["claims"], created.counts["by_resolution"]["agreed"]) == (2, 2)


def test_a_labeler_may_change_a_label_under_review_and_the_claim_is_disputed(agreed, tmp_path):
    engine = agreed
    _update(engine, tmp_path, _case(text="The policy was updated in May."))
    with session_scope(engine) as session:
        save_label(session, get_user(session, "alice"), _pk(session, "r1-c1"), "contradict", expected_revision=1)
    assert _state(engine, "r1-c1") is State.STALE
    with session_scope(engine) as session:
        save_label(session, get_user(session, "bob"), _pk(session, "r1-c1"), "support", expected_revision=1)
    assert _state(engine, "r1-c1") is State.DISPUTED


@pytest.mark.parametrize("change", ["passage text", "passage list"])
def test_changed_passages_mark_the_labels_for_review_likewise(agreed, tmp_path, change):
    engine = agreed
    case = _case(p2_text="Approved by the board in June.") if change == "passage text" else _case(c2_passages=("p1", "p2"))
    report = _update(engine, tmp_path, case)
    assert report.labels_to_review == 2
    assert (_state(engine, "r1-c1"), _state(engine, "r1-c2")) == (State.AGREED, State.STALE)
    with pytest.raises(ReleaseBlockedError, match="stale 1"):
        _release(engine, tmp_path, "gold-v1")
    with session_scope(engine) as session:
        pk = _pk(session, "r1-c2")
        for name in ("alice", "bob"):
            user = get_user(session, name)
            assert next_claim_for(session, user) == pk
            assert claim_for_labeler(session, user, pk).changed_since_label == ("passages",)
            save_label(session, user, pk, "support", rationale=MARKER if name == "bob" else "alice's reason",
                       expected_revision=1)
    assert _state(engine, "r1-c2") is State.AGREED
    _release(engine, tmp_path, "gold-v1")


def test_an_unchanged_reimport_marks_nothing(agreed, tmp_path):
    engine = agreed
    with session_scope(engine) as session:
        events_before = len(session.exec(select(LabelEvent)).all())
    report = _update(engine, tmp_path, _case())
    assert report.labels_to_review == 0
    assert not any("for review" in line for line in report.summary_lines())
    with session_scope(engine) as session:
        assert set(claim_states(session).values()) == {State.AGREED}
        assert len(session.exec(select(LabelEvent)).all()) == events_before
        assert next_claim_for(session, get_user(session, "alice")) is None


def test_an_adjudication_after_the_change_settles_it_and_the_labels_leave_the_queues(agreed, tmp_path):
    engine = agreed
    _update(engine, tmp_path, _case(text="The policy was updated in May."))
    with session_scope(engine) as session:
        adjudicate(session, get_user(session, "carol"), _pk(session, "r1-c1"), "contradict", rationale="May is wrong")
    assert _state(engine, "r1-c1") is State.ADJUDICATED
    with session_scope(engine) as session:
        for name in ("alice", "bob"):
            user = get_user(session, name)
            assert next_claim_for(session, user) is None
            assert progress_for(session, user) == (2, 2)
            view = claim_for_labeler(session, user, _pk(session, "r1-c1"))
            assert (view.changed_since_label, view.can_revise) == ((), False)
        assert session.exec(select(Label.revision).where(Label.claim_pk == _pk(session, "r1-c1"))).all() == [1, 1]


def test_a_change_after_an_adjudication_brings_the_labels_back_for_review_too(agreed, tmp_path):
    engine = agreed
    with session_scope(engine) as session:
        session.add(Adjudication(claim_pk=_pk(session, "r1-c1"), adjudicator_pk=get_user(session, "carol").id,
                                 value="support", decided_at=utcnow()))
    assert _state(engine, "r1-c1") is State.ADJUDICATED
    _update(engine, tmp_path, _case(text="The policy was updated in May."))
    assert _state(engine, "r1-c1") is State.STALE
    with session_scope(engine) as session:
        assert next_claim_for(session, get_user(session, "alice")) == _pk(session, "r1-c1")


# ---- the rule's two implementations (states.claim_facts in Python, the queue's SQL) agree


def test_label_to_review_table():
    t0 = utcnow()
    later, latest = t0 + timedelta(seconds=1), t0 + timedelta(seconds=2)
    assert label_to_review(t0, later, None) is True  # labeled, then changed
    assert label_to_review(later, later, None) is False  # written together (one import)
    assert label_to_review(latest, later, None) is False  # reviewed after the change
    assert label_to_review(t0, later, latest) is False  # decided after the change
    assert label_to_review(t0, later, t0) is True  # decided before the change


@pytest.mark.parametrize("labels, adjudicated, changed_after, on_hold, to_review, expected", [
    (("support", "support"), False, False, False, True, State.STALE),  # agreed, then the claim changed
    (("support",), False, False, False, True, State.SINGLE),  # not final anyway: reviewed from the queue
    (("support", "contradict"), False, False, False, True, State.STALE),
    (("support", "support"), True, False, False, False, State.ADJUDICATED),  # decided after the change
    (("support", "support"), True, True, False, True, State.STALE),  # decided before the change
    (("support", "support"), False, False, True, True, State.ON_HOLD),
    (("support", "support"), False, False, False, False, State.AGREED),
])
def test_claim_state_with_labels_to_review(labels, adjudicated, changed_after, on_hold, to_review, expected):
    assert claim_state(labels, adjudicated, changed_after, on_hold, to_review) is expected


def test_a_label_to_review_may_be_revised_after_the_second_label_landed():
    assert may_revise(has_own_label=True, n_labels=2, to_review=True) is True
    assert may_revise(has_own_label=True, n_labels=2, to_review=False) is False


def test_the_queue_sql_and_the_claim_facts_agree_on_every_combination(any_engine):
    t0 = utcnow() - timedelta(hours=1)
    times = {"before": t0, "change": t0 + timedelta(minutes=10), "after": t0 + timedelta(minutes=20)}
    with session_scope(any_engine) as session:
        dataset, team = pilot(session, n_cases=4)
        claims = session.exec(select(Claim).where(Claim.dataset_id == dataset.id).order_by(Claim.id)).all()
        # per claim: (alice's label time, bob's label time, decision time or None); content changed at "change"
        plan = [("before", "before", None), ("before", "after", None), ("after", "after", None),
                ("before", "before", "after"), ("before", "before", "before"), ("before", None, None),
                (None, None, None), ("after", "before", "change")]
        for claim, (alice_at, bob_at, decided) in zip(claims, plan, strict=True):
            claim.updated_at = times["change"]
            session.add(claim)
            for name, at in (("alice", alice_at), ("bob", bob_at)):
                if at is not None:
                    session.add(Label(claim_pk=claim.id, labeler_pk=team[name].id, value="support",
                                      created_at=times[at], updated_at=times[at]))
            if decided is not None:
                session.add(Adjudication(claim_pk=claim.id, adjudicator_pk=team["carol"].id, value="support",
                                         decided_at=times[decided]))
    with session_scope(any_engine) as session:
        facts = claim_facts(session, dataset.id)
        for name in ("alice", "bob"):
            user = get_user(session, name)
            by_sql = set(session.exec(select(Claim.id).where(labeling._to_review_sql(user.id))))
            by_rule = {pk for pk, f in facts.items() if user.id in f.to_review}
            assert by_sql == by_rule
        assert [facts[c.id].state for c in claims] == [
            State.STALE, State.STALE, State.AGREED, State.ADJUDICATED, State.STALE, State.SINGLE, State.UNLABELED,
            State.STALE]


def test_a_review_saved_on_a_page_opened_before_another_update_is_refused_and_writes_nothing(agreed, tmp_path):
    engine = agreed
    _update(engine, tmp_path, _case(text="The policy was updated in May."))
    with session_scope(engine) as session:
        alice = get_user(session, "alice")
        shown = claim_for_labeler(session, alice, _pk(session, "r1-c1"))
    _update(engine, tmp_path, _case(text="The policy was updated in June."))  # while alice reads the May text
    with session_scope(engine) as session, pytest.raises(StaleWriteError, match="changed after you opened it"):
        labeling.save_label_as(session, "alice", alice.id, shown.claim_pk, "support", passage_ids=["p1"],
                               rationale="alice's reason", expected_revision=1, seen_content_at=shown.content_changed_at)
    with session_scope(engine) as session:
        view = claim_for_labeler(session, get_user(session, "alice"), shown.claim_pk)
        assert (view.own_label.revision, view.changed_since_label) == (1, ("text",))  # still to review
        assert view.text == "The policy was updated in June."
        saved = labeling.save_label_as(session, "alice", alice.id, shown.claim_pk, "support", passage_ids=["p1"],
                                       rationale="alice's reason", expected_revision=1,
                                       seen_content_at=view.content_changed_at)
        assert (saved.written, saved.revision) == (True, 2)  # read again: the review lands


def test_a_decision_on_a_claim_changed_since_the_adjudicator_opened_it_is_refused(agreed, tmp_path):
    engine = agreed
    _update(engine, tmp_path, _case(text="The policy was updated in May."))  # stale: waits for a decision
    with session_scope(engine) as session:
        carol = get_user(session, "carol")
        shown = view_for_adjudicator(session, carol, _pk(session, "r1-c1"))
    _update(engine, tmp_path, _case(text="The policy was updated in June."))
    with session_scope(engine) as session, pytest.raises(StaleWriteError, match="changed after you opened it"):
        adjudicate(session, get_user(session, "carol"), shown.claim_pk, "support", seen_content_at=shown.content_changed_at)
    with session_scope(engine) as session:
        assert session.exec(select(Adjudication)).all() == []
        fresh = view_for_adjudicator(session, get_user(session, "carol"), shown.claim_pk)
        adjudicate(session, get_user(session, "carol"), shown.claim_pk, "support", rationale="June: the text says so",
                   seen_content_at=fresh.content_changed_at)
    assert _state(engine, "r1-c1") is State.ADJUDICATED
