"""JSON lines: a file streamed one line at a time as `Row`s (blank lines skipped; a line that is
not UTF-8, not JSON, not one object, that gives a key twice or holds a character no database
stores is refused naming its line), and `loads_unique`, json.loads refusing a repeated key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator.errors import ImportRowError
from annotator.formats.reading import BRACES, UTF8, UTF8_BOM, Row, Skips, json_type, nfc
from annotator.formats.records import Position
from annotator.messages import Message, msg


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
    if not "".join(value).isascii():  # one check of all keys at once (the common case: all ASCII)
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
    if isinstance(text, str) and not text.startswith("\ufeff"):
        return _DECODER.decode(text)  # what json.loads does for such text, without a new decoder per call
    return json.loads(text, object_pairs_hook=_unique_keys)


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
"""The one decoder of `loads_unique` (json.loads builds one per call when given a hook)."""


def json_lines(path: Path, skips: Skips | None = None, position: Position | None = None) -> tuple[str, Iterator[Row]]:
    """The encoding and a stream of (line, object) of a JSON-lines file, blank lines skipped.
    With `skips`, a line that is not UTF-8 or not a JSON object is noted there and skipped."""
    with path.open("rb") as handle:
        encoding = UTF8_BOM if handle.read(3) == b"\xef\xbb\xbf" else UTF8
    return encoding, _json_rows(path, skips, position if position is not None else Position())


def _json_rows(path: Path, skips: Skips | None, position: Position) -> Iterator[Row]:
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
            yield Row(str(path), number, values)


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


MAX_NESTING = 64
"""The deepest nesting of arrays and objects a line may have: no record of ours needs more than a
few levels, and the readers' recursive steps (NFC of metadata, the character checks) must never
meet the interpreter's recursion limit."""


def _nesting(value: Any) -> int:
    """How deeply arrays and objects nest in `value` (a scalar 0, [] 1, [[1]] 2), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _too_deep(path: Path, number: int) -> ImportRowError:
    return ImportRowError(str(path), number, None, msg("msg.import.problem.too_deep", most=MAX_NESTING),
                          msg("msg.import.fix.too_deep"))


def _parse_json_object(path: Path, text: str, number: int) -> dict[str, Any]:
    text = text.rstrip("\r\n")  # an error at the end of the line is in this line, not at column 1 of the next
    try:
        value = loads_unique(text)
    except RecursionError:  # nested past the interpreter's limit: json gives up before MAX_NESTING is checked
        raise _too_deep(path, number) from None
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
        raise ImportRowError(str(path), number, None, msg("msg.import.problem.expected_object", type=json_type(value)),
                             msg("msg.import.fix.one_object_per_line", braces=BRACES))
    if text.count("[") + text.count("{") > MAX_NESTING and _nesting(value) > MAX_NESTING:  # counting is cheap; walking is not
        raise _too_deep(path, number)
    # a NUL or a lone surrogate can only come from a \\u escape (raw ones are refused above)
    bad = _unstorable_character(value) if _MAYBE_UNSTORABLE.search(text) else None
    if bad is not None:
        raise ImportRowError(str(path), number, None, bad, msg("msg.import.fix.unstorable"))
    return value


def _json_fix(message: str) -> Message:
    if message.startswith("Invalid control character"):
        return msg("msg.import.fix.json_control")
    return msg("msg.import.fix.json_line", example='{"case_id": "c1", ...}')
