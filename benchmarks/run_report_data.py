"""A synthetic dataset, its labels and two runs of a RAG system over it, for the speed benchmark of
`annotator run report` / `run compare` against ir-measures (a generator, not a test).

`generate(folder, n_cases=10_000, ...)` writes, seeded (the same arguments give the same bytes):
cases.jsonl: native import JSONL, one case per line, `n_cases` cases (`case_id` "rr-00000", ...),
    slice normal / paraphrase / insufficient_evidence (equally likely), split dev (70%) or holdout
    (30%), expected_behavior "answer", `n_passages` passages each (`p-{c}-{j}`; doc_id
    `doc-{c mod 1000}`, so `--unit doc` merges passages of several cases) and one claim (`c-{c}`)
    shown with all of them (no `passage_ids`).
labels.csv: `claim_id,labeler,label,passage_ids` for labelers bench-a and bench-b, who agree on
    every claim (label and cited passages), so that `release create --only-final` holds every
    claim. The label is support (60%), contradict (15%) or insufficient (25%); a support or
    contradict label cites one or two of the case's passages (never the last one), insufficient
    cites none.
base.jsonl, candidate.jsonl: run files, one line per case: {"case_id", "retrieved": `n_retrieved`
    passage ids, best first, no repeats, "behavior": "answer"}.
qrels.txt: TREC qrels ("case_id 0 passage_id 1"; ids hold no white space) of the relevant passages
    by `annotator.retrieval.relevant_evidence`'s rule, for the peer (ir-measures) to read.

Relevant passages of a case (what `relevant_evidence` gives over the release): its
`required_evidence_ids` when it has them (10% of the cases: its first two passages), else the
passages its support / contradict labels cite; insufficient cases without required evidence have
none (the report's n_no_evidence). 1% of the cases name their last passage in
`forbidden_evidence_ids`; neither run retrieves it, so no blocker comes from the retrieval.
A ranked list: each relevant passage is put in the top 5 with probability TOP_P, at a rank from 6
to n_retrieved with LOW_P, else left out (base: 0.5 / 0.3; a changed case of the candidate: 0.6 /
0.25), at a uniformly drawn free rank in its band; the other ranks hold passages drawn from the
whole corpus (never the case's relevant or forbidden ones), and 1% of them ids the dataset does
not know ("ext-..."). The candidate is the base except on `changed`
(20%) of the cases, whose lists it draws anew with its own probabilities: better on average, worse
on some, so `run compare` has fixed and regressed cases.

Run, then load it (in an empty folder, with annotator on the PATH):
    python benchmarks/run_report_data.py OUT [--cases 10000] [--retrieved 100] [--passages 3]
        [--changed 0.2] [--seed 0]
    annotator import OUT/cases.jsonl --dataset bench-runs
    annotator labels import OUT/labels.csv --dataset bench-runs
    annotator release create bench-gold --only-final
    annotator run import OUT/base.jsonl --run base --dataset bench-runs
    annotator run import OUT/candidate.jsonl --run candidate --dataset bench-runs
It prints what it wrote and the seconds taken (about 2 s for the defaults here).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

SLICE_CHOICES = ("normal", "paraphrase", "insufficient_evidence")
HOLDOUT_SHARE = 0.3
LABEL_WEIGHTS = {"support": 0.60, "contradict": 0.15, "insufficient": 0.25}
REQUIRED_SHARE = 0.10
FORBIDDEN_SHARE = 0.01
UNKNOWN_SHARE = 0.01
TOP_K = 5
BASE_P = (0.5, 0.3)
"""(TOP_P, LOW_P) of the base: a relevant passage in the top 5, or at ranks 6..n_retrieved."""
CANDIDATE_P = (0.6, 0.25)
"""(TOP_P, LOW_P) of the candidate on the cases it changes."""
DOCUMENTS = 1000
LABELERS = ("bench-a", "bench-b")


@dataclass(frozen=True)
class Written:
    """What `generate` wrote: the files and how many of each thing."""

    cases: Path
    labels: Path
    base: Path
    candidate: Path
    qrels: Path
    n_cases: int
    n_passages: int
    n_with_evidence: int
    n_changed: int


@dataclass(frozen=True)
class Case:
    """One generated case: its passages, the claim's label and cited passages, and its relevant and
    forbidden passages."""

    case_id: str
    passage_ids: tuple[str, ...]
    label: str
    cited: tuple[str, ...]
    required: tuple[str, ...]
    forbidden: tuple[str, ...]
    relevant: tuple[str, ...]
    slice: str
    split: str


def make_cases(n_cases: int, n_passages: int, rng: random.Random) -> list[Case]:
    """The cases (module docstring), drawn from rng. Raises ValueError for n_passages < 3 (one
    passage to forbid besides the two that may be cited or required)."""
    if n_passages < 3:
        raise ValueError(f"n_passages must be at least 3, not {n_passages}")
    labels, weights = list(LABEL_WEIGHTS), list(LABEL_WEIGHTS.values())
    out = []
    for c in range(n_cases):
        ids = tuple(f"p-{c}-{j}" for j in range(n_passages))
        label = rng.choices(labels, weights)[0]
        cited = ids[:rng.choice((1, 2))] if label != "insufficient" else ()
        required = ids[:2] if rng.random() < REQUIRED_SHARE else ()
        forbidden = ids[-1:] if rng.random() < FORBIDDEN_SHARE else ()
        out.append(Case(f"rr-{c:05d}", ids, label, cited, required, forbidden, required or cited,
                        rng.choice(SLICE_CHOICES), "holdout" if rng.random() < HOLDOUT_SHARE else "dev"))
    return out


def case_line(case: Case, c: int) -> str:
    """The case as one native JSONL line."""
    metadata: dict[str, object] = {"expected_behavior": "answer"}
    if case.required:
        metadata["required_evidence_ids"] = list(case.required)
    if case.forbidden:
        metadata["forbidden_evidence_ids"] = list(case.forbidden)
    return json.dumps({
        "case_id": case.case_id, "question": f"What does policy {c} say about deadline {c % 31}?",
        "answer": f"Answer {c}.", "slice": case.slice, "split": case.split, "metadata": metadata,
        "passages": [{"passage_id": pid, "doc_id": f"doc-{c % DOCUMENTS}", "version": "v1", "title": f"Policy {c % DOCUMENTS}",
                      "text": f"Passage {pid}: requests are due by day {j + 1} of the next month."}
                     for j, pid in enumerate(case.passage_ids)],
        "claims": [{"claim_id": f"c-{c}", "text": f"Claim {c}: the deadline is day {c % 31}."}],
    }) + "\n"


def ranked_list(case: Case, n_retrieved: int, p: tuple[float, float], corpus: Sequence[str],
                rng: random.Random) -> list[str]:
    """n_retrieved ids, best first, no repeats: the case's relevant passages placed by p = (TOP_P,
    LOW_P) (module docstring), the other ranks filled from corpus and with unknown ids."""
    top_p, low_p = p
    ranks: list[str | None] = [None] * n_retrieved
    for pid in case.relevant:
        draw = rng.random()
        band = range(min(TOP_K, n_retrieved)) if draw < top_p else (
            range(TOP_K, n_retrieved) if draw < top_p + low_p else range(0))
        free = [r for r in band if ranks[r] is None]
        if free:
            ranks[rng.choice(free)] = pid
    taken = set(case.relevant) | set(case.forbidden) | {pid for pid in ranks if pid is not None}
    fill = (pid for pid in (corpus[i] for i in rng.sample(range(len(corpus)), min(len(corpus), 2 * n_retrieved)))
            if pid not in taken)
    unknown = 0
    for r in range(n_retrieved):
        if ranks[r] is None:
            if rng.random() < UNKNOWN_SHARE:
                unknown += 1
                ranks[r] = f"ext-{case.case_id}-{unknown}"
            else:
                ranks[r] = next(fill)
    return [pid for pid in ranks if pid is not None]


def run_line(case: Case, retrieved: Sequence[str]) -> str:
    """One line of a run file."""
    return json.dumps({"case_id": case.case_id, "retrieved": list(retrieved), "behavior": "answer"}) + "\n"


def generate(folder: Path, n_cases: int = 10_000, n_retrieved: int = 100, n_passages: int = 3,
             changed: float = 0.2, seed: int = 0) -> Written:
    """Write the dataset, its labels, the two runs and the qrels into folder (made if missing;
    files of the same names are replaced). Raises ValueError for n_cases < 1, n_retrieved < 1,
    n_passages < 3, changed outside 0..1, or a corpus too small to fill a list (n_cases *
    n_passages < 2 * n_retrieved)."""
    if n_cases < 1 or n_retrieved < 1 or not 0 <= changed <= 1:
        raise ValueError("n_cases and n_retrieved must be 1 or more, changed from 0 to 1")
    if n_cases * n_passages < 2 * n_retrieved:
        raise ValueError(f"{n_cases * n_passages} passages cannot fill lists of {n_retrieved}")
    rng = random.Random(seed)
    cases = make_cases(n_cases, n_passages, rng)
    corpus = [pid for case in cases for pid in case.passage_ids]
    folder.mkdir(parents=True, exist_ok=True)
    written = Written(folder / "cases.jsonl", folder / "labels.csv", folder / "base.jsonl",
                      folder / "candidate.jsonl", folder / "qrels.txt", n_cases, len(corpus),
                      sum(1 for case in cases if case.relevant), 0)
    n_changed = 0
    with (written.cases.open("w", encoding="utf-8", newline="\n") as cases_out,
          written.labels.open("w", encoding="utf-8", newline="\n") as labels_out,
          written.base.open("w", encoding="utf-8", newline="\n") as base_out,
          written.candidate.open("w", encoding="utf-8", newline="\n") as candidate_out,
          written.qrels.open("w", encoding="utf-8", newline="\n") as qrels_out):
        labels_out.write("claim_id,labeler,label,passage_ids\n")
        for c, case in enumerate(cases):
            cases_out.write(case_line(case, c))
            for labeler in LABELERS:
                labels_out.write(f"c-{c},{labeler},{case.label},{';'.join(case.cited)}\n")
            qrels_out.writelines(f"{case.case_id} 0 {pid} 1\n" for pid in case.relevant)
            base = ranked_list(case, n_retrieved, BASE_P, corpus, rng)
            base_out.write(line := run_line(case, base))
            if rng.random() < changed:
                n_changed += 1
                line = run_line(case, ranked_list(case, n_retrieved, CANDIDATE_P, corpus, rng))
            candidate_out.write(line)
    return replace(written, n_changed=n_changed)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write into (made if missing)")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--retrieved", type=int, default=100, help="passage ids per ranked list")
    parser.add_argument("--passages", type=int, default=3, help="passages per case (3 or more)")
    parser.add_argument("--changed", type=float, default=0.2, help="share of cases whose list the candidate redraws")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        written = generate(args.out, args.cases, args.retrieved, args.passages, args.changed, args.seed)
    except ValueError as error:
        parser.error(str(error))
    print(f"{written.n_cases:,} cases ({written.n_passages:,} passages, {written.n_with_evidence:,} with relevant "
          f"evidence), two labelers agreeing on every claim, base and candidate runs of {args.retrieved} ids "
          f"({written.n_changed:,} cases changed) written to {args.out} in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
