"""The reading aids' core (annotator/highlight.py): which of a claim's words a passage shares, as
exact spans, in Japanese (SudachiPy) and English; the HTML that marks them without letting a
passage's own markup through; and which passages are an old version of their document."""

from __future__ import annotations

import html
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.highlight import Highlight, bare_number, highlight, newer_version, old_versions, to_html, words


def shown(passage: str, result: Highlight) -> list[str]:
    return [passage[start:end] for start, end in result.spans]


# --- Japanese ----------------------------------------------------------------------------------


def test_japanese_content_words_are_matched_and_touching_ones_are_one_span():
    passage = "国内出張の日当は１日2,500円とする。"
    result = highlight("国内出張の日当は１日2,000円である。", passage)
    assert result.spans == ((0, 4), (5, 7), (8, 10))
    assert shown(passage, result) == ["国内出張", "日当", "１日"]  # not の, は, 2,500円 nor する
    assert result.words == ("国内", "出張", "日当", "１日")


def test_a_number_matches_with_its_counter_only():
    passage = "在宅勤務は週３日までとし、申請は３営業日前、2026年４月１日から施行する。"
    assert shown(passage, highlight("在宅勤務は週３日までできる。", passage)) == ["在宅勤務", "３日"]
    assert shown("宿泊費は１泊12,000円", highlight("12000円の宿泊費", "宿泊費は１泊12,000円")) == ["宿泊費", "12,000円"]


def test_japanese_words_match_across_inflection_and_width():
    passage = "期限後の申請は受け付ける。ＰＣを紛失した。"
    result = highlight("申請は受け付けられない。PCの紛失", passage)
    assert shown(passage, result) == ["申請", "受け付ける", "ＰＣ", "紛失"]


@pytest.mark.parametrize("claim", [
    "のはをにがでとへやからまでより。、「」（）",  # particles and punctuation
    "することがあるため、そのようなものである",  # dependent verbs and formal nouns
    "週、月、日",  # one-character words
])
def test_japanese_function_words_and_one_character_words_match_nothing(claim):
    passage = "週に一度、日ごとにすることがあるため、そのようなものについては、月の初めに申請する。"
    assert highlight(claim, passage) == Highlight((), ())


def test_latin_words_inside_japanese_text_are_compared_as_english():
    passage = "会議はzoomで行い、Passagesを読む。"
    assert shown(passage, highlight("Zoom会議でpassageを読んだ", passage)) == ["会議", "zoom", "Passages", "読む"]


def test_offsets_stay_right_in_a_text_longer_than_one_tokenizer_call():
    passage = "前置きの文です。" * 700 + "最後に日当を定める。"  # 5,600+ characters: several calls
    result = highlight("日当の額", passage)
    assert shown(passage, result) == ["日当"]
    assert result.spans[0][0] == passage.index("日当")


# --- English -----------------------------------------------------------------------------------


def test_english_matches_ignore_case_stop_words_and_plural_s():
    passage = "PARIS: the capital city. Passages about France's capitals and policies."
    result = highlight("The passages say Paris is the capital of France; a policy.", passage)
    assert shown(passage, result) == ["PARIS", "capital", "Passages", "France's", "capitals", "policies"]


def test_numbers_match_with_their_unit_without_thousands_commas():
    passage = "Up to 12,000km, filed by the 10th, within 50km; 5th and 12000km."
    assert shown(passage, highlight("12000km by the 10th within 50km", passage)) == [
        "12,000km", "10th", "50km", "12000km"]  # not 5th


@pytest.mark.parametrize("number", ["3", "12000", "12,000", "3.5", "1,000.25", "３", "１２", "١٢", "३"])
def test_a_bare_number_is_no_shared_word_in_english_text(number):
    passage = f"Claims of {number} yen, filed in {number} days."
    result = highlight(f"{number} yen within {number} days", passage)
    assert result.words == ("yen", "days")
    assert shown(passage, result) == ["yen", "days"]


@pytest.mark.parametrize("text", ["３", "12", "1,000", "3.5", "１２３", "三"])
def test_a_bare_number_is_no_shared_word_in_japanese_text_but_with_its_counter_it_is(text):
    passage = f"上限は{text}、日当は{text}日とする。"
    result = highlight(f"日当は{text}日、上限は{text}", passage)
    assert result.words == ("上限", "日当", f"{text}日")
    assert f"{text}" not in [passage[start:end] for start, end in result.spans]


@pytest.mark.parametrize("token, bare", [
    ("3", True), ("３", True), ("3.5", True), ("1,000", True), ("١٢", True), ("12,000.5", True),
    ("50km", False), ("10th", False), ("１日", False), ("3.", False), (",3", False), ("", False), ("v2", False),
])
def test_bare_number(token, bare):
    assert bare_number(token) is bare


def test_stop_words_and_single_letters_match_nothing():
    assert highlight("a the of is I it was", "a the of is I it was") == Highlight((), ())


def test_no_shared_word_gives_no_span():
    assert highlight("Remote work is allowed", "Expense claims are filed monthly") == Highlight((), ())
    assert highlight("", "anything") == Highlight((), ())
    assert highlight("anything", "") == Highlight((), ())


@settings(max_examples=150, deadline=None)
@given(claim=st.text(max_size=60), passage=st.text(max_size=200))
def test_spans_are_sorted_disjoint_and_inside_the_passage(claim, passage):
    result = highlight(claim, passage)
    previous_end = -1
    for start, end in result.spans:
        assert 0 <= start < end <= len(passage) and start > previous_end
        previous_end = end


def test_tokenizing_is_cached_per_text_and_safe_from_several_threads():
    assert words("経費精算システムで申請する") is words("経費精算システムで申請する")
    texts = [f"第{n}条 経費の精算は翌月{n}日までに申請する。" for n in range(1, 41)]
    words.cache_clear()
    alone = [highlight("経費精算の申請期限", text) for text in texts]
    words.cache_clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda text: highlight("経費精算の申請期限", text), texts))
    assert together == alone


# --- HTML ------------------------------------------------------------------------------------


def test_html_marks_the_spans_and_escapes_everything_else():
    text = "<script>alert('x')</script> & **bold** 日当"
    body = to_html(text, [(len(text) - 2, len(text))])
    assert "<script" not in body
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; **bold** " in body
    assert re.search(r"<mark style=\"[^\"]*font-weight: 700[^\"]*text-decoration: underline[^\"]*\">日当</mark>", body)


def test_a_marked_span_is_escaped_too():
    assert "<mark" in to_html("<img src=x onerror=alert(1)>", [(0, 4)])
    assert "<img" not in to_html("<img src=x onerror=alert(1)>", [(0, 4)])


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=120), cuts=st.lists(st.integers(min_value=0, max_value=120), max_size=6))
def test_html_holds_no_tag_but_its_own_and_gives_the_text_back(text, cuts):
    points = sorted({min(c, len(text)) for c in cuts})
    spans = [(a, b) for a, b in zip(points[0::2], points[1::2], strict=False) if a < b]
    body = to_html(text, spans)
    tags = re.findall(r"<[^>]*>", body)
    assert all(re.fullmatch(r"</?(div|mark)( style=\"[^\"<>]*\")?>", tag) for tag in tags)
    assert html.unescape(re.sub(r"<[^>]*>", "", body)) == text
    assert len(re.findall(r"<mark ", body)) == len(spans)


# --- old versions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class P:
    passage_id: str
    doc_id: str
    version: str


@pytest.mark.parametrize("version, other, newer", [
    ("2025-04", "2026-04", True),
    ("2026-04", "2025-04", False),
    ("2025-10", "2026-04", True),
    ("v2", "v10", True),  # numbers compare as numbers, not as text
    ("v10", "v2", False),
    ("V1", "v2", True),
    ("v1", "v1", False),
    ("2025-4", "2025-04", False),  # the same version written two ways
    ("v1", "2026-04", False),  # different shapes are never ordered
    ("draft", "final", False),  # no numbers: never ordered
    ("", "v1", False),
    ("v1", "", False),
])
def test_newer_version(version, other, newer):
    assert newer_version(version, other) is newer


def test_a_passage_is_old_when_its_document_has_a_newer_version_among_the_passages():
    passages = [P("a-2025", "rule", "2025-04"), P("a-2026", "rule", "2026-04"), P("a-2024", "rule", "2024-04"),
                P("b-v1", "other", "v1"), P("c-v1", "", "v1"), P("c-v2", "", "v2")]
    assert old_versions(passages) == {"a-2025": "2026-04", "a-2024": "2026-04"}  # an empty doc id groups nothing


def test_a_newer_version_known_elsewhere_makes_a_passage_old_and_others_do_not():
    passages = [P("a-v1", "rule", "v1"), P("b-2025", "memo", "2025-04"), P("c-v3", "note", "v3")]
    known = {"rule": ("v1", "v2", "v10"), "memo": ("2024-04", "draft"), "note": ("v3",), "other": ("v9",)}
    assert old_versions(passages, known_versions=known) == {"a-v1": "v10"}  # older, unordered or same: not newer


def test_a_passage_the_case_names_as_outdated_is_old_whatever_the_versions():
    passages = [P("m-1", "memo", ""), P("n-1", "note", "v1")]
    assert old_versions(passages, ["m-1", "unknown"]) == {"m-1": None}


def _clusters(text: str) -> set[int]:
    import regex

    return {found.start() for found in regex.finditer(r"\X", text)} | {len(text)}


@pytest.mark.parametrize("claim, passage, shared", [
    ("हिंदी भाषा", "यह हिंदी भाषा है", ("हिंदी", "भाषा")),  # vowel signs (Mc, Mn) inside the words
    ("مَرْحَبًا بِكُمْ", "قال مَرْحَبًا بِكُمْ للجميع", ("مَرْحَبًا", "بِكُمْ")),  # Arabic with harakat
    ("ไม่ใช่", "คำตอบ ไม่ใช่ แน่นอน", ("ไม่ใช่",)),  # Thai tone and vowel marks
])
def test_words_with_combining_marks_are_marked_whole(claim, passage, shared):
    found = highlight(claim, passage)
    assert tuple(passage[start:end] for start, end in found.spans) == shared
    assert {offset for span in found.spans for offset in span} <= _clusters(passage)


def test_a_mark_never_parts_a_letter_from_its_combining_mark():
    passage = "Cafe\u0301 au lait"  # e + COMBINING ACUTE ACCENT, not composed
    found = highlight("cafe\u0301 prices", passage)
    assert [passage[start:end] for start, end in found.spans] == ["Cafe\u0301"]
