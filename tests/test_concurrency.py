"""Many writers at once on one database, on SQLite and on PostgreSQL.

Sixteen labelers (threads with their own sessions on a shared engine, and on SQLite also
separate processes with their own engines) label overlapping claims while pairs of adjudicators
race to decide the disputed ones. Every write the services accept lands exactly once with
exactly one audit event; a refused write changes nothing and is refused with a domain error
(StaleWriteError, LabelLockedError); no driver error ("database is locked", a unique
violation, a serialization failure) reaches the caller.

The tests named "at once" force the interleaving: both writers are held right after their read
until the other has read too (or a second has passed: on SQLite the second writer is still
waiting for the first one's lock and never gets there, which is the point of BEGIN IMMEDIATE).
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from annotator.db import init_db, session_scope
from annotator.services.access import OPERATOR
from annotator.models import Adjudication, Claim, Hold, Label, LabelEvent, User
from annotator.services import adjudication as adjudication_service
from annotator.services import labeling as labeling_service
from annotator.services.adjudication import adjudicate
from annotator.services.labeling import (
    assign_cases,
    assigned_claims,
    claim_for_labeler,
    first_cases,
    put_on_hold,
    save_label,
)
from annotator.services.states import claim_states
from annotator.services.users import add_user, get_user
from annotator.workflow import State
from tests.factories import make_dataset, pilot

N_LABELERS = 16
N_ADJUDICATOR_PAIRS = 2
CASES_PER_BLOCK = 4  # block b is labeled by labelers b and b+1 (a ring): every labeler shares claims with two others
CLAIMS_PER_CASE = 2
WAIT = 25.0  # seconds a worker waits for the others (start, a disputed claim, its partner) before giving up

ALLOWED = {
    "create": frozenset(),                         # a first label on an assigned claim always lands
    "repeat": frozenset(),                         # the same content again is a no-op, never an error
    "revise": frozenset({"LabelLockedError"}),     # refused when the partner's label landed first
    "old_tab": frozenset({"StaleWriteError"}),     # a tab still showing revision 1: always refused
    "decide": frozenset({"StaleWriteError"}),      # the adjudicator who loses the race is told so
    "redecide": frozenset({"StaleWriteError"}),
}
"""The domain errors each kind of write may end in; anything else reaching a worker is a bug."""


@dataclass(frozen=True)
class Outcome:
    """One write attempt as its worker saw it: accepted (error None) or refused with an exception."""

    who: str
    op: str  # a key of ALLOWED
    claim_pk: int
    error: str | None = None  # the exception's class name
    message: str = ""
    revision: int | None = None  # of the label or decision returned, when accepted


@dataclass(frozen=True)
class Item:
    """One claim in a labeler's plan: the value to give it and whether to revise it afterwards."""

    claim_pk: int
    value: str
    revise: bool
    phase: int  # 0, 1: shared claims (both labelers of a block work on it in the same phase); 2: a solo case


@dataclass(frozen=True)
class Round:
    """One race of an adjudicator pair on a claim: both decide at once with `expected_revision`."""

    claim_pk: int
    expected_revision: int | None


@dataclass
class Plan:
    """Who does what: labeler name -> items in order; adjudicator pair -> names and rounds."""

    labelers: dict[str, list[Item]] = field(default_factory=dict)
    pairs: list[tuple[tuple[str, str], list[Round]]] = field(default_factory=list)


# --- the database and the plan ----------------------------------------------------------------


def build(engine: Engine) -> Plan:
    """A dataset of ring blocks plus one solo case per labeler, 16 labelers, 2 pairs of adjudicators.

    Labelers b and b+1 share block b and label it in the same phase (even blocks first, then odd
    ones: a ring of even length colours that way), walking its claims in the same order, so
    both write the same claim at about the same moment. Each labeler then labels a case nobody
    else has, where a revision can never be locked. A third of the shared claims get two
    different values: those become disputed and are raced for by an adjudicator pair.
    """
    labelers = [f"labeler-{i:02d}" for i in range(N_LABELERS)]
    adjudicators = [f"adjudicator-{i}" for i in range(2 * N_ADJUDICATOR_PAIRS)]
    plan = Plan({name: [] for name in labelers})
    n_shared = N_LABELERS * CASES_PER_BLOCK
    with session_scope(engine) as session:
        dataset = make_dataset(session, "conc", n_cases=n_shared + N_LABELERS, claims_per_case=CLAIMS_PER_CASE)
        for name in labelers:
            add_user(session, OPERATOR, name, ["labeler"])
        for name in adjudicators:
            add_user(session, OPERATOR, name, ["adjudicator"])
        cases = first_cases(session, n_shared + N_LABELERS, dataset.id)
        for b in range(N_LABELERS):
            assign_cases(session, OPERATOR, cases[b * CASES_PER_BLOCK:(b + 1) * CASES_PER_BLOCK], [labelers[b], labelers[(b + 1) % N_LABELERS]])
        for i, name in enumerate(labelers):
            assign_cases(session, OPERATOR, [cases[n_shared + i]], [name])
        claims_of_case: dict[int, list[int]] = {}
        for claim_pk, case_pk in session.exec(select(Claim.id, Claim.case_pk).order_by(Claim.id)):
            claims_of_case.setdefault(case_pk, []).append(claim_pk)

    disputed = []
    for b in range(N_LABELERS):
        first, second = labelers[b], labelers[(b + 1) % N_LABELERS]
        for case_pk in cases[b * CASES_PER_BLOCK:(b + 1) * CASES_PER_BLOCK]:
            for claim_pk in claims_of_case[case_pk]:
                other = "contradict" if claim_pk % 3 == 0 else "support"
                if other != "support":
                    disputed.append(claim_pk)
                plan.labelers[first].append(Item(claim_pk, "support", revise=claim_pk % 4 == 1, phase=b % 2))
                plan.labelers[second].append(Item(claim_pk, other, revise=claim_pk % 4 == 2, phase=b % 2))
    for i, name in enumerate(labelers):
        plan.labelers[name].sort(key=lambda item: (item.phase, item.claim_pk))
        plan.labelers[name].extend(Item(claim_pk, "insufficient", revise=True, phase=2) for claim_pk in claims_of_case[cases[n_shared + i]])

    for p in range(N_ADJUDICATOR_PAIRS):
        rounds = []
        for k, claim_pk in enumerate(disputed[p::N_ADJUDICATOR_PAIRS]):
            rounds.append(Round(claim_pk, None))
            if k % 2 == 0:
                rounds.append(Round(claim_pk, 1))  # and both re-decide it at once
        plan.pairs.append(((adjudicators[2 * p], adjudicators[2 * p + 1]), rounds))
    return plan


# --- the workers ------------------------------------------------------------------------------


def _attempt(engine: Engine, who: str, op: str, claim_pk: int, write: Callable[[Session, User], object]) -> Outcome:
    """One write in its own transaction, as a page does it: look the user up, write, commit."""
    try:
        with session_scope(engine) as session:
            result = write(session, get_user(session, who))
        return Outcome(who, op, claim_pk, revision=getattr(result, "revision", None))
    except Exception as error:  # noqa: BLE001 - every failure is collected; the test judges it
        return Outcome(who, op, claim_pk, type(error).__name__, str(error).splitlines()[0][:300] if str(error) else "")


def labeler_work(engine: Engine, name: str, items: list[Item], start) -> list[Outcome]:  # noqa: ANN001 - a barrier
    """Label each claim, click again (same content), and for some claims revise from what the
    page showed, then save once more from a tab still showing revision 1."""
    out = []
    start.wait(timeout=WAIT)
    for item in items:
        def first_look(session, me, item=item):  # noqa: ANN001, ANN202
            return save_label(session, me, item.claim_pk, item.value, rationale="first look")

        out.append(_attempt(engine, name, "create", item.claim_pk, first_look))
        out.append(_attempt(engine, name, "repeat", item.claim_pk, first_look))
        if not item.revise:
            continue
        with session_scope(engine) as session:
            seen = claim_for_labeler(session, get_user(session, name), item.claim_pk)
        if not seen.can_revise:
            continue
        revised = _attempt(engine, name, "revise", item.claim_pk, lambda s, me, item=item, rev=seen.own_label.revision:
                           save_label(s, me, item.claim_pk, item.value, rationale="second look", expected_revision=rev))
        out.append(revised)
        if revised.error is None:
            out.append(_attempt(engine, name, "old_tab", item.claim_pk, lambda s, me, item=item:
                                save_label(s, me, item.claim_pk, item.value, rationale="old tab", expected_revision=1)))
    return out


def adjudicator_work(engine: Engine, name: str, rounds: list[Round], start, pair) -> list[Outcome]:  # noqa: ANN001 - barriers
    """For each round: wait until the claim is disputed, meet the partner, decide at once."""
    out = []
    start.wait(timeout=WAIT)
    for r in rounds:
        if r.expected_revision is None and not _wait_until_disputed(engine, r.claim_pk):
            out.append(Outcome(name, "decide", r.claim_pk, "Timeout", f"claim {r.claim_pk} never became disputed"))
            pair.abort()
            return out
        pair.wait(timeout=WAIT)
        value = "support" if name.endswith(("0", "2")) else "contradict"
        out.append(_attempt(engine, name, "decide" if r.expected_revision is None else "redecide", r.claim_pk,
                            lambda s, me, r=r: adjudicate(s, me, r.claim_pk, value, rationale=name, expected_revision=r.expected_revision)))
    return out


def _wait_until_disputed(engine: Engine, claim_pk: int) -> bool:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        with session_scope(engine) as session:
            if claim_states(session, claim_pks=[claim_pk])[claim_pk] is State.DISPUTED:
                return True
        time.sleep(0.01)
    return False


def _crash(who: str, error: BaseException) -> list[Outcome]:
    return [Outcome(who, "worker", 0, type(error).__name__, str(error)[:300])]


def run_in_threads(engine: Engine, plan: Plan) -> list[Outcome]:
    """Every labeler and adjudicator in its own thread, each write in its own session."""
    n_workers = len(plan.labelers) + 2 * len(plan.pairs)
    start = threading.Barrier(n_workers)
    results: dict[str, list[Outcome]] = {}

    def run(who: str, work: Callable[[], list[Outcome]]) -> None:
        try:
            results[who] = work()
        except BaseException as error:  # noqa: BLE001 - a crashed worker is a finding, not a hang
            results[who] = _crash(who, error)

    threads = [threading.Thread(target=run, args=(name, lambda name=name, items=items: labeler_work(engine, name, items, start)))
               for name, items in plan.labelers.items()]
    for names, rounds in plan.pairs:
        pair = threading.Barrier(2)
        threads += [threading.Thread(target=run, args=(name, lambda name=name, pair=pair, rounds=rounds:
                                                        adjudicator_work(engine, name, rounds, start, pair))) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=4 * WAIT)
    assert not any(thread.is_alive() for thread in threads), "a worker hangs (a deadlock?)"
    return [outcome for who in sorted(results) for outcome in results[who]]


def process_main(url: str, who: str, kind: str, work_args: tuple, start, pair, results) -> None:  # noqa: ANN001
    """A worker process: its own engine on the database file, as a second `annotator` process has."""
    try:
        engine = init_db(url, create=False)
        try:
            outcomes = (labeler_work(engine, who, work_args, start) if kind == "labeler"
                        else adjudicator_work(engine, who, work_args, start, pair))
        finally:
            engine.dispose()
    except BaseException as error:  # noqa: BLE001 - reported to the test, which fails on it
        outcomes = _crash(who, error)
    results.put((who, outcomes))


def run_in_processes(url: str, plan: Plan) -> list[Outcome]:
    """Every labeler and adjudicator in its own process, forked from a fresh server process that
    has imported the package once (so not from pytest), each opening its own engine."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, "alembic.command"])
    n_workers = len(plan.labelers) + 2 * len(plan.pairs)
    start, results = context.Barrier(n_workers), context.Queue()
    # Process.start() lets go of its arguments: the barriers are kept here until every child has
    # opened them (a collected barrier's semaphore is unlinked before a spawned child gets to it).
    pairs = [context.Barrier(2) for _ in plan.pairs]
    processes = [context.Process(target=process_main, args=(url, name, "labeler", items, start, None, results))
                 for name, items in plan.labelers.items()]
    for pair, (names, rounds) in zip(pairs, plan.pairs):
        processes += [context.Process(target=process_main, args=(url, name, "adjudicator", rounds, start, pair, results))
                      for name in names]
    for process in processes:
        process.start()
    collected: dict[str, list[Outcome]] = {}
    deadline = time.monotonic() + 4 * WAIT
    try:
        while len(collected) < len(processes) and time.monotonic() < deadline:
            try:
                who, outcomes = results.get(timeout=0.5)
            except queue.Empty:
                if not any(process.is_alive() for process in processes):
                    break  # a process died without a word: reported below
                continue
            collected[who] = outcomes
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
    everyone = set(plan.labelers) | {name for names, _ in plan.pairs for name in names}
    silent = sorted(everyone - set(collected))
    assert silent == [], f"worker processes {silent} died or hung (exit codes {[p.exitcode for p in processes]})"
    return [outcome for who in sorted(collected) for outcome in collected[who]]


# --- the checks -------------------------------------------------------------------------------


def check(engine: Engine, plan: Plan, outcomes: list[Outcome]) -> Counter:
    """Assert every accepted write landed once with one event and every refusal was a domain
    error; returns how many writes ended how, per kind (for the reader of a failure)."""
    unexpected = [o for o in outcomes if o.error is not None and o.error not in ALLOWED.get(o.op, ())]
    kinds = Counter((o.op, o.error) for o in unexpected)
    assert unexpected == [], f"{len(unexpected)} errors reached the workers: {dict(kinds)}; e.g. {unexpected[:3]}"
    tally = Counter((o.op, o.error or "ok") for o in outcomes)
    assert all(o.error == "StaleWriteError" for o in outcomes if o.op == "old_tab")
    assert all(o.revision == 1 for o in outcomes if o.op in ("create", "repeat"))
    n_planned = sum(len(items) for items in plan.labelers.values())
    assert tally[("create", "ok")] == tally[("repeat", "ok")] == n_planned

    revised = Counter((o.claim_pk, o.who) for o in outcomes if o.op == "revise" and o.error is None)
    planned = {(item.claim_pk, name): item for name, items in plan.labelers.items() for item in items}
    solo = {(item.claim_pk, name) for name, items in plan.labelers.items() for item in items if item.phase == 2}
    assert all(revised[key] == 1 for key in solo), "a revision of a label nobody else shares was refused"

    with session_scope(engine) as session:
        names = dict(session.exec(select(User.id, User.name)).all())
        labels = session.exec(select(Label)).all()
        per_key = Counter((label.claim_pk, names[label.labeler_pk]) for label in labels)
        assert [key for key, n in per_key.items() if n != 1] == [], "a label landed twice"
        assert set(per_key) == set(planned), "a planned label is missing or an unplanned one landed"
        key_of = {label.id: (label.claim_pk, names[label.labeler_pk]) for label in labels}
        for label in labels:
            key = key_of[label.id]
            assert label.value == planned[key].value
            assert label.revision == 1 + revised[key], f"revision of {key}: {label.revision}, accepted revisions {revised[key]}"
            assert label.rationale == ("second look" if revised[key] else "first look")

        label_events = Counter(session.exec(
            select(LabelEvent.entity_pk, LabelEvent.action).where(LabelEvent.entity == "label")).all())
        expected_events = Counter({(pk, "create"): 1 for pk in key_of})
        expected_events.update({(pk, "update"): revised[key] for pk, key in key_of.items() if revised[key]})
        assert label_events == expected_events, "label audit events do not match the accepted writes one to one"

        decisions = {d.claim_pk: d for d in session.exec(select(Adjudication)).all()}
        decision_events = Counter(session.exec(
            select(LabelEvent.claim_pk, LabelEvent.action).where(LabelEvent.entity == "adjudication")).all())
        expected_decision_events: Counter = Counter()
        for (first, second), rounds in plan.pairs:
            by_claim: dict[int, list[Round]] = {}
            for r in rounds:
                by_claim.setdefault(r.claim_pk, []).append(r)
            for claim_pk, claim_rounds in by_claim.items():
                winners = []
                for r in claim_rounds:
                    op = "decide" if r.expected_revision is None else "redecide"
                    tries = [o for o in outcomes if o.op == op and o.claim_pk == claim_pk]
                    assert sorted(o.who for o in tries) == [first, second]
                    won = [o.who for o in tries if o.error is None]
                    assert len(won) == 1, f"claim {claim_pk}, {op}: {len(won)} adjudicators won the race: {tries}"
                    winners.append(won[0])
                decision = decisions[claim_pk]
                assert decision.revision == len(claim_rounds)
                assert names[decision.adjudicator_pk] == winners[-1] == decision.rationale
                expected_decision_events[(claim_pk, "create")] += 1
                if len(claim_rounds) > 1:
                    expected_decision_events[(claim_pk, "update")] += len(claim_rounds) - 1
        assert set(decisions) == {claim_pk for claim_pk, _ in expected_decision_events}
        assert decision_events == expected_decision_events, "adjudication audit events do not match the decisions one to one"
    return tally


# --- the tests --------------------------------------------------------------------------------


def test_sixteen_labelers_and_racing_adjudicators_in_threads_land_every_write_once_with_one_event(any_engine):
    plan = build(any_engine)
    tally = check(any_engine, plan, run_in_threads(any_engine, plan))
    assert tally[("decide", "ok")] == tally[("decide", "StaleWriteError")] > 0
    assert tally[("redecide", "ok")] == tally[("redecide", "StaleWriteError")] > 0
    assert tally[("old_tab", "StaleWriteError")] >= N_LABELERS


def test_sixteen_labeler_processes_on_one_sqlite_file_land_every_write_once_with_one_event(sqlite_url):
    engine = init_db(sqlite_url)
    try:
        plan = build(engine)
        engine.dispose()  # the parent holds no connection while the workers write
        tally = check(engine, plan, run_in_processes(sqlite_url, plan))
    finally:
        engine.dispose()
    assert tally[("decide", "ok")] == tally[("decide", "StaleWriteError")] > 0
    assert tally[("old_tab", "StaleWriteError")] >= N_LABELERS


# --- forced interleavings ---------------------------------------------------------------------


def _hold_after(monkeypatch: pytest.MonkeyPatch, module: object, name: str, seconds: float = 1.0) -> None:
    """Make `module.name` wait, after it returns, until two threads have got there (or `seconds`
    have passed): both writers have then read before either writes."""
    original = getattr(module, name)
    meeting = threading.Barrier(2)

    def held(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        result = original(*args, **kwargs)
        try:
            meeting.wait(timeout=seconds)
        except threading.BrokenBarrierError:
            pass  # the other writer is waiting for our lock (SQLite), or came through already
        return result

    monkeypatch.setattr(module, name, held)


def _at_once(engine: Engine, *writes: tuple[str, Callable[[Session, User], object]]) -> list[Outcome]:
    """Run each (user name, write) in its own thread and transaction, all started together."""
    outcomes: list[Outcome | None] = [None] * len(writes)
    start = threading.Barrier(len(writes))

    def run(i: int, who: str, write: Callable[[Session, User], object]) -> None:
        start.wait(timeout=WAIT)
        outcomes[i] = _attempt(engine, who, "write", 0, write)

    threads = [threading.Thread(target=run, args=(i, who, write)) for i, (who, write) in enumerate(writes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=WAIT)
    assert not any(thread.is_alive() for thread in threads), "a writer hangs (a deadlock?)"
    return outcomes


@pytest.fixture
def race_db(any_engine):
    """The pilot team plus a second adjudicator (dave); claim 1 disputed (alice support, bob contradict)."""
    with session_scope(any_engine) as s:
        pilot(s)
        add_user(s, OPERATOR, "dave", ["adjudicator"])
        alice = get_user(s, "alice")
        first, second = assigned_claims(s, alice)[:2]
        save_label(s, alice, first, "support")
        save_label(s, get_user(s, "bob"), first, "contradict")
    return any_engine, first, second


def _events(engine: Engine, entity: str, claim_pk: int | None = None) -> list[tuple[str, dict | None, dict | None]]:
    with session_scope(engine) as s:
        query = select(LabelEvent).where(LabelEvent.entity == entity).order_by(LabelEvent.id)
        if claim_pk is not None:
            query = query.where(LabelEvent.claim_pk == claim_pk)
        return [(e.action, e.before, e.after) for e in s.exec(query)]


def test_the_same_new_label_saved_by_two_requests_at_once_lands_once_with_one_event(race_db, monkeypatch):
    engine, _, claim_pk = race_db
    _hold_after(monkeypatch, labeling_service, "_lock_claim_for")  # the first holds the claim a while before it inserts
    click = ("alice", lambda s, me: save_label(s, me, claim_pk, "support"))
    outcomes = _at_once(engine, click, click)
    assert [(o.error, o.message) for o in outcomes] == [(None, ""), (None, "")]
    with session_scope(engine) as s:
        assert s.exec(select(func.count(Label.id)).where(Label.claim_pk == claim_pk)).one() == 1
    assert [action for action, _, _ in _events(engine, "label", claim_pk)] == ["create"]


def test_two_tabs_revising_one_label_at_once_land_one_revision_and_the_other_is_told_it_is_stale(race_db, monkeypatch):
    engine, _, claim_pk = race_db
    with session_scope(engine) as s:
        save_label(s, get_user(s, "alice"), claim_pk, "support")
    _hold_after(monkeypatch, labeling_service, "_own_label")
    outcomes = _at_once(
        engine,
        ("alice", lambda s, me: save_label(s, me, claim_pk, "contradict", expected_revision=1)),
        ("alice", lambda s, me: save_label(s, me, claim_pk, "insufficient", expected_revision=1)),
    )
    assert sorted((o.error or "") for o in outcomes) == ["", "StaleWriteError"], outcomes
    with session_scope(engine) as s:
        label = s.exec(select(Label).where(Label.claim_pk == claim_pk)).one()
    events = _events(engine, "label", claim_pk)
    assert label.revision == 2
    assert [(action, (before or {}).get("revision"), after["value"]) for action, before, after in events] == [
        ("create", None, "support"), ("update", 1, label.value)]


def test_two_adjudicators_deciding_one_claim_at_once_one_wins_and_the_other_is_told_it_is_stale(race_db, monkeypatch):
    engine, claim_pk, _ = race_db
    _hold_after(monkeypatch, adjudication_service, "_check_may_adjudicate")
    outcomes = _at_once(
        engine,
        ("carol", lambda s, me: adjudicate(s, me, claim_pk, "support", rationale="carol")),
        ("dave", lambda s, me: adjudicate(s, me, claim_pk, "contradict", rationale="dave")),
    )
    assert sorted((o.error or "") for o in outcomes) == ["", "StaleWriteError"], outcomes
    winner = next(o.who for o in outcomes if o.error is None)
    with session_scope(engine) as s:
        decision = s.exec(select(Adjudication).where(Adjudication.claim_pk == claim_pk)).one()
        assert (decision.rationale, decision.revision) == (winner, 1)
    assert [(action, after["adjudicator"]) for action, _, after in _events(engine, "adjudication")] == [("create", winner)]


def test_two_adjudicators_revising_one_decision_at_once_one_wins_and_the_other_is_told_it_is_stale(race_db, monkeypatch):
    engine, claim_pk, _ = race_db
    with session_scope(engine) as s:
        adjudicate(s, get_user(s, "carol"), claim_pk, "insufficient", rationale="carol first")
    _hold_after(monkeypatch, adjudication_service, "_check_may_adjudicate")
    outcomes = _at_once(
        engine,
        ("carol", lambda s, me: adjudicate(s, me, claim_pk, "support", rationale="carol", expected_revision=1)),
        ("dave", lambda s, me: adjudicate(s, me, claim_pk, "contradict", rationale="dave", expected_revision=1)),
    )
    assert sorted((o.error or "") for o in outcomes) == ["", "StaleWriteError"], outcomes
    winner = next(o.who for o in outcomes if o.error is None)
    with session_scope(engine) as s:
        decision = s.exec(select(Adjudication).where(Adjudication.claim_pk == claim_pk)).one()
        assert (decision.rationale, decision.revision) == (winner, 2)
    assert [(action, (before or {}).get("revision"), after["adjudicator"]) for action, before, after in _events(engine, "adjudication")] == [
        ("create", None, "carol"), ("update", 1, winner)]


def test_one_labeler_holding_one_case_twice_at_once_leaves_one_hold_with_one_event(race_db, monkeypatch):
    """Two tabs of alice press "Put the case on hold" together: a hold is its holder's own, one per
    holder (labeling.put_on_hold locks the case)."""
    engine, claim_pk, _ = race_db
    with session_scope(engine) as s:
        case_pk = claim_for_labeler(s, get_user(s, "alice"), claim_pk).case_pk
    _hold_after(monkeypatch, labeling_service, "_own_hold")
    outcomes = _at_once(
        engine,
        ("alice", lambda s, me: put_on_hold(s, me, case_pk, "missing_logs")),
        ("alice", lambda s, me: put_on_hold(s, me, case_pk, "permission_unknown")),
    )
    assert [o.error for o in outcomes] == [None, None], outcomes
    with session_scope(engine) as s:
        assert s.exec(select(func.count(Hold.id)).where(Hold.case_pk == case_pk, Hold.lifted_at.is_(None))).one() == 1
    assert [action for action, _, _ in _events(engine, "hold")] == ["create"]
