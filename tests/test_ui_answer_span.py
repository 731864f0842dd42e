"""The claim marked in place in its answer on the Label and Adjudicate pages (AppTest, SQLite and
PostgreSQL): a claim whose stored span holds its text is outlined there, with words for a screen
reader in the user's language, and nothing else of the answer is marked; a claim without a span,
or with one that no longer holds its text, has its words marked as before. The answer, hostile
inside and around the claim, stays text."""

from __future__ import annotations

import html
import re

import pytest
import streamlit as st

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.highlight import CLAIM_ELEMENT_ID
from annotator.models import Case, Claim, ClaimPassage, Dataset, Passage
from annotator.services.access import OPERATOR
from annotator.services.labeling import assign_cases
from annotator.services.users import add_user, get_user, set_locale
from annotator.ui.catalog_ja import JAPANESE
from annotator.ui.i18n import ENGLISH
from annotator.ui.plain import plain_text
from tests.conftest import ON_BOTH, seeded_url
from tests.test_ui_app import PASSWORDS, _claim_pk, go_to_work, label, open_app, shown_claim

ANSWER = ("<b>Intro</b> **md** \u202eevil\u202c.\r\n"
          "Paris <script>alert('x')</script> is the capital of France.\r\n"
          "It had 2.1 million people 👩🏽‍🔬 in [2023](javascript:alert(1)).\r\n"
          "Paris is also on the Seine.")
PLACED = "Paris <script>alert('x')</script> is the capital of France."
NO_SPAN = "It had 2.1 million people 👩🏽‍🔬 in [2023](javascript:alert(1))."
STALE = "Paris is also on the Loire."  # edited since its span was taken: the span holds "... Seine."
HIDDEN = re.compile(r'<span style="position: absolute[^"]*">([^<]*)</span>')


def _seed(session) -> None:  # noqa: ANN001 - Session
    dataset = Dataset(name="pilot", source_format="ragas")
    session.add(dataset)
    session.flush()
    case = Case(dataset_id=dataset.id, case_id="case-1", position=1, question="What is the capital of France?",
                answer=ANSWER, slice="normal", split="dev", meta={})
    session.add(case)
    session.flush()
    passage = Passage(dataset_id=dataset.id, passage_id="p1", doc_id="doc-1", version="v1", title="France",
                      text="Paris is the capital of France and had 2.1 million people in 2023.")
    session.add(passage)
    session.flush()
    seine = ANSWER.index("Paris is also")
    for position, (text, span) in enumerate(((PLACED, (ANSWER.index(PLACED), ANSWER.index(PLACED) + len(PLACED))),
                                             (NO_SPAN, (None, None)), (STALE, (seine, len(ANSWER)))), start=1):
        claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=f"case-1-c{position}", position=position,
                      text=text, span_start=span[0], span_end=span[1])
        session.add(claim)
        session.flush()
        session.add(ClaimPassage(claim_pk=claim.id, passage_pk=passage.id, position=0))
    for name, roles in (("aoi", ["labeler"]), ("ren", ["labeler"]), ("mika", ["adjudicator"])):
        add_user(session, OPERATOR, name, roles, PASSWORDS[name])
    set_locale(session, get_user(session, "ren"), "ja")
    assign_cases(session, OPERATOR, [case.id], ["aoi", "ren"])


@pytest.fixture
def engine(request, tmp_path, monkeypatch):
    url = seeded_url(request, f"sqlite:///{tmp_path}/a.db", _seed)
    engine = init_db(url)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def answer_html(at) -> str:  # noqa: ANN001 - an AppTest
    """The HTML of the answer in the case box."""
    (box,) = [e for e in at.expander if e.label.startswith(("**Question**", "**質問**"))]
    (body,) = [h.proto.body for h in box.get("html")]
    return body


def shown_text(body: str) -> str:
    """What the screen shows of the answer: no tags, no visually hidden words."""
    return html.unescape(re.sub(r"<[^>]*>", "", HIDDEN.sub("", body)))


def placed_claim(body: str) -> tuple[str, str, list[str]] | None:
    """(data key, text shown, hidden words) of the claim's outlined place, None when there is none."""
    found = re.findall(rf'<span id="{CLAIM_ELEMENT_ID}" data-annotator-current-claim="([^"]*)" style="[^"]*outline[^"]*">'
                       r'((?:<span [^>]*>[^<]*</span>|[^<])*)</span>', body)
    if not found:
        return None
    ((key, inner),) = found
    return key, shown_text(inner), [html.unescape(words) for words in HIDDEN.findall(inner)]


def assert_text_only(body: str) -> None:
    """Only the answer's own tags are in it; the answer's markup and direction controls are text."""
    assert all(re.fullmatch(r'</?(div|strong|span|mark)( [a-z-]+="[^"<>]*")*>', tag) for tag in re.findall(r"<[^>]*>", body))
    assert "<script" not in body and "<b>" not in body and not re.search("[\u202a-\u202e\u2066-\u2069]", body)
    shown = shown_text(body)
    assert "<script>alert('x')</script>" in shown and "[U+202E]evil[U+202C]" in shown and "**md**" in shown


@ON_BOTH
def test_the_label_page_outlines_the_claim_in_place_and_falls_back_to_its_words_without_a_span(engine):
    at = open_app("aoi")
    assert shown_claim(at) == "case-1-c1"
    body = answer_html(at)
    assert placed_claim(body) == (str(_claim_pk(engine, "case-1-c1")), PLACED,
                                  [ENGLISH["case.claim_start"], ENGLISH["case.claim_end"]])
    assert shown_text(body) == f"{ENGLISH['case.answer_placed']} " + plain_text(ANSWER)  # [U+202E], CR as [U+000D]
    assert "<mark" not in body  # the place only: no other claim, no words
    assert_text_only(body)

    label(at, "support")  # the next claim has no span: its words are marked, as before
    assert shown_claim(at) == "case-1-c2"
    body = answer_html(at)
    assert placed_claim(body) is None and CLAIM_ELEMENT_ID not in body
    assert shown_text(body).startswith(ENGLISH["case.answer_marked"] + " ")
    assert "2.1" not in re.findall(r"<mark [^>]*>(.*?)</mark>", body) and "million" in re.findall(r"<mark [^>]*>(.*?)</mark>", body)
    assert_text_only(body)

    label(at, "support")  # a span that no longer holds the claim's text marks nothing in place
    assert shown_claim(at) == "case-1-c3"
    body = answer_html(at)
    assert placed_claim(body) is None
    assert re.findall(r"<mark [^>]*>(.*?)</mark>", body)[:1] == ["Paris"]


def test_the_words_for_a_screen_reader_and_the_lead_follow_the_users_language(engine):
    at = go_to_work(open_app("ren", home=True))  # a Japanese Home page: open_app knows the English one only
    assert at.session_state["label.claim_pk"] == _claim_pk(engine, "case-1-c1")
    body = answer_html(at)
    assert placed_claim(body)[1:] == (PLACED, [JAPANESE["case.claim_start"], JAPANESE["case.claim_end"]])
    assert shown_text(body).startswith(JAPANESE["case.answer_placed"] + " ")


@ON_BOTH
def test_the_adjudicate_page_outlines_the_disputed_claim_in_place_and_falls_back_without_a_span(engine):
    with session_scope(engine) as session:
        set_locale(session, get_user(session, "ren"), None)  # the label helper reads English
    for name, value in (("aoi", "support"), ("ren", "contradict")):
        at = open_app(name)
        for _ in range(2):  # c1 and c2 disputed
            label(at, value)
    mika = open_app("mika")
    c1, c2 = _claim_pk(engine, "case-1-c1"), _claim_pk(engine, "case-1-c2")
    assert mika.selectbox(key="adjudicate.claim_pk").value == c1
    body = answer_html(mika)
    assert placed_claim(body) == (str(c1), PLACED, [ENGLISH["case.claim_start"], ENGLISH["case.claim_end"]])
    assert "<mark" not in body
    assert_text_only(body)
    mika.selectbox(key="adjudicate.claim_pk").select(c2).run()
    body = answer_html(mika)
    assert placed_claim(body) is None and shown_text(body).startswith(ENGLISH["case.answer_marked"] + " ")



@ON_BOTH
def test_the_label_and_adjudicate_views_carry_the_claims_span_as_plain_ints_or_none(engine):
    from annotator.services.adjudication import view_for_adjudicator
    from annotator.services.labeling import claim_for_labeler, save_label

    c1, c2 = _claim_pk(engine, "case-1-c1"), _claim_pk(engine, "case-1-c2")
    start = ANSWER.index(PLACED)
    with session_scope(engine) as session:
        aoi, ren, mika = (get_user(session, name) for name in ("aoi", "ren", "mika"))
        views = [claim_for_labeler(session, aoi, c1), claim_for_labeler(session, aoi, c2)]
        for user, value in ((aoi, "support"), (ren, "insufficient")):
            save_label(session, user, c1, value, rationale="read", guideline_version="")
        views.append(view_for_adjudicator(session, mika, c1))
    spans = [(view.span_start, view.span_end) for view in views]
    assert spans == [(start, start + len(PLACED)), (None, None), (start, start + len(PLACED))]
    assert {type(bound) for span in spans for bound in span} == {int, type(None)}
    assert views[0].answer[views[0].span_start:views[0].span_end] == PLACED
