"""Label-shaped tables (labels, adjudications, judge labels): one record a CSV row or JSON line,
opened alike (`open_table`: unknown columns and fields warned about and ignored), the label and
severity columns checked alike, and repeats of one key dropped or refused (`unique_rows`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from annotator.formats.csv_text import csv_rows
from annotator.formats.jsonl import json_lines
from annotator.formats.reading import Row, Seen, Skips, UnknownKeys, first_nonblank_line, skipping
from annotator.formats.records import Source
from annotator.messages import msg
from annotator.vocabulary import LABELS, SEVERITIES

TABLE_FORMATS: tuple[str, ...] = ("jsonl", "csv")
"""Formats of label and adjudication files."""

T = TypeVar("T")


def detect_table_format(path: Path) -> str:
    """"csv" or "jsonl": by the suffix (.csv; .jsonl, .ndjson, .json), else by the first line."""
    if path.suffix.lower() == ".csv":
        return "csv"
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    return "jsonl" if first_nonblank_line(path).lstrip().startswith(b"{") else "csv"


def open_table(path: Path, fmt: str, columns: tuple[str, ...], required: tuple[str, ...],
               skips: Skips | None = None) -> Source[Row]:
    """A label-shaped file's rows (CSV: see `csv_rows`; JSONL: `json_lines`, with `skips`), an
    unknown column or field warned about (`Source.warnings`) and ignored."""
    if fmt == "csv":
        return csv_rows(path, columns, required)
    encoding, rows = json_lines(path, skips)
    warnings: list[str] = []
    return Source(str(path), "jsonl", encoding, _warn_unknown_keys(rows, columns, UnknownKeys(warnings)), warnings)


def _warn_unknown_keys(rows: Iterator[Row], known: tuple[str, ...], unknown: UnknownKeys) -> Iterator[Row]:
    for row in rows:
        unknown.check(row, known)
        yield row


def label_value(row: Row) -> str:
    """The row's label, one of vocabulary.LABELS. Raises ImportRowError for a missing or unknown one."""
    value = row.values.get("label")
    if value is None or value == "":
        raise row.error("label", msg("msg.import.problem.missing_value"),
                        msg("msg.import.fix.give_label", choices=", ".join(LABELS)))
    if value not in LABELS:
        raise row.error("label", msg("msg.import.problem.unknown_label", value=repr(value)),
                        msg("msg.import.fix.use_one_of", choices=", ".join(LABELS)))
    return value


def label_severity(row: Row, label: str) -> str | None:
    """The row's severity, None when empty. Raises ImportRowError for an unknown one, and for one
    given with the label support (a supported claim has no severity; a release would show it)."""
    severity = row.choice("severity", SEVERITIES, required=False) or None
    if severity is not None and label == "support":
        raise row.error("severity", msg("msg.import.problem.severity_on_support", severity=severity),
                        msg("msg.import.fix.severity_on_support"))
    return severity


def unique_rows(records: Iterable[T], seen: Seen, key: Callable[[T], tuple[Any, Any]], field_name: str,
                skips: Skips | None = None) -> Iterator[T]:
    """The records, identical repeats dropped; a repeat with other content is refused (with
    `skips`: noted and left out, the first one kept)."""
    checked = skipping(records, lambda record: (record, seen.first_time(*key(record), record.line, field_name)), skips)  # type: ignore[attr-defined]
    return (record for record, first in checked if first)
