"""Text and table rows for the Agreement page, from the plain dict of `AgreementReport.to_json()`.

Every figure reads "value [low, high]"; every n reads "used / in scope"; an undefined
coefficient reads "undefined: <reason>", never NaN or a blank; an analytic interval left out says
why, and so does an interval that runs from 0 (or below) to 1 (agreement.whole_range_note).
Numbers are written as the current language writes them (i18n.number_text: never "-0.000"). No
Streamlit here: plain data in, strings, DataFrames and chart points out, so the page only lays
them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from annotator.agreement import METRICS, whole_range_note
from annotator.services.reports import MIXED_VERSIONS
from annotator.ui.charts import IntervalPoint, PairCell
from annotator.messages import recognize
from annotator.ui.i18n import ENGLISH, message_text, number_text, t
from annotator.ui.plain import plain_text
from annotator.vocabulary import INDICATIVE_BELOW

MAIN_METRICS: tuple[str, ...] = ("percent_agreement", "cohen_kappa", "krippendorff_alpha")
"""The headline coefficients with two labelers (from three on, Fleiss' kappa replaces Cohen's:
see main_metrics)."""

GROUP_METRICS: tuple[str, ...] = (*MAIN_METRICS, "gwet_ac1")
"""The coefficients of a breakdown table and chart with two labelers (AC1 too: a small group is
often skewed)."""

GROUP_DIGITS = 2
"""Decimals of a breakdown's figures: a group holds few claims, a third decimal would be noise."""

SAMPLE_SIZE_METRIC = "krippendorff_alpha"
"""The coefficient small-sample guidance is given for (the one `to_json` sizes)."""

Report = Mapping[str, Any]


def kappa_metric(report: Report) -> str:
    """The kappa to headline: Cohen's with two labelers; Fleiss' from three on, where Cohen's
    kappa (a two-rater coefficient) is undefined and each pair's is in the pair table."""
    return "cohen_kappa" if report.get("n_raters", 0) <= 2 else "fleiss_kappa"


def main_metrics(report: Report) -> tuple[str, ...]:
    """MAIN_METRICS with the report's kappa (see kappa_metric)."""
    return tuple(kappa_metric(report) if m == "cohen_kappa" else m for m in MAIN_METRICS)


def group_metrics(report: Report) -> tuple[str, ...]:
    """GROUP_METRICS with the whole report's kappa, so every group shows the same columns."""
    return tuple(kappa_metric(report) if m == "cohen_kappa" else m for m in GROUP_METRICS)


# --- single figures --------------------------------------------------------------------------


def number(value: float | None) -> str:
    """A coefficient with three decimals, or "undefined"."""
    return t("agreement.undefined_short") if value is None else number_text(value, ".3f")


def interval(ci: Sequence[float] | None, digits: int = 3) -> str:
    """ "[0.534, 0.861]", or "no interval"."""
    return t("agreement.no_interval") if not ci else f"[{number_text(ci[0], f'.{digits}f')}, {number_text(ci[1], f'.{digits}f')}]"


def reason(report: Report, metric: str) -> str:
    """Why `metric` is undefined in `report` (a report or a by_pair entry), in the current language."""
    return note((report.get("undefined") or {}).get(metric)) or t("agreement.no_data")


NOTE_PREFIXES: tuple[str, ...] = ("msg.agreement.", "msg.calibration.", "msg.judge.", "msg.run.")
"""The messages a report's notes are written from: agreement.py's, calibration.py's, the judge
report's (services/judges.py) and the run reports' (run_scoring.py, run_compare.py,
services/run_reports.py)."""


def note(text: str | None) -> str | None:
    """A report's note (why a coefficient, a rate or an interval is missing, what an estimate
    assumes: English text, as the core writes it) in the current language: the text of its message
    among NOTE_PREFIXES (messages.recognize), or the text as it is when it is none of them."""
    if not text:
        return text
    found = next((message for prefix in NOTE_PREFIXES if (message := recognize(text, prefix)) is not None), None)
    return text if found is None else message_text(found)


def figure(report: Report, metric: str, digits: int = 3) -> str:
    """ "0.712 [0.534, 0.861]" (bootstrap interval), "0.712 (no interval)", or "undefined: <reason>".
    Works on a report and on a by_pair entry; `digits` decimals (2 for small groups)."""
    value = report.get(metric)
    if value is None:
        return t("agreement.undefined", reason=reason(report, metric))
    ci = (report.get("ci95") or {}).get(metric)
    shown = number_text(value, f".{digits}f")
    return f"{shown} {interval(ci, digits)}" if ci else t("agreement.value_only", value=shown)


def n_text(report: Report, metric: str) -> str:
    """ "n = 18 / 20": items `metric` used, of the items in scope."""
    return t("agreement.n", used=(report.get("n_used") or {}).get(metric, 0), scope=report["n_in_scope"])


def analytic(report: Report, metric: str) -> str:
    """The analytic 95% interval as "[low, high]"; "none: <why>" where the report says why it left
    one out (analytic_ci95_missing: too few claims, say); else a dash (no analytic interval exists
    for the metric, or with this number of labelers)."""
    ci = (report.get("analytic_ci95") or {}).get(metric)
    if ci:
        return interval(ci)
    why = (report.get("analytic_ci95_missing") or {}).get(metric)
    return t("agreement.analytic_missing", why=note(why)) if why else t("agreement.analytic_none")


def whole_range_text(intervals: Mapping[str, Sequence[float] | None]) -> str | None:
    """One sentence for the intervals that run from 0 (or below) to 1, naming them and saying why
    they bound nothing (agreement.whole_range_note); None when none does. `intervals`: display
    name (a coefficient's, a category's) -> its interval or None."""
    names = [name for name, ci in intervals.items() if whole_range_note(ci)]
    if not names:
        return None
    return t("agreement.whole_range_because", names=t("agreement.list_separator").join(names),
             why=note(whole_range_note(next(ci for ci in intervals.values() if whole_range_note(ci)))))


def overall_notes(report: Report) -> list[str]:
    """The notes under the overall table: why a coefficient has no bootstrap interval, and which
    intervals bound nothing (whole_range_text)."""
    notes = [t("agreement.no_interval_because", metric=t(f"metric.{metric}"), why=note(why))
             for metric, why in (report.get("ci95_missing") or {}).items() if report.get(metric) is not None]
    whole = whole_range_text({t(f"metric.{m}"): (report.get("ci95") or {}).get(m)
                              for m in METRICS if report.get(m) is not None})
    return notes + ([whole] if whole else [])


def category_name(category: str) -> str:
    """A label category's display name (the category itself when the catalog has none)."""
    key = f"value.{category}"
    return t(key) if key in ENGLISH else str(category)


def group_name(column: str, value: str) -> str:
    """A group value for display as plain text (plain.plain_text): "" is "(none set)", and a
    guideline version of "mixed" says so."""
    if value == "":
        return t("agreement.group_none")
    if column == "guideline_version" and value == MIXED_VERSIONS:
        return t("agreement.group_mixed")
    return plain_text(value)


# --- the paradox and the sample size ----------------------------------------------------------


def paradox_text(report: Report) -> str | None:
    """The kappa-paradox explanation, or None when the report flags no paradox."""
    paradox = report.get("paradox")
    if not paradox:
        return None
    return t("agreement.paradox", pa=paradox["percent_agreement"], kappa_name=t(f"metric.{paradox['kappa_metric']}"),
             kappa=paradox["kappa"], category=category_name(paradox["dominant_category"]),
             share=paradox["dominant_share"], ac1=figure(report, "gwet_ac1"))


def sample_size_text(report: Report, target: float) -> str:
    """How many more double-labeled claims would narrow alpha's interval to ±target; that it is
    narrow enough already; or why there is no estimate. `report` is to_json(target)."""
    metric = t(f"metric.{SAMPLE_SIZE_METRIC}")
    guide = report.get("sample_size")
    if not guide:
        why = (reason(report, SAMPLE_SIZE_METRIC) if report.get(SAMPLE_SIZE_METRIC) is None
               else note((report.get("ci95_missing") or {}).get(SAMPLE_SIZE_METRIC)) or t("agreement.zero_width"))
        return t("agreement.no_estimate", metric=metric, reason=why)
    fields = {"metric": metric, "target": target, "now": guide["half_width"], "n": guide["n_items"]}
    if guide["more_items"] <= 0:
        return t("agreement.already_narrow", **fields)
    return t("agreement.more_items", more=guide["more_items"], **fields)


def more_items(report: Report) -> str:
    """A group's extra claims needed for the target, as text ("no interval" when none)."""
    guide = report.get("sample_size")
    return t("agreement.no_interval") if not guide else number_text(guide["more_items"], ",")


# --- tables ----------------------------------------------------------------------------------


def overall_table(report: Report) -> pd.DataFrame:
    """One row per coefficient: name, value [bootstrap CI], analytic CI, n used / in scope."""
    return pd.DataFrame(
        [{t("col.metric"): t(f"metric.{m}"), t("col.value"): figure(report, m), t("col.analytic"): analytic(report, m),
          t("col.n"): t("agreement.n_short", used=(report.get("n_used") or {}).get(m, 0), scope=report["n_in_scope"])}
         for m in METRICS],
        columns=[t("col.metric"), t("col.value"), t("col.analytic"), t("col.n")],
    )


def label_count_table(report: Report) -> pd.DataFrame:
    """Categories x labelers (narrow: one column a labeler): "n (share of that labeler's
    labels)" per category, and each labeler's total in the last row."""
    categories = list(report["categories"])
    columns = {}
    for rater, counts in (report.get("label_counts") or {}).items():
        total = sum(counts.get(c, 0) for c in categories)
        columns[plain_text(rater)] = [t("agreement.count_share", n=counts.get(c, 0), share=counts.get(c, 0) / max(total, 1))
                               for c in categories] + [number_text(total, ",")]
    index = pd.Index([*(category_name(c) for c in categories), t("col.total")], name=t("col.category"))
    return pd.DataFrame(columns, index=index)


def group_table(column: str, groups: Mapping[str, Report], target: float,
                metrics: Sequence[str] = GROUP_METRICS) -> tuple[pd.DataFrame, list[str]]:
    """One row per group: its name, claims, the indicative note (as text), the `metrics`
    figures (GROUP_DIGITS decimals), and the extra claims its alpha needs for ±target; and the
    notes that say why: an undefined cell reads "undefined (note 1)", a figure whose interval runs
    from 0 (or below) to 1 "0.67 [0.00, 1.00] (note 2)", and each note gives the reason (reasons
    are long and repeat across groups, so each is written once under the table)."""
    reasons: list[str] = []  # the note lines, numbered from 1

    def numbered(line: str) -> int:
        if line not in reasons:
            reasons.append(line)
        return reasons.index(line) + 1

    def cell(part: Report, metric: str) -> str:
        if part.get(metric) is not None:
            ci = (part.get("ci95") or {}).get(metric)
            if why := whole_range_note(ci):
                return t("agreement.figure_note", figure=figure(part, metric, GROUP_DIGITS),
                         n=numbered(t("agreement.interval_note_reason", reason=note(why))))
            return figure(part, metric, GROUP_DIGITS)
        return t("agreement.undefined_note", n=numbered(t("agreement.undefined_note_reason", reason=reason(part, metric))))

    name = t(f"col.{column}")
    columns = [name, t("col.items"), t("col.indicative"), *(t(f"metric_short.{m}") for m in metrics),
               t("col.more_items", target=target)]
    rows = [[group_name(column, value), part["n_items"], t("agreement.indicative") if part.get("indicative") else "",
             *(cell(part, m) for m in metrics), more_items(part)]
            for value, part in groups.items()]
    notes = [t("agreement.note_line_any", n=k, text=line) for k, line in enumerate(reasons, start=1)]
    return pd.DataFrame(rows, columns=columns), notes


def group_points(column: str, groups: Mapping[str, Report], metrics: Sequence[str] = GROUP_METRICS) -> list[IntervalPoint]:
    """Chart points of a breakdown: one per group and coefficient of `metrics`."""
    points = []
    for value, part in groups.items():
        key = "agreement.group_row_indicative" if part.get("indicative") else "agreement.group_row"
        row = t(key, group=group_name(column, value), n=part["n_items"])
        for metric in metrics:
            points.append(_point(row, t(f"metric_short.{metric}"), part.get(metric), (part.get("ci95") or {}).get(metric),
                                 marker_note(part.get("indicative"))))
    return points


def marker_notes() -> tuple[str, str]:
    """The two legend entries of a breakdown chart: enough claims, indicative only."""
    return (t("agreement.marker_full", n=INDICATIVE_BELOW), t("agreement.marker_indicative", n=INDICATIVE_BELOW))


def marker_note(indicative: bool | None) -> str:
    """The legend entry of a group."""
    return marker_notes()[1 if indicative else 0]


def overall_points(report: Report) -> list[IntervalPoint]:
    """Chart points of the overall report: one per coefficient."""
    return [_point(t(f"metric.{m}"), "", report.get(m), (report.get("ci95") or {}).get(m)) for m in METRICS]


def _point(row: str, panel: str, value: float | None, ci: Sequence[float] | None, note: str = "") -> IntervalPoint:
    low, high = (ci[0], ci[1]) if ci else (None, None)
    text = t("agreement.undefined_short") if value is None else number_text(value, ".2f")
    return IntervalPoint(row=row, panel=panel, value=value, low=low, high=high, note=note, text=text)


def category_table(report: Report) -> pd.DataFrame:
    """One row per category: specific agreement [CI] (or undefined: reason) and its ratings."""
    rows = []
    for category, part in (report.get("by_category") or {}).items():
        value = part.get("specific_agreement")
        if value is None:
            shown = t("agreement.undefined", reason=note(part.get("undefined")) or t("agreement.no_data"))
        else:
            shown = f"{number(value)} {interval(part.get('ci95'))}"
        rows.append([category_name(category), shown, part.get("n_ratings", 0)])
    return pd.DataFrame(rows, columns=[t("col.category"), t("col.specific"), t("col.ratings")])


def category_whole_range(report: Report) -> str | None:
    """The note under the category table on the specific agreements whose interval runs from 0
    (or below) to 1 (whole_range_text), or None."""
    return whole_range_text({category_name(c): part.get("ci95") for c, part in (report.get("by_category") or {}).items()
                             if part.get("specific_agreement") is not None})


def category_points(report: Report) -> list[IntervalPoint]:
    """Chart points of specific agreement: one per category."""
    return [_point(category_name(c), "", part.get("specific_agreement"), part.get("ci95"))
            for c, part in (report.get("by_category") or {}).items()]


def pair_table(report: Report, pairs: Sequence[Report] | None = None) -> pd.DataFrame:
    """One row per pair of labelers (`pairs`, in their order; default the report's by_pair): the
    two names, claims both labeled, Cohen's kappa and percent agreement with bootstrap intervals,
    and kappa's analytic interval. A pair whose "ci95" is None was not resampled (the page
    resamples the pairs it draws): its value reads "(interval once drawn)"."""
    columns = [t("col.labeler_a"), t("col.labeler_b"), t("col.both"), t("metric.cohen_kappa"),
               t("metric.percent_agreement"), f"{t('metric.cohen_kappa')} · {t('col.analytic')}"]
    rows = [[plain_text(p["rater_a"]), plain_text(p["rater_b"]), p["n_items"], _pair_figure(p, "cohen_kappa"),
             _pair_figure(p, "percent_agreement"), analytic(p, "cohen_kappa")]
            for p in (report.get("by_pair") or [] if pairs is None else pairs)]
    return pd.DataFrame(rows, columns=columns)


def _pair_figure(pair: Report, metric: str) -> str:
    """figure() of a pair, or "0.712 (interval once drawn)" for a pair not resampled (ci95 None)."""
    if pair.get("ci95") is None and pair.get(metric) is not None:
        return t("agreement.value_not_drawn", value=number_text(pair[metric], ".3f"))
    return figure(pair, metric)


PAIR_ORDERS: tuple[str, ...] = ("kappa", "items", "name")
"""How the Agreement page can order the pairs of labelers it draws (see ordered_pairs)."""


def ordered_pairs(pairs: Sequence[Report], order: str) -> list[Report]:
    """The by_pair entries in one of PAIR_ORDERS: "kappa", lowest Cohen's kappa first (the pairs
    that agree least, where the guideline or a labeler needs a look), an undefined kappa last,
    ties by more claims both labeled; "items", most claims both labeled first, ties by lower
    kappa; "name", as the report gives them (by the labelers' names). Ties keep the report's order.
    Raises ValueError for another order."""
    def kappa(pair: Report) -> tuple[bool, float]:
        value = pair.get("cohen_kappa")
        return value is None, 0.0 if value is None else value

    if order == "kappa":
        return sorted(pairs, key=lambda p: (*kappa(p), -p["n_items"]))
    if order == "items":
        return sorted(pairs, key=lambda p: (-p["n_items"], *kappa(p)))
    if order == "name":
        return list(pairs)
    raise ValueError(f"unknown order of pairs {order!r}; use one of {', '.join(PAIR_ORDERS)}")


def pair_option(pair: Report) -> str:
    """A pair as a choice of the page's pair select: "alice and bob, 16 claims both labeled"."""
    return t("agreement.pair_option", a=plain_text(pair["rater_a"]), b=plain_text(pair["rater_b"]), n=pair["n_items"])


def pair_cells(report: Report) -> tuple[list[str], list[PairCell]]:
    """The labelers and one cell per pair of them for the pair matrix: Cohen's kappa, "undefined",
    or "no shared claims" for a pair that labeled no claim in common."""
    raters = sorted(str(r) for r in report.get("label_counts") or {})
    found = {(str(p["rater_a"]), str(p["rater_b"])): p for p in report.get("by_pair") or []}
    cells = []
    for i, a in enumerate(raters):
        for b in raters[i + 1:]:
            pair = found.get((a, b)) or found.get((b, a))
            if pair is None:
                cells.append(PairCell(a, b, None, t("agreement.cell_none")))
            else:
                kappa = pair.get("cohen_kappa")
                cells.append(PairCell(a, b, kappa, number(kappa) if kappa is None else number_text(kappa, ".2f")))
    return raters, cells


def confusion_frame(pair: Report, categories: Sequence[str]) -> pd.DataFrame:
    """A pair's confusion matrix as a table: rows the first labeler's labels, columns the second's."""
    names = [category_name(c) for c in categories]
    return pd.DataFrame(pair["confusion"], index=names, columns=names).rename_axis(
        f'{plain_text(pair["rater_a"])} \\ {plain_text(pair["rater_b"])}')
