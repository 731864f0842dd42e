"""Inter-annotator agreement on nominal labels: pure functions over a long table of ratings.

Input is a long table of `(item_id, rater, label)` ratings; output is a frozen `AgreementReport`.
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

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annotator.errors import ImportFileError, ImportRowError, UndefinedCategoryError
from annotator.vocabulary import INDICATIVE_BELOW, LABELS

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

COLUMNS: tuple[str, ...] = ("item_id", "rater", "label")
"""The columns of a label table (CSV header or JSONL keys)."""

_EPS = 1e-12
"""A denominator at or below this is zero: the coefficient is 0/0, undefined."""


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Coefficient:
    """One agreement coefficient with the number of items it used."""

    value: float | None  # None when undefined (0/0)
    n_used: int  # items it used: with >= 2 ratings (Cohen: rated by both raters)
    undefined_reason: str | None = None


@dataclass(frozen=True)
class PairResult:
    """Agreement of one pair of raters over the items both rated.

    confusion[i][j] = items rater_a put in category i and rater_b in category j, over the
    declared categories in their declared order.
    """

    rater_a: Any
    rater_b: Any
    n_items: int
    cohen_kappa: Coefficient
    percent_agreement: Coefficient
    confusion: list[list[int]]

    def to_json(self) -> dict[str, Any]:
        """A plain dict for json.dumps (no NaN): values are floats or None."""
        return {
            "rater_a": _plain(self.rater_a),
            "rater_b": _plain(self.rater_b),
            "n_items": self.n_items,
            "cohen_kappa": self.cohen_kappa.value,
            "percent_agreement": self.percent_agreement.value,
            "confusion": self.confusion,
            "undefined": {
                name: c.undefined_reason
                for name, c in (("cohen_kappa", self.cohen_kappa),
                                ("percent_agreement", self.percent_agreement))
                if c.undefined_reason
            },
        }


@dataclass(frozen=True)
class AgreementReport:
    """Agreement over one set of items (all of them, or one group such as a slice).

    n_items: items with >= 2 ratings; n_in_scope: all items given; fractions are 0..1.
    ci95: metric -> (low, high) 95% percentile bootstrap interval over items, or None.
    undefined: metric -> why it is undefined (0/0); such a coefficient's value is None.
    label_counts: rater -> {category: ratings}; by_pair: one PairResult per pair of raters
    sharing at least one item, raters in sorted order; confusion: that pair's matrix when there
    are exactly two raters, else None; by_group: group value -> report of its items.
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
    ci95: dict[str, tuple[float, float] | None]
    undefined: dict[str, str]
    label_counts: dict[Any, dict[Any, int]]
    by_pair: tuple[PairResult, ...]
    confusion: list[list[int]] | None
    indicative: bool
    by: str | None = None
    by_group: dict[Any, AgreementReport] = field(default_factory=dict)

    def coefficient(self, metric: str) -> Coefficient:
        """The Coefficient named `metric` (one of METRICS)."""
        if metric not in METRICS:
            raise KeyError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
        return getattr(self, metric)

    def to_json(self) -> dict[str, Any]:
        """A plain dict that json.dumps(..., allow_nan=False) accepts.

        Keys: n_items, n_in_scope, n_raters, categories, indicative, one per metric (float or
        None), n_used, ci95 (metric -> [low, high] or None), undefined, label_counts, by_pair,
        confusion, and `by_<column>` (e.g. by_slice: group -> the same shape) when grouped.
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
        out["ci95"] = {m: list(ci) if ci else None for m, ci in self.ci95.items()}
        out["undefined"] = dict(self.undefined)
        out["label_counts"] = {
            str(r): {str(c): n for c, n in counts.items()} for r, counts in self.label_counts.items()
        }
        out["by_pair"] = [p.to_json() for p in self.by_pair]
        out["confusion"] = self.confusion
        if self.by is not None:
            out[f"by_{self.by}"] = {str(g): rep.to_json() for g, rep in self.by_group.items()}
        return out


# ---------------------------------------------------------------------------------------------
# Entry point


def compute_agreement(
    rows: Iterable[tuple] | pd.DataFrame,
    categories: Sequence[Any] = LABELS,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    by: str | None = None,
) -> AgreementReport:
    """Agreement coefficients, confidence intervals, pairs and groups of a long rating table.

    rows: an iterable of (item_id, rater, label) or (item_id, rater, label, line) tuples, one
        per rating; or a DataFrame with columns item_id, rater, label, optionally `line` and
        the group column named by `by`. `line` is only used to name the line in errors.
    categories: the declared categories (>= 2, distinct); all coefficients use all of them.
    n_bootstrap: bootstrap resamples of items for ci95 (0: no intervals); seed: numpy seed.
    by: a DataFrame column holding each item's group (e.g. "slice"): by_group gets one report
        per group value, each flagged indicative below INDICATIVE_BELOW items.
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
    if n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be >= 0, got {n_bootstrap}")
    columns = _columns(rows, by)
    ratings = _encode(columns, cats)
    report = _report(ratings, cats, n_bootstrap, seed)
    if by is None:
        return report
    groups = _group_reports(ratings, columns, by, cats, n_bootstrap, seed)
    return replace(report, by=by, by_group=groups)


def _check_categories(categories: Sequence[Any]) -> tuple[Any, ...]:
    """The declared categories as a tuple; ValueError when fewer than two or repeated."""
    cats = tuple(categories)
    if len(cats) < 2:
        raise ValueError(f"declare at least two categories, got {cats!r}")
    if len(set(cats)) != len(cats):
        raise ValueError(f"a category is declared twice in {cats!r}")
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


def _columns(rows: Iterable[tuple] | pd.DataFrame, by: str | None) -> dict[str, Any]:
    """item_id, rater, label, line (or None) and group (or None) as array-likes."""
    if isinstance(rows, pd.DataFrame):
        return _frame_columns(rows, by)
    if by is not None:
        raise ValueError(f"by={by!r} needs a DataFrame with a {by!r} column, not tuples")
    return _tuple_columns(rows)


def _frame_columns(frame: pd.DataFrame, by: str | None) -> dict[str, Any]:
    """The needed columns of a DataFrame; ValueError when one is missing."""
    needed = list(COLUMNS) + ([by] if by is not None else [])
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"the table has no column {missing[0]!r}; it needs {', '.join(needed)}")
    out = {c: frame[c] for c in COLUMNS}
    out["line"] = frame["line"].to_numpy() if "line" in frame.columns else None
    out["group"] = frame[by] if by is not None else None
    return out


def _tuple_columns(rows: Iterable[tuple]) -> dict[str, Any]:
    """Columns of (item_id, rater, label[, line]) tuples; ValueError on other shapes."""
    rows = rows if isinstance(rows, list) else list(rows)
    widths = set(map(len, rows))
    if not widths <= {3, 4} or len(widths) > 1:
        raise ValueError(
            "every row must be (item_id, rater, label) or (item_id, rater, label, line), "
            f"all of the same length; got lengths {sorted(widths)}"
        )
    width = widths.pop() if widths else 3
    cols = [_object_array(list(map(itemgetter(k), rows))) for k in range(width)]
    out = dict(zip(COLUMNS, cols))
    out["line"] = cols[3] if width == 4 else None
    out["group"] = None
    return out


def _object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-d object array of `values` (never a 2-d array of tuples)."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _encode(columns: dict[str, Any], categories: tuple[Any, ...]) -> _Ratings:
    """Integer codes of the ratings; checks labels, missing ids and duplicates."""
    cat = _category_codes(columns["label"], categories, columns["line"])
    item, _ = pd.factorize(columns["item_id"])
    rater_codes, rater_names = pd.factorize(columns["rater"])
    for name, codes in (("item_id", item), ("rater", rater_codes)):
        if codes.size and codes.min() < 0:
            row = int(np.argmax(codes < 0))
            raise ValueError(f"{name} is missing{_where(columns['line'], row)}")
    rater, raters = _sorted_codes(rater_codes, rater_names.tolist())
    _check_duplicates(item, rater, columns)
    n_items = int(item.max()) + 1 if item.size else 0
    return _Ratings(item.astype(np.int64), rater, cat, raters, n_items)


def _category_codes(labels: Any, categories: tuple[Any, ...], lines: np.ndarray | None) -> np.ndarray:
    """Index of each label in `categories`; UndefinedCategoryError naming the first other."""
    codes, uniques = pd.factorize(labels)
    index = {c: k for k, c in enumerate(categories)}
    lookup = np.array([index.get(u, -1) for u in list(uniques)] + [-1], dtype=np.int64)
    cat = lookup[codes]  # code -1 (a missing label) picks the trailing -1
    bad = np.flatnonzero(cat < 0)
    if bad.size:
        row = int(bad[0])
        label = _plain(uniques[codes[row]]) if codes[row] >= 0 else None
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
    repeated = pd.Index(key).duplicated()
    if not repeated.any():
        return
    second = int(np.argmax(repeated))
    first = int(np.flatnonzero(key == key[second])[0])
    lines = columns["line"]
    where = f" (lines {lines[first]} and {lines[second]})" if lines is not None else ""
    raise ValueError(
        f"item {_at(columns['item_id'], second)!r} is rated twice by "
        f"{_at(columns['rater'], second)!r}{where}; keep one rating per item and rater"
    )


def _at(values: Any, row: int) -> Any:
    """Element `row` of an array or Series, by position."""
    return _plain(values.iloc[row] if isinstance(values, pd.Series) else values[row])


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
    counts = _count_matrix(ratings, q)
    if counts.shape[0] == 0:
        return counts.astype(float), np.zeros(0, dtype=np.int64), None
    base = int(counts.max()) + 1
    if q * np.log2(base) >= 62:  # too many raters and categories for one int64 key per row
        uniq, freq = np.unique(counts, axis=0, return_counts=True)
        return uniq.astype(float), freq, None
    key = counts @ (base ** np.arange(q, dtype=np.int64))  # the row read as digits in base `base`
    _, first, freq = np.unique(key, return_index=True, return_counts=True)
    return counts[first].astype(float), freq, None


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
    """Per-pattern terms whose item sums give every coefficient; shape (P, 4 + 2q + q*q).

    Columns: 1 (item in scope), r_i >= 2 (pairable), sum_k r_ik(r_ik-1) / (r_i(r_i-1)),
    r_ik / r_i (q columns), r_ik on pairable items (q), sum_k r_ik(r_ik-1) / (r_i-1),
    and a one-hot of the (a, b) cell of a two-rater confusion matrix (q*q) when both rated.
    """
    r = counts.sum(axis=1)
    pairable = r >= 2
    same = (counts * (counts - 1)).sum(axis=1)
    pa_term = np.divide(same, r * (r - 1), out=np.zeros_like(r), where=pairable)
    kd_term = np.divide(same, r - 1, out=np.zeros_like(r), where=pairable)
    conf = np.zeros((counts.shape[0], q * q))
    if pairs is not None:
        both = np.flatnonzero((pairs[:, 0] < q) & (pairs[:, 1] < q))
        conf[both, pairs[both, 0] * q + pairs[both, 1]] = 1.0
    return np.column_stack([
        np.ones_like(r), pairable, pa_term, counts / np.maximum(r, 1)[:, None],
        counts * pairable[:, None], kd_term, conf,
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
    conf: np.ndarray  # (m, q, q): two-rater confusion matrix

    @classmethod
    def of(cls, sums: np.ndarray, q: int) -> _Sums:
        """Split a (m, K) matrix of summed features into named parts."""
        return cls(sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3:3 + q], sums[:, 3 + q:3 + 2 * q],
                   sums[:, 3 + 2 * q], sums[:, 4 + 2 * q:].reshape(-1, q, q))


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


def _cohen_kappa(conf: np.ndarray) -> np.ndarray:
    """Cohen (1960) kappa from (m, q, q) confusion matrices of the items both raters rated.

    kappa = (n * sum_k n_kk - sum_k a_k b_k) / (n^2 - sum_k a_k b_k), a_k, b_k the two raters'
    margins: (p_o - p_e) / (1 - p_e) in integer form, so a rater using a single category
    gives exactly 0. Undefined when p_e = 1 (both used one and the same category).
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


def _coefficients(s: _Sums, q: int) -> dict[str, np.ndarray]:
    """Every metric of METRICS for each row of `s`; NaN where undefined."""
    return {
        "percent_agreement": _percent_agreement(s),
        "cohen_kappa": _cohen_kappa(s.conf),
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
        if n_raters != 2:
            return (f"Cohen's kappa is for exactly two raters; there are {n_raters} "
                    "(see by_pair for each pair)")
        if s.conf.sum() == 0:
            return "no item was rated by both raters"
        return (f"both raters put every item in {only(s.conf[0].sum(axis=1))}: "
                "expected agreement is 1 (0/0)")
    if s.n2[0] == 0:
        return "no item has two or more ratings (0/0)"
    if metric == "fleiss_kappa":
        return f"every rating is {only(s.pi_sum[0])}: expected agreement is 1 (0/0)"
    if metric == "scott_pi":
        return f"every rating is {only(s.nc[0])}: expected agreement is 1 (0/0)"
    if metric == "krippendorff_alpha":
        return f"every pairable rating is {only(s.nc[0])}: expected disagreement is 0 (0/0)"
    return "undefined (0/0)"


# ---------------------------------------------------------------------------------------------
# One report


def _report(ratings: _Ratings, categories: tuple[Any, ...], n_bootstrap: int, seed: int) -> AgreementReport:
    """The AgreementReport of one set of ratings (no groups)."""
    q = len(categories)
    counts, freq, pairs = _patterns(ratings, q)
    features = _features(counts, pairs, q)
    point = _Sums.of(freq[None, :].astype(float) @ features, q)
    values = {m: v[0] for m, v in _coefficients(point, q).items()}
    n2, n_both = int(point.n2[0]), int(point.conf.sum())
    reasons = {m: _reason(m, point, categories, len(ratings.raters))
               for m, v in values.items() if np.isnan(v)}
    coefs = {m: Coefficient(None if m in reasons else float(values[m]),
                            n_both if m == "cohen_kappa" else n2, reasons.get(m))
             for m in METRICS}
    samples = _bootstrap(freq, features, q, n_bootstrap, seed)
    return AgreementReport(
        n_items=n2, n_in_scope=ratings.n_items, n_raters=len(ratings.raters),
        categories=categories, **coefs,
        ci95={m: None if m in reasons else _percentile_ci(samples.get(m)) for m in METRICS},
        undefined=reasons,
        label_counts=_label_counts(ratings, categories),
        by_pair=_pairs(ratings, categories),
        confusion=point.conf[0].astype(int).tolist() if len(ratings.raters) == 2 else None,
        indicative=n2 < INDICATIVE_BELOW,
    )


def _bootstrap(freq: np.ndarray, features: np.ndarray, q: int, n_bootstrap: int, seed: int) -> dict[str, np.ndarray]:
    """Every metric on n_bootstrap resamples of the items: metric -> (n_bootstrap,) array.

    Resampling n items with replacement gives pattern frequencies ~ Multinomial(n, freq / n):
    one (n_bootstrap, P) draw from numpy default_rng(seed), then one matrix product.
    """
    n = int(freq.sum())
    if n_bootstrap == 0 or n == 0:
        return {}
    weights = np.random.default_rng(seed).multinomial(n, freq / n, size=n_bootstrap)
    return _coefficients(_Sums.of(weights.astype(float) @ features, q), q)


def _percentile_ci(samples: np.ndarray | None) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of the defined samples, or None when there are none.

    Resamples where the coefficient is undefined (0/0) are left out.
    """
    if samples is None:
        return None
    defined = samples[~np.isnan(samples)]
    if defined.size == 0:
        return None
    low, high = np.percentile(defined, [2.5, 97.5])
    return float(low), float(high)


def _label_counts(ratings: _Ratings, categories: tuple[Any, ...]) -> dict[Any, dict[Any, int]]:
    """rater -> {category: ratings}, every declared category listed."""
    q, n_raters = len(categories), len(ratings.raters)
    table = np.bincount(ratings.rater * q + ratings.cat, minlength=n_raters * q).reshape(n_raters, q)
    return {r: dict(zip(categories, map(int, table[k]))) for k, r in enumerate(ratings.raters)}


def _pairs(ratings: _Ratings, categories: tuple[Any, ...]) -> tuple[PairResult, ...]:
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
                results.append(_pair_result(ratings.raters[a], ratings.raters[b], conf, categories))
    return tuple(results)


def _pair_result(rater_a: Any, rater_b: Any, conf: np.ndarray, categories: tuple[Any, ...]) -> PairResult:
    """Cohen's kappa and percent agreement of one pair from its confusion matrix."""
    n = int(conf.sum())
    kappa = float(_cohen_kappa(conf[None].astype(float))[0])
    reason = None
    if np.isnan(kappa):
        reason = (f"both raters put every item in {categories[int(np.argmax(conf.sum(axis=1)))]!r}: "
                  "expected agreement is 1 (0/0)")
    return PairResult(
        rater_a=rater_a, rater_b=rater_b, n_items=n,
        cohen_kappa=Coefficient(None if reason else kappa, n, reason),
        percent_agreement=Coefficient(float(np.trace(conf)) / n, n),
        confusion=conf.astype(int).tolist(),
    )


# ---------------------------------------------------------------------------------------------
# Groups


def _group_reports(ratings: _Ratings, columns: dict[str, Any], by: str, categories: tuple[Any, ...],
                   n_bootstrap: int, seed: int) -> dict[Any, AgreementReport]:
    """group value -> report of its items (sorted by value); ValueError if an item has two."""
    codes, names = pd.factorize(columns["group"])
    per_item = np.full(ratings.n_items, -1, dtype=np.int64)
    per_item[ratings.item] = codes
    bad = np.flatnonzero((codes < 0) | (per_item[ratings.item] != codes))
    if bad.size:
        row = int(bad[0])
        problem = "has no value" if codes[row] < 0 else "has two values"
        raise ValueError(f"item {_at(columns['item_id'], row)!r} {problem} in column {by!r}"
                         f"{_where(columns['line'], row)}; give each item one group")
    codes, names = _sorted_codes(codes, names.tolist())
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    return {name: _report(_subset(ratings, order[bounds[g]:bounds[g + 1]]), categories, n_bootstrap, seed)
            for g, name in enumerate(names)}


def _subset(ratings: _Ratings, rows: np.ndarray) -> _Ratings:
    """The ratings at positions `rows`, items and raters renumbered from 0 (order kept)."""
    items, item = np.unique(ratings.item[rows], return_inverse=True)
    present, rater = np.unique(ratings.rater[rows], return_inverse=True)
    return _Ratings(item.astype(np.int64), rater.astype(np.int64), ratings.cat[rows],
                    tuple(ratings.raters[k] for k in present), len(items))


# ---------------------------------------------------------------------------------------------
# Label tables from files


def read_label_table(path: str | Path, categories: Sequence[str] = LABELS) -> list[tuple[str, str, str, int]]:
    """Read a label table: CSV (UTF-8, BOM allowed) or JSONL with item_id, rater, label.

    path: a .csv file whose header names the columns item_id, rater, label (exactly those
        names, any order, other columns ignored), or a .jsonl/.ndjson file with one object
        per line holding those keys (item_id and rater: text or integer; label: text).
        Values are stripped of surrounding blanks; blank lines are skipped.
    categories: the declared categories; any other label is an error.
    Returns one (item_id, rater, label, line) tuple per rating, in file order, `line` being
        the 1-based line where the record starts: ready for compute_agreement. A repeated
        line (same item, rater and label) is kept once.
    Raises ImportFileError (missing file, unknown extension, empty file) and ImportRowError
        naming the file, `line N`, the field and what to do (bad header, empty value, wrong
        number of fields, invalid JSON, wrong type, unknown label, the same item and rater
        with two different labels: both lines named).
    For large files prefer read_label_frame: the same rows as a DataFrame, without building
    Python tuples.
    """
    frame = read_label_frame(path, categories)
    return list(zip(*(frame[c].tolist() for c in (*COLUMNS, "line"))))


def read_label_frame(path: str | Path, categories: Sequence[str] = LABELS) -> pd.DataFrame:
    """read_label_table's rows as a DataFrame (columns item_id, rater, label, line) that
    compute_agreement takes as it is; same input, checks and errors.

    A plain CSV (no quotes, no blank lines) that passes every check is parsed by pandas'
    pyarrow engine; anything else, or any problem, is read line by line with the csv module,
    which names the first bad line.
    """
    path, cats = Path(path), tuple(categories)
    if path.is_dir():
        raise ImportFileError(f"{path} is a folder, not a file: give a .csv or .jsonl file with columns item_id, rater, label")
    if not path.exists():
        raise ImportFileError(f"{path}: file not found")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise ImportFileError(f"{path}: unknown label table format {suffix!r}. "
                              "Give a .csv or .jsonl file with columns item_id, rater, label")
    data = _read_bytes(path)
    frame = _plain_csv_frame(path, data, cats) if suffix == ".csv" else None
    if frame is not None:
        return frame
    text = _decode(path, data)
    if suffix == ".csv":
        rows = _csv_rows(path, text, cats)
    else:
        rows = _jsonl_rows(path, text, cats)
    return pd.DataFrame(_drop_repeats(path, rows), columns=[*COLUMNS, "line"])


def _plain_csv_frame(path: Path, data: bytes, categories: tuple[str, ...]) -> pd.DataFrame | None:
    """The table of a plain, valid CSV parsed by pandas; None when the careful reader is needed.

    Plain: no quote character, no lone carriage return, no blank line, so each line is one
    record and line numbers are row numbers. Valid: UTF-8, at least one rating, every line
    has the header's number of fields, no value is empty, every label is declared, no
    (item, rater) pair repeats. Otherwise None: _csv_rows then reads the file and names the
    first problem.
    """
    header = _plain_header(data)
    if header is None:
        return None
    index = _header_index(path, header)
    try:
        raw = pd.read_csv(io.BytesIO(data), engine="pyarrow", header=None, skiprows=1,
                          names=list(range(len(header))), dtype=str, keep_default_na=False)
    except ValueError:  # ParserError, EmptyDataError, UnicodeDecodeError, a narrow first row
        return None
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if len(raw) != n_lines - 1:  # pyarrow skipped blank lines: line numbers would shift
        return None
    frame = pd.DataFrame({name: raw[k].str.strip() for name, k in zip(COLUMNS, index)})
    frame["line"] = np.arange(2, len(frame) + 2)
    if (frame[list(COLUMNS)] == "").to_numpy().any() or not frame["label"].isin(categories).all():
        return None
    item, _ = pd.factorize(frame["item_id"])
    rater, raters = pd.factorize(frame["rater"])
    return None if pd.Index(item * len(raters) + rater).duplicated().any() else frame


def _plain_header(data: bytes) -> list[str] | None:
    """The stripped header names of unquoted CSV bytes; None if quoted, blank or odd."""
    if b'"' in data or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    try:
        first = data[:data.find(b"\n")].decode("utf-8").rstrip("\r") if b"\n" in data else ""
    except UnicodeDecodeError:
        return None
    return [name.strip() for name in first.split(",")] if first.strip() else None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes without a leading UTF-8 BOM; ImportFileError when it cannot be read."""
    try:
        return path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except FileNotFoundError:
        raise ImportFileError(f"{path}: file not found. Check the path") from None
    except OSError as exc:
        raise ImportFileError(f"{path}: cannot be read ({exc.strerror}). Check the path") from None


def _decode(path: Path, data: bytes) -> str:
    """`data` as UTF-8 text; ImportRowError naming the line of the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImportRowError(str(path), line, None, "the text is not valid UTF-8",
                             "Save the file as UTF-8 (with or without BOM)") from None


def _csv_rows(path: Path, text: str, categories: tuple[str, ...]) -> list[tuple[str, str, str, int]]:
    """(item_id, rater, label, line) of each CSV record, checked for shape and empty values."""
    reader = csv.reader(io.StringIO(text, newline=""))
    first = next(reader, None)
    if first is None:
        raise ImportFileError(f"{path}: the file is empty. "
                              "Give a header line item_id,rater,label and one line per rating")
    if not any(name.strip() for name in first):
        raise ImportRowError(str(path), 1, None, "the first line is blank",
                             "Put the header item_id,rater,label on the first line")
    header = [name.strip() for name in first]
    index = _header_index(path, header)
    rows, start = [], reader.line_num + 1
    for fields in reader:
        line, start = start, reader.line_num + 1
        if not fields:
            continue
        if len(fields) != len(header):
            raise ImportRowError(str(path), line, None,
                                 f"{len(fields)} fields where the header has {len(header)}",
                                 "Give every line the header's columns (quote values with commas)")
        values = [fields[k].strip() for k in index]
        _check_values(path, line, values, categories)
        rows.append((values[0], values[1], values[2], line))
    return rows


def _header_index(path: Path, header: list[str]) -> list[int]:
    """Positions of item_id, rater, label in the header; ImportRowError on line 1 otherwise."""
    for name in COLUMNS:
        if header.count(name) != 1:
            problem = "names it twice" if name in header else "has no such column"
            raise ImportRowError(str(path), 1, name, f"the header {problem} (found: {', '.join(header)})",
                                 "Name the columns item_id, rater, label, once each, in the first line")
    return [header.index(name) for name in COLUMNS]


def _check_values(path: Path, line: int, values: Sequence[Any], categories: tuple[str, ...]) -> None:
    """ImportRowError for an empty item_id, rater or label, or a label not declared."""
    for name, value in zip(COLUMNS, values):
        if value is None or value == "":
            article = "an" if name == "item_id" else "a"
            raise ImportRowError(str(path), line, name, f"{name} is empty", f"Give every line {article} {name}")
    if values[2] not in categories:
        raise ImportRowError(str(path), line, "label",
                             f"label {values[2]!r} is not one of the declared categories "
                             f"({', '.join(categories)})",
                             "Correct the label, or declare the category (--categories)")


def _jsonl_rows(path: Path, text: str, categories: tuple[str, ...]) -> list[tuple[str, str, str, int]]:
    """(item_id, rater, label, line) of each JSONL line; blank lines are skipped."""
    rows = []
    for line, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            row = _jsonl_row(path, line, raw)
            _check_values(path, line, row[:3], categories)
            rows.append(row)
    return rows


def _jsonl_row(path: Path, line: int, raw: str) -> tuple[str, str, str, int]:
    """One JSONL line as (item_id, rater, label, line); ImportRowError when malformed."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ImportRowError(str(path), line, None, f"not valid JSON ({exc.msg}, column {exc.colno})",
                             "Write one JSON object per line") from None
    if not isinstance(obj, dict):
        raise ImportRowError(str(path), line, None, "not a JSON object",
                             "Write one object per line with item_id, rater, label")
    values = [obj.get(name) for name in COLUMNS]
    for name, value in zip(COLUMNS, values):
        allowed = (str,) if name == "label" else (str, int)
        if value is None:
            raise ImportRowError(str(path), line, name, f"{name} is missing",
                                 "Give every line item_id, rater and label")
        if isinstance(value, bool) or not isinstance(value, allowed):
            kind = "text" if name == "label" else "text or an integer"
            raise ImportRowError(str(path), line, name, f"{name} is {type(value).__name__}, not {kind}",
                                 f"Write {name} as {kind}")
    return (str(values[0]).strip(), str(values[1]).strip(), values[2].strip(), line)


def _drop_repeats(path: Path, rows: list[tuple[str, str, str, int]]) -> list[tuple[str, str, str, int]]:
    """Rows without exact repeats; ImportRowError naming both lines of a conflicting pair."""
    seen: dict[tuple[str, str], tuple[str, int]] = {}
    kept = []
    for item_id, rater, label, line in rows:
        earlier = seen.setdefault((item_id, rater), (label, line))
        if earlier[1] == line:
            kept.append((item_id, rater, label, line))
        elif earlier[0] != label:
            raise ImportRowError(str(path), line, "label",
                                 f"item {item_id!r} is labeled twice by {rater!r}: "
                                 f"{earlier[0]!r} on line {earlier[1]}, {label!r} on line {line}",
                                 "Keep one label per item and rater")
    return kept


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python scalar json.dumps accepts; other values unchanged."""
    return value.item() if isinstance(value, np.generic) else value
