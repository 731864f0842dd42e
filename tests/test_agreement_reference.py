"""Our agreement coefficients against reference implementations, on random tables with missing
ratings and a varying number of ratings per item; and invariances under category order and
rater names.

References (test extra only; krippendorff and irrCAC are GPL: imported here, never in annotator/):
krippendorff 0.9 (`alpha`), irrCAC 0.4.4 (`raw.CAC`, Gwet's formulas), statsmodels 0.15
(`fleiss_kappa`, `cohens_kappa`).

How irrCAC's raw.CAC works, read from its source, and where it meets our definitions:
- Items without any rating are dropped (`dropna(how="all")`), so its n is the items with >= 1
  rating: our `n_in_scope`. p_a is the mean over items with r_i >= 2 of
  sum_k r_ik(r_ik-1) / (r_i(r_i-1)); Fleiss and AC1 take pi_k = (1/n) sum_i r_ik / r_i over
  all n items, those with a single rating included; Brennan-Prediger p_e = 1/q over the given
  `categories`; Krippendorff keeps the items with r_i >= 2 and uses Gwet's form
  p_a = (1 - 1/N) p_a' + 1/N, p_e = sum_k (n_k / N)^2, algebraically Krippendorff (2011).
  These are our definitions: no difference of definition there.
- Not definitions, but what irrCAC does with them:
  * it rounds to `digits` (default 5); we pass digits=20, so rounding is below 1e-15;
  * every method also computes a variance divided by n(n-1) in Python integers, so it raises
    ZeroDivisionError for one item in scope (Krippendorff: one item with >= 2 ratings)
    although the coefficient is defined; such tables are checked only as "ours is None or
    n == 1";
  * 0/0 (p_e = 1) comes out as NaN (numpy), as ZeroDivisionError (fleiss and krippendorff
    divide Python floats), or as a finite number when p_e, a sum of n terms 1/n, rounds to
    1 - 2.2e-16: 10 items all rated 'x' by two raters give Fleiss' kappa 1.0 with
    p_e = 0.9999999999999998. We read |1 - p_e| <= 1e-12 as 0/0, our threshold (_EPS).
- `conger()` with two raters is Cohen's kappa on complete data, but with missing ratings its
  p_e uses each rater's category shares over every item that rater rated, where our (and
  Cohen's, sklearn's, statsmodels') kappa uses the margins of the items both rated: the
  coefficients are compared on the items both rated, and a pinned example shows the gap.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from krippendorff import alpha as krippendorff_package_alpha
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from annotator.agreement import METRICS, compute_agreement
from tests.conftest import need_module

IRRCAC_INSTALL = ("install it without its pins, as `make test` does: pip install --no-deps 'irrCAC==0.4.4' (it pins "
                  "scipy==1.12 and so numpy<2, which pyarrow refuses; its code runs on the current scipy)")
"""irrCAC is not in the test extra (its pins cannot be met beside pyarrow): the Makefile installs it."""

NAMES = ("support", "contradict", "insufficient", "disputed", "off_topic")
"""Category names, not in alphabetical order (irrCAC sorts the categories it finds itself)."""

EPS = 1e-12
"""A reference's p_e within this of 1 is 0/0: the threshold annotator.agreement uses."""

TOL = 1e-9


# ---------------------------------------------------------------------------------------------
# Random rating tables


@dataclass(frozen=True)
class Table:
    """An items x raters table of category indices (None: no rating) over declared categories."""

    categories: tuple[str, ...]
    cells: tuple[tuple[int | None, ...], ...]

    def rows(self, raters=None) -> list[tuple[str, str, str]]:
        """(item_id, rater, label) of every rating; raters[j] names rater j (default r0, r1...)."""
        raters = raters or [f"r{j}" for j in range(len(self.cells[0]))]
        return [(f"i{i}", raters[j], self.categories[k])
                for i, row in enumerate(self.cells) for j, k in enumerate(row) if k is not None]

    def frame(self) -> pd.DataFrame:
        """Items x raters labels, NaN where missing, without all-missing items or raters."""
        labels = [[np.nan if k is None else self.categories[k] for k in row] for row in self.cells]
        frame = pd.DataFrame(labels, columns=[f"r{j}" for j in range(len(self.cells[0]))], dtype=object)
        return frame.dropna(how="all").dropna(axis=1, how="all").reset_index(drop=True)

    def counts(self) -> np.ndarray:
        """(n_items, q) ratings per category, over the declared categories."""
        out = np.zeros((len(self.cells), len(self.categories)), dtype=int)
        for i, row in enumerate(self.cells):
            for k in row:
                if k is not None:
                    out[i, k] += 1
        return out


@st.composite
def rating_tables(draw, min_raters=2, max_raters=6, complete=False) -> Table:
    """2-5 declared categories (some often unused), 1-40 items, each cell missing with
    probability 0, 1/4, 1/2 or 3/4 (never with complete=True); at least one rating."""
    q = draw(st.integers(2, 5))
    used = draw(st.one_of(st.just(list(range(q))),  # else some declared categories unused
                          st.lists(st.integers(0, q - 1), min_size=1, max_size=q, unique=True)))
    missing = 0 if complete else draw(st.integers(0, 3))  # quarters of the cells
    cell = st.sampled_from([*used] * (4 - missing) + [None] * (missing * len(used)))
    n_raters = draw(st.integers(min_raters, max_raters))
    n_items = draw(st.integers(1, 40))
    cells = draw(st.lists(st.tuples(*[cell] * n_raters), min_size=n_items, max_size=n_items))
    assume(any(k is not None for row in cells for k in row))
    return Table(NAMES[:q], tuple(cells))


def ours(table: Table):
    return compute_agreement(table.rows(), table.categories, n_bootstrap=0)


def assert_same(value: float | None, expected: float | None, tol: float = TOL, what: str = "") -> None:
    """Ours is None exactly when the reference is undefined; else equal within tol.
    `what` names the check in hypothesis' statistics (pytest --hypothesis-show-statistics)."""
    if what:
        event(f"{what}: {'undefined' if expected is None else 'compared'}")
    if expected is None:
        assert value is None
    else:
        assert value is not None and value == pytest.approx(expected, abs=tol)


def defined(value, pe=None) -> float | None:
    """A reference's result as ours reports it: None for NaN, or for p_e within EPS of 1."""
    value = float(value)
    if math.isnan(value) or (pe is not None and abs(1.0 - float(pe)) <= EPS):
        return None
    return value


# ---------------------------------------------------------------------------------------------
# Reference calls, their warnings silenced here only


@pytest.fixture(scope="module")
def irrcac():
    """irrCAC's `raw` module; the tests that use it are skipped with how to install it when it is
    missing (failed in CI)."""
    return need_module("irrCAC.raw", "irrCAC", install=IRRCAC_INSTALL)


def irrcac_estimate(frame: pd.DataFrame, categories, method: str) -> dict | None:
    """irrCAC's `est` dict (coefficient_value, pa, pe, ...) with 20 digits; None when it
    raises ZeroDivisionError (0/0 in the coefficient, or n(n-1) = 0 in its variance)."""
    CAC = need_module("irrCAC.raw", "irrCAC", install=IRRCAC_INSTALL).CAC  # noqa: N806 - irrCAC's class
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cac = CAC(frame.copy(), weights="identity", categories=list(categories), digits=20)
            return getattr(cac, method)()["est"]
        except ZeroDivisionError:
            return None


def package_alpha(table: Table) -> float | None:
    """krippendorff.alpha (raters x items, NaN missing) over the declared domain; None when it
    is NaN or refuses a table without any item rated twice."""
    data = np.array([[np.nan if k is None else k for k in row] for row in table.cells], dtype=float).T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = krippendorff_package_alpha(reliability_data=data, level_of_measurement="nominal",
                                               value_domain=list(range(len(table.categories))))
        except ValueError as error:
            assert "at least two coders" in str(error)
            return None
    return defined(value)


def statsmodels_cohen(confusion: np.ndarray) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return defined(cohens_kappa(confusion, return_results=False))


def statsmodels_fleiss(counts: np.ndarray, method: str) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return defined(fleiss_kappa(counts, method=method))


def confusion_of(table: Table, a: int, b: int) -> np.ndarray:
    """q x q counts of (rater a's category, rater b's category) over the items both rated."""
    q = len(table.categories)
    conf = np.zeros((q, q), dtype=int)
    for row in table.cells:
        if row[a] is not None and row[b] is not None:
            conf[row[a], row[b]] += 1
    return conf


# ---------------------------------------------------------------------------------------------
# Krippendorff's alpha against the krippendorff package


@settings(max_examples=200, deadline=None)
@given(rating_tables())
def test_krippendorff_alpha_equals_the_krippendorff_package_with_missing_ratings(table):
    report = ours(table)
    assert_same(report.krippendorff_alpha.value, package_alpha(table), what="alpha")
    assert (report.krippendorff_alpha.value is None) == ("krippendorff_alpha" in report.undefined)


# ---------------------------------------------------------------------------------------------
# Gwet's formulas: irrCAC


IRRCAC_METHODS = (
    ("fleiss", "fleiss_kappa"),
    ("gwet", "gwet_ac1"),
    ("bp", "brennan_prediger"),
    ("krippendorff", "krippendorff_alpha"),
)


@settings(max_examples=200, deadline=None)
@given(rating_tables())
def test_irrcac_gives_our_percent_agreement_fleiss_ac1_bp_and_alpha_with_missing_ratings(irrcac, table):
    report = ours(table)
    frame = table.frame()
    estimates = {}
    for method, metric in IRRCAC_METHODS:
        est = estimates[method] = irrcac_estimate(frame, table.categories, method)
        value = report.coefficient(metric).value
        if est is None:
            n = report.n_items if method == "krippendorff" else report.n_in_scope
            assert value is None or n == 1, f"irrCAC {method} raised on {n} items; ours is {value}"
            event(f"{method}: irrCAC raised")
            continue
        assert_same(value, defined(est["coefficient_value"], est["pe"]), what=method)
        if method != "krippendorff":  # its pa is Krippendorff's, not Gwet's
            assert_same(report.percent_agreement.value, defined(est["pa"]), what=f"{method} pa")
    fleiss, kripp = estimates["fleiss"], estimates["krippendorff"]
    if fleiss is not None and kripp is not None and abs(1 - kripp["pe"]) > EPS:
        # Scott's pi: Gwet's p_a, p_e from the pooled shares of pairable ratings (Krippendorff's p_e)
        pa, pe = fleiss["pa"], kripp["pe"]
        assert_same(report.scott_pi.value, (pa - pe) / (1 - pe), what="scott_pi")


@settings(max_examples=100, deadline=None)
@given(rating_tables(min_raters=2, max_raters=2))
def test_cohen_kappa_equals_irrcac_conger_on_the_items_both_raters_rated(irrcac, table):
    report = ours(table)
    both = Table(table.categories, tuple(row for row in table.cells if None not in row))
    if not both.cells:
        assert report.cohen_kappa.value is None
        if report.n_raters == 2:  # else one rater rated nothing: "exactly two raters"
            assert report.undefined["cohen_kappa"] == "no item was rated by both raters"
        return
    est = irrcac_estimate(both.frame(), table.categories, "conger")
    if est is None:
        assert report.cohen_kappa.value is None or len(both.cells) == 1
        event("conger: irrCAC raised")
        return
    assert report.cohen_kappa.n_used == len(both.cells)
    assert_same(report.cohen_kappa.value, defined(est["coefficient_value"], est["pe"]), what="conger")


def test_cohen_kappa_uses_the_margins_of_items_both_rated_where_irrcac_conger_uses_all_ratings(irrcac):
    """Convention, not a bug: items (a, b) = (x, x), (x, y), (y, y), (x, -).

    Ours, on the 3 items both rated: p_o = 2/3, p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9, kappa = 2/5.
    irrCAC conger: the same p_a, but rater a's shares over the 4 items it rated (3/4, 1/4):
    p_e = (3/4)(1/3) + (1/4)(2/3) = 5/12, kappa = 3/7.
    """
    rows = [("i0", "a", "x"), ("i0", "b", "x"), ("i1", "a", "x"), ("i1", "b", "y"),
            ("i2", "a", "y"), ("i2", "b", "y"), ("i3", "a", "x")]
    report = compute_agreement(rows, ("x", "y"), n_bootstrap=0)
    frame = pd.DataFrame({"a": ["x", "x", "y", "x"], "b": ["x", "y", "y", np.nan]}, dtype=object)
    conger = irrcac_estimate(frame, ("x", "y"), "conger")
    assert report.cohen_kappa.value == pytest.approx(2 / 5, abs=1e-12)
    assert conger["coefficient_value"] == pytest.approx(3 / 7, abs=1e-12)
    assert conger["pa"] == pytest.approx(2 / 3, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# statsmodels


@settings(max_examples=200, deadline=None)
@given(rating_tables(complete=True))
def test_fleiss_kappa_and_bp_equal_statsmodels_on_complete_data(table):
    report = ours(table)
    counts = table.counts()
    fleiss = statsmodels_fleiss(counts, "fleiss")
    assert_same(report.fleiss_kappa.value, fleiss, what="fleiss")
    assert_same(report.scott_pi.value, fleiss)  # complete data: Scott's pi is Fleiss' kappa
    assert_same(report.brennan_prediger.value, statsmodels_fleiss(counts, "randolph"))


@settings(max_examples=150, deadline=None)
@given(rating_tables())
def test_every_pair_gets_statsmodels_cohen_kappa_on_the_items_both_rated(table):
    report = ours(table)
    n_raters = len(table.cells[0])
    pairs = {(p.rater_a, p.rater_b): p for p in report.by_pair}
    for a, b in combinations(range(n_raters), 2):
        conf = confusion_of(table, a, b)
        pair = pairs.get((f"r{a}", f"r{b}"))
        if conf.sum() == 0:
            assert pair is None
            continue
        assert pair.confusion == conf.tolist()
        assert_same(pair.cohen_kappa.value, statsmodels_cohen(conf), what="pair kappa")
        if n_raters == 2 and report.n_raters == 2:
            assert_same(report.cohen_kappa.value, statsmodels_cohen(conf))
            assert report.confusion == conf.tolist()
    sharing = [(a, b) for a, b in combinations(range(n_raters), 2) if confusion_of(table, a, b).sum()]
    assert len(pairs) == len(sharing)


# ---------------------------------------------------------------------------------------------
# Invariances


@settings(max_examples=150, deadline=None)
@given(rating_tables(), st.data())
def test_no_coefficient_depends_on_category_order_or_rater_names(table, data):
    report = ours(table)
    order = data.draw(st.permutations(table.categories), label="declared order")
    n_raters = len(table.cells[0])
    names = data.draw(st.permutations(["zoe", "al", "mo", "bea", "ken", "ann"][:n_raters]), label="rater names")
    other = compute_agreement(table.rows(raters=names), tuple(order), n_bootstrap=0)
    for metric in METRICS:
        assert_same(other.coefficient(metric).value, report.coefficient(metric).value, tol=1e-12)
        assert other.coefficient(metric).n_used == report.coefficient(metric).n_used
    assert set(other.undefined) == set(report.undefined)
    assert (other.n_items, other.n_in_scope, other.n_raters) == (report.n_items, report.n_in_scope, report.n_raters)
