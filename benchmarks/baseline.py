"""Baseline figures on a synthetic database of 100,000 claims (a benchmark, not a test).

Prints the time for: importing the cases (native JSONL), importing two labelers' labels,
"save a label and fetch the next claim" (median and p95 of 1,000, each in its own transaction as
the app does it), the agreement report (with 1,000 bootstrap resamples), and a release of the
final claims. Run: `python benchmarks/baseline.py [--claims 100000] [--db URL]`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from annotator.db import init_db, session_scope
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases, import_labels
from annotator.services.labeling import assign_cases, first_cases, next_claim_for, save_label
from annotator.services.lookup import get_dataset
from annotator.services.releases import create_release
from annotator.services.reports import agreement_report
from annotator.services.users import add_user, get_user
from annotator.vocabulary import LABELS

CLAIMS_PER_CASE = 4


def write_cases(path: Path, n_claims: int) -> None:
    """A native JSONL file of n_claims / 4 cases, four claims and two passages each."""
    with path.open("w", encoding="utf-8") as out:
        for c in range(n_claims // CLAIMS_PER_CASE):
            case = {
                "case_id": f"case-{c}", "question": f"質問 {c}: 経費精算の締め切りは?", "answer": f"回答 {c}.",
                "slice": random.choice(("normal", "paraphrase", "insufficient_evidence")), "split": "dev", "metadata": {},
                "passages": [{"passage_id": f"p-{c}-{k}", "doc_id": f"doc-{c % 500}", "version": "v1",
                              "title": "経費規程", "text": f"本文 {c}-{k}: 申請は翌月5日までに行う。"} for k in range(2)],
                "claims": [{"claim_id": f"c-{c}-{j}", "text": f"主張 {c}-{j}"} for j in range(CLAIMS_PER_CASE)],
            }
            out.write(json.dumps(case, ensure_ascii=False) + "\n")


def write_labels(path: Path, n_claims: int, agree: float = 0.8) -> None:
    """Two labelers' labels on every claim but the last 10,000 (left for the save benchmark)."""
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as out:
        out.write("claim_id,labeler,label\n")
        for c in range((n_claims - 10_000) // CLAIMS_PER_CASE):
            for j in range(CLAIMS_PER_CASE):
                first = rng.choice(LABELS)
                second = first if rng.random() < agree else rng.choice(LABELS)
                out.write(f"c-{c}-{j},bench-a,{first}\nc-{c}-{j},bench-b,{second}\n")


def timed(label: str, action) -> float:  # noqa: ANN001
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    print(f"{label:<48} {seconds:8.2f} s")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--saves", type=int, default=1_000)
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file in a temp folder)")
    args = parser.parse_args()
    random.seed(0)
    work = Path(tempfile.mkdtemp(prefix="annotator-bench-"))
    engine = init_db(args.db or f"sqlite:///{work / 'bench.db'}")
    cases, labels = work / "cases.jsonl", work / "labels.csv"
    write_cases(cases, args.claims)
    write_labels(labels, args.claims)
    print(f"{args.claims:,} claims, database {engine.url.render_as_string(hide_password=True)}")

    def do_import() -> None:
        with session_scope(engine) as session:
            import_cases(session, OPERATOR, cases, fmt="jsonl", dataset="bench")

    def do_labels() -> None:
        with session_scope(engine) as session:
            import_labels(session, OPERATOR, labels, dataset="bench")

    t_import = timed("import cases (JSONL)", do_import)
    print(f"{'':<48} {args.claims / t_import:8.0f} claims/s")
    timed("import labels (2 per claim, CSV)", do_labels)

    with session_scope(engine) as session:
        add_user(session, OPERATOR, "bench-labeler", ["labeler"], "bench-password")
        dataset_pk = get_dataset(session, "bench").id
        assign_cases(session, OPERATOR, first_cases(session, args.claims // CLAIMS_PER_CASE, dataset_pk)[-(10_000 // CLAIMS_PER_CASE):], ["bench-labeler"])
    durations = []
    for _ in range(args.saves):
        start = time.perf_counter()
        with session_scope(engine) as session:
            user = get_user(session, "bench-labeler")
            claim_pk = next_claim_for(session, user)
            save_label(session, user, claim_pk, random.choice(LABELS))
        with session_scope(engine) as session:
            next_claim_for(session, get_user(session, "bench-labeler"))
        durations.append(time.perf_counter() - start)
    durations.sort()
    p95 = durations[int(0.95 * len(durations)) - 1]
    print(f"{'save a label + fetch next claim (ms)':<48} median {statistics.median(durations) * 1000:.1f}, p95 {p95 * 1000:.1f} (n={len(durations)})")

    def do_agreement() -> None:
        with session_scope(engine) as session:
            report = agreement_report(session, OPERATOR, dataset_pk, by="slice", n_bootstrap=1000)
        print(f"{'':<48} alpha {report.krippendorff_alpha.value:.3f} on {report.n_items:,} items")

    timed("agreement report (1,000 bootstrap, by slice)", do_agreement)

    def do_release() -> None:
        with session_scope(engine) as session:
            created = create_release(session, OPERATOR, "bench-v1", dataset="bench", only_final=True, out_dir=work / "releases", n_bootstrap=1000)
        print(f"{'':<48} {created.counts['claims']:,} claims released, {sum(created.excluded.values()):,} left out")

    timed("release create --only-final", do_release)
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
