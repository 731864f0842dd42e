"""A claim's history for admins: every audit event about the claim and its case, oldest first,
as plain rows (when, who, what, the change from before to after).

Events reach a claim in three ways (see `audit.record_event`): labels, adjudications and claim
changes carry the claim's `claim_pk`; holds and assignments are per case and carry only their
own row's key (`entity_pk` = Hold.id / Assignment.id), found here through the claim's case;
case changes carry the case's key; a release is linked through its GoldLabel row of the claim.
Only admins may read it: it names labelers, which the blind rule hides from everyone else; an
admin who also labels reads it only for claims they have labeled or do not label.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import and_, or_
from sqlmodel import Session, select

from annotator.errors import PermissionDeniedError
from annotator.models import Assignment, Case, Claim, Dataset, GoldLabel, GoldRelease, Hold, Label, LabelEvent, User
from annotator.services.lookup import find_claim
from annotator.messages import Message, Term, english, msg
from annotator.services.access import Caller, require
from annotator.services.blind import is_still_to_label
from annotator.workflow import Permission

NO_ACTOR = english("msg.history.no_actor")
"""`who` of an event written without a logged-in user (imports, the command line, the demo)."""

_WHAT: dict[tuple[str, str], str] = {  # (entity, action) -> its message key
    ("label", "create"): "msg.history.label_created",
    ("label", "update"): "msg.history.label_revised",
    ("adjudication", "create"): "msg.history.adjudication_decided",
    ("adjudication", "update"): "msg.history.adjudication_revised",
    ("hold", "create"): "msg.history.hold_placed",
    ("hold", "update"): "msg.history.hold_lifted",
    ("assignment", "create"): "msg.history.case_assigned",
    ("claim", "update"): "msg.history.claim_changed",
    ("case", "update"): "msg.history.case_changed",
    ("release", "create"): "msg.history.released",
}

_FIELDS = ("labeler", "adjudicator", "passage_id", "case_id", "claim_id", "value", "passage_ids", "rationale",
           "severity", "guideline_version", "text", "span", "question", "answer", "slice", "split", "metadata",
           "doc_id", "version", "title", "new_claim", "split_from", "merged_claim", "merged_into", "labels_to_review",
           "reason", "note", "source", "revision")
"""The stored keys shown under a name of their own (message msg.history.field.<key>), in the order
they are shown; any other key is shown as stored, after them."""
_TERMS = {"value": "value", "severity": "severity"}
"""Stored keys whose values are words of a vocabulary (messages.Term: the app writes them in the
user's language): key -> the vocabulary. A hold's `reason` is one too (_row)."""
_IDENTITY = ("labeler", "passage_id", "claim_id")
"""Keys that name what changed rather than how: shown plainly even when unchanged."""
_NOTES = ("reason", "new_claim", "split_from", "merged_claim", "merged_into", "labels_to_review")
"""Keys that say why or what else, of this change only (a correction's reason, the other claim of a
claim review): shown plainly, not as old -> new."""
_NEVER_SHOWN = frozenset({"password", "password_hash", "case_pk", "lifted", "path", "manifest_sha256", "counts",
                          "review"})
"""Keys left out of every summary: secrets (defensive: user events hold only `has_password`) and
internal keys (a claim review's `review`, which names the event: _REVIEWED)."""
_REVIEWED: dict[tuple[str, str, str], str] = {  # (entity, action, after["review"]) -> its message key
    ("claim", "update", "split"): "msg.history.claim_split",
    ("claim", "create", "split"): "msg.history.claim_split_off",
    ("claim", "update", "merge"): "msg.history.claim_merged",
    ("claim", "delete", "merge"): "msg.history.claim_merged_away",
    ("claim", "update", "edit"): "msg.history.claim_edited",
    ("case", "update", "drop"): "msg.history.claim_dropped",
}
"""The events of claim review (services/claim_review.py), each named by what the admin did."""


@dataclass(frozen=True)
class HistoryRow:
    """One audit event as an admin reads it.

    when: UTC time, ISO 8601 to the second ("2026-05-09T10:11:12+00:00"). who: the user's name,
    or NO_ACTOR. what: e.g. "label revised". change: "labeler: aoi; value: support -> contradict;
    revision: 1 -> 2" (an update shows the changed fields only; a create shows what was set).
    entity, action: the event's raw `entity` and `action`.
    who_message, what_message, change_messages: `who` (None for a user's name), `what` and the
    parts of `change` (joined by "; ") as messages (annotator/messages.py), for the app to write
    in the user's language; who, what and change are their English texts.
    """

    when: str
    who: str
    what: str
    change: str
    entity: str
    action: str
    who_message: Message | None = None
    what_message: Message | None = None
    change_messages: tuple[Message, ...] = ()


@dataclass(frozen=True)
class ClaimHistory:
    """A claim (its id, dataset, case id and current text) and its events, oldest first."""

    claim_id: str
    dataset: str
    case_id: str
    text: str
    rows: tuple[HistoryRow, ...]


def _check_admin(actor: Caller) -> None:
    require(actor, Permission.SEE_HISTORY)


def claim_datasets(session: Session, actor: Caller, claim_id: str) -> list[str]:
    """The names of the datasets holding a claim with the id `claim_id`, sorted (empty when none).
    Raises PermissionDeniedError unless `actor` is an admin."""
    _check_admin(actor)
    query = (select(Dataset.name).join(Claim, Claim.dataset_id == Dataset.id)
             .where(Claim.claim_id == claim_id.strip()).order_by(Dataset.name))
    return list(session.exec(query))


def claim_history_view(session: Session, actor: Caller, claim_id: str, dataset: str | None = None) -> ClaimHistory:
    """Every recorded event about the claim `claim_id` (in `dataset`, or in the only dataset that
    has it) and about its case, oldest first.

    Raises PermissionDeniedError unless `actor` is an admin (checked before anything is read),
    and when the admin is assigned to label the claim and has not labeled it yet (the history
    would show the other labels: the blind rule); NotFoundError for an unknown claim or dataset,
    AmbiguousIdError when the id is in several datasets and none is named.
    """
    _check_admin(actor)
    claim = find_claim(session, claim_id.strip(), dataset)
    if is_still_to_label(session, actor, claim.id):
        raise PermissionDeniedError.of("msg.history_still_to_label", claim_id=claim.claim_id)
    case = session.get(Case, claim.case_pk)
    dataset_name = session.get(Dataset, claim.dataset_id).name
    holds = select(Hold.id).where(Hold.case_pk == case.id)
    assignments = select(Assignment.id).where(Assignment.case_pk == case.id)
    releases = select(GoldLabel.release_pk).where(GoldLabel.claim_pk == claim.id)
    events = list(session.exec(select(LabelEvent).where(or_(
        # SQLite may give a removed claim's key (claim review: merge, drop) to a claim made later:
        # the events before this claim was made are another claim's
        and_(LabelEvent.claim_pk == claim.id, LabelEvent.at >= claim.created_at),
        and_(LabelEvent.entity == "case", LabelEvent.entity_pk == case.id),
        and_(LabelEvent.entity == "hold", LabelEvent.entity_pk.in_(holds)),
        and_(LabelEvent.entity == "assignment", LabelEvent.entity_pk.in_(assignments)),
        and_(LabelEvent.entity == "release", LabelEvent.entity_pk.in_(releases)),
    )).order_by(LabelEvent.id)))
    context = _Context(
        actors=_names(session, {event.actor_pk for event in events if event.actor_pk is not None}),
        labelers=dict(session.exec(select(Label.id, User.name).join(User, User.id == Label.labeler_pk)
                                   .where(Label.claim_pk == claim.id)).all()),
        holds={pk: (reason, note) for pk, reason, note in session.exec(
            select(Hold.id, Hold.reason, Hold.note).where(Hold.case_pk == case.id))},
        releases={pk: (name, gold, resolution) for pk, name, gold, resolution in session.exec(
            select(GoldRelease.id, GoldRelease.name, GoldLabel.gold_label, GoldLabel.resolution)
            .join(GoldLabel, GoldLabel.release_pk == GoldRelease.id).where(GoldLabel.claim_pk == claim.id))},
    )
    return ClaimHistory(claim.claim_id, dataset_name, case.case_id, claim.text,
                        tuple(_row(event, context) for event in events))


@dataclass(frozen=True)
class _Context:
    actors: dict[int, str]  # user pk -> name
    labelers: dict[int, str]  # label pk -> its labeler's name
    holds: dict[int, tuple[str, str]]  # hold pk -> (reason, note)
    releases: dict[int, tuple[str, str, str]]  # release pk -> (name, gold label, resolution)


def _names(session: Session, pks: set[int]) -> dict[int, str]:
    if not pks:
        return {}
    return dict(session.exec(select(User.id, User.name).where(User.id.in_(sorted(pks)))).all())


def _row(event: LabelEvent, context: _Context) -> HistoryRow:
    who_message = None
    if event.actor_pk is None:
        who_message = msg("msg.history.no_actor")
    elif event.actor_pk not in context.actors:
        who_message = msg("msg.history.user_key", key=str(event.actor_pk))
    who = str(who_message) if who_message is not None else context.actors[event.actor_pk]
    key = _WHAT.get((event.entity, event.action))
    what_message = msg(key) if key else msg("msg.history.other", entity=event.entity, action=event.action)
    terms = {**_TERMS, "reason": "hold"} if event.entity == "hold" else _TERMS
    before, after = dict(event.before or {}), dict(event.after or {})
    if event.entity == "label" and "labeler" not in after and event.entity_pk in context.labelers:
        after = {"labeler": context.labelers[event.entity_pk], **after}  # app labels: the labeler is the row's
        if before:
            before = {"labeler": after["labeler"], **before}
    if event.entity == "label" and after.get("source") == "correction" and "reason" in after:
        what_message = msg("msg.history.label_corrected")
    if event.entity == "claim" and "passage_id" in after:
        what_message = msg("msg.history.passage_changed")
    reviewed = _REVIEWED.get((event.entity, event.action, str(after.get("review"))))
    if reviewed is not None:
        what_message = msg(reviewed)
    if event.entity == "hold" and event.action == "update":
        reason, note = context.holds.get(event.entity_pk, ("?", ""))
        before, after = {}, {"reason": reason, "note": note}
    if event.entity == "release":
        name, gold, resolution = context.releases.get(event.entity_pk, (after.get("name", "?"), "?", "?"))
        parts = (msg("msg.history.release", name=name, gold=Term("value", gold), resolution=Term("state", resolution)),)
    else:
        parts = _changes(before, after, terms) if before else _settings(after, terms)
    return HistoryRow(_when(event), who, str(what_message), "; ".join(str(part) for part in parts),
                      event.entity, event.action, who_message, what_message, parts)


def _when(event: LabelEvent) -> str:
    return event.at.astimezone(UTC).isoformat(timespec="seconds")


def _ordered(keys: set[str]) -> list[str]:
    known = [key for key in _FIELDS if key in keys]
    return known + sorted(key for key in keys - set(_FIELDS) if key not in _NEVER_SHOWN)


def _name(key: str) -> Message | str:
    """The shown name of a stored key: its message (msg.history.field.<key>), else the key."""
    return msg(f"msg.history.field.{key}") if key in _FIELDS else key


def _value(key: str, value: Any, terms: dict[str, str]) -> Term | str:
    """A stored value as shown (_shown); a vocabulary word (`terms`) as a Term."""
    shown = _shown(key, value)
    return Term(terms[key], shown) if key in terms and isinstance(value, str) and not _empty(value) else shown


def _settings(after: dict[str, Any], terms: dict[str, str]) -> tuple[Message, ...]:
    """What a create set: every non-empty field, e.g. "labeler: aoi; value: support; revision: 1"."""
    return tuple(msg("msg.history.set", field=_name(key), value=_value(key, after[key], terms))
                 for key in _ordered(set(after)) if key in ("value", "revision") or not _empty(after[key]))


def _changes(before: dict[str, Any], after: dict[str, Any], terms: dict[str, str]) -> tuple[Message, ...]:
    """What an update changed, e.g. "labeler: aoi; value: support -> contradict; revision: 1 -> 2"."""
    parts = []
    for key in _ordered(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if (key in _IDENTITY and old == new) or (key in _NOTES and not _empty(new)):
            parts.append(msg("msg.history.set", field=_name(key), value=_value(key, new, terms)))
        elif old != new and not (_empty(old) and _empty(new)):
            parts.append(msg("msg.history.changed", field=_name(key), before=_value(key, old, terms),
                             after=_value(key, new, terms)))
    return tuple(parts) or (msg("msg.history.no_change"),)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


_TEXTS = frozenset({"rationale", "text", "question", "answer", "title", "note"})
"""Free-text fields, shown in double quotes so that their edges are visible."""


def _shown(key: str, value: Any) -> str:
    """A stored value for reading: "-" for none, ids joined by ", ", free texts in double quotes."""
    if _empty(value):
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if key in _TEXTS:
        return json.dumps(str(value), ensure_ascii=False)
    return str(value)
