"""An agreement report as plain text for the terminal: the `annotator agreement` output.

Takes the dict of `AgreementReport.to_json()` (so it formats a saved JSON report too) and
returns lines; no computing happens here. Figures have 3 or 4 decimals, and one that rounds to
zero is written 0.000, never -0.000. Under a table, notes say why a figure has no interval (or no
analytic interval) and why an interval that runs from 0 or below to 1 says little
(agreement.whole_range_note); those of figures that share a reason share one line.
"""

from __future__ import annotations

from typing import Any

from annotator.agreement import METRICS, whole_range_note
from annotator.vocabulary import INDICATIVE_BELOW

GROUP_TITLES = {"slice": "slice", "split": "split", "guideline_version": "guideline version"}
"""The breakdowns a report may carry (by_<key>), with their names in the text."""


def format_agreement(data: dict[str, Any]) -> str:
    """The whole report: coefficients, paradox note, label counts, categories, pairs, sample
    size guidance and every breakdown present in `data` (by_slice, by_split, ...)."""
    sections = [
        _coefficients(data, ""),
        _paradox(data),
        _label_counts(data),
        _categories(data),
        _pairs(data),
        _sample_size(data),
        *(_breakdown(data, column) for column in GROUP_TITLES),
    ]
    return "\n".join(section for section in sections if section)


def _interval(interval: list[float] | None) -> str:
    """ "[0.534, 0.861]" ("z": a negative zero, -1e-17 say, is 0.000), or "-" for none."""
    return f"[{interval[0]:z.3f}, {interval[1]:z.3f}]" if interval else "-"


def _notes(indent: str, heading: str, reasons: dict[str, str]) -> list[str]:
    """One line per reason: "<heading> a, b: <reason>", the metrics with that reason in order."""
    by_reason: dict[str, list[str]] = {}
    for metric, reason in reasons.items():
        by_reason.setdefault(reason, []).append(metric)
    return [f"{indent}  {heading} {', '.join(metrics)}: {reason}" for reason, metrics in by_reason.items()]


def _coefficients(data: dict[str, Any], indent: str) -> str:
    """A header line and one line per coefficient: value, bootstrap and analytic 95% CI, n."""
    flag = (f" (indicative only: fewer than {INDICATIVE_BELOW} items)"
            if data.get("indicative") and data["n_items"] else "")
    lines = [f"{indent}items with >= 2 labels: {data['n_items']} of {data['n_in_scope']} in scope; "
             f"raters: {data['n_raters']}{flag}"]
    lines.append(f"{indent}  {'coefficient':<20} {'value':>7}  {'95% CI (bootstrap)':<18}  "
                 f"{'95% CI (analytic)':<18}  n used / in scope")
    missing_why: dict[str, str] = {}
    analytic_missing: dict[str, str] = {}
    whole: dict[str, str] = {}
    for metric in METRICS:
        if metric not in data:
            continue
        value = data[metric]
        if value is None:
            reason = (data.get("undefined") or {}).get(metric, "no data")
            lines.append(f"{indent}  {metric:<20} undefined: {reason}")
            continue
        boot = _interval((data.get("ci95") or {}).get(metric))
        missing = (data.get("ci95_missing") or {}).get(metric)
        if boot == "-" and missing and "no bootstrap" not in missing:
            missing_why[metric] = missing
        if note := whole_range_note((data.get("ci95") or {}).get(metric)):
            whole[metric] = note
        analytic = _interval((data.get("analytic_ci95") or {}).get(metric))
        if analytic == "-" and (why := (data.get("analytic_ci95_missing") or {}).get(metric)):
            analytic_missing[metric] = why
        n_used = (data.get("n_used") or {}).get(metric, data["n_items"])
        lines.append(f"{indent}  {metric:<20} {value:>z7.4f}  {boot:<18}  {analytic:<18}  "
                     f"{n_used} / {data['n_in_scope']}")
    notes = ([f"{indent}  no interval for {metric}: {why}" for metric, why in missing_why.items()]
             + _notes(indent, "the interval of", whole)
             + _notes(indent, "no analytic interval for", analytic_missing))
    return "\n".join(lines + notes)


def _paradox(data: dict[str, Any]) -> str:
    paradox = data.get("paradox")
    if not paradox:
        return ""
    ac1 = paradox["gwet_ac1"]
    return (f"Note: percent agreement is high ({paradox['percent_agreement']:.3f}) but "
            f"{paradox['kappa_metric']} is much lower ({paradox['kappa']:.3f}): "
            f"{paradox['dominant_category']!s} is {paradox['dominant_share']:.0%} of the labels, so chance "
            "agreement is high (the kappa paradox). Gwet's AC1, less sensitive to skewed categories, is "
            + ("undefined." if ac1 is None else f"{ac1:.3f}."))


def _label_counts(data: dict[str, Any]) -> str:
    counts = data.get("label_counts") or {}
    if not counts:
        return ""
    categories = [str(c) for c in data["categories"]]
    width = max(len(r) for r in counts) + 2
    lines = ["labels per rater:", "  " + " " * width + "".join(f"{c:>14}" for c in categories)]
    lines += ["  " + f"{rater:<{width}}" + "".join(f"{row.get(c, 0):>14}" for c in categories)
              for rater, row in counts.items()]
    return "\n".join(lines)


def _categories(data: dict[str, Any]) -> str:
    per_category = data.get("by_category") or {}
    if not per_category:
        return ""
    lines = ["specific agreement (when one rater chose the category, how often the other did too):"]
    whole: dict[str, str] = {}
    for category, part in per_category.items():
        if part["specific_agreement"] is None:
            lines.append(f"  {category:<20} undefined: {part['undefined']}")
        else:
            lines.append(f"  {category:<20} {part['specific_agreement']:>z7.4f}  {_interval(part['ci95']):<18}  "
                         f"{_count(part['n_ratings'], 'rating')}")
            if note := whole_range_note(part["ci95"]):
                whole[str(category)] = note
    return "\n".join(lines + _notes("", "the interval of", whole))


def _pairs(data: dict[str, Any]) -> str:
    pairs = data.get("by_pair") or []
    if not pairs:
        return ""
    categories = [str(c) for c in data["categories"]]
    lines = ["labeler pairs (Cohen's kappa on the items both labeled; rows: first rater, columns: second):"]
    for pair in pairs:
        kappa = pair["cohen_kappa"]
        shown = (f"undefined: {pair['undefined'].get('cohen_kappa')}" if kappa is None
                 else f"{kappa:z.4f} {_interval(pair['ci95'].get('cohen_kappa'))}")
        lines.append(f"  {pair['rater_a']} x {pair['rater_b']}: kappa {shown}, "
                     f"percent agreement {pair['percent_agreement']:z.4f}, n = {pair['n_items']}")
        width = max(map(len, categories)) + 2
        lines.append("    " + " " * width + "".join(f"{c:>14}" for c in categories))
        lines += ["    " + f"{c:<{width}}" + "".join(f"{n:>14}" for n in row)
                  for c, row in zip(categories, pair["confusion"])]
    return "\n".join(lines)


def _sample_size(data: dict[str, Any]) -> str:
    guide = data.get("sample_size")
    if not guide:
        return ""
    target, now = guide["target_half_width"], guide["half_width"]
    if guide["more_items"] == 0:
        return (f"sample size: the {guide['metric']} interval is already +-{now:.3f}, within +-{target:g} "
                f"({_count(guide['n_items'], 'item')}).")
    return (f"sample size: about {guide['more_items']} more double-labeled items ({guide['items_needed']} in all) "
            f"would bring the {guide['metric']} interval to +-{target:g} (now +-{now:.3f} from "
            f"{_count(guide['n_items'], 'item')}); an estimate assuming the labels keep their current mix.")


def _count(n: int, noun: str) -> str:
    """'1 item', '2 items'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _breakdown(data: dict[str, Any], column: str) -> str:
    parts = data.get(f"by_{column}") or {}
    if not parts:
        return ""
    lines = [f"by {GROUP_TITLES[column]}:"]
    for name, part in parts.items():
        flag = f" (indicative: fewer than {INDICATIVE_BELOW} items)" if part.get("indicative") else ""
        lines.append(f"  {name or '(none)'}{flag}:")
        lines.append(_coefficients(part, "    "))
    return "\n".join(lines)
