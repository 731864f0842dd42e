"""Inter-annotator agreement on nominal labels: pure functions over a long table of ratings.

Input is a long table of `(item_id, rater, label)` ratings; output is a frozen `AgreementReport`.
A table is read from a CSV or JSONL file by `read_label_table` or `read_label_frame` (defined with
the other readers, in formats/label_table.py, and importable from here).
Every coefficient is computed over the *declared* categories (unused ones count as zero), from
a per-item count matrix built with numpy, never from a Python loop over items.

How it is computed: items with the same ratings (the same count vector; with exactly two
raters, the same (label of rater A, label of rater B) pair) are grouped into *patterns*. Every
coefficient is a function of a few sums over items, and a sum over items is a sum over
patterns weighted by how many items have each pattern. The point estimate uses the observed
pattern frequencies; a bootstrap resample of items uses the frequencies the resample gives.

Bootstrap: resampling n item indices uniformly with replacement gives pattern frequencies that
follow Multinomial(n, f / n), f being the observed pattern frequencies. So the B resamples are
drawn directly as a (B, n_patterns) multinomial matrix (numpy `default_rng(seed)`): the same
distribution as a (B, n) index matrix, at a cost that does not grow with n.

Sources (nominal forms): Cohen (1960) kappa; Scott (1955) pi; Fleiss (1971) kappa and Gwet's
AC1 (Gwet 2008) with missing ratings as in Gwet, Handbook of Inter-Rater Reliability, 4th ed.,
2014 (the formulas of the R package irrCAC); Krippendorff (2011), "Computing Krippendorff's
Alpha-Reliability"; Brennan & Prediger (1981).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from annotator.errors import AgreementInputError, UndefinedCategoryError
from annotator.formats.label_table import COLUMNS, read_label_frame, read_label_table  # noqa: F401 - re-exported
from annotator.messages import english
from annotator.vocabulary import INDICATIVE_BELOW, LABELS

if TYPE_CHECKING:  # a DataFrame is one input; pandas is not loaded for the others
    import pandas as pd

METRICS: tuple[str, ...] = (
    "percent_agreement",
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "brennan_prediger",
)
"""The coefficients of a report, in display order."""

_EPS = 1e-12
"""A denominator at or below this is zero: the coefficient is 0/0, undefined."""

PARADOX_MIN_AGREEMENT = 0.8
"""Percent agreement at or above which a low kappa is called a paradox."""

PARADOX_MIN_GAP = 0.2
"""How far kappa must fall below percent agreement to be called a paradox."""

DEFAULT_TARGET_HALF_WIDTH = 0.1
"""The interval half-width (+-) small-sample guidance aims for by default."""

MIN_BOOTSTRAP = 100
"""Fewer resamples than this give no usable 95% interval (0 means: no intervals)."""

MAX_UNDEFINED_RESAMPLES = 0.05
"""When a coefficient is 0/0 in more than this share of resamples, it gets no interval: the
percentile interval of the others would be conditional on the data having enough variety."""



# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Coefficient:
    """One agreement coefficient with the number of items it used."""

    value: float | None  # None when undefined (0/0)
    n_used: int  # items it used: with >= 2 ratings (Cohen: rated by both raters; Fleiss, AC1:
    # every rated item, whose ratings enter their chance agreement)
    undefined_reason: str | None = None


Interval = tuple[float, float]
"""A 95% confidence interval (low, high)."""


def _interval_json(interval: Interval | None) -> list[float] | None:
    return list(interval) if interval else None


WHOLE_RANGE_DIGITS = 3
"""The decimals at which an interval is read for covers_whole_range (those the reports show)."""


def covers_whole_range(interval: Sequence[float] | None) -> bool:
    """Whether a 95% interval of an agreement figure runs from 0 or below to 1, read at
    WHOLE_RANGE_DIGITS decimals: from no agreement beyond chance (the chance-corrected
    coefficients) or none at all (percent and specific agreement) up to perfect agreement. Such an
    interval bounds nothing: the items are too few (a handful of items resample to anything from
    all alike to chance). False for None.

    interval: (low, high) fractions, as AgreementReport.ci95 holds them, or None.
    """
    if not interval:
        return False
    low, high = (round(float(end), WHOLE_RANGE_DIGITS) for end in interval)
    return low <= 0 and high >= 1


def whole_range_note(interval: Sequence[float] | None) -> str | None:
    """Why an interval that covers_whole_range says so little (English, msg.agreement.whole_range),
    or None for any other interval."""
    return english("msg.agreement.whole_range") if covers_whole_range(interval) else None


@dataclass(frozen=True)
class PairResult:
    """Agreement of one pair of raters over the items both rated.

    confusion[i][j] = items rater_a put in category i and rater_b in category j, over the
    declared categories in their declared order. ci95: metric -> bootstrap interval over the
    pair's items; analytic_ci95: metric -> large-sample interval, analytic_ci95_missing: metric ->
    why it has none (see AgreementReport).
    """

    rater_a: Any
    rater_b: Any
    n_items: int
    cohen_kappa: Coefficient
    percent_agreement: Coefficient
    confusion: list[list[int]]
    ci95: dict[str, Interval | None] = field(default_factory=dict)
    analytic_ci95: dict[str, Interval | None] = field(default_factory=dict)
    analytic_ci95_missing: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for json.dumps (no NaN): values are floats or None."""
        coefs = (("cohen_kappa", self.cohen_kappa), ("percent_agreement", self.percent_agreement))
        return {
            "rater_a": _plain(self.rater_a),
            "rater_b": _plain(self.rater_b),
            "n_items": self.n_items,
            "cohen_kappa": self.cohen_kappa.value,
            "percent_agreement": self.percent_agreement.value,
            "ci95": {name: _interval_json(self.ci95.get(name)) for name, _ in coefs},
            "analytic_ci95": {name: _interval_json(self.analytic_ci95.get(name)) for name, _ in coefs},
            "analytic_ci95_missing": dict(self.analytic_ci95_missing),
            "confusion": self.confusion,
            "undefined": {name: c.undefined_reason for name, c in coefs if c.undefined_reason},
        }


@dataclass(frozen=True)
class CategoryAgreement:
    """Specific agreement on one category: when one rater of a pair chose it, how often the
    other did too (see _specific_agreement). n_used of `specific_agreement` counts the ratings
    in this category on items with >= 2 ratings; ci95 is its bootstrap interval."""

    category: Any
    specific_agreement: Coefficient
    ci95: Interval | None

    def to_json(self) -> dict[str, Any]:
        """{"specific_agreement", "n_ratings", "ci95", "undefined"}; no NaN."""
        return {
            "specific_agreement": self.specific_agreement.value,
            "n_ratings": self.specific_agreement.n_used,
            "ci95": _interval_json(self.ci95),
            "undefined": self.specific_agreement.undefined_reason,
        }


@dataclass(frozen=True)
class AgreementReport:
    """Agreement over one set of items (all of them, or one group such as a slice).

    n_items: items with >= 2 ratings; n_in_scope: all items given; fractions are 0..1.
    ci95: metric -> (low, high) 95% percentile bootstrap interval over items, or None;
    ci95_missing: metric -> why it has no bootstrap interval.
    analytic_ci95: metric -> (low, high) 95% large-sample interval where a closed formula gives
    one (two raters: Cohen's kappa with the variance of Fleiss, Cohen & Everitt 1969, clipped to
    [-1, 1], `kappa_interval`; percent agreement, a binomial proportion of items, by Wilson's
    score interval, `wilson_interval`),
    else None; analytic_ci95_missing: metric -> why one of those two has none (fewer than
    INDICATIVE_BELOW items, the coefficient undefined, a zero variance); empty with another number
    of raters, where no metric has one.
    undefined: metric -> why it is undefined (0/0); such a coefficient's value is None.
    label_counts: rater -> {category: ratings}; by_pair: one PairResult per pair of raters
    sharing at least one item, raters in sorted order; confusion: that pair's matrix when there
    are exactly two raters, else None; by_category: category -> CategoryAgreement;
    groups: column (e.g. "slice") -> {group value -> report of its items}.
    indicative: fewer than INDICATIVE_BELOW items, so the figures are indicative only.
    """

    n_items: int
    n_in_scope: int
    n_raters: int
    categories: tuple[Any, ...]
    percent_agreement: Coefficient
    cohen_kappa: Coefficient
    scott_pi: Coefficient
    fleiss_kappa: Coefficient
    krippendorff_alpha: Coefficient
    gwet_ac1: Coefficient
    brennan_prediger: Coefficient
    ci95: dict[str, Interval | None]
    undefined: dict[str, str]
    label_counts: dict[Any, dict[Any, int]]
    by_pair: tuple[PairResult, ...]
    confusion: list[list[int]] | None
    indicative: bool
    analytic_ci95: dict[str, Interval | None] = field(default_factory=dict)
    ci95_missing: dict[str, str] = field(default_factory=dict)
    analytic_ci95_missing: dict[str, str] = field(default_factory=dict)
    by_category: dict[Any, CategoryAgreement] = field(default_factory=dict)
    groups: dict[str, dict[Any, AgreementReport]] = field(default_factory=dict)

    def coefficient(self, metric: str) -> Coefficient:
        """The Coefficient named `metric` (one of METRICS)."""
        if metric not in METRICS:
            raise KeyError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
        return getattr(self, metric)

    def to_json(self, target_half_width: float = DEFAULT_TARGET_HALF_WIDTH) -> dict[str, Any]:
        """A plain dict that json.dumps(..., allow_nan=False) accepts.

        Keys: n_items, n_in_scope, n_raters, categories, indicative, one per metric (float or
        None), n_used, ci95 and analytic_ci95 (metric -> [low, high] or None), ci95_missing
        (metric -> why there is no bootstrap interval), analytic_ci95_missing (metric -> why there
        is no analytic interval, for the two metrics that have one with two raters), undefined,
        label_counts, by_pair, by_category, confusion, paradox (kappa_paradox, or None),
        sample_size (items_needed for Krippendorff's alpha at `target_half_width`, or None),
        by_slice (group -> the same shape without groups; {} when not grouped by slice) and
        by_<column> for every other grouping column.
        """
        out: dict[str, Any] = {
            "n_items": self.n_items,
            "n_in_scope": self.n_in_scope,
            "n_raters": self.n_raters,
            "categories": [_plain(c) for c in self.categories],
            "indicative": self.indicative,
        }
        out.update({m: self.coefficient(m).value for m in METRICS})
        out["n_used"] = {m: self.coefficient(m).n_used for m in METRICS}
        out["ci95"] = {m: _interval_json(self.ci95.get(m)) for m in METRICS}
        out["analytic_ci95"] = {m: _interval_json(self.analytic_ci95.get(m)) for m in METRICS}
        out["ci95_missing"] = dict(self.ci95_missing)
        out["analytic_ci95_missing"] = dict(self.analytic_ci95_missing)
        out["undefined"] = dict(self.undefined)
        out["label_counts"] = {
            str(r): {str(c): n for c, n in counts.items()} for r, counts in self.label_counts.items()
        }
        out["by_pair"] = [p.to_json() for p in self.by_pair]
        out["by_category"] = {str(_plain(c)): a.to_json() for c, a in self.by_category.items()}
        out["confusion"] = self.confusion
        paradox = kappa_paradox(self)
        out["paradox"] = paradox.to_json() if paradox else None
        guide = items_needed(self, half_width=target_half_width)
        out["sample_size"] = guide.to_json() if guide else None
        out["by_slice"] = {}
        for column, parts in self.groups.items():
            out[f"by_{column}"] = {str(_plain(g)): rep.to_json(target_half_width) for g, rep in parts.items()}
        return out


# ---------------------------------------------------------------------------------------------
# Reading a report: the kappa paradox and the items needed for a narrower interval

@dataclass(frozen=True)
class Paradox:
    """High percent agreement with a low kappa: the first paradox of Feinstein & Cicchetti
    (1990), "High agreement but low kappa: I. The problems of two paradoxes", J. Clin.
    Epidemiol. 43(6). With skewed categories chance agreement p_e is high, so kappa-like
    coefficients are low however well raters agree; Gwet's AC1 (Gwet 2008) is not so affected.
    dominant_share: the dominant category's share of the ratings of items with >= 2 ratings (0..1).
    """

    percent_agreement: float
    kappa_metric: str
    kappa: float
    gwet_ac1: float | None
    dominant_category: Any
    dominant_share: float

    def to_json(self) -> dict[str, Any]:
        """Every field as a plain JSON value."""
        return {"percent_agreement": self.percent_agreement, "kappa_metric": self.kappa_metric,
                "kappa": self.kappa, "gwet_ac1": self.gwet_ac1,
                "dominant_category": _plain(self.dominant_category), "dominant_share": self.dominant_share}


def kappa_paradox(report: AgreementReport) -> Paradox | None:
    """The kappa paradox in `report`, or None.

    It is flagged when percent agreement >= PARADOX_MIN_AGREEMENT and the kappa (Cohen's with
    two raters, else Fleiss') is defined and at least PARADOX_MIN_GAP below it. The ratings of
    the items with >= 2 ratings give the dominant category, which explains it when its share is
    high.
    """
    pa = report.percent_agreement.value
    name = "cohen_kappa" if report.cohen_kappa.value is not None else "fleiss_kappa"
    kappa = report.coefficient(name).value
    if pa is None or kappa is None or pa < PARADOX_MIN_AGREEMENT or pa - kappa < PARADOX_MIN_GAP:
        return None
    totals = {c: report.by_category[c].specific_agreement.n_used for c in report.categories}
    dominant = max(report.categories, key=lambda c: totals[c])
    share = totals[dominant] / max(sum(totals.values()), 1)
    return Paradox(pa, name, kappa, report.gwet_ac1.value, dominant, share)


@dataclass(frozen=True)
class SampleSize:
    """How many double-labeled items would narrow `metric`'s 95% interval to +-target_half_width.

    half_width: the current interval's half-width; items_needed: the estimated total of items
    with >= 2 ratings; more_items: items_needed minus those labeled now (>= 0).
    """

    metric: str
    target_half_width: float
    half_width: float
    n_items: int
    items_needed: int
    more_items: int

    def to_json(self) -> dict[str, Any]:
        """Every field as a plain JSON value."""
        return {"metric": self.metric, "target_half_width": self.target_half_width,
                "half_width": self.half_width, "n_items": self.n_items,
                "items_needed": self.items_needed, "more_items": self.more_items}


def items_needed(report: AgreementReport, metric: str = "krippendorff_alpha",
                 half_width: float = DEFAULT_TARGET_HALF_WIDTH) -> SampleSize | None:
    """Estimate the double-labeled items that bring `metric`'s 95% interval to +-half_width.

    report: a report with a bootstrap interval for `metric`; half_width: the target, in the
        coefficient's units (0.1 means +-0.1), > 0.
    Returns None when `metric` has no interval (undefined, or no bootstrap) or a zero-width one
        (every resample gave the same value, which says nothing about more items).
    Raises ValueError for half_width <= 0, KeyError for an unknown metric.
    Method: the standard error of a coefficient estimated from n independent items shrinks as
    1 / sqrt(n) (Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 5), so the
    interval width does too: n_needed = ceil(n * (w_now / w_target)^2), assuming the
    coefficient and the mix of labels stay as they are. An estimate for planning, not a promise;
    never fewer than INDICATIVE_BELOW items in all, below which any figure is only indicative.
    """
    if half_width <= 0:
        raise AgreementInputError(f"the target half-width must be > 0, got {half_width}")
    n = report.coefficient(metric).n_used
    interval = report.ci95.get(metric)
    if interval is None or n == 0 or interval[1] - interval[0] <= _EPS:
        return None
    now = (interval[1] - interval[0]) / 2
    needed = max(n, INDICATIVE_BELOW, int(np.ceil(n * (now / half_width) ** 2 - 1e-9)))
    return SampleSize(metric, half_width, now, n, needed, needed - n)


# ---------------------------------------------------------------------------------------------
# Entry point


def compute_agreement(
    rows: Iterable[tuple] | Mapping[str, Sequence[Any]] | pd.DataFrame,
    categories: Sequence[Any] = LABELS,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    by: str | Sequence[str] | None = None,
    pair_bootstrap: bool = True,
    group_pairs: bool = True,
) -> AgreementReport:
    """Agreement coefficients, confidence intervals, pairs and groups of a long rating table.

    rows: an iterable of (item_id, rater, label) or (item_id, rater, label, line) tuples, one
        per rating; or a table of columns, a DataFrame or a mapping of column name -> equally
        long sequence (a dict of lists), with item_id, rater, label, optionally `line` and the
        group column named by `by`. `line` is only used to name the line in errors.
    categories: the declared categories (>= 2, distinct); all coefficients use all of them.
    n_bootstrap: bootstrap resamples of items for ci95 (0: no intervals); seed: numpy seed.
    by: a column of the table holding each item's group (e.g. "slice"), or several: groups[column]
        gets one report per group value, each flagged indicative below INDICATIVE_BELOW items.
    pair_bootstrap: False leaves the by_pair entries (of the report and of its groups) without
        bootstrap intervals (ci95 empty), except with exactly two raters, whose one pair shares the
        report's. With many raters those are most of the cost (one resampling per pair: 1,770
        pairs for 60 raters); `pair_bootstrap_ci95` gives any pair's later from its confusion
        matrix, the very figures this report would have held. Nothing else changes.
    group_pairs: False leaves the groups' by_pair empty (the report's own pairs stay): a view that
        shows no group's pairs need not compute them (with 60 raters, 1,770 per group).
    Returns an AgreementReport; coefficients are fractions (0..1 for agreement, kappa-like
        ones in [-1, 1]), None with a reason when undefined (0/0).
    Raises UndefinedCategoryError for a label outside `categories` (naming it and its line);
        ValueError for the same (item, rater) twice, a missing item_id/rater, malformed rows,
        bad categories, or an item with two group values.
    Coefficients (nominal; r_ik = ratings of item i in category k, q declared categories):
        percent_agreement: Gwet (2014) p_a, mean over items with >= 2 ratings of the share of
            agreeing rater pairs. cohen_kappa: Cohen (1960), exactly two raters, items both
            rated. scott_pi: Scott (1955), p_e from pooled category shares of pairable ratings.
        fleiss_kappa: Fleiss (1971) generalized to missing ratings (Gwet 2014).
        krippendorff_alpha: Krippendorff (2011), nominal, items with < 2 ratings unpairable.
        gwet_ac1: Gwet (2008), multi-rater with missing ratings (Gwet 2014).
        brennan_prediger: Brennan & Prediger (1981), p_e = 1/q.
    ci95: 2.5th and 97.5th percentiles over n_bootstrap resamples of the items in scope
        (drawn as multinomial pattern counts, the distribution of a (B, n) index resample);
        resamples where a coefficient is 0/0 are left out of its interval.
    """
    cats = _check_categories(categories)
    if n_bootstrap < 0 or 0 < n_bootstrap < MIN_BOOTSTRAP:
        raise AgreementInputError(f"use 0 bootstrap resamples (no intervals) or at least {MIN_BOOTSTRAP} "
                                  f"(1,000 recommended), not {n_bootstrap}")
    group_by = (by,) if isinstance(by, str) else tuple(by or ())
    columns = _columns(rows, group_by)
    ratings = _encode(columns, cats)
    report = _report(ratings, cats, n_bootstrap, seed, pair_bootstrap)
    groups = {column: _group_reports(ratings, columns, column, cats, n_bootstrap, seed,
                                     pair_bootstrap, with_pairs=group_pairs)
              for column in group_by}
    return replace(report, groups=groups) if groups else report


def _check_categories(categories: Sequence[Any]) -> tuple[Any, ...]:
    """The declared categories as a tuple; ValueError when fewer than two or repeated."""
    cats = tuple(categories)
    if len(cats) < 2:
        raise AgreementInputError(f"declare at least two categories, got {cats!r}")
    if len(set(cats)) != len(cats):
        raise AgreementInputError(f"a category is declared twice in {cats!r}")
    return cats


# ---------------------------------------------------------------------------------------------
# Input: rows -> integer codes


@dataclass(frozen=True)
class _Ratings:
    """The long table as integer codes, one entry per rating.

    item: item index 0..n_items-1; rater: index into `raters` (sorted names);
    cat: index into the declared categories.
    """

    item: np.ndarray
    rater: np.ndarray
    cat: np.ndarray
    raters: tuple[Any, ...]
    n_items: int


def _columns(rows: Iterable[tuple] | Mapping[str, Sequence[Any]] | pd.DataFrame, by: tuple[str, ...]) -> dict[str, Any]:
    """item_id, rater, label, line (or None) and each `by` column as array-likes."""
    if _is_pandas(rows) or isinstance(rows, Mapping):
        return _frame_columns(rows, by)
    if by:
        raise AgreementInputError(f"by={by[0]!r} needs a table with a {by[0]!r} column, not tuples")
    return _tuple_columns(rows)


def _is_pandas(values: Any) -> bool:
    """Whether `values` is a pandas object (a DataFrame, Series, Index or Categorical)."""
    return type(values).__module__.partition(".")[0] == "pandas"


def _frame_columns(frame: Mapping[str, Sequence[Any]] | pd.DataFrame, by: tuple[str, ...]) -> dict[str, Any]:
    """The needed columns of a DataFrame or a mapping of columns; ValueError when one is missing
    (or a mapping's columns differ in length)."""
    needed = [*COLUMNS, *by]
    names = list(frame.columns) if _is_pandas(frame) else list(frame)
    missing = [c for c in needed if c not in names]
    if missing:
        raise AgreementInputError(f"the table has no column {missing[0]!r}; it needs {', '.join(needed)}")
    if len(set(by)) != len(by) or set(by) & {*COLUMNS, "line"}:
        raise AgreementInputError(f"group by distinct columns other than {', '.join((*COLUMNS, 'line'))}; got {by!r}")
    out = {c: frame[c] for c in needed}
    line = frame["line"] if "line" in names else None
    out["line"] = None if line is None else line.to_numpy() if _is_pandas(line) else np.asarray(line)
    if not _is_pandas(frame) and len({len(out[c]) for c in needed}) > 1:
        raise AgreementInputError(f"the columns {', '.join(needed)} differ in length; give one value per rating in each")
    return out


def _tuple_columns(rows: Iterable[tuple]) -> dict[str, Any]:
    """Columns of (item_id, rater, label[, line]) tuples; ValueError on other shapes."""
    rows = rows if isinstance(rows, list) else list(rows)
    widths = set(map(len, rows))
    if not widths <= {3, 4} or len(widths) > 1:
        raise AgreementInputError(
            "every row must be (item_id, rater, label) or (item_id, rater, label, line), "
            f"all of the same length; got lengths {sorted(widths)}"
        )
    width = widths.pop() if widths else 3
    cols = [_object_array(list(map(itemgetter(k), rows))) for k in range(width)]
    out = dict(zip(COLUMNS, cols))
    out["line"] = cols[3] if width == 4 else None
    return out


def _object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-d object array of `values` (never a 2-d array of tuples)."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _encode(columns: dict[str, Any], categories: tuple[Any, ...]) -> _Ratings:
    """Integer codes of the ratings; checks labels, missing ids and duplicates."""
    cat = _category_codes(columns["label"], categories, columns["line"])
    item, _ = factorize(columns["item_id"])
    rater_codes, rater_names = factorize(columns["rater"])
    for name, codes in (("item_id", item), ("rater", rater_codes)):
        if codes.size and codes.min() < 0:
            row = int(np.argmax(codes < 0))
            raise AgreementInputError(f"{name} is missing{_where(columns['line'], row)}")
    rater, raters = _sorted_codes(rater_codes, rater_names)
    _check_duplicates(item, rater, columns)
    n_items = int(item.max()) + 1 if item.size else 0
    return _Ratings(item.astype(np.int64), rater, cat, raters, n_items)


def factorize(values: Any) -> tuple[np.ndarray, list[Any]]:
    """Codes of `values` in the order each value first appears, and the distinct values.

    values: a 1-d sequence (list, numpy array, pandas Series or Categorical).
    Returns (codes: int64 array, -1 where a value is missing: None, or NaN, which is not equal
        to itself; the distinct values,
        codes[i] indexing them). pandas.factorize's result: a pandas object is factorized by
        pandas itself (loaded already, since it made it); any other sequence by a dict, which
        gives the same codes without loading pandas (its import costs more than most reports).
    """
    if _is_pandas(values):
        import pandas as pd

        codes, uniques = pd.factorize(values)
        return codes.astype(np.int64, copy=False), uniques.tolist()
    index: dict[Any, int] = {}
    add = index.setdefault
    codes = np.fromiter((-1 if value is None or value != value else add(value, len(index)) for value in values),
                        dtype=np.int64, count=len(values))
    return codes, list(index)


def category_codes(labels: Any, categories: Sequence[Any]) -> tuple[np.ndarray, int | None, Any]:
    """The index of each label in `categories`, and where the first label outside them is.

    labels: a 1-d sequence (numpy array, list, Series by position); categories: the declared ones.
    Returns (codes: int64 array, -1 at a label outside `categories` or a missing one; the row of
    the first such label, or None when there is none; that label, None when it is missing).
    Method: `factorize` once, then a lookup of the distinct values (not one per label).
    Callers raise their own error for the first bad row.
    """
    codes, uniques = factorize(labels)
    index = {c: k for k, c in enumerate(categories)}
    lookup = np.array([index.get(u, -1) for u in uniques] + [-1], dtype=np.int64)
    out = lookup[codes]  # code -1 (a missing label) picks the trailing -1
    bad = np.flatnonzero(out < 0)
    if not bad.size:
        return out, None, None
    row = int(bad[0])
    return out, row, (_plain(uniques[codes[row]]) if codes[row] >= 0 else None)


def _category_codes(labels: Any, categories: tuple[Any, ...], lines: np.ndarray | None) -> np.ndarray:
    """Index of each label in `categories`; UndefinedCategoryError naming the first other."""
    cat, row, label = category_codes(labels, categories)
    if row is not None:
        raise UndefinedCategoryError(
            f"label {label!r} is not one of the declared categories "
            f"({', '.join(map(str, categories))}){_where(lines, row)}. "
            "Correct the label, or declare the category (--categories)"
        )
    return cat


def _where(lines: np.ndarray | None, row: int) -> str:
    """', line N' for a row when the caller gave line numbers, else ''."""
    return f", line {lines[row]}" if lines is not None else ""


def _sorted_codes(codes: np.ndarray, names: list[Any]) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Recode so that code order is the sorted order of the names (a stable report)."""
    try:
        order = sorted(range(len(names)), key=lambda k: names[k])
    except TypeError:  # names of mixed types: order them by their text
        order = sorted(range(len(names)), key=lambda k: str(names[k]))
    recode = np.empty(len(names), dtype=np.int64)
    recode[order] = np.arange(len(names))
    return recode[codes], tuple(names[k] for k in order)


def _check_duplicates(item: np.ndarray, rater: np.ndarray, columns: dict[str, Any]) -> None:
    """ValueError naming the first (item, rater) pair rated twice, with lines when known."""
    n_raters = int(rater.max()) + 1 if rater.size else 1
    key = item.astype(np.int64) * n_raters + rater
    repeated = np.ones(key.size, dtype=bool)
    repeated[np.unique(key, return_index=True)[1]] = False  # every occurrence after a key's first
    if not repeated.any():
        return
    second = int(np.argmax(repeated))
    first = int(np.flatnonzero(key == key[second])[0])
    lines = columns["line"]
    where = f" (lines {lines[first]} and {lines[second]})" if lines is not None else ""
    raise AgreementInputError(
        f"item {_at(columns['item_id'], second)!r} is rated twice by "
        f"{_at(columns['rater'], second)!r}{where}; keep one rating per item and rater"
    )


def _at(values: Any, row: int) -> Any:
    """Element `row` of an array or Series, by position."""
    return _plain(values.iloc[row] if _is_pandas(values) else values[row])


# ---------------------------------------------------------------------------------------------
# Patterns and the sums behind every coefficient


def _count_matrix(ratings: _Ratings, q: int) -> np.ndarray:
    """counts[i, k] = ratings of item i in category k; shape (n_items, q)."""
    flat = np.bincount(ratings.item * q + ratings.cat, minlength=ratings.n_items * q)
    return flat.reshape(ratings.n_items, q)


def _patterns(ratings: _Ratings, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Distinct item patterns: (counts (P, q), frequency (P,), pairs (P, 2) or None).

    With exactly two raters a pattern is the pair (category of rater 0, category of rater 1),
    q standing for "no rating", so Cohen's kappa can be resampled too; else it is a count row.
    """
    if len(ratings.raters) == 2:
        return _two_rater_patterns(ratings, q)
    rows, freq = unique_rows(_count_matrix(ratings, q))
    return rows.astype(float), freq, None


def unique_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a count matrix and how often each occurs: the *patterns* a
    bootstrap resamples (see the module docstring).

    counts: integer array of shape (n, m), entries >= 0 (e.g. one row per item, a column per
        category; or one row per case, a column per confusion cell).
    Returns (rows (P, m), the same dtype; freq (P,) int64, summing to n), rows in ascending
        order of their key; (0, m) and (0,) when n = 0.
    Method: each row read as the digits of one int64 in base max + 1, then np.unique of the
    keys (np.unique(axis=0) when the key would not fit in 62 bits).
    """
    if counts.shape[0] == 0:
        return counts, np.zeros(0, dtype=np.int64)
    base = int(counts.max()) + 1
    if counts.shape[1] * np.log2(base) >= 62:  # too many columns or too large counts for one int64 key
        uniq, freq = np.unique(counts, axis=0, return_counts=True)
        return uniq, freq.astype(np.int64)
    key = counts.astype(np.int64) @ (base ** np.arange(counts.shape[1], dtype=np.int64))  # the row as digits
    _, first, freq = np.unique(key, return_index=True, return_counts=True)
    return counts[first], freq.astype(np.int64)


def _two_rater_patterns(ratings: _Ratings, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (a, b) patterns of a two-rater table; see _patterns."""
    pair = np.full((2, ratings.n_items), q, dtype=np.int64)
    pair[ratings.rater, ratings.item] = ratings.cat
    freq = np.bincount(pair[0] * (q + 1) + pair[1], minlength=(q + 1) ** 2)
    keep = np.flatnonzero(freq)
    a, b = np.divmod(keep, q + 1)
    one_hot = np.eye(q + 1)[:, :q]  # row q (no rating) is all zeros
    return one_hot[a] + one_hot[b], freq[keep], np.column_stack([a, b])


def _features(counts: np.ndarray, pairs: np.ndarray | None, q: int) -> np.ndarray:
    """Per-pattern terms whose item sums give every coefficient; shape (P, 4 + 4q + q*q).

    Columns: 1 (item in scope), r_i >= 2 (pairable), sum_k r_ik(r_ik-1) / (r_i(r_i-1)),
    r_ik / r_i (q columns), r_ik on pairable items (q), sum_k r_ik(r_ik-1) / (r_i-1),
    r_ik(r_ik-1) (q: ordered rater pairs agreeing on k), r_ik(r_i-1) (q: ordered rater pairs
    whose first member said k), and a one-hot of the (a, b) cell of a two-rater confusion
    matrix (q*q) when both rated.
    """
    r = counts.sum(axis=1)
    pairable = r >= 2
    same_k = counts * (counts - 1)
    same = same_k.sum(axis=1)
    pa_term = np.divide(same, r * (r - 1), out=np.zeros_like(r), where=pairable)
    kd_term = np.divide(same, r - 1, out=np.zeros_like(r), where=pairable)
    conf = np.zeros((counts.shape[0], q * q))
    if pairs is not None:
        both = np.flatnonzero((pairs[:, 0] < q) & (pairs[:, 1] < q))
        conf[both, pairs[both, 0] * q + pairs[both, 1]] = 1.0
    return np.column_stack([
        np.ones_like(r), pairable, pa_term, counts / np.maximum(r, 1)[:, None],
        counts * pairable[:, None], kd_term, same_k, counts * np.maximum(r - 1, 0)[:, None], conf,
    ])


@dataclass(frozen=True)
class _Sums:
    """Item sums of the _features columns, one row per (re)sample; shapes (m,), (m, q)..."""

    n_in: np.ndarray  # items in scope
    n2: np.ndarray  # items with >= 2 ratings
    pa_sum: np.ndarray  # sum of each pairable item's share of agreeing rater pairs
    pi_sum: np.ndarray  # (m, q): sum over items of r_ik / r_i
    nc: np.ndarray  # (m, q): ratings per category on pairable items
    kd: np.ndarray  # sum over pairable items of sum_k r_ik(r_ik-1) / (r_i-1)
    agree_k: np.ndarray  # (m, q): ordered rater pairs of an item agreeing on category k
    pairs_k: np.ndarray  # (m, q): ordered rater pairs of an item whose first member said k
    conf: np.ndarray  # (m, q, q): two-rater confusion matrix

    @classmethod
    def of(cls, sums: np.ndarray, q: int) -> _Sums:
        """Split a (m, K) matrix of summed features into named parts."""
        k = 4 + 2 * q
        return cls(sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3:3 + q], sums[:, 3 + q:3 + 2 * q],
                   sums[:, 3 + 2 * q], sums[:, k:k + q], sums[:, k + q:k + 2 * q],
                   sums[:, k + 2 * q:].reshape(-1, q, q))


# ---------------------------------------------------------------------------------------------
# Coefficients, vectorized over samples (rows of _Sums); NaN marks 0/0


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN where |den| <= _EPS (0/0 or x/0)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=np.abs(den) > _EPS)
    return out


def _chance_corrected(pa: np.ndarray, pe: np.ndarray) -> np.ndarray:
    """(p_a - p_e) / (1 - p_e), NaN when p_e = 1."""
    return _div(pa - pe, 1.0 - pe)


def _percent_agreement(s: _Sums) -> np.ndarray:
    """Gwet (2014) p_a: mean over items with r_i >= 2 of sum_k r_ik(r_ik-1) / (r_i(r_i-1))."""
    return _div(s.pa_sum, s.n2)


def cohen_kappa_from_confusion(conf: np.ndarray) -> np.ndarray:
    """Cohen (1960) kappa from (m, q, q) confusion matrices of the items both raters rated.

    conf: array of shape (m, q, q), counts (float or int); conf[s, i, j] = items of sample s
        that rater A put in category i and rater B in j (or gold i, judge j).
    Returns an (m,) float array; NaN where kappa is undefined.
    kappa = (n * sum_k n_kk - sum_k a_k b_k) / (n^2 - sum_k a_k b_k), a_k, b_k the two raters'
    margins: (p_o - p_e) / (1 - p_e) in integer form, so a rater using a single category
    gives exactly 0. Undefined when p_e = 1 (both used one and the same category, or n = 0).
    Source: Cohen (1960), "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20.
    """
    n = conf.sum(axis=(1, 2))
    agree = np.trace(conf, axis1=1, axis2=2)
    chance = (conf.sum(axis=2) * conf.sum(axis=1)).sum(axis=1)
    return _div(n * agree - chance, n * n - chance)


def _scott_pi(s: _Sums) -> np.ndarray:
    """Scott (1955) pi: p_e = sum_k p_k^2, p_k the pooled share of category k among the ratings
    of items with >= 2 ratings; p_a as in _percent_agreement. With two raters this is Scott's
    pi over the items both rated; with complete data it equals Fleiss' kappa.
    """
    share = _div(s.nc, s.nc.sum(axis=1, keepdims=True))
    return _chance_corrected(_percent_agreement(s), (share**2).sum(axis=1))


def _fleiss_kappa(s: _Sums) -> np.ndarray:
    """Fleiss (1971) kappa generalized to missing ratings, Gwet (2014) ch. 2 / irrCAC:
    p_e = sum_k pi_k^2, pi_k = (1/n) sum_i r_ik / r_i over all n items in scope.
    """
    pi = _div(s.pi_sum, s.n_in[:, None])
    return _chance_corrected(_percent_agreement(s), (pi**2).sum(axis=1))


def _gwet_ac1(s: _Sums, q: int) -> np.ndarray:
    """Gwet (2008) AC1, multi-rater with missing ratings (Gwet 2014):
    p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k as in _fleiss_kappa, q declared categories.
    """
    pi = _div(s.pi_sum, s.n_in[:, None])
    return _chance_corrected(_percent_agreement(s), (pi * (1 - pi)).sum(axis=1) / (q - 1))


def _brennan_prediger(s: _Sums, q: int) -> np.ndarray:
    """Brennan & Prediger (1981): p_e = 1 / q over the q declared categories; Gwet's p_a."""
    return _chance_corrected(_percent_agreement(s), np.full(s.n_in.shape, 1.0 / q))


def _krippendorff_alpha(s: _Sums) -> np.ndarray:
    """Krippendorff (2011) alpha, nominal, missing ratings allowed; items with r_i < 2 are
    not pairable. With n_c the pairable ratings in c, n = sum n_c and the coincidence
    diagonal sum_c o_cc = sum_i sum_c r_ic(r_ic-1) / (r_i-1):
    alpha = 1 - (n - 1) (n - sum_c o_cc) / (n^2 - sum_c n_c^2); undefined when D_e = 0.
    """
    n = s.nc.sum(axis=1)
    return 1.0 - _div((n - 1) * (n - s.kd), n * n - (s.nc**2).sum(axis=1))


def _specific_agreement(s: _Sums) -> np.ndarray:
    """Specific agreement per category, shape (m, q): given that one rater of a pair put an
    item in k, the share of such ordered rater pairs where the other rater agreed:
    p_s(k) = sum_i r_ik(r_ik - 1) / sum_i r_ik(r_i - 1) (Uebersax 1982, "A design-independent
    method for measuring the reliability of psychiatric diagnosis", J. Psychiatric Research 17;
    with two raters it is 2 n_kk / (n_k. + n_.k), the positive specific agreement of
    Fleiss, Levin & Paik 2003, Statistical Methods for Rates and Proportions, 3rd ed., 18.1).
    NaN when no pairable item has a rating in k.
    """
    return _div(s.agree_k, s.pairs_k)


def _coefficients(s: _Sums, q: int) -> dict[str, np.ndarray]:
    """Every metric of METRICS for each row of `s`; NaN where undefined."""
    return {
        "percent_agreement": _percent_agreement(s),
        "cohen_kappa": cohen_kappa_from_confusion(s.conf),
        "scott_pi": _scott_pi(s),
        "fleiss_kappa": _fleiss_kappa(s),
        "krippendorff_alpha": _krippendorff_alpha(s),
        "gwet_ac1": _gwet_ac1(s, q),
        "brennan_prediger": _brennan_prediger(s, q),
    }


def _reason(metric: str, s: _Sums, categories: tuple[Any, ...], n_raters: int) -> str:
    """Why `metric` is undefined for the (single-row) sums `s`."""
    only = lambda counts: repr(categories[int(np.argmax(counts))])  # noqa: E731
    if metric == "cohen_kappa":
        if n_raters == 0:
            return english("msg.agreement.no_ratings")
        if n_raters != 2:
            return english("msg.agreement.cohen_two_raters", n=n_raters)
        if s.conf.sum() == 0:
            return english("msg.agreement.none_rated_by_both")
        return english("msg.agreement.both_put_every_item", category=only(s.conf[0].sum(axis=1)))
    if s.n2[0] == 0:
        return english("msg.agreement.no_pairable_item")
    if metric == "fleiss_kappa":
        return english("msg.agreement.every_rating", category=only(s.pi_sum[0]))
    if metric == "scott_pi":
        return english("msg.agreement.every_rating", category=only(s.nc[0]))
    if metric == "krippendorff_alpha":
        return english("msg.agreement.every_pairable_rating", category=only(s.nc[0]))
    return english("msg.agreement.undefined")


# ---------------------------------------------------------------------------------------------
# One report


def _report(ratings: _Ratings, categories: tuple[Any, ...], n_bootstrap: int, seed: int,
            pair_bootstrap: bool = True, with_pairs: bool = True) -> AgreementReport:
    """The AgreementReport of one set of ratings (no groups); pair_bootstrap as compute_agreement's;
    with_pairs False: by_pair is empty."""
    q = len(categories)
    counts, freq, pairs = _patterns(ratings, q)
    features = _features(counts, pairs, q)
    point = _Sums.of(freq[None, :].astype(float) @ features, q)
    values = {m: v[0] for m, v in _coefficients(point, q).items()}
    n2, n_both = int(point.n2[0]), int(point.conf.sum())
    reasons = {m: _reason(m, point, categories, len(ratings.raters))
               for m, v in values.items() if np.isnan(v)}
    used = {"cohen_kappa": n_both, "fleiss_kappa": ratings.n_items, "gwet_ac1": ratings.n_items}
    coefs = {m: Coefficient(None if m in reasons else float(values[m]), used.get(m, n2), reasons.get(m))
             for m in METRICS}
    samples = _bootstrap(freq, features, q, n_bootstrap, seed)
    two_raters = len(ratings.raters) == 2
    ci95 = {m: None if m in reasons else percentile_interval(samples.get(m)) for m in METRICS}
    ci95_missing = {m: _missing_interval_reason(m, reasons, samples) for m in METRICS if ci95[m] is None}
    pairs = _pairs(ratings, categories, n_bootstrap if pair_bootstrap else 0, seed) if with_pairs else ()
    if two_raters and pairs:  # the one pair is the report: the same figures get the same intervals
        pairs = (replace(pairs[0], ci95={m: ci95[m] for m in (PAIR_METRICS if n_bootstrap else ())}),)
    return AgreementReport(
        n_items=n2, n_in_scope=ratings.n_items, n_raters=len(ratings.raters),
        categories=categories, **coefs, ci95=ci95, ci95_missing=ci95_missing,
        **(_analytic(point.conf[0], coefs) if two_raters else {}),
        undefined=reasons,
        label_counts=_label_counts(ratings, categories),
        by_pair=pairs,
        by_category=_categories(point, samples.get("specific_agreement"), categories),
        confusion=point.conf[0].astype(int).tolist() if two_raters else None,
        indicative=n2 < INDICATIVE_BELOW,
    )


def _missing_interval_reason(metric: str, reasons: dict[str, str], samples: dict[str, np.ndarray]) -> str:
    """Why `metric` has no bootstrap interval."""
    if metric in reasons:
        return english("msg.agreement.coefficient_undefined")
    if metric not in samples:
        return english("msg.agreement.no_resamples")
    share = float(np.isnan(samples[metric]).mean())
    return english("msg.agreement.undefined_in_resamples", share=f"{share:.0%}")


def _categories(point: _Sums, samples: np.ndarray | None, categories: tuple[Any, ...]) -> dict[Any, CategoryAgreement]:
    """category -> its specific agreement with a bootstrap interval (samples: (B, q) or None)."""
    values = _specific_agreement(point)[0]
    out = {}
    for k, category in enumerate(categories):
        n_k = int(point.nc[0, k])
        if np.isnan(values[k]):
            reason = english("msg.agreement.no_category_rating", category=repr(category))
            out[category] = CategoryAgreement(category, Coefficient(None, n_k, reason), None)
        else:
            interval = percentile_interval(None if samples is None else samples[:, k])
            out[category] = CategoryAgreement(category, Coefficient(float(values[k]), n_k), interval)
    return out


def _analytic_intervals(conf: np.ndarray, coefs: dict[str, Coefficient]) -> dict[str, Interval | None]:
    """Large-sample 95% intervals of a two-rater table (see AgreementReport.analytic_ci95)."""
    out: dict[str, Interval | None] = {}
    n = int(conf.sum())
    if coefs["cohen_kappa"].value is not None and n > 1:
        out["cohen_kappa"] = kappa_interval(conf)
    if coefs["percent_agreement"].value is not None and n >= INDICATIVE_BELOW:
        out["percent_agreement"] = wilson_interval(int(np.trace(conf)), n)
    return out


ANALYTIC_METRICS: tuple[str, ...] = ("percent_agreement", "cohen_kappa")
"""The metrics a two-rater report gives a large-sample (analytic) interval of."""


def _analytic(conf: np.ndarray, coefs: dict[str, Coefficient]) -> dict[str, dict]:
    """analytic_ci95 and analytic_ci95_missing of a two-rater table: the intervals, and why each
    of ANALYTIC_METRICS left without one has none (in the order kappa_interval checks)."""
    intervals = _analytic_intervals(conf, coefs)
    n = int(conf.sum())
    missing = {}
    for metric in ANALYTIC_METRICS:
        if intervals.get(metric) is not None:
            continue
        if coefs[metric].value is None:
            missing[metric] = english("msg.agreement.coefficient_undefined")
        elif n < INDICATIVE_BELOW:
            missing[metric] = english("msg.agreement.analytic_few_items", n=n, below=INDICATIVE_BELOW)
        else:
            missing[metric] = english("msg.agreement.analytic_zero_variance")
    return {"analytic_ci95": intervals, "analytic_ci95_missing": missing}


Z_975 = 1.9599639845400545
"""The normal quantile z_0.975 of the 95% intervals, as scipy's `norm.isf(0.025)` returns it (and so
as statsmodels' intervals used it): the double one step above 1.959963984540054, the nearest to the
exact 1.95996398454005423...; kept so that the intervals are the same to the last bit."""


def normal_quantile(alpha: float) -> float:
    """z_(1 - alpha/2), the two-sided normal quantile of level 1 - alpha: Z_975 for alpha 0.05,
    else `statistics.NormalDist().inv_cdf(1 - alpha / 2)` (Wichura 1988, AS 241; within 1e-13 of
    scipy's for alpha >= 0.001). alpha: 0 < alpha < 1."""
    if alpha == 0.05:
        return Z_975
    from statistics import NormalDist

    return NormalDist().inv_cdf(1 - alpha / 2)


def kappa_interval(conf: np.ndarray) -> Interval | None:
    """The large-sample 95% interval of Cohen's kappa of one confusion matrix: kappa +- Z_975 *
    the square root of its large-sample variance (`kappa_variance`), clipped to [-1, 1]; the
    figures statsmodels' `cohens_kappa` gives (kappa_low, kappa_upp), bit for bit.

    conf: (q, q) counts, conf[i, j] = items rater A (or gold) put in i and rater B (or judge) in j.
    Returns (low, high), or None when kappa is undefined, the variance is NaN or zero (a zero-
        width interval says nothing), or there are fewer than INDICATIVE_BELOW items (a
        large-sample interval from a handful of items is none).
    """
    n = int(np.asarray(conf).sum())
    if n < max(2, INDICATIVE_BELOW) or np.isnan(cohen_kappa_from_confusion(np.asarray(conf, dtype=float)[None])[0]):
        return None
    with np.errstate(all="ignore"):  # a degenerate table: its variance is NaN
        kappa, variance = kappa_variance(conf)
        delta = Z_975 * np.sqrt(variance)
    low, high = float(kappa - delta), float(kappa + delta)
    if not (np.isfinite([low, high]).all() and high - low > 1e-6):
        return None
    return max(low, -1.0), min(high, 1.0)


def kappa_variance(conf: np.ndarray) -> tuple[float, float]:
    """Cohen's kappa of a confusion matrix and its large-sample variance (not under kappa = 0).

    conf: (q, q) counts of n > 0 items, conf[i, j] = items rater A put in i and rater B in j.
    Returns (kappa, variance) as numpy floats; the variance is NaN or infinite for a degenerate
    table (p_e = 1), with numpy's warnings, which the caller silences.
    With p_ij = conf / n, row and column margins p_i. and p_.j, p_o = sum_i p_ii and
    p_e = sum_i p_i. p_.i:
        kappa = (p_o - p_e) / (1 - p_e)
        var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - kappa))^2
               + (1 - kappa)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
               - (kappa - p_e (1 - kappa))^2] / ((1 - p_e)^2 n)
    Source: Fleiss, Cohen & Everitt (1969), "Large sample standard errors of kappa and weighted
    kappa", Psychological Bulletin 72, eq. 13; computed in the order statsmodels' `cohens_kappa`
    (statsmodels.stats.inter_rater) computes it, so that the floats are the same.
    """
    table = np.asarray(conf, dtype=float)
    n = table.sum()
    probs = table / n
    row, col = table.sum(1) / n, table.sum(0) / n
    p_e = np.diag(col * row[:, None]).sum()
    kappa = (np.diag(table).sum() / n - p_e) / (1 - p_e)
    term_a = (np.diag(probs) * (1 - (row + col) * (1 - kappa)) ** 2).sum()
    off = probs * (col[:, None] + row) ** 2
    np.fill_diagonal(off, 0)
    term_b = (1 - kappa) ** 2 * off.sum()
    term_c = (kappa - p_e * (1 - kappa)) ** 2
    return kappa, (term_a + term_b - term_c) / (1 - p_e) ** 2 / n


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> Interval | None:
    """Wilson's score interval of a binomial proportion successes / n; a fraction 0..1 at both
    ends (the figures of statsmodels' `proportion_confint(method="wilson")`).

    successes, n: counts, 0 <= successes <= n; alpha: 1 - the confidence level (0.05: 95%).
    Returns (low, high), or None when n = 0. With p = successes / n and z = z_(1 - alpha/2)
    (`normal_quantile`):
        (p + z^2 / 2n) / (1 + z^2 / n)  -+  z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)
    Source: Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22; it keeps near-nominal coverage at small n and near 0 or 1 (Brown,
    Cai & DasGupta 2001, "Interval estimation for a binomial proportion", Statist. Sci. 16).
    """
    if n == 0:
        return None
    successes, n = int(successes), int(n)
    p = successes / n
    z = normal_quantile(alpha)
    z2 = z**2
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n**2)) / denominator
    return min(max(center - half, 0.0), 1.0), min(max(center + half, 0.0), 1.0)


def _bootstrap(freq: np.ndarray, features: np.ndarray, q: int, n_bootstrap: int, seed: int) -> dict[str, np.ndarray]:
    """Every metric on n_bootstrap resamples of the items: metric -> (n_bootstrap,) array, and
    "specific_agreement" -> (n_bootstrap, q).

    Resampling n items with replacement gives pattern frequencies ~ Multinomial(n, freq / n):
    one (n_bootstrap, P) draw from numpy default_rng(seed), then one matrix product.
    """
    if n_bootstrap == 0 or int(freq.sum()) == 0:
        return {}
    sums = _Sums.of(bootstrap_pattern_sums(freq, features, n_bootstrap, seed), q)
    return {**_coefficients(sums, q), "specific_agreement": _specific_agreement(sums)}


BOOTSTRAP_CHUNK = 1 << 24
"""At most this many (resample, pattern) weights are held at once (128 MB of int64)."""


def bootstrap_pattern_sums(freq: np.ndarray, features: np.ndarray, n_bootstrap: int, seed: int) -> np.ndarray:
    """Column sums of `features` over n_bootstrap resamples (with replacement) of the n units
    whose distinct patterns have frequencies `freq`.

    freq: (P,) int, how many units (items, cases) have each pattern, n = freq.sum() > 0;
    features: (P, F) float, the per-unit terms of pattern p in row p.
    Returns (n_bootstrap, F) float: row b = sum over the units of resample b of their features.
    Method: resampling n units uniformly with replacement gives pattern frequencies
    ~ Multinomial(n, freq / n), so the resamples are drawn as one (n_bootstrap, P) multinomial
    matrix from numpy default_rng(seed) and multiplied by `features`: the distribution of a
    (n_bootstrap, n) index resample (Efron & Tibshirani 1993, ch. 6) at a cost that does not
    grow with n. Past BOOTSTRAP_CHUNK weights, drawn in consecutive blocks of resamples from
    the same generator (the same draws as one call).
    """
    n = int(freq.sum())
    rng = np.random.default_rng(seed)
    p = freq / n
    step = max(1, BOOTSTRAP_CHUNK // max(1, len(freq)))
    blocks = [rng.multinomial(n, p, size=min(step, n_bootstrap - start)).astype(float) @ features
              for start in range(0, n_bootstrap, step)]
    return np.vstack(blocks) if blocks else np.zeros((0, features.shape[1]))


def percentile_interval(samples: np.ndarray | None) -> tuple[float, float] | None:
    """The 95% percentile bootstrap interval: the 2.5th and 97.5th percentiles of the samples,
    or None when there are none or more than MAX_UNDEFINED_RESAMPLES of them are undefined
    (0/0); a few undefined ones are left out.

    samples: 1-d float array, one value per bootstrap resample, NaN where undefined.
    Source: Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 (percentile interval).
    """
    if samples is None or samples.size == 0:
        return None
    defined = samples[~np.isnan(samples)]
    if defined.size < (1 - MAX_UNDEFINED_RESAMPLES) * samples.size:
        return None
    low, high = np.percentile(defined, [2.5, 97.5])
    return float(low), float(high)


def _label_counts(ratings: _Ratings, categories: tuple[Any, ...]) -> dict[Any, dict[Any, int]]:
    """rater -> {category: ratings}, every declared category listed."""
    q, n_raters = len(categories), len(ratings.raters)
    table = np.bincount(ratings.rater * q + ratings.cat, minlength=n_raters * q).reshape(n_raters, q)
    return {r: dict(zip(categories, map(int, table[k]))) for k, r in enumerate(ratings.raters)}


def _pairs(ratings: _Ratings, categories: tuple[Any, ...], n_bootstrap: int, seed: int) -> tuple[PairResult, ...]:
    """One PairResult for each pair of raters (sorted) sharing at least one item."""
    q, n_raters = len(categories), len(ratings.raters)
    order = np.argsort(ratings.rater, kind="stable")
    bounds = np.searchsorted(ratings.rater[order], np.arange(n_raters + 1))
    rows = [order[bounds[k]:bounds[k + 1]] for k in range(n_raters)]
    results = []
    for a in range(n_raters):
        dense = np.full(ratings.n_items, -1, dtype=np.int64)
        dense[ratings.item[rows[a]]] = ratings.cat[rows[a]]
        for b in range(a + 1, n_raters):
            cat_a = dense[ratings.item[rows[b]]]
            shared = cat_a >= 0
            if shared.any():
                cells = cat_a[shared] * q + ratings.cat[rows[b]][shared]
                conf = np.bincount(cells, minlength=q * q).reshape(q, q)
                results.append(_pair_result(ratings.raters[a], ratings.raters[b], conf, categories,
                                            n_bootstrap, seed))
    return tuple(results)


def _pair_result(rater_a: Any, rater_b: Any, conf: np.ndarray, categories: tuple[Any, ...],
                 n_bootstrap: int, seed: int) -> PairResult:
    """Cohen's kappa and percent agreement of one pair from its confusion matrix, with
    bootstrap intervals (the items' cells resampled as a multinomial, as in _bootstrap)."""
    n = int(conf.sum())
    kappa = float(cohen_kappa_from_confusion(conf[None].astype(float))[0])
    reason = None
    if np.isnan(kappa):
        reason = english("msg.agreement.both_put_every_item",
                         category=repr(categories[int(np.argmax(conf.sum(axis=1)))]))
    coefs = {"cohen_kappa": Coefficient(None if reason else kappa, n, reason),
             "percent_agreement": Coefficient(float(np.trace(conf)) / n, n)}
    intervals = _pair_intervals(conf, coefs, n_bootstrap, seed) if n_bootstrap else {}
    return PairResult(
        rater_a=rater_a, rater_b=rater_b, n_items=n, **coefs,
        confusion=conf.astype(int).tolist(), ci95=intervals, **_analytic(conf, coefs),
    )


PAIR_METRICS: tuple[str, ...] = ("cohen_kappa", "percent_agreement")
"""The coefficients of a pair of raters (PairResult), in the order its ci95 holds them."""


def _pair_intervals(conf: np.ndarray, coefs: dict[str, Coefficient], n_bootstrap: int,
                    seed: int) -> dict[str, Interval | None]:
    """metric -> the bootstrap interval of a pair's confusion matrix `conf` ((q, q) int), None for
    an undefined coefficient: the items' cells resampled as a multinomial, as in _bootstrap."""
    n = int(conf.sum())
    cells = conf.ravel()
    tables = bootstrap_pattern_sums(cells, np.eye(cells.size), n_bootstrap, seed).reshape(n_bootstrap, *conf.shape)
    samples = {"cohen_kappa": cohen_kappa_from_confusion(tables),
               "percent_agreement": np.trace(tables, axis1=1, axis2=2) / n}
    return {m: None if c.value is None else percentile_interval(samples[m]) for m, c in coefs.items()}


def pair_bootstrap_ci95(confusion: Sequence[Sequence[int]], n_bootstrap: int = 1000,
                        seed: int = 0) -> dict[str, Interval | None]:
    """The bootstrap intervals of one pair of raters from its confusion matrix: what
    `compute_agreement` puts in that pair's PairResult.ci95 with the same n_bootstrap and seed,
    to the last bit (the same function computes both), for a report made with
    pair_bootstrap=False.

    confusion: (q, q) counts, confusion[i][j] = items rater A put in category i and rater B in j
        (a PairResult's `confusion`, or its JSON); at least one item.
    Returns {metric: (low, high) or None} over PAIR_METRICS (None where the coefficient is
        undefined, or more than MAX_UNDEFINED_RESAMPLES of the resamples are); {} when
        n_bootstrap is 0. Raises AgreementInputError for an empty or non-square matrix, a
        negative count or 0 < n_bootstrap < MIN_BOOTSTRAP.
    Method: resampling the pair's n items with replacement gives cell counts ~ Multinomial(n,
    confusion / n), drawn with numpy default_rng(seed) (bootstrap_pattern_sums); Cohen's kappa
    and percent agreement of each resampled table; 95% percentile intervals (percentile_interval).
    """
    conf = np.asarray(confusion, dtype=np.int64)
    if conf.ndim != 2 or conf.shape[0] != conf.shape[1] or conf.shape[0] < 2 or (conf < 0).any() or conf.sum() == 0:
        raise AgreementInputError(f"a pair's confusion matrix must be square counts of at least one item, got {confusion!r}")
    if n_bootstrap < 0 or 0 < n_bootstrap < MIN_BOOTSTRAP:
        raise AgreementInputError(f"use 0 bootstrap resamples (no intervals) or at least {MIN_BOOTSTRAP}, not {n_bootstrap}")
    if not n_bootstrap:
        return {}
    n = int(conf.sum())
    kappa = float(cohen_kappa_from_confusion(conf[None].astype(float))[0])
    coefs = {"cohen_kappa": Coefficient(None if np.isnan(kappa) else kappa, n),
             "percent_agreement": Coefficient(float(np.trace(conf)) / n, n)}
    return _pair_intervals(conf, coefs, n_bootstrap, seed)


# ---------------------------------------------------------------------------------------------
# Groups


def _group_reports(ratings: _Ratings, columns: dict[str, Any], by: str, categories: tuple[Any, ...],
                   n_bootstrap: int, seed: int, pair_bootstrap: bool = True,
                   with_pairs: bool = True) -> dict[Any, AgreementReport]:
    """group value -> report of its items (sorted by value); ValueError if an item has two."""
    codes, names = factorize(columns[by])
    per_item = np.full(ratings.n_items, -1, dtype=np.int64)
    per_item[ratings.item] = codes
    bad = np.flatnonzero((codes < 0) | (per_item[ratings.item] != codes))
    if bad.size:
        row = int(bad[0])
        problem = "has no value" if codes[row] < 0 else "has two values"
        raise AgreementInputError(f"item {_at(columns['item_id'], row)!r} {problem} in column {by!r}"
                         f"{_where(columns['line'], row)}; give each item one group")
    codes, names = _sorted_codes(codes, names)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    return {name: _report(_subset(ratings, order[bounds[g]:bounds[g + 1]]), categories, n_bootstrap, seed,
                          pair_bootstrap, with_pairs)
            for g, name in enumerate(names)}


def _subset(ratings: _Ratings, rows: np.ndarray) -> _Ratings:
    """The ratings at positions `rows`, items and raters renumbered from 0 (order kept)."""
    items, item = np.unique(ratings.item[rows], return_inverse=True)
    present, rater = np.unique(ratings.rater[rows], return_inverse=True)
    return _Ratings(item.astype(np.int64), rater.astype(np.int64), ratings.cat[rows],
                    tuple(ratings.raters[k] for k in present), len(items))


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python scalar json.dumps accepts; other values unchanged."""
    return value.item() if isinstance(value, np.generic) else value
