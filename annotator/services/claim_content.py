"""The one rule for changing the content of a claim that may be labeled (docs/design.md, "Changed
content"): `import --update` applies it to every claim whose text, span or passages a file
changed, and `claims edit --update` (services/claim_review.py) to the one claim an admin edits.

The claim's row takes its new content and a new `updated_at`; no label, draft or decision is
changed or deleted. Through `updated_at` a label written before is to review
(workflow.label_to_review: a claim with one such label stays `single`, one with two or more is
`stale`) and an adjudication decided before is outdated (workflow.adjudication_outdated: the
claim is `stale`), until each labeler saves again or an adjudicator decides. One audit event
(entity `claim`, action `update`) records the content before and after.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import func, update
from sqlmodel import Session, select

from annotator.models import Claim, Label
from annotator.services.audit import record_event


def change_claim_content(session: Session, claim_pk: int, values: dict[str, Any], *, before: dict[str, Any],
                         after: dict[str, Any], now: datetime, actor_pk: int | None = None) -> None:
    """Write a claim's changed content by the rule of the module docstring.

    values: the Claim columns to set (text, span_start, span_end; an import also case_pk and
        position); `updated_at` is set to `now` (timezone-aware UTC) besides.
    before, after: the claim's content before and after, as its audit event holds them
        (JSON-ready dicts; `text` and `passage_ids` are what the Label page names as changed).
    actor_pk: the user who changed it; None for the command line and imports.
    The caller has checked who may change it and what; nothing is checked here.
    """
    session.exec(update(Claim).where(Claim.id == claim_pk).values(**values, updated_at=now))
    record_event(session, actor_pk=actor_pk, entity="claim", entity_pk=claim_pk, claim_pk=claim_pk, action="update",
                 before=before, after=after)


def labels_written_before(session: Session, claim_pks: Iterable[int], now: datetime,
                          hidden: Any = None) -> int:
    """How many labels of `claim_pks` were last written before `now`: after a change of their
    claims' content at `now` (change_claim_content), each of them is to review.

    hidden: a selectable of claim keys whose labels are left out of the count (the claims the
    caller still has to label: blind.claims_still_to_label), None to count them all.
    """
    pks = sorted(set(claim_pks))
    if not pks:
        return 0
    query = select(func.count(Label.id)).where(Label.claim_pk.in_(pks), Label.updated_at < now)
    return int(session.exec(query if hidden is None else query.where(Label.claim_pk.not_in(hidden))).one())
