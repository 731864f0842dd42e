"""Flat CSV case files: one row per claim and passage (docs/design.md, "File formats"), UTF-8 with or
without BOM, or CP932, grouped into cases however the rows are ordered; unknown columns are kept
as case metadata, with a warning."""

from __future__ import annotations

import csv
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from annotator.errors import ImportRowError
from annotator.formats.case_parts import RAG_SPELLINGS, rag_fields
from annotator.formats.csv_text import csv_rows, open_csv_text
from annotator.formats.reading import EXTRA_CASE_FIELDS, Row, Seen, Skips, nfc, skipping
from annotator.formats.records import CaseRecord, ClaimRecord, PassageRecord, Position, Source
from annotator.messages import msg
from annotator.vocabulary import SPLITS


CSV_CASE_COLUMNS: tuple[str, ...] = (
    "case_id", "question", "answer", "slice", "split", "claim_id", "claim",
    "passage_id", "doc_id", "passage_version", "passage_title", "passage_text",
)
CSV_CASE_REQUIRED: tuple[str, ...] = ("case_id", "claim_id", "claim", "passage_id", "passage_text")


def read_case_csv(path: Path, skips: Skips | None = None) -> Source[CaseRecord]:
    """The cases of a flat CSV file (see `read_cases`, fmt "csv")."""
    position = Position(path.stat().st_size)
    rows = csv_rows(path, CSV_CASE_COLUMNS, CSV_CASE_REQUIRED, extra=EXTRA_CASE_FIELDS, also_known=RAG_SPELLINGS,
                     position=position)
    cases = _group_csv(rows.path, rows.records, _last_lines(path, rows.encoding, "case_id"), skips)
    return Source(rows.path, "csv", rows.encoding, cases, rows.warnings, position)


def _last_lines(path: Path, encoding: str, column: str) -> dict[str, int]:
    """The starting line of the last record of each value (NFC) of `column` in a CSV file whose
    header has that column: read once, a record at a time; only the values and lines are kept."""
    last: dict[str, int] = {}
    with open_csv_text(path, encoding) as text:
        reader = csv.reader(text)
        index = [name.strip() for name in next(reader)].index(column)
        start = reader.line_num + 1
        for cells in reader:
            if index < len(cells):
                last[nfc(cells[index])] = start
            start = reader.line_num + 1
    return last


CSV_CLAIM_NAMES: dict[str, str] = {"text": "claim", "case_id": "claim_id", "passage_ids": "passage_id"}
CSV_PASSAGE_NAMES: dict[str, str] = {"text": "passage_text", "title": "passage_title", "version": "passage_version"}


@dataclass
class _CsvCase:
    """A case being assembled from CSV rows; `complete` once its last row is read."""

    row: dict[str, Any]
    line: int
    passages: dict[str, PassageRecord] = field(default_factory=dict)
    claims: dict[str, tuple[str, int, list[str]]] = field(default_factory=dict)  # id -> text, line, passage ids
    complete: bool = False
    added: tuple[list[Any], list[Any], list[Any]] = field(default_factory=lambda: ([], [], []))  # ids its rows registered


def _group_csv(path: str, rows: Iterable[Row], last_lines: dict[str, int],
               skips: Skips | None = None) -> Iterator[CaseRecord]:
    """Group flat rows (one per claim and passage) into cases, in order of first appearance; a
    case is yielded once its last row (`last_lines`: case id -> line, see `_last_lines`) is read
    and the cases that appeared before it are yielded. Memory: the cases from the oldest one not
    yet complete on (one case when each case's rows are together), and the ids seen.
    With `skips`, a refused row (or a case whose RAG fields are refused) is noted and its whole
    case is left out: its other rows are listed as skipped too, never half a case imported."""
    cases = _CsvCases(path, last_lines)
    for row in rows:
        added: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        try:
            cases.add(row, added)
        except ImportRowError as error:
            if skips is None:
                raise
            skips.add(error)
            cases.forget(added)
            dropped = cases.drop(nfc(str(row.values.get("case_id") or "")), row.line)
            if dropped is not None:
                skips.add(dropped)
        yield from skipping(cases.ready(row), cases.record, skips)
    yield from skipping(cases.rest(), cases.record, skips)


class _CsvCases:
    """The cases of a flat CSV file being assembled, in order of first appearance, with the ids
    seen (`Seen`) and the passages of the cases already given out."""

    def __init__(self, path: str, last_lines: dict[str, int]):
        self.path, self.last_lines = path, last_lines
        self.open: OrderedDict[str, _CsvCase] = OrderedDict()
        self.seen = Seen(path, "case"), Seen(path, "claim"), Seen(path, "passage")
        self.given: set[str] = set()  # passage ids of the cases given out
        self.broken: dict[str, int] = {}  # case id -> the line of its first refused row (partial imports)

    def add(self, row: Row, added: tuple[list[Any], list[Any], list[Any]]) -> None:
        """Add a row to its case. Raises ImportRowError (nothing added) for a bad value or an id
        given before with other content; the ids it registered are in `added` (see `forget`)."""
        seen_cases, seen_claims, seen_passages = self.seen
        case_id = row.ident("case_id")
        if case_id in self.broken:
            raise row.error("case_id", msg("msg.import.problem.case_has_refused_row", id=case_id, line=self.broken[case_id]),
                            msg("msg.import.fix.fix_row"))
        case_fields = _csv_case_fields(row)
        claim_id, claim_text = row.ident("claim_id"), row.text("claim", required=True)
        passage = _csv_passage(row)
        for kind, key, content, name, keys in (
            (seen_cases, case_id, case_fields, "case_id", added[0]),
            (seen_claims, claim_id, {"case_id": case_id, "claim": claim_text}, "claim_id", added[1]),
            (seen_passages, passage.passage_id, passage.content(), "passage_id", added[2]),
        ):
            if kind.first_time(key, content, row.line, name):
                keys.append(key)
        case = self.open.get(case_id)
        if case is None:
            case = self.open[case_id] = _CsvCase(case_fields, row.line)
        for keys, more in zip(case.added, added, strict=True):
            keys.extend(more)
        case.passages.setdefault(passage.passage_id, passage)
        _text, _line, shown = case.claims.setdefault(claim_id, (claim_text, row.line, []))
        if passage.passage_id not in shown:
            shown.append(passage.passage_id)

    def forget(self, added: tuple[list[Any], list[Any], list[Any]]) -> None:
        """Drop the ids a skipped row registered."""
        for kind, keys in zip(self.seen, added, strict=True):
            kind.forget(keys)

    def drop(self, case_id: str, line: int) -> ImportRowError | None:
        """Leave out the case of a row refused on `line` (a partial import): the rows read so far
        are dropped with the ids they registered, and its later rows are refused (see `add`).
        Returns the note to list for the rows dropped (at the case's first line), None if none."""
        self.broken.setdefault(case_id, line)
        case = self.open.pop(case_id, None)
        if case is None:
            return None
        self.forget(case.added)
        return ImportRowError(self.path, case.line, "case_id", msg("msg.import.problem.case_skipped", id=case_id, line=line),
                              msg("msg.import.fix.fix_row"))

    def ready(self, row: Row) -> Iterator[tuple[str, _CsvCase]]:
        """Mark the row's case complete if this is its last row (the row added or skipped), then
        take out the complete cases at the front: (case id, case), in order of first appearance."""
        case_id = nfc(row.values.get("case_id") or "")
        if self.last_lines.get(case_id) == row.line:
            del self.last_lines[case_id]
            if case_id in self.open:
                self.open[case_id].complete = True
        while self.open and next(iter(self.open.values())).complete:
            yield self.open.popitem(last=False)

    def rest(self) -> Iterator[tuple[str, _CsvCase]]:
        """The cases still open after the last row (none unless the file changed while read)."""
        while self.open:
            yield self.open.popitem(last=False)

    def record(self, item: tuple[str, _CsvCase]) -> CaseRecord:
        """The grouped case as a CaseRecord, its passages not given out by an earlier case marked
        first. Raises ImportRowError (at the case's first line) for RAG fields that are refused
        (see `rag_fields`; id lists are one cell of ids separated by ";")."""
        case_id, case = item
        claims = tuple(ClaimRecord(claim_id, text, tuple(shown), line, names=CSV_CLAIM_NAMES)
                       for claim_id, (text, line, shown) in case.claims.items())
        fields = case.row
        metadata = {key: value for key, value in fields["metadata"].items() if value}
        metadata.update(rag_fields(Row(self.path, case.line, fields["rag"]), list(case.passages), metadata, id_list="csv"))
        passages = tuple(passage if passage_id not in self.given else replace(passage, first=False)
                         for passage_id, passage in case.passages.items())
        self.given.update(case.passages)
        return CaseRecord(
            case_id=case_id, question=fields["question"], answer=fields["answer"], slice=fields["slice"],
            split=fields["split"], metadata=metadata, passages=passages, claims=claims, line=case.line,
        )


def _csv_case_fields(row: Row) -> dict[str, Any]:
    extra = {nfc(key): nfc(value) for key, value in row.values.items()
             if key and key not in CSV_CASE_COLUMNS and key not in RAG_SPELLINGS}
    rag = {key: value for key, value in row.values.items() if key in RAG_SPELLINGS and value.strip()}
    for key, value in rag.items():
        row.check_length(key, value)
    return {"question": row.text("question"), "answer": row.text("answer"),
            "slice": row.check_id_length("slice", row.text("slice")),
            "split": row.choice("split", SPLITS, required=False), "metadata": extra, "rag": rag}


def _csv_passage(row: Row) -> PassageRecord:
    return PassageRecord(
        passage_id=row.ident("passage_id"),
        doc_id=row.check_id_length("doc_id", row.text("doc_id")),
        version=row.text("passage_version"),
        title=row.text("passage_title"),
        text=row.text("passage_text", required=True),
        line=row.line,
        names=CSV_PASSAGE_NAMES,
    )
