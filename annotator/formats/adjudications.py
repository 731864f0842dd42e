"""Adjudication files (CSV or JSONL): one decision a row, claim_id, adjudicator, label and
optional rationale and severity; one adjudication per claim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotator.formats.reading import Row, Seen, Skips, resolve_format, skipping
from annotator.formats.records import AdjudicationRecord, Source
from annotator.formats.tables import TABLE_FORMATS, detect_table_format, label_severity, label_value, open_table, unique_rows


ADJUDICATION_COLUMNS: tuple[str, ...] = ("claim_id", "adjudicator", "label", "rationale", "severity")
ADJUDICATION_REQUIRED: tuple[str, ...] = ("claim_id", "adjudicator", "label")


def read_adjudications(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None,
                       unique: bool = True) -> Source[AdjudicationRecord]:
    """Open an adjudications file (CSV or JSONL) with columns claim_id, adjudicator, label and
    optional rationale and severity. Streams, skips and errors as `read_labels`; one adjudication
    per claim."""
    fmt = resolve_format(path, fmt, TABLE_FORMATS, detect_table_format)
    source = open_table(Path(path), fmt, ADJUDICATION_COLUMNS, ADJUDICATION_REQUIRED, skips)
    records = skipping(source.records, _adjudication_record, skips)
    if unique:
        records = unique_rows(records, Seen(source.path, "adjudication of claim"), adjudication_key, "claim_id", skips)
    return Source(source.path, fmt, source.encoding, records, source.warnings)


def _adjudication_record(row: Row) -> AdjudicationRecord:
    claim_id, adjudicator, label = row.ident("claim_id"), row.name("adjudicator"), label_value(row)
    return AdjudicationRecord(
        claim_id=claim_id,
        adjudicator=adjudicator,
        label=label,
        rationale=row.text("rationale"),
        severity=label_severity(row, label),
        line=row.line,
    )


def adjudication_key(record: AdjudicationRecord) -> tuple[str, dict[str, Any]]:
    """The key of an adjudication row (its claim) and the content a repeat of it must match."""
    content = {"adjudicator": record.adjudicator, "label": record.label,
               "rationale": record.rationale, "severity": record.severity}
    return record.claim_id, content
