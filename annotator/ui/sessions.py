"""The app's side of login sessions (services/login_sessions.py): a reload, or a `?claim=` link
opened in a new tab of the same browser, finds the user still logged in.

- A password login (`start`, `remember`) starts a login session and keeps its one-time ticket; while the
  ticket is not traded yet, every run puts a small script on the page (`keep_alive`) that POSTs
  it to the route of ui/login_cookie.py, whose answer sets the HttpOnly cookie holding the
  session's token. The script never sees the token.
- A run with nobody logged in (`resume`) looks the cookie up (`st.context.cookies`: the cookies
  of the browser's websocket request, so a new tab or a reload brings them) and logs its user in
  while the session is in force.
- Each run's account read checks the session (components.session_user); `keep_alive` records
  the use at most once a minute, in a background thread, so that no page run waits for SQLite's
  write lock.
- Log out (`log_out`) revokes the session, and the login page then DELETEs the cookie
  (`clear_cookie`).

Single sign-on (st.login) has no login session here: Streamlit's own identity cookie keeps it.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from annotator.db import session_scope
from annotator.errors import AnnotatorError
from annotator.models import User, utcnow
from annotator.services import login_sessions
from annotator.ui import components as ui
from annotator.ui.login_cookie import COOKIE, ROUTE

PENDING_TICKET = "auth.pending_ticket"
"""Session state: the ticket of this tab's login, until the browser has traded it for the cookie."""
CLEAR_COOKIE = "auth.clear_cookie"
"""Session state: the key of the login session just logged out of: the login page clears the cookie."""
RESUME_TRIED = "auth.resume_tried"
"""Session state: this browser session looked for a cookie already (it holds the same one until
a reload)."""
CONTAINER = "login-cookie"

_log = logging.getLogger(__name__)


def browser_token() -> str | None:
    """The login session token of the browser's cookie, as its websocket request sent it (None
    when there is none, or no browser: AppTest's client has no cookies)."""
    token = st.context.cookies.get(COOKIE)
    return token if isinstance(token, str) else None


def start(session: Session, user: User) -> login_sessions.StartedSession:
    """After `user`'s password was checked (in `session`, the login's transaction): start their
    login session. Once the transaction is committed, `remember` it."""
    return login_sessions.start_session(session, user)


def remember(user: User, started: login_sessions.StartedSession) -> None:
    """Log `user` in in this browser session with the login session `started`, whose ticket the
    next runs hand to the browser (keep_alive)."""
    ui.remember_user(user, started.session_pk)
    st.session_state[PENDING_TICKET] = started.ticket
    st.session_state.pop(CLEAR_COOKIE, None)


def resume() -> bool:
    """Log in the user of the browser's cookie, when its login session is in force; whether it
    did. Tried once per browser session (the cookie it sees changes only with a reload)."""
    if st.session_state.get(RESUME_TRIED):
        return False
    st.session_state[RESUME_TRIED] = True
    token = browser_token()
    if not token:
        return False
    with ui.read_db() as session:
        found = login_sessions.resume(session, token)
    if found is None:
        return False
    ui.remember_login(found.user_pk, found.user_name, found.session_pk)
    return True


def keep_alive() -> None:
    """At every run of a logged-in user, after the account read (in the sidebar: where it is
    drawn): record the use of the login session when it is due (login_sessions.TOUCH_SECONDS; in
    the background), and, while the browser has no cookie yet, put the script that trades the
    ticket on the page."""
    checked = st.session_state.pop(ui.LOGIN_CHECKED, None)
    session_pk = st.session_state.get(ui.LOGIN_SESSION)
    ticket = None
    if checked is not None and session_pk is not None:
        if checked.touch_due(utcnow()):
            _touch_later(ui.engine(), session_pk)
        if not checked.ticket_pending:
            st.session_state.pop(PENDING_TICKET, None)
        ticket = st.session_state.get(PENDING_TICKET)
    _script(TRADE_SCRIPT.replace("TICKET", json.dumps(ticket)) if ticket else None)


def log_out() -> int | None:
    """Revoke this browser session's login session, if it has one; its key (None: none). Call
    before components.forget_user, then `clear_cookie_next` with the key. A busy database is
    left to the cookie's DELETE, which revokes the session too."""
    session_pk = st.session_state.get(ui.LOGIN_SESSION)
    if session_pk is None:
        return None
    try:
        with ui.db() as session:
            login_sessions.revoke_session(session, session_pk, "logout")
    except AnnotatorError as error:
        _log.log(logging.WARNING, "login session %s not revoked at log out (the cookie's DELETE revokes it): %s", session_pk, error)
    return session_pk


def clear_cookie_next(session_pk: int | None) -> None:
    """After forget_user at log out: the login page clears the cookie of the session `session_pk`."""
    if session_pk is not None:
        st.session_state[CLEAR_COOKIE] = session_pk


def clear_cookie() -> None:
    """On the login page after a log out: the script that DELETEs the cookie (once per log out)."""
    ended = st.session_state.get(CLEAR_COOKIE)
    _script(None if ended is None else CLEAR_SCRIPT.replace("ENDED", json.dumps(str(ended))))


# The ticket is sent once per tab (a rerun draws the same script again); a network failure lets a
# later run send it again. ROUTE and the values are JSON literals.
TRADE_SCRIPT = """<script>
(() => {
  const ticket = TICKET;
  if (window.annotatorLoginTicket === ticket) return;
  window.annotatorLoginTicket = ticket;
  fetch(ROUTE, {method: "POST", body: ticket, credentials: "same-origin", cache: "no-store"})
    .catch(() => { window.annotatorLoginTicket = null; });
})();
</script>""".replace("ROUTE", json.dumps(ROUTE))

CLEAR_SCRIPT = """<script>
(() => {
  const ended = ENDED;
  if (window.annotatorCookieCleared === ended) return;
  window.annotatorCookieCleared = ended;
  window.annotatorLoginTicket = null;
  fetch(ROUTE, {method: "DELETE", credentials: "same-origin", cache: "no-store"})
    .catch(() => { window.annotatorCookieCleared = null; });
})();
</script>""".replace("ROUTE", json.dumps(ROUTE))


def _script(script: str | None) -> None:
    """`script` on the page, in a hidden container (no gap); the container is drawn without one
    too, so that what follows it keeps its place from run to run."""
    with st.container(key=CONTAINER):
        if script is not None:
            st.html(script, unsafe_allow_javascript=True)
    st.html(f"<style>.st-key-{CONTAINER} {{ display: none; }}</style>")  # style only: takes no space


_touching: set[int] = set()
_touching_lock = threading.Lock()
_toucher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="login-touch")


def _touch_later(engine: Engine, session_pk: int) -> None:
    """Record a use of the login session `session_pk` in the background (once at a time per session)."""
    with _touching_lock:
        if session_pk in _touching:
            return
        _touching.add(session_pk)
    _toucher.submit(_touch, engine, session_pk)


def _touch(engine: Engine, session_pk: int) -> None:
    try:
        with session_scope(engine) as session:
            login_sessions.touch(session, session_pk)
    except AnnotatorError as error:  # a busy database: the next run's touch is due again
        _log.log(logging.WARNING, "login session %s: its use not recorded: %s", session_pk, error)
    finally:
        with _touching_lock:
            _touching.discard(session_pk)
