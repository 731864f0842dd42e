"""A label key pressed many times in a row in a real browser (`annotator demo`, Debian's Chromium,
Playwright; the server and helpers of tests/test_e2e_browser.py) labels the claim it was pressed
on, once, and never the claim the page moves to: nobody has read that one yet.

A press reaches the server as a click of a label button. The browser may still show claim A when
it sends a press the server handles after it moved to claim B, and a person holding or hammering a
key goes on pressing once B is drawn. Both used to save B (label.py `_save`, components.py
`too_soon_after_move`).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from annotator.db import make_engine, session_scope
from annotator.services.labeling import save_label
from annotator.services.users import get_user
from tests.test_e2e_browser import (  # noqa: F401 - browser, demo_server: fixtures
    browser, demo_server, log_in, on_label_page, settled,
)


def labels_of(work: Path, labeler: str) -> dict[str, str]:
    """{claim_id: value} of every label the labeler has."""
    with sqlite3.connect(work / "demo.db") as connection:
        return dict(connection.execute(
            'SELECT claim.claim_id, label.value FROM label JOIN claim ON claim.id = label.claim_pk '
            'JOIN "user" ON "user".id = label.labeler_pk WHERE "user".name = ?', (labeler,)).fetchall())


def pressed(page, key: str, times: int, apart_ms: int, held: bool) -> None:  # noqa: ANN001 - a Playwright page
    """`key` pressed `times` times, `apart_ms` milliseconds apart, with nothing focused; `held`:
    held down that long instead (the browser's key repeats: keydown events marked `repeat`)."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    for _ in range(times):
        if held:
            page.keyboard.down(key)
        else:
            page.keyboard.press(key)
        page.wait_for_timeout(apart_ms)
    if held:
        page.keyboard.up(key)


@pytest.mark.parametrize(("name", "apart_ms", "held"), [("aoi", 50, False), ("ren", 150, False), ("aoi", 100, True)])
def test_a_label_key_pressed_ten_times_quickly_labels_only_the_claim_it_was_pressed_on(demo_server, browser,
                                                                                        name, apart_ms, held):
    base, work = demo_server
    context, page = log_in(browser, base, name, f"{name}-demo-pass")
    try:
        _, claim_id = on_label_page(page)
        before = labels_of(work, name)
        pressed(page, "3", 10, apart_ms, held)
        time.sleep(1.5)  # presses still on their way
        settled(page)
        after = labels_of(work, name)
        added = {claim: value for claim, value in after.items() if before.get(claim) != value}
        assert added == {claim_id: "insufficient"}
    finally:
        context.close()


def dispute(work: Path, n: int) -> None:
    """aoi and ren label `n` claims neither has labeled, differently: `n` claims wait for mika."""
    engine = make_engine(f"sqlite:///{work / 'demo.db'}")
    try:
        with sqlite3.connect(work / "demo.db") as connection:
            free = [pk for (pk,) in connection.execute(
                "SELECT id FROM claim WHERE id NOT IN (SELECT claim_pk FROM label) ORDER BY id DESC LIMIT ?", (n,))]
        with session_scope(engine) as session:
            aoi, ren = get_user(session, "aoi"), get_user(session, "ren")
            for claim_pk in free:
                save_label(session, aoi, claim_pk, "support")
                save_label(session, ren, claim_pk, "insufficient")
    finally:
        engine.dispose()


def decisions(work: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(work / "demo.db") as connection:
        return connection.execute("SELECT claim.claim_id, adjudication.value FROM adjudication "
                                  "JOIN claim ON claim.id = adjudication.claim_pk").fetchall()


def test_a_decision_key_pressed_ten_times_quickly_decides_only_the_claim_it_was_pressed_on(demo_server, browser):
    base, work = demo_server
    dispute(work, 3)
    context, page = log_in(browser, base, "mika", "mika-demo-pass", to="Adjudicate")
    try:
        page.get_by_text("Claims waiting for a decision: 3").wait_for(timeout=20_000)
        page.get_by_text("Keys 1, 2, 3 decide").wait_for(timeout=20_000)  # the last line of the page
        settled(page)
        page.get_by_label("Rationale (required)").fill("passage 1 decides")  # a decision needs one
        page.keyboard.press("Tab")
        settled(page)
        before = decisions(work)
        pressed(page, "2", 10, 50, held=False)
        time.sleep(1.5)  # presses still on their way
        settled(page)
        page.get_by_text("Claims waiting for a decision: 2").wait_for(timeout=20_000)
        added = [row for row in decisions(work) if row not in before]
        assert [value for _, value in added] == ["contradict"]
        # A press that reached the next claim's button past the quiet time would have been told to write a
        # rationale there (its box is empty): the presses were dropped before that, as before the rule.
        assert page.get_by_text("write a rationale for the final label").count() == 0
    finally:
        context.close()
