"""Login sessions (services/login_sessions.py): tickets traded once for a token, resumed while in
force, every expiry and every revocation, the admin's settings, and no secret ever stored in the
clear. Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import inspect, text
from sqlmodel import select

from annotator.db import session_scope
from annotator.errors import InvalidValueError, PermissionDeniedError
from annotator.models import LabelEvent, LoginSession, Setting, User, utcnow
from annotator.services import login_sessions as ls
from annotator.services.access import OPERATOR
from annotator.services.users import add_user, ensure_user, get_user, set_active, set_password, set_roles

PASSWORD = "s3cret-pass"


@pytest.fixture
def people(any_engine):
    """alice and bob (labelers) and root (admin), with passwords; yields the engine."""
    with session_scope(any_engine) as session:
        for name, roles in (("alice", ["labeler"]), ("bob", ["labeler"]), ("root", ["admin"])):
            add_user(session, OPERATOR, name, roles, PASSWORD)
    return any_engine


def login(engine, name: str = "alice", now=None) -> tuple[int, str]:  # noqa: ANN001
    """A login session of `name` started at `now` and its ticket traded: (session key, token)."""
    now = now or utcnow()
    with session_scope(engine) as session:
        started = ls.start_session(session, get_user(session, name), now)
    with session_scope(engine) as session:
        issued = ls.redeem_ticket(session, started.ticket, now)
    assert issued is not None
    return started.session_pk, issued.token


def resumed(engine, token: str | None, now=None) -> str | None:  # noqa: ANN001
    """The name of the user `token` resumes at `now`, None when it resumes nobody."""
    with session_scope(engine) as session:
        found = ls.resume(session, token, now)
    return None if found is None else found.user_name


def row(engine, session_pk: int) -> LoginSession:  # noqa: ANN001
    with session_scope(engine) as session:
        return session.get(LoginSession, session_pk)


# --- tickets and tokens ------------------------------------------------------------------------


def test_a_login_s_ticket_is_traded_once_for_a_token_that_resumes_its_user(people):
    with session_scope(people) as session:
        started = ls.start_session(session, get_user(session, "alice"))
    with session_scope(people) as session:
        assert ls.in_force(session, started.session_pk, get_user(session, "alice").id).ticket_pending
        issued = ls.redeem_ticket(session, started.ticket)
    assert issued is not None and issued.token != started.ticket
    assert len(issued.token) == len(started.ticket) == 43  # token_urlsafe(32)
    with session_scope(people) as session:
        assert ls.redeem_ticket(session, started.ticket) is None  # used up
        assert not ls.in_force(session, started.session_pk, get_user(session, "alice").id).ticket_pending
    assert resumed(people, issued.token) == "alice"
    assert 7 * 86400 - 5 <= issued.max_age_seconds <= 7 * 86400  # the cookie lives to the absolute expiry


def test_only_hashes_of_the_ticket_and_the_token_are_stored(people):
    with session_scope(people) as session:
        started = ls.start_session(session, get_user(session, "alice"))
    with session_scope(people) as session:
        issued = ls.redeem_ticket(session, started.ticket)
    with people.connect() as connection:
        stored = [repr(tuple(r)) for table in inspect(connection).get_table_names()
                  for r in connection.execute(text(f'SELECT * FROM "{table}"'))]
    assert not [r for r in stored if started.ticket in r or issued.token in r]
    stored_row = row(people, started.session_pk)
    assert stored_row.token_sha256 == ls.token_hash(issued.token) and stored_row.ticket_sha256 is None


def test_a_ticket_older_than_a_minute_unknown_or_of_a_revoked_session_gives_no_token(people):
    now = utcnow()
    with session_scope(people) as session:
        alice = get_user(session, "alice")
        late = ls.start_session(session, alice, now)
        revoked = ls.start_session(session, alice, now)
        ls.revoke_session(session, revoked.session_pk)
    with session_scope(people) as session:
        assert ls.redeem_ticket(session, late.ticket, now + timedelta(seconds=ls.TICKET_SECONDS)) is None
        assert ls.redeem_ticket(session, revoked.ticket, now) is None
        assert ls.redeem_ticket(session, "x" * 43, now) is None
        assert ls.redeem_ticket(session, "", now) is None
        assert ls.redeem_ticket(session, "x" * 5000, now) is None
        assert ls.redeem_ticket(session, late.ticket, now + timedelta(seconds=ls.TICKET_SECONDS - 1)) is not None
    assert row(people, revoked.session_pk).token_sha256 is None


def test_two_trades_of_one_ticket_at_once_give_one_token(people):
    with session_scope(people) as session:
        started = ls.start_session(session, get_user(session, "alice"))
    barrier, tokens = threading.Barrier(4), []

    def trade() -> None:
        barrier.wait()
        with session_scope(people) as session:
            tokens.append(ls.redeem_ticket(session, started.ticket))

    threads = [threading.Thread(target=trade) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    issued = [token for token in tokens if token is not None]
    assert len(tokens) == 4 and len(issued) == 1
    assert row(people, started.session_pk).token_sha256 == ls.token_hash(issued[0].token)


@pytest.mark.parametrize("token", [None, "", "not-a-token", "x" * 5000])
def test_a_missing_or_unknown_token_resumes_nobody(people, token):
    login(people)
    assert resumed(people, token) is None


# --- expiries ----------------------------------------------------------------------------------


def test_a_session_idle_for_the_idle_expiry_ends_and_each_recorded_use_restarts_it(people):
    start = utcnow()
    session_pk, token = login(people, now=start)
    idle = ls.DEFAULT_IDLE
    assert resumed(people, token, start + idle - timedelta(seconds=1)) == "alice"
    assert resumed(people, token, start + idle) is None
    with session_scope(people) as session:
        assert ls.touch(session, session_pk, start + timedelta(hours=7))
    assert resumed(people, token, start + timedelta(hours=7) + idle - timedelta(seconds=1)) == "alice"
    assert resumed(people, token, start + timedelta(hours=7) + idle) is None


def test_a_session_ends_at_its_absolute_expiry_however_often_used(people):
    start = utcnow()
    session_pk, token = login(people, now=start)
    for hours in range(6, 7 * 24, 6):  # used every 6 hours for a week
        with session_scope(people) as session:
            assert ls.touch(session, session_pk, start + timedelta(hours=hours))
    end = start + ls.DEFAULT_ABSOLUTE
    assert row(people, session_pk).expires_at == end
    assert resumed(people, token, end - timedelta(seconds=1)) == "alice"
    assert resumed(people, token, end) is None
    with session_scope(people) as session:
        assert ls.in_force(session, session_pk, get_user(session, "alice").id, end) is None


def test_shorter_settings_end_sessions_already_open(people):
    start = utcnow()
    _, token = login(people, now=start)
    with session_scope(people) as session:
        ls.set_session_settings(session, OPERATOR, idle_hours=1, absolute_days=2)
    assert resumed(people, token, start + timedelta(minutes=59)) == "alice"
    assert resumed(people, token, start + timedelta(minutes=61)) is None  # idle 1 h
    with session_scope(people) as session:
        ls.set_session_settings(session, OPERATOR, idle_hours=47)
        ls.touch(session, ls.resume(session, token, start + timedelta(minutes=30)).session_pk, start + timedelta(days=1))
    assert resumed(people, token, start + timedelta(days=1, hours=23)) == "alice"
    assert resumed(people, token, start + timedelta(days=2)) is None  # absolute 2 days, though set at login to 7


def test_a_use_is_recorded_at_most_once_a_minute_and_never_on_a_revoked_session(people):
    start = utcnow()
    session_pk, _ = login(people, now=start)
    with session_scope(people) as session:
        assert not ls.touch(session, session_pk, start + timedelta(seconds=ls.TOUCH_SECONDS - 1))
        assert ls.touch(session, session_pk, start + timedelta(seconds=ls.TOUCH_SECONDS))
        assert not ls.touch(session, session_pk, start + timedelta(seconds=ls.TOUCH_SECONDS + 30))
    assert row(people, session_pk).last_seen_at == start + timedelta(seconds=ls.TOUCH_SECONDS)
    with session_scope(people) as session:
        alice = get_user(session, "alice").id
        checked = ls.in_force(session, session_pk, alice, start + timedelta(seconds=ls.TOUCH_SECONDS + 30))
        assert not checked.touch_due(start + timedelta(seconds=ls.TOUCH_SECONDS + 30))
        assert checked.touch_due(start + timedelta(seconds=2 * ls.TOUCH_SECONDS))
        ls.revoke_session(session, session_pk)
        assert not ls.touch(session, session_pk, start + timedelta(hours=1))


def test_a_session_is_in_force_only_for_its_own_user(people):
    session_pk, _ = login(people)
    with session_scope(people) as session:
        assert ls.in_force(session, session_pk, get_user(session, "bob").id) is None
        assert ls.in_force(session, session_pk + 1000, get_user(session, "alice").id) is None
        assert ls.in_force(session, session_pk, get_user(session, "alice").id) is not None


def test_sessions_ended_a_month_ago_are_deleted_at_the_next_login(people):
    now = utcnow()
    ended_recently = now - ls.DEFAULT_ABSOLUTE - timedelta(days=1)  # expired a day ago: kept
    revoked_recently = now - timedelta(days=1)  # revoked a day ago: kept
    long_ago = now - ls.DEFAULT_ABSOLUTE - ls.KEPT_AFTER_END - timedelta(days=1)  # expired 31 days ago
    for start in (ended_recently, revoked_recently, long_ago):
        session_pk, _ = login(people, now=start)
    with session_scope(people) as session:
        revoked = session.exec(select(LoginSession).where(LoginSession.created_at == revoked_recently)).one()
        ls.revoke_session(session, revoked.id, now=revoked_recently)
    login(people, now=now)
    with session_scope(people) as session:
        kept = set(session.exec(select(LoginSession.created_at)).all())
    assert kept == {ended_recently, revoked_recently, now}


# --- revocation --------------------------------------------------------------------------------


def test_log_out_revokes_that_session_only(people):
    first_pk, first = login(people)
    _, second = login(people)
    with session_scope(people) as session:
        assert ls.revoke_session(session, first_pk, "logout")
        assert not ls.revoke_session(session, first_pk, "logout")  # once
    assert resumed(people, first) is None and resumed(people, second) == "alice"
    ended = row(people, first_pk)
    assert ended.revoked_reason == "logout" and ended.revoked_at is not None


def test_the_cookie_s_token_revokes_its_session(people):
    session_pk, token = login(people)
    with session_scope(people) as session:
        assert ls.revoke_token(session, token)
        assert not ls.revoke_token(session, token)
        assert not ls.revoke_token(session, None) and not ls.revoke_token(session, "unknown")
    assert resumed(people, token) is None and row(people, session_pk).revoked_reason == "logout"


def test_an_unknown_reason_is_a_programming_error(people):
    session_pk, _ = login(people)
    with session_scope(people) as session, pytest.raises(ValueError, match="unknown revoke reason"):
        ls.revoke_session(session, session_pk, "because")


@pytest.mark.parametrize("change, reason", [
    (lambda s, user: set_active(s, OPERATOR, user, False), "disabled"),
    (lambda s, user: set_password(s, OPERATOR, user, "another-pass"), "password"),
    (lambda s, user: set_roles(s, OPERATOR, user, ["labeler", "adjudicator"]), "roles"),
    (lambda s, user: ensure_user(s, user.name, "adjudicator"), "roles"),  # an import gives a role
    (lambda s, user: ls.revoke_user_sessions(s, user.id, "admin"), "admin"),
])
def test_disabling_a_user_or_changing_their_password_or_roles_revokes_all_their_sessions(people, change, reason):
    sessions = [login(people) for _ in range(2)]
    _, bobs = login(people, "bob")
    with session_scope(people) as session:
        change(session, get_user(session, "alice"))
    assert [resumed(people, token) for _, token in sessions] == [None, None]
    assert [row(people, pk).revoked_reason for pk, _ in sessions] == [reason, reason]
    assert resumed(people, bobs) == "bob"  # another user's stay


@pytest.mark.parametrize("change", [
    lambda s, user: set_active(s, OPERATOR, user, True),
    lambda s, user: set_roles(s, OPERATOR, user, ["labeler"]),  # the roles it has
    lambda s, user: ensure_user(s, user.name, "labeler"),
])
def test_enabling_a_user_or_giving_the_roles_they_have_revokes_nothing(people, change):
    session_pk, token = login(people)
    with session_scope(people) as session:
        change(session, get_user(session, "alice"))
    assert resumed(people, token) == "alice" and row(people, session_pk).revoked_at is None


def test_a_user_disabled_without_their_sessions_revoked_is_resumed_by_none(people):
    _, token = login(people)
    with session_scope(people) as session:  # as an older version, or a hand-made change, would leave it
        session.get(User, get_user(session, "alice").id).active = False
    assert resumed(people, token) is None


def test_a_revoked_session_stays_revoked_when_its_user_is_enabled_again(people):
    _, token = login(people)
    with session_scope(people) as session:
        set_active(session, OPERATOR, get_user(session, "alice"), False)
    with session_scope(people) as session:
        set_active(session, OPERATOR, get_user(session, "alice"), True)
    assert resumed(people, token) is None


# --- settings ----------------------------------------------------------------------------------


def test_the_expiries_default_to_8_hours_and_7_days_and_an_admin_sets_them(people):
    with session_scope(people) as session:
        assert ls.session_settings(session) == ls.SessionSettings(8 * 3600, 7 * 86400)
        root = get_user(session, "root")
        saved = ls.set_session_settings(session, root, idle_hours=0.5, absolute_days=3)
    assert saved.as_dict() == {"idle_hours": 0.5, "absolute_days": 3.0}
    with session_scope(people) as session:
        assert ls.session_settings(session) == saved
        ls.set_session_settings(session, OPERATOR, absolute_days=10)  # the idle expiry stays
        assert ls.session_settings(session).as_dict() == {"idle_hours": 0.5, "absolute_days": 10.0}
        events = session.exec(select(LabelEvent).where(LabelEvent.entity == "setting").order_by(LabelEvent.id)).all()
        assert [(e.actor_pk, e.before, e.after) for e in events] == [
            (root.id, {"login": {"idle_hours": 8.0, "absolute_days": 7.0}}, {"login": {"idle_hours": 0.5, "absolute_days": 3.0}}),
            (None, {"login": {"idle_hours": 0.5, "absolute_days": 3.0}}, {"login": {"idle_hours": 0.5, "absolute_days": 10.0}}),
        ]
        assert session.get(Setting, ls.IDLE_SETTING).updated_by_pk == root.id


@pytest.mark.parametrize("idle, absolute, message", [
    (0.2, None, "the idle expiry must be from 0.25 to 720 hours, not 0.2"),
    (721, None, "the idle expiry must be from 0.25 to 720 hours, not 721"),
    (float("nan"), None, "the idle expiry must be from 0.25 to 720 hours, not nan"),
    (None, 0.5, "the absolute expiry must be from 1 to 365 days, not 0.5"),
    (None, float("inf"), "the absolute expiry must be from 1 to 365 days, not inf"),
    (48, 1, "the idle expiry (48 hour(s)) cannot be longer than the absolute expiry (1 day(s)); shorten the idle "
            "expiry or lengthen the absolute one"),
])
def test_an_expiry_out_of_range_is_refused_and_changes_nothing(people, idle, absolute, message):
    with session_scope(people) as session:
        with pytest.raises(InvalidValueError) as refused:
            ls.set_session_settings(session, OPERATOR, idle_hours=idle, absolute_days=absolute)
        assert str(refused.value) == message
        assert session.exec(select(Setting)).all() == []
        assert ls.session_settings(session) == ls.SessionSettings(8 * 3600, 7 * 86400)


def test_only_an_admin_sets_the_expiries(people):
    with session_scope(people) as session, pytest.raises(PermissionDeniedError):
        ls.set_session_settings(session, get_user(session, "alice"), idle_hours=1)
