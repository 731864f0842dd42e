"""Admin: assign cases to two labelers, manage users, see the project's counts."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError, InvalidValueError
from annotator.services import labeling, users
from annotator.services.lookup import dataset_pk, find_case
from annotator.services.status import project_status
from annotator.ui import components as ui
from annotator.ui.i18n import t
from annotator.vocabulary import HOLD_REASONS, ROLES


def _assign() -> None:
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
            created = labeling.assign_cases(session, case_pks, labelers, actor_pk=me.id)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", t("admin.assigned", created=created, cases=len(case_pks), labelers=" & ".join(labelers)))


def _add_user() -> None:
    name = st.session_state.get("admin.new_name") or ""
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            users.add_user(session, name, list(st.session_state.get("admin.new_roles") or []),
                           st.session_state.get("admin.new_password") or None, actor_pk=me.id)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state["admin.new_password"] = ""
    ui.flash("success", t("admin.user_added", name=name.strip()))


def _reset_password() -> None:
    name = st.session_state.get("admin.reset_user")
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            users.set_password(session, users.get_user(session, name), st.session_state.get("admin.reset_password") or "",
                               actor_pk=me.id)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state["admin.reset_password"] = ""
    ui.flash("success", t("admin.password_set", name=name))


def _set_active(active: bool) -> None:
    name = st.session_state.get("admin.active_user")
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            users.set_active(session, users.get_user(session, name), active, actor_pk=me.id)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    ui.flash("success", t("admin.enabled" if active else "admin.disabled", name=name))


me = ui.require_page("admin")
with ui.db() as session:
    people = users.list_users(session)
    status = project_status(session)
everyone = [person.name for person in people]
labelers = [person.name for person in people if person.active and users.has_role(person, "labeler")]

st.title(t("page.admin"))
ui.show_flash()
assign_tab, users_tab, status_tab = st.tabs([t("admin.tab_assign"), t("admin.tab_users"), t("admin.tab_status")])

with assign_tab:
    st.caption(t("admin.assign_help"))
    ui.dataset_select("admin.assign_dataset")
    st.number_input(t("admin.assign_n"), min_value=1, value=20, step=1, key="admin.assign_n")
    st.text_area(t("admin.assign_cases"), key="admin.assign_cases", placeholder=t("admin.assign_cases_hint"))
    st.multiselect(t("admin.assign_labelers"), labelers, key="admin.assign_labelers", max_selections=2)
    st.button(t("admin.assign_button"), key="admin.assign_button", type="primary", on_click=_assign)

with users_tab:
    st.dataframe(
        pd.DataFrame(
            [{t("col.name"): p.name, t("col.roles"): p.roles, t("col.active"): p.active,
              t("col.has_password"): p.password_hash is not None} for p in people],
            columns=[t("col.name"), t("col.roles"), t("col.active"), t("col.has_password")],
        ),
        hide_index=True,
    )
    add_col, reset_col, active_col = st.columns(3)
    with add_col, st.container(border=True):
        st.markdown(f"**{t('admin.add_user')}**")
        st.text_input(t("col.name"), key="admin.new_name")
        st.multiselect(t("col.roles"), ROLES, default=["labeler"], key="admin.new_roles", format_func=lambda r: t(f"role.{r}"))
        st.text_input(t("login.password"), type="password", key="admin.new_password", help=t("admin.password_help"))
        st.button(t("admin.add_button"), key="admin.add_button", on_click=_add_user)
    with reset_col, st.container(border=True):
        st.markdown(f"**{t('admin.reset')}**")
        st.selectbox(t("col.name"), everyone, key="admin.reset_user")
        st.text_input(t("admin.new_password"), type="password", key="admin.reset_password", help=t("admin.password_help"))
        st.button(t("admin.reset_button"), key="admin.reset_button", on_click=_reset_password, disabled=not everyone)
    with active_col, st.container(border=True):
        st.markdown(f"**{t('admin.active')}**")
        st.selectbox(t("col.name"), everyone, key="admin.active_user")
        st.button(t("admin.disable_button"), key="admin.disable_button", on_click=_set_active, args=(False,), disabled=not everyone)
        st.button(t("admin.enable_button"), key="admin.enable_button", on_click=_set_active, args=(True,), disabled=not everyone)

with status_tab:
    for column, key in zip(st.columns(6), ("cases", "claims", "labels", "adjudications", "releases", "holds"), strict=True):
        column.metric(t(f"status.{key}"), status["holds"]["active"] if key == "holds" else status[key])
    states = status["claims_by_state"]
    st.dataframe(
        pd.DataFrame({t("col.state"): [t(f"state.{s}") for s in states], t("col.claims"): list(states.values())}),
        hide_index=True,
    )
    holds = status["holds"]["by_reason"]
    if holds:
        st.dataframe(
            pd.DataFrame({t("col.reason"): [t(f"hold.{r}") if r in HOLD_REASONS else r for r in holds],
                          t("col.cases"): list(holds.values())}),
            hide_index=True,
        )
