"""annotator.run_compare: a candidate run against its baseline. Fixed and regressed cases on a
hand table, the paired bootstrap, the gate's three decisions with their reasons and exit codes,
and the tests against their references (test-time only): McNemar's exact test against
statsmodels, the one-sided regression test against scipy's binomtest, Holm against statsmodels'
multipletests, on random inputs."""

from __future__ import annotations

import json
import random

import pytest

from annotator.messages import recognize
from annotator.run_compare import EXACT_UP_TO, compare_runs, gate_exit_code, half_binomial_cdf, holm, mcnemar_exact, regression_p
from annotator.run_scoring import RUN_FIGURES, GoldCase, score_case
from tests.conftest import need_module

COMPARE_KEYS = ["n_common", "n_only_base", "n_only_candidate", "fixed", "regressed", "fix_rate", "regression_rate",
                "pass_rate_base", "pass_rate_candidate", "pass_rate_difference", "ci95", "mcnemar_p", "by_slice",
                "metric_deltas", "blockers", "n_blockers_only_candidate", "n_blockers_other_cases", "indicative", "decision", "reasons", "undefined", "margin",
                "alpha", "n_bootstrap", "seed"]


def case(case_id: str, passed: bool, slice_: str = "normal", *, forbidden: bool = False) -> dict:
    """A scored case that passed (its relevant passage first) or failed retrieval (missed it);
    `forbidden`: it also fetched the forbidden passage p-secret (a blocker)."""
    gold = GoldCase(case_id, slice_, "holdout", ("p1",), frozenset({"p-secret"}))
    retrieved = (["p1"] if passed else ["p9"]) + (["p-secret"] if forbidden else [])
    return score_case(gold, retrieved=retrieved, behavior="answer", k=1)


def runs(table: list[tuple[str, str, bool, bool]]) -> tuple[list[dict], list[dict]]:
    """(base, candidate) from rows (case id, slice, passed in base, passed in candidate)."""
    return ([case(i, b, s) for i, s, b, _ in table], [case(i, c, s) for i, s, _, c in table])


HAND = [  # case, slice, base passed, candidate passed
    ("a", "normal", False, True),   # fixed
    ("b", "normal", True, True),
    ("c", "permission", True, False),  # regressed
    ("d", "permission", False, False),
    ("e", "normal", False, True),   # fixed
    ("f", "paraphrase", True, True),
]


def test_fixed_and_regressed_cases_on_a_hand_table():
    base, candidate = runs(HAND)
    base.append(case("only-base", True))
    candidate.insert(0, case("only-candidate", False))
    out = compare_runs(base, candidate, n_bootstrap=500)
    assert list(out) == COMPARE_KEYS
    assert (out["n_common"], out["n_only_base"], out["n_only_candidate"]) == (6, 1, 1)
    assert (out["fixed"], out["regressed"]) == (["a", "e"], ["c"])
    assert (out["fix_rate"], out["regression_rate"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert (out["pass_rate_base"], out["pass_rate_candidate"]) == (0.5, pytest.approx(4 / 6))
    assert out["pass_rate_difference"] == pytest.approx(1 / 6)
    assert out["mcnemar_p"] == pytest.approx(1.0)  # 2 against 1: min(1, 2 * P(X <= 1), X ~ Bin(3, 1/2)) = 1
    assert out["by_slice"]["normal"] == {"n": 3, "fixed": ["a", "e"], "regressed": [], "fix_rate": 1.0,
                                         "regression_rate": 0.0, "regression_p": 1.0, "regression_p_holm": 1.0,
                                         "regresses": False}
    assert out["by_slice"]["permission"] | {"regression_p_holm": None} == {
        "n": 2, "fixed": [], "regressed": ["c"], "fix_rate": 0.0, "regression_rate": 1.0, "regression_p": 0.5,
        "regression_p_holm": None, "regresses": False}
    assert list(out["by_slice"]) == ["normal", "paraphrase", "permission"]
    assert out["by_slice"]["paraphrase"]["fix_rate"] is None and out["by_slice"]["paraphrase"]["regression_p"] == 1.0
    assert out["metric_deltas"]["pass_rate"]["delta"] == out["pass_rate_difference"]
    assert out["metric_deltas"]["pass_rate"]["ci95"] == out["ci95"]["pass_rate_difference"]
    assert list(out["metric_deltas"]) == list(RUN_FIGURES)
    assert out["metric_deltas"]["mean_recall_at_k"] == {"base": 0.5, "candidate": pytest.approx(4 / 6),
                                                        "delta": pytest.approx(1 / 6), "ci95": out["ci95"]["pass_rate_difference"]}
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_the_paired_interval_resamples_the_same_cases_in_both_runs():
    rng = random.Random(11)
    table = [(f"c{i}", rng.choice(["normal", "permission"]), rng.random() < 0.6, rng.random() < 0.7) for i in range(300)]
    base, candidate = runs(table)
    out = compare_runs(base, candidate, n_bootstrap=500, seed=3)
    low, high = out["ci95"]["pass_rate_difference"]
    assert low <= out["pass_rate_difference"] <= high
    assert compare_runs(base, candidate, n_bootstrap=500, seed=3) == out
    same = compare_runs(base, base, n_bootstrap=500)  # paired: a run against itself never differs in a resample
    assert same["ci95"]["pass_rate_difference"] == [0.0, 0.0]
    assert (same["fixed"], same["regressed"], same["mcnemar_p"], same["decision"]) == ([], [], 1.0, "ship")


def test_a_blocker_blocks_even_when_the_candidate_is_better_and_names_its_case():
    base, candidate = runs([(f"c{i}", "normal", i % 2 == 0, True) for i in range(40)])
    candidate[5] = case("c5", True, forbidden=True)
    candidate.append(case("new", True, forbidden=True))  # only the candidate has it: it blocks all the same
    out = compare_runs(base, candidate, n_bootstrap=500)
    assert out["decision"] == "blocked" and gate_exit_code(out["decision"]) == 1
    assert [b["case_id"] for b in out["blockers"]] == ["c5", "new"] and out["n_blockers_only_candidate"] == 1
    assert out["reasons"][0] == ("2 blockers: case c5 retrieved forbidden passage p-secret; "
                                 "case new retrieved forbidden passage p-secret")
    assert recognize(out["reasons"][1], "msg.run.reason.").key == "msg.run.reason.blockers_only_candidate"
    assert out["fixed"] == [f"c{i}" for i in range(1, 40, 2) if i != 5]


def test_the_gate_holds_when_the_pass_rate_may_have_dropped_by_more_than_the_margin():
    table = [(f"c{i}", f"s{i % 4}", True, i % 10 != 0) for i in range(40)]  # 4 regressions over 4 slices, no fix
    base, candidate = runs(table)
    out = compare_runs(base, candidate, n_bootstrap=1000)
    assert out["pass_rate_difference"] == pytest.approx(-0.1) and out["ci95"]["pass_rate_difference"][0] < 0
    assert out["decision"] == "hold" and gate_exit_code("hold") == 3
    assert not any(s["regresses"] for s in out["by_slice"].values())
    low, high = out["ci95"]["pass_rate_difference"]
    assert out["reasons"][0] == (f"the pass rate's change is -0.100, 95% interval [{low:.3f}, {high:.3f}]: its lower "
                                 "bound is below 0 (no margin)")
    relaxed = compare_runs(base, candidate, n_bootstrap=1000, margin=0.5)
    assert relaxed["decision"] == "ship" and gate_exit_code("ship") == 0
    assert recognize(relaxed["reasons"][0], "msg.run.reason.").key == "msg.run.reason.interval_above"


def test_the_gate_holds_when_a_slice_regresses_after_holm():
    table = [(f"n{i}", "normal", i % 2 == 0, True) for i in range(60)]   # 30 fixes: the pass rate rises
    table += [(f"p{i}", "permission", True, False) for i in range(8)]   # 8 regressions, no fix
    base, candidate = runs(table)
    out = compare_runs(base, candidate, n_bootstrap=1000)
    assert out["ci95"]["pass_rate_difference"][0] > 0
    permission = out["by_slice"]["permission"]
    assert permission["regression_p"] == pytest.approx(0.5 ** 8)
    assert permission["regression_p_holm"] == pytest.approx(2 * 0.5 ** 8) and permission["regresses"]
    assert out["decision"] == "hold"
    assert out["reasons"][-1] == "slice permission regresses: 8 regressions, 0 fixes, Holm p = 0.00781"


def test_no_common_case_or_no_resample_holds_the_gate_and_says_why():
    base, candidate = runs(HAND)
    apart = compare_runs(base, [case("zz", True)], n_bootstrap=500)
    assert (apart["n_common"], apart["pass_rate_difference"], apart["fix_rate"], apart["mcnemar_p"]) == (0, None, None, 1.0)
    assert apart["decision"] == "hold"
    assert apart["undefined"]["pass_rate_difference"] == "the two runs have no case in common"
    assert any("the two runs have no case in common" in reason for reason in apart["reasons"])
    unsampled = compare_runs(base, candidate, n_bootstrap=0)
    assert unsampled["decision"] == "hold" and unsampled["ci95"]["pass_rate_difference"] is None
    assert recognize(unsampled["reasons"][0], "msg.run.reason.").key == "msg.run.reason.no_interval"


def test_compare_refuses_a_case_twice_and_figures_out_of_range():
    base, candidate = runs(HAND)
    with pytest.raises(ValueError, match="twice"):
        compare_runs(base + base[:1], candidate)
    for bad in (dict(margin=-0.1), dict(margin=float("nan")), dict(alpha=0.0), dict(alpha=1.5), dict(n_bootstrap=10)):
        with pytest.raises(ValueError):
            compare_runs(base, candidate, **bad)
    with pytest.raises(ValueError, match="decision"):
        gate_exit_code("maybe")


# --- the tests against their references ----------------------------------------------------------


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(7, 2) == mcnemar_exact(2, 7) == pytest.approx(2 * (1 + 9 + 36) / 512)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_mcnemar_exact_equals_statsmodels_on_random_counts():
    contingency = need_module("statsmodels.stats.contingency_tables", "statsmodels")
    rng = random.Random(1947)
    for _ in range(200):
        b, c = rng.randint(0, 60), rng.randint(0, 60)
        table = [[rng.randint(0, 50), b], [c, rng.randint(0, 50)]]
        assert mcnemar_exact(b, c) == pytest.approx(contingency.mcnemar(table, exact=True).pvalue, rel=1e-9, abs=1e-15)


def test_the_one_sided_regression_test_equals_scipy_s_binomtest():
    stats = need_module("scipy.stats", "scipy")
    rng = random.Random(8)
    assert regression_p(0, 0) == 1.0
    for _ in range(200):
        r, f = rng.randint(0, 40), rng.randint(0, 40)
        if r + f:
            assert regression_p(r, f) == pytest.approx(stats.binomtest(r, r + f, 0.5, alternative="greater").pvalue,
                                                       rel=1e-9, abs=1e-15)


def test_the_binomial_tail_equals_scipy_s_in_exact_integers_and_beyond():
    stats = need_module("scipy.stats", "scipy")
    rng = random.Random(2)
    for _ in range(300):
        n = rng.choice([rng.randint(0, 60), rng.randint(61, EXACT_UP_TO), rng.randint(EXACT_UP_TO + 1, 5 * EXACT_UP_TO)])
        m = rng.choice([rng.randint(-1, n + 1), int(n / 2 + rng.gauss(0, 2 * n ** 0.5))])
        expected = float(stats.binom.cdf(m, n, 0.5))
        assert half_binomial_cdf(m, n) == pytest.approx(expected, rel=1e-8, abs=1e-300), (m, n)


def test_holm_by_hand_and_against_statsmodels_on_random_p_values():
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03}) == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06})
    assert holm({}) == {}
    with pytest.raises(ValueError):
        holm({"a": 1.2})
    multitest = need_module("statsmodels.stats.multitest", "statsmodels")
    rng = random.Random(1979)
    for _ in range(30):  # multipletests takes about 0.07 s a call
        m = rng.randint(1, 12)
        values = [rng.choice([rng.random(), rng.random() ** 4, 0.05, 1.0]) for _ in range(m)]  # ties and ones too
        names = [f"s{i}" for i in range(m)]
        expected = multitest.multipletests(values, method="holm")[1]
        assert list(holm(dict(zip(names, values))).values()) == pytest.approx(list(expected), rel=1e-12)


def test_a_blocker_in_a_case_outside_the_compared_ones_blocks_the_change():
    """A leak in a dev case stops a change decided on the holdout: the service passes the
    candidate's other cases, which are not compared but whose blockers block."""
    base, candidate = runs(HAND)
    out = compare_runs(base, candidate, n_bootstrap=500, other_candidate_cases=[case("dev-1", False, forbidden=True)])
    assert out["decision"] == "blocked" and out["n_blockers_other_cases"] == 1
    assert [b["case_id"] for b in out["blockers"]] == ["dev-1"] and out["n_common"] == len(HAND)
    assert "1 of them in cases outside the split compared" in " ".join(out["reasons"])


def test_a_candidate_lacking_cases_the_baseline_has_is_held_not_shipped():
    """A candidate that leaves out a case it would fail must not ship on the rest."""
    base = [case(f"c{i}", True) for i in range(40)]
    candidate = [case(f"c{i}", True) for i in range(39)]  # c39 left out
    out = compare_runs(base, candidate, n_bootstrap=500)
    assert out["n_only_base"] == 1 and out["decision"] == "hold"
    assert any("the candidate lacks 1 cases the baseline has" in reason for reason in out["reasons"])
    assert compare_runs(base, base, n_bootstrap=500)["decision"] == "ship"


def test_a_comparison_of_few_cases_says_it_is_indicative():
    base, candidate = runs(HAND)
    out = compare_runs(base, candidate, n_bootstrap=500)
    assert out["indicative"] is True and any(reason.startswith("indicative only: 6 cases compared") for reason in out["reasons"])
    many = [case(f"c{i}", True) for i in range(12)]
    assert compare_runs(many, many, n_bootstrap=500)["indicative"] is False
