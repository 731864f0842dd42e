"""Values from users and files made safe to print to a terminal.

A name, id or file value may hold an escape sequence (ESC [ ... : colours, a moved cursor, a
changed window title, a hidden line), a C1 control (U+009B is a one-character CSI on some
terminals) or a bidirectional control (U+202E shows the rest of the line reversed). The command
line prints every such value through `terminal_safe`, and its JSON through `json_safe`.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 controls (ESC, CR, BEL, ... and tab and line feed), DEL, C1 controls, the bidirectional
controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the line and paragraph separators."""

_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What json.dumps(ensure_ascii=False) leaves raw of _UNSAFE (it escapes C0 itself)."""


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(value: object, keep: str = "") -> str:
    """`str(value)` with every control character shown escaped: ESC as `\\x1b`, U+009B as
    `\\x9b`, U+202E as `\\u202e` (the other characters, any script, unchanged).

    keep: characters left as they are, for a text the program composed itself: "\\t" for a
    line whose columns are tab-separated, "\\n\\t" for several lines (a message, a report).
    """
    text = str(value)
    if not _UNSAFE.search(text):
        return text
    if keep:
        return "".join(part if part in keep else terminal_safe(part) for part in re.split(f"([{re.escape(keep)}])", text))
    return _UNSAFE.sub(_escaped, text)


def json_safe(dumped: str) -> str:
    """A JSON document as json.dumps(..., ensure_ascii=False) wrote it, with the controls it
    leaves raw (DEL, C1, bidirectional controls, U+2028/U+2029) written as \\uXXXX escapes: the
    same JSON value, harmless on a terminal. Only strings can hold them, so the escapes land
    inside strings."""
    return _UNSAFE_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", dumped)
