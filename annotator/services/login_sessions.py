"""Login sessions: a reload, or a new tab of the same browser, keeps a person logged in
(the README's "Login sessions").

A password login starts a session (`start_session`): a LoginSession row and a one-time ticket,
valid TICKET_SECONDS, that the browser trades once (`redeem_ticket`) for the session's token, a
random `secrets.token_urlsafe(TOKEN_BYTES)` the server sends only in an HttpOnly cookie. Of the
ticket and the token only their SHA-256 is stored: a copy of the database logs nobody in. A new
browser session resumes from the cookie (`resume`) while the session is in force:

- not revoked (log out, the user disabled, their password or their roles changed, an admin's
  `annotator sessions revoke`: `revoke_session`, `revoke_user_sessions`);
- before its absolute expiry: `expires_at`, set at login from the admin's setting, and never later
  than `created_at` plus the setting now (a shorter setting applies to sessions already open);
- within the idle expiry of its last use (`last_seen_at`, which `touch` moves on at most once every
  TOUCH_SECONDS, so that a page run does not write);
- its user still there and active.

The two expiries are settings an admin changes (`set_session_settings`, the Admin page, the
command line); `session_settings` reads them, DEFAULT_IDLE and DEFAULT_ABSOLUTE without a row.
Sources: OWASP Session Management Cheat Sheet (idle and absolute timeouts, renewal at login,
server-side invalidation); NIST SP 800-63B section 7.1 (session secrets of at least 64 bits of
entropy from an approved random generator, not kept in the clear by the verifier).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, update
from sqlmodel import Session, select

from annotator.errors import InvalidValueError
from annotator.models import LoginSession, Setting, User, utcnow
from annotator.services.access import Caller, need_caller, require
from annotator.services.audit import record_event
from annotator.workflow import Permission

TOKEN_BYTES = 32
"""Random bytes of a token and of a ticket (secrets.token_urlsafe: 43 URL-safe characters)."""

TICKET_SECONDS = 60
"""How long a login's ticket can be traded for its token."""

TOUCH_SECONDS = 60
"""`last_seen_at` moves on at most this often: the idle expiry is exact to about a minute."""

DEFAULT_IDLE = timedelta(hours=8)
DEFAULT_ABSOLUTE = timedelta(days=7)

IDLE_HOURS_RANGE = (0.25, 720.0)
"""The idle expiry an admin may set, in hours: 15 minutes to 30 days."""

ABSOLUTE_DAYS_RANGE = (1.0, 365.0)
"""The absolute expiry an admin may set, in days."""

KEPT_AFTER_END = timedelta(days=30)
"""Sessions that ended (expired or revoked) longer ago than this are deleted at the next login."""

REVOKE_REASONS = ("logout", "disabled", "password", "roles", "admin")
"""Why a session was revoked: its user logged out; the user was disabled; their password or their
roles changed; an admin revoked it (`annotator sessions revoke`)."""

MAX_SECRET_CHARS = 200
"""A token or ticket longer than this is refused unread (a real one has 43 characters)."""

IDLE_SETTING = "login.idle_seconds"
ABSOLUTE_SETTING = "login.absolute_seconds"


def token_hash(secret: str) -> str:
    """The SHA-256 of a token or ticket (its UTF-8 bytes), as 64 hex digits: what is stored."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


# --- settings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionSettings:
    """The idle and absolute expiry of login sessions, in whole seconds."""

    idle_seconds: int
    absolute_seconds: int

    @property
    def idle_hours(self) -> float:
        return self.idle_seconds / 3600

    @property
    def absolute_days(self) -> float:
        return self.absolute_seconds / 86400

    def as_dict(self) -> dict[str, float]:
        """{"idle_hours": ..., "absolute_days": ...}: what `annotator sessions settings --json` prints."""
        return {"idle_hours": self.idle_hours, "absolute_days": self.absolute_days}


def session_settings(session: Session) -> SessionSettings:
    """The expiries in force: the admin's settings, else DEFAULT_IDLE and DEFAULT_ABSOLUTE."""
    stored = dict(session.exec(select(Setting.name, Setting.value)
                               .where(Setting.name.in_((IDLE_SETTING, ABSOLUTE_SETTING)))).all())
    return _settings_of(stored.get(IDLE_SETTING), stored.get(ABSOLUTE_SETTING))


def _settings_of(idle: object, absolute: object) -> SessionSettings:
    """SessionSettings from the stored values (None: not set, the default)."""
    return SessionSettings(int(DEFAULT_IDLE.total_seconds() if idle is None else idle),
                           int(DEFAULT_ABSOLUTE.total_seconds() if absolute is None else absolute))


def _with_settings(*columns):  # noqa: ANN002, ANN202 - SQL columns in, a Select out
    """SELECT `columns` and the two stored expiries (NULL when not set): a page run's check in one
    statement, one round trip to PostgreSQL."""
    def stored(name: str):  # noqa: ANN202
        return select(Setting.value).where(Setting.name == name).scalar_subquery()

    return select(*columns, stored(IDLE_SETTING), stored(ABSOLUTE_SETTING))


def _in_range(value: float, bounds: tuple[float, float], key: str) -> float:
    low, high = bounds
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
            or not low <= value <= high:
        raise InvalidValueError.of(key, value=str(value), low=_number(low), high=_number(high))
    return float(value)


def set_session_settings(session: Session, actor: Caller, *, idle_hours: float | None = None,
                         absolute_days: float | None = None) -> SessionSettings:
    """Set the idle expiry (hours) and/or the absolute expiry (days) of login sessions; a value
    left None keeps its setting. Applies at once, also to sessions already open. Recorded in the
    audit trail (entity "setting").

    Raises PermissionDeniedError unless `actor` may manage users; InvalidValueError, changing
    nothing, for an idle expiry outside IDLE_HOURS_RANGE, an absolute one outside
    ABSOLUTE_DAYS_RANGE (also NaN or infinite), or an idle expiry longer than the absolute one.
    """
    require(actor, Permission.MANAGE_USERS)
    before = session_settings(session)
    idle = before.idle_seconds if idle_hours is None else round(
        _in_range(idle_hours, IDLE_HOURS_RANGE, "msg.session_idle_range") * 3600)
    absolute = before.absolute_seconds if absolute_days is None else round(
        _in_range(absolute_days, ABSOLUTE_DAYS_RANGE, "msg.session_absolute_range") * 86400)
    if idle > absolute:
        raise InvalidValueError.of("msg.session_idle_longer", idle=_number(idle / 3600), absolute=_number(absolute / 86400))
    after = SessionSettings(idle, absolute)
    now = utcnow()
    for name, value in ((IDLE_SETTING, idle), (ABSOLUTE_SETTING, absolute)):
        row = session.get(Setting, name)
        if row is None:
            session.add(Setting(name=name, value=value, updated_at=now, updated_by_pk=actor.id))
        elif row.value != value:
            row.value, row.updated_at, row.updated_by_pk = value, now, actor.id
            session.add(row)
    if after != before:
        record_event(session, actor_pk=actor.id, entity="setting", entity_pk=None, action="update",
                     before={"login": before.as_dict()}, after={"login": after.as_dict()})
    session.flush()
    return after


def _number(value: float) -> str:
    """A number of hours or days as a message field: "8", "0.25"."""
    return f"{value:g}"


# --- sessions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartedSession:
    """A new login session: its key, and the ticket the browser trades for its token (shown to
    the browser once; only its hash is stored)."""

    session_pk: int
    ticket: str
    ticket_expires_at: datetime


@dataclass(frozen=True)
class IssuedToken:
    """The token a redeemed ticket gives: for the cookie only, valid `max_age_seconds` more."""

    token: str
    max_age_seconds: int


@dataclass(frozen=True)
class ResumedSession:
    """A login session in force and whose it is."""

    session_pk: int
    user_pk: int
    user_name: str


@dataclass(frozen=True)
class SessionInForce:
    """A login session checked at a page run: when it was last seen, whether its ticket can
    still be traded (the browser has no cookie yet, and may get one)."""

    last_seen_at: datetime
    ticket_pending: bool

    def touch_due(self, now: datetime) -> bool:
        """Whether `touch` would move last_seen_at on at `now`."""
        return now - self.last_seen_at >= timedelta(seconds=TOUCH_SECONDS)


def start_session(session: Session, user: User, now: datetime | None = None) -> StartedSession:
    """Start a login session for `user` (who just logged in with their password), with its
    absolute expiry from the settings and a ticket valid TICKET_SECONDS. Deletes the sessions
    that ended more than KEPT_AFTER_END ago. Raises PermissionDeniedError for no user (None)."""
    need_caller(user)
    now = now or utcnow()
    settings = session_settings(session)
    session.execute(delete(LoginSession).where(or_(LoginSession.expires_at < now - KEPT_AFTER_END,
                                                   LoginSession.revoked_at < now - KEPT_AFTER_END)))
    ticket = secrets.token_urlsafe(TOKEN_BYTES)
    row = LoginSession(user_pk=user.id, ticket_sha256=token_hash(ticket),
                       ticket_expires_at=now + timedelta(seconds=TICKET_SECONDS), created_at=now, last_seen_at=now,
                       expires_at=now + timedelta(seconds=settings.absolute_seconds))
    session.add(row)
    session.flush()
    return StartedSession(row.id, ticket, row.ticket_expires_at)


def _valid(row: LoginSession, settings: SessionSettings, now: datetime) -> bool:
    return (row.revoked_at is None and now < row.expires_at
            and now < row.created_at + timedelta(seconds=settings.absolute_seconds)
            and now < row.last_seen_at + timedelta(seconds=settings.idle_seconds))


def redeem_ticket(session: Session, ticket: str, now: datetime | None = None) -> IssuedToken | None:
    """The token of the session whose ticket `ticket` is, made now and stored as its hash; the
    ticket is used up at once (one UPDATE: of two trades at the same time one wins). None, and
    nothing changed, when the ticket is unknown, used, older than TICKET_SECONDS, or its session
    is no longer in force (revoked or expired)."""
    now = now or utcnow()
    if not ticket or len(ticket) > MAX_SECRET_CHARS:
        return None
    settings = session_settings(session)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    table = LoginSession.__table__
    traded = session.execute(
        update(table).where(table.c.ticket_sha256 == token_hash(ticket), table.c.ticket_expires_at > now,
                            table.c.token_sha256.is_(None), table.c.revoked_at.is_(None), table.c.expires_at > now,
                            table.c.created_at > now - timedelta(seconds=settings.absolute_seconds),
                            table.c.last_seen_at > now - timedelta(seconds=settings.idle_seconds))
        .values(ticket_sha256=None, ticket_expires_at=None, token_sha256=token_hash(token))
        .returning(table.c.created_at, table.c.expires_at)).one_or_none()
    if traded is None:
        return None
    created_at, expires_at = traded
    end = min(expires_at, created_at + timedelta(seconds=settings.absolute_seconds))
    return IssuedToken(token, max(1, int((end - now).total_seconds())))


def resume(session: Session, token: str | None, now: datetime | None = None) -> ResumedSession | None:
    """The login session whose token `token` is (a browser's cookie), when it is in force and its
    user exists and is active; None when the token is missing or unknown, the session is revoked,
    past its absolute expiry or idle longer than the idle expiry, or the user is disabled or
    gone. Reads only (a page run must not wait for SQLite's write lock): `touch` records the use."""
    if not token or len(token) > MAX_SECRET_CHARS:
        return None
    now = now or utcnow()
    found = session.exec(_with_settings(LoginSession, User).join(User, User.id == LoginSession.user_pk)
                         .where(LoginSession.token_sha256 == token_hash(token))).first()
    if found is None:
        return None
    row, user, idle, absolute = found
    if not user.active or not _valid(row, _settings_of(idle, absolute), now):
        return None
    return ResumedSession(row.id, user.id, user.name)


def in_force(session: Session, session_pk: int, user_pk: int, now: datetime | None = None) -> SessionInForce | None:
    """The login session `session_pk` of user `user_pk` as a page run checks it (the user's own
    account is checked apart: users.still_logged_in); None when there is none of that user or it
    is revoked or expired. Reads only."""
    now = now or utcnow()
    found = session.exec(_with_settings(LoginSession).where(LoginSession.id == session_pk)).first()
    if found is None:
        return None
    row, idle, absolute = found
    if row.user_pk != user_pk or not _valid(row, _settings_of(idle, absolute), now):
        return None
    return SessionInForce(row.last_seen_at, row.ticket_sha256 is not None and row.ticket_expires_at > now)


def touch(session: Session, session_pk: int, now: datetime | None = None) -> bool:
    """Record a use of the session now, unless it was recorded less than TOUCH_SECONDS ago or the
    session was revoked; whether it wrote."""
    now = now or utcnow()
    table = LoginSession.__table__
    result = session.execute(update(table).where(table.c.id == session_pk, table.c.revoked_at.is_(None),
                                                 table.c.last_seen_at <= now - timedelta(seconds=TOUCH_SECONDS))
                             .values(last_seen_at=now))
    return result.rowcount > 0


def _revoke(session: Session, condition, reason: str, now: datetime | None) -> int:  # noqa: ANN001 - a SQL condition
    if reason not in REVOKE_REASONS:
        raise ValueError(f"unknown revoke reason {reason!r}; one of {', '.join(REVOKE_REASONS)}")
    table = LoginSession.__table__
    result = session.execute(update(table).where(condition, table.c.revoked_at.is_(None))
                             .values(revoked_at=now or utcnow(), revoked_reason=reason, ticket_sha256=None,
                                     ticket_expires_at=None))
    return result.rowcount


def revoke_session(session: Session, session_pk: int, reason: str = "logout", now: datetime | None = None) -> bool:
    """Revoke one session (log out); whether it was in force until now. Raises ValueError for a
    reason not in REVOKE_REASONS."""
    return _revoke(session, LoginSession.__table__.c.id == session_pk, reason, now) > 0


def revoke_token(session: Session, token: str | None, reason: str = "logout", now: datetime | None = None) -> bool:
    """Revoke the session whose token `token` is (the browser's cookie at log out); whether one was."""
    if not token or len(token) > MAX_SECRET_CHARS:
        return False
    return _revoke(session, LoginSession.__table__.c.token_sha256 == token_hash(token), reason, now) > 0


def revoke_user_sessions(session: Session, user_pk: int, reason: str, now: datetime | None = None) -> int:
    """Revoke every session of the user `user_pk` (disabled, password or roles changed, an
    admin's revoke); how many were not revoked yet. Raises ValueError for a reason not in
    REVOKE_REASONS."""
    return _revoke(session, LoginSession.__table__.c.user_pk == user_pk, reason, now)
