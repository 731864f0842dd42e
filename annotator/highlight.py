"""Reading aids for a claim's evidence: the claim's words that also occur in a passage, as spans
over the passage's text; where the claim is in its case's answer (`claim_in_answer`, from the
claim's stored span); and which passages are an old version of their document.

Plain functions over plain strings (no Streamlit, no database); the UI renders what they return.

Words. A text with any kana or kanji is cut into morphemes by SudachiPy with the core dictionary
(Works Applications, Apache-2.0; split mode B, the middle unit: 受け付け is one verb, 経費精算 two
nouns). Content words only: nouns, verbs, adjectives and adjectival nouns, not particles,
auxiliaries, symbols, pronouns, affixes, dependent verbs (する, ある, できる, なる), formal nouns
(こと, もの, ため) nor one-character words. A number and the counter after it are one word (１日,
2,000円, 23区: a claim's １日 is not matched by every 1 nor every 日). Words are compared by
Sudachi's normalized form, so 受け付けられない matches 受け付ける, ＰＣ matches PC and １日
matches 1日. Any other text is cut at letters and digits; its words are compared
case-insensitively, without English stop words or one-letter words, with a plural's final s
(ies -> y) dropped; a number keeps the letters right after it (10th, 50km) and drops its
thousands commas (2,000km matches 2000km). Latin words inside Japanese text are compared the same
way. A bare number is no word in any text: a claim's 3 would mark every 3 of a passage, which
says nothing of what the two share. Bare: only digits, full-width or of any script, with at most
decimal points and thousands commas (3, ３, 3.5, 1,000; `bare_number`), and in Japanese text any
numeral Sudachi finds without a counter after it (三 as well).
A word holds its combining marks (Hindi, Arabic with vowel marks, Thai), and a mark covers whole
grapheme clusters (the `regex` module's \\X, Unicode Standard Annex #29).

Cost: tokenizing is cached per text (`words`). Uncached, a demo claim and three passages take
about 1-2 ms (`python -m annotator.highlight` measures it on data/demo.jsonl); loading the
dictionary takes about 0.1-0.2 s, once per process.
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import regex


@dataclass(frozen=True)
class Word:
    """One content word of a text: text[start:end], compared by `key`."""
    start: int
    end: int
    key: str


@dataclass(frozen=True)
class Highlight:
    """What of a claim a passage shares.

    spans: sorted, non-overlapping (start, end) character offsets into the passage, each made of
        whole grapheme clusters; words that touch are merged into one span.
    words: the shared words as the passage writes them, unique, in the order they first occur.
    """
    spans: tuple[tuple[int, int], ...]
    words: tuple[str, ...]


_JAPANESE = re.compile(r"[\u3005\u3006\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_LATIN_WORD = regex.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*|\d+(?:[.,]\d+)*[^\W\d_]*")
"""A word of a text in any other script. The `regex` module's \\w holds the combining marks
(Unicode's Alphabetic and Mark: Hindi's vowel signs, Arabic's harakat, Thai's tone marks), which
Python's re leaves out, cutting हिंदी into ह and द."""
_CLUSTER = regex.compile(r"\X")
"""A grapheme cluster (Unicode Standard Annex #29, extended): a base and its combining marks."""
_ASCII_LETTERS = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*")

ENGLISH_STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either else ever every few for from
further had has have having he her here hers herself him himself his how i if in into is it its itself
just may me might more most must my myself neither no nor not now of off on once only or other our ours
ourselves out over own per same shall she should so some such than that the their theirs them
themselves then there these they this those through thus to too under until up upon us very via was we
were what when where which while who whom whose why will with within without would yet you your yours
yourself yourselves
""".split())

_CONTENT_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞"})
_JAPANESE_STOP_LEMMAS = frozenset({"こと", "事", "もの", "物", "ため", "為", "よう", "様", "ところ", "所", "方"})
_CHUNK = 2000
"""Characters per call to Sudachi, which refuses an input over 49,149 UTF-8 bytes."""


_BARE_NUMBER = regex.compile(r"\d+(?:[.,]\d+)*")
"""Digits of any script (the `regex` module's \\d: ASCII, full-width, Arabic-Indic, ...), with
decimal points and thousands commas between them."""


def bare_number(token: str) -> bool:
    """Whether `token` is only a number: digits (full-width ones included), with at most decimal
    points and thousands commas between them (3, ３, 3.5, 1,000, ١٢). A number with a unit or a
    counter (50km, 10th, １日, 2,000円) is not bare."""
    return _BARE_NUMBER.fullmatch(token) is not None


def _latin_key(token: str) -> str | None:
    """The comparison key of a Latin-script word or a number with its unit; None for a stop word,
    a single letter or a bare number."""
    if token[0].isdigit():  # a number, with the unit or ordinal that follows it: 10th, 50km
        return None if bare_number(token) else token.replace(",", "").casefold()
    word = token.casefold().replace("\u2019", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if word in ENGLISH_STOP_WORDS or len(word) < 2:
        return None
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word


def _latin_words(text: str) -> tuple[Word, ...]:
    out = []
    for match in _LATIN_WORD.finditer(text):
        key = _latin_key(match.group())
        if key is not None:
            out.append(Word(match.start(), match.end(), key))
    return tuple(out)


_dictionary = None
_dictionary_lock = threading.Lock()
_local = threading.local()


def _tokenizer():  # noqa: ANN202 - sudachipy.Tokenizer
    """This thread's Sudachi tokenizer (a tokenizer must not be shared between threads; the
    dictionary is loaded once per process and shared)."""
    global _dictionary
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        from sudachipy import Dictionary, SplitMode  # imported on first use: loading takes 0.2 s

        with _dictionary_lock:
            if _dictionary is None:
                _dictionary = Dictionary(dict="core")
        tokenizer = _local.tokenizer = _dictionary.tokenizer(mode=SplitMode.B)
    return tokenizer


def _chunks(text: str) -> Iterable[tuple[int, str]]:
    """(offset, piece) of `text` in pieces of at most _CHUNK characters, cut after a sentence end
    or a line break where there is one."""
    start = 0
    while start < len(text):
        end = min(start + _CHUNK, len(text))
        if end < len(text):
            cut = max(text.rfind(mark, start, end) for mark in ("。", "\n", "！", "？", ". "))
            if cut > start:
                end = cut + 1
        yield start, text[start:end]
        start = end


def _japanese_key(surface: str, pos: tuple[str, ...], normalized: str) -> str | None:
    """The comparison key of a Sudachi morpheme; None when it is no content word."""
    if pos[0] not in _CONTENT_POS or pos[1] == "非自立可能" or pos[1] == "助動詞語幹":
        return None
    if pos[1] == "数詞":
        return normalized.replace(",", "")
    folded = unicodedata.normalize("NFKC", surface)
    if _ASCII_LETTERS.fullmatch(folded):  # Sudachi reads Latin words as katakana (long -> ロング)
        return _latin_key(folded)
    if len(surface) < 2 or normalized in _JAPANESE_STOP_LEMMAS:
        return None
    return normalized.casefold()


def _counter(pos: tuple[str, ...], surface: str) -> bool:
    """Whether a morpheme after a number counts it (日, 円, 泊, 区, 条, ...)."""
    return pos[0] == "接尾辞" or (pos[0] == "名詞" and pos[1] == "普通名詞" and len(surface) == 1)


def _japanese_words(text: str) -> tuple[Word, ...]:
    tokenizer = _tokenizer()
    out = []
    for offset, piece in _chunks(text):
        morphemes = [(offset + m.begin(), offset + m.end(), m.surface(), tuple(m.part_of_speech()), m.normalized_form())
                     for m in tokenizer.tokenize(piece)]
        skip = False
        for i, (start, end, surface, pos, normalized) in enumerate(morphemes):
            if skip:  # the counter joined to the number before it
                skip = False
                continue
            if text[start:end] != surface:  # Sudachi's offsets are characters of the input; checked anyway
                continue
            key = _japanese_key(surface, pos, normalized)
            if key is not None and pos[1] == "数詞" and i + 1 < len(morphemes):
                n_start, n_end, n_surface, n_pos, n_normalized = morphemes[i + 1]
                if n_start == end and _counter(n_pos, n_surface) and text[n_start:n_end] == n_surface:
                    end, key, skip = n_end, key + n_normalized, True  # １日 is one word: not every 1, nor every 日
            if key is not None and pos[1] == "数詞" and not skip:
                key = None  # a number without its counter (３, 1,000, 三) is no word
            if key is not None:
                out.append(Word(start, end, key))
    return tuple(out)


@lru_cache(maxsize=8192)
def words(text: str) -> tuple[Word, ...]:
    """The content words of `text` in order, with their offsets (cached per text)."""
    return _japanese_words(text) if _JAPANESE.search(text) else _latin_words(text)


def highlight(claim: str, passage: str) -> Highlight:
    """The claim's content words that occur in the passage, as spans over the passage's text."""
    wanted = {word.key for word in words(claim)}
    spans: list[list[int]] = []
    shared: dict[str, None] = {}
    for word in words(passage):
        if word.key not in wanted:
            continue
        shared.setdefault(passage[word.start:word.end])
        if spans and spans[-1][1] >= word.start:
            spans[-1][1] = max(spans[-1][1], word.end)
        else:
            spans.append([word.start, word.end])
    return Highlight(_whole_clusters(passage, spans), tuple(shared))


def _whole_clusters(text: str, spans: list[list[int]]) -> tuple[tuple[int, int], ...]:
    """`spans` widened to whole grapheme clusters of `text` (a mark never starts or ends inside
    one, where it would part a letter from its vowel sign), merged where they then touch."""
    if not spans or (text.isascii() and "\r\n" not in text):  # ASCII: one cluster a character, but CR LF
        return tuple((start, end) for start, end in spans)
    bounds = [found.start() for found in _CLUSTER.finditer(text)] + [len(text)]
    out: list[list[int]] = []
    for start, end in spans:
        start = bounds[bisect_right(bounds, start) - 1]
        end = bounds[bisect_left(bounds, end)]
        if out and out[-1][1] >= start:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return tuple((start, end) for start, end in out)


MARK_STYLE = ("background-color: rgba(255, 170, 0, 0.35); color: inherit; font-weight: 700; "
              "text-decoration: underline; text-decoration-thickness: 2px; text-underline-offset: 3px")
"""A highlighted word is bold and underlined as well as coloured: never colour alone."""


def to_html(text: str, spans: Iterable[tuple[int, int]], shown: Callable[[str], str] = str, lead: str = "") -> str:
    """`text` as HTML with every span in a <mark>: all of the text is escaped (a passage is
    untrusted: its markup is shown as written, never interpreted); whitespace and line breaks
    are kept. `spans` as `highlight` returns them (sorted, non-overlapping). Each piece goes
    through `shown` before it is escaped (the app passes ui.plain.plain_text, which makes
    invisible and bidirectional control characters visible). `lead`, when given, is written
    first, in bold and escaped (a heading on the text's first line: "Generated answer: ...")."""
    parts, at = [f"<strong>{html.escape(lead)}</strong> "] if lead else [], 0
    for start, end in spans:
        parts.append(html.escape(shown(text[at:start])))
        parts.append(f'<mark style="{MARK_STYLE}">{html.escape(shown(text[start:end]))}</mark>')
        at = end
    parts.append(html.escape(shown(text[at:])))
    return ('<div style="white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.6">'
            + "".join(parts) + "</div>")


# --- the claim in its answer --------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimInAnswer:
    """A case's answer cut at its claim's place: `before + claim + after` is the answer, and
    `claim` is answer[start:end] (code points), made of whole grapheme clusters."""
    before: str
    claim: str
    after: str
    start: int
    end: int


def _comparable(text: str) -> str:
    """A claim's text as a span is compared with it: NFC, white space runs (line breaks, CRLF,
    no-break spaces) as one space, none at the ends."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def claim_in_answer(answer: str, span_start: object, span_end: object, claim_text: str) -> ClaimInAnswer | None:
    """Where the claim is in its case's answer, for the Label and Adjudicate pages to mark it in
    place; None when its stored span cannot be used, so the page marks the claim's words instead.

    answer: the case's answer; span_start, span_end: the claim's stored span (Claim.span_start,
    Claim.span_end: code points, Python str indices, answer[start:end]); claim_text: the claim.
    None when either bound is missing or not an int (a bool is none), when 0 <= start < end <=
    len(answer) does not hold, or when answer[start:end] is not the claim's text (compared by
    `_comparable`: NFC, white space collapsed): the answer or the claim changed since the span
    was taken. A span that starts or ends inside a grapheme cluster (UAX #29 extended, `\\X`: an
    emoji with its skin tone or the rest of its ZWJ sequence, a letter with its combining marks)
    is widened to whole clusters. Raises nothing.
    """
    if not all(isinstance(bound, int) and not isinstance(bound, bool) for bound in (span_start, span_end)):
        return None
    if not 0 <= span_start < span_end <= len(answer):
        return None
    if _comparable(answer[span_start:span_end]) != _comparable(claim_text) or not _comparable(claim_text):
        return None
    ((start, end),) = _whole_clusters(answer, [[span_start, span_end]])
    return ClaimInAnswer(answer[:start], answer[start:end], answer[end:], start, end)


PLACE_STYLE = ("background-color: rgba(0, 120, 255, 0.14); outline: 2px solid rgba(0, 100, 220, 0.9); "
               "outline-offset: 1px; border-radius: 3px; color: inherit; scroll-margin: 2rem")
"""The claim's place in its answer: outlined as well as tinted (a shape, never colour alone), and
named in words for a screen reader (claim_html's `label`)."""
HIDDEN_STYLE = ("position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; "
                "overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap")
"""Text a screen reader reads and the screen does not show (the common "visually hidden" pattern)."""
CLAIM_ELEMENT_ID = "annotator-current-claim"
"""The id of the claim's place in the answer: the address's #annotator-current-claim scrolls to it."""


def claim_html(placed: ClaimInAnswer, *, shown: Callable[[str], str] = str, lead: str = "",
               label: tuple[str, str] = ("", ""), claim_key: object = "") -> str:
    """The answer as HTML (as `to_html` writes it: escaped, white space kept, `lead` first in bold)
    with the claim's place (`placed`, from claim_in_answer) in one outlined <span> (PLACE_STYLE),
    id CLAIM_ELEMENT_ID and data-annotator-current-claim `claim_key` (the page's script scrolls
    the answer's box to it once per claim: ui/layout.py). `label`: (opening, closing) words around
    the claim that only a screen reader reads ("Current claim:", "End of the current claim."),
    escaped; empty ones are left out. Each piece of text goes through `shown` before it is
    escaped (ui.plain.plain_text). No other part of the answer is marked."""
    def hidden(words: str) -> str:
        return f'<span style="{HIDDEN_STYLE}">{html.escape(words)}</span>' if words else ""

    opening, closing = label
    parts = [f"<strong>{html.escape(lead)}</strong> "] if lead else []
    parts += [html.escape(shown(placed.before)),
              f'<span id="{CLAIM_ELEMENT_ID}" data-annotator-current-claim="{html.escape(str(claim_key))}" '
              f'style="{PLACE_STYLE}">{hidden(opening)}{html.escape(shown(placed.claim))}{hidden(closing)}</span>',
              html.escape(shown(placed.after))]
    return ('<div style="white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.6">'
            + "".join(parts) + "</div>")


# --- old versions ------------------------------------------------------------------------------


class Versioned(Protocol):
    """A passage as the version rule reads it (labeling.PassageView has these fields)."""
    passage_id: str
    doc_id: str
    version: str


def _version_parts(version: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A version's shape (the text between its numbers, case-folded) and its numbers."""
    pieces = re.split(r"(\d+)", version.strip().casefold())
    return tuple(pieces[0::2]), tuple(int(n) for n in pieces[1::2])


def newer_version(version: str, other: str) -> bool:
    """Whether `other` is a newer version than `version`: both have the same shape (e.g.
    "2025-04" and "2026-04", or "v2" and "v10") and other's numbers are greater, compared left to
    right as numbers. Versions of different shapes, without numbers, or empty are never ordered."""
    (shape, numbers), (other_shape, other_numbers) = _version_parts(version), _version_parts(other)
    return bool(numbers) and shape == other_shape and other_numbers > numbers


def old_versions(passages: Iterable[Versioned], outdated_ids: Iterable[str] = (),
                 known_versions: Mapping[str, Iterable[str]] | None = None) -> dict[str, str | None]:
    """Which passages are an old version of their document.

    passages: the passages known together, e.g. those a claim is shown with.
    outdated_ids: passage ids the case's own data names as outdated (the import's metadata key
        `outdated_passage_ids`), old whatever the versions say.
    known_versions: {doc_id: versions of that document found elsewhere}, e.g. among every
        passage of the dataset (labeling.versions_in_dataset); without it only `passages` count.
    Returns {passage_id: the newest version of its document among `passages` and
    `known_versions`} for each old passage; the value is None for a passage that is old only
    because `outdated_ids` names it. A passage is old when a passage of the same non-empty
    doc_id has a newer version (`newer_version`).
    """
    passages = list(passages)
    outdated = set(outdated_ids)
    known = known_versions or {}
    old: dict[str, str | None] = {}
    for passage in passages:
        versions = [other.version for other in passages if other.doc_id == passage.doc_id]
        versions += list(known.get(passage.doc_id, ()))
        newer = [version for version in versions if passage.doc_id and newer_version(passage.version, version)]
        newest = None
        for version in newer:
            if newest is None or newer_version(newest, version):
                newest = version
        if newest is not None or passage.passage_id in outdated:
            old[passage.passage_id] = newest
    return old


def _measure() -> None:
    """Print the cost of highlighting a demo claim against its passages, uncached."""
    import json
    import time
    from pathlib import Path

    cases = [json.loads(line) for line in
             (Path(__file__).resolve().parents[1] / "data" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    started = time.perf_counter()
    words("読み込み")
    loaded = time.perf_counter() - started
    pool = list(dict.fromkeys(p["text"] for case in cases for p in case["passages"]))
    claims = [claim["text"] for case in cases for claim in case["claims"]]
    pairs = [(claim, [pool[(n + k) % len(pool)] for k in range(3)]) for n, claim in enumerate(claims)]
    rounds = []
    for _ in range(7):
        started = time.perf_counter()
        for claim, passages in pairs:
            words.cache_clear()
            for passage in passages:
                highlight(claim, passage)
        rounds.append((time.perf_counter() - started) / len(pairs) * 1000)
    rounds.sort()
    print(f"dictionary load {loaded * 1000:.0f} ms; one claim and 3 passages, uncached, mean over the "
          f"{len(pairs)} demo claims: {rounds[3]:.2f} ms (median of 7 rounds; best {rounds[0]:.2f} ms)")


if __name__ == "__main__":
    _measure()
