"""The append-only audit trail: every write is recorded once, here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert

from sqlmodel import Session

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
    event = LabelEvent(**event_row(utcnow(), entity, entity_pk, claim_pk, action, before, after, actor_pk))
    session.add(event)
    return event


_INSERT_EVENT = insert(LabelEvent.__table__)


def append_event(
    session: Session,
    *,
    actor_pk: int | None,
    entity: str,
    entity_pk: int | None,
    action: str,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    claim_pk: int | None = None,
    at: datetime | None = None,
) -> None:
    """Append the same event as `record_event`, written at once by one INSERT instead of added
    to the session: no LabelEvent object, no unit-of-work flush at commit. For hot write paths
    (labeling.save_label) that need no object back. at: the event's time (UTC), the row's own
    time when the event records a row just written; None: now.
    """
    row = event_row(at or utcnow(), entity, entity_pk, claim_pk, action, before, after, actor_pk)
    session.connection().execute(_INSERT_EVENT, row)


def event_row(
    at: datetime,
    entity: str,
    entity_pk: int | None,
    claim_pk: int | None,
    action: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    actor_pk: int | None = None,
) -> dict[str, Any]:
    """One audit event as a plain row (the fields of LabelEvent), for `record_events`."""
    return {"at": at, "actor_pk": actor_pk, "entity": entity, "entity_pk": entity_pk, "claim_pk": claim_pk,
            "action": action, "before": before, "after": after}


def record_events(session: Session, rows: list[dict[str, Any]], batch: int = 500) -> None:
    """Append many events at once (rows from `event_row`), `batch` rows per statement: the bulk
    form of `record_event` for imports of thousands of labels."""
    for start in range(0, len(rows), batch):
        session.exec(insert(LabelEvent.__table__), params=rows[start:start + batch])

