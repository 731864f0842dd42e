"""The app's entry: `streamlit run annotator/ui/app.py`.

Without a logged-in user only the login page exists. After login the navigation is built from
the user's roles on every run, so a page a role lacks is not in the app at all: it cannot be
opened by URL either.
"""

from __future__ import annotations

import streamlit as st

from annotator.errors import DatabaseUnavailableError, LoginError
from annotator.services.users import authenticate, roles_of
from annotator.ui import components as ui
from annotator.ui.i18n import t

PAGES = (  # (key in components.PAGE_ROLES, file, icon)
    ("label", "views/label.py", ":material/label:"),
    ("adjudicate", "views/adjudicate.py", ":material/gavel:"),
    ("agreement", "views/agreement.py", ":material/handshake:"),
    ("releases", "views/releases.py", ":material/inventory_2:"),
    ("admin", "views/admin.py", ":material/admin_panel_settings:"),
)


def _log_in() -> None:
    name = st.session_state.get("login.name", "")
    password = st.session_state.get("login.password", "")
    st.session_state["login.password"] = ""  # never keep a password in session state
    try:
        with ui.db() as session:
            user = authenticate(session, name, password)
    except LoginError as error:
        ui.flash_error(error)
        return
    ui.remember_user(user)


def login_page() -> None:
    """The login form: name and password."""
    st.title(t("app.title"))
    ui.show_flash()
    with st.form("login"):
        st.text_input(t("login.name"), key="login.name")
        st.text_input(t("login.password"), type="password", key="login.password")
        st.form_submit_button(t("login.submit"), on_click=_log_in, type="primary")


def no_pages() -> None:
    """Shown to a user whose roles open no page."""
    st.info(t("app.no_pages"))


st.set_page_config(page_title=t("app.title"), page_icon=":material/fact_check:", layout="wide")

try:
    me = ui.current_user()
except DatabaseUnavailableError as error:
    st.error(str(error))
    st.stop()
if me is None:
    if st.query_params.get("claim"):  # a deep link opened in a new tab: keep it for after the login
        st.session_state[ui.PENDING_CLAIM] = st.query_params["claim"]
    navigation = st.navigation([st.Page(login_page, title=t("login.title"), url_path="login", default=True)], position="hidden")
else:
    pages = [
        st.Page(path, title=t(f"page.{key}"), icon=icon, url_path=key)
        for key, path, icon in PAGES
        if ui.may_open(me, key)
    ]
    with st.sidebar:
        st.caption(t("app.logged_in_as", name=me.name, roles=", ".join(sorted(roles_of(me)))))
        st.button(t("app.logout"), key="app.logout", on_click=ui.forget_user, icon=":material/logout:")
    navigation = st.navigation(pages or [st.Page(no_pages, title=t("app.title"), url_path="home", default=True)])
navigation.run()
