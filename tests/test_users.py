"""Users: password hashing, login, roles, users created by imports. Every test runs on SQLite
and on PostgreSQL, with the cheap Argon2 hasher every in-process test uses (conftest.CHEAP_HASHER;
test_production_passwords_use_argon2id_at_its_recommended_cost pins the real one)."""

import threading
import time
from datetime import timedelta

import pytest
from argon2 import Type
from sqlmodel import select

import annotator.services.users as users
from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.errors import InvalidValueError, LoginError
from annotator.models import LabelEvent, LoginThrottle, User
from annotator.services.users import add_user, authenticate, ensure_user, get_user, roles_of, set_active, set_password, set_roles



def test_production_passwords_use_argon2id_at_its_recommended_cost(monkeypatch, request, production_hasher):
    monkeypatch.setattr(users, "_hasher", production_hasher)
    users._stand_in_hash.cache_clear()
    request.addfinalizer(users._stand_in_hash.cache_clear)  # the next test's stand-in is the cheap one again
    hasher = users._hasher
    # RFC 9106 section 4, second recommended option: t=3, 64 MiB, p=4 (argon2-cffi's default).
    assert (hasher.type, hasher.time_cost, hasher.memory_cost, hasher.parallelism) == (Type.ID, 3, 65536, 4)
    assert users._hash("s3cret-pass").startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert users._stand_in_hash().startswith("$argon2id$v=19$m=65536,t=3,p=4$")  # a refusal costs the same


def test_a_password_is_stored_hashed_and_checked(any_engine):
    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    with session_scope(any_engine) as s:
        stored = get_user(s, "alice").password_hash
        assert stored.startswith("$argon2id$") and "s3cret-pass" not in stored
        assert authenticate(s, "alice", "s3cret-pass").name == "alice"
        assert all("s3cret-pass" not in repr(e.after) for e in s.exec(select(LabelEvent)))


def _failures(session, name: str) -> int:
    throttle = session.get(LoginThrottle, name)
    return 0 if throttle is None else throttle.failed_logins


def test_a_wrong_password_is_refused_and_counted(any_engine):
    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    with pytest.raises(LoginError):
        with session_scope(any_engine) as s:
            authenticate(s, "alice", "wrong-pass")
    with session_scope(any_engine) as s:
        assert _failures(s, "alice") == 1
        authenticate(s, "alice", "s3cret-pass")
    with session_scope(any_engine) as s:
        assert _failures(s, "alice") == 0


def test_users_without_password_or_disabled_cannot_log_in(any_engine):
    with session_scope(any_engine) as s:
        ensure_user(s, "imported", "labeler")
        add_user(s, OPERATOR, "gone", ["labeler"], "s3cret-pass")
        set_active(s, OPERATOR, get_user(s, "gone"), False)
    with session_scope(any_engine) as s:
        for name, password in (("imported", ""), ("gone", "s3cret-pass"), ("nobody", "x")):
            with pytest.raises(LoginError):
                authenticate(s, name, password)
        set_password(s, OPERATOR, get_user(s, "imported"), "now-i-can-log-in")
    with session_scope(any_engine) as s:
        assert authenticate(s, "imported", "now-i-can-log-in").name == "imported"


@pytest.mark.parametrize("name, roles, password", [("", ["labeler"], None), ("x", ["boss"], None), ("x", [], None), ("x", ["labeler"], "short")])
def test_bad_user_input_is_refused(any_engine, name, roles, password):
    with session_scope(any_engine) as s:
        with pytest.raises(InvalidValueError):
            add_user(s, OPERATOR, name, roles, password)


def test_ensure_user_adds_a_missing_role_and_creates_once(any_engine):
    with session_scope(any_engine) as s:
        user, created = ensure_user(s, "dana", "labeler")
        assert created
        user, created = ensure_user(s, "dana", "adjudicator")
        assert not created and roles_of(user) == {"labeler", "adjudicator"}


def test_concurrent_imports_create_one_user(any_engine):
    errors = []

    def create():
        try:
            with session_scope(any_engine) as s:
                ensure_user(s, "same-person", "labeler")
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with session_scope(any_engine) as s:
        assert len(s.exec(select(User).where(User.name == "same-person")).all()) == 1


def test_an_admin_cannot_disable_themselves_nor_the_last_admin(any_engine):
    with session_scope(any_engine) as s:
        root = add_user(s, OPERATOR, "root", ["admin"], "root-password")
        other = add_user(s, OPERATOR, "other", ["admin"], "other-password")
        with pytest.raises(InvalidValueError, match="your own account"):
            set_active(s, root, root, False)
        set_active(s, root, other, False)
        with pytest.raises(InvalidValueError, match="last active admin"):
            set_active(s, OPERATOR, root, False)
        set_active(s, root, other, True)
    with session_scope(any_engine) as s:
        assert get_user(s, "other").active is True


def test_an_admin_without_password_does_not_count_as_the_last_admin(any_engine):
    with session_scope(any_engine) as s:
        boss = add_user(s, OPERATOR, "boss", ["admin"], "boss-password")
        add_user(s, OPERATOR, "boss2", ["admin"], None)
        with pytest.raises(InvalidValueError, match="last active admin"):
            set_active(s, OPERATOR, boss, False)


def test_an_admin_named_by_email_counts_as_an_admin_who_can_log_in_with_single_sign_on(any_engine):
    with session_scope(any_engine) as s:
        boss = add_user(s, OPERATOR, "boss", ["admin"], "boss-password")
        sso_admin = add_user(s, OPERATOR, "lead@example.org", ["admin"], None)
        set_active(s, OPERATOR, boss, False)  # the SSO admin can still log in and manage users
        with pytest.raises(InvalidValueError, match="last active admin who can log in"):
            set_active(s, OPERATOR, sso_admin, False)
    with session_scope(any_engine) as s:
        assert get_user(s, "lead@example.org").active is True


def test_the_last_admin_who_can_log_in_cannot_lose_the_admin_role(any_engine):
    with session_scope(any_engine) as s:
        root = add_user(s, OPERATOR, "root", ["admin", "adjudicator"], "root-password")
        add_user(s, OPERATOR, "nopass", ["admin"], None)  # cannot log in: does not count
        with pytest.raises(InvalidValueError, match="last active admin who can log in"):
            set_roles(s, root, root, ["adjudicator"])
        other = add_user(s, OPERATOR, "other", ["admin"], "other-password")
        set_roles(s, root, root, ["adjudicator"])  # another admin remains
        with pytest.raises(InvalidValueError, match="last active admin who can log in"):
            set_roles(s, OPERATOR, other, ["labeler"])
    with session_scope(any_engine) as s:
        assert get_user(s, "root").roles == "adjudicator" and "admin" in get_user(s, "other").roles


def test_user_names_are_unique_whatever_their_case(any_engine):
    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "boss", ["labeler"], "boss-password")
        with pytest.raises(InvalidValueError, match="differ only in case"):
            add_user(s, OPERATOR, "BOSS", ["labeler"], "boss-password")


def test_login_delay_is_free_at_first_then_doubles_up_to_a_cap():
    from annotator.services.users import LOGIN_FREE_ATTEMPTS, LOGIN_MAX_DELAY_SECONDS, login_delay

    assert [login_delay(n) for n in range(LOGIN_FREE_ATTEMPTS)] == [0.0] * LOGIN_FREE_ATTEMPTS
    assert [login_delay(LOGIN_FREE_ATTEMPTS + k) for k in range(4)] == [1.0, 2.0, 4.0, 8.0]
    assert login_delay(1000) == LOGIN_MAX_DELAY_SECONDS


def test_repeated_failed_logins_make_the_account_wait_without_checking_the_password(any_engine):
    from datetime import timedelta

    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FREE_ATTEMPTS

    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    start = utcnow()
    for attempt in range(LOGIN_FREE_ATTEMPTS):
        with pytest.raises(LoginError) as error, session_scope(any_engine) as s:
            authenticate(s, "alice", "wrong-pass", now=start)
    assert "wait 1 second before" in str(error.value)
    with pytest.raises(LoginError, match="too many failed logins"), session_scope(any_engine) as s:
        authenticate(s, "alice", "s3cret-pass", now=start)  # the right password, but too early
    with session_scope(any_engine) as s:
        assert _failures(s, "alice") == LOGIN_FREE_ATTEMPTS  # the early try is not counted
        assert authenticate(s, "alice", "s3cret-pass", now=start + timedelta(seconds=1)).name == "alice"
    with session_scope(any_engine) as s:
        assert _failures(s, "alice") == 0 and s.get(LoginThrottle, "alice") is None


def test_a_new_password_lifts_the_login_delay(any_engine):
    from annotator.models import utcnow

    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    now = utcnow()
    for _ in range(6):
        with pytest.raises(LoginError), session_scope(any_engine) as s:
            authenticate(s, "alice", "wrong-pass", now=now)
    with session_scope(any_engine) as s:
        set_password(s, OPERATOR, get_user(s, "alice"), "brand-new-pass")
    with session_scope(any_engine) as s:
        assert authenticate(s, "alice", "brand-new-pass", now=now).name == "alice"


def _refusals(engine, name: str, password: str, now, attempts: int) -> list[str]:
    messages = []
    for _ in range(attempts):
        with pytest.raises(LoginError) as refused, session_scope(engine) as s:
            authenticate(s, name, password, now=now)
        messages.append(str(refused.value))
    return messages


def test_the_login_delay_and_its_messages_do_not_tell_which_names_exist(any_engine):
    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FREE_ATTEMPTS

    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
        add_user(s, OPERATOR, "gone", ["labeler"], "s3cret-pass")
        set_active(s, OPERATOR, get_user(s, "gone"), False)
        ensure_user(s, "imported", "labeler")
    now = utcnow()
    seen = {name: _refusals(any_engine, name, "wrong-pass", now, LOGIN_FREE_ATTEMPTS + 1)
            for name in ("alice", "gone", "imported", "nobody")}
    assert len({tuple(messages) for messages in seen.values()}) == 1, seen
    assert "wait 1 second before" in seen["nobody"][-2] and "too many failed logins" in seen["nobody"][-1]


def test_every_refusal_runs_the_password_check(any_engine, monkeypatch):
    import annotator.services.users as users

    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "gone", ["labeler"], "s3cret-pass")
        set_active(s, OPERATOR, get_user(s, "gone"), False)
        ensure_user(s, "imported", "labeler")
    checked = []

    class CountingHasher:
        def verify(self, stored, password):
            checked.append(password)
            return real.verify(stored, password)

        def hash(self, password):
            return real.hash(password)

    real = users._hasher
    monkeypatch.setattr(users, "_hasher", CountingHasher())
    for name in ("nobody", "gone", "imported"):
        with pytest.raises(LoginError), session_scope(any_engine) as s:
            authenticate(s, name, f"typed-for-{name}")
    assert checked == ["typed-for-nobody", "typed-for-gone", "typed-for-imported"]


def test_failed_logins_are_forgotten_a_day_after_the_last_one(any_engine):
    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FAILURE_MEMORY

    start = utcnow()
    _refusals(any_engine, "nobody", "x", start, 3)
    _refusals(any_engine, "someone", "x", start, 1)
    later = start + LOGIN_FAILURE_MEMORY + timedelta(seconds=1)
    assert _refusals(any_engine, "nobody", "x", later, 1) == [
        "unknown user name or wrong password (or the account has no password yet)"]
    with session_scope(any_engine) as s:
        assert _failures(s, "nobody") == 1
        assert s.get(LoginThrottle, "someone") is None  # pruned by the later failure


def test_concurrent_failed_logins_under_one_name_are_each_counted(any_engine, monkeypatch):
    import annotator.services.users as users

    monkeypatch.setattr(users, "LOGIN_FREE_ATTEMPTS", 100)
    errors = []

    def fail():
        try:
            with session_scope(any_engine) as s:
                authenticate(s, "nobody", "wrong-pass")
        except LoginError:
            pass
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=fail) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with session_scope(any_engine) as s:
        assert _failures(s, "nobody") == 8


def test_a_login_holds_no_transaction_and_no_write_lock_while_the_password_is_checked(any_engine, monkeypatch):
    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    seen = []
    real = users._hasher

    class Watching:
        def verify(self, stored, password):
            seen.append((session.in_transaction(), _someone_else_can_write(any_engine)))
            return real.verify(stored, password)

        def hash(self, password):
            return real.hash(password)

    monkeypatch.setattr(users, "_hasher", Watching())
    for name, password in (("alice", "s3cret-pass"), ("alice", "wrong-pass"), ("nobody", "x")):
        try:
            with session_scope(any_engine) as session:
                authenticate(session, name, password)
        except LoginError:
            pass
    assert seen == [(False, True)] * 3


def _someone_else_can_write(engine) -> bool:
    """Whether another connection can start writing at once (SQLite: take the write lock
    without waiting; PostgreSQL: update a login_throttle row with no lock timeout to spare)."""
    if engine.dialect.name == "sqlite":
        import sqlite3

        connection = sqlite3.connect(engine.url.database, timeout=0, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError:
            return False
        finally:
            connection.close()
    from sqlalchemy import text

    with engine.connect() as connection:
        connection.execute(text("SET LOCAL lock_timeout = '100ms'"))
        try:
            connection.execute(text("UPDATE login_throttle SET failed_logins = failed_logins"))
            return True
        except Exception:  # noqa: BLE001 - a lock timeout means "held"
            return False
        finally:
            connection.rollback()


def test_simultaneous_attempts_after_the_delay_get_one_password_check(any_engine, monkeypatch):
    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FREE_ATTEMPTS

    start = utcnow()
    _refusals(any_engine, "alice", "wrong-pass", start, LOGIN_FREE_ATTEMPTS)  # alice waits 1 second now
    later = start + timedelta(seconds=1)
    checked, outcomes, errors = [], [], []
    real = users._hasher

    class Slow:  # long enough for every thread to arrive while the first check runs
        def verify(self, stored, password):
            checked.append(password)
            time.sleep(0.5)
            return real.verify(stored, password)

        def hash(self, password):
            return real.hash(password)

    monkeypatch.setattr(users, "_hasher", Slow())
    ready = threading.Barrier(20)

    def attempt():
        ready.wait()
        try:
            with session_scope(any_engine) as s:
                authenticate(s, "alice", "wrong-pass", now=later)
        except LoginError as error:
            outcomes.append(error.key)
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=attempt) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert checked == ["wrong-pass"]
    assert sorted(outcomes) == ["msg.login_throttled"] * 19 + ["msg.login_wrong_wait"]
    with session_scope(any_engine) as s:
        assert _failures(s, "alice") == LOGIN_FREE_ATTEMPTS + 1


def test_password_checks_run_at_most_two_at_once_in_low_priority_threads(any_engine, monkeypatch):
    import os

    real, lock = users._hasher, threading.Lock()
    running, most, niceness = [0], [0], set()

    class Watching:
        def verify(self, stored, password):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                niceness.add(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
            time.sleep(0.2)
            with lock:
                running[0] -= 1
            return real.verify(stored, password)

        def hash(self, password):
            return real.hash(password)

    monkeypatch.setattr(users, "_hasher", Watching())

    def attempt(n):
        with pytest.raises(LoginError), session_scope(any_engine) as s:
            authenticate(s, f"nobody-{n}", "wrong-pass")

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (most[0], niceness) == (2, {max(10, os.getpriority(os.PRIO_PROCESS, 0))})


def test_a_login_that_waits_too_long_for_a_password_check_is_refused_as_busy(any_engine, monkeypatch):
    monkeypatch.setattr(users, "LOGIN_QUEUE_SECONDS", 0.2)
    release = threading.Event()
    blocking = [users._checkers.submit(release.wait) for _ in range(users.LOGIN_CHECKERS)]
    try:
        with pytest.raises(LoginError) as refused, session_scope(any_engine) as s:
            authenticate(s, "alice", "s3cret-pass")
    finally:
        release.set()
    assert [b.result() for b in blocking] == [True] * users.LOGIN_CHECKERS
    assert (refused.value.key, str(refused.value)) == (
        "msg.login_busy", "too many logins are being checked at once; yours was not checked. Try again in a moment")
