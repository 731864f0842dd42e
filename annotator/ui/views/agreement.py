"""Agreement: how often the two blind labels of a claim agree, chance-corrected, overall and per
slice, with bootstrap intervals and the number of items behind every figure. It measures how
clear the labeling guideline is, not how good the RAG system is."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError
from annotator.services.lookup import dataset_pk
from annotator.services.reports import agreement_report
from annotator.ui import components as ui
from annotator.ui.i18n import t

MAIN_METRICS = ("percent_agreement", "cohen_kappa", "krippendorff_alpha")
OTHER_METRICS = ("scott_pi", "fleiss_kappa", "gwet_ac1", "brennan_prediger")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _figure(report: dict, metric: str) -> str:
    """ "0.712 [0.534, 0.861]", or "undefined: <reason>" when the coefficient is None."""
    value = report.get(metric)
    if value is None:
        return t("agreement.undefined", reason=report.get("undefined", {}).get(metric, t("agreement.no_data")))
    ci = (report.get("ci95") or {}).get(metric)
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _n(report: dict, metric: str) -> str:
    return t("agreement.n", used=(report.get("n_used") or {}).get(metric, 0), scope=report["n_in_scope"])


def _metrics(report: dict) -> list[str]:
    return [m for m in (*MAIN_METRICS, *OTHER_METRICS) if m in report]


def _confusion_chart(frame: pd.DataFrame, rater_a: str, rater_b: str) -> alt.Chart:
    long = frame.reset_index(names="a").melt(id_vars="a", var_name="b", value_name="n")
    base = alt.Chart(long).encode(
        x=alt.X("b:N", title=rater_b, sort=list(frame.columns)),
        y=alt.Y("a:N", title=rater_a, sort=list(frame.index)),
    )
    dark = alt.datum.n > max(int(long["n"].max()), 1) / 2
    text = base.mark_text().encode(text="n:Q", color=alt.condition(dark, alt.value("white"), alt.value("black")))
    return base.mark_rect().encode(color=alt.Color("n:Q", legend=None, scale=alt.Scale(scheme="blues"))) + text


ui.require_page("agreement")
st.title(t("page.agreement"))
st.info(t("agreement.note"))
dataset = ui.dataset_select("agreement.dataset")
try:
    with ui.db() as session:
        report = agreement_report(session, dataset_pk(session, dataset), by="slice").to_json()
except AnnotatorError as error:
    st.error(str(error))
    st.stop()

st.caption(t("agreement.scope", items=report["n_items"], scope=report["n_in_scope"], raters=report["n_raters"]))
for column, metric in zip(st.columns(len(MAIN_METRICS)), MAIN_METRICS, strict=True):
    value = report.get(metric)
    column.metric(t(f"metric.{metric}"), _number(value) if value is not None else t("agreement.undefined_short"))
    column.caption(_figure(report, metric) + " · " + _n(report, metric))

st.subheader(t("agreement.overall"))
st.dataframe(
    pd.DataFrame([{t("col.metric"): t(f"metric.{m}"), t("col.value"): _figure(report, m), t("col.n"): _n(report, m)}
                  for m in _metrics(report)]),
    hide_index=True,
)

st.subheader(t("agreement.by_slice"))
st.caption(t("agreement.indicative_help"))
slices = report.get("by_slice") or {}
st.dataframe(
    pd.DataFrame(
        [{t("col.slice"): name, t("col.items"): part["n_items"],
          t("col.indicative"): t("agreement.indicative") if part.get("indicative") else "",
          **{t(f"metric.{m}"): _figure(part, m) for m in MAIN_METRICS}}
         for name, part in slices.items()],
        columns=[t("col.slice"), t("col.items"), t("col.indicative"), *(t(f"metric.{m}") for m in MAIN_METRICS)],
    ),
    hide_index=True,
)

st.subheader(t("agreement.confusion"))
categories = [t(f"value.{c}") for c in report["categories"]]
for pair in report.get("by_pair") or []:
    frame = pd.DataFrame(pair["confusion"], index=categories, columns=categories)
    st.caption(t("agreement.pair", a=pair["rater_a"], b=pair["rater_b"], n=pair["n_items"]))
    table_col, chart_col = st.columns(2)
    table_col.dataframe(frame.rename_axis(f'{pair["rater_a"]} \\ {pair["rater_b"]}'))
    chart_col.altair_chart(_confusion_chart(frame, str(pair["rater_a"]), str(pair["rater_b"])))
if not report.get("by_pair"):
    st.caption(t("agreement.no_pairs"))

st.subheader(t("agreement.label_counts"))
counts = report.get("label_counts") or {}
st.dataframe(
    pd.DataFrame.from_dict(counts, orient="index", columns=list(report["categories"])).rename(
        columns=lambda c: t(f"value.{c}")),
)
