"""Local users: create, find, authenticate, change roles and passwords.

Passwords are hashed with Argon2id (argon2-cffi); a hash is never logged or shown. A user
without a password (created by a labels import) cannot log in until an admin sets one. After
LOGIN_FREE_ATTEMPTS failed logins in a row under one name, each further attempt must wait a delay
that doubles with every failure (login_delay), so guessing a password online is slow. Failures
are counted per typed name whether or not a user has it, and every refusal runs the same Argon2
check, so neither the delay nor the time taken tells which names exist. An attempt is claimed
atomically before its check (one per delay window, however many arrive at once), and the check
runs with no transaction open, in a few low-priority threads (authenticate).
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
import unicodedata
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import case, delete, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, func, select

from annotator.text import MAX_NAME_CHARS, name_skeletons, only_case_differs, user_name
from annotator.errors import InvalidValueError, LoginBusyError, LoginError, NotFoundError
from annotator.messages import english, seconds, shortened
from annotator.services.access import Caller, need_caller, require
from annotator.workflow import Permission
from annotator.models import LoginThrottle, User, utcnow
from annotator.services.audit import record_event
from annotator.services.login_sessions import revoke_user_sessions
from annotator.vocabulary import ROLES

_hasher = PasswordHasher()


def roles_of(user: User | None) -> frozenset[str]:
    """The user's roles as a set of names from `vocabulary.ROLES` (none for no user: None)."""
    if user is None:
        return frozenset()
    return frozenset(role for role in user.roles.split(",") if role)


def has_role(user: User, role: str) -> bool:
    """Whether the user holds `role`; admins hold every role's rights only where a service says so."""
    return role in roles_of(user)


def _check_roles(roles: list[str] | tuple[str, ...]) -> str:
    unknown = [role for role in roles if role not in ROLES]
    if unknown or not roles:
        raise InvalidValueError.of("msg.unknown_role", roles=repr(unknown or roles), choices=", ".join(ROLES))
    return ",".join(role for role in ROLES if role in roles)


def _public(user: User) -> dict:
    return {"name": user.name, "roles": user.roles, "active": user.active, "has_password": user.password_hash is not None}


def get_user(session: Session, name: str) -> User:
    """The user called `name`. Raises NotFoundError."""
    user = session.exec(select(User).where(User.name == unicodedata.normalize("NFC", name))).first()
    if user is None:
        raise NotFoundError.of("msg.no_user", name=shortened(name, MAX_NAME_CHARS))
    return user


class KnownNames:
    """The users' names, found by exact name, up to case, and by what they look like
    (text.name_skeletons), to tell which existing name a new one would be taken for.

    Built once (`of`: one query) and kept up to date with `add`, so that an import computes one
    skeleton per name it has not seen, not one per row. Names already stored that look alike
    stay as they are: only a new name is compared (`taken`).
    """

    def __init__(self, names: Iterable[str] = ()):
        self._exact: set[str] = set()
        self._by_case: dict[str, str] = {}
        self._by_look: tuple[dict[str, str], dict[str, str]] = ({}, {})
        for name in sorted(names):
            self.add(name)

    @classmethod
    def of(cls, session: Session) -> KnownNames:
        """Every user's name in the database."""
        return cls(session.exec(select(User.name)))

    def add(self, name: str) -> None:
        """Know `name` from now on (a user just created)."""
        if name in self._exact:
            return
        self._exact.add(name)
        self._by_case.setdefault(name.lower(), name)
        for index, key in zip(self._by_look, name_skeletons(name), strict=True):
            index.setdefault(key, name)

    def taken(self, name: str) -> str | None:
        """`name` itself when it is known; else the known name that differs from it only in case,
        else one that looks like it (shares a skeleton); None when there is none (of several,
        the first by name)."""
        if name in self._exact:
            return name
        same_case = self._by_case.get(name.lower())
        if same_case is not None:
            return same_case
        for index, key in zip(self._by_look, name_skeletons(name), strict=True):
            if key in index:
                return index[key]
        return None


def taken_name(session: Session, name: str) -> str | None:
    """The name of the user who has `name`: `name` itself when a user has exactly it, else one
    that differs from it only in case, else one that looks like it (`KnownNames.taken`: invisible
    differences aside, full-width letters, letters of another script that look the same);
    None when there is none. The one rule for new names: a name taken so is refused
    (`add_user`; imports, which create the people their files name, keep a KnownNames)."""
    return KnownNames.of(session).taken(name)


def _name_taken_error(name: str, taken: str) -> InvalidValueError:
    """The refusal of the new name `name`, which `taken` (an existing user's) already has, up to
    case, or which looks like it."""
    if taken == name:
        return InvalidValueError.of("msg.user_exists", name=taken)
    if only_case_differs(name, taken):
        return InvalidValueError.of("msg.user_exists_case", name=taken)
    return InvalidValueError.of("msg.user_looks_like", name=name, taken=taken)


def add_user(
    session: Session,
    actor: Caller, name: str, roles: list[str], password: str | None = None
) -> User:
    """Create a user with `roles` (names from ROLES) and an optional password.

    Raises InvalidValueError for an empty name, one with an invisible character or over
    text.MAX_NAME_CHARS characters (`text.user_name`), an unknown role, a password under 8
    characters, and when the name is taken, also up to case or by a name that looks like it
    (`taken_name`).
    """
    require(actor, Permission.MANAGE_USERS)
    name = user_name(name)
    if not name:
        raise InvalidValueError.of("msg.user_needs_name")
    taken = taken_name(session, name)
    if taken is not None:
        raise _name_taken_error(name, taken)
    if password is not None:
        _check_password(password)
    user = User(name=name, roles=_check_roles(roles), password_hash=_hash(password) if password else None)
    session.add(user)
    session.flush()
    record_event(session, actor_pk=actor.id, entity="user", entity_pk=user.id, action="create", after=_public(user))
    return user


def ensure_user(session: Session, name: str, role: str, known: KnownNames | None = None) -> tuple[User, bool]:
    """The user `name`, created without a password and with `role` when unknown.

    known: the names to compare a new name with (default: the database's, read now); a caller
    that creates many keeps one and it learns each name created here.
    Safe when several imports run at once: a concurrent insert of the same name is caught in a
    savepoint and the other transaction's row is used. A known user lacking `role` gains it.
    Raises InvalidValueError for a new name that `add_user` would refuse (`text.user_name`,
    `taken_name`). Returns (user, created).
    """
    _check_roles([role])
    user = session.exec(select(User).where(User.name == name)).first()
    if user is None:
        name = user_name(name)
        known = KnownNames.of(session) if known is None else known
        if not name:
            raise InvalidValueError.of("msg.user_needs_name")
        taken = known.taken(name)
        if taken is not None and taken != name:
            raise _name_taken_error(name, taken)
        try:
            with session.begin_nested():
                user = User(name=name, roles=role)
                session.add(user)
            record_event(session, actor_pk=None, entity="user", entity_pk=user.id, action="create", after=_public(user))
            known.add(name)
            return user, True
        except IntegrityError:
            user = get_user(session, name)
    if role not in roles_of(user):
        _set_roles(session, None, user, [*roles_of(user), role])
    return user, False


def set_roles(session: Session, actor: Caller, user: User, roles: list[str]) -> User:
    """Replace the user's roles; a change revokes their login sessions (they log in again under
    the new roles). Raises InvalidValueError for an unknown role or when the last
    active admin who can log in (`_admin_who_can_log_in`) would lose the admin role,
    PermissionDeniedError unless `actor` may manage users."""
    require(actor, Permission.MANAGE_USERS)
    if "admin" not in roles and _admin_who_can_log_in(user) and _admins_who_can_log_in(session) <= 1:
        raise InvalidValueError.of("msg.last_admin", name=user.name)
    return _set_roles(session, actor.id, user, roles)


def _set_roles(session: Session, actor_pk: int | None, user: User, roles: list[str]) -> User:
    """set_roles without the check, for services that checked their own permission (imports)."""
    before = _public(user)
    user.roles = _check_roles(roles)
    if user.roles != before["roles"]:  # a login made under other roles ends
        revoke_user_sessions(session, user.id, "roles")
    session.add(user)
    record_event(session, actor_pk=actor_pk, entity="user", entity_pk=user.id, action="update", before=before, after=_public(user))
    return user


def set_password(session: Session, actor: Caller, user: User, password: str) -> None:
    """Set (or reset) the user's password and revoke their login sessions (a browser logged in
    with the old password is logged out at its next action). Raises InvalidValueError for one
    under 8 characters."""
    require(actor, Permission.MANAGE_USERS)
    _check_password(password)
    before = _public(user)
    user.password_hash = _hash(password)
    _forget_failures(session, user.name)
    revoke_user_sessions(session, user.id, "password")  # whoever logged in with the old one is out
    session.add(user)
    record_event(session, actor_pk=actor.id, entity="user", entity_pk=user.id, action="update", before=before,
                 after={**_public(user), "password_changed": True})


def set_active(session: Session, actor: Caller, user: User, active: bool) -> None:
    """Enable or disable a user; a disabled user cannot log in (their login sessions are
    revoked), and their labels stay.

    Raises InvalidValueError when an admin would disable themselves, or the last active admin
    who can log in (`_admin_who_can_log_in`) would be disabled: nobody could manage users in the
    app any more (the command line still can).
    """
    require(actor, Permission.MANAGE_USERS)
    if not active:
        if actor.id is not None and actor.id == user.id:
            raise InvalidValueError.of("msg.disable_self")
        if _admin_who_can_log_in(user) and _admins_who_can_log_in(session) <= 1:
            raise InvalidValueError.of("msg.last_admin", name=user.name)
    before = _public(user)
    user.active = active
    if not active:
        revoke_user_sessions(session, user.id, "disabled")
    session.add(user)
    record_event(session, actor_pk=actor.id, entity="user", entity_pk=user.id, action="update", before=before, after=_public(user))


LOCALES = ("en", "ja")
"""The interface languages a user may choose (annotator.ui.i18n holds a catalog for each)."""


def set_locale(session: Session, user: User, locale: str | None) -> User:
    """Store the interface language `user` chose for themselves: "en", "ja", or None to follow
    the browser's language again. A preference of one's own: no permission is needed, and it is
    not written to the audit trail (it changes nothing about labels or people).
    Raises InvalidValueError for any other value."""
    need_caller(user)
    if locale is not None and locale not in LOCALES:
        raise InvalidValueError.of("msg.unknown_language", locale=repr(locale), choices=", ".join(LOCALES))
    user.locale = locale
    session.add(user)
    return user


def _admin_who_can_log_in(user: User) -> bool:
    """An active admin with a password, or named by an email address: the name single sign-on
    logs in as (`user_for_identity`), where users have no password."""
    return user.active and "admin" in roles_of(user) and (user.password_hash is not None or "@" in user.name)


def _admins_who_can_log_in(session: Session) -> int:
    """How many users `_admin_who_can_log_in` holds for: the last one may not be disabled or
    lose the admin role, or nobody could manage users in the app any more."""
    return sum(1 for user in session.exec(select(User).where(User.active)) if _admin_who_can_log_in(user))


LOGIN_FREE_ATTEMPTS = 3
"""Failed logins in a row that cost no delay."""

LOGIN_MAX_DELAY_SECONDS = 300
"""The longest wait between two login attempts under one name."""

LOGIN_FAILURE_MEMORY = timedelta(days=1)
"""A name's failed logins are forgotten this long after its last failure."""

def login_delay(failed_logins: int) -> float:
    """Seconds to wait before the next login attempt after `failed_logins` failures in a row:
    0 up to LOGIN_FREE_ATTEMPTS - 1, then 1, 2, 4, ... doubling, at most LOGIN_MAX_DELAY_SECONDS
    (exponential backoff, as NIST SP 800-63B section 5.2.2 allows for rate limiting)."""
    if failed_logins < LOGIN_FREE_ATTEMPTS:
        return 0.0
    return float(min(2 ** min(failed_logins - LOGIN_FREE_ATTEMPTS, 16), LOGIN_MAX_DELAY_SECONDS))


def _typed_name(name: str) -> str:
    return unicodedata.normalize("NFC", name).strip()


@functools.cache
def _stand_in_hash() -> str:
    return _hasher.hash("a password no account has")


LOGIN_CHECKERS = 2
"""Password checks one process runs at once, each in a thread of the checkers' pool."""

LOGIN_CHECK_NICENESS = 10
"""The checkers' threads' niceness (Linux; elsewhere they keep the process's). An Argon2 check
costs about 0.25 s of CPU: a flood of logins must not take the CPU from labelers saving and from
the server answering."""

LOGIN_QUEUE_SECONDS = 10
"""How long a login waits for a free checker before it is refused as busy (LoginBusyError)."""


def _lower_priority() -> None:
    """The checker thread's niceness to at least LOGIN_CHECK_NICENESS: on Linux a thread has
    its own. Never raises (a pool whose initializer fails checks no password at all)."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread, max(LOGIN_CHECK_NICENESS, os.getpriority(os.PRIO_PROCESS, thread)))
    except OSError:
        pass


_checkers = ThreadPoolExecutor(max_workers=LOGIN_CHECKERS, thread_name_prefix="login-check", initializer=_lower_priority)


def _verify(password_hash: str | None, password: str) -> bool:
    try:
        _hasher.verify(password_hash or _stand_in_hash(), password)
    except (VerificationError, InvalidHashError):
        return False
    return password_hash is not None


def password_matches(password_hash: str | None, password: str) -> bool:
    """Whether `password` matches the Argon2 hash. Without a hash (no such user, a disabled user,
    no password yet) the password is checked against a stand-in hash and refused, so a refusal
    takes the same time whether or not the name belongs to a user who can log in.
    The check runs in one of the LOGIN_CHECKERS low-priority checker threads; raises
    LoginBusyError when none came free within LOGIN_QUEUE_SECONDS (nothing was checked)."""
    check = _checkers.submit(_verify, password_hash, password)
    try:
        return check.result(timeout=LOGIN_QUEUE_SECONDS)
    except FutureTimeoutError:
        if check.cancel():
            raise LoginBusyError.of("msg.login_busy") from None
        return check.result()  # it started meanwhile


def _claim_attempt(session: Session, name: str, now: datetime) -> float | None:
    """Claim one login attempt under `name`, counted in advance as a failure: one atomic upsert
    adds the failure unless the name's delay still runs (then nothing changes), and the delay
    that failure causes starts. Names whose last failure is older than LOGIN_FAILURE_MEMORY are
    forgotten. Concurrent claims under one name wait for each other on its row (PostgreSQL's
    row lock, SQLite's write lock, both held until the claim is committed), so one attempt per
    delay window gets past it.
    Returns the delay in seconds the attempt starts if it fails, or None when it is refused."""
    table = LoginThrottle.__table__
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    upsert = insert(table).values(name=name, failed_logins=1, locked_until=None, last_failed_at=now)
    upsert = upsert.on_conflict_do_update(index_elements=["name"], set_={
        "failed_logins": case((table.c.last_failed_at < now - LOGIN_FAILURE_MEMORY, 1), else_=table.c.failed_logins + 1),
        "last_failed_at": now,
    }, where=table.c.locked_until.is_(None) | (table.c.locked_until <= now)).returning(table.c.failed_logins)
    claimed = session.execute(upsert).scalar_one_or_none()
    if claimed is None:
        return None
    delay = login_delay(claimed)
    session.execute(update(table).where(table.c.name == name)
                    .values(locked_until=now + timedelta(seconds=delay) if delay else None))
    session.execute(delete(table).where(table.c.last_failed_at < now - LOGIN_FAILURE_MEMORY))
    return delay


def _forget_failures(session: Session, name: str) -> None:
    table = LoginThrottle.__table__
    session.execute(delete(table).where(table.c.name == name))


def _wait_seconds(session: Session, name: str, now: datetime) -> int:
    """Whole seconds left of `name`'s delay (at least 1: a refused claim saw it running)."""
    table = LoginThrottle.__table__
    locked_until = session.execute(select(table.c.locked_until).where(table.c.name == name)).scalar_one_or_none()
    return max(1, math.ceil((locked_until - now).total_seconds())) if locked_until is not None else 1


def authenticate(session: Session, name: str, password: str, now: datetime | None = None) -> User:
    """The user whose name and password match.

    name: as typed; NFC-normalized and stripped before it is looked up.
    now: the current time (default: utcnow()), for tests.
    Raises LoginError: the same message, after the same Argon2 check, whether the name is unknown,
    the user disabled or without a password, or the password wrong. Failures are counted per
    typed name, known or not (LoginThrottle), so the delay does not tell which names exist
    either; while a name's delay runs, "wait N seconds" without checking the password at all.

    Three steps, so that no transaction is open during the Argon2 check (on SQLite a login
    would otherwise hold the write lock that every save needs): a short transaction claims the
    attempt (`_claim_attempt`, counted as a failure in advance) and reads the user, and is
    committed; the password is checked; a success clears the name's count and is committed.
    So the session's transaction is committed before the check: give authenticate a session
    with nothing else pending in it. A failure stays counted whatever the caller does next.
    The check waits for a checker thread (`password_matches`): LoginBusyError, counted as a
    failure too, when the process has too many logins to check.
    Raises DatabaseBusyError (from the session's engine) like any short write.
    """
    now = now or utcnow()
    typed = _typed_name(name)
    delay = _claim_attempt(session, typed, now)
    if delay is None:
        wait = _wait_seconds(session, typed, now)
        session.commit()
        raise LoginError.of("msg.login_throttled", wait=seconds(wait))
    user = session.exec(select(User).where(User.name == typed)).first()
    stored_hash = user.password_hash if user is not None and user.active else None
    session.commit()  # the claim is seen by every other attempt; no lock is held while hashing
    if not password_matches(stored_hash, password):
        if delay:
            raise LoginError.of("msg.login_wrong_wait", wait=seconds(math.ceil(delay)))
        raise LoginError.of("msg.login_wrong")
    _forget_failures(session, typed)
    session.commit()
    return user


LOGIN_AGAIN = english("msg.login_again")
"""The refusal of a session whose account is gone or disabled (still_logged_in)."""


def still_logged_in(name: str | None, pk: int | None, account: User | None) -> bool:
    """Whether a session that logged in as `name` with key `pk` still holds its account:
    `account` (the user found by that name or key, or None) has that key and name and is active.
    The one rule for every page's session (ui.session_user) and the label save
    (labeling.save_label_as), which reads the account in the statement that locks the claim."""
    return (name is not None and pk is not None and account is not None and account.id == pk
            and account.name == unicodedata.normalize("NFC", name) and bool(account.active))


def list_users(session: Session, actor: Caller) -> list[User]:
    """All users by name."""
    require(actor, Permission.MANAGE_USERS)
    return list(session.exec(select(User).order_by(User.name)))


MIN_PASSWORD_LENGTH = 8


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidValueError.of("msg.password_short", n=MIN_PASSWORD_LENGTH)


def _hash(password: str) -> str:
    return _hasher.hash(password)


def user_for_identity(session: Session, email: str) -> User | None:
    """The active user a single sign-on identity (the provider's `email` claim) logs in as, or
    None when there is none: no user is named `email` (compared case-insensitively), the user is
    disabled, or several names differ from `email` only in case and none is exactly `email`.

    Users are never created here: an admin adds them first (`annotator users add EMAIL --role
    labeler --no-password`), and their roles come from this table, never from the provider.
    """
    email = email.strip()
    if not email:
        return None
    candidates = list(session.exec(select(User).where(func.lower(User.name) == email.lower())))
    exact = [user for user in candidates if user.name == email]
    if exact:
        user = exact[0]
    elif len(candidates) == 1:
        user = candidates[0]
    else:
        return None
    return user if user.active else None
