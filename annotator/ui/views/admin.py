"""Admin: assign cases to two labelers, manage users and how long their logins last, see the
project's counts and a claim's history (`?history=<claim_id>` opens it on that claim), correct a
labeler's label there, and publish a new version of the labeling guideline (uploaded or pasted
Markdown, previewed first)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError, InvalidValueError, StaleWriteError
from annotator.services import corrections, guidelines, history, labeling, login_sessions, users
from annotator.services.lookup import dataset_pk, find_case
from annotator.services.status import project_status
from annotator.ui import components as ui
from annotator.ui.i18n import datetime_text, message_text, t
from annotator.ui.plain import guideline_markdown
from annotator.vocabulary import HOLD_EXPIRES_AFTER_DAYS, HOLD_REASONS, LABELS, ROLES, SEVERITIES


def _assign() -> None:
    st.session_state[LAST_TAB] = "admin.tab_assign"
    labelers = list(st.session_state.get("admin.assign_labelers") or [])
    case_ids = [line.strip() for line in (st.session_state.get("admin.assign_cases") or "").splitlines() if line.strip()]
    dataset = st.session_state.get("admin.assign_dataset")
    try:
        if len(labelers) != 2:
            raise InvalidValueError(t("admin.assign_two"))
        with ui.db() as session:
            me = ui.session_user(session)
            if case_ids:
                case_pks = [find_case(session, case_id, dataset).id for case_id in case_ids]
            else:
                case_pks = labeling.first_unassigned_cases(session, int(st.session_state["admin.assign_n"]), dataset_pk(session, dataset))
            created = labeling.assign_cases(session, me, case_pks, labelers)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", ui.md("admin.assigned", created=created, cases=len(case_pks), labelers=" & ".join(labelers)))


LAST_TAB = "admin.last_tab"  # the i18n key of the tab of the last action: the page reopens on it


def _lift_holds(case_pk: int, case_id: str) -> None:
    st.session_state[LAST_TAB] = "admin.tab_status"
    try:
        with ui.db() as session:
            lifted = labeling.lift_holds(session, ui.session_user(session), case_pk)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", t("admin.holds_lifted", n=lifted, case_id=ui.plain_markdown(case_id)))


def _holds(holds: list[labeling.HoldRow]) -> None:
    """The holds in force, each with who placed it, when, and when it expires, and a button per
    case that lifts its holds (labeling.lift_holds)."""
    st.header(t("admin.holds"))
    st.caption(t("admin.holds_help", days=HOLD_EXPIRES_AFTER_DAYS))
    if not holds:
        st.text(t("admin.holds_none"))
        return
    st.dataframe(
        pd.DataFrame({t("col.case"): [h.case_id for h in holds], t("col.reason"): [t(f"hold.{h.reason}") for h in holds],
                      t("col.note"): [h.note for h in holds], t("col.holder"): [h.holder for h in holds],
                      t("col.placed_at"): [datetime_text(h.placed_at) for h in holds],
                      t("col.expires_at"): [datetime_text(h.expires_at) for h in holds]}),
        hide_index=True,
    )
    for case_pk, case_id in dict.fromkeys((h.case_pk, h.case_id) for h in holds):
        st.button(t("admin.lift_holds", case_id=ui.plain_markdown(case_id)), key=f"admin.lift_holds.{case_pk}",
                  on_click=_lift_holds, args=(case_pk, case_id))


def _add_user() -> None:
    """The "Add user" form: a password, or the explicit "No password" box, never neither."""
    st.session_state[LAST_TAB] = "admin.tab_users"
    name = st.session_state.get("admin.new_name") or ""
    password = st.session_state.get("admin.new_password") or ""
    st.session_state["admin.new_password"] = ""  # never keep a password in session state
    no_password = bool(st.session_state.get("admin.new_no_password"))
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            users.add_user(session, me, name, list(st.session_state.get("admin.new_roles") or []), password or None)
            # after the service's own checks (name taken, ...); raising here rolls the user back
            if no_password and password:
                raise InvalidValueError(t("admin.password_and_none"))
            if not no_password and not password:
                raise InvalidValueError(t("admin.password_missing"))
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state["admin.new_no_password"] = False
    ui.flash("success", ui.md("admin.user_added", name=name.strip()))


def _reset_password() -> None:
    st.session_state[LAST_TAB] = "admin.tab_users"
    name = st.session_state.get("admin.reset_user")
    password = st.session_state.get("admin.reset_password") or ""
    st.session_state["admin.reset_password"] = ""  # never keep a password in session state
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            users.set_password(session, me, users.get_user(session, name), password)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", ui.md("admin.password_set", name=name))


def _set_active(active: bool) -> None:
    st.session_state[LAST_TAB] = "admin.tab_users"
    name = st.session_state.get("admin.active_user")
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            users.set_active(session, me, users.get_user(session, name), active)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", ui.md("admin.enabled" if active else "admin.disabled", name=name))


SESSIONS_IDLE = "admin.sessions_idle"
SESSIONS_ABSOLUTE = "admin.sessions_absolute"


def _save_session_settings() -> None:
    st.session_state[LAST_TAB] = "admin.tab_users"
    try:
        with ui.db() as session:
            saved = login_sessions.set_session_settings(
                session, ui.session_user(session), idle_hours=float(st.session_state[SESSIONS_IDLE]),
                absolute_days=float(st.session_state[SESSIONS_ABSOLUTE]))
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", t("admin.sessions_saved", idle=f"{saved.idle_hours:g}", absolute=f"{saved.absolute_days:g}"))


def _session_settings_form(settings: login_sessions.SessionSettings) -> None:
    """The expiries of login sessions (services/login_sessions.py), as stored."""
    st.session_state[SESSIONS_IDLE] = settings.idle_hours  # what is stored, whatever the box held before
    st.session_state[SESSIONS_ABSOLUTE] = settings.absolute_days
    with st.form("admin.sessions_form"):
        st.markdown(f"**{t('admin.sessions')}**")
        st.caption(t("admin.sessions_help"))
        # no min_value / max_value: the browser would keep a value out of range to itself, with only
        # a red mark; the service refuses it in words (msg.session_idle_range, ...), changing nothing
        st.number_input(t("admin.sessions_idle"), step=0.25, key=SESSIONS_IDLE, width=320)
        st.number_input(t("admin.sessions_absolute"), step=1.0, key=SESSIONS_ABSOLUTE, width=320)
        st.form_submit_button(t("admin.sessions_button"), key="admin.sessions_button", on_click=_save_session_settings)


HISTORY_PARAM = "history"  # /admin?history=<claim_id>&dataset=<name> opens the Claim history tab on that claim
HISTORY_CLAIM = "admin.history_claim"
HISTORY_DATASET = "admin.history_linked_dataset"  # the &dataset= of the link followed, if any
PENDING_HISTORY = "auth.pending_history"  # a ?history= link that arrived before login, if app.py keeps one
PENDING_HISTORY_DATASET = "auth.pending_history_dataset"  # its &dataset=


def _history_to_url() -> None:
    """Keep `?history=` in step with the claim id typed, so the address can be shared (a new id:
    the dataset of the link followed before no longer applies)."""
    claim_id = (st.session_state.get(HISTORY_CLAIM) or "").strip()
    st.session_state.pop(HISTORY_DATASET, None)
    if ui.DATASET_PARAM in st.query_params:
        del st.query_params[ui.DATASET_PARAM]
    if claim_id:
        st.query_params[HISTORY_PARAM] = claim_id
    elif HISTORY_PARAM in st.query_params:
        del st.query_params[HISTORY_PARAM]


def _history_cells(row: history.HistoryRow) -> tuple[str, str, str]:
    """A history row's who, what and change in the user's language (the service's messages)."""
    who = row.who if row.who_message is None else message_text(row.who_message)
    what = row.what if row.what_message is None else message_text(row.what_message)
    change = "; ".join(message_text(part) for part in row.change_messages) if row.change_messages else row.change
    return who, what, change


def _claim_history() -> None:
    """The Claim history tab: a claim id, a dataset when the id is in several, the events."""
    st.caption(t("admin.history_help"))
    claim_id = st.text_input(t("admin.history_claim"), key=HISTORY_CLAIM, on_change=_history_to_url,
                             placeholder=t("admin.history_claim_hint")).strip()
    if not claim_id:
        return
    try:
        with ui.db() as session:
            datasets = history.claim_datasets(session, ui.session_user(session), claim_id)
    except AnnotatorError as error:
        st.error(ui.error_markdown(error))
        return
    if not datasets:
        st.warning(ui.md("admin.history_unknown", claim_id=claim_id))
        return
    dataset = datasets[0]
    if len(datasets) > 1:
        pick = f"admin.history_dataset.{claim_id}"
        if st.session_state.get(HISTORY_DATASET) in datasets and pick not in st.session_state:
            st.session_state[pick] = st.session_state[HISTORY_DATASET]  # the link's &dataset=
        dataset = st.selectbox(ui.md("admin.history_dataset", claim_id=claim_id), datasets, format_func=ui.plain_text,
                               key=pick)
        st.query_params[ui.DATASET_PARAM] = dataset  # the address names this claim's history, dataset included
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            found = history.claim_history_view(session, me, claim_id, dataset)
            correctable = corrections.correction_view(session, me, claim_id, dataset)
    except AnnotatorError as error:
        st.error(ui.error_markdown(error))
        return
    st.markdown(f"**{ui.md('admin.history_of', claim_id=found.claim_id, case_id=found.case_id, dataset=found.dataset)}**")
    st.text(ui.plain_text(found.text))
    if not found.rows:
        st.info(t("admin.history_none"))
    else:
        columns = [t("col.when"), t("col.who"), t("col.what"), t("col.change")]
        st.table(  # a static table: every change is shown whole, wrapped, not cut at the column's edge
            pd.DataFrame([[ui.plain_markdown(cell) for cell in (datetime_text(datetime.fromisoformat(row.when), seconds=True), *_history_cells(row))] for row in found.rows],
                         columns=columns),
            hide_index=True,
        )
    _correct_section(correctable)


# --- correcting a label (below the history) ----------------------------------------------------------
# The inputs are keyed by claim and labeler, so a refused correction (a stale write) keeps them as
# typed. `_key(..., "base")` holds the revision of the stored label the inputs started from: the
# correction is made against it, so a label changed meanwhile is refused, never replaced unseen.
CORRECT_MESSAGE = "admin.correct.message"


def _key(claim_pk: int, labeler: str, field: str) -> str:
    return f"admin.correct.{claim_pk}.{labeler}.{field}"


_INPUTS = ("value", "passages", "rationale", "severity", "reason", "base")


def _forget_inputs(claim_pk: int, labeler: str) -> None:
    for field in _INPUTS:
        st.session_state.pop(_key(claim_pk, labeler, field), None)


def _fill_inputs(claim_pk: int, label: corrections.CorrectableLabel) -> None:
    """Start the inputs from the stored label when this session does not hold them (yet, or no
    more: Streamlit drops a widget's state while it is not shown). After a stale write the inputs
    are kept and only the revision moves on to the label now shown."""
    if _key(claim_pk, label.labeler, "value") not in st.session_state:
        for field, value in (("value", label.value), ("passages", list(label.passage_ids)),
                             ("rationale", label.rationale), ("severity", label.severity), ("reason", ""),
                             ("base", label.revision)):
            st.session_state[_key(claim_pk, label.labeler, field)] = value
    st.session_state.setdefault(_key(claim_pk, label.labeler, "base"), label.revision)


def _correct(claim_pk: int, claim_id: str, labeler: str) -> None:
    """The "Correct the label" button: one committed transaction, then a message below the form."""
    st.session_state[LAST_TAB] = "admin.tab_history"
    def get(field: str):  # noqa: ANN202 - a widget's value
        return st.session_state.get(_key(claim_pk, labeler, field))

    value = get("value")
    try:
        with ui.db() as session:
            done = corrections.correct_label(
                session, ui.session_user(session), claim_pk, labeler, value,
                passage_ids=list(get("passages") or []), rationale=get("rationale") or "",
                severity=None if value == "support" else get("severity"),
                reason=get("reason") or "", expected_revision=get("base"),
            )
    except StaleWriteError as error:  # the inputs stay; the next press corrects the label now shown
        st.session_state.pop(_key(claim_pk, labeler, "base"), None)
        st.session_state[CORRECT_MESSAGE] = ("error", ui.error_markdown(error))
        return
    except AnnotatorError as error:
        st.session_state[CORRECT_MESSAGE] = ("error", ui.error_markdown(error))
        return
    if not done.changed:
        st.session_state[CORRECT_MESSAGE] = ("info", ui.md("admin.correct_unchanged", labeler=labeler))
        return
    text = ui.md("admin.correct_done", labeler=labeler, claim_id=claim_id, before=t(f"value.{done.before.value}"),
             after=t(f"value.{done.after.value}"), revision=done.after.revision)
    if done.made_stale:
        text += " " + t("admin.correct_stale")
    st.session_state[CORRECT_MESSAGE] = ("success", text)
    _forget_inputs(claim_pk, labeler)  # the next run starts the inputs from the corrected label


def _correct_section(view: corrections.CorrectionView) -> None:
    """Below the history: choose a labeler's label, see it, and correct it with a reason."""
    st.header(t("admin.correct"))
    st.caption(t("admin.correct_help"))
    if view.refused is not None:
        st.info(t("admin.correct_own"))
        ui.show_message(CORRECT_MESSAGE)
        return
    if not view.labels:
        st.caption(t("admin.correct_none"))
        ui.show_message(CORRECT_MESSAGE)
        return
    by_name = {label.labeler: label for label in view.labels}
    labeler = st.selectbox(t("admin.correct_labeler"), list(by_name), format_func=ui.plain_text, key=f"admin.correct.{view.claim_pk}.labeler")
    current = by_name[labeler]
    _fill_inputs(view.claim_pk, current)
    with st.container(border=True):
        st.markdown(ui.md("admin.correct_current", labeler=current.labeler, revision=current.revision,
                          source=current.source))
        ui.label_badge(current.value)
        st.caption(ui.md("admin.correct_cited", passages=", ".join(current.passage_ids) or "-"))
        st.caption(t("admin.correct_severity_now",
                     severity=t(f"severity.{current.severity}") if current.severity else "-"))
        st.text(ui.optional(current.rationale))
    st.selectbox(t("admin.correct_value"), LABELS, key=_key(view.claim_pk, labeler, "value"),
                 format_func=lambda v: t(f"value.{v}"))
    cited_options = list(dict.fromkeys((*view.passage_ids, *current.passage_ids)))  # a stored citation stays choosable
    st.multiselect(t("admin.correct_passages"), cited_options, format_func=ui.plain_text, key=_key(view.claim_pk, labeler, "passages"))
    st.text_area(t("label.rationale"), key=_key(view.claim_pk, labeler, "rationale"))
    st.selectbox(t("label.severity"), SEVERITIES, index=None, key=_key(view.claim_pk, labeler, "severity"),
                 format_func=lambda s: t(f"severity.{s}"), placeholder=t("label.severity_none"), help=t("label.severity_help"))
    st.text_input(t("admin.correct_reason"), key=_key(view.claim_pk, labeler, "reason"),
                  placeholder=t("admin.correct_reason_hint"))
    submit, restart = st.columns([1, 2])
    submit.button(t("admin.correct_button"), key=f"admin.correct.{view.claim_pk}.submit", type="primary",
                  on_click=_correct, args=(view.claim_pk, view.claim_id, labeler))
    restart.button(t("admin.correct_restart"), key=f"admin.correct.{view.claim_pk}.restart",
                   on_click=_forget_inputs, args=(view.claim_pk, labeler))
    ui.show_message(CORRECT_MESSAGE)


# --- the labeling guideline ------------------------------------------------------------------------
# An uploaded file fills the text box (its on_change); the admin may edit it there, sees the
# preview of exactly what the box holds, and publishes that under a new version name.
GUIDELINE_TEXT = "admin.guideline_text"
GUIDELINE_VERSION = "admin.guideline_version"
GUIDELINE_FILE = "admin.guideline_file"


def _load_guideline_file() -> None:
    st.session_state[LAST_TAB] = "admin.tab_guideline"
    upload = st.session_state.get(GUIDELINE_FILE)
    if upload is None:
        return
    try:
        st.session_state[GUIDELINE_TEXT] = guidelines.guideline_text(upload.getvalue(), upload.name)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("toast", ui.md("admin.guideline_loaded", file=upload.name))


def _publish_guideline() -> None:
    st.session_state[LAST_TAB] = "admin.tab_guideline"
    try:
        with ui.db() as session:
            published = guidelines.publish_guideline(session, ui.session_user(session),
                                                     st.session_state.get(GUIDELINE_VERSION) or "",
                                                     st.session_state.get(GUIDELINE_TEXT) or "")
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state[GUIDELINE_VERSION] = ""
    ui.flash("success", ui.md("admin.guideline_published", version=published.version))


def _guideline_section(versions: list[guidelines.GuidelineView]) -> None:
    """The Guideline tab: upload or paste, name the version, preview, publish; the versions."""
    st.caption(t("admin.guideline_help"))
    if versions:  # start from the current text: a new version is usually an edit of it
        st.session_state.setdefault(GUIDELINE_TEXT, versions[0].markdown)
    st.file_uploader(t("admin.guideline_file"), type=["md", "markdown", "txt"], key=GUIDELINE_FILE,
                     on_change=_load_guideline_file)
    edit_col, preview_col = st.columns(2)
    with edit_col:
        st.text_area(t("admin.guideline_text"), key=GUIDELINE_TEXT, height=400)
        st.text_input(t("admin.guideline_version"), key=GUIDELINE_VERSION,
                      placeholder=t("admin.guideline_version_hint"))
        st.button(t("admin.guideline_publish"), key="admin.guideline_publish", type="primary",
                  on_click=_publish_guideline)
    with preview_col:
        st.markdown(f"**{t('admin.guideline_preview')}**")
        text = st.session_state.get(GUIDELINE_TEXT) or ""
        with st.container(border=True, height=460, key="guideline_preview"):
            if text.strip():
                st.markdown(guideline_markdown(text))
            else:
                st.caption(t("admin.guideline_preview_empty"))
    st.header(t("admin.guideline_versions"))
    if not versions:
        st.caption(t("admin.guideline_no_versions"))
        return
    columns = [t("guideline.col_version"), t("guideline.col_published"), t("guideline.col_by"),
               t("guideline.col_chars"), t("guideline.col_sha256"), t("guideline.col_current")]
    st.dataframe(
        pd.DataFrame([[ui.plain_text(g.version), datetime_text(g.published_at), ui.plain_text(g.published_by), g.chars, g.sha256[:12], n == 0]
                      for n, g in enumerate(versions)], columns=columns),
        hide_index=True,
    )


me = ui.require_page("admin")
_pending = st.session_state.pop(PENDING_HISTORY, None)
_pending_dataset = st.session_state.pop(PENDING_HISTORY_DATASET, None)
_linked = _pending or st.query_params.get(HISTORY_PARAM)
_linked_dataset = _pending_dataset if _pending else st.query_params.get(ui.DATASET_PARAM)
try:
    _linked = ui.address_value(HISTORY_PARAM, _linked)
    _linked_dataset = ui.address_value(ui.DATASET_PARAM, _linked_dataset)
except AnnotatorError as _refused:  # too long for a claim id or a dataset's name: refused, the tab opens empty
    ui.flash_error(_refused)
    _linked = _linked_dataset = None
    for _param in (HISTORY_PARAM, ui.DATASET_PARAM):
        if _param in st.query_params:
            del st.query_params[_param]
if _linked and _linked != st.session_state.get(HISTORY_CLAIM):  # a link to a claim's history: open the tab on it
    st.session_state[HISTORY_CLAIM] = _linked
    st.session_state[HISTORY_DATASET] = _linked_dataset
    st.session_state.pop(f"admin.history_dataset.{_linked}", None)  # the link's dataset, not one picked before
elif _linked and _linked_dataset:
    st.session_state[HISTORY_DATASET] = _linked_dataset
if "admin.history_linked" not in st.session_state:  # decided once per session: the tab must not jump later
    st.session_state["admin.history_linked"] = bool(_linked)
with ui.db() as session:
    people = users.list_users(session, me)
    status = project_status(session, me)
    holds = labeling.holds_in_force(session, me)
    guideline_versions = guidelines.list_guidelines(session)
    expiries = login_sessions.session_settings(session)
everyone = [person.name for person in people]
labelers = [person.name for person in people if person.active and users.has_role(person, "labeler")]

st.title(t("page.admin"))
ui.show_flash()
tab_names = [t("admin.tab_assign"), t("admin.tab_users"), t("admin.tab_status"), t("admin.tab_history"),
             t("admin.tab_guideline")]
_last_tab = st.session_state.get(LAST_TAB)  # after an action, its tab stays open (a message would reset it)
assign_tab, users_tab, status_tab, history_tab, guideline_tab = st.tabs(
    tab_names, default=t(_last_tab) if _last_tab else (tab_names[3] if st.session_state["admin.history_linked"] else None))

with assign_tab:
    st.caption(t("admin.assign_help"))
    ui.dataset_select("admin.assign_dataset")
    st.number_input(t("admin.assign_n"), min_value=1, value=20, step=1, key="admin.assign_n")
    st.text_area(t("admin.assign_cases"), key="admin.assign_cases", placeholder=t("admin.assign_cases_hint"))
    st.multiselect(t("admin.assign_labelers"), labelers, key="admin.assign_labelers", max_selections=2,
                   format_func=ui.plain_text)
    st.button(t("admin.assign_button"), key="admin.assign_button", type="primary", on_click=_assign)

with users_tab:
    st.dataframe(
        pd.DataFrame(
            [{t("col.name"): ui.plain_text(p.name), t("col.roles"): p.roles, t("col.active"): p.active,
              t("col.has_password"): p.password_hash is not None} for p in people],
            columns=[t("col.name"), t("col.roles"), t("col.active"), t("col.has_password")],
        ),
        hide_index=True,
    )
    add_col, reset_col, active_col = st.columns(3)
    # forms: the submit sends every field's value, whatever had the focus (Tab to the eye button)
    with add_col, st.form("admin.add_form"):
        st.markdown(f"**{t('admin.add_user')}**")
        st.text_input(t("col.name"), key="admin.new_name")
        st.multiselect(t("col.roles"), ROLES, default=["labeler"], key="admin.new_roles", format_func=lambda r: t(f"role.{r}"))
        st.text_input(t("login.password"), type="password", key="admin.new_password", help=t("admin.password_help"))
        st.checkbox(t("admin.no_password"), key="admin.new_no_password", help=t("admin.no_password_help"))
        st.form_submit_button(t("admin.add_button"), key="admin.add_button", on_click=_add_user)
    with reset_col, st.form("admin.reset_form"):
        st.markdown(f"**{t('admin.reset')}**")
        st.selectbox(t("col.name"), everyone, key="admin.reset_user", format_func=ui.plain_text)
        st.text_input(t("admin.new_password"), type="password", key="admin.reset_password", help=t("admin.password_help"))
        st.form_submit_button(t("admin.reset_button"), key="admin.reset_button", on_click=_reset_password, disabled=not everyone)
    with active_col, st.container(border=True):
        st.markdown(f"**{t('admin.active')}**")
        st.selectbox(t("col.name"), everyone, key="admin.active_user", format_func=ui.plain_text)
        st.button(t("admin.disable_button"), key="admin.disable_button", on_click=_set_active, args=(False,), disabled=not everyone)
        st.button(t("admin.enable_button"), key="admin.enable_button", on_click=_set_active, args=(True,), disabled=not everyone)
    _session_settings_form(expiries)

with status_tab:
    for column, key in zip(st.columns(6), ("cases", "claims", "labels", "adjudications", "releases", "holds"), strict=True):
        column.metric(t(f"status.{key}"), status["holds"]["active"] if key == "holds" else status[key])
    states = status["claims_by_state"]
    st.dataframe(
        pd.DataFrame({t("col.state"): [t(f"state.{s}") for s in states], t("col.claims"): list(states.values())}),
        hide_index=True,
    )
    hold_reasons = status["holds"]["by_reason"]
    if hold_reasons:
        st.dataframe(
            pd.DataFrame({t("col.reason"): [t(f"hold.{r}") if r in HOLD_REASONS else ui.plain_text(r) for r in hold_reasons],
                          t("col.cases"): list(hold_reasons.values())}),
            hide_index=True,
        )
    _holds(holds)

with history_tab:
    _claim_history()

with guideline_tab:
    _guideline_section(guideline_versions)
