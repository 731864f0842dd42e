"""Home: where the logged-in user stands, one section per role they have. A labeler sees their
queue (left to label, to review after an update, waiting for a hold, done) with a link to the
next claim; an adjudicator the disputes waiting for them; an admin the claims by state and slice,
agreement at a glance and what blocks the next release. The figures come from services/home.py,
which keeps the blind rule.

A claim link `?claim=<claim_id>&dataset=<name>` that lands here (the app's main address, or kept through the
login) is followed: to the Label page for a claim of the user's queue, to the Adjudicate page for
a dispute waiting for their decision; any other claim id is refused with one message, on this page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from annotator.errors import AnnotatorError
from annotator.services import home
from annotator.services.users import roles_of
from annotator.ui import charts
from annotator.ui import components as ui
from annotator.ui import format as fmt
from annotator.ui.i18n import date_text, t
from annotator.vocabulary import HOLD_EXPIRES_AFTER_DAYS, INDICATIVE_BELOW
from annotator.workflow import State

PAGE_FILES = {"home": "views/home.py", "label": "views/label.py", "adjudicate": "views/adjudicate.py",
              "agreement": "views/agreement.py", "releases": "views/releases.py", "admin": "views/admin.py"}
ICONS = {"label": ":material/label:", "adjudicate": ":material/gavel:", "agreement": ":material/handshake:",
         "releases": ":material/inventory_2:", "admin": ":material/admin_panel_settings:"}
# The Adjudicate page's claim select (its PICK): a followed link to a dispute preselects it there.
ADJUDICATE_PICK = "adjudicate.claim_pk"
# Where each reason that blocks a release is dealt with, the first page of these the user may open.
FIX_PAGES = {"unlabeled": ("admin",), "single": ("admin",), "disputed": ("adjudicate", "admin"),
             "stale": ("adjudicate", "admin"), "on_hold": ("admin",), home.STILL_TO_LABEL: ("label",)}


def _link(me, page: str, label: str, query_params: dict | None = None) -> None:  # noqa: ANN001 - User
    """A link to one of the app's pages when `me` may open it. Run outside the app's navigation
    (the page script alone) there is no page to link to: the label is shown as text."""
    if page != "home" and not ui.may_open(me, page):
        return
    try:
        st.page_link(PAGE_FILES[page], label=label, icon=ICONS.get(page, ":material/home:"), query_params=query_params)
    except StreamlitPageNotFoundError:
        st.caption(label)


def _claim_params(claim_id: str, dataset: str | None) -> dict:
    """The query of a link to a claim: its id and its dataset's name (claim ids are unique per
    dataset only), as ui.take_claim_link reads them back."""
    return {ui.CLAIM_PARAM: claim_id, **({ui.DATASET_PARAM: dataset} if dataset else {})}


def _claim_link(me) -> str | None:  # noqa: ANN001 - User
    """Follow a `?claim=` link (or one kept through the login) to the page that opens the claim;
    returns the refusal's message when it leads nowhere for `me`, None when there was no link."""
    try:
        linked = ui.take_claim_link()
        if not linked:
            return None
        with ui.read_db() as session:
            link = home.open_claim_link(session, me, *linked)
    except AnnotatorError as error:
        return ui.error_markdown(error)
    try:
        if link.page == "adjudicate":
            st.session_state[ADJUDICATE_PICK] = link.claim_pk
            st.switch_page(PAGE_FILES["adjudicate"])
        st.switch_page(PAGE_FILES["label"], query_params=_claim_params(link.claim_id, link.dataset))
    except StreamlitPageNotFoundError:
        return None  # the page script alone: nowhere to go


def labeler_section(me, overview: home.LabelerOverview) -> None:  # noqa: ANN001 - User
    counts = overview.counts
    st.header(t("home.labeler"))
    st.progress(counts.done / counts.assigned if counts.assigned else 0.0,
                text=t("label.progress", done=counts.done, total=counts.assigned))
    for column, group in zip(st.columns(4), ("to_label", "to_review", "on_hold", "done"), strict=True):
        column.metric(t(f"home.queue.{group}"), getattr(counts, group), help=t(f"home.queue_help.{group}", days=HOLD_EXPIRES_AFTER_DAYS))
    if overview.next_claim_id is not None:
        _link(me, "label", ui.md("home.next_claim", claim_id=overview.next_claim_id), _claim_params(overview.next_claim_id, overview.next_claim_dataset))
    elif counts.assigned:
        st.success(t("label.queue_done"))
    else:
        st.info(t("label.no_assignments"))
    if len(overview.by_slice) > 1:
        st.dataframe(pd.DataFrame([
            {t("home.col_dataset"): ui.plain_text(row.dataset), t("col.slice"): ui.plain_text(row.slice),
             **{t(f"home.queue.{group}"): getattr(row.counts, group) for group in ("to_label", "to_review", "on_hold", "done")}}
            for row in overview.by_slice]), hide_index=True)


def adjudicator_section(me, overview: home.AdjudicatorOverview) -> None:  # noqa: ANN001 - User
    st.header(t("home.adjudicator"))
    if not overview.waiting:
        st.success(t("adjudicate.empty"))
        return
    waiting_col, stale_col, since_col = st.columns(3)
    waiting_col.metric(t("home.disputes_waiting"), overview.waiting)
    stale_col.metric(t("home.disputes_stale"), overview.stale, help=t("home.disputes_stale_help"))
    since_col.metric(t("home.oldest_since"), date_text(overview.oldest_since), help=t("home.oldest_since_help"))
    st.dataframe(pd.DataFrame([
        {t("col.slice"): ui.plain_text(row.slice), t("home.disputes_waiting"): row.waiting, t("home.disputes_stale"): row.stale,
         t("home.oldest_since"): date_text(row.oldest_since)} for row in overview.by_slice]), hide_index=True)
    _link(me, "adjudicate", t("home.open_disputes", n=overview.waiting))
    _link(me, "home", ui.md("home.open_oldest", claim_id=overview.oldest_claim_id), _claim_params(overview.oldest_claim_id, overview.oldest_claim_dataset))


def _state_names() -> list[str]:
    return [t(f"state.{state.value}") for state in State]


def admin_section(me, overview: home.AdminOverview) -> None:  # noqa: ANN001 - User
    st.header(t("home.admin"))
    if overview.claims_left_out:
        st.caption(t("home.left_out", n=overview.claims_left_out))
    if not overview.claims:
        st.info(t("home.no_claims"))
    else:
        total_col, final_col = st.columns(2)
        total_col.metric(t("col.claims"), overview.claims)
        final_col.metric(t("home.final"), overview.release.final, help=t("home.final_help"))
        bars = [charts.StateBar(ui.plain_text(row.slice), t(f"state.{state.value}"), row.by_state[state.value],
                                t("home.bar_text", state=t(f"state.{state.value}"), n=row.by_state[state.value]))
                for row in overview.by_slice for state in State]
        st.altair_chart(charts.state_chart(bars, states=_state_names(), title=t("home.chart_title"),
                                           x_title=t("col.claims"), y_title=t("col.slice"),
                                           legend_title=t("col.state"), description=t("home.chart_alt")))
        st.dataframe(pd.DataFrame([{t("col.state"): t(f"state.{state}"), t("col.claims"): n}
                                   for state, n in overview.by_state.items()]), hide_index=True)

    st.markdown(f"**{t('home.agreement')}**")
    report = overview.agreement
    metrics = fmt.main_metrics(report)
    for column, metric in zip(st.columns(len(metrics)), metrics, strict=True):
        column.metric(t(f"metric.{metric}"), fmt.number(report.get(metric)))
        column.caption(fmt.n_text(report, metric) if report.get(metric) is not None
                       else fmt.n_text(report, metric) + " · " + fmt.reason(report, metric))
    if report["indicative"] and report["n_items"]:
        st.caption(t("home.indicative", n=INDICATIVE_BELOW))
    _link(me, "agreement", t("home.open_agreement"))

    st.markdown(f"**{t('home.release')}**")
    check = overview.release
    if check.refusal is None and not check.refused_by:
        st.success(t("home.release_ready", n=check.final))
    else:
        st.warning(t("home.release_refused"))
        for reason, n in check.refused_by.items():
            text_col, link_col = st.columns([2, 3], vertical_alignment="center")
            text_col.markdown(t("home.blocked_by", reason=t(f"home.reason.{reason}"), n=n))
            with link_col:
                page = next((page for page in FIX_PAGES[reason] if ui.may_open(me, page)), None)
                if page is not None:
                    _link(me, page, t(f"home.fix.{reason}"))
        if check.refusal is not None:
            st.caption(t("home.refusal", message=ui.message_markdown(check.refusal_message or check.refusal)))
    if check.leaks:
        st.error(t("home.leaks", n=check.leaks))
    _link(me, "releases", t("home.open_releases"))


me = ui.require_page("home")
refused = _claim_link(me)
roles = roles_of(me)
try:
    with ui.read_db() as session:  # reads only: no SQLite write lock while the overviews are counted
        overviews = {
            "labeler": home.labeler_overview(session, me) if "labeler" in roles else None,
            "adjudicator": home.adjudicator_overview(session, me) if "adjudicator" in roles else None,
            "admin": home.admin_overview(session, me) if "admin" in roles else None,
        }
except AnnotatorError as error:  # the transaction is over here: st.stop() must not end a run inside one
    st.error(ui.error_markdown(error))
    st.stop()

st.title(t("page.home"))
ui.show_flash()
if refused is not None:
    st.error(refused)
if overviews["labeler"] is not None:
    labeler_section(me, overviews["labeler"])
if overviews["adjudicator"] is not None:
    adjudicator_section(me, overviews["adjudicator"])
if overviews["admin"] is not None:
    admin_section(me, overviews["admin"])
