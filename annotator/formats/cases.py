"""Case files: which format a file is (`detect_format`) and its cases read by the reader of that
format (`read_cases`: native JSONL, flat CSV or CLIMATE-FEVER)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from annotator.formats.climate_fever import read_climate_fever
from annotator.formats.flat_csv import read_case_csv
from annotator.formats.native import read_native
from annotator.formats.reading import Skips, first_nonblank_line, resolve_format
from annotator.formats.records import CaseRecord, Source


_READERS: dict[str, Callable[[Path, Skips | None], Source[CaseRecord]]] = {
    "jsonl": read_native, "csv": read_case_csv, "climate-fever": read_climate_fever,
}
"""The reader of each case format."""

CASE_FORMATS: tuple[str, ...] = tuple(_READERS)
"""Formats of case files; "auto" detects one of them."""


def detect_format(path: str | Path) -> str:
    """The case format of `path`: "csv" for a .csv file, "climate-fever" for JSON lines whose
    first record has `evidences`, else "jsonl". A file that is neither .csv nor JSON lines is
    read as CSV. Call it on a file `check_input_file` accepts."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return "csv"
    first = first_nonblank_line(path)
    if not first.lstrip().startswith(b"{"):
        return "csv" if path.suffix.lower() not in (".jsonl", ".ndjson", ".json") else "jsonl"
    try:
        record = json.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return "jsonl"  # the native reader reports the broken line
    return "climate-fever" if isinstance(record, dict) and "evidences" in record else "jsonl"


def read_cases(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None) -> Source[CaseRecord]:
    """Open a case file and stream its cases.

    fmt: "auto" (see `detect_format`), "jsonl" (native), "csv" or "climate-fever".
    skips: for a partial import: a bad line (record) is noted there and skipped, not raised.
    Returns a Source whose records are CaseRecords in file order, repeats dropped. JSON lines are
    read one line at a time (memory: the ids seen and a digest of each, see `Seen`). A CSV file
    is read twice, a block at a time (READ_BYTES): first to find its encoding and the last row of
    each case (a case's rows may be anywhere in it), then to group its rows: a case comes out once
    its last row is read, in order of first appearance (memory: the ids, and the cases from the
    oldest one not yet complete on: one case when each case's rows are together; see `_group_csv`).
    Raises ImportFileError at once (see `check_input_file`; unknown format), and ImportRowError
    while the records are read (bad JSON, missing key or empty field, id with spaces around it,
    unknown passage, same id with other content, undecodable bytes, CSV quote never closed, text
    over MAX_TEXT_CHARS, a RAG field given in both spellings or naming an unknown passage).
    A CSV header error, a quote never closed and undecodable CSV bytes are raised even with
    `skips` (they spoil the whole file).
    """
    fmt = resolve_format(path, fmt, CASE_FORMATS, detect_format)
    return _READERS[fmt](Path(path), skips)
