"""Login sessions in a real browser (`annotator demo`, Debian's Chromium, Playwright; the helpers
of tests/test_e2e_browser.py), on SQLite and on PostgreSQL: the login sets an HttpOnly cookie that
the page's JavaScript cannot read; a reload and a `?claim=` link opened in a new tab of the same
browser land logged in (the link on its claim); log out ends it in every tab, and a reload shows
the login page; a labeler whom the admin disables is out at their next action and stays out.

Each backend's demo has its own server for this module (the admin disables a demo user)."""

from __future__ import annotations

import time

import pytest

from tests.conftest import BACKENDS, fresh_postgres_database
from tests.test_e2e_browser import (  # noqa: F401 - browser: a fixture
    browser, log_in, query, served_demo, settled,
)

COOKIE = "annotator_session"
LOGGED_OUT = "You are no longer logged in (or your account was disabled); log in again."


@pytest.fixture(scope="module", params=BACKENDS)
def sessions_server(request, tmp_path_factory):
    """The demo served over a fresh SQLite, then a fresh PostgreSQL, database; yields its base
    URL and folder."""
    work = tmp_path_factory.mktemp(f"sessions-{request.param}")
    if request.param == "sqlite":
        yield from ((base, work) for base in served_demo(work, f"sqlite:///{work / 'demo.db'}"))
        return
    with fresh_postgres_database() as url:
        yield from ((base, work) for base in served_demo(work, url))


def login_cookie(context, present: bool = True) -> dict | None:  # noqa: ANN001 - a BrowserContext
    """The browser's login cookie once it is there (`present`) or gone (not `present`), within 20 s."""
    deadline = time.monotonic() + 20
    while True:
        found = next((cookie for cookie in context.cookies() if cookie["name"] == COOKIE), None)
        if (found is not None) == present or time.monotonic() > deadline:
            assert (found is not None) == present, context.cookies()
            return found
        time.sleep(0.1)


def on_login_page(page) -> None:  # noqa: ANN001
    page.get_by_label("Password", exact=True).wait_for(timeout=20_000)
    settled(page)
    assert page.get_by_text("Logged in as").count() == 0


def test_a_reload_and_a_claim_link_in_a_new_tab_stay_logged_in_until_log_out(sessions_server, browser):
    base, work = sessions_server
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass")
    try:
        cookie = login_cookie(context)
        assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"], cookie["secure"]) == (True, "Lax", "/", False)
        assert 7 * 86400 - 60 < cookie["expires"] - time.time() <= 7 * 86400  # Max-Age: the absolute expiry
        assert COOKIE not in page.evaluate("document.cookie")  # no script of the page can read it
        stored = query(work, 'SELECT s.token_sha256 FROM login_session s JOIN "user" u ON u.id = s.user_pk '
                             "WHERE u.name = 'aoi' AND s.revoked_at IS NULL")
        assert stored and cookie["value"] not in repr(stored)

        page.reload()
        page.get_by_text("Logged in as aoi").wait_for(timeout=20_000)
        assert page.get_by_label("Password", exact=True).count() == 0

        tab = context.new_page()
        tab.goto(f"{base}/?claim=demo-02-c1")
        tab.get_by_text("Logged in as aoi").wait_for(timeout=20_000)
        tab.get_by_text("Claim demo-02-c1").first.wait_for(timeout=20_000)
        assert tab.get_by_role("heading", name="Label").count() == 1
        assert tab.get_by_label("Password", exact=True).count() == 0

        page.get_by_role("button", name="Log out").click()
        on_login_page(page)
        login_cookie(context, present=False)  # cleared
        page.reload()
        on_login_page(page)
        tab.locator("[data-testid=stSidebarNavLink]", has_text="Home").first.click()  # the other tab's next action
        on_login_page(tab)
        tab.get_by_text(LOGGED_OUT).wait_for(timeout=20_000)
    finally:
        context.close()


def test_a_labeler_the_admin_disables_is_out_at_the_next_action_and_after_a_reload(sessions_server, browser):
    base, work = sessions_server
    ren_context, ren = log_in(browser, base, "ren", "ren-demo-pass", to="Label")
    admin_context, admin = log_in(browser, base, "admin", "admin-demo-pass", to="Admin")
    try:
        login_cookie(ren_context)
        admin.get_by_role("tab", name="Users").click()
        box = admin.locator("[data-testid=stVerticalBlock]", has_text="Enable or disable").last  # the innermost
        box.get_by_role("combobox", name="Name", exact=True).click()
        admin.get_by_role("option", name="ren", exact=True).click()
        box.get_by_role("button", name="Disable", exact=True).click()
        admin.get_by_text("User ren disabled: they cannot log in.").wait_for(timeout=20_000)
        assert query(work, 'SELECT s.revoked_reason FROM login_session s JOIN "user" u ON u.id = s.user_pk '
                           "WHERE u.name = 'ren'") == [("disabled",)]

        ren.locator("[data-testid=stSidebarNavLink]", has_text="Home").first.click()  # ren's next action
        on_login_page(ren)
        ren.get_by_text(LOGGED_OUT).wait_for(timeout=20_000)
        ren.reload()
        on_login_page(ren)
    finally:
        ren_context.close()
        admin_context.close()
        query(work, "UPDATE \"user\" SET active = true WHERE name = 'ren'")
