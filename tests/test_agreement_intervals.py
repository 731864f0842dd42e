"""The analytic intervals of annotator.agreement (Cohen's kappa with the large-sample variance of
Fleiss, Cohen & Everitt 1969; Wilson's 1927 score interval) against statsmodels, which computed
them before: the same floats, bit for bit, on many tables and on the edge cases (a release's
manifest holds them, and its bytes must not change), and no scipy or statsmodels at run time.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from annotator.agreement import (
    Z_975,
    cohen_kappa_from_confusion,
    compute_agreement,
    kappa_interval,
    kappa_variance,
    normal_quantile,
    wilson_interval,
)
from annotator.vocabulary import INDICATIVE_BELOW


def statsmodels_kappa_interval(conf):
    """The interval as the code computed it with statsmodels: the same rules for None (under
    INDICATIVE_BELOW items, kappa undefined, a NaN or zero-width interval), the same clipping."""
    conf = np.asarray(conf)
    if int(conf.sum()) < max(2, INDICATIVE_BELOW) or np.isnan(cohen_kappa_from_confusion(conf.astype(float)[None])[0]):
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cohens_kappa(conf)
    low, high = float(result.kappa_low), float(result.kappa_upp)
    if not (np.isfinite([low, high]).all() and high - low > 1e-6):
        return None
    return max(low, -1.0), min(high, 1.0)


def edge_tables():
    """Tables the rules for None and the clipping are about."""
    one_row = np.zeros((3, 3), int)
    one_row[0] = [4, 5, 6]  # rater A uses one category: kappa 0
    return [
        np.diag([5, 5]),  # perfect agreement: zero variance
        np.diag([12, 0, 0]),  # one category only: kappa undefined
        np.array([[0, 10], [10, 0]]),  # complete disagreement: kappa -1
        np.array([[0, 6], [5, 0]]),  # near -1, the interval clipped
        np.array([[9, 1], [0, 0]]),  # one empty row and column
        np.array([[5, 0], [0, 4]]),  # 9 items: under INDICATIVE_BELOW
        np.array([[5, 0], [0, 5]]),  # exactly INDICATIVE_BELOW
        np.array([[9, 1], [1, 0]]),  # kappa just below 0
        np.array([[1, 0, 0], [0, 1, 0], [3, 3, 3]]),
        one_row, one_row.T,
        np.array([[400_000, 3], [2, 1]]),  # large counts, a rare category
        np.array([[1525, 327, 602], [391, 568, 636], [680, 529, 1512]]),  # CLIMATE-FEVER votes 1 and 2
        np.full((5, 5), 7),  # kappa 0 on five categories
    ]


def random_tables(count, seed=0):
    """Square count tables of 2 to 5 categories: dense, diagonal, sparse, one-row and large."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        q = int(rng.integers(2, 6))
        shape = trial % 5
        if shape == 0:
            yield rng.integers(0, 50, (q, q))
        elif shape == 1:
            yield np.diag(rng.integers(0, 30, q))
        elif shape == 2:
            yield rng.integers(0, 4, (q, q)) * (rng.random((q, q)) < 0.4)
        elif shape == 3:
            table = np.zeros((q, q), int)
            table[rng.integers(q)] = rng.integers(0, 20, q)
            yield table
        else:
            yield rng.integers(0, 100_000, (q, q))


def test_the_kappa_interval_is_statsmodels_bit_for_bit():
    tables = [*edge_tables(), *random_tables(600)]
    given = 0
    for table in tables:
        ours, theirs = kappa_interval(table), statsmodels_kappa_interval(table)
        assert ours == theirs, table.tolist()  # identical floats (so within 1e-12), or both None
        given += ours is not None
    assert given > 200  # most tables have an interval: the comparison is not of Nones
    assert sum(kappa_interval(table) is None for table in edge_tables()) >= 5  # and the rules for None are exercised


@pytest.mark.parametrize("table", edge_tables()[2:4] + edge_tables()[7:], ids=str)
def test_kappa_and_its_variance_are_statsmodels(table):
    kappa, variance = kappa_variance(table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = cohens_kappa(table)
    assert kappa == expected.kappa and variance == expected.var_kappa


def test_the_clipped_interval_of_a_complete_disagreement():
    low, high = kappa_interval(np.array([[0, 6], [5, 0]]))
    assert low == -1.0 < high  # statsmodels' own lower end is below -1


def test_the_wilson_interval_is_statsmodels():
    checked = 0
    for n in [*range(1, 40), 97, 997, 10**6, 12_345_679]:
        for successes in sorted({0, 1, n // 7, n // 3, n // 2, n - 1, n}):
            for alpha in (0.05, 0.1, 0.01, 0.001, 0.3):
                low, high = (float(end) for end in proportion_confint(successes, n, alpha=alpha, method="wilson"))
                ours = wilson_interval(successes, n, alpha)
                if alpha == 0.05:
                    assert ours == (low, high), (successes, n)
                else:  # another quantile function (the standard library's) than scipy's
                    assert ours == pytest.approx((low, high), abs=1e-12, rel=0), (successes, n, alpha)
                checked += 1
    assert checked > 900
    assert wilson_interval(0, 0) is None


def test_the_95_percent_quantile_is_scipys_and_the_others_within_1e_13_down_to_alpha_0_001():
    assert Z_975 == stats.norm.isf(0.025) == normal_quantile(0.05)
    for alpha in (0.5, 0.2, 0.1, 0.01, 0.001):
        assert normal_quantile(alpha) == pytest.approx(stats.norm.isf(alpha / 2), abs=1e-13, rel=0)


def test_a_report_with_analytic_intervals_imports_neither_scipy_nor_statsmodels():
    code = ("import sys\n"
            "from annotator.agreement import compute_agreement\n"
            "import random\n"
            "pick = random.Random(1).choice\n"
            "rows = [(f'i{i}', r, pick(('support', 'contradict'))) for i in range(40) for r in 'ab']\n"
            "report = compute_agreement(rows, n_bootstrap=0)\n"
            "assert report.analytic_ci95['cohen_kappa'] and report.analytic_ci95['percent_agreement'], report.analytic_ci95\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'statsmodels')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_report_uses_these_intervals():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 80)
    b = np.where(rng.random(80) < 0.5, a, rng.integers(0, 3, 80))
    report = compute_agreement([(f"i{i}", rater, "abc"[label]) for i, pair in enumerate(zip(a, b))
                                for rater, label in zip("xy", pair)], ["a", "b", "c"], n_bootstrap=0)
    table = np.array(report.confusion)
    assert report.analytic_ci95["cohen_kappa"] == statsmodels_kappa_interval(table)
    assert report.analytic_ci95["percent_agreement"] == tuple(
        float(end) for end in proportion_confint(int(np.trace(table)), 80, method="wilson"))
