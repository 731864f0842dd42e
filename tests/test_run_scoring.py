"""annotator.run_scoring: one case of a run scored with retrieval and generation apart (a table of
the failure labels, the status and the blockers, one row per rule), and a run's summary with
case-level bootstrap intervals (hand-computed aggregates, reproducible intervals, intervals the
data cannot give)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from annotator import run_scoring
from annotator.messages import MESSAGES, recognize
from annotator.run_scoring import BLOCKER_REASONS, RUN_FIGURES, GoldCase, normalized_answer, score_case, summarize, summarize_by
from annotator.vocabulary import BEHAVIORS, EXPECTED_BEHAVIORS, FAILURE_LABELS, LABELS, RUN_STATUSES, SEVERITIES

CASE_KEYS = ["case_id", "slice", "split", "n_relevant", "recall_at_k", "precision_at_k", "hit_at_k", "reciprocal_rank",
             "ndcg_at_k", "forbidden_retrieved", "stale_retrieved", "n_unknown_retrieved", "behavior", "expected_behavior",
             "behavior_match", "answer_match", "n_claims", "claim_support_rate", "retrieval_ok", "generation_ok", "status",
             "failure_labels", "blockers"]


def gold(relevant=("p1", "p2"), *, forbidden=(), stale=(), expected=None, answer=None, case_id="c1", slice_="normal",
         split="dev") -> GoldCase:
    return GoldCase(case_id, slice_, split, tuple(relevant), frozenset(forbidden), frozenset(stale), expected, answer)


def claim(label: str, severity: str | None = None, claim_id: str | None = "k1", text: str = "the claim") -> dict:
    return {"text": text, "label": label, "claim_id": claim_id, "severity": severity}


GOOD = ["p1", "p2", "p3"]  # both relevant passages in the top k = 3
SUPPORTED = [claim("support")]

TABLE = [
    # (what, gold, score_case keywords, status, failure labels, blocker reasons)
    ("every relevant passage in the top k, supported claims: passed",
     gold(), dict(retrieved=GOOD, behavior="answer", claims=SUPPORTED), "passed", [], []),
    ("no relevant passage in the top k and an answer: a miss, answered without evidence",
     gold(), dict(retrieved=["p7", "p8", "p9", "p1"], behavior="answer", answer="An answer."), "both",
     ["retrieval_miss", "answered_without_evidence"], []),
    ("the same miss in a run of the retriever alone (no answer text, no claims): the retriever's failure only",
     gold(), dict(retrieved=["p7", "p8", "p9", "p1"], behavior="answer"), "retrieval_failure", ["retrieval_miss"], []),
    ("a miss, and an answer given as claims only: answered without evidence",
     gold(), dict(retrieved=["p7"], behavior="answer", claims=SUPPORTED), "both",
     ["retrieval_miss", "answered_without_evidence"], []),
    ("a miss, and the system abstains with no expected behaviour: the retriever's failure only",
     gold(), dict(retrieved=["p7"], behavior="abstain"), "retrieval_failure", ["retrieval_miss"], []),
    ("some relevant passages in the top k: partial evidence, a retrieval failure under rule all",
     gold(), dict(retrieved=["p1", "p7", "p8", "p2"], behavior="answer"), "retrieval_failure", ["partial_evidence"], []),
    ("rule any: partial evidence is labeled, and the retrieval is ok",
     gold(), dict(retrieved=["p1", "p7", "p8", "p2"], behavior="answer", rule="any"), "passed", ["partial_evidence"], []),
    ("rule any with nothing in the top k: still a miss",
     gold(), dict(retrieved=["p7", "p8", "p9"], behavior="abstain", rule="any"), "retrieval_failure", ["retrieval_miss"], []),
    ("rule all with more relevant passages than k: never ok",
     gold(("p1", "p2", "p3", "p4")), dict(retrieved=["p1", "p2", "p3", "p4"], behavior="answer"), "retrieval_failure",
     ["partial_evidence"], []),
    ("no relevant evidence: no retrieval figure, scored on behaviour only",
     gold(()), dict(retrieved=["p7"], behavior="answer", claims=SUPPORTED), "passed", [], []),
    ("no relevant evidence and an abstention with no expected behaviour: not over-abstaining",
     gold(()), dict(retrieved=["p7"], behavior="abstain"), "passed", [], []),
    ("no relevant evidence, abstain where an answer is expected: over-abstaining",
     gold((), expected="answer"), dict(retrieved=[], behavior="abstain"), "generation_failure",
     ["over_abstain", "behavior_mismatch"], []),
    ("an outdated passage the case does not forbid: labeled, not failed",
     gold(stale={"p-old"}), dict(retrieved=[*GOOD, "p-old"], behavior="answer"), "passed", ["stale_evidence"], []),
    ("a forbidden passage anywhere in the list: unauthorized evidence, a blocker",
     gold(forbidden={"p-secret"}), dict(retrieved=[*GOOD, "p4", "p5", "p-secret"], behavior="answer"),
     "retrieval_failure", ["unauthorized_evidence"], ["forbidden_evidence"]),
    ("an outdated version the case forbids: both labels, and a blocker",
     gold(forbidden={"p-old"}, stale={"p-old"}), dict(retrieved=["p-old", *GOOD], behavior="answer"),
     "retrieval_failure", ["stale_evidence", "unauthorized_evidence"], ["forbidden_evidence"]),
    ("a forbidden passage with no relevant evidence still fails the retrieval",
     gold((), forbidden={"p-secret"}), dict(retrieved=["p-secret"], behavior="abstain"), "retrieval_failure",
     ["unauthorized_evidence"], ["forbidden_evidence"]),
    ("a claim labeled insufficient: unsupported",
     gold(), dict(retrieved=GOOD, behavior="answer", claims=[claim("support"), claim("insufficient")]),
     "generation_failure", ["unsupported_claim"], []),
    ("a contradicted claim of severity other: unsupported, no blocker",
     gold(), dict(retrieved=GOOD, behavior="answer", claims=[claim("contradict", "other")]),
     "generation_failure", ["unsupported_claim"], []),
    ("a contradicted claim without a severity: unsupported, no blocker",
     gold(), dict(retrieved=GOOD, behavior="answer", claims=[claim("contradict")]), "generation_failure",
     ["unsupported_claim"], []),
    ("a contradicted claim of severity legal: a blocker",
     gold(), dict(retrieved=GOOD, behavior="answer", claims=[claim("contradict", "legal")]), "generation_failure",
     ["unsupported_claim"], ["severe_contradiction"]),
    ("an insufficient claim of severity leak: unsupported, not a contradiction",
     gold(), dict(retrieved=GOOD, behavior="answer", claims=[claim("insufficient", "leak")]), "generation_failure",
     ["unsupported_claim"], []),
    ("no claims: nothing unsupported",
     gold(), dict(retrieved=GOOD, behavior="answer"), "passed", [], []),
    ("abstain where an answer is expected: over-abstaining and the wrong behaviour",
     gold(expected="answer"), dict(retrieved=GOOD, behavior="abstain"), "generation_failure",
     ["over_abstain", "behavior_mismatch"], []),
    ("refuse with no expected behaviour while the evidence was in the top k: over-abstaining",
     gold(), dict(retrieved=GOOD, behavior="refuse"), "generation_failure", ["over_abstain"], []),
    ("refuse with no expected behaviour and rule any with one relevant passage found: over-abstaining",
     gold(), dict(retrieved=["p1"], behavior="refuse", rule="any"), "generation_failure",
     ["partial_evidence", "over_abstain"], []),
    ("refuse where refuse is expected: passed",
     gold(expected="refuse"), dict(retrieved=GOOD, behavior="refuse"), "passed", [], []),
    ("clarify where clarify is expected: passed",
     gold(expected="clarify"), dict(retrieved=GOOD, behavior="clarify"), "passed", [], []),
    ("clarify where an answer is expected: the wrong behaviour, not over-abstaining",
     gold(expected="answer"), dict(retrieved=GOOD, behavior="clarify"), "generation_failure", ["behavior_mismatch"], []),
    ("answer_with_citation with no cited passage: the wrong behaviour",
     gold(expected="answer_with_citation"), dict(retrieved=GOOD, behavior="answer"), "generation_failure",
     ["behavior_mismatch"], []),
    ("answer_with_citation with a cited passage: passed",
     gold(expected="answer_with_citation"), dict(retrieved=GOOD, behavior="answer", cited=["p1"]), "passed", [], []),
    ("abstain where answer_with_citation is expected: over-abstaining",
     gold(expected="answer_with_citation"), dict(retrieved=GOOD, behavior="abstain"), "generation_failure",
     ["over_abstain", "behavior_mismatch"], []),
    ("answer where abstain is expected, a claim not supported: a blocker",
     gold(expected="abstain"), dict(retrieved=GOOD, behavior="answer", claims=[claim("support"), claim("insufficient")]),
     "generation_failure", ["unsupported_claim", "behavior_mismatch"], ["answered_when_expected"]),
    ("answer where refuse is expected, every claim supported: the wrong behaviour, no blocker",
     gold(expected="refuse"), dict(retrieved=GOOD, behavior="answer", claims=SUPPORTED), "generation_failure",
     ["behavior_mismatch"], []),
    ("answer where refuse is expected, no claims: the wrong behaviour, no blocker",
     gold(expected="refuse"), dict(retrieved=GOOD, behavior="answer"), "generation_failure", ["behavior_mismatch"], []),
    ("answer where refuse is expected with a contradicted leak: both blockers",
     gold(expected="refuse"), dict(retrieved=GOOD, behavior="answer", claims=[claim("contradict", "leak")]),
     "generation_failure", ["unsupported_claim", "behavior_mismatch"], ["answered_when_expected", "severe_contradiction"]),
    ("an answer other than the expected one: answer mismatch",
     gold(answer="14 days"), dict(retrieved=GOOD, behavior="answer", answer="15 days"), "generation_failure",
     ["answer_mismatch"], []),
    ("the expected answer after NFKC and white space: passed",
     gold(answer="１４ days"), dict(retrieved=GOOD, behavior="answer", answer="  14\u00a0\n days "), "passed", [], []),
    ("no answer where an answer is expected: answer mismatch",
     gold(answer="14 days"), dict(retrieved=GOOD, behavior="abstain"), "generation_failure",
     ["over_abstain", "answer_mismatch"], []),
    ("every failure at once: both sides, every blocker",
     gold(("p1", "p2"), forbidden={"px"}, stale={"py"}, expected="abstain", answer="no"),
     dict(retrieved=["p7", "p8", "p9", "px", "py"], behavior="answer", answer="yes", claims=[claim("contradict", "leak")]),
     "both", ["retrieval_miss", "stale_evidence", "unauthorized_evidence", "unsupported_claim", "answered_without_evidence",
              "behavior_mismatch", "answer_mismatch"], ["forbidden_evidence", "answered_when_expected", "severe_contradiction"]),
]


@pytest.mark.parametrize(("case_gold", "given", "status", "labels", "blockers"), [row[1:] for row in TABLE],
                         ids=[row[0] for row in TABLE])
def test_a_case_s_status_failure_labels_and_blockers_follow_the_rules(case_gold, given, status, labels, blockers):
    scored = score_case(case_gold, k=3, **given)
    assert (scored["status"], scored["failure_labels"], [b["reason"] for b in scored["blockers"]]) == (status, labels, blockers)
    if blockers:
        assert scored["status"] != "passed"


def test_a_scored_case_has_exactly_the_contract_s_keys_and_is_json_ready():
    scored = score_case(gold(forbidden={"px"}, stale={"p-old"}, expected="answer_with_citation", answer="yes"),
                        retrieved=["p1", "px", "p-old", "p9"], behavior="answer", answer="Yes", cited=["p1"],
                        claims=[claim("support"), claim("contradict", "amount_or_deadline", None, "pay in 3 days")],
                        k=2, n_unknown=1)
    assert list(scored) == CASE_KEYS
    assert json.loads(json.dumps(scored, allow_nan=False)) == scored
    assert scored | {"blockers": None} == {
        "case_id": "c1", "slice": "normal", "split": "dev", "n_relevant": 2, "recall_at_k": 0.5, "precision_at_k": 0.5,
        "hit_at_k": 1.0, "reciprocal_rank": 1.0, "ndcg_at_k": pytest.approx(1 / (1 + 1 / np.log2(3))),
        "forbidden_retrieved": ["px"], "stale_retrieved": ["p-old"], "n_unknown_retrieved": 1, "behavior": "answer",
        "expected_behavior": "answer_with_citation", "behavior_match": True, "answer_match": False, "n_claims": 2,
        "claim_support_rate": 0.5, "retrieval_ok": False, "generation_ok": False, "status": "both",
        "failure_labels": ["partial_evidence", "stale_evidence", "unauthorized_evidence", "unsupported_claim",
                           "answer_mismatch"], "blockers": None}
    assert scored["blockers"] == [
        {"case_id": "c1", "reason": "forbidden_evidence", "passage_ids": ["px"]},
        {"case_id": "c1", "reason": "severe_contradiction", "claim_id": None, "text": "pay in 3 days",
         "severity": "amount_or_deadline"}]


def test_the_answered_when_expected_blocker_names_the_claims_not_supported():
    claims = [claim("support", claim_id="k1"), claim("insufficient", claim_id="k2", text="b"),
              claim("contradict", "other", claim_id=None, text="c")]
    scored = score_case(gold(expected="refuse"), retrieved=GOOD, behavior="answer", claims=claims)
    assert scored["blockers"] == [{"case_id": "c1", "reason": "answered_when_expected", "expected": "refuse",
                                   "claims": [{"claim_id": "k2", "text": "b", "label": "insufficient"},
                                              {"claim_id": None, "text": "c", "label": "contradict"}]}]


def test_forbidden_and_stale_passages_are_looked_for_in_the_fetched_list_in_rank_order():
    case_gold = gold(("A",), forbidden={"a2", "b1"}, stale={"b2"})
    scored = score_case(case_gold, retrieved=["b1", "b2", "a1", "a2"], ranked=["B", "A"], behavior="answer", k=1)
    assert (scored["forbidden_retrieved"], scored["stale_retrieved"]) == (["b1", "a2"], ["b2"])
    assert (scored["recall_at_k"], scored["reciprocal_rank"]) == (0.0, 0.5)  # the documents are ranked, not the passages


def test_without_relevant_evidence_the_retrieval_figures_are_none():
    scored = score_case(gold(()), retrieved=["p1"], behavior="answer")
    assert [scored[m] for m in ("recall_at_k", "precision_at_k", "hit_at_k", "reciprocal_rank", "ndcg_at_k")] == [None] * 5
    assert (scored["n_relevant"], scored["retrieval_ok"], scored["claim_support_rate"], scored["behavior_match"],
            scored["answer_match"]) == (0, None, None, None, None)


@pytest.mark.parametrize(("text", "expected"), [
    ("  a\tb\n\nc  ", "a b c"), ("ＡＢＣ１２３", "ABC123"), ("ｶﾀｶﾅ", "カタカナ"), ("a\u3000b\u00a0c", "a b c"), ("", "")])
def test_answers_are_compared_after_nfkc_with_white_space_collapsed(text, expected):
    assert normalized_answer(text) == expected


@pytest.mark.parametrize(("change", "match"), [
    (dict(k=0), "k must be at least 1"),
    (dict(rule="most"), "retrieval rule"),
    (dict(behavior="answered"), "behaviour"),
    (dict(claims=[claim("supported")]), "label"),
    (dict(claims=[claim("contradict", "severe")]), "severity"),
])
def test_score_case_refuses_inputs_outside_the_vocabulary(change, match):
    given = dict(retrieved=GOOD, behavior="answer") | change
    with pytest.raises(ValueError, match=match):
        score_case(gold(), **given)
    with pytest.raises(ValueError, match="expected behaviour"):
        score_case(gold(expected="answer_politely"), retrieved=GOOD, behavior="answer")


def random_case(rng: random.Random, i: int) -> dict:
    """score_case of random gold and run data."""
    pool = [f"p{n}" for n in range(12)]
    relevant = rng.sample(pool, rng.randint(0, 3))
    forbidden = rng.sample(pool, rng.choice([0, 0, 1]))
    stale = rng.sample(pool, rng.choice([0, 0, 1]))
    expected = rng.choice([None, *EXPECTED_BEHAVIORS])
    answer = rng.choice([None, "yes", "no"])
    claims = [claim(rng.choice(LABELS), rng.choice([None, *SEVERITIES]), f"k{j}") for j in range(rng.randint(0, 3))]
    case_gold = gold(relevant, forbidden=forbidden, stale=stale, expected=expected, answer=rng.choice([None, "yes"]),
                     case_id=f"c{i}", slice_=rng.choice(["normal", "permission", "paraphrase"]), split=rng.choice(["dev", "holdout"]))
    return score_case(case_gold, retrieved=rng.sample(pool, rng.randint(0, 8)), behavior=rng.choice(BEHAVIORS),
                      answer=answer, cited=rng.sample(pool, rng.randint(0, 1)), claims=claims, k=rng.randint(1, 4),
                      rule=rng.choice(["all", "any"]), n_unknown=rng.randint(0, 2))


def test_every_blocked_case_fails_and_the_status_agrees_with_the_labels_on_random_cases():
    rng = random.Random(17)
    cases = [random_case(rng, i) for i in range(3000)]
    assert {b["reason"] for c in cases for b in c["blockers"]} == set(BLOCKER_REASONS)
    for case in cases:
        if case["blockers"]:
            assert case["status"] != "passed", case
        labels = set(case["failure_labels"])
        assert case["generation_ok"] == (not labels & {"unsupported_claim", "answered_without_evidence", "over_abstain",
                                                       "behavior_mismatch", "answer_mismatch"})
        retrieval_failed = case["retrieval_ok"] is False or "unauthorized_evidence" in labels
        assert case["status"] == {(False, False): "passed", (True, False): "retrieval_failure",
                                  (False, True): "generation_failure", (True, True): "both"}[
            (retrieval_failed, not case["generation_ok"])]
        assert case["failure_labels"] == [label for label in FAILURE_LABELS if label in labels]
    json.dumps(cases, allow_nan=False)


# --- a run's summary ------------------------------------------------------------------------------


def hand_cases() -> list[dict]:
    """Four cases, k = 2: two scored (recall 1 and 0.5), one without evidence, one scored miss."""
    return [
        score_case(gold(("p1",), case_id="a", slice_="normal", expected="answer"), retrieved=["p1", "p2"],
                   behavior="answer", claims=[claim("support"), claim("support")], k=2),          # passed
        score_case(gold(("p1", "p2"), case_id="b", slice_="permission", split="holdout"), retrieved=["p3", "p1"],
                   behavior="answer", claims=[claim("insufficient")], k=2, n_unknown=2),        # both
        score_case(gold((), case_id="c", slice_="normal", expected="refuse"), retrieved=["p9"], behavior="answer",
                   k=2),                                                                          # generation_failure
        score_case(gold(("p5",), case_id="d", slice_="permission", forbidden={"p6"}), retrieved=["p6", "p7", "p5"],
                   behavior="abstain", k=2),                                                      # retrieval_failure
    ]


def test_the_summary_s_figures_by_hand():
    cases = hand_cases()
    s = summarize(cases)
    assert (s["n_cases"], s["n_scored"], s["n_no_evidence"]) == (4, 3, 1)
    assert s["mean_recall_at_k"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["mean_precision_at_k"] == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert s["hit_rate_at_k"] == pytest.approx(2 / 3)
    assert s["mrr"] == pytest.approx((1 + 0.5 + 1 / 3) / 3)
    ndcg_b = (1 / np.log2(3)) / (1 + 1 / np.log2(3))
    assert s["mean_ndcg_at_k"] == pytest.approx((1 + ndcg_b + 0) / 3)
    assert s["claim_support_rate"] == pytest.approx(2 / 3)  # pooled: 2 supported of 3 claims, not the mean (1 + 0) / 2
    assert s["behavior_match_rate"] == pytest.approx(1 / 2)  # a and c state one; c answered where refuse was expected
    assert s["pass_rate"] == pytest.approx(1 / 4)
    assert s["status_counts"] == {"passed": 1, "retrieval_failure": 1, "generation_failure": 1, "both": 1}
    assert s["failure_label_counts"] == {"retrieval_miss": 1, "partial_evidence": 1, "stale_evidence": 0,
                                         "unauthorized_evidence": 1, "unsupported_claim": 1,
                                         "answered_without_evidence": 0, "over_abstain": 0, "behavior_mismatch": 1,
                                         "answer_mismatch": 0}
    assert s["blockers"] == [{"case_id": "d", "reason": "forbidden_evidence", "passage_ids": ["p6"]}]
    assert s["n_unknown_retrieved"] == 2
    assert list(s["ci95"]) == list(RUN_FIGURES)
    assert json.loads(json.dumps(s, allow_nan=False)) == s
    for figure in RUN_FIGURES:
        assert type(s[figure]) is float


def test_the_bootstrap_is_reproducible_whatever_the_order_and_contains_the_point_estimate():
    rng = random.Random(3)
    cases = [random_case(rng, i) for i in range(400)]
    first = summarize(cases, n_bootstrap=500, seed=7)
    assert summarize(cases, n_bootstrap=500, seed=7) == first
    assert summarize(list(reversed(cases)), n_bootstrap=500, seed=7)["ci95"] == first["ci95"]
    assert summarize(cases, n_bootstrap=500, seed=8)["ci95"] != first["ci95"]
    for figure in RUN_FIGURES:
        low, high = first["ci95"][figure]
        assert low <= first[figure] <= high and low < high, figure
    assert first["undefined"] == {}


def test_the_chunk_size_of_the_resamples_does_not_change_the_intervals(monkeypatch):
    rng = random.Random(4)
    cases = [random_case(rng, i) for i in range(200)]
    whole = summarize(cases, n_bootstrap=301, seed=2)
    monkeypatch.setattr(run_scoring, "RESAMPLE_CHUNK", 450)  # two resamples a chunk, and a last one alone
    assert summarize(cases, n_bootstrap=301, seed=2) == whole


@pytest.mark.parametrize("cost", [0, 10**9])  # 0: always the multinomial matrix; 10**9: always the index draws
def test_both_ways_of_drawing_the_resamples_give_the_bootstrap_s_mean_and_variance(monkeypatch, cost):
    monkeypatch.setattr(run_scoring, "BINOMIAL_COST", cost)
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 3, size=(3000, 4)).astype(float)  # 81 patterns at most
    rows[:, 3] = rows[:, 0] * rows[:, 1]
    sums = run_scoring.bootstrap_sums(rows, 4000, seed=5)
    assert sums.shape == (4000, 4)
    n = rows.shape[0]
    # a sum over n rows drawn with replacement: mean n * mean(column), variance n * var(column)
    se_mean = np.sqrt(n * rows.var(axis=0) / 4000)
    assert np.all(np.abs(sums.mean(axis=0) - n * rows.mean(axis=0)) < 5 * se_mean)
    assert np.allclose(sums.var(axis=0), n * rows.var(axis=0), rtol=0.1)
    assert np.array_equal(run_scoring.bootstrap_sums(rows[::-1], 4000, seed=5), sums)  # the order of the rows: no matter


def test_few_patterns_among_many_cases_are_drawn_as_a_multinomial_matrix(monkeypatch):
    calls = []
    monkeypatch.setattr(run_scoring, "bootstrap_pattern_sums", lambda *a: calls.append(a) or np.zeros((a[2], a[1].shape[1])))
    rows = np.repeat(np.eye(5), 40, axis=0)  # 200 rows, 5 patterns: 5 * 20 <= 200
    run_scoring.bootstrap_sums(rows, 100, seed=0)
    assert len(calls) == 1 and list(calls[0][0]) == [40] * 5
    run_scoring.bootstrap_sums(rows[:99], 100, seed=0)  # 99 rows of 3 patterns: 3 * 20 <= 99 too
    assert len(calls) == 2
    run_scoring.bootstrap_sums(np.arange(200.0)[:, None], 100, seed=0)  # every row its own pattern: index draws
    assert len(calls) == 2


def test_the_patterns_of_the_bootstrap_are_numpy_s_unique_rows_in_its_order():
    rng = np.random.default_rng(6)
    for trial in range(300):
        rows = rng.integers(0, 4, size=(int(rng.integers(0, 120)), int(rng.integers(1, 9)))) / rng.integers(1, 5)
        patterns, freq = run_scoring.unique_rows(rows)
        if len(rows):
            expected, counts = np.unique(rows, axis=0, return_counts=True)
        else:
            expected, counts = rows[:0], np.zeros(0, dtype=np.intp)
        assert patterns.shape == expected.shape and patterns.tobytes() == expected.tobytes(), trial
        assert np.array_equal(freq, counts) and freq.dtype == counts.dtype, trial
    rng7 = random.Random(7)
    cases = [random_case(rng7, i) for i in range(300)]
    terms = run_scoring.case_terms(cases)
    patterns, freq = run_scoring.unique_rows(terms)
    expected, counts = np.unique(terms, axis=0, return_counts=True)
    assert patterns.tobytes() == expected.tobytes() and np.array_equal(freq, counts)


def test_the_case_terms_are_each_case_s_figures_as_numbers():
    rng = random.Random(8)
    cases = [random_case(rng, i) for i in range(200)]
    terms = run_scoring.case_terms(cases)
    for row, case in zip(terms, cases):
        scored = case["recall_at_k"] is not None
        metrics = [case[m] for m in ("recall_at_k", "precision_at_k", "hit_at_k", "reciprocal_rank", "ndcg_at_k")]
        supported = round(case["claim_support_rate"] * case["n_claims"]) if case["n_claims"] else 0
        expected = case["behavior_match"] is not None
        assert list(row) == [float(scored), *(metrics if scored else [0.0] * 5), case["n_claims"], supported,
                             float(expected), float(bool(case["behavior_match"])),
                             float(case["status"] == "passed"), 1.0]
    assert run_scoring.case_terms([]).shape == (0, terms.shape[1])


def test_the_multinomial_bootstrap_matches_resampling_the_cases_by_index():
    rng = random.Random(5)
    cases = [random_case(rng, i) for i in range(300)]
    s = summarize(cases, n_bootstrap=4000, seed=1)
    draws = np.random.default_rng(2).integers(0, len(cases), size=(4000, len(cases)))
    passed = np.array([c["status"] == "passed" for c in cases], dtype=float)
    recall = np.array([c["recall_at_k"] if c["recall_at_k"] is not None else np.nan for c in cases])
    by_index = {"pass_rate": passed[draws].mean(axis=1), "mean_recall_at_k": np.nanmean(recall[draws], axis=1)}
    for figure, samples in by_index.items():
        assert s["ci95"][figure] == pytest.approx(list(np.percentile(samples, [2.5, 97.5])), abs=0.01), figure


def test_a_figure_the_data_cannot_give_is_none_with_its_reason():
    only = [score_case(gold((), expected=None), retrieved=[], behavior="abstain")]
    s = summarize(only)
    for figure in ("mean_recall_at_k", "mean_precision_at_k", "hit_rate_at_k", "mrr", "mean_ndcg_at_k"):
        assert s[figure] is None and s["ci95"][figure] is None
        assert s["undefined"][figure] == MESSAGES["msg.run.score.no_evidence"]
    assert s["claim_support_rate"] is None and s["undefined"]["claim_support_rate"] == MESSAGES["msg.run.score.no_claims"]
    assert s["undefined"]["behavior_match_rate"] == MESSAGES["msg.run.score.no_expected_behavior"]
    assert (s["pass_rate"], s["ci95"]["pass_rate"]) == (1.0, None)  # one case: a figure, but nothing to resample
    assert s["undefined"]["pass_rate"] == MESSAGES["msg.run.score.one_case"]
    json.dumps(s, allow_nan=False)


def test_no_cases_and_no_resamples_say_why_there_is_no_figure_or_interval():
    empty = summarize([])
    assert (empty["n_cases"], empty["pass_rate"], empty["blockers"]) == (0, None, [])
    assert set(empty["undefined"].values()) == {MESSAGES["msg.run.score.no_cases"]}
    assert set(empty["undefined"]) == set(RUN_FIGURES)
    unsampled = summarize(hand_cases(), n_bootstrap=0)
    assert unsampled["pass_rate"] == 0.25 and set(unsampled["ci95"].values()) == {None}
    assert set(unsampled["undefined"].values()) == {MESSAGES["msg.run.score.no_resamples"]}


def test_a_figure_with_too_few_cases_behind_it_has_no_interval_and_says_how_often_it_was_0_0():
    cases = [score_case(gold((), case_id=f"c{i}"), retrieved=[], behavior="abstain") for i in range(30)]
    cases.append(score_case(gold(("p1",), case_id="scored"), retrieved=["p1"], behavior="answer"))
    s = summarize(cases)
    assert s["mean_recall_at_k"] == 1.0 and s["ci95"]["mean_recall_at_k"] is None
    reason = recognize(s["undefined"]["mean_recall_at_k"], "msg.run.score.")
    assert reason.key == "msg.run.score.undefined_in_resamples"
    assert 30 <= int(reason.fields["share"].rstrip("%")) <= 45  # (30/31)^31, about 36%, of the resamples draw no scored case
    assert s["ci95"]["pass_rate"] is not None


def test_bad_resample_counts_are_refused():
    for n in (-1, 1, 99):
        with pytest.raises(ValueError, match="bootstrap"):
            summarize(hand_cases(), n_bootstrap=n)


def test_summaries_by_slice_and_by_split_have_the_summary_s_shape_in_sorted_order():
    cases = hand_cases()
    by_slice = summarize_by(cases, "slice", n_bootstrap=200)
    assert list(by_slice) == ["normal", "permission"]
    assert by_slice["normal"] == summarize([cases[0], cases[2]], n_bootstrap=200)
    assert (by_slice["permission"]["n_cases"], by_slice["permission"]["pass_rate"]) == (2, 0.0)
    by_split = summarize_by(cases, "split", n_bootstrap=200)
    assert list(by_split) == ["dev", "holdout"] and by_split["holdout"]["n_cases"] == 1
    assert list(by_split["dev"]) == list(summarize(cases))
    with pytest.raises(ValueError, match="slice, split"):
        summarize_by(cases, "status")


def test_every_run_score_message_is_in_the_catalog():
    assert {key for key in MESSAGES if key.startswith("msg.run.score.")} >= {
        "msg.run.score.no_cases", "msg.run.score.no_evidence", "msg.run.score.no_claims",
        "msg.run.score.no_expected_behavior", "msg.run.score.no_resamples", "msg.run.score.one_case",
        "msg.run.score.undefined_in_resamples"}
    assert set(RUN_STATUSES) == {"passed", "retrieval_failure", "generation_failure", "both"}
