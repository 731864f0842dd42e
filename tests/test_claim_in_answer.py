"""The claim in its answer (annotator/highlight.py: claim_in_answer, claim_html): the answer cut at
the claim's stored span, in code points, widened to whole grapheme clusters (emoji with skin tones
and ZWJ sequences, combining marks, CRLF); no place for a span that is missing, out of range or
no longer holds the claim's text; and HTML that marks the place and nothing else, every piece of
a hostile answer (HTML, Markdown, scripts, bidirectional controls) kept as text."""

from __future__ import annotations

import html
import re

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.highlight import CLAIM_ELEMENT_ID, ClaimInAnswer, claim_html, claim_in_answer
from annotator.segment import sentences
from annotator.ui.plain import plain_text

PARIS = "Paris is the capital of France. It had 2.1 million people in 2023."


def place(answer: str, claim: str, occurrence: int = 0) -> tuple[int, int]:
    """The span of the `occurrence`-th place of `claim` in `answer`."""
    start = -1
    for _ in range(occurrence + 1):
        start = answer.index(claim, start + 1)
    return start, start + len(claim)


def clusters(text: str) -> set[int]:
    return {m.start() for m in regex.finditer(r"\X", text)} | {len(text)}


# --- where the claim is ------------------------------------------------------------------------


def test_a_span_that_holds_the_claim_cuts_the_answer_before_claim_and_after():
    assert claim_in_answer(PARIS, 32, 66, "It had 2.1 million people in 2023.") == ClaimInAnswer(
        "Paris is the capital of France. ", "It had 2.1 million people in 2023.", "", 32, 66)
    assert claim_in_answer(PARIS, 0, 31, "Paris is the capital of France.") == ClaimInAnswer(
        "", "Paris is the capital of France.", " It had 2.1 million people in 2023.", 0, 31)


def test_the_span_says_which_of_two_equal_sentences_is_the_claim():
    answer = "Yes. It is. Yes."
    assert claim_in_answer(answer, *place(answer, "Yes.", 1), "Yes.").before == "Yes. It is. "
    assert claim_in_answer(answer, *place(answer, "Yes.", 0), "Yes.").after == " It is. Yes."


@pytest.mark.parametrize("start, end", [
    (None, None), (0, None), (None, 31),  # not known
    (-1, 30), (0, 67), (40, 200), (67, 68),  # outside the answer
    (31, 31), (31, 0),  # empty or reversed
    (True, 31), (0.0, 31.0), ("0", "31"),  # not ints
])
def test_a_span_that_is_missing_or_out_of_range_gives_no_place(start, end):
    assert claim_in_answer(PARIS, start, end, "Paris is the capital of France.") is None


def test_a_span_that_no_longer_holds_the_claims_text_gives_no_place():
    assert claim_in_answer(PARIS, 0, 31, "Lyon is the capital of France.") is None  # the claim was edited
    assert claim_in_answer(PARIS, 1, 32, "Paris is the capital of France.") is None  # the answer moved under it
    assert claim_in_answer("   tail", 0, 3, "   ") is None  # white space alone is no claim
    assert claim_in_answer("", 0, 0, "") is None


def test_white_space_and_unicode_normal_forms_do_not_stop_a_match():
    answer = "First line.\r\nSecond\u00a0 line\nhere.\r\nThird."
    start, end = place(answer, "Second\u00a0 line\nhere.")
    assert claim_in_answer(answer, start, end, "Second line here.").claim == "Second\u00a0 line\nhere."
    composed = "Café au lait."
    assert claim_in_answer("Caf" + "e\u0301 au lait.", 0, 14, composed).claim == "Cafe\u0301 au lait."


def test_crlf_around_the_claim_stays_in_before_and_after_and_is_never_cut():
    answer = "One.\r\nTwo.\r\nThree."
    assert claim_in_answer(answer, *place(answer, "Two."), "Two.") == ClaimInAnswer("One.\r\n", "Two.", "\r\nThree.", 6, 10)
    cut = claim_in_answer(answer, 0, 5, "One.")  # ends between CR and LF, one grapheme cluster
    assert (cut.claim, cut.after) == ("One.\r\n", "Two.\r\nThree.")


@pytest.mark.parametrize("answer, span, claim, widened", [
    ("Team 👩‍🔬 works.", (0, 6), "Team 👩", "Team 👩‍🔬"),  # ends inside a ZWJ sequence
    ("Great 👍🏽 job.", (0, 7), "Great 👍", "Great 👍🏽"),  # ends before the skin-tone modifier
    ("Hi 👩🏽‍🔬!", (3, 5), "👩🏽", "👩🏽‍🔬"),  # skin tone and ZWJ: the whole scientist
    ("🇯🇵 Japan", (0, 1), "🇯", "🇯🇵"),  # half a flag
    ("Cafe\u0301 au lait", (0, 4), "Cafe", "Cafe\u0301"),  # e without its combining acute
    ("Cafe\u0301 au lait", (4, 13), "\u0301 au lait", "e\u0301 au lait"),  # starts on the mark: the e joins it
    ("नमस्ते दुनिया", (0, 4), "नमस्", "नमस्ते"),  # Hindi: a vowel sign after the cut
])
def test_a_span_that_cuts_a_grapheme_cluster_is_widened_to_whole_clusters(answer, span, claim, widened):
    placed = claim_in_answer(answer, *span, claim)
    assert placed.claim == widened
    assert placed.before + placed.claim + placed.after == answer
    assert {placed.start, placed.end} <= clusters(answer)


def test_offsets_are_code_points_of_emoji_and_japanese_text():
    answer = "👩🏽‍🔬の研究は進んでいる。東京は日本の首都です。\n人口は約1400万人です。"
    found = sentences(answer)
    assert [s.text for s in found] == ["👩🏽‍🔬の研究は進んでいる。", "東京は日本の首都です。", "人口は約1400万人です。"]
    for segment in found:
        placed = claim_in_answer(answer, segment.start, segment.end, segment.text)
        assert (placed.claim, placed.start, placed.end) == (segment.text, segment.start, segment.end)
    assert claim_in_answer(answer, 14, 25, "東京は日本の首都です。").before == "👩🏽‍🔬の研究は進んでいる。"
    # UTF-16 offsets (as JavaScript counts) are off by the emoji's surrogates: no match, no place
    assert claim_in_answer(answer, 17, 28, "東京は日本の首都です。") is None


@settings(max_examples=300, deadline=None)
@given(answer=st.text(max_size=60), start=st.integers(-3, 65), end=st.integers(-3, 65))
def test_any_span_gives_the_whole_answer_back_or_no_place(answer, start, end):
    claim = answer[max(start, 0):max(end, 0)]
    placed = claim_in_answer(answer, start, end, claim)
    if placed is None:
        return
    assert placed.before + placed.claim + placed.after == answer
    assert placed.start <= start < end <= placed.end and answer[placed.start:placed.end] == placed.claim
    assert {placed.start, placed.end} <= clusters(answer)


# --- the HTML ----------------------------------------------------------------------------------

LABEL = ("Current claim begins:", "Current claim ends.")
OWN_TAG = re.compile(r'</?(div|strong|span)( (id|data-annotator-current-claim|style)="[^"<>]*")*>')


def visible_text(body: str) -> str:
    """What the screen shows: the body without its tags and its visually hidden words."""
    return html.unescape(re.sub(r"<[^>]*>", "", re.sub(r'<span style="position: absolute[^"]*">[^<]*</span>', "", body)))


def test_the_html_outlines_the_claim_in_place_with_words_for_a_screen_reader():
    body = claim_html(claim_in_answer(PARIS, 32, 66, "It had 2.1 million people in 2023."), lead="Generated answer:",
                      label=LABEL, claim_key=7)
    (mark,) = re.findall(rf'<span id="{CLAIM_ELEMENT_ID}" data-annotator-current-claim="7" style="([^"]*)">(.*?)</span></div>', body)
    assert "outline: 2px solid" in mark[0]
    assert html.unescape(re.sub(r"<[^>]*>", "|", mark[1])) == "|Current claim begins:|It had 2.1 million people in 2023.|Current claim ends.|"
    assert visible_text(body) == "Generated answer: " + PARIS
    assert body.count("<mark") == 0 and body.count(f"id=\"{CLAIM_ELEMENT_ID}\"") == 1  # nothing else of the answer is marked


HOSTILE = ("<b>bold</b> **md** [link](javascript:alert(1)) \u202eevil\u202c.\r\n"
           "Paris <script>alert('x')</script> is the \u2067capital\u2069 of ![i](x.png) France.\r\n"
           "<img src=x onerror=alert(1)> `code` & done")
HOSTILE_CLAIM = "Paris <script>alert('x')</script> is the \u2067capital\u2069 of ![i](x.png) France."


def test_a_hostile_answer_inside_and_around_the_claim_stays_text():
    placed = claim_in_answer(HOSTILE, *place(HOSTILE, HOSTILE_CLAIM), HOSTILE_CLAIM)
    body = claim_html(placed, shown=plain_text, lead="<i>lead</i>", label=("<b>start</b>", "end"), claim_key="<x>")
    tags = re.findall(r"<[^>]*>", body)
    assert tags and all(OWN_TAG.fullmatch(tag) for tag in tags), [tag for tag in tags if not OWN_TAG.fullmatch(tag)]
    assert "<script" not in body and "<img" not in body and "<b>" not in body and "<i>" not in body
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", body)  # direction controls shown as code points
    assert 'data-annotator-current-claim="&lt;x&gt;"' in body
    shown = visible_text(body)
    assert shown == "<i>lead</i> " + plain_text(HOSTILE[:placed.start]) + plain_text(placed.claim) + plain_text(placed.after)
    assert "[U+202E]evil[U+202C]" in shown and "\u2067" not in shown and "[U+2067]capital[U+2069]" in shown
    assert "<script>alert('x')</script>" in shown and "**md**" in shown and "![i](x.png)" in shown


@settings(max_examples=200, deadline=None)
@given(answer=st.text(max_size=80), start=st.integers(0, 80), end=st.integers(0, 80))
def test_the_html_holds_no_tag_but_its_own_and_gives_the_answer_back(answer, start, end):
    placed = claim_in_answer(answer, start, end, answer[start:end])
    if placed is None:
        return
    body = claim_html(placed, label=LABEL, claim_key=1)
    assert all(OWN_TAG.fullmatch(tag) for tag in re.findall(r"<[^>]*>", body))
    assert visible_text(body) == answer
