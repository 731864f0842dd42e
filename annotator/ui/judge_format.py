"""Text, tables and chart points for the Judges page, from the plain dict `services.judges.judge_report`
returns (and a judge run as `services.judges.list_judge_runs` lists it).

Rates are fractions 0..1, written with three decimals as the Agreement page writes coefficients:
"0.474 [0.263, 0.700]" (the case-level bootstrap interval), the analytic interval (Wilson's for
the rates, Fleiss, Cohen & Everitt's for kappa) in a column of its own, every rate with its n (the claims it is
a fraction of) and "indicative only" when that n is under 10. An undefined rate reads "undefined:
<reason>" in the current language (format.note). Values from users and files (run, model, claim
and case ids, slices, labeler names) go through plain_text (or plain_markdown, for Markdown
places). No Streamlit here: plain data in, strings, DataFrames and chart points out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from annotator.calibration import SLICE_MIX_MAX_P, SLICE_MIX_MIN_DISTANCE
from annotator.ui import format as fmt
from annotator.ui.charts import IntervalPoint
from annotator.ui.i18n import datetime_text, number_text, t
from annotator.ui.plain import md, plain_text
from annotator.vocabulary import INDICATIVE_BELOW

RATES: tuple[str, ...] = ("percent_agreement", "cohen_kappa", "false_pass_rate", "false_fail_rate")
"""The judge's figures, in display order (calibration.JUDGE_METRICS)."""

SLICE_RATES: tuple[str, ...] = ("false_pass_rate", "false_fail_rate")
"""The figures of the per-slice chart: how wrong the judge is where it is wrong."""

Report = Mapping[str, Any]


# --- single figures --------------------------------------------------------------------------


def figure(report: Report, metric: str, digits: int = 3) -> str:
    """ "0.474 [0.263, 0.700]" (case-level bootstrap interval), "0.474 (no interval)", or
    "undefined: <reason>" (format.figure: the judge report has the same `ci95` and `undefined`)."""
    return fmt.figure(report, metric, digits)


def analytic(report: Report, metric: str) -> str:
    """The analytic 95% interval ("[low, high]"), or a dash where there is none."""
    ci = (report.get("ci95_analytic") or {}).get(metric)
    return fmt.interval(ci) if ci else t("agreement.analytic_none")


def denominator(report: Report, metric: str) -> int:
    """The claims `metric` is a fraction of (all judged claims for agreement and kappa; those whose
    gold is not `support` for the false pass rate; those whose gold is `support` for the false fail rate)."""
    return int((report.get("denominators") or {}).get(metric, report.get("n_items", 0)))


def is_indicative(report: Report, metric: str) -> bool:
    """Whether `metric`'s n is under INDICATIVE_BELOW (the report lists such metrics)."""
    return metric in (report.get("indicative") or ())


def n_text(report: Report, metric: str) -> str:
    """ "n = 19 · cases = 7", with "indicative only" when either is under INDICATIVE_BELOW
    (the bootstrap resamples cases: 40 claims of 2 cases say as little as 2 claims)."""
    cases = (report.get("denominator_cases") or {}).get(metric)
    n = denominator(report, metric)
    text = t("judges.n", n=n) if cases is None else t("judges.n_cases", n=n, cases=cases)
    return f"{text} · {t('agreement.indicative')}" if is_indicative(report, metric) else text


def interval_note(report: Report, metric: str) -> str:
    """Why a defined figure has no bootstrap interval ("" when it has one, or is undefined)."""
    if report.get(metric) is None or (report.get("ci95") or {}).get(metric):
        return ""
    why = fmt.note((report.get("ci95_missing") or {}).get(metric)) or t("agreement.no_data")
    return t("judges.no_interval", why=why)


# --- the run and the scope -------------------------------------------------------------------


def run_table(run: Mapping[str, Any]) -> pd.DataFrame:
    """A judge run's metadata (an entry of `list_judge_runs`) as two columns, field and value, all plain text."""
    counts = run.get("label_counts") or {}
    label_counts = ", ".join(f"{fmt.category_name(label)} {number_text(n)}" for label, n in counts.items())
    rows = [
        ("judges.meta.model", run.get("model") or "-"),
        ("judges.meta.prompt_version", run.get("prompt_version") or "-"),
        ("judges.meta.dataset", run.get("dataset") or "-"),
        ("judges.meta.labels", t("judges.meta.labels_value", n=run.get("n_labels", 0), counts=label_counts)),
        ("judges.meta.created", created_text(run.get("created_at"))),
        ("judges.meta.creator", run.get("creator") or t("judges.meta.command_line")),
        ("judges.meta.source", t("judges.meta.source_value", name=plain_text(run.get("source_name") or "-"),
                                 sha256=run.get("source_sha256") or "-")),
        ("judges.meta.note", run.get("note") or "-"),
    ]
    return pd.DataFrame([[t(key), plain_text(value)] for key, value in rows],
                        columns=[t("judges.col.field"), t("judges.col.detail")])


def created_text(created: str | None) -> str:
    """A run's created_at (ISO 8601 text) as the user's language writes a time, to the second; the
    text as it is when it is not a time, "-" when there is none."""
    try:
        return datetime_text(datetime.fromisoformat(str(created)), seconds=True)
    except ValueError:
        return str(created or "-")


def scope_text(report: Report) -> str:
    """What the figures cover, for a Markdown place: the split, the gold claims, those the judge
    labeled and those it did not, and (dev) the holdout claims left out."""
    fields = {"gold": report["n_gold"], "judged": report["n_items"], "missing": report["n_missing"]}
    if report["split"] == "holdout":
        return t("judges.scope_holdout", **fields)
    return t("judges.scope_dev", left_out=report["n_holdout_left_out"], **fields)


def views_text(report: Report) -> str:
    """How many times this release's holdout figures were viewed, for this run and for any run."""
    views = report.get("holdout_views") or {}
    return t("judges.holdout_views", this_run=views.get("this_run", 0), any_run=views.get("any_run", 0))


def superseded_text(report: Report) -> str | None:
    """The note that newer releases of the same data exist (Markdown, names as plain text), or None."""
    newer = report.get("superseded_by") or []
    return md("judges.superseded", release=report["release"], newer=", ".join(newer)) if newer else None


# --- tables ----------------------------------------------------------------------------------


def figures_table(report: Report) -> pd.DataFrame:
    """One row per figure: its name, value [bootstrap CI], analytic CI, n, and the note (indicative
    only; why there is no interval)."""
    columns = [t("judges.col.figure"), t("judges.col.value"), t("col.analytic"), t("judges.col.n"), t("col.indicative")]
    rows = []
    for metric in RATES:
        notes = [t("agreement.indicative")] if is_indicative(report, metric) else []
        notes += [note] if (note := interval_note(report, metric)) else []
        rows.append([t(f"metric.{metric}"), figure(report, metric), analytic(report, metric),
                     denominator(report, metric), "; ".join(notes)])
    return pd.DataFrame(rows, columns=columns)


def confusion_matrix(report: Report) -> tuple[list[str], list[list[int]]]:
    """The display names of the categories and the counts, rows the gold label, columns the judge's."""
    categories = list(report.get("categories") or report["confusion"])
    matrix = [[int(report["confusion"][gold].get(judge, 0)) for judge in categories] for gold in categories]
    return [fmt.category_name(c) for c in categories], matrix


def confusion_frame(report: Report) -> pd.DataFrame:
    """The confusion matrix as a table: rows the gold label, columns the judge's."""
    names, matrix = confusion_matrix(report)
    return pd.DataFrame(matrix, index=names, columns=names).rename_axis(t("judges.confusion_axes"))


def slice_table(report: Report) -> tuple[pd.DataFrame, list[str]]:
    """One row per slice: its name, gold claims, claims the judge labeled, and the false pass and
    false fail rates with their n (two decimals: a slice holds few claims); and the notes that say
    why a rate is undefined (each reason written once under the table, as on the Agreement page)."""
    reasons: list[str] = []

    def cell(part: Report, metric: str) -> str:
        if part.get(metric) is not None:
            shown = figure(part, metric, fmt.GROUP_DIGITS)
            return f"{shown} ({n_text(part, metric)})"
        why = fmt.reason(part, metric)
        if why not in reasons:
            reasons.append(why)
        return t("agreement.undefined_note", n=reasons.index(why) + 1)

    columns = [t("col.slice"), t("judges.col.gold_claims"), t("judges.col.judged"),
               *(t(f"metric.{m}") for m in SLICE_RATES)]
    rows = [[fmt.group_name("slice", value), part["n_gold"], part["n_items"], *(cell(part, m) for m in SLICE_RATES)]
            for value, part in (report.get("by_slice") or {}).items()]
    notes = [t("agreement.note_line", n=k, reason=why) for k, why in enumerate(reasons, start=1)]
    return pd.DataFrame(rows, columns=columns), notes


def slice_points(report: Report) -> list[IntervalPoint]:
    """Chart points of the per-slice rates: one per slice and rate of SLICE_RATES, marked
    indicative (by shape) when that rate's n is under INDICATIVE_BELOW."""
    points = []
    for value, part in (report.get("by_slice") or {}).items():
        row = t("agreement.group_row", group=fmt.group_name("slice", value), n=part["n_items"])
        for metric in SLICE_RATES:
            ci = (part.get("ci95") or {}).get(metric)
            value_ = part.get(metric)
            text = t("agreement.undefined_short") if value_ is None else number_text(value_, ".2f")
            points.append(IntervalPoint(row=row, panel=t(f"metric.{metric}"), value=value_,
                                        low=ci[0] if ci else None, high=ci[1] if ci else None,
                                        note=marker_note(is_indicative(part, metric)), text=text))
    return points


def marker_notes() -> tuple[str, str]:
    """The two legend entries of the per-slice chart: n of 10 or more, indicative only."""
    return (t("judges.marker_full", n=INDICATIVE_BELOW), t("judges.marker_indicative", n=INDICATIVE_BELOW))


def marker_note(indicative: bool) -> str:
    return marker_notes()[1 if indicative else 0]


def humans_table(report: Report) -> pd.DataFrame:
    """The judge beside each human: one row per labeler (their blind labels scored against the same
    gold), the judge's row, and the human range (lowest and highest over the labelers)."""
    columns = [t("judges.col.who"), t("judges.col.claims"), *(t(f"metric.{m}") for m in RATES)]
    rows = [[plain_text(labeler), number_text(scores.get("n_items", 0)), *(_flagged(scores, m) for m in RATES)]
            for labeler, scores in (report.get("humans") or {}).items()]
    rows.append([t("judges.judge_row", run=plain_text(report["run"])), number_text(report["n_items"]),
                 *(_flagged(report, m) for m in RATES)])
    ranges = report.get("human_range") or {}
    rows.append([t("judges.human_range"), "", *(_range(ranges.get(m)) for m in RATES)])
    return pd.DataFrame(rows, columns=columns)


def _flagged(scores: Report, metric: str) -> str:
    """`figure`, with "indicative only" when its n (claims or cases) is under INDICATIVE_BELOW."""
    text = figure(scores, metric)
    return f"{text} · {t('agreement.indicative')}" if is_indicative(scores, metric) else text


def _range(bounds: Sequence[float] | None) -> str:
    if not bounds:
        return t("agreement.analytic_none")
    return t("judges.range", low=number_text(bounds[0], ".3f"), high=number_text(bounds[1], ".3f"))


# --- the corrected support rate --------------------------------------------------------------


def corrected_table(corrected: Report) -> pd.DataFrame:
    """The corrected (PPI++) support rate beside the judge-only and gold-only rates: one row each,
    the rate with its 95% interval and the claims behind it."""
    n, big_n = corrected.get("n_labeled", 0), corrected.get("n_unlabeled", 0)
    rows = [
        ("judges.corrected.ppi", corrected.get("estimate"), corrected.get("ci95"), corrected.get("ci95_analytic"),
         n + big_n, (corrected.get("undefined") or {}).get("estimate")),
        ("judges.corrected.judge_only", corrected.get("naive_judge_rate"), corrected.get("naive_judge_ci95"),
         corrected.get("naive_judge_ci95_analytic"), n + big_n, None),
        ("judges.corrected.gold_only", corrected.get("gold_only_rate"), corrected.get("gold_only_ci95"),
         corrected.get("gold_only_ci95_analytic"), n, None),
    ]
    by_cases = corrected.get("interval_unit") == "case"
    columns = [t("judges.col.estimate"), t("judges.col.rate" if by_cases else "judges.col.rate_claims"),
               t("judges.col.rate_independent"), t("judges.col.claims"), t("judges.col.how")]
    return pd.DataFrame([[t(key), _rate(value, ci, why), fmt.interval(independent) if independent else "-", claims,
                          t(f"{key}_how", n=n, big_n=big_n)]
                         for key, value, ci, independent, claims, why in rows], columns=columns)


def _rate(value: float | None, ci: Sequence[float] | None, why: str | None) -> str:
    if value is None:
        return t("agreement.undefined", reason=fmt.note(why) or t("agreement.no_data"))
    shown = number_text(value, ".3f")
    return f"{shown} {fmt.interval(ci)}" if ci else t("agreement.value_only", value=shown)


def corrected_notes(corrected: Report) -> list[str]:
    """The estimate's power-tuning weight and standard error, and why a part of it is missing
    (a constant judge's lambda, a zero variance), in the current language."""
    notes = []
    if corrected.get("lambda") is not None:
        notes.append(t("judges.corrected.lambda", weight=number_text(corrected["lambda"], ".3f"),
                       se=number_text(corrected.get("standard_error") or 0.0, ".3f")))
    for why in (corrected.get("undefined") or {}).values():
        notes.append(t("judges.corrected.missing", why=fmt.note(why)))
    return notes


def assumption_text(corrected: Report) -> str:
    """What the corrected estimate assumes, in the current language."""
    return t("judges.corrected.assumption", assumption=fmt.note(corrected.get("assumption")) or "")


def slice_mix_text(corrected: Report) -> tuple[bool, str]:
    """(whether to warn, the text): the released claims' slice mix against the judged-only claims'
    (total variation distance, chi-square p-value, and the thresholds of calibration.slice_mix_differs
    that together say "differs"), or why they cannot be compared."""
    mix = corrected.get("slice_mix") or {}
    if mix.get("differs") is None:
        why = next(iter((mix.get("undefined") or {}).values()), None)
        return False, t("judges.slice_mix_unknown", why=fmt.note(why) or t("agreement.no_data"))
    fields = {"distance": number_text(mix["total_variation"], ".3f"), "p": _p_value(mix["p_value"]),
              "labeled": mix["n_labeled"], "unlabeled": mix["n_unlabeled"],
              "max_p": number_text(SLICE_MIX_MAX_P, ".2f"), "min_distance": number_text(SLICE_MIX_MIN_DISTANCE, ".1f")}
    return bool(mix["differs"]), t("judges.slice_mix_differs" if mix["differs"] else "judges.slice_mix_same", **fields)


def _p_value(p: float) -> str:
    return "< " + number_text(0.001, ".3f") if p < 0.001 else number_text(p, ".3f")


# --- the disagreements -----------------------------------------------------------------------


def disagreement_label(row: Mapping[str, Any]) -> str:
    """One disagreement as a link label (Markdown: ids and slice as plain text): the claim, its
    case, slice and split, the gold label and the judge's."""
    return md("judges.disagreement", claim_id=row["claim_id"], case_id=row["case_id"], slice=row["slice"],
              split=row["split"], gold=fmt.category_name(row["gold_label"]), judge=fmt.category_name(row["judge_label"]))
