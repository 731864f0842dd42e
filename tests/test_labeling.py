"""Labeling in the service layer: queues, the blind rule, optimistic locking, holds, audit."""

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.errors import LabelLockedError, OnHoldError, PermissionDeniedError, StaleWriteError, InvalidValueError
from annotator.models import Label, LabelEvent
from annotator.services.labeling import (
    assigned_claims,
    claim_for_labeler,
    lift_hold,
    next_claim_for,
    progress_for,
    put_on_hold,
    save_label,
)
from annotator.services.states import claim_states
from annotator.workflow import State
from tests.factories import pilot


@pytest.fixture
def team_db(any_engine):
    with session_scope(any_engine) as session:
        pilot(session)
    return any_engine


def _user(session, name):
    from annotator.services.users import get_user

    return get_user(session, name)


def test_queue_walks_claims_in_case_order_and_skips_labeled_ones(team_db):
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        order = assigned_claims(s, alice)
        assert len(order) == 6
        first = next_claim_for(s, alice)
        assert first == order[0]
        save_label(s, alice, first, "support")
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        assert next_claim_for(s, alice) == order[1]
        assert progress_for(s, alice) == (1, 6)
        assert progress_for(s, _user(s, "bob")) == (0, 6)


def test_labeler_b_sees_nothing_of_labeler_a_before_submitting(team_db):
    marker = "MARKER-rationale-of-alice"
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        save_label(s, alice, claim_pk, "contradict", rationale=marker, passage_ids=["pilot-p1-2"], severity="legal")
    with session_scope(team_db) as s:
        view = claim_for_labeler(s, _user(s, "bob"), claim_pk)
        assert view.own_label is None
        assert view.can_revise is True
        text = repr(view)
        assert marker not in text and "alice" not in text and "contradict" not in text and "legal" not in text


def test_a_label_on_an_unassigned_claim_is_refused(team_db):
    with session_scope(team_db) as s:
        carol = _user(s, "carol")
        claim_pk = next_claim_for(s, _user(s, "alice"))
        with pytest.raises(PermissionDeniedError):
            save_label(s, carol, claim_pk, "support")
        with pytest.raises(PermissionDeniedError):
            claim_for_labeler(s, carol, claim_pk)


def test_a_double_click_writes_once_and_a_stale_tab_is_refused(team_db):
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        save_label(s, alice, claim_pk, "support")
        save_label(s, alice, claim_pk, "support")  # the second click of a double click
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        assert s.exec(select(Label).where(Label.claim_pk == claim_pk)).one().revision == 1
        assert len(s.exec(select(LabelEvent).where(LabelEvent.claim_pk == claim_pk)).all()) == 1
        # tab 1 revises from revision 1; tab 2, still showing "no label", tries to create one
        save_label(s, alice, claim_pk, "insufficient", expected_revision=1)
        with pytest.raises(StaleWriteError):
            save_label(s, alice, claim_pk, "contradict", expected_revision=None)
        with pytest.raises(StaleWriteError):
            save_label(s, alice, claim_pk, "contradict", expected_revision=1)
    with session_scope(team_db) as s:
        label = s.exec(select(Label).where(Label.claim_pk == claim_pk)).one()
        assert (label.value, label.revision) == ("insufficient", 2)
        events = s.exec(select(LabelEvent).where(LabelEvent.claim_pk == claim_pk).order_by(LabelEvent.id)).all()
        assert [(e.action, (e.before or {}).get("value"), e.after["value"]) for e in events] == [
            ("create", None, "support"), ("update", "support", "insufficient")]


def test_a_label_is_locked_once_the_second_label_lands(team_db):
    with session_scope(team_db) as s:
        alice, bob = _user(s, "alice"), _user(s, "bob")
        claim_pk = next_claim_for(s, alice)
        save_label(s, alice, claim_pk, "support")
        save_label(s, bob, claim_pk, "contradict")
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        assert claim_for_labeler(s, alice, claim_pk).can_revise is False
        with pytest.raises(LabelLockedError):
            save_label(s, alice, claim_pk, "contradict", expected_revision=1)
        assert claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.DISPUTED


@pytest.mark.parametrize("value, severity, passages", [
    ("maybe", None, []), ("support", "leak", []), ("contradict", "huge", []), ("support", None, ["not-shown"])])
def test_invalid_label_input_is_refused_and_nothing_lands(team_db, value, severity, passages):
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        with pytest.raises(InvalidValueError):
            save_label(s, alice, claim_pk, value, severity=severity, passage_ids=passages)
    with session_scope(team_db) as s:
        assert s.exec(select(Label)).all() == []


def test_a_held_case_leaves_the_queue_and_cannot_be_labeled_until_lifted(team_db):
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        case_pk = claim_for_labeler(s, alice, claim_pk).case_pk
        put_on_hold(s, alice, case_pk, "missing_logs", "no retrieval log")
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        assert next_claim_for(s, alice) != claim_pk
        with pytest.raises(OnHoldError):
            save_label(s, alice, claim_pk, "support")
        assert claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.ON_HOLD
        assert lift_hold(s, _user(s, "bob"), case_pk) is False  # bob has no hold here: alice's stays
        assert claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.ON_HOLD
        assert lift_hold(s, alice, case_pk) is True
    with session_scope(team_db) as s:
        assert next_claim_for(s, _user(s, "alice")) == claim_pk


def test_a_hold_and_its_reason_are_shown_to_its_holder_and_not_to_the_other_labeler(team_db):
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        put_on_hold(s, alice, claim_for_labeler(s, alice, claim_pk).case_pk, "gold_undetermined")
    with session_scope(team_db) as s:
        mine, theirs = claim_for_labeler(s, _user(s, "alice"), claim_pk), claim_for_labeler(s, _user(s, "bob"), claim_pk)
        assert (mine.on_hold, mine.hold_reason, mine.may_lift_hold) == (True, "gold_undetermined", True)
        assert (theirs.on_hold, theirs.hold_reason, theirs.may_lift_hold) == (False, None, False)


def test_an_unknown_hold_reason_is_refused(team_db):
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        case_pk = claim_for_labeler(s, alice, next_claim_for(s, alice)).case_pk
        with pytest.raises(InvalidValueError):
            put_on_hold(s, alice, case_pk, "tired")


def test_assigning_the_first_unassigned_cases_twice_takes_the_next_ones(any_engine):
    from annotator.services.labeling import assign_cases, first_unassigned_cases
    from tests.factories import make_dataset, make_team

    with session_scope(any_engine) as s:
        dataset = make_dataset(s, n_cases=5)
        make_team(s)
        first = first_unassigned_cases(s, 2, dataset.id)
        assign_cases(s, OPERATOR, first, ["alice", "bob"])
        second = first_unassigned_cases(s, 2, dataset.id)
        assert len(set(first) | set(second)) == 4
        assign_cases(s, OPERATOR, second, ["alice", "bob"])
        assert len(first_unassigned_cases(s, 20, dataset.id)) == 1


def test_a_deep_link_finds_only_claims_in_the_users_queue(team_db):
    from annotator.services.labeling import find_assigned_claim

    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        assert find_assigned_claim(s, alice, "case-2-c1") == assigned_claims(s, alice)[2]
        with pytest.raises(PermissionDeniedError) as refused:
            find_assigned_claim(s, _user(s, "carol"), "case-2-c1")
        assert "not in your queue" in str(refused.value)


def test_a_disabled_labeler_cannot_be_assigned(any_engine):
    from annotator.services.labeling import assign_cases, first_unassigned_cases
    from annotator.services.users import set_active
    from tests.factories import make_dataset, make_team

    with session_scope(any_engine) as s:
        dataset = make_dataset(s, n_cases=2)
        make_team(s)
        set_active(s, OPERATOR, _user(s, "bob"), False)
        with pytest.raises(InvalidValueError, match="disabled"):
            assign_cases(s, OPERATOR, first_unassigned_cases(s, 2, dataset.id), ["alice", "bob"])
        with pytest.raises(InvalidValueError, match="different labelers"):
            assign_cases(s, OPERATOR, first_unassigned_cases(s, 2, dataset.id), ["alice", "alice"])


def _shuffled_queue(session):
    """Two datasets whose cases and claims were created out of their queue order (case positions
    3, 1, 2; claim positions falling while their keys rise), all assigned to alice; returns the
    queue order by its definition (dataset, case position, claim position, claim key)."""
    from annotator.models import Case, Claim, Dataset
    from annotator.services.labeling import assign_cases
    from tests.factories import make_team

    make_team(session)
    rows = []
    for name in ("first", "second"):
        dataset = Dataset(name=name, source_format="test")
        session.add(dataset)
        session.flush()
        for position in (3, 1, 2):
            case = Case(dataset_id=dataset.id, case_id=f"{name}-{position}", position=position)
            session.add(case)
            session.flush()
            for claim_position in (2, 1, 1):
                claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=f"{case.case_id}-{len(rows)}",
                              position=claim_position)
                session.add(claim)
                session.flush()
                rows.append(((dataset.id, position, claim_position, claim.id), claim.id, case.id))
    assign_cases(session, OPERATOR, sorted({case_pk for _, _, case_pk in rows}), ["alice"])
    return [claim_pk for _, claim_pk, _ in sorted(rows)]


def test_the_queue_is_in_case_order_then_claim_order_whatever_order_rows_were_made_in(any_engine):
    from annotator.services.labeling import first_queued_claim

    with session_scope(any_engine) as s:
        expected = _shuffled_queue(s)
        alice = _user(s, "alice")
        assert assigned_claims(s, alice) == expected
        assert first_queued_claim(s, alice) == expected[0]
        assert next_claim_for(s, alice) == expected[0]
        assert first_queued_claim(s, _user(s, "bob")) is None


def test_queue_place_gives_each_claims_position_and_neighbours_in_queue_order(any_engine):
    from annotator.services.labeling import queue_place

    with session_scope(any_engine) as s:
        expected = _shuffled_queue(s)
        alice = _user(s, "alice")
        for i, claim_pk in enumerate(expected):
            place = queue_place(s, alice, claim_pk)
            assert place.position == i + 1
            assert place.previous_pk == (expected[i - 1] if i > 0 else None)
            assert place.next_pk == (expected[i + 1] if i + 1 < len(expected) else None)
        assert queue_place(s, _user(s, "bob"), expected[0]) is None  # not in bob's queue


def test_assigning_an_unknown_case_key_is_refused_and_assigns_nothing(team_db):
    from annotator.errors import NotFoundError
    from annotator.models import Assignment
    from annotator.services.labeling import assign_cases, first_cases

    with session_scope(team_db) as s:
        before = len(s.exec(select(Assignment)).all())
        with pytest.raises(NotFoundError, match="no case with key 999999"):
            assign_cases(s, OPERATOR, [*first_cases(s, 1), 999999], ["alice", "bob"])
        assert len(s.exec(select(Assignment)).all()) == before


def test_a_claim_s_view_has_every_version_of_its_passages_documents_in_its_dataset_only(team_db):
    from annotator.models import Passage
    from annotator.services.labeling import claim_passages, versions_in_dataset
    from tests.factories import make_dataset

    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = assigned_claims(s, alice)[0]  # case-1-c1: passages of doc-1, v1
        make_dataset(s, name="other", n_cases=1)  # doc-1 v1 in another dataset: not counted
        pilot_pk = s.exec(select(Passage.dataset_id).where(Passage.passage_id == "pilot-p1-1")).one()
        s.add(Passage(dataset_id=pilot_pk, passage_id="elsewhere", doc_id="doc-1", version="v2", title="", text="x"))
        other = s.exec(select(Passage.dataset_id).where(Passage.passage_id == "other-p1-1")).one()
        s.add(Passage(dataset_id=other, passage_id="other-v9", doc_id="doc-1", version="v9", title="", text="x"))
        s.flush()
        assert claim_for_labeler(s, alice, claim_pk).document_versions == {"doc-1": ("v1", "v2")}
        assert versions_in_dataset(s, pilot_pk, claim_passages(s, claim_pk)) == {"doc-1": ("v1", "v2")}
        assert versions_in_dataset(s, pilot_pk, ()) == {}


# --- the hold rule (workflow.hold_in_force): the holder's own, lifted by them, an admin or time ---


def _bobs_standing(s, claim_pk):  # noqa: ANN001, ANN202 - everything bob's pages show of his queue
    from annotator.services import home

    bob = _user(s, "bob")
    return (next_claim_for(s, bob), progress_for(s, bob), claim_for_labeler(s, bob, claim_pk), home.labeler_overview(s, bob))


def test_a_hold_changes_nothing_in_the_other_labelers_queue_pages_or_counts_and_they_may_label(team_db):
    with session_scope(team_db) as s:
        claim_pk = next_claim_for(s, _user(s, "alice"))
        case_pk = claim_for_labeler(s, _user(s, "alice"), claim_pk).case_pk
        before = _bobs_standing(s, claim_pk)
    with session_scope(team_db) as s:
        put_on_hold(s, _user(s, "alice"), case_pk, "missing_logs", "no retrieval log")
    with session_scope(team_db) as s:
        assert _bobs_standing(s, claim_pk) == before
        assert next_claim_for(s, _user(s, "alice")) != claim_pk  # parked in the holder's queue
        save_label(s, _user(s, "bob"), claim_pk, "support")
    with session_scope(team_db) as s:
        assert claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.ON_HOLD  # not final: no release


def test_each_labeler_holds_a_case_for_themselves_and_lifting_one_hold_leaves_the_other(team_db):
    with session_scope(team_db) as s:
        claim_pk = next_claim_for(s, _user(s, "alice"))
        case_pk = claim_for_labeler(s, _user(s, "alice"), claim_pk).case_pk
        alices = put_on_hold(s, _user(s, "alice"), case_pk, "missing_logs")
        bobs = put_on_hold(s, _user(s, "bob"), case_pk, "gold_undetermined")
        assert alices.id != bobs.id
        assert put_on_hold(s, _user(s, "bob"), case_pk, "missing_logs").id == bobs.id  # his own, unchanged
    with session_scope(team_db) as s:
        assert lift_hold(s, _user(s, "alice"), case_pk) is True
    with session_scope(team_db) as s:
        assert next_claim_for(s, _user(s, "alice")) == claim_pk
        assert next_claim_for(s, _user(s, "bob")) != claim_pk
        assert claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.ON_HOLD


def _placed_days_ago(s, case_pk, days):  # noqa: ANN001, ANN202
    from datetime import timedelta

    from annotator.models import Hold, utcnow

    for hold in s.exec(select(Hold).where(Hold.case_pk == case_pk)):
        hold.created_at = utcnow() - timedelta(days=days)
        s.add(hold)


@pytest.mark.parametrize("days, in_force", [(13.9, True), (14.01, False)])
def test_a_hold_nobody_lifts_expires_14_days_after_it_was_placed(team_db, days, in_force):
    from annotator.services.labeling import holds_in_force
    from annotator.services.status import project_status

    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        case_pk = claim_for_labeler(s, alice, claim_pk).case_pk
        put_on_hold(s, alice, case_pk, "missing_logs")
        _placed_days_ago(s, case_pk, days)
    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        assert (next_claim_for(s, alice) != claim_pk) is in_force
        assert claim_for_labeler(s, alice, claim_pk).on_hold is in_force
        assert (claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.ON_HOLD) is in_force
        assert project_status(s, OPERATOR)["holds"]["active"] == int(in_force)
        assert len(holds_in_force(s, OPERATOR)) == int(in_force)
        if in_force:
            with pytest.raises(OnHoldError):
                save_label(s, alice, claim_pk, "support")
        else:
            save_label(s, alice, claim_pk, "support")
            assert put_on_hold(s, alice, case_pk, "gold_undetermined").reason == "gold_undetermined"  # a new hold


def test_an_admin_and_the_command_line_see_and_lift_a_labelers_hold(team_db):
    from annotator.services.labeling import holds_in_force, lift_holds

    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        claim_pk = next_claim_for(s, alice)
        case_pk = claim_for_labeler(s, alice, claim_pk).case_pk
        put_on_hold(s, alice, case_pk, "permission_unknown", "ask legal")
        put_on_hold(s, _user(s, "bob"), case_pk, "missing_logs")
    with session_scope(team_db) as s:
        rows = holds_in_force(s, _user(s, "root"))
        assert [(r.case_id, r.reason, r.note, r.holder) for r in rows] == [
            ("case-1", "permission_unknown", "ask legal", "alice"), ("case-1", "missing_logs", "", "bob")]
        assert all((r.expires_at - r.placed_at).days == 14 for r in rows)
        with pytest.raises(PermissionDeniedError):
            holds_in_force(s, alice)
        with pytest.raises(PermissionDeniedError):
            lift_holds(s, _user(s, "bob"), case_pk)
        assert lift_holds(s, _user(s, "root"), case_pk) == 2
        assert lift_holds(s, OPERATOR, case_pk) == 0
    with session_scope(team_db) as s:
        assert next_claim_for(s, _user(s, "alice")) == claim_pk
        assert claim_states(s, claim_pks=[claim_pk])[claim_pk] is State.UNLABELED
        events = s.exec(select(LabelEvent).where(LabelEvent.entity == "hold", LabelEvent.action == "update")).all()
        assert [(e.actor_pk, e.after["lifted"]) for e in events] == [(_user(s, "root").id, True)] * 2


def test_a_case_whose_claims_are_all_agreed_or_adjudicated_cannot_be_put_on_hold(team_db):
    from annotator.errors import CaseFinalError
    from annotator.services.adjudication import adjudicate
    from annotator.services.lookup import find_case, find_claim

    with session_scope(team_db) as s:
        alice, bob = _user(s, "alice"), _user(s, "bob")
        case_pk = find_case(s, "case-1").id
        c1, c2 = find_claim(s, "case-1-c1").id, find_claim(s, "case-1-c2").id
        for who, value in ((alice, "support"), (bob, "support")):
            save_label(s, who, c1, value)
        save_label(s, alice, c2, "support")
        save_label(s, bob, c2, "contradict")
        put_on_hold(s, alice, case_pk, "missing_logs")  # c2 disputed: there is something to hold
        lift_hold(s, alice, case_pk)
        adjudicate(s, _user(s, "carol"), c2, "support", rationale="passage 1 says so")
    with session_scope(team_db) as s:
        for who in ("alice", "bob", "root"):
            with pytest.raises(CaseFinalError) as refused:
                put_on_hold(s, _user(s, who), case_pk, "gold_undetermined")
            assert str(refused.value) == (
                "every claim of case 'case-1' is already agreed or adjudicated: there is nothing left to hold")
    with session_scope(team_db) as s:
        assert claim_states(s, claim_pks=[c1, c2]) == {c1: State.AGREED, c2: State.ADJUDICATED}


def test_an_admin_who_still_labels_a_case_is_shown_no_others_hold_on_it_and_may_not_lift_it(team_db):
    from annotator.services.labeling import assign_cases, holds_in_force, lift_holds
    from annotator.services.lookup import find_case
    from annotator.services.status import project_status
    from annotator.services.users import set_roles

    with session_scope(team_db) as s:
        boss = set_roles(s, OPERATOR, _user(s, "root"), ["admin", "labeler"])
        case_pk = find_case(s, "case-1").id
        assign_cases(s, OPERATOR, [case_pk], ["root"])
        before = project_status(s, boss)
        put_on_hold(s, _user(s, "alice"), case_pk, "missing_logs")
    with session_scope(team_db) as s:
        boss = _user(s, "root")
        assert holds_in_force(s, boss) == []
        assert project_status(s, boss) == before
        with pytest.raises(PermissionDeniedError):
            lift_holds(s, boss, case_pk)
        assert [r.holder for r in holds_in_force(s, OPERATOR)] == ["alice"]


@pytest.mark.parametrize("placed_days_ago, lifted", [(0, False), (13.99, False), (14.01, False), (1, True), (30, True)])
def test_the_hold_rule_in_sql_matches_workflow_hold_in_force(team_db, placed_days_ago, lifted):
    from datetime import timedelta

    from annotator.models import Hold, utcnow
    from annotator.services.states import hold_in_force_sql
    from annotator.workflow import hold_in_force

    with session_scope(team_db) as s:
        alice = _user(s, "alice")
        case_pk = claim_for_labeler(s, alice, next_claim_for(s, alice)).case_pk
        hold = put_on_hold(s, alice, case_pk, "missing_logs")
        hold.created_at = utcnow() - timedelta(days=placed_days_ago)
        hold.lifted_at = utcnow() if lifted else None
        s.add(hold)
    with session_scope(team_db) as s:
        stored = s.exec(select(Hold)).one()
        in_sql = s.exec(select(Hold.id).where(hold_in_force_sql(Hold))).first() is not None
        assert in_sql is hold_in_force(stored.created_at, stored.lifted_at, utcnow()) is (not lifted and placed_days_ago < 14)
