"""RAGAS records: an evaluation set in the record shape of the RAGAS library, one question a record,
as JSON lines, CSV or Parquet (docs/design.md, "File formats"). Both spellings of its fields are
read: the question (`user_input` or `question`), the system's answer (`response` or `answer`), the
contexts it retrieved (`retrieved_contexts` or `contexts`: texts in rank order) with their ids when
the file gives them (`retrieved_context_ids`), the reference answer (`reference` or
`ground_truth`) and contexts (`reference_contexts`).

As cases (`read_ragas`): the contexts become the case's passages (the id given, else `ctx-` and 16
hex digits of the SHA-256 of the text, so that one text retrieved for two questions is one
passage), the reference its `expected_answer`, and the answer is cut into claims `{case_id}-c{n}`:
its sentences (`--claims sentences`, annotator/segment.py), the whole answer (`--claims whole`), or
the record's own `claims` (a list of texts, used whenever a record has it). Each claim keeps its
span in the answer (code points); a given claim's is where its text is first found after the
previous claim's (None when it is not found). As a run (`read_ragas_run`): the contexts' order is
the ranking, the response the answer.

A record's case id is its `case_id` (or `id`), else `ragas-` and 16 hex digits of the SHA-256 of its
question and answer, the same on every import of the same texts. Its `slice` and `split` are read
when given (default `normal`, `dev`); every other field is kept in the case's metadata, with a
warning, but for the fields `release export --format ragas` writes that are no RAGAS field
(EXPORT_ONLY_KEYS: `gold_claims`, a release's gold labels): those are not imported at all, with a
warning saying why, so that a release's export imported again shows labelers no gold. In CSV a list
(and `metadata`) is JSON in its cell; in Parquet, line N is the N-th row.

Source: RAGAS, "Evaluation Sample" (SingleTurnSample: user_input, retrieved_contexts,
reference_contexts, response, reference), https://docs.ragas.io/en/stable/concepts/components/eval_sample/,
and the column names of its 0.1 releases (question, contexts, answer, ground_truth).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

from annotator.errors import ImportFileError, ImportRowError
from annotator.formats.case_parts import RAG_SPELLINGS, distinct_passages, rag_fields, unique_cases
from annotator.formats.csv_text import csv_rows
from annotator.formats.jsonl import DuplicateKeyError, json_lines, loads_unique
from annotator.formats.reading import (
    BRACES, EXTRA_CASE_FIELDS, OnePerId, Row, Skips, UnknownKeys, first_nonblank_line, is_parquet, json_type,
    nfc, nfc_json, not_empty, skipping,
)
from annotator.formats.records import CaseRecord, ClaimRecord, PassageRecord, Position, RunCaseRecord, Source
from annotator.messages import Message, english, msg
from annotator.segment import sentences
from annotator.text import is_blank
from annotator.vocabulary import CLAIM_MODES, RAGAS_EXPORT_KEYS, SPLITS  # noqa: F401 - CLAIM_MODES re-exported

RAGAS_SPELLINGS: dict[str, tuple[str, ...]] = {
    "case_id": ("case_id", "id"),
    "question": ("user_input", "question"),
    "answer": ("response", "answer"),
    "contexts": ("retrieved_contexts", "contexts"),
    "context_ids": ("retrieved_context_ids",),
    "reference": ("reference", "ground_truth"),
    "reference_contexts": ("reference_contexts",),
    "claims": ("claims",),
    "slice": ("slice",),
    "split": ("split",),
    "metadata": ("metadata",),
}
"""What a RAGAS record holds -> the names it may have in the file (the first is RAGAS's own)."""
RAGAS_KEYS: tuple[str, ...] = tuple(name for names in RAGAS_SPELLINGS.values() for name in names)
EXPORT_ONLY_KEYS: tuple[str, ...] = tuple(key for key in RAGAS_EXPORT_KEYS if key not in RAGAS_KEYS)
"""The keys `release export --format ragas` writes (vocabulary.RAGAS_EXPORT_KEYS) that are no RAGAS
field: ("gold_claims",), the release's gold labels. A record's field of these names is not imported
(neither as a field nor as metadata), and the report says so once per file and name."""
RAGAS_TEXT_LISTS: frozenset[str] = frozenset(
    {*RAGAS_SPELLINGS["contexts"], *RAGAS_SPELLINGS["context_ids"], *RAGAS_SPELLINGS["reference_contexts"], "claims"})
"""The fields that are lists of texts (in CSV: a JSON array in the cell)."""
RAGAS_SLICE, RAGAS_SPLIT = "normal", "dev"
"""A record's slice and split when it gives none."""
CASE_ID_PREFIX, PASSAGE_ID_PREFIX = "ragas-", "ctx-"
ID_HEX_DIGITS = 16
"""Hex digits of SHA-256 in a made id (64 bits: two texts share one with probability about 2**-64)."""
PARQUET = "Parquet"
"""The encoding an import reports for a Parquet file."""
PARQUET_BATCH_ROWS = 2_048
"""Rows of a Parquet file decoded at a time."""


def made_id(prefix: str, *texts: str) -> str:
    """`prefix` and the first ID_HEX_DIGITS hex digits of the SHA-256 of the texts (UTF-8, joined
    by NUL, which no text of a record holds): the same texts always give the same id."""
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()
    return prefix + digest[:ID_HEX_DIGITS]


def is_ragas_record(values: Any) -> bool:
    """Whether a JSON record (the first of a file) is a RAGAS record, not a native case or run
    record: it names RAGAS's question, answer or contexts and has no `passages` and no
    `retrieved` (which every native case and every run record needs)."""
    if not isinstance(values, dict) or "passages" in values or "retrieved" in values:
        return False
    return any(name in values for name in ("user_input", "response", "retrieved_contexts", "contexts"))


def is_ragas_header(names: list[str]) -> bool:
    """Whether a CSV header is a RAGAS file's: it names a question and a contexts column and no
    `claim_id` (which every flat CSV case file needs)."""
    return ("claim_id" not in names and any(name in names for name in RAGAS_SPELLINGS["question"])
            and any(name in names for name in RAGAS_SPELLINGS["contexts"]))


def container(path: Path) -> str:
    """How a RAGAS file is stored: "parquet" (its first bytes), "csv" (.csv, or a first line that
    is no JSON object) or "jsonl"."""
    if is_parquet(path):
        return "parquet"
    if path.suffix.lower() == ".csv":
        return "csv"
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    return "jsonl" if first_nonblank_line(path).lstrip().startswith(b"{") else "csv"


# ----------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class RagasRecord:
    """One RAGAS record, checked: what both its readings (cases, run) take from it.

    passages: its distinct contexts, in rank order (a text or id given twice: its first rank);
    case_id_made: whether the case id was made from the question and answer; claims: the texts of
    its `claims` field, None when it has none; names: the file's name of each field (the spelling used)."""

    row: Row
    case_id: str
    case_id_made: bool
    question: str
    answer: str
    passages: tuple[PassageRecord, ...]
    claims: tuple[str, ...] | None
    slice: str
    split: str
    metadata: dict[str, Any]
    names: dict[str, str]


def _rows(path: Path, skips: Skips | None, position: Position, warnings: list[str],
          extra: str) -> tuple[str, Iterator[Row]]:
    """The encoding ("Parquet" for a Parquet file) and records of a RAGAS file, each as a Row whose
    list fields are lists (CSV cells decoded), each unknown field warned about in `warnings` once,
    saying what happens to it (`extra`)."""
    kind = container(path)
    if kind == "parquet":
        return PARQUET, _warned(_parquet_rows(path, position), warnings, extra)
    if kind == "csv":
        rows = csv_rows(path, RAGAS_KEYS, (), extra=extra, also_known=_ALSO_KNOWN, position=position)
        warnings += rows.warnings
        records = _header_checked(_not_imported(rows.records, warnings, "column"), str(path))
        return rows.encoding, skipping(records, _csv_values, skips)
    encoding, rows = json_lines(path, skips, position)
    return encoding, _warned(rows, warnings, extra)


_ALSO_KNOWN = RAG_SPELLINGS | frozenset(EXPORT_ONLY_KEYS)
"""Fields that are no RAGAS_KEYS but are not unknown either: the RAG case fields, and the export's own."""


def _warned(rows: Iterator[Row], warnings: list[str], extra: str) -> Iterator[Row]:
    unknown = UnknownKeys(warnings)
    for row in _not_imported(rows, warnings, "field"):
        unknown.check(row, RAGAS_KEYS, extra, also_known=_ALSO_KNOWN)
        yield row


def _not_imported(rows: Iterator[Row], warnings: list[str], noun: str) -> Iterator[Row]:
    """The rows; the first that has a field of EXPORT_ONLY_KEYS (noun "field"; a CSV column, noun
    "column", is named at the header's line 1) adds the warning that it is not imported."""
    warned: set[str] = set()
    for row in rows:
        if len(warned) < len(EXPORT_ONLY_KEYS):
            for key in EXPORT_ONLY_KEYS:
                if key in row.values and key not in warned:
                    warned.add(key)
                    warnings.append(english(f"msg.import.warn.export_only_{noun}", path=row.path,
                                            line=1 if noun == "column" else row.line, name=key))
        yield row


def read_records(path: Path, skips: Skips | None, position: Position, warnings: list[str],
                 notes: Counter[str], extra: str = EXTRA_CASE_FIELDS) -> tuple[str, Iterator[RagasRecord]]:
    """The encoding and the checked records of a RAGAS file, in file order (see the module's
    docstring); `notes` gets, per line read, where its case id came from ("ids_given", "ids_made":
    counted by `_counted` once the record has passed every check); an unknown
    field is warned about in `warnings`, saying what happens to it (`extra`: kept as case metadata,
    or "ignored" by a run).
    Raises ImportFileError (an unreadable Parquet file) at once, and ImportRowError while the
    records are read (with `skips`: the record is noted there and left out)."""
    encoding, rows = _rows(path, skips, position, warnings, extra)

    def checked(row: Row) -> RagasRecord:
        record = _record(row)
        notes[(record.row.line, "ids_made" if record.case_id_made else "ids_given")] += 1
        return record

    return encoding, skipping(rows, checked, skips)


def _record(row: Row) -> RagasRecord:
    """One record checked (see `read_ragas` for what is refused), its claims not yet cut."""
    names: dict[str, str] = {}
    question = _required_text(row, "question", names, "msg.import.problem.no_question", "msg.import.fix.give_question")
    answer = _required_text(row, "answer", names, "msg.import.problem.no_answer", "msg.import.fix.give_answer")
    case_id_name = _spelling(row, "case_id")
    made = case_id_name is None
    case_id = made_id(CASE_ID_PREFIX, question, answer) if made else row.ident(case_id_name)
    names["case_id"] = case_id_name or "case_id"
    passages = _passages(row, names)
    metadata = _metadata(row)
    reference_name = _spelling(row, "reference")
    if reference_name is not None:
        reference = row.text(reference_name)
        if metadata.get("expected_answer", reference) != reference:
            raise row.error(reference_name, msg("msg.import.problem.rag_and_metadata", name=reference_name,
                                                snake="expected_answer"), msg("msg.import.fix.keep_one"))
        metadata["expected_answer"] = reference
    if _spelling(row, "reference_contexts") is not None:
        metadata["reference_contexts"] = _texts(row, "reference_contexts", "msg.import.fix.context_not_empty")
    metadata.update(rag_fields(row, [passage.passage_id for passage in passages], metadata))
    claims_name = _spelling(row, "claims")
    claims = None if claims_name is None else tuple(_texts(row, claims_name, "msg.import.fix.claim_not_empty"))
    if claims is not None and not claims:
        raise row.error(claims_name, msg("msg.import.problem.no_claims"), msg("msg.import.fix.give_claim_texts"))
    slice_ = row.check_id_length("slice", row.text("slice")) or RAGAS_SLICE
    split = row.choice("split", SPLITS, required=False) or RAGAS_SPLIT
    return RagasRecord(row, case_id, made, question, answer, passages, claims, slice_, split, metadata, names)


def _spelling(row: Row, field_name: str) -> str | None:
    """The name under which the record gives `field_name` (a key of RAGAS_SPELLINGS), None when it
    gives none (missing, null or ""). Raises ImportRowError when it gives two spellings."""
    given = [name for name in RAGAS_SPELLINGS[field_name] if row.values.get(name) not in (None, "")]
    if len(given) > 1:
        raise row.error(given[1], msg("msg.import.problem.both_spellings", snake=given[0], camel=given[1]),
                        msg("msg.import.fix.keep_one"))
    return given[0] if given else None


def _required_text(row: Row, field_name: str, names: dict[str, str], problem: str, fix: str) -> str:
    """The text of the question or the answer, under either spelling. Raises ImportRowError when
    the record has none, or a blank one, or another type than a string."""
    name = _spelling(row, field_name)
    first = RAGAS_SPELLINGS[field_name][0]
    if name is None or (isinstance(row.values[name], str) and is_blank(row.values[name])):
        raise row.error(name or first, msg(problem), msg(fix))
    names[field_name] = name
    return row.text(name, required=True)


def _texts(row: Row, name: str, empty_fix: str) -> list[str]:
    """The list of texts at `name`. Raises ImportRowError (field 'name' or 'name[i]') for another
    type than a list, an element that is not a string, or an empty or blank one."""
    value = row.values.get(name)
    if not isinstance(value, list):
        raise row.error(name, msg("msg.import.problem.expected_list", type=json_type(value)),
                        msg("msg.import.fix.write_list", name=name))
    texts = []
    for index, item in enumerate(value):
        place = f"{name}[{index}]"
        if not isinstance(item, str):
            raise row.error(place, msg("msg.import.problem.expected_string", type=json_type(item)),
                            msg("msg.import.fix.double_quotes"))
        if is_blank(item):
            raise row.error(place, msg("msg.import.problem.missing_value"), msg(empty_fix))
        row.check_length(place, item)
        texts.append(nfc(item))
    return texts


def _passages(row: Row, names: dict[str, str]) -> tuple[PassageRecord, ...]:
    """The record's contexts as passages, in rank order, each once: its id from
    retrieved_context_ids, else made from its text (`made_id`)."""
    name = _spelling(row, "contexts")
    if name is None:
        first = RAGAS_SPELLINGS["contexts"][0]
        raise row.error(first, msg("msg.import.problem.no_contexts"), msg("msg.import.fix.give_contexts", name=first))
    names["contexts"] = name
    texts = _texts(row, name, "msg.import.fix.context_not_empty")
    ids_name = _spelling(row, "context_ids")
    if ids_name is None:
        ids = [made_id(PASSAGE_ID_PREFIX, text) for text in texts]
    else:
        raw = row.values[ids_name]
        if not isinstance(raw, list):
            raise row.error(ids_name, msg("msg.import.problem.expected_id_list", type=json_type(raw)),
                            msg("msg.import.fix.id_list", name=ids_name))
        if len(raw) != len(texts):
            raise row.error(ids_name, msg("msg.import.problem.ids_and_contexts", ids=len(raw), contexts=len(texts), name=name),
                            msg("msg.import.fix.ids_and_contexts", name=name))
        ids = [row.check_ident(f"{ids_name}[{index}]", item) for index, item in enumerate(raw)]
    passages = [PassageRecord(passage_id, "", "", "", text, row.line, names=_passage_names(name, index))
                for index, (passage_id, text) in enumerate(zip(ids, texts, strict=True))]
    return distinct_passages(row, name, passages)


def _passage_names(contexts: str, index: int) -> dict[str, str]:
    """Every content field of a context's passage is its place in the contexts list."""
    place = f"{contexts}[{index}]"
    return {"text": place, "doc_id": place, "version": place, "title": place}


def _metadata(row: Row) -> dict[str, Any]:
    """The record's `metadata` object with every field the format does not know (as plain JSON),
    but EXPORT_ONLY_KEYS. A field also in `metadata` must agree."""
    given = row.values.get("metadata")
    if given is not None and not isinstance(given, dict):
        raise row.error("metadata", msg("msg.import.problem.expected_object_value", type=json_type(given)),
                        msg("msg.import.fix.metadata_object", braces=BRACES))
    metadata = nfc_json(_plain(given)) if given else {}
    for key, value in row.values.items():
        if key in RAGAS_KEYS or key in _ALSO_KNOWN:
            continue
        name, value = nfc(key), nfc_json(_plain(value))
        if name in metadata and metadata[name] != value:
            raise row.error(key, msg("msg.import.problem.field_and_metadata", name=name),
                            msg("msg.import.fix.keep_one_metadata"))
        metadata[name] = value
    return metadata


def _plain(value: Any) -> Any:
    """A value as JSON can hold it (a Parquet row's dates, decimals and bytes as text; NaN and
    infinities, which JSON has not, as null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str | int | bool):
        return value
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Decimal):
        return str(value)
    return str(value)


def _csv_values(row: Row) -> Row:
    """A CSV row with empty cells left out and its list fields and `metadata` decoded from the
    JSON in their cells. Raises ImportRowError naming the cell for JSON that does not read."""
    values: dict[str, Any] = {}
    for name, cell in row.values.items():
        if not name or is_blank(cell):
            continue
        if name in RAGAS_TEXT_LISTS or name == "metadata" or name in _RAG_ID_LIST_NAMES:
            try:
                values[name] = loads_unique(cell)
            except DuplicateKeyError as error:
                raise row.error(name, msg("msg.import.problem.duplicate_key", name=error.key),
                                msg("msg.import.fix.duplicate_key")) from None
            except (json.JSONDecodeError, RecursionError) as error:
                detail = getattr(error, "msg", "nested too deeply").removesuffix(" at")
                raise row.error(name, msg("msg.import.problem.cell_not_json", detail=detail),
                                msg("msg.import.fix.json_cell", example='["first text", "second text"]',
                                    braces=BRACES)) from None
        else:
            values[name] = cell
    return Row(row.path, row.line, values)


_RAG_ID_LIST_NAMES = frozenset({"required_evidence_ids", "requiredEvidenceIds", "forbidden_evidence_ids",
                                "forbiddenEvidenceIds", "outdated_passage_ids", "outdatedPassageIds"})
"""The RAG case fields that are lists of passage ids (in a RAGAS CSV: a JSON array in the cell, as every list)."""


# ----------------------------------------------------------------------------- Parquet


_TEXT, _TEXTS, _ID = "text", "texts", "id"
_COLUMN_KINDS: dict[str, str] = {
    **{name: _TEXT for role in ("question", "answer", "reference", "slice", "split")
       for name in RAGAS_SPELLINGS[role]},
    **{name: _TEXTS for name in RAGAS_TEXT_LISTS},
    **{name: _ID for name in RAGAS_SPELLINGS["case_id"]},
}
"""The Parquet type each RAGAS column must have: text, a list of texts, or an id (text or integer)."""


def _parquet_rows(path: Path, position: Position) -> Iterator[Row]:
    """The rows of a Parquet file as Rows (line = row number, from 1), PARQUET_BATCH_ROWS at a
    time. Raises ImportFileError at once for a file pyarrow cannot read, and ImportRowError (no
    line) for a schema without a question or answer column or with a RAGAS column of another type."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        raise ImportFileError.of("msg.import.file.not_parquet", path=str(path), detail=str(error).splitlines()[0]) from None
    schema = parquet.schema_arrow
    _check_schema(str(path), schema)
    index_columns = {name for name in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(name, str)}
    columns = [name for name in schema.names if name not in index_columns]
    return _parquet_batches(path, parquet, columns, position)


def _parquet_batches(path: Path, parquet: Any, columns: list[str], position: Position) -> Iterator[Row]:
    total = max(parquet.metadata.num_rows, 1)
    line = 0
    for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
        for values in batch.to_pylist():
            line += 1
            yield Row(str(path), line, values)
        position.bytes_read = position.size * line // total


def _check_columns(path: str, names: Any, line: int | None) -> None:
    """Raises ImportRowError (the file, `line`: 1 for a CSV header, None for a Parquet schema)
    unless the column `names` hold a question and an answer column (either spelling)."""
    missing = ["/".join(spellings) for spellings in (RAGAS_SPELLINGS["question"], RAGAS_SPELLINGS["answer"])
               if not any(name in names for name in spellings)]
    if missing:
        raise ImportRowError(path, line, None, msg("msg.import.problem.missing_columns", columns=", ".join(missing)),
                             msg("msg.import.fix.ragas_columns"))


def _header_checked(rows: Iterator[Row], path: str) -> Iterator[Row]:
    """The CSV rows; the first one's columns (the header's) checked by `_check_columns` first."""
    for number, row in enumerate(rows):
        if number == 0:
            _check_columns(path, row.values, 1)
        yield row


def _check_schema(path: str, schema: Any) -> None:
    """Raises ImportRowError (the file, the column as its field) unless the schema has a question
    and an answer column (either spelling) and every RAGAS column has its type (_COLUMN_KINDS; a
    column of nulls only passes)."""
    _check_columns(path, schema.names, None)
    for field in schema:
        kind = _COLUMN_KINDS.get(field.name)
        if kind is not None and not _type_fits(field.type, kind):
            raise ImportRowError(path, None, field.name,
                                 msg("msg.import.problem.parquet_type", type=_type_text(field.type),
                                     expected=msg(f"msg.import.parquet.{kind}")),
                                 msg("msg.import.fix.ragas_columns"))


def _type_text(kind_of: Any) -> str:
    """A Parquet column's type as a message writes it: a list as list<its item's type>
    ("list<int64>", as the expected "list<string>"; pyarrow writes "list<element: int64>")."""
    import pyarrow.types as pt

    if pt.is_list(kind_of) or pt.is_large_list(kind_of):
        return f"list<{_type_text(kind_of.value_type)}>"
    return str(kind_of)


def _type_fits(kind_of: Any, kind: str) -> bool:
    import pyarrow.types as pt

    def is_text(value: Any) -> bool:
        return pt.is_string(value) or pt.is_large_string(value) or pt.is_null(value)

    if kind == _TEXTS:
        return pt.is_null(kind_of) or ((pt.is_list(kind_of) or pt.is_large_list(kind_of)) and is_text(kind_of.value_type))
    if kind == _ID:
        return is_text(kind_of) or pt.is_integer(kind_of)
    return is_text(kind_of)


# ----------------------------------------------------------------------------- as cases


def read_ragas(path: Path, skips: Skips | None = None, *, claims: str = "sentences",
               language: str | None = None) -> Source[CaseRecord]:
    """The cases of a RAGAS file (JSON lines, CSV or Parquet; see the module's docstring).

    claims: how an answer without its own `claims` is cut: "sentences" (annotator.segment) or
        "whole" (the answer, without the white space around it, is one claim).
    language: passed to the segmenter (None: it finds out).
    skips: for a partial import: a refused record is noted there and left out.
    Returns a Source whose records are CaseRecords in file order, identical repeats dropped; its
    `notes` (filled once the records are read) say where the case ids and claims came from.
    Raises ImportFileError at once for a Parquet file that does not read; ImportRowError naming
    the file, line (Parquet: row) and field while the records are read: no question or answer
    (or a blank one), no contexts, contexts or claims that are not a list of non-empty texts,
    retrieved_context_ids not a list of ids or of another length than the contexts, two spellings
    of one field, an answer without a sentence (sentences), `claims: []`, a split not in
    vocabulary.SPLITS, a Parquet schema without a question or answer column or with a RAGAS
    column of another type, a repeated case id with other content, and what `Row` refuses
    (over-long texts and ids, ids with spaces around them).
    """
    position = Position(path.stat().st_size)
    warnings: list[str] = []
    notes: Counter[str] = Counter()
    encoding, records = read_records(path, skips, position, warnings, notes)
    cases = skipping(records, lambda record: _case(record, claims, language, notes), skips)
    source_notes: list[Message] = []
    unique = unique_cases(str(path), cases, "claims[{}]", "retrieved_context_ids[{}]", skips)
    return Source(str(path), "ragas", encoding, _then_notes(_counted(unique, notes), notes, source_notes), warnings,
                  position, source_notes)


def _case(record: RagasRecord, mode: str, language: str | None, notes: Counter[str]) -> CaseRecord:
    """The record as a case; its claims given, or cut from the answer by `mode`. Raises
    ImportRowError for a record without a context (its claims would have no passage) or an answer
    without a sentence."""
    row = record.row
    if not record.passages:
        name = record.names["contexts"]
        raise row.error(name, msg("msg.import.problem.no_contexts"), msg("msg.import.fix.give_contexts", name=name))
    passage_ids = tuple(passage.passage_id for passage in record.passages)
    if record.claims is not None:
        kind, spans = "claims_given", _found_spans(record.answer, record.claims)
        texts, places = record.claims, [f"claims[{index}]" for index in range(len(record.claims))]
    else:
        kind = "claims_" + mode
        cut = _cut(record.answer, mode, language)
        if not cut:
            raise row.error(record.names["answer"], msg("msg.import.problem.no_sentence"), msg("msg.import.fix.no_sentence"))
        texts, spans = tuple(text for text, _ in cut), [span for _, span in cut]
        places = [record.names["answer"]] * len(texts)
    claims = tuple(ClaimRecord(f"{record.case_id}-c{n}", text, passage_ids, row.line, span=span,
                               names={"text": place, "span": place, "case_id": record.names["case_id"],
                                      "passage_ids": record.names["contexts"]})
                   for n, (text, span, place) in enumerate(zip(texts, spans, places, strict=True), start=1))
    notes[(row.line, kind)] += 1
    return CaseRecord(case_id=record.case_id, question=record.question, answer=record.answer, slice=record.slice,
                      split=record.split, metadata=record.metadata, passages=record.passages, claims=claims, line=row.line)


def _cut(answer: str, mode: str, language: str | None) -> list[tuple[str, tuple[int, int]]]:
    """(text, span) of each claim of an answer: its sentences, or the whole answer; none blank."""
    if mode == "whole":
        text = answer.strip()
        start = len(answer) - len(answer.lstrip())
        return [(text, (start, start + len(text)))] if text else []
    found = []
    for segment in sentences(answer, language=language):
        text = segment.text.strip()
        if text:
            start = segment.start + (len(segment.text) - len(segment.text.lstrip()))
            found.append((text, (start, start + len(text))))
    return found


def _found_spans(answer: str, claims: tuple[str, ...]) -> list[tuple[int, int] | None]:
    """Where each given claim's text is in the answer: first looked for after the previous claim
    found (claims in the answer's order), else from the start; None when it is not there."""
    spans: list[tuple[int, int] | None] = []
    after = 0
    for text in claims:
        start = answer.find(text, after)
        if start < 0:
            start = answer.find(text)
        if start < 0:
            spans.append(None)
            continue
        spans.append((start, start + len(text)))
        after = max(after, start + len(text))
    return spans


def _counted(records: Iterator[Any], notes: Counter) -> Iterator[Any]:
    """The records, each one's kinds (noted by line, (line, kind), while it was read) counted in
    `notes` by kind as it comes out: a record skipped under --partial after its id or its claims
    were made is not counted."""
    for record in records:
        for kind in ("ids_given", "ids_made", *(f"claims_{mode}" for mode in ("sentences", "whole", "given"))):
            if notes.pop((record.line, kind), 0):
                notes[kind] += 1
        yield record


def _then_notes(records: Iterator[Any], counts: Counter[str], notes: list[Message]) -> Iterator[Any]:
    """The records; once they are all read, what the reader made of the file added to `notes`
    (`reading_notes`)."""
    yield from records
    notes += reading_notes(counts)


def reading_notes(counts: Counter[str]) -> list[Message]:
    """Where a RAGAS file's case ids came from (given, or made from the question and answer) and
    its claims (sentences, the whole answer, the records' own), as report lines; a kind no record
    had is left out."""
    notes = []
    if counts["ids_made"] or counts["ids_given"]:
        notes.append(msg("msg.import.report.ragas_ids", given=counts["ids_given"], made=counts["ids_made"],
                         prefix=CASE_ID_PREFIX, digits=ID_HEX_DIGITS))
    if counts["claims_sentences"] or counts["claims_whole"] or counts["claims_given"]:
        notes.append(msg("msg.import.report.ragas_claims", sentences=counts["claims_sentences"],
                         whole=counts["claims_whole"], given=counts["claims_given"]))
    return notes


# ----------------------------------------------------------------------------- as a run


def read_ragas_run(path: Path, skips: Skips | None = None) -> Source[RunCaseRecord]:
    """A RAGAS file read as a run (`formats.read_run`, fmt "ragas"): one RunCaseRecord per record,
    its case id as `read_ragas` makes it, `retrieved` the passage ids of its contexts in rank
    order (each once), behavior "answer", `answer` the response, no cited ids or claims.
    Raises what `read_ragas` raises for a bad record (but no sentence is cut), ImportRowError for a
    case given twice, and ImportFileError for a file without a record."""
    position = Position(path.stat().st_size)
    warnings: list[str] = []
    notes: Counter[str] = Counter()
    encoding, records = read_records(path, skips, position, warnings, notes, "ignored")
    runs = (RunCaseRecord(line=record.row.line, case_id=record.case_id,
                          retrieved=tuple(passage.passage_id for passage in record.passages), behavior="answer",
                          answer=record.answer, cited=(), claims=()) for record in records)
    one_per_case = OnePerId(str(path), "case_id", "msg.import.problem.repeat.run_case", "msg.import.fix.repeat_run_case")
    checked: Iterator[RunCaseRecord] = skipping(runs, one_per_case.check, skips)
    source_notes: list[Message] = []
    return Source(str(path), "ragas", encoding,
                  _then_notes(not_empty(str(path), _counted(checked, notes), skips, "msg.import.file.no_run_cases"),
                              notes, source_notes),
                  warnings, position, source_notes)
