"""Agreement: how often the two blind labels of a claim agree, chance-corrected, overall and per
slice, split and guideline version, per category and per pair of labelers, with bootstrap
intervals and the number of items behind every figure. It measures how clear the labeling
guideline is, not how good the RAG system is.

The report (1,000 bootstrap resamples per group) is cached per database, dataset and label
fingerprint: a rerun reuses it, a new or revised label recomputes it. It is computed without the
pairs' bootstrap intervals (one resampling per pair: 1,770 pairs with 60 labelers), which are
computed, once per confusion matrix, for the pairs the page draws: every pair when there are at
most PAIRS_DRAWN, else a page of PAIRS_DRAWN at a time in the order chosen (lowest kappa first by
default) and the pair picked by name; the same figures the full report gives.
"""

from __future__ import annotations

import streamlit as st

from annotator.agreement import DEFAULT_TARGET_HALF_WIDTH, AgreementReport, pair_bootstrap_ci95
from annotator.errors import AnnotatorError
from annotator.services.fingerprint import label_fingerprint
from annotator.services.lookup import dataset_pk
from annotator.services.reports import DEFAULT_BOOTSTRAP, GROUP_COLUMNS, agreement_report
from annotator.ui import charts
from annotator.ui import components as ui
from annotator.ui import format as fmt
from annotator.ui.i18n import t
from annotator.vocabulary import INDICATIVE_BELOW

TARGETS = (0.05, 0.10, 0.15, 0.20)  # the interval half-widths small-sample guidance can aim for
PAIRS_DRAWN = 10  # pairs drawn as confusion matrices at once; with more, a page of them and a pick
ORDER, PAGE, PICK = "agreement.pair_order", "agreement.pair_page", "agreement.pair_pick"  # their widgets' keys


@st.cache_data(show_spinner=False, max_entries=64)
def _report(database: str, dataset: str | None, fingerprint: tuple, n_bootstrap: int) -> AgreementReport:
    """The agreement report of `dataset`, computed once per (database, dataset, fingerprint),
    without the pairs' bootstrap intervals (see resampled) and without the pairs of each group,
    which the page does not show (computing them, and reading them back from the cache on every
    rerun, would cost more than all the rest)."""
    with ui.read_db() as session:
        return agreement_report(session, ui.session_user(session), dataset_pk(session, dataset), by=GROUP_COLUMNS,
                                n_bootstrap=n_bootstrap, seed=0, pair_bootstrap=False, group_pairs=False)


@st.cache_data(show_spinner=False, max_entries=4096)
def _pair_ci95(confusion: tuple[tuple[int, ...], ...], n_bootstrap: int) -> dict:
    """A pair's bootstrap intervals from its confusion matrix (agreement.pair_bootstrap_ci95, seed
    0 as the report's), as JSON lists; computed once per matrix. Holds no name."""
    return {metric: None if ci is None else list(ci)
            for metric, ci in pair_bootstrap_ci95(confusion, n_bootstrap, seed=0).items()}


def resampled(pair: dict, report: dict) -> dict:
    """`pair` (a by_pair entry) with its bootstrap intervals: with two labelers the report's own
    (the one pair is the report), else computed now (_pair_ci95)."""
    if report["n_raters"] <= 2:
        return pair
    return {**pair, "ci95": _pair_ci95(tuple(map(tuple, pair["confusion"])), DEFAULT_BOOTSTRAP)}


def load(dataset: str | None) -> AgreementReport:
    """The cached report, recomputed when the labels in scope changed (see services.fingerprint)."""
    with ui.read_db() as session:
        fingerprint = tuple(label_fingerprint(session, ui.session_user(session), dataset_pk(session, dataset)))
    database = ui.engine().url.render_as_string(hide_password=True)
    with st.spinner(t("agreement.computing", n=DEFAULT_BOOTSTRAP)):
        return _report(database, dataset, fingerprint, DEFAULT_BOOTSTRAP)


def headline(report: dict) -> None:
    """The main coefficients as metrics, with Gwet's AC1 beside kappa when the paradox fires."""
    metrics = list(fmt.main_metrics(report))
    if report.get("paradox"):
        metrics.insert(metrics.index(fmt.kappa_metric(report)) + 1, "gwet_ac1")
    for column, metric in zip(st.columns(len(metrics)), metrics, strict=True):
        column.metric(t(f"metric.{metric}"), fmt.number(report.get(metric)), help=t(f"metric_about.{metric}"))
        column.caption(fmt.figure(report, metric) + " · " + fmt.n_text(report, metric))


def breakdown(column: str, groups: dict, target: float, metrics: tuple[str, ...]) -> None:
    """One breakdown tab: the table of groups and the dot plot of their coefficients."""
    what = t(f"agreement.group_name.{column}")
    st.caption(t("agreement.indicative_help") if column == "slice"
               else t("agreement.indicative_help_any", n=INDICATIVE_BELOW))
    table, notes = fmt.group_table(column, groups, target, metrics)
    st.dataframe(table, hide_index=True)
    for note in notes:
        st.caption(note)
    st.caption(t("agreement.more_items_help", target=target))
    st.altair_chart(
        charts.interval_chart(fmt.group_points(column, groups, metrics), title=t("agreement.group_chart", what=what),
                              x_title=t("agreement.chart_x"), notes=fmt.marker_notes(), panel_width=150,
                              subtitle=t("agreement.chart_how"),
                              description=t("agreement.group_chart_alt", what=what.lower())),
    )


def confusion(pair: dict, categories: list, heading: str, expanded: bool, alone: bool) -> None:
    """One pair's confusion matrix as a table and a heatmap, in an expander (or, `alone`, plain)."""
    with st.container() if alone else st.expander(heading, expanded=expanded):
        if alone:
            st.caption(heading)
        frame = fmt.confusion_frame(pair, categories)
        table_col, chart_col = st.columns(2)
        table_col.dataframe(frame)
        a, b = ui.plain_text(pair["rater_a"]), ui.plain_text(pair["rater_b"])
        chart_col.altair_chart(charts.confusion_chart(pair["confusion"], list(frame.columns), a, b,
                                                      title=t("agreement.confusion_chart", a=a, b=b)))


def draw_pairs(report: dict) -> list[dict]:
    """The pairs' confusion matrices: all of them when PAIRS_DRAWN or fewer, else the order, page
    and pick widgets and the PAIRS_DRAWN pairs of the page chosen (the picked pair first, open).
    Returns every pair for the pair table, in the order chosen: the drawn ones with their bootstrap
    intervals, the others with ci95 None (not resampled)."""
    pairs = report.get("by_pair") or []

    def heading(pair: dict) -> str:
        return t("agreement.pair", a=ui.plain_markdown(pair["rater_a"]), b=ui.plain_markdown(pair["rater_b"]),
                 n=pair["n_items"])

    if len(pairs) <= PAIRS_DRAWN:
        drawn = [resampled(pair, report) for pair in pairs]
        for number, pair in enumerate(drawn):
            confusion(pair, report["categories"], heading(pair), expanded=number == 0, alone=len(drawn) == 1)
        return drawn
    st.caption(t("agreement.pairs_many", n=len(pairs), shown=PAIRS_DRAWN))
    order = st.radio(t("agreement.pair_order"), fmt.PAIR_ORDERS, key=ORDER, horizontal=True,
                     format_func=lambda name: t(f"agreement.pair_order.{name}"))
    ordered = fmt.ordered_pairs(pairs, order)
    starts = list(range(0, len(ordered), PAIRS_DRAWN))
    by_key = {(pair["rater_a"], pair["rater_b"]): pair for pair in pairs}
    if st.session_state.get(PAGE) not in starts:  # fewer pairs than when it was chosen
        st.session_state[PAGE] = 0
    if st.session_state.get(PICK) is not None and st.session_state[PICK] not in by_key:
        st.session_state[PICK] = None
    page_col, pick_col = st.columns(2)
    start = page_col.selectbox(t("agreement.pair_page"), starts, key=PAGE, format_func=lambda first: t(
        "agreement.pair_page_option", first=first + 1, last=min(first + PAIRS_DRAWN, len(ordered)), n=len(ordered)))
    picked = pick_col.selectbox(t("agreement.pair_pick"), [None, *by_key], key=PICK, format_func=lambda key: (
        t("agreement.pair_pick_none") if key is None else fmt.pair_option(by_key[key])))
    shown = ordered[start:start + PAIRS_DRAWN]
    if picked is not None:
        shown = [by_key[picked], *(pair for pair in shown if pair is not by_key[picked])]
    drawn = {(pair["rater_a"], pair["rater_b"]): resampled(pair, report) for pair in shown}
    for number, pair in enumerate(drawn.values()):
        confusion(pair, report["categories"], heading(pair), expanded=number == 0, alone=False)
    return [drawn.get((pair["rater_a"], pair["rater_b"]), {**pair, "ci95": None}) for pair in ordered]


ui.require_page("agreement")
st.title(t("page.agreement"))
st.info(t("agreement.note"))
dataset = ui.dataset_select("agreement.dataset")
try:
    cached = load(dataset)
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()
target = st.session_state.get("agreement.target", DEFAULT_TARGET_HALF_WIDTH)
report = cached.to_json(target_half_width=target)

st.caption(t("agreement.scope", items=report["n_items"], scope=report["n_in_scope"], raters=report["n_raters"]))
if report["indicative"] and report["n_items"]:
    st.warning(t("agreement.indicative_overall", n=report["n_items"], below=INDICATIVE_BELOW),
               icon=":material/science:")
headline(report)
if paradox := fmt.paradox_text(report):
    st.warning(paradox, icon=":material/balance:")

st.header(t("agreement.overall"))
table_col, counts_col = st.columns([5, 2])
with table_col:
    st.table(fmt.overall_table(report), hide_index=True)
    st.caption(t("agreement.ci_help", n=DEFAULT_BOOTSTRAP))
    for line in fmt.overall_notes(report):
        st.caption(line)
    st.caption(t("agreement.chance_help"))
    st.caption(t("agreement.thresholds"))
with counts_col:
    st.markdown(f"**{t('agreement.label_counts')}**")
    st.dataframe(fmt.label_count_table(report))
    st.caption(t("agreement.label_counts_help"))
st.altair_chart(
    charts.interval_chart(fmt.overall_points(report), title=t("agreement.overall_chart"),
                          x_title=t("agreement.chart_x"), panel_width=560, subtitle=t("agreement.chart_how"),
                          description=t("agreement.overall_chart_alt"))
)
if not report["n_items"]:
    st.warning(t("agreement.no_pairs"))
    st.stop()

st.header(t("agreement.sample_size"))
st.radio(t("agreement.target"), TARGETS, index=TARGETS.index(DEFAULT_TARGET_HALF_WIDTH), key="agreement.target",
         horizontal=True, format_func=lambda hw: t("agreement.target_option", hw=hw))
st.markdown(fmt.sample_size_text(report, target))
st.caption(t("agreement.sample_method"))

st.header(t("agreement.breakdowns"))
shown = {}
for column in GROUP_COLUMNS:
    groups = report.get(f"by_{column}") or {}
    if len(groups) > 1:
        shown[column] = groups
    elif groups:
        st.caption(ui.md("agreement.single_group", what=t(f"agreement.group_name.{column}"),
                     group=fmt.group_name(column, next(iter(groups)))))
if shown:
    tabs = st.tabs([t("agreement.tab", name=t(f"agreement.by_{column}"), n=len(groups)) for column, groups in shown.items()])
    for tab, (column, groups) in zip(tabs, shown.items(), strict=True):
        with tab:
            breakdown(column, groups, target, fmt.group_metrics(report))

st.header(t("agreement.confusion"))
st.caption(t("agreement.confusion_help"))
table_pairs = draw_pairs(report)

st.header(t("agreement.pairs"))
st.caption(t("agreement.pairs_help"))
if len(table_pairs) > PAIRS_DRAWN:
    st.caption(t("agreement.pairs_many_help", n=DEFAULT_BOOTSTRAP))
st.dataframe(fmt.pair_table(report, table_pairs), hide_index=True)
raters, cells = fmt.pair_cells(report)
if len(raters) > 2:
    st.altair_chart(
        charts.pair_matrix_chart(raters, cells, title=t("agreement.pair_matrix"), legend_title=t("metric.cohen_kappa"),
                                 description=t("agreement.pair_matrix_alt"))
    )
else:
    st.caption(t("agreement.pair_matrix_two"))

st.header(t("agreement.by_category"))
st.caption(t("agreement.category_help", example=fmt.category_name(report["categories"][0])))
table_col, chart_col = st.columns(2)
table_col.dataframe(fmt.category_table(report), hide_index=True)
if whole := fmt.category_whole_range(report):
    table_col.caption(whole)
chart_col.altair_chart(
    charts.interval_chart(fmt.category_points(report), title=t("agreement.category_chart"),
                          x_title=t("agreement.chart_x_share"), domain=(0.0, 1.0), panel_width=320,
                          description=t("agreement.category_chart_alt"))
)
