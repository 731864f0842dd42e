"""RAGAS import speed: `import_cases` of a RAGAS file, its answers cut into sentences, against the
native import of the same content already cut into claims, in one run (a benchmark, not a test).

Writes N RAGAS records (default 100,000: five contexts each, drawn from a pool of N / 2 texts so
that contexts repeat across questions as retrieval does, and a three-sentence answer) and the same
cases as native JSON lines (the same ids, passages and claims: the three sentences, each shown
with all five passages), imports each into a new SQLite database in a temporary folder, and prints
both times, claims per second and the ratio (the goal: the RAGAS import within 3x of the native
one). Both imports must store the same counts of cases, claims and passages.

Run: `python benchmarks/ragas_import.py [--records 100000] [--format jsonl|csv|parquet]`
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from annotator.db import init_db, session_scope
from annotator.formats import CASE_ID_PREFIX, PASSAGE_ID_PREFIX, made_id
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases

WORDS = ("policy travel refund office approval budget deadline contract invoice vendor team report "
         "meeting review security access archive record update release").split()
CONTEXTS = 5


def sentence(rng: random.Random, n: int) -> str:
    """A sentence of n words (a capital first, a full stop last), with a decimal number in it."""
    words = [rng.choice(WORDS) for _ in range(n)]
    words.insert(n // 2, f"{rng.randint(1, 99)}.{rng.randint(0, 9)}")
    return " ".join(words).capitalize() + "."


def records(n: int, seed: int = 0) -> list[dict]:
    """N RAGAS records: question, a three-sentence answer, five contexts from a shared pool, a reference."""
    rng = random.Random(seed)
    pool = [sentence(rng, 25) + " " + sentence(rng, 20) for _ in range(max(n // 2, CONTEXTS))]
    return [{"user_input": f"Question {i}: " + sentence(rng, 8), "response": " ".join(sentence(rng, 12) for _ in range(3)),
             "retrieved_contexts": rng.sample(pool, CONTEXTS), "reference": sentence(rng, 6)} for i in range(n)]


def write_ragas(path: Path, rows: list[dict], fmt: str) -> Path:
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    elif fmt == "csv":
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(rows[0]))
            writer.writerows([json.dumps(value) if isinstance(value, list) else value for value in row.values()]
                             for row in rows)
    else:
        with path.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
    return path


def write_native(path: Path, rows: list[dict]) -> Path:
    """The same cases as native JSON lines, their claims the answers' sentences (split here at
    ". ", as the generator writes them), with the ids the RAGAS import makes."""
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            case_id = made_id(CASE_ID_PREFIX, row["user_input"], row["response"])
            texts = [part if part.endswith(".") else part + "." for part in row["response"].split(". ")]
            handle.write(json.dumps({
                "case_id": case_id, "question": row["user_input"], "answer": row["response"], "slice": "normal",
                "split": "dev", "metadata": {"expected_answer": row["reference"]},
                "passages": [{"passage_id": made_id(PASSAGE_ID_PREFIX, text), "doc_id": "", "version": "", "title": "",
                              "text": text} for text in row["retrieved_contexts"]],
                "claims": [{"claim_id": f"{case_id}-c{n}", "text": text} for n, text in enumerate(texts, start=1)],
            }) + "\n")
    return path


def timed_import(folder: Path, path: Path, fmt: str) -> tuple[float, dict]:
    """Seconds (by the clock) to import `path` into a new SQLite database, and the report's counts."""
    engine = init_db(f"sqlite:///{folder / (path.stem + '-' + fmt + '.db')}")
    start = time.perf_counter()
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, path, fmt=fmt)
    seconds = time.perf_counter() - start
    engine.dispose()
    return seconds, {kind: sum(counts.values()) for kind, counts in report.counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--format", choices=("jsonl", "csv", "parquet"), default="jsonl", help="the RAGAS file's (default: jsonl)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="annotator-ragas-bench-") as folder:
        compare(Path(folder), args.records, args.format)


def compare(folder: Path, n: int, fmt: str) -> None:
    """Write both files of n records to `folder`, import each, print the figures."""
    rows = records(n)
    ragas_file = write_ragas(folder / f"ragas.{fmt}", rows, fmt)
    native_file = write_native(folder / "native.jsonl", rows)
    del rows
    native_seconds, native_counts = timed_import(folder, native_file, "jsonl")
    ragas_seconds, ragas_counts = timed_import(folder, ragas_file, "ragas")
    if ragas_counts != native_counts:
        sys.exit(f"the two imports stored different counts: native {native_counts}, ragas {ragas_counts}")
    claims = native_counts["claims"]
    print(f"{n:,} records, {claims:,} claims, {native_counts['passages']:,} passages")
    print(f"native JSONL, claims given:    {native_seconds:6.1f} s  {claims / native_seconds:8,.0f} claims/s")
    print(f"RAGAS {fmt:<7} cut into sentences: {ragas_seconds:6.1f} s  {claims / ragas_seconds:8,.0f} claims/s")
    ratio = ragas_seconds / native_seconds
    print(f"ratio RAGAS / native: {ratio:.2f} (goal: at most 3.00) {'ok' if ratio <= 3 else 'OVER'}")


if __name__ == "__main__":
    main()
