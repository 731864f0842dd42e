"""Shared widgets for the pages: the database session, the logged-in user, which page each role
sees, passage cards, label badges, and messages that survive a callback.

Session state holds only the user's primary key and name, and the key of their login session
(services/login_sessions.py); the User and the login session are re-read on every run, so a
disabled account, a revoked or expired login session, or a changed role takes effect at the next
click.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from sqlalchemy.engine import Engine
from sqlmodel import Session

from annotator.db import make_engine, read_scope, resolve_url, session_scope
from annotator.errors import AnnotatorError, InvalidValueError, NotFoundError, PermissionDeniedError
from annotator.highlight import Highlight, claim_html, claim_in_answer, highlight, old_versions, to_html
from annotator.messages import shortened
from annotator.models import User
from annotator.services import login_sessions
from annotator.services.labeling import PassageView
from annotator.services.lookup import list_datasets
from annotator.services.users import get_user, roles_of, still_logged_in
from annotator.workflow import may_see_agreement
from annotator.ui import case_fields
from annotator.ui.i18n import t
from annotator.ui.plain import error_markdown, md, message_markdown, plain_markdown, plain_text  # noqa: F401 - the pages' one helper

USER_PK = "auth.user_pk"
USER_NAME = "auth.user_name"
LOGIN_SESSION = "auth.login_session"
"""The key of the user's login session (a LoginSession) after a password login or a resume from
the browser's cookie; absent after a single sign-on (Streamlit's own cookie keeps that one)."""
LOGIN_CHECKED = "auth.login_checked"
"""The login session as this run's account read found it (a login_sessions.SessionInForce)."""
PENDING_CLAIM = "auth.pending_claim"
"""The claim ids of a `?claim=` deep link that arrived before login (a new tab of a browser with no
login cookie starts logged out)."""
CLAIM_PARAM = "claim"
DATASET_PARAM = "dataset"  # `?claim=<id>&dataset=<name>`: claim ids are unique per dataset only
PENDING_DATASET = "auth.pending_claim_dataset"  # the `&dataset=` of a link kept through the login
_FLASH = "ui.flash"
_MOVED_AT = "ui.moved_at"
_RUN_USER = "ui.run_user"

DOUBLE_CLICK_SECONDS = 0.6
"""A label or decision click this soon after the page drew a claim a save moved it to, or after a
click ignored so, is ignored: it is the second click of a double click, or a key pressed again and
again (or held down), aimed at a claim nobody has read yet (`too_soon_after_move`)."""
_DRAWING = "ui.drawing_moved_claim"

PAGE_ROLES: dict[str, frozenset[str]] = {
    "home": frozenset({"labeler", "adjudicator", "admin"}),  # every role: where each stands
    "label": frozenset({"labeler"}),
    "adjudicate": frozenset({"adjudicator"}),
    "agreement": frozenset({"admin"}),
    "releases": frozenset({"admin"}),
    "judges": frozenset({"admin"}),  # judge labels would anchor labelers and adjudicators (Permission.CALIBRATE)
    "runs": frozenset({"admin"}),  # a run report shows each case's gold evidence (Permission.SCORE_RUNS)
    "admin": frozenset({"admin"}),
    "imports": frozenset({"admin"}),
    "claims": frozenset({"admin"}),  # claim review before labeling (Permission.REVIEW_CLAIMS)
}
"""Which roles see which page (any one of them suffices). app.py builds the navigation from it and
every page checks it again on its own."""

LABEL_COLORS = {"support": "green", "contradict": "red", "insufficient": "gray"}


# --- database ----------------------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _engine_for(url: str) -> Engine:
    return make_engine(url)


def engine() -> Engine:
    """The engine for the configured database, one per resolved URL, shared by all sessions."""
    return _engine_for(resolve_url(None))


@contextmanager
def db() -> Iterator[Session]:
    """One short transaction (committed on exit). Load what a page needs, then leave the block
    before rendering: SQLite takes its write lock at BEGIN."""
    with session_scope(engine()) as session:
        yield session


@contextmanager
def read_db() -> Iterator[Session]:
    """A transaction that only reads (db.read_scope): for reports that take a while to compute,
    which must not hold SQLite's write lock while labelers save."""
    with read_scope(engine()) as session:
        yield session


# --- the logged-in user ------------------------------------------------------------------------


def remember_user(user: User, login_session_pk: int | None = None) -> None:
    """Store the logged-in user's key and name (nothing else of the account) in session state,
    and the key of their login session when there is one."""
    remember_login(user.id, user.name, login_session_pk)


def remember_login(user_pk: int, user_name: str, login_session_pk: int | None) -> None:
    """remember_user by the user's key and name (a login session resumed from the cookie)."""
    st.session_state[USER_PK] = user_pk
    st.session_state[USER_NAME] = user_name
    if login_session_pk is None:
        st.session_state.pop(LOGIN_SESSION, None)
    else:
        st.session_state[LOGIN_SESSION] = login_session_pk


def forget_user() -> None:
    """Log out: drop everything this browser session holds."""
    for key in list(st.session_state.keys()):
        del st.session_state[key]


def session_user(session: Session) -> User:
    """The logged-in user, re-read in `session`. Raises PermissionDeniedError when nobody is
    logged in, the account was removed or disabled meanwhile, or the login session (if any:
    LOGIN_SESSION) was revoked or expired (login_sessions.in_force; what it found is kept as
    LOGIN_CHECKED for ui/sessions.py)."""
    name, pk = st.session_state.get(USER_NAME), st.session_state.get(USER_PK)
    try:
        user = None if name is None else get_user(session, name)
    except NotFoundError:
        user = None
    if not still_logged_in(name, pk, user):
        raise PermissionDeniedError(t("auth.login_again"))
    login_pk = st.session_state.get(LOGIN_SESSION)
    if login_pk is not None:
        checked = login_sessions.in_force(session, login_pk, user.id)
        if checked is None:
            raise PermissionDeniedError(t("auth.login_again"))
        st.session_state[LOGIN_CHECKED] = checked
    return user


def current_user() -> User | None:
    """The logged-in user re-read from the database, or None (and logged out) when there is none
    or the account is gone or disabled. Read in a read-only transaction: every page run reads
    the account, and on SQLite a db() transaction would take the write lock that saves need."""
    if st.session_state.get(USER_NAME) is None:
        return None
    try:
        with read_db() as session:
            user = session_user(session)
            session.expunge(user)  # read_db rolls back, which would expire it
            return user
    except PermissionDeniedError as refused:
        forget_user()
        flash("error", error_markdown(refused))  # the login page says why (forget_user dropped every message)
        return None


def may_open(user: User, page: str) -> bool:
    """Whether `user` may open `page` (a key of PAGE_ROLES); the Agreement page also follows
    `workflow.may_see_agreement` (it names labelers)."""
    roles = roles_of(user)
    if page == "agreement" and not may_see_agreement(roles):
        return False
    return bool(roles & PAGE_ROLES[page])


def remember_run_user(user: User) -> None:
    """Keep the logged-in user as app.py read them at the top of this run, for the page's
    require_page: one account read per run, not two."""
    st.session_state[_RUN_USER] = user


def require_page(page: str) -> User:
    """The logged-in user, when they may open `page`; otherwise an error and the page stops.

    The user is the one app.py read at the top of this run (remember_run_user), taken once;
    a page run without it reads the account itself. Navigation already leaves out pages a role
    lacks; this check keeps a page safe on its own.
    """
    user = st.session_state.pop(_RUN_USER, None) or current_user()
    if user is None or not may_open(user, page):
        st.error(t("auth.denied"))
        st.stop()
    return user


# --- messages that outlive a callback ------------------------------------------------------------


def flash(kind: str, text: str) -> None:
    """Queue a message for the next render: kind is "toast", "success", "error" or "warning";
    `text` is Markdown, so a value from a user or a file in it must have gone through
    plain_markdown (md() does that for a catalog string's fields)."""
    st.session_state.setdefault(_FLASH, []).append((kind, text))


def flash_error(error: AnnotatorError) -> None:
    """Queue an AnnotatorError's message (the only errors shown to users as messages), in the
    user's language when the error carries a message key (i18n.error_text), its fields as plain
    text (plain.error_markdown)."""
    flash("error", error_markdown(error))


def show_flash() -> None:
    """Render and drop the queued messages."""
    for kind, text in st.session_state.pop(_FLASH, []):
        if kind == "toast":
            st.toast(text, icon=":material/check_circle:")
        elif kind == "success":
            st.success(text)
        elif kind == "warning":
            st.warning(text)
        else:
            st.error(text)


# --- deep links ----------------------------------------------------------------------------------


def keep_claim_link() -> None:
    """Before the login: keep the claim ids of a `?claim=` link for after it (PENDING_CLAIM)."""
    if st.query_params.get(CLAIM_PARAM):
        st.session_state[PENDING_CLAIM] = st.query_params.get_all(CLAIM_PARAM)
        st.session_state[PENDING_DATASET] = st.query_params.get_all(DATASET_PARAM)


ADDRESS_VALUE_LIMIT = 200
"""The most characters a `?claim=` or `?history=` value may have: an id is shorter; a longer value
is refused whole (shown shortened in the message), never cut to an id it did not name."""


def address_value(param: str, value: str | None) -> str | None:
    """`value`, the address's `?param=` value (None when there is none), when it is at most
    ADDRESS_VALUE_LIMIT characters long. Raises InvalidValueError (msg.address_too_long, the value
    shortened) for a longer one."""
    if value is not None and len(value) > ADDRESS_VALUE_LIMIT:
        raise InvalidValueError.of("msg.address_too_long", param=param, length=len(value), limit=ADDRESS_VALUE_LIMIT,
                                   shown=shortened(value, 40))
    return value


def take_claim_link() -> tuple[str, str | None] | None:
    """(claim id, dataset name or None) of a `?claim=<id>&dataset=<name>` link in the address, or
    of one kept through the login; None when there is none. A link without `&dataset=` (an older
    one) gives None for the dataset: the service opens the claim when its id is unambiguous. The
    link is taken away whatever it leads to (the address no longer names a claim, and a rerun
    opens nothing again). Raises InvalidValueError when it names more than one claim
    (`?claim=a&claim=b`) or dataset: which one was meant is unknown, so none is opened; or when a
    value is longer than an id may be (address_value)."""
    linked = [claim_id for claim_id in st.query_params.get_all(CLAIM_PARAM) if claim_id]
    linked_datasets = [name for name in st.query_params.get_all(DATASET_PARAM) if name]
    pending = st.session_state.pop(PENDING_CLAIM, None) or []
    pending_datasets = st.session_state.pop(PENDING_DATASET, None) or []
    for param in (CLAIM_PARAM, DATASET_PARAM):
        if param in st.query_params:
            del st.query_params[param]
    claim_ids = list(dict.fromkeys(linked or pending))
    datasets = list(dict.fromkeys(linked_datasets if linked else pending_datasets))
    if len(claim_ids) > 1 or len(datasets) > 1:
        raise InvalidValueError.of("msg.claim_link_many", n=max(len(claim_ids), len(datasets)))
    if not claim_ids:
        return None
    return address_value(CLAIM_PARAM, claim_ids[0]), address_value(DATASET_PARAM, datasets[0]) if datasets else None


def claim_address(page_url: str | None, claim_id: str, dataset: str | None = None) -> str:
    """The address that opens the claim `claim_id` of the dataset named `dataset` (a
    `?claim=...&dataset=...` link, README "Label"): the app's address (`page_url`, the address of
    the page shown, as st.context.url gives it, without its last path part: the page's own) with
    `?claim=` and the id, then `&dataset=` and the name (left out when `dataset` is None or
    empty), percent-encoded. `page_url` None or empty (the page run outside a browser): the
    address from the app's root, "/?claim=...&dataset=...".
    """
    parts = urlsplit(page_url or "")
    root = parts.path.rsplit("/", 1)[0] + "/"
    query = urlencode({CLAIM_PARAM: claim_id, **({DATASET_PARAM: dataset} if dataset else {})}, quote_via=quote)
    return urlunsplit((parts.scheme, parts.netloc, root, query, "")) if parts.netloc else f"{root}?{query}"


def claim_link_button(claim_id: str, dataset: str | None = None) -> None:
    """A small "Link" popover holding the claim's address (claim_address, with its dataset) in a
    box with a copy button: the address bar names the page only, never the claim shown."""
    with st.popover(t("claim.link"), icon=":material/link:"):
        st.caption(t("claim.link_help"))
        st.code(claim_address(st.context.url, claim_id, dataset), language=None, wrap_lines=True)


# --- double clicks -----------------------------------------------------------------------------


def moved_to_new_claim() -> None:
    """A save just moved the page to another claim: clicks that save are ignored for a while
    (`too_soon_after_move`). The page calls `new_claim_drawn` once it has drawn that claim."""
    st.session_state[_MOVED_AT] = time.monotonic()
    st.session_state[_DRAWING] = True


def new_claim_drawn() -> None:
    """The end of a page run: when the run drew the claim a save moved to, the quiet time
    (DOUBLE_CLICK_SECONDS) starts again from now, when the browser shows it, rather than from the
    save (the run drawing it may take long)."""
    if st.session_state.pop(_DRAWING, False):
        st.session_state[_MOVED_AT] = time.monotonic()


def too_soon_after_move() -> bool:
    """Whether a click that saves comes within DOUBLE_CLICK_SECONDS of the last move to a new claim
    or of the last click ignored so. A click ignored starts the quiet time again, so a burst of
    clicks (a key pressed again and again, or held down) saves once, whatever its length: the
    claim must stay on screen DOUBLE_CLICK_SECONDS with no click before a click saves it."""
    moved_at = st.session_state.get(_MOVED_AT)
    now = time.monotonic()
    if moved_at is None or now - moved_at >= DOUBLE_CLICK_SECONDS:
        return False
    st.session_state[_MOVED_AT] = now
    return True


# --- display ---------------------------------------------------------------------------------


def label_badge(value: str | None) -> None:
    """A coloured badge for a label value (or "no label")."""
    if value is None:
        st.badge(t("label.none"), color="gray")
        return
    st.badge(t(f"value.{value}"), color=LABEL_COLORS.get(value, "blue"))


PASSAGE_HEIGHT = 260
"""Pixels of passage text shown at once; a longer passage scrolls inside its card, below its
title, document id and version, which stay in view."""
LONG_PASSAGE_CHARS = 500
LONG_PASSAGE_LINES = 10
"""A passage longer than this (characters or lines) is shown in the scrolling box."""


def old_passages(passages: Sequence[PassageView], metadata: Mapping | None,
                 known_versions: Mapping[str, Sequence[str]] | None = None) -> dict[str, str | None]:
    """The passages shown together that are an old version of their document (highlight.old_versions):
    another of `passages`, or a version in `known_versions` (the dataset's versions of the
    documents, as the claim's view carries them), has the same doc_id and a newer version, or the case's
    metadata names it in `outdated_passage_ids`. {passage_id: the newest version, None when only
    the metadata says so}."""
    outdated = (metadata or {}).get("outdated_passage_ids")
    return old_versions(passages, [str(pid) for pid in outdated] if isinstance(outdated, list | tuple) else (),
                        known_versions)


def passage_card(passage: PassageView, *, number: int | None = None, claim_text: str | None = None,
                 shown_with: Sequence[PassageView] = (), metadata: Mapping | None = None,
                 known_versions: Mapping[str, Sequence[str]] | None = None, cited: bool = False,
                 cited_by: Sequence[str] = ()) -> DeltaGenerator:
    """One evidence passage in a bordered box; returns the box, so a page can add its controls.

    On top, always in view: "Passage `number`: title", then passage id, document id and version,
    and "Old version" (icon and words) when `old_passages(shown_with, metadata, known_versions)`
    names it. Below,
    the text, in a box of PASSAGE_HEIGHT that scrolls when the passage is long; the words it
    shares with `claim_text` are marked (highlight.py: bold, underlined and coloured) and listed
    under it. The text is escaped: a passage's own Markdown or HTML is shown as written. `cited`
    says in words that the user's (read-only) label cites it; `cited_by` names the labelers whose
    labels cite it, as the page writes them ("Labeler 1"), on the Adjudicate page.
    """
    card = st.container(border=True)
    with card:
        title = plain_markdown(passage.title or passage.passage_id)
        st.markdown(f"**{t('passage.heading', n=number, title=title)}**" if number is not None else f"**{title}**")
        st.caption(t("passage.meta", passage_id=plain_markdown(passage.passage_id),
                     doc_id=plain_markdown(passage.doc_id or "-"), version=plain_markdown(passage.version or "-")))
        old = old_passages(shown_with or (passage,), metadata, known_versions)
        if passage.passage_id in old:
            newer = old[passage.passage_id]
            shown = newer in {other.version for other in shown_with if other.doc_id == passage.doc_id}
            st.markdown(f":material/history: **{t('passage.old_version')}**: "
                        + (t("passage.old_version_newer" if shown else "passage.old_version_elsewhere",
                             doc_id=plain_markdown(passage.doc_id), newer=plain_markdown(newer))
                           if newer is not None else t("passage.old_version_marked")))
        marked = highlight(claim_text, passage.text) if claim_text else Highlight((), ())
        body = to_html(passage.text, marked.spans, shown=plain_text)
        lines = passage.text.count("\n") + 1
        if len(passage.text) > LONG_PASSAGE_CHARS or lines > LONG_PASSAGE_LINES:
            with st.container(height=PASSAGE_HEIGHT, border=True):
                st.html(body)
        else:
            st.html(body)
        if claim_text:
            st.caption(t("passage.shared", words=plain_markdown(", ".join(marked.words))) if marked.words
                       else t("passage.shared_none"))
        if cited:
            st.caption(f":material/bookmark: {t('passage.cited')}")
        if cited_by:
            st.caption(f":material/bookmark: {t('passage.cited_by', labelers=', '.join(cited_by))}")
    return card


ANSWER_HEIGHT = 170
"""Pixels of a long answer shown at once in the case box (about six lines); it scrolls inside."""
LONG_ANSWER_CHARS = 600
LONG_ANSWER_LINES = 6
"""An answer longer than this (characters or lines) is shown in the scrolling box."""


def case_header(case_id: str, slice_: str, split: str, question: str, answer: str, *, metadata: Mapping,
                claim_text: str, key: str, span: tuple[int | None, int | None] = (None, None),
                claim_key: object = "", dataset: str | None = None) -> None:
    """The case on top of a claim, compact (ui/layout.py): one line with the dataset's name (when
    `dataset` is given: the page gives it when the project has more than one dataset), the case id, slice, split
    and the case's RAG fields (case_fields.detail_parts), then a box that opens and closes, headed
    by the question, holding the generated answer. The claim is outlined in place in the answer
    when its stored `span` (span_start, span_end, as the claim's view carries them) holds its text
    (highlight.claim_in_answer; screen readers read "Current claim begins/ends" around it); else
    the claim's words are marked wherever they occur in it (highlight.py, as in a passage). A long
    answer (LONG_ANSWER_CHARS, LONG_ANSWER_LINES) scrolls in a box of ANSWER_HEIGHT (a region named
    "Generated answer" that takes the keyboard's focus, so arrow keys scroll it too), which the
    page's script (ui/layout.py) scrolls to the claim's place once per claim (`claim_key`, the
    claim's primary key). The box starts open; `key` keeps its state for the browser session, so
    a user who closed it finds it closed on the next claim."""
    st.caption(" · ".join([*([md("case.dataset", dataset=dataset)] if dataset else []),
                           md("case.meta", case_id=case_id, slice=slice_, split=split),
                           *case_fields.detail_parts(dict(metadata or {}))]))
    with st.expander(md("case.question_line", question=question), expanded=True, key=key, on_change="rerun"):
        placed = claim_in_answer(answer, *span, claim_text)
        if placed is not None:
            body = claim_html(placed, shown=plain_text, lead=t("case.answer_placed"),
                              label=(t("case.claim_start"), t("case.claim_end")), claim_key=claim_key)
        else:
            marked = highlight(claim_text, answer)
            body = to_html(answer, marked.spans, shown=plain_text,
                           lead=t("case.answer_marked" if marked.spans else "case.answer_lead"))
        if len(answer) > LONG_ANSWER_CHARS or answer.count("\n") + 1 > LONG_ANSWER_LINES:
            # a named region that takes the focus: a keyboard user scrolls it too (WCAG 2.1.1)
            body = (f'<div role="region" aria-label="{html.escape(t("case.answer_box"))}" tabindex="0" '
                    f'style="max-height: {ANSWER_HEIGHT}px; overflow-y: auto">{body}</div>')
        st.html(body)


def dataset_select(key: str) -> str | None:
    """A select of the datasets there are, with "all datasets" first; returns the chosen name or
    None for all."""
    with read_db() as session:
        names = list_datasets(session)
    choice = st.selectbox(t("admin.dataset"), [None, *names], key=key,
                          format_func=lambda name: t("admin.dataset_all") if name is None else plain_text(name))
    return choice


def optional(value: str | None) -> str:
    """A value for display as plain text (plain_text), a dash when empty."""
    return plain_text(value) if value else "-"



def show_message(key: str) -> None:
    """Show, once, the message a callback left in st.session_state[key] as (kind, Markdown text),
    kind "success", "info" or "error"; nothing when there is none. Callbacks run before the page
    is drawn, so they leave their outcome here for the page to show where it belongs."""
    kind, text = st.session_state.pop(key, (None, None))
    if kind == "success":
        st.success(text)
    elif kind == "info":
        st.info(text)
    elif kind == "error":
        st.error(text)
