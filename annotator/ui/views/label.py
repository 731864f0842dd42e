"""Label: the labeler's own queue, one claim at a time, blind to everyone else's labels.

Each label button saves in its callback (one committed transaction) and moves on to the next
unlabeled claim. A refused write (stale, locked, on hold) keeps what the user typed: the inputs
are keyed by claim and stay in session state.
"""

from __future__ import annotations

import streamlit as st

from annotator.errors import AnnotatorError
from annotator.services import labeling
from annotator.ui import components as ui
from annotator.ui.i18n import t
from annotator.vocabulary import HOLD_REASONS, LABELS, SEVERITIES

CURRENT = "label.claim_pk"


def _cite_key(claim_pk: int, passage_id: str) -> str:
    return f"label.cite.{claim_pk}.{passage_id}"


def _rationale_key(claim_pk: int) -> str:
    return f"label.rationale.{claim_pk}"


def _severity_key(claim_pk: int) -> str:
    return f"label.severity.{claim_pk}"


def _go(claim_pk: int) -> None:
    st.session_state[CURRENT] = claim_pk


def _save(claim_pk: int, claim_id: str, value: str, passage_ids: tuple[str, ...], expected_revision: int | None) -> None:
    if ui.too_soon_after_move():
        ui.flash("warning", t("label.too_fast"))
        return
    cited = [pid for pid in passage_ids if st.session_state.get(_cite_key(claim_pk, pid))]
    severity = None if value == "support" else st.session_state.get(_severity_key(claim_pk))
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            labeling.save_label(
                session, me, claim_pk, value, passage_ids=cited,
                rationale=st.session_state.get(_rationale_key(claim_pk)) or "",
                severity=severity, expected_revision=expected_revision,
            )
            next_pk = labeling.next_claim_for(session, me)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("toast", t("label.saved", value=t(f"value.{value}"), claim_id=claim_id))
    if next_pk is not None and next_pk != claim_pk:
        ui.moved_to_new_claim()
    _go(claim_pk if next_pk is None else next_pk)


def _hold(case_pk: int, claim_pk: int) -> None:
    reason = st.session_state.get(f"label.hold_reason.{case_pk}")
    note = st.session_state.get(f"label.hold_note.{case_pk}") or ""
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            labeling.put_on_hold(session, me, case_pk, reason, note)
            next_pk = labeling.next_claim_for(session, me)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("toast", t("label.held", reason=t(f"hold.{reason}")))
    _go(claim_pk if next_pk is None else next_pk)


def _lift(case_pk: int) -> None:
    try:
        with ui.db() as session:
            labeling.lift_hold(session, ui.session_user(session), case_pk)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("toast", t("label.lifted"))


def _open_deep_link(session, me) -> None:  # noqa: ANN001 - Session, User
    """`?claim=<claim_id>` opens one of the user's own assigned claims; the service refuses others."""
    pending = st.session_state.pop(ui.PENDING_CLAIM, None)
    claim_id = st.query_params.get("claim") or pending
    if not claim_id:
        return
    if "claim" in st.query_params:
        del st.query_params["claim"]
    st.session_state[CURRENT] = labeling.find_assigned_claim(session, me, claim_id)


me = ui.require_page("label")
with ui.db() as session:
    try:
        _open_deep_link(session, me)
    except AnnotatorError as error:
        ui.flash_error(error)
    queue = labeling.assigned_claims(session, me)
    next_pk = labeling.next_claim_for(session, me)
    current = st.session_state.get(CURRENT)
    if current not in queue:
        current = next_pk if next_pk is not None else (queue[0] if queue else None)
    st.session_state[CURRENT] = current
    done, total = labeling.progress_for(session, me)
    view = None if current is None else labeling.claim_for_labeler(session, me, current)

st.title(t("page.label"))
ui.show_flash()
st.progress(done / total if total else 0.0, text=t("label.progress", done=done, total=total))
if view is None:
    st.info(t("label.no_assignments"))
    st.stop()
if next_pk is None:
    st.success(t("label.queue_done"))

position = queue.index(view.claim_pk)
previous_col, where_col, next_col = st.columns([1, 4, 1], vertical_alignment="center")
previous_col.button(t("label.previous"), key="label.previous", icon=":material/arrow_back:",
                    on_click=_go, args=(queue[max(position - 1, 0)],), disabled=position == 0)
where_col.caption(t("label.position", n=position + 1, total=len(queue), claim_id=view.claim_id))
next_col.button(t("label.next"), key="label.next", icon=":material/arrow_forward:",
                on_click=_go, args=(queue[min(position + 1, len(queue) - 1)],), disabled=position == len(queue) - 1)

ui.case_header(view.case_id, view.slice, view.split, view.question, view.answer)

own = view.own_label
read_only = view.on_hold or not view.can_revise
if own is not None and not read_only:  # start from the saved label; keep anything typed since
    st.session_state.setdefault(_rationale_key(view.claim_pk), own.rationale)
    st.session_state.setdefault(_severity_key(view.claim_pk), own.severity)
    for passage in view.passages:
        st.session_state.setdefault(_cite_key(view.claim_pk, passage.passage_id), passage.passage_id in own.passage_ids)

claim_col, evidence_col = st.columns([2, 3])
with claim_col:
    st.subheader(t("label.claim", claim_id=view.claim_id))
    with st.container(border=True):
        st.text(view.text)
    if own is not None:
        st.markdown(t("label.yours", revision=own.revision))
        ui.label_badge(own.value)
    if view.on_hold:
        st.warning(t("label.on_hold", reason=t(f"hold.{view.hold_reason}")))
        if view.may_lift_hold:
            st.button(t("label.lift"), key="label.lift", on_click=_lift, args=(view.case_pk,))
    elif not view.can_revise:
        st.info(t("label.locked"))
    if read_only:
        if own is not None:
            st.markdown(f"**{t('label.rationale')}**")
            st.text(ui.optional(own.rationale))
            st.markdown(f"**{t('label.severity')}**: {t(f'severity.{own.severity}') if own.severity else '-'}")
    else:
        st.text_area(t("label.rationale"), key=_rationale_key(view.claim_pk), placeholder=t("label.rationale_hint"))
        st.selectbox(t("label.severity"), SEVERITIES, index=None, key=_severity_key(view.claim_pk),
                     format_func=lambda s: t(f"severity.{s}"), placeholder=t("label.severity_none"),
                     help=t("label.severity_help"))
        passage_ids = tuple(p.passage_id for p in view.passages)
        expected = None if own is None else own.revision
        for column, (number, value) in zip(st.columns(len(LABELS)), enumerate(LABELS, start=1), strict=True):
            column.button(
                t(f"value.{value}"), key=f"label.button.{value}", shortcut=str(number), width="stretch",
                type="primary" if own is not None and own.value == value else "secondary",
                on_click=_save, args=(view.claim_pk, view.claim_id, value, passage_ids, expected),
            )
        st.caption(t("label.shortcuts"))

with evidence_col:
    st.subheader(t("label.evidence"))
    cited = set(own.passage_ids) if own is not None else set()
    for passage in view.passages:
        if read_only:
            ui.passage_card(passage, cited=passage.passage_id in cited)
        else:
            ui.passage_card(passage, cite_key=_cite_key(view.claim_pk, passage.passage_id))

if not view.on_hold:
    with st.expander(t("label.hold")):
        st.selectbox(t("label.hold_reason"), HOLD_REASONS, key=f"label.hold_reason.{view.case_pk}",
                     format_func=lambda r: t(f"hold.{r}"))
        st.text_input(t("label.hold_note"), key=f"label.hold_note.{view.case_pk}")
        st.button(t("label.hold_button"), key="label.hold_button", on_click=_hold, args=(view.case_pk, view.claim_pk))
