"""A run report and a run comparison as plain text for the terminal: the output of `annotator run
report` and `annotator run compare`.

Takes the dicts `services.run_reports.run_report` and `compare_report` return (so it formats a
saved JSON report too) and returns text; no computing happens here. Blockers come first in both:
they stop a change whatever the averages say. Every value from a file or a user (run, release,
case, passage and claim ids, claim texts, slices, warnings and reasons) goes through
terminal.terminal_safe: the text holds no control character but the line breaks it puts itself.
"""

from __future__ import annotations

from typing import Any

from annotator.terminal import terminal_safe as _s
from annotator.vocabulary import FAILURE_LABELS, INDICATIVE_BELOW, RUN_STATUSES

FIGURES = ("pass_rate", "mean_recall_at_k", "mean_precision_at_k", "hit_rate_at_k", "mrr", "mean_ndcg_at_k",
           "claim_support_rate", "behavior_match_rate")
"""The figures of a report (overall, per slice and per split), in display order."""
FAILED_SHOWN = 20
"""Failed cases listed in a report's text; the JSON holds them all."""
CASES_SHOWN = 20
"""Fixed and regressed case ids listed in a comparison's text."""


def _interval(interval: list[float] | None) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "-"


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _ids(ids: list[str], limit: int) -> str:
    shown = ", ".join(_s(i) for i in ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "") if ids else "-"


def format_blocker(blocker: dict[str, Any]) -> str:
    """One blocker in words: its case, its reason and what it names (each terminal-safe)."""
    reason = blocker.get("reason")
    case = _s(blocker.get("case_id"))
    if reason == "forbidden_evidence":
        return f"case {case}: retrieved forbidden passage(s) {', '.join(_s(p) for p in blocker.get('passage_ids') or [])}"
    if reason == "answered_when_expected":
        claims = ", ".join(f"{_s(claim.get('claim_id') or claim.get('text'))} ({_s(claim.get('label'))})"
                           for claim in blocker.get("claims") or [])
        return f"case {case}: answered where the gold expects {_s(blocker.get('expected'))}, with claims not supported: {claims}"
    if reason == "severe_contradiction":
        return (f"case {case}: claim {_s(blocker.get('claim_id') or blocker.get('text'))} is contradicted by the evidence, "
                f"severity {_s(blocker.get('severity'))}")
    return f"case {case}: {_s(reason)}"


def _blockers(blockers: list[dict[str, Any]]) -> list[str]:
    if not blockers:
        return ["blockers: none"]
    return [f"BLOCKERS: {len(blockers)} (each stops the change whatever the averages say)",
            *(f"  {format_blocker(blocker)}" for blocker in blockers)]


def _figures(data: dict[str, Any], indent: str) -> list[str]:
    lines = [f"{indent}  {'figure':<20} {'value':>7}  {'95% CI (cases)':<16}"]
    for figure in FIGURES:
        value = data.get(figure)
        if value is None:
            reason = (data.get("undefined") or {}).get(figure, "no data")
            lines.append(f"{indent}  {figure:<20} undefined: {reason}")
        else:
            lines.append(f"{indent}  {figure:<20} {value:>7.4f}  {_interval((data.get('ci95') or {}).get(figure)):<16}")
    return lines


def _counts(data: dict[str, Any], indent: str) -> list[str]:
    n = data.get("n_cases", 0)
    flag = f" (indicative: under {INDICATIVE_BELOW} cases)" if n < INDICATIVE_BELOW else ""
    statuses = ", ".join(f"{status} {(data.get('status_counts') or {}).get(status, 0)}" for status in RUN_STATUSES)
    labels = ", ".join(f"{label} {count}" for label in FAILURE_LABELS
                       if (count := (data.get("failure_label_counts") or {}).get(label, 0)))
    return [f"{indent}  cases {n}{flag}; with relevant evidence {data.get('n_scored', 0)}; "
            f"without (scored on behaviour only) {data.get('n_no_evidence', 0)}",
            f"{indent}  {statuses}", f"{indent}  failure labels: {labels or '-'}"]


BREAKDOWN_FIGURES = ("pass_rate", "mean_recall_at_k", "mrr", "claim_support_rate")
"""The figures of each slice's and split's row, with the pass rate's interval."""


def _breakdown(groups: dict[str, Any], title: str) -> list[str]:
    """One row per slice (or split): its cases, passed cases, blocked cases and BREAKDOWN_FIGURES, the
    pass rate with its interval; a group under INDICATIVE_BELOW cases is marked (*)."""
    if not groups:
        return []
    lines = [f"by {title}  (* indicative: under {INDICATIVE_BELOW} cases)",
             f"  {title:<24} {'cases':>5} {'passed':>6} {'blocked':>7}  {'pass_rate':>9} {'95% CI':<16} "
             + " ".join(f"{figure:>18}" for figure in BREAKDOWN_FIGURES[1:])]
    for group, figures in groups.items():
        n = figures.get("n_cases", 0)
        name = f"{_s(group) or '-'}{'*' if n < INDICATIVE_BELOW else ''}"
        passed = (figures.get("status_counts") or {}).get("passed", 0)
        lines.append(f"  {name:<24} {n:>5} {passed:>6} {len({b.get('case_id') for b in figures.get('blockers') or []}):>7}  "
                     f"{_value(figures.get('pass_rate')):>9} {_interval((figures.get('ci95') or {}).get('pass_rate')):<16} "
                     + " ".join(f"{_value(figures.get(figure)):>18}" for figure in BREAKDOWN_FIGURES[1:]))
    return lines


def format_run_report(data: dict[str, Any]) -> str:
    """The whole report: what was scored against what, the blockers, the figures with case-level
    intervals, the status and failure-label counts, each breakdown, and the failed cases (at most
    FAILED_SHOWN)."""
    lines = [f"run {_s(data['run'])} against release {_s(data['release'])} (manifest sha256 {_s(data['release_manifest_sha256'])})",
             f"  k {data['k']}, unit {data['unit']}, split {data['split']}, retrieval rule {data['retrieval_rule']}; "
             f"cases scored {data['n_cases']} of the release's {data['n_release_cases']} (missing from the run "
             f"{data['n_missing']}, run cases outside the release {data['n_outside_release']}); retrieved ids the "
             f"dataset does not know: {data.get('n_unknown_retrieved', 0)}"]
    if data.get("superseded_by"):
        lines.append(f"  note: this release is superseded by {', '.join(map(_s, data['superseded_by']))}: score against the newest gold")
    lines += [f"  WARNING: {_s(warning)}" for warning in data.get("warnings") or ()]
    lines += _blockers(data.get("blockers") or [])
    lines += _counts(data, "")
    lines += _figures(data, "")
    for key, title in (("by_slice", "slice"), ("by_split", "split")):
        lines += _breakdown(data.get(key) or {}, title)
    failed = [case for case in data.get("cases") or () if case.get("status") != "passed"]
    if failed:
        lines.append(f"failed cases: {len(failed)}" + (f" (the first {FAILED_SHOWN}; --json lists all)"
                                                        if len(failed) > FAILED_SHOWN else ""))
        for case in failed[:FAILED_SHOWN]:
            lines.append(f"  {_s(case['case_id'])}  {_s(case['status'])}  {_s(', '.join(case.get('failure_labels') or [])) or '-'}")
    return "\n".join(lines)


def format_compare(data: dict[str, Any]) -> str:
    """The comparison, decision first: the decision and its reasons, the blockers, fixed and
    regressed cases, the pass rates with the paired interval and McNemar's p, each slice, and the
    metric deltas."""
    lines = [f"DECISION: {data['decision'].upper()}",
             *(f"  - {_s(reason)}" for reason in data.get("reasons") or ()),
             f"candidate {_s(data['candidate'])} against baseline {_s(data['base'])}, release {_s(data['release'])} "
             f"(manifest sha256 {_s(data['release_manifest_sha256'])})",
             f"  split {_s(data['split'])} ({_split_note(data)}), "
             f"k {data['k']}, unit {data['unit']}, margin {data['margin']}, alpha {data['alpha']}",
             f"  cases in both runs {data['n_common']}; only in the baseline {data['n_only_base']}; "
             f"only in the candidate {data['n_only_candidate']}"]
    lines += [f"  WARNING: {_s(warning)}" for warning in data.get("warnings") or ()]
    lines += _blockers(data.get("blockers") or [])
    lines += [f"fixed (failed -> passed): {len(data['fixed'])}: {_ids(data['fixed'], CASES_SHOWN)}",
              f"regressed (passed -> failed): {len(data['regressed'])}: {_ids(data['regressed'], CASES_SHOWN)}",
              f"  fix rate {_value(data.get('fix_rate'))}, regression rate {_value(data.get('regression_rate'))}",
              f"pass rate: baseline {_value(data.get('pass_rate_base'))}, candidate {_value(data.get('pass_rate_candidate'))}, "
              f"difference {_signed(data.get('pass_rate_difference'))} 95% CI (paired cases) {_interval((data.get('ci95') or {}).get('pass_rate_difference'))}; "
              f"exact McNemar p = {_value(data.get('mcnemar_p'))}"]
    slices = data.get("by_slice") or {}
    if slices:
        lines.append(f"  {'slice':<24} {'n':>5} {'fixed':>6} {'regr.':>6} {'p (Holm)':>9}")
        for name, figures in slices.items():
            flag = "  REGRESSES" if figures.get("regresses") else ""
            lines.append(f"  {_s(name) or '-':<24} {figures.get('n', 0):>5} {len(figures.get('fixed') or []):>6} "
                         f"{len(figures.get('regressed') or []):>6} {_value(figures.get('regression_p_holm')):>9}{flag}")
    deltas = data.get("metric_deltas") or {}
    if deltas:
        lines.append(f"  {'figure':<20} {'baseline':>9} {'candidate':>9} {'delta':>8}  95% CI (paired)")
        for figure, delta in deltas.items():
            lines.append(f"  {figure:<20} {_value(delta.get('base')):>9} {_value(delta.get('candidate')):>9} "
                         f"{_signed(delta.get('delta')):>8}  {_interval(delta.get('ci95'))}")
    return "\n".join(lines)


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def _split_note(data: dict[str, Any]) -> str:
    """Why the comparison covers its split: given, the release's holdout, or all (no holdout)."""
    if data.get("split_chosen") != "default":
        return "as given"
    if data["split"] == "holdout":
        return "the release's holdout: the decision is made on cases kept unseen while tuning"
    return "all cases: the release has no holdout cases"
