"""Time `create_release` on a synthetic database of N claims with two labels each (a benchmark, not
a test).

Builds the database the fastest existing way (`import_cases`, `import_labels` and
`import_adjudications` from generated native JSONL and CSV files: four claims and two passages
per case, 80% of the pairs agree, the disputed rest is adjudicated, so all N claims are released), then creates releases and prints, per run, the
seconds, claims per second and the split: the database queries, the agreement report (with its
bootstrap), writing each file and hashing. Run:

    python benchmarks/releases.py [--claims 100000] [--runs 2] [--bootstrap 1000] [--work DIR] [--excel]

--work DIR keeps the database in DIR and reuses it on the next run with the same --claims (the
build takes longer than the release). The split is measured by wrapping the functions that do
each part; a part that is not listed is building records and the rows (`other`).
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from annotator import release as core
from annotator.db import init_db, session_scope
from annotator.services import releases as service
from annotator.services.access import OPERATOR
from annotator.services.imports import import_adjudications, import_cases, import_labels
from annotator.vocabulary import LABELS

CLAIMS_PER_CASE = 4


def write_cases(path: Path, n_claims: int) -> None:
    """A native JSONL file of n_claims / 4 cases, four claims and two passages each."""
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as out:
        for c in range(n_claims // CLAIMS_PER_CASE):
            case = {
                "case_id": f"case-{c}", "question": f"質問 {c}: 経費精算の締め切りは?", "answer": f"回答 {c}.",
                "slice": rng.choice(("normal", "paraphrase", "insufficient_evidence")), "split": "dev",
                "metadata": {"expected_behavior": "answer", "required_evidence_ids": [f"p-{c}-0"]},
                "passages": [{"passage_id": f"p-{c}-{k}", "doc_id": f"doc-{c % 500}", "version": "v1",
                              "title": "経費規程", "text": f"本文 {c}-{k}: 申請は翌月5日までに行う。"} for k in range(2)],
                "claims": [{"claim_id": f"c-{c}-{j}", "text": f"主張 {c}-{j}"} for j in range(CLAIMS_PER_CASE)],
            }
            out.write(json.dumps(case, ensure_ascii=False) + "\n")


def write_labels(path: Path, decisions: Path, n_claims: int, agree: float = 0.8) -> None:
    """Two labelers' labels on every claim, and an adjudication of every disputed one (so that all
    n_claims are final and released)."""
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as out, decisions.open("w", encoding="utf-8") as decided:
        out.write("claim_id,labeler,label\n")
        decided.write("claim_id,adjudicator,label\n")
        for c in range(n_claims // CLAIMS_PER_CASE):
            for j in range(CLAIMS_PER_CASE):
                first = rng.choice(LABELS)
                second = first if rng.random() < agree else rng.choice(LABELS)
                out.write(f"c-{c}-{j},bench-a,{first}\nc-{c}-{j},bench-b,{second}\n")
                if first != second:
                    decided.write(f"c-{c}-{j},bench-c,{rng.choice((first, second))}\n")


def build(work: Path, n_claims: int):  # noqa: ANN201 - an Engine
    """The benchmark database in `work`, built unless a database of n_claims is there already."""
    db = work / f"bench-{n_claims}.db"
    fresh = not db.exists()
    engine = init_db(f"sqlite:///{db}", create=True)
    if fresh:
        cases, labels, decisions = work / "cases.jsonl", work / "labels.csv", work / "adjudications.csv"
        write_cases(cases, n_claims)
        write_labels(labels, decisions, n_claims)
        start = time.perf_counter()
        with session_scope(engine) as session:
            import_cases(session, OPERATOR, cases, fmt="jsonl", dataset="bench")
        with session_scope(engine) as session:
            import_labels(session, OPERATOR, labels, dataset="bench")
        with session_scope(engine) as session:
            import_adjudications(session, OPERATOR, decisions, dataset="bench")
        print(f"built {db} in {time.perf_counter() - start:.1f} s")
    return engine


class Split:
    """Seconds spent in wrapped functions (outermost call only), by part."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._depth = 0

    def wrap(self, owner, name: str, part: str) -> None:  # noqa: ANN001 - a module
        if not hasattr(owner, name):
            return
        real = getattr(owner, name)

        @functools.wraps(real)
        def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            self._depth += 1
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.seconds[part] += time.perf_counter() - start

        setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--work", type=Path, default=None, help="folder that keeps (and reuses) the database")
    parser.add_argument("--excel", action="store_true", help="also write gold.excel.csv")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-release-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    engine = build(work, args.claims)

    split = Split()
    split.wrap(service, "claim_facts", "query: claim states")
    split.wrap(service, "_gather", "query: claims, passages, labels")
    split.wrap(service, "_cases", "query: cases and passages")
    split.wrap(service, "_agreement_json", "agreement report")
    split.wrap(service, "_insert_rows", "insert gold rows")
    for name in ("write_jsonl", "write_csv", "write_excel_csv", "write_parquet", "write_cases"):
        split.wrap(core, name, f"write {name.removeprefix('write_')}")
    split.wrap(core, "file_entry", "hash files")
    kwargs = {"excel": True} if args.excel else {}
    out = work / "releases"
    for run in range(args.runs):
        name = f"bench-{time.strftime('%Y%m%d%H%M%S')}-{run}"
        split.seconds.clear()
        start = time.perf_counter()
        with session_scope(engine) as session:
            created = service.create_release(session, OPERATOR, name, dataset="bench", only_final=True, out_dir=out,
                                             n_bootstrap=args.bootstrap, **kwargs)
        seconds = time.perf_counter() - start
        released = created.counts["claims"]
        print(f"run {run + 1}: {released:,} claims released of {args.claims:,} in {seconds:.2f} s "
              f"({released / seconds:,.0f} claims/s; bootstrap {args.bootstrap})")
        for part, spent in sorted(split.seconds.items(), key=lambda item: -item[1]):
            print(f"  {part:<34} {spent:6.2f} s")
        print(f"  {'other (records, rows, commit)':<34} {seconds - sum(split.seconds.values()):6.2f} s")


if __name__ == "__main__":
    main()
