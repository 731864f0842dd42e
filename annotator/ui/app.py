"""The app's entry: `streamlit run annotator/ui/app.py`.

Without a logged-in user only the login page exists. After login the navigation is built from
the user's roles on every run, so a page a role lacks is not in the app at all: it cannot be
opened by URL either.

Login is by local name and password, unless the secrets configure an OpenID Connect provider in
`[auth]`: then the login page only offers "Log in with <provider>" (st.login) and the provider's
email names the annotator user (see auth.py). A password login starts a login session that a
reload or a new tab of the same browser resumes from its cookie (sessions.py).
"""

from __future__ import annotations

import streamlit as st

from annotator.errors import DatabaseBusyError, DatabaseUnavailableError, LoginError
from annotator.services.users import authenticate, roles_of
from annotator.ui import auth
from annotator.ui import components as ui
from annotator.ui import language, sessions
from annotator.ui.i18n import t

PAGES = (  # (key in components.PAGE_ROLES, file, icon)
    ("home", "views/home.py", ":material/home:"),
    ("label", "views/label.py", ":material/label:"),
    ("adjudicate", "views/adjudicate.py", ":material/gavel:"),
    ("agreement", "views/agreement.py", ":material/handshake:"),
    ("releases", "views/releases.py", ":material/inventory_2:"),
    ("judges", "views/judges.py", ":material/smart_toy:"),
    ("runs", "views/runs.py", ":material/rule:"),
    ("admin", "views/admin.py", ":material/admin_panel_settings:"),
    ("imports", "views/imports.py", ":material/upload_file:"),
    ("claims", "views/claims.py", ":material/content_cut:"),
)


def _log_in() -> None:
    name = st.session_state.get("login.name", "")
    password = st.session_state.get("login.password", "")
    st.session_state["login.password"] = ""  # never keep a password in session state
    try:
        with ui.db() as session:  # authenticate commits its short transactions itself
            user = authenticate(session, name, password)
            started = sessions.start(session, user)  # a reload keeps the user logged in (sessions.py)
    except (LoginError, DatabaseBusyError) as error:  # a busy database: "try again", not a traceback
        ui.flash_error(error)
        return
    sessions.remember(user, started)


def login_page() -> None:
    """The login form: name and password."""
    st.title(t("app.title"))
    ui.show_flash()
    language.login_switch()
    sessions.clear_cookie()  # after a log out
    with st.form("login"):  # the autocomplete tokens let a password manager fill the form (HTML, 4.10.18.7.1)
        st.text_input(t("login.name"), key="login.name", autocomplete="username")
        st.text_input(t("login.password"), type="password", key="login.password", autocomplete="current-password")
        st.form_submit_button(t("login.submit"), on_click=_log_in, type="primary")


def sso_login_page() -> None:
    """The login page when an OIDC provider is configured: one button per provider."""
    st.title(t("app.title"))
    ui.show_flash()
    language.login_switch()
    if sso.missing:  # sso: this run's auth.sso_config(), set below
        st.error(t("sso.misconfigured", settings=", ".join(sso.missing)))
        return
    for provider in sso.providers:
        st.button(t("sso.log_in_with", provider=provider.label), key="sso.login" + (f".{provider.name}" if provider.name else ""),
                  on_click=auth.log_in, args=(provider.name,), type="primary", icon=":material/login:")


def sso_refused_page() -> None:
    """Shown to someone the provider logged in who is no active annotator user."""
    st.title(t("app.title"))
    who = auth.identity()
    if who is None or who.email is None:
        st.error(t("sso.no_email"))
    elif who.email_verified is False:
        st.error(t("sso.unverified", email=who.email))
    else:
        st.error(t("sso.unknown", email=who.email))
    st.button(t("app.logout"), key="sso.logout", on_click=auth.log_out, icon=":material/logout:")


def no_pages() -> None:
    """Shown to a user whose roles open no page."""
    st.info(t("app.no_pages"))


def not_for_your_roles() -> None:
    """Shown at the address of a page the logged-in user's roles do not open (instead of "page
    not found"): says so and links to the page they start on."""
    st.title(t("app.title"))
    st.warning(ui.md("app.not_for_your_roles", name=me.name))
    if start is not None:
        st.page_link(start, label=t("app.go_to", page=start.title), icon=start.icon)


st.set_page_config(page_title=t("app.title"), page_icon=":material/fact_check:", layout="wide")

sso = auth.sso_config()
try:
    if sso is not None:
        me = auth.sso_user(auth.identity())
    else:  # the browser session's user, else the one of the browser's login cookie (a reload, a new tab)
        me = ui.current_user() or (ui.current_user() if sessions.resume() else None)
except (DatabaseUnavailableError, DatabaseBusyError) as error:
    st.error(ui.error_markdown(error))
    st.stop()
language.apply(me)  # the user's language (else the login page's, else the browser's) before any page text
if me is None:
    auth.finish_log_out()  # one more run after Log out: Streamlit then deletes the user's downloads
    ui.keep_claim_link()  # a deep link opened in a new tab: kept for after the login
    if st.query_params.get("history"):  # a link to a claim's history: keep it for after the login
        st.session_state["auth.pending_history"] = st.query_params["history"]
        st.session_state["auth.pending_history_dataset"] = st.query_params.get("dataset")
    if sso is None:
        entry = login_page
    else:
        entry = sso_login_page if auth.identity() is None else sso_refused_page
    # Every page's address shows the login too (not "page not found"); after the login the same
    # address opens that page, when the user's roles allow it.
    navigation = st.navigation(
        [st.Page(entry, title=t("login.title"), url_path="login", default=True)]
        + [st.Page(entry, title=t("login.title"), url_path=key) for key, _, _ in PAGES],
        position="hidden")
else:
    ui.remember_run_user(me)  # the page's require_page takes it: one account read per run
    opened = [(key, path, icon) for key, path, icon in PAGES if ui.may_open(me, key)]
    pending_history = "auth.pending_history" in st.session_state
    pages = [st.Page(path, title=t(f"page.{key}"), icon=icon, url_path=key, default=key == "admin" and pending_history)
             for key, path, icon in opened]
    start = next((page for (key, _, _), page in zip(opened, pages) if key == "admin" and pending_history),
                 pages[0] if pages else None)
    # The address of a page the roles do not open leads to a notice, never into the page.
    closed = [st.Page(not_for_your_roles, title=t(f"page.{key}"), url_path=key, visibility="hidden")
              for key, _, _ in PAGES if not ui.may_open(me, key)]
    with st.sidebar:
        st.caption(ui.md("app.logged_in_as", name=me.name, roles=", ".join(t(f"role.{r}") for r in sorted(roles_of(me)))))
        st.button(t("app.logout"), key="app.logout", on_click=auth.log_out, icon=":material/logout:")
        language.sidebar_switch(me)
        sessions.keep_alive()  # the login session's use recorded; the cookie set after a login
    navigation = st.navigation((pages or [st.Page(no_pages, title=t("app.title"), url_path="home", default=True)]) + closed)
try:
    navigation.run()
except DatabaseBusyError as error:  # a page's database work met a busy database: "try again", not a traceback
    st.error(ui.error_markdown(error))
