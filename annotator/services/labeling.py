"""Labeling: assignments, each labeler's queue, the claim as a labeler sees it, saving a label.

The blind rule holds here, not only in pages: nothing a labeler gets from these functions
holds anything of another labeler's label.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_
from sqlmodel import Session, func, select

from annotator.db import refresh_statistics
from annotator.services.access import Caller, require
from annotator.workflow import Permission
from annotator.errors import (
    InvalidValueError,
    LabelLockedError,
    NotFoundError,
    OnHoldError,
    PermissionDeniedError,
    StaleWriteError,
)
from annotator.models import Assignment, Case, Claim, ClaimPassage, Hold, Label, Passage, User, utcnow
from annotator.services.audit import record_event
from annotator.services.users import get_user, has_role
from annotator.vocabulary import HOLD_REASONS, LABELS, SEVERITIES
from annotator.workflow import may_revise


@dataclass(frozen=True)
class PassageView:
    """A passage as shown next to a claim."""
    passage_id: str
    doc_id: str
    version: str
    title: str
    text: str


@dataclass(frozen=True)
class OwnLabel:
    """The viewer's own label of a claim (never anyone else's)."""
    value: str
    passage_ids: tuple[str, ...]
    rationale: str
    severity: str | None
    revision: int


@dataclass(frozen=True)
class ClaimView:
    """One claim as its labeler sees it: the case, the claim, its passages, and only their own label."""

    claim_pk: int
    claim_id: str
    text: str
    case_pk: int
    case_id: str
    question: str
    answer: str
    slice: str
    split: str
    metadata: dict
    passages: tuple[PassageView, ...]
    own_label: OwnLabel | None
    can_revise: bool
    on_hold: bool
    hold_reason: str | None = None
    may_lift_hold: bool = False


BULK_ASSIGNMENTS = 100
"""From this many new assignments on, the planner statistics are refreshed (see db.refresh_statistics)."""


# --- assignments -----------------------------------------------------------------------------


def assign_cases(session: Session, actor: Caller, case_pks: list[int], labeler_names: list[str]) -> int:
    """Assign each case in `case_pks` to each named labeler (two, normally).

    Existing assignments are kept (not duplicated). Returns how many assignments were created.
    Raises PermissionDeniedError unless `actor` may assign, NotFoundError for an unknown user,
    InvalidValueError for a user without the labeler role or a name given twice.
    """
    require(actor, Permission.ASSIGN)
    if len(set(labeler_names)) != len(labeler_names) or not labeler_names:
        raise InvalidValueError(f"name different labelers, got {', '.join(labeler_names) or 'none'}")
    labelers = [get_user(session, name) for name in labeler_names]
    for user in labelers:
        if not has_role(user, "labeler"):
            raise InvalidValueError(f"user '{user.name}' is not a labeler; give them the role first")
        if not user.active:
            raise InvalidValueError(f"user '{user.name}' is disabled; enable them first or choose another labeler")
    existing = set(
        session.exec(
            select(Assignment.case_pk, Assignment.labeler_pk).where(Assignment.case_pk.in_(case_pks))
        ).all()
    )
    created = 0
    for case_pk in case_pks:
        for user in labelers:
            if (case_pk, user.id) in existing:
                continue
            assignment = Assignment(case_pk=case_pk, labeler_pk=user.id)
            session.add(assignment)
            session.flush()
            record_event(
                session, actor_pk=actor.id, entity="assignment", entity_pk=assignment.id, action="create",
                after={"case_pk": case_pk, "labeler": user.name},
            )
            created += 1
    if created >= BULK_ASSIGNMENTS:
        refresh_statistics(session)
    return created


def first_cases(session: Session, n: int, dataset_pk: int | None = None) -> list[int]:
    """The primary keys of the first `n` cases in import order (of one dataset, or all)."""
    query = select(Case.id).order_by(Case.dataset_id, Case.position, Case.id).limit(n)
    if dataset_pk is not None:
        query = query.where(Case.dataset_id == dataset_pk)
    return list(session.exec(query))


def first_unassigned_cases(session: Session, n: int, dataset_pk: int | None = None) -> list[int]:
    """The primary keys of the first `n` cases, in import order, that nobody is assigned to yet:
    pressing "assign 20" twice assigns the next 20."""
    assigned = select(Assignment.id).where(Assignment.case_pk == Case.id).exists()
    query = select(Case.id).where(~assigned).order_by(Case.dataset_id, Case.position, Case.id).limit(n)
    if dataset_pk is not None:
        query = query.where(Case.dataset_id == dataset_pk)
    return list(session.exec(query))


def is_assigned_to_claim(session: Session, user: User, claim_pk: int) -> bool:
    """Whether the claim's case is assigned to `user` as a labeler."""
    query = select(Assignment.id).join(Claim, Claim.case_pk == Assignment.case_pk).where(
        Claim.id == claim_pk, Assignment.labeler_pk == user.id)
    return session.exec(query).first() is not None


# --- the labeler's queue -----------------------------------------------------------------------


def _assigned_claims(user_pk: int):  # noqa: ANN202 - a select
    return (
        select(Claim.id)
        .join(Assignment, and_(Assignment.case_pk == Claim.case_pk, Assignment.labeler_pk == user_pk))
        .join(Case, Case.id == Claim.case_pk)
        .order_by(Case.dataset_id, Case.position, Claim.position, Claim.id)
    )


def assigned_claims(session: Session, user: User) -> list[int]:
    """All claims of the cases assigned to `user`, in queue order (case order, then claim order)."""
    return list(session.exec(_assigned_claims(user.id)))


def find_assigned_claim(session: Session, user: User, claim_id: str) -> int:
    """The primary key of the claim with the user's id `claim_id` among the claims assigned to
    `user` (a deep link `?claim=...`). Raises PermissionDeniedError when no such claim is in
    their queue, saying nothing about claims outside it."""
    query = _assigned_claims(user.id).where(Claim.claim_id == claim_id).limit(1)
    found = session.exec(query).first()
    if found is None:
        raise PermissionDeniedError(f"claim '{claim_id}' is not in your queue")
    return found


def next_claim_for(session: Session, user: User) -> int | None:
    """The first claim assigned to `user` that they have not labeled and whose case is not on
    hold, or None when their queue is done.

    The label and hold checks are correlated scalar subqueries with LIMIT 1: each is one index
    lookup per queued claim whatever the planner's statistics say. (An anti-join let PostgreSQL
    pick a quadratic plan for a new labeler, whose labels its statistics had not seen yet.)
    """
    own_label = select(Label.id).where(Label.claim_pk == Claim.id, Label.labeler_pk == user.id).limit(1).scalar_subquery()
    active_hold = select(Hold.id).where(Hold.case_pk == Claim.case_pk, Hold.lifted_at.is_(None)).limit(1).scalar_subquery()
    return session.exec(_assigned_claims(user.id).where(own_label.is_(None), active_hold.is_(None)).limit(1)).first()


def progress_for(session: Session, user: User) -> tuple[int, int]:
    """(labeled, assigned): how many of the claims assigned to `user` they have labeled."""
    assigned = session.exec(
        select(func.count(Claim.id)).join(
            Assignment, and_(Assignment.case_pk == Claim.case_pk, Assignment.labeler_pk == user.id)
        )
    ).one()
    labeled = session.exec(
        select(func.count(Label.id))
        .join(Claim, Claim.id == Label.claim_pk)
        .join(Assignment, and_(Assignment.case_pk == Claim.case_pk, Assignment.labeler_pk == user.id))
        .where(Label.labeler_pk == user.id)
    ).one()
    return labeled, assigned


# --- one claim, seen by its labeler ----------------------------------------------------------


def _is_assigned(session: Session, user: User, case_pk: int) -> bool:
    query = select(Assignment.id).where(Assignment.case_pk == case_pk, Assignment.labeler_pk == user.id)
    return session.exec(query).first() is not None


def _active_hold(session: Session, case_pk: int) -> Hold | None:
    return session.exec(select(Hold).where(Hold.case_pk == case_pk, Hold.lifted_at.is_(None))).first()


def claim_passages(session: Session, claim_pk: int) -> tuple[PassageView, ...]:
    """The passages a claim is shown with, in their order."""
    rows = session.exec(
        select(Passage)
        .join(ClaimPassage, ClaimPassage.passage_pk == Passage.id)
        .where(ClaimPassage.claim_pk == claim_pk)
        .order_by(ClaimPassage.position)
    ).all()
    return tuple(PassageView(p.passage_id, p.doc_id, p.version, p.title, p.text) for p in rows)


def claim_for_labeler(session: Session, user: User, claim_pk: int) -> ClaimView:
    """The claim as `user` sees it when labeling: case, claim, passages and their own label only.

    Raises NotFoundError for an unknown claim and PermissionDeniedError when the claim's case
    is not assigned to `user` (a deep link to someone else's claim shows nothing).
    """
    claim = session.get(Claim, claim_pk)
    if claim is None:
        raise NotFoundError(f"no claim with key {claim_pk}")
    if not _is_assigned(session, user, claim.case_pk):
        raise PermissionDeniedError("this claim is not in your queue")
    case = session.get(Case, claim.case_pk)
    own = _own_label(session, user, claim_pk)
    n_labels = session.exec(select(func.count(Label.id)).where(Label.claim_pk == claim_pk)).one()
    hold = _active_hold(session, claim.case_pk)
    return ClaimView(
        claim_pk=claim.id, claim_id=claim.claim_id, text=claim.text,
        case_pk=case.id, case_id=case.case_id, question=case.question, answer=case.answer,
        slice=case.slice, split=case.split, metadata=dict(case.meta or {}),
        passages=claim_passages(session, claim_pk),
        own_label=None if own is None else OwnLabel(
            own.value, tuple(own.passage_ids or ()), own.rationale, own.severity, own.revision
        ),
        # n_labels is used only to decide the lock, and only once the viewer has labeled.
        can_revise=own is None or may_revise(has_own_label=True, n_labels=n_labels),
        on_hold=hold is not None,
        hold_reason=None if hold is None else hold.reason,
        may_lift_hold=hold is not None and _may_lift(user, hold),
    )


def _own_label(session: Session, user: User, claim_pk: int) -> Label | None:
    query = select(Label).where(Label.claim_pk == claim_pk, Label.labeler_pk == user.id)
    return session.exec(query.execution_options(populate_existing=True)).first()


def lock_claim(session: Session, claim_pk: int) -> Claim | None:
    """The claim, its row locked until the transaction ends, so that the writes about one claim
    (its labels, its decision) run one after the other, each reading what the one before it
    committed. None for an unknown claim.

    PostgreSQL: FOR NO KEY UPDATE (an insert that only references the claim is not blocked);
    under READ COMMITTED each later statement then sees the rows committed while we waited.
    SQLite renders no FOR UPDATE and needs none: BEGIN IMMEDIATE (db.py) already runs writing
    transactions one at a time.
    """
    return session.get(Claim, claim_pk, with_for_update={"key_share": True}, populate_existing=True)


# --- saving ----------------------------------------------------------------------------------


def _label_dict(label: Label) -> dict:
    return {
        "value": label.value, "passage_ids": list(label.passage_ids or []), "rationale": label.rationale,
        "severity": label.severity, "guideline_version": label.guideline_version, "revision": label.revision,
    }


def _check_label_input(session: Session, claim_pk: int, value: str, passage_ids: list[str], severity: str | None) -> None:
    if severity is not None and value == "support":
        raise InvalidValueError("a supported claim has no severity; clear it or choose another label")
    check_label_fields(session, claim_pk, value, passage_ids, severity)


def check_label_fields(session: Session, claim_pk: int, value: str | None, passage_ids: list[str],
                       severity: str | None) -> None:
    """InvalidValueError for an unknown label (None: no label chosen yet) or severity, or a cited
    passage not shown with the claim; shared by labels and drafts."""
    if value is not None and value not in LABELS:
        raise InvalidValueError(f"unknown label '{value}'; use one of {', '.join(LABELS)}")
    if severity is not None and severity not in SEVERITIES:
        raise InvalidValueError(f"unknown severity '{severity}'; use one of {', '.join(SEVERITIES)}")
    if not passage_ids:
        return  # nothing cited: no passage to look up
    shown = {p.passage_id for p in claim_passages(session, claim_pk)}
    unknown = [pid for pid in passage_ids if pid not in shown]
    if unknown:
        raise InvalidValueError(f"cited passages {unknown} are not shown with this claim")


def save_label(
    session: Session,
    user: User,
    claim_pk: int,
    value: str,
    *,
    passage_ids: list[str] | tuple[str, ...] = (),
    rationale: str = "",
    severity: str | None = None,
    guideline_version: str = "",
    expected_revision: int | None = None,
) -> Label:
    """Create or revise `user`'s label on a claim, with optimistic locking.

    expected_revision: None when the user saw no label of theirs (a create), else the revision
        they saw. A write whose content equals the stored label is a no-op (a double click
        writes once).
    Raises PermissionDeniedError (not assigned / not a labeler), OnHoldError, InvalidValueError,
    StaleWriteError (the label changed since it was read: another tab or a double submit with
    other content), LabelLockedError (the claim's second label has landed). Every write is
    recorded in the audit trail.
    """
    claim = lock_claim(session, claim_pk)  # two saves on one claim at once: the second waits, then reads the first
    if claim is None:
        raise NotFoundError(f"no claim with key {claim_pk}")
    if not has_role(user, "labeler") or not _is_assigned(session, user, claim.case_pk):
        raise PermissionDeniedError("this claim is not in your queue")
    if _active_hold(session, claim.case_pk) is not None:
        raise OnHoldError("this case is on hold; it cannot be labeled until the hold is lifted")
    cited = [str(pid) for pid in passage_ids]
    _check_label_input(session, claim_pk, value, cited, severity)
    wanted = {"value": value, "passage_ids": cited, "rationale": rationale.strip(), "severity": severity}
    from annotator.services.drafts import forget_draft  # drafts imports this module
    own = _own_label(session, user, claim_pk)
    if own is None:
        if expected_revision is not None:
            raise StaleWriteError("your label on this claim was removed meanwhile; your input is kept, save again")
        forget_draft(session, user, claim_pk)  # the label supersedes the user's draft (drafts.py)
        return _create_label(session, user, claim, wanted, guideline_version)
    current = _label_dict(own)
    if all(current[key] == wanted[key] for key in wanted):
        return own  # same content: a repeated click writes nothing
    if expected_revision != own.revision:
        raise StaleWriteError(
            "your label on this claim was changed elsewhere (another tab?) since you opened it; "
            "your input is kept: reload the claim to see the saved label, then save again"
        )
    n_labels = session.exec(select(func.count(Label.id)).where(Label.claim_pk == claim_pk)).one()
    if not may_revise(has_own_label=True, n_labels=n_labels):
        raise LabelLockedError("the second label on this claim has landed; it now goes to adjudication if they differ")
    forget_draft(session, user, claim_pk)
    return _update_label(session, user, own, wanted, guideline_version)


def _create_label(session: Session, user: User, claim: Claim, wanted: dict, guideline_version: str) -> Label:
    now = utcnow()
    label = Label(
        claim_pk=claim.id, labeler_pk=user.id, guideline_version=guideline_version, source="app",
        revision=1, created_at=now, updated_at=now, **wanted,
    )
    session.add(label)
    session.flush()
    record_event(session, actor_pk=user.id, entity="label", entity_pk=label.id, claim_pk=claim.id,
                 action="create", after=_label_dict(label))
    return label


def _update_label(session: Session, user: User, label: Label, wanted: dict, guideline_version: str) -> Label:
    before = _label_dict(label)
    for key, value in wanted.items():
        setattr(label, key, value)
    label.guideline_version = guideline_version
    label.revision += 1
    label.updated_at = utcnow()
    session.add(label)
    session.flush()
    record_event(session, actor_pk=user.id, entity="label", entity_pk=label.id, claim_pk=label.claim_pk,
                 action="update", before=before, after=_label_dict(label))
    return label


# --- holds -----------------------------------------------------------------------------------


def put_on_hold(session: Session, user: User, case_pk: int, reason: str, note: str = "") -> Hold:
    """Put a case on hold with one of HOLD_REASONS. Labelers may hold cases assigned to them;
    admins any case. A case already on hold keeps its hold (returned unchanged).
    Raises InvalidValueError for an unknown reason, PermissionDeniedError otherwise."""
    if reason not in HOLD_REASONS:
        raise InvalidValueError(f"unknown hold reason '{reason}'; use one of {', '.join(HOLD_REASONS)}")
    if not (has_role(user, "admin") or _is_assigned(session, user, case_pk)):
        raise PermissionDeniedError("you may hold only cases assigned to you")
    session.get(Case, case_pk, with_for_update={"key_share": True})  # one active hold per case, even when two hold it at once
    existing = _active_hold(session, case_pk)
    if existing is not None:
        return existing
    hold = Hold(case_pk=case_pk, reason=reason, note=note.strip(), created_by=user.id)
    session.add(hold)
    session.flush()
    record_event(session, actor_pk=user.id, entity="hold", entity_pk=hold.id, action="create",
                 after={"case_pk": case_pk, "reason": reason, "note": hold.note})
    return hold


def _may_lift(user: User, hold: Hold) -> bool:
    return has_role(user, "admin") or hold.created_by == user.id


def lift_hold(session: Session, user: User, case_pk: int) -> bool:
    """Lift the active hold of a case (admins, or the labeler who placed it). Returns whether
    there was one. Raises PermissionDeniedError."""
    hold = _active_hold(session, case_pk)
    if hold is None:
        return False
    if not _may_lift(user, hold):
        raise PermissionDeniedError("only an admin or the person who placed the hold may lift it")
    hold.lifted_at = utcnow()
    session.add(hold)
    what = {"case_pk": case_pk, "reason": hold.reason}
    record_event(session, actor_pk=user.id, entity="hold", entity_pk=hold.id, action="update",
                 before={**what, "lifted": False}, after={**what, "lifted": True})
    return True
