"""Login sessions in the app (ui/sessions.py) through AppTest, on the database and helpers of
tests/test_ui_app.py: a login starts a session and hands its ticket to the browser, a new browser
session with the cookie's token lands logged in (also on a `?claim=` link), log out revokes the
session and clears the cookie, a password change logs an open page out at its next action, and
the Admin page sets the expiries. AppTest has no browser and so no cookie: the token the browser
would send is put where the app reads it (sessions.browser_token). The real cookie, in Chromium:
tests/test_sessions_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from annotator.db import session_scope
from annotator.models import LoginSession
from annotator.services import login_sessions
from annotator.services.access import OPERATOR
from annotator.services.users import get_user, set_password
from annotator.ui import sessions
from tests.test_ui_app import APP, engine, open_app, shown_claim  # noqa: F401 - engine: the seeded database

LOGIN_TITLE = "RAG claim annotator"


def scripts(at: AppTest) -> list[str]:
    """The bodies of the page's st.html elements that hold a script."""
    return [html.proto.body for html in at.get("html") if "<script>" in html.proto.body]


def trade_scripts(at: AppTest) -> list[str]:
    return [body for body in scripts(at) if '"POST"' in body]


def rows(engine, name: str) -> list[LoginSession]:  # noqa: ANN001
    with session_scope(engine) as session:
        user = get_user(session, name)
        return list(session.exec(select(LoginSession).where(LoginSession.user_pk == user.id).order_by(LoginSession.id)))


def cookie_of(engine, at: AppTest) -> str:  # noqa: ANN001
    """What the browser does with the login's ticket: trade it for the token of its cookie."""
    with session_scope(engine) as session:
        issued = login_sessions.redeem_ticket(session, at.session_state[sessions.PENDING_TICKET])
    assert issued is not None
    return issued.token


def new_tab(monkeypatch, token: str | None, query: dict | None = None) -> AppTest:  # noqa: ANN001
    """A new browser session (a reload, a new tab) whose websocket request brings `token` in the cookie."""
    monkeypatch.setattr(sessions, "browser_token", lambda: token)
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception
    return at


def logged_in_as(at: AppTest) -> str | None:
    return at.session_state["auth.user_name"] if "auth.user_name" in at.session_state else None


def test_the_login_fields_let_a_password_manager_fill_them(engine):
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    assert at.text_input(key="login.name").proto.autocomplete == "username"
    assert at.text_input(key="login.password").proto.autocomplete == "current-password"


def test_a_login_starts_a_session_and_hands_its_ticket_to_the_browser_until_traded(engine):
    at = open_app("aoi", home=True)
    (row,) = rows(engine, "aoi")
    assert at.session_state["auth.login_session"] == row.id and row.token_sha256 is None
    ticket = at.session_state[sessions.PENDING_TICKET]
    assert row.ticket_sha256 == login_sessions.token_hash(ticket)
    (script,) = trade_scripts(at)
    assert f'"{ticket}"' in script and '"/_annotator/session"' in script
    at.run()
    assert len(trade_scripts(at)) == 1  # drawn again until the browser has traded it
    cookie_of(engine, at)
    at.run()
    assert trade_scripts(at) == [] and sessions.PENDING_TICKET not in at.session_state


def test_a_new_tab_with_the_cookie_lands_logged_in_and_records_nothing_in_the_clear(engine, monkeypatch):
    token = cookie_of(engine, open_app("aoi", home=True))
    at = new_tab(monkeypatch, token)
    assert logged_in_as(at) == "aoi" and [t.value for t in at.title] == ["Home"]
    assert "Logged in as **aoi** (labeler)" in [c.value for c in at.sidebar.caption]
    assert trade_scripts(at) == []  # the browser has its cookie already
    assert token not in repr([at.session_state[key] for key in at.session_state])


def test_a_claim_link_opened_in_a_new_tab_with_the_cookie_lands_on_the_claim(engine, monkeypatch):
    token = cookie_of(engine, open_app("aoi", home=True))
    at = new_tab(monkeypatch, token, {"claim": "case-2-c1"})
    assert logged_in_as(at) == "aoi"
    assert shown_claim(at) == "case-2-c1"
    assert "auth.pending_claim" not in at.session_state


@pytest.mark.parametrize("token", [None, "", "a-token-nobody-has"])
def test_a_new_tab_without_a_known_cookie_shows_the_login_page_and_no_error(engine, monkeypatch, token):
    at = new_tab(monkeypatch, token, {"claim": "case-2-c1"})
    assert logged_in_as(at) is None and [t.value for t in at.title] == [LOGIN_TITLE]
    assert [e.value for e in at.error] == []
    assert at.session_state["auth.pending_claim"] == ["case-2-c1"]  # kept for after the login, as before


def test_log_out_revokes_the_session_clears_the_cookie_and_a_reload_shows_the_login_page(engine, monkeypatch):
    at = open_app("aoi", home=True)
    token = cookie_of(engine, at)
    at.sidebar.button(key="app.logout").click().run()
    assert logged_in_as(at) is None and [t.value for t in at.title] == [LOGIN_TITLE]
    (row,) = rows(engine, "aoi")
    assert row.revoked_reason == "logout"
    assert [body for body in scripts(at) if '"DELETE"' in body]  # the login page clears the cookie
    assert logged_in_as(new_tab(monkeypatch, token)) is None


def test_log_out_in_one_tab_logs_the_other_tabs_of_the_browser_out_at_their_next_action(engine, monkeypatch):
    first = open_app("aoi", home=True)
    token = cookie_of(engine, first)
    second = new_tab(monkeypatch, token)
    second.sidebar.button(key="app.logout").click().run()
    first.run()
    assert logged_in_as(first) is None
    assert [e.value for e in first.error] == ["You are no longer logged in (or your account was disabled); log in again."]


def test_a_password_change_logs_an_open_page_out_at_its_next_action_and_its_cookie_resumes_nobody(engine, monkeypatch):
    at = open_app("aoi")
    token = cookie_of(engine, at)
    with session_scope(engine) as session:
        set_password(session, OPERATOR, get_user(session, "aoi"), "a-new-password")
    at.run()
    assert logged_in_as(at) is None and [t.value for t in at.title] == [LOGIN_TITLE]
    assert [e.value for e in at.error] == ["You are no longer logged in (or your account was disabled); log in again."]
    assert logged_in_as(new_tab(monkeypatch, token)) is None


def test_a_session_set_directly_without_a_login_session_still_works(engine):
    at = AppTest.from_file(str(APP), default_timeout=30)
    with session_scope(engine) as session:
        user = get_user(session, "aoi")
        at.session_state["auth.user_pk"], at.session_state["auth.user_name"] = user.id, user.name
    at.run()
    assert not at.exception and [t.value for t in at.title] == ["Home"]


def test_the_admin_sets_the_expiries_on_the_users_tab(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    assert at.number_input(key="admin.sessions_idle").value == 8.0
    assert at.number_input(key="admin.sessions_absolute").value == 7.0
    at.number_input(key="admin.sessions_idle").set_value(2.5)
    at.number_input(key="admin.sessions_absolute").set_value(3.0)
    at.button(key="admin.sessions_button").click().run()
    assert [s.value for s in at.success] == ["Logins now end after 2.5 hour(s) unused, or 3 day(s) after the login."]
    with session_scope(engine) as session:
        assert login_sessions.session_settings(session).as_dict() == {"idle_hours": 2.5, "absolute_days": 3.0}
    assert at.number_input(key="admin.sessions_idle").value == 2.5


def test_an_idle_expiry_longer_than_the_absolute_one_is_refused_on_the_admin_page(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.number_input(key="admin.sessions_idle").set_value(48.0)
    at.number_input(key="admin.sessions_absolute").set_value(1.0)
    at.button(key="admin.sessions_button").click().run()
    assert [e.value for e in at.error] == [
        "the idle expiry (48 hour(s)) cannot be longer than the absolute expiry (1 day(s)); shorten the idle expiry or "
        "lengthen the absolute one"]
    with session_scope(engine) as session:
        assert login_sessions.session_settings(session).as_dict() == {"idle_hours": 8.0, "absolute_days": 7.0}
    assert at.number_input(key="admin.sessions_idle").value == 8.0  # the stored value shown again


@pytest.mark.parametrize("idle", [0.0, -1.0, 0.1, 721.0])
def test_an_idle_expiry_out_of_range_is_refused_in_words_on_the_admin_page(engine, idle):
    """The box takes any number, so the browser never keeps a bad value to itself with only a red
    mark: the service refuses it with its range, and the stored value comes back."""
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.number_input(key="admin.sessions_idle").set_value(idle)
    at.button(key="admin.sessions_button").click().run()
    shown = [e.value.replace("\\", "") for e in at.error]  # the page escapes Markdown: 0\\.25
    assert len(shown) == 1 and "from 0.25 to 720 hours" in shown[0], shown
    assert not at.success
    with session_scope(engine) as session:
        assert login_sessions.session_settings(session).as_dict() == {"idle_hours": 8.0, "absolute_days": 7.0}
    assert at.number_input(key="admin.sessions_idle").value == 8.0
