"""Claim states read from the database: the stored labels, adjudications and holds of each claim
are gathered here and handed to `workflow.claim_state`, the one place the state is decided."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_
from sqlmodel import Session, select

from annotator.models import Adjudication, Claim, Hold, Label, utcnow
from annotator.workflow import HOLD_LIFETIME, State, adjudication_outdated, claim_state, label_to_review


def hold_cutoff(now: datetime | None = None) -> datetime:
    """The placing time before which a hold no longer applies (`workflow.hold_in_force`): `now`
    (default: the current time) less HOLD_LIFETIME. The parameter of `hold_in_force_sql`."""
    return (now or utcnow()) - HOLD_LIFETIME


def hold_in_force_sql(hold: Any = Hold.__table__, cutoff: Any = None):  # noqa: ANN201 - a column expression
    """SQL: the hold row (the Hold table or an alias of it) is in force, as `workflow.hold_in_force`
    decides it: not lifted, and placed after `cutoff` (a datetime from `hold_cutoff`, or a bind
    parameter; default: hold_cutoff() now)."""
    columns = hold.c if hasattr(hold, "c") else hold
    return and_(columns.lifted_at.is_(None), columns.created_at > (hold_cutoff() if cutoff is None else cutoff))


@dataclass(frozen=True)
class ClaimFacts:
    """What a claim's state is derived from."""

    claim_pk: int
    case_pk: int
    labels: tuple[str, ...]
    adjudicated: bool
    changed_after: bool
    on_hold: bool  # some hold on the case is in force (workflow.hold_in_force), whoever placed it
    to_review: tuple[int, ...] = ()  # labeler pks whose label is to review (workflow.label_to_review), sorted

    @property
    def state(self) -> State:
        return claim_state(self.labels, self.adjudicated, self.changed_after, self.on_hold, bool(self.to_review))


def claim_facts(
    session: Session, dataset_pk: int | None = None, claim_pks: Iterable[int] | None = None
) -> dict[int, ClaimFacts]:
    """The facts of every claim in scope: one dataset (`dataset_pk`), a list of claims, or all.

    Four indexed queries, whatever the number of claims. Returns claim_pk -> ClaimFacts. The
    rules (`workflow.adjudication_outdated`, `workflow.label_to_review`) are applied here to
    the stored times, never restated.
    """
    claims = select(Claim.id, Claim.case_pk, Claim.updated_at)
    if dataset_pk is not None:
        claims = claims.where(Claim.dataset_id == dataset_pk)
    wanted = None if claim_pks is None else list(claim_pks)
    if wanted is not None:
        claims = claims.where(Claim.id.in_(wanted))
    claim_rows = session.exec(claims).all()
    scope = claims.subquery()

    label_rows = session.exec(select(Label.claim_pk, Label.labeler_pk, Label.value, Label.updated_at)
                              .join(scope, scope.c.id == Label.claim_pk)).all()
    adjudicated = dict(session.exec(select(Adjudication.claim_pk, Adjudication.decided_at).join(scope, scope.c.id == Adjudication.claim_pk)).all())
    held_cases = set(session.exec(select(Hold.case_pk).where(hold_in_force_sql(Hold))).all())

    labels: dict[int, list[tuple[int, str, datetime]]] = defaultdict(list)
    for claim_pk, labeler_pk, value, updated_at in label_rows:
        labels[claim_pk].append((labeler_pk, value, updated_at))

    facts = {}
    for claim_pk, case_pk, claim_updated in claim_rows:
        decided_at = adjudicated.get(claim_pk)
        own = labels.get(claim_pk, ())
        facts[claim_pk] = ClaimFacts(
            claim_pk=claim_pk,
            case_pk=case_pk,
            labels=tuple(value for _, value, _ in own),
            adjudicated=decided_at is not None,
            changed_after=decided_at is not None and adjudication_outdated(
                decided_at, claim_updated, [written for _, _, written in own]),
            on_hold=case_pk in held_cases,
            to_review=tuple(sorted(labeler for labeler, _, written in own
                                   if label_to_review(written, claim_updated, decided_at))),
        )
    return facts


def claim_states(
    session: Session, dataset_pk: int | None = None, claim_pks: Iterable[int] | None = None
) -> dict[int, State]:
    """claim_pk -> State for the claims in scope (see `claim_facts`)."""
    return {pk: facts.state for pk, facts in claim_facts(session, dataset_pk, claim_pks).items()}


def count_by_state(states: dict[int, State]) -> dict[str, int]:
    """How many claims are in each state, every state named (zero when none)."""
    counts = {state.value: 0 for state in State}
    for state in states.values():
        counts[state.value] += 1
    return counts
