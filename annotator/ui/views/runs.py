"""Runs (admins only): a RAG system's run (`annotator run import`) scored against a frozen gold
release, and a candidate run compared with its baseline, as `annotator run report` and `annotator
run compare` do.

The report: its blockers first (each naming its case and why), then the figures with their
case-level 95% intervals, the figures per slice (a table and an interval chart), the status and
failure-label counts, and the failed cases, filtered by status and failure label; choosing one
shows its question, the run's retrieved list with each passage's rank and what it is for the case
(relevant, forbidden, outdated, unknown), its released passages and claims, and the run's answer
and claims (services.run_reports.case_detail). The comparison: the gate's decision first (ship,
hold or blocked, with its reasons), the split it decided on, the blockers, the fixed and the
regressed cases side by side, the pass rates with the paired interval and McNemar's p, each slice
(a regressing slice flagged) and the change of every figure.

Reports are cached per database, run(s), release, the release's manifest hash, the releases
stored after it, the runs' corpus and, for an admin who labels, their claims still to label
(services.run_reports.report_fingerprint), and the options: a run never changes once imported.
The release's folder is verified against its manifest on every run first, as the command line
does: a folder edited since a report was cached is refused, not shown from the cache.
"""

from __future__ import annotations

import json

import streamlit as st

from annotator.errors import AnnotatorError
from annotator.services import releases, run_reports, runs
from annotator.ui import charts
from annotator.ui import components as ui
from annotator.ui import run_format as rf
from annotator.ui.i18n import t
from annotator.vocabulary import INDICATIVE_BELOW

# (No bare strings at the top level: Streamlit's magic would write them on the page.)
N_BOOTSTRAP = 1000  # case-level bootstrap resamples of every interval (the command line's default)
K_MAX = 1000  # the highest rank cut the page offers
DECISION_BOX = {"blocked": st.error, "hold": st.warning, "ship": st.success}
DECISION_ICON = {"blocked": ":material/block:", "hold": ":material/pause_circle:", "ship": ":material/check_circle:"}


def _database() -> str:
    return ui.engine().url.render_as_string(hide_password=True)


def _fingerprint(names: list[str], release: str) -> tuple:
    with ui.read_db() as session:
        return tuple(run_reports.report_fingerprint(session, ui.session_user(session), names, release))


@st.cache_data(show_spinner=False, max_entries=32)
def _report(database: str, run: str, release: str, fingerprint: tuple, options: tuple, n_bootstrap: int) -> dict:
    """The report of `run` against `release`, computed once per (database, fingerprint, options)."""
    k, unit, split, rule = options
    with ui.read_db() as session:
        return run_reports.run_report(session, ui.session_user(session), run, release, k=k, unit=unit, split=split,
                                      rule=rule, n_bootstrap=n_bootstrap, seed=0)


@st.cache_data(show_spinner=False, max_entries=32)
def _compare(database: str, base: str, candidate: str, release: str, fingerprint: tuple, options: tuple,
             n_bootstrap: int) -> dict:
    """The comparison of `candidate` with `base` against `release`, computed once per (database, fingerprint, options)."""
    k, unit, split, rule, margin = options
    with ui.read_db() as session:
        return run_reports.compare_report(session, ui.session_user(session), base, candidate, release, k=k, unit=unit,
                                          split=split, rule=rule, margin=margin, n_bootstrap=n_bootstrap, seed=0)


@st.cache_data(show_spinner=False, max_entries=64)
def _case(database: str, run: str, release: str, case_id: str, fingerprint: tuple, options: tuple) -> dict:
    """One case of `run` beside its gold, computed once per (database, fingerprint, case, options)."""
    k, unit, rule = options
    with ui.read_db() as session:
        return run_reports.case_detail(session, ui.session_user(session), run, release, case_id, k=k, unit=unit, rule=rule)


def load_report(run: str, release: str, k: int, unit: str, split: str, rule: str) -> dict:
    """The cached report, recomputed when its fingerprint changed."""
    fingerprint = _fingerprint([run], release)
    with st.spinner(t("runs.computing", n=N_BOOTSTRAP)):
        return _report(_database(), run, release, fingerprint, (k, unit, split, rule), N_BOOTSTRAP)


def load_compare(base: str, candidate: str, release: str, k: int, unit: str, split: str | None, rule: str,
                 margin: float) -> dict:
    """The cached comparison, recomputed when its fingerprint changed."""
    fingerprint = _fingerprint([base, candidate], release)
    with st.spinner(t("runs.computing", n=N_BOOTSTRAP)):
        return _compare(_database(), base, candidate, release, fingerprint, (k, unit, split, rule, margin), N_BOOTSTRAP)


def load_case(run: str, release: str, case_id: str, k: int, unit: str, rule: str) -> dict:
    """The cached case detail, recomputed when its fingerprint changed."""
    return _case(_database(), run, release, case_id, _fingerprint([run], release), (k, unit, rule))


# --- shared parts -------------------------------------------------------------------------------


def notes(report: dict) -> None:
    """That a newer release exists, and the report's warnings."""
    if superseded := rf.superseded_text(report):
        st.warning(superseded, icon=":material/update:")
    for warning in report.get("warnings") or ():
        st.warning(rf.warning_markdown(warning), icon=":material/warning:")


def blockers(found: list[dict]) -> None:
    """The blockers, each naming its case and reason, before any figure; or that there are none."""
    if not found:
        st.success(t("runs.blockers_none"), icon=":material/verified:")
        return
    lines = [f"**{t('runs.blockers', n=len(found))}**", ""] + [f"- {rf.blocker_markdown(b)}" for b in found]
    st.error("\n".join(lines), icon=":material/block:")


def download(report: dict, key: str, file_name: str) -> None:
    st.download_button(t("runs.download"), data=json.dumps(report, ensure_ascii=False, indent=2) + "\n",
                       file_name=file_name, mime="application/json", key=key, on_click="ignore",
                       icon=":material/download:")


# --- the report ---------------------------------------------------------------------------------


def headline(report: dict) -> None:
    """The headline figures as metrics, each with its interval."""
    for column, name in zip(st.columns(len(rf.HEADLINE)), rf.HEADLINE, strict=True):
        value = report.get(name)
        column.metric(rf.figure_name(name, report["k"]), rf.value_text(value), help=t(f"runs.about.{name}"))
        column.caption(rf.interval_text(report, name))


def figures(report: dict) -> None:
    st.header(t("runs.figures"))
    if report["n_cases"] and report["n_cases"] < INDICATIVE_BELOW:
        st.warning(t("runs.indicative_overall", n=report["n_cases"], below=INDICATIVE_BELOW), icon=":material/science:")
    headline(report)
    st.table(rf.figures_table(report), hide_index=True)
    st.caption(t("runs.ci_help", n=report.get("n_bootstrap", N_BOOTSTRAP)))


def by_slice(report: dict) -> None:
    """The figures per slice: the table and the interval chart."""
    st.header(t("runs.by_slice"))
    if not report.get("by_slice"):
        st.caption(t("runs.by_slice_none"))
        return
    st.caption(t("runs.by_slice_help", n=INDICATIVE_BELOW))
    st.dataframe(rf.slice_table(report), hide_index=True)
    st.altair_chart(
        charts.interval_chart(rf.slice_points(report), title=t("runs.slice_chart"), x_title=t("runs.slice_chart_x"),
                              domain=(0.0, 1.0), notes=rf.marker_notes(), panel_width=150,
                              subtitle=t("runs.slice_chart_how"), description=t("runs.slice_chart_alt")))


def counts(report: dict) -> None:
    """How many cases have each status and each failure label."""
    st.header(t("runs.counts"))
    st.caption(t("runs.counts_help"))
    status_col, label_col = st.columns(2)
    statuses, labels = rf.counts_table(report)
    status_col.dataframe(statuses, hide_index=True)
    if len(labels):
        label_col.dataframe(labels, hide_index=True)
    else:
        label_col.caption(t("runs.labels_none"))


def failures(report: dict, run: str, release: str) -> None:
    """The failed cases, filtered by status and by failure label, and the one chosen, opened."""
    failed = rf.failed_cases(report)
    st.header(t("runs.failures", n=len(failed)))
    if not failed:
        st.caption(t("runs.failures_none"))
        return
    statuses, labels = rf.present(failed)
    status_col, label_col = st.columns(2)
    wanted = status_col.multiselect(t("runs.filter_status"), statuses, key="runs.filter_status", format_func=rf.status_name)
    needed = label_col.multiselect(t("runs.filter_label"), labels, key="runs.filter_label", format_func=rf.label_name,
                                   help=t("runs.filter_label_help"))
    shown = rf.filter_cases(failed, wanted, needed)
    st.caption(t("runs.failures_shown", shown=len(shown), n=len(failed)))
    st.dataframe(rf.failure_frame(shown, report["k"]), hide_index=True)
    case_ids = [case["case_id"] for case in shown]
    chosen = st.selectbox(t("runs.case"), [None, *case_ids], key="runs.case", help=t("runs.case_help"),
                          format_func=lambda case_id: t("runs.case_none") if case_id is None else ui.plain_text(case_id))
    if chosen is not None:
        try:
            detail = load_case(run, release, chosen, report["k"], report["unit"], report["retrieval_rule"])
        except AnnotatorError as error:
            st.error(ui.error_markdown(error))
            return
        case_view(detail)


def case_view(detail: dict) -> None:
    """One case: its status and blockers, question, behaviour and answer against the gold's, the
    retrieved list with ranks and marks, the released passages (each with its rank), the
    released claims and the run's claims."""
    score = detail["score"]
    with st.container(border=True):
        st.subheader(t("runs.case_title", case_id=ui.plain_markdown(detail["case_id"])))
        st.caption(ui.md("runs.case_meta", slice=detail["slice"] or "-", split=detail["split"] or "-",
                         status=rf.status_name(score["status"]), labels=rf.labels_text(score["failure_labels"])))
        for blocker in score.get("blockers") or ():
            st.error(rf.blocker_markdown(blocker), icon=":material/block:")
        st.markdown(f"**{t('case.question')}**")
        st.text(ui.optional(detail.get("question")))
        st.markdown(ui.md("runs.case_behavior", behavior=rf.behavior_name(detail["behavior"]),
                      expected=rf.behavior_name(detail.get("expected_behavior")),
                      match=rf.match_text(score.get("behavior_match"))))
        answer_col, expected_col = st.columns(2)
        answer_col.markdown(f"**{t('runs.run_answer')}**")
        answer_col.text(ui.optional(detail.get("answer")))
        expected_col.markdown(f"**{t('runs.expected_answer')}** · {rf.match_text(score.get('answer_match'))}")
        expected_col.text(ui.optional(detail.get("expected_answer")))
        st.markdown(f"**{t('runs.retrieved', n=len(detail.get('retrieved') or ()), k=detail['k'])}**")
        st.dataframe(rf.retrieved_frame(detail), hide_index=True)
        relevant = ", ".join(detail.get("relevant") or ()) or "-"
        st.caption(ui.md("runs.relevant", ids=relevant, missed=", ".join(detail.get("missed") or ()) or "-"))
        st.markdown(f"**{t('runs.passages')}**")
        if not detail.get("passages"):
            st.caption(t("runs.passages_none"))
        for passage in detail.get("passages") or ():
            with st.container(border=True):
                st.markdown(rf.passage_heading(passage, detail["k"]))
                st.caption(rf.passage_meta(passage))
                st.text(ui.plain_text(passage.get("text") or ""))
        st.markdown(f"**{t('runs.gold_claims')}**")
        st.dataframe(rf.claims_frame(detail), hide_index=True)
        st.markdown(f"**{t('runs.run_claims')}**")
        if detail.get("run_claims"):
            st.dataframe(rf.run_claims_frame(detail), hide_index=True)
        else:
            st.caption(t("runs.run_claims_none"))


def report_tab(run_list: list[dict], release: str, k: int, unit: str, rule: str) -> None:
    runs_by_name = {run["name"]: run for run in run_list}
    run_col, split_col = st.columns(2)
    run = run_col.selectbox(t("runs.run"), list(runs_by_name), key="runs.run", format_func=ui.plain_text)
    split = split_col.selectbox(t("runs.split"), run_reports.REPORT_SPLITS, key="runs.split",
                                format_func=lambda value: t(f"runs.split.{value}"), help=t("runs.split_help"))
    with st.expander(t("runs.run_meta", run=ui.plain_markdown(run))):
        st.dataframe(rf.run_table(runs_by_name[run]), hide_index=True)
    try:
        report = load_report(run, release, k, unit, split, rule)
    except AnnotatorError as error:
        st.error(ui.error_markdown(error))
        return
    notes(report)
    st.markdown(rf.scope_text(report))
    st.caption(rf.options_text(report))
    blockers(report.get("blockers") or [])
    figures(report)
    by_slice(report)
    counts(report)
    failures(report, run, release)
    download(report, "runs.download_report", f"run-report-{run}-{release}.json")


# --- the comparison -----------------------------------------------------------------------------


def compare_tab(names: list[str], release: str, k: int, unit: str, rule: str) -> None:
    if len(names) < 2:
        st.info(t("runs.compare_needs_two"), icon=":material/compare_arrows:")
        return
    base_col, candidate_col, split_col, margin_col = st.columns(4)
    base = base_col.selectbox(t("runs.base"), names, index=1, key="runs.base", format_func=ui.plain_text)
    candidate = candidate_col.selectbox(t("runs.candidate"), names, index=0, key="runs.candidate",
                                        format_func=ui.plain_text)
    split = split_col.selectbox(t("runs.compare_split"), [None, *run_reports.REPORT_SPLITS], key="runs.compare_split",
                                format_func=lambda value: t("runs.split_default") if value is None else t(f"runs.split.{value}"),
                                help=t("runs.compare_split_help"))
    margin = margin_col.number_input(t("runs.margin"), min_value=0.0, max_value=0.99, value=0.0, step=0.01,
                                     format="%.2f", key="runs.margin", help=t("runs.margin_help"))
    if base == candidate:
        st.warning(t("runs.same_run"), icon=":material/warning:")
        return
    try:
        report = load_compare(base, candidate, release, k, unit, split, rule, float(margin))
    except AnnotatorError as error:
        st.error(ui.error_markdown(error))
        return
    decision = report["decision"]
    DECISION_BOX[decision](rf.decision_markdown(report), icon=DECISION_ICON[decision])
    st.markdown(rf.split_text(report))
    st.caption(rf.options_text(report) + " · " + rf.common_text(report))
    notes(report)
    blockers(report.get("blockers") or [])
    changes(report)
    pass_rates(report)
    st.subheader(t("runs.compare_slices"))
    st.caption(t("runs.compare_slices_help", alpha=report["alpha"]))
    st.dataframe(rf.compare_slice_table(report), hide_index=True)
    st.subheader(t("runs.deltas"))
    st.caption(t("runs.deltas_help"))
    st.dataframe(rf.deltas_table(report), hide_index=True)
    download(report, "runs.download_compare", f"run-compare-{base}-{candidate}-{release}.json")


def changes(report: dict) -> None:
    """The fixed and the regressed cases side by side, each with its rate."""
    fixed_col, regressed_col = st.columns(2)
    for column, which, rate in ((fixed_col, "fixed", "fix_rate"), (regressed_col, "regressed", "regression_rate")):
        column.subheader(t(f"runs.{which}", n=len(report.get(which) or ())))
        column.caption(t(f"runs.{rate}", rate=rf.rate_text(report, rate)))
        if report.get(which):
            column.dataframe(rf.changed_frame(report, which), hide_index=True)
        else:
            column.caption(t(f"runs.{which}_none"))


def pass_rates(report: dict) -> None:
    """The pass rates of both runs on the common cases and the paired change."""
    st.subheader(t("runs.pass_rates"))
    base_col, candidate_col, change_col = st.columns(3)
    base_col.metric(t("runs.pass_rate_base"), rf.value_text(report.get("pass_rate_base")))
    candidate_col.metric(t("runs.pass_rate_candidate"), rf.value_text(report.get("pass_rate_candidate")))
    change_col.metric(t("runs.pass_rate_change"), rf.signed_text(report.get("pass_rate_difference")))
    st.markdown(rf.difference_text(report))
    st.caption(t("runs.paired_help", n=report.get("n_bootstrap", N_BOOTSTRAP)))


# --- the page ---------------------------------------------------------------------------------


me = ui.require_page("runs")
st.title(t("page.runs"))
ui.show_flash()
st.info(t("runs.note"))
try:
    with ui.read_db() as session:
        run_list = runs.list_runs(session, me)  # newest first
        release_names = [release.name for release in releases.list_releases(session, me)]  # newest first
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()
if not run_list:
    st.info(t("runs.no_runs"), icon=":material/upload_file:")
if not release_names:
    st.info(t("runs.no_releases"), icon=":material/inventory_2:")
if not run_list or not release_names:
    st.stop()

release_col, k_col, unit_col, rule_col = st.columns(4)
release_name = release_col.selectbox(t("runs.release"), release_names, key="runs.release", format_func=ui.plain_text,
                                     help=t("runs.release_help"))
k_value = int(k_col.number_input(t("runs.k"), min_value=1, max_value=K_MAX, value=run_reports.DEFAULT_K, step=1,
                                 key="runs.k", help=t("runs.k_help")))
unit_value = unit_col.selectbox(t("runs.unit"), run_reports.UNITS, key="runs.unit",
                                format_func=lambda value: t(f"runs.unit.{value}"), help=t("runs.unit_help"))
rule_value = rule_col.selectbox(t("runs.rule"), run_reports.RETRIEVAL_RULES, key="runs.rule",
                                format_func=lambda value: t(f"runs.rule.{value}"), help=t("runs.rule_help"))
try:
    with ui.read_db() as session:  # as the command line does: a folder edited since is refused, not shown from a cache
        releases.check_stored_release(session, me, release_name)
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()

report_area, compare_area = st.tabs([t("runs.tab_report"), t("runs.tab_compare")])
with report_area:
    report_tab(run_list, release_name, k_value, unit_value, rule_value)
with compare_area:
    compare_tab([run["name"] for run in run_list], release_name, k_value, unit_value, rule_value)
