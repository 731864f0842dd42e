"""Users: password hashing, login, roles, users created by imports."""

import threading
from datetime import timedelta

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.errors import InvalidValueError, LoginError
from annotator.models import LabelEvent, LoginThrottle, User
from annotator.services.users import add_user, authenticate, ensure_user, get_user, roles_of, set_active, set_password, set_roles


def test_a_password_is_stored_hashed_and_checked(engine):
    with session_scope(engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    with session_scope(engine) as s:
        stored = get_user(s, "alice").password_hash
        assert stored.startswith("$argon2id$") and "s3cret-pass" not in stored
        assert authenticate(s, "alice", "s3cret-pass").name == "alice"
        assert all("s3cret-pass" not in repr(e.after) for e in s.exec(select(LabelEvent)))


def _failures(session, name: str) -> int:
    throttle = session.get(LoginThrottle, name)
    return 0 if throttle is None else throttle.failed_logins


def test_a_wrong_password_is_refused_and_counted(engine):
    with session_scope(engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    with pytest.raises(LoginError):
        with session_scope(engine) as s:
            authenticate(s, "alice", "wrong-pass")
    with session_scope(engine) as s:
        assert _failures(s, "alice") == 1
        authenticate(s, "alice", "s3cret-pass")
    with session_scope(engine) as s:
        assert _failures(s, "alice") == 0


def test_users_without_password_or_disabled_cannot_log_in(engine):
    with session_scope(engine) as s:
        ensure_user(s, "imported", "labeler")
        add_user(s, OPERATOR, "gone", ["labeler"], "s3cret-pass")
        set_active(s, OPERATOR, get_user(s, "gone"), False)
    with session_scope(engine) as s:
        for name, password in (("imported", ""), ("gone", "s3cret-pass"), ("nobody", "x")):
            with pytest.raises(LoginError):
                authenticate(s, name, password)
        set_password(s, OPERATOR, get_user(s, "imported"), "now-i-can-log-in")
    with session_scope(engine) as s:
        assert authenticate(s, "imported", "now-i-can-log-in").name == "imported"


@pytest.mark.parametrize("name, roles, password", [("", ["labeler"], None), ("x", ["boss"], None), ("x", [], None), ("x", ["labeler"], "short")])
def test_bad_user_input_is_refused(engine, name, roles, password):
    with session_scope(engine) as s:
        with pytest.raises(InvalidValueError):
            add_user(s, OPERATOR, name, roles, password)


def test_ensure_user_adds_a_missing_role_and_creates_once(engine):
    with session_scope(engine) as s:
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


def test_an_admin_cannot_disable_themselves_nor_the_last_admin(engine):
    with session_scope(engine) as s:
        root = add_user(s, OPERATOR, "root", ["admin"], "root-password")
        other = add_user(s, OPERATOR, "other", ["admin"], "other-password")
        with pytest.raises(InvalidValueError, match="your own account"):
            set_active(s, root, root, False)
        set_active(s, root, other, False)
        with pytest.raises(InvalidValueError, match="last active admin"):
            set_active(s, OPERATOR, root, False)
        set_active(s, root, other, True)
    with session_scope(engine) as s:
        assert get_user(s, "other").active is True


def test_an_admin_without_password_does_not_count_as_the_last_admin(engine):
    with session_scope(engine) as s:
        boss = add_user(s, OPERATOR, "boss", ["admin"], "boss-password")
        add_user(s, OPERATOR, "boss2", ["admin"], None)
        with pytest.raises(InvalidValueError, match="last active admin"):
            set_active(s, OPERATOR, boss, False)


def test_an_admin_named_by_email_counts_as_an_admin_who_can_log_in_with_single_sign_on(engine):
    with session_scope(engine) as s:
        boss = add_user(s, OPERATOR, "boss", ["admin"], "boss-password")
        sso_admin = add_user(s, OPERATOR, "lead@example.org", ["admin"], None)
        set_active(s, OPERATOR, boss, False)  # the SSO admin can still log in and manage users
        with pytest.raises(InvalidValueError, match="last active admin who can log in"):
            set_active(s, OPERATOR, sso_admin, False)
    with session_scope(engine) as s:
        assert get_user(s, "lead@example.org").active is True


def test_the_last_admin_who_can_log_in_cannot_lose_the_admin_role(engine):
    with session_scope(engine) as s:
        root = add_user(s, OPERATOR, "root", ["admin", "adjudicator"], "root-password")
        add_user(s, OPERATOR, "nopass", ["admin"], None)  # cannot log in: does not count
        with pytest.raises(InvalidValueError, match="last active admin who can log in"):
            set_roles(s, root, root, ["adjudicator"])
        other = add_user(s, OPERATOR, "other", ["admin"], "other-password")
        set_roles(s, root, root, ["adjudicator"])  # another admin remains
        with pytest.raises(InvalidValueError, match="last active admin who can log in"):
            set_roles(s, OPERATOR, other, ["labeler"])
    with session_scope(engine) as s:
        assert get_user(s, "root").roles == "adjudicator" and "admin" in get_user(s, "other").roles


def test_user_names_are_unique_whatever_their_case(engine):
    with session_scope(engine) as s:
        add_user(s, OPERATOR, "boss", ["labeler"], "boss-password")
        with pytest.raises(InvalidValueError, match="differ only in case"):
            add_user(s, OPERATOR, "BOSS", ["labeler"], "boss-password")


def test_login_delay_is_free_at_first_then_doubles_up_to_a_cap():
    from annotator.services.users import LOGIN_FREE_ATTEMPTS, LOGIN_MAX_DELAY_SECONDS, login_delay

    assert [login_delay(n) for n in range(LOGIN_FREE_ATTEMPTS)] == [0.0] * LOGIN_FREE_ATTEMPTS
    assert [login_delay(LOGIN_FREE_ATTEMPTS + k) for k in range(4)] == [1.0, 2.0, 4.0, 8.0]
    assert login_delay(1000) == LOGIN_MAX_DELAY_SECONDS


def test_repeated_failed_logins_make_the_account_wait_without_checking_the_password(engine):
    from datetime import timedelta

    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FREE_ATTEMPTS

    with session_scope(engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    start = utcnow()
    for attempt in range(LOGIN_FREE_ATTEMPTS):
        with pytest.raises(LoginError) as error, session_scope(engine) as s:
            authenticate(s, "alice", "wrong-pass", now=start)
    assert "wait 1 second before" in str(error.value)
    with pytest.raises(LoginError, match="too many failed logins"), session_scope(engine) as s:
        authenticate(s, "alice", "s3cret-pass", now=start)  # the right password, but too early
    with session_scope(engine) as s:
        assert _failures(s, "alice") == LOGIN_FREE_ATTEMPTS  # the early try is not counted
        assert authenticate(s, "alice", "s3cret-pass", now=start + timedelta(seconds=1)).name == "alice"
    with session_scope(engine) as s:
        assert _failures(s, "alice") == 0 and s.get(LoginThrottle, "alice") is None


def test_a_new_password_lifts_the_login_delay(engine):
    from annotator.models import utcnow

    with session_scope(engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
    now = utcnow()
    for _ in range(6):
        with pytest.raises(LoginError), session_scope(engine) as s:
            authenticate(s, "alice", "wrong-pass", now=now)
    with session_scope(engine) as s:
        set_password(s, OPERATOR, get_user(s, "alice"), "brand-new-pass")
    with session_scope(engine) as s:
        assert authenticate(s, "alice", "brand-new-pass", now=now).name == "alice"


def _refusals(engine, name: str, password: str, now, attempts: int) -> list[str]:
    messages = []
    for _ in range(attempts):
        with pytest.raises(LoginError) as refused, session_scope(engine) as s:
            authenticate(s, name, password, now=now)
        messages.append(str(refused.value))
    return messages


def test_the_login_delay_and_its_messages_do_not_tell_which_names_exist(engine):
    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FREE_ATTEMPTS

    with session_scope(engine) as s:
        add_user(s, OPERATOR, "alice", ["labeler"], "s3cret-pass")
        add_user(s, OPERATOR, "gone", ["labeler"], "s3cret-pass")
        set_active(s, OPERATOR, get_user(s, "gone"), False)
        ensure_user(s, "imported", "labeler")
    now = utcnow()
    seen = {name: _refusals(engine, name, "wrong-pass", now, LOGIN_FREE_ATTEMPTS + 1)
            for name in ("alice", "gone", "imported", "nobody")}
    assert len({tuple(messages) for messages in seen.values()}) == 1, seen
    assert "wait 1 second before" in seen["nobody"][-2] and "too many failed logins" in seen["nobody"][-1]


def test_every_refusal_runs_the_password_check(engine, monkeypatch):
    import annotator.services.users as users

    with session_scope(engine) as s:
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
        with pytest.raises(LoginError), session_scope(engine) as s:
            authenticate(s, name, f"typed-for-{name}")
    assert checked == ["typed-for-nobody", "typed-for-gone", "typed-for-imported"]


def test_failed_logins_are_forgotten_a_day_after_the_last_one(engine):
    from annotator.models import utcnow
    from annotator.services.users import LOGIN_FAILURE_MEMORY

    start = utcnow()
    _refusals(engine, "nobody", "x", start, 3)
    _refusals(engine, "someone", "x", start, 1)
    later = start + LOGIN_FAILURE_MEMORY + timedelta(seconds=1)
    assert _refusals(engine, "nobody", "x", later, 1) == [
        "unknown user name or wrong password (or the account has no password yet)"]
    with session_scope(engine) as s:
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


def test_passwords_are_hashed_with_argon2id_at_rfc_9106_low_memory_cost(production_hasher):
    # RFC 9106, section 4, second recommended option: Argon2id, t=3, 64 MiB, 4 lanes. The other
    # tests hash at the smallest cost (conftest.CHEAP_HASHER); this pins what users get.
    stored = production_hasher.hash("s3cret-pass")
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert production_hasher.verify(stored, "s3cret-pass")
