"""The claim's state and the workflow rules, one row per situation."""

import pytest

from annotator.workflow import State, claim_state, may_adjudicate, may_revise, may_see_other_labels


@pytest.mark.parametrize(
    "labels, adjudicated, changed_after, on_hold, expected",
    [
        ((), False, False, False, State.UNLABELED),
        (("support",), False, False, False, State.SINGLE),
        (("support", "support"), False, False, False, State.AGREED),
        (("insufficient", "insufficient", "insufficient"), False, False, False, State.AGREED),
        (("support", "contradict"), False, False, False, State.DISPUTED),
        (("support", "support", "contradict"), False, False, False, State.DISPUTED),
        (("support", "contradict"), True, False, False, State.ADJUDICATED),
        (("support", "contradict"), True, True, False, State.STALE),
        (("support", "support"), True, True, False, State.STALE),
        (("support",), False, False, True, State.ON_HOLD),
        ((), False, False, True, State.ON_HOLD),
        (("support", "contradict"), True, False, True, State.ON_HOLD),
    ],
)
def test_claim_state(labels, adjudicated, changed_after, on_hold, expected):
    assert claim_state(labels, adjudicated, changed_after, on_hold) is expected


def test_label_order_does_not_change_the_state():
    assert claim_state(("contradict", "support"), False, False, False) is claim_state(("support", "contradict"), False, False, False)


@pytest.mark.parametrize(
    "is_admin, labeled_it, is_adjudicator, expected",
    [
        (False, False, False, False),  # a labeler who has not submitted sees nothing of others
        (False, True, False, True),
        (False, False, True, True),
        (True, False, False, True),
    ],
)
def test_blind_rule(is_admin, labeled_it, is_adjudicator, expected):
    assert may_see_other_labels(is_admin=is_admin, labeled_it=labeled_it, is_adjudicator=is_adjudicator) is expected


@pytest.mark.parametrize("is_admin, is_adjudicator", [(True, False), (False, True), (True, True), (False, False)])
def test_someone_still_to_label_a_claim_sees_no_other_label_whatever_their_roles(is_admin, is_adjudicator):
    assert may_see_other_labels(is_admin=is_admin, labeled_it=False, is_adjudicator=is_adjudicator, still_to_label=True) is False


@pytest.mark.parametrize(
    "has_own_label, n_labels, expected",
    [(True, 1, True), (True, 2, False), (True, 3, False), (False, 0, False), (False, 1, False)],
)
def test_a_label_can_be_revised_until_the_second_label_lands(has_own_label, n_labels, expected):
    assert may_revise(has_own_label=has_own_label, n_labels=n_labels) is expected


@pytest.mark.parametrize(
    "is_adjudicator, labeled_it, state, expected",
    [
        (True, False, State.DISPUTED, True),
        (True, False, State.STALE, True),
        (True, True, State.DISPUTED, False),
        (False, False, State.DISPUTED, False),
        (True, False, State.AGREED, False),
        (True, False, State.ADJUDICATED, True),  # revising a decision
        (True, False, State.ON_HOLD, False),
    ],
)
def test_who_may_adjudicate(is_adjudicator, labeled_it, state, expected):
    assert may_adjudicate(is_adjudicator=is_adjudicator, labeled_it=labeled_it, state=state) is expected


@pytest.mark.parametrize("roles, expected", [
    ({"admin"}, True), ({"adjudicator"}, False), ({"labeler"}, False),
    ({"labeler", "adjudicator"}, False), ({"labeler", "admin"}, True)])
def test_who_may_see_agreement_figures(roles, expected):
    from annotator.workflow import may_see_agreement

    assert may_see_agreement(frozenset(roles)) is expected
