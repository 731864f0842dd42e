"""Readers for the input files, one module per file kind over one shared layer. Pure parsing: no
database. Every reader streams plain records (`records`) and raises `ImportRowError` naming the
file, `line N`, the field, the problem and what to do.

    reading        rows, skips, where a refusal is, the file check, repeats (`Seen`), NFC
    jsonl          JSON lines streamed a line at a time; json.loads refusing a repeated key
    csv_text       CSV encodings (UTF-8, BOM, CP932), header, rows a block at a time, quotes
    tables         label-shaped tables (labels, adjudications, judge labels) opened alike
    case_parts     what the case readers share (RAG case fields, repeats across a file)
    native, flat_csv, climate_fever, cases     case files (`read_cases`)
    ragas          RAGAS records (JSONL, CSV, Parquet) as cases or as a run; answers cut into claims
    labels, adjudications, judge_labels        the label-shaped files
    runs           a RAG system's run: one line a case (retrieved, behaviour, answer, claims)
    label_table    the (item_id, rater, label) tables `annotator agreement --labels` reads
    kinds          the registry of file kinds: formats, reader, default dataset names

Text is NFC-normalized (never NFKC: ① and ㈱ stay as written). Ids with spaces around them are
refused, not silently turned into new ids. The same id twice in one file is a harmless repeat
when its content is identical, and refused (naming both lines) when it is not.

A field or column the format does not know gives the same warning in JSONL and CSV; in a case
file it is kept as case metadata, elsewhere ignored. A path that is a folder, a device, empty or
UTF-16 is refused before anything is read; a CSV quote that is never closed is refused at the
line where it opens; a severity on a support label is refused (a supported claim has no severity).

Every name below is importable as `from annotator.formats import X`.
"""

from __future__ import annotations

import importlib

_DEFINED_IN: dict[str, tuple[str, ...]] = {
    "annotator.formats.adjudications": ("ADJUDICATION_COLUMNS", "ADJUDICATION_REQUIRED", "adjudication_key",
        "read_adjudications"),
    "annotator.formats.case_parts": ("RAG_CASE_FIELDS", "RAG_ID_LISTS", "RAG_SPELLINGS", "rag_fields",
        "unique_cases"),
    "annotator.formats.cases": ("CASE_FORMATS", "PARQUET_CASE_FORMATS", "detect_format", "read_cases"),
    "annotator.formats.climate_fever": ("CLIMATE_FEVER_CLAIM_NAMES", "CLIMATE_FEVER_PASSAGE_NAMES",
        "CLIMATE_FEVER_SLICE", "CLIMATE_FEVER_SOURCE", "CLIMATE_FEVER_SPLIT", "CLIMATE_FEVER_VOTES",
        "VOTER_PREFIX", "first_votes", "nth_vote", "read_climate_fever", "slot_votes", "voter_name"),
    "annotator.formats.csv_text": ("CSV_FIELD_LIMIT", "READ_BYTES", "UTF8_BOM_BYTES", "check_quotes_closed",
        "csv_encoding", "csv_rows", "decode_csv_bytes", "open_csv_text"),
    "annotator.formats.flat_csv": ("CSV_CASE_COLUMNS", "CSV_CASE_REQUIRED", "CSV_CLAIM_NAMES",
        "CSV_PASSAGE_NAMES", "read_case_csv"),
    "annotator.formats.judge_labels": ("JUDGE_LABEL_COLUMNS", "JUDGE_LABEL_REQUIRED", "read_judge_labels"),
    "annotator.formats.jsonl": ("DuplicateKeyError", "json_lines", "loads_unique"),
    "annotator.formats.labels": ("LABEL_COLUMNS", "LABEL_REQUIRED", "label_key", "read_labels"),
    "annotator.formats.native": ("NATIVE_CASE_KEYS", "NATIVE_CLAIM_KEYS", "NATIVE_CLAIM_NAMES",
        "NATIVE_PASSAGE_KEYS", "NATIVE_REQUIRED", "read_native"),
    "annotator.formats.ragas": ("CASE_ID_PREFIX", "CLAIM_MODES", "PASSAGE_ID_PREFIX", "RAGAS_KEYS", "RAGAS_SPELLINGS",
        "made_id", "read_ragas", "read_ragas_run"),
    "annotator.formats.reading": ("BRACES", "CP932", "EXTRA_CASE_FIELDS", "PARQUET_MAGIC", "SNIFF_BYTES", "UTF8", "UTF8_BOM",
        "UTF16_BOMS", "Row", "Seen", "Skips", "UnknownKeys", "check_input_file", "ids_or_none", "is_parquet", "nfc",
        "nfc_json", "refusal_message", "skipping", "unknown_name_warning", "where_message"),
    "annotator.formats.records": ("AdjudicationRecord", "CaseRecord", "ClaimRecord", "JudgeLabelRecord",
        "LabelRecord", "PassageRecord", "Position", "RunCaseRecord", "RunClaimRecord", "Source"),
    "annotator.formats.runs": ("RUN_CLAIM_KEYS", "RUN_FORMATS", "RUN_KEYS", "RUN_REQUIRED", "detect_run_format",
        "read_run"),
    "annotator.formats.tables": ("TABLE_FORMATS", "open_table"),
    "annotator.text": ("MAX_ID_CHARS", "MAX_NAME_CHARS", "MAX_TEXT_CHARS"),
}
"""Module -> the names of it this package exports. A name is imported from its module when it is
first used (PEP 562), so that importing one reader (or the registry of file kinds, for the command
line's help) does not import every reader."""

_HOME = {name: module for module, names in _DEFINED_IN.items() for name in names}

__all__ = [
    "ADJUDICATION_COLUMNS", "ADJUDICATION_REQUIRED", "BRACES", "CASE_FORMATS", "CASE_ID_PREFIX", "CLAIM_MODES",
    "CLIMATE_FEVER_CLAIM_NAMES",
    "CLIMATE_FEVER_PASSAGE_NAMES", "CLIMATE_FEVER_SLICE", "CLIMATE_FEVER_SOURCE", "CLIMATE_FEVER_SPLIT",
    "CLIMATE_FEVER_VOTES", "CP932", "CSV_CASE_COLUMNS", "CSV_CASE_REQUIRED", "CSV_CLAIM_NAMES", "CSV_FIELD_LIMIT",
    "CSV_PASSAGE_NAMES", "EXTRA_CASE_FIELDS", "JUDGE_LABEL_COLUMNS", "JUDGE_LABEL_REQUIRED", "LABEL_COLUMNS", "LABEL_REQUIRED", "MAX_ID_CHARS", "MAX_NAME_CHARS",
    "MAX_TEXT_CHARS", "NATIVE_CASE_KEYS", "NATIVE_CLAIM_KEYS", "NATIVE_CLAIM_NAMES", "NATIVE_PASSAGE_KEYS",
    "NATIVE_REQUIRED", "PARQUET_CASE_FORMATS", "PARQUET_MAGIC", "PASSAGE_ID_PREFIX", "RAGAS_KEYS", "RAGAS_SPELLINGS",
    "RAG_CASE_FIELDS", "RAG_ID_LISTS", "RAG_SPELLINGS", "READ_BYTES", "RUN_CLAIM_KEYS", "RUN_FORMATS",
    "RUN_KEYS", "RUN_REQUIRED", "SNIFF_BYTES",
    "TABLE_FORMATS", "UTF16_BOMS", "UTF8", "UTF8_BOM", "UTF8_BOM_BYTES", "VOTER_PREFIX",
    "AdjudicationRecord", "CaseRecord", "ClaimRecord", "DuplicateKeyError", "JudgeLabelRecord", "LabelRecord", "PassageRecord",
    "Position", "Row", "RunCaseRecord", "RunClaimRecord", "Seen", "Skips", "Source", "UnknownKeys",
    "adjudication_key", "check_input_file", "check_quotes_closed", "csv_encoding", "csv_rows", "decode_csv_bytes",
    "detect_format", "detect_run_format", "first_votes", "ids_or_none", "is_parquet", "json_lines", "label_key", "loads_unique", "made_id", "nfc", "nfc_json",
    "nth_vote", "open_csv_text", "open_table", "rag_fields", "read_adjudications", "read_case_csv", "read_cases",
    "read_climate_fever", "read_judge_labels", "read_labels", "read_native", "read_ragas", "read_ragas_run", "read_run", "refusal_message", "skipping", "slot_votes",
    "unique_cases", "unknown_name_warning", "voter_name", "where_message",
]


def __getattr__(name: str) -> object:
    """`annotator.formats.X`: X from the module that defines it (imported now, once)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
