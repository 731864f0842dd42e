"""What `annotator serve` and `annotator demo` run: the app (app.py) as a Streamlit `st.App`, with
two additions: every HTTP response says that no other site may show the app in a frame
(clickjacking), as `FRAME_HEADERS`; and the route of login_cookie.py, which puts a login
session's token into an HttpOnly cookie (and takes it out at log out), so that a reload keeps
the user logged in.

Streamlit has no setting for response headers. `st.App` (Streamlit's ASGI app) takes Starlette
middleware, which sees every response: pages, static files, `/_stcore/health`, media, errors;
and Starlette routes of its own beside Streamlit's.
`streamlit run annotator/ui/server.py [options]` finds `app` here and serves it, with the same
options as `streamlit run annotator/ui/app.py`; nothing of Streamlit's is patched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware

from annotator.ui import login_cookie

FRAME_HEADERS: dict[str, str] = {
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}
"""CSP Level 2's frame-ancestors (https://www.w3.org/TR/CSP2/#directive-frame-ancestors) and the
older X-Frame-Options (RFC 7034) for browsers without it: no site may frame the app, not even
its own origin."""


class FrameDenied:
    """ASGI middleware: adds FRAME_HEADERS to the start of every HTTP response (a response's own
    Content-Security-Policy keeps its directives and gets frame-ancestors added)."""

    def __init__(self, app: Any) -> None:  # noqa: ANN401 - an ASGI app
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:  # noqa: ANN401 - ASGI callables
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                policy = headers.get("Content-Security-Policy")
                headers["Content-Security-Policy"] = (FRAME_HEADERS["Content-Security-Policy"] if not policy
                                                      else policy if "frame-ancestors" in policy
                                                      else f"{policy}; {FRAME_HEADERS['Content-Security-Policy']}")
                headers["X-Frame-Options"] = FRAME_HEADERS["X-Frame-Options"]
            await send(message)

        await self.app(scope, receive, send_with_headers)


app = st.App(str(Path(__file__).with_name("app.py")), routes=login_cookie.routes(), middleware=[Middleware(FrameDenied)])
