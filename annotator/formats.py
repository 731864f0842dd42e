"""Readers for the input files: cases (native JSONL, flat CSV, CLIMATE-FEVER), labels and
adjudications. Pure parsing: no database. Every reader streams plain records and raises
`ImportRowError` naming the file, `line N`, the field, the problem and what to do.

Text is NFC-normalized (never NFKC: ① and ㈱ stay as written). Ids with spaces around them are
refused, not silently turned into new ids. The same id twice in one file is a harmless repeat
when its content is identical, and refused (naming both lines) when it is not.

Native JSONL records must hold every key of the format (DESIGN.md "File formats"): a case its
question, answer, slice and split, a passage its doc_id, version and title ("" is allowed for
answer, doc_id, version and title). A field or column the format does not know gives the same
warning in JSONL and CSV; in a case file it is kept as case metadata, elsewhere ignored. A path
that is a folder, a device, empty or UTF-16 is refused before anything is read; a CSV quote
that is never closed is refused at the line where it opens; a severity on a support label is
refused (a supported claim has no severity).

CLIMATE-FEVER: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), "CLIMATE-FEVER: A
Dataset for Verification of Real-World Climate Claims", arXiv:2012.00614.
"""

from __future__ import annotations

import bisect
import codecs
import csv
import io
import itertools
import json
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

from annotator.errors import AnnotatorError, ImportFileError, ImportRowError
from annotator.messages import Message, english, msg
from annotator.text import MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS, invisible_character
from annotator.vocabulary import CLIMATE_FEVER_LABELS, LABELS, SEVERITIES, SPLITS

CASE_FORMATS: tuple[str, ...] = ("jsonl", "csv", "climate-fever")
"""Formats of case files; "auto" detects one of them."""

TABLE_FORMATS: tuple[str, ...] = ("jsonl", "csv")
"""Formats of label and adjudication files."""

CLIMATE_FEVER_SOURCE = "CLIMATE-FEVER (Diggelmann et al., 2020)"
CLIMATE_FEVER_SLICE = "normal"  # the file's own group is not one of our slices
CLIMATE_FEVER_SPLIT = "dev"
VOTER_PREFIX = "cf-vote-"

CSV_CASE_COLUMNS: tuple[str, ...] = (
    "case_id", "question", "answer", "slice", "split", "claim_id", "claim",
    "passage_id", "doc_id", "passage_version", "passage_title", "passage_text",
)
CSV_CASE_REQUIRED: tuple[str, ...] = ("case_id", "claim_id", "claim", "passage_id", "passage_text")
LABEL_COLUMNS: tuple[str, ...] = ("claim_id", "labeler", "label", "rationale", "passage_ids", "severity")
LABEL_REQUIRED: tuple[str, ...] = ("claim_id", "labeler", "label")
ADJUDICATION_COLUMNS: tuple[str, ...] = ("claim_id", "adjudicator", "label", "rationale", "severity")
ADJUDICATION_REQUIRED: tuple[str, ...] = ("claim_id", "adjudicator", "label")

UTF8, UTF8_BOM, CP932 = "UTF-8", "UTF-8 with BOM", "CP932"


RAG_CASE_FIELDS: dict[str, str] = {
    "required_evidence_ids": "requiredEvidenceIds",
    "forbidden_evidence_ids": "forbiddenEvidenceIds",
    "expected_behavior": "expectedBehavior",
    "principal": "principal",
    "corpus_release": "corpusRelease",
}
"""The RAG case fields a case record may carry (canonical snake_case -> camelCase), stored in the
case's metadata under the snake_case key. The id lists must name passages of the case."""
RAG_ID_LISTS: tuple[str, ...] = ("required_evidence_ids", "forbidden_evidence_ids")
RAG_SPELLINGS: frozenset[str] = frozenset(RAG_CASE_FIELDS) | frozenset(RAG_CASE_FIELDS.values())

T = TypeVar("T")
S = TypeVar("S")


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class PassageRecord:
    """One evidence passage as read from a file."""

    passage_id: str
    doc_id: str
    version: str
    title: str
    text: str
    line: int
    prefix: str = ""
    """Where the passage is in its record, e.g. "passages[1]." (native JSONL)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """The file's name of a content field where it is not the same (CSV: "text" -> "passage_text")."""
    first: bool = True
    """False when an earlier case of the same file already gave this passage (identical)."""

    def content(self) -> dict[str, str]:
        """The passage's fields that must match for a repeat of its id to be harmless."""
        return {"doc_id": self.doc_id, "version": self.version, "title": self.title, "text": self.text}

    def field_of(self, key: str) -> str:
        """The field path of a content key in the file, e.g. "passages[1].text"."""
        return self.prefix + self.names.get(key, key)


@dataclass(frozen=True)
class ClaimRecord:
    """One claim as read from a file: its passages (ids, in the order shown) and, for
    CLIMATE-FEVER, its votes by slot (our label names; None = no vote)."""

    claim_id: str
    text: str
    passage_ids: tuple[str, ...]
    line: int
    votes: tuple[str | None, ...] = ()
    prefix: str = ""
    """Where the claim is in its record, e.g. "claims[0]." (native JSONL)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """The file's name of a content field where it is not the same (CSV: "text" -> "claim")."""

    def field_of(self, key: str) -> str:
        """The field path of a content key ("case_id", "text", "passage_ids") in the file, e.g.
        "claims[0].text"."""
        return self.prefix + self.names.get(key, key)


@dataclass(frozen=True)
class CaseRecord:
    """One case as read from a file, with its passages and claims in file order."""

    case_id: str
    question: str
    answer: str
    slice: str
    split: str
    metadata: dict[str, Any]
    passages: tuple[PassageRecord, ...]
    claims: tuple[ClaimRecord, ...]
    line: int

    def content(self) -> dict[str, Any]:
        """The case's own fields (not its claims or passages)."""
        return {"question": self.question, "answer": self.answer, "slice": self.slice,
                "split": self.split, "metadata": self.metadata}


@dataclass(frozen=True)
class LabelRecord:
    """One row of a labels file."""

    claim_id: str
    labeler: str
    label: str
    rationale: str
    passage_ids: tuple[str, ...]
    severity: str | None
    line: int


@dataclass(frozen=True)
class AdjudicationRecord:
    """One row of an adjudications file."""

    claim_id: str
    adjudicator: str
    label: str
    rationale: str
    severity: str | None
    line: int


@dataclass(frozen=True)
class Source(Generic[T]):
    """An opened input file: its format, the encoding used, and its records (an iterator, read
    once). `warnings` fills up while the records are read (unknown columns and fields)."""

    path: str
    format: str
    encoding: str
    records: Iterator[T]
    warnings: list[str] = field(default_factory=list)
    position: Position = field(default_factory=lambda: Position())
    """How far `records` has read the file, as it goes (case files; labels and adjudications: not kept)."""


# ---------------------------------------------------------------- public readers


def detect_format(path: str | Path) -> str:
    """The case format of `path`: "csv" for a .csv file, "climate-fever" for JSON lines whose
    first record has `evidences`, else "jsonl". A file that is neither .csv nor JSON lines is
    read as CSV. Call it on a file `check_input_file` accepts."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return "csv"
    first = _first_nonblank_line(path)
    if not first.lstrip().startswith(b"{"):
        return "csv" if path.suffix.lower() not in (".jsonl", ".ndjson", ".json") else "jsonl"
    try:
        record = json.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "jsonl"  # the native reader reports the broken line
    return "climate-fever" if isinstance(record, dict) and "evidences" in record else "jsonl"


def read_cases(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None) -> Source[CaseRecord]:
    """Open a case file and stream its cases.

    fmt: "auto" (see `detect_format`), "jsonl" (native), "csv" or "climate-fever".
    skips: for a partial import: a bad line (record) is noted there and skipped, not raised.
    Returns a Source whose records are CaseRecords in file order, repeats dropped. JSON lines are
    read one line at a time (memory: the ids seen and a digest of each, see `_Seen`). A CSV file
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
    fmt = _resolve_format(path, fmt, CASE_FORMATS, detect_format)
    readers: dict[str, Callable[[Path, Skips | None], Source[CaseRecord]]] = {
        "jsonl": _read_native, "csv": _read_case_csv, "climate-fever": _read_climate_fever,
    }
    return readers[fmt](Path(path), skips)


def read_labels(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None,
                unique: bool = True) -> Source[LabelRecord]:
    """Open a labels file (CSV or JSONL) with columns claim_id, labeler, label and optional
    rationale, passage_ids (CSV: separated by ";"; JSONL: a list) and severity, and stream its
    records (JSON lines: one line at a time; CSV: one record at a time, after a first reading that
    finds the encoding, see `_csv_rows`).

    skips: for a partial import: a bad line is noted there and skipped, not raised (as `read_cases`).
    Raises ImportRowError for a missing column or field, an unknown label or severity (naming
    the value and the allowed ones), an id with spaces around it, and the same claim and labeler
    twice with other content. A CSV header error, a quote never closed, undecodable CSV bytes and
    a CSV row with more cells than the header are raised even with `skips`.
    unique=False: repeats are given out too, unchecked (the caller checks them with `_Seen`).
    """
    fmt = _resolve_format(path, fmt, TABLE_FORMATS, _detect_table_format)
    source = _open_table(Path(path), fmt, LABEL_COLUMNS, LABEL_REQUIRED, skips)
    records = skipping(source.records, _label_record, skips)
    if unique:
        records = _unique_rows(records, _Seen(source.path, "label of claim"), _label_key, "labeler", skips)
    return Source(source.path, fmt, source.encoding, records, source.warnings)


def read_adjudications(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None,
                       unique: bool = True) -> Source[AdjudicationRecord]:
    """Open an adjudications file (CSV or JSONL) with columns claim_id, adjudicator, label and
    optional rationale and severity. Streams, skips and errors as `read_labels`; one adjudication
    per claim."""
    fmt = _resolve_format(path, fmt, TABLE_FORMATS, _detect_table_format)
    source = _open_table(Path(path), fmt, ADJUDICATION_COLUMNS, ADJUDICATION_REQUIRED, skips)
    records = skipping(source.records, _adjudication_record, skips)
    if unique:
        records = _unique_rows(records, _Seen(source.path, "adjudication of claim"), _adjudication_key, "claim_id", skips)
    return Source(source.path, fmt, source.encoding, records, source.warnings)


def voter_name(k: int) -> str:
    """The labeler name of CLIMATE-FEVER vote k (1-based): "cf-vote-k"."""
    return f"{VOTER_PREFIX}{k}"


def slot_votes(votes: Iterable[str | None]) -> list[tuple[str, str]]:
    """(labeler, label) for every non-null vote slot j, as labeler cf-vote-{j+1} (`--with-votes`)."""
    return [(voter_name(j + 1), vote) for j, vote in enumerate(votes) if vote is not None]


def first_votes(votes: Iterable[str | None], n: int) -> list[tuple[str, str]]:
    """(labeler, label) for the first `n` non-null votes: the k-th as labeler cf-vote-{k}."""
    cast = [vote for vote in votes if vote is not None][:n]
    return [(voter_name(k), vote) for k, vote in enumerate(cast, start=1)]


def nth_vote(votes: Iterable[str | None], k: int) -> str | None:
    """The k-th (1-based) non-null vote, or None when there are fewer than k votes."""
    cast = [vote for vote in votes if vote is not None]
    return cast[k - 1] if 0 < k <= len(cast) else None


# ---------------------------------------------------------------- one row of input


@dataclass(frozen=True)
class _Row:
    """One record of input (a JSON object, a CSV row or a nested object) with its line, so that
    each value read from it can be checked and reported with file, line and field."""

    path: str
    line: int
    values: Mapping[str, Any]
    prefix: str = ""

    def error(self, key: str | None, problem: Message, fix: Message) -> ImportRowError:
        """The refusal of this record's field `key` (None: the record as a whole): its problem
        and what to do, as messages (annotator/messages.py, "msg.import.problem." and
        "msg.import.fix."), so that the app can say them in the user's language."""
        name = None if key is None else self.prefix + key
        return ImportRowError(self.path, self.line, name, problem, fix)

    def child(self, key: str, index: int, values: Any) -> _Row:
        name = f"{key}[{index}]"
        if not isinstance(values, dict):
            raise self.error(name, msg("msg.import.problem.expected_object", type=_json_type(values)),
                             msg("msg.import.fix.write_object", braces=BRACES))
        return _Row(self.path, self.line, values, f"{self.prefix}{name}.")

    def text(self, key: str, *, required: bool = False) -> str:
        value = self.values.get(key)
        if type(value) is str and value and len(value) <= MAX_TEXT_CHARS and (not required or not value.isspace()):
            return unicodedata.normalize("NFC", value)  # the common case, checked quickly
        if value is None or value == "" or (required and isinstance(value, str) and not value.strip()):
            if required:
                raise self.error(key, msg("msg.import.problem.missing_value"), msg("msg.import.fix.non_empty", name=key))
            return ""
        if not isinstance(value, str):
            raise self.error(key, msg("msg.import.problem.expected_string", type=_json_type(value)),
                             msg("msg.import.fix.double_quotes"))
        self.check_length(key, value)
        return nfc(value)

    def check_length(self, key: str, value: str) -> None:
        """Raises ImportRowError for a text longer than MAX_TEXT_CHARS, naming its length."""
        if len(value) > MAX_TEXT_CHARS:
            raise self.error(key, msg("msg.import.problem.too_long", n=len(value), most=MAX_TEXT_CHARS),
                             msg("msg.import.fix.shorten"))

    def ident(self, key: str, most: int = MAX_ID_CHARS) -> str:
        value = self.values.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return self.check_ident(key, value, most)

    def check_ident(self, key: str, value: Any, most: int = MAX_ID_CHARS) -> str:
        if value is None or value == "":
            raise self.error(key, msg("msg.import.problem.missing_value"), msg("msg.import.fix.non_empty", name=key))
        if not isinstance(value, str):
            raise self.error(key, msg("msg.import.problem.expected_id", type=_json_type(value)),
                             msg("msg.import.fix.id_quotes"))
        if value != value.strip():
            raise self.error(key, msg("msg.import.problem.id_spaces", id=repr(value)), msg("msg.import.fix.id_spaces"))
        return self.check_id_length(key, nfc(value), most)

    def check_id_length(self, key: str, value: str, most: int = MAX_ID_CHARS) -> str:
        """`value` (an id, a slice, a name) when it is at most `most` characters long.
        Raises ImportRowError naming its length otherwise."""
        if len(value) > most:
            raise self.error(key, msg("msg.import.problem.id_too_long", n=len(value), most=most),
                             msg("msg.import.fix.shorten_id"))
        return value

    def name(self, key: str) -> str:
        """The user name in `key` (a labeler, an adjudicator): an id (`ident`) of at most
        MAX_NAME_CHARS characters without invisible characters (text.invisible_character).
        Whether it looks like an existing user's name is the import's to check (users.KnownNames)."""
        value = self.ident(key, MAX_NAME_CHARS)
        found = invisible_character(value)
        if found:
            raise self.error(key, msg("msg.import.problem.invisible_in_name", character=found[0], position=found[1]),
                             msg("msg.import.fix.retype_name"))
        return value

    def choice(self, key: str, allowed: tuple[str, ...], *, required: bool) -> str:
        value = self.text(key, required=required)
        if value and value not in allowed:
            raise self.error(key, msg("msg.import.problem.unknown_value", value=repr(value)),
                             msg("msg.import.fix.use_one_of", choices=", ".join(allowed)))
        return value


def where_message(path: str, line: int | None, field_name: str | None) -> Message:
    """Where a refused line is, as a message: "FILE", "FILE, line N", "FILE, line N, field 'F'"
    (the start of str(ImportRowError))."""
    if line is None:
        if field_name:
            return msg("msg.import.where.field", path=str(path), field=field_name)
        return msg("msg.import.where.file", path=str(path))
    if field_name:
        return msg("msg.import.where.line_field", path=str(path), line=line, field=field_name)
    return msg("msg.import.where.line", path=str(path), line=line)


def refusal_message(error: AnnotatorError) -> Message | str:
    """What a refusal of an input file says, as a message for the app to write in the user's
    language: a refused line (ImportRowError) with its place, problem and fix ("FILE, line N,
    field 'F': problem. fix", str(error) in English); another error's message; str(error) when it
    has none."""
    if isinstance(error, ImportRowError):
        reason = msg("msg.import.reason", problem=error.problem, fix=error.fix)
        return msg("msg.import.row", where=where_message(error.path, error.line, error.field), reason=reason)
    return error.message or str(error)


def nfc(text: str) -> str:
    """`text` in Unicode NFC (never NFKC: compatibility characters such as ① and ㈱ are kept)."""
    return unicodedata.normalize("NFC", text)


class DuplicateKeyError(ValueError):
    """One JSON object holds the same key twice (json.loads would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {key!r} appears twice in one object")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook: the object as a dict, or DuplicateKeyError for a key given twice,
    also when two spellings of it are one key after NFC (the readers store keys in NFC)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    if not all(key.isascii() for key in value):
        seen = set()
        for key in value:
            if nfc(key) in seen:
                raise DuplicateKeyError(nfc(key))
            seen.add(nfc(key))
    return value


def loads_unique(text: str | bytes) -> Any:
    """json.loads of `text`, refusing an object that gives one key twice.

    Raises json.JSONDecodeError for text that is not JSON, DuplicateKeyError (a ValueError; its
    `key` is the repeated key) for a repeated key at any depth."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def _nfc_json(value: Any) -> Any:
    if isinstance(value, str):
        return nfc(value)
    if isinstance(value, list):
        return [_nfc_json(item) for item in value]
    if isinstance(value, dict):
        return {nfc(key): _nfc_json(item) for key, item in value.items()}
    return value


BRACES = "{...}"
"""A JSON object as the fixes write it: a message field, so that no catalog text escapes its braces."""

_JSON_TYPES: dict[type, str] = {bool: "bool", int: "number", float: "number", str: "string", list: "list",
                                dict: "object", type(None): "null"}


def _json_type(value: Any) -> Message | str:
    """What a JSON value is, as a message ("a number", "an object"; msg.import.json.*)."""
    kind = _JSON_TYPES.get(type(value))
    return type(value).__name__ if kind is None else msg(f"msg.import.json.{kind}")


_LINE_BITS, _DIGEST_BITS = 40, 64
_DIGEST_MASK = (1 << _DIGEST_BITS) - 1


class _Seen:
    """Remembers each id's line and a digest of its content in one file: a repeat with the same
    content is harmless (first_time returns False), one with other content is refused naming both
    lines and the differing fields.

    Memory: one small int per id, not the records (a 1,000,000-claim file keeps ids and digests
    only). The digest is a 64-bit `hash` per field of a dict content (one for any other content),
    packed with the line into one int; two different contents share all digests with probability
    about 2**-64 per field.
    """

    def __init__(self, path: str, kind: str):
        self.path, self.kind = path, kind
        self._seen: dict[Any, int] = {}

    def first_time(self, key: Any, content: Any, line: int, field_name: str) -> bool:
        digests = _digests(content)
        packed = self._seen.get(key)
        if packed is None:
            value = line
            for i, digest in enumerate(digests):
                value |= digest << (_LINE_BITS + _DIGEST_BITS * i)
            self._seen[key] = value
            return True
        first_line = packed & ((1 << _LINE_BITS) - 1)
        first = [(packed >> (_LINE_BITS + _DIGEST_BITS * i)) & _DIGEST_MASK for i in range(len(digests))]
        if first == digests:
            return False
        differing: Message | str = ""
        if isinstance(content, dict):
            keys = [key_ for key_, old, new in zip(content, first, digests, strict=True) if old != new]
            differing = msg("msg.import.problem.differ", fields=", ".join(keys))
        raise ImportRowError(self.path, line, field_name, self._repeated(key, first_line, differing),
                             msg(_REPEAT_FIXES.get(self.kind, "msg.import.fix.repeat_id")))

    def _repeated(self, key: Any, first_line: int, differing: Message | str) -> Message:
        """The problem of an id given again with other content: "claim 'c1' is also on line 3 with
        other content (text differ)"; a label's key is (claim id, labeler)."""
        if self.kind == "label of claim":
            claim_id, labeler = key
            return msg("msg.import.problem.repeat.label", claim_id=claim_id, labeler=labeler, line=first_line,
                       differing=differing)
        shown = "', '".join(key) if isinstance(key, tuple) else key
        return msg(_REPEAT_PROBLEMS[self.kind], id=shown, line=first_line, differing=differing)

    def forget(self, keys: Iterable[Any]) -> None:
        """Drop ids registered by a record that was then skipped (a partial import)."""
        for key in keys:
            self._seen.pop(key, None)


_REPEAT_PROBLEMS: dict[str, str] = {
    "case": "msg.import.problem.repeat.case", "claim": "msg.import.problem.repeat.claim",
    "passage": "msg.import.problem.repeat.passage", "adjudication of claim": "msg.import.problem.repeat.adjudication",
}
_REPEAT_FIXES: dict[str, str] = {"label of claim": "msg.import.fix.repeat_label",
                                 "adjudication of claim": "msg.import.fix.repeat_adjudication"}
"""The messages of `_Seen` by its kind of record (the others: msg.import.fix.repeat_id)."""


def _digests(content: Any) -> list[int]:
    """64-bit digests of a content: one per value of a dict (in its key order), else one."""
    if isinstance(content, dict):
        return [_digest(value) for value in content.values()]
    return [_digest(content)]


def _digest(value: Any) -> int:
    """hash() of a hashable value (strings, tuples of them: the common case, fast), else of its
    `_canonical` form (lists, dicts). A list and a tuple never digest alike, as they never compare
    equal."""
    try:
        return hash(value) & _DIGEST_MASK
    except TypeError:
        return hash(_canonical(value)) & _DIGEST_MASK


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON-like value that is equal exactly when the values are equal
    (dicts compared without regard to key order, lists and tuples kept apart)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ("{}", tuple(sorted((key, _canonical(item)) for key, item in value.items())))
    if isinstance(value, list):
        return ("[]", tuple(_canonical(item) for item in value))
    if isinstance(value, tuple):
        return ("()", tuple(_canonical(item) for item in value))
    return value


def _differing(first: Any, second: Any) -> Message | str:
    if not (isinstance(first, dict) and isinstance(second, dict)):
        return ""
    keys = [key for key in {**first, **second} if first.get(key) != second.get(key)]
    return msg("msg.import.problem.differ", fields=", ".join(keys)) if keys else ""


# ---------------------------------------------------------------- bytes, lines, encodings


def _resolve_format(path: str | Path, fmt: str, allowed: tuple[str, ...], detect: Callable[[Path], str]) -> str:
    check_input_file(Path(path))
    if fmt == "auto":
        return detect(Path(path))
    if fmt not in allowed:
        raise ImportFileError.of("msg.import.file.unknown_format", path=str(path), fmt=fmt, choices=", ".join(allowed))
    return fmt


CSV_FIELD_LIMIT = 2**31 - 1
"""The csv module refuses a cell over 131,072 characters by default, with an error that names no
line or field; raised here (process-wide) so that our own checks (MAX_TEXT_CHARS) name them."""
csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))

UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
SNIFF_BYTES = 1024
"""How much of a file's start is looked at for NUL bytes (UTF-16 without a byte order mark)."""


def check_input_file(path: Path) -> None:
    """Raises ImportFileError, saying what to do, unless `path` is a regular, non-empty file that is
    not UTF-16: a missing path, a folder, a device (/dev/null), a file of 0 bytes or only blank
    lines, and a UTF-16 file (byte order mark FF FE or FE FF, or NUL bytes in its first KB)."""
    if path.is_dir():
        raise ImportFileError.of("msg.import.file.folder", path=str(path))
    if not path.exists():
        raise ImportFileError.of("msg.import.file.missing", path=str(path))
    if not path.is_file():
        raise ImportFileError.of("msg.import.file.not_regular", path=str(path))
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head:
        raise ImportFileError.of("msg.import.file.empty", path=str(path))
    if head.startswith(UTF16_BOMS) or head.count(b"\x00") * 4 >= len(head):
        raise ImportFileError.of("msg.import.file.utf16", path=str(path))
    if b"\x00" in head:
        offset = head.index(b"\x00")
        line = head.count(b"\n", 0, offset) + 1
        raise ImportFileError.of("msg.import.file.nul_byte", path=str(path), line=line, offset=offset)
    if not _first_nonblank_line(path):
        raise ImportFileError.of("msg.import.file.blank", path=str(path))


def _detect_table_format(path: Path) -> str:
    if path.suffix.lower() == ".csv":
        return "csv"
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    return "jsonl" if _first_nonblank_line(path).lstrip().startswith(b"{") else "csv"


def _first_nonblank_line(path: Path) -> bytes:
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip() and raw.strip() != b"\xef\xbb\xbf":
                return raw.removeprefix(b"\xef\xbb\xbf")
    return b""


def _json_lines(path: Path, skips: Skips | None = None, position: Position | None = None) -> tuple[str, Iterator[_Row]]:
    """The encoding and a stream of (line, object) of a JSON-lines file, blank lines skipped.
    With `skips`, a line that is not UTF-8 or not a JSON object is noted there and skipped."""
    with path.open("rb") as handle:
        encoding = UTF8_BOM if handle.read(3) == b"\xef\xbb\xbf" else UTF8
    return encoding, _json_rows(path, skips, position if position is not None else Position())


def _json_rows(path: Path, skips: Skips | None, position: Position) -> Iterator[_Row]:
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            position.bytes_read = offset
            try:
                text = _decode_line(path, raw, number, start)
                if number == 1:
                    text = text.removeprefix("\ufeff")
                if not text.strip():
                    continue
                values = _parse_json_object(path, text, number)
            except ImportRowError as error:
                if skips is None:
                    raise
                skips.add(error)
                continue
            yield _Row(str(path), number, values)


class Skips:
    """The lines a partial import skips: each as the ImportRowError that refused it, in file
    order. Readers given a Skips note a bad line here and go on, instead of raising."""

    def __init__(self) -> None:
        self.errors: list[ImportRowError] = []

    def add(self, error: ImportRowError) -> None:
        bisect.insort(self.errors, error, key=lambda noted: noted.line)  # a note may name an earlier line

    def __len__(self) -> int:
        return len(self.errors)


@dataclass
class Position:
    """How far a reader has read its file (bytes), for a progress bar; `size` is the file's size."""

    size: int = 0
    bytes_read: int = 0


_MAYBE_UNSTORABLE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def _unstorable_character(record: dict[str, Any]) -> Message | None:
    """What is wrong when a JSON line holds a character no database can store as text: a NUL
    (`\\u0000`) or a lone UTF-16 surrogate (`\\ud800`); None when there is none. A surrogate pair
    (an escaped emoji) is fine: json.loads joins it into one character."""
    for piece in _strings(record):
        if "\x00" in piece:
            return msg("msg.import.problem.nul_character")
        if any(0xD800 <= ord(char) <= 0xDFFF for char in piece):
            return msg("msg.import.problem.lone_surrogate")
    return None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def _decode_line(path: Path, raw: bytes, number: int, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ImportRowError(
            str(path), number, None,
            msg("msg.import.problem.not_utf8_line", byte=offset + error.start, hex=f"{raw[error.start]:02x}",
                column=error.start + 1),
            msg("msg.import.fix.jsonl_utf8"),
        ) from None


def _parse_json_object(path: Path, text: str, number: int) -> dict[str, Any]:
    text = text.rstrip("\r\n")  # an error at the end of the line is in this line, not at column 1 of the next
    try:
        value = loads_unique(text)
    except DuplicateKeyError as error:
        raise ImportRowError(str(path), number, error.key, msg("msg.import.problem.duplicate_key", name=error.key),
                             msg("msg.import.fix.duplicate_key")) from None
    except json.JSONDecodeError as error:
        raise ImportRowError(
            str(path), number, None,
            # json's messages "Invalid control character at" and "Unterminated string starting at" end in "at"
            msg("msg.import.problem.bad_json", detail=error.msg.removesuffix(" at"), column=error.colno),
            _json_fix(error.msg),
        ) from None
    if not isinstance(value, dict):
        raise ImportRowError(str(path), number, None, msg("msg.import.problem.expected_object", type=_json_type(value)),
                             msg("msg.import.fix.one_object_per_line", braces=BRACES))
    # a NUL or a lone surrogate can only come from a \\u escape (raw ones are refused above)
    bad = _unstorable_character(value) if _MAYBE_UNSTORABLE.search(text) else None
    if bad is not None:
        raise ImportRowError(str(path), number, None, bad, msg("msg.import.fix.unstorable"))
    return value


def _json_fix(message: str) -> Message:
    if message.startswith("Invalid control character"):
        return msg("msg.import.fix.json_control")
    return msg("msg.import.fix.json_line", example='{"case_id": "c1", ...}')


def decode_csv_bytes(path: str | Path, data: bytes) -> tuple[str, str]:
    """Decode a CSV file's bytes: UTF-8 (with or without BOM) strictly, else CP932 strictly.

    Returns (text, encoding name: "UTF-8", "UTF-8 with BOM" or "CP932").
    Raises ImportRowError naming the byte offset (counted from the file's first byte, a BOM
    included), line and (where the header says) field of the first byte neither encoding can
    read; the encoding that got further is the one reported. A file on disk is read the same way
    without holding its bytes by `csv_encoding`.
    """
    bom = data.startswith(UTF8_BOM_BYTES)
    try:
        return data.decode("utf-8-sig"), UTF8_BOM if bom else UTF8
    except UnicodeDecodeError as utf8_error:
        try:
            return _decode_cp932(data), CP932
        except UnicodeDecodeError as cp932_error:
            utf8_start = utf8_error.start + (len(UTF8_BOM_BYTES) if bom else 0)  # utf-8-sig counts after the BOM
            raise _undecodable(str(path), lambda: io.BytesIO(data), utf8_start, cp932_error.start) from None


UTF8_BOM_BYTES = b"\xef\xbb\xbf"
READ_BYTES = 1 << 16
"""How many bytes a CSV file is read at a time: memory per read, not per file."""

_CODECS: dict[str, str] = {UTF8: "utf-8", UTF8_BOM: "utf-8-sig", CP932: "cp932"}
"""The Python codec that reads each encoding `csv_encoding` reports (utf-8-sig drops the BOM)."""

_CP932_UNASSIGNED = re.compile("[\x80\uf8f0-\uf8f3]")
"""What Python's cp932 codec makes of the single bytes 0x80, 0xA0 and 0xFD-0xFF, which are no
character in CP932 (Microsoft's table leaves them unassigned; no two-byte sequence decodes to
these): U+0080 and the private-use U+F8F0-U+F8F3. Stored, they would be junk."""


def _decode_cp932(data: bytes) -> str:
    """`data` decoded as CP932, strictly: raises UnicodeDecodeError at the first byte that is not
    CP932, including the bytes Python's codec maps to junk (`_CP932_UNASSIGNED`)."""
    text = data.decode("cp932")
    junk = _CP932_UNASSIGNED.search(text)
    if junk is not None:
        start = len(text[:junk.start()].encode("cp932"))  # CP932 round-trips with the same byte lengths
        raise UnicodeDecodeError("cp932", data, start, start + 1, "byte is not assigned in CP932")
    return text


def csv_encoding(path: str | Path) -> str:
    """The encoding of the CSV file at `path`, found as `decode_csv_bytes` finds it (UTF-8 with or
    without BOM strictly, else CP932 strictly) but reading READ_BYTES at a time, never the whole file.

    Returns "UTF-8", "UTF-8 with BOM" or "CP932" (see `_CODECS` for the codec that reads it).
    Raises ImportRowError as `decode_csv_bytes` does, with the same message, for a file neither
    encoding can read.
    """
    path = Path(path)
    with path.open("rb") as handle:
        bom = handle.read(len(UTF8_BOM_BYTES)) == UTF8_BOM_BYTES
    utf8_start = _first_bad_byte(lambda: path.open("rb"), "utf-8", len(UTF8_BOM_BYTES) if bom else 0)
    if utf8_start is None:
        return UTF8_BOM if bom else UTF8
    cp932_start = _first_bad_byte(lambda: path.open("rb"), "cp932")
    if cp932_start is None:
        return CP932
    raise _undecodable(str(path), lambda: path.open("rb"), utf8_start, cp932_start)


def _first_bad_byte(open_bytes: Callable[[], BinaryIO], codec: str, skip: int = 0) -> int | None:
    """The offset of the first byte (from byte `skip` on) that `codec` cannot decode, None when
    all decode; read READ_BYTES at a time. For cp932 as `_decode_cp932` has it: the first byte
    the codec refuses, else the first it maps to junk (`_CP932_UNASSIGNED`)."""
    decoder = codecs.getincrementaldecoder(codec)("strict")
    fed, junk = skip, None  # fed: the bytes given to the decoder so far
    with open_bytes() as handle:
        handle.seek(skip)
        while True:
            chunk = handle.read(READ_BYTES)
            start = fed - len(decoder.getstate()[0])  # the decoder holds back a character's first bytes
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as error:  # error.object: the bytes held back, then chunk
                return start + error.start
            if codec == "cp932" and junk is None and (found := _CP932_UNASSIGNED.search(text)) is not None:
                junk = start + len(text[:found.start()].encode("cp932"))  # CP932 round-trips with the same lengths
            if not chunk:
                return junk
            fed += len(chunk)


def _undecodable(path: str, open_bytes: Callable[[], BinaryIO], utf8: int, cp932: int) -> ImportRowError:
    """The refusal of a CSV file that UTF-8 cannot read from byte `utf8` on, nor CP932 from byte
    `cp932`, naming the byte, line and field where the encoding that got further stops."""
    codec, start = ("utf-8-sig", utf8) if utf8 >= cp932 else ("cp932", cp932)
    with open_bytes() as handle:
        handle.seek(start)
        byte = handle.read(1)[0]
        handle.seek(0)
        with _text_lines(handle, codec, end=start) as prefix:
            line, field_name = _csv_position(prefix)
    where = "" if utf8 == cp932 else msg("msg.import.problem.encodings_fail", utf8=utf8, cp932=cp932)
    return ImportRowError(
        path, line, field_name,
        msg("msg.import.problem.not_utf8_nor_cp932", byte=start, hex=f"{byte:02x}", where=where),
        msg("msg.import.fix.csv_encoding"),
    )


def _csv_position(lines: Iterable[str]) -> tuple[int, str | None]:
    """The starting line and column name of the CSV record in which the text `lines` ends (the
    text before an undecodable byte, as lines with their line breaks); the column is None on the
    header line or past the header's width."""
    tail = _LastLine(lines)
    reader = csv.reader(tail)
    header: list[str] | None = None
    start, last = 1, (1, [""])
    for row in reader:
        last, start = (start, row), reader.line_num + 1
        header = header if header is not None else [name.strip() for name in row]
    if tail.last is None or tail.last.endswith(("\n", "\r")):
        last = (start, [""])  # the bad byte opens a new record
    line, row = last
    if line == 1 or header is None:
        return line, None
    return line, header[len(row) - 1] if len(row) <= len(header) else None


class _LastLine:
    """The lines of a text, remembering the last one given (None before any)."""

    def __init__(self, lines: Iterable[str]):
        self._lines = iter(lines)
        self.last: str | None = None

    def __iter__(self) -> _LastLine:
        return self

    def __next__(self) -> str:
        self.last = next(self._lines)
        return self.last


class _Bytes(io.RawIOBase):
    """The bytes of an open binary file up to `end` (None: to its end), read through; each read
    adds to `position.bytes_read` (progress as a CSV file is read)."""

    def __init__(self, handle: BinaryIO, end: int | None = None, position: Position | None = None):
        super().__init__()
        self._handle, self._end, self._position = handle, end, position
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer) if self._end is None else min(len(buffer), self._end - self._read)
        count = self._handle.readinto(memoryview(buffer)[:size]) if size > 0 else 0
        self._read += count or 0
        if self._position is not None:
            self._position.bytes_read += count or 0
        return count or 0


def _text_lines(handle: BinaryIO, codec: str, *, end: int | None = None,
                position: Position | None = None) -> io.TextIOWrapper:
    """The text of an open binary file (up to byte `end`), decoded strictly with `codec`, as lines
    split at \\r\\n, \\r and \\n and kept as written (what csv.reader expects); READ_BYTES at a time."""
    raw = io.BufferedReader(_Bytes(handle, end, position), buffer_size=READ_BYTES)
    return io.TextIOWrapper(raw, encoding=codec, errors="strict", newline="")


@contextmanager
def _open_csv_text(path: Path, encoding: str, position: Position | None = None) -> Iterator[io.TextIOWrapper]:
    """The CSV file at `path` as lines of text in `encoding` (as `csv_encoding` found it); its
    bytes read are counted in `position`."""
    with path.open("rb") as handle, _text_lines(handle, _CODECS[encoding], position=position) as text:
        yield text


def _csv_rows(path: Path, columns: tuple[str, ...], required: tuple[str, ...], extra: str = "ignored",
              also_known: frozenset[str] = frozenset(), position: Position | None = None) -> Source[_Row]:
    """Open a CSV file and stream its rows as _Row (values by column name, line = the record's
    starting line); rows with only empty cells are skipped. Each unknown column gives a warning
    saying what happens to it (`extra`), worded as for an unknown JSONL field. A quoted cell that
    is never closed (the csv module reads it to the end of the file) is refused at its line.

    The file is read READ_BYTES at a time: once here to find its encoding (`csv_encoding`) and
    check its header, once as the rows are read (counted in `position`, for progress).
    Raises ImportRowError here for undecodable bytes and a bad header (missing, doubled or
    unclosed-quote), and while the rows are read for a quote never closed and a row with more
    cells than the header.
    """
    encoding = csv_encoding(path)
    header, alone = _csv_header(path, encoding)
    if alone:  # the header is the only record: an unclosed quote may have swallowed the file
        _check_quotes_on_disk(path, encoding, 1, None)
    _check_header(str(path), header, required)
    warnings = [unknown_name_warning(str(path), 1, "column", name, columns, extra)
                for name in header if name and name not in columns and name not in also_known]
    warnings += [english("msg.import.warn.unnamed_column", path=str(path), line=1, number=number)
                 for number, name in enumerate(header, start=1) if not name]
    return Source(str(path), "csv", encoding, _csv_records(path, encoding, header, position), warnings)


def _csv_header(path: Path, encoding: str) -> tuple[list[str], bool]:
    """The header's column names (stripped; [] for no record at all) and whether it is the file's
    only record."""
    with _open_csv_text(path, encoding) as text:
        reader = csv.reader(text)
        first = next(reader, None)
        return [name.strip() for name in first or []], next(reader, None) is None


def _numbered_records(reader: Any) -> Iterator[tuple[int, list[str], bool]]:
    """(starting line, cells, whether it is the last record) for each record of a csv reader."""
    start, previous = 1, None
    for cells in reader:
        if previous is not None:
            yield (*previous, False)
        previous, start = (start, cells), reader.line_num + 1
    if previous is not None:
        yield (*previous, True)


def unknown_name_warning(path: str, line: int, noun: str, name: str, known: Iterable[str], what: str) -> str:
    """The one warning for an unknown CSV column (noun "column") or JSONL field (noun "field"):
    "FILE, line N: column 'x' is not one of a, b, c; it is ignored" (`what`: "ignored" or
    EXTRA_CASE_FIELDS). The English text of a msg.import.warn.* message (the app finds it again
    with messages.recognize)."""
    key = _UNKNOWN_NAME_WARNINGS.get((noun, what))
    if key is None:
        return f"{path}, line {line}: {noun} '{name}' is not one of {', '.join(known)}; it is {what}"
    return english(key, path=path, line=line, name=name, known=", ".join(known))


def _other_separator(header: list[str], required: tuple[str, ...]) -> Message | None:
    """"semicolons" or "tabs" (as messages) when the header is one cell that those split into all
    the required names (a file saved with another separator, as Excel does in some locales), else None."""
    if len(header) != 1:
        return None
    for mark, name in ((";", "semicolons"), ("\t", "tabs")):
        if all(column in (part.strip() for part in header[0].split(mark)) for column in required):
            return msg(f"msg.import.separator.{name}")
    return None


def _check_header(path: str, header: list[str], required: tuple[str, ...]) -> None:
    if not any(header):
        raise ImportRowError(path, 1, None, msg("msg.import.problem.no_header"),
                             msg("msg.import.fix.header", columns=", ".join(required)))
    missing = [name for name in required if name not in header]
    separator = _other_separator(header, required)
    if separator is not None:
        raise ImportRowError(path, 1, None, msg("msg.import.problem.other_separator", header=header[0][:80],
                                                separator=separator), msg("msg.import.fix.commas"))
    if missing:
        raise ImportRowError(path, 1, None, msg("msg.import.problem.missing_columns", columns=", ".join(missing)),
                             msg("msg.import.fix.add_columns", required=", ".join(required)))
    doubled = sorted({name for name in header if name and header.count(name) > 1})
    if doubled:
        raise ImportRowError(path, 1, None, msg("msg.import.problem.doubled_columns", columns=", ".join(doubled)),
                             msg("msg.import.fix.keep_one_each"))


def _csv_records(path: Path, encoding: str, header: list[str], position: Position | None) -> Iterator[_Row]:
    """The rows after the header, read from disk as they are asked for (see `_csv_rows`)."""
    with _open_csv_text(path, encoding, position) as text:
        records = _numbered_records(csv.reader(text))
        next(records, None)  # the header
        for line, cells, last in records:
            if last:  # a quote never closed swallows the rest of the file into the last record
                _check_quotes_on_disk(path, encoding, line, header)
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(header):
                raise ImportRowError(str(path), line, None,
                                     msg("msg.import.problem.extra_cells", cells=len(cells), columns=len(header)),
                                     msg("msg.import.fix.quote_commas"))
            values = dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=True))
            nul = next((name for name, value in values.items() if "\x00" in value), None)
            if nul is not None:
                raise ImportRowError(str(path), line, nul or None, msg("msg.import.problem.nul_cell"),
                                     msg("msg.import.fix.remove_nul"))
            yield _Row(str(path), line, values)


_QUOTED_BODY = re.compile(r'(?:[^"]++|"")*+')
"""The inside of a quoted cell, up to its closing quote ("" is a quote) or the end of the line."""
_UNQUOTED_REST = re.compile(r"[^,\r\n]*")


def check_quotes_closed(path: str, text: str, line: int, header: list[str] | None) -> None:
    """Raises ImportRowError at the line (and column) where a quoted cell of the record starting
    on `line` of `text` (a whole CSV file, decoded) opens and is never closed; see
    `_check_quotes_in_lines`."""
    lines = io.StringIO(text, newline="")
    _check_quotes_in_lines(path, itertools.islice(lines, line - 1, None), line, header)


def _check_quotes_on_disk(path: Path, encoding: str, line: int, header: list[str] | None) -> None:
    """`check_quotes_closed` for the CSV file at `path`, read in `encoding` from disk a line at a
    time from `line` on (the lines before it are read and dropped)."""
    with _open_csv_text(path, encoding) as text:
        _check_quotes_in_lines(str(path), itertools.islice(text, line - 1, None), line, header)


def _check_quotes_in_lines(path: str, lines: Iterable[str], line: int, header: list[str] | None) -> None:
    """Raises ImportRowError at the line (and column) where a quoted cell of the record whose text
    is `lines` (from its starting `line` to the end of the file, line breaks kept) opens and is
    never closed. The scan follows the csv module's default (excel, non-strict) reading: a quote
    opens a quoted cell only at the start of a cell, "" inside it is a quote, and text after the
    closing quote or a quote inside an unquoted cell is kept as is. Holds one line at a time."""
    lines = iter(lines)
    text, pos, index = next(lines, ""), 0, 0
    while pos < len(text):
        if text[pos] == '"':
            closed = _past_quoted_cell(lines, text, pos + 1, line)
            if closed is None:
                name = header[index] if header and index < len(header) else None
                raise ImportRowError(path, line, name, msg("msg.import.problem.unclosed_quote"),
                                     msg("msg.import.fix.close_quote"))
            text, pos, line = closed
        pos = _UNQUOTED_REST.match(text, pos).end()
        if pos >= len(text) or text[pos] != ",":
            return  # the record ends here
        pos, index = pos + 1, index + 1


def _past_quoted_cell(lines: Iterator[str], text: str, pos: int, line: int) -> tuple[str, int, int] | None:
    """Where a quoted cell whose inside starts at `pos` of `text` (line number `line`; `lines`: the
    lines after it) is closed: (the text of that line, the offset past the closing quote, its line
    number); None when the file ends first."""
    pos = _QUOTED_BODY.match(text, pos).end()
    while pos == len(text):  # the cell goes on past this line (a line ends in a line break, never in a quote)
        following = next(lines, None)
        if following is None:
            return None
        text, line = following, line + 1
        pos = _QUOTED_BODY.match(text).end()
    return text, pos + 1, line


def _open_table(path: Path, fmt: str, columns: tuple[str, ...], required: tuple[str, ...],
                skips: Skips | None = None) -> Source[_Row]:
    if fmt == "csv":
        return _csv_rows(path, columns, required)
    encoding, rows = _json_lines(path, skips)
    warnings: list[str] = []
    return Source(str(path), "jsonl", encoding, _warn_unknown_keys(rows, columns, _UnknownKeys(warnings)), warnings)


class _UnknownKeys:
    """Collects one warning per unknown JSONL field and place (a field unknown in every passage
    is reported once, at its first line), worded as for an unknown CSV column."""

    def __init__(self, warnings: list[str]):
        self.warnings = warnings
        self._reported: set[tuple[str, str]] = set()

    def check(self, row: _Row, known: tuple[str, ...], what: str = "ignored", also_known: frozenset[str] = frozenset()) -> None:
        unknown = [key for key in row.values if key not in known and key not in also_known]
        if not unknown:
            return
        place = re.sub(r"\[\d+\]", "[]", row.prefix)
        for key in unknown:
            if (place, key) not in self._reported:
                self._reported.add((place, key))
                self.warnings.append(unknown_name_warning(row.path, row.line, "field", row.prefix + key, known, what))


def _warn_unknown_keys(rows: Iterator[_Row], known: tuple[str, ...], unknown: _UnknownKeys) -> Iterator[_Row]:
    for row in rows:
        unknown.check(row, known)
        yield row


# ---------------------------------------------------------------- native JSON lines


NATIVE_CASE_KEYS = ("case_id", "question", "answer", "slice", "split", "metadata", "passages", "claims")
NATIVE_PASSAGE_KEYS = ("passage_id", "doc_id", "version", "title", "text")
NATIVE_CLAIM_KEYS = ("claim_id", "text", "passage_ids")
EXTRA_CASE_FIELDS = "kept as case metadata"
"""What happens to a case field (JSONL) or column (CSV) the format does not know."""

_UNKNOWN_NAME_WARNINGS: dict[tuple[str, str], str] = {
    ("column", "ignored"): "msg.import.warn.unknown_column_ignored",
    ("column", EXTRA_CASE_FIELDS): "msg.import.warn.unknown_column_kept",
    ("field", "ignored"): "msg.import.warn.unknown_field_ignored",
    ("field", EXTRA_CASE_FIELDS): "msg.import.warn.unknown_field_kept",
}
"""The message of `unknown_name_warning` by (noun, what happens to the name)."""

_NATIVE_REQUIRED: dict[str, tuple[str, Message, bool]] = {
    # key: (what to write, what it is, whether it may be empty)
    "question": ('"question": "..."', msg("msg.import.native.question"), False),
    "answer": ('"answer": "..."', msg("msg.import.native.answer"), True),
    "slice": ('"slice": "..."', msg("msg.import.native.slice"), False),
    "split": ('"split": "dev"', msg("msg.import.native.split", choices=", ".join(SPLITS)), False),
    "doc_id": ('"doc_id": "..."', msg("msg.import.native.if_unknown"), True),
    "version": ('"version": "..."', msg("msg.import.native.if_unknown"), True),
    "title": ('"title": "..."', msg("msg.import.native.if_none"), True),
}


def _read_native(path: Path, skips: Skips | None = None) -> Source[CaseRecord]:
    position = Position(path.stat().st_size)
    encoding, rows = _json_lines(path, skips, position)
    warnings: list[str] = []
    unknown = _UnknownKeys(warnings)
    cases = skipping(rows, lambda row: _native_case(row, unknown), skips)
    return Source(str(path), "jsonl", encoding, _unique_cases(str(path), cases, skips=skips), warnings, position)


def skipping(items: Iterable[S], make: Callable[[S], T], skips: Skips | None) -> Iterator[T]:
    """make(item) for each item (a row, a record); with `skips`, an item it refuses (ImportRowError)
    is noted there and left out; without, the refusal is raised. The one place a partial import
    (`--partial`) turns a bad line into a skipped one, for readers and services alike."""
    for row in items:
        try:
            yield make(row)
        except ImportRowError as error:
            if skips is None:
                raise
            skips.add(error)


def _native_case(row: _Row, unknown: _UnknownKeys) -> CaseRecord:
    """One native case. Every key of the format must be there (`_NATIVE_REQUIRED`); question,
    slice and split must not be empty; fields the format does not know go into the metadata."""
    unknown.check(row, NATIVE_CASE_KEYS, EXTRA_CASE_FIELDS, also_known=RAG_SPELLINGS)
    case_id = row.ident("case_id")
    question, answer, slice_ = (_required_text(row, key, "case") for key in ("question", "answer", "slice"))
    _require_key(row, "split", "case")
    split = row.choice("split", SPLITS, required=True)
    metadata = _native_metadata(row)
    passage_rows = [row.child("passages", i, value) for i, value in enumerate(_list(row, "passages"))]
    for passage_row in passage_rows:
        unknown.check(passage_row, NATIVE_PASSAGE_KEYS)
    passages = _distinct_passages(row, "passages", [_native_passage(passage_row) for passage_row in passage_rows])
    metadata.update(_rag_fields(row, [passage.passage_id for passage in passages], metadata))
    claims_raw = _list(row, "claims")
    if not claims_raw:
        raise row.error("claims", msg("msg.import.problem.no_claims"), msg("msg.import.fix.give_claims"))
    claim_rows = [row.child("claims", i, value) for i, value in enumerate(claims_raw)]
    for claim_row in claim_rows:
        unknown.check(claim_row, NATIVE_CLAIM_KEYS)
    return CaseRecord(
        case_id=case_id, question=question, answer=answer, slice=slice_, split=split, metadata=metadata,
        passages=passages, claims=tuple(_native_claim(claim_row, passages) for claim_row in claim_rows), line=row.line,
    )


def _rag_fields(row: _Row, passage_ids: list[str], metadata: dict[str, Any], *, id_list: str = "json") -> dict[str, Any]:
    """The RAG case fields of a record (`RAG_CASE_FIELDS`, either spelling) by their snake_case
    names, checked: id lists are lists of ids naming passages of the case (`passage_ids`; in CSV,
    id_list="csv", one cell of ids separated by ";"), expected_behavior and corpus_release are
    strings, principal a string or an object. Raises ImportRowError for both spellings of one
    field, a wrong type, an unknown passage, or a value that contradicts the same key in the
    case's `metadata`."""
    found: dict[str, Any] = {}
    for snake, camel in RAG_CASE_FIELDS.items():
        given = [name for name in dict.fromkeys((snake, camel)) if row.values.get(name) not in (None, "")]
        if len(given) > 1:
            raise row.error(camel, msg("msg.import.problem.both_spellings", snake=snake, camel=camel),
                            msg("msg.import.fix.keep_spelling", snake=snake))
        if not given:
            continue
        name = given[0]
        if snake in RAG_ID_LISTS:
            value: Any = _rag_id_list(row, name, passage_ids, id_list)
        elif snake == "principal" and isinstance(row.values[name], dict):
            value = _nfc_json(row.values[name])
        else:
            value = row.text(name)
        if snake in metadata and metadata[snake] != value:
            raise row.error(name, msg("msg.import.problem.rag_and_metadata", name=name, snake=snake),
                            msg("msg.import.fix.keep_one"))
        found[snake] = value
    return found


def _rag_id_list(row: _Row, name: str, passage_ids: list[str], id_list: str) -> list[str]:
    raw = row.values[name]
    if id_list == "csv":
        ids = [nfc(part.strip()) for part in raw.split(";") if part.strip()]
        paths = [name] * len(ids)
    else:
        if not isinstance(raw, list):
            raise row.error(name, msg("msg.import.problem.expected_id_list", type=_json_type(raw)),
                            msg("msg.import.fix.id_list", name=name))
        paths = [f"{name}[{i}]" for i in range(len(raw))]
        ids = [row.check_ident(path, item) for path, item in zip(paths, raw, strict=True)]
    for path, evidence_id in zip(paths, ids, strict=True):
        if evidence_id not in passage_ids:
            raise row.error(path, msg("msg.import.problem.unknown_evidence", id=evidence_id,
                                      passages=_ids_or_none(passage_ids)), msg("msg.import.fix.name_case_passages"))
    return ids


def _ids_or_none(ids: Iterable[str]) -> Message | str:
    """Ids separated by commas, or "none" (as a message) when there are none."""
    return ", ".join(ids) or msg("msg.import.none")


def _require_key(row: _Row, key: str, noun: str) -> None:
    """Raises ImportRowError saying what to add when `key` is missing from the record or null.
    noun: "case" or "passage"."""
    write, meaning, _may_be_empty = _NATIVE_REQUIRED[key]
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


def _required_text(row: _Row, key: str, noun: str) -> str:
    """The text of a key every record must have; empty is allowed only where `_NATIVE_REQUIRED`
    says so ("" if ...)."""
    _require_key(row, key, noun)
    value = _version(row, key) if key == "version" else row.text(key)
    if key in _ID_KEYS:
        row.check_id_length(key, value)
    _write, meaning, may_be_empty = _NATIVE_REQUIRED[key]
    if not value.strip() and not may_be_empty:
        raise row.error(key, msg("msg.import.problem.empty"),
                        msg("msg.import.fix.write_noun_key", noun=_noun(noun), name=key, meaning=meaning))
    return value


def _native_metadata(row: _Row) -> dict[str, Any]:
    """The case's metadata object plus the fields the format does not know (as in the flat CSV,
    where unknown columns are kept as case metadata). A field also in metadata must agree."""
    metadata = _metadata(row)
    for key, value in row.values.items():
        if key in NATIVE_CASE_KEYS or key in RAG_SPELLINGS:
            continue
        name, value = nfc(key), _nfc_json(value)
        if name in metadata and metadata[name] != value:
            raise row.error(key, msg("msg.import.problem.field_and_metadata", name=name),
                            msg("msg.import.fix.keep_one_metadata"))
        metadata[name] = value
    return metadata


def _list(row: _Row, key: str) -> list[Any]:
    value = row.values.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise row.error(key, msg("msg.import.problem.expected_list", type=_json_type(value)),
                        msg("msg.import.fix.write_list", name=key))
    return value


def _metadata(row: _Row) -> dict[str, Any]:
    value = row.values.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise row.error("metadata", msg("msg.import.problem.expected_object_value", type=_json_type(value)),
                        msg("msg.import.fix.metadata_object", braces=BRACES))
    return _nfc_json(value)


def _native_passage(row: _Row) -> PassageRecord:
    return PassageRecord(
        passage_id=row.ident("passage_id"),
        doc_id=_required_text(row, "doc_id", "passage"),
        version=_required_text(row, "version", "passage"),
        title=_required_text(row, "title", "passage"),
        text=row.text("text", required=True),
        line=row.line,
        prefix=row.prefix,
    )


def _version(row: _Row, key: str) -> str:
    value = row.values.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return row.text(key)


def _native_claim(row: _Row, passages: tuple[PassageRecord, ...]) -> ClaimRecord:
    claim_id = row.ident("claim_id")
    text = row.text("text", required=True)
    known = [passage.passage_id for passage in passages]
    if "passage_ids" not in row.values or row.values["passage_ids"] is None:
        if not known:
            raise row.error("passage_ids", msg("msg.import.problem.claim_no_passages", id=claim_id),
                            msg("msg.import.fix.give_passages"))
        return ClaimRecord(claim_id, text, tuple(known), row.line, prefix=row.prefix, names=NATIVE_CLAIM_NAMES)
    ids = tuple(row.check_ident(f"passage_ids[{i}]", value) for i, value in enumerate(_list(row, "passage_ids")))
    if not ids:
        raise row.error("passage_ids", msg("msg.import.problem.claim_no_passages", id=claim_id),
                        msg("msg.import.fix.name_a_passage"))
    for i, passage_id in enumerate(ids):
        if passage_id not in known:
            raise row.error(f"passage_ids[{i}]", msg("msg.import.problem.unknown_passage", id=passage_id,
                                                     passages=_ids_or_none(known)), msg("msg.import.fix.add_passage"))
    if _first_duplicate(ids) is not None:
        raise row.error("passage_ids", msg("msg.import.problem.passage_twice", id=_first_duplicate(ids)),
                        msg("msg.import.fix.name_once"))
    return ClaimRecord(claim_id, text, ids, row.line, prefix=row.prefix, names=NATIVE_CLAIM_NAMES)


NATIVE_CLAIM_NAMES: dict[str, str] = {"case_id": "claim_id"}
"""A claim's content key "case_id" (its case) is reported at the claim's id: the claim moved."""


def _distinct_passages(row: _Row, key: str, passages: list[PassageRecord]) -> tuple[PassageRecord, ...]:
    """The case's passages with identical repeats dropped; a repeat with other content is refused."""
    by_id: dict[str, PassageRecord] = {}
    for passage in passages:
        first = by_id.setdefault(passage.passage_id, passage)
        if first.content() != passage.content():
            raise row.error(key, msg("msg.import.problem.passage_twice_in_record", id=passage.passage_id,
                                     differing=_differing(first.content(), passage.content())),
                            msg("msg.import.fix.another_id"))
    return tuple(by_id.values())


def _first_duplicate(values: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def _unique_cases(path: str, cases: Iterable[CaseRecord], claim_field: str = "claims[{}].claim_id",
                  passage_field: str = "passages[{}].passage_id", skips: Skips | None = None) -> Iterator[CaseRecord]:
    """Drop identical repeats of a case; refuse a case, claim or passage id given twice in the file
    with other content (a passage shown in several cases is normal; its later copies are marked
    `first=False`). The *_field templates name the field in errors, formatted with the claim's or
    passage's index in its case. With `skips`, a refused case is noted and skipped, and the ids it
    brought are forgotten."""
    seen = _Seen(path, "case"), _Seen(path, "claim"), _Seen(path, "passage")
    for case in cases:
        added: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        try:
            unique = _unique_case(case, seen, added, claim_field, passage_field)
        except ImportRowError as error:
            if skips is None:
                raise
            skips.add(error)
            for kind, keys in zip(seen, added, strict=True):
                kind.forget(keys)
            continue
        if unique is not None:
            yield unique


def _unique_case(case: CaseRecord, seen: tuple[_Seen, _Seen, _Seen], added: tuple[list[Any], list[Any], list[Any]],
                 claim_field: str, passage_field: str) -> CaseRecord | None:
    seen_cases, seen_claims, seen_passages = seen
    whole = (case.question, case.answer, case.slice, case.split, _canonical(case.metadata),
             tuple((p.passage_id, p.doc_id, p.version, p.title, p.text) for p in case.passages),
             tuple((c.claim_id, c.text, c.passage_ids, c.votes) for c in case.claims))
    if not seen_cases.first_time(case.case_id, whole, case.line, "case_id"):
        return None
    added[0].append(case.case_id)
    passages = []
    for i, passage in enumerate(case.passages):
        if seen_passages.first_time(passage.passage_id, passage.content(), passage.line, passage_field.format(i)):
            added[2].append(passage.passage_id)
            passages.append(passage)
        else:
            passages.append(replace(passage, first=False))
    claims = []
    for i, claim in enumerate(case.claims):
        if seen_claims.first_time(claim.claim_id, {"case_id": case.case_id, "text": claim.text, "passage_ids": claim.passage_ids},
                                  claim.line, claim_field.format(i)):
            added[1].append(claim.claim_id)
            claims.append(claim)
    return replace(case, passages=tuple(passages), claims=tuple(claims))


# ---------------------------------------------------------------- flat CSV


def _read_case_csv(path: Path, skips: Skips | None = None) -> Source[CaseRecord]:
    position = Position(path.stat().st_size)
    rows = _csv_rows(path, CSV_CASE_COLUMNS, CSV_CASE_REQUIRED, extra=EXTRA_CASE_FIELDS, also_known=RAG_SPELLINGS,
                     position=position)
    cases = _group_csv(rows.path, rows.records, _last_lines(path, rows.encoding, "case_id"), skips)
    return Source(rows.path, "csv", rows.encoding, cases, rows.warnings, position)


def _last_lines(path: Path, encoding: str, column: str) -> dict[str, int]:
    """The starting line of the last record of each value (NFC) of `column` in a CSV file whose
    header has that column: read once, a record at a time; only the values and lines are kept."""
    last: dict[str, int] = {}
    with _open_csv_text(path, encoding) as text:
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


def _group_csv(path: str, rows: Iterable[_Row], last_lines: dict[str, int],
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
    seen (`_Seen`) and the passages of the cases already given out."""

    def __init__(self, path: str, last_lines: dict[str, int]):
        self.path, self.last_lines = path, last_lines
        self.open: OrderedDict[str, _CsvCase] = OrderedDict()
        self.seen = _Seen(path, "case"), _Seen(path, "claim"), _Seen(path, "passage")
        self.given: set[str] = set()  # passage ids of the cases given out
        self.broken: dict[str, int] = {}  # case id -> the line of its first refused row (partial imports)

    def add(self, row: _Row, added: tuple[list[Any], list[Any], list[Any]]) -> None:
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

    def ready(self, row: _Row) -> Iterator[tuple[str, _CsvCase]]:
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
        (see `_rag_fields`; id lists are one cell of ids separated by ";")."""
        case_id, case = item
        claims = tuple(ClaimRecord(claim_id, text, tuple(shown), line, names=CSV_CLAIM_NAMES)
                       for claim_id, (text, line, shown) in case.claims.items())
        fields = case.row
        metadata = {key: value for key, value in fields["metadata"].items() if value}
        metadata.update(_rag_fields(_Row(self.path, case.line, fields["rag"]), list(case.passages), metadata, id_list="csv"))
        passages = tuple(passage if passage_id not in self.given else replace(passage, first=False)
                         for passage_id, passage in case.passages.items())
        self.given.update(case.passages)
        return CaseRecord(
            case_id=case_id, question=fields["question"], answer=fields["answer"], slice=fields["slice"],
            split=fields["split"], metadata=metadata, passages=passages, claims=claims, line=case.line,
        )


def _csv_case_fields(row: _Row) -> dict[str, Any]:
    extra = {nfc(key): nfc(value) for key, value in row.values.items()
             if key and key not in CSV_CASE_COLUMNS and key not in RAG_SPELLINGS}
    rag = {key: value for key, value in row.values.items() if key in RAG_SPELLINGS and value.strip()}
    for key, value in rag.items():
        row.check_length(key, value)
    return {"question": row.text("question"), "answer": row.text("answer"),
            "slice": row.check_id_length("slice", row.text("slice")),
            "split": row.choice("split", SPLITS, required=False), "metadata": extra, "rag": rag}


def _csv_passage(row: _Row) -> PassageRecord:
    return PassageRecord(
        passage_id=row.ident("passage_id"),
        doc_id=row.check_id_length("doc_id", row.text("doc_id")),
        version=row.text("passage_version"),
        title=row.text("passage_title"),
        text=row.text("passage_text", required=True),
        line=row.line,
        names=CSV_PASSAGE_NAMES,
    )


# ---------------------------------------------------------------- CLIMATE-FEVER


CLIMATE_FEVER_VOTES = tuple(CLIMATE_FEVER_LABELS)


def _read_climate_fever(path: Path, skips: Skips | None = None) -> Source[CaseRecord]:
    position = Position(path.stat().st_size)
    encoding, rows = _json_lines(path, skips, position)
    cases = _unique_cases(str(path), skipping(rows, _climate_fever_case, skips), "evidences[{}]", "evidences", skips)
    return Source(str(path), "climate-fever", encoding, cases, [], position)


CLIMATE_FEVER_CLAIM_NAMES: dict[str, str] = {"text": "claim", "case_id": "claim_id", "passage_ids": "evidence_id"}
CLIMATE_FEVER_PASSAGE_NAMES: dict[str, str] = {"text": "evidence", "title": "article", "doc_id": "article"}


def _climate_fever_case(row: _Row) -> CaseRecord:
    """One CLIMATE-FEVER claim as one case: one claim per evidence, `{claim_id}-{k}`, shown with
    that evidence sentence only; votes kept by slot, mapped to our label names."""
    case_id = row.ident("claim_id")
    text = row.text("claim", required=True)
    evidences = _list(row, "evidences")
    if not evidences:
        raise row.error("evidences", msg("msg.import.problem.no_evidences"), msg("msg.import.fix.give_evidences"))
    passages, claims = [], []
    for k, value in enumerate(evidences):
        evidence = row.child("evidences", k, value)
        passage = _climate_fever_passage(evidence)
        passages.append(passage)
        claims.append(ClaimRecord(f"{case_id}-{k}", text, (passage.passage_id,), row.line, _climate_fever_votes(evidence),
                                  names={**CLIMATE_FEVER_CLAIM_NAMES, "passage_ids": f"evidences[{k}].evidence_id"}))
    return CaseRecord(
        case_id=case_id, question=text, answer="", slice=CLIMATE_FEVER_SLICE, split=CLIMATE_FEVER_SPLIT,
        metadata={"claim_label": row.text("claim_label"), "source": CLIMATE_FEVER_SOURCE},
        passages=_distinct_passages(row, "evidences", passages), claims=tuple(claims), line=row.line,
    )


def _climate_fever_passage(evidence: _Row) -> PassageRecord:
    article = evidence.text("article")
    return PassageRecord(evidence.ident("evidence_id"), article, "", article, evidence.text("evidence", required=True),
                         evidence.line, prefix=evidence.prefix, names=CLIMATE_FEVER_PASSAGE_NAMES)


def _climate_fever_votes(evidence: _Row) -> tuple[str | None, ...]:
    votes = _list(evidence, "votes")
    mapped = []
    for j, vote in enumerate(votes):
        if vote is not None and vote not in CLIMATE_FEVER_LABELS:
            raise evidence.error(f"votes[{j}]", msg("msg.import.problem.unknown_vote", vote=repr(vote)),
                                 msg("msg.import.fix.vote_choices", choices=", ".join(CLIMATE_FEVER_VOTES)))
        mapped.append(None if vote is None else CLIMATE_FEVER_LABELS[vote])
    return tuple(mapped)


# ---------------------------------------------------------------- labels and adjudications


def _label_value(row: _Row) -> str:
    value = row.values.get("label")
    if value is None or value == "":
        raise row.error("label", msg("msg.import.problem.missing_value"),
                        msg("msg.import.fix.give_label", choices=", ".join(LABELS)))
    if value not in LABELS:
        raise row.error("label", msg("msg.import.problem.unknown_label", value=repr(value)),
                        msg("msg.import.fix.use_one_of", choices=", ".join(LABELS)))
    return value


def _severity(row: _Row, label: str) -> str | None:
    """The row's severity, None when empty. Raises ImportRowError for an unknown one, and for one
    given with the label support (a supported claim has no severity; a release would show it)."""
    severity = row.choice("severity", SEVERITIES, required=False) or None
    if severity is not None and label == "support":
        raise row.error("severity", msg("msg.import.problem.severity_on_support", severity=severity),
                        msg("msg.import.fix.severity_on_support"))
    return severity


def _passage_id_list(row: _Row) -> tuple[str, ...]:
    value = row.values.get("passage_ids")
    if value is None or value == "":
        return ()
    if isinstance(value, str):  # CSV: "p1;p2" (spaces around the separators are formatting)
        return tuple(nfc(part.strip()) for part in value.split(";") if part.strip())
    if not isinstance(value, list):
        raise row.error("passage_ids", msg("msg.import.problem.expected_list", type=_json_type(value)),
                        msg("msg.import.fix.passage_ids_list"))
    return tuple(row.check_ident(f"passage_ids[{i}]", item) for i, item in enumerate(value))


def _label_record(row: _Row) -> LabelRecord:
    claim_id, labeler, label = row.ident("claim_id"), row.name("labeler"), _label_value(row)
    return LabelRecord(
        claim_id=claim_id,
        labeler=labeler,
        label=label,
        rationale=row.text("rationale"),
        passage_ids=_passage_id_list(row),
        severity=_severity(row, label),
        line=row.line,
    )


def _unique_rows(records: Iterable[T], seen: _Seen, key: Callable[[T], tuple[Any, Any]], field_name: str,
                 skips: Skips | None = None) -> Iterator[T]:
    """The records, identical repeats dropped; a repeat with other content is refused (with
    `skips`: noted and left out, the first one kept)."""
    checked = skipping(records, lambda record: (record, seen.first_time(*key(record), record.line, field_name)), skips)  # type: ignore[attr-defined]
    return (record for record, first in checked if first)


def _label_key(record: LabelRecord) -> tuple[tuple[str, str], dict[str, Any]]:
    content = {"label": record.label, "rationale": record.rationale,
               "passage_ids": record.passage_ids, "severity": record.severity}
    return (record.claim_id, record.labeler), content


def _adjudication_record(row: _Row) -> AdjudicationRecord:
    claim_id, adjudicator, label = row.ident("claim_id"), row.name("adjudicator"), _label_value(row)
    return AdjudicationRecord(
        claim_id=claim_id,
        adjudicator=adjudicator,
        label=label,
        rationale=row.text("rationale"),
        severity=_severity(row, label),
        line=row.line,
    )


def _adjudication_key(record: AdjudicationRecord) -> tuple[str, dict[str, Any]]:
    content = {"adjudicator": record.adjudicator, "label": record.label,
               "rationale": record.rationale, "severity": record.severity}
    return record.claim_id, content
