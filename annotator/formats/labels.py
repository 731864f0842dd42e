"""Label files (CSV or JSONL): one label a row, claim_id, labeler, label and optional rationale,
passage_ids and severity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotator.formats.reading import Row, Seen, Skips, json_type, nfc, resolve_format, skipping
from annotator.formats.records import LabelRecord, Source
from annotator.formats.tables import TABLE_FORMATS, detect_table_format, label_severity, label_value, open_table, unique_rows
from annotator.messages import msg


LABEL_COLUMNS: tuple[str, ...] = ("claim_id", "labeler", "label", "rationale", "passage_ids", "severity")
LABEL_REQUIRED: tuple[str, ...] = ("claim_id", "labeler", "label")


def read_labels(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None,
                unique: bool = True) -> Source[LabelRecord]:
    """Open a labels file (CSV or JSONL) with columns claim_id, labeler, label and optional
    rationale, passage_ids (CSV: separated by ";"; JSONL: a list) and severity, and stream its
    records (JSON lines: one line at a time; CSV: one record at a time, after a first reading that
    finds the encoding, see `csv_rows`).

    skips: for a partial import: a bad line is noted there and skipped, not raised (as `read_cases`).
    Raises ImportRowError for a missing column or field, an unknown label or severity (naming
    the value and the allowed ones), an id with spaces around it, and the same claim and labeler
    twice with other content. A CSV header error, a quote never closed, undecodable CSV bytes and
    a CSV row with more cells than the header are raised even with `skips`.
    unique=False: repeats are given out too, unchecked (the caller checks them with `Seen`).
    """
    fmt = resolve_format(path, fmt, TABLE_FORMATS, detect_table_format)
    source = open_table(Path(path), fmt, LABEL_COLUMNS, LABEL_REQUIRED, skips)
    records = skipping(source.records, _label_record, skips)
    if unique:
        records = unique_rows(records, Seen(source.path, "label of claim"), label_key, "labeler", skips)
    return Source(source.path, fmt, source.encoding, records, source.warnings)


def _passage_id_list(row: Row) -> tuple[str, ...]:
    value = row.values.get("passage_ids")
    if value is None or value == "":
        return ()
    if isinstance(value, str):  # CSV: "p1;p2" (spaces around the separators are formatting)
        return tuple(nfc(part.strip()) for part in value.split(";") if part.strip())
    if not isinstance(value, list):
        raise row.error("passage_ids", msg("msg.import.problem.expected_list", type=json_type(value)),
                        msg("msg.import.fix.passage_ids_list"))
    return tuple(row.check_ident(f"passage_ids[{i}]", item) for i, item in enumerate(value))


def _label_record(row: Row) -> LabelRecord:
    claim_id, labeler, label = row.ident("claim_id"), row.name("labeler"), label_value(row)
    return LabelRecord(
        claim_id=claim_id,
        labeler=labeler,
        label=label,
        rationale=row.text("rationale"),
        passage_ids=_passage_id_list(row),
        severity=label_severity(row, label),
        line=row.line,
    )


def label_key(record: LabelRecord) -> tuple[tuple[str, str], dict[str, Any]]:
    """The key of a label row (claim, labeler) and the content a repeat of it must match."""
    content = {"label": record.label, "rationale": record.rationale,
               "passage_ids": record.passage_ids, "severity": record.severity}
    return (record.claim_id, record.labeler), content
