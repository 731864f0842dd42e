"""Scoring a RAG system's retrieval against gold evidence: pure functions over plain data.

Two questions for each case of a run:
- Which passages should the system have retrieved? `relevant_evidence`, the one rule for a
  case's gold evidence: its `required_evidence_ids` when it has them, else the passages its
  gold labels cite for `support` or `contradict`.
- How good is its ranked list? `case_retrieval`: Recall@k, Precision@k, Hit@k, the reciprocal
  rank and nDCG@k, with binary relevance, as trec_eval defines them.
`to_documents` maps a ranked list of passages to one of documents (`--unit doc`): a document
counts once, at the best rank of its passages.

Input is plain sequences and mappings; output plain dicts, tuples and floats that
json.dumps(..., allow_nan=False) accepts. A case with no relevant passage has no retrieval
figures (None): it is never put into a recall denominator.
"""

from __future__ import annotations

import math
from itertools import compress, count
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from annotator.vocabulary import LABELS

EVIDENCE_LABELS: tuple[str, ...] = tuple(label for label in LABELS if label != "insufficient")
"""The gold labels whose claims' cited passages are a case's evidence: a passage that supports or
contradicts a claim bears on the answer; one that leaves it open does not."""

UNKNOWN_PREFIX = "\0passage:"
"""What `to_documents` puts before a passage id it has no document for, so that it can never be
mistaken for a document id (ids hold no NUL)."""

RETRIEVAL_METRICS: tuple[str, ...] = ("recall_at_k", "precision_at_k", "hit_at_k", "reciprocal_rank", "ndcg_at_k")
"""The figures of `case_retrieval`, in display order."""


def relevant_evidence(required_ids: Sequence[str] | None, claims: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The relevant (gold) passages of one case: the one rule every report uses.

    required_ids: the case's `required_evidence_ids` (its metadata), or None / [] when it has none.
    claims: the case's released claims, each a mapping shaped like a gold.parquet record:
        `gold_label` (str), `passage_ids` (the passages the claim is shown with) and `labels`
        (the blind labels: mappings with `label` and `passage_ids`, the passages that label cites).
    Returns the passage ids, each once, in order of first mention: `required_ids` when given
    (not empty); else, over the claims whose gold label is in EVIDENCE_LABELS, the passages cited
    by the labels that agree with the gold label, and, for a claim shown with exactly one passage,
    that passage (showing one passage is citing it). An empty tuple: the case has no relevant
    evidence (it is scored on behaviour only).
    Source: the project's definition (docs/domain.md, "relevant evidence"); a case's required
    evidence is what its author wrote down, so it overrides what the labelers happened to cite.
    """
    if required_ids:
        return tuple(dict.fromkeys(required_ids))
    found: dict[str, None] = {}
    for claim in claims:
        gold = claim.get("gold_label")
        if gold not in EVIDENCE_LABELS:
            continue
        shown = list(claim.get("passage_ids") or ())
        if len(shown) == 1:
            found.setdefault(shown[0])
        for label in claim.get("labels") or ():
            if label.get("label") == gold:
                found.update(dict.fromkeys(label.get("passage_ids") or ()))
    return tuple(found)


def to_documents(retrieved: Sequence[str], document_of: Mapping[str, str]) -> list[str]:
    """A ranked list of passage ids as a ranked list of document ids (`--unit doc`).

    retrieved: passage ids, best first; document_of: passage id -> its document id.
    Returns the document ids, best first, each once, at the best rank of its passages (the
    document-level recall of the articles: a document is found when any passage of it is). A
    passage with no document (one the dataset does not know) stays in the list as
    UNKNOWN_PREFIX + its id, which matches no document, so it keeps the ranks below it in place.
    """
    seen: dict[str, None] = {}
    for passage_id in retrieved:
        seen.setdefault(document_of.get(passage_id, UNKNOWN_PREFIX + passage_id))
    return list(seen)


def case_retrieval(retrieved: Sequence[str], relevant: Collection[str], k: int) -> dict[str, float | None]:
    """Recall@k, Precision@k, Hit@k, reciprocal rank and nDCG@k of one ranked list.

    retrieved: ids, best first, each once (a repeat is the caller's error to refuse); relevant:
        the relevant ids (binary relevance; `relevant_evidence`); k >= 1, the cutoff.
    Returns {metric: value} for RETRIEVAL_METRICS, fractions 0..1; every value None when
    `relevant` is empty (no relevant evidence: the case is left out of the means).
    Raises ValueError for k < 1.
    Definitions (Manning, Raghavan & Schuetze 2008, Introduction to Information Retrieval, ch. 8;
    as trec_eval computes them, the reference of the TREC evaluations):
        recall_at_k = |relevant in the top k| / |relevant|;
        precision_at_k = |relevant in the top k| / k (trec_eval's P@k: a list shorter than k
            counts the missing ranks as not relevant);
        hit_at_k = 1.0 when at least one relevant id is in the top k, else 0.0 (Success@k);
        reciprocal_rank = 1 / the rank of the first relevant id in the whole list, 0.0 when there
            is none (trec_eval's recip_rank: no cutoff);
        ndcg_at_k = DCG@k / IDCG@k with gain 1 for a relevant id and 0 otherwise, DCG@k = sum over
            the top k ranks r (from 1) of gain / log2(r + 1), IDCG@k the DCG@k of the ideal list
            (min(k, |relevant|) relevant ids first) (Jarvelin & Kekalainen 2002, "Cumulated
            gain-based evaluation of IR techniques", ACM TOIS 20(4)).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    wanted = set(relevant)
    if not wanted:
        return dict.fromkeys(RETRIEVAL_METRICS)
    hits = list(compress(count(1), map(wanted.__contains__, retrieved)))  # the ranks of the relevant ids
    in_top = [rank for rank in hits if rank <= k]
    dcg = sum(1.0 / math.log2(rank + 1) for rank in in_top)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return {
        "recall_at_k": len(in_top) / len(wanted),
        "precision_at_k": len(in_top) / k,
        "hit_at_k": 1.0 if in_top else 0.0,
        "reciprocal_rank": 1.0 / hits[0] if hits else 0.0,
        "ndcg_at_k": dcg / ideal,
    }
