"""Adjudication in the service layer: the queue, the anonymized view, the decision, staleness."""

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.errors import InvalidValueError, NotDisputedError, PermissionDeniedError, StaleWriteError
from annotator.models import Adjudication, Claim, Label
from annotator.services.adjudication import adjudicate, adjudication_queue, view_for_adjudicator
from annotator.services.labeling import assigned_claims, save_label
from annotator.services.states import claim_states
from annotator.services.users import get_user, set_roles
from annotator.ui.i18n import error_text, use_language
from annotator.workflow import State
from tests.factories import pilot


@pytest.fixture
def disputed_db(any_engine):
    """Claim 1 disputed (alice support, bob contradict), claim 2 agreed, the rest unlabeled."""
    with session_scope(any_engine) as s:
        pilot(s)
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        first, second = assigned_claims(s, alice)[:2]
        save_label(s, alice, first, "support", rationale="ALICE-SAYS")
        save_label(s, bob, first, "contradict", rationale="BOB-SAYS", severity="amount_or_deadline")
        save_label(s, alice, second, "insufficient")
        save_label(s, bob, second, "insufficient")
    return any_engine, first, second


def test_the_queue_holds_exactly_the_disputed_claims(disputed_db):
    engine, first, _ = disputed_db
    with session_scope(engine) as s:
        queue = adjudication_queue(s, get_user(s, "carol"))
        assert [item.claim_pk for item in queue] == [first]
        assert queue[0].to_json() == {"claim_id": "case-1-c1", "case_id": "case-1", "slice": "normal", "split": "dev",
                                      "state": "disputed", "labels": ["contradict", "support"]}


def test_the_adjudicator_sees_labeler_1_and_2_without_names_in_a_stable_order(disputed_db):
    engine, first, _ = disputed_db
    with session_scope(engine) as s:
        view = view_for_adjudicator(s, get_user(s, "carol"), first)
        again = view_for_adjudicator(s, get_user(s, "carol"), first)
    assert [l.display_name for l in view.labels] == ["Labeler 1", "Labeler 2"]
    assert {l.rationale for l in view.labels} == {"ALICE-SAYS", "BOB-SAYS"}
    assert view.labels == again.labels
    assert "alice" not in repr(view.labels) and "bob" not in repr(view.labels)


def test_a_labeler_of_the_claim_can_neither_see_it_in_the_queue_nor_adjudicate_it(disputed_db):
    engine, first, _ = disputed_db
    with session_scope(engine) as s:
        alice = get_user(s, "alice")
        set_roles(s, OPERATOR, alice, ["labeler", "adjudicator"])
        assert adjudication_queue(s, alice) == []
        with pytest.raises(PermissionDeniedError):
            view_for_adjudicator(s, alice, first)
        with pytest.raises(PermissionDeniedError):
            adjudicate(s, alice, first, "support")
        with pytest.raises(PermissionDeniedError):
            adjudicate(s, get_user(s, "bob"), first, "support")  # not an adjudicator


def test_an_agreed_claim_cannot_be_adjudicated(disputed_db):
    engine, _, second = disputed_db
    with session_scope(engine) as s:
        with pytest.raises(NotDisputedError):
            adjudicate(s, get_user(s, "carol"), second, "support")


@pytest.mark.parametrize("rationale", ["", "  \n\t "])
def test_a_decision_without_a_rationale_is_refused_in_both_languages_and_nothing_is_stored(disputed_db, rationale):
    engine, first, _ = disputed_db
    with session_scope(engine) as s:
        with pytest.raises(InvalidValueError) as refused:
            adjudicate(s, get_user(s, "carol"), first, "contradict", rationale=rationale, severity="amount_or_deadline")
    assert str(refused.value) == ("write a rationale for the final label: why the labels are decided so (it is recorded "
                                  "with the decision and released with it); nothing was saved")
    with use_language("ja"):
        assert error_text(refused.value) == ("最終ラベルの判断理由を書いてください（なぜそう裁定したか。裁定とともに記録され、"
                                             "リリースにも含まれます）。何も保存していません。")
    with session_scope(engine) as s:
        assert s.exec(select(Adjudication).where(Adjudication.claim_pk == first)).all() == []
        assert claim_states(s, claim_pks=[first])[first] is State.DISPUTED
        decision = adjudicate(s, get_user(s, "carol"), first, "contradict", rationale="  table 2 says 5 days \n")
        assert decision.rationale == "table 2 says 5 days"  # kept as typed, without the blanks around it


def test_a_decision_keeps_the_labels_and_a_later_change_makes_it_stale(disputed_db):
    engine, first, _ = disputed_db
    with session_scope(engine) as s:
        adjudicate(s, get_user(s, "carol"), first, "contradict", rationale="table 2 says 5 days")
    with session_scope(engine) as s:
        assert claim_states(s, claim_pks=[first])[first] is State.ADJUDICATED
        assert sorted(s.exec(select(Label.value).where(Label.claim_pk == first)).all()) == ["contradict", "support"]
        assert adjudication_queue(s, OPERATOR) == []
        with pytest.raises(StaleWriteError):  # saw no decision, but there is one now
            adjudicate(s, get_user(s, "carol"), first, "support")
        claim = s.get(Claim, first)
        from annotator.models import utcnow

        claim.text = claim.text + " (corrected)"
        claim.updated_at = utcnow()
        s.add(claim)
    with session_scope(engine) as s:
        assert claim_states(s, claim_pks=[first])[first] is State.STALE
        assert [item.state for item in adjudication_queue(s, OPERATOR)] == ["stale"]
        decision = adjudicate(s, get_user(s, "carol"), first, "support", rationale="corrected text: p1 now says so",
                               expected_revision=1)
        assert decision.revision == 2
    with session_scope(engine) as s:
        assert claim_states(s, claim_pks=[first])[first] is State.ADJUDICATED


def test_an_adjudicator_assigned_to_label_a_claim_cannot_see_its_labels_before_labeling(any_engine):
    """A labeler-adjudicator whose unlabeled claim is disputed by imported labels must not see them."""
    from annotator.services.labeling import assign_cases, first_cases
    from annotator.services.users import add_user

    with session_scope(any_engine) as s:
        dataset, _ = pilot(s)
        add_user(s, OPERATOR, "dual", ["labeler", "adjudicator"], "dual-password")
        assign_cases(s, OPERATOR, first_cases(s, 1, dataset.id), ["dual"])
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        claim = assigned_claims(s, alice)[0]
        save_label(s, alice, claim, "support")
        save_label(s, bob, claim, "contradict")
    with session_scope(any_engine) as s:
        dual = get_user(s, "dual")
        assert adjudication_queue(s, dual) == []
        with pytest.raises(PermissionDeniedError):
            view_for_adjudicator(s, dual, claim)
        assert [item.claim_pk for item in adjudication_queue(s, get_user(s, "carol"))] == [claim]
