"""How the app shows a value that came from a user or a file (ids, names, texts, slices, dataset,
file and release names, rationales, hold notes, the address's `?claim=` / `?history=`): as plain
text, whatever it holds. One place for the rule; every page goes through it.

- `plain_text`: for places that show text as it is (st.text, table cells, select options, the
  passage HTML before it is escaped). Invisible and direction-changing characters (`INVISIBLE`:
  the bidirectional embeddings, overrides and isolates, zero-width spaces, the byte order mark,
  terminal control characters) are shown as a visible "[U+202E]"; the stored text keeps them.
  A value with right-to-left letters is wrapped in FIRST STRONG ISOLATE ... POP DIRECTIONAL
  ISOLATE (U+2068, U+2069; Unicode Standard Annex #9, section 2.7), so it cannot reorder the
  words around it; any other value is returned unchanged.
- `plain_markdown`: the same, for places Streamlit renders as Markdown (st.markdown, captions,
  messages, headings, widget labels): every character that would make Markdown there is
  backslash-escaped, so `[x](y)`, `![x](y)`, `<img>`, `:red[x]`, `$x$`, `**x**` read as typed, never as a link, an
  image, a colour, math or formatting. Streamlit also turns `:streamlit:` and `:material_x:`
  into a logo image or an icon, and "http://...", "www...." and "name@host" into links, after
  the Markdown is parsed (an escape does not stop that), so a WORD JOINER (U+2060, invisible, no
  line break) is put inside each of them ("http:\u2060//", "www\u2060.", "@\u2060"); copied from the
  page, such a value holds it.
- `md`: a catalog string (i18n.t) with its text fields through `plain_markdown`: the catalog's
  own Markdown stays, what fills it is plain; `message_markdown` / `error_markdown` do the same
  for a service's Message and an error.

No Streamlit here: strings in, strings out.
"""

from __future__ import annotations

import re

from annotator.messages import Joined, Message
from annotator.text import shown_as_code_point
from annotator.ui.i18n import t

KEEP = frozenset("\n\t")
"""Characters of the invisible classes shown as they are: line breaks and tabs (a text's own
layout). ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER are never shown as code points
(text.shown_as_code_point: they shape Persian, Hindi and emoji sequences)."""


def _invisible(char: str) -> bool:
    """Whether `char` is shown as its code point: text.shown_as_code_point (format characters,
    controls, line and paragraph separators; the one set the command line escapes too), except
    KEEP."""
    return char not in KEEP and shown_as_code_point(char)


_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\U00010800-\U00010fff\U0001e800-\U0001efff]")
"""Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko, ... and their presentation forms):
a value holding one is isolated."""

ISOLATE_START, ISOLATE_END = "\u2068", "\u2069"
"""FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE."""


def visible(text: str) -> str:
    """`text` with each invisible or direction-changing character (`_invisible`) written as
    "[U+XXXX]"; every other character as it is."""
    if text.isprintable() and "\u200b" not in text:  # the common case: nothing to show
        return text
    return "".join(f"[U+{ord(c):04X}]" if _invisible(c) else c for c in text)


def plain_text(value: object) -> str:
    """`value` (any object; str() of it) for display as plain text: invisible and bidirectional
    control characters visible (`visible`), and isolated when it holds right-to-left letters."""
    text = visible(str(value))
    return f"{ISOLATE_START}{text}{ISOLATE_END}" if _RTL.search(text) else text


_ANYWHERE = frozenset("\\`*[]<>$|~^{}@")
"""Characters escaped wherever they are: code, emphasis, links and autolinks, HTML, math,
tables, strikethrough, directives' attributes, email autolinks. (":" and "&" only where they
make something: `_colons`, `_INLINE`; "Note: text" and "A & B" stay as they are.)"""
_INLINE = re.compile(r"!(?=\\\[)|(?<![^\W_])_|_(?![^\W_])|(?<=www)\.|&(?=#?\w+;)", re.IGNORECASE)
"""Escaped where they make Markdown: "!" before "[" (an image), "_" not inside a word (emphasis;
snake_case stays as it is), the "." of "www." (an autolink), "&" of an entity ("&lt;")."""
_SHORTCODE = re.compile(r"(?=(:[\w+-][\w+-]*:))")
"""Every `:name:` (overlapping ones too): an emoji, icon or logo shortcode."""
_LINE_START = re.compile(r"(?m)^([ \t]*)([#+\-=>]|\d+(?=[.)]))")
"""At the start of a line: a heading, a list item, a setext underline, a quote; "1." / "1)" (an
ordered list, the "." or ")" is escaped)."""
_AFTER_PARSE = re.compile(r"(?<=\\:)(?=streamlit\\:|material\\?[_/])|(?<=:)(?=//)|(?<=www)(?=\\\.)|(?<=\\@)",
                          re.IGNORECASE)
"""Where Streamlit would still make something from escaped text, since it looks for it in the
parsed text (see the module's docstring): after the colon of `:streamlit:` (a logo image),
`:material_` and `:material/` (an icon); in "http://", "www." and "name@host" (GitHub Markdown's
autolinks, found in the parsed text too)."""


def _colons(text: str) -> set[int]:
    """The offsets of the colons of `text` that could make something: one right before a
    non-space character (`:red[`, `:smile:`, `http:`, a directive) and one that closes a
    `:name:` shortcode. A colon before a space or at the end ("Note: ...") makes nothing."""
    found = {n for n, c in enumerate(text) if c == ":" and n + 1 < len(text) and not text[n + 1].isspace()}
    for code in _SHORTCODE.finditer(text):
        found.add(code.start() + len(code.group(1)) - 1)
    return found


def _escape(text: str) -> str:
    """Backslash-escape what would make Markdown in `text` (CommonMark lets any ASCII punctuation
    be escaped; an escaped character shows as itself)."""
    colons = _colons(text)
    text = "".join(f"\\{c}" if c in _ANYWHERE or n in colons else c for n, c in enumerate(text))
    text = _INLINE.sub(lambda found: "\\" + found.group(), text)
    return _LINE_START.sub(lambda found: found.group(1) + ((found.group(2) + "\\") if found.group(2)[0].isdigit()
                                                           else "\\" + found.group(2)), text)


def plain_markdown(value: object) -> str:
    """`value` for a place Streamlit renders as Markdown: `plain_text`, then every character that
    would make Markdown backslash-escaped, so it shows exactly as written."""
    return _AFTER_PARSE.sub("\u2060", _escape(plain_text(value)))


def _plain_field(value: object) -> object:
    """A field of a catalog string as `md` fills it: a text escaped, a Message's or a Joined's
    texts escaped inside it, anything else (numbers, vocabulary Terms) as it is."""
    if isinstance(value, str):
        return plain_markdown(value)
    if isinstance(value, Message):
        return Message(value.key, {name: _plain_field(field) for name, field in value.fields.items()})
    if isinstance(value, Joined):
        return Joined(tuple(_plain_field(part) for part in value.parts), plain_markdown(value.separator))
    return value


def md(key: str, **fields: object) -> str:
    """i18n.t(key, **fields) for a Markdown place: the catalog string's own Markdown kept, every
    text field (and every text inside a Message field) through `plain_markdown`."""
    return t(key, **{name: _plain_field(value) for name, value in fields.items()})


def message_markdown(message: Message | str) -> str:
    """A service's Message (or a plain text) in the current language, for a Markdown place: its
    fields through `plain_markdown` (a plain text escaped whole)."""
    if isinstance(message, Message):
        return md(message.key, **message.fields)
    return plain_markdown(message)


def error_markdown(error: BaseException) -> str:
    """What an error says (i18n.error_text), for a Markdown place (st.error): the fields of its
    message key through `plain_markdown`, or its whole text escaped when it has no key."""
    key = getattr(error, "key", None)
    return md(key, **getattr(error, "fields", {})) if key else plain_markdown(str(error))


_IMAGE = re.compile(r"!\[")


def guideline_markdown(markdown: str) -> str:
    """An admin's guideline Markdown as the app renders it: its formatting kept (headings, lists,
    emphasis, links), every image written out as text (`![alt](url)` shows as typed, neither an
    image nor a link), so that opening the guideline makes no reader's browser fetch anything.
    Raw HTML is not rendered anyway (Streamlit's default)."""
    return _IMAGE.sub(r"\\!\\[", markdown)
