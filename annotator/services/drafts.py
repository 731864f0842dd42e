"""Drafts: a labeler's unsaved input on a claim (label chosen, rationale, citations, severity),
kept while they type so that a page reload or a reconnect restores it.

A draft is private scratch, not a label:
- only its owner reads it: every function here acts on the draft of the `user` who calls it, and
  nothing else in the package reads what a draft holds (no other labeler, adjudicator, admin page,
  agreement figure, release or export); claim review (services/claim_review.py) reads only
  whether a claim has a draft with input, and refuses to change that claim, so nothing typed is
  lost;
- it is not an audit event: LabelEvent records labels and other decisions; drafts are written on
  every change of an input and are deleted without a trace when the label is saved
  (labeling.save_label calls `forget_draft` in its transaction) or the user discards them.

Two tabs of the same user share one draft per claim. A tab says which draft it last read or
wrote (`expected_updated_at`); a save that replaces a draft written elsewhere since then still
lands (the tab's input is what its user sees) but reports it (`DraftSaved.replaced_at`), so the
page can say so: nothing is overwritten silently. Labels themselves stay guarded by
save_label's `expected_revision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotator.errors import NotFoundError, PermissionDeniedError
from annotator.text import check_free_text
from annotator.models import Claim, Draft, Label, User, utcnow
from annotator.services.labeling import check_label_fields, is_assigned_to_claim
from annotator.services.access import need_caller
from annotator.services.users import has_role


@dataclass(frozen=True)
class DraftView:
    """The user's own draft of a claim, as the label page restores it."""
    value: str | None
    passage_ids: tuple[str, ...]
    rationale: str
    severity: str | None
    updated_at: datetime


@dataclass(frozen=True)
class DraftSaved:
    """The outcome of save_draft.

    updated_at: the saved draft's time; pass it back as `expected_updated_at` next time.
    replaced_at: the time of a draft written elsewhere (another tab or window) that this save
        replaced, or None when the caller replaced only what they had read or written.
    """
    updated_at: datetime
    replaced_at: datetime | None


def _check_labeler(session: Session, user: User, claim_pk: int) -> None:
    """Raises NotFoundError for an unknown claim, PermissionDeniedError unless `user` is a
    labeler the claim's case is assigned to."""
    if session.get(Claim, claim_pk) is None:
        raise NotFoundError.of("msg.no_claim_key", claim_pk=claim_pk)
    if not has_role(user, "labeler") or not is_assigned_to_claim(session, user, claim_pk):
        raise PermissionDeniedError.of("msg.not_in_queue")


def _stored(session: Session, user: User, claim_pk: int, *, lock: bool = False) -> Draft | None:
    query = select(Draft).where(Draft.labeler_pk == user.id, Draft.claim_pk == claim_pk)
    if lock:  # PostgreSQL: hold the row until commit; SQLite's BEGIN IMMEDIATE serializes already
        query = query.with_for_update().execution_options(populate_existing=True)
    return session.exec(query).first()


def _label_time(session: Session, user: User, claim_pk: int) -> datetime | None:
    query = select(Label.updated_at).where(Label.claim_pk == claim_pk, Label.labeler_pk == user.id)
    return session.exec(query).first()


def _is_current(draft: Draft, label_time: datetime | None) -> bool:
    """A draft counts only when it is newer than the user's label on the claim (a label saved
    or imported after it supersedes it)."""
    return label_time is None or draft.updated_at > label_time


def get_draft(session: Session, user: User, claim_pk: int) -> DraftView | None:
    """`user`'s own draft of a claim, or None when they have none or it is older than their
    label on the claim. Raises NotFoundError, PermissionDeniedError (not a labeler assigned to
    the claim: nobody reads anyone else's draft)."""
    need_caller(user)
    _check_labeler(session, user, claim_pk)
    draft = _stored(session, user, claim_pk)
    if draft is None or not _is_current(draft, _label_time(session, user, claim_pk)):
        return None
    return DraftView(draft.value, tuple(draft.passage_ids or ()), draft.rationale, draft.severity, draft.updated_at)


def _check_draft_input(session: Session, claim_pk: int, value: str | None, passage_ids: list[str], severity: str | None) -> None:
    check_label_fields(session, claim_pk, value, passage_ids, severity)


def save_draft(
    session: Session,
    user: User,
    claim_pk: int,
    *,
    value: str | None = None,
    rationale: str = "",
    passage_ids: list[str] | tuple[str, ...] = (),
    severity: str | None = None,
    expected_updated_at: datetime | None = None,
) -> DraftSaved:
    """Create or replace `user`'s draft of a claim (an upsert, one row per user and claim).

    value: a label chosen but not saved, or None. The rationale is kept exactly as typed. A
        draft is partial input: a severity next to `support` is kept (save_label drops it).
    expected_updated_at: the `updated_at` of the draft the caller last read or wrote, None when
        they saw none; a different current draft is replaced and reported in `replaced_at`.
    Safe when two sessions save the same draft at once, on SQLite and PostgreSQL: neither
    raises, the later write wins and reports the earlier one.
    Not an audit event (see the module docstring). Raises NotFoundError, PermissionDeniedError,
    InvalidValueError.
    """
    need_caller(user)
    _check_labeler(session, user, claim_pk)
    cited = [str(pid) for pid in passage_ids]
    _check_draft_input(session, claim_pk, value, cited, severity)
    content = {"value": value, "passage_ids": cited, "rationale": check_free_text("rationale", rationale), "severity": severity}
    draft = _stored(session, user, claim_pk, lock=True)
    if draft is None:
        now = utcnow()
        try:
            with session.begin_nested():  # a concurrent first save may insert the row first
                session.add(Draft(labeler_pk=user.id, claim_pk=claim_pk, updated_at=now, **content))
                session.flush()
            return DraftSaved(now, None)
        except IntegrityError:
            draft = _stored(session, user, claim_pk, lock=True)
            if draft is None:  # not the (user, claim) uniqueness: a real fault
                raise
    label_time = _label_time(session, user, claim_pk)
    elsewhere = draft.updated_at != expected_updated_at and _is_current(draft, label_time)
    replaced_at = draft.updated_at if elsewhere else None
    for key, item in content.items():
        setattr(draft, key, item)
    draft.updated_at = utcnow()
    session.add(draft)
    session.flush()
    return DraftSaved(draft.updated_at, replaced_at)


def discard_draft(session: Session, user: User, claim_pk: int) -> bool:
    """Delete `user`'s draft of a claim; returns whether there was one. Raises NotFoundError,
    PermissionDeniedError."""
    need_caller(user)
    _check_labeler(session, user, claim_pk)
    return forget_draft(session, user, claim_pk)


def forget_draft(session: Session, user: User, claim_pk: int) -> bool:
    """Delete `user`'s draft of a claim, without checks: for labeling.save_label, which has
    checked the user and saves the label in the same transaction. Returns whether there was one."""
    need_caller(user)
    result = session.exec(delete(Draft).where(Draft.labeler_pk == user.id, Draft.claim_pk == claim_pk))
    return bool(result.rowcount)
