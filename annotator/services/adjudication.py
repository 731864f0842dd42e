"""Adjudication: the queue of disputed claims, the anonymized view of their labels, the decision."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlmodel import Session, select

from annotator.errors import InvalidValueError, NotDisputedError, NotFoundError, PermissionDeniedError, StaleWriteError
from annotator.messages import Term, english
from annotator.text import check_free_text, is_blank
from annotator.models import Adjudication, Assignment, Case, Claim, Dataset, Label, User, utcnow
from annotator.services.access import Caller, is_operator, need_caller, require
from annotator.services.audit import record_event
from annotator.services.labeling import (
    PassageView, check_content_seen, claim_passages, is_assigned_to_claim, lock_claim, versions_in_dataset,
)
from annotator.services.states import claim_facts
from annotator.services.users import has_role
from annotator.vocabulary import LABELS, SEVERITIES
from annotator.workflow import Permission, State, may_adjudicate


@dataclass(frozen=True)
class QueueItem:
    """One claim waiting for a decision."""

    claim_pk: int
    claim_id: str
    case_id: str
    dataset_id: int
    slice: str
    split: str
    state: str  # disputed | stale
    labels: tuple[str, ...]  # the label values, sorted: no names, no order that identifies anyone

    def to_json(self) -> dict:
        return {"claim_id": self.claim_id, "case_id": self.case_id, "slice": self.slice, "split": self.split,
                "state": self.state, "labels": list(self.labels)}


@dataclass(frozen=True)
class BlindLabel:
    """A label as the adjudicator sees it: "Labeler 1" / "Labeler 2", no name, id or time.
    `number` is the N of "Labeler N" (the app writes the name in the user's language:
    message msg.labeler_n); `display_name` is the name in English."""

    display_name: str
    value: str
    passage_ids: tuple[str, ...]
    rationale: str
    severity: str | None
    number: int


@dataclass(frozen=True)
class AdjudicationView:
    """A disputed claim as its adjudicator sees it: the claim, its passages, the blind labels and the current decision (if any)."""
    claim_pk: int
    claim_id: str
    text: str
    case_id: str
    question: str
    answer: str
    slice: str
    split: str
    metadata: dict
    passages: tuple[PassageView, ...]
    labels: tuple[BlindLabel, ...]
    state: str
    decision: Adjudication | None
    content_changed_at: object = None  # the claim's updated_at: adjudicate's seen_content_at
    document_versions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # labeling.versions_in_dataset
    span_start: int | None = None  # the claim's span in the answer, as labeling.ClaimView has it
    span_end: int | None = None
    dataset: str = ""  # the name of the claim's dataset (claim ids are unique per dataset only)


def adjudication_queue(session: Session, user: Caller, dataset_pk: int | None = None) -> list[QueueItem]:
    """Disputed and stale claims waiting for a decision, in case order.

    user: the caller, a logged-in User or access.OPERATOR (the command line). Claims a user
    labeled or is assigned to label are left out (they may not adjudicate them, and must not see
    the other labels before labeling); for OPERATOR nothing is left out. Raises
    PermissionDeniedError when `user` is None or no adjudicator (the queue shows label values).
    """
    require(user, Permission.ADJUDICATE)
    facts = claim_facts(session, dataset_pk)
    waiting = [pk for pk, f in facts.items() if f.state in (State.DISPUTED, State.STALE)]
    if not waiting:
        return []
    mine: set[int] = set()
    if not is_operator(user):
        mine = set(session.exec(select(Label.claim_pk).where(Label.labeler_pk == user.id, Label.claim_pk.in_(waiting))))
        mine |= set(session.exec(
            select(Claim.id).join(Assignment, Assignment.case_pk == Claim.case_pk)
            .where(Assignment.labeler_pk == user.id, Claim.id.in_(waiting))
        ))
    rows = session.exec(
        select(Claim.id, Claim.claim_id, Case.case_id, Claim.dataset_id, Case.slice, Case.split)
        .join(Case, Case.id == Claim.case_pk)
        .where(Claim.id.in_(waiting))
        .order_by(Claim.dataset_id, Case.position, Claim.position, Claim.id)
    ).all()
    return [
        QueueItem(pk, claim_id, case_id, dataset_id, slice_, split, facts[pk].state.value, tuple(sorted(facts[pk].labels)))
        for pk, claim_id, case_id, dataset_id, slice_, split in rows
        if pk not in mine
    ]


def _stable_order(claim_pk: int, label: Label) -> str:
    """A random-looking but stable order of a claim's labels (no name or time leaks through it)."""
    return hashlib.sha256(f"{claim_pk}:{label.labeler_pk}".encode()).hexdigest()


def blind_labels(session: Session, claim_pk: int) -> tuple[BlindLabel, ...]:
    """The claim's labels as "Labeler 1", "Labeler 2", ... in a stable random order per claim."""
    labels = sorted(session.exec(select(Label).where(Label.claim_pk == claim_pk)).all(), key=lambda l: _stable_order(claim_pk, l))
    return tuple(
        BlindLabel(english("msg.labeler_n", n=i), l.value, tuple(l.passage_ids or ()), l.rationale, l.severity, i)
        for i, l in enumerate(labels, start=1)
    )


def _check_may_adjudicate(session: Session, user: User, claim_pk: int) -> State:
    facts = claim_facts(session, claim_pks=[claim_pk]).get(claim_pk)
    if facts is None:
        raise NotFoundError.of("msg.no_claim_key", claim_pk=claim_pk)
    labeled_it = session.exec(select(Label.id).where(Label.claim_pk == claim_pk, Label.labeler_pk == user.id)).first() is not None
    labeled_it = labeled_it or is_assigned_to_claim(session, user, claim_pk)
    if not has_role(user, "adjudicator"):
        raise PermissionDeniedError.of("msg.denied.adjudicate")
    if labeled_it:
        raise PermissionDeniedError.of("msg.adjudicator_labels_it")
    if not may_adjudicate(is_adjudicator=True, labeled_it=False, state=facts.state):
        raise NotDisputedError.of("msg.not_disputed", state=Term("state", facts.state.value))
    return facts.state


def view_for_adjudicator(session: Session, user: User, claim_pk: int) -> AdjudicationView:
    """A disputed (or stale) claim as its adjudicator sees it. Raises PermissionDeniedError
    (not an adjudicator, or labeled the claim), NotDisputedError, NotFoundError."""
    need_caller(user)
    state = _check_may_adjudicate(session, user, claim_pk)
    claim = session.get(Claim, claim_pk)
    case = session.get(Case, claim.case_pk)
    decision = session.exec(select(Adjudication).where(Adjudication.claim_pk == claim_pk)).first()
    passages = claim_passages(session, claim_pk)
    return AdjudicationView(
        claim_pk=claim.id, claim_id=claim.claim_id, text=claim.text, case_id=case.case_id,
        question=case.question, answer=case.answer, slice=case.slice, split=case.split,
        metadata=dict(case.meta or {}), passages=passages,
        labels=blind_labels(session, claim_pk), state=state.value, decision=decision,
        content_changed_at=claim.updated_at, document_versions=versions_in_dataset(session, claim.dataset_id, passages),
        span_start=claim.span_start, span_end=claim.span_end, dataset=session.get(Dataset, claim.dataset_id).name,
    )


def _decision_dict(decision: Adjudication, adjudicator_name: str) -> dict:
    return {"adjudicator": adjudicator_name, "value": decision.value, "rationale": decision.rationale,
            "severity": decision.severity, "revision": decision.revision}


def adjudicate(
    session: Session,
    user: User,
    claim_pk: int,
    value: str,
    *,
    rationale: str = "",
    severity: str | None = None,
    expected_revision: int | None = None,
    seen_content_at: object = None,
) -> Adjudication:
    """Decide a disputed (or re-decide a stale) claim, with optimistic locking.

    expected_revision: None when the adjudicator saw no decision, else the revision they saw.
    seen_content_at: the claim's updated_at when the adjudicator was shown it
        (AdjudicationView.content_changed_at), None to skip the check; a claim whose text or
        passages changed since is refused (StaleWriteError, labeling.check_content_seen).
    rationale: why the final label; required (the decision is kept, and released, with its
        reason: docs/domain.md, "adjudicator"); blank or whitespace only is refused.
    Raises InvalidValueError (an unknown value or severity, a text that cannot be stored, no
    rationale), PermissionDeniedError, NotDisputedError, StaleWriteError. The rationale is checked
    last: a caller who may not decide, or whose view is stale, is told that first. The labels stay
    as they are: the pre-adjudication disagreement is never overwritten.
    """
    need_caller(user)
    if value not in LABELS:
        raise InvalidValueError.of("msg.unknown_label", value=value, choices=", ".join(LABELS))
    if severity is not None and severity not in SEVERITIES:
        raise InvalidValueError.of("msg.unknown_severity", severity=severity, choices=", ".join(SEVERITIES))
    check_free_text("rationale", rationale)
    lock_claim(session, claim_pk)  # a second adjudicator deciding at once waits here, then is told it is stale
    _check_may_adjudicate(session, user, claim_pk)
    if seen_content_at is not None:
        current = session.exec(select(Claim.updated_at).where(Claim.id == claim_pk)).one()
        check_content_seen(seen_content_at, current)
    query = select(Adjudication).where(Adjudication.claim_pk == claim_pk)
    decision = session.exec(query.execution_options(populate_existing=True)).first()
    current_revision = None if decision is None else decision.revision
    if expected_revision != current_revision:
        raise StaleWriteError.of("msg.decided_meanwhile")
    if is_blank(rationale):
        raise InvalidValueError.of("msg.adjudication_rationale_needed")
    if decision is None:
        decision = Adjudication(claim_pk=claim_pk, adjudicator_pk=user.id, value=value, rationale=rationale.strip(),
                                severity=severity, revision=1, decided_at=utcnow())
        session.add(decision)
        session.flush()
        record_event(session, actor_pk=user.id, entity="adjudication", entity_pk=decision.id, claim_pk=claim_pk,
                     action="create", after=_decision_dict(decision, user.name))
        return decision
    adjudicator = session.get(User, decision.adjudicator_pk)
    before = _decision_dict(decision, adjudicator.name if adjudicator else "")
    decision.adjudicator_pk, decision.value, decision.rationale, decision.severity = user.id, value, rationale.strip(), severity
    decision.revision += 1
    decision.decided_at = utcnow()
    session.add(decision)
    record_event(session, actor_pk=user.id, entity="adjudication", entity_pk=decision.id, claim_pk=claim_pk,
                 action="update", before=before, after=_decision_dict(decision, user.name))
    return decision
