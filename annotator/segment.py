"""An answer cut into sentences, each with its span in the answer (offsets in code points).

A plain stand-in: a sentence ends after `.`, `!`, `?`, `。`, `！` or `？` followed by white space
or the end, and at every line break; white space around a sentence is not part of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    """A piece of an answer: answer[start:end] == text (offsets in code points)."""

    start: int
    end: int
    text: str


_SENTENCE = re.compile(r"[^\n]*?(?:[.!?](?=\s|$)|[。！？]|(?=\n)|$)")


def sentences(answer: str, *, language: str | None = None) -> list[Segment]:
    """The sentences of `answer`, in order, none empty or only white space.

    language: a BCP 47 tag ("en", "ja") or None (not used here)."""
    found = []
    for match in _SENTENCE.finditer(answer):
        piece = match.group()
        stripped = piece.strip()
        if not stripped:
            continue
        start = match.start() + (len(piece) - len(piece.lstrip()))
        found.append(Segment(start, start + len(stripped), stripped))
    return found
