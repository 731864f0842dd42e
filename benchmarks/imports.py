"""Import speed and memory: claims/s and peak RSS of `import_cases` on a synthetic native JSONL
file (a benchmark, not a test).

Writes N claims (N / 4 cases, four claims and two passages each, as benchmarks/baseline.py) to a
temporary folder, imports them into a new SQLite database (or `--db URL`) in one transaction,
and prints the time, claims per second (by the clock and by CPU time, which a busy machine
disturbs less) and the process's peak resident memory
(`resource.getrusage`, so the figure covers the whole run, file writing included).

Run: `python benchmarks/imports.py [--claims 200000] [--db URL] [--profile]`
     `python benchmarks/imports.py --claims 1000000` (the memory check)
`--profile` prints the 25 most expensive functions (cProfile, cumulative time).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import write_cases  # noqa: E402

from annotator.db import init_db, session_scope  # noqa: E402
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.imports import import_cases  # noqa: E402


def peak_rss_mb() -> float:
    """The process's peak resident set size in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=200_000)
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file in a temp folder)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the import")
    args = parser.parse_args()
    random.seed(0)
    work = Path(tempfile.mkdtemp(prefix="annotator-imports-"))
    cases = work / "cases.jsonl"
    write_cases(cases, args.claims)
    engine = init_db(args.db or f"sqlite:///{work / 'bench.db'}")
    before = peak_rss_mb()
    print(f"{args.claims:,} claims ({cases.stat().st_size / 1e6:,.0f} MB of JSONL), "
          f"database {engine.url.render_as_string(hide_password=True)}")
    profiler = cProfile.Profile() if args.profile else None
    start, cpu_start = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, cases, fmt="jsonl", dataset="bench")
    if profiler:
        profiler.disable()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"import: {seconds:.2f} s, {args.claims / seconds:,.0f} claims/s "
          f"({report.total('claims'):,} claims, {report.total('passages'):,} passages)")
    print(f"CPU time: {cpu:.2f} s, {args.claims / cpu:,.0f} claims per CPU second (the figure to compare on a busy machine)")
    print(f"peak RSS: {peak_rss_mb():,.0f} MB (before the import: {before:,.0f} MB)")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
