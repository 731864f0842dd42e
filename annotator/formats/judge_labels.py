"""Judge label files (CSV or JSONL): an automatic judge's label of each claim, one row a claim,
with the columns claim_id and label and the optional confidence (a number from 0 to 1) and
rationale (docs/design.md, "File formats"). CSV is read as the other CSVs (UTF-8, with or without BOM,
or CP932, detected); a column or field the format does not know is warned about and ignored.

A judge run gives exactly one label per claim: the same claim twice is refused naming both
lines, even when the two rows are the same. The label must be exactly one of the declared
categories: `Support`, ` support ` and a blank cell are refused, not read as `support`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from annotator.formats.reading import OnePerId, Row, Skips, json_type, nfc, not_empty, resolve_format, skipping
from annotator.formats.records import JudgeLabelRecord, Source
from annotator.formats.tables import TABLE_FORMATS, detect_table_format, open_table
from annotator.messages import msg
from annotator.vocabulary import LABELS

JUDGE_LABEL_COLUMNS: tuple[str, ...] = ("claim_id", "label", "confidence", "rationale")
JUDGE_LABEL_REQUIRED: tuple[str, ...] = ("claim_id", "label")

_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
"""A number as a CSV cell writes it (0.75, .5, 1, 1e-3): no NaN, no infinity, no 1_000."""


def read_judge_labels(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None,
                      categories: Sequence[str] = LABELS) -> Source[JudgeLabelRecord]:
    """Open a judge labels file and stream its records, in file order.

    path: a CSV file with a header naming claim_id, label and optionally confidence and
        rationale, or a JSONL file with one object a line holding those keys.
    fmt: "auto" (.csv is CSV, .jsonl/.ndjson/.json is JSONL, else by the first line), "csv" or
        "jsonl".
    skips: for a partial import (`--partial`): a bad line is noted there and left out, not raised.
    categories: the labels allowed (default vocabulary.LABELS: support, contradict, insufficient);
        each label must be exactly one of them (after NFC).
    Returns a Source of JudgeLabelRecords: claim_id and rationale NFC-normalized, confidence a
        float in [0, 1] or None (an empty CSV cell, a JSON null or no such column).
    Raises ImportFileError at once for a file `check_input_file` refuses (missing, folder, empty,
    UTF-16) or an unknown format, and while the records are read for a file with no row at all
    (msg.import.file.no_judge_labels; with `skips`, only when no line was skipped either).
    Raises ImportRowError while the records are read, naming the file, line and field: a missing,
    blank, space-padded or too long claim_id (text.MAX_ID_CHARS); a label missing, blank or not
    exactly one of `categories` (the fix lists them); a confidence that is not a number (text,
    JSON true/false, a JSON string, NaN, infinity) or outside 0..1; a rationale over
    text.MAX_TEXT_CHARS; the same claim on an earlier line. A CSV header error, a quote never
    closed, undecodable CSV bytes and a CSV row with more cells than the header are raised even
    with `skips`, as for the other tables. ValueError when `categories` is empty.
    """
    allowed = tuple(nfc(category) for category in categories)
    if not allowed:
        raise ValueError("categories is empty: give the labels a judge may use")
    fmt = resolve_format(path, fmt, TABLE_FORMATS, detect_table_format)
    source = open_table(Path(path), fmt, JUDGE_LABEL_COLUMNS, JUDGE_LABEL_REQUIRED, skips)
    records = skipping(source.records, lambda row: _judge_label(row, fmt, allowed), skips)
    one_per_claim = OnePerId(source.path, "claim_id", "msg.import.problem.repeat.judge_label",
                             "msg.import.fix.repeat_judge_label")
    records = skipping(records, one_per_claim.check, skips)
    return Source(source.path, fmt, source.encoding, not_empty(source.path, records, skips, "msg.import.file.no_judge_labels"),
                  source.warnings)


def _judge_label(row: Row, fmt: str, categories: tuple[str, ...]) -> JudgeLabelRecord:
    claim_id = row.ident("claim_id")
    return JudgeLabelRecord(line=row.line, claim_id=claim_id, label=_label(row, categories),
                            confidence=_confidence(row, fmt), rationale=row.text("rationale"))


def _label(row: Row, categories: tuple[str, ...]) -> str:
    """The row's label, exactly one of `categories`. A blank cell is a missing label; any other
    spelling (case, spaces around it) is an unknown label."""
    value = row.values.get("label")
    choices = ", ".join(categories)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise row.error("label", msg("msg.import.problem.missing_value"), msg("msg.import.fix.give_label", choices=choices))
    if not isinstance(value, str) or nfc(value) not in categories:
        raise row.error("label", msg("msg.import.problem.unknown_label", value=repr(value)),
                        msg("msg.import.fix.use_one_of", choices=choices))
    return nfc(value)


def _confidence(row: Row, fmt: str) -> float | None:
    """The row's confidence in [0, 1], None when none is given (an empty or blank CSV cell, a
    JSON null, no such column). A CSV cell must be a decimal number; a JSON value a number (a
    JSON string is refused, "0.5" too: the file's writer mistook the type)."""
    value = row.values.get("confidence")
    if value is None or (fmt == "csv" and not value.strip()):
        return None
    fix = msg("msg.import.fix.confidence")
    if fmt == "csv":
        if not _DECIMAL.fullmatch(value.strip()):
            raise row.error("confidence", msg("msg.import.problem.confidence_not_number", value=repr(value)), fix)
        number = float(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        raise row.error("confidence", msg("msg.import.problem.confidence_type", type=json_type(value)), fix)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise row.error("confidence", msg("msg.import.problem.confidence_range", value=_number_text(value)), fix)
    return number + 0.0  # -0 is 0


def _number_text(value: Any) -> str:
    """A confidence as the file wrote it: a CSV cell stripped, a JSON number as Python writes it."""
    return value.strip() if isinstance(value, str) else repr(value)
