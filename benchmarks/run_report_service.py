"""`run report` and `run compare` on 10,000 cases with 100 retrieved ids each, against ir-measures
computing the same four measures per query from the same data (a benchmark, not a test).

Goal (issue 17, "Speed"): each with 1,000 resamples within 1.5x of the peer, in the same run;
peak memory under 500 MB.

Builds (once, kept with --work) the data of benchmarks/run_report_data.py (cases, two agreeing
labelers' labels, base and candidate runs, qrels.txt), a SQLite database holding the cases and
labels, the release RELEASE (`--only-final`, so every claim is released) and the runs `base` and
`candidate`. Then, alternating for --repeat rounds:
  peer:    ir-measures (its pytrec_eval provider, trec_eval's code) computing R@k, P@k, RR and
           nDCG@k per query for the candidate run: reading qrels.txt (`ir_measures.read_trec_qrels`)
           and the run file candidate.jsonl (json.loads per line, each list as {passage id: score}
           with scores falling with the rank), then `iter_calc` and a list of its per-query
           results. `peer x2` does the same for both runs (the data `run compare` scores).
  report:  `services.run_reports.run_report` of the candidate: opening and verifying the
           release (the SHA-256 of its files against the manifest, the blind rule), its gold
           from gold.parquet and cases.jsonl, the run's cases from the database, every case
           scored, the summary, by slice and by split, each figure with 1,000 case-level
           resamples (six bootstraps: overall, three slices, two splits). `json.dumps` of the
           report is timed apart (the peer's results are Python objects too).
  compare: `services.run_reports.compare_report` of base and candidate with split "all" (every
           case; the default would be the release's holdout, 30% of them): the same reading and
           scoring for both runs, fixed and regressed cases, the paired bootstrap of every
           figure's difference (1,000 resamples), McNemar, the slices' tests, the decision.
           Its ratio is to `peer x2`, the peer over the same two runs.
  cli:     `annotator run report candidate --release RELEASE --json` and `annotator run compare
           base candidate --release RELEASE --split all --json`, each in a process of its own
           (its wall clock includes starting Python, the imports and printing the indented
           JSON), with its peak resident memory (VmHWM); and the peer the same way (`peer cli`).
Before the rounds, untimed: our per-case recall_at_k, precision_at_k, reciprocal_rank and
ndcg_at_k of the candidate are checked to equal the peer's (to 1e-9), and the imports are warmed.
Medians are printed, wall clock and this process's CPU time (which counts other threads too),
with the ratios ours / peer.

Run: `python benchmarks/run_report_service.py [--cases N] [--retrieved N] [--bootstrap B] [--k K]
[--repeat R] [--no-cli] [--work DIR]`

Figures (2 CPUs, quiet, load average 0.3-1.0; python 3.11, numpy 2.4 on OpenBLAS, SQLite;
10,000 cases, 100 ids each, 1,000 resamples, k 5; `python benchmarks/run_report_service.py
--work /tmp/rr-bench --repeat 5`, medians of 5 rounds):
  peer 0.56 s for one run, 1.11 s for both.
  run_report 0.60 s: 1.09x the peer (CPU 1.09x); json.dumps of it 0.04 s more.
  compare_report 0.90 s: 0.80x the peer on both runs.
  In their own processes: peer 1.72 s, `run report` 1.98 s (1.15x), `run compare` 2.03 s
      (1.18x); peak resident memory 339 MB, 346 MB and 369 MB (goal < 500 MB).
  The same benchmark before the last changes: run_report 0.91-0.96 s (1.41x-1.61x), compare_report
      1.29-1.48 s (1.20x-1.24x). What they changed (the report's figures are the same, its
      intervals other draws of the same bootstrap):
  - a release's cases.jsonl is read for its passages' documents and versions only
    (release.read_released_passages, msgspec skipping the texts): 0.16 s -> 0.08 s;
  - a run's JSON columns are read as text and decoded by msgspec: 0.15 s -> 0.10 s;
  - the bootstrap draws its count matrix as a multinomial when a run's cases take few distinct
    values (run_scoring.BINOMIAL_COST; 117 patterns among 10,000 cases here): six bootstraps
    0.14 s -> 0.08 s;
  - summarize_by computes the cases' terms once for all its groups.
  Before the changes this benchmark led to first (json.dumps included): run_report 7.1 s (10.2x),
  compare_report 13.6 s (6.3x the peer on both runs), their commands 10.4 s and 13.5 s: a
  document's old passages were found by comparing every pair of its passages (900 comparisons for
  a document of 30, 4 s), four or five automatic full collections of the cyclic garbage collector
  each walked the run's million passage ids (0.8 s; now paused while a run is scored, as the
  imports do), np.unique(axis=0) sorted the bootstrap's rows as structured values (now np.lexsort,
  the same rows in the same order), and the passage ids were read by Python loops three times.
Where run_report's time goes now (about 0.6 s): reading the run's cases from the database 0.10 s;
the release (verifying, gold.parquet, the passages of cases.jsonl) 0.08 s; looking up a million
passage ids among the release's passages about 0.05 s (the peer pays the like in building its
run's dicts); scoring the 10,000 cases 0.15 s; the summaries with their six bootstraps 0.12 s
(the peer draws no interval); freeing the run's million ids at the end about 0.05 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import ir_measures
from ir_measures import RR, P, R, nDCG
from sqlmodel import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_report_data import generate  # noqa: E402 - the sibling generator

from annotator.db import init_db, read_scope, session_scope  # noqa: E402
from annotator.models import GoldRelease, Run  # noqa: E402
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.imports import import_cases, import_labels  # noqa: E402
from annotator.services.releases import create_release  # noqa: E402
from annotator.services.run_reports import compare_report, run_report  # noqa: E402
from annotator.services.runs import import_run  # noqa: E402

GOAL = 1.5
PEAK_GOAL_MB = 500
DATASET, RELEASE = "bench-runs", "bench-gold"
RUNS = ("base", "candidate")
PEER_MEASURES = {"recall_at_k": "R", "precision_at_k": "P", "reciprocal_rank": "RR", "ndcg_at_k": "nDCG"}
"""Our per-case figure -> the peer's measure family."""

T = TypeVar("T")


def prepare(work: Path, n_cases: int, n_retrieved: int):  # noqa: ANN201 - (Engine, data folder)
    """The data folder and the database with the release and both runs, made once per
    (n_cases, n_retrieved) in `work` and reused after."""
    data = work / f"data-{n_cases}-{n_retrieved}"
    db = work / f"bench-runs-{n_cases}-{n_retrieved}.db"
    if not (data / "qrels.txt").exists() or not db.exists():
        db.unlink(missing_ok=True)
        written = generate(data, n_cases=n_cases, n_retrieved=n_retrieved)
        print(f"generated {written.n_cases:,} cases ({written.n_with_evidence:,} with relevant evidence, "
              f"{written.n_changed:,} changed by the candidate) in {data}")
    engine = init_db(f"sqlite:///{db}", create=True)
    with read_scope(engine) as session:
        released = session.exec(select(GoldRelease.name).where(GoldRelease.name == RELEASE)).first()
        runs = set(session.exec(select(Run.name)))
    start = time.perf_counter()
    if released is None:
        with session_scope(engine) as session:
            import_cases(session, OPERATOR, data / "cases.jsonl", fmt="jsonl", dataset=DATASET)
        with session_scope(engine) as session:
            import_labels(session, OPERATOR, data / "labels.csv", dataset=DATASET)
        with session_scope(engine) as session:
            create_release(session, OPERATOR, RELEASE, only_final=True, out_dir=work / "releases", n_bootstrap=0)
    for name in RUNS:
        if name not in runs:
            with session_scope(engine) as session:
                import_run(session, OPERATOR, data / f"{name}.jsonl", run=name, dataset=DATASET)
    if released is None or len(runs) < len(RUNS):
        print(f"built {db} in {time.perf_counter() - start:.1f} s")
    return engine, data


# ------------------------------------------------------------------------------ the two sides


def peer_measures(k: int) -> list[Any]:
    return [R @ k, P @ k, RR, nDCG @ k]


def read_run_file(path: Path) -> dict[str, dict[str, float]]:
    """A run file as the peer takes a run: case id -> {passage id: score}, the score falling with
    the rank (len - rank), so that trec_eval's sort by score gives the file's order."""
    run = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            retrieved = record["retrieved"]
            n = len(retrieved)
            run[record["case_id"]] = {pid: float(n - rank) for rank, pid in enumerate(retrieved)}
    return run


def peer(data: Path, runs: tuple[str, ...], k: int) -> list[list[Any]]:
    """ir-measures' per-query results of each run, read from qrels.txt and the run files."""
    measures = peer_measures(k)
    out = []
    for name in runs:
        qrels = ir_measures.read_trec_qrels(str(data / "qrels.txt"))
        out.append(list(ir_measures.pytrec_eval.iter_calc(measures, qrels, read_run_file(data / f"{name}.jsonl"))))
    return out


def ours_report(engine, k: int, n_bootstrap: int) -> dict[str, Any]:  # noqa: ANN001 - an Engine
    with read_scope(engine) as session:
        return run_report(session, OPERATOR, "candidate", RELEASE, k=k, n_bootstrap=n_bootstrap)


def ours_compare(engine, k: int, n_bootstrap: int) -> dict[str, Any]:  # noqa: ANN001 - an Engine
    with read_scope(engine) as session:
        return compare_report(session, OPERATOR, "base", "candidate", RELEASE, k=k, split="all", n_bootstrap=n_bootstrap)


def check_same(report: dict[str, Any], results: list[Any], k: int) -> int:
    """How many (case, measure) figures agree; AssertionError at the first that does not (to 1e-9),
    or when the two sides score different cases."""
    theirs: dict[tuple[str, str], float] = {(m.query_id, str(m.measure)): m.value for m in results}
    names = {ours: str(family if family == "RR" else f"{family}@{k}") for ours, family in PEER_MEASURES.items()}
    scored = [case for case in report["cases"] if case["recall_at_k"] is not None]
    assert {q for q, _ in theirs} == {case["case_id"] for case in scored}, "the two sides score different cases"
    for case in scored:
        for ours, name in names.items():
            value = theirs[(case["case_id"], name)]
            assert math.isclose(case[ours], value, abs_tol=1e-9), (case["case_id"], ours, case[ours], value)
    return len(scored) * len(names)


# ------------------------------------------------------------------------------ processes


PEAK_HOOK = ("import atexit, re, sys\n"
             "def peak():\n"
             "    status = open('/proc/self/status').read()\n"
             "    sys.stderr.write('VmHWM ' + re.search(r'VmHWM:\\s+(\\d+)', status).group(1) + '\\n')\n"
             "atexit.register(peak)\n")


def child(code: str, arguments: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall clock s, peak resident memory MB) of `python -c code arguments` in a process of its
    own. The peak is the child's VmHWM (Linux): ru_maxrss would carry this process's own peak
    over the fork and exec."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK_HOOK + code, *arguments], check=False, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{arguments} exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0]) / 1024


def cli(engine, arguments: list[str]) -> tuple[float, float]:  # noqa: ANN001 - an Engine
    code = "from annotator.cli import main\nsys.argv = ['annotator', *sys.argv[1:]]\nmain()\n"
    return child(code, arguments, {"DATABASE_URL": str(engine.url)})


def peer_cli(data: Path, k: int) -> tuple[float, float]:
    code = (f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
            "from pathlib import Path\n"
            "from run_report_service import peer\n"
            "peer(Path(sys.argv[1]), ('candidate',), int(sys.argv[2]))\n")
    return child(code, [str(data), str(k)])


def timed(action: Callable[[], T]) -> tuple[T, float, float]:
    """action's result, its wall clock and its CPU time (this process's, seconds)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return result, time.perf_counter() - wall, time.process_time() - cpu


# ------------------------------------------------------------------------------ main


IN_PROCESS = ("peer", "report", "report json", "peer x2", "compare", "compare json")
PROCESSES = ("peer cli", "report cli", "compare cli")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--retrieved", type=int, default=100)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-cli", action="store_true", help="leave out the commands in processes of their own")
    parser.add_argument("--work", type=Path, default=None, help="folder that keeps (and reuses) the data and the database")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-run-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    engine, data = prepare(work, args.cases, args.retrieved)
    k, b = args.k, args.bootstrap

    # untimed: the same figures on both sides, and the imports (pyarrow, scipy, statsmodels) warmed
    checked = check_same(ours_report(engine, k, 0), peer(data, ("candidate",), k)[0], k)
    ours_compare(engine, k, 0)

    report_cli = ["run", "report", "candidate", "--release", RELEASE, "--k", str(k), "--bootstrap", str(b), "--json"]
    compare_cli = ["run", "compare", *RUNS, "--release", RELEASE, "--split", "all", "--k", str(k),
                   "--bootstrap", str(b), "--json"]
    wall: dict[str, list[float]] = {name: [] for name in (*IN_PROCESS, *PROCESSES)}
    cpu: dict[str, list[float]] = {name: [] for name in IN_PROCESS}
    peaks: dict[str, list[float]] = {name: [] for name in PROCESSES}

    def record(name: str, action: Callable[[], T]) -> T:
        result, seconds, cpu_seconds = timed(action)
        wall[name].append(seconds)
        cpu[name].append(cpu_seconds)
        return result

    for _ in range(args.repeat):
        record("peer", lambda: peer(data, ("candidate",), k))
        report = record("report", lambda: ours_report(engine, k, b))
        record("report json", lambda report=report: json.dumps(report, allow_nan=False))
        record("peer x2", lambda: peer(data, RUNS, k))
        compared = record("compare", lambda: ours_compare(engine, k, b))
        record("compare json", lambda compared=compared: json.dumps(compared, allow_nan=False))
        if args.no_cli:
            continue
        for name, run in (("peer cli", lambda: peer_cli(data, k)), ("report cli", lambda: cli(engine, report_cli)),
                          ("compare cli", lambda: cli(engine, compare_cli))):
            seconds, peak = run()
            wall[name].append(seconds)
            peaks[name].append(peak)
    print_figures(args, report, compared, checked, wall, cpu, peaks)


def print_figures(args: argparse.Namespace, report: dict[str, Any], compared: dict[str, Any], checked: int,
                  wall: dict[str, list[float]], cpu: dict[str, list[float]], peaks: dict[str, list[float]]) -> None:
    """The medians (wall clock, and this process's CPU time beside it), the ratios and the peaks."""
    w = {name: statistics.median(values) for name, values in wall.items() if values}
    c = {name: statistics.median(values) for name, values in cpu.items() if values}
    k = args.k

    def line(name: str, label: str, against: str) -> str:
        return (f"{label}: {w[name]:.3f} s (CPU {c[name]:.3f} s)  ->  {w[name] / w[against]:.2f}x the peer "
                f"(CPU {c[name] / c[against]:.2f}x; goal <= {GOAL}x)")

    print(f"{report['n_cases']:,} cases ({report['n_scored']:,} with relevant evidence), {args.retrieved} ids each, k {k}, "
          f"{args.bootstrap} resamples; medians of {args.repeat} rounds; {checked:,} per-case figures equal the peer's")
    print(f"peer (ir-measures R@{k}, P@{k}, RR, nDCG@{k} per query, pytrec_eval: read qrels.txt and the run's JSONL, "
          f"iter_calc): one run {w['peer']:.3f} s (CPU {c['peer']:.3f} s), both runs {w['peer x2']:.3f} s "
          f"(CPU {c['peer x2']:.3f} s)")
    print(line("report", "run_report (candidate)", "peer") + f"; json.dumps of it {w['report json']:.3f} s")
    print(line("compare", f"compare_report (base, candidate, split all: {compared['n_common']:,} common cases, "
                          f"decision {compared['decision']}), against the peer on both runs", "peer x2")
          + f"; json.dumps of it {w['compare json']:.3f} s")
    if peaks["peer cli"]:
        print(f"in processes of their own (wall clock with Python's start and the imports; peak resident memory, "
              f"goal < {PEAK_GOAL_MB} MB):")
        for name in PROCESSES:
            ratio = "" if name == "peer cli" else f"  ->  {w[name] / w['peer cli']:.2f}x the peer's process"
            print(f"  {name:12} {w[name]:.3f} s, peak {max(peaks[name]):.0f} MB{ratio}")
    self_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process (peer and ours together): peak {self_peak:.0f} MB; load average at the end "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
