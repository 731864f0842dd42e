"""Native case files: JSON lines, one case a line with its passages and claims (docs/design.md,
"File formats"). Every key of the format must be there: a case its question, answer, slice and
split, a passage its doc_id, version and title ("" is allowed for answer, doc_id, version and
title); a field the format does not know is kept as case metadata, with a warning."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any
from unicodedata import normalize

from annotator.formats.case_parts import RAG_SPELLINGS, distinct_passages, rag_fields, unique_cases
from annotator.formats.jsonl import json_lines
from annotator.formats.reading import (
    EXTRA_CASE_FIELDS, Row, Skips, UnknownKeys, ids_or_none, list_value, nfc, nfc_json, json_type, skipping, BRACES,
)
from annotator.formats.records import CaseRecord, ClaimRecord, PassageRecord, Position, Source
from annotator.messages import Message, msg
from annotator.text import MAX_ID_CHARS, MAX_TEXT_CHARS, is_blank
from annotator.vocabulary import SPLITS


NATIVE_CASE_KEYS = ("case_id", "question", "answer", "slice", "split", "metadata", "passages", "claims")
NATIVE_PASSAGE_KEYS = ("passage_id", "doc_id", "version", "title", "text")
NATIVE_CLAIM_KEYS = ("claim_id", "text", "passage_ids")


NATIVE_REQUIRED: dict[str, tuple[str, Message, bool]] = {
    # key: (what to write, what it is, whether it may be empty)
    "question": ('"question": "..."', msg("msg.import.native.question"), False),
    "answer": ('"answer": "..."', msg("msg.import.native.answer"), True),
    "slice": ('"slice": "..."', msg("msg.import.native.slice"), False),
    "split": ('"split": "dev"', msg("msg.import.native.split", choices=", ".join(SPLITS)), False),
    "doc_id": ('"doc_id": "..."', msg("msg.import.native.if_unknown"), True),
    "version": ('"version": "..."', msg("msg.import.native.if_unknown"), True),
    "title": ('"title": "..."', msg("msg.import.native.if_none"), True),
}


def read_native(path: Path, skips: Skips | None = None) -> Source[CaseRecord]:
    """The cases of a native JSON-lines file (see `read_cases`, fmt "jsonl")."""
    position = Position(path.stat().st_size)
    encoding, rows = json_lines(path, skips, position)
    warnings: list[str] = []
    unknown = UnknownKeys(warnings)
    cases = skipping(rows, lambda row: _native_case(row, unknown), skips)
    return Source(str(path), "jsonl", encoding, unique_cases(str(path), cases, skips=skips), warnings, position)


def _native_case(row: Row, unknown: UnknownKeys) -> CaseRecord:
    """One native case. Every key of the format must be there (`NATIVE_REQUIRED`); question,
    slice and split must not be empty; fields the format does not know go into the metadata.
    A record `_well_formed_case` takes is read there; any other goes through the checks below,
    which say what is wrong."""
    quick = _well_formed_case(row)
    if quick is not None:
        return quick
    unknown.check(row, NATIVE_CASE_KEYS, EXTRA_CASE_FIELDS, also_known=RAG_SPELLINGS)
    case_id = row.ident("case_id")
    question, answer, slice_ = (_required_text(row, key, "case") for key in ("question", "answer", "slice"))
    _require_key(row, "split", "case")
    split = row.choice("split", SPLITS, required=True)
    metadata = _native_metadata(row)
    passage_rows = [row.child("passages", i, value) for i, value in enumerate(list_value(row, "passages"))]
    for passage_row in passage_rows:
        unknown.check(passage_row, NATIVE_PASSAGE_KEYS)
    passages = distinct_passages(row, "passages", [_native_passage(passage_row) for passage_row in passage_rows])
    metadata.update(rag_fields(row, [passage.passage_id for passage in passages], metadata))
    claims_raw = list_value(row, "claims")
    if not claims_raw:
        raise row.error("claims", msg("msg.import.problem.no_claims"), msg("msg.import.fix.give_claims"))
    claim_rows = [row.child("claims", i, value) for i, value in enumerate(claims_raw)]
    for claim_row in claim_rows:
        unknown.check(claim_row, NATIVE_CLAIM_KEYS)
    return CaseRecord(
        case_id=case_id, question=question, answer=answer, slice=slice_, split=split, metadata=metadata,
        passages=passages, claims=tuple(_native_claim(claim_row, passages) for claim_row in claim_rows), line=row.line,
    )


def _require_key(row: Row, key: str, noun: str) -> None:
    """Raises ImportRowError saying what to add when `key` is missing from the record or null.
    noun: "case" or "passage"."""
    write, meaning, _may_be_empty = NATIVE_REQUIRED[key]
    if key not in row.values:
        raise row.error(key, msg("msg.import.problem.no_key", noun=_noun(noun), name=key),
                        msg("msg.import.fix.add_key", write=write, noun=_noun(noun), meaning=meaning))
    if row.values[key] is None:
        raise row.error(key, msg("msg.import.problem.null"), msg("msg.import.fix.write_key", write=write, meaning=meaning))


def _noun(noun: str) -> Message:
    """"case", "claim" or "passage" as a message field."""
    return msg(f"msg.import.noun.{noun}")


_ID_KEYS = frozenset({"slice", "doc_id"})
"""Keys of a native record read as text that name things (ids), limited to MAX_ID_CHARS."""


def _required_text(row: Row, key: str, noun: str) -> str:
    """The text of a key every record must have; empty is allowed only where `NATIVE_REQUIRED`
    says so ("" if ...)."""
    _require_key(row, key, noun)
    value = _version(row, key) if key == "version" else row.text(key)
    if key in _ID_KEYS:
        row.check_id_length(key, value)
    _write, meaning, may_be_empty = NATIVE_REQUIRED[key]
    if is_blank(value) and not may_be_empty:
        raise row.error(key, msg("msg.import.problem.empty"),
                        msg("msg.import.fix.write_noun_key", noun=_noun(noun), name=key, meaning=meaning))
    return value


def _native_metadata(row: Row) -> dict[str, Any]:
    """The case's metadata object plus the fields the format does not know (as in the flat CSV,
    where unknown columns are kept as case metadata). A field also in metadata must agree."""
    metadata = _metadata(row)
    for key, value in row.values.items():
        if key in NATIVE_CASE_KEYS or key in RAG_SPELLINGS:
            continue
        name, value = nfc(key), nfc_json(value)
        if name in metadata and metadata[name] != value:
            raise row.error(key, msg("msg.import.problem.field_and_metadata", name=name),
                            msg("msg.import.fix.keep_one_metadata"))
        metadata[name] = value
    return metadata


def _metadata(row: Row) -> dict[str, Any]:
    value = row.values.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise row.error("metadata", msg("msg.import.problem.expected_object_value", type=json_type(value)),
                        msg("msg.import.fix.metadata_object", braces=BRACES))
    return nfc_json(value)


def _native_passage(row: Row) -> PassageRecord:
    return PassageRecord(
        passage_id=row.ident("passage_id"),
        doc_id=_required_text(row, "doc_id", "passage"),
        version=_required_text(row, "version", "passage"),
        title=_required_text(row, "title", "passage"),
        text=row.text("text", required=True),
        line=row.line,
        prefix=row.prefix,
    )


def _version(row: Row, key: str) -> str:
    value = row.values.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return row.text(key)


def _native_claim(row: Row, passages: tuple[PassageRecord, ...]) -> ClaimRecord:
    claim_id = row.ident("claim_id")
    text = row.text("text", required=True)
    known = [passage.passage_id for passage in passages]
    if "passage_ids" not in row.values or row.values["passage_ids"] is None:
        if not known:
            raise row.error("passage_ids", msg("msg.import.problem.claim_no_passages", id=claim_id),
                            msg("msg.import.fix.give_passages"))
        return ClaimRecord(claim_id, text, tuple(known), row.line, prefix=row.prefix, names=NATIVE_CLAIM_NAMES)
    ids = tuple(row.check_ident(f"passage_ids[{i}]", value) for i, value in enumerate(list_value(row, "passage_ids")))
    if not ids:
        raise row.error("passage_ids", msg("msg.import.problem.claim_no_passages", id=claim_id),
                        msg("msg.import.fix.name_a_passage"))
    for i, passage_id in enumerate(ids):
        if passage_id not in known:
            raise row.error(f"passage_ids[{i}]", msg("msg.import.problem.unknown_passage", id=passage_id,
                                                     passages=ids_or_none(known)), msg("msg.import.fix.add_passage"))
    if _first_duplicate(ids) is not None:
        raise row.error("passage_ids", msg("msg.import.problem.passage_twice", id=_first_duplicate(ids)),
                        msg("msg.import.fix.name_once"))
    return ClaimRecord(claim_id, text, ids, row.line, prefix=row.prefix, names=NATIVE_CLAIM_NAMES)


NATIVE_CLAIM_NAMES: dict[str, str] = {"case_id": "claim_id"}
"""A claim's content key "case_id" (its case) is reported at the claim's id: the claim moved."""


def _first_duplicate(values: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


# ---- the fast path: a record whose every field is well formed, read without the checks' work

_CASE_KEYS, _PASSAGE_KEYS, _CLAIM_KEYS = frozenset(NATIVE_CASE_KEYS), frozenset(NATIVE_PASSAGE_KEYS), frozenset(NATIVE_CLAIM_KEYS)


def _well_formed_case(row: Row) -> CaseRecord | None:
    """The case of `row` exactly as the checks of `_native_case` read it, when its record holds
    only the format's own keys and each value is one the checks take as it is (plain strings,
    a metadata object, lists of passage and claim objects, distinct passage ids); None for any
    other record (an unknown or RAG field, a number as an id or version, an empty or blank
    value where one is needed, a text or id too long, ...), left to the checks, which refuse it
    or read it with the same result. Never raises and warns of nothing."""
    values = row.values
    if not _CASE_KEYS.issuperset(values):
        return None
    case_id, question = _plain_id(values.get("case_id")), _plain_text(values.get("question"))
    answer, slice_ = _plain_text(values.get("answer"), may_be_empty=True), _plain_text(values.get("slice"))
    split, metadata = values.get("split"), values.get("metadata")
    passages_raw, claims_raw = values.get("passages"), values.get("claims")
    if (case_id is None or question is None or answer is None or slice_ is None or len(slice_) > MAX_ID_CHARS
            or type(split) is not str or split not in SPLITS or not (metadata is None or type(metadata) is dict)
            or not (passages_raw is None or type(passages_raw) is list) or type(claims_raw) is not list or not claims_raw):
        return None
    line = row.line
    passages = []
    for i, raw in enumerate(passages_raw or ()):
        if type(raw) is not dict or not _PASSAGE_KEYS.issuperset(raw):
            return None
        passage_id, doc_id = _plain_id(raw.get("passage_id")), _plain_text(raw.get("doc_id"), may_be_empty=True)
        version, title = _plain_text(raw.get("version"), may_be_empty=True), _plain_text(raw.get("title"), may_be_empty=True)
        text = _plain_text(raw.get("text"), required=True)
        if (passage_id is None or doc_id is None or len(doc_id) > MAX_ID_CHARS or version is None or title is None
                or text is None):
            return None
        passages.append(PassageRecord(passage_id, doc_id, version, title, text, line, f"passages[{i}]."))
    known = [passage.passage_id for passage in passages]
    if len(set(known)) != len(known):
        return None
    claims = []
    for i, raw in enumerate(claims_raw):
        if type(raw) is not dict or not _CLAIM_KEYS.issuperset(raw):
            return None
        claim_id, text, given = _plain_id(raw.get("claim_id")), _plain_text(raw.get("text"), required=True), raw.get("passage_ids")
        if claim_id is None or text is None:
            return None
        if given is None:
            if not known:
                return None
            ids = tuple(known)
        else:
            if type(given) is not list or not given:
                return None
            ids = tuple(_plain_id(value) for value in given)
            if len(set(ids)) != len(ids) or not all(passage_id in known for passage_id in ids):  # None is in no case known
                return None
        claims.append(ClaimRecord(claim_id, text, ids, line, prefix=f"claims[{i}].", names=NATIVE_CLAIM_NAMES))
    return CaseRecord(case_id=case_id, question=question, answer=answer, slice=slice_, split=split,
                      metadata={} if metadata is None else nfc_json(metadata), passages=tuple(passages),
                      claims=tuple(claims), line=line)


def _plain_id(value: Any) -> str | None:
    """An id as `Row.check_ident` reads it, when it is a string it takes as it is; else None."""
    if type(value) is not str or not value or value != value.strip():
        return None
    value = normalize("NFC", value)
    return value if len(value) <= MAX_ID_CHARS else None


def _plain_text(value: Any, *, may_be_empty: bool = False, required: bool = False) -> str | None:
    """A text as `_required_text` (`required`: `Row.text(required=True)`) reads it, when it is a
    string it takes as it is; else None. may_be_empty: "" and blanks are taken (NATIVE_REQUIRED)."""
    if type(value) is not str or len(value) > MAX_TEXT_CHARS:
        return None
    if not value:
        return "" if may_be_empty else None
    if required:
        return None if is_blank(value) else normalize("NFC", value)
    value = normalize("NFC", value)
    return value if may_be_empty or not is_blank(value) else None
