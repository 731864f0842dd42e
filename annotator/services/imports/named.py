"""What the run imports share (a judge run's labels of claims, a RAG run's cases): the rows their
records name, looked up by id in batches, optionally in one dataset, each record resolved to one
row of one dataset (`NamedIds`), a run name already taken in another letter case refused
(`refuse_taken_name`), and a file of which nothing is left to store refused (`nothing_stored`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import func
from sqlmodel import Session, select

from annotator import formats
from annotator.errors import ImportFileError, ImportRowError, InvalidValueError
from annotator.messages import msg
from annotator.services.imports.shared import batches, skipped_lines_of

R = TypeVar("R")


@dataclass(frozen=True)
class NamedIds:
    """The rows of one table a run file names by id (a judge run's claims, a RAG run's cases), and
    how a record is refused whose id names no row, rows of two datasets, or a row of another
    dataset than the file's first record.

    model: the table (models.Claim, models.Case), with columns `id`, `dataset_id` and `field_name`.
    field_name: the id column, which is also the records' id attribute, the field a refusal names
        and the id's name in its messages ("claim_id", "case_id").
    unknown, unknown_in: the problem of an id no row has, across all datasets (given the id) or in
        the named dataset (given the id and dataset=); unknown_fix: what to do about it.
    ambiguous: the problem of an id rows of two datasets have (given the id).
    two_datasets: the problem of a record of another dataset than the first record's (given the id).
    The fix of the last two is msg.import.fix.name_dataset.
    """

    model: Any
    field_name: str
    unknown: str
    unknown_in: str
    unknown_fix: str
    ambiguous: str
    two_datasets: str

    def named(self, session: Session, ids: Sequence[str], dataset_pk: int | None) -> dict[str, list[tuple[int, int]]]:
        """id -> [(pk, dataset pk)] of the rows with that id, in the dataset `dataset_pk` or (None)
        in all: one query per BATCH distinct ids."""
        column = getattr(self.model, self.field_name)
        found: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for batch in batches(sorted(set(ids))):
            query = select(column, self.model.id, self.model.dataset_id).where(column.in_(batch))
            if dataset_pk is not None:
                query = query.where(self.model.dataset_id == dataset_pk)
            for ident, pk, row_dataset in session.exec(query):
                found[ident].append((pk, row_dataset))
        return found

    def resolved(self, session: Session, path: str, records: list[R], dataset: str | None, dataset_pk: int | None,
                 skips: formats.Skips | None) -> list[tuple[R, int, int]]:
        """(record, pk, dataset pk) of each record (any object with `line` and the id attribute),
        in file order, its id looked up (`named`) in the dataset `dataset` (its name, as given
        with --dataset, and pk) or (None, None) in all.
        Raises ImportRowError on the record's line and id field for an unknown id, an id of two
        datasets, and a record of another dataset than the first record's (with `skips`: the line
        is skipped and listed instead)."""
        found = self.named(session, [getattr(record, self.field_name) for record in records], dataset_pk)
        first_dataset: list[int] = []

        def one(record: R) -> tuple[R, int, int]:
            ident = getattr(record, self.field_name)
            line = record.line
            rows = found.get(ident, [])
            if not rows:
                problem = (msg(self.unknown_in, **{self.field_name: ident}, dataset=dataset) if dataset
                           else msg(self.unknown, **{self.field_name: ident}))
                raise ImportRowError(path, line, self.field_name, problem, msg(self.unknown_fix))
            if len(rows) > 1:
                raise ImportRowError(path, line, self.field_name, msg(self.ambiguous, **{self.field_name: ident}),
                                     msg("msg.import.fix.name_dataset"))
            pk, row_dataset = rows[0]
            if first_dataset and row_dataset != first_dataset[0]:
                raise ImportRowError(path, line, self.field_name, msg(self.two_datasets, **{self.field_name: ident}),
                                     msg("msg.import.fix.name_dataset"))
            first_dataset[:] = [row_dataset]
            return record, pk, row_dataset

        return list(formats.skipping(records, one, skips))


def nothing_stored(path: str, skips: formats.Skips | None, all_skipped: str, none_stored: str) -> ImportFileError:
    """The refusal of a run file with nothing left to store: `all_skipped` (given path=, n= lines
    skipped, and the first one's line=, field= ("-" for none) and reason=, as a refusal of it would
    say) when a partial import (`skips`) skipped every line, else `none_stored` (given path=)."""
    skipped = skipped_lines_of(skips)
    if skipped:
        first = skipped[0]
        return ImportFileError.of(all_skipped, path=str(path), n=len(skipped), line=first.line, field=first.field or "-",
                                  reason=first.reason)
    return ImportFileError.of(none_stored, path=str(path))


def refuse_taken_name(session: Session, column: Any, name: str, taken_message: str) -> None:
    """Raises InvalidValueError `taken_message` (given name= and taken=, the stored spelling) when
    a row's `column` (a run table's name) is `name` in any letter case."""
    taken = session.exec(select(column).where(func.lower(column) == name.lower())).first()
    if taken is not None:
        raise InvalidValueError.of(taken_message, name=name, taken=taken)
