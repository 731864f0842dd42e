"""The claim marked in place in its answer, in a real browser (Chromium through Playwright, as
tests/test_e2e_browser.py drives it), on SQLite and PostgreSQL: a RAGAS file imported with
`annotator import --format ragas` gives a long answer cut into sentence claims with their spans;
a labeler who opens one of its last claims finds it outlined in the answer's box, which has
scrolled to it while the page stays at its top, and the next claim's place is scrolled to in turn."""

from __future__ import annotations

import json
import os
from contextlib import nullcontext

import pytest

from annotator.highlight import CLAIM_ELEMENT_ID
from tests.conftest import BACKENDS, fresh_postgres_database, annotator_in
from tests.test_e2e_browser import ARTIFACTS, DB_URL_FILE, log_in_here, main_scroll_top, running_app, settled
from tests.test_e2e_browser import browser  # noqa: F401 - a fixture, used by name

SENTENCES = [f"Fact number {n} of the report is that {what}." for n, what in enumerate(
    ["the sky is blue", "water boils at 100 degrees at sea level", "Paris is in France", "the moon orbits the Earth",
     "bees make honey", "iron rusts in wet air", "Tokyo is the capital of Japan", "light is faster than sound",
     "the Nile flows north", "ice floats on water", "plants need light", "the report <b>ends</b> **soon**",
     "Mount Fuji is 3,776 m high", "this is the last line"], start=1)]
ANSWER = "\n".join(SENTENCES)
CASE_ID = "long-1"
TARGET = 12
"""The claim opened first: far below the answer box's first lines."""

IN_VIEW = """(id) => {
    const mark = document.getElementById(id);
    let box = mark.parentElement;
    while (box && !(['auto', 'scroll'].includes(getComputedStyle(box).overflowY) && box.scrollHeight > box.clientHeight))
        box = box.parentElement;
    const m = mark.getBoundingClientRect(), b = box.getBoundingClientRect();
    const words = mark.cloneNode(true);
    for (const hidden of words.querySelectorAll('span')) hidden.remove();
    return {key: mark.dataset.annotatorCurrentClaim, text: words.textContent, said: mark.textContent,
            outline: getComputedStyle(mark).outlineStyle, boxScrolled: box.scrollTop,
            insideBox: m.top >= b.top && m.bottom <= b.bottom, insideWindow: m.top >= 0 && m.bottom <= window.innerHeight,
            boxIsMain: box.matches('[data-testid=stMain]')};
}"""


@pytest.fixture(scope="module", params=BACKENDS)
def ragas_server(request, tmp_path_factory):
    """`annotator serve` over the demo's users and a RAGAS file's one long case, assigned to aoi and
    ren (on SQLite, and on a fresh PostgreSQL database). Yields base URL and folder."""
    work = tmp_path_factory.mktemp(f"ragas-span-{request.param}")
    record = {"case_id": CASE_ID, "user_input": "What does the report say?", "response": ANSWER,
              "retrieved_contexts": ["The report lists fourteen facts, one a line."]}
    (work / "ragas.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    with (nullcontext(f"sqlite:///{work / 'demo.db'}") if request.param == "sqlite" else fresh_postgres_database()) as url:
        (work / DB_URL_FILE).write_text(url, encoding="utf-8")
        for args in (["demo", "--no-serve"], ["import", "ragas.jsonl", "--format", "ragas", "--dataset", "ragas-long"],
                     ["assign", "--labelers", "aoi,ren", "--first", "1", "--dataset", "ragas-long"]):
            assert annotator_in(work, *args, "--db", url).returncode == 0, args
        with running_app(work, env, ["serve", "--db", url]) as base:
            yield base, work


def test_a_ragas_claim_is_outlined_in_its_long_answer_and_scrolled_into_view(ragas_server, browser):  # noqa: F811 - the fixture
    base, _ = ragas_server
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{base}/?claim={CASE_ID}-c{TARGET}")  # the claim's link, followed after the login
        log_in_here(page, "aoi", "aoi-demo-pass")
        mark = page.locator(f"#{CLAIM_ELEMENT_ID}")
        mark.wait_for(timeout=20_000)
        settled(page)
        page.wait_for_function(f"() => {{ const seen = ({IN_VIEW})('{CLAIM_ELEMENT_ID}'); return seen.insideBox && seen.boxScrolled > 0; }}",
                               timeout=20_000)
        seen = page.evaluate(IN_VIEW, CLAIM_ELEMENT_ID)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "answer-span-label-1366x768.png"))
        assert seen["text"] == SENTENCES[TARGET - 1]  # the claim, its markup as text
        assert seen["said"] == f"Current claim begins:{SENTENCES[TARGET - 1]}Current claim ends."
        assert seen["outline"] == "solid" and not seen["boxIsMain"]
        assert seen["boxScrolled"] > 0 and seen["insideBox"] and seen["insideWindow"], seen
        assert main_scroll_top(page) == 0  # the page itself opens at its top
        assert page.locator("[data-testid=stExpander] mark").count() == 0  # the place only: no words marked

        before = seen["key"]
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("j")  # the next claim of the answer: its place is scrolled to in turn
        page.wait_for_function("(before) => { const m = document.querySelector('[data-annotator-current-claim]');"
                               " return m && m.dataset.annotatorCurrentClaim !== before; }", arg=before, timeout=20_000)
        settled(page)
        page.wait_for_function(f"() => ({IN_VIEW})('{CLAIM_ELEMENT_ID}').insideBox", timeout=20_000)
        seen = page.evaluate(IN_VIEW, CLAIM_ELEMENT_ID)
        assert seen["text"] == SENTENCES[TARGET] and seen["insideBox"] and seen["insideWindow"], seen
    finally:
        context.close()


def test_the_outlined_claim_and_the_long_answers_box_pass_axe(ragas_server, browser):  # noqa: F811 - the fixture
    pytest.importorskip("axe_playwright_python")  # the test extra installs it (tests/test_accessibility_browser.py)
    from tests.test_accessibility_browser import unexpected_violations

    base, _ = ragas_server
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{base}/?claim={CASE_ID}-c{TARGET}")
        log_in_here(page, "aoi", "aoi-demo-pass")
        page.locator(f"#{CLAIM_ELEMENT_ID}").wait_for(timeout=20_000)
        settled(page)
        region = page.get_by_role("region", name="Generated answer")
        assert region.count() == 1 and region.get_attribute("tabindex") == "0"  # the keyboard scrolls it too
        assert unexpected_violations(page, "Label page, a claim outlined in a long answer", "label") == []
    finally:
        context.close()
