"""Checks of text people type into the app or the command line (rationales, notes, reasons,
user names), so that the same input is refused the same way on SQLite and PostgreSQL."""

from __future__ import annotations

import re
import unicodedata

from annotator.errors import InvalidValueError
from annotator.formats import MAX_TEXT_CHARS
from annotator.messages import field_name

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
"""NUL, which PostgreSQL refuses in text, and lone surrogates, which UTF-8 cannot encode."""

_NOT_IN_A_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
"""Control characters, zero-width characters and bidirectional controls (U+202E turns text
around): invisible in a name, they would make two names look alike in lists and the audit trail."""


def check_free_text(field: str, value: str, most: int = MAX_TEXT_CHARS) -> str:
    """`value` (a rationale, note or reason) as typed, when every database can store it and it
    is at most `most` characters long (by default the limit an import applies to a text:
    formats.MAX_TEXT_CHARS, 100,000).

    Raises InvalidValueError naming `field` for a longer text, or for a NUL character or a lone
    surrogate: PostgreSQL refuses NUL in text and UTF-8 has no surrogates, so SQLite and
    PostgreSQL would differ.
    """
    if len(value) > most:
        raise InvalidValueError.of("msg.text_too_long", field=field_name(field), length=len(value), limit=most)
    found = _UNSTORABLE.search(value)
    if found:
        raise InvalidValueError.of("msg.unstorable_character", field=field_name(field),
                                   character=f"U+{ord(found.group()):04X}", position=found.start() + 1)
    return value


def clean_name(value: str) -> str:
    """A user name as stored: NFC-normalized (a precomposed and a combined "é" are one name) and
    stripped. Raises InvalidValueError for a control, zero-width or bidirectional character."""
    name = unicodedata.normalize("NFC", value).strip()
    found = _NOT_IN_A_NAME.search(name)
    if found:
        raise InvalidValueError.of("msg.invisible_in_name", character=f"U+{ord(found.group()):04X}",
                                   position=found.start() + 1)
    return name
