"""Scoring one run of a RAG system against a gold release: pure functions over plain data.

A run says, for each case, what the system retrieved (a ranked list of passage ids), what it
did (its behaviour: answer, abstain, clarify, refuse), its answer, the passages it cited and its
claims with their labels (from a judge or a person). Two questions for each case:
- `score_case`: how did the retriever and the generator each do on it, kept apart? The
  retrieval figures of annotator/retrieval.py, the forbidden and the outdated passages it
  fetched, whether the behaviour and the answer are the expected ones, the share of supported
  claims; then a status (passed, retrieval_failure, generation_failure, both), the failure
  labels that say why, and the blockers: what stops a change whatever the averages say.
- `summarize` (and `summarize_by` a slice or a split): the figures over a run's cases, each
  with a case-level bootstrap interval.

Input is plain data (GoldCase, sequences, mappings); output plain dicts that
json.dumps(..., allow_nan=False) accepts. Fractions are 0..1. A figure that is 0/0 is None
with an English reason in `undefined`, written from annotator/messages.py (the app finds its
key again with messages.recognize). The services read the gold from a release folder and the
run from the database, and feed these functions.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from annotator.agreement import MIN_BOOTSTRAP, bootstrap_pattern_sums, percentile_interval
from annotator.messages import english
from annotator.retrieval import RETRIEVAL_METRICS, case_retrieval
from annotator.vocabulary import (
    BEHAVIORS,
    BLOCKING_SEVERITIES,
    EXPECTED_BEHAVIORS,
    FAILURE_LABELS,
    GENERATION_FAILURE_LABELS,
    LABELS,
    RUN_STATUSES,
    SEVERITIES,
)

RETRIEVAL_RULES: tuple[str, ...] = ("all", "any")
"""When a case's retrieval is ok: every relevant id in the top k ("all", the default), or at
least one ("any", `--retrieval-rule any`)."""

BLOCKER_REASONS: tuple[str, ...] = ("forbidden_evidence", "answered_when_expected", "severe_contradiction")
"""The stable keys of a blocker's `reason`, in the order a case lists them."""

RUN_FIGURES: tuple[str, ...] = ("mean_recall_at_k", "mean_precision_at_k", "hit_rate_at_k", "mrr", "mean_ndcg_at_k",
                                "claim_support_rate", "behavior_match_rate", "pass_rate")
"""The figures of a run's summary that get an interval, in display order."""

SUMMARY_GROUPS: tuple[str, ...] = ("slice", "split")
"""What `summarize_by` may group the cases by."""

_ABSTAINING = frozenset({"abstain", "refuse"})
"""Behaviours that give no answer: over-abstaining when the evidence was there."""

_ANSWERING = frozenset({"answer", "answer_with_citation"})
"""Expected behaviours that want an answer."""


@dataclass(frozen=True)
class GoldCase:
    """What the gold release says about one case, in the unit scored.

    relevant: the relevant ids in the unit scored (passage ids, or document ids for `--unit doc`),
        from retrieval.relevant_evidence (and retrieval.to_documents' mapping); () when none.
    forbidden: passage ids the case forbids (its `forbidden_evidence_ids`).
    stale: passage ids that are outdated for this case (the service applies highlight.old_versions).
    expected_behavior: one of EXPECTED_BEHAVIORS, or None; expected_answer: the text, or None.
    """

    case_id: str
    slice: str
    split: str
    relevant: tuple[str, ...]
    forbidden: frozenset[str] = frozenset()
    stale: frozenset[str] = frozenset()
    expected_behavior: str | None = None
    expected_answer: str | None = None


# ---------------------------------------------------------------------------------------------
# One case


def score_case(gold: GoldCase, *, retrieved: Sequence[str], ranked: Sequence[str] | None = None,
               behavior: str, answer: str | None = None, cited: Sequence[str] = (),
               claims: Sequence[Mapping[str, Any]] = (), k: int = 5, rule: str = "all",
               n_unknown: int = 0) -> dict[str, Any]:
    """One case of a run, scored: retrieval and generation apart, blockers first.

    gold: the case's gold (GoldCase).
    retrieved: the passage ids the system fetched, best first, each once: forbidden and stale
        passages are looked for anywhere in it (what was fetched is what could leak).
    ranked: the same list in the unit scored (retrieval.to_documents for `--unit doc`); None: `retrieved`.
    behavior: one of BEHAVIORS; answer: its text or None; cited: the passage ids the answer cites.
    claims: the answer's claims, mappings with `text`, `label` (one of LABELS), `claim_id` (or
        None) and `severity` (one of SEVERITIES, or None).
    k >= 1: the cutoff; rule: one of RETRIEVAL_RULES; n_unknown: how many retrieved ids the
        dataset does not know (the service counts them; they are never relevant).
    Returns a dict with exactly these keys:
        case_id, slice, split, n_relevant;
        recall_at_k, precision_at_k, hit_at_k, reciprocal_rank, ndcg_at_k (retrieval.case_retrieval
            of `ranked`; None without relevant ids);
        forbidden_retrieved, stale_retrieved (passage ids of `retrieved`, in rank order);
        n_unknown_retrieved;
        behavior, expected_behavior, behavior_match (None without an expected behaviour; else
            behaviour == expected, and `answer_with_citation` is met by `answer` with at least
            one cited id);
        answer_match (None without an expected answer; else the answer equals it after NFKC,
            white space collapsed to one space and stripped: no answer counts as "");
        n_claims, claim_support_rate (claims labeled support / claims; None without claims);
        retrieval_ok (None without relevant ids; rule "all": every relevant id is in the top k,
            so it cannot hold when k < n_relevant; rule "any": at least one is);
        generation_ok (True unless a GENERATION_FAILURE_LABELS label applies);
        status (RUN_STATUSES): the retrieval side fails when retrieval_ok is False or a forbidden
            passage was retrieved, the generation side when generation_ok is False; `both` when
            both fail, `passed` when neither does;
        failure_labels (in FAILURE_LABELS order) and blockers (list of dicts, see below).
    Raises ValueError for k < 1, a rule, behaviour, expected behaviour, claim label or severity
        outside its vocabulary.

    Failure labels, n_top the relevant ids in the top k of `ranked`, n_relevant > 0 "has relevant":
        retrieval_miss: has relevant, n_top = 0.
        partial_evidence: has relevant, 0 < n_top < n_relevant (with rule "any" the retrieval is
            still ok: the label says what is missing).
        stale_evidence: stale_retrieved is not empty (a label only: an outdated passage the case
            does not forbid does not fail the case; one it forbids is unauthorized_evidence).
        unauthorized_evidence: forbidden_retrieved is not empty.
        unsupported_claim: a claim is labeled other than support.
        answered_without_evidence: behaviour answer with an answer (a text or claims), has
            relevant, n_top = 0 (a run of the retriever alone, with no answer, is not answering).
        over_abstain: behaviour abstain or refuse where the case expects answer or
            answer_with_citation, or, with no expected behaviour, where retrieval_ok is True (the
            evidence was there).
        behavior_mismatch: behavior_match is False.
        answer_mismatch: answer_match is False.
    Blockers (docs/domain.md, "blocker"), each {case_id, reason, ...}, reason one of BLOCKER_REASONS:
        forbidden_evidence, with passage_ids (forbidden_retrieved): a forbidden passage was retrieved;
        answered_when_expected, with expected (abstain | refuse) and claims (the claims not
            support: claim_id, text, label): behaviour answer where the case expects abstain or
            refuse, and a claim is not support;
        severe_contradiction, with claim_id, text, severity: a claim labeled contradict whose
            severity is in BLOCKING_SEVERITIES (one blocker per such claim).
    Every blocked case fails: a forbidden passage fails retrieval; the other two have a claim not
    labeled support (unsupported_claim), which fails generation.
    Source: the project's definitions (docs/domain.md, "failure class", "blocker"); the
    retrieval figures as annotator.retrieval.case_retrieval defines them (trec_eval).
    """
    _check_case_inputs(gold, behavior, claims, k, rule)
    relevant = frozenset(gold.relevant)
    n_relevant = len(relevant)
    figures = case_retrieval(retrieved if ranked is None else ranked, relevant, k)
    n_top = round(figures["recall_at_k"] * n_relevant) if n_relevant else 0
    forbidden = _fetched(gold.forbidden, retrieved)
    stale = _fetched(gold.stale, retrieved)
    expected = gold.expected_behavior
    behavior_match = _behavior_match(behavior, expected, cited)
    answer_match = None if gold.expected_answer is None else _same_text(answer or "", gold.expected_answer)
    n_support = sum(1 for c in claims if c.get("label") == "support")
    retrieval_ok = None if not n_relevant else (n_top == n_relevant if rule == "all" else n_top > 0)

    found = {
        "retrieval_miss": bool(n_relevant) and n_top == 0,
        "partial_evidence": 0 < n_top < n_relevant,
        "stale_evidence": bool(stale),
        "unauthorized_evidence": bool(forbidden),
        "unsupported_claim": n_support < len(claims),
        "answered_without_evidence": (behavior == "answer" and bool((answer or "").strip() or claims)
                                      and bool(n_relevant) and n_top == 0),
        "over_abstain": behavior in _ABSTAINING and (expected in _ANSWERING
                                                      or (expected is None and retrieval_ok is True)),
        "behavior_mismatch": behavior_match is False,
        "answer_mismatch": answer_match is False,
    }
    labels = [label for label in FAILURE_LABELS if found[label]]
    generation_ok = not any(found[label] for label in GENERATION_FAILURE_LABELS)
    retrieval_failed = retrieval_ok is False or bool(forbidden)
    return {
        "case_id": gold.case_id,
        "slice": gold.slice,
        "split": gold.split,
        "n_relevant": n_relevant,
        **figures,
        "forbidden_retrieved": forbidden,
        "stale_retrieved": stale,
        "n_unknown_retrieved": int(n_unknown),
        "behavior": behavior,
        "expected_behavior": expected,
        "behavior_match": behavior_match,
        "answer_match": answer_match,
        "n_claims": len(claims),
        "claim_support_rate": n_support / len(claims) if claims else None,
        "retrieval_ok": retrieval_ok,
        "generation_ok": generation_ok,
        "status": _status(retrieval_failed, not generation_ok),
        "failure_labels": labels,
        "blockers": _blockers(gold.case_id, forbidden, behavior, expected, claims),
    }


def _fetched(wanted: frozenset[str], retrieved: Sequence[str]) -> list[str]:
    """The ids of `retrieved` in `wanted`, in rank order (isdisjoint first: most lists hold none,
    and it answers that in one C loop)."""
    if not wanted or wanted.isdisjoint(retrieved):
        return []
    return list(filter(wanted.__contains__, retrieved))


def _check_case_inputs(gold: GoldCase, behavior: str, claims: Sequence[Mapping[str, Any]], k: int, rule: str) -> None:
    """ValueError for the inputs score_case refuses (see there)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if rule not in RETRIEVAL_RULES:
        raise ValueError(f"the retrieval rule is one of {', '.join(RETRIEVAL_RULES)}, not {rule!r}")
    if behavior not in BEHAVIORS:
        raise ValueError(f"case {gold.case_id}: the behaviour is one of {', '.join(BEHAVIORS)}, not {behavior!r}")
    if gold.expected_behavior is not None and gold.expected_behavior not in EXPECTED_BEHAVIORS:
        raise ValueError(f"case {gold.case_id}: the expected behaviour is one of {', '.join(EXPECTED_BEHAVIORS)}, "
                         f"not {gold.expected_behavior!r}")
    for claim in claims:
        if claim.get("label") not in LABELS:
            raise ValueError(f"case {gold.case_id}: a claim's label is one of {', '.join(LABELS)}, not {claim.get('label')!r}")
        if claim.get("severity") is not None and claim.get("severity") not in SEVERITIES:
            raise ValueError(f"case {gold.case_id}: a claim's severity is one of {', '.join(SEVERITIES)}, "
                             f"not {claim.get('severity')!r}")


def _behavior_match(behavior: str, expected: str | None, cited: Sequence[str]) -> bool | None:
    """Whether `behavior` meets `expected` (None without one); answer_with_citation wants an
    answer that cites at least one id."""
    if expected is None:
        return None
    if expected == "answer_with_citation":
        return behavior == "answer" and len(cited) > 0
    return behavior == expected


def normalized_answer(text: str) -> str:
    """`text` as answers are compared: NFKC, every run of white space one space, stripped
    (full-width and half-width forms, a non-breaking space and a line break compare equal)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _same_text(answer: str, expected: str) -> bool:
    return normalized_answer(answer) == normalized_answer(expected)


def _status(retrieval_failed: bool, generation_failed: bool) -> str:
    """The RUN_STATUSES entry of a case whose two sides failed or not."""
    if retrieval_failed:
        return "both" if generation_failed else "retrieval_failure"
    return "generation_failure" if generation_failed else "passed"


def _blockers(case_id: str, forbidden: list[str], behavior: str, expected: str | None,
              claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The blockers of one case (see score_case), in BLOCKER_REASONS order."""
    out: list[dict[str, Any]] = []
    if forbidden:
        out.append({"case_id": case_id, "reason": "forbidden_evidence", "passage_ids": list(forbidden)})
    if behavior == "answer" and expected in _ABSTAINING:
        unsupported = [{"claim_id": c.get("claim_id"), "text": c.get("text"), "label": c.get("label")}
                       for c in claims if c.get("label") != "support"]
        if unsupported:
            out.append({"case_id": case_id, "reason": "answered_when_expected", "expected": expected,
                        "claims": unsupported})
    out.extend({"case_id": case_id, "reason": "severe_contradiction", "claim_id": c.get("claim_id"),
                "text": c.get("text"), "severity": c.get("severity")}
               for c in claims if c.get("label") == "contradict" and c.get("severity") in BLOCKING_SEVERITIES)
    return out


# ---------------------------------------------------------------------------------------------
# A run's cases together

# Each case is a row of additive terms; every figure of RUN_FIGURES is the ratio of two column
# sums, so the figure of a resample is the same ratio over the resampled rows.
_TERMS: tuple[str, ...] = ("scored", *RETRIEVAL_METRICS, "n_claims", "n_supported", "expected", "matched", "passed", "one")
_COLUMN = {name: i for i, name in enumerate(_TERMS)}
_RATIOS: dict[str, tuple[int, int]] = {
    "mean_recall_at_k": (_COLUMN["recall_at_k"], _COLUMN["scored"]),
    "mean_precision_at_k": (_COLUMN["precision_at_k"], _COLUMN["scored"]),
    "hit_rate_at_k": (_COLUMN["hit_at_k"], _COLUMN["scored"]),
    "mrr": (_COLUMN["reciprocal_rank"], _COLUMN["scored"]),
    "mean_ndcg_at_k": (_COLUMN["ndcg_at_k"], _COLUMN["scored"]),
    "claim_support_rate": (_COLUMN["n_supported"], _COLUMN["n_claims"]),
    "behavior_match_rate": (_COLUMN["matched"], _COLUMN["expected"]),
    "pass_rate": (_COLUMN["passed"], _COLUMN["one"]),
}
_DENOMINATOR_REASONS = {_COLUMN["scored"]: "msg.run.score.no_evidence", _COLUMN["n_claims"]: "msg.run.score.no_claims",
                        _COLUMN["expected"]: "msg.run.score.no_expected_behavior", _COLUMN["one"]: "msg.run.score.no_cases"}


def summarize(cases: Sequence[Mapping[str, Any]], *, n_bootstrap: int = 1000, seed: int = 0,
              rows: np.ndarray | None = None) -> dict[str, Any]:
    """The figures of a run over its scored cases, each with a case-level bootstrap interval.

    cases: dicts from score_case (any order; each case once).
    n_bootstrap: case resamples, 0 (no intervals) or >= agreement.MIN_BOOTSTRAP; seed: numpy's
        generator seed (the same cases and seed give the same intervals, whatever their order).
    rows: case_terms(cases), when the caller has them already (summarize_by); None: computed here.
    Returns a dict:
        n_cases; n_scored (cases with relevant evidence), n_no_evidence (the others);
        mean_recall_at_k, mean_precision_at_k, hit_rate_at_k, mrr, mean_ndcg_at_k: means over
            the scored cases (None when none);
        claim_support_rate: pooled, the supported claims of all cases / all their claims (a
            case with many claims weighs more; None without claims);
        behavior_match_rate: over the cases with an expected behaviour (None when none);
        pass_rate: passed cases / n_cases (None without cases);
        status_counts {status: cases} over every RUN_STATUSES entry; failure_label_counts
            {label: cases carrying it} over every FAILURE_LABELS entry;
        blockers: every case's blockers, in case order; n_unknown_retrieved: their sum;
        ci95 {figure: [low, high] or None} for each of RUN_FIGURES;
        undefined {figure: English reason} for each figure of RUN_FIGURES that is None or has no interval.
    Raises ValueError for n_bootstrap between 1 and MIN_BOOTSTRAP - 1, or negative.

    ci95: a case-level percentile bootstrap (Efron & Tibshirani 1993, An Introduction to the
    Bootstrap, ch. 6 and 13): the cases are resampled with replacement, n_cases of them, and
    each figure is recomputed on the resample as the same ratio as above (a mean over the
    resample's scored cases, the pooled claim ratio over its claims), so the interval carries
    the dependence between a case's claims. Every case is a row of additive terms; identical
    rows are grouped into patterns, the resamples are one multinomial count matrix over the
    patterns from numpy default_rng(seed), built in chunks to bound memory, times the pattern
    rows (bootstrap_sums). A resample whose denominator is 0 (no scored case, no
    claim, no expected behaviour drawn) gives that figure no value and is left out of its
    interval; in more than agreement.MAX_UNDEFINED_RESAMPLES of the resamples, the figure
    gets no interval (agreement.percentile_interval). Fewer than two cases: no interval.
    """
    check_bootstrap(n_bootstrap)
    if rows is None:
        rows = case_terms(cases)
    totals = rows.sum(axis=0)
    values = ratio_figures(totals[None])
    samples = bootstrap_figures(rows, n_bootstrap, seed)
    ci95 = {f: None if np.isnan(values[f][0]) else percentile_interval(samples.get(f)) for f in RUN_FIGURES}
    undefined = {f: figure_gap(f, totals, samples, n_bootstrap, len(cases))
                 for f in RUN_FIGURES if ci95[f] is None}
    statuses = [c["status"] for c in cases]
    labels = [label for c in cases for label in c["failure_labels"]]
    n_scored = int(totals[_COLUMN["scored"]])
    return {
        "n_cases": len(cases),
        "n_scored": n_scored,
        "n_no_evidence": len(cases) - n_scored,
        **{f: plain_value(values[f][0]) for f in RUN_FIGURES},
        "status_counts": {s: statuses.count(s) for s in RUN_STATUSES},
        "failure_label_counts": {label: labels.count(label) for label in FAILURE_LABELS},
        "blockers": [dict(b) for c in cases for b in c["blockers"]],
        "n_unknown_retrieved": sum(int(c["n_unknown_retrieved"]) for c in cases),
        "ci95": {f: None if ci is None else [float(ci[0]), float(ci[1])] for f, ci in ci95.items()},
        "undefined": undefined,
    }


def summarize_by(cases: Sequence[Mapping[str, Any]], key: str, *, n_bootstrap: int = 1000,
                 seed: int = 0) -> dict[str, dict[str, Any]]:
    """summarize() of each group of cases sharing `key` ("slice" or "split"), groups in sorted
    order; each group resampled on its own (a stratum), with the same seed.
    Raises ValueError for another key (and as summarize)."""
    if key not in SUMMARY_GROUPS:
        raise ValueError(f"group cases by one of {', '.join(SUMMARY_GROUPS)}, not {key!r}")
    groups: dict[Any, list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(case[key], []).append(i)
    rows = case_terms(cases)  # once for all the groups
    return {name: summarize([cases[i] for i in groups[name]], n_bootstrap=n_bootstrap, seed=seed, rows=rows[groups[name]])
            for name in sorted(groups, key=lambda v: (v is None, "" if v is None else str(v)))}


def check_bootstrap(n_bootstrap: int) -> None:
    """ValueError unless n_bootstrap is 0 (no intervals) or at least agreement.MIN_BOOTSTRAP."""
    if n_bootstrap < 0 or 0 < n_bootstrap < MIN_BOOTSTRAP:
        raise ValueError(f"use 0 bootstrap resamples (no intervals) or at least {MIN_BOOTSTRAP}, not {n_bootstrap}")


def case_terms(cases: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """(n_cases, len(_TERMS)) float64: each case's additive terms (see _RATIOS): scored (1 with
    relevant evidence), its retrieval figures (0 when unscored), n_claims, the supported claims,
    expected (1 with an expected behaviour), matched (1 when it is met), passed, one."""
    out = np.zeros((len(cases), len(_TERMS)))
    # filled a column at a time (a list per column, not a row per case: the same values, faster)
    scored = [case["recall_at_k"] is not None for case in cases]
    out[:, _COLUMN["scored"]] = scored
    for metric in RETRIEVAL_METRICS:
        out[:, _COLUMN[metric]] = [case[metric] if is_scored else 0.0 for case, is_scored in zip(cases, scored)]
    n_claims = [case["n_claims"] for case in cases]
    out[:, _COLUMN["n_claims"]] = n_claims
    out[:, _COLUMN["n_supported"]] = [round(case["claim_support_rate"] * n) if n else 0 for case, n in zip(cases, n_claims)]
    matched = [case["behavior_match"] for case in cases]
    out[:, _COLUMN["expected"]] = [match is not None for match in matched]
    out[:, _COLUMN["matched"]] = [bool(match) for match in matched]
    out[:, _COLUMN["passed"]] = [case["status"] == "passed" for case in cases]
    out[:, _COLUMN["one"]] = 1.0
    return out


def ratio_figures(sums: np.ndarray) -> dict[str, np.ndarray]:
    """figure -> (m,) float64 for each of the m rows of column sums `sums` (m, len(_TERMS)); NaN where 0/0."""
    out = {}
    for figure, (num, den) in _RATIOS.items():
        value = np.full(sums.shape[0], np.nan)
        np.divide(sums[:, num], sums[:, den], out=value, where=sums[:, den] != 0)
        out[figure] = value
    return out


RESAMPLE_CHUNK = 1 << 18
"""At most about this many (resample, case) draws are held at once (a few MB); the draws of
successive chunks come from the one generator, so the chunk size does not change the result."""

COUNT_BLOCK = 1 << 21
"""At most about this many (resample, pattern) counts (16 MB of float64) are multiplied by the
pattern rows at once: few, large products (a multi-threaded BLAS that wakes for many small ones
competes with the draws for the cores)."""


BINOMIAL_COST = 20
"""A multinomial count matrix costs about this many index draws per (resample, pattern) cell
(numpy's multinomial draws one binomial per pattern; measured 17x-25x on 2,000 to 50,000 rows
with 100 to 1,000 patterns): bootstrap_sums draws the matrix directly when
patterns * BINOMIAL_COST <= rows, else by index draws."""


def bootstrap_sums(rows: np.ndarray, n_bootstrap: int, seed: int) -> np.ndarray | None:
    """(n_bootstrap, columns) column sums of `rows` (n, columns) over n_bootstrap resamples of
    its rows with replacement; None with no resample or fewer than two rows.

    Method (Efron & Tibshirani 1993, ch. 6): identical rows are grouped into P patterns
    (unique_rows, sorted, so the result does not depend on the order of the rows) with
    frequencies f. Each resample's pattern counts are Multinomial(n, f / n). With few patterns
    (P * BINOMIAL_COST <= n: a run's cases take few distinct values at a small k) the count
    matrix is drawn directly (agreement.bootstrap_pattern_sums, whose cost does not grow with n).
    Otherwise the units are listed pattern by pattern, and each resample draws n of them
    uniformly with replacement (numpy default_rng(seed).integers). Counting the patterns drawn
    gives one row of the (n_bootstrap, P) count matrix, each row ~ Multinomial(n, f / n), the
    same distribution agreement.bootstrap_pattern_sums draws directly. The matrix is built in
    blocks of COUNT_BLOCK counts, each from chunks of RESAMPLE_CHUNK draws (np.bincount), and
    each block is multiplied by the pattern rows, so memory stays at a few tens of MB whatever
    n_bootstrap (and O(n) beyond 2^18 cases), and the time grows with n_bootstrap * n. Either way
    the result depends only on the rows, n_bootstrap and seed.
    """
    if n_bootstrap == 0 or rows.shape[0] < 2:
        return None
    patterns, freq = unique_rows(rows)
    n, n_patterns = rows.shape[0], patterns.shape[0]
    if n_patterns * BINOMIAL_COST <= n:
        with threadpool_limits(limits=1, user_api="blas"):  # the product on one thread: the same bits everywhere
            return bootstrap_pattern_sums(freq, patterns, n_bootstrap, seed)
    index_type = np.int32 if n < 2**31 else np.int64  # a cell index stays under max(RESAMPLE_CHUNK, n)
    unit_pattern = np.repeat(np.arange(n_patterns, dtype=index_type), freq)
    rng = np.random.default_rng(seed)
    draw_step = max(1, RESAMPLE_CHUNK // n)
    block_step = max(draw_step, COUNT_BLOCK // n_patterns // draw_step * draw_step)
    out = np.empty((n_bootstrap, rows.shape[1]))
    for block in range(0, n_bootstrap, block_step):
        counts = np.empty((min(block_step, n_bootstrap - block), n_patterns))
        for start in range(0, counts.shape[0], draw_step):
            size = min(draw_step, counts.shape[0] - start)
            # np.take, not unit_pattern[...]: the same gather, about three times faster than fancy indexing
            drawn = np.take(unit_pattern, rng.integers(0, n, size=(size, n), dtype=index_type))
            drawn += (np.arange(size, dtype=index_type) * n_patterns)[:, None]  # row b counts into cells b*P .. b*P + P - 1
            counts[start:start + size] = np.bincount(drawn.ravel(), minlength=size * n_patterns).reshape(size, n_patterns)
        with threadpool_limits(limits=1, user_api="blas"):  # BLAS splits a product by its threads, in another
            out[block:block + counts.shape[0]] = counts @ patterns  # summing order per count: one thread, the same bits everywhere
    return out


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(patterns, freq): the distinct rows of `rows` (n, columns) of finite floats, in
    lexicographic order (first column first), and how many times each occurs: what
    np.unique(rows, axis=0, return_counts=True) gives, the same arrays. np.unique sorts the rows
    as one structured value each, which is 10 to 20 times slower than np.lexsort over the
    columns (stable, the last key primary) and a comparison of each sorted row with the one
    before it (measured on 10,000 cases' terms: 33 ms against 2 ms)."""
    if rows.shape[0] == 0:
        return rows[:0].copy(), np.zeros(0, dtype=np.intp)
    ordered = rows[np.lexsort(rows.T[::-1])]
    new = np.empty(ordered.shape[0], dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    starts = np.flatnonzero(new)
    return ordered[starts], np.diff(np.append(starts, ordered.shape[0]))


def bootstrap_figures(rows: np.ndarray, n_bootstrap: int, seed: int) -> dict[str, np.ndarray]:
    """figure -> (n_bootstrap,) values over case resamples (NaN where 0/0); {} without resamples."""
    sums = bootstrap_sums(rows, n_bootstrap, seed)
    return {} if sums is None else ratio_figures(sums)


def figure_gap(figure: str, totals: np.ndarray, samples: Mapping[str, np.ndarray], n_bootstrap: int,
               n_cases: int) -> str:
    """Why `figure` is None or has no interval: its denominator is 0, no resamples were drawn,
    fewer than two cases, or it is 0/0 in too many resamples."""
    den = _RATIOS[figure][1]
    if totals[den] == 0:
        return english("msg.run.score.no_cases" if n_cases == 0 else _DENOMINATOR_REASONS[den])
    if n_bootstrap == 0:
        return english("msg.run.score.no_resamples")
    if n_cases < 2:
        return english("msg.run.score.one_case")
    share = float(np.isnan(samples[figure]).mean())
    return english("msg.run.score.undefined_in_resamples", share=f"{share:.0%}")


def plain_value(value: float) -> float | None:
    """A numpy figure as JSON holds it: a float, None for NaN (0/0)."""
    return None if np.isnan(value) else float(value)
