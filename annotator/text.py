"""Checks of text people type into the app or the command line (rationales, notes, reasons,
user names), so that the same input is refused the same way on SQLite and PostgreSQL, and the
one rule for names: no invisible characters, and no name that looks like another one.

The length limits of every id and name live here (MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS):
imports, the command line and the app all refuse a longer value with the same limit."""

from __future__ import annotations

import re
import unicodedata

from annotator.errors import InvalidValueError
from annotator.messages import field_name

MAX_TEXT_CHARS = 100_000
"""The longest text a field may hold (question, answer, claim, passage text, title, rationale, ...):
a longer one is refused naming file, line, field and length (a whole document pasted into a cell,
or a quote gone astray in a CSV, rather than a passage)."""

MAX_ID_CHARS = 200
"""The longest id: case, claim, passage and doc ids, dataset names, slices. A longer one is
refused (an import names file, line and field); PostgreSQL cannot index a value of some
thousands of bytes, and no id a person reads is that long."""

MAX_NAME_CHARS = 100
"""The longest user name (labeler, adjudicator, admin; an email address for single sign-on)."""

RUN_NAME_CHARS = 100
"""The longest name of a judge run or a RAG run."""
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]*")

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
"""NUL, which PostgreSQL refuses in text, and lone surrogates, which UTF-8 cannot encode."""

_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Control and format characters (zero-width characters, bidirectional controls such as U+202E,
which turns text around), surrogates, and the line and paragraph separators."""

_DEFAULT_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]")
"""Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt): characters a font draws
as nothing, such as variation selectors, the combining grapheme joiner and the Hangul fillers,
beside the format characters of _INVISIBLE_CATEGORIES."""


_NO_MARK = frozenset({"Cc", "Cf"})
"""Characters that put no mark on the page: controls (Cc) and format characters (Cf: the
zero-width space U+200B, the marks U+200C-U+200F, the word joiner and invisible operators
U+2060-U+2064, the byte order mark U+FEFF, the bidirectional controls U+202A-U+202E and
U+2066-U+2069, ...)."""


def is_blank(value: str) -> bool:
    """Whether `value` holds no visible character: it is empty, or every character is white
    space (str.isspace) or of the Unicode general category Cc or Cf (`_NO_MARK`). The one rule
    for "blank" wherever a text is required (an import's question, answer, claims and contexts, a
    claim's new text, a reason, a rationale, a guideline): "\u200b" is refused like " ".
    A text that is not blank is stored as it was, invisible characters included."""
    return all(character.isspace() or unicodedata.category(character) in _NO_MARK for character in value)


_JOINERS = frozenset("\u200c\u200d")
"""ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER: format characters that shape Persian, Hindi and
emoji ZWJ sequences and change no letter's order, so they are shown as they are."""


def shown_as_code_point(character: str) -> bool:
    """Whether `character` is shown as its code point wherever a value from a user or a file is
    shown (the app's "[U+200B]", annotator/ui/plain.py; the command line's "\\u200b",
    annotator/terminal.py): the format characters (Cf: zero-width space, word joiner, byte order
    mark, the bidirectional controls U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, tag
    characters, ...), the controls (Cc: ESC, tab, line feed and the other C0 and C1 controls)
    and the line and paragraph separators (Zl, Zp), except the joiners (`_JOINERS`). Where a
    line break or a tab is a text's own layout, the caller keeps it."""
    return character not in _JOINERS and unicodedata.category(character) in _SHOWN_CATEGORIES


_SHOWN_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp"})


def check_free_text(field: str, value: str, most: int = MAX_TEXT_CHARS) -> str:
    """`value` (a rationale, note or reason) as typed, when every database can store it and it
    is at most `most` characters long (by default the limit an import applies to a text:
    MAX_TEXT_CHARS, 100,000).

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


def invisible_character(value: str) -> tuple[str, int] | None:
    """The first invisible character of `value` as ("U+XXXX", 1-based position), None if none.

    Invisible: the Unicode general categories Cc, Cf, Cs, Zl and Zp, and every other
    Default_Ignorable_Code_Point (see _DEFAULT_IGNORABLE). Spaces (Zs) are visible."""
    for position, character in enumerate(value, start=1):
        if unicodedata.category(character) in _INVISIBLE_CATEGORIES or _DEFAULT_IGNORABLE.match(character):
            return f"U+{ord(character):04X}", position
    return None


def clean_name(value: str) -> str:
    """A name as stored (a user name, a guideline version): NFC-normalized (a precomposed and a
    combined "é" are one name) and stripped. Raises InvalidValueError for an invisible character
    (`invisible_character`): it would make two names look alike in lists and the audit trail."""
    name = unicodedata.normalize("NFC", value).strip()
    found = invisible_character(name)
    if found:
        raise InvalidValueError.of("msg.invisible_in_name", character=found[0], position=found[1])
    return name


def is_run_name(name: object) -> bool:
    """Whether `name` may name a judge run or a RAG run: letters, digits and `. _ : + -` (ASCII),
    starting with a letter or digit, at most RUN_NAME_CHARS characters. One rule for both kinds
    of run, each refused in its own words (msg.judge.bad_name, msg.run.bad_name)."""
    return isinstance(name, str) and len(name) <= RUN_NAME_CHARS and _RUN_NAME.fullmatch(name) is not None


def user_name(value: str) -> str:
    """A user name as stored (`clean_name`), at most MAX_NAME_CHARS characters long.
    Raises InvalidValueError for an invisible character or a longer name."""
    name = clean_name(value)
    if len(name) > MAX_NAME_CHARS:
        raise InvalidValueError.of("msg.name_too_long", length=len(name), limit=MAX_NAME_CHARS)
    return name


def only_case_differs(name: str, other: str) -> bool:
    """Whether `other` (an existing name that `name` is taken for) differs from `name` only in
    upper and lower case; else it is `name` or only looks like it (`name_skeletons`)."""
    return name != other and name.lower() == other.lower()


def name_skeletons(name: str) -> tuple[str, str]:
    """What `name` looks like, as two keys: two names that share the first key, or the second,
    are taken for one person.

    Both follow UTS #39 (Unicode Technical Standard #39, "Unicode Security Mechanisms", section
    4, the skeleton: every character replaced by the prototype of its class in Unicode's
    confusables.txt, so Cyrillic "а" is Latin "a", and "I", "l" and "1" are one), after NFKC
    (full-width "ａ" is "a") and followed by NFKC and case folding again, as UTS #39 asks of a
    case-insensitive comparison. The second key case-folds before the skeleton (Cyrillic "І"
    folds to "і", which looks like "i"); the first does not, so that a capital "I" still meets
    "l" ("AOI" and "AOl"). The confusables data and the skeleton are the `disarm` library's (MIT;
    confusables.txt of Unicode 17), run to a fixed point. A key that would be empty is the
    case-folded name itself, so that it still differs from every other name.
    """
    folded = unicodedata.normalize("NFKC", name)
    return _skeleton(folded), _skeleton(folded.casefold())


def _skeleton(text: str) -> str:
    import disarm  # imported when a name is first compared: the command line's start does without it

    skeleton = unicodedata.normalize("NFKC", disarm.skeleton_key(text, digit_policy="tr39")).casefold()
    return skeleton or text.casefold()
