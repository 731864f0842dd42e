"""Judges (admins only): an automatic judge's labels (a judge run, `annotator judge import`) scored
against a frozen gold release: agreement, Cohen's kappa, the false pass and false fail rates with
case-level bootstrap and analytic intervals, the confusion matrix, the rates per slice, the judge
beside each human labeler, the corrected (PPI++) support rate, and the claims it got wrong, each
linked to its history.

The figures cover the dev split. The holdout figures are shown only when the button asks for
them; each press records one viewing in the audit trail (services.judges.judge_report), and the
report it gives is kept in session state, so a rerun shows it again without recording another.
The dev report is cached per database, run, release, the release's manifest hash, the releases
stored after it, the holdout viewings and, for an admin who labels, their claims still to label
(services.judges.report_fingerprint); a judge run never changes once imported.
"""

from __future__ import annotations

import json

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from annotator.errors import AnnotatorError
from annotator.services import judges, releases
from annotator.ui import charts
from annotator.ui import components as ui
from annotator.ui import format as fmt
from annotator.ui import judge_format as jf
from annotator.ui.i18n import t
from annotator.vocabulary import INDICATIVE_BELOW

# (No bare strings at the top level: Streamlit's magic would write them on the page.)
N_BOOTSTRAP = 1000  # case-level bootstrap resamples of every figure (the command line's default)
DISAGREEMENTS_LINKED = 100  # the disagreements listed with a link each; the downloaded report holds them all
ADMIN_PAGE = "views/admin.py"
HISTORY_PARAM = "history"  # views/admin.py's ?history=<claim_id>&dataset=<name>: opens the Claim history tab on that claim
_HOLDOUT = "judges.holdout_report"  # ((run, release, manifest sha256), the holdout report) of the last press


@st.cache_data(show_spinner=False, max_entries=32)
def _report(database: str, run: str, release: str, fingerprint: tuple, n_bootstrap: int) -> dict:
    """The dev report of `run` against `release`, computed once per (database, fingerprint)."""
    with ui.read_db() as session:
        return judges.judge_report(session, ui.session_user(session), run, release, n_bootstrap=n_bootstrap, seed=0)


def load(run: str, release: str) -> dict:
    """The cached dev report, recomputed when its fingerprint changed (services.judges.report_fingerprint).
    The release's folder is verified against its manifest on every run first, as the command
    line does: a folder edited since the report was cached is refused, not shown from the cache."""
    with ui.read_db() as session:
        me = ui.session_user(session)
        releases.check_stored_release(session, me, release)
        fingerprint = tuple(judges.report_fingerprint(session, me, run, release))
    database = ui.engine().url.render_as_string(hide_password=True)
    with st.spinner(t("judges.computing", n=N_BOOTSTRAP)):
        return _report(database, run, release, fingerprint, N_BOOTSTRAP)


def _show_holdout(run: str, release: str) -> None:
    """The button's callback: the holdout report, recorded in the audit trail once, kept for reruns."""
    try:
        with ui.db() as session:
            report = judges.judge_report(session, ui.session_user(session), run, release, n_bootstrap=N_BOOTSTRAP,
                                         seed=0, holdout=True)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state[_HOLDOUT] = ((run, release, report["release_manifest_sha256"]), report)


def headline(report: dict) -> None:
    """The four figures as metrics, each with its interval and n."""
    for column, metric in zip(st.columns(len(jf.RATES)), jf.RATES, strict=True):
        column.metric(t(f"metric.{metric}"), fmt.number(report.get(metric)), help=t(f"judges.about.{metric}"))
        column.caption(jf.figure(report, metric) + " · " + jf.n_text(report, metric))


def figures(report: dict) -> None:
    """The figures of one split: metrics, the table of both intervals, the confusion matrix."""
    st.markdown(jf.scope_text(report))
    if report["n_items"] and report["n_items"] < INDICATIVE_BELOW:
        st.warning(t("judges.indicative_overall", n=report["n_items"], below=INDICATIVE_BELOW), icon=":material/science:")
    headline(report)
    st.table(jf.figures_table(report), hide_index=True)
    st.caption(t("judges.ci_help", n=report.get("n_bootstrap", N_BOOTSTRAP)))
    st.caption(t("judges.n_help"))
    st.subheader(t("judges.confusion"))
    st.caption(t("judges.confusion_help"))
    table_col, chart_col = st.columns(2)
    table_col.dataframe(jf.confusion_frame(report))
    names, matrix = jf.confusion_matrix(report)
    chart_col.altair_chart(charts.confusion_chart(matrix, names, t("judges.gold"), t("judges.judge"),
                                                  title=t("judges.confusion_chart", run=ui.plain_text(report["run"]))))


def by_slice(report: dict) -> None:
    """The false pass and false fail rates per slice: the table and the interval chart."""
    st.header(t("judges.by_slice"))
    if not report.get("by_slice"):
        st.caption(t("judges.by_slice_none"))
        return
    st.caption(t("judges.by_slice_help", n=INDICATIVE_BELOW))
    table, notes = jf.slice_table(report)
    st.dataframe(table, hide_index=True)
    for note in notes:
        st.caption(note)
    st.altair_chart(
        charts.interval_chart(jf.slice_points(report), title=t("judges.slice_chart"), x_title=t("judges.slice_chart_x"),
                              domain=(0.0, 1.0), notes=jf.marker_notes(), panel_width=240,
                              subtitle=t("judges.slice_chart_how"), description=t("judges.slice_chart_alt")))


def humans(report: dict) -> None:
    """The judge beside each human labeler, and the human range."""
    st.header(t("judges.humans"))
    st.caption(t("judges.humans_help"))
    if not report.get("humans"):
        st.caption(t("judges.humans_none"))
    st.dataframe(jf.humans_table(report), hide_index=True)


def corrected(report: dict) -> None:
    """The corrected (PPI++) support rate beside the judge-only and gold-only rates, what it
    assumes, and a warning when the released claims' slice mix differs from the judged-only ones'."""
    st.header(t("judges.corrected"))
    st.caption(t("judges.corrected_help"))
    estimate = report.get("corrected_support_rate")
    if estimate is None:
        why = fmt.note((report.get("undefined") or {}).get("corrected_support_rate")) or t("agreement.no_data")
        st.info(t("judges.corrected_none", why=why))
        return
    st.dataframe(jf.corrected_table(estimate), hide_index=True)
    for note in jf.corrected_notes(estimate):
        st.caption(note)
    st.info(jf.assumption_text(estimate), icon=":material/info:")
    warn, text = jf.slice_mix_text(estimate)
    if warn:
        st.warning(text, icon=":material/warning:")
    else:
        st.caption(text)


def _history_link(row: dict) -> None:
    """A disagreement as a link to its claim's history (the Admin page). Run outside the app's
    navigation (the page script alone) there is no page to link to: the row is shown as text."""
    label = jf.disagreement_label(row)
    try:
        st.page_link(ADMIN_PAGE, label=label, icon=":material/history:", query_params={HISTORY_PARAM: row["claim_id"],
                                                                                        **({"dataset": row["dataset"]} if row.get("dataset") else {})})
    except StreamlitPageNotFoundError:
        st.caption(label)


def disagreements(report: dict) -> None:
    """The claims where the judge's label differs from the gold, each linked to its history."""
    rows = report.get("disagreements") or []
    st.header(t("judges.disagreements", n=len(rows)))
    if not rows:
        st.caption(t("judges.disagreements_none"))
        return
    st.caption(t("judges.disagreements_help"))
    for row in rows[:DISAGREEMENTS_LINKED]:
        _history_link(row)
    if len(rows) > DISAGREEMENTS_LINKED:
        st.caption(t("judges.disagreements_more", n=len(rows) - DISAGREEMENTS_LINKED))


def holdout(report: dict) -> None:
    """The holdout: how many claims the figures above leave out and how often their figures were
    viewed; the button that shows them (and records the viewing), and the figures once shown."""
    st.header(t("judges.holdout"))
    left_out = report["n_holdout_left_out"]
    if not left_out:
        st.caption(t("judges.holdout_none"))
        return
    st.markdown(t("judges.holdout_left_out", n=left_out, views=jf.views_text(report)))
    st.warning(t("judges.holdout_warning"), icon=":material/visibility:")
    st.button(t("judges.holdout_button"), key="judges.show_holdout", on_click=_show_holdout,
              args=(report["run"], report["release"]), icon=":material/lock_open:")
    shown = st.session_state.get(_HOLDOUT)
    if shown is None or shown[0] != (report["run"], report["release"], report["release_manifest_sha256"]):
        return
    held = shown[1]
    with st.container(border=True):
        st.subheader(t("judges.holdout_shown"))
        st.caption(jf.views_text(held))
        figures(held)
        humans(held)
        disagreements(held)


me = ui.require_page("judges")
st.title(t("page.judges"))
ui.show_flash()
st.info(t("judges.note"))
try:
    with ui.read_db() as session:
        runs = judges.list_judge_runs(session, me)
        release_names = [release.name for release in releases.list_releases(session, me)]  # newest first
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()
if not runs:
    st.info(t("judges.no_runs"), icon=":material/upload_file:")
if not release_names:
    st.info(t("judges.no_releases"), icon=":material/inventory_2:")
if not runs or not release_names:
    st.stop()

runs_by_name = {run["name"]: run for run in runs}
run_col, release_col = st.columns(2)
run_name = run_col.selectbox(t("judges.run"), list(runs_by_name), key="judges.run", format_func=ui.plain_text)
release_name = release_col.selectbox(t("judges.release"), release_names, key="judges.release",
                                     format_func=ui.plain_text)
with st.expander(t("judges.run_meta", run=ui.plain_markdown(run_name))):
    st.dataframe(jf.run_table(runs_by_name[run_name]), hide_index=True)
try:
    report = load(run_name, release_name)
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()
if superseded := jf.superseded_text(report):
    st.warning(superseded, icon=":material/update:")
for warning in report.get("warnings") or ():  # English texts of msg.judge.warn_*, written in the user's language
    st.warning(ui.plain_markdown(fmt.note(warning) or warning), icon=":material/warning:")

st.header(t("judges.figures"))
figures(report)
by_slice(report)
humans(report)
corrected(report)
disagreements(report)
st.download_button(t("judges.download"), data=json.dumps(report, ensure_ascii=False, indent=2) + "\n",
                   file_name=f"judge-report-{run_name}-{release_name}.json", mime="application/json",
                   key="judges.download", on_click="ignore", icon=":material/download:")
holdout(report)
