"""The agreement report against pandas on one large CSV of two raters (a benchmark, not a test).

Goal: the full agreement report (all coefficients, confusion matrices, 1,000 bootstrap
resamples) on 1,000,000 two-rater items read from a CSV takes at most 3x the time pandas needs
just to read that CSV and cross-tabulate it.

Floor: `pd.read_csv` (default C engine, and pyarrow engine; the faster is the floor), a pivot
to one row per item with one column per rater, and `pd.crosstab` of the two raters' labels.
Ours: `read_label_frame` (reading, with all its checks), then `compute_agreement` with
--bootstrap resamples and `json.dumps` of the whole report (computing).
Floor and ours alternate within each of --repeat rounds; medians are printed. Generating the
CSV (seeded, in a temp folder unless --csv names one to reuse) is timed but not counted.

Run: `python benchmarks/agreement.py [--items N] [--repeat R] [--bootstrap B] [--csv PATH]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annotator.agreement import compute_agreement, read_label_frame
from annotator.vocabulary import LABELS

GOAL = 3.0
"""Ours may take at most this many times the floor."""

SKEW = (0.60, 0.15, 0.25)
"""Rater 1's label shares, in LABELS order (support, contradict, insufficient)."""

COPY = 0.5
"""Rater 2 copies rater 1 with this probability, else draws uniformly: ~67% agreement."""


def write_csv(path: Path, n_items: int, seed: int = 0) -> None:
    """A CSV item_id,rater,label with rows (item, r1), (item, r2) for items c0000001, ...

    Rater 1 draws from SKEW; rater 2 copies rater 1 with probability COPY, else draws
    uniformly from LABELS. Same seed, same file.
    """
    rng = np.random.default_rng(seed)
    first = rng.choice(len(LABELS), size=n_items, p=SKEW)
    second = np.where(rng.random(n_items) < COPY, first, rng.integers(len(LABELS), size=n_items))
    width = max(7, len(str(n_items)))
    ids = [f"c{i:0{width}d}" for i in range(1, n_items + 1)]
    labels = np.array(LABELS, dtype=object)
    frame = pd.DataFrame({
        "item_id": np.repeat(ids, 2),
        "rater": np.tile(np.array(["r1", "r2"], dtype=object), n_items),
        "label": labels[np.column_stack([first, second]).ravel()],
    })
    frame.to_csv(path, index=False)


def pandas_floor(path: Path, engine: str) -> pd.DataFrame:
    """Read the CSV with pandas, one row per item (a column per rater), crosstab r1 x r2."""
    raw = pd.read_csv(path, engine=engine)
    wide = raw.pivot(index="item_id", columns="rater", values="label")
    return pd.crosstab(wide["r1"], wide["r2"])


def ours(path: Path, n_bootstrap: int) -> tuple[Any, str, float, float]:
    """Read with read_label_frame, compute the report and dump it as JSON.

    Returns (report, its JSON text, seconds reading, seconds computing and dumping).
    """
    start = time.perf_counter()
    frame = read_label_frame(path)
    read = time.perf_counter()
    report = compute_agreement(frame, n_bootstrap=n_bootstrap, seed=0)
    text = json.dumps(report.to_json(), allow_nan=False)
    return report, text, read - start, time.perf_counter() - read


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    """(result, seconds) of action(), after a garbage collection so no run pays for another."""
    gc.collect()
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def usable_engines() -> list[str]:
    """The pandas engines that can read here: "c" always, "pyarrow" when pyarrow imports."""
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:
        print(f"pandas engine pyarrow unusable, left out of the floor: {exc}")
        return ["c"]
    return ["c", "pyarrow"]


def check_confusion(crosstab: pd.DataFrame, report: Any) -> None:
    """SystemExit unless pandas' crosstab equals report.confusion (r1 rows, r2 columns)."""
    expected = crosstab.reindex(index=list(LABELS), columns=list(LABELS), fill_value=0).to_numpy().tolist()
    if report.confusion != expected:
        raise SystemExit(f"report.confusion {report.confusion} differs from pandas' crosstab {expected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000, help="two-rater items to generate")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of floor and ours")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--csv", type=Path, default=None, help="reuse this CSV (made if missing)")
    args = parser.parse_args()
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, pandas {pd.__version__}, {os.cpu_count()} CPUs")

    path = args.csv or Path(tempfile.mkdtemp(prefix="annotator-agreement-")) / "labels.csv"
    if path.exists():
        print(f"reusing {path} ({path.stat().st_size / 1e6:.1f} MB)")
    else:
        _, seconds = timed(lambda: write_csv(path, args.items))
        print(f"generated {args.items:,} items ({2 * args.items:,} rows) in {seconds:.2f} s (not counted): "
              f"{path}, {path.stat().st_size / 1e6:.1f} MB")

    engines = usable_engines()
    runs: dict[str, list[float]] = {f"floor {e}": [] for e in engines}
    runs.update({"ours read": [], "ours compute+json": [], "ours total": []})
    steps = [f"floor {e}" for e in engines] + ["ours"]
    for round_no in range(args.repeat):
        for step in steps[round_no % len(steps):] + steps[:round_no % len(steps)]:  # rotate the order
            if step == "ours":
                (report, text, read, compute), total = timed(lambda: ours(path, args.bootstrap))
                runs["ours read"].append(read)
                runs["ours compute+json"].append(compute)
                runs["ours total"].append(total)
            else:
                crosstab, seconds = timed(lambda: pandas_floor(path, step.split()[1]))
                runs[step].append(seconds)

    median = {name: statistics.median(times) for name, times in runs.items()}
    print(f"\nmedian of {args.repeat} (seconds; every run listed)")
    for name, times in runs.items():
        print(f"  {name:<20} {median[name]:8.2f}   [{', '.join(f'{t:.2f}' for t in times)}]")
    floor_name = min((name for name in median if name.startswith("floor")), key=median.get)
    ratio = median["ours total"] / median[floor_name]
    verdict = "within" if ratio <= GOAL else "NOT within"
    print(f"\nratio ours total / {floor_name} (the faster floor): {ratio:.2f}x, {verdict} the {GOAL:g}x goal")

    check_confusion(crosstab, report)
    alpha = report.krippendorff_alpha.value
    print(f"report: n_items {report.n_items:,}, cohen_kappa {report.cohen_kappa.value:.4f}, "
          f"krippendorff_alpha {alpha:.4f}, JSON {len(text):,} chars; confusion equals pandas' crosstab")


if __name__ == "__main__":
    main()
