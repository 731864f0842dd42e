"""Tests of annotator.calibration: a judge scored against gold (hand-counted examples,
scikit-learn's kappa, statsmodels' intervals, the case-level bootstrap), the prediction-powered
(PPI++) corrected rate (hand-computed, cross-checked against ppi_py, its coverage simulated) and
the slice-mix check.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from annotator.calibration import JUDGE_METRICS, corrected_rate, score_judge, slice_mix_differs
from annotator.errors import CalibrationInputError
from annotator.messages import MESSAGES, recognize
from annotator.vocabulary import INDICATIVE_BELOW, LABELS
from tests.conftest import need_module

S, C, I = LABELS  # support, contradict, insufficient


def claims_of(cells: dict[tuple[str, str], int], per_case: int = 1) -> tuple[list[str], list[str], list[str]]:
    """(case ids, gold, judge) of claims with the given (gold, judge) counts, `per_case` claims
    to a case in order."""
    pairs = [pair for pair, count in cells.items() for _ in range(count)]
    cases = [f"case{k // per_case}" for k in range(len(pairs))]
    return cases, [g for g, _ in pairs], [j for _, j in pairs]


HAND = {(S, S): 4, (S, C): 1, (S, I): 1,
        (C, S): 2, (C, C): 3, (C, I): 0,
        (I, S): 1, (I, C): 0, (I, I): 2}
"""A 3x3 confusion, gold rows and judge columns, counted by hand below."""


def random_claims(n: int, seed: int, copy: float = 0.6, n_cases: int | None = None):
    """(case ids, gold, judge) of n random claims: the judge copies the gold with probability
    `copy`, else draws uniformly; claims fall in n_cases cases (default: one each)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n)
    judge = np.where(rng.random(n) < copy, gold, rng.integers(0, 3, n))
    cases = rng.integers(0, n_cases, n) if n_cases else np.arange(n)
    labels = np.array(LABELS, dtype=object)
    return [f"c{k}" for k in cases], list(labels[gold]), list(labels[judge])


def plain_json(value) -> bool:
    """Whether `value` is made only of str, int, float, None, bool, lists and str-keyed dicts."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


# ---------------------------------------------------------------------------------------------
# Hand-counted figures


def test_a_hand_counted_3x3_confusion_gives_every_rate():
    report = score_judge(*claims_of(HAND), n_bootstrap=0)
    # 14 claims; on the diagonal 4 + 3 + 2 = 9.
    assert report["n_items"] == 14 and report["n_cases"] == 14
    assert report["percent_agreement"] == pytest.approx(9 / 14)
    # gold margins 6, 5, 3; judge margins 4+2+1 = 7, 1+3 = 4, 1+2 = 3.
    # p_e = (6*7 + 5*4 + 3*3) / 14^2 = 71/196, p_o = 126/196: kappa = (126-71)/(196-71) = 55/125.
    assert report["cohen_kappa"] == pytest.approx(0.44)
    # false pass: judge support where gold is not: contradict 2 + insufficient 1 = 3, over 5 + 3 = 8.
    assert report["false_pass_rate"] == pytest.approx(3 / 8)
    # false fail: gold support, judge not: 1 + 1 = 2, over the 6 gold support claims.
    assert report["false_fail_rate"] == pytest.approx(2 / 6)
    assert report["confusion"] == {S: {S: 4, C: 1, I: 1}, C: {S: 2, C: 3, I: 0}, I: {S: 1, C: 0, I: 2}}
    assert report["undefined"] == {}


def test_denominators_and_the_indicative_list():
    report = score_judge(*claims_of(HAND), n_bootstrap=0)
    # 14 claims; 8 with gold not support; 6 with gold support: the last two are under 10.
    assert report["denominators"] == {"percent_agreement": 14, "cohen_kappa": 14,
                                      "false_pass_rate": 8, "false_fail_rate": 6}
    assert report["indicative"] == ["false_fail_rate", "false_pass_rate"]
    bigger = score_judge(*claims_of({pair: 2 * n for pair, n in HAND.items()}), n_bootstrap=0)
    assert bigger["indicative"] == []  # 28, 28, 16, 12: none under 10
    assert INDICATIVE_BELOW == 10


def test_the_confusion_lists_every_declared_category_in_declared_order_with_zeros():
    cases, gold, judge = claims_of({(C, C): 3, (C, S): 1})
    report = score_judge(cases, gold, judge, categories=(C, S, I), n_bootstrap=0)
    assert list(report["confusion"]) == [C, S, I]
    assert [list(row) for row in report["confusion"].values()] == [[C, S, I]] * 3
    assert report["confusion"][C] == {C: 3, S: 1, I: 0}
    assert report["confusion"][I] == {C: 0, S: 0, I: 0}
    # no gold support: false fail is 0/0; false pass: 1 of 4 gold-contradict claims passed
    assert report["false_pass_rate"] == pytest.approx(1 / 4)
    assert report["false_fail_rate"] is None


def test_another_passing_label_moves_the_false_pass_and_fail_rates():
    report = score_judge(*claims_of(HAND), positive=C, n_bootstrap=0)
    # judge contradict where gold is not: support 1 + insufficient 0 = 1, over 6 + 3 = 9.
    assert report["false_pass_rate"] == pytest.approx(1 / 9)
    # gold contradict, judge not: 2 + 0 = 2, over 5.
    assert report["false_fail_rate"] == pytest.approx(2 / 5)
    assert report["percent_agreement"] == pytest.approx(9 / 14)


def test_gold_all_support_leaves_the_false_pass_rate_undefined_with_its_reason():
    report = score_judge(*claims_of({(S, S): 5, (S, C): 2}), n_bootstrap=200)
    assert report["false_pass_rate"] is None
    assert report["undefined"]["false_pass_rate"] == (
        "every claim's gold label is 'support', so no claim can pass falsely (0/0)")
    assert report["false_fail_rate"] == pytest.approx(2 / 7)
    assert report["ci95"]["false_pass_rate"] is None and report["ci95_analytic"]["false_pass_rate"] is None
    assert report["ci95_missing"]["false_pass_rate"] == "the coefficient is undefined"
    # gold has one category, the judge two: p_e = 7*5/49 < 1, kappa = (5/7 - 5/7) / (1 - 5/7) = 0
    assert report["cohen_kappa"] == 0.0


def test_no_gold_support_leaves_the_false_fail_rate_undefined_with_its_reason():
    report = score_judge(*claims_of({(C, S): 1, (I, I): 3}), n_bootstrap=0)
    assert report["false_fail_rate"] is None
    assert report["undefined"]["false_fail_rate"] == "no claim's gold label is 'support', so no claim can fail falsely (0/0)"
    assert report["false_pass_rate"] == pytest.approx(1 / 4)
    assert recognize(report["undefined"]["false_fail_rate"], "msg.calibration.").key == "msg.calibration.no_gold_positive"


def test_gold_and_judge_in_one_category_leave_kappa_undefined():
    report = score_judge(*claims_of({(I, I): 12}), n_bootstrap=200)
    assert report["cohen_kappa"] is None
    assert report["undefined"]["cohen_kappa"] == (
        "the gold and the judge put every claim in 'insufficient': expected agreement is 1 (0/0)")
    assert report["percent_agreement"] == 1.0
    assert report["false_pass_rate"] == 0.0
    assert set(report["undefined"]) == {"cohen_kappa", "false_fail_rate"}


def test_no_claims_is_a_report_of_nothing():
    report = score_judge([], [], [], n_bootstrap=1000)
    assert report["n_items"] == 0 and report["n_cases"] == 0
    assert all(report[m] is None for m in JUDGE_METRICS)
    assert set(report["undefined"]) == set(JUDGE_METRICS)
    assert set(report["undefined"].values()) == {"no claim has both a gold and a judge label (0/0)"}
    assert report["confusion"] == {g: {j: 0 for j in LABELS} for g in LABELS}
    assert report["ci95"] == {m: None for m in JUDGE_METRICS}
    assert report["indicative"] == sorted(JUDGE_METRICS)
    assert json.dumps(report, allow_nan=False)


def test_the_report_is_plain_json_with_the_documented_keys():
    report = score_judge(*random_claims(300, 1, n_cases=90), n_bootstrap=200)
    assert plain_json(report)
    json.dumps(report, allow_nan=False)
    assert set(report) >= {"n_items", "n_cases", "percent_agreement", "cohen_kappa", "confusion",
                           "false_pass_rate", "false_fail_rate", "denominators", "indicative", "ci95",
                           "ci95_analytic", "undefined", "bootstrap_undefined", "ci95_missing"}
    for key in ("denominators", "ci95", "ci95_analytic"):
        assert list(report[key]) == list(JUDGE_METRICS)


@pytest.mark.parametrize("wrap", [list, np.array, lambda v: pd.Series(v, index=range(100, 100 + len(v)))],
                         ids=["list", "numpy", "series with another index"])
def test_lists_arrays_and_series_give_the_same_report(wrap):
    cases, gold, judge = random_claims(200, 2, n_cases=60)
    expected = score_judge(cases, gold, judge, n_bootstrap=200, seed=5)
    assert score_judge(wrap(cases), wrap(gold), wrap(judge), n_bootstrap=200, seed=5) == expected


def test_claim_order_and_case_names_change_nothing_not_even_the_intervals():
    cases, gold, judge = random_claims(300, 3, n_cases=80)
    order = np.random.default_rng(0).permutation(300)
    renamed = [f"other-{c}" for c in cases]
    expected = score_judge(cases, gold, judge, n_bootstrap=300, seed=9)
    shuffled = score_judge([renamed[k] for k in order], [gold[k] for k in order], [judge[k] for k in order],
                           n_bootstrap=300, seed=9)
    assert shuffled == expected


# ---------------------------------------------------------------------------------------------
# Against scikit-learn and statsmodels


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_and_percent_agreement_equal_scikit_learn(seed):
    cases, gold, judge = random_claims(40 + 30 * seed, seed, copy=0.2 + 0.1 * seed)
    report = score_judge(cases, gold, judge, n_bootstrap=0)
    assert report["cohen_kappa"] == pytest.approx(cohen_kappa_score(gold, judge, labels=list(LABELS)), abs=1e-12)
    assert report["percent_agreement"] == pytest.approx(np.mean(np.array(gold) == np.array(judge)), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_analytic_intervals_equal_statsmodels_wilson_and_kappa(seed):
    cases, gold, judge = random_claims(60 + 50 * seed, 10 + seed, copy=0.5)
    report = score_judge(cases, gold, judge, n_bootstrap=0)
    gold, judge = np.array(gold), np.array(judge)
    counts = {"percent_agreement": ((gold == judge).sum(), len(gold)),
              "false_pass_rate": (((gold != S) & (judge == S)).sum(), (gold != S).sum()),
              "false_fail_rate": (((gold == S) & (judge != S)).sum(), (gold == S).sum())}
    for metric, (k, n) in counts.items():
        assert report["ci95_analytic"][metric] == pytest.approx(list(proportion_confint(k, n, method="wilson")), abs=1e-12)
        assert report[metric] == pytest.approx(k / n, abs=1e-12)
    table = pd.crosstab(pd.Categorical(gold, LABELS), pd.Categorical(judge, LABELS), dropna=False).to_numpy()
    result = cohens_kappa(table)
    assert report["ci95_analytic"]["cohen_kappa"] == pytest.approx(
        [max(-1.0, result.kappa_low), min(1.0, result.kappa_upp)], abs=1e-12)


def test_wilson_gives_newcombes_published_intervals():
    """Newcombe (1998), "Two-sided confidence intervals for the single proportion", Statist. Med. 17,
    Table I, method 3 (Wilson): 81/263 -> 0.2553-0.3662, 15/148 -> 0.0624-0.1605, 0/20 -> 0-0.1611,
    1/29 -> 0.0061-0.1718. Built as judges whose false pass rate has those counts."""
    for k, n, low, high in ((81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
                            (1, 29, 0.0061, 0.1718)):
        report = score_judge(*claims_of({(C, S): k, (C, C): n - k, (S, S): 1}), n_bootstrap=0)
        assert report["ci95_analytic"]["false_pass_rate"] == pytest.approx([low, high], abs=5e-5)


def test_no_large_sample_kappa_interval_from_a_handful_of_claims():
    report = score_judge(*claims_of({(S, S): 3, (C, C): 3, (S, C): 2}), n_bootstrap=0)  # 8 claims
    assert report["cohen_kappa"] is not None and report["ci95_analytic"]["cohen_kappa"] is None
    assert report["ci95_analytic"]["percent_agreement"] == pytest.approx(
        list(proportion_confint(6, 8, method="wilson")))  # Wilson holds at small n


# ---------------------------------------------------------------------------------------------
# The case-level bootstrap


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others():
    claims = random_claims(400, 4, n_cases=120)
    first = score_judge(*claims, n_bootstrap=500, seed=7)
    assert score_judge(*claims, n_bootstrap=500, seed=7)["ci95"] == first["ci95"]
    assert score_judge(*claims, n_bootstrap=500, seed=8)["ci95"] != first["ci95"]


def test_every_interval_holds_its_estimate():
    report = score_judge(*random_claims(500, 5, n_cases=150), n_bootstrap=1000)
    for metric in JUDGE_METRICS:
        for key in ("ci95", "ci95_analytic"):
            low, high = report[key][metric]
            assert low <= report[metric] <= high, (key, metric)


def test_no_bootstrap_gives_no_bootstrap_intervals_and_says_why():
    report = score_judge(*claims_of(HAND), n_bootstrap=0)
    assert report["ci95"] == {m: None for m in JUDGE_METRICS}
    assert report["ci95_missing"] == {m: "no bootstrap resamples were drawn" for m in JUDGE_METRICS}
    assert report["bootstrap_undefined"] == {}
    assert all(report["ci95_analytic"][m] is not None for m in ("percent_agreement", "false_pass_rate",
                                                                "false_fail_rate"))


def test_one_case_gives_no_bootstrap_interval():
    report = score_judge(*claims_of(HAND, per_case=100), n_bootstrap=200)
    assert report["n_cases"] == 1
    assert report["ci95"] == {m: None for m in JUDGE_METRICS}
    assert set(report["ci95_missing"].values()) == {
        "all the claims are in one case, and resampling cases needs two or more"}


def test_resamples_where_a_rate_is_undefined_are_counted_and_too_many_give_no_interval():
    # One gold-support claim in 40: most resamples of 40 cases hold it (1 - (39/40)^40 = 64%),
    # the others leave the false fail rate 0/0, too many for an interval (over 5%).
    cases, gold, judge = claims_of({(S, C): 1, (C, C): 39})
    report = score_judge(cases, gold, judge, n_bootstrap=1000, seed=1)
    undefined = report["bootstrap_undefined"]["false_fail_rate"]
    assert 300 < undefined < 420  # (39/40)^40 = 36.3% of 1,000
    assert report["ci95"]["false_fail_rate"] is None
    assert report["ci95_missing"]["false_fail_rate"].startswith(f"the coefficient is undefined (0/0) in {undefined / 10:.0f}%")
    assert report["bootstrap_undefined"]["percent_agreement"] == 0
    assert report["ci95"]["percent_agreement"] is not None


def kappa_and_rates(gold: np.ndarray, judge: np.ndarray) -> dict[str, float]:
    """The four figures of index arrays (0 = support), computed directly, NaN when 0/0."""
    with np.errstate(all="ignore"):
        p_o = np.mean(gold == judge)
        p_e = sum(np.mean(gold == k) * np.mean(judge == k) for k in range(3))
        return {"percent_agreement": p_o, "cohen_kappa": (p_o - p_e) / (1 - p_e),
                "false_pass_rate": np.sum((gold != 0) & (judge == 0)) / np.sum(gold != 0),
                "false_fail_rate": np.sum((gold == 0) & (judge != 0)) / np.sum(gold == 0)}


def index_bootstrap(gold: np.ndarray, judge: np.ndarray, groups: list[np.ndarray], n_bootstrap: int, seed: int):
    """Percentile intervals of the four figures over resamples of `groups` (arrays of claim
    positions) drawn by index with replacement: the textbook bootstrap, written out."""
    rng = np.random.default_rng(seed)
    values = {m: [] for m in JUDGE_METRICS}
    for _ in range(n_bootstrap):
        rows = np.concatenate([groups[k] for k in rng.integers(0, len(groups), len(groups))])
        for metric, value in kappa_and_rates(gold[rows], judge[rows]).items():
            values[metric].append(value)
    return {m: np.nanpercentile(v, [2.5, 97.5]) for m, v in values.items()}


def test_with_one_claim_per_case_it_matches_a_plain_claim_resampling():
    cases, gold, judge = random_claims(400, 6, copy=0.6)
    report = score_judge(cases, gold, judge, n_bootstrap=2000, seed=2)
    g, j = (np.array([LABELS.index(x) for x in labels]) for labels in (gold, judge))
    naive = index_bootstrap(g, j, [np.array([k]) for k in range(400)], 2000, seed=3)
    for metric in JUDGE_METRICS:
        low, high = naive[metric]
        assert report["ci95"][metric] == pytest.approx([low, high], abs=0.1 * (high - low)), metric


def test_with_several_claims_per_case_it_matches_resampling_case_indices():
    cases, gold, judge = random_claims(600, 7, copy=0.5, n_cases=150)
    report = score_judge(cases, gold, judge, n_bootstrap=2000, seed=4)
    g, j = (np.array([LABELS.index(x) for x in labels]) for labels in (gold, judge))
    codes, _ = pd.factorize(np.array(cases))
    groups = [np.flatnonzero(codes == k) for k in range(codes.max() + 1)]
    naive = index_bootstrap(g, j, groups, 2000, seed=5)
    for metric in JUDGE_METRICS:
        low, high = naive[metric]
        assert report["ci95"][metric] == pytest.approx([low, high], abs=0.1 * (high - low)), metric


def test_strongly_clustered_cases_give_wider_intervals_than_resampling_claims():
    """40 cases of 10 claims, every claim of a case with the case's own (gold, judge) pair: the
    claims of a case carry one case's worth of information. Resampling claims would treat them
    as 400 independent claims; resampling cases gives the interval of 40 (about sqrt(10) wider)."""
    rng = np.random.default_rng(8)
    pair_gold = rng.integers(0, 3, 40)
    pair_judge = np.where(rng.random(40) < 0.6, pair_gold, rng.integers(0, 3, 40))
    gold = [LABELS[k] for k in np.repeat(pair_gold, 10)]
    judge = [LABELS[k] for k in np.repeat(pair_judge, 10)]
    by_case = score_judge([f"case{k // 10}" for k in range(400)], gold, judge, n_bootstrap=1000, seed=1)
    by_claim = score_judge([f"claim{k}" for k in range(400)], gold, judge, n_bootstrap=1000, seed=1)
    for metric in ("percent_agreement", "cohen_kappa", "false_pass_rate"):
        case_width = np.diff(by_case["ci95"][metric])[0]
        claim_width = np.diff(by_claim["ci95"][metric])[0]
        assert case_width > 2 * claim_width, metric
    assert by_case[JUDGE_METRICS[0]] == by_claim[JUDGE_METRICS[0]]


# ---------------------------------------------------------------------------------------------
# Refused input


def _refusal(call) -> CalibrationInputError:
    with pytest.raises(CalibrationInputError) as caught:
        call()
    assert caught.value.key in MESSAGES  # the app can say it in Japanese
    assert isinstance(caught.value, ValueError)
    return caught.value


def test_unequal_lengths_are_refused():
    error = _refusal(lambda: score_judge(["a", "b"], [S, S], [S]))
    assert str(error) == "give as many case ids, gold labels and judge labels: 2, 2 and 1 were given"


@pytest.mark.parametrize("gold, judge, words", [
    ([S, "Support", C], [S, S, C], "the gold label 'Support' at row 2 (case 'k2')"),
    ([S, S, C], [S, S, " contradict"], "the judge label ' contradict' at row 3 (case 'k3')"),
    ([S, None, C], [S, S, C], "the gold label None at row 2 (case 'k2')"),
    ([S, S, C], [S, S, float("nan")], "the judge label None at row 3 (case 'k3')"),
])
def test_a_label_outside_the_categories_is_named_with_its_row_and_case(gold, judge, words):
    error = _refusal(lambda: score_judge(["k1", "k2", "k3"], gold, judge, n_bootstrap=0))
    assert str(error).startswith(words)
    assert str(error).endswith("is not one of the declared categories (support, contradict, insufficient)")


@pytest.mark.parametrize("cases", [["a", None, "b"], ["a", "  ", "b"], ["a", float("nan"), "b"]])
def test_a_missing_or_blank_case_id_is_named_with_its_row(cases):
    error = _refusal(lambda: score_judge(cases, [S, S, S], [S, S, S], n_bootstrap=0))
    assert str(error) == "the case id at row 2 is missing or blank; give every claim its case"


@pytest.mark.parametrize("categories", [(S,), (S, S, C), ()])
def test_categories_must_be_two_or_more_and_distinct(categories):
    _refusal(lambda: score_judge(["a"], [S], [S], categories=categories))


def test_the_passing_label_must_be_declared_and_bootstrap_counts_are_checked():
    assert "'pass'" in str(_refusal(lambda: score_judge(["a"], [S], [S], positive="pass")))
    assert "at least 100" in str(_refusal(lambda: score_judge(["a"], [S], [S], n_bootstrap=50)))
    _refusal(lambda: score_judge(["a"], [S], [S], n_bootstrap=-1))


# ---------------------------------------------------------------------------------------------
# The corrected (PPI++) rate


def test_a_hand_computed_ppi_estimate():
    gold = [1, 1, 0, 0]
    judge_gold = [1, 1, 1, 0]
    judge_rest = [1, 1, 1, 1]
    out = corrected_rate(judge_rest, judge_gold, gold)
    # Cov(Y, f) over the 4 gold claims (divided by n): mean(Yf) - mean(Y) mean(f) = 2/4 - 1/2 * 3/4 = 1/8.
    # f over all 8 claims: seven 1s and a 0, mean 7/8, variance (7 (1/8)^2 + (7/8)^2) / 7 = 1/8.
    # lambda = (1/8) / ((1 + 4/4) * 1/8) = 1/2.
    assert out["lambda"] == pytest.approx(0.5)
    # estimate = 1/2 * mean(f_rest) + mean(Y - f/2) = 1/2 * 1 + (1/2 - 1/2 * 3/4) = 0.625.
    assert out["estimate"] == pytest.approx(0.625)
    # Var(f_rest / 2) = 0; Y - f/2 = (1/2, 1/2, -1/2, 0): mean 1/8, variance 0.6875/4 = 0.171875.
    # se^2 = 0 / 4 + 0.171875 / 4.
    se = np.sqrt(0.171875 / 4)
    assert out["standard_error"] == pytest.approx(se)
    assert out["ci95"] == pytest.approx([0.625 - 1.959964 * se, min(1.0, 0.625 + 1.959964 * se)], abs=1e-6)
    # naive: the judge says support on 3 + 4 = 7 of 8; the gold on 2 of 4.
    assert out["naive_judge_rate"] == pytest.approx(7 / 8)
    assert out["gold_only_rate"] == pytest.approx(0.5)
    assert out["naive_judge_ci95"] == pytest.approx(list(proportion_confint(7, 8, method="wilson")))
    assert out["gold_only_ci95"] == pytest.approx(list(proportion_confint(2, 4, method="wilson")))
    assert (out["n_labeled"], out["n_unlabeled"], out["confidence"]) == (4, 4, 0.95)
    assert out["undefined"] == {}


def biased_judge(n: int, big_n: int, seed: int, rate: float = 0.6, hit: float = 0.9, false_pass: float = 0.3):
    """(judge on the N others, judge on the n gold, gold) 0/1 arrays: claims support with
    probability `rate`; the judge says support on a support claim with probability `hit`, on
    another with `false_pass` (so its rate is biased: 0.6*0.9 + 0.4*0.3 = 0.66 by default)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n + big_n) < rate
    said = np.where(truth, rng.random(n + big_n) < hit, rng.random(n + big_n) < false_pass)
    return said[n:].astype(int), said[:n].astype(int), truth[:n].astype(int)


@pytest.mark.parametrize("n, big_n, seed, hit, false_pass", [
    (50, 500, 0, 0.9, 0.3), (200, 3000, 1, 0.95, 0.1), (30, 60, 2, 0.6, 0.5), (120, 1000, 3, 0.5, 0.5),
])
def test_the_ppi_estimate_and_interval_equal_ppi_py_with_power_tuning(n, big_n, seed, hit, false_pass):
    ppi_py = need_module("ppi_py", "ppi-python")
    unlabeled, labeled, gold = biased_judge(n, big_n, seed, hit=hit, false_pass=false_pass)
    out = corrected_rate(unlabeled, labeled, gold)
    y, yhat, yhat_u = (a.astype(float) for a in (gold, labeled, unlabeled))
    estimate = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None)))
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=None))
    assert out["estimate"] == pytest.approx(estimate, abs=1e-12)
    assert out["ci95"] == pytest.approx([max(0.0, low), min(1.0, high)], abs=1e-9)
    # the lambda found, put back: ppi_py with that fixed lambda gives the same estimate
    fixed = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=out["lambda"])))
    assert fixed == pytest.approx(estimate, abs=1e-12)
    assert 0.0 <= out["lambda"] <= 1.0


def test_a_judge_unrelated_to_the_gold_gets_lambda_zero_and_the_gold_only_rate():
    # Y = (1, 0, 1, 0), f = (1, 1, 0, 0): Cov = 1/4 - 1/2 * 1/2 = 0, so lambda = 0.
    out = corrected_rate([1, 0, 1, 1], [1, 1, 0, 0], [1, 0, 1, 0])
    assert out["lambda"] == 0.0
    assert out["estimate"] == pytest.approx(0.5)
    # se = sqrt(Var(Y) / n) = sqrt(1/4 / 4) = 1/4
    assert out["standard_error"] == pytest.approx(0.25)


def test_the_ppi_interval_covers_the_true_rate_where_the_naive_judge_rate_does_not():
    """200 seeded repetitions of a judge that says support too often (0.66 for a true 0.6): the
    95% PPI interval covers 0.6 in about 95% of them; the judge's own rate almost never."""
    covered = naive_covered = 0
    widths, gold_widths = [], []
    for seed in range(200):
        out = corrected_rate(*biased_judge(150, 3000, 1000 + seed))
        low, high = out["ci95"]
        covered += low <= 0.6 <= high
        naive_low, naive_high = out["naive_judge_ci95"]
        naive_covered += naive_low <= 0.6 <= naive_high
        widths.append(high - low)
        gold_widths.append(out["gold_only_ci95"][1] - out["gold_only_ci95"][0])
    assert covered >= 180  # at least 90%
    assert naive_covered <= 20
    assert np.mean(widths) < np.mean(gold_widths)  # the judge's labels narrow the gold-only interval


def test_no_gold_claims_or_no_other_claims_leave_the_estimate_undefined():
    out = corrected_rate([1, 0, 1], [], [])
    assert out["estimate"] is None and out["ci95"] is None
    assert out["undefined"] == {"estimate": "no gold claim has a judge label (n = 0): nothing corrects the judge"}
    assert out["naive_judge_rate"] == pytest.approx(2 / 3) and out["gold_only_rate"] is None
    out = corrected_rate([], [1, 0], [1, 1])
    assert out["estimate"] is None
    assert out["undefined"]["estimate"].startswith("the judge labeled no claim outside the gold (N = 0)")
    assert out["gold_only_rate"] == 1.0 and out["gold_only_ci95"] is not None


def test_a_constant_judge_leaves_lambda_undefined_and_gives_the_gold_only_rate():
    out = corrected_rate([1] * 50, [1] * 10, [1, 0] * 5)
    assert out["lambda"] is None and "lambda is 0/0" in out["undefined"]["lambda"]
    assert out["estimate"] == pytest.approx(0.5)
    assert out["standard_error"] == pytest.approx(np.sqrt(0.25 / 10))


def test_zero_variance_gives_no_interval():
    out = corrected_rate([1] * 50, [1] * 10, [1] * 10)
    assert out["estimate"] == 1.0 and out["ci95"] is None
    assert out["undefined"]["ci95"].startswith("the estimate's variance is zero")
    assert recognize(out["undefined"]["ci95"], "msg.calibration.").key == "msg.calibration.zero_variance"


def test_booleans_arrays_and_series_give_the_same_estimate_and_other_values_are_refused():
    unlabeled, labeled, gold = biased_judge(40, 200, 5)
    expected = corrected_rate(unlabeled, labeled, gold)
    assert corrected_rate(unlabeled.astype(bool), list(labeled.astype(bool)), pd.Series(gold, index=range(7, 47))) == expected
    assert "row 2 holds 2" in str(_refusal(lambda: corrected_rate([1, 2], [1], [1])))
    assert "row 1 holds '1'" in str(_refusal(lambda: corrected_rate([1], ["1"], [1])))
    assert "row 1 holds nan" in str(_refusal(lambda: corrected_rate([1], [1], [float("nan")])))
    assert "1 and 2 were given" in str(_refusal(lambda: corrected_rate([1], [1], [1, 0])))
    _refusal(lambda: corrected_rate([1], [1], [1], alpha=1.5))


def test_another_alpha_gives_a_narrower_interval_of_its_confidence():
    data = biased_judge(100, 1000, 6)
    wide, narrow = corrected_rate(*data), corrected_rate(*data, alpha=0.2)
    assert narrow["confidence"] == pytest.approx(0.8)
    assert wide["ci95"][0] < narrow["ci95"][0] < narrow["ci95"][1] < wide["ci95"][1]
    assert narrow["estimate"] == wide["estimate"]


# ---------------------------------------------------------------------------------------------
# The slice mix of the gold claims against the judged-only ones


def test_a_gold_set_from_one_slice_differs_from_a_mixed_judged_set():
    out = slice_mix_differs(["normal"] * 80, ["normal"] * 500 + ["paraphrase"] * 500)
    assert out["differs"] is True
    assert out["total_variation"] == pytest.approx(0.5)  # (|1 - 1/2| + |0 - 1/2|) / 2
    assert out["labeled_share"] == {"normal": 1.0, "paraphrase": 0.0}
    assert out["unlabeled_share"] == {"normal": 0.5, "paraphrase": 0.5}


def test_the_chi_square_is_pearsons_without_correction():
    # 2x2 table (20, 10 / 30, 40): expected (15, 15 / 35, 35); chi2 = 25/15 + 25/15 + 25/35 + 25/35 = 4.7619.
    out = slice_mix_differs(["a"] * 20 + ["b"] * 10, ["a"] * 30 + ["b"] * 40)
    assert out["chi2"] == pytest.approx(25 / 15 * 2 + 25 / 35 * 2)
    assert out["dof"] == 1 and out["min_expected"] == 15
    assert out["p_value"] == pytest.approx(chi2_contingency([[20, 10], [30, 40]], correction=False).pvalue)
    # |20/30 - 30/70| = 0.238 > 0.1 but p = 0.029 is not under 0.01: not flagged
    assert out["differs"] is False


def test_a_random_sample_of_the_judged_claims_does_not_differ():
    rng = np.random.default_rng(0)
    judged = rng.choice(["normal", "paraphrase", "permission", "updated_document"], p=[0.5, 0.2, 0.2, 0.1], size=5000)
    flagged = sum(slice_mix_differs(rng.choice(judged, 200), judged)["differs"] for _ in range(50))
    assert flagged <= 2


def test_a_tiny_but_significant_difference_among_many_claims_is_not_flagged():
    out = slice_mix_differs(["a"] * 52_000 + ["b"] * 48_000, ["a"] * 50_000 + ["b"] * 50_000)
    assert out["p_value"] < 1e-10 and out["total_variation"] == pytest.approx(0.02)
    assert out["differs"] is False


def test_a_large_difference_in_a_tiny_gold_set_is_not_flagged():
    out = slice_mix_differs(["a", "a", "a", "b"], ["a"] * 500 + ["b"] * 500)
    assert out["total_variation"] == pytest.approx(0.25) and out["p_value"] > 0.01
    assert out["differs"] is False


def test_one_slice_everywhere_is_the_same_mix_and_an_empty_side_cannot_be_compared():
    out = slice_mix_differs(["normal"] * 3, ["normal"] * 9)
    assert (out["differs"], out["p_value"], out["total_variation"]) == (False, 1.0, 0.0)
    empty = slice_mix_differs([], ["normal"] * 9)
    assert empty["differs"] is None and empty["labeled_share"] == {}
    assert empty["undefined"]["differs"].startswith("the gold claims or the judged-only claims are none")
    assert "row 2 of unlabeled_slices" in str(_refusal(lambda: slice_mix_differs(["a"], ["a", None])))
    assert json.dumps(out, allow_nan=False) and plain_json(out)


def test_the_corrected_rate_s_intervals_resample_whole_cases_when_given_the_cases():
    """Five claims per case sharing their labels: a case-level interval is about sqrt(5) times the
    claim-level one, which would hold only for independent claims."""
    rng = np.random.default_rng(0)
    gold = np.repeat(rng.random(400) < 0.4, 5).astype(int)
    judge = np.where(rng.random(gold.size) < 0.8, gold, 1 - gold)
    judged_only = np.repeat(rng.random(800) < 0.4, 5).astype(int)
    gold_cases, other_cases = np.repeat(np.arange(400), 5), np.repeat(np.arange(800) + 10_000, 5)
    claims = corrected_rate(judged_only, judge, gold)
    cases = corrected_rate(judged_only, judge, gold, unlabeled_cases=other_cases, labeled_cases=gold_cases,
                           n_bootstrap=1000, seed=0)
    assert cases["estimate"] == claims["estimate"] and cases["interval_unit"] == "case"
    assert cases["ci95_analytic"] == claims["ci95"] and cases["gold_only_ci95_analytic"] == claims["gold_only_ci95"]
    width = lambda interval: interval[1] - interval[0]  # noqa: E731
    assert width(cases["ci95"]) > 1.7 * width(claims["ci95"])
    assert width(cases["gold_only_ci95"]) > 1.7 * width(claims["gold_only_ci95"])
    assert cases["ci95"][0] < cases["estimate"] < cases["ci95"][1]
    again = corrected_rate(judged_only, judge, gold, unlabeled_cases=other_cases, labeled_cases=gold_cases,
                           n_bootstrap=1000, seed=0)
    assert again["ci95"] == cases["ci95"]


def test_with_one_claim_per_case_the_case_level_interval_is_close_to_the_claim_level_one():
    rng = np.random.default_rng(1)
    gold = (rng.random(2000) < 0.3).astype(int)
    judge = np.where(rng.random(gold.size) < 0.85, gold, 1 - gold)
    judged_only = (rng.random(6000) < 0.3).astype(int)
    claims = corrected_rate(judged_only, judge, gold)
    cases = corrected_rate(judged_only, judge, gold, unlabeled_cases=np.arange(6000) + 10_000,
                           labeled_cases=np.arange(2000), n_bootstrap=2000, seed=0)
    assert abs((cases["ci95"][1] - cases["ci95"][0]) / (claims["ci95"][1] - claims["ci95"][0]) - 1) < 0.15


def test_a_bootstrap_interval_of_zero_width_is_withheld_with_its_reason():
    """No false fail in 12 supported claims: every resample gives 0; [0, 0] would read as
    certainty. Wilson's interval stays."""
    cases = [f"c{i}" for i in range(24)]
    gold = ["support"] * 12 + ["contradict"] * 12
    judge = ["support"] * 12 + ["contradict"] * 6 + ["support"] * 6
    out = score_judge(cases, gold, judge, n_bootstrap=1000, seed=0)
    assert out["false_fail_rate"] == 0.0
    assert out["ci95"]["false_fail_rate"] is None
    assert "every resample gives 0" in out["ci95_missing"]["false_fail_rate"]
    low, high = out["ci95_analytic"]["false_fail_rate"]
    assert low == 0.0 and high > 0.2
    assert out["ci95"]["false_pass_rate"] is not None


def test_a_rate_over_many_claims_of_few_cases_is_indicative():
    """40 claims, but only 2 cases behind the false fail rate: indicative, like 2 claims."""
    cases = ["a"] * 20 + ["b"] * 20 + [f"n{i}" for i in range(40)]
    gold = ["support"] * 40 + ["insufficient"] * 40
    judge = ["support"] * 30 + ["insufficient"] * 10 + ["insufficient"] * 40
    out = score_judge(cases, gold, judge, n_bootstrap=0)
    assert out["denominators"]["false_fail_rate"] == 40 and out["denominator_cases"]["false_fail_rate"] == 2
    assert "false_fail_rate" in out["indicative"] and "false_pass_rate" not in out["indicative"]
