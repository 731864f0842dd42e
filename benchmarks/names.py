"""What the user-name rule costs a labels import (a benchmark, not a test).

Imports 100,000 labels (50,000 claims, two labels each) into a database that already holds
`--users` users, by `--labelers` labelers of whom half are existing users and half are new, and
prints the import's time and the time spent in the name check (text.name_skeletons, once per
new name and once per existing user: the names are read once per import, not per row).
Run: `python benchmarks/names.py [--labels 100000] [--labelers 200] [--users 1000] [--db URL]`.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import annotator.services.users as users_service
from annotator.db import init_db, session_scope
from annotator.models import User
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases, import_labels
from annotator.vocabulary import LABELS

CLAIMS_PER_CASE = 4


def write_cases(path: Path, n_claims: int) -> None:
    """A native JSONL file of n_claims / 4 cases, four claims and one passage each."""
    with path.open("w", encoding="utf-8") as out:
        for c in range(n_claims // CLAIMS_PER_CASE):
            out.write(json.dumps({
                "case_id": f"case-{c}", "question": f"Question {c}?", "answer": f"Answer {c}.", "slice": "normal",
                "split": "dev", "metadata": {},
                "passages": [{"passage_id": f"p-{c}", "doc_id": "doc", "version": "v1", "title": "T", "text": f"Text {c}."}],
                "claims": [{"claim_id": f"c-{c}-{j}", "text": f"Claim {c}-{j}"} for j in range(CLAIMS_PER_CASE)],
            }) + "\n")


def write_labels(path: Path, n_labels: int, labelers: list[str]) -> None:
    """Two labels per claim, each by a labeler drawn from `labelers` (two different ones)."""
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as out:
        out.write("claim_id,labeler,label\n")
        for n in range(n_labels // 2):
            c, j = divmod(n, CLAIMS_PER_CASE)
            for labeler in rng.sample(labelers, 2):
                out.write(f"c-{c}-{j},{labeler},{rng.choice(LABELS)}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--labelers", type=int, default=200)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="annotator-names-"))
    engine = init_db(args.db or f"sqlite:///{folder / 'bench.db'}")
    write_cases(folder / "cases.jsonl", args.labels // 2)
    existing = [f"person-{k}" for k in range(args.users)]
    labelers = existing[: args.labelers // 2] + [f"new-labeler-{k}" for k in range(args.labelers - args.labelers // 2)]
    write_labels(folder / "labels.csv", args.labels, labelers)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, folder / "cases.jsonl")
        session.add_all([User(name=name, roles="labeler") for name in existing])

    spent = [0.0, 0]
    skeletons = users_service.name_skeletons

    def counted(name: str) -> tuple[str, str]:
        start = time.perf_counter()
        try:
            return skeletons(name)
        finally:
            spent[0] += time.perf_counter() - start
            spent[1] += 1

    users_service.name_skeletons = counted
    start, cpu = time.perf_counter(), time.process_time()
    with session_scope(engine) as session:
        report = import_labels(session, OPERATOR, folder / "labels.csv")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"labels imported: {report.counts['labels']['new']:,} by {args.labelers} labelers "
          f"({len(report.created_users)} created), {args.users:,} users before")
    print(f"import_labels: {seconds:.2f} s ({cpu:.2f} s of this process's CPU); name check: {spent[1]:,} skeletons, {spent[0] * 1000:.1f} ms "
          f"({spent[0] / seconds:.2%} of the import)")
    engine.dispose()


if __name__ == "__main__":
    main()
