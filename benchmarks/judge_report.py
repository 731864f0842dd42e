"""A judge scored against gold on 100,000 claims, against pandas on the same claims (a benchmark,
not a test).

Goal: `calibration.score_judge` (every figure, the analytic intervals and 1,000 case-level
bootstrap resamples) on 100,000 claims in 30,000 cases takes at most 3x the floor.

Floor: writing the claims to two CSV files (gold: claim_id, case_id, label; judge: claim_id,
label), reading them back with `pd.read_csv`, joining them on claim_id and `pd.crosstab` of gold
against judge. Ours: `score_judge` on the claims held in memory (the end-to-end `judge report`
adds the reading of its files later), then `json.dumps` of the result.
Floor and ours alternate within each of --repeat rounds, after one untimed call of ours on a
few claims (its first call imports statsmodels and scipy); medians are printed. Peak memory of
ours is measured in a separate run under tracemalloc (which slows allocation, so it is not timed),
and the process's peak resident size is printed at the end.

Run: `python benchmarks/judge_report.py [--claims N] [--cases C] [--bootstrap B] [--repeat R]`.

Figures (2 CPUs shared with other work, load average about 3; python 3.11, numpy 2.4, pandas 3.1),
100,000 claims, 1,000 resamples, medians:
  30,000 cases (defaults, 5 rounds): floor 0.256 s, ours 0.162 s: 0.63x; ours peaks at 26.5 MB
      (tracemalloc), the whole process at 257 MB resident.
  10,000 cases (3 rounds): floor 0.190 s, ours 0.291 s: 1.53x; 63.7 MB.
   3,000 cases (3 rounds): floor 0.236 s, ours 0.215 s: 0.91x; 51.3 MB.
More claims per case give more distinct case patterns, so more multinomial cells to draw.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annotator.calibration import score_judge
from annotator.vocabulary import LABELS

GOAL = 3.0
"""Ours may take at most this many times the floor."""

GOLD_SHARES = (0.60, 0.15, 0.25)
"""The gold labels' shares, in LABELS order (support, contradict, insufficient)."""

COPY = 0.8
"""The judge copies the gold with this probability, else draws from JUDGE_SHARES."""

JUDGE_SHARES = (0.70, 0.15, 0.15)
"""What the judge says when it does not copy the gold: a judge leaning to `support`."""


def make_claims(n_claims: int, n_cases: int, seed: int = 0) -> pd.DataFrame:
    """claim_id, case_id, gold, judge for n_claims claims in exactly n_cases cases (each case has
    one claim, the rest fall in cases drawn uniformly). Same seed, same claims."""
    rng = np.random.default_rng(seed)
    case = np.sort(np.concatenate([np.arange(n_cases), rng.integers(0, n_cases, n_claims - n_cases)]))
    gold = rng.choice(len(LABELS), size=n_claims, p=GOLD_SHARES)
    judge = np.where(rng.random(n_claims) < COPY, gold, rng.choice(len(LABELS), size=n_claims, p=JUDGE_SHARES))
    labels = np.array(LABELS, dtype=object)
    return pd.DataFrame({
        "claim_id": [f"claim{i:07d}" for i in range(n_claims)],
        "case_id": [f"case{c:06d}" for c in case],
        "gold": labels[gold],
        "judge": labels[judge],
    })


def pandas_floor(claims: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Write the gold and judge CSVs, read them back, join on claim_id and crosstab gold x judge."""
    gold_path, judge_path = folder / "gold.csv", folder / "judge.csv"
    claims[["claim_id", "case_id", "gold"]].rename(columns={"gold": "label"}).to_csv(gold_path, index=False)
    claims[["claim_id", "judge"]].rename(columns={"judge": "label"}).to_csv(judge_path, index=False)
    gold = pd.read_csv(gold_path)
    judge = pd.read_csv(judge_path)
    both = gold.merge(judge, on="claim_id", suffixes=("_gold", "_judge"))
    return pd.crosstab(both["label_gold"], both["label_judge"])


def ours(claims: pd.DataFrame, n_bootstrap: int) -> tuple[dict[str, Any], str]:
    """score_judge on the claims, and its JSON text."""
    report = score_judge(claims["case_id"], claims["gold"], claims["judge"], n_bootstrap=n_bootstrap, seed=0)
    return report, json.dumps(report, allow_nan=False)


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    """(result, seconds) of action(), after a garbage collection so no run pays for another."""
    gc.collect()
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def peak_traced_mb(action: Callable[[], Any]) -> float:
    """The peak of Python-tracked memory (numpy arrays included) during action(), in MB."""
    gc.collect()
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def check_confusion(crosstab: pd.DataFrame, report: dict[str, Any]) -> None:
    """SystemExit unless pandas' crosstab equals the report's confusion (gold rows, judge columns)."""
    expected = crosstab.reindex(index=list(LABELS), columns=list(LABELS), fill_value=0)
    ours_table = [[report["confusion"][g][j] for j in LABELS] for g in LABELS]
    if ours_table != expected.to_numpy().tolist():
        raise SystemExit(f"score_judge's confusion {ours_table} differs from pandas' crosstab {expected.to_numpy().tolist()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100_000, help="claims with a gold and a judge label")
    parser.add_argument("--cases", type=int, default=30_000, help="cases they fall in")
    parser.add_argument("--bootstrap", type=int, default=1000, help="case-level bootstrap resamples")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of floor and ours")
    args = parser.parse_args()
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, pandas {pd.__version__}, {os.cpu_count()} CPUs")

    claims, seconds = timed(lambda: make_claims(args.claims, args.cases))
    print(f"generated {len(claims):,} claims in {claims['case_id'].nunique():,} cases in {seconds:.2f} s (not counted)")
    _, seconds = timed(lambda: ours(claims.head(1000), args.bootstrap))
    print(f"first call on 1,000 claims (imports statsmodels and scipy) in {seconds:.2f} s (not counted)")
    folder = Path(tempfile.mkdtemp(prefix="annotator-judge-"))
    runs: dict[str, list[float]] = {"floor (write, read, join, crosstab)": [], "ours (score_judge + json)": []}
    for round_no in range(args.repeat):
        order = ["floor", "ours"] if round_no % 2 == 0 else ["ours", "floor"]
        for step in order:
            if step == "floor":
                crosstab, seconds = timed(lambda: pandas_floor(claims, folder))
                runs["floor (write, read, join, crosstab)"].append(seconds)
            else:
                (report, text), seconds = timed(lambda: ours(claims, args.bootstrap))
                runs["ours (score_judge + json)"].append(seconds)

    median = {name: statistics.median(times) for name, times in runs.items()}
    print(f"\nmedian of {args.repeat} (seconds; every run listed)")
    for name, times in runs.items():
        print(f"  {name:<38} {median[name]:7.3f}   [{', '.join(f'{t:.3f}' for t in times)}]")
    floor, mine = median["floor (write, read, join, crosstab)"], median["ours (score_judge + json)"]
    verdict = "within" if mine <= GOAL * floor else "NOT within"
    print(f"\nratio ours / floor: {mine / floor:.2f}x, {verdict} the {GOAL:g}x goal")

    peak = peak_traced_mb(lambda: ours(claims, args.bootstrap))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    print(f"peak memory of ours (tracemalloc): {peak:.1f} MB; process peak resident size (everything): {rss:.0f} MB")

    check_confusion(crosstab, report)
    print(f"report: n_items {report['n_items']:,}, n_cases {report['n_cases']:,}, "
          f"percent_agreement {report['percent_agreement']:.4f} {report['ci95']['percent_agreement']}, "
          f"cohen_kappa {report['cohen_kappa']:.4f}, false_pass_rate {report['false_pass_rate']:.4f}, "
          f"false_fail_rate {report['false_fail_rate']:.4f}; JSON {len(text):,} chars; "
          "confusion equals pandas' crosstab")
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


if __name__ == "__main__":
    main()
