"""A restored rationale in a real browser (`annotator demo`, Debian's Chromium, Playwright; the
server and helpers of tests/test_e2e_browser.py): after a new login (a reload without the login
cookie) the Label page restores the draft into the box, and no click that follows may empty it.

A browser still drawing the page when the next run's elements arrive (a slow machine, a slow
network) draws the box from the latest run only. Streamlit tells the browser a value set through
session state in the run that set it, and in no later one: a box drawn from a later run started
empty, under "Restored your unsaved draft", and the next click sent that emptiness back as the
user's change, which replaced the draft (label.py _fill_inputs). The test makes that browser by
holding the server's messages of the login run (Playwright's route_web_socket) and letting the
Label link through first: the person clicks it while the page is still arriving.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import pytest

from tests.test_e2e_browser import (  # noqa: F401 - browser, demo_server: fixtures
    browser, demo_server, discard_draft, forget_login, log_in, log_in_here, reload_seeing_dialogs, settled,
    type_rationale, wait_for_draft,
)

RESTORED = re.compile(r"Restored your unsaved draft from")


def stored_draft(work: Path) -> tuple[str, str] | None:
    """(rationale, cited passage ids as stored JSON) of aoi's one draft, None when there is none."""
    with sqlite3.connect(work / "demo.db") as connection:
        return connection.execute(
            'SELECT draft.rationale, draft.passage_ids FROM draft JOIN "user" ON "user".id = draft.labeler_pk '
            'WHERE "user".name = ?', ("aoi",)).fetchone()


class HeldSocket:
    """Relays the app's websocket (installed before the page opens it); while `holding`, the
    server's messages wait in `held` instead of reaching the page."""

    def __init__(self, page) -> None:  # noqa: ANN001 - a Playwright page
        self.page = page
        self.holding = False
        self.held: list[str | bytes] = []
        self.last_message_at = time.monotonic()
        self.route = None
        page.route_web_socket(re.compile(r".*/_stcore/stream$"), self._relay)

    def _relay(self, route) -> None:  # noqa: ANN001 - a WebSocketRoute
        server = route.connect_to_server()
        self.route = route

        def from_server(message: str | bytes) -> None:
            self.last_message_at = time.monotonic()
            if self.holding:
                self.held.append(message)
            else:
                route.send(message)

        server.on_message(from_server)
        route.on_message(server.send)

    def until_quiet(self, seconds: float = 1.5, timeout: float = 30) -> None:
        """Until the server sent nothing for `seconds` (its run is over). Waits in the page: the
        relay runs only while Playwright does."""
        deadline = time.monotonic() + timeout
        while time.monotonic() - self.last_message_at < seconds:
            if time.monotonic() > deadline:
                pytest.fail(f"the server kept sending for {timeout} s")
            self.page.wait_for_timeout(100)

    def release(self, count: int | None = None) -> None:
        """Let the first `count` held messages (all when None) reach the page, in order."""
        count = len(self.held) if count is None else count
        released, self.held = self.held[:count], self.held[count:]
        for message in released:
            self.route.send(message)


def wait_for_stored(page, work: Path, expected: tuple[str, str]) -> None:  # noqa: ANN001
    """Until aoi's draft is `expected`; waits in the page (the relay needs Playwright running)."""
    deadline = time.monotonic() + 20
    while stored_draft(work) != expected:
        if time.monotonic() > deadline:
            assert stored_draft(work) == expected
        page.wait_for_timeout(200)


def test_a_restored_rationale_stays_when_the_label_link_is_clicked_while_the_page_is_still_arriving(demo_server, browser):
    base, work = demo_server
    expect = pytest.importorskip("playwright.sync_api").expect
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    try:
        type_rationale(page, "MARKER-restored-then-clicked")
        wait_for_draft(work, "MARKER-restored-then-clicked")
        socket = HeldSocket(page)  # the reload opens a new websocket, through the relay
        forget_login(page)  # the login run is the one held
        assert reload_seeing_dialogs(page, logged_in=False) == []
        page.get_by_label("User name", exact=True).fill("aoi")
        page.get_by_label("Password", exact=True).fill("aoi-demo-pass")
        socket.holding = True
        page.get_by_role("button", name="Log in").click()
        socket.until_quiet()  # the login run, held: it restores the draft into the box
        box_at = next(i for i, message in enumerate(socket.held)
                      if isinstance(message, bytes) and b"MARKER-restored-then-clicked" in message)
        socket.release(box_at)  # the sidebar and the top of the page arrive, the box not yet
        unsent = len(socket.held)  # the login run's rest, from the box on
        link = page.locator("[data-testid=stSidebarNavLink]", has_text="Label").first
        link.click()  # the page the login opened, clicked while it is still arriving
        socket.until_quiet()
        socket.holding = False
        # The link's run replaces the login run: the server drops what an interrupted run had not
        # sent yet when the next one starts (AppSession._clear_queue), so the box reaches the
        # browser from the link's run only.
        del socket.held[:unsent]
        socket.release()
        page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=20_000)
        settled(page)
        page.get_by_text(RESTORED).wait_for(timeout=20_000)
        page.get_by_text("Cite this passage").first.click()  # the next click sends every input
        passage_id = page.get_by_text(re.compile(r"^\S+ · document ")).first.inner_text().split(" · ")[0]
        wait_for_stored(page, work, ("MARKER-restored-then-clicked", f'["{passage_id}"]'))  # not ("", ...)
        expect(page.get_by_label("Rationale")).to_have_value("MARKER-restored-then-clicked")
        discard_draft(page)
    finally:
        context.close()


def test_a_restored_rationale_stays_through_clicks_on_the_label_link_and_a_visit_to_home(demo_server, browser):
    base, work = demo_server
    expect = pytest.importorskip("playwright.sync_api").expect
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    try:
        type_rationale(page, "MARKER-restored-then-navigated")
        wait_for_draft(work, "MARKER-restored-then-navigated")
        forget_login(page)  # a new login restores the draft
        assert reload_seeing_dialogs(page, logged_in=False) == []
        log_in_here(page, "aoi", "aoi-demo-pass")  # the address names Label: the login opens it
        link = page.locator("[data-testid=stSidebarNavLink]", has_text="Label").first
        for _ in range(3):  # at once, while the login's run may still be drawing, then settled
            link.click()
        settled(page)
        link.click()
        page.locator("[data-testid=stSidebarNavLink]", has_text="Home").first.click()
        page.get_by_role("heading", name="Home").first.wait_for(timeout=20_000)
        link.click()
        page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=20_000)
        settled(page)
        page.get_by_text(RESTORED).wait_for(timeout=20_000)
        expect(page.get_by_label("Rationale")).to_have_value("MARKER-restored-then-navigated", timeout=20_000)
        page.get_by_text("Cite this passage").first.click()
        passage_id = page.get_by_text(re.compile(r"^\S+ · document ")).first.inner_text().split(" · ")[0]
        wait_for_stored(page, work, ("MARKER-restored-then-navigated", f'["{passage_id}"]'))
        discard_draft(page)
    finally:
        context.close()
