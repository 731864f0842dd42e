"""The layer every reader stands on: one record of input (`Row`, each value checked and refused
with file, line and field), the lines a partial import skips (`Skips`, `skipping`), where a
refusal is (`where_message`, `refusal_message`), the input file checked before anything is read
(`check_input_file`), repeats found by id and content digest (`Seen`), an id given on two lines
refused whatever the content (`OnePerId`), a file without a record refused (`not_empty`),
unknown fields and columns warned about (`unknown_name_warning`, `UnknownKeys`), and NFC (`nfc`;
never NFKC: ① and ㈱ stay as written). Pure parsing: no database."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from annotator.errors import AnnotatorError, ImportFileError, ImportRowError
from annotator.messages import Message, english, msg
from annotator.text import MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS, invisible_character, is_blank

T = TypeVar("T")
S = TypeVar("S")


UTF8, UTF8_BOM, CP932 = "UTF-8", "UTF-8 with BOM", "CP932"


@dataclass(frozen=True)
class Row:
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

    def child(self, key: str, index: int, values: Any) -> Row:
        name = f"{key}[{index}]"
        if not isinstance(values, dict):
            raise self.error(name, msg("msg.import.problem.expected_object", type=json_type(values)),
                             msg("msg.import.fix.write_object", braces=BRACES))
        return Row(self.path, self.line, values, f"{self.prefix}{name}.")

    def text(self, key: str, *, required: bool = False) -> str:
        value = self.values.get(key)
        if type(value) is str and value and len(value) <= MAX_TEXT_CHARS and (not required or not is_blank(value)):
            return unicodedata.normalize("NFC", value)  # the common case, checked quickly
        if value is None or value == "" or (required and isinstance(value, str) and is_blank(value)):
            if required:
                raise self.error(key, msg("msg.import.problem.missing_value"), msg("msg.import.fix.non_empty", name=key))
            return ""
        if not isinstance(value, str):
            raise self.error(key, msg("msg.import.problem.expected_string", type=json_type(value)),
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
            raise self.error(key, msg("msg.import.problem.expected_id", type=json_type(value)),
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


def nfc_json(value: Any) -> Any:
    """A JSON value with every string and key in NFC (lists and objects at any depth)."""
    if isinstance(value, str):
        return nfc(value)
    if isinstance(value, list):
        return [nfc_json(item) for item in value]
    if isinstance(value, dict):
        return {nfc(key): nfc_json(item) for key, item in value.items()}
    return value


BRACES = "{...}"
"""A JSON object as the fixes write it: a message field, so that no catalog text escapes its braces."""

_JSON_TYPES: dict[type, str] = {bool: "bool", int: "number", float: "number", str: "string", list: "list",
                                dict: "object", type(None): "null"}


def json_type(value: Any) -> Message | str:
    """What a JSON value is, as a message ("a number", "an object"; msg.import.json.*)."""
    kind = _JSON_TYPES.get(type(value))
    return type(value).__name__ if kind is None else msg(f"msg.import.json.{kind}")


_LINE_BITS, _DIGEST_BITS = 40, 64


_DIGEST_MASK = (1 << _DIGEST_BITS) - 1


class Seen:
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
"""The messages of `Seen` by its kind of record (the others: msg.import.fix.repeat_id)."""


def _digests(content: Any) -> list[int]:
    """64-bit digests of a content: one per value of a dict (in its key order), else one."""
    if isinstance(content, dict):
        try:
            return [hash(value) & _DIGEST_MASK for value in content.values()]  # all hashable: the common case
        except TypeError:
            return [_digest(value) for value in content.values()]
    return [_digest(content)]


def _digest(value: Any) -> int:
    """hash() of a hashable value (strings, tuples of them: the common case, fast), else of its
    `canonical` form (lists, dicts). A list and a tuple never digest alike, as they never compare
    equal."""
    try:
        return hash(value) & _DIGEST_MASK
    except TypeError:
        return hash(canonical(value)) & _DIGEST_MASK


class OnePerId:
    """Refuses a record whose id an earlier line gave, even with the same content (a run file
    gives each case once, a judge run labels each claim once), naming both lines.
    Memory: one small int per id.

    path: the file. field_name: the records' id attribute, also the field the refusal names
        ("case_id", "claim_id"). problem, fix: the refusal's message keys (msg.import.problem.*,
        msg.import.fix.*); the problem is given id= (the repeated id) and line= (its first line).
    """

    def __init__(self, path: str, field_name: str, problem: str, fix: str):
        self.path, self.field_name, self.problem, self.fix = path, field_name, problem, fix
        self._lines: dict[str, int] = {}

    def check(self, record: T) -> T:
        """`record` (any object with `line` and the id attribute) when its id is new to the file.
        Raises ImportRowError on the record's line and id field otherwise."""
        ident = getattr(record, self.field_name)
        line = record.line
        first = self._lines.setdefault(ident, line)
        if first != line:
            raise Row(self.path, line, {}).error(self.field_name, msg(self.problem, id=ident, line=first), msg(self.fix))
        return record


def not_empty(path: str, records: Iterable[T], skips: Skips | None, empty: str) -> Iterator[T]:
    """The records, as they are read; once they end, ImportFileError `empty` (a
    msg.import.file.* key, given path=) if there was none and no line was skipped since this call
    (`skips` is counted now, when the file is opened: notes an earlier file left do not count)."""
    return _counted(path, records, skips, len(skips) if skips is not None else 0, empty)


def _counted(path: str, records: Iterable[T], skips: Skips | None, skipped_before: int, empty: str) -> Iterator[T]:
    count = 0
    for record in records:
        count += 1
        yield record
    if count == 0 and (skips is None or len(skips) == skipped_before):
        raise ImportFileError.of(empty, path=str(path))


def canonical(value: Any) -> Any:
    """A hashable form of a JSON-like value that is equal exactly when the values are equal
    (dicts compared without regard to key order, lists and tuples kept apart)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ("{}", tuple(sorted((key, canonical(item)) for key, item in value.items())))
    if isinstance(value, list):
        return ("[]", tuple(canonical(item) for item in value))
    if isinstance(value, tuple):
        return ("()", tuple(canonical(item) for item in value))
    return value


def differing(first: Any, second: Any) -> Message | str:
    """The keys whose values differ between two dict contents, as a message (msg.import.problem.differ:
    " (text, title differ)"); "" when they are not both dicts or nothing differs."""
    if not (isinstance(first, dict) and isinstance(second, dict)):
        return ""
    keys = [key for key in {**first, **second} if first.get(key) != second.get(key)]
    return msg("msg.import.problem.differ", fields=", ".join(keys)) if keys else ""


def resolve_format(path: str | Path, fmt: str, allowed: tuple[str, ...], detect: Callable[[Path], str],
                   parquet_formats: tuple[str, ...] = ()) -> str:
    """The format to read `path` as: detect(path) for "auto", else `fmt`. Raises ImportFileError for
    a file `check_input_file` refuses, and for a format not in `allowed`.
    parquet_formats: the formats whose reader also reads Parquet (a Parquet file is taken for
    them, and for "auto", whose `detect` must then name one of them for a Parquet file)."""
    check_input_file(Path(path), parquet=bool(parquet_formats) and (fmt == "auto" or fmt in parquet_formats))
    if fmt == "auto":
        return detect(Path(path))
    if fmt not in allowed:
        raise ImportFileError.of("msg.import.file.unknown_format", path=str(path), fmt=fmt, choices=", ".join(allowed))
    return fmt


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
SNIFF_BYTES = 1024
"""How much of a file's start is looked at for NUL bytes (UTF-16 without a byte order mark)."""


PARQUET_MAGIC = b"PAR1"
"""The first (and last) four bytes of a Parquet file."""


def is_parquet(path: Path) -> bool:
    """Whether the file at `path` starts as a Parquet file does (PARQUET_MAGIC)."""
    with path.open("rb") as handle:
        return handle.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC


def check_input_file(path: Path, *, parquet: bool = False) -> None:
    """Raises ImportFileError, saying what to do, unless `path` is a regular, non-empty file that is
    not UTF-16: a missing path, a folder, a device (/dev/null), a file of 0 bytes or only blank
    lines, and a UTF-16 file (byte order mark FF FE or FE FF, or NUL bytes in its first KB).
    A Parquet file (it starts with PARQUET_MAGIC) passes when `parquet` (its reader checks the
    rest), and is refused saying which format reads Parquet otherwise."""
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
    if head.startswith(PARQUET_MAGIC):
        if parquet:
            return
        raise ImportFileError.of("msg.import.file.parquet_elsewhere", path=str(path))
    if head.startswith(UTF16_BOMS) or head.count(b"\x00") * 4 >= len(head):
        raise ImportFileError.of("msg.import.file.utf16", path=str(path))
    if b"\x00" in head:
        offset = head.index(b"\x00")
        line = head.count(b"\n", 0, offset) + 1
        raise ImportFileError.of("msg.import.file.nul_byte", path=str(path), line=line, offset=offset)
    if not first_nonblank_line(path):
        raise ImportFileError.of("msg.import.file.blank", path=str(path))


def first_nonblank_line(path: Path) -> bytes:
    """The file's first line that holds more than blanks (its BOM dropped); b"" when none."""
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip() and raw.strip() != b"\xef\xbb\xbf":
                return raw.removeprefix(b"\xef\xbb\xbf")
    return b""


class Skips:
    """The lines a partial import skips: each as the ImportRowError that refused it, in file
    order. Readers given a Skips note a bad line here and go on, instead of raising."""

    def __init__(self) -> None:
        self.errors: list[ImportRowError] = []

    def add(self, error: ImportRowError) -> None:
        bisect.insort(self.errors, error, key=lambda noted: noted.line)  # a note may name an earlier line

    def __len__(self) -> int:
        return len(self.errors)


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


EXTRA_CASE_FIELDS = "kept as case metadata"
"""What happens to a case field (JSONL) or column (CSV) the format does not know."""

_UNKNOWN_NAME_WARNINGS: dict[tuple[str, str], str] = {
    ("column", "ignored"): "msg.import.warn.unknown_column_ignored",
    ("column", EXTRA_CASE_FIELDS): "msg.import.warn.unknown_column_kept",
    ("field", "ignored"): "msg.import.warn.unknown_field_ignored",
    ("field", EXTRA_CASE_FIELDS): "msg.import.warn.unknown_field_kept",
}
"""The message of `unknown_name_warning` by (noun, what happens to the name)."""


def unknown_name_warning(path: str, line: int, noun: str, name: str, known: Iterable[str], what: str) -> str:
    """The one warning for an unknown CSV column (noun "column") or JSONL field (noun "field"):
    "FILE, line N: column 'x' is not one of a, b, c; it is ignored" (`what`: "ignored" or
    EXTRA_CASE_FIELDS). The English text of a msg.import.warn.* message (the app finds it again
    with messages.recognize)."""
    key = _UNKNOWN_NAME_WARNINGS.get((noun, what))
    if key is None:
        return f"{path}, line {line}: {noun} '{name}' is not one of {', '.join(known)}; it is {what}"
    return english(key, path=path, line=line, name=name, known=", ".join(known))


class UnknownKeys:
    """Collects one warning per unknown JSONL field and place (a field unknown in every passage
    is reported once, at its first line), worded as for an unknown CSV column."""

    def __init__(self, warnings: list[str]):
        self.warnings = warnings
        self._reported: set[tuple[str, str]] = set()

    def check(self, row: Row, known: tuple[str, ...], what: str = "ignored", also_known: frozenset[str] = frozenset()) -> None:
        unknown = [key for key in row.values if key not in known and key not in also_known]
        if not unknown:
            return
        place = re.sub(r"\[\d+\]", "[]", row.prefix)
        for key in unknown:
            if (place, key) not in self._reported:
                self._reported.add((place, key))
                self.warnings.append(unknown_name_warning(row.path, row.line, "field", row.prefix + key, known, what))


def ids_or_none(ids: Iterable[str]) -> Message | str:
    """Ids separated by commas, or "none" (as a message) when there are none."""
    return ", ".join(ids) or msg("msg.import.none")


def list_value(row: Row, key: str) -> list[Any]:
    """The JSON list at `key` ([] when missing or null). Raises ImportRowError for another type."""
    value = row.values.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise row.error(key, msg("msg.import.problem.expected_list", type=json_type(value)),
                        msg("msg.import.fix.write_list", name=key))
    return value
