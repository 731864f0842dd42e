"""The labeling workflow's rules as pure functions: a claim's state, who may see whose label,
who may revise or adjudicate. Each rule lives here once; services and pages call these.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from enum import StrEnum

from annotator.vocabulary import HOLD_EXPIRES_AFTER_DAYS


class State(StrEnum):
    """A claim's workflow state, derived from its labels, adjudication and holds."""

    UNLABELED = "unlabeled"
    SINGLE = "single"
    AGREED = "agreed"
    DISPUTED = "disputed"
    ADJUDICATED = "adjudicated"
    STALE = "stale"
    ON_HOLD = "on_hold"


FINAL_STATES: frozenset[State] = frozenset({State.AGREED, State.ADJUDICATED})
"""States whose claims go into a gold release."""


def claim_state(labels: Sequence[str], adjudicated: bool, changed_after: bool, on_hold: bool,
                to_review: bool = False) -> State:
    """The workflow state of one claim.

    labels: the current label values of the claim, one per labeler (any order, any count).
    adjudicated: an adjudication exists for the claim.
    changed_after: a label or the claim itself changed after that adjudication
        (`adjudication_outdated`).
    on_hold: the claim's case has a hold in force (`hold_in_force`), whoever placed it: a hold
        parks the case only in its holder's queue, but the case is not final until it is lifted.
    to_review: some label of the claim is to review (`label_to_review`): made before the
        claim's content last changed, with no adjudication decided since.
    Precedence: on hold, then adjudication (stale when changed after it), then a label to
    review when the claim has two or more labels (stale: it was agreed or disputed on content
    that changed), then the labels: none -> unlabeled, one -> single, two or more all equal ->
    agreed, else disputed. A single label to review leaves the claim single: it is not final
    anyway, and its labeler reviews it from the queue.
    """
    if on_hold:
        return State.ON_HOLD
    if adjudicated:
        return State.STALE if changed_after else State.ADJUDICATED
    if to_review and len(labels) >= 2:
        return State.STALE
    if not labels:
        return State.UNLABELED
    if len(labels) == 1:
        return State.SINGLE
    return State.AGREED if len(set(labels)) == 1 else State.DISPUTED


HOLD_LIFETIME = timedelta(days=HOLD_EXPIRES_AFTER_DAYS)
"""How long a hold applies when no one lifts it."""


def hold_in_force(created_at: datetime, lifted_at: datetime | None, now: datetime) -> bool:
    """The hold rule: a hold applies from when it was placed until it is lifted (by its holder, by
    an admin or from the command line) or until HOLD_LIFETIME has passed, whichever comes first.

    A hold is its holder's own: it parks the case in the holder's queue only (the other labelers'
    queues, pages and counts do not change), and keeps the case's claims out of a release (state
    on_hold, `claim_state`) while it applies. A case whose claims are all final cannot be put on
    hold (services/labeling.put_on_hold). services/states.py applies the same rule in SQL
    (`hold_in_force_sql`); the tests check the two against each other.
    """
    return lifted_at is None and now < created_at + HOLD_LIFETIME


def label_to_review(label_written_at: datetime, content_changed_at: datetime, decided_at: datetime | None) -> bool:
    """Whether a label is "to review": it was last written before its claim's content (text or
    passages, `Claim.updated_at`) last changed, and no adjudication was decided after that change.

    A label to review makes its claim stale (`claim_state`) until its labeler saves it again
    (even unchanged: the write records the review) or an adjudicator decides the claim.
    Services/labeling.py applies the same rule in SQL for the queue (`_to_review_sql`); the tests
    check the two against each other.
    """
    if label_written_at >= content_changed_at:
        return False
    return decided_at is None or decided_at <= content_changed_at


def adjudication_outdated(decided_at: datetime, content_changed_at: datetime,
                          labels_written_at: Sequence[datetime]) -> bool:
    """`changed_after` of `claim_state`: the claim's content or one of its labels changed after
    its adjudication was decided."""
    return content_changed_at > decided_at or any(written > decided_at for written in labels_written_at)


def may_see_other_labels(*, is_admin: bool, labeled_it: bool, is_adjudicator: bool, still_to_label: bool = False) -> bool:
    """The blind rule: may this person see other people's labels on a claim?

    still_to_label: the claim's case is assigned to them and they have not labeled it yet. Then
    they see nothing of another label on it, whatever their other roles (an admin who also
    labels included); services apply this in bulk with services/blind.py.
    Otherwise: a labeler sees other labels once they have labeled the claim; an adjudicator who
    did not label it sees them (anonymized by the service); admins see them; nobody else does.
    """
    if still_to_label:
        return False
    if is_admin:
        return True
    if labeled_it:
        return True
    return is_adjudicator


def may_revise(*, has_own_label: bool, n_labels: int, to_review: bool = False) -> bool:
    """A labeler may revise their own label until the claim's second label lands, and again
    while it is to review (`label_to_review`: the claim changed after they labeled it)."""
    return has_own_label and (n_labels < 2 or to_review)


def may_adjudicate(*, is_adjudicator: bool, labeled_it: bool, state: State) -> bool:
    """An adjudicator may decide a disputed or stale claim they did not label, and revise a
    decision on an adjudicated one."""
    return is_adjudicator and not labeled_it and state in (State.DISPUTED, State.STALE, State.ADJUDICATED)


def may_see_agreement(roles: frozenset[str]) -> bool:
    """Agreement reports name labelers and count their labels per pair, which on small tables
    reveals others' labels, and tells an adjudicator which labeler is "Labeler 1" of a dispute (a
    confusion matrix with one disagreement names both sides): admins see them, nobody else. An
    admin who labels sees them without the claims they are still to label (services/blind.py)."""
    return "admin" in roles


class Permission(StrEnum):
    """What a caller may do; `allowed` says which roles grant each. Services check these."""

    LABEL = "label"  # label claims of cases assigned to you
    ADJUDICATE = "adjudicate"  # decide disputed claims you did not label
    SEE_AGREEMENT = "see_agreement"  # agreement reports (they name labelers)
    SEE_STATUS = "see_status"  # project counts by state
    IMPORT = "import"  # import cases, labels and adjudications
    ASSIGN = "assign"  # give cases to labelers
    RELEASE = "release"  # create, list, download and verify gold releases
    MANAGE_USERS = "manage_users"  # add, change, disable users, reset passwords
    SEE_HISTORY = "see_history"  # the audit trail of a claim (names labelers and their labels)
    CORRECT_LABELS = "correct_labels"  # change a labeler's stored label on a claim, with a reason
    LIFT_HOLDS = "lift_holds"  # see every hold in force and lift anyone's (a labeler lifts their own)
    CALIBRATE = "calibrate"  # import judge runs, see them and their reports against gold (judge labels anchor people)
    SCORE_RUNS = "score_runs"  # import RAG runs, score and compare them against gold (reports show gold evidence)
    REVIEW_CLAIMS = "review_claims"  # split, merge, edit and drop the claims of a case before they are labeled


_GRANTS: dict[Permission, frozenset[str]] = {
    Permission.LABEL: frozenset({"labeler"}),
    Permission.ADJUDICATE: frozenset({"adjudicator"}),
    Permission.SEE_STATUS: frozenset({"adjudicator", "admin"}),
    Permission.IMPORT: frozenset({"admin"}),
    Permission.ASSIGN: frozenset({"admin"}),
    Permission.RELEASE: frozenset({"admin"}),
    Permission.MANAGE_USERS: frozenset({"admin"}),
    Permission.SEE_HISTORY: frozenset({"admin"}),
    Permission.CORRECT_LABELS: frozenset({"admin"}),
    Permission.LIFT_HOLDS: frozenset({"admin"}),
    Permission.CALIBRATE: frozenset({"admin"}),
    Permission.SCORE_RUNS: frozenset({"admin"}),
    Permission.REVIEW_CLAIMS: frozenset({"admin"}),
}


def allowed(roles: frozenset[str], permission: Permission) -> bool:
    """Whether any of `roles` grants `permission`: the one table of who may do what.

    SEE_AGREEMENT follows may_see_agreement; every other permission is granted by the roles in
    _GRANTS (any one suffices).
    """
    if permission is Permission.SEE_AGREEMENT:
        return may_see_agreement(roles)
    return bool(roles & _GRANTS[permission])
