"""`import_labels`, and the labels written for a case import's CLIMATE-FEVER votes
(`LabelItem`, `write_labels`): new ones in bulk, changed ones with revision + 1, each audited."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlmodel import Session, select

from annotator import formats
from annotator.db import refresh_statistics
from annotator.errors import ImportFileError, ImportRowError
from annotator.formats import LabelRecord
from annotator.messages import msg
from annotator.models import Label
from annotator.services.access import Caller, require
from annotator.services.audit import event_row, record_event, record_events
from annotator.services.imports.rows import RowImport
from annotator.services.imports.shared import (
    ImportReport, batches, bulk_insert, check_dataset_name, differences, refused_when_concurrent, skipped_lines_of,
)
from annotator.services.imports.stored import (
    LABEL_FIELDS, StoredLabel, shown_passages, stored_adjudications, stored_labels_by_claim_pk,
)
from annotator.workflow import Permission


UNCHANGED_LABEL: Any = object()


@dataclass(frozen=True)
class LabelItem:
    """A label to import. `claim` is the claim id (case imports) or the claim's pk (labels
    imports), `claim_id` the claim id as the user wrote it; `stored` is the label it replaces,
    None for a new one."""

    claim: Any
    claim_id: str
    labeler: str
    value: str
    line: int
    rationale: str = ""
    passage_ids: tuple[str, ...] = ()
    severity: str | None = None
    stored: StoredLabel | None = None

    def content(self) -> tuple[Any, ...]:
        return (self.value, self.rationale, self.passage_ids, self.severity)

    def fields(self) -> dict[str, Any]:
        """The content by the names of the file's columns."""
        return dict(zip(LABEL_FIELDS, self.content(), strict=True))

    def audit(self, revision: int) -> dict[str, Any]:
        return {"labeler": self.labeler, "value": self.value, "rationale": self.rationale,
                "passage_ids": list(self.passage_ids), "severity": self.severity, "revision": revision, "source": "import"}


def _plan_label(path: str, item: LabelItem, stored: dict[tuple[Any, str], StoredLabel],
                update: bool) -> tuple[str, LabelItem | None]:
    """The outcome ("new", "unchanged", "updated") and the label to write (None when unchanged;
    with `update`, a changed one carries its stored row). Raises ImportRowError naming the line
    for a stored label with other content without `update`."""
    found = stored.get((item.claim, item.labeler))
    if found is None:
        return "new", item
    if found.content() == item.content():
        return "unchanged", None
    if not update:
        raise stored_label_conflict(path, item.line, item.labeler, item.claim_id, found.fields(), item.fields())
    return "updated", _replace_stored(item, found)


def stored_label_conflict(path: str, line: int, labeler: str, claim_id: str, stored: dict[str, Any],
                          new: dict[str, Any]) -> ImportRowError:
    """The refusal of a label whose labeler has a stored label on the claim with other content,
    naming the first differing field and showing both values (without --update)."""
    differing, shown = differences(stored, new)
    return ImportRowError(path, line, differing[0],
                          msg("msg.import.problem.label_stored_other", labeler=labeler, claim_id=claim_id,
                              fields=", ".join(differing), shown=shown),
                          msg("msg.import.fix.update_label"))


def _replace_stored(item: LabelItem, found: StoredLabel) -> LabelItem:
    return replace(item, stored=found)


def write_labels(session: Session, items: list[LabelItem], claim_pk_of: Callable[[LabelItem], int],
                 users: dict[str, int], now: datetime) -> None:
    """Insert the new labels in bulk and update the changed ones (revision + 1); every one gets
    an audit event."""
    new = [item for item in items if item.stored is None]
    bulk_insert(session, Label, [
        {"claim_pk": claim_pk_of(item), "labeler_pk": users[item.labeler], "value": item.value,
         "passage_ids": list(item.passage_ids) or None, "rationale": item.rationale, "severity": item.severity,
         "guideline_version": "", "source": "import", "revision": 1, "created_at": now, "updated_at": now}
        for item in new
    ])
    label_pks = _label_pks(session, {claim_pk_of(item) for item in new})
    record_events(session, [
        event_row(now, "label", label_pks[claim_pk_of(item), users[item.labeler]], claim_pk_of(item), "create",
                   None, item.audit(1))
        for item in new
    ])
    for item in items:
        if item.stored is not None:
            _update_label(session, item, claim_pk_of(item), now)


def _update_label(session: Session, item: LabelItem, claim_pk: int, now: datetime) -> None:
    old = item.stored
    session.exec(update(Label).where(Label.id == old.pk).values(
        value=item.value, rationale=item.rationale, passage_ids=list(item.passage_ids) or None,
        severity=item.severity, source="import", revision=old.revision + 1, updated_at=now))
    before = {"labeler": item.labeler, "value": old.value, "rationale": old.rationale,
              "passage_ids": list(old.passage_ids), "severity": old.severity, "revision": old.revision}
    record_event(session, actor_pk=None, entity="label", entity_pk=old.pk, claim_pk=claim_pk, action="update",
                 before=before, after=item.audit(old.revision + 1))


def _label_pks(session: Session, claim_pks: Iterable[int]) -> dict[tuple[int, int], int]:
    """(claim pk, labeler pk) -> label pk for every label of the given claims."""
    found = {}
    for batch in batches(sorted(claim_pks)):
        rows = session.exec(select(Label.claim_pk, Label.labeler_pk, Label.id).where(Label.claim_pk.in_(batch)))
        found.update({(claim_pk, labeler_pk): pk for claim_pk, labeler_pk, pk in rows})
    return found


@refused_when_concurrent("labels")
def import_labels(session: Session, actor: Caller, path: str | Path, *, dataset: str | None = None, update: bool = False,
                  partial: bool = False) -> ImportReport:
    """Import labels from a CSV or JSONL file (claim_id, labeler, label[, rationale, passage_ids,
    severity]; see `formats.read_labels`).

    Claim ids are looked up in `dataset`, or across all datasets. Unknown labelers are created
    with role labeler and no password. A stored (claim, labeler) label with the same content is
    unchanged; with other content it is refused unless `update` (then revision + 1). Every
    created or changed label is recorded in the audit trail.
    partial: skip the bad lines (each is listed in the report's `skipped_lines`: file, line,
        field, reason) and import the others; without it one bad line refuses the whole file. Of
        two rows for one (claim, labeler) with other content the first good one is imported and
        the later ones listed; a skipped row does not count (`RowImport.checked`).
    Streams as `import_cases`: CHUNK_ROWS labels at a time are read, checked and written, in the
    caller's transaction (memory: the (claim, labeler) keys imported and a digest of each).
    Raises ImportFileError (missing or empty file), NotFoundError (unknown dataset),
    ImportRowError naming the line: bad row, unknown claim id, claim id in two datasets (name
    --dataset), cited passage the claim is not shown with, labeler who adjudicated the claim,
    labeler whose name differs only in case from a user's or looks like it (users.taken_name, as
    `users add`), a labeler name or id that is too long (text.MAX_NAME_CHARS, MAX_ID_CHARS) or a
    name with an invisible character,
    the same claim and labeler on an earlier row with other content, stored label with other
    content (naming the fields, stored and new values), a claim the caller is still to label
    (the blind rule).
    InvalidValueError for a blank, space-padded or too long dataset name. An existing person
    without the labeler role gets it, and the report says so.
    """
    require(actor, Permission.IMPORT)
    check_dataset_name(dataset)
    skips = formats.Skips() if partial else None
    source = formats.read_labels(path, skips=skips, unique=False)  # repeats: checked by the run (`RowImport.checked`)
    run = _LabelImport(session, actor, source.path, dataset, update, skips)
    run.stream(source)
    if run.read == 0 and not skips:
        raise ImportFileError.of("msg.import.file.no_labels", path=str(source.path))
    refresh_statistics(session)
    report = run.people.people().report(source.path, source.format, source.encoding, dataset, run.tally.as_dict(), {},
                                        source.warnings)
    return replace(report, skipped_lines=skipped_lines_of(skips))


class _LabelImport(RowImport):
    """One labels import, fed chunk by chunk (`add`)."""

    def __init__(self, session: Session, actor: Caller, path: str, dataset: str | None, update: bool,
                 skips: formats.Skips | None):
        super().__init__(session, actor, path, dataset, update, skips, "labels", "labeler", "label of claim")

    def add(self, records: list[LabelRecord]) -> None:
        self.read += len(records)
        claims = self.claims_of(record.claim_id for record in records)
        pks = claims.pks()
        shown = shown_passages(self.session, pks)
        adjudicators = {pk: name for pk, (_, name, *_rest) in stored_adjudications(self.session, pks).items()}
        stored = stored_labels_by_claim_pk(self.session, pks)

        def check(record: LabelRecord) -> tuple[str, LabelItem | None]:
            self.people.check(record.labeler, record.line, "labeler")
            item = _checked_label(self.path, record, claims.pk_of(record.claim_id, record.line), shown, adjudicators)
            planned = _plan_label(self.path, item, stored, self.update)
            self.people.add(record.labeler, record.line)
            return planned

        planned = []
        for outcome, item in self.checked(records, formats.label_key, "labeler", check):
            self.tally.add("labels", outcome)
            if item is not None:
                planned.append(item)
        users = self.people.pks(item.labeler for item in planned)
        write_labels(self.session, planned, lambda item: item.claim, users, self.now)


def _checked_label(path: str, record: LabelRecord, claim_pk: int, shown: dict[int, list[str]],
                   adjudicators: dict[int, str]) -> LabelItem:
    """The record as a label item for its claim. Raises ImportRowError for a cited passage the
    claim is not shown with, or a labeler who adjudicated the claim."""
    allowed = shown.get(claim_pk, [])
    for passage_id in record.passage_ids:
        if passage_id not in allowed:
            raise ImportRowError(path, record.line, "passage_ids",
                                 msg("msg.import.problem.passage_not_shown", claim_id=record.claim_id,
                                     passage_id=passage_id),
                                 msg("msg.import.fix.cite_shown", passages=formats.ids_or_none(allowed)))
    if adjudicators.get(claim_pk) == record.labeler:
        raise ImportRowError(path, record.line, "labeler",
                             msg("msg.import.problem.voter_adjudicated", labeler=record.labeler, claim_id=record.claim_id),
                             msg("msg.import.fix.label_to_other"))
    return LabelItem(claim_pk, record.claim_id, record.labeler, record.label, record.line, record.rationale,
                      record.passage_ids, record.severity)
