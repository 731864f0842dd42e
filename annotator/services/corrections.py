"""Admin corrections: an admin changes a labeler's stored label on a claim, giving a reason.

A correction is for a label that is wrong as stored once its labeler can no longer revise it (a
slip of the hand the labeler reports after the second label landed, a label imported wrongly).
The label keeps its labeler; its revision goes up by one, its `updated_at` is set and its
`source` becomes "correction". One audit event (entity `label`, action `update`) records who
corrected it, the label before and after, and the reason; the claim's history shows it as
"label revised" by the admin, with `source: ... -> correction` and the reason.

Rules, checked here whatever page or command calls:
- Only admins correct (Permission.CORRECT_LABELS); the command line, as the operator, may.
- An admin who labels the claim themselves (has a label on it, or its case is assigned to them)
  may correct no label on it, as an adjudicator may not decide a claim they label: their own
  label they revise as a labeler, and changing the other labeler's label would let one side of
  the double labeling settle the claim.
- Optimistic locking: the caller names the revision they saw; a label changed since is refused
  (StaleWriteError) and nothing is written. The same content again writes nothing (no event).
- Agreement is computed on the current labels, so it counts the corrected label; the label
  before is kept in the audit trail.
- A correction after an adjudication makes the claim stale (`states.claim_facts`: a label
  changed after the decision): it is back in the adjudication queue, and a release refuses it
  until an adjudicator decides it again.
- A claim whose case is on hold may be corrected (a hold stops labeling, not fixing a stored
  label); it stays on hold.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, select

from annotator.errors import InvalidValueError, NotFoundError, PermissionDeniedError, StaleWriteError
from annotator.messages import Message, english, msg
from annotator.text import check_free_text, is_blank
from annotator.models import Dataset, Label, User, utcnow
from annotator.services import labeling
from annotator.services.access import Caller, is_operator, require
from annotator.services.audit import record_event
from annotator.services.lookup import find_claim
from annotator.services.states import claim_facts
from annotator.workflow import Permission, State

CORRECTION_SOURCE = "correction"
"""`Label.source` of a label an admin corrected (beside "app" and "import")."""

CLEAR_SEVERITY = "none"
"""`corrected_content`'s severity that removes the stored one."""


@dataclass(frozen=True)
class CorrectableLabel:
    """One labeler's stored label on a claim, as an admin sees it before correcting it."""

    labeler: str
    value: str
    passage_ids: tuple[str, ...]
    rationale: str
    severity: str | None
    revision: int
    source: str  # app | import | correction


@dataclass(frozen=True)
class CorrectionView:
    """A claim as an admin corrects its labels.

    passage_ids: the passages the claim is shown with, in order (a label may cite only these).
    state: the claim's state; None when refused.
    labels: every stored label of the claim, by labeler name; none when refused.
    refused: why the caller may not correct labels on this claim (they label it), else None.
    """

    claim_pk: int
    claim_id: str
    dataset: str
    state: State | None
    passage_ids: tuple[str, ...]
    labels: tuple[CorrectableLabel, ...]
    refused: str | None

    def label_of(self, labeler: str) -> CorrectableLabel:
        """The stored label of `labeler`. Raises NotFoundError naming those who have one."""
        for label in self.labels:
            if label.labeler == labeler:
                return label
        raise NotFoundError(_no_label(labeler, self.claim_id, [label.labeler for label in self.labels]))


@dataclass(frozen=True)
class Correction:
    """What `correct_label` did.

    changed: False when the stored label already had that content (nothing was written).
    before, after: the label before and after (equal when nothing changed).
    state_before, state_after: the claim's state around the correction; `stale` after means the
        claim had been adjudicated and must be decided again.
    """

    changed: bool
    before: CorrectableLabel
    after: CorrectableLabel
    state_before: State
    state_after: State

    @property
    def made_stale(self) -> bool:
        """Whether the claim is stale after the correction (it had been adjudicated)."""
        return self.changed and self.state_after is State.STALE


OWN_CLAIM = english("msg.correct.own_claim")


def _no_label(labeler: str, claim_id: str, labelers: list[str]) -> Message:
    who = ", ".join(sorted(labelers)) or msg("msg.correct.nobody")
    return msg("msg.correct.no_label", labeler=labeler, claim_id=claim_id, who=who)


def _labels(session: Session, claim_pk: int) -> list[tuple[Label, str]]:
    """The claim's labels with their labelers' names, by name, read afresh (after a lock wait)."""
    query = (select(Label, User.name).join(User, User.id == Label.labeler_pk)
             .where(Label.claim_pk == claim_pk).order_by(User.name))
    return list(session.exec(query.execution_options(populate_existing=True)).all())


def _shown(label: Label, name: str) -> CorrectableLabel:
    return CorrectableLabel(name, label.value, tuple(label.passage_ids or ()), label.rationale, label.severity,
                            label.revision, label.source)


def _labels_it(session: Session, actor: Caller, claim_pk: int, labels: list[tuple[Label, str]]) -> bool:
    """Whether the caller is a labeler of the claim: has a label on it or is assigned its case."""
    if is_operator(actor):
        return False
    return any(label.labeler_pk == actor.id for label, _ in labels) or labeling.is_assigned_to_claim(session, actor, claim_pk)


def _state(session: Session, claim_pk: int) -> State:
    return claim_facts(session, claim_pks=[claim_pk])[claim_pk].state


def correction_view(session: Session, actor: Caller, claim_id: str, dataset: str | None = None) -> CorrectionView:
    """The claim `claim_id` (in `dataset`, or in the only dataset that has it) with its labels,
    for an admin about to correct one; with no labels when the actor labels the claim themselves
    (`refused` says so), so that nothing of another label reaches someone still to label it.

    Raises PermissionDeniedError unless `actor` may correct labels (checked before anything is
    read), NotFoundError for an unknown claim or dataset, AmbiguousIdError when the id is in
    several datasets and none is named.
    """
    require(actor, Permission.CORRECT_LABELS)
    claim = find_claim(session, claim_id.strip(), dataset)
    labels = _labels(session, claim.id)
    refused = OWN_CLAIM if _labels_it(session, actor, claim.id, labels) else None
    return CorrectionView(
        claim_pk=claim.id, claim_id=claim.claim_id, dataset=session.get(Dataset, claim.dataset_id).name,
        # A caller who labels the claim is shown neither its state nor its labels: they may be
        # still to label it (the blind rule).
        state=None if refused else _state(session, claim.id),
        passage_ids=tuple(p.passage_id for p in labeling.claim_passages(session, claim.id)),
        labels=() if refused else tuple(_shown(label, name) for label, name in labels),
        refused=refused,
    )


def corrected_content(current: CorrectableLabel, value: str, *, passage_ids: Sequence[str] | None = None,
                      rationale: str | None = None, severity: str | None = None) -> dict:
    """The keyword arguments of `correct_label` for a correction that changes only what is given.

    None keeps the stored passage ids, rationale or severity. severity CLEAR_SEVERITY ("none")
    removes it; a kept severity is dropped when the new value is `support` (a supported claim has
    none), while one given with `support` is refused by `correct_label`.
    """
    if severity is None:
        severity = None if value == "support" else current.severity
    elif severity == CLEAR_SEVERITY:
        severity = None
    return {
        "value": value,
        "passage_ids": tuple(current.passage_ids if passage_ids is None else passage_ids),
        "rationale": current.rationale if rationale is None else rationale,
        "severity": severity,
    }


def _text(field: str, value: str) -> str:
    return unicodedata.normalize("NFC", check_free_text(field, value)).strip()


def correct_label(
    session: Session,
    actor: Caller,
    claim_pk: int,
    labeler_name: str,
    value: str,
    *,
    passage_ids: Sequence[str] = (),
    rationale: str = "",
    severity: str | None = None,
    reason: str,
    expected_revision: int,
) -> Correction:
    """Replace `labeler_name`'s stored label on a claim by the given content, as an admin, with
    a reason; the label stays theirs.

    The content is the whole new label (value, cited passage ids, rationale, severity), checked as
    a labeler's label is. reason: why, non-empty; recorded in the audit event. expected_revision:
    the revision of the label the caller saw.
    Returns a Correction (nothing written, no event, when the content is the stored one).
    Raises PermissionDeniedError (not an admin, checked before anything is read; or the admin
    labels this claim), NotFoundError (unknown claim, or the labeler has no label on it),
    InvalidValueError (unknown label or severity, a severity on `support`, a passage the claim
    is not shown with, no reason), StaleWriteError (the label changed since `expected_revision`).
    """
    require(actor, Permission.CORRECT_LABELS)
    claim = labeling.lock_claim(session, claim_pk)  # writes about one claim run one after the other
    if claim is None:
        raise NotFoundError.of("msg.no_claim_key", claim_pk=claim_pk)
    labels = _labels(session, claim_pk)
    if _labels_it(session, actor, claim_pk, labels):
        raise PermissionDeniedError.of("msg.correct.own_claim")
    found = next(((label, name) for label, name in labels if name == labeler_name), None)
    if found is None:
        raise NotFoundError(_no_label(labeler_name, claim.claim_id, [name for _, name in labels]))
    label, name = found
    cited = [str(pid) for pid in passage_ids]
    labeling.check_label_input(session, claim_pk, value, cited, severity)
    why = _text("reason", reason or "")
    if is_blank(why):
        raise InvalidValueError.of("msg.correct.reason_needed")
    wanted = {"value": value, "passage_ids": cited, "rationale": _text("rationale", rationale or ""), "severity": severity}
    before = _shown(label, name)
    state_before = _state(session, claim_pk)
    stored = {"value": label.value, "passage_ids": list(label.passage_ids or []), "rationale": label.rationale,
              "severity": label.severity}
    if stored == wanted:
        return Correction(False, before, before, state_before, state_before)  # a repeated submit writes nothing
    if expected_revision != label.revision:
        raise StaleWriteError.of("msg.correct.stale", name=name, claim_id=claim.claim_id,
                                 expected=str(expected_revision), revision=label.revision)
    old = _event_dict(label, name)
    for key, new in wanted.items():
        setattr(label, key, new)
    label.source = CORRECTION_SOURCE
    label.revision += 1
    label.updated_at = utcnow()
    session.add(label)
    session.flush()
    record_event(session, actor_pk=actor.id, entity="label", entity_pk=label.id, claim_pk=claim_pk, action="update",
                 before=old, after={**_event_dict(label, name), "reason": why})
    return Correction(True, before, _shown(label, name), state_before, _state(session, claim_pk))


def _event_dict(label: Label, name: str) -> dict:
    """A label as its audit event holds it (the labeler by name, as imports record it)."""
    return {"labeler": name, "value": label.value, "passage_ids": list(label.passage_ids or []),
            "rationale": label.rationale, "severity": label.severity, "guideline_version": label.guideline_version,
            "source": label.source, "revision": label.revision}
