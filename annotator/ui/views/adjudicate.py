"""Adjudicate: disputed (and stale) claims the adjudicator did not label, the two labels as
"Labeler 1 / Labeler 2" without names (in the user's language: msg.labeler_n), and the final decision.

One screen per claim, as the Label page (ui/layout.py): the claim to decide picked at the top (the
whole queue in a popover beside it), the case on one line, the question over the answer, then the
claim and its decision (severity, rationale, buttons: Tab from the rationale reaches them) beside
the two labels and the passages. A decision needs a rationale (services/adjudication.adjudicate
refuses one without, and the page shows why).

No draft keeps the decision's rationale (a reload keeps the login, not the page's inputs), so the
browser asks before leaving the page while the rationale holds text (ui/unsaved.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError
from annotator.services import adjudication, lookup
from annotator.ui import case_fields, keyguard, layout
from annotator.ui import components as ui
from annotator.ui.guideline import guideline_panel
from annotator.ui import unsaved
from annotator.ui.i18n import t
from annotator.vocabulary import LABELS, SEVERITIES

PICK = "adjudicate.claim_pk"
DECISION_BUTTONS = "adjudicate.button."  # the decision buttons' key prefix (keyguard.button_key)
RATIONALE_HEIGHT = 96  # pixels, its label included: as on the Label page (ui/layout.py)


def _rationale_key(claim_pk: int) -> str:
    return f"adjudicate.rationale.{claim_pk}"


def _severity_key(claim_pk: int) -> str:
    return f"adjudicate.severity.{claim_pk}"


def _decide(claim_pk: int, claim_id: str, value: str, expected_revision: int | None, seen_content_at: object = None) -> None:
    if ui.too_soon_after_move():
        ui.flash("warning", t("label.too_fast"))
        return
    severity = None if value == "support" else st.session_state.get(_severity_key(claim_pk))
    try:
        with ui.db() as session:
            adjudication.adjudicate(
                session, ui.session_user(session), claim_pk, value,
                rationale=st.session_state.get(_rationale_key(claim_pk)) or "",
                severity=severity, expected_revision=expected_revision, seen_content_at=seen_content_at,
            )
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("toast", ui.md("adjudicate.saved", value=t(f"value.{value}"), claim_id=claim_id))
    st.session_state.pop(PICK, None)  # the decided claim leaves the queue: show the next one
    ui.moved_to_new_claim()


def _queue_table(queue: list[adjudication.QueueItem]) -> None:
    """Every claim waiting for the user's decision, one row each (in the queue's popover)."""
    st.dataframe(
        pd.DataFrame(
            [{t("col.claim"): ui.plain_text(q.claim_id), t("col.case"): ui.plain_text(q.case_id),
              t("col.slice"): ui.plain_text(q.slice), t("col.split"): ui.plain_text(q.split),
              t("col.state"): t(f"state.{q.state}"), t("col.labels"): ", ".join(t(f"value.{v}") for v in q.labels)}
             for q in queue]
        ),
        hide_index=True,
    )


def _passage_numbers(view: adjudication.AdjudicationView) -> dict[str, int]:
    """Each passage's number on the page (1, 2, ... in the claim's order, as the labelers saw them)."""
    return {passage.passage_id: number for number, passage in enumerate(view.passages, start=1)}


def _cited_text(passage_ids: tuple[str, ...], numbers: dict[str, int]) -> str:
    """A label's citations: "passage 2 (p-7)" for a passage shown, the id alone for one that is not
    (the claim's passages changed since the label)."""
    return ", ".join(t("adjudicate.cited_passage", n=numbers[pid], passage_id=pid) if pid in numbers else pid
                     for pid in passage_ids) or "-"


def _blind_labels(view: adjudication.AdjudicationView) -> None:
    """The claim's labels side by side, as "Labeler 1", "Labeler 2" (no names), each naming the
    passages it cites by their number on the page."""
    numbers = _passage_numbers(view)
    for column, blind in zip(st.columns(len(view.labels) or 1), view.labels, strict=False):
        with column, st.container(border=True):
            with st.container(horizontal=True, vertical_alignment="center"):  # one line
                st.markdown(f"**{t('msg.labeler_n', n=blind.number)}**", width="content")
                ui.label_badge(blind.value)
            st.caption(ui.md("adjudicate.cited", passages=_cited_text(blind.passage_ids, numbers)) + " · "
                       + t("adjudicate.severity", severity=t(f"severity.{blind.severity}") if blind.severity else "-"))
            st.text(ui.optional(blind.rationale))


def _decision_form(view: adjudication.AdjudicationView) -> None:
    """The final label: severity, the rationale (required: services/adjudication.adjudicate), then
    the decision buttons, so that Tab from the rationale reaches them."""
    st.subheader(t("adjudicate.decision"))
    if view.decision is not None:
        st.warning(t("adjudicate.stale", value=t(f"value.{view.decision.value}")))
    elif view.state == "stale":  # not decided yet: a label was made before the claim changed
        st.info(t("adjudicate.changed_after_labels"))
    st.selectbox(t("label.severity"), SEVERITIES, index=None, key=_severity_key(view.claim_pk),
                 format_func=lambda s: t(f"severity.{s}"), placeholder=t("label.severity_none"),
                 help=t("label.severity_help"))
    st.text_area(t("adjudicate.rationale"), key=_rationale_key(view.claim_pk), placeholder=t("adjudicate.rationale_hint"),
                 height=RATIONALE_HEIGHT)
    expected = None if view.decision is None else view.decision.revision
    for column, value, key in zip(st.columns(len(LABELS)), LABELS, keyguard.LABEL_KEYS, strict=True):
        column.button(t(f"value.{value}"), key=keyguard.button_key(DECISION_BUTTONS, view.claim_pk, value), shortcut=key,
                      width="stretch",
                      on_click=_decide, args=(view.claim_pk, view.claim_id, value, expected, view.content_changed_at))
    st.caption(t("adjudicate.shortcuts") + " " + t("label.shortcuts_rationale", shortcut=layout.RATIONALE_KEY))


me = ui.require_page("adjudicate")
with ui.db() as session:
    queue = adjudication.adjudication_queue(session, me)
    by_pk = {item.claim_pk: item for item in queue}
    if st.session_state.get(PICK) not in by_pk:
        st.session_state[PICK] = queue[0].claim_pk if queue else None
    view = None
    several_datasets = len(lookup.list_datasets(session)) > 1  # the case line then names the claim's dataset
    if queue:
        try:
            view = adjudication.view_for_adjudicator(session, me, st.session_state[PICK])
        except AnnotatorError as error:
            ui.flash_error(error)

title_col, waiting_col = st.columns([1, 2], vertical_alignment="bottom")
title_col.title(t("page.adjudicate"))
waiting_col.caption(t("adjudicate.waiting", n=len(queue)))
guideline_panel()  # the current labeling guideline, in the sidebar
unsaved.guard(held=("adjudicate.rationale.",))
ui.show_flash()
if not queue:
    st.success(t("adjudicate.empty"))
    st.stop()

pick_col, tools_col = st.columns([5, 2], vertical_alignment="bottom")
pick_col.selectbox(t("adjudicate.pick"), list(by_pk), key=PICK,
                   format_func=lambda pk: t("adjudicate.option", claim_id=ui.plain_text(by_pk[pk].claim_id),
                                             case_id=ui.plain_text(by_pk[pk].case_id)))
with tools_col.container(horizontal=True):  # the queue, and the claim's link beside it
    with st.popover(t("adjudicate.queue", n=len(queue)), icon=":material/list:", width="stretch"):
        _queue_table(queue)
    if view is not None:
        ui.claim_link_button(view.claim_id, view.dataset)
if view is None:
    st.stop()

keyguard.guard(view.claim_pk, DECISION_BUTTONS)  # before the claim: the browser sees a new one first
layout.claim_screen(view.claim_pk, _rationale_key(view.claim_pk))  # one screen per claim, opened at its top; R: rationale
ui.case_header(view.case_id, view.slice, view.split, view.question, view.answer, metadata=view.metadata,
               claim_text=view.text, key="adjudicate.case_open", span=(view.span_start, view.span_end),
               claim_key=view.claim_pk, dataset=view.dataset if several_datasets else None)
claim_col, evidence_col = st.columns([2, 3])
with claim_col:
    st.header(ui.md("label.claim", claim_id=view.claim_id))
    with st.container(border=True):
        st.text(ui.plain_text(view.text))
    _decision_form(view)
with evidence_col:
    _blind_labels(view)
    st.header(t("label.evidence"))
    for number, passage in enumerate(view.passages, start=1):
        case_fields.evidence_role(view.metadata, passage.passage_id)
        ui.passage_card(passage, number=number, claim_text=view.text, shown_with=view.passages, metadata=view.metadata,
                        known_versions=view.document_versions,
                        cited_by=[t("msg.labeler_n", n=b.number) for b in view.labels if passage.passage_id in b.passage_ids])
ui.new_claim_drawn()  # a decision's move: its quiet time for decision presses starts once the claim is drawn
