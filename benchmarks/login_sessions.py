"""What login sessions add to a page run (a benchmark, not a test), on SQLite or PostgreSQL.

Every page run reads the logged-in account (components.session_user) in one read-only transaction;
with a login session it also checks the session (login_sessions.in_force: the session's row and the
two expiry settings). A new browser session resumes from its cookie once (login_sessions.resume).
Builds a database of --users users with --sessions login sessions among them (their tickets traded),
then times, per call, inside one read-only transaction each as the app runs them:
  account read          get_user + users.still_logged_in (what a run did before)
  account + session     the same and in_force (what a run does now)
  resume                resume(token) of a random session
Prints the median and p95 in milliseconds of --calls calls each, and the difference per run.

Run: `python benchmarks/login_sessions.py [--db URL] [--users 50] [--sessions 20000] [--calls 2000]`
(without --db: a temporary SQLite file). A --db database must be empty: it is migrated and filled.

Measured (2 cores shared with other work, load average about 7; python 3.11, SQLAlchemy 2.1,
SQLite 3.40, PostgreSQL 15 on localhost; defaults), medians: SQLite account read 0.24 ms, with the
session 0.49 ms (+0.25 ms a run), resume 0.43 ms; PostgreSQL 0.55 ms, 1.02 ms (+0.47 ms: one more
round trip; the session and both expiries come in one statement), resume 0.85 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from annotator.db import init_db, read_scope, session_scope
from annotator.models import utcnow
from annotator.services import login_sessions
from annotator.services.access import OPERATOR
from annotator.services.users import add_user, get_user, still_logged_in


def build(engine, n_users: int, n_sessions: int) -> list[tuple[str, int, int, str]]:  # noqa: ANN001
    """(user name, user key, session key, token) of every session made."""
    made = []
    with session_scope(engine) as session:
        users = [add_user(session, OPERATOR, f"user-{k}", ["labeler"]) for k in range(n_users)]
        now = utcnow()
        for k in range(n_sessions):
            user = users[k % n_users]
            started = login_sessions.start_session(session, user, now)
            issued = login_sessions.redeem_ticket(session, started.ticket, now)
            made.append((user.name, user.id, started.session_pk, issued.token))
    return made


def timed(engine, calls: int, work) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        with read_scope(engine) as session:
            work(session)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--calls", type=int, default=2_000)
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    url = args.db or f"sqlite:///{Path(folder.name) / 'bench.db'}"
    engine = init_db(url)
    made = build(engine, args.users, args.sessions)
    pick = random.Random(0).choice

    def account(session) -> None:  # noqa: ANN001
        name, pk, _, _ = pick(made)
        assert still_logged_in(name, pk, get_user(session, name))

    def account_and_session(session) -> None:  # noqa: ANN001
        name, pk, session_pk, _ = pick(made)
        assert still_logged_in(name, pk, get_user(session, name))
        assert login_sessions.in_force(session, session_pk, pk) is not None

    def resume(session) -> None:  # noqa: ANN001
        assert login_sessions.resume(session, pick(made)[3]) is not None

    print(f"{engine.dialect.name}: {args.users} users, {args.sessions:,} login sessions, {args.calls:,} calls each")
    results = {}
    for label, work in (("account read", account), ("account + session", account_and_session), ("resume", resume)):
        timed(engine, min(200, args.calls), work)  # warm up
        results[label] = times = timed(engine, args.calls, work)
        p95 = statistics.quantiles(times, n=20)[18]
        print(f"  {label:<18} median {statistics.median(times):.3f} ms   p95 {p95:.3f} ms")
    added = statistics.median(results["account + session"]) - statistics.median(results["account read"])
    print(f"  a page run's account read costs {added:+.3f} ms more (medians)")
    engine.dispose()
    folder.cleanup()


if __name__ == "__main__":
    main()
