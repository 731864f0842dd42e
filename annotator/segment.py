"""An answer cut into sentences, each a span of the answer: the claims a RAG answer makes, one
verifiable statement each, for labelers to check.

Plain functions over plain strings (no Streamlit, no database).

Lines first. Every line break (those of `str.splitlines`: LF, CRLF, CR, U+2028, ...) ends a
sentence, and a line's leading bullet marker ("- ", "* ", "+ ", "•", "・", "1. ", "1) ", "１．",
"（1）", "①", ...) is no part of its sentence: a bullet item or a line is always a sentence of its
own, or several.

Then each line is cut by a sentence splitter, chosen per language from what
`benchmarks/segmentation.py` measured (docs/design.md, "Claims from answers"):
- English: sentencex (Wikimedia, MIT; its rules in Rust): abbreviations (Dr., U.S., e.g., i.e.,
  vs., a.m.) and decimals (3.5) do not end a sentence.
- Japanese: ja_sentence_segmenter (MIT), which cuts after 。 ! ? ！ ？ but not inside 「」 or ().
  It is given the line with （） written as (), one code point for one, so that full-width brackets
  protect what they hold too; ． ends no sentence, so １２．５ stays one number. The spans are over
  the answer as written.
A piece a splitter cuts off with no letter or digit (the "!" of "?!", a closing bracket) stays
with the sentence before it. A cut never falls inside a grapheme cluster (Unicode Standard Annex
#29: an emoji ZWJ sequence, a flag, a letter and its combining marks).

Language: given, or read from the text. It is Japanese when the text holds hiragana and more
Japanese-script characters (kana and kanji) than Latin-script words; otherwise English. Kanji and
katakana alone (a company name quoted in an English answer) do not make Japanese.

Cost: 100,000 answers of three sentences take about 4 s in Japanese and 2 s in English on one
core, most of it the splitters' own (`python benchmarks/segmentation.py` measures it).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate

import regex
import sentencex
from ja_sentence_segmenter.split.simple_splitter import split_punctuation

from annotator.errors import InvalidValueError

LANGUAGES = ("ja", "en")


@dataclass(frozen=True)
class Segment:
    """One sentence of an answer: answer[start:end] == text.

    start, end: offsets in code points (Python str indices) into the answer; end is exclusive.
    text: the sentence, without the whitespace around it nor a leading bullet marker.
    """
    start: int
    end: int
    text: str


def sentences(answer: str, *, language: str | None = None) -> list[Segment]:
    """The sentences of `answer`, in order, as non-overlapping spans of it.

    answer: any text; line breaks and bullet markers are read as above (module docstring).
    language: "ja", "en", or None to read it from the text (`detect_language`).
    Returns [] for an answer with no sentence: empty, only whitespace, punctuation or symbols
    (a sentence holds at least one letter or digit).
    Raises InvalidValueError (msg.segment.bad_language) for another language.
    """
    if language is None:
        language = detect_language(answer)
    elif language not in LANGUAGES:
        raise InvalidValueError.of("msg.segment.bad_language", value=repr(language), choices=", ".join(LANGUAGES))
    return sentences_cut_by(answer, _cut_japanese if language == "ja" else _cut_english)


def sentences_cut_by(answer: str, cut: Callable[[str], Iterable[int]]) -> list[Segment]:
    """The sentences of `answer` as `sentences` finds them, with each line cut by `cut` instead of
    a language's splitter (benchmarks/segmentation.py compares splitters this way).

    cut: a line (stripped, without line break nor bullet marker) -> the offsets into it where a
        sentence ends, increasing; offsets outside 1..len(line)-1 are ignored.
    """
    found: list[Segment] = []
    for start, end in _lines(answer):
        start, end = _content(answer, start, end)
        if start < end:
            found.extend(_line_segments(answer, start, end, cut))
    return found


_HIRAGANA = re.compile("[\u3041-\u309f]")
_JAPANESE_RUN = re.compile("[\u3041-\u30ff\u31f0-\u31ff\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                           "\uff66-\uff9f\U00020000-\U0003134f]+")
_LATIN_WORD = regex.compile(r"\p{Latin}+")


def detect_language(text: str) -> str:
    """"ja" when `text` holds hiragana and more Japanese-script characters (hiragana, katakana,
    kanji) than Latin-script words; otherwise "en".

    A character of Japanese is counted against a word of English: "RAGはRetrieval-Augmented
    Generationの略です。" is Japanese (5 characters to 4 words), "Toyota (トヨタ自動車) is based in
    Aichi." is English (no hiragana).
    """
    if _HIRAGANA.search(text) is None:
        return "en"
    latin_words = len(_LATIN_WORD.findall(text))
    return "ja" if latin_words == 0 or sum(map(len, _JAPANESE_RUN.findall(text))) > latin_words else "en"


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line of `text`, its line break included."""
    ends = list(accumulate(len(line) for line in text.splitlines(keepends=True)))
    return list(zip([0, *ends], ends))


# A bullet marker at a line's start, and the space after it: a symbol, a number of 1-3 digits with
# its "." or ")" ("1.", "１．", "2)"), a number in brackets ("(1)", "（１）") or a circled one ("①").
# "-", "*" and "+" need a space after them, so "-5 °C", "**bold**" and "+3%" keep theirs; a number's
# "." followed by a digit is a decimal point, so "1.5 million" keeps its number.
_BULLET = re.compile(r"(?:[-*+](?=\s)|[•‣◦▪▫●○■□◆◇・·]|[0-9０-９]{1,3}[.)．）](?![0-9０-９])|[(（][0-9０-９]{1,3}[)）]"
                     r"|[\u2460-\u2473\u2776-\u277f\u2780-\u2793])\s*")


def _content(text: str, start: int, end: int) -> tuple[int, int]:
    """The line text[start:end] without the whitespace around it (its line break too) and its
    leading bullet marker."""
    line = text[start:end]
    stripped = line.lstrip()
    start += len(line) - len(stripped)
    end = start + len(stripped.rstrip())
    bullet = _BULLET.match(text, start, end)
    if bullet is not None:
        start = bullet.end()
    return start, end


_WORD = re.compile(r"[^\W_]")  # a letter or a digit, of any script


def _line_segments(text: str, start: int, end: int, cut: Callable[[str], Iterable[int]]) -> list[Segment]:
    """The sentences of the line text[start:end] (stripped, no bullet), cut at `cut(line)`."""
    line = text[start:end]
    cuts = [at for at in cut(line) if 0 < at < len(line)]
    if not cuts:
        return [Segment(start, end, line)] if _WORD.search(line) else []
    spans: list[list[int]] = []  # [left, right, has a word]
    previous = 0
    for at in [*_whole_clusters(line, cuts), len(line)]:
        piece = line[previous:at]
        left = previous + len(piece) - len(piece.lstrip())
        right = previous + len(piece.rstrip())
        previous = at
        if left < right:
            worded = _WORD.search(line, left, right) is not None
            if spans and not (worded and spans[-1][2]):
                # a closing "!" or bracket stays with the sentence before it, a leading symbol with the one after it
                spans[-1][1:] = [right, worded or spans[-1][2]]
            else:
                spans.append([left, right, worded])
    return [Segment(start + left, start + right, line[left:right]) for left, right, worded in spans if worded]


_GRAPHEME = regex.compile(r"\X")
# The characters that join a grapheme cluster with a neighbour (Unicode Standard Annex #29's
# Grapheme_Cluster_Break values other than Other, Control, CR and LF): in a line without any, every
# offset is a cluster boundary. _MAYBE_JOINING is a cheaper superset that is searched first
# (combining marks, the scripts whose letters take marks, Hangul, variation selectors, ZWJ, and
# everything past the Basic Multilingual Plane, emoji included); a test checks that it holds them all.
_JOINING = regex.compile(r"[\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=Prepend}\p{GCB=Regional_Indicator}"
                         r"\p{GCB=L}\p{GCB=V}\p{GCB=T}\p{GCB=LV}\p{GCB=LVT}]")
_MAYBE_JOINING = re.compile("[\u0300-\u036f\u0483-\u0489\u0591-\u1fff\u200c\u200d\u20d0-\u20ff\u2cef-\u2cf1\u2d7f"
                            "\u2de0-\u2dff\u302a-\u302f\u3099\u309a\ua000-\ud7ff\ufb1e\ufe00-\ufe0f\ufe20-\ufe2f"
                            "\uff9e\uff9f\U00010000-\U0010ffff]")


def _whole_clusters(line: str, cuts: list[int]) -> list[int]:
    """`cuts` (offsets into `line`, increasing) moved forward to the end of the grapheme cluster
    they fall in, without repeats."""
    if _MAYBE_JOINING.search(line) is None or _JOINING.search(line) is None:
        return cuts
    ends = [match.end() for match in _GRAPHEME.finditer(line)]
    moved: list[int] = []
    for at in cuts:
        at = ends[bisect_left(ends, at)]
        if not moved or at > moved[-1]:
            moved.append(at)
    return moved


def _cut_english(line: str) -> list[int]:
    """Where sentencex ends a sentence in `line` (offsets into it, the last one, len(line), left out)."""
    return piece_ends(line, sentencex.segment("en", line))


# Full-width ASCII (U+FF01-FF5E) as ASCII and the ideographic space as a space, one code point for
# one, so an offset into the folded text is an offset into the text.
_FOLD = str.maketrans({**{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}, "\u3000": " "})


def fold_width(text: str) -> str:
    """`text` with full-width ASCII (！？（）１２．５ＡＢ, U+FF01-FF5E) written as ASCII and the
    ideographic space (U+3000) as a space, one code point for one: len(fold_width(t)) == len(t)."""
    return text.translate(_FOLD)


# ja_sentence_segmenter ends a sentence after these, and protects those inside 「」 and (). It is
# given ！ and ？ to end sentences too, and a line with （） written as () so that full-width
# brackets protect what they hold; ∯ (U+222F), its own marker, is written as □ so that the text it
# sees never holds one. Each is one code point for one: offsets stay those of the line.
_JA_ENDS = "。!?！？"
_JA_END_INSIDE = re.compile(f"[{_JA_ENDS}].")


def _cut_japanese(line: str) -> list[int]:
    """Where ja_sentence_segmenter ends a sentence in `line`."""
    if _JA_END_INSIDE.search(line) is None:
        return []  # no end of sentence before the line's last character: nothing to cut
    seen = line.replace("（", "(").replace("）", ")").replace("\u222f", "\u25a1")
    return piece_ends(seen, split_punctuation(seen, punctuations=_JA_ENDS))


def piece_ends(line: str, pieces: Iterable[str]) -> list[int]:
    """The offsets in `line` where each of `pieces` ends, but the end of the line: the cuts of a
    splitter that returns a line's sentences as strings (consecutive parts of it, whitespace kept).
    A piece not found in `line` after the one before it adds no cut."""
    ends, at = [], 0
    for piece in pieces:
        found = line.find(piece, at) if piece else -1
        if found < 0:
            continue
        at = found + len(piece)
        ends.append(at)
    return [end for end in ends if end < len(line)]
