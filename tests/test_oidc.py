"""Single sign-on: with an `[auth]` section in the secrets the login page offers the OIDC provider
(st.login) instead of the password form, and the provider's email claim names an existing,
active annotator user whose roles come from annotator's own User table.

AppTest stands in for the browser: `at.secrets` is what the app reads as st.secrets and `at.user`
what it reads as st.user (`is_logged_in` and the claims, as Streamlit sets them after the
provider returns). st.login itself is replaced by a recorder: it would redirect the browser.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from annotator.db import init_db, session_scope
from annotator.services.access import OPERATOR
from annotator.errors import NotFoundError
from annotator.models import User
from annotator.services.users import add_user, ensure_user, get_user, set_active, user_for_identity
from annotator.ui import auth

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"

GOOGLE = {
    "auth": {
        "redirect_uri": "http://localhost:8501/oauth2callback",
        "cookie_secret": "a-long-random-test-cookie-secret",
        "client_id": "client-id.apps.googleusercontent.com",
        "client_secret": "client-secret",
        "server_metadata_url": "https://accounts.google.com/.well-known/openid-configuration",
    }
}
NAMED = {
    "auth": {
        "redirect_uri": "http://localhost:8501/oauth2callback",
        "cookie_secret": "a-long-random-test-cookie-secret",
        "microsoft": {"client_id": "m", "client_secret": "m-secret",
                      "server_metadata_url": "https://login.microsoftonline.com/tenant/v2.0/.well-known/openid-configuration"},
        "keycloak": {"client_id": "k", "client_secret": "k-secret",
                     "server_metadata_url": "https://sso.example.org/realms/lab/.well-known/openid-configuration"},
    }
}
USERS = (  # (name, roles, password): SSO users are added without a password
    ("aoi@example.com", ["labeler"], None),
    ("mika@example.com", ["adjudicator"], None),
    ("boss@example.com", ["admin", "adjudicator"], None),
    ("gone@example.com", ["labeler"], None),
    ("local", ["labeler"], "local-pass-1234"),
)


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    """A fresh database with the USERS (gone@example.com disabled), served to the app; the
    working folder is empty, so there is no .streamlit/secrets.toml unless a test sets secrets."""
    url = f"sqlite:///{tmp_path}/a.db"
    engine = init_db(url)
    with session_scope(engine) as session:
        for name, roles, password in USERS:
            add_user(session, OPERATOR, name, roles, password)
        set_active(session, OPERATOR, get_user(session, "gone@example.com"), False)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


@pytest.fixture
def logins(monkeypatch):
    """The providers st.login was called with (st.login would send the browser away)."""
    calls: list[str | None] = []
    monkeypatch.setattr(st, "login", lambda provider=None: calls.append(provider))
    return calls


def open_app(secrets: dict | None = None, user: dict | None = None) -> AppTest:
    """A new browser session with these secrets and this st.user."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    if secrets is not None:
        at.secrets.update(secrets)
    if user is not None:
        at.user = user
    at.run()
    assert not at.exception
    return at


def signed_in(email: str, **claims: object) -> dict:
    return {"is_logged_in": True, "email": email, **claims}


def titles(at: AppTest) -> list[str]:
    return [title.value for title in at.title]


def sso_buttons(at: AppTest) -> dict[str, str]:
    """The SSO buttons on the page: key -> label."""
    return {b.key: b.label for b in at.button if b.key and b.key.startswith("sso.login")}


def has_password_form(at: AppTest) -> bool:
    keys = {widget.key for widget in at.text_input}
    return "login.name" in keys or "login.password" in keys or len(at.form_submit_button) > 0


def openable(at: AppTest, page: str) -> bool:
    try:
        at.switch_page(page)
    except ValueError:  # "Could not find a navigation page": the page is not in the app
        return False
    return True


# --- the login page ------------------------------------------------------------------------------


def test_with_auth_configured_the_login_page_offers_the_provider_and_no_password_form(app_db, logins):
    at = open_app(GOOGLE)
    assert not has_password_form(at)
    assert sso_buttons(at) == {"sso.login": "Log in with Google"}
    at.button(key="sso.login").click().run()
    assert logins == [None]  # st.login() with the provider set in [auth] itself
    assert "auth.user_pk" not in at.session_state


def test_named_providers_get_one_button_each_calling_st_login_with_their_name(app_db, logins):
    at = open_app(NAMED)
    assert not has_password_form(at)
    assert sso_buttons(at) == {"sso.login.microsoft": "Log in with Microsoft", "sso.login.keycloak": "Log in with Keycloak"}
    at.button(key="sso.login.keycloak").click().run()
    assert logins == ["keycloak"]


def test_an_incomplete_auth_section_names_what_is_missing_and_offers_no_login(app_db):
    secrets = {"auth": {key: value for key, value in GOOGLE["auth"].items() if key not in ("cookie_secret", "client_secret")}}
    at = open_app(secrets)
    assert [e.value for e in at.error] == [
        "Single sign-on is set up in .streamlit/secrets.toml but lacks [auth] cookie_secret, [auth] client_secret. "
        "Ask an admin to complete it."]
    assert sso_buttons(at) == {} and not has_password_form(at)


def test_without_a_secrets_file_the_password_form_is_shown_and_works(app_db):
    at = open_app()
    assert has_password_form(at) and sso_buttons(at) == {}
    at.text_input(key="login.name").input("local")
    at.text_input(key="login.password").input("local-pass-1234")
    at.form_submit_button[0].click().run()
    assert at.session_state["auth.user_name"] == "local"
    assert titles(at) == ["Home"]  # every role starts on Home


def test_secrets_without_an_auth_section_keep_the_password_form(app_db):
    at = open_app({"database": {"note": "not auth"}})
    assert has_password_form(at) and sso_buttons(at) == {}


def test_without_auth_a_provider_identity_is_not_trusted(app_db):
    """Without [auth], st.user may still carry a host platform's claims: nobody is logged in."""
    at = open_app(user=signed_in("aoi@example.com"))
    assert has_password_form(at)
    assert "auth.user_pk" not in at.session_state
    assert not openable(at, "views/label.py")


# --- after the provider returns --------------------------------------------------------------------


@pytest.mark.parametrize("email, allowed, refused", [
    ("aoi@example.com", ["views/label.py"], ["views/adjudicate.py", "views/agreement.py", "views/releases.py", "views/admin.py"]),
    ("mika@example.com", ["views/adjudicate.py"], ["views/agreement.py", "views/label.py", "views/releases.py", "views/admin.py"]),
    ("Boss@Example.COM", ["views/adjudicate.py", "views/admin.py", "views/releases.py", "views/agreement.py"], ["views/label.py"]),
])
def test_a_known_identity_gets_the_pages_of_its_annotator_roles(app_db, email, allowed, refused):
    at = open_app(GOOGLE, signed_in(email))
    assert titles(at) == ["Home"]
    with session_scope(app_db) as session:
        user = get_user(session, email.lower())
    assert (at.session_state["auth.user_name"], at.session_state["auth.user_pk"]) == (user.name, user.id)
    shown = user.name.replace("@", "\\@\u2060")  # an email address is not made a link (ui/plain.py)
    assert f"Logged in as **{shown}**" in at.sidebar.caption[0].value
    for page in allowed:
        assert openable(at, page)
        at.run()
        assert not at.exception
    for page in refused:
        assert not openable(at, page)


@pytest.mark.parametrize("user", [{"email": "aoi@example.com"}, {"is_logged_in": False, "email": "aoi@example.com"}],
                         ids=["no-login-flag", "logged-out"])
def test_an_email_without_a_provider_login_logs_nobody_in(app_db, user):
    at = open_app(GOOGLE, user)
    assert sso_buttons(at) == {"sso.login": "Log in with Google"}
    assert "auth.user_pk" not in at.session_state
    assert not openable(at, "views/label.py")


def test_roles_come_from_annotator_never_from_the_providers_claims(app_db):
    at = open_app(GOOGLE, signed_in("aoi@example.com", roles=["admin"], groups=["admin"]))
    assert titles(at) == ["Home"]  # every role starts on Home
    assert not openable(at, "views/admin.py")


@pytest.mark.parametrize("user, message", [
    (signed_in("stranger@example.com"),
     "You are logged in as stranger@example.com, but annotator has no active account of that name. Ask an admin "
     "to add you as stranger@example.com (`annotator users add stranger@example.com --role labeler --no-password`), "
     "or to enable your account."),
    (signed_in("gone@example.com"),
     "You are logged in as gone@example.com, but annotator has no active account of that name. Ask an admin "
     "to add you as gone@example.com (`annotator users add gone@example.com --role labeler --no-password`), "
     "or to enable your account."),
    (signed_in("aoi@example.com", email_verified=False),
     "Your provider has not verified the email address aoi@example.com; annotator accepts verified addresses only."),
    ({"is_logged_in": True, "name": "No Email"},
     "Your provider sent no email address, so annotator cannot tell who you are. Ask an admin to have the "
     "provider send the `email` claim."),
], ids=["unknown", "disabled", "unverified", "no-email"])
def test_a_refused_identity_sees_why_and_no_pages(app_db, user, message):
    at = open_app(GOOGLE, user)
    assert [e.value for e in at.error] == [message]
    assert "auth.user_pk" not in at.session_state
    assert sso_buttons(at) == {} and not has_password_form(at)
    for page in ("views/label.py", "views/adjudicate.py", "views/admin.py"):
        assert not openable(at, page)


def test_a_user_disabled_while_logged_in_is_refused_at_the_next_click(app_db):
    at = open_app(GOOGLE, signed_in("aoi@example.com"))
    assert titles(at) == ["Home"]  # every role starts on Home
    with session_scope(app_db) as session:
        set_active(session, OPERATOR, get_user(session, "aoi@example.com"), False)
    at.run()
    assert "auth.user_pk" not in at.session_state
    assert "no active account" in at.error[0].value
    assert not openable(at, "views/label.py")


def test_logout_logs_out_of_the_provider_and_back_to_the_sso_login(app_db, monkeypatch):
    logouts = []
    real_logout = st.logout
    monkeypatch.setattr(st, "logout", lambda: (logouts.append(True), real_logout()))
    at = open_app(GOOGLE, signed_in("aoi@example.com"))
    at.sidebar.button(key="app.logout").click().run()
    assert logouts == [True]
    assert at.user == {"is_logged_in": False}
    assert "auth.user_pk" not in at.session_state
    assert sso_buttons(at) == {"sso.login": "Log in with Google"}


def test_a_local_logout_does_not_call_st_logout(app_db, monkeypatch):
    logouts = []
    monkeypatch.setattr(st, "logout", lambda: logouts.append(True))
    at = open_app()
    at.text_input(key="login.name").input("local")
    at.text_input(key="login.password").input("local-pass-1234")
    at.form_submit_button[0].click().run()
    at.sidebar.button(key="app.logout").click().run()
    assert logouts == []
    assert has_password_form(at)


# --- reading the secrets -------------------------------------------------------------------------------


class _NoSecretsFile:
    """st.secrets when there is no secrets.toml: every read raises FileNotFoundError."""

    def get(self, key, default=None):  # noqa: ANN001, ANN201
        raise FileNotFoundError("No secrets found.")


@pytest.mark.parametrize("secrets, expected", [
    (_NoSecretsFile(), None),
    ({}, None),
    ({"auth": {}}, None),
    (GOOGLE, auth.SsoConfig((auth.Provider(None, "Google"),), ())),
    ({"auth": {**GOOGLE["auth"], "server_metadata_url": "https://kc.example.org/realms/x/.well-known/openid-configuration",
               "client_kwargs": {"prompt": "login"}}},
     auth.SsoConfig((auth.Provider(None, "kc.example.org"),), ())),
    (NAMED, auth.SsoConfig((auth.Provider("microsoft", "Microsoft"), auth.Provider("keycloak", "Keycloak")), ())),
    ({"auth": {"redirect_uri": "http://localhost:8501/oauth2callback"}},
     auth.SsoConfig((), ("[auth] cookie_secret", "[auth] client_id", "[auth] client_secret", "[auth] server_metadata_url"))),
    ({"auth": {**NAMED["auth"], "keycloak": {"client_id": "k"}}},
     auth.SsoConfig((auth.Provider("microsoft", "Microsoft"), auth.Provider("keycloak", "Keycloak")),
                    ("[auth.keycloak] client_secret", "[auth.keycloak] server_metadata_url"))),
], ids=["no-file", "no-auth", "empty-auth", "google", "keycloak-default", "named", "no-provider", "incomplete-named"])
def test_sso_config_reads_the_auth_section(monkeypatch, secrets, expected):
    monkeypatch.setattr(st, "secrets", secrets)
    assert auth.sso_config() == expected


# --- users.user_for_identity ----------------------------------------------------------------------------


@pytest.mark.parametrize("email, expected", [
    ("aoi@example.com", "aoi@example.com"),
    ("AOI@Example.com", "aoi@example.com"),
    ("  aoi@example.com ", "aoi@example.com"),
    ("Case@Example.com", "Case@Example.com"),  # stored with capitals, found in any case
    ("case@example.com", "Case@Example.com"),
    ("twin@example.com", "twin@example.com"),  # two names differ only in case: the exact one
    ("TWIN@example.com", None),  # ...and none exact: ambiguous, refused
    ("gone@example.com", None),  # disabled
    ("stranger@example.com", None),
    ("aoi", None),  # no prefix or partial match
    ("", None),
])
def test_user_for_identity_finds_the_active_user_named_by_the_email(engine, email, expected):
    with session_scope(engine) as session:
        add_user(session, OPERATOR, "aoi@example.com", ["labeler"])
        add_user(session, OPERATOR, "Case@Example.com", ["labeler"])
        add_user(session, OPERATOR, "gone@example.com", ["labeler"])
        set_active(session, OPERATOR, get_user(session, "gone@example.com"), False)
        ensure_user(session, "twin@example.com", "labeler")
        session.add(User(name="Twin@example.com", roles="labeler"))  # stored before a new name was compared
    with session_scope(engine) as session:
        user = user_for_identity(session, email)
        assert (user.name if user else None) == expected


def test_user_for_identity_never_creates_a_user(engine):
    with session_scope(engine) as session:
        assert user_for_identity(session, "new@example.com") is None
    with session_scope(engine) as session, pytest.raises(NotFoundError):
        get_user(session, "new@example.com")
