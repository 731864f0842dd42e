"""Values from users and files made safe to print to a terminal.

A name, id or file value may hold an escape sequence (ESC [ ... : colours, a moved cursor, a
changed window title, a hidden line), a C1 control (U+009B is a one-character CSI on some
terminals), a bidirectional control (U+202E shows the rest of the line reversed) or an invisible
character (U+200B makes "b-\u200b1" print like "b-1"). The command line prints every such value
through `terminal_safe`, and its JSON through `json_safe`: the characters escaped are those the
app shows as "[U+XXXX]" (text.shown_as_code_point, one set for both).
"""

from __future__ import annotations

import re

from annotator.text import shown_as_code_point

_BEYOND_ASCII = re.compile("[\x7f-\U0010ffff]")
"""Where json_safe looks: json.dumps escapes C0 controls itself, and ASCII is printable."""


def _escaped(character: str) -> str:
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(value: object, keep: str = "") -> str:
    """`str(value)` with every control, format and separator character (text.shown_as_code_point)
    shown escaped: ESC as `\\x1b`, U+009B as `\\x9b`, U+202E as `\\u202e`, U+200B as `\\u200b`,
    U+E0001 as `\\U000e0001` (every other character, any script, unchanged; the zero width joiner
    of an emoji sequence too).

    keep: characters left as they are, for a text the program composed itself: "\\t" for a
    line whose columns are tab-separated, "\\n\\t" for several lines (a message, a report).
    """
    text = str(value)
    if text.isprintable():  # false for every Cc, Cf, Zl and Zp character: the common case
        return text
    return "".join(_escaped(c) if c not in keep and shown_as_code_point(c) else c for c in text)


def _json_escaped(found: re.Match[str]) -> str:
    character = found.group()
    if not shown_as_code_point(character):
        return character
    code = ord(character)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a surrogate pair, as JSON writes a character beyond U+FFFF (RFC 8259, section 7)
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def json_safe(dumped: str) -> str:
    """A JSON document as json.dumps(..., ensure_ascii=False) wrote it, with the characters it
    leaves raw that text.shown_as_code_point escapes (DEL, C1, format characters such as U+200B
    and the bidirectional controls, U+2028/U+2029) written as \\uXXXX escapes: the same JSON
    value, harmless on a terminal. Only strings can hold them, so the escapes land inside
    strings; the document's own line breaks stay."""
    if dumped.replace("\n", "").isprintable():
        return dumped
    return _BEYOND_ASCII.sub(_json_escaped, dumped)
