"""Case files: which format a file is (`detect_format`) and its cases read by the reader of that
format (`read_cases`: native JSONL, flat CSV, CLIMATE-FEVER or RAGAS)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

from annotator.formats.climate_fever import read_climate_fever
from annotator.formats.flat_csv import read_case_csv
from annotator.formats.native import read_native
from annotator.formats.ragas import is_ragas_header, is_ragas_record, read_ragas
from annotator.formats.reading import Skips, first_nonblank_line, is_parquet, resolve_format
from annotator.formats.records import CaseRecord, Source


_READERS: dict[str, Callable[[Path, Skips | None], Source[CaseRecord]]] = {
    "jsonl": read_native, "csv": read_case_csv, "climate-fever": read_climate_fever, "ragas": read_ragas,
}
"""The reader of each case format."""

CASE_FORMATS: tuple[str, ...] = tuple(_READERS)
"""Formats of case files; "auto" detects one of them."""

PARQUET_CASE_FORMATS: tuple[str, ...] = ("ragas",)
"""The case formats also read from Parquet."""


def detect_format(path: str | Path) -> str:
    """The case format of `path`: "ragas" for a Parquet file, for a CSV file whose header has a
    RAGAS question and contexts column and no claim_id (`ragas.is_ragas_header`), and for JSON
    lines whose first record is a RAGAS record (`ragas.is_ragas_record`: no passages); else "csv"
    for a .csv file, "climate-fever" for JSON lines whose first record has `evidences`, else
    "jsonl". A file that is neither .csv nor JSON lines is read as CSV. A file another format
    reads never detects as RAGAS (a flat CSV needs claim_id, a native case passages). Call it on
    a file `check_input_file` accepts."""
    path = Path(path)
    if is_parquet(path):
        return "ragas"
    first = first_nonblank_line(path)
    if path.suffix.lower() == ".csv":
        return _csv_format(first)
    if not first.lstrip().startswith(b"{"):
        return _csv_format(first) if path.suffix.lower() not in (".jsonl", ".ndjson", ".json") else "jsonl"
    try:
        record = json.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return "jsonl"  # the native reader reports the broken line
    if is_ragas_record(record):
        return "ragas"
    return "climate-fever" if isinstance(record, dict) and "evidences" in record else "jsonl"


def _csv_format(header: bytes) -> str:
    """"ragas" when a CSV header line (its bytes) is a RAGAS file's, else "csv"."""
    names = next(csv.reader([header.decode("utf-8", "replace")]), [])
    return "ragas" if is_ragas_header([name.strip() for name in names]) else "csv"


def read_cases(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None,
               claims: str = "sentences") -> Source[CaseRecord]:
    """Open a case file and stream its cases.

    fmt: "auto" (see `detect_format`), "jsonl" (native), "csv", "climate-fever" or "ragas" (JSON
        lines, CSV or Parquet: see formats/ragas.py).
    skips: for a partial import: a bad line (record) is noted there and skipped, not raised.
    claims: RAGAS only: how an answer without its own claims is cut, "sentences" or "whole"
        (`ragas.read_ragas`); the other formats give their claims.
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
    fmt = resolve_format(path, fmt, CASE_FORMATS, detect_format, PARQUET_CASE_FORMATS)
    if fmt == "ragas":
        return read_ragas(Path(path), skips, claims=claims)
    return _READERS[fmt](Path(path), skips)
