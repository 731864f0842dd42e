"""Comparing a candidate run of a RAG system with its baseline on the same gold: pure functions.

`compare_runs` answers the question the gate asks: may this change ship? On the cases both runs
have, it lists the cases the candidate fixed and regressed, gives the paired difference in pass
rate with a paired bootstrap interval, McNemar's exact test on the discordant cases, one-sided
regression tests per slice (Holm-corrected) and the change of every figure; then it decides:
`blocked` (any blocker of the candidate), `hold` (the pass rate may have dropped by more than the
margin, or a slice regresses), else `ship`, with the reasons in English sentences.
`gate_exit_code` turns the decision into the exit code a CI job reads.

Input: the per-case dicts of annotator.run_scoring.score_case; output plain dicts that
json.dumps(..., allow_nan=False) accepts. Reasons and `undefined` are English texts of
annotator/messages.py (the app finds their keys again with messages.recognize).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from annotator.agreement import percentile_interval
from annotator.messages import Message, english, msg, shortened
from annotator.run_scoring import (
    RUN_FIGURES,
    bootstrap_sums,
    case_terms,
    check_bootstrap,
    figure_gap,
    plain_value,
    ratio_figures,
)
from annotator.vocabulary import GATE_DECISIONS, INDICATIVE_BELOW

EXIT_CODES: dict[str, int] = {"ship": 0, "blocked": 1, "hold": 3}
"""The exit code of `run compare --gate` for each decision (2 stays a usage error)."""
GATE_ERROR_EXIT = 4
"""The exit code of `run compare --gate` when the gate could not decide (an unknown run or release,
a release that does not match its manifest, ...): not 1, so that a CI job never reads a failure to
compare as a blocker found (and never as a ship). Usage errors stay 2."""

SHOWN_BLOCKERS = 5
"""The blockers reason names one by one; the others are counted."""


# ---------------------------------------------------------------------------------------------
# The tests


EXACT_UP_TO = 20_000
"""Binomial tails over at most this many discordant cases are summed in exact integers; beyond,
in floating point from the log of the largest term (see half_binomial_cdf)."""


def half_binomial_cdf(m: int, n: int) -> float:
    """P(X <= m) for X ~ Binomial(n, 1/2), n >= 0.

    Up to EXACT_UP_TO: sum_{i <= m} C(n, i) / 2^n in Python integers, one correctly rounded
    division. Beyond: the largest term C(n, m) / 2^n (m < n/2) from math.lgamma, times the sum of
    the ratios t_(i-1) / t_i = i / (n - i + 1) down from it, stopped once a term is below 1e-17 of
    the sum (relative error about 1e-16 * n log n, under 1e-8 for a million cases).
    """
    if m < 0:
        return 0.0
    if m >= n:
        return 1.0
    if 2 * m >= n:
        return 1.0 - half_binomial_cdf(n - m - 1, n)
    if n <= EXACT_UP_TO:
        term = total = 1
        for i in range(m):
            term = term * (n - i) // (i + 1)
            total += term
        return total / (1 << n)
    log_top = math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1) - n * math.log(2)
    ratio, total = 1.0, 1.0
    for i in range(m, 0, -1):
        ratio *= i / (n - i + 1)
        total += ratio
        if ratio < 1e-17 * total:
            break
    return min(1.0, math.exp(log_top) * total)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    b, c >= 0: the cases that changed one way (failed -> passed) and the other (passed -> failed).
    Returns P = min(1, 2 * P(X <= min(b, c))) for X ~ Binomial(b + c, 1/2) (half_binomial_cdf):
    under no difference each discordant case goes either way with probability 1/2; 1.0 when
    b + c = 0.
    Raises ValueError for a negative or fractional count.
    Source: McNemar (1947), "Note on the sampling error of the difference between correlated
    proportions or percentages", Psychometrika 12; the exact (binomial) form as statsmodels'
    mcnemar(exact=True) computes it.
    """
    _check_counts(b, c)
    return min(1.0, 2.0 * half_binomial_cdf(min(b, c), b + c))


def regression_p(regressions: int, fixes: int) -> float:
    """One-sided exact binomial p-value that there are more regressions than fixes.

    regressions, fixes >= 0: a slice's discordant cases (passed -> failed, failed -> passed).
    Returns P(X >= regressions) = P(X <= fixes) for X ~ Binomial(regressions + fixes, 1/2)
    (scipy.stats.binomtest with alternative "greater"); 1.0 when there is no discordant case.
    Raises ValueError for a negative or fractional count.
    Source: the sign test on the discordant pairs, the one-sided form of McNemar (1947).
    """
    _check_counts(regressions, fixes)
    return half_binomial_cdf(fixes, regressions + fixes)


def _check_counts(*counts: int) -> None:
    if any(int(n) != n or n < 0 for n in counts):
        raise ValueError(f"counts of cases are whole numbers >= 0, not {counts}")


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values, for the same keys.

    p_values: name -> p-value in [0, 1] (m of them).
    Returns name -> adjusted p: with p_(1) <= ... <= p_(m) in ascending order,
    adjusted_(i) = max over j <= i of min(1, (m - j + 1) p_(j)); reject the hypotheses whose
    adjusted p is below alpha. Ties get the same adjusted value whatever their order. Controls
    the family-wise error rate at alpha with no assumption on the tests' dependence.
    Raises ValueError for a p-value outside [0, 1] (or NaN).
    Source: Holm (1979), "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6; as statsmodels' multipletests(method="holm").
    """
    bad = [name for name, p in p_values.items() if not 0.0 <= p <= 1.0]
    if bad:
        raise ValueError(f"p-values are between 0 and 1; {bad[0]!r} is {p_values[bad[0]]!r}")
    ordered = sorted(p_values, key=lambda name: p_values[name])
    m, running, out = len(ordered), 0.0, {}
    for j, name in enumerate(ordered):
        running = max(running, min(1.0, (m - j) * p_values[name]))
        out[name] = running
    return {name: out[name] for name in p_values}


def gate_exit_code(decision: str) -> int:
    """The exit code of `run compare --gate`: ship 0, blocked 1, hold 3 (EXIT_CODES).
    Raises ValueError for a decision outside GATE_DECISIONS."""
    if decision not in GATE_DECISIONS:
        raise ValueError(f"a decision is one of {', '.join(GATE_DECISIONS)}, not {decision!r}")
    return EXIT_CODES[decision]


# ---------------------------------------------------------------------------------------------
# Two runs


def compare_runs(base: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]], *, margin: float = 0.0,
                 alpha: float = 0.05, n_bootstrap: int = 1000, seed: int = 0,
                 other_candidate_cases: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A candidate run against its baseline on the cases both have, and the gate's decision.

    base, candidate: per-case dicts of run_scoring.score_case, matched by case_id (each once per
        run), scored on the same gold with the same k, unit and rule.
    margin: 0 <= margin < 1, how far the pass rate may drop (its interval's lower bound) before
        the gate holds; alpha: 0 < alpha < 1, the level of the per-slice regression tests.
    n_bootstrap: paired resamples, 0 (no intervals: the gate then holds) or >= agreement.MIN_BOOTSTRAP;
        seed: numpy's generator seed.
    other_candidate_cases: the candidate's cases outside those compared (another split of the
        release), scored the same way: not compared, but their blockers block too (a leak in a
        dev case stops a change decided on the holdout).
    Returns a dict:
        n_common; n_only_base, n_only_candidate (counted, not compared);
        fixed, regressed: case ids (base order) that went failed -> passed and passed -> failed
            ("passed" is status passed);
        fix_rate = fixed / common cases failed in base; regression_rate = regressed / common
            cases passed in base (None when 0/0);
        pass_rate_base, pass_rate_candidate (over the common cases), pass_rate_difference
            (candidate - base), ci95 {"pass_rate_difference": [low, high] or None};
        mcnemar_p: mcnemar_exact(len(fixed), len(regressed));
        by_slice {slice: {n, fixed, regressed, fix_rate, regression_rate, regression_p
            (regression_p: one-sided, more regressions than fixes), regression_p_holm (holm()
            over all slices), regresses (regression_p_holm < alpha)}}, slices sorted;
        metric_deltas {figure: {base, candidate, delta, ci95}} for each of run_scoring.RUN_FIGURES
            on the common cases (delta None when either is);
        blockers: the candidate's, on the common cases, on the cases only it has and on
            `other_candidate_cases` (all of them block), in that order; n_blockers_only_candidate:
            how many are on the cases only it has; n_blockers_other_cases: on the others;
        decision (GATE_DECISIONS): blocked when there is any blocker; else hold when the
            pass_rate_difference interval's lower bound is below -margin, when it has no
            interval (nothing rules out a drop), when a slice regresses, or when the baseline
            has cases the candidate lacks (a case left out might be one it fails); else ship;
        indicative: True when fewer than INDICATIVE_BELOW cases are compared (a reason says so);
        reasons: English sentences (msg.run.reason.*) naming the figures behind the decision:
            the blockers, the not-compared cases, the interval against the margin, the slices;
        undefined {figure: English reason} for fix_rate, regression_rate, pass_rate_difference
            and each metric delta that is None or has no interval;
        margin, alpha, n_bootstrap, seed.
    Raises ValueError for a case id twice in a run, margin, alpha or n_bootstrap out of range.

    Intervals: a paired case bootstrap (Efron & Tibshirani 1993, An Introduction to the
    Bootstrap, ch. 6 and 13, percentile interval): the common cases are resampled with
    replacement, the same resampled cases for both runs, and each figure's difference is
    recomputed on the resample (run_scoring.summarize's ratios); a resample in which either
    run's figure is 0/0 is left out of the interval, and in more than
    agreement.MAX_UNDEFINED_RESAMPLES of them there is no interval. Tests: McNemar (1947), exact;
    per slice the one-sided sign test on the discordant cases, Holm (1979)-corrected.
    """
    _check_compare_inputs(margin, alpha, n_bootstrap)
    base_by_id, cand_by_id = _by_case_id(base, "baseline"), _by_case_id(candidate, "candidate")
    common = [case_id for case_id in base_by_id if case_id in cand_by_id]
    pairs = [(base_by_id[i], cand_by_id[i]) for i in common]
    fixed, regressed, n_failed_base = _changes(pairs)
    deltas, delta_gaps = _metric_deltas(pairs, n_bootstrap, seed)
    difference = deltas["pass_rate"]
    blockers = [dict(blocker) for case in candidate for blocker in case["blockers"]]
    n_only_candidate_blockers = sum(len(c["blockers"]) for c in candidate if c["case_id"] not in base_by_id)
    other_blockers = [dict(blocker) for case in other_candidate_cases for blocker in case["blockers"]]
    blockers += other_blockers
    by_slice = _by_slice(pairs, alpha)
    undefined = dict(delta_gaps)
    if "pass_rate" in delta_gaps:
        undefined["pass_rate_difference"] = delta_gaps["pass_rate"]
    if not n_failed_base:
        undefined["fix_rate"] = english("msg.run.score.none_failed" if pairs else "msg.run.score.no_common_cases")
    if len(pairs) - n_failed_base == 0:
        undefined["regression_rate"] = english("msg.run.score.none_passed" if pairs else "msg.run.score.no_common_cases")
    decision, reasons = _decide(blockers, n_only_candidate_blockers, difference, by_slice, undefined, margin, alpha,
                                len(base_by_id) - len(common), len(cand_by_id) - len(common), len(other_blockers))
    if len(common) < INDICATIVE_BELOW:
        reasons.append(english("msg.run.reason.indicative", n=len(common), below=INDICATIVE_BELOW))
    return {
        "n_common": len(common),
        "n_only_base": len(base_by_id) - len(common),
        "n_only_candidate": len(cand_by_id) - len(common),
        "fixed": fixed,
        "regressed": regressed,
        "fix_rate": len(fixed) / n_failed_base if n_failed_base else None,
        "regression_rate": len(regressed) / (len(pairs) - n_failed_base) if len(pairs) > n_failed_base else None,
        "pass_rate_base": difference["base"],
        "pass_rate_candidate": difference["candidate"],
        "pass_rate_difference": difference["delta"],
        "ci95": {"pass_rate_difference": difference["ci95"]},
        "mcnemar_p": mcnemar_exact(len(fixed), len(regressed)),
        "by_slice": by_slice,
        "metric_deltas": deltas,
        "blockers": blockers,
        "n_blockers_only_candidate": n_only_candidate_blockers,
        "n_blockers_other_cases": len(other_blockers),
        "indicative": len(common) < INDICATIVE_BELOW,
        "decision": decision,
        "reasons": reasons,
        "undefined": undefined,
        "margin": float(margin),
        "alpha": float(alpha),
        "n_bootstrap": n_bootstrap,
        "seed": seed,
    }


def _check_compare_inputs(margin: float, alpha: float, n_bootstrap: int) -> None:
    if not (math.isfinite(margin) and 0.0 <= margin < 1.0):
        raise ValueError(f"the margin is a fraction of cases, 0 <= margin < 1, not {margin!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (0.05 for 5%), not {alpha!r}")
    check_bootstrap(n_bootstrap)


def _by_case_id(cases: Sequence[Mapping[str, Any]], which: str) -> dict[str, Mapping[str, Any]]:
    """case_id -> case, in the run's order; ValueError for a case id twice."""
    out: dict[str, Mapping[str, Any]] = {}
    for case in cases:
        if case["case_id"] in out:
            raise ValueError(f"the {which} run scores case {case['case_id']!r} twice")
        out[case["case_id"]] = case
    return out


def _changes(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> tuple[list[str], list[str], int]:
    """(fixed case ids, regressed case ids, cases failed in base) of (base, candidate) pairs."""
    fixed, regressed, failed = [], [], 0
    for b, c in pairs:
        base_passed, cand_passed = b["status"] == "passed", c["status"] == "passed"
        if not base_passed:
            failed += 1
            if cand_passed:
                fixed.append(b["case_id"])
        elif not cand_passed:
            regressed.append(b["case_id"])
    return fixed, regressed, failed


def _metric_deltas(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]], n_bootstrap: int,
                   seed: int) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """({figure: {base, candidate, delta, ci95}}, {figure: why its delta or interval is missing})
    over the common cases, paired bootstrap (see compare_runs)."""
    base_rows = case_terms([b for b, _ in pairs])
    cand_rows = case_terms([c for _, c in pairs])
    width = base_rows.shape[1]
    base_totals, cand_totals = base_rows.sum(axis=0), cand_rows.sum(axis=0)
    base_values, cand_values = ratio_figures(base_totals[None]), ratio_figures(cand_totals[None])
    sums = bootstrap_sums(np.hstack([base_rows, cand_rows]), n_bootstrap, seed)
    samples = {}
    if sums is not None:
        base_samples, cand_samples = ratio_figures(sums[:, :width]), ratio_figures(sums[:, width:])
        samples = {f: cand_samples[f] - base_samples[f] for f in RUN_FIGURES}  # NaN when either is 0/0
    deltas, gaps = {}, {}
    for figure in RUN_FIGURES:
        b, c = plain_value(base_values[figure][0]), plain_value(cand_values[figure][0])
        delta = None if b is None or c is None else c - b
        ci = None if delta is None else percentile_interval(samples.get(figure))
        deltas[figure] = {"base": b, "candidate": c, "delta": delta,
                          "ci95": None if ci is None else [float(ci[0]), float(ci[1])]}
        if ci is None:
            totals = base_totals if b is None else cand_totals
            gaps[figure] = figure_gap(figure, totals, samples, n_bootstrap, len(pairs)) if pairs \
                else english("msg.run.score.no_common_cases")
    return deltas, gaps


def _by_slice(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]], alpha: float) -> dict[str, dict[str, Any]]:
    """The per-slice comparison of compare_runs, slices sorted."""
    groups: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for b, c in pairs:
        groups.setdefault(b["slice"], []).append((b, c))
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(groups, key=str):
        group = groups[name]
        fixed, regressed, failed = _changes(group)
        out[name] = {"n": len(group), "fixed": fixed, "regressed": regressed,
                     "fix_rate": len(fixed) / failed if failed else None,
                     "regression_rate": len(regressed) / (len(group) - failed) if len(group) > failed else None,
                     "regression_p": regression_p(len(regressed), len(fixed))}
    adjusted = holm({name: s["regression_p"] for name, s in out.items()})
    for name, s in out.items():
        s["regression_p_holm"] = adjusted[name]
        s["regresses"] = adjusted[name] < alpha
    return out


def _decide(blockers: list[dict[str, Any]], n_only_candidate_blockers: int, difference: Mapping[str, Any],
            by_slice: Mapping[str, Mapping[str, Any]], undefined: Mapping[str, str], margin: float, alpha: float,
            n_only_base: int, n_only_candidate: int, n_other_blockers: int = 0) -> tuple[str, list[str]]:
    """(decision, reasons) of compare_runs: blockers first, then the pass rate against the margin,
    then the slices."""
    reasons: list[str] = []
    if blockers:
        reasons.append(_blockers_reason(blockers))
        if n_only_candidate_blockers:
            reasons.append(english("msg.run.reason.blockers_only_candidate", n=n_only_candidate_blockers))
        if n_other_blockers:
            reasons.append(english("msg.run.reason.blockers_other_cases", n=n_other_blockers))
    if n_only_base:
        reasons.append(english("msg.run.reason.candidate_lacks", n=n_only_base))
    if n_only_base or n_only_candidate:
        reasons.append(english("msg.run.reason.not_compared", n_only_base=n_only_base, n_only_candidate=n_only_candidate))
    bound = f"{-margin:.3f}" if margin else "0 (no margin)"
    interval = difference["ci95"]
    if interval is None:
        why = undefined.get("pass_rate_difference", english("msg.run.score.no_common_cases"))
        reasons.append(english("msg.run.reason.no_interval", why=why))
        drop = True
    else:
        drop = interval[0] < -margin
        key = "msg.run.reason.interval_below" if drop else "msg.run.reason.interval_above"
        reasons.append(english(key, difference=f"{difference['delta']:+.3f}", low=f"{interval[0]:.3f}",
                               high=f"{interval[1]:.3f}", bound=bound))
    regressing = [name for name, s in by_slice.items() if s["regresses"]]
    for name in regressing:
        s = by_slice[name]
        reasons.append(english("msg.run.reason.slice_regresses", slice=name, regressions=len(s["regressed"]),
                               fixes=len(s["fixed"]), p=f"{s['regression_p_holm']:.3g}"))
    if not regressing:
        reasons.append(english("msg.run.reason.no_slice_regresses", alpha=f"{alpha:g}"))
    if blockers:
        return "blocked", reasons
    return ("hold" if drop or regressing or n_only_base else "ship"), reasons


def _blockers_reason(blockers: list[dict[str, Any]]) -> str:
    """"2 blockers: case demo-30 retrieved forbidden passage p-x; case ...", the first SHOWN_BLOCKERS named."""
    described = [_blocker_text(b) for b in blockers[:SHOWN_BLOCKERS]]
    if len(blockers) > SHOWN_BLOCKERS:
        described.append(english("msg.run.reason.more_blockers", n=len(blockers) - SHOWN_BLOCKERS))
    text = "; ".join(described)
    if len(blockers) == 1:
        return english("msg.run.reason.blocker_one", blockers=text)
    return english("msg.run.reason.blockers", n=len(blockers), blockers=text)


def _blocker_text(blocker: Mapping[str, Any]) -> str:
    """One blocker in words (msg.run.reason.blocker.*), in English."""
    return str(blocker_message(blocker))


def blocker_message(blocker: Mapping[str, Any]) -> Message:
    """One blocker (an entry of run_scoring.score_case's `blockers`) as a message naming its case
    and reason (msg.run.reason.blocker.*): the text of the gate's reasons, which the Runs page
    writes in the user's language. Ids are shortened (messages.shortened)."""
    case_id = shortened(str(blocker["case_id"]))
    reason = blocker["reason"]
    if reason == "forbidden_evidence":
        ids = [shortened(str(p)) for p in blocker["passage_ids"]]
        key = "msg.run.reason.blocker.forbidden_passage" if len(ids) == 1 else "msg.run.reason.blocker.forbidden_passages"
        return msg(key, case_id=case_id, passage_ids=", ".join(ids))
    if reason == "answered_when_expected":
        claims = ", ".join(f"{_claim_name(c)} ({c['label']})" for c in blocker["claims"])
        return msg("msg.run.reason.blocker.answered_when_expected", case_id=case_id, expected=blocker["expected"],
                   claims=claims)
    return msg("msg.run.reason.blocker.severe_contradiction", case_id=case_id, claim=_claim_name(blocker),
               severity=blocker["severity"])


def _claim_name(claim: Mapping[str, Any]) -> str:
    """A claim in a sentence: its id, or its text in quotes (shortened) when it has none."""
    if claim.get("claim_id") is not None:
        return shortened(str(claim["claim_id"]))
    return '"' + shortened(str(claim.get("text") or ""), 60) + '"'
