"""Calibrating an automatic judge against gold: pure functions over plain data.

Three questions a team asks of an LLM judge (or any automatic grader) once a gold release exists:
- How well does it agree with the gold, and how wrong is it when it is wrong? `score_judge`:
  percent agreement, Cohen's kappa, the confusion matrix, the false pass and false fail rates,
  each with its n, an analytic interval and a bootstrap interval that resamples *cases*.
- What is the true support rate on the many claims only the judge labeled? `corrected_rate`: the
  prediction-powered (PPI++) estimate, which corrects the judge's bias with the gold claims.
- Are the gold claims like the judged-only ones? `slice_mix_differs`: the PPI estimate assumes
  the gold claims are a random sample of the judged ones; a different slice mix says they are not.

Input is plain sequences (lists, numpy arrays, pandas Series), output plain dicts that
json.dumps(..., allow_nan=False) accepts: str, int, float, None, lists and dicts. Rates are
fractions 0..1. A figure that is 0/0 is None with an English reason in `undefined`, written
from annotator/messages.py (the app finds its key again with messages.recognize).

The formulas that agreement needs too live in annotator/agreement.py and are used from there:
Cohen's kappa from confusion matrices, Wilson's interval, the large-sample kappa interval, the
percentile interval, the grouping of identical rows into patterns and the multinomial bootstrap
over patterns.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from annotator.agreement import (
    MIN_BOOTSTRAP,
    bootstrap_pattern_sums,
    category_codes,
    cohen_kappa_from_confusion,
    kappa_interval,
    percentile_interval,
    unique_rows,
    wilson_interval,
)
from annotator.errors import CalibrationInputError
from annotator.messages import english
from annotator.vocabulary import INDICATIVE_BELOW, LABELS

JUDGE_METRICS: tuple[str, ...] = ("percent_agreement", "cohen_kappa", "false_pass_rate", "false_fail_rate")
"""The figures of a judge's score, in display order."""

SLICE_MIX_MAX_P = 0.01
"""A chi-square p-value under this says the two slice mixes differ beyond chance..."""

SLICE_MIX_MIN_DISTANCE = 0.1
"""... and a total variation distance over this says they differ by enough to matter."""

_SHOWN_CATEGORIES = 8
"""An error message lists at most this many declared categories."""


# ---------------------------------------------------------------------------------------------
# The judge against the gold


def score_judge(case_ids: Sequence[Any], gold: Sequence[Any], judge: Sequence[Any],
                categories: Sequence[str] = LABELS, *, n_bootstrap: int = 1000, seed: int = 0,
                positive: str = "support") -> dict[str, Any]:
    """How an automatic judge's labels agree with the gold labels of the same claims.

    case_ids, gold, judge: equal-length sequences (list, numpy array or pandas Series, read by
        position), one entry per claim: the claim's case id (text), its gold label, the judge's
        label; both labels among `categories`.
    categories: the declared labels, at least two, each once; the confusion matrix and kappa
        run over all of them in this order, unused ones as zeros.
    n_bootstrap: case-level bootstrap resamples, 0 (no bootstrap intervals) or >= MIN_BOOTSTRAP;
        seed: the numpy generator's seed (same seed, same intervals).
    positive: the label that passes a claim (false pass: the judge says it, the gold does not).
    Returns a plain dict, rates as fractions 0..1:
        categories, positive, n_items (claims), n_cases (distinct case ids),
        percent_agreement, cohen_kappa, false_pass_rate, false_fail_rate (float, None when 0/0),
        confusion {gold label: {judge label: count}} over every declared category,
        denominators (metric -> the claims it is a fraction of), indicative (sorted metrics
        whose denominator is under INDICATIVE_BELOW), undefined (metric -> why it is 0/0),
        ci95 (metric -> [low, high] case-level bootstrap percentile interval, or None),
        ci95_missing (metric -> why it has no bootstrap interval), ci95_analytic (metric ->
        [low, high] or None), n_bootstrap, seed, bootstrap_undefined (metric -> resamples in
        which it was 0/0 and so left out of its interval; {} without a bootstrap).
    Raises CalibrationInputError (annotator.errors) for unequal lengths, fewer than two or
        repeated categories, `positive` not declared, a missing or blank case id, or a label
        outside the categories: the message names the first such row, counted from 1.
    Memory: O(n_items + n_cases * q^2) for q categories, plus n_bootstrap * (patterns + q^2).

    Figures (from the q x q confusion matrix n_ij, gold i, judge j, n claims, p the positive label):
        percent_agreement = sum_i n_ii / n.
        cohen_kappa: Cohen (1960), (p_o - p_e) / (1 - p_e), agreement.cohen_kappa_from_confusion.
        false_pass_rate = sum_{i != p} n_ip / sum_{i != p} n_i. (judge p, gold not p, over gold not p).
        false_fail_rate = sum_{j != p} n_pj / n_p. (judge not p, gold p, over gold p).
    ci95_analytic: the three rates by Wilson's (1927) score interval (agreement.wilson_interval);
        kappa by the large-sample variance of Fleiss, Cohen & Everitt (1969), none under
        INDICATIVE_BELOW claims (agreement.kappa_interval).
    ci95: the claims of one case share its passages and its question, so they are not
        independent; resampling claims would understate the variance. The bootstrap resamples
        whole cases with replacement (the cluster bootstrap: Davison & Hinkley 1997, Bootstrap
        Methods and their Application, section 3.8; Field & Welsh 2007, "Bootstrapping
        clustered data", JRSS B 69), percentile interval (Efron & Tibshirani 1993, ch. 13).
        Each case is its vector of q*q confusion-cell counts; identical vectors are grouped
        into patterns (agreement.unique_rows), each resample is a multinomial draw of the
        pattern frequencies and the resampled confusion matrices are one matrix product
        (agreement.bootstrap_pattern_sums). A metric 0/0 in a resample is left out of its
        interval; in more than agreement.MAX_UNDEFINED_RESAMPLES of them, it gets no interval.
    """
    cats = _check_categories(categories, positive)
    _check_bootstrap(n_bootstrap)
    cases, gold_codes, judge_codes = _encode_claims(case_ids, gold, judge, cats)
    q, p = len(cats), cats.index(positive)
    n_cases = int(cases.max()) + 1 if cases.size else 0
    cells = gold_codes * q + judge_codes
    conf = np.bincount(cells, minlength=q * q).reshape(q, q)
    values = {m: float(v[0]) for m, v in _judge_metrics(conf[None].astype(float), p).items()}
    denominators = _denominators(conf, p)
    undefined = {m: _undefined_reason(m, conf, cats, positive) for m, v in values.items() if np.isnan(v)}
    samples = _case_bootstrap(cases, cells, n_cases, q, p, n_bootstrap, seed)
    ci95 = {m: None if m in undefined else percentile_interval(samples.get(m)) for m in JUDGE_METRICS}
    degenerate = {m: english("msg.calibration.degenerate_interval", value=f"{ci[0]:.4g}")
                  for m, ci in ci95.items() if ci is not None and ci[1] - ci[0] < 1e-12}
    ci95.update(dict.fromkeys(degenerate))
    case_denominators = _case_denominators(cases, gold_codes, p)
    return {
        "categories": list(cats),
        "positive": positive,
        "n_items": int(conf.sum()),
        "n_cases": n_cases,
        **{m: None if m in undefined else values[m] for m in JUDGE_METRICS},
        "confusion": {g: {j: int(conf[a, b]) for b, j in enumerate(cats)} for a, g in enumerate(cats)},
        "denominators": denominators,
        "denominator_cases": case_denominators,
        "indicative": sorted(m for m, n in denominators.items() if n < INDICATIVE_BELOW or case_denominators[m] < INDICATIVE_BELOW),
        "undefined": undefined,
        "ci95": {m: _listed(ci) for m, ci in ci95.items()},
        "ci95_missing": {m: degenerate.get(m) or _missing_interval_reason(m, undefined, samples, n_bootstrap, n_cases)
                         for m in JUDGE_METRICS if ci95[m] is None},
        "ci95_analytic": {m: _listed(ci) for m, ci in _analytic_intervals(conf, p, undefined).items()},
        "n_bootstrap": n_bootstrap,
        "seed": seed,
        "bootstrap_undefined": {m: int(np.isnan(v).sum()) for m, v in samples.items()},
    }


def _check_categories(categories: Sequence[str], positive: str) -> tuple[str, ...]:
    """The declared categories as a tuple; CalibrationInputError when fewer than two, repeated,
    or without `positive`."""
    cats = tuple(categories)
    if len(cats) < 2 or len(set(cats)) != len(cats):
        raise CalibrationInputError.of("msg.calibration.categories", categories=", ".join(map(str, cats)) or "none")
    if positive not in cats:
        raise CalibrationInputError.of("msg.calibration.positive", positive=repr(positive), categories=_listing(cats))
    return cats


def _check_bootstrap(n_bootstrap: int) -> None:
    """CalibrationInputError unless n_bootstrap is 0 or at least MIN_BOOTSTRAP."""
    if n_bootstrap < 0 or 0 < n_bootstrap < MIN_BOOTSTRAP:
        raise CalibrationInputError.of("msg.calibration.bootstrap", minimum=MIN_BOOTSTRAP, n=n_bootstrap)


def _listing(categories: tuple[str, ...]) -> str:
    """'support, contradict, insufficient' (the first _SHOWN_CATEGORIES, then '...')."""
    shown = ", ".join(map(str, categories[:_SHOWN_CATEGORIES]))
    return shown + (", ..." if len(categories) > _SHOWN_CATEGORIES else "")


def _column(values: Sequence[Any]) -> np.ndarray:
    """A 1-d array of `values` by position (a Series' index is ignored; tuples stay elements); a
    categorical Series stays a pandas Categorical (its codes are factorized at no cost)."""
    if isinstance(values, pd.Series):
        return values.array if isinstance(values.dtype, pd.CategoricalDtype) else values.to_numpy()
    if isinstance(values, np.ndarray):
        return values.ravel()
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _encode_claims(case_ids: Sequence[Any], gold: Sequence[Any], judge: Sequence[Any],
                   cats: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(case code 0..n_cases-1, gold code, judge code) of each claim, int64 arrays; raises
    CalibrationInputError naming the first bad row (see score_judge)."""
    columns = [_column(v) for v in (case_ids, gold, judge)]
    lengths = [len(c) for c in columns]
    if len(set(lengths)) > 1:
        raise CalibrationInputError.of("msg.calibration.lengths", n_cases=lengths[0], n_gold=lengths[1], n_judge=lengths[2])
    cases, names = pd.factorize(columns[0])
    texts = names.dtype.kind not in "biuf"  # numbers are never blank
    blank = np.array([texts and isinstance(v, str) and not v.strip() for v in names] + [True], dtype=bool)  # code -1: None or NaN
    bad = np.flatnonzero(blank[cases])
    if bad.size:
        raise CalibrationInputError.of("msg.calibration.case_missing", row=int(bad[0]) + 1)
    gold_codes = _label_codes(columns[1], cats, columns[0], "msg.calibration.gold_label")
    judge_codes = _label_codes(columns[2], cats, columns[0], "msg.calibration.judge_label")
    return cases.astype(np.int64), gold_codes, judge_codes


def _label_codes(labels: np.ndarray, cats: tuple[str, ...], case_ids: np.ndarray, key: str) -> np.ndarray:
    """Index of each label in `cats` (agreement.category_codes); CalibrationInputError (message
    `key`) at the first other."""
    out, row, label = category_codes(labels, cats)
    if row is not None:
        raise CalibrationInputError.of(key, label=_shown(label), row=row + 1, case_id=_shown(case_ids[row]),
                                       categories=_listing(cats))
    return out


def _shown(value: Any, limit: int = 60) -> str:
    """repr(value) of a plain value, cut to about `limit` characters for a message."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= limit else text[:limit - 4] + "...'"


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise (counts), NaN where den is 0."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _judge_metrics(conf: np.ndarray, p: int) -> dict[str, np.ndarray]:
    """Every metric of JUDGE_METRICS for each of m confusion matrices (m, q, q), gold rows and
    judge columns, p the positive category's index; (m,) arrays, NaN where 0/0."""
    n = conf.sum(axis=(1, 2))
    gold_positive = conf[:, p, :].sum(axis=1)
    passed = conf[:, :, p].sum(axis=1)  # the judge said p
    hits = conf[:, p, p]
    return {
        "percent_agreement": _ratio(np.trace(conf, axis1=1, axis2=2), n),
        "cohen_kappa": cohen_kappa_from_confusion(conf),
        "false_pass_rate": _ratio(passed - hits, n - gold_positive),
        "false_fail_rate": _ratio(gold_positive - hits, gold_positive),
    }


def _denominators(conf: np.ndarray, p: int) -> dict[str, int]:
    """metric -> the claims it is computed over."""
    n, gold_positive = int(conf.sum()), int(conf[p].sum())
    return {"percent_agreement": n, "cohen_kappa": n,
            "false_pass_rate": n - gold_positive, "false_fail_rate": gold_positive}


def _case_denominators(cases: np.ndarray, gold_codes: np.ndarray, p: int) -> dict[str, int]:
    """metric -> the distinct cases its claims come from (a rate over 40 claims of 2 cases is as
    indicative as one over 2 claims: the bootstrap resamples cases)."""
    size = int(cases.max()) + 1 if cases.size else 0
    positive = gold_codes == p

    def distinct(chosen: np.ndarray) -> int:
        return int(np.count_nonzero(np.bincount(chosen, minlength=size)))

    n_cases = distinct(cases)
    return {"percent_agreement": n_cases, "cohen_kappa": n_cases,
            "false_pass_rate": distinct(cases[~positive]), "false_fail_rate": distinct(cases[positive])}


def _undefined_reason(metric: str, conf: np.ndarray, cats: tuple[str, ...], positive: str) -> str:
    """Why `metric` is 0/0 for the confusion matrix `conf`."""
    if conf.sum() == 0:
        return english("msg.calibration.no_claims")
    if metric == "false_pass_rate":
        return english("msg.calibration.no_gold_negative", positive=repr(positive))
    if metric == "false_fail_rate":
        return english("msg.calibration.no_gold_positive", positive=repr(positive))
    return english("msg.calibration.one_category", category=repr(cats[int(np.argmax(conf.sum(axis=1)))]))


def _analytic_intervals(conf: np.ndarray, p: int, undefined: dict[str, str]) -> dict[str, tuple[float, float] | None]:
    """metric -> its analytic 95% interval (see score_judge), None where there is none."""
    n, gold_positive, hits = int(conf.sum()), int(conf[p].sum()), int(conf[p, p])
    passed = int(conf[:, p].sum())
    successes = {"percent_agreement": (int(np.trace(conf)), n),
                 "false_pass_rate": (passed - hits, n - gold_positive),
                 "false_fail_rate": (gold_positive - hits, gold_positive)}
    out: dict[str, tuple[float, float] | None] = {m: None for m in JUDGE_METRICS}
    for metric, (k, total) in successes.items():
        out[metric] = None if metric in undefined else wilson_interval(k, total)
    out["cohen_kappa"] = None if "cohen_kappa" in undefined else kappa_interval(conf)
    return out


def _case_bootstrap(cases: np.ndarray, cells: np.ndarray, n_cases: int, q: int, p: int,
                    n_bootstrap: int, seed: int) -> dict[str, np.ndarray]:
    """metric -> its (n_bootstrap,) values over resamples of whole cases (see score_judge);
    {} without resamples or with fewer than two cases."""
    if n_bootstrap == 0 or n_cases < 2:
        return {}
    per_case = np.bincount(cases * (q * q) + cells, minlength=n_cases * q * q).reshape(n_cases, q * q)
    rows, freq = unique_rows(per_case)
    sums = bootstrap_pattern_sums(freq, rows.astype(float), n_bootstrap, seed)
    return _judge_metrics(sums.reshape(n_bootstrap, q, q), p)


def _missing_interval_reason(metric: str, undefined: dict[str, str], samples: dict[str, np.ndarray],
                             n_bootstrap: int, n_cases: int) -> str:
    """Why `metric` has no bootstrap interval."""
    if metric in undefined:
        return english("msg.agreement.coefficient_undefined")
    if n_bootstrap == 0:
        return english("msg.agreement.no_resamples")
    if n_cases < 2:
        return english("msg.calibration.one_case")
    share = float(np.isnan(samples[metric]).mean())
    return english("msg.agreement.undefined_in_resamples", share=f"{share:.0%}")


def _listed(interval: tuple[float, float] | None) -> list[float] | None:
    """An interval as the [low, high] list JSON carries."""
    return None if interval is None else [float(interval[0]), float(interval[1])]


# ---------------------------------------------------------------------------------------------
# The corrected (prediction-powered) support rate


def corrected_rate(judge_unlabeled: Sequence[Any], judge_labeled: Sequence[Any], gold_labeled: Sequence[Any],
                   *, alpha: float = 0.05, unlabeled_cases: Sequence[Any] | None = None,
                   labeled_cases: Sequence[Any] | None = None, n_bootstrap: int = 0, seed: int = 0) -> dict[str, Any]:
    """The prediction-powered (PPI++) estimate of a rate, here the true support rate of the
    judged claims, from the judge's answers on all of them and the gold on the gold claims.

    judge_unlabeled: 0/1 (or bool) sequence, one per judged claim outside the gold (N of them):
        1 when the judge says the claim passes (`support`).
    judge_labeled, gold_labeled: equal-length 0/1 sequences over the n gold claims: the judge's
        answer and the gold's (1 = gold `support`).
    alpha: 1 - the confidence level, 0 < alpha < 1 (0.05: the 95% intervals; the keys keep the
        name ci95 and `confidence` says 1 - alpha).
    Returns a plain dict: estimate (fraction, None when undefined), ci95 ([low, high] or None),
        lambda (the power-tuning weight in [0, 1], None when 0/0), standard_error, confidence,
        n_labeled (n), n_unlabeled (N), naive_judge_rate (the judge's support rate over all
        N + n claims) and naive_judge_ci95 (Wilson), gold_only_rate (over the n) and
        gold_only_ci95 (Wilson), undefined (key -> why it is missing).
    Raises CalibrationInputError for unequal labeled lengths, a value other than 0/1, or alpha
        outside (0, 1).
    The estimate assumes the gold claims are a uniform random sample of the judged claims
    (slice_mix_differs tests one symptom of that assumption failing); the caller says so.

    Method, with f the judge's answer and Y the gold (Angelopoulos, Bates, Fannjiang, Jordan &
    Zrnic 2023, "Prediction-powered inference", Science 382, the mean estimator; Angelopoulos,
    Duchi & Zrnic 2023, "PPI++: Efficient prediction-powered inference", arXiv:2311.01453,
    power tuning for a mean):
        lambda = Cov(Y, f) / ((1 + n/N) Var(f)), clipped to [0, 1]: the covariance over the n
            gold claims (divided by n), the judge's variance over all n + N claims (by n + N - 1),
            as the reference implementation ppi_py computes them;
        estimate = lambda * mean_N(f) + mean_n(Y - lambda f): the judge's rate, corrected by its
            mean error on the gold (lambda = 1: PPI; lambda = 0: the gold-only rate);
        standard_error^2 = Var_N(lambda f) / N + Var_n(Y - lambda f) / n (variances divided by
            their counts); ci95 = estimate -+ z_(1 - alpha/2) * standard_error (the normal
            approximation of both papers), clipped to [0, 1] (the rate cannot leave it, so the
            clip keeps the coverage). The estimate itself is not clipped.
    Undefined: n = 0 or N = 0 (no estimate); a judge constant on all n + N claims (lambda 0/0,
    any lambda gives the same estimate: the gold-only rate); a zero standard error (no interval).

    Clustered claims: the intervals above treat the claims as independent. Given
    `unlabeled_cases` and `labeled_cases` (the case id of each claim, as the two sequences before
    them) and n_bootstrap >= MIN_BOOTSTRAP, `ci95`, `gold_only_ci95` and `naive_judge_ci95` are
    instead 95% percentile intervals of a bootstrap that resamples whole cases (the gold cases and
    the judged-only cases independently, as the two samples of the method; lambda kept at its
    estimate), and the independent-claims intervals move to `ci95_analytic`,
    `gold_only_ci95_analytic` and `naive_judge_ci95_analytic`. Source: the cluster bootstrap,
    Davison & Hinkley (1997), Bootstrap Methods and their Application, section 3.8.
    """
    if not 0 < alpha < 1:
        raise CalibrationInputError.of("msg.calibration.alpha", alpha=alpha)
    f_u = _binary(judge_unlabeled, "judge_unlabeled")
    f_l, y = _binary(judge_labeled, "judge_labeled"), _binary(gold_labeled, "gold_labeled")
    if f_l.size != y.size:
        raise CalibrationInputError.of("msg.calibration.ppi_lengths", n_judge=f_l.size, n_gold=y.size)
    n, big_n = y.size, f_u.size
    out: dict[str, Any] = {"estimate": None, "ci95": None, "lambda": None, "standard_error": None,
                           "confidence": 1 - alpha, "n_labeled": n, "n_unlabeled": big_n}
    out.update(_naive_rates(f_u, f_l, y, alpha))
    undefined: dict[str, str] = {}
    if n == 0 or big_n == 0:
        undefined["estimate"] = english("msg.calibration.no_labeled" if n == 0 else "msg.calibration.no_unlabeled")
        return {**out, "undefined": undefined}
    lam = _power_tuning(f_u, f_l, y)
    if lam is None:
        undefined["lambda"] = english("msg.calibration.judge_constant")
    weight = 0.0 if lam is None else lam
    estimate = weight * f_u.mean() + (y - weight * f_l).mean()
    se = float(np.sqrt((weight * f_u).var() / big_n + (y - weight * f_l).var() / n))
    out.update(estimate=float(estimate), **{"lambda": lam}, standard_error=se)
    if se <= 1e-12:
        undefined["ci95"] = english("msg.calibration.zero_variance")
    else:
        z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
        out["ci95"] = [max(0.0, float(estimate - z * se)), min(1.0, float(estimate + z * se))]
    if unlabeled_cases is not None and labeled_cases is not None and n_bootstrap:
        _check_bootstrap(n_bootstrap)
        out.update(_case_level_rates(f_u, f_l, y, _column(unlabeled_cases), _column(labeled_cases), weight,
                                     out, n_bootstrap, seed))
    return {**out, "undefined": undefined}


def _case_level_rates(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray, unlabeled_cases: np.ndarray,
                      labeled_cases: np.ndarray, weight: float, out: dict[str, Any], n_bootstrap: int,
                      seed: int) -> dict[str, Any]:
    """The case-level bootstrap intervals of corrected_rate (see there), the claim-level ones
    kept under *_analytic."""
    if unlabeled_cases.size != f_u.size or labeled_cases.size != y.size:
        raise CalibrationInputError.of("msg.calibration.ppi_lengths", n_judge=unlabeled_cases.size, n_gold=f_u.size)
    labeled = bootstrap_pattern_sums(*_case_patterns(labeled_cases, np.column_stack([y, f_l])), n_bootstrap, seed)
    unlabeled = bootstrap_pattern_sums(*_case_patterns(unlabeled_cases, f_u[:, None]), n_bootstrap, seed + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gold = labeled[:, 1] / labeled[:, 0]
        judge_l = labeled[:, 2] / labeled[:, 0]
        judge_u = unlabeled[:, 1] / unlabeled[:, 0]
        naive = (labeled[:, 2] + unlabeled[:, 1]) / (labeled[:, 0] + unlabeled[:, 0])
    estimate = np.clip(weight * judge_u + gold - weight * judge_l, 0.0, 1.0)
    return {"ci95_analytic": out["ci95"], "gold_only_ci95_analytic": out["gold_only_ci95"],
            "naive_judge_ci95_analytic": out["naive_judge_ci95"],
            "ci95": _listed(percentile_interval(estimate)) if out["estimate"] is not None else None,
            "gold_only_ci95": _listed(percentile_interval(gold)), "naive_judge_ci95": _listed(percentile_interval(naive)),
            "interval_unit": "case"}


def _case_patterns(cases: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies, features) of the distinct per-case rows [claims, sums of `values`' columns]."""
    codes, _ = pd.factorize(cases)
    k = int(codes.max()) + 1 if codes.size else 0
    per_case = np.column_stack([np.bincount(codes, minlength=k)] +
                               [np.bincount(codes, weights=values[:, j], minlength=k) for j in range(values.shape[1])])
    rows, freq = unique_rows(np.rint(per_case).astype(np.int64))
    return freq, rows.astype(float)


def _binary(values: Sequence[Any], name: str) -> np.ndarray:
    """`values` as a float array of 0.0 / 1.0; CalibrationInputError naming the first other."""
    column = _column(values)
    if column.dtype.kind in "biuf":
        out = column.astype(float)
    else:  # objects: numbers and booleans only, never the text "1"
        out = np.array([v if isinstance(v, (bool, int, float, np.number, np.bool_)) else np.nan for v in column], dtype=float)
    bad = np.flatnonzero((out != 0) & (out != 1))  # NaN is neither
    if bad.size:
        row = int(bad[0])
        raise CalibrationInputError.of("msg.calibration.not_binary", name=name, row=row + 1, value=_shown(column[row]))
    return out


def _naive_rates(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray, alpha: float) -> dict[str, Any]:
    """The judge's support rate over all its claims and the gold's over the gold claims, each
    with Wilson's interval (None when there are no claims)."""
    judged, passed, gold_passed = f_u.size + f_l.size, int(f_u.sum() + f_l.sum()), int(y.sum())
    return {
        "naive_judge_rate": passed / judged if judged else None,
        "naive_judge_ci95": _listed(wilson_interval(passed, judged, alpha)),
        "gold_only_rate": gold_passed / y.size if y.size else None,
        "gold_only_ci95": _listed(wilson_interval(gold_passed, y.size, alpha)),
    }


def _power_tuning(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray) -> float | None:
    """PPI++'s lambda for a mean (see corrected_rate), clipped to [0, 1]; None when the judge
    gives one answer on every claim (its variance is 0)."""
    n, big_n = y.size, f_u.size
    everything = np.concatenate([f_l, f_u])
    if everything.size < 2 or everything.min() == everything.max():
        return None
    covariance = ((y - y.mean()) * (f_l - f_l.mean())).mean()
    return float(np.clip(covariance / ((1 + n / big_n) * everything.var(ddof=1)), 0.0, 1.0))


# ---------------------------------------------------------------------------------------------
# Are the gold claims like the judged-only ones?


def slice_mix_differs(labeled_slices: Sequence[Any], unlabeled_slices: Sequence[Any]) -> dict[str, Any]:
    """Whether the slice mix of the gold claims differs from that of the judged-only claims, a
    sign that the gold is not a random sample of the judged claims (which corrected_rate assumes).

    labeled_slices: the slice of each gold claim; unlabeled_slices: of each judged-only claim
        (any sequences of texts, read by position).
    Returns a plain dict: differs (bool, None when a side has no claims), p_value (Pearson's
        chi-square test of homogeneity of the 2 x S table, no continuity correction; 1.0 with a
        single slice), chi2, dof, total_variation (half the sum over slices of the absolute
        differences of the two shares, 0..1), min_expected (the smallest expected count: under
        5 the chi-square p-value is rough), n_labeled, n_unlabeled, labeled_share and
        unlabeled_share ({slice: fraction}, slices sorted), undefined (key -> reason).
    Raises CalibrationInputError for a missing slice (None or NaN), naming its row.
    Rule: differs when p < SLICE_MIX_MAX_P *and* total variation > SLICE_MIX_MIN_DISTANCE. The
    test alone flags differences too small to matter once thousands of claims are judged (any
    difference is significant at large N); the distance alone flags the sampling noise of a
    small gold set (30 claims over 5 slices typically stray from the mix they were drawn from by
    0.1 or more). Together: a difference that is both real and large enough (a tenth of the
    claims would have to change slice) to move a rate.
    Sources: Pearson (1900), the chi-square test (scipy.stats.chi2_contingency); total variation
    distance: Levin, Peres & Wilmer (2017), Markov Chains and Mixing Times, 2nd ed., section 4.1.
    """
    from scipy.stats import chi2_contingency

    labeled, unlabeled = _column(labeled_slices), _column(unlabeled_slices)
    codes, names = pd.factorize(np.concatenate([labeled, unlabeled]))
    for name, part in (("labeled_slices", codes[:labeled.size]), ("unlabeled_slices", codes[labeled.size:])):
        if part.size and part.min() < 0:
            raise CalibrationInputError.of("msg.calibration.slice_missing", name=name, row=int(np.argmax(part < 0)) + 1)
    order = sorted(range(len(names)), key=lambda k: str(names[k]))
    table = np.vstack([np.bincount(codes[:labeled.size], minlength=len(names)),
                       np.bincount(codes[labeled.size:], minlength=len(names))])[:, order]
    slices = [_plain(names[k]) for k in order]
    out: dict[str, Any] = {"differs": None, "p_value": None, "chi2": None, "dof": None, "total_variation": None,
                           "min_expected": None, "n_labeled": int(labeled.size), "n_unlabeled": int(unlabeled.size),
                           "labeled_share": _shares(slices, table[0]), "unlabeled_share": _shares(slices, table[1]),
                           "undefined": {}}
    if labeled.size == 0 or unlabeled.size == 0:
        out["undefined"]["differs"] = english("msg.calibration.no_slices")
        return out
    shares = table / table.sum(axis=1, keepdims=True)
    distance = float(0.5 * np.abs(shares[0] - shares[1]).sum())
    if len(slices) < 2:
        chi2, p_value, dof, expected = 0.0, 1.0, 0, table.astype(float)
    else:
        chi2, p_value, dof, expected = chi2_contingency(table, correction=False)
    out.update(differs=bool(p_value < SLICE_MIX_MAX_P and distance > SLICE_MIX_MIN_DISTANCE),
               p_value=float(p_value), chi2=float(chi2), dof=int(dof), total_variation=distance,
               min_expected=float(np.min(expected)))
    return out


def _shares(slices: list[Any], counts: np.ndarray) -> dict[str, float]:
    """{slice: its share of the counts}, {} when there are none."""
    total = int(counts.sum())
    return {str(s): int(c) / total for s, c in zip(slices, counts)} if total else {}


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python scalar json.dumps accepts; other values unchanged."""
    return value.item() if isinstance(value, np.generic) else value
