"""`judge report` end to end on 100,000 gold claims and 100,000 judge labels, against pandas
reading the same two files and cross-tabulating them (a benchmark, not a test).

Goal (issue 16): the report with 1,000 case-level bootstrap resamples within 3x the floor, in one
run; peak memory under 500 MB.

Builds (once, kept with --work) the database of benchmarks/releases.py (100,000 claims, four per
case, two labelers, every dispute adjudicated, so every claim is released), creates a release,
writes a judge labels file (the judge copies the gold with probability 0.8, else draws a label)
and imports it as a judge run. Then, alternating for --repeat rounds:
  floor: `pd.read_parquet` of the release's gold.parquet (claim_id, case_id, gold_label),
         `pd.read_json(lines=True)` of the judge file, a join on claim_id and `pd.crosstab`;
  ours:  `services.judges.judge_report` (verifies the release's files against the manifest,
         reads its gold, reads the run's labels from the database, every figure with 1,000
         case-level resamples overall, by slice, by split and for each of the two labelers, the
         corrected rate and the disagreements) and `json.dumps` of it.
Medians are printed, and the process's peak resident memory.

Run: `python benchmarks/judge_report_service.py [--claims N] [--bootstrap B] [--repeat R] [--work DIR] [--by slice,split]`

Figures (2 CPUs, python 3.11, SQLite; medians of 5 rounds; 100,000 claims in 25,000 cases, three
slices, one split, two labelers):
  default (--by slice,split: 1 + 3 slice + 2 labeler bootstraps): quiet machine 0.83 s against a
      0.18 s floor, 4.7x; with the test suite running beside it 1.15-2.09 s against 0.26-0.36 s,
      4.5x-5.8x. Not within the 3x goal.
  --by "" (the overall figures and the two labelers): 0.72 s against 0.22 s, 3.2x (quiet);
      1.61 s against 0.52 s, 3.1x (loaded).
  Peak resident memory 487-501 MB, most of it the libraries (pandas, pyarrow, scipy, statsmodels,
  SQLAlchemy) before any data is read.
Where the time goes (cProfile, default): the seven case-level bootstraps about 0.4 s (numpy's
multinomial over the distinct case patterns), the run's labels from the database 0.25-0.4 s,
reading and verifying the release 0.2-0.4 s (SHA-256 of its four files), the 20,000
disagreements as JSON-ready rows 0.2 s. The floor draws no interval.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from sqlmodel import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from releases import build  # noqa: E402 - the sibling benchmark's database

from annotator.db import read_scope, session_scope  # noqa: E402
from annotator.models import GoldRelease, JudgeRun  # noqa: E402
from annotator.release import release_layout  # noqa: E402
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.judges import import_judge_labels, judge_report  # noqa: E402
from annotator.services.releases import create_release  # noqa: E402
from annotator.vocabulary import LABELS  # noqa: E402

GOAL = 3.0
RELEASE, RUN = "bench-gold", "bench-judge"


def prepare(work: Path, n_claims: int):  # noqa: ANN201 - an Engine
    """The database with release RELEASE and judge run RUN, made once."""
    engine = build(work, n_claims)
    with read_scope(engine) as session:
        released = session.exec(select(GoldRelease.path).where(GoldRelease.name == RELEASE)).first()
        judged = session.exec(select(JudgeRun.id).where(JudgeRun.name == RUN)).first()
    if released is None:
        with session_scope(engine) as session:
            created = create_release(session, OPERATOR, RELEASE, out_dir=work / "releases", n_bootstrap=0)
        released = str(created.path)
    judge_file = work / "judge.jsonl"
    if judged is None:
        gold = pd.read_parquet(release_layout(released).parquet, columns=["claim_id", "gold_label"])
        rng = random.Random(2)
        with judge_file.open("w", encoding="utf-8") as out:
            for claim_id, label in zip(gold["claim_id"], gold["gold_label"]):
                said = label if rng.random() < 0.8 else rng.choice(LABELS)
                out.write(json.dumps({"claim_id": claim_id, "label": said, "confidence": round(rng.random(), 3)}) + "\n")
        with session_scope(engine) as session:
            import_judge_labels(session, OPERATOR, judge_file, run=RUN, dataset="bench")
    return engine, Path(released), judge_file


def floor(folder: Path, judge_file: Path) -> pd.DataFrame:
    gold = pd.read_parquet(release_layout(folder).parquet, columns=["claim_id", "case_id", "gold_label"])
    judge = pd.read_json(judge_file, lines=True)
    joined = gold.merge(judge, on="claim_id")
    return pd.crosstab(joined["gold_label"], joined["label"])


def ours(engine, n_bootstrap: int, by: list[str]) -> dict:  # noqa: ANN001 - an Engine
    with session_scope(engine) as session:
        report = judge_report(session, OPERATOR, RUN, RELEASE, by=by, n_bootstrap=n_bootstrap)
    json.dumps(report, allow_nan=False)
    return report


def timed(action):  # noqa: ANN001, ANN201
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--by", default="slice,split")
    parser.add_argument("--work", type=Path, default=None, help="folder that keeps (and reuses) the database")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-judge-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    engine, folder, judge_file = prepare(work, args.claims)
    by = [part for part in args.by.split(",") if part]
    ours(engine, 0, by)  # untimed: imports statsmodels, scipy and pyarrow's parquet reader
    floors, mine = [], []
    for _ in range(args.repeat):
        crosstab, seconds = timed(lambda: floor(folder, judge_file))
        floors.append(seconds)
        report, seconds = timed(lambda: ours(engine, args.bootstrap, by))
        mine.append(seconds)
    assert int(crosstab.to_numpy().sum()) == report["n_items"] == args.claims
    f, o = statistics.median(floors), statistics.median(mine)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.claims:,} gold claims, {report['n_items']:,} judged, {args.bootstrap} resamples, by {by or 'nothing'}")
    print(f"floor (pandas: read gold.parquet and the judge file, join, crosstab): {f:.3f} s")
    print(f"ours (judge_report + json.dumps): {o:.3f} s  ->  {o / f:.2f}x the floor (goal <= {GOAL}x)")
    print(f"peak resident memory of the process: {peak:.0f} MB (goal < 500 MB)")


if __name__ == "__main__":
    main()
