"""A judge report as plain text for the terminal: the `annotator judge report` output.

Takes the dict `services.judges.judge_report` returns (so it formats a saved JSON report too) and
returns text; no computing happens here. Every id, name, slice and warning from a file or a user
is written through terminal.terminal_safe, so a line break or an escape sequence in one is shown
escaped and never starts a line of its own.
"""

from __future__ import annotations

from typing import Any

from annotator.terminal import terminal_safe as _s
from annotator.vocabulary import INDICATIVE_BELOW

RATES = ("percent_agreement", "cohen_kappa", "false_pass_rate", "false_fail_rate")
"""The figures shown for the judge, each human and each slice or split, in this order."""


def format_judge_report(data: dict[str, Any]) -> str:
    """The whole report: what was scored against what, the judge's figures with both intervals,
    the confusion matrix, the humans beside it, the corrected support rate, each breakdown, and
    the disagreements (at most DISAGREEMENTS_SHOWN)."""
    sections = [_header(data), _figures(data, ""), _confusion(data), _humans(data), _corrected(data),
                *(_breakdown(data, key) for key in ("by_slice", "by_split")), _disagreements(data)]
    return "\n".join(section for section in sections if section)


def _interval(interval: list[float] | None) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "-"


def _header(data: dict[str, Any]) -> str:
    lines = [f"judge run {_s(data['run'])} against release {_s(data['release'])} (manifest sha256 {data['release_manifest_sha256']})"]
    if data.get("superseded_by"):
        lines.append(f"  note: this release is superseded by {_s(', '.join(data['superseded_by']))}: score against the newest gold")
    views = data.get("holdout_views") or {}
    if data["split"] == "holdout":
        lines.append(f"  HOLDOUT figures. This release's holdout has now been viewed {views.get('this_run', 0)} time(s) "
                     f"for this run, {views.get('any_run', 0)} for any run: tune on dev, look at holdout once.")
    else:
        lines.append(f"  dev split only: {data['n_holdout_left_out']} holdout claims left out (--holdout shows them; "
                     f"viewed {views.get('this_run', 0)} time(s) for this run, {views.get('any_run', 0)} for any run)")
    lines.append(f"  gold claims: {data['n_gold']}; labeled by the judge: {data['n_items']}; missing: {data['n_missing']}")
    lines += [f"  WARNING: {_s(warning)}" for warning in data.get("warnings") or ()]
    return "\n".join(lines)


def _figures(data: dict[str, Any], indent: str) -> str:
    lines = [f"{indent}  {'figure':<18} {'value':>7}  {'95% CI (cases)':<16}  {'95% CI (analytic)':<17}  n"]
    indicative = set(data.get("indicative") or ())
    for metric in RATES:
        value = data.get(metric)
        if value is None:
            reason = (data.get("undefined") or {}).get(metric, "no data")
            lines.append(f"{indent}  {metric:<18} undefined: {reason}")
            continue
        n = (data.get("denominators") or {}).get(metric, data.get("n_items"))
        cases = (data.get("denominator_cases") or {}).get(metric)
        n = n if cases is None else f"{n}, cases {cases}"
        flag = f" (indicative: under {INDICATIVE_BELOW} claims or cases)" if metric in indicative else ""
        lines.append(f"{indent}  {metric:<18} {value:>7.4f}  {_interval((data.get('ci95') or {}).get(metric)):<16}  "
                     f"{_interval((data.get('ci95_analytic') or {}).get(metric)):<17}  {n}{flag}")
    return "\n".join(lines)


def _confusion(data: dict[str, Any]) -> str:
    confusion = data.get("confusion") or {}
    if not confusion:
        return ""
    categories = list(confusion)
    lines = ["confusion (rows: gold, columns: judge)", "  " + " " * 14 + "".join(f"{c:>14}" for c in categories)]
    for gold in categories:
        lines.append(f"  {gold:<14}" + "".join(f"{confusion[gold].get(c, 0):>14}" for c in categories))
    return "\n".join(lines)


def _humans(data: dict[str, Any]) -> str:
    humans = data.get("humans") or {}
    if not humans:
        return ""
    lines = ["the humans against the same gold on the same claims (their blind labels, before adjudication; "
             "optimistic: an agreed claim's gold is their own label)"]
    lines.append(f"  {'labeler':<20} {'n':>6}" + "".join(f"  {metric:>18}" for metric in RATES))
    for labeler, scores in humans.items():
        cells = "".join(f"  {_flagged(scores, metric):>18}" for metric in RATES)
        lines.append(f"  {labeler:<20} {scores['n_items']:>6}{cells}")
    lines.append(f"  {'judge':<20} {data['n_items']:>6}" + "".join(f"  {_flagged(data, metric):>18}" for metric in RATES))
    if any(set(scores.get("indicative") or ()) & set(RATES) for scores in [*humans.values(), data]):
        lines.append(f"  * indicative: under {INDICATIVE_BELOW} claims or cases")
    return "\n".join(lines)


def _flagged(scores: dict[str, Any], metric: str) -> str:
    """The value, marked * when it is indicative."""
    return _value(scores.get(metric)) + ("*" if metric in (scores.get("indicative") or ()) else " ")


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _corrected(data: dict[str, Any]) -> str:
    corrected = data.get("corrected_support_rate")
    if corrected is None:
        reason = (data.get("undefined") or {}).get("corrected_support_rate")
        return f"corrected support rate: none ({reason})" if reason else ""
    unit = "cases" if corrected.get("interval_unit") == "case" else "claims"
    lines = ["support rate of the judged claims (prediction-powered, PPI++)",
             f"  {'':<10} {'value':>7}  {'95% CI (' + unit + ')':<16}  {'95% CI (claims)':<16}",
             f"  {'corrected':<10} {_value(corrected.get('estimate')):>7}  {_interval(corrected.get('ci95')):<16}  "
             f"{_interval(corrected.get('ci95_analytic')):<16}  (n gold {corrected.get('n_labeled')}, judged only "
             f"{corrected.get('n_unlabeled')}, lambda {_value(corrected.get('lambda'))})",
             f"  {'judge only':<10} {_value(corrected.get('naive_judge_rate')):>7}  {_interval(corrected.get('naive_judge_ci95')):<16}  "
             f"{_interval(corrected.get('naive_judge_ci95_analytic')):<16}",
             f"  {'gold only':<10} {_value(corrected.get('gold_only_rate')):>7}  {_interval(corrected.get('gold_only_ci95')):<16}  "
             f"{_interval(corrected.get('gold_only_ci95_analytic')):<16}",
             f"  it {corrected.get('assumption', '')}"]
    mix = corrected.get("slice_mix") or {}
    if mix.get("differs"):
        lines.append(f"  WARNING: the gold claims' slice mix differs from the judged-only claims' (total variation "
                     f"{mix['total_variation']:.2f}, chi-square p {mix['p_value']:.2g}): the corrected rate may be biased")
    return "\n".join(lines)


def _breakdown(data: dict[str, Any], key: str) -> str:
    groups = data.get(key) or {}
    if not groups:
        return ""
    what = key.removeprefix("by_")
    if len(groups) == 1 and next(iter(groups.values()))["n_gold"] == data["n_gold"]:
        return f"by {what}: one {what}, {_s(next(iter(groups)))}, with the figures above"
    lines = [f"by {what}"]
    for value, scores in groups.items():
        lines.append(f"  {_s(value)}: gold {scores['n_gold']}, judged {scores['n_items']}")
        lines.append(_figures(scores, "  "))
    return "\n".join(lines)


DISAGREEMENTS_SHOWN = 20


def _disagreements(data: dict[str, Any]) -> str:
    rows = data.get("disagreements") or []
    if not rows:
        return "disagreements: none"
    lines = [f"disagreements: {len(rows)} (first {min(len(rows), DISAGREEMENTS_SHOWN)}; --json lists all)"]
    lines += [f"  {_s(row['claim_id'])}\t{_s(row['case_id'])}\t{_s(row['slice'])}\t{_s(row['split'])}\tgold "
              f"{_s(row['gold_label'])}\tjudge {_s(row['judge_label'])}" for row in rows[:DISAGREEMENTS_SHOWN]]
    return "\n".join(lines)
