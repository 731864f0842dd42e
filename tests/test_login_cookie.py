"""The login cookie's route (ui/login_cookie.py) through Starlette's TestClient: a ticket traded
for the HttpOnly cookie with exactly its attributes, a used, expired or unknown ticket refused
with no cookie, requests of other sites refused, and log out's DELETE revoking the session and
clearing the cookie."""

from __future__ import annotations

from datetime import timedelta
from http.cookies import SimpleCookie

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from annotator.db import session_scope
from annotator.models import LoginSession, utcnow
from annotator.services import login_sessions as ls
from annotator.services.access import OPERATOR
from annotator.services.users import add_user, get_user
from annotator.ui.login_cookie import COOKIE, ROUTE, routes


@pytest.fixture
def client(engine):
    with session_scope(engine) as session:
        add_user(session, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    with TestClient(Starlette(routes=routes(lambda: engine))) as client:
        yield client


def ticket(engine, now=None) -> ls.StartedSession:  # noqa: ANN001
    with session_scope(engine) as session:
        return ls.start_session(session, get_user(session, "alice"), now)


def set_cookie(response) -> SimpleCookie:  # noqa: ANN001 - an httpx Response
    """The response's Set-Cookie headers, parsed."""
    cookie = SimpleCookie()
    for header in response.headers.get_list("set-cookie"):
        cookie.load(header)
    return cookie


def test_a_ticket_sets_the_session_cookie_httponly_samesite_lax_for_the_whole_app_until_the_absolute_expiry(engine, client):
    started = ticket(engine)
    response = client.post(ROUTE, content=started.ticket)
    assert response.status_code == 204
    assert response.headers["cache-control"] == "no-store"
    (header,) = response.headers.get_list("set-cookie")
    attributes = [part.strip() for part in header.split(";")]
    name, token = attributes[0].split("=", 1)
    assert name == COOKIE
    assert sorted(a.lower() for a in attributes[1:] if not a.lower().startswith("max-age")) == ["httponly", "path=/", "samesite=lax"]
    max_age = int(next(a for a in attributes if a.lower().startswith("max-age")).split("=")[1])
    assert 7 * 86400 - 5 <= max_age <= 7 * 86400
    with session_scope(engine) as session:
        assert session.get(LoginSession, started.session_pk).token_sha256 == ls.token_hash(token)
        assert ls.resume(session, token).user_name == "alice"


@pytest.mark.parametrize("base_url, headers", [
    ("https://annotator.example", {}),
    ("http://annotator.example", {"X-Forwarded-Proto": "https"}),
    ("http://annotator.example", {"X-Forwarded-Proto": "https, http"}),
])
def test_the_cookie_is_secure_when_the_browser_came_over_https(engine, base_url, headers):
    with session_scope(engine) as session:
        add_user(session, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    with TestClient(Starlette(routes=routes(lambda: engine)), base_url=base_url) as client:
        response = client.post(ROUTE, content=ticket(engine).ticket, headers=headers)
    assert response.status_code == 204
    assert set_cookie(response)[COOKIE]["secure"] is True


def test_over_plain_http_the_cookie_is_not_secure(engine, client):
    response = client.post(ROUTE, content=ticket(engine).ticket, headers={"X-Forwarded-Proto": "http"})
    assert response.status_code == 204 and not set_cookie(response)[COOKIE]["secure"]


def test_a_used_expired_unknown_empty_or_oversized_ticket_is_refused_with_no_cookie(engine, client):
    used = ticket(engine)
    assert client.post(ROUTE, content=used.ticket).status_code == 204
    expired = ticket(engine, utcnow() - timedelta(seconds=ls.TICKET_SECONDS + 1))
    for body in (used.ticket, expired.ticket, "not-a-ticket", "", "x" * 10_000, b"\xff\xfe"):
        response = client.post(ROUTE, content=body)
        assert response.status_code == 400, body
        assert "set-cookie" not in response.headers
        assert "log in again" in response.text
    with session_scope(engine) as session:
        assert session.get(LoginSession, expired.session_pk).token_sha256 is None


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "https://evil.example"},
])
def test_a_request_another_site_made_is_refused_and_leaves_the_ticket_usable(engine, client, headers):
    started = ticket(engine)
    response = client.post(ROUTE, content=started.ticket, headers=headers)
    assert response.status_code == 403 and "set-cookie" not in response.headers
    assert client.post(ROUTE, content=started.ticket, headers={"Sec-Fetch-Site": "same-origin",
                                                              "Origin": "http://testserver"}).status_code == 204


def test_the_app_s_own_page_may_post(engine, client):
    response = client.post(ROUTE, content=ticket(engine).ticket, headers={"Origin": "http://testserver"})
    assert response.status_code == 204


def test_delete_revokes_the_cookie_s_session_and_clears_the_cookie(engine, client):
    started = ticket(engine)
    assert client.post(ROUTE, content=started.ticket).status_code == 204
    token = client.cookies[COOKIE]
    response = client.delete(ROUTE)
    assert response.status_code == 204
    cleared = set_cookie(response)[COOKIE]
    assert cleared.value in ("", '""') and cleared["max-age"] == "0" and cleared["path"] == "/" and cleared["httponly"]
    with session_scope(engine) as session:
        assert ls.resume(session, token) is None
        assert session.get(LoginSession, started.session_pk).revoked_reason == "logout"


def test_delete_without_a_cookie_still_clears_it(client):
    response = client.delete(ROUTE)
    assert response.status_code == 204 and set_cookie(response)[COOKIE]["max-age"] == "0"


def test_other_methods_are_not_allowed(client):
    assert client.get(ROUTE).status_code == 405
