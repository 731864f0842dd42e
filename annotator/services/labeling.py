"""Labeling: assignments, each labeler's queue, the claim as a labeler sees it, saving a label.

The blind rule holds here, not only in pages: nothing a labeler gets from these functions
holds anything of another labeler's label.

Holds (workflow.hold_in_force states the rule): a hold is its holder's own. It parks the case in
the holder's queue only (next_claim_for, claim_for_labeler and save_label look at the caller's
own hold, never another's), keeps the case's claims on_hold, out of a release, until its holder
lifts it (lift_hold), an admin or the command line lifts it (lift_holds), or it expires
(vocabulary.HOLD_EXPIRES_AFTER_DAYS); a case whose claims are all final cannot be held.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dataclass_replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, bindparam, insert, or_, tuple_, update
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import select as sa_select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import configure_mappers, make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key
from sqlmodel import Session, func, select

from annotator.db import refresh_statistics
from annotator.services.access import Caller, need_caller, require
from annotator.services.numbers import plain_row
from annotator.workflow import Permission
from annotator.errors import (
    AmbiguousIdError,
    CaseFinalError,
    ContentChangedError,
    GuidelineChangedError,
    InvalidValueError,
    LabelLockedError,
    NotFoundError,
    OnHoldError,
    PermissionDeniedError,
    StaleWriteError,
)
from annotator.text import check_free_text
from annotator.models import (
    Adjudication, Assignment, Case, Claim, ClaimPassage, Dataset, Draft, Guideline, Hold, Label, LabelEvent, Passage, User,
    utcnow,
)
from annotator.services.audit import append_event, event_row, record_event
from annotator.services.blind import claims_still_to_label
from annotator.services.states import claim_facts, hold_cutoff, hold_in_force_sql
from annotator.messages import msg, shortened
from annotator.services.users import get_user, has_role, still_logged_in
from annotator.vocabulary import HOLD_REASONS, LABELS, SEVERITIES
from annotator.workflow import FINAL_STATES, HOLD_LIFETIME, label_to_review, may_revise


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
    # The viewer's own label is to review (workflow.label_to_review): what of the claim changed
    # since they wrote it, among "text" and "passages" (both when the audit trail does not say).
    # Empty when their label is not to review.
    changed_since_label: tuple[str, ...] = ()
    # When the claim's text or passages last changed (Claim.updated_at): the page saves against it
    # (save_label's seen_content_at), so an `import --update` landing meanwhile refuses the save.
    content_changed_at: Any = None
    # When the viewer's own stored draft of the claim was last written, None when they have none:
    # the page asks drafts.get_draft (which decides whether it still counts) only then.
    draft_at: Any = None
    # {doc_id: every version of the document in the dataset} for the shown passages' documents
    # (versions_in_dataset): a passage whose document has a newer version anywhere is marked old.
    document_versions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Where the claim is in the answer (Claim.span_start, Claim.span_end: code points,
    # answer[span_start:span_end]); None when not known. The page marks it in place
    # (highlight.claim_in_answer checks it against the answer and the claim first).
    span_start: int | None = None
    span_end: int | None = None
    dataset: str = ""  # the name of the claim's dataset (claim ids are unique per dataset only)


BULK_ASSIGNMENTS = 100
"""From this many new assignments on, the planner statistics are refreshed (see db.refresh_statistics)."""


# --- assignments -----------------------------------------------------------------------------


def assign_cases(session: Session, actor: Caller, case_pks: list[int], labeler_names: list[str]) -> int:
    """Assign each case in `case_pks` to each named labeler (two, normally).

    Existing assignments are kept (not duplicated). Returns how many assignments were created.
    Raises PermissionDeniedError unless `actor` may assign, NotFoundError for an unknown user or
    case key, InvalidValueError for a user without the labeler role or a name given twice.
    """
    require(actor, Permission.ASSIGN)
    if len(set(labeler_names)) != len(labeler_names) or not labeler_names:
        raise InvalidValueError.of("msg.assign_different_labelers",
                                   names=", ".join(labeler_names) or msg("msg.assign_none"))
    labelers = [get_user(session, name) for name in labeler_names]
    for user in labelers:
        if not has_role(user, "labeler"):
            raise InvalidValueError.of("msg.assign_not_labeler", name=user.name)
        if not user.active:
            raise InvalidValueError.of("msg.assign_disabled", name=user.name)
    existing = set(
        session.exec(
            select(Assignment.case_pk, Assignment.labeler_pk).where(Assignment.case_pk.in_(case_pks))
        ).all()
    )
    places = {pk: (dataset_pk, position) for pk, dataset_pk, position in session.exec(
        select(Case.id, Case.dataset_id, Case.position).where(Case.id.in_(case_pks)))}
    unknown = [pk for pk in case_pks if pk not in places]
    if unknown:
        raise NotFoundError.of("msg.no_case_key", case_pk=unknown[0])
    created = 0
    for case_pk in case_pks:
        dataset_pk, position = places[case_pk]
        for user in labelers:
            if (case_pk, user.id) in existing:
                continue
            assignment = Assignment(case_pk=case_pk, labeler_pk=user.id, dataset_id=dataset_pk, case_position=position)
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
    need_caller(user)
    query = select(Assignment.id).join(Claim, Claim.case_pk == Assignment.case_pk).where(
        Claim.id == claim_pk, Assignment.labeler_pk == user.id)
    return session.exec(query).first() is not None


# --- the labeler's queue -----------------------------------------------------------------------


QUEUE_ORDER = (Assignment.dataset_id, Assignment.case_position, Assignment.case_pk, Claim.position, Claim.id)
"""A labeler's queue order: their cases in import order (dataset, then the case's position),
each case's claims in their order. Read in this order from the indexes ix_assignment_queue and
ix_claim_case_order: a query that stops at its first rows reads only those."""


def _assigned_claims(user_pk: int):  # noqa: ANN202 - a select
    return (
        select(Claim.id)
        .select_from(Assignment)
        .join(Claim, Claim.case_pk == Assignment.case_pk)
        .where(Assignment.labeler_pk == user_pk)
        .order_by(*QUEUE_ORDER)
    )


def assigned_claims(session: Session, user: User) -> list[int]:
    """All claims of the cases assigned to `user`, in queue order (case order, then claim order)."""
    need_caller(user)
    return list(session.exec(_assigned_claims(user.id)))


def first_queued_claim(session: Session, user: User) -> int | None:
    """The first claim of `user`'s queue (QUEUE_ORDER), None when nothing is assigned to them."""
    need_caller(user)
    return session.exec(_assigned_claims(user.id).limit(1)).first()


@dataclass(frozen=True)
class QueuePlace:
    """Where a claim stands in its labeler's queue (QUEUE_ORDER): its 1-based position, and the
    claims before and after it (None at either end)."""

    position: int
    previous_pk: int | None
    next_pk: int | None


def _claims_of_case():  # noqa: ANN202 - a scalar subquery
    """SQL, correlated with Assignment: how many claims its case has (an index-only count in
    ix_claim_case_order). Summed over a labeler's assignments it counts their queue by index
    lookups; a join's count let PostgreSQL hash-join the whole claim table."""
    claim = Claim.__table__.alias("counted")
    return (sa_select(func.count(claim.c.id)).where(claim.c.case_pk == Assignment.case_pk)
            .correlate(Assignment).scalar_subquery())


@functools.cache
def _queue_place_statement():  # noqa: ANN202 - a Select
    """(Built once.) For the claim `claim_pk` in the queue of `user_pk`: the claims just before
    and after it, and how many claims come before it; no row when the claim is not in the queue.
    The claim's place (its case's dataset and position) is read once, in the FROM; each
    neighbour is the first row of an index range of ix_claim_case_order (in its case) or of
    ix_assignment_queue (the cases before or after it), and the count walks the earlier part of
    the queue in the database (no claim list comes back to Python)."""
    here = (sa_select(Assignment.dataset_id, Assignment.case_position, Assignment.case_pk, Claim.position, Claim.id)
            .select_from(Assignment).join(Claim, Claim.case_pk == Assignment.case_pk)
            .where(Assignment.labeler_pk == bindparam("user_pk"), Claim.id == bindparam("claim_pk"))
            .subquery("here"))
    case_key = tuple_(Assignment.dataset_id, Assignment.case_position, Assignment.case_pk)
    here_case = tuple_(here.c.dataset_id, here.c.case_position, here.c.case_pk)
    claim_key, here_claim = tuple_(Claim.position, Claim.id), tuple_(here.c.position, here.c.id)
    other_cases = (sa_select(Claim.id).select_from(Assignment).join(Claim, Claim.case_pk == Assignment.case_pk)
                   .where(Assignment.labeler_pk == bindparam("user_pk")))
    this_case = sa_select(Claim.id).where(Claim.case_pk == here.c.case_pk)
    backwards = [column.desc() for column in QUEUE_ORDER]

    def first(query, order):  # noqa: ANN001, ANN202 - a Select, its order; a scalar subquery
        return query.order_by(*order).limit(1).correlate(here).scalar_subquery()

    def count(query):  # noqa: ANN001, ANN202 - a Select; a scalar subquery
        return sa_select(func.count()).select_from(query.correlate(here).subquery()).correlate(here).scalar_subquery()

    earlier_cases = (sa_select(func.coalesce(func.sum(_claims_of_case()), 0))
                     .where(Assignment.labeler_pk == bindparam("user_pk"), case_key < here_case)
                     .correlate(here).scalar_subquery())
    return sa_select(
        func.coalesce(first(this_case.where(claim_key < here_claim), backwards[3:]),
                      first(other_cases.where(case_key < here_case), backwards)),
        func.coalesce(first(this_case.where(claim_key > here_claim), QUEUE_ORDER[3:]),
                      first(other_cases.where(case_key > here_case), QUEUE_ORDER)),
        earlier_cases + count(this_case.where(claim_key < here_claim)),
    ).select_from(here)


def queue_place(session: Session, user: User, claim_pk: int) -> QueuePlace | None:
    """Where the claim `claim_pk` stands in `user`'s queue, or None when it is not in their queue.
    One statement, whatever the queue's length (_queue_place_statement)."""
    need_caller(user)
    row = session.execute(_queue_place_statement(), {"user_pk": user.id, "claim_pk": claim_pk}).one_or_none()
    if row is None:
        return None
    previous_pk, next_pk, before = plain_row(row)
    return QueuePlace(before + 1, previous_pk, next_pk)


def assigned_claim_matches(session: Session, user: User, claim_id: str, dataset: str | None = None) -> list[tuple[int, str]]:
    """(claim primary key, dataset name) of each claim with the user's id `claim_id` among the
    claims assigned to `user`, in queue order: at most one per dataset (claim ids are unique per
    dataset only). `dataset` (a dataset's name) keeps only the claim of that dataset. Reads the
    caller's own assignments only: nothing about claims outside their queue."""
    need_caller(user)
    query = (select(Claim.id, Dataset.name).select_from(Assignment)
             .join(Claim, Claim.case_pk == Assignment.case_pk)
             .join(Dataset, Dataset.id == Claim.dataset_id)
             .where(Assignment.labeler_pk == user.id, Claim.claim_id == claim_id)
             .order_by(*QUEUE_ORDER))
    if dataset is not None:
        query = query.where(Dataset.name == dataset)
    return [(pk, name) for pk, name in session.exec(query)]


def several_datasets_error(claim_id: str, datasets: Sequence[str]) -> AmbiguousIdError:
    """The refusal of a claim link whose id `claim_id` is in several of the caller's datasets
    (`datasets`, names within the caller's reach only): which claim was meant is unknown, so none
    is opened (msg.claim_in_several_datasets: open it from the queue, or add `&dataset=`)."""
    names = ", ".join(shortened(name) for name in sorted(set(datasets)))
    return AmbiguousIdError.of("msg.claim_in_several_datasets", claim_id=shortened(claim_id), datasets=names)


def find_assigned_claim(session: Session, user: User, claim_id: str, dataset: str | None = None) -> int:
    """The primary key of the claim with the user's id `claim_id` among the claims assigned to
    `user` (a deep link `?claim=...&dataset=...`), in the dataset named `dataset` when given.
    Raises PermissionDeniedError when no such claim is in their queue, saying nothing about
    claims outside it; AmbiguousIdError when `dataset` is None and their queue has a claim with
    that id in more than one dataset (naming those datasets of their queue only)."""
    found = assigned_claim_matches(session, user, claim_id, dataset)
    if not found:
        raise PermissionDeniedError.of("msg.claim_not_in_queue", claim_id=shortened(claim_id))
    if len(found) > 1:
        raise several_datasets_error(claim_id, [name for _, name in found])
    return found[0][0]


def _to_review_sql(user_pk: int):  # noqa: ANN202 - a column expression
    """SQL, correlated with Claim: `user_pk`'s label of the claim is to review, as
    workflow.label_to_review decides it (states.claim_facts applies that function; the tests
    check this expression against it): written before the claim's content last changed, and no
    adjudication decided after that change."""
    stale_label = select(Label.id).where(Label.claim_pk == Claim.id, Label.labeler_pk == user_pk,
                                         Label.updated_at < Claim.updated_at).limit(1).scalar_subquery()
    return and_(stale_label.is_not(None), _decided_after_change().is_(None))


def _decided_after_change():  # noqa: ANN202 - a scalar subquery
    """SQL, correlated with Claim: the key of the claim's adjudication when it was decided after
    the claim's content last changed, else NULL."""
    return select(Adjudication.id).where(Adjudication.claim_pk == Claim.id,
                                         Adjudication.decided_at > Claim.updated_at).limit(1).scalar_subquery()


def next_claim_for(session: Session, user: User) -> int | None:
    """The first claim assigned to `user` that they have not labeled, or whose content changed
    after they labeled it (their label is to review: workflow.label_to_review), and whose case is
    not on a hold of theirs (a hold in force that `user` placed: another's hold does not change
    their queue), or None when their queue is done.

    The label and hold checks are correlated scalar subqueries with LIMIT 1: each is one index
    lookup per queued claim whatever the planner's statistics say. (An anti-join let PostgreSQL
    pick a quadratic plan for a new labeler, whose labels its statistics had not seen yet.)
    """
    need_caller(user)
    own_label = select(Label.id).where(Label.claim_pk == Claim.id, Label.labeler_pk == user.id).limit(1).scalar_subquery()
    active_hold = select(Hold.id).where(Hold.case_pk == Claim.case_pk, Hold.created_by == user.id,
                                        hold_in_force_sql(Hold)).limit(1).scalar_subquery()
    to_do = or_(own_label.is_(None), _to_review_sql(user.id))
    return session.exec(_assigned_claims(user.id).where(to_do, active_hold.is_(None)).limit(1)).first()


@functools.cache
def _progress_statement():  # noqa: ANN202 - a Select
    """(Built once.) The counts of progress_for for `user_pk`, in one statement."""
    assigned = sa_select(func.coalesce(func.sum(_claims_of_case()), 0)).where(Assignment.labeler_pk == bindparam("user_pk"))
    labeled = (
        sa_select(func.count(Label.id))
        .join(Claim, Claim.id == Label.claim_pk)
        .join(Assignment, and_(Assignment.case_pk == Claim.case_pk, Assignment.labeler_pk == bindparam("user_pk")))
        # not to review (workflow.label_to_review): written since the claim last changed, or decided after that
        .where(Label.labeler_pk == bindparam("user_pk"),
               or_(Label.updated_at >= Claim.updated_at, _decided_after_change().is_not(None)))
    )
    return sa_select(labeled.scalar_subquery(), assigned.scalar_subquery())


def progress_for(session: Session, user: User) -> tuple[int, int]:
    """(labeled, assigned): how many of the claims assigned to `user` they have labeled (a label
    to review, workflow.label_to_review, is not counted until they save it again)."""
    need_caller(user)
    labeled, assigned = plain_row(session.execute(_progress_statement(), {"user_pk": user.id}).one())
    return labeled, assigned


# --- one claim, seen by its labeler ----------------------------------------------------------


def _is_assigned(session: Session, user: User, case_pk: int) -> bool:
    query = select(Assignment.id).where(Assignment.case_pk == case_pk, Assignment.labeler_pk == user.id)
    return session.exec(query).first() is not None


def _own_hold(session: Session, user: User, case_pk: int) -> Hold | None:
    """The hold in force that `user` placed on the case, None when there is none."""
    return session.exec(select(Hold).where(Hold.case_pk == case_pk, Hold.created_by == user.id,
                                           hold_in_force_sql(Hold))).first()


_HOLD_CUTOFF = bindparam("hold_cutoff", type_=Hold.__table__.c.created_at.type)
"""The statements built once take the hold rule's cutoff (states.hold_cutoff) as this parameter."""


@functools.cache
def _passages_statement():  # noqa: ANN202 - a Select
    """The claim's passages in their order (built once: SQLAlchemy then compiles it once per
    dialect). Parameter: claim_pk."""
    passage, shown = Passage.__table__, ClaimPassage.__table__
    return (sa_select(passage.c.passage_id, passage.c.doc_id, passage.c.version, passage.c.title, passage.c.text)
            .join(shown, shown.c.passage_pk == passage.c.id)
            .where(shown.c.claim_pk == bindparam("claim_pk"))
            .order_by(shown.c.position))


def claim_passages(session: Session, claim_pk: int) -> tuple[PassageView, ...]:
    """The passages a claim is shown with, in their order."""
    rows = session.execute(_passages_statement(), {"claim_pk": claim_pk})
    return tuple(PassageView(*row) for row in rows)


def versions_in_dataset(session: Session, dataset_pk: int, passages: Sequence[PassageView]) -> dict[str, tuple[str, ...]]:
    """{doc_id: every version of that document among the dataset's passages} for the documents of
    `passages` (those with a doc_id), so a page can mark a shown passage whose document has a
    newer version anywhere in the dataset (highlight.old_versions). One statement, an index
    range of ix_passage_document per document."""
    doc_ids = sorted({p.doc_id for p in passages if p.doc_id})
    if not doc_ids:
        return {}
    passage = Passage.__table__
    rows = session.execute(
        sa_select(passage.c.doc_id, passage.c.version).distinct()
        .where(passage.c.dataset_id == dataset_pk, passage.c.doc_id.in_(doc_ids)))
    versions: dict[str, list[str]] = {}
    for doc_id, version in rows:
        versions.setdefault(doc_id, []).append(version)
    return {doc_id: tuple(sorted(found)) for doc_id, found in versions.items()}


@functools.cache
def _claim_for_labeler_statement():  # noqa: ANN202 - a Select
    """(Built once.) One row: the claim, its case, and what of the viewer's standing the Label page shows (see
    claim_for_labeler), each part a lookup in a primary-key, unique or foreign-key index.
    Parameters: claim_pk, user_pk, hold_cutoff (states.hold_cutoff)."""
    claim, case, label, hold = Claim.__table__, Case.__table__, Label.__table__, Hold.__table__
    adjudication, assignment, draft = Adjudication.__table__, Assignment.__table__, Draft.__table__
    held = hold.alias("active_hold")
    active_hold = (sa_select(held.c.id).where(held.c.case_pk == claim.c.case_pk, held.c.created_by == bindparam("user_pk"),
                                              hold_in_force_sql(held, _HOLD_CUTOFF))
                   .correlate(claim).limit(1).scalar_subquery())
    return (
        sa_select(
            claim.c.claim_id, claim.c.text, claim.c.case_pk, claim.c.updated_at, claim.c.dataset_id,
            claim.c.span_start, claim.c.span_end,
            case.c.case_id, case.c.question, case.c.answer, case.c.slice, case.c.split, case.c.meta,
            _first_pk(assignment, assignment.c.case_pk == claim.c.case_pk,
                      assignment.c.labeler_pk == bindparam("user_pk")).label("assignment_pk"),
            *(label.c[name].label(f"own_{name}") for name in
              ("value", "passage_ids", "rationale", "severity", "revision", "updated_at")),
            label.c.id.label("own_pk"),
            sa_select(func.count(label.c.id)).where(label.c.claim_pk == claim.c.id)
            .correlate(claim).scalar_subquery().label("n_labels"),
            sa_select(adjudication.c.decided_at).where(adjudication.c.claim_pk == claim.c.id)
            .limit(1).scalar_subquery().label("decided_at"),
            hold.c.id.label("hold_pk"), hold.c.reason.label("hold_reason"), hold.c.created_by.label("hold_by"),
            sa_select(draft.c.updated_at).where(draft.c.labeler_pk == bindparam("user_pk"), draft.c.claim_pk == claim.c.id)
            .limit(1).scalar_subquery().label("draft_at"),
        )
        .select_from(
            claim.join(case, case.c.id == claim.c.case_pk)
            .outerjoin(label, and_(label.c.claim_pk == claim.c.id, label.c.labeler_pk == bindparam("user_pk")))
            .outerjoin(hold, hold.c.id == active_hold)
        )
        .where(claim.c.id == bindparam("claim_pk"))
    )


def claim_for_labeler(session: Session, user: User, claim_pk: int) -> ClaimView:
    """The claim as `user` sees it when labeling: case, claim, passages and their own label only.

    Two statements (the claim with the user's standing, then its passages) and its dataset's name, one more only when
    their label is to review (what changed, from the audit trail).
    Raises NotFoundError for an unknown claim and PermissionDeniedError when the claim's case
    is not assigned to `user` (a deep link to someone else's claim shows nothing).
    """
    need_caller(user)
    row = session.execute(_claim_for_labeler_statement(),
                          {"claim_pk": claim_pk, "user_pk": user.id, "hold_cutoff": hold_cutoff()}).one_or_none()
    if row is None:
        raise NotFoundError.of("msg.no_claim_key", claim_pk=claim_pk)
    if row.assignment_pk is None:
        raise PermissionDeniedError.of("msg.not_in_queue")
    has_own = row.own_pk is not None
    to_review = has_own and label_to_review(row.own_updated_at, row.updated_at, row.decided_at)
    may_lift = row.hold_pk is not None  # a hold of the viewer's own (another's hold does not show here)
    passages = claim_passages(session, claim_pk)
    return ClaimView(
        claim_pk=claim_pk, claim_id=row.claim_id, text=row.text,
        case_pk=row.case_pk, case_id=row.case_id, question=row.question, answer=row.answer,
        slice=row.slice, split=row.split, metadata=dict(row.meta or {}),
        passages=passages,
        own_label=OwnLabel(row.own_value, tuple(row.own_passage_ids or ()), row.own_rationale, row.own_severity,
                           row.own_revision) if has_own else None,
        # n_labels is used only to decide the lock, and only once the viewer has labeled.
        can_revise=not has_own or may_revise(has_own_label=True, n_labels=row.n_labels, to_review=to_review),
        # Only the viewer's own hold shows (workflow.hold_in_force): another labeler's hold, its
        # reason included, is their judgment of the case, and changes nothing here.
        on_hold=row.hold_pk is not None,
        hold_reason=row.hold_reason,
        may_lift_hold=may_lift,
        changed_since_label=_changed_since(session, claim_pk, row.own_updated_at) if to_review else (),
        content_changed_at=row.updated_at,
        draft_at=row.draft_at,
        document_versions=versions_in_dataset(session, row.dataset_id, passages),
        span_start=row.span_start, span_end=row.span_end,
        dataset=session.get(Dataset, row.dataset_id).name,
    )


def _decided_at(session: Session, claim_pk: int):  # noqa: ANN202 - datetime | None
    """When the claim's adjudication was decided, None when it has none."""
    return session.exec(select(Adjudication.decided_at).where(Adjudication.claim_pk == claim_pk)).first()


def _changed_since(session: Session, claim_pk: int, since) -> tuple[str, ...]:  # noqa: ANN001 - datetime
    """What of the claim the imports changed after `since`, from the audit trail's claim events:
    "text" and/or "passages" (a passage changed, or the claim is shown with others); both when
    the events say neither (e.g. the claim moved to another case)."""
    changed = set()
    events = session.exec(select(LabelEvent.before, LabelEvent.after).where(
        LabelEvent.claim_pk == claim_pk, LabelEvent.entity == "claim", LabelEvent.at >= since))
    for before, after in events:
        before, after = before or {}, after or {}
        if "passage_id" in after:  # a passage the claim is shown with changed
            changed.add("passages")
            continue
        if before.get("passage_ids") != after.get("passage_ids"):
            changed.add("passages")
        if "text" in after and before.get("text") != after.get("text"):
            changed.add("text")
    return tuple(part for part in ("text", "passages") if part in changed) or ("text", "passages")


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
#
# save_label is the write every labeler makes on every claim, so it runs a few Core statements
# on the tables instead of the ORM's loads and unit-of-work flush. A first label takes two on
# PostgreSQL: lock the claim and read, in that statement, what the checks need (the caller's
# account included) and the current guideline's version, which the label records; insert the
# label unless the labeler has one and, in the same statement (a WITH), its audit event. SQLite, which has no INSERT in a WITH, runs the two inserts one
# after the other. A revision reads the stored label after the lock, counts the claim's labels,
# updates and inserts the event. The draft is deleted only when there is one. Each statement is
# built once, with bind parameters: SQLAlchemy compiles it once per dialect and psycopg
# prepares it on the server after a few uses. save_label_as is the same write for a page's
# logged-in user, known by name and key: it checks the account from the lock statement's row
# instead of a get_user (an ORM query, as costly as the rest of the write) before it.
# The rules live once: _save_locked (permissions, hold, input, revision, lock on revise, draft),
# _create_label / _update_label (the label row and its one event, whose content _label_dict
# and audit.event_row make on both databases).

_claim, _label, _assignment, _hold, _draft, _user, _guideline = (
    model.__table__ for model in (Claim, Label, Assignment, Hold, Draft, User, Guideline))


def _first_pk(table, *conditions):  # noqa: ANN001, ANN202 - a Table, column expressions; a scalar subquery
    return sa_select(table.c.id).where(*conditions).limit(1).scalar_subquery()


_ACCOUNT_COLUMNS = ("id", "name", "roles", "active")
"""The columns of the caller's User row that the lock statement reads (not the password hash)."""

_LOCK_CLAIM_FOR_LABELER = (
    sa_select(
        _claim.c.case_pk,
        _claim.c.updated_at,
        _first_pk(_assignment, _assignment.c.case_pk == _claim.c.case_pk,
                  _assignment.c.labeler_pk == bindparam("user_pk")).label("assignment_pk"),
        _first_pk(_hold, _hold.c.case_pk == _claim.c.case_pk, _hold.c.created_by == bindparam("user_pk"),
                  hold_in_force_sql(_hold, _HOLD_CUTOFF)).label("hold_pk"),
        _first_pk(_draft, _draft.c.labeler_pk == bindparam("user_pk"), _draft.c.claim_pk == _claim.c.id).label("draft_pk"),
        *(_user.c[name].label(f"user_{name}") for name in _ACCOUNT_COLUMNS),
        # the current guideline (guidelines.current_guideline: the last published; a primary-key index scan)
        sa_select(_guideline.c.version).order_by(_guideline.c.id.desc()).limit(1).scalar_subquery().label("guideline"),
    )
    .select_from(_claim.outerjoin(_user, _user.c.id == bindparam("user_pk")))
    .where(_claim.c.id == bindparam("claim_pk"))
    .with_for_update(key_share=True, of=_claim)
)
"""The claim's row locked as lock_claim locks it, with its case, the caller's assignment to the
case, the caller's own hold in force on the case (workflow.hold_in_force) and the caller's draft of the claim (each a key or None; each
one lookup in a unique or foreign-key index), when the claim's content last changed, the caller's account (the user row's
_ACCOUNT_COLUMNS, all None when there is no such user; a primary-key lookup), and the version of the
current guideline (None when none is published): the version a label saved now records."""

_LABEL_COLUMNS = ("id", "value", "passage_ids", "rationale", "severity", "guideline_version", "source", "revision",
                  "created_at", "updated_at")
"""The columns of a label that save_label reads (it knows claim_pk and labeler_pk)."""

_OWN_LABEL = sa_select(*(_label.c[name] for name in _LABEL_COLUMNS)).where(
    _label.c.claim_pk == bindparam("claim_pk"), _label.c.labeler_pk == bindparam("user_pk"))
_COUNT_LABELS = sa_select(func.count(_label.c.id)).where(_label.c.claim_pk == bindparam("claim_pk"))
_INSERT_NEW_LABEL = sqlite.insert(_label).on_conflict_do_nothing(index_elements=["claim_pk", "labeler_pk"]).returning(_label.c.id)
"""SQLite: insert a label unless the labeler has one on the claim already (no row back then)."""

_NEW_LABEL_COLUMNS = ("claim_pk", "labeler_pk", "value", "passage_ids", "rationale", "severity", "guideline_version",
                      "source", "revision", "created_at", "updated_at")
_EVENT_COLUMNS = ("at", "actor_pk", "entity", "entity_pk", "claim_pk", "action", "before", "after")


def _insert_new_label_with_event():  # noqa: ANN202 - an Insert
    """PostgreSQL: insert a label unless the labeler has one on the claim and, in the same
    statement, its audit event (entity_pk: the new label's key) when it inserted a row; the
    event's SELECT reads the insert's RETURNING, so it runs after the insert and only for the
    row it wrote. Parameters: the label's _NEW_LABEL_COLUMNS and the event's other columns
    prefixed with `event_`. Returns the label's key, or no row (nothing written) when the
    labeler has a label on the claim: one round trip and one execution fewer than two
    statements (SQLite has no INSERT in a WITH: it runs the two)."""
    event = LabelEvent.__table__
    new_label = (
        postgresql.insert(_label)
        .values({name: bindparam(name, type_=_label.c[name].type) for name in _NEW_LABEL_COLUMNS})
        .on_conflict_do_nothing(index_elements=["claim_pk", "labeler_pk"])
        .returning(_label.c.id)
        .cte("new_label")
    )
    row = sa_select(*(new_label.c.id if name == "entity_pk" else bindparam(f"event_{name}", type_=event.c[name].type)
                      for name in _EVENT_COLUMNS))
    return insert(event).from_select(list(_EVENT_COLUMNS), row).returning(event.c.entity_pk)


_INSERT_NEW_LABEL_WITH_EVENT = _insert_new_label_with_event()
_UPDATE_LABEL = update(_label).where(_label.c.id == bindparam("label_pk"))
_CLASS_MANAGERS = {model: sa_inspect(model).class_manager for model in (Label, User)}


@dataclass(frozen=True)
class LockedClaim:
    """What save_label reads with the claim's lock: the claim's case and the caller's standing."""

    claim_pk: int
    case_pk: int
    assigned: bool  # the case is assigned to the caller
    on_hold: bool  # the caller's own hold on the case is in force
    has_draft: bool  # the caller has a draft of the claim
    account: dict[str, Any] | None  # the caller's user row (_ACCOUNT_COLUMNS), None when there is none
    content_changed_at: Any = None  # the claim's updated_at: its text or passages last changed then
    guideline: str | None = None  # the current guideline's version, None when none is published


@dataclass(frozen=True)
class SavedLabel:
    """What save_label_as did: the label's key (as Label.id) and revision after the call, whether
    it wrote (False: the same content was stored already), and the caller (a detached User: id,
    name, roles and active)."""

    id: int
    revision: int
    written: bool
    labeler: User


def _lock_claim_for(connection: Connection, user_pk: int, claim_pk: int) -> LockedClaim:
    """Lock the claim's row (PostgreSQL FOR NO KEY UPDATE, as lock_claim; SQLite's BEGIN
    IMMEDIATE has serialized the transaction already) and read the caller's standing with it.
    Raises NotFoundError for an unknown claim.

    The standing comes from the statement's snapshot, taken before a wait for the lock: the lock
    orders the writes about the claim's labels, not assignments, holds (put_on_hold locks the
    case), drafts or accounts, so a read after the wait would be no more ordered with those.
    """
    row = connection.execute(_LOCK_CLAIM_FOR_LABELER,
                             {"claim_pk": claim_pk, "user_pk": user_pk, "hold_cutoff": hold_cutoff()}).one_or_none()
    if row is None:
        raise NotFoundError.of("msg.no_claim_key", claim_pk=claim_pk)
    account = None if row.user_id is None else {name: row._mapping[f"user_{name}"] for name in _ACCOUNT_COLUMNS}
    return LockedClaim(claim_pk, row.case_pk, row.assignment_pk is not None, row.hold_pk is not None,
                       row.draft_pk is not None, account, row.updated_at, row.guideline)


def _own_label(connection: Connection, user: User, claim_pk: int) -> dict[str, Any] | None:
    """The caller's stored label of the claim, {column: value} for every column of Label, or
    None. Called with the claim's row locked: under READ COMMITTED this new statement sees
    every label written about the claim before the lock was ours."""
    row = connection.execute(_OWN_LABEL, {"claim_pk": claim_pk, "user_pk": user.id}).one_or_none()
    return None if row is None else {**row._asdict(), "claim_pk": claim_pk, "labeler_pk": user.id}


def _label_dict(label: Mapping[str, Any]) -> dict:
    """A label's content as its audit event holds it; `label`: a Label's columns by name."""
    return {
        "value": label["value"], "passage_ids": list(label["passage_ids"] or []), "rationale": label["rationale"],
        "severity": label["severity"], "guideline_version": label["guideline_version"], "revision": label["revision"],
    }


def _attached(session: Session, model: type, values: dict[str, Any]):  # noqa: ANN202 - an instance of model
    """The `model` row whose columns are `values` (`id` included), as a persistent object of
    `session`, without SQL: the session's own copy brought up to date when it holds one (as a
    query with populate_existing would), else a new one, whose columns not in `values` load
    when first read."""
    instance = session.identity_map.get(identity_key(model, values["id"]))
    if instance is None:  # made as a query's loading makes it: no __init__ (SQLModel's validates, 8x slower)
        configure_mappers()  # no ORM query may have run yet in this process (a no-op once done)
        instance = _CLASS_MANAGERS[model].new_instance()
        instance.__dict__.update(values)
        make_transient_to_detached(instance)  # the values are its committed state, as if loaded
        session.add(instance)
        return instance
    for name, value in values.items():
        set_committed_value(instance, name, value)
    return instance


def _detached(model: type, values: dict[str, Any]):  # noqa: ANN202 - an instance of model
    """The `model` row whose columns are `values` (`id` included) as a detached object, as if
    loaded and the session closed: no SQL, no session bookkeeping; its other columns cannot be
    read (DetachedInstanceError)."""
    configure_mappers()  # no ORM query may have run yet in this process (a no-op once done)
    instance = _CLASS_MANAGERS[model].new_instance()
    instance.__dict__.update(values)
    make_transient_to_detached(instance)
    return instance


def check_label_input(session: Session, claim_pk: int, value: str, passage_ids: list[str], severity: str | None) -> None:
    """InvalidValueError for a severity on a support label, and what `check_label_fields` refuses:
    the checks of a label to save (save_label) or correct (corrections.correct_label)."""
    if severity is not None and value == "support":
        raise InvalidValueError.of("msg.support_no_severity")
    check_label_fields(session, claim_pk, value, passage_ids, severity)


def check_label_fields(session: Session, claim_pk: int, value: str | None, passage_ids: list[str],
                       severity: str | None) -> None:
    """InvalidValueError for an unknown label (None: no label chosen yet) or severity, or a cited
    passage not shown with the claim; shared by labels and drafts."""
    if value is not None and value not in LABELS:
        raise InvalidValueError.of("msg.unknown_label", value=value, choices=", ".join(LABELS))
    if severity is not None and severity not in SEVERITIES:
        raise InvalidValueError.of("msg.unknown_severity", severity=severity, choices=", ".join(SEVERITIES))
    if not passage_ids:
        return  # nothing cited: no passage to look up
    shown = {p.passage_id for p in claim_passages(session, claim_pk)}
    unknown = [pid for pid in passage_ids if pid not in shown]
    if unknown:
        raise InvalidValueError.of("msg.passages_not_shown", passage_ids=str(unknown))


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
    seen_content_at: Any = None,
) -> Label:
    """Create or revise `user`'s label on a claim, with optimistic locking.

    guideline_version: the version of the guideline the labeler was shown, "" when the caller
        does not say. The label records the version of the CURRENT guideline (the last one
        published: guidelines.current_guideline), read by the statement that locks the claim, so
        in the same transaction and without a round trip of its own; a guideline published later
        changes no stored label. A version given that is not the current one is refused
        (StaleWriteError: a guideline was published after the page was shown; read it and save
        again), so a label never claims a version its labeler did not see. When no guideline is
        published, the version given is recorded as given ("" for none): a team that keeps its
        guideline outside the app names it here. (Recording the current version, not refusing,
        when the caller says nothing: the label page's save does not say what its side panel
        showed, and a guideline published between the page's render and the click is rare; the
        label then records the version in force when it was saved, which the panel shows after
        the save.)
    expected_revision: None when the user saw no label of theirs (a create), else the revision
        they saw. A write whose content equals the stored label is a no-op (a double click
        writes once), except when the label is to review (workflow.label_to_review: the claim
        changed after it was written): then it writes (revision + 1, an event recording the
        review), which ends the review, also after the claim's second label has landed.
    seen_content_at: the claim's `updated_at` (ClaimView.content_changed_at) when the labeler
        was shown it, None to skip the check. When the claim's text or passages changed since
        (an `import --update` meanwhile), the save is refused (StaleWriteError): a label, and
        above all a review, must be of the text the labeler read (check_content_seen).
    Returns the stored label, a persistent object of `session`.
    Raises NotFoundError (no such claim), PermissionDeniedError (not assigned / not a labeler),
    OnHoldError, InvalidValueError, StaleWriteError (the label changed since it was read:
    another tab or a double submit with other content; or `guideline_version` is not the
    current guideline's), LabelLockedError (the claim's second
    label has landed). Every write is recorded in the audit trail (one event) and removes the
    user's draft of the claim.
    Statements: a first label, 2 on PostgreSQL (lock, checks and guideline; label and event), 3 on SQLite
    (label, event apart); a revision, 5 (lock and checks, stored label, count, update, event);
    plus a DELETE when there is a draft, and a lookup of the claim's passages when some are cited.
    """
    need_caller(user)
    session.flush()  # the caller's pending changes (a hold lifted, a case assigned) count below, as before any query
    connection = session.connection()
    claim = _lock_claim_for(connection, user.id, claim_pk)  # two saves on one claim at once: the second waits here
    values, _ = _save_locked(session, connection, user, claim, value, passage_ids, rationale, severity,
                             guideline_version, expected_revision, seen_content_at)
    return _attached(session, Label, values)


def save_label_as(
    session: Session,
    name: str | None,
    user_pk: int | None,
    claim_pk: int,
    value: str,
    *,
    passage_ids: list[str] | tuple[str, ...] = (),
    rationale: str = "",
    severity: str | None = None,
    guideline_version: str = "",
    expected_revision: int | None = None,
    seen_content_at: Any = None,
) -> SavedLabel:
    """save_label for the user logged in as `name` with key `user_pk` (a page's session state;
    None when nobody is logged in), checking the account as the page's session_user does: the
    user exists with that name and key and is active; else PermissionDeniedError, nothing
    written. The account is read by the statement that locks the claim, not by an ORM query
    before it (get_user cost as much CPU as the rest of the write), so an unknown claim is
    reported (NotFoundError) before an account that is gone or disabled.

    The other arguments, the checks, the writes, the audit event and the errors are save_label's.
    Returns a SavedLabel, whose `labeler` is the caller as a detached User holding id, name,
    roles and active only (enough for next_claim_for, drafts.discard_draft and has_role).
    Statements: save_label's (a first label, 2 on PostgreSQL, 3 on SQLite).
    """
    if name is None or user_pk is None:
        raise PermissionDeniedError.of("msg.login_again")  # nobody logged in: no statement needed
    session.flush()
    connection = session.connection()
    claim = _lock_claim_for(connection, user_pk, claim_pk)
    user = None if claim.account is None else _detached(User, claim.account)
    if not still_logged_in(name, user_pk, user):
        raise PermissionDeniedError.of("msg.login_again")
    values, written = _save_locked(session, connection, user, claim, value, passage_ids, rationale, severity,
                                   guideline_version, expected_revision, seen_content_at)
    return SavedLabel(values["id"], values["revision"], written, user)


def _save_locked(session: Session, connection: Connection, user: User, claim: LockedClaim, value: str,
                 passage_ids: list[str] | tuple[str, ...], rationale: str, severity: str | None,
                 guideline_version: str, expected_revision: int | None,
                 seen_content_at: Any = None) -> tuple[dict[str, Any], bool]:
    """save_label's checks and writes once the claim is locked: (the stored label's columns by
    name, whether this call wrote)."""
    if not has_role(user, "labeler") or not claim.assigned:
        raise PermissionDeniedError.of("msg.not_in_queue")
    if claim.on_hold:
        raise OnHoldError.of("msg.on_hold")
    if seen_content_at is not None:
        check_content_seen(seen_content_at, claim.content_changed_at)
    claim_pk = claim.claim_pk
    cited = [str(pid) for pid in passage_ids]
    check_label_input(session, claim_pk, value, cited, severity)
    guideline_version = _guideline_version(claim, guideline_version)
    wanted = {"value": value, "passage_ids": cited, "rationale": check_free_text("rationale", rationale).strip(), "severity": severity}
    if expected_revision is None:
        created = _create_label(session, connection, user, claim, wanted, guideline_version)
        if created is not None:
            return created, True
    own = _own_label(connection, user, claim_pk)  # the label the create found, or the one to revise
    if own is None:
        raise StaleWriteError.of("msg.label_removed")
    current = _label_dict(own)
    to_review = _to_review(session, claim, own)
    if not to_review and all(current[key] == wanted[key] for key in wanted):
        return own, False  # same content: a repeated click writes nothing
    if expected_revision != own["revision"]:
        raise StaleWriteError.of("msg.label_changed_elsewhere")
    n_labels = connection.execute(_COUNT_LABELS, {"claim_pk": claim_pk}).scalar_one()
    if not may_revise(has_own_label=True, n_labels=n_labels, to_review=to_review):
        raise LabelLockedError.of("msg.label_locked")
    _forget_draft(session, user, claim)
    reviewed = claim.content_changed_at if to_review else None
    return _update_label(session, connection, user, own, wanted, guideline_version, reviewed), True


def check_content_seen(seen: Any, current: Any) -> None:
    """The one rule for a write about a claim's content (a label, a review, a decision): the
    claim's text and passages are still those its writer was shown. `seen` and `current` are
    the claim's `updated_at` (a datetime; naive ones are UTC, as SQLite returns them) as shown
    and as read under the claim's lock. Raises ContentChangedError (a StaleWriteError) when they differ (an
    `import --update` changed the claim meanwhile)."""
    if _utc(seen) != _utc(current):
        raise ContentChangedError.of("msg.content_changed")


def _utc(moment: Any) -> Any:
    if isinstance(moment, datetime) and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment


def _guideline_version(claim: LockedClaim, shown: str) -> str:
    """The guideline version a label saved now records (save_label's `guideline_version`): the
    current guideline's, read with the claim's lock; `shown` when none is published. Raises
    StaleWriteError when `shown` names another version than the current one."""
    if claim.guideline is None:
        return shown
    if shown and shown != claim.guideline:
        raise GuidelineChangedError.of("msg.guideline_changed", current=claim.guideline, shown=shown)
    return claim.guideline


def _to_review(session: Session, claim: LockedClaim, own: Mapping[str, Any]) -> bool:
    """Whether the caller's stored label `own` is to review (workflow.label_to_review). Looks the
    claim's adjudication up only when the claim changed after the label (rare)."""
    if claim.content_changed_at is None or own["updated_at"] >= claim.content_changed_at:
        return False
    return label_to_review(own["updated_at"], claim.content_changed_at, _decided_at(session, claim.claim_pk))


def _forget_draft(session: Session, user: User, claim: LockedClaim) -> None:
    """The saved label supersedes the user's draft of the claim (drafts.py); no statement when
    they had none."""
    if claim.has_draft:
        from annotator.services.drafts import forget_draft  # drafts imports this module

        forget_draft(session, user, claim.claim_pk)


def _create_label(session: Session, connection: Connection, user: User, claim: LockedClaim, wanted: dict,
                  guideline_version: str) -> dict[str, Any] | None:
    """Insert the user's first label on the claim with its event and return its columns; None
    (nothing written) when they have a label on it already."""
    now = utcnow()
    values = {"claim_pk": claim.claim_pk, "labeler_pk": user.id, **wanted, "guideline_version": guideline_version,
              "source": "app", "revision": 1, "created_at": now, "updated_at": now}
    event = {"actor_pk": user.id, "entity": "label", "claim_pk": claim.claim_pk, "action": "create",
             "after": _label_dict(values)}
    if connection.dialect.name == "postgresql":  # the label and its event in one statement
        row = event_row(now, **event, entity_pk=None, before=None)
        params = {**values, **{f"event_{name}": row[name] for name in _EVENT_COLUMNS if name != "entity_pk"}}
        label_pk = connection.execute(_INSERT_NEW_LABEL_WITH_EVENT, params).scalar()
    else:
        label_pk = connection.execute(_INSERT_NEW_LABEL, values).scalar()
        if label_pk is not None:
            append_event(session, **event, entity_pk=label_pk, at=now)
    if label_pk is None:
        return None
    values["id"] = label_pk
    _forget_draft(session, user, claim)
    return values


def _update_label(session: Session, connection: Connection, user: User, stored: dict, wanted: dict,
                  guideline_version: str, reviewed: Any = None) -> dict[str, Any]:
    """Revise the stored label (revision + 1) with its audit event. reviewed: when the label was
    to review, the time the claim's content changed; the event then records the review
    (`reviewed_change_at`), also when the content is the same."""
    changed = {**wanted, "guideline_version": guideline_version, "revision": stored["revision"] + 1, "updated_at": utcnow()}
    connection.execute(_UPDATE_LABEL, {"label_pk": stored["id"], **changed})
    values = {**stored, **changed}
    after = _label_dict(values)
    if reviewed is not None:
        after["reviewed_change_at"] = reviewed.isoformat()
    append_event(session, actor_pk=user.id, entity="label", entity_pk=stored["id"], claim_pk=stored["claim_pk"],
                 action="update", before=_label_dict(stored), after=after)
    return values


# --- holds -----------------------------------------------------------------------------------


def put_on_hold(session: Session, user: User, case_pk: int, reason: str, note: str = "") -> Hold:
    """Put a case on hold with one of HOLD_REASONS: the caller's own hold (workflow.hold_in_force).
    Labelers may hold cases assigned to them; admins any case. The caller's hold in force on the
    case is returned unchanged when there is one; another person's hold does not count.

    It parks the case in the caller's queue only; the case's claims are on_hold (not final, kept
    out of a release) until the hold is lifted (lift_hold by its holder, lift_holds by an admin or
    the command line) or expires (vocabulary.HOLD_EXPIRES_AFTER_DAYS).
    Raises InvalidValueError for an unknown reason, CaseFinalError when every claim of the case
    is agreed or adjudicated (nothing left to hold; never said to a caller who still has to label
    one of them, whom it would tell that the others agree), PermissionDeniedError otherwise.
    """
    need_caller(user)
    if reason not in HOLD_REASONS:
        raise InvalidValueError.of("msg.unknown_hold_reason", reason=reason, choices=", ".join(HOLD_REASONS))
    if not (has_role(user, "admin") or _is_assigned(session, user, case_pk)):
        raise PermissionDeniedError.of("msg.hold_not_assigned")
    case = session.get(Case, case_pk, with_for_update={"key_share": True})  # one hold per holder, even when held twice at once
    if case is None:
        raise NotFoundError.of("msg.no_case_key", case_pk=case_pk)
    existing = _own_hold(session, user, case_pk)
    if existing is not None:
        return existing
    _check_not_final(session, user, case)
    hold = Hold(case_pk=case_pk, reason=reason, note=check_free_text("note", note).strip(), created_by=user.id)
    session.add(hold)
    session.flush()
    record_event(session, actor_pk=user.id, entity="hold", entity_pk=hold.id, action="create",
                 after={"case_pk": case_pk, "reason": reason, "note": hold.note})
    return hold


def _check_not_final(session: Session, user: User, case: Case) -> None:
    """Raise CaseFinalError when every claim of `case` is final and `user` has labeled them all
    (workflow.FINAL_STATES; a hold itself does not count: claim states without holds)."""
    claim_pks = list(session.exec(select(Claim.id).where(Claim.case_pk == case.id)))
    labeled = set(session.exec(select(Label.claim_pk).where(Label.labeler_pk == user.id, Label.claim_pk.in_(claim_pks))))
    if not claim_pks or (_is_assigned(session, user, case.id) and labeled != set(claim_pks)):
        return
    facts = claim_facts(session, claim_pks=claim_pks)
    if all(dataclass_replace(f, on_hold=False).state in FINAL_STATES for f in facts.values()):
        raise CaseFinalError.of("msg.hold_case_final", case_id=case.case_id)


def lift_hold(session: Session, user: User, case_pk: int) -> bool:
    """Lift the caller's own hold in force on the case (the Label page). Returns whether there
    was one; another person's hold is left as it is (an admin lifts it with lift_holds)."""
    need_caller(user)
    hold = _own_hold(session, user, case_pk)
    if hold is None:
        return False
    _lift(session, user.id, hold)
    return True


def _lift(session: Session, actor_pk: int | None, hold: Hold) -> None:
    hold.lifted_at = utcnow()
    session.add(hold)
    what = {"case_pk": hold.case_pk, "reason": hold.reason}
    record_event(session, actor_pk=actor_pk, entity="hold", entity_pk=hold.id, action="update",
                 before={**what, "lifted": False}, after={**what, "lifted": True})


@dataclass(frozen=True)
class HoldRow:
    """A hold in force as the Admin page and `annotator hold list` show it."""

    hold_pk: int
    case_pk: int
    case_id: str
    dataset: str
    reason: str
    note: str
    holder: str  # the holder's name, "(command line)" when none is recorded
    placed_at: datetime
    expires_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "dataset": self.dataset, "reason": self.reason, "note": self.note,
                "holder": self.holder, "placed_at": self.placed_at.isoformat(), "expires_at": self.expires_at.isoformat()}


def _hidden_cases(session: Session, actor: Caller):  # noqa: ANN202 - a Select of case keys, or None
    """The cases holding a claim `actor` still has to label (services/blind.py), None when none."""
    still = claims_still_to_label(session, actor)
    return None if still is None else select(Claim.case_pk).where(Claim.id.in_(still))


def holds_in_force(session: Session, actor: Caller, dataset_pk: int | None = None) -> list[HoldRow]:
    """Every hold in force (workflow.hold_in_force), of one dataset or all, in case order.

    The blind rule: for an admin who still has claims to label, the holds others placed on those
    claims' cases are left out (a hold is its holder's judgment of the case). Raises
    PermissionDeniedError unless `actor` may lift holds (admins, the command line).
    """
    require(actor, Permission.LIFT_HOLDS)
    query = (select(Hold, Case.case_id, Dataset.name, User.name)
             .join(Case, Case.id == Hold.case_pk).join(Dataset, Dataset.id == Case.dataset_id)
             .outerjoin(User, User.id == Hold.created_by)
             .where(hold_in_force_sql(Hold)).order_by(Case.dataset_id, Case.position, Hold.id))
    if dataset_pk is not None:
        query = query.where(Case.dataset_id == dataset_pk)
    hidden = _hidden_cases(session, actor)
    if hidden is not None:
        query = query.where(or_(Hold.case_pk.not_in(hidden), Hold.created_by == actor.id))
    return [HoldRow(hold.id, hold.case_pk, case_id, dataset, hold.reason, hold.note, holder or "(command line)",
                    hold.created_at, hold.created_at + HOLD_LIFETIME)
            for hold, case_id, dataset, holder in session.exec(query)]


def lift_holds(session: Session, actor: Caller, case_pk: int) -> int:
    """Lift every hold in force on the case, whoever placed it (the Admin page, `annotator hold
    lift`). Returns how many were lifted (0: none was in force). Each lift is in the audit trail.
    Raises PermissionDeniedError unless `actor` may lift holds, and for an admin who still has to
    label a claim of the case (a count of others' holds on it would tell them of the others' work).
    """
    require(actor, Permission.LIFT_HOLDS)
    hidden = _hidden_cases(session, actor)
    if hidden is not None and session.exec(hidden.where(Claim.case_pk == case_pk).limit(1)).first() is not None:
        raise PermissionDeniedError.of("msg.lift_still_to_label")
    holds = session.exec(select(Hold).where(Hold.case_pk == case_pk, hold_in_force_sql(Hold)).order_by(Hold.id)).all()
    for hold in holds:
        _lift(session, actor.id, hold)
    return len(holds)
