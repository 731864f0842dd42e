"""Label writes per second with many concurrent writers, on SQLite or PostgreSQL (a benchmark, not a test).

Builds a database of --claims claims (four per case, two passages each; the first half already
double-labeled by a labels import), then measures the label page's write: one transaction per
write (save_label_as with the logged-in user's name and key, which checks the account as the
page's session_user did, in its lock statement, and then does save_label's work: permission,
hold and revision checks, audit event and draft removal; commit). First one writer alone,
then --writers writers at once, pairs of writers labeling the same cases so that both labels of
a claim are written at about the same moment.
Prints writes/s, errors (by type: there must be none), p50/p95/max latency per write, the
concurrent / single-writer ratio and the ratio to the floor.

Layout: --processes N spreads the writers over N processes, each with its own engine (as each
app server process has) running its share of the writers as threads; the default, 1, runs them
all as threads of this process on one engine, as one Streamlit server does. The first output
line says what ran, e.g. "16 writers as 2 processes x 8 threads".

The floor: the same writers in the same layout, each transaction one bare INSERT of a small row
and its COMMIT through the same driver (psycopg or sqlite3, no SQLAlchemy, no service), half of
--seconds before the writers and half after them. The machine is shared and its load drifts;
"ratio to the floor" compares the writers with what driver and server gave at about the same
time. --no-floor skips it.

--with-next adds the app's "fetch the next claim" to each write's transaction. --profile counts
statements per write, splits a write's time into inside / outside statements, and prints the
single writer's cProfile in CPU time of its thread. --pool-size tries another pool size.

Run: `python benchmarks/concurrency.py [--db URL] [--fresh] [--writers 16] [--processes 1]
[--seconds 10 | --writes N]`. --fresh (PostgreSQL only) drops and creates the database named in
--db first and drops it at the end, e.g.
--db postgresql+psycopg://postgres@127.0.0.1:5432/annotator_bench_conc --fresh.

Measured (2 cores shared with other work; python 3.11, SQLAlchemy 2.1, psycopg 3.3, PostgreSQL 15,
SQLite 3.40; 16 writers, --seconds 10), with
`python benchmarks/concurrency.py --db postgresql+psycopg://postgres@127.0.0.1:5432/annotator_bench_conc --fresh --seconds 10`
(and without --db for SQLite); "before" is get_user + save_label at commit 7201d49, run alternately with
"after" in the same half hour (load average 3-8, from other people's tests):
                              16 writers     single writer  floor, 16 writers  of the floor   errors
PostgreSQL, 1 x 16, before    566-664/s      295-604/s      4,609-5,069/s      11.2-14.4 %    0
PostgreSQL, 1 x 16, after     1,274-1,321/s  811-950/s      4,747-5,420/s      24.4-26.8 %    0
PostgreSQL, 2 x 8, after      1,616/s        828/s          6,066/s            26.6 %         0
SQLite, 1 x 16, before        1,330/s        1,726/s        62,226/s           2.1 %          0
SQLite, 1 x 16, after         2,095/s        2,643/s        62,426/s           3.4 %          0
All with SQLAlchemy's pool_pre_ping (one more round trip a transaction), as the app runs.
A PostgreSQL write now: 5 round trips (the pre-ping, BEGIN, the lock statement, which also reads
the caller's account, assignment, hold and draft; the label INSERT with its event INSERT in one
WITH statement; COMMIT), was 7 (a get_user ORM query, the event apart). Python CPU per write
(single writer, thread CPU time, no profiler, load average 3-5): 0.64 ms, was 1.00-1.05 ms; of
it about 0.20 ms the lock statement, 0.18 ms the INSERT with its event (SQLAlchemy's execute
and result setup and psycopg's dumping, ~60/40), 0.15 ms the Session with pool checkout,
pre-ping, BEGIN and COMMIT, the rest the checks and building the rows. One process runs Python
on one core at a time (the GIL): 1 / 0.64 ms = 1,560 writes/s at most with no GIL hand-overs, so
one process with 16 threads stays near 1,300/s while the server has CPU to spare; two processes
(as two app server processes) passed 1,500/s. More from one process would need fewer
SQLAlchemy executions a write (the lock and the insert in one statement would put the checks'
rules into SQL) or a cheaper Session (the page's ui.db()).
The save_label before the previous change (ORM loads of the claim, assignment, hold and label,
an ORM add and flush, the draft DELETE always: 8 statements a write with get_user): SQLite 410/s
(0.8 % of the floor), PostgreSQL 211/s (4.7 %), 16 threads, same harness.
SQLite, 16 writers saturating the write lock: a writer can wait for seconds (max 17 s in a 40 s
run), as SQLite's busy handler polls with sleeps of up to 100 ms; past the 30 s busy timeout
that write would fail with DatabaseBusyError. People labeling leave the lock free between
clicks; this benchmark's writers never do.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import json
import multiprocessing
import os
import pstats
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, create_engine, event, text
from sqlalchemy.engine import Engine, make_url

from annotator.db import init_db, make_engine, refresh_statistics, session_scope
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases, import_labels
from annotator.services.labeling import assign_cases, assigned_claims, first_cases, next_claim_for, save_label_as
from annotator.services.lookup import get_dataset
from annotator.services.users import add_user, get_user
from annotator.vocabulary import LABELS

CLAIMS_PER_CASE = 4
DATASET = "bench-conc"


# --- the database -----------------------------------------------------------------------------


def write_cases(path: Path, n_claims: int) -> None:
    """A native JSONL file of n_claims / 4 cases, four claims and two passages each."""
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as out:
        for c in range(n_claims // CLAIMS_PER_CASE):
            case = {
                "case_id": f"case-{c}", "question": f"質問 {c}: 経費精算の締め切りは?", "answer": f"回答 {c}.",
                "slice": rng.choice(("normal", "paraphrase", "insufficient_evidence")), "split": "dev", "metadata": {},
                "passages": [{"passage_id": f"p-{c}-{k}", "doc_id": f"doc-{c % 500}", "version": "v1",
                              "title": "経費規程", "text": f"本文 {c}-{k}: 申請は翌月5日までに行う。"} for k in range(2)],
                "claims": [{"claim_id": f"c-{c}-{j}", "text": f"主張 {c}-{j}"} for j in range(CLAIMS_PER_CASE)],
            }
            out.write(json.dumps(case, ensure_ascii=False) + "\n")


def write_labels(path: Path, n_cases: int) -> None:
    """Two labelers' labels (80 % agreement) on every claim of the first `n_cases` cases."""
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as out:
        out.write("claim_id,labeler,label\n")
        for c in range(n_cases):
            for j in range(CLAIMS_PER_CASE):
                first = rng.choice(LABELS)
                second = first if rng.random() < 0.8 else rng.choice(LABELS)
                out.write(f"c-{c}-{j},import-a,{first}\nc-{c}-{j},import-b,{second}\n")


def user_keys(engine: Engine, names: list[str]) -> dict[str, int]:
    """Each named user's key, as the app keeps it in session state at login."""
    with session_scope(engine) as session:
        return {name: get_user(session, name).id for name in names}


def build(engine: Engine, work: Path, n_claims: int, n_writers: int) -> dict[str, list[int]]:
    """Import the cases and the first half's labels, create the writers (w00, w01, ...) and the
    single writer (solo), and assign the unlabeled half: a third to solo, the rest in equal
    shares to the pairs of writers (w2k and w2k+1 share their cases). Returns each writer's
    claims in queue order."""
    n_cases = n_claims // CLAIMS_PER_CASE
    labeled_cases = n_cases // 2
    write_cases(work / "cases.jsonl", n_claims)
    write_labels(work / "labels.csv", labeled_cases)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, work / "cases.jsonl", fmt="jsonl", dataset=DATASET)
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, work / "labels.csv", dataset=DATASET)
    writers = [f"w{i:02d}" for i in range(n_writers)]
    with session_scope(engine) as session:
        cases = first_cases(session, n_cases, get_dataset(session, DATASET).id)[labeled_cases:]
        for name in [*writers, "solo"]:
            add_user(session, OPERATOR, name, ["labeler"])
        n_solo = len(cases) // 3
        assign_cases(session, OPERATOR, cases[:n_solo], ["solo"])
        groups = [writers[i:i + 2] for i in range(0, n_writers, 2)]
        share = (len(cases) - n_solo) // len(groups)
        for g, group in enumerate(groups):
            assign_cases(session, OPERATOR, cases[n_solo + g * share:n_solo + (g + 1) * share], group)
        refresh_statistics(session)  # autovacuum may be off: plan from fresh statistics
        return {name: assigned_claims(session, get_user(session, name)) for name in [*writers, "solo"]}


# --- the writers ------------------------------------------------------------------------------


@dataclass
class Result:
    """What one writer did: latency of each accepted write (seconds) and its errors by type."""

    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    first_error: str = ""


def write_loop(engine: Engine, name: str, claims: list[int], deadline: float | None, n_writes: int | None,
               with_next: bool, seed: int, user_pks: dict[str, int]) -> Result:
    """Label `claims` in order, one transaction per write, until the deadline or `n_writes`, as
    the label page saves: save_label_as with the logged-in user's name and key (user_pks[name])."""
    rng, result, user_pk = random.Random(seed), Result(), user_pks[name]
    for i, claim_pk in enumerate(claims):
        if (n_writes is not None and i >= n_writes) or (deadline is not None and time.perf_counter() >= deadline):
            break
        start = time.perf_counter()
        try:
            with session_scope(engine) as session:
                saved = save_label_as(session, name, user_pk, claim_pk, rng.choice(LABELS))
                if with_next:
                    next_claim_for(session, saved.labeler)
        except Exception as error:  # noqa: BLE001 - counted and reported: the benchmark's errors column
            _count_error(result, error)
            continue
        result.latencies.append(time.perf_counter() - start)
    return result


def _count_error(result: Result, error: Exception) -> None:
    result.errors[type(error).__name__] += 1
    result.first_error = result.first_error or f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"


FLOOR_TABLE = Table("bench_floor", MetaData(), Column("id", Integer, primary_key=True),
                    Column("writer", String(20), nullable=False), Column("at", Float, nullable=False))
"""The floor's scratch table, created in the benchmark's database and dropped at the end."""


def floor_loop(engine: Engine, name: str, claims: list[int], deadline: float | None, n_writes: int | None,
               with_next: bool, seed: int) -> Result:  # noqa: ARG001 - the signature of write_loop
    """The floor: transactions of one bare INSERT of a small row and its COMMIT, through the
    engine's DB-API connection (psycopg or sqlite3; no SQLAlchemy, no service), until the
    deadline or `n_writes` (claims is not used): what driver and server give at the most with
    this many writers."""
    result = Result()
    raw = engine.raw_connection()  # from the pool: on SQLite the connection has db.py's PRAGMAs
    sqlite = engine.dialect.name == "sqlite"
    insert = f"INSERT INTO {FLOOR_TABLE.name} (writer, at) VALUES ({'?, ?' if sqlite else '%s, %s'})"
    try:
        cursor = raw.cursor()
        for i in itertools.count():  # no claims needed: as many as the time or n_writes allows
            if (n_writes is not None and i >= n_writes) or (deadline is not None and time.perf_counter() >= deadline):
                break
            start = time.perf_counter()
            try:
                if sqlite:
                    cursor.execute("BEGIN IMMEDIATE")  # as db.py begins every writing transaction
                cursor.execute(insert, (name, time.time()))
                raw.commit()
            except Exception as error:  # noqa: BLE001 - counted and reported, as in write_loop
                raw.rollback()
                _count_error(result, error)
                continue
            result.latencies.append(time.perf_counter() - start)
    finally:
        raw.close()
    return result


Job = Callable[..., Result]
"""write_loop or floor_loop, with n_writes, with_next (and user_pks) bound: (engine, name, claims, deadline, seed)."""


def run_threads(engine: Engine, plan: dict[str, list[int]], seconds: float | None, job: Job) -> tuple[list[Result], float]:
    """Every writer in plan as a thread on the shared engine; returns results and wall time."""
    results: dict[str, Result] = {}
    ready = threading.Barrier(len(plan) + 1)
    go: dict[str, float | None] = {}

    def run(i: int, name: str) -> None:
        ready.wait()
        results[name] = job(engine, name, plan[name], go["deadline"], seed=i)

    threads = [threading.Thread(target=run, args=(i, name)) for i, name in enumerate(plan)]
    for thread in threads:
        thread.start()
    go["deadline"] = None if seconds is None else time.perf_counter() + seconds
    start = time.perf_counter()
    ready.wait()
    for thread in threads:
        thread.join()
    return [results[name] for name in plan], time.perf_counter() - start


def _connect(engine: Engine, n: int) -> None:
    """Open `n` pooled connections and return them to the pool, as a running app has them."""
    connections = [engine.connect() for _ in range(n)]
    for connection in connections:
        connection.close()


def _process_main(url: str, plan: dict[str, list[int]], seconds: float | None, job: Job, pool_size: int | None,
                  ready, out) -> None:  # noqa: ANN001 - multiprocessing objects
    """One writer process: its own engine (as each app server process has), its writers as threads."""
    engine = make_engine(url)
    if pool_size:
        with_pool_size(engine, pool_size)
    _connect(engine, len(plan))  # before the clock starts
    ready.wait()
    results, _ = run_threads(engine, plan, seconds, job)
    engine.dispose()
    out.put(dict(zip(plan, results, strict=True)))


def run_processes(url: str, plan: dict[str, list[int]], n_processes: int, seconds: float | None, job: Job,
                  pool_size: int | None) -> tuple[list[Result], float]:
    """The writers in plan spread over `n_processes` processes (writer i in process i mod n),
    each with its own engine and its writers as threads; returns results and wall time (from
    the moment all are connected and released together)."""
    context = multiprocessing.get_context("spawn")
    names = list(plan)
    groups = [{name: plan[name] for name in names[p::n_processes]} for p in range(n_processes)]
    ready, out = context.Barrier(n_processes + 1), context.Queue()
    processes = [context.Process(target=_process_main, args=(url, group, seconds, job, pool_size, ready, out))
                 for group in groups]
    for process in processes:
        process.start()
    ready.wait()
    start = time.perf_counter()
    results: dict[str, Result] = {}
    for _ in processes:
        results.update(out.get(timeout=(seconds or 600) + 120))  # a crashed process fails here, not hangs
    wall = time.perf_counter() - start
    for process in processes:
        process.join()
    return [results[name] for name in plan], wall


@dataclass(frozen=True)
class Layout:
    """How the writers run: `processes` processes (1: this one, sharing one engine), each with
    its share of the writers as threads."""

    processes: int

    def describe(self, n_writers: int) -> str:
        if self.processes == 1:
            return f"1 process x {n_writers} threads (one engine)"
        per = n_writers / self.processes
        threads = f"{per:g}" if per == int(per) else f"{n_writers // self.processes}-{-(-n_writers // self.processes)}"
        return f"{self.processes} processes x {threads} threads (an engine each)"


def run(layout: Layout, engine: Engine, url: str, plan: dict[str, list[int]], seconds: float | None, job: Job,
        pool_size: int | None) -> tuple[list[Result], float]:
    """The writers of plan, laid out as `layout` says: threads on `engine`, or processes."""
    if layout.processes == 1 or len(plan) == 1:
        return run_threads(engine, plan, seconds, job)
    return run_processes(url, plan, min(layout.processes, len(plan)), seconds, job, pool_size)


def with_pool_size(engine: Engine, size: int) -> Engine:
    """The engine of `make_engine` (its connect and begin hooks kept) with a pool that keeps
    `size` connections open (no overflow): a what-if, not the app's configuration, which keeps
    5 (and opens up to 10 more, closing each again as soon as it is returned)."""
    from sqlalchemy.pool import QueuePool

    old = engine.pool
    engine.pool = QueuePool(old._creator, pool_size=size, max_overflow=0, timeout=old._timeout,  # noqa: SLF001
                            pre_ping=old._pre_ping, recycle=old._recycle, reset_on_return=old._reset_on_return,  # noqa: SLF001
                            _dispatch=old.dispatch, dialect=old._dialect)  # noqa: SLF001
    old.dispose()
    return engine


class ConnectCounter:
    """How many database connections an engine opens (each one also runs db.py's PRAGMAs on
    SQLite, and starts a server process on PostgreSQL)."""

    def __init__(self, engine: Engine):
        self.n = 0
        event.listen(engine, "connect", self._count)

    def _count(self, *_args) -> None:  # noqa: ANN002
        self.n += 1


# --- the report -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    writers: int
    writes: int
    seconds: float
    errors: Counter
    first_error: str
    p50_ms: float
    p95_ms: float
    max_ms: float

    @property
    def per_second(self) -> float:
        return self.writes / self.seconds if self.seconds else 0.0


def figures(results: list[Result], wall: float) -> Figures:
    latencies = sorted(x for r in results for x in r.latencies)
    errors = sum((r.errors for r in results), Counter())
    first_error = next((r.first_error for r in results if r.first_error), "")
    if not latencies:
        return Figures(len(results), 0, wall, errors, first_error, 0.0, 0.0, 0.0)
    p95 = latencies[max(0, int(0.95 * len(latencies)) - 1)]
    return Figures(len(results), len(latencies), wall, errors, first_error,
                   statistics.median(latencies) * 1000, p95 * 1000, latencies[-1] * 1000)


def merged(first: list[Result], second: list[Result]) -> list[Result]:
    """Each writer's results of two runs as one (`second` may be empty: no second run)."""
    if not second:
        return first
    return [Result(a.latencies + b.latencies, a.errors + b.errors, a.first_error or b.first_error)
            for a, b in zip(first, second, strict=True)]


def show(title: str, f: Figures, connections: int | None) -> None:
    errors = sum(f.errors.values())
    detail = "" if not errors else f"  ({', '.join(f'{k} {v}' for k, v in f.errors.items())}; first: {f.first_error})"
    opened = "" if connections is None else f"   connections opened {connections:,}"
    print(f"{title:<22} {f.writers:>3} writers {f.writes:>7,} writes in {f.seconds:6.2f} s = {f.per_second:8.1f} writes/s   "
          f"errors {errors}{detail}   latency p50 {f.p50_ms:6.1f} ms, p95 {f.p95_ms:6.1f} ms, max {f.max_ms:7.1f} ms{opened}")


def count_statements(engine: Engine, plan: dict[str, list[int]], with_next: bool, user_pks: dict[str, int],
                     n: int = 300) -> None:
    """Statements per write by kind, and where a write's time goes: inside the statements
    (driver and server) or outside them (Python: the ORM, the service; and the commit), over
    `n` writes of the single writer."""
    kinds: Counter = Counter()
    inside = {"seconds": 0.0, "commits": 0}
    started: dict[int, float] = {}

    def before(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ARG001
        kinds[statement.split(None, 1)[0].upper()] += 1
        started[id(cursor)] = time.perf_counter()

    def after(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ARG001
        inside["seconds"] += time.perf_counter() - started.pop(id(cursor), time.perf_counter())

    def on_commit(conn):  # noqa: ANN001
        inside["commits"] += 1

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    event.listen(engine, "commit", on_commit)
    try:
        result = write_loop(engine, "solo", plan["solo"][:n], None, n, with_next, seed=99, user_pks=user_pks)
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)
        event.remove(engine, "commit", on_commit)
    done = len(result.latencies) or 1
    total_ms = sum(result.latencies) / done * 1000
    inside_ms = inside["seconds"] / done * 1000
    per_write = ", ".join(f"{kind} {count / done:.1f}" for kind, count in kinds.most_common())
    print(f"{'per write (solo)':<22} {sum(kinds.values()) / done:.1f} statements ({per_write}), {inside['commits'] / done:.1f} commits; "
          f"{total_ms:.2f} ms = {inside_ms:.2f} ms inside statements + {total_ms - inside_ms:.2f} ms outside (Python, commit)")


def profile_single(engine: Engine, plan: dict[str, list[int]], with_next: bool, user_pks: dict[str, int],
                   n: int = 300) -> None:
    """cProfile of `n` writes of the single writer, in CPU time of its thread (time spent waiting
    for the server is not counted, nor other processes' use of the cores): own time by package,
    then the top functions by cumulative time."""
    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    result = write_loop(engine, "solo", plan["solo"][:n], None, n, with_next, seed=98, user_pks=user_pks)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_package: Counter = Counter()
    for (filename, _line, function), (_cc, _nc, own, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        by_package[_package(filename, function)] += own
    done = len(result.latencies) or 1
    total = sum(by_package.values())
    print(f"{'own CPU by package':<22} " + ", ".join(
        f"{name} {seconds / done * 1000:.2f} ms ({seconds / total:.0%})" for name, seconds in by_package.most_common(8))
        + f"  [per write, under cProfile, n={done}]")
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(25)
    print(stream.getvalue())


def _package(filename: str, function: str) -> str:
    """A profile entry's package: sqlalchemy, sqlmodel, psycopg, annotator, ... or the C call."""
    if filename == "~":  # built-ins: the driver's C calls show up here
        return "sqlite3 (C)" if "sqlite3" in function else ("waiting (select/poll)" if "select" in function or "poll" in function else "builtins")
    for name in ("sqlalchemy", "sqlmodel", "psycopg", "annotator", "pydantic", "json", "threading", "benchmarks"):
        if f"/{name}/" in filename or f"/{name}." in filename:
            return name
    return "other python"


# --- main -------------------------------------------------------------------------------------


def _fresh_postgres(url: str, drop_only: bool = False) -> None:
    """Drop (and unless drop_only, create) the PostgreSQL database named in `url`."""
    parsed = make_url(url)
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
        if not drop_only:
            connection.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file in a temp folder)")
    parser.add_argument("--fresh", action="store_true", help="PostgreSQL: drop and create the --db database first, drop it at the end")
    parser.add_argument("--claims", type=int, default=80_000, help="claims in the database (half of them labeled beforehand)")
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--processes", type=int, default=1,
                        help="spread the writers over this many processes, each with its own engine and its writers as "
                             "threads (default 1: all writers are threads of this process on one engine)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each phase writes (unless --writes)")
    parser.add_argument("--writes", type=int, default=None, help="writes per writer instead of --seconds")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor (bare driver INSERT + COMMIT) phase")
    parser.add_argument("--with-next", action="store_true", help="also fetch the next claim in each write's transaction, as the page does")
    parser.add_argument("--profile", action="store_true", help="count statements per write and cProfile the single writer")
    parser.add_argument("--pool-size", type=int, default=None,
                        help="what-if: keep this many connections open per engine, no overflow, instead of db.py's pool")
    args = parser.parse_args()
    if not 1 <= args.processes <= args.writers:
        raise SystemExit(f"--processes must be between 1 and --writers ({args.writers})")

    work = Path(tempfile.mkdtemp(prefix="annotator-bench-conc-"))
    url = args.db or f"sqlite:///{work / 'bench.db'}"
    postgres = url.startswith(("postgresql", "postgres://"))
    if args.fresh:
        if not postgres:
            raise SystemExit("--fresh is for a PostgreSQL --db; a SQLite run starts from a new file anyway")
        _fresh_postgres(url)
    seconds = None if args.writes is not None else args.seconds
    layout = Layout(args.processes)
    try:
        engine = init_db(url)
        load_start = time.perf_counter()
        plan = build(engine, work, args.claims, args.writers)
        FLOOR_TABLE.drop(engine, checkfirst=True)
        FLOOR_TABLE.create(engine)
        print(f"{args.claims:,} claims, {args.writers} writers as {layout.describe(args.writers)}, database "
              f"{engine.url.render_as_string(hide_password=True)}, built in {time.perf_counter() - load_start:.1f} s; a write = "
              f"{'save_label_as + next_claim_for' if args.with_next else 'save_label_as (its account check included)'} in its own transaction; "
              f"python {sys.version.split()[0]}, {multiprocessing.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.1f} (other work on the machine skews the figures)")
        writers = {name: claims for name, claims in plan.items() if name != "solo"}
        solo = {"solo": plan["solo"]}
        user_pks = user_keys(engine, list(plan))
        write = partial(write_loop, n_writes=args.writes, with_next=args.with_next, user_pks=user_pks)
        floor = partial(floor_loop, n_writes=args.writes, with_next=False)
        engine.dispose()
        if args.pool_size:
            with_pool_size(engine, args.pool_size)
        counter = ConnectCounter(engine)
        single = figures(*run(layout, engine, url, solo, seconds, write, args.pool_size))
        opened = [counter.n, None]
        if not args.no_floor:  # half before the writers, half after: the machine's load drifts
            half = None if seconds is None else seconds / 2
            before = run(layout, engine, url, writers, half, floor, args.pool_size)
        counter.n = 0
        many = figures(*run(layout, engine, url, writers, seconds, write, args.pool_size))
        opened[1] = counter.n if layout.processes == 1 else None
        if not args.no_floor:
            after = run(layout, engine, url, writers, half, floor, args.pool_size) if half is not None else ([], 0.0)
            floors = figures(merged(before[0], after[0]), before[1] + after[1])
        show("single writer", single, opened[0])
        show(f"{args.writers} writers at once", many, opened[1])
        ratio = many.per_second / single.per_second if single.per_second else float("nan")
        print(f"{'ratio':<22} {ratio:.2f}x the single writer's writes/s")
        if not args.no_floor:
            show("floor: INSERT+COMMIT", floors, None)
            print(f"{'ratio to the floor':<22} {many.per_second / floors.per_second:.1%} of the floor's transactions/s "
                  f"(bare {engine.dialect.driver} INSERT + COMMIT, same writers and layout, measured half before and half after them)")
        print(f"{'load average after':<22} {os.getloadavg()[0]:.1f}")
        for title, phase, queue in (("single writer", single, solo), ("writers", many, writers)):
            if phase.writes + sum(phase.errors.values()) >= sum(len(claims) for claims in queue.values()) * 0.99:
                print(f"warning: the {title} ran out of claims before the time was up; give more --claims or fewer --seconds")
        if args.profile:
            rest = {"solo": plan["solo"][single.writes:]}
            count_statements(engine, rest, args.with_next, user_pks)
            profile_single(engine, {"solo": rest["solo"][300:]}, args.with_next, user_pks)
        FLOOR_TABLE.drop(engine, checkfirst=True)
        engine.dispose()
    finally:
        if args.fresh:
            _fresh_postgres(url, drop_only=True)
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
