"""The interface language of a browser session: English or Japanese.

The language is, first found: the logged-in user's stored choice (`User.locale`); the choice made
on the login page during this visit; the browser's (`st.context.locale`: ja* is Japanese,
anything else English). app.py calls `apply` at the top of every run, before the navigation and
the page are built, so everything a run shows is in one language, and a change made by a switch
shows in the run it triggers. `sidebar_switch` (logged-in users: stored per user) and
`login_switch` (the login page: for the visit) change it.
"""

from __future__ import annotations

import streamlit as st

from annotator.errors import AnnotatorError
from annotator.models import User
from annotator.services.users import set_locale
from annotator.ui import components as ui
from annotator.ui.i18n import LANGUAGE_KEY, LANGUAGES, language_for, t
from annotator.ui.unsaved import hidden_style

BROWSER = "browser"
"""The switches' option "follow the browser's language" (stored as locale None)."""

OPTIONS: tuple[str, ...] = (BROWSER, *LANGUAGES)

PICKED = "language.picked"
"""Session state: the language chosen on the login page (absent: the browser's)."""
SIDEBAR_KEY = "language.sidebar"
LOGIN_KEY = "language.login"


def browser_language() -> str:
    """The language the browser asks for ("ja" or "en")."""
    return language_for(st.context.locale)


def language_of(user: User | None) -> str:
    """The language for this run: `user`'s stored choice, else this visit's choice on the login
    page, else the browser's."""
    if user is not None and user.locale in LANGUAGES:
        return user.locale
    picked = st.session_state.get(PICKED)
    return picked if picked in LANGUAGES else browser_language()


def apply(user: User | None) -> str:
    """Make `language_of(user)` this run's language (for t() and the number and date helpers),
    and title the browser tab in it. Call before anything that shows text is built."""
    language = language_of(user)
    st.session_state[LANGUAGE_KEY] = language
    st.set_page_config(page_title=t("app.title"))  # additive: only the title changes
    _tag_document(language)
    return language


TAG_CONTAINER = "language-tag"


def _tag_document(language: str) -> None:
    """Set the page's `<html lang>` to `language` (Streamlit's page says "en" whatever it shows),
    so a screen reader reads Japanese with a Japanese voice (WCAG 2.2, 3.1.1 Language of Page).
    A script in a hidden container: it takes no space on the page."""
    with st.container(key=TAG_CONTAINER):
        st.html(f'<script>document.documentElement.lang = "{language}";</script>', unsafe_allow_javascript=True)
    st.html(hidden_style(TAG_CONTAINER))


def _option_names() -> dict[str, str]:
    """The switches' options as this run shows them (bound now: a format_func runs later too)."""
    return {BROWSER: t("language.browser", language=t(f"language.{browser_language()}")),
            **{language: t(f"language.{language}") for language in LANGUAGES}}


def _store_choice() -> None:
    """The sidebar switch's callback: store the choice for the logged-in user."""
    choice = st.session_state.get(SIDEBAR_KEY)
    try:
        with ui.db() as session:
            set_locale(session, ui.session_user(session), None if choice == BROWSER else choice)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state.pop(PICKED, None)  # a stored choice (or "browser") replaces the login page's


def sidebar_switch(user: User) -> None:
    """The language select for a logged-in user (in the sidebar); the choice is stored for them."""
    st.session_state[SIDEBAR_KEY] = user.locale if user.locale in LANGUAGES else BROWSER
    st.selectbox(t("language.label"), OPTIONS, key=SIDEBAR_KEY, format_func=_option_names().__getitem__, on_change=_store_choice,
                 help=t("language.help"), icon=":material/translate:")


def _pick() -> None:
    """The login page's callback: keep the choice for this visit."""
    choice = st.session_state.get(LOGIN_KEY)
    if choice in LANGUAGES:
        st.session_state[PICKED] = choice
    else:
        st.session_state.pop(PICKED, None)


def login_switch() -> None:
    """A small language select for the login page; the choice holds for this visit."""
    picked = st.session_state.get(PICKED)
    st.session_state[LOGIN_KEY] = picked if picked in LANGUAGES else BROWSER
    st.selectbox(t("language.label"), OPTIONS, key=LOGIN_KEY, format_func=_option_names().__getitem__, on_change=_pick,
                 help=t("language.login_help"), icon=":material/translate:", width=260)
