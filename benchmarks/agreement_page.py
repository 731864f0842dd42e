"""How fast the Agreement page and the admin's Home answer with many labelers (a benchmark, not a test).

Builds (once, kept in --work; or into the empty database --db names, e.g. PostgreSQL) a database
of 10,000 claims (2,500 cases of four claims, slices drawn from three) labeled by 60 labelers
through the import services (`import_cases`, then `import_labels` of one labels CSV). Labelers
work in rotating pairs: case c goes to labeler c mod 60 and the one 1 + (c div 60) mod 59 places
further on, so about 1,250 pairs of labelers share claims; every tenth case has a third labeler
(1,000 claims labeled three times). About 21,000 labels. Each labeler copies a hidden true label
(60% support, 15% contradict, 25% insufficient) with their own accuracy (0.60 to 0.95, seeded)
and otherwise picks any label.

Then, through Streamlit's AppTest, logged in as an admin:

1. **The admin's Home**, first run with every cache empty (cold), then a rerun (warm).
2. **The Agreement page**, first run with every cache empty (cold: the report is computed),
   then a rerun (warm: the cached report is drawn again).

Each run is split into the time spent in `reports.agreement_report` (computing the report: the
labels read, every coefficient, the bootstrap), in the label fingerprint (the cache key) and the
rest (the page's own queries and building its elements: tables, expanders, charts). The number
of elements the page sends (expanders, charts, tables) says what a browser has to draw at first
paint. AppTest measures the server's side; the browser's drawing comes on top.

Run: `python benchmarks/agreement_page.py [--work DIR] [--db URL] [--against CHECKOUT]`.
--against names another checkout of annotator (e.g. `git worktree add /tmp/before main`): the
same measurements are taken first with its code, on the same database, in a child process, then
with this checkout's, and the ratios printed.

Figures (2 cores shared with other work, load average 3 to 5; SQLite; `--against` a checkout of
the code before the pairs were paged, same database, same run):

    run              before (s)   after (s)   before/after   report in it: before -> after
    home cold              0.88        1.29        0.7x        0.50 -> 0.51
    home warm              0.42        0.50        0.8x        0    -> 0 (figures reused)
    agreement cold        93.21        1.73       54x          7.58 -> 0.43
    agreement warm       114.66        1.48       77x          0    -> 0 (report reused)

    elements of the Agreement page: before 1,770 expanders, 1,774 charts, 1,775 tables;
    after 10 expanders, 14 charts, 15 tables.

The Home page's code did not change (its agreement figures were already kept under the label
fingerprint and the newest audit event, services/home.py): its two columns differ by the noise of
a loaded machine; its warm run is the claims by state and the release check, read anew each run.
Command: `PYTHONPATH=. python benchmarks/agreement_page.py --work /tmp/w --against /tmp/before`,
with /tmp/before from `git archive <commit before> | tar -x -C /tmp/before`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import CLAIMS_PER_CASE, write_cases  # noqa: E402

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

import annotator.services.fingerprint as fingerprint  # noqa: E402
import annotator.services.home as home  # noqa: E402
import annotator.services.reports as reports  # noqa: E402
from annotator.db import init_db, read_scope, session_scope  # noqa: E402
from annotator.models import Dataset  # noqa: E402
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.imports import import_cases, import_labels  # noqa: E402
from annotator.services.users import add_user  # noqa: E402
from annotator.vocabulary import LABELS  # noqa: E402

CLAIMS = 10_000
LABELERS = 60
THIRD_EVERY = 10  # every tenth case has a third labeler
TRUTH = (0.60, 0.15, 0.25)  # the hidden true label's shares, in LABELS order
DATASET = "bench-agreement"
ADMIN, PASSWORD = "bench-admin", "bench-admin-password"
HERE = Path(__file__).resolve().parents[1]


def labelers_of(case: int) -> list[str]:
    """The labelers of case `case`: a rotating pair, and a third one for every THIRD_EVERY-th case."""
    a = case % LABELERS
    b = (a + 1 + (case // LABELERS) % (LABELERS - 1)) % LABELERS
    chosen = [a, b]
    if case % THIRD_EVERY == THIRD_EVERY - 1:
        c = (b + 7) % LABELERS
        while c in chosen:
            c = (c + 1) % LABELERS
        chosen.append(c)
    return [f"lab-{k + 1:02d}" for k in chosen]


def write_labels(path: Path) -> tuple[int, int]:
    """The labels CSV (claim_id, labeler, label); returns (labels, distinct pairs of labelers)."""
    rng = random.Random(2)
    accuracy = {f"lab-{k + 1:02d}": rng.uniform(0.60, 0.95) for k in range(LABELERS)}
    pairs: set[tuple[str, str]] = set()
    n = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("claim_id,labeler,label\n")
        for case in range(CLAIMS // CLAIMS_PER_CASE):
            names = labelers_of(case)
            pairs.update((x, y) for x in names for y in names if x < y)
            for j in range(CLAIMS_PER_CASE):
                truth = rng.choices(LABELS, weights=TRUTH)[0]
                for name in names:
                    label = truth if rng.random() < accuracy[name] else rng.choice(LABELS)
                    out.write(f"c-{case}-{j},{name},{label}\n")
                    n += 1
    return n, len(pairs)


def build(work: Path, url: str | None) -> str:
    """The benchmark database (built when it has no DATASET yet); returns its URL."""
    url = url or f"sqlite:///{work / 'agreement-page.db'}"
    engine = init_db(url)
    with read_scope(engine) as session:
        built = session.exec(Dataset.__table__.select().where(Dataset.name == DATASET)).first() is not None
    if built:
        engine.dispose()
        return url
    started = time.perf_counter()
    cases, labels = work / "cases.jsonl", work / "labels.csv"
    random.seed(0)
    write_cases(cases, CLAIMS)
    n_labels, n_pairs = write_labels(labels)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, cases, fmt="jsonl", dataset=DATASET)
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, labels, dataset=DATASET)
        add_user(session, OPERATOR, ADMIN, ["admin"], PASSWORD)
    engine.dispose()
    print(f"built {n_labels:,} labels of {CLAIMS:,} claims by {LABELERS} labelers ({n_pairs:,} pairs) "
          f"in {time.perf_counter() - started:.0f} s")
    return url


# ---------------------------------------------------------------- timing what a run spends


class Spent:
    """Seconds spent in the report and the fingerprint during one page run (wrapped functions)."""

    def __init__(self) -> None:
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, name: str, what: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[what] += time.perf_counter() - started
                self.calls[what] += 1

        self._undo.append((owner, name, original))
        setattr(owner, name, timed)

    def install(self) -> None:
        from streamlit.delta_generator import DeltaGenerator

        for name in ("altair_chart", "dataframe", "table"):  # the page's elements, as methods and as st.<name>
            what = "charts" if name == "altair_chart" else "tables"
            self.wrap(DeltaGenerator, name, what)
            self.wrap(st, name, what)
        # The pages import these names when their script runs (each run): patching the modules is enough.
        self.wrap(reports, "agreement_report", "report")
        self.wrap(fingerprint, "label_fingerprint", "fingerprint")
        # services/home.py imported both at its own import: patch its names too.
        self.wrap(home, "agreement_report", "report")
        self.wrap(home, "label_fingerprint", "fingerprint")

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)

    @contextmanager
    def run(self, into: dict, name: str):
        self.seconds.clear()
        self.calls.clear()
        started = time.perf_counter()
        yield
        total = time.perf_counter() - started
        into[name] = {"total": total, "reports_computed": self.calls["report"],
                      **{what: self.seconds[what] for what in ("report", "fingerprint", "charts", "tables")}}


def _elements(at: AppTest) -> dict[str, int]:
    """What the page sent: expanders, charts (Vega-Lite), data frames and tables."""
    return {"expanders": len(at.expander), "charts": len(at.get("vega_lite_chart")),
            "tables": len(at.dataframe) + len(at.table)}


def measure(url: str, app_root: Path = HERE) -> dict:
    """Cold and warm runs of the admin's Home and of the Agreement page, as ADMIN."""
    os.environ["DATABASE_URL"] = url
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(app_root / "annotator" / "ui" / "app.py"), default_timeout=900)
    at.run()
    at.text_input(key="login.name").input(ADMIN)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()  # lands on Home: warms imports and the engine
    out: dict[str, Any] = {}
    spent = Spent()
    spent.install()
    try:
        for page, name in (("views/home.py", "home"), ("views/agreement.py", "agreement")):
            st.cache_data.clear()
            getattr(home, "_agreement_cache", {}).clear()
            with spent.run(out, f"{name} cold"):
                at.switch_page(page).run()
            with spent.run(out, f"{name} warm"):
                at.run()
            if at.exception:
                raise RuntimeError(f"{page}: {at.exception}")
            out[f"{name} elements"] = _elements(at)
    finally:
        spent.uninstall()
    return out


def _print(figures: dict, title: str) -> None:
    print(f"\n{title}: seconds (total = report + fingerprint + charts + tables + the rest: queries, widgets, text)")
    for name, run in figures.items():
        if name.endswith("elements"):
            print(f"  {name:<20} {run}")
            continue
        rest = run["total"] - sum(run.get(what, 0.0) for what in ("report", "fingerprint", "charts", "tables"))
        print(f"  {name:<16} total {run['total']:7.2f}  report {run['report']:6.2f} ({run['reports_computed']})"
              f"  fingerprint {run['fingerprint']:4.2f}  charts {run.get('charts', 0.0):6.2f}"
              f"  tables {run.get('tables', 0.0):6.2f}  rest {rest:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for the SQLite database (kept and reused)")
    parser.add_argument("--db", default=None, help="database URL to build into and measure (default: SQLite in --work)")
    parser.add_argument("--against", type=Path, default=None, help="another checkout to measure first, for ratios")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line (used by --against)")
    parser.add_argument("--code", type=Path, default=HERE, help="the checkout whose app is run (used by --against)")
    args = parser.parse_args()
    app_root = args.code.resolve()
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-agreement-page-"))
    work.mkdir(parents=True, exist_ok=True)
    url = build(work, args.db)
    if args.json:
        print(json.dumps(measure(url, app_root)))
        return
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"load average before: {os.getloadavg()[0]:.1f}; database {url}")
    before = None
    if args.against is not None:
        against = args.against.resolve()
        child = subprocess.run(  # this script, with the other checkout's annotator and app
            [sys.executable, __file__, "--work", str(work), "--db", url, "--json", "--code", str(against)],
            env={**os.environ, "PYTHONPATH": str(against)}, capture_output=True, text=True, check=False, cwd=against)
        if child.returncode:
            raise SystemExit(f"the run with {against} failed:\n{child.stderr[-3000:]}")
        before = json.loads(child.stdout.strip().splitlines()[-1])
        _print(before, f"with {against}")
    after = measure(url)
    _print(after, f"with {HERE}")
    if before is not None:
        print("\nratios before / after (total seconds)")
        for name, run in after.items():
            if not name.endswith("elements"):
                print(f"  {name:<20} {before[name]['total']:7.2f} -> {run['total']:7.2f}   "
                      f"{before[name]['total'] / run['total']:6.1f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}; work folder: {work}")


if __name__ == "__main__":
    main()
