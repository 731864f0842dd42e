"""Text, tables and chart points for the Runs page, from the plain dicts of
`services.run_reports.run_report`, `compare_report` and `case_detail` (and a run as
`services.runs.list_runs` lists it).

Figures are fractions 0..1 with three decimals and their case-level bootstrap interval, "0.833
[0.583, 1.000]" (a slice's with two: it holds few cases), or "undefined: <reason>" in the current
language (format.note). The gate's reasons and every blocker are English texts in the reports
(msg.run.reason.*): they are found again (messages.recognize) and written in the user's
language. Values from users and files (run, case, passage and document ids, slices, titles,
texts, answers, meta) go through plain_text (or plain_markdown, for Markdown places). No
Streamlit here: plain data in, strings, DataFrames and chart points out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from annotator.messages import Joined, Message, recognize
from annotator.run_compare import blocker_message
from annotator.run_text import FIGURES
from annotator.ui import format as fmt
from annotator.ui.charts import IntervalPoint
from annotator.ui.i18n import number_text, t
from annotator.ui.judge_format import created_text
from annotator.ui.plain import md, message_markdown, plain_markdown, plain_text
from annotator.vocabulary import FAILURE_LABELS, INDICATIVE_BELOW, RUN_STATUSES

Report = Mapping[str, Any]

HEADLINE: tuple[str, ...] = ("pass_rate", "mean_recall_at_k", "mrr", "claim_support_rate")
"""The figures shown big on top of a report: did the case pass, did retrieval find the evidence
(how much of it, how high), are the answer's claims supported."""

SLICE_FIGURES: tuple[str, ...] = ("pass_rate", "mean_recall_at_k", "mrr", "claim_support_rate")
"""The figures of the per-slice chart, one panel each."""

NO_MARGIN = "0 (no margin)"
"""How run_compare writes the bound of a gate without a margin inside its reasons."""


# --- words -----------------------------------------------------------------------------------


def figure_name(figure: str, k: int) -> str:
    """A figure's display name ("Recall@5")."""
    return t(f"metric.{figure}", k=k)


def status_name(status: str) -> str:
    return t(f"runs.status.{status}")


def label_name(label: str) -> str:
    return t(f"runs.label.{label}")


def labels_text(labels: Iterable[str]) -> str:
    """Failure labels in words, comma-separated; a dash for none."""
    return ", ".join(label_name(label) for label in labels) or "-"


def behavior_name(behavior: str | None) -> str:
    """A behaviour (or an expected one) in words; "none stated" for None; an unknown word as plain text."""
    if behavior is None:
        return t("runs.behavior_none")
    return _word("runs.behavior", behavior)


def value_text(value: float | None, digits: int = 3) -> str:
    """A figure with `digits` decimals, or "undefined"."""
    return t("agreement.undefined_short") if value is None else number_text(value, f".{digits}f")


def signed_text(value: float | None) -> str:
    """A change with its sign and three decimals ("+0.583"), or "undefined"."""
    return t("agreement.undefined_short") if value is None else number_text(value, "+.3f")


def p_text(p: float | None) -> str:
    """A p-value with three decimals, "< 0.001" below that; "undefined" for None."""
    if p is None:
        return t("agreement.undefined_short")
    return "< " + number_text(0.001, ".3f") if p < 0.001 else number_text(p, ".3f")


# --- the run and the scope -------------------------------------------------------------------


def run_table(run: Mapping[str, Any]) -> pd.DataFrame:
    """A run's metadata (an entry of `list_runs`) as two columns, field and value, all plain text:
    its dataset, cases, unknown retrieved ids, each meta key (system, model, prompt, index,
    corpus release, any other), when and by whom it was imported, its file, its note."""
    rows = [(t("runs.meta.dataset"), run.get("dataset") or "-"),
            (t("runs.meta.cases"), number_text(int(run.get("n_cases") or 0))),
            (t("runs.meta.unknown"), number_text(int(run.get("n_unknown_retrieved") or 0)))]
    rows += [(t("runs.meta.key", name=plain_text(key)), value) for key, value in (run.get("meta") or {}).items()]
    rows += [(t("runs.meta.created"), created_text(run.get("created_at"))),
             (t("runs.meta.creator"), run.get("creator") or t("judges.meta.command_line")),
             (t("runs.meta.source"), t("judges.meta.source_value", name=plain_text(run.get("source_name") or "-"),
                                       sha256=run.get("source_sha256") or "-")),
             (t("runs.meta.note"), run.get("note") or "-")]
    return pd.DataFrame([[name, plain_text(value)] for name, value in rows],
                        columns=[t("judges.col.field"), t("judges.col.detail")])


def options_text(report: Report) -> str:
    """The options a report or comparison was computed with (Markdown)."""
    return t("runs.options", k=report["k"], unit=t(f"runs.unit.{report['unit']}"),
             rule=t(f"runs.rule.{report['retrieval_rule']}"))


def scope_text(report: Report) -> str:
    """What a report covers, for a Markdown place: the split, the cases scored of the release's,
    those missing from the run and those outside the release, the retrieved ids the dataset does
    not know, the cases without relevant evidence."""
    return md("runs.scope", split=t(f"runs.split.{report['split']}"), n=report["n_cases"],
              of=report["n_release_cases"], missing=report["n_missing"], outside=report["n_outside_release"],
              unknown=report.get("n_unknown_retrieved", 0), no_evidence=report.get("n_no_evidence", 0))


def superseded_text(report: Report) -> str | None:
    """The note that newer releases of the same data exist (Markdown), or None."""
    newer = report.get("superseded_by") or []
    return md("runs.superseded", release=report["release"], newer=", ".join(newer)) if newer else None


def warning_markdown(warning: str) -> str:
    """A report's warning (English text of msg.run.warn_* or msg.judge.warn_*) in the current
    language, for a Markdown place."""
    for prefix in ("msg.run.warn_", "msg.judge.warn_"):
        found = recognize(warning, prefix)
        if found is not None:
            return message_markdown(found)
    return plain_markdown(warning)


# --- blockers and reasons ----------------------------------------------------------------------


def blocker_markdown(blocker: Mapping[str, Any]) -> str:
    """One blocker in words, its case and reason named (run_compare.blocker_message), in the
    current language, for a Markdown place."""
    return message_markdown(blocker_message(blocker))


def reason_markdown(reason: str) -> str:
    """One of the gate's reasons (an English sentence of msg.run.reason.*) in the current
    language, for a Markdown place: its blockers, its "why" and its bound written again too; a
    sentence none of the messages reads is shown as it is (plain)."""
    found = recognize(reason, "msg.run.reason.")
    if found is None:
        return plain_markdown(reason)
    fields: dict[str, object] = dict(found.fields)
    if isinstance(fields.get("blockers"), str):
        parts = str(fields["blockers"]).split("; ")
        fields["blockers"] = Joined(tuple(recognize(part, "msg.run.reason.") or part for part in parts), "; ")
    if isinstance(fields.get("why"), str):
        fields["why"] = recognize(str(fields["why"]), "msg.run.") or fields["why"]
    if fields.get("bound") == NO_MARGIN:
        fields["bound"] = t("runs.no_margin")
    return message_markdown(Message(found.key, fields))


def decision_markdown(report: Report) -> str:
    """The gate's decision, big, with what it means and its reasons as a list (Markdown)."""
    decision = report["decision"]
    lines = [f"### {t(f'runs.decision.{decision}')}", t(f"runs.decision_help.{decision}"), ""]
    lines += [f"- {reason_markdown(reason)}" for reason in report.get("reasons") or ()]
    return "\n".join(lines)


def split_text(report: Report) -> str:
    """Which split the comparison used and why (Markdown)."""
    split = t(f"runs.split.{report['split']}")
    if report.get("split_chosen") == "default":
        key = "runs.split_used_holdout" if report["split"] == "holdout" else "runs.split_used_all"
        return t(key, split=split)
    return t("runs.split_used_given", split=split)


# --- the report's figures ----------------------------------------------------------------------


def figure(report: Report, name: str, digits: int = 3) -> str:
    """ "0.833 [0.583, 1.000]", "0.833 (no interval)" or "undefined: <reason>"."""
    return fmt.figure(report, name, digits)


def interval_text(report: Report, name: str) -> str:
    """A figure's 95% interval alone ("95% CI [0.583, 1.000]"), or why there is none."""
    if report.get(name) is None:
        return t("agreement.undefined", reason=fmt.reason(report, name))
    ci = (report.get("ci95") or {}).get(name)
    return t("runs.ci", interval=fmt.interval(ci)) if ci else t("agreement.no_interval")


def is_indicative(part: Report) -> bool:
    return int(part.get("n_cases") or 0) < INDICATIVE_BELOW


def figures_table(report: Report) -> pd.DataFrame:
    """One row per figure of the report (run_text.FIGURES): its name and its value [95% CI]."""
    return pd.DataFrame([[figure_name(name, report["k"]), figure(report, name)] for name in FIGURES],
                        columns=[t("judges.col.figure"), t("runs.col.value")])


def counts_table(report: Report) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(statuses, failure labels): each with its count of cases, in vocabulary order (failure
    labels no case has are left out)."""
    statuses = report.get("status_counts") or {}
    labels = report.get("failure_label_counts") or {}
    status_frame = pd.DataFrame([[status_name(status), int(statuses.get(status, 0))] for status in RUN_STATUSES],
                                columns=[t("runs.col.status"), t("col.cases")])
    label_frame = pd.DataFrame([[label_name(label), int(labels[label])] for label in FAILURE_LABELS if labels.get(label)],
                               columns=[t("runs.col.label"), t("col.cases")])
    return status_frame, label_frame


def slice_table(report: Report) -> pd.DataFrame:
    """One row per slice: its name, cases (marked "indicative only" under INDICATIVE_BELOW),
    cases passed, and each figure with its interval (two decimals)."""
    columns = [t("col.slice"), t("col.cases"), t("runs.col.passed"), *(figure_name(name, report["k"]) for name in FIGURES)]
    rows = []
    for value, part in (report.get("by_slice") or {}).items():
        n = number_text(int(part.get("n_cases") or 0))
        rows.append([fmt.group_name("slice", value), f"{n} · {t('agreement.indicative')}" if is_indicative(part) else n,
                     int((part.get("status_counts") or {}).get("passed", 0)),
                     *(figure(part, name, fmt.GROUP_DIGITS) for name in FIGURES)])
    return pd.DataFrame(rows, columns=columns)


def slice_points(report: Report) -> list[IntervalPoint]:
    """Chart points of the per-slice figures: one per slice and figure of SLICE_FIGURES, marked
    indicative (by shape) when the slice has fewer than INDICATIVE_BELOW cases."""
    points = []
    for value, part in (report.get("by_slice") or {}).items():
        row = t("runs.slice_row", slice=fmt.group_name("slice", value), n=int(part.get("n_cases") or 0))
        for name in SLICE_FIGURES:
            ci = (part.get("ci95") or {}).get(name)
            shown = part.get(name)
            points.append(IntervalPoint(row=row, panel=figure_name(name, report["k"]), value=shown,
                                        low=ci[0] if ci else None, high=ci[1] if ci else None,
                                        note=marker_notes()[1 if is_indicative(part) else 0],
                                        text=t("agreement.undefined_short") if shown is None else number_text(shown, ".2f")))
    return points


def marker_notes() -> tuple[str, str]:
    """The legend entries of the per-slice chart: a slice of INDICATIVE_BELOW cases or more, fewer."""
    return (t("runs.marker_full", n=INDICATIVE_BELOW), t("runs.marker_indicative", n=INDICATIVE_BELOW))


# --- the failed cases -----------------------------------------------------------------------


def failed_cases(report: Report) -> list[Mapping[str, Any]]:
    """The report's cases that did not pass, in release order."""
    return [case for case in report.get("cases") or () if case.get("status") != "passed"]


def filter_cases(cases: Sequence[Mapping[str, Any]], statuses: Iterable[str] = (),
                 labels: Iterable[str] = ()) -> list[Mapping[str, Any]]:
    """The cases whose status is one of `statuses` (any, when none is given) and that carry every
    failure label of `labels`."""
    wanted, needed = set(statuses), set(labels)
    return [case for case in cases if (not wanted or case.get("status") in wanted)
            and needed <= set(case.get("failure_labels") or ())]


def present(cases: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(statuses, failure labels) the cases carry, in vocabulary order: the filters' choices."""
    statuses = {case.get("status") for case in cases}
    labels = {label for case in cases for label in case.get("failure_labels") or ()}
    return [s for s in RUN_STATUSES if s in statuses], [label for label in FAILURE_LABELS if label in labels]


def failure_frame(cases: Sequence[Mapping[str, Any]], k: int) -> pd.DataFrame:
    """One row per case: its id, slice, split, status, failure labels, recall@k and reciprocal
    rank (a dash without relevant evidence)."""
    columns = [t("col.case"), t("col.slice"), t("col.split"), t("runs.col.status"), t("runs.col.labels"),
               figure_name("recall_at_k", k), figure_name("reciprocal_rank", k)]
    rows = [[plain_text(case["case_id"]), fmt.group_name("slice", case.get("slice") or ""),
             fmt.group_name("split", case.get("split") or ""), status_name(case["status"]),
             labels_text(case.get("failure_labels") or ()), _dash(case.get("recall_at_k")),
             _dash(case.get("reciprocal_rank"))]
            for case in cases]
    return pd.DataFrame(rows, columns=columns)


def _dash(value: float | None) -> str:
    return "-" if value is None else number_text(value, ".2f")


# --- one case ----------------------------------------------------------------------------------


def marks(row: Mapping[str, Any]) -> list[str]:
    """What a retrieved or released passage is for its case, in words: relevant, forbidden,
    outdated, unknown to the dataset, cited by the run's answer, in the top k."""
    found = [key for key in ("in_top_k", "relevant", "forbidden", "stale", "unknown", "cited") if row.get(key)]
    return [t(f"runs.mark.{key}") for key in found]


def retrieved_frame(detail: Report) -> pd.DataFrame:
    """The run's retrieved list, best first: rank, passage, document, version, what it is
    (marks) and its title."""
    columns = [t("runs.col.rank"), t("runs.col.passage"), t("runs.col.document"), t("runs.col.version"),
               t("runs.col.marks"), t("runs.col.title")]
    rows = []
    for row in detail.get("retrieved") or ():
        rank = number_text(row["rank"])
        if detail.get("unit") == "doc":
            rank = t("runs.rank_doc", rank=row["rank"], doc_rank=row["unit_rank"])
        rows.append([rank, plain_text(row["passage_id"]), plain_text(row.get("doc_id") or "-"),
                     plain_text(row.get("version") or "-"), ", ".join(marks(row)) or "-",
                     plain_text(row.get("title") or "-")])
    return pd.DataFrame(rows, columns=columns)


def passage_heading(passage: Mapping[str, Any], k: int) -> str:
    """A released passage's heading (Markdown): its retrieved rank (or that it was not
    retrieved) and its title."""
    title = plain_markdown(passage.get("title") or passage["passage_id"])
    if passage.get("rank") is None:
        return t("runs.passage_not_retrieved", title=title)
    key = "runs.passage_rank_top" if passage.get("in_top_k") else "runs.passage_rank"
    return t(key, rank=passage["rank"], k=k, title=title)


def passage_meta(passage: Mapping[str, Any]) -> str:
    """A passage's id, document and version, and its marks (Markdown)."""
    meta = md("passage.meta", passage_id=passage["passage_id"], doc_id=passage.get("doc_id") or "-",
              version=passage.get("version") or "-")
    shown = [mark for mark in marks(passage) if mark != t("runs.mark.in_top_k")]
    return f"{meta} · {', '.join(shown)}" if shown else meta


def claims_frame(detail: Report) -> pd.DataFrame:
    """The case's released claims: id, text, gold label, severity, resolution, the passages shown with it."""
    columns = [t("col.claim"), t("runs.col.text"), t("runs.col.gold"), t("runs.col.severity"), t("runs.col.resolution"),
               t("runs.col.passages")]
    rows = [[plain_text(claim["claim_id"]), plain_text(claim.get("text") or ""), fmt.category_name(claim["gold_label"]),
             _severity(claim.get("severity")), _word("state", claim.get("resolution")),
             plain_text(", ".join(claim.get("passage_ids") or ()) or "-")]
            for claim in detail.get("claims") or ()]
    return pd.DataFrame(rows, columns=columns)


def run_claims_frame(detail: Report) -> pd.DataFrame:
    """The run's claims on the case: id (or a dash), text, label, severity."""
    columns = [t("col.claim"), t("runs.col.text"), t("runs.col.label_given"), t("runs.col.severity")]
    rows = [[plain_text(claim.get("claim_id") or "-"), plain_text(claim.get("text") or ""),
             fmt.category_name(claim.get("label") or "-"), _severity(claim.get("severity"))]
            for claim in detail.get("run_claims") or ()]
    return pd.DataFrame(rows, columns=columns)


def _severity(severity: str | None) -> str:
    return _word("severity", severity)


def _word(kind: str, word: str | None) -> str:
    """A vocabulary word (a severity, a claim's resolution: agreed, adjudicated) in the current
    language; a word the catalog lacks as plain text; a dash for none."""
    if not word:
        return "-"
    key = f"{kind}.{word}"
    return t(key) if t(key) != key else plain_text(word)


def match_text(match: bool | None) -> str:
    """Whether a behaviour or an answer matches what the gold expects, in words."""
    return t("runs.match_none") if match is None else t("runs.match_yes" if match else "runs.match_no")


# --- the comparison ----------------------------------------------------------------------------


def case_slices(report: Report) -> dict[str, str]:
    """case id -> slice, for the fixed and regressed cases of a comparison (its by_slice)."""
    return {case_id: value for value, part in (report.get("by_slice") or {}).items()
            for case_id in (*(part.get("fixed") or ()), *(part.get("regressed") or ()))}


def changed_frame(report: Report, which: str) -> pd.DataFrame:
    """The fixed or the regressed cases (`which`), each with its slice."""
    slices = case_slices(report)
    return pd.DataFrame([[plain_text(case_id), fmt.group_name("slice", slices.get(case_id, ""))]
                         for case_id in report.get(which) or ()], columns=[t("col.case"), t("col.slice")])


def rate_text(report: Report, name: str) -> str:
    """The fix rate or the regression rate with its fraction, or why it is undefined."""
    value = report.get(name)
    if value is None:
        return t("agreement.undefined", reason=fmt.reason(report, name))
    return number_text(value, ".3f")


def compare_slice_table(report: Report) -> pd.DataFrame:
    """One row per slice: cases compared, fixed, regressed, fix and regression rates, the
    one-sided regression p-value and Holm's, and "regresses" when it does."""
    columns = [t("col.slice"), t("col.cases"), t("runs.col.fixed"), t("runs.col.regressed"), t("runs.col.fix_rate"),
               t("runs.col.regression_rate"), t("runs.col.p"), t("runs.col.p_holm"), t("runs.col.regresses")]
    rows = [[fmt.group_name("slice", value), int(part.get("n") or 0), len(part.get("fixed") or ()),
             len(part.get("regressed") or ()), value_text(part.get("fix_rate"), 2), value_text(part.get("regression_rate"), 2),
             p_text(part.get("regression_p")), p_text(part.get("regression_p_holm")),
             t("runs.regresses") if part.get("regresses") else ""]
            for value, part in (report.get("by_slice") or {}).items()]
    return pd.DataFrame(rows, columns=columns)


def deltas_table(report: Report) -> pd.DataFrame:
    """One row per figure: baseline, candidate, the change and its paired 95% interval (or why
    there is none)."""
    columns = [t("judges.col.figure"), t("runs.col.base"), t("runs.col.candidate"), t("runs.col.delta"),
               t("runs.col.delta_ci")]
    rows = []
    for name, delta in (report.get("metric_deltas") or {}).items():
        ci = delta.get("ci95")
        why = (report.get("undefined") or {}).get(name)
        rows.append([figure_name(name, report["k"]), value_text(delta.get("base")), value_text(delta.get("candidate")),
                     signed_text(delta.get("delta")),
                     fmt.interval(ci) if ci else (fmt.note(why) if why else t("agreement.no_interval"))])
    return pd.DataFrame(rows, columns=columns)


def difference_text(report: Report) -> str:
    """The pass rate's paired change with its interval and McNemar's p (Markdown)."""
    ci = (report.get("ci95") or {}).get("pass_rate_difference")
    return t("runs.difference", delta=signed_text(report.get("pass_rate_difference")),
             interval=fmt.interval(ci) if ci else t("agreement.no_interval"), p=p_text(report.get("mcnemar_p")),
             fixed=len(report.get("fixed") or ()), regressed=len(report.get("regressed") or ()))


def common_text(report: Report) -> str:
    """The cases compared and those only one run has (Markdown)."""
    return t("runs.common", n=report["n_common"], only_base=report["n_only_base"], only_candidate=report["n_only_candidate"])
