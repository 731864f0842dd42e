"""Import speed and memory: claims/s and peak RSS of `import_cases` on a synthetic native JSONL
or flat CSV file (a benchmark, not a test).

Writes N claims (N / 4 cases, four claims and two passages each, as benchmarks/baseline.py) to a
temporary folder (`--format csv`: the same cases as flat CSV, one row per claim and passage, 8
rows per case, each case's rows together), imports them into a new SQLite database (or `--db
URL`) in one transaction, and prints the time, claims per second (by the clock and by CPU time,
which a busy machine disturbs less) and the process's peak resident memory
(`resource.getrusage`, so the figure covers the whole run, file writing included).

`--shape 1x1`: --claims cases of one claim and one passage each instead. `--floor` (JSONL) also
times the floor, the same file parsed with `json.loads` and bulk inserted into three raw sqlite3
tables (`floor_seconds`), and prints ours / floor, by the clock and in CPU time.

Run: `python benchmarks/imports.py [--claims 200000] [--format jsonl|csv] [--shape 4x2|1x1] [--floor]
     [--db URL] [--profile]`
     `python benchmarks/imports.py --claims 1000000` (the memory check)
`--profile` prints the 25 most expensive functions (cProfile, cumulative time).

Measured (2 shared cores, busy; `--claims 100000 --shape 1x1 --floor`, before and after the
native reader's fast path, one session, two rounds each): CPU time 9.1 / 10.5 s -> 7.2 / 7.5 s,
ours / floor in CPU time 5.5x / 5.8x -> 4.4x / 5.2x (floor 1.5-1.8 s CPU); peak RSS 183 MB both.
CSV (`--format csv`, same shape): CPU time 8.9 s -> 8.5 s, peak RSS 194 MB. The goal (JSONL
within 2.5x of the floor, CSV within 3x) is not reached yet: what is left is mostly per-record
work in unique_cases and the reader, and the ORM-shaped bulk inserts (four tables, their indexes).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import json
import pstats
import random
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import write_cases  # noqa: E402

from annotator.db import init_db, session_scope  # noqa: E402
from annotator.formats import CSV_CASE_COLUMNS  # noqa: E402
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.imports import import_cases  # noqa: E402


def write_small_cases(path: Path, n_cases: int) -> None:
    """A native JSONL file of n_cases cases, one passage and one claim each (`--shape 1x1`)."""
    with path.open("w", encoding="utf-8") as out:
        for c in range(n_cases):
            case = {
                "case_id": f"case-{c}", "question": f"質問 {c}: 経費精算の締め切りは?", "answer": f"回答 {c}.",
                "slice": random.choice(("normal", "paraphrase", "insufficient_evidence")), "split": "dev", "metadata": {},
                "passages": [{"passage_id": f"p-{c}", "doc_id": f"doc-{c % 500}", "version": "v1",
                              "title": "経費規程", "text": f"本文 {c}: 申請は翌月5日までに行う。"}],
                "claims": [{"claim_id": f"c-{c}", "text": f"主張 {c}"}],
            }
            out.write(json.dumps(case, ensure_ascii=False) + "\n")


def floor_seconds(jsonl: Path, folder: Path) -> tuple[float, float]:
    """The floor: the same native JSONL file parsed with `json.loads`, line by line, and bulk
    inserted (`executemany`, one transaction) into three raw sqlite3 tables (cases, passages,
    claims; no checks, no ORM). Returns the seconds it took by the clock and in CPU time."""
    database = folder / "floor.db"
    database.unlink(missing_ok=True)
    connection = sqlite3.connect(database)
    connection.executescript(
        "CREATE TABLE cases (id INTEGER PRIMARY KEY, case_id TEXT UNIQUE, question TEXT, answer TEXT, slice TEXT,"
        " split TEXT, meta TEXT);"
        "CREATE TABLE passages (id INTEGER PRIMARY KEY, passage_id TEXT UNIQUE, doc_id TEXT, version TEXT, title TEXT,"
        " text TEXT);"
        "CREATE TABLE claims (id INTEGER PRIMARY KEY, claim_id TEXT UNIQUE, case_id TEXT, text TEXT);")
    start, cpu_start = time.perf_counter(), time.process_time()
    cases, passages, claims = [], [], []

    def write() -> None:
        connection.executemany("INSERT INTO cases (case_id, question, answer, slice, split, meta) VALUES (?, ?, ?, ?, ?, ?)",
                               cases)
        connection.executemany("INSERT OR IGNORE INTO passages (passage_id, doc_id, version, title, text) "
                               "VALUES (?, ?, ?, ?, ?)", passages)
        connection.executemany("INSERT INTO claims (claim_id, case_id, text) VALUES (?, ?, ?)", claims)
        cases.clear(), passages.clear(), claims.clear()

    with connection, jsonl.open(encoding="utf-8") as lines:  # one transaction, written 2,000 cases at a time
        for line in lines:
            case = json.loads(line)
            cases.append((case["case_id"], case["question"], case["answer"], case["slice"], case["split"],
                          json.dumps(case["metadata"])))
            passages.extend((p["passage_id"], p["doc_id"], p["version"], p["title"], p["text"]) for p in case["passages"])
            claims.extend((c["claim_id"], case["case_id"], c["text"]) for c in case["claims"])
            if len(cases) >= 2_000:
                write()
        write()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    connection.close()
    database.unlink()
    return seconds, cpu


def peak_rss_mb() -> float:
    """The process's peak resident set size in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_flat_csv(jsonl: Path, path: Path) -> None:
    """The cases of the native JSONL file `jsonl` as flat CSV (columns CSV_CASE_COLUMNS, UTF-8):
    one row per claim and passage (a claim without passage_ids: every passage of its case), one
    case at a time, so that the rows of a case are together."""
    with jsonl.open(encoding="utf-8") as cases, path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_CASE_COLUMNS)
        for line in cases:
            writer.writerows(_flat_rows(json.loads(line)))


def _flat_rows(case: dict) -> list[list[str]]:
    passages = {passage["passage_id"]: passage for passage in case["passages"]}
    own = [case["case_id"], case["question"], case["answer"], case["slice"], case["split"]]
    return [own + [claim["claim_id"], claim["text"], pid, passages[pid]["doc_id"], passages[pid]["version"],
                   passages[pid]["title"], passages[pid]["text"]]
            for claim in case["claims"] for pid in claim.get("passage_ids") or list(passages)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=200_000)
    parser.add_argument("--format", choices=("jsonl", "csv"), default="jsonl", help="the file imported (default: jsonl)")
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file in a temp folder)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the import")
    parser.add_argument("--shape", choices=("4x2", "1x1"), default="4x2",
                        help="claims x passages per case (default 4x2; 1x1: --claims cases of one claim and one passage)")
    parser.add_argument("--floor", action="store_true",
                        help="also time the floor (json.loads + executemany into three raw sqlite3 tables; JSONL only)")
    args = parser.parse_args()
    random.seed(0)
    work = Path(tempfile.mkdtemp(prefix="annotator-imports-"))
    cases = work / "cases.jsonl"
    if args.shape == "1x1":
        write_small_cases(cases, args.claims)
    else:
        write_cases(cases, args.claims)
    floor = floor_seconds(cases, work) if args.floor and args.format == "jsonl" else None
    if args.format == "csv":
        write_flat_csv(cases, work / "cases.csv")
        cases.unlink()
        cases = work / "cases.csv"
    engine = init_db(args.db or f"sqlite:///{work / 'bench.db'}")
    before = peak_rss_mb()
    print(f"{args.claims:,} claims ({cases.stat().st_size / 1e6:,.0f} MB of {args.format.upper()}), "
          f"database {engine.url.render_as_string(hide_password=True)}")
    profiler = cProfile.Profile() if args.profile else None
    start, cpu_start = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, cases, fmt=args.format, dataset="bench")
    if profiler:
        profiler.disable()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"import: {seconds:.2f} s, {args.claims / seconds:,.0f} claims/s "
          f"({report.total('claims'):,} claims, {report.total('passages'):,} passages)")
    print(f"CPU time: {cpu:.2f} s, {args.claims / cpu:,.0f} claims per CPU second (the figure to compare on a busy machine)")
    print(f"peak RSS: {peak_rss_mb():,.0f} MB (before the import: {before:,.0f} MB)")
    if floor is not None:
        print(f"floor (json.loads + sqlite3 executemany): {floor[0]:.2f} s, CPU {floor[1]:.2f} s; "
              f"ours / floor = {seconds / floor[0]:.1f}x by the clock, {cpu / floor[1]:.1f}x in CPU time")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
