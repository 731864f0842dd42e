"""Label: the labeler's own queue, one claim at a time, blind to everyone else's labels.

Each label button saves in its callback (one committed transaction) and moves on to the next
unlabeled claim. It saves against the revision of the user's label the tab's inputs started
from, so a label saved meanwhile in another tab is refused as stale, never replaced unseen. A
refused write (stale, locked, on hold) keeps what the user typed: the inputs are keyed by claim
and stay in session state.

Every change of an input (rationale, severity, a citation) is kept as the user's draft of the
claim in its widget's on_change callback (services/drafts.py), and so is a label whose save was
refused. A new browser session (a reload, a reconnect, another tab) showing the claim starts
its inputs from that draft when it is newer than the user's saved label, and says so. Saving
the label deletes the draft. Streamlit sends a text area's value on blur or Ctrl+Enter only, so
the rationale is also sent a second after the user stops typing (ui/unsaved.py); until it is, and
while the hold note holds text (no draft keeps it), the browser asks before leaving the page.

The page is one screen per claim (ui/layout.py): the case on one line, the question over the
answer in a box that stays as the user left it, then the claim and its form beside the passages.
The form is severity, rationale, label buttons, in that order: Tab from the rationale reaches the
buttons. "Hold this case" is offered only where the user's label may still change (not on a claim
whose label is final, where the page says so, nor on a case already on hold).

Everything works from the keyboard, and the keys are listed under the label buttons: 1/2/3 are
the label buttons', J/K the Next/Previous buttons', Shift+1..9 the cite buttons' of passages 1..9.
A cite button flips the passage's checkbox through its own session key (`_cite_key`), so drafts,
restored drafts and saves see one citation whichever was used. Streamlit fires no key without
Ctrl/Alt/Cmd while a text box has the focus, so typing a rationale never triggers one.
A label key pressed again and again, or held down, saves once: the browser drops the repeats and
the presses that come right after a save moved to the next claim (ui/keyguard.py), the server
ignores those that slip through (components.py `too_soon_after_move`), and each label button's
key names its claim, so a press meant for one claim never saves another.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import streamlit as st

from annotator.errors import (AnnotatorError, ContentChangedError, DiskFullError, GuidelineChangedError, OnHoldError,
                              StaleWriteError)
from annotator.services import drafts, labeling, lookup
from annotator.services.guidelines import current_guideline
from annotator.ui import case_fields, keyguard, layout
from annotator.ui import components as ui
from annotator.ui.guideline import show_guideline_panel
from annotator.ui import unsaved
from annotator.ui.i18n import datetime_text, t, time_text
from annotator.vocabulary import HOLD_REASONS, LABELS, SEVERITIES

CURRENT = "label.claim_pk"
# The claim a label button saved in this run's callbacks: an input's draft callback that runs
# after it in the same run must not write a new draft of it. (Comments, not docstrings, here:
# Streamlit's magic writes a page's bare strings onto the page.)
SAVED_NOW = "label.saved_now"
# The next claim of the queue as the save in this run's callback found it, right after writing:
# the page's render uses it instead of asking again (one query less per label).
NEXT_NOW = "label.next_now"


NEXT_KEY = "J"
PREVIOUS_KEY = "K"
# The keys that cite passages 1..9 (Shift+digit: the digits alone save a label). Streamlit fires
# no shortcut without Ctrl/Alt/Cmd while a text box has the focus, so typing never triggers one.
CITE_KEYS = tuple(f"Shift+{n}" for n in range(1, 10))
LABEL_BUTTONS = "label.button."  # the label buttons' key prefix (keyguard.button_key)
RATIONALE_HEIGHT = 96  # pixels, its label included: three lines, so that the form fits one screen (ui/layout.py)


def _cite_key(claim_pk: int, passage_id: str) -> str:
    return f"label.cite.{claim_pk}.{passage_id}"


def _rationale_key(claim_pk: int) -> str:
    return f"label.rationale.{claim_pk}"


def _severity_key(claim_pk: int) -> str:
    return f"label.severity.{claim_pk}"


def _choice_key(claim_pk: int) -> str:
    """A label chosen on the claim but not saved (a refused save, or restored from the draft)."""
    return f"label.draft_value.{claim_pk}"


def _seen_key(claim_pk: int) -> str:
    """The `updated_at` of the draft this tab last restored or wrote (None: none)."""
    return f"label.draft_seen.{claim_pk}"


def _base_key(claim_pk: int) -> str:
    """The revision of the user's label this tab's inputs started from (None: no label). The label
    buttons save against it, so a label saved meanwhile in another tab is refused as stale even
    when this tab has rerun since, instead of being replaced unseen."""
    return f"label.base_revision.{claim_pk}"


def _restored_key(claim_pk: int) -> str:
    """When this tab started the claim's inputs from a draft: that draft's time."""
    return f"label.draft_restored.{claim_pk}"


def _when(moment: datetime) -> str:
    """A time for a note: HH:MM in the browser's time zone (with the date when not today);
    in UTC, saying so, when the browser's zone is unknown."""
    zone_name = st.context.timezone
    try:
        zone = ZoneInfo(zone_name) if zone_name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        zone, zone_name = UTC, None
    local = moment.astimezone(zone)
    shown = time_text(local) if local.date() == datetime.now(zone).date() else datetime_text(local)  # as the language writes it
    return shown if zone_name else f"{shown} UTC"


def _inputs(claim_pk: int, passage_ids: tuple[str, ...]) -> dict:
    """What the claim's inputs hold in this tab, as save_draft takes it."""
    return {
        "value": st.session_state.get(_choice_key(claim_pk)),
        "rationale": st.session_state.get(_rationale_key(claim_pk)) or "",
        "passage_ids": [pid for pid in passage_ids if st.session_state.get(_cite_key(claim_pk, pid))],
        "severity": st.session_state.get(_severity_key(claim_pk)),
    }


def _fill_inputs(view: labeling.ClaimView, draft: drafts.DraftView | None) -> None:
    """Start the claim's inputs when this tab does not hold them (a new session, or the widgets
    were dropped while another claim was shown): from the user's draft when there is one (it is
    newer than their label: get_draft), else from their saved label, else empty. Inputs this tab
    holds are kept as typed, and told to the browser again: Streamlit sends a value set through
    session state only in the run that set it, and a browser that missed that run's box (a click
    on a link while the page was still arriving) drew it empty and sent the emptiness back as a
    change, over the restored draft (tests/test_draft_restore_browser.py)."""
    claim_pk = view.claim_pk
    if _rationale_key(claim_pk) in st.session_state:
        for key in (_rationale_key(claim_pk), _severity_key(claim_pk),
                    *(_cite_key(claim_pk, passage.passage_id) for passage in view.passages)):
            if key in st.session_state:
                st.session_state[key] = st.session_state[key]  # sent with the widget on every run
        return
    own = view.own_label
    if draft is not None:
        rationale, severity, cited = draft.rationale, draft.severity, set(draft.passage_ids)
        st.session_state[_choice_key(claim_pk)] = draft.value
        st.session_state[_restored_key(claim_pk)] = draft.updated_at
    else:
        rationale, severity = (own.rationale, own.severity) if own is not None else ("", None)
        cited = set(own.passage_ids) if own is not None else set()
        st.session_state.pop(_choice_key(claim_pk), None)
        st.session_state.pop(_restored_key(claim_pk), None)
    st.session_state[_seen_key(claim_pk)] = None if draft is None else draft.updated_at
    st.session_state[_base_key(claim_pk)] = None if own is None else own.revision
    st.session_state[_rationale_key(claim_pk)] = rationale
    st.session_state[_severity_key(claim_pk)] = severity
    for passage in view.passages:
        st.session_state[_cite_key(claim_pk, passage.passage_id)] = passage.passage_id in cited


def _forget_tab_draft(claim_pk: int) -> None:
    for key in (_choice_key(claim_pk), _seen_key(claim_pk), _restored_key(claim_pk), _base_key(claim_pk)):
        st.session_state.pop(key, None)


def _keep_draft(claim_pk: int, passage_ids: tuple[str, ...]) -> None:
    """on_change of every input: keep what the inputs hold as the user's draft of the claim."""
    if st.session_state.get(SAVED_NOW) == claim_pk:
        return  # a label button of this run saved the claim (and deleted its draft) already
    try:
        with ui.db() as session:
            saved = drafts.save_draft(
                session, ui.session_user(session), claim_pk, **_inputs(claim_pk, passage_ids),
                expected_updated_at=st.session_state.get(_seen_key(claim_pk)),
            )
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state[_seen_key(claim_pk)] = saved.updated_at
    if saved.replaced_at is not None:
        ui.flash("warning", t("label.draft_replaced", time=_when(saved.replaced_at)))


def _discard(claim_pk: int, passage_ids: tuple[str, ...]) -> None:
    """Delete the user's draft; the inputs start again from their saved label (or empty)."""
    try:
        with ui.db() as session:
            drafts.discard_draft(session, ui.session_user(session), claim_pk)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    for key in (_rationale_key(claim_pk), _severity_key(claim_pk), *(_cite_key(claim_pk, pid) for pid in passage_ids)):
        st.session_state.pop(key, None)
    _forget_tab_draft(claim_pk)
    ui.flash("toast", t("label.draft_discarded"))


def _draft_note(claim_pk: int, draft: drafts.DraftView | None, read_only: bool, passage_ids: tuple[str, ...]) -> None:
    """Where the user's draft of the claim stands, with a button to discard it."""
    if draft is None:
        return
    restored = st.session_state.get(_restored_key(claim_pk))
    chosen = st.session_state.get(_choice_key(claim_pk))
    if read_only:
        st.caption(t("label.draft_blocked", time=_when(draft.updated_at)))
    elif st.session_state.get(_seen_key(claim_pk)) != draft.updated_at:
        st.warning(t("label.draft_elsewhere", time=_when(draft.updated_at)), icon=":material/tab:")
    elif restored is not None and chosen is not None:
        st.info(t("label.draft_restored_value", time=_when(restored), value=t(f"value.{chosen}")), icon=":material/history:")
    elif restored is not None:
        st.info(t("label.draft_restored", time=_when(restored)), icon=":material/history:")
    else:
        st.caption(t("label.draft_kept", time=_when(draft.updated_at)))
    st.button(t("label.draft_discard"), key="label.draft_discard", icon=":material/delete:",
              on_click=_discard, args=(claim_pk, passage_ids))


def _toggle_cite(claim_pk: int, passage_id: str, passage_ids: tuple[str, ...]) -> None:
    """The cite button (and its key): flip the citation in the checkbox's own session key, then
    keep the draft as the checkbox's on_change does."""
    key = _cite_key(claim_pk, passage_id)
    st.session_state[key] = not st.session_state.get(key, False)
    _keep_draft(claim_pk, passage_ids)


def _cite_controls(claim_pk: int, number: int, passage_id: str, passage_ids: tuple[str, ...]) -> None:
    """Under a passage: the cite checkbox (ticked or not says the state) and a button that flips
    it, whose label says what it will do and which carries the passage's key (CITE_KEYS)."""
    cited = bool(st.session_state.get(_cite_key(claim_pk, passage_id)))
    row = st.container(horizontal=True, vertical_alignment="center")
    row.checkbox(t("passage.cite"), key=_cite_key(claim_pk, passage_id), on_change=_keep_draft, args=(claim_pk, passage_ids))
    row.button(t("passage.uncite_key" if cited else "passage.cite_key", n=number), key=f"label.cite_button.{number}",
               icon=":material/bookmark_remove:" if cited else ":material/bookmark_add:",
               shortcut=CITE_KEYS[number - 1] if number <= len(CITE_KEYS) else None,
               on_click=_toggle_cite, args=(claim_pk, passage_id, passage_ids))


def _shortcut_list(n_passages: int) -> None:
    """The page's keys, in words, under the label buttons."""
    st.caption(t("label.shortcuts"))
    numbers = range(1, min(n_passages, len(CITE_KEYS)) + 1)
    if numbers:
        st.caption(t("label.shortcuts_cite", keys=", ".join(CITE_KEYS[n - 1] for n in numbers),
                     passages=", ".join(str(n) for n in numbers)))
    st.caption(t("label.shortcuts_move", next=NEXT_KEY, previous=PREVIOUS_KEY))
    st.caption(t("label.shortcuts_rationale", shortcut=layout.RATIONALE_KEY))
    st.caption(t("label.shortcuts_typing"))


def _go(claim_pk: int) -> None:
    st.session_state[CURRENT] = claim_pk


def _save(claim_pk: int, claim_id: str, value: str, passage_ids: tuple[str, ...], expected_revision: int | None,
          seen_content_at: datetime | None = None, guideline_version: str = "") -> None:
    if ui.too_soon_after_move():
        ui.flash("warning", t("label.too_fast"))
        return
    cited = [pid for pid in passage_ids if st.session_state.get(_cite_key(claim_pk, pid))]
    severity = None if value == "support" else st.session_state.get(_severity_key(claim_pk))
    try:
        with ui.db() as session:
            # save_label_as checks the logged-in account as ui.session_user does, in the statement
            # that locks the claim (no user query of its own: the write's CPU nearly halves).
            saved = labeling.save_label_as(
                session, st.session_state.get(ui.USER_NAME), st.session_state.get(ui.USER_PK), claim_pk, value,
                passage_ids=cited, rationale=st.session_state.get(_rationale_key(claim_pk)) or "",
                severity=severity, expected_revision=expected_revision, seen_content_at=seen_content_at,
                guideline_version=guideline_version,  # the version the sidebar showed: a newer one refuses
            )
            me = saved.labeler
            if not saved.written:  # a write deleted the draft already; a repeat that wrote nothing did not
                drafts.discard_draft(session, me, claim_pk)
            next_pk = labeling.next_claim_for(session, me)
    except (StaleWriteError, OnHoldError) as error:  # the input stays on screen and in the draft
        if not isinstance(error, OnHoldError):  # the page says the case is on hold: once is enough
            ui.flash_error(error)
        st.session_state[_choice_key(claim_pk)] = value
        _keep_draft(claim_pk, passage_ids)
        if isinstance(error, StaleWriteError) and not isinstance(error, (ContentChangedError, GuidelineChangedError)):
            st.session_state.pop(_base_key(claim_pk), None)  # the next press saves against the label now shown
            ui.flash("warning", t("label.stale_kept"))
        return
    except DiskFullError as error:  # nothing was saved, not even a draft: the inputs and the choice stay on screen
        ui.flash_error(error)
        st.session_state[_choice_key(claim_pk)] = value
        return
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state[SAVED_NOW] = claim_pk
    st.session_state[NEXT_NOW] = next_pk
    _forget_tab_draft(claim_pk)
    ui.flash("toast", ui.md("label.saved", value=t(f"value.{value}"), claim_id=claim_id))
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


def _claim_state(view: labeling.ClaimView, own: labeling.OwnLabel | None, passage_ids: tuple[str, ...]) -> None:
    """Under the claim: the user's saved label, and what stands in the way of a save."""
    if own is not None:
        with st.container(horizontal=True, vertical_alignment="center"):  # one line
            st.markdown(t("label.yours", revision=own.revision), width="content")
            ui.label_badge(own.value)
    if view.changed_since_label:
        changed = "/".join(t(f"label.changed.{part}") for part in view.changed_since_label)
        st.warning(t("label.review", changed=changed), icon=":material/change_circle:")
    gone = [pid for pid in (own.passage_ids if own is not None else ()) if pid not in passage_ids]
    if gone:  # the claim's passages changed: those citations cannot be kept on a save
        st.warning(ui.md("label.citation_gone", ids=", ".join(gone)), icon=":material/link_off:")
    if view.on_hold:  # the viewer's own hold (another's hold does not show: workflow.hold_in_force)
        st.warning(t("label.on_hold", reason=t(f"hold.{view.hold_reason}")))
        if view.may_lift_hold:
            st.button(t("label.lift"), key="label.lift", on_click=_lift, args=(view.case_pk,))
    elif not view.can_revise:
        st.info(t("label.locked"))


def _label_form(view: labeling.ClaimView, own: labeling.OwnLabel | None, passage_ids: tuple[str, ...],
                guideline_version: str) -> None:
    """Severity, rationale, then the label buttons: Tab from the rationale reaches the buttons."""
    st.selectbox(t("label.severity"), SEVERITIES, index=None, key=_severity_key(view.claim_pk),
                 format_func=lambda s: t(f"severity.{s}"), placeholder=t("label.severity_none"),
                 help=t("label.severity_help"), on_change=_keep_draft, args=(view.claim_pk, passage_ids))
    st.text_area(t("label.rationale"), key=_rationale_key(view.claim_pk), placeholder=t("label.rationale_hint"),
                 height=RATIONALE_HEIGHT, on_change=_keep_draft, args=(view.claim_pk, passage_ids))
    expected = st.session_state[_base_key(view.claim_pk)]
    for column, value, key in zip(st.columns(len(LABELS)), LABELS, keyguard.LABEL_KEYS, strict=True):
        column.button(
            t(f"value.{value}"), key=keyguard.button_key(LABEL_BUTTONS, view.claim_pk, value), shortcut=key,
            width="stretch",
            type="primary" if own is not None and own.value == value else "secondary",
            icon=":material/check:" if own is not None and own.value == value else None,  # not colour alone
            on_click=_save, args=(view.claim_pk, view.claim_id, value, passage_ids, expected, view.content_changed_at,
                                  guideline_version),
        )


def _open_deep_link(session, me) -> None:  # noqa: ANN001 - Session, User
    """`?claim=<claim_id>&dataset=<name>` opens one of the user's own assigned claims (without
    `&dataset=`: when the id is in one dataset of their queue only); the service refuses others."""
    link = ui.take_claim_link()
    if link:
        st.session_state[CURRENT] = labeling.find_assigned_claim(session, me, *link)


me = ui.require_page("label")
st.session_state.pop(SAVED_NOW, None)
found_next = st.session_state.pop(NEXT_NOW, False)  # False: no save in this run
with ui.read_db() as session:  # reads only: a render never takes SQLite's write lock from a labeler saving
    try:
        _open_deep_link(session, me)
    except AnnotatorError as error:
        ui.flash_error(error)
    next_pk = labeling.next_claim_for(session, me) if found_next is False else found_next
    current = st.session_state.get(CURRENT)
    place = None if current is None else labeling.queue_place(session, me, current)
    if place is None:  # nothing shown yet, or the claim left the queue
        current = next_pk if next_pk is not None else labeling.first_queued_claim(session, me)
        place = None if current is None else labeling.queue_place(session, me, current)
    st.session_state[CURRENT] = current
    done, total = labeling.progress_for(session, me)
    view = None if current is None else labeling.claim_for_labeler(session, me, current)
    draft = None if view is None or view.draft_at is None else drafts.get_draft(session, me, view.claim_pk)
    guideline = current_guideline(session)
    several_datasets = len(lookup.list_datasets(session)) > 1  # the case line then names the claim's dataset

title_col, progress_col = st.columns([1, 2], vertical_alignment="bottom")
title_col.title(t("page.label"))
progress_col.progress(done / total if total else 0.0, text=t("label.progress", done=done, total=total))
show_guideline_panel(guideline)  # the current labeling guideline, in the sidebar
unsaved.guard(drafted=("label.rationale.",), held=("label.hold_note.",))
ui.show_flash()
if view is None:
    st.info(t("label.no_assignments"))
    st.stop()
if next_pk is None:
    st.success(t("label.queue_done"))

keyguard.guard(view.claim_pk, LABEL_BUTTONS)  # before the claim: the browser sees a new one first
layout.claim_screen(view.claim_pk,  # one screen per claim, opened at its top; R for the rationale box
                   None if view.on_hold or not view.can_revise else _rationale_key(view.claim_pk))
previous_col, where_col, next_col = st.columns([1, 4, 1], vertical_alignment="center")
previous_col.button(t("label.previous"), key="label.previous", icon=":material/arrow_back:", shortcut=PREVIOUS_KEY,
                    on_click=_go, args=(place.previous_pk,), disabled=place.previous_pk is None)
with where_col.container(horizontal=True, vertical_alignment="center"):  # one line: where, and the claim's link
    st.caption(ui.md("label.position", n=place.position, total=total, claim_id=view.claim_id), width="content")
    ui.claim_link_button(view.claim_id, view.dataset)
next_col.button(t("label.next"), key="label.next", icon=":material/arrow_forward:", shortcut=NEXT_KEY,
                on_click=_go, args=(place.next_pk,), disabled=place.next_pk is None)

ui.case_header(view.case_id, view.slice, view.split, view.question, view.answer, metadata=view.metadata,
               claim_text=view.text, key="label.case_open", span=(view.span_start, view.span_end),
               claim_key=view.claim_pk, dataset=view.dataset if several_datasets else None)

own = view.own_label
read_only = view.on_hold or not view.can_revise
passage_ids = tuple(p.passage_id for p in view.passages)
if not read_only:
    _fill_inputs(view, draft)
    st.session_state.setdefault(_base_key(view.claim_pk), None if own is None else own.revision)


claim_col, evidence_col = st.columns([2, 3])
with claim_col:
    st.header(ui.md("label.claim", claim_id=view.claim_id))
    with st.container(border=True):
        st.text(ui.plain_text(view.text))
    _claim_state(view, own, passage_ids)
    if read_only:
        if own is not None:
            st.markdown(f"**{t('label.rationale')}**")
            st.text(ui.optional(own.rationale))
            st.markdown(f"**{t('label.severity')}**: {t(f'severity.{own.severity}') if own.severity else '-'}")
    else:
        _label_form(view, own, passage_ids, "" if guideline is None else guideline.version)
    _draft_note(view.claim_pk, draft, read_only, passage_ids)
    if not read_only:
        _shortcut_list(len(view.passages))
        # Not on a claim whose label is final (label.locked) nor on a case on hold: nothing to hold there.
        with st.expander(t("label.hold")):
            st.selectbox(t("label.hold_reason"), HOLD_REASONS, key=f"label.hold_reason.{view.case_pk}",
                         format_func=lambda r: t(f"hold.{r}"))
            st.text_input(t("label.hold_note"), key=f"label.hold_note.{view.case_pk}")
            st.button(t("label.hold_button"), key="label.hold_button", on_click=_hold, args=(view.case_pk, view.claim_pk))

with evidence_col:
    st.header(t("label.evidence"))
    cited = set(own.passage_ids) if own is not None else set()
    for number, passage in enumerate(view.passages, start=1):
        case_fields.evidence_role(view.metadata, passage.passage_id)
        card = ui.passage_card(passage, number=number, claim_text=view.text, shown_with=view.passages,
                               metadata=view.metadata, known_versions=view.document_versions,
                               cited=read_only and passage.passage_id in cited)
        if not read_only:
            with card:
                _cite_controls(view.claim_pk, number, passage.passage_id, passage_ids)

ui.new_claim_drawn()  # a save's move: its quiet time for label presses starts once the claim is drawn
