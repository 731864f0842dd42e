"""The HTTP side of login sessions (services/login_sessions.py): the route that puts a session's
token into the browser's cookie, and takes it out again.

After a password login the page runs a small script (ui/sessions.py) that POSTs the login's
one-time ticket to ROUTE with fetch(); the answer sets the cookie COOKIE holding the session's
token. The token never appears in a page, an address or JavaScript: only in this `Set-Cookie`
and in the `Cookie` header of the browser's later requests, where the app's websocket request
(`st.context.cookies`) brings it to a new browser session. Log out DELETEs the same route: the
session of the cookie's token is revoked and the cookie cleared.

The cookie: `annotator_session=<token>; HttpOnly; SameSite=Lax; Path=/; Max-Age=<seconds to the
session's absolute expiry>`, and `Secure` when the request came over https (the request's own
scheme, or `X-Forwarded-Proto: https` from a proxy in front). A request another site made
(`Sec-Fetch-Site` other than same-origin, or an `Origin` that is not the app's host) is refused
with 403: no other site can log a browser into an account of its choosing. A ticket unknown,
used or expired is refused with 400, and no cookie is set.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from urllib.parse import urlsplit

from sqlalchemy.engine import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from annotator.db import make_engine, resolve_url, session_scope
from annotator.services.login_sessions import MAX_SECRET_CHARS, IssuedToken, redeem_ticket, revoke_token

COOKIE = "annotator_session"
"""The name of the cookie that holds a login session's token."""

ROUTE = "/_annotator/session"
"""POST a ticket: the cookie is set; DELETE: the cookie's session is revoked and the cookie cleared."""

NO_STORE = {"Cache-Control": "no-store"}


@functools.cache
def _default_engine() -> Engine:
    """The served app's database (DATABASE_URL, which `annotator serve` sets), opened once."""
    return make_engine(resolve_url(None))


def _same_origin(request: Request) -> bool:
    """Whether the request came from the app's own pages: a browser says so in Sec-Fetch-Site
    (Fetch Metadata); an older one sends Origin, compared with Host. A request with neither came
    from no web page (a script, a test) and cannot act for a person's browser."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site == "same-origin"
    origin = request.headers.get("origin")
    return origin is None or urlsplit(origin).netloc.lower() == (request.headers.get("host") or "").lower()


def _over_https(request: Request) -> bool:
    """Whether the browser reached the app over https: the request's scheme, or the first
    X-Forwarded-Proto value a proxy in front of the app set."""
    forwarded = (request.headers.get("x-forwarded-proto") or "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def _cookie_attributes(request: Request) -> dict:
    return {"path": "/", "secure": _over_https(request), "httponly": True, "samesite": "lax"}


async def _body_text(request: Request, limit: int) -> str | None:
    """The request body as text, or None when it is longer than `limit` bytes or not UTF-8."""
    body = b""
    while True:  # the ASGI messages of the body, read one by one so a long one is cut off early
        message = await request.receive()
        if message["type"] != "http.request":  # the browser went away
            return None
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            break
    try:
        return body.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None


def routes(engine: Callable[[], Engine] = _default_engine) -> list[Route]:
    """The route at ROUTE, over the database `engine()` gives (default: the served app's)."""

    def redeem(ticket: str) -> IssuedToken | None:
        with session_scope(engine()) as session:
            return redeem_ticket(session, ticket)

    def revoke(token: str | None) -> None:
        with session_scope(engine()) as session:
            revoke_token(session, token, "logout")

    async def login_session(request: Request) -> Response:
        if not _same_origin(request):
            return PlainTextResponse("refused: a request from another site", status_code=403, headers=NO_STORE)
        if request.method == "DELETE":
            await run_in_threadpool(revoke, request.cookies.get(COOKIE))
            response = Response(status_code=204, headers=NO_STORE)
            response.delete_cookie(COOKIE, **_cookie_attributes(request))
            return response
        ticket = await _body_text(request, MAX_SECRET_CHARS)
        issued = await run_in_threadpool(redeem, ticket) if ticket else None
        if issued is None:
            return PlainTextResponse("refused: the ticket is unknown, used or expired; log in again", status_code=400,
                                     headers=NO_STORE)
        response = Response(status_code=204, headers=NO_STORE)
        response.set_cookie(COOKIE, issued.token, max_age=issued.max_age_seconds, **_cookie_attributes(request))
        return response

    return [Route(ROUTE, login_session, methods=["POST", "DELETE"])]
