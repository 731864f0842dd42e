"""Single sign-on through an OpenID Connect provider (st.login), when secrets configure one.

Streamlit reads the provider from the `[auth]` section of `.streamlit/secrets.toml` (or
`~/.streamlit/secrets.toml`): `redirect_uri` and `cookie_secret`, then either `client_id`,
`client_secret` and `server_metadata_url` in `[auth]` itself (st.login()) or in named
sub-sections such as `[auth.google]` (st.login("google")). Without an `[auth]` section, or without
any secrets file, the app keeps its local password login.

After the provider returns, `st.user.is_logged_in` is true and `st.user.email` names the person.
It is mapped to an existing, active annotator user of that name (`users.user_for_identity`); the
roles come from annotator's User table, never from the provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from annotator.models import User
from annotator.services.users import user_for_identity
from annotator.ui import components as ui
from annotator.ui import sessions

SHARED_KEYS = ("redirect_uri", "cookie_secret")
"""Settings of `[auth]` that every provider needs (Streamlit refuses to log in without them)."""

PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
"""Settings of one provider, in `[auth]` itself or in `[auth.NAME]`."""


@dataclass(frozen=True)
class Provider:
    name: str | None  # None: the provider set in [auth] itself; else NAME of [auth.NAME]
    label: str  # shown as "Log in with LABEL": NAME capitalized, or from server_metadata_url


@dataclass(frozen=True)
class SsoConfig:
    providers: tuple[Provider, ...]
    missing: tuple[str, ...]  # settings Streamlit needs that secrets lack, e.g. "[auth] cookie_secret"


@dataclass(frozen=True)
class Identity:
    email: str | None  # the `email` claim; None when the provider sent none
    email_verified: bool | None  # the `email_verified` claim; None when the provider sent none


def _auth_section() -> Mapping | None:
    """The `[auth]` section of st.secrets, or None when there is none or no secrets file at all
    (st.secrets raises FileNotFoundError then)."""
    try:
        section = st.secrets.get("auth")
    except FileNotFoundError:
        return None
    return section if isinstance(section, Mapping) and section else None


KNOWN_HOSTS = {"accounts.google.com": "Google", "login.microsoftonline.com": "Microsoft"}
"""Names for the button of a provider set in `[auth]` itself, by the host of its metadata URL."""


def _default_label(server_metadata_url: object) -> str:
    host = str(server_metadata_url).split("://", 1)[-1].split("/", 1)[0]
    return KNOWN_HOSTS.get(host.lower(), host)


def sso_config() -> SsoConfig | None:
    """The configured OIDC providers, or None when the secrets have no `[auth]` section (then
    the local password login is used)."""
    section = _auth_section()
    if section is None:
        return None
    missing = [f"[auth] {key}" for key in SHARED_KEYS if not section.get(key)]
    providers = []
    if any(section.get(key) for key in PROVIDER_KEYS):
        missing += [f"[auth] {key}" for key in PROVIDER_KEYS if not section.get(key)]
        providers.append(Provider(None, _default_label(section.get("server_metadata_url", ""))))
    for name, value in section.items():
        if isinstance(value, Mapping) and name != "client_kwargs":
            missing += [f"[auth.{name}] {key}" for key in PROVIDER_KEYS if not value.get(key)]
            providers.append(Provider(name, name[:1].upper() + name[1:]))
    if not providers:
        missing += [f"[auth] {key}" for key in PROVIDER_KEYS]
    return SsoConfig(tuple(providers), tuple(missing))


def identity() -> Identity | None:
    """Who the provider says is logged in, or None when nobody logged in through st.login.

    Only `st.user.is_logged_in` counts: without it, st.user may hold a host platform's claims.
    """
    if st.user.get("is_logged_in") is not True:
        return None
    email, verified = st.user.get("email"), st.user.get("email_verified")
    email = str(email).strip() if email else ""
    return Identity(email or None, verified if isinstance(verified, bool) else None)


def sso_user(who: Identity | None) -> User | None:
    """The annotator user `who` logs in as (remembered in session state like a password login),
    or None (and anyone remembered forgotten) when nobody is logged in, the provider marked the
    email unverified, or no active user has that name."""
    user = None
    if who is not None and who.email and who.email_verified is not False:
        with ui.db() as session:
            user = user_for_identity(session, who.email)
    remembered = st.session_state.get(ui.USER_PK)
    if remembered is not None and (user is None or remembered != user.id):
        ui.forget_user()  # nothing of another user's page state stays behind
        remembered = None
    if user is not None and remembered is None:
        ui.remember_user(user)
    return user


def log_in(provider: str | None) -> None:
    """Send the browser to the provider (`provider` None: the one in `[auth]` itself)."""
    st.login(provider)


LOGGED_OUT = "auth.logged_out"
"""Session-state flag: Log out was pressed and its second run is still due (finish_log_out)."""


def log_out() -> None:
    """Revoke the user's login session (the login page then clears its cookie: sessions.py),
    forget the user and, after a provider login, log out of it too (st.logout clears the
    identity cookie and starts a new session)."""
    ended = sessions.log_out()
    ui.forget_user()
    st.session_state[LOGGED_OUT] = True
    sessions.clear_cookie_next(ended)
    if st.user.get("is_logged_in") is True:
        st.logout()


def finish_log_out() -> None:
    """Rerun once after Log out, before the login page shows, so the files the user downloaded
    stop being served at once.

    A download button's file is served without login at /media/<hash> until Streamlit's cleanup
    at the end of a script run has seen it unreferenced twice (the first marks it, the second
    deletes it); the run after Log out is the first, this rerun the second. Call it on the
    logged-out path of every run; it does nothing unless Log out was just pressed.
    """
    if st.session_state.pop(LOGGED_OUT, False):
        st.rerun()
