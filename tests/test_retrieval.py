"""annotator.retrieval: the one rule for a case's relevant evidence (table-tested), the document
mapping of `--unit doc`, and the per-case retrieval figures, by hand and against ir-measures
(on pytrec-eval-terrier, trec_eval's code) on random qrels and runs."""

from __future__ import annotations

import math
import random

import pytest

from annotator.retrieval import RETRIEVAL_METRICS, UNKNOWN_PREFIX, case_retrieval, relevant_evidence, to_documents
from tests.conftest import need_module


def claim(gold: str, shown: list[str], *labels: tuple[str, list[str]]) -> dict:
    """A released claim as gold.parquet holds it: its gold label, the passages it is shown with
    and its blind labels (label, cited passages)."""
    return {"gold_label": gold, "passage_ids": shown,
            "labels": [{"label": label, "passage_ids": cited} for label, cited in labels]}


RULE_TABLE = [
    # (what, required_evidence_ids, claims, relevant)
    ("required ids win over any citation", ["p9", "p8", "p9"],
     [claim("support", ["p1", "p2"], ("support", ["p1"]))], ("p9", "p8")),
    ("no required ids: the passages the agreeing labels cite", None,
     [claim("support", ["p1", "p2", "p3"], ("support", ["p2"]), ("support", ["p3", "p2"]))], ("p2", "p3")),
    ("an empty required list is none", [],
     [claim("contradict", ["p1", "p2"], ("contradict", ["p1"]))], ("p1",)),
    ("a claim shown with one passage cites it", None,
     [claim("support", ["p5"], ("support", []), ("support", []))], ("p5",)),
    ("an insufficient claim cites nothing", None,
     [claim("insufficient", ["p5"], ("insufficient", ["p5"]))], ()),
    ("a label that disagrees with the gold is not the gold's citation", None,
     [claim("support", ["p1", "p2"], ("support", ["p1"]), ("contradict", ["p2"]))], ("p1",)),
    ("an adjudicated claim: the labels that chose the adjudicated label", None,
     [claim("contradict", ["p1", "p2"], ("support", ["p1"]), ("contradict", ["p2"]))], ("p2",)),
    ("every evidence claim of the case, in order of first mention", None,
     [claim("support", ["p1", "p2"], ("support", ["p2"])), claim("insufficient", ["p3"]),
      claim("contradict", ["p4"], ("contradict", ["p1"]))], ("p2", "p4", "p1")),
    ("no claim at all", None, [], ()),
]


@pytest.mark.parametrize(("required", "claims", "relevant"), [row[1:] for row in RULE_TABLE],
                         ids=[row[0] for row in RULE_TABLE])
def test_the_relevant_evidence_of_a_case_follows_the_one_rule(required, claims, relevant):
    assert relevant_evidence(required, claims) == relevant


def test_a_document_counts_once_at_the_best_rank_of_its_passages():
    document_of = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
    assert to_documents(["a2", "b1", "a1", "c1"], document_of) == ["A", "B", "C"]
    unknown = to_documents(["x", "a1"], document_of)
    assert unknown == [UNKNOWN_PREFIX + "x", "A"]  # an unknown passage keeps its rank and matches no document
    assert case_retrieval(unknown, {"A"}, 1)["hit_at_k"] == 0.0 and case_retrieval(unknown, {"A"}, 2)["hit_at_k"] == 1.0


def test_the_figures_of_one_list_by_hand():
    figures = case_retrieval(["d2", "d3", "d5", "d1"], {"d1", "d3", "d9"}, 3)
    assert figures["recall_at_k"] == pytest.approx(1 / 3)  # d3 of d1, d3, d9 in the top 3
    assert figures["precision_at_k"] == pytest.approx(1 / 3)
    assert figures["hit_at_k"] == 1.0
    assert figures["reciprocal_rank"] == pytest.approx(1 / 2)  # d3 at rank 2
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)  # three relevant, k 3
    assert figures["ndcg_at_k"] == pytest.approx((1 / math.log2(3)) / ideal)


def test_a_short_list_counts_its_missing_ranks_as_not_relevant_and_rank_is_read_past_k():
    figures = case_retrieval(["d1"], {"d1"}, 5)
    assert (figures["recall_at_k"], figures["precision_at_k"], figures["ndcg_at_k"]) == (1.0, 0.2, 1.0)
    late = case_retrieval(["x1", "x2", "x3", "d1"], {"d1"}, 2)
    assert (late["hit_at_k"], late["recall_at_k"], late["ndcg_at_k"]) == (0.0, 0.0, 0.0)
    assert late["reciprocal_rank"] == pytest.approx(1 / 4)  # the whole list, as trec_eval's recip_rank
    assert case_retrieval([], {"d1"}, 3) == {"recall_at_k": 0.0, "precision_at_k": 0.0, "hit_at_k": 0.0,
                                            "reciprocal_rank": 0.0, "ndcg_at_k": 0.0}


def test_no_relevant_evidence_gives_no_figure_and_a_cutoff_under_one_is_refused():
    assert case_retrieval(["d1", "d2"], set(), 3) == dict.fromkeys(RETRIEVAL_METRICS)
    with pytest.raises(ValueError, match="k must be at least 1"):
        case_retrieval(["d1"], {"d1"}, 0)


@pytest.mark.parametrize("seed", range(5))
def test_every_figure_equals_ir_measures_on_random_qrels_and_runs(seed):
    ir_measures = need_module("ir_measures", "ir-measures")
    from ir_measures import RR, P, R, Success, nDCG

    rng = random.Random(seed)
    k = rng.choice([1, 3, 5, 10])
    measures = {"recall_at_k": R @ k, "precision_at_k": P @ k, "hit_at_k": Success @ k, "reciprocal_rank": RR,
                "ndcg_at_k": nDCG @ k}
    qrels, run, ours = [], [], {}
    for query in range(60):
        pool = [f"d{n}" for n in range(rng.randint(1, 40))]
        relevant = set(rng.sample(pool, rng.randint(1, min(6, len(pool)))))
        retrieved = rng.sample(pool, rng.randint(0, len(pool)))
        qid = f"q{query}"
        qrels += [ir_measures.Qrel(qid, doc, 1) for doc in relevant]
        run += [ir_measures.ScoredDoc(qid, doc, float(len(retrieved) - rank)) for rank, doc in enumerate(retrieved)]  # no ties
        ours[qid] = case_retrieval(retrieved, relevant, k)
    theirs: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels, run):
        theirs.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for qid, figures in ours.items():
        got = theirs.get(qid, {})  # a query with nothing retrieved: trec_eval reports no figure, all are 0
        for name, measure in measures.items():
            assert figures[name] == pytest.approx(got.get(str(measure), 0.0), abs=1e-9), (qid, name, k)
