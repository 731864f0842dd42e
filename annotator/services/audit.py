"""The append-only audit trail: every write is recorded once, here."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from annotator.models import LabelEvent, utcnow


def record_event(
    session: Session,
    *,
    actor_pk: int | None,
    entity: str,
    entity_pk: int | None,
    action: str,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    claim_pk: int | None = None,
) -> LabelEvent:
    """Append one event (who, when, what, before, after) to the audit trail.

    entity: label | adjudication | hold | assignment | user | release | claim | case.
    action: create | update | delete. before/after: plain JSON-ready dicts (None for none).
    """
    event = LabelEvent(
        at=utcnow(),
        actor_pk=actor_pk,
        entity=entity,
        entity_pk=entity_pk,
        claim_pk=claim_pk,
        action=action,
        before=before,
        after=after,
    )
    session.add(event)
    return event


def claim_history(session: Session, claim_pk: int) -> list[LabelEvent]:
    """Every event about one claim, oldest first (admins only; callers check the role)."""
    query = select(LabelEvent).where(LabelEvent.claim_pk == claim_pk).order_by(LabelEvent.id)
    return list(session.exec(query))
