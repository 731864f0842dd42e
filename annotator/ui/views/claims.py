"""Claim review (admins): choose a dataset and a case, read its question, answer and claims in
order, and split, merge with the next, edit or drop a claim, each with a reason, before anyone
labels it (services/claim_review.py holds every rule; this page collects input and shows what the
service says). A claim that cannot be changed says why, in the user's language."""

from __future__ import annotations

import streamlit as st

from annotator.errors import AnnotatorError
from annotator.services import claim_review
from annotator.services.lookup import list_datasets
from annotator.ui import components as ui
from annotator.ui.i18n import t

MESSAGE = "claims.message"  # (kind, Markdown) of the last change, shown above the claims


def _key(claim_pk: int, field: str) -> str:
    return f"claims.{field}.{claim_pk}"


def _done(text: str) -> None:
    st.session_state[MESSAGE] = ("success", text)


def _change(claim_pk: int, claim_id: str, dataset: str, operation: str) -> None:
    """The button of `operation` on a claim: one committed transaction, then a message."""
    reason = st.session_state.get(_key(claim_pk, f"{operation}_reason")) or ""
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            if operation == "split":
                done = claim_review.split_claim(session, me, claim_id, int(st.session_state.get(_key(claim_pk, "at")) or 0),
                                                reason=reason, dataset=dataset)
            elif operation == "merge":
                done = claim_review.merge_claims(session, me, claim_id, reason=reason, dataset=dataset)
            elif operation == "edit":
                done = claim_review.edit_claim(session, me, claim_id, st.session_state.get(_key(claim_pk, "text")) or "",
                                               reason=reason, dataset=dataset,
                                               update=bool(st.session_state.get(_key(claim_pk, "keep_labels"))))
            else:
                done = claim_review.drop_claim(session, me, claim_id, reason=reason, dataset=dataset)
    except AnnotatorError as error:
        st.session_state[MESSAGE] = ("error", ui.error_markdown(error))
        return
    for field in ("split_reason", "merge_reason", "edit_reason", "drop_reason", "text", "at", "keep_labels"):
        st.session_state.pop(_key(claim_pk, field), None)  # the next run starts from the claim as it now is
    if operation == "split":
        _done(ui.md("claims.split_done", claim_id=claim_id, first=done.after[0].claim_id, second=done.after[1].claim_id))
    elif operation == "merge":
        _done(ui.md("claims.merge_done", claim_id=claim_id, other=done.before[1].claim_id))
    elif operation == "edit":
        if not done.changed:
            st.session_state[MESSAGE] = ("info", ui.md("claims.edit_unchanged", claim_id=claim_id))
            return
        text = ui.md("claims.edit_done", claim_id=claim_id)
        if done.labels_to_review:
            text += " " + t("claims.edit_to_review", n=done.labels_to_review)
        _done(text)
    else:
        _done(ui.md("claims.drop_done", claim_id=claim_id))


def _refused(claim: claim_review.ReviewClaimRow, operation: str) -> bool:
    """Say why `operation` is refused on the claim (the service's words); whether it is."""
    why = claim.refusals.get(operation)
    if why is not None:
        st.caption(f":material/block: {ui.message_markdown(why)}")
    return why is not None


def _reason(claim_pk: int, operation: str) -> None:
    st.text_input(t("claims.reason"), key=_key(claim_pk, f"{operation}_reason"), placeholder=t("claims.reason_hint"))


def _confirmed(view: claim_review.CaseReview, claim: claim_review.ReviewClaimRow, operation: str) -> None:
    """A change that takes nothing but a reason ("merge", "drop"): what it does, the reason box and
    its button; or why it is refused."""
    if _refused(claim, operation):
        return
    st.caption(t(f"claims.{operation}_help"))
    _reason(claim.claim_pk, operation)
    st.button(t(f"claims.{operation}_button"), key=_key(claim.claim_pk, operation), on_click=_change,
              args=(claim.claim_pk, claim.claim_id, view.dataset, operation))


def _claim(view: claim_review.CaseReview, number: int, claim: claim_review.ReviewClaimRow) -> None:
    """One claim: its text and facts, then the four changes, each with its reason box."""
    with st.container(border=True):
        st.markdown(f"**{ui.md('claims.heading', n=number, claim_id=claim.claim_id)}**")
        span = t("claims.span", start=claim.span[0], end=claim.span[1]) if claim.span is not None else t("claims.no_span")
        facts = [span, t("claims.labels", n=claim.labels)] + ([t("claims.has_draft")] if claim.has_draft else [])
        st.caption(" · ".join(facts))
        st.text(ui.plain_text(claim.text))
        split, merge, edit, drop = st.tabs([t("claims.split"), t("claims.merge"), t("claims.edit"), t("claims.drop")])
        with split:
            if not _refused(claim, "split"):
                last = max(len(claim.text) - 1, 1)
                at = st.number_input(t("claims.split_at", length=len(claim.text)), min_value=1, max_value=last,
                                     value=min(max(len(claim.text) // 2, 1), last), step=1, key=_key(claim.claim_pk, "at"))
                st.caption(t("claims.split_preview"))
                st.text(ui.plain_text(claim.text[:int(at)]))
                st.text(ui.plain_text(claim.text[int(at):]))
                _reason(claim.claim_pk, "split")
                st.button(t("claims.split_button"), key=_key(claim.claim_pk, "split"), on_click=_change,
                          args=(claim.claim_pk, claim.claim_id, view.dataset, "split"))
        with merge:
            _confirmed(view, claim, "merge")
        with edit:
            held = _refused(claim, "edit")
            st.session_state.setdefault(_key(claim.claim_pk, "text"), claim.text)
            st.text_area(t("claims.text"), key=_key(claim.claim_pk, "text"))
            if held:
                st.checkbox(t("claims.keep_labels"), key=_key(claim.claim_pk, "keep_labels"), help=t("claims.keep_labels_help"))
            _reason(claim.claim_pk, "edit")
            st.button(t("claims.edit_button"), key=_key(claim.claim_pk, "edit"), on_click=_change,
                      args=(claim.claim_pk, claim.claim_id, view.dataset, "edit"))
        with drop:
            _confirmed(view, claim, "drop")


ui.require_page("claims")
st.title(t("page.claims"))
st.caption(t("claims.intro"))

with ui.read_db() as session:
    datasets = list_datasets(session)
if not datasets:
    st.info(t("claims.no_datasets"))
    st.stop()
left, right = st.columns(2)
dataset = left.selectbox(t("claims.dataset"), datasets, key="claims.dataset", format_func=ui.plain_text)
try:
    with ui.read_db() as session:
        case_ids = claim_review.review_case_ids(session, ui.session_user(session), dataset)
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()
case_id = right.selectbox(t("claims.case"), case_ids, key=f"claims.case.{dataset}", format_func=ui.plain_text)
if len(case_ids) >= claim_review.CASE_CHOICES:  # a big dataset: the list holds its first cases only
    typed = st.text_input(t("claims.case_typed", n=claim_review.CASE_CHOICES), key=f"claims.case_typed.{dataset}")
    case_id = typed.strip() or case_id
ui.show_message(MESSAGE)
if case_id is None:
    st.info(t("claims.no_cases"))
    st.stop()
try:
    with ui.read_db() as session:
        view = claim_review.case_review(session, ui.session_user(session), case_id, dataset)
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    st.stop()
st.markdown(f"**{t('claims.question')}**")
st.text(ui.plain_text(view.question))
st.markdown(f"**{t('claims.answer')}**")
st.text(ui.plain_text(view.answer))
st.header(t("claims.claims", n=len(view.claims)))
for number, claim in enumerate(view.claims, start=1):
    _claim(view, number, claim)
