"""The Streamlit app driven through AppTest: login, navigation by role, blind double labeling
through the Label page buttons, adjudication as "Labeler 1 / Labeler 2", releases, admin.

Each test gets a fresh migrated SQLite database (DATABASE_URL) seeded directly with the models:
one dataset, three cases (two assigned to aoi and ren, one unassigned), four claims with
passages, and four users.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

import annotator.ui.components as ui_components
import streamlit as st
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from annotator.db import init_db, session_scope
from annotator.services.access import OPERATOR
from annotator.models import Case, Claim, ClaimPassage, Dataset, Label, Passage, User
from annotator.services.adjudication import adjudication_queue
from annotator.services.labeling import assign_cases
from annotator.services.status import project_status
from annotator.services.users import add_user, authenticate, get_user
from tests.conftest import ON_BOTH, decision_button, label_button, seeded_url

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"
PASSWORDS = {"aoi": "aoi-pass-1234", "ren": "ren-pass-1234", "mika": "mika-pass-1234", "admin": "admin-pass-1234"}
MARKER = "MARKER-7f3a-first-labelers-rationale"

# claim id -> (aoi's label, ren's label): one disagreement, on case-1-c2.
PLAN = {"case-1-c1": ("support", "support"), "case-1-c2": ("support", "contradict"), "case-2-c1": ("insufficient", "insufficient")}


def _seed(session) -> None:  # noqa: ANN001 - Session
    dataset = Dataset(name="pilot", source_format="test")
    session.add(dataset)
    session.flush()
    cases = {}
    for position, (case_id, slice_, n_claims) in enumerate(
        (("case-1", "normal", 2), ("case-2", "paraphrase", 1), ("case-3", "normal", 1)), start=1
    ):
        case = Case(dataset_id=dataset.id, case_id=case_id, position=position, question=f"Question of {case_id}?",
                    answer=f"Answer of {case_id}.", slice=slice_, split="dev", meta={})
        session.add(case)
        session.flush()
        cases[case_id] = case
        passages = [Passage(dataset_id=dataset.id, passage_id=f"{case_id}-p{k}", doc_id=f"doc-{position}", version="2026-04",
                            title=f"Policy {position}.{k}", text=f"Evidence text {position}.{k}.") for k in (1, 2)]
        session.add_all(passages)
        session.flush()
        for j in range(1, n_claims + 1):
            claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=f"{case_id}-c{j}", position=j,
                          text=f"Claim text {position}.{j}.")
            session.add(claim)
            session.flush()
            session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=p.id, position=k) for k, p in enumerate(passages)])
    for name, roles in (("aoi", ["labeler"]), ("ren", ["labeler"]), ("mika", ["adjudicator"]), ("admin", ["admin", "adjudicator"])):
        add_user(session, OPERATOR, name, roles, PASSWORDS[name])
    assign_cases(session, OPERATOR, [cases["case-1"].id, cases["case-2"].id], ["aoi", "ren"])


@pytest.fixture
def engine(request, tmp_path, monkeypatch):
    """The seeded database (_seed) the app opens (DATABASE_URL): SQLite, or PostgreSQL as well
    for a test marked ON_BOTH."""
    url = seeded_url(request, f"sqlite:///{tmp_path}/a.db", _seed)
    engine = init_db(url)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)  # releases go to data/releases/ under the test's folder
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)  # tests click faster than people
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def _claim_pk(engine, claim_id: str) -> int:  # noqa: ANN001
    with session_scope(engine) as session:
        return session.exec(select(Claim.id).where(Claim.claim_id == claim_id)).one()


def open_app(name: str | None = None, password: str | None = None, query: dict | None = None, *,
             home: bool = False) -> AppTest:
    """A new browser session; logged in through the login form when `name` is given. The login
    opens the Home page; unless `home`, the session goes on to the user's work page as the Home
    page's links do: Label for a labeler, else Adjudicate for an adjudicator (a claim link the
    Home page followed stays on the page it led to)."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params.update(query or {})
    at.run()
    if name is not None:
        at.text_input(key="login.name").input(name)
        at.text_input(key="login.password").input(password if password is not None else PASSWORDS[name])
        at.form_submit_button[0].click().run()
        if not home and [t.value for t in at.title] == ["Home"]:
            go_to_work(at)
    assert not at.exception
    return at


def go_to_work(at: AppTest) -> AppTest:
    """From the Home page to the first of Label and Adjudicate the user's navigation has."""
    for page in ("views/label.py", "views/adjudicate.py"):
        try:
            return at.switch_page(page).run()
        except ValueError:  # not in this user's navigation
            continue
    return at


def shown_claim(at: AppTest) -> str:
    """The claim id the Label page shows."""
    return next(s.value for s in at.header if s.value.startswith("Claim ")).removeprefix("Claim ")


def label(at: AppTest, value: str, rationale: str = "", cite: tuple[str, ...] = ()) -> None:
    """Type into the current claim's inputs and press a label button."""
    claim_pk = at.session_state["label.claim_pk"]
    if rationale:
        at.text_area(key=f"label.rationale.{claim_pk}").input(rationale)
    for passage_id in cite:
        at.checkbox(key=f"label.cite.{claim_pk}.{passage_id}").check()
    label_button(at, value).click().run()
    assert not at.exception
    assert [e.value for e in at.error] == []


def label_queue(at: AppTest, who: int, rationales: dict[str, str] | None = None) -> list[str]:
    """Label every claim of the queue in order with PLAN[claim][who]; returns the toasts."""
    toasts = []
    for claim_id in PLAN:
        assert shown_claim(at) == claim_id
        label(at, PLAN[claim_id][who], (rationales or {}).get(claim_id, ""))
        toasts += [toast.value for toast in at.toast]
    return toasts


def badges(at: AppTest) -> list[str]:
    """The texts of the label badges on the page (st.badge renders as badge markdown)."""
    return [match.group(1) for m in at.markdown if (match := re.fullmatch(r":\w+-badge\[(.*)\]", m.value))]


def has_word(word: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text) is not None


def page_dump(at: AppTest) -> str:
    """Everything the page holds: every element's protobuf (texts, labels, values, options) and
    the session state, but for what each login has of its own (its login session's key and ticket)."""
    out: list[str] = []

    def walk(node) -> None:  # noqa: ANN001
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    state = {key: at.session_state[key] for key in at.session_state}
    ticket = state.pop("auth.pending_ticket", None)  # each login's own: its login session's ticket and key
    state.pop("auth.login_session", None)
    dump = "\n".join(out) + "\n" + repr(sorted(state.items(), key=lambda kv: kv[0]))
    return dump.replace(ticket, "(ticket)") if ticket else dump


# --- login and navigation ------------------------------------------------------------------------


@ON_BOTH
def test_login_with_a_wrong_password_shows_an_error_and_logs_nobody_in(engine):
    at = open_app("aoi", "not-the-password")
    assert [e.value for e in at.error] == ["unknown user name or wrong password (or the account has no password yet)"]
    assert "auth.user_pk" not in at.session_state
    assert at.session_state["login.password"] == ""
    assert [t.value for t in at.title] == ["RAG claim annotator"]  # still the login page


def test_login_keeps_only_the_users_key_and_name_in_session_state(engine):
    at = open_app("aoi", home=True)
    assert at.session_state["auth.user_name"] == "aoi"
    with session_scope(engine) as session:
        assert at.session_state["auth.user_pk"] == get_user(session, "aoi").id
    assert [t.value for t in at.title] == ["Home"]  # the login opens the Home page
    assert "Logged in as **aoi** (labeler)" in [c.value for c in at.sidebar.caption]


def test_a_labelers_navigation_has_label_but_not_admin_releases_or_adjudicate(engine):
    at = open_app("aoi")
    at.switch_page("views/label.py").run()
    assert [t.value for t in at.title] == ["Label"]
    for page in ("views/admin.py", "views/releases.py", "views/adjudicate.py", "views/agreement.py"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(page)


def test_an_adjudicator_sees_adjudicate_only(engine):
    at = open_app("mika", home=True)
    assert [t.value for t in at.title] == ["Home"]
    at.switch_page("views/adjudicate.py").run()
    assert [t.value for t in at.title] == ["Adjudicate"]
    for page in ("views/agreement.py", "views/admin.py", "views/releases.py", "views/label.py"):
        with pytest.raises(ValueError):
            at.switch_page(page)


def test_an_admin_sees_admin_agreement_releases_and_adjudicate_but_not_label(engine):
    at = open_app("admin")
    for page, title in (("views/admin.py", "Admin"), ("views/releases.py", "Releases"),
                        ("views/agreement.py", "Agreement"), ("views/adjudicate.py", "Adjudicate")):
        at.switch_page(page).run()
        assert not at.exception
        assert [t.value for t in at.title] == [title]
    with pytest.raises(ValueError):
        at.switch_page("views/label.py")


def test_logout_returns_to_the_login_page_and_forgets_the_user(engine):
    at = open_app("aoi")
    at.sidebar.button(key="app.logout").click().run()
    assert "auth.user_pk" not in at.session_state
    assert [t.value for t in at.title] == ["RAG claim annotator"]
    with pytest.raises(ValueError):
        at.switch_page("views/label.py")


def test_a_disabled_user_is_logged_out_at_the_next_click(engine):
    at = open_app("aoi")
    with session_scope(engine) as session:
        from annotator.services.users import set_active

        set_active(session, OPERATOR, get_user(session, "aoi"), False)
    at.run()
    assert "auth.user_pk" not in at.session_state
    assert [t.value for t in at.title] == ["RAG claim annotator"]
    assert [e.value for e in at.error] == ["You are no longer logged in (or your account was disabled); log in again."]


# --- labeling ------------------------------------------------------------------------------------


@ON_BOTH
def test_two_labelers_label_the_same_claims_through_the_buttons_with_one_disagreement(engine):
    aoi = open_app("aoi")
    assert aoi.get("progress")[0].proto.text == "0 of 3 claims labeled"
    toasts = label_queue(aoi, 0)
    assert toasts == ["Saved support on claim case-1-c1.", "Saved support on claim case-1-c2.",
                      "Saved insufficient on claim case-2-c1."]
    assert aoi.get("progress")[0].proto.text == "3 of 3 claims labeled"
    assert [s.value for s in aoi.success] == ["Every claim in your queue is labeled (or its case is on hold). "
                                              "You may still review them."]
    ren = open_app("ren")
    label_queue(ren, 1)
    with session_scope(engine) as session:
        status = project_status(session, OPERATOR)
        assert status["labels"] == 6
        assert {k: v for k, v in status["claims_by_state"].items() if v} == {"agreed": 2, "disputed": 1, "unlabeled": 1}
        assert [item.claim_id for item in adjudication_queue(session, OPERATOR)] == ["case-1-c2"]


def test_the_label_page_saves_cited_passages_rationale_and_severity(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    at.selectbox(key=f"label.severity.{claim_pk}").set_value("amount_or_deadline")
    label(at, "contradict", "the deadline differs", cite=("case-1-p2",))
    with session_scope(engine) as session:
        saved = session.exec(select(Label).where(Label.claim_pk == claim_pk)).one()
        assert (saved.value, saved.passage_ids, saved.rationale, saved.severity, saved.revision) == (
            "contradict", ["case-1-p2"], "the deadline differs", "amount_or_deadline", 1)
    assert shown_claim(at) == "case-1-c2"


def test_a_double_click_labels_the_current_claim_only_not_the_next_one(engine, monkeypatch):
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 60.0)
    at = open_app("aoi")
    first = at.session_state["label.claim_pk"]
    label_button(at, "insufficient").click().run()
    second = at.session_state["label.claim_pk"]
    label_button(at, "insufficient").click().run()  # the second click lands on the next claim
    assert [w.value for w in at.warning] == ["Ignored a second click: the claim had just changed. "
                                             "Look at this claim, then choose its label."]
    assert at.session_state["label.claim_pk"] == second != first
    with session_scope(engine) as session:
        assert session.exec(select(Label.claim_pk)).all() == [first]


class Clock:
    """A monotonic clock the test moves by hand (components.py reads `time.monotonic`)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_label_presses_in_a_burst_save_once_and_the_next_claim_after_a_pause(engine, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(ui_components, "time", clock)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.6)
    at = open_app("aoi")
    first = at.session_state["label.claim_pk"]
    label_button(at, "insufficient").click().run()  # saved at 1000.0; the next claim is drawn then too
    second = at.session_state["label.claim_pk"]
    for _ in range(4):  # a key pressed again every 0.4 s: each press is too soon after the last one
        clock.now += 0.4
        label_button(at, "insufficient").click().run()
        assert at.session_state["label.claim_pk"] == second
    clock.now += 0.7  # the claim stays on screen a while with no press: the next press saves it
    label_button(at, "contradict").click().run()
    with session_scope(engine) as session:
        assert dict(session.exec(select(Label.claim_pk, Label.value)).all()) == {
            first: "insufficient", second: "contradict"}
    assert at.session_state["label.claim_pk"] not in (first, second)


def test_the_quiet_time_after_a_save_starts_when_the_page_has_drawn_the_next_claim(engine, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(ui_components, "time", clock)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.6)
    drawing = ui_components.new_claim_drawn

    def slow_drawing() -> None:  # the run drawing the next claim ends 0.5 s after the save
        clock.now += 0.5
        drawing()

    monkeypatch.setattr(ui_components, "new_claim_drawn", slow_drawing)
    at = open_app("aoi")
    label_button(at, "insufficient").click().run()
    second = at.session_state["label.claim_pk"]
    clock.now += 0.4  # 0.9 s after the save, but 0.4 s after the claim was drawn
    label_button(at, "support").click().run()
    assert at.session_state["label.claim_pk"] == second
    with session_scope(engine) as session:
        assert session.exec(select(Label.claim_pk).where(Label.claim_pk == second)).all() == []


def test_severity_is_dropped_when_the_label_is_support(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    at.selectbox(key=f"label.severity.{claim_pk}").set_value("leak")
    label(at, "support")
    with session_scope(engine) as session:
        assert session.exec(select(Label.severity).where(Label.claim_pk == claim_pk)).one() is None


def test_labeler_b_sees_nothing_of_labeler_a_before_submitting(engine):
    before = open_app("ren")
    assert shown_claim(before) == "case-1-c1"
    untouched = page_dump(before)

    aoi = open_app("aoi")
    label_queue(aoi, 0, rationales={claim_id: f"{MARKER} {claim_id}" for claim_id in PLAN})

    ren = open_app("ren")
    for claim_id in PLAN:
        assert shown_claim(ren) == claim_id
        dump = page_dump(ren)
        assert MARKER not in dump
        assert not has_word("aoi", dump)
        assert "Your saved label" not in dump
        assert badges(ren) == []  # no label of anyone's is shown
        if claim_id == "case-1-c1":  # the same page, byte for byte, as before aoi labeled anything
            assert dump == untouched
        if claim_id != "case-2-c1":
            ren.button(key="label.next").click().run()


def test_a_refused_stale_write_keeps_the_typed_rationale_and_shows_the_error(engine):
    first_tab = open_app("aoi")
    second_tab = open_app("aoi")
    label(second_tab, "support")  # the other tab saves first
    claim_pk = first_tab.session_state["label.claim_pk"]
    first_tab.text_area(key=f"label.rationale.{claim_pk}").input("typed in the first tab")
    label_button(first_tab, "contradict").click().run()
    assert len(first_tab.error) == 1 and "changed elsewhere" in first_tab.error[0].value
    assert first_tab.session_state["label.claim_pk"] == claim_pk
    assert first_tab.text_area(key=f"label.rationale.{claim_pk}").value == "typed in the first tab"
    with session_scope(engine) as session:
        assert session.exec(select(Label.value).where(Label.claim_pk == claim_pk)).one() == "support"


def test_a_label_is_read_only_once_the_second_label_lands(engine):
    aoi = open_app("aoi")
    label(aoi, "support")
    ren = open_app("ren")
    label(ren, "support")
    aoi.button(key="label.previous").click().run()
    assert shown_claim(aoi) == "case-1-c1"
    assert any("second label on this claim has landed" in i.value for i in aoi.info)
    assert [b.key for b in aoi.button if b.key and b.key.startswith("label.button.")] == []
    assert badges(aoi) == ["support"]


@ON_BOTH
def test_a_deep_link_opens_an_own_claim_and_refuses_someone_elses(engine):
    at = open_app("aoi", query={"claim": "case-2-c1"})
    assert shown_claim(at) == "case-2-c1"
    refused = open_app("aoi", query={"claim": "case-3-c1"}, home=True)  # refused on the Home page
    assert [t.value for t in refused.title] == ["Home"]
    assert [e.value for e in refused.error] == ["claim 'case-3-c1' is not in your queue"]
    assert [link.proto.label for link in refused.get("page_link")] == ["Label the next claim: case-1-c1"]
    assert "Claim text 3.1." not in page_dump(refused)
    assert "claim" not in refused.query_params


def test_a_deep_link_refused_on_the_label_page_leaves_the_address_and_the_shown_claim(engine):
    at = open_app("aoi")
    assert shown_claim(at) == "case-1-c1"
    at.query_params["claim"] = "case-3-c1"  # the address typed while on the Label page
    at.run()
    assert [e.value for e in at.error] == ["claim 'case-3-c1' is not in your queue"]
    assert shown_claim(at) == "case-1-c1" and "claim" not in at.query_params
    at.run()
    assert [e.value for e in at.error] == []  # said once: the address no longer names the claim


def test_a_deep_link_naming_two_claims_opens_neither_and_says_why(engine):
    at = open_app("aoi", query={"claim": ["case-2-c1", "case-1-c2"]}, home=True)
    assert [e.value for e in at.error] == ["the address names 2 claims (claim=...): open one claim at a time"]
    assert [t.value for t in at.title] == ["Home"] and "claim" not in at.query_params
    same_twice = open_app("aoi", query={"claim": ["case-2-c1", "case-2-c1"]})
    assert shown_claim(same_twice) == "case-2-c1"


def test_a_deep_link_with_a_very_long_claim_id_is_refused_without_echoing_it_whole(engine):
    refused = open_app("aoi", query={"claim": "x" * 5000}, home=True)
    (error,) = [e.value for e in refused.error]
    assert error == (f"the address's claim= is 5,000 characters long, more than the 200 an id may have ({'x' * 40}…); "
                     "nothing was opened")


def test_a_deep_link_opened_in_a_new_tab_is_followed_after_the_login(engine):
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params["claim"] = "case-2-c1"
    at.run()  # a new tab starts logged out, on the login page
    assert at.session_state["auth.pending_claim"] == ["case-2-c1"]
    at.query_params.clear()  # the browser lands on the main page: only the kept link remains
    at.text_input(key="login.name").input("aoi")
    at.text_input(key="login.password").input(PASSWORDS["aoi"])
    at.form_submit_button[0].click().run()
    assert shown_claim(at) == "case-2-c1"
    assert "auth.pending_claim" not in at.session_state
    at.run()
    assert shown_claim(at) == "case-2-c1"


@ON_BOTH
def test_holding_a_case_moves_on_and_counts_the_hold(engine):
    at = open_app("aoi")
    case_pk = None
    with session_scope(engine) as session:
        case_pk = session.exec(select(Case.id).where(Case.case_id == "case-1")).one()
    at.selectbox(key=f"label.hold_reason.{case_pk}").set_value("missing_logs")
    at.button(key="label.hold_button").click().run()
    assert [t.value for t in at.toast] == ["The case is on hold: missing logs."]
    assert shown_claim(at) == "case-2-c1"
    with session_scope(engine) as session:
        assert project_status(session, OPERATOR)["holds"] == {"active": 1, "by_reason": {"missing_logs": 1}}


def test_hold_this_case_is_offered_on_an_open_claim_and_not_where_the_label_is_final(engine):
    label_queue(open_app("ren"), 1)  # ren labels every claim: aoi's second label makes each final
    at = open_app("aoi")
    label(at, "support")  # case-1-c1: agreed, aoi's label is final there
    assert shown_claim(at) == "case-1-c2"  # ren's label is in, aoi's not yet: aoi labels it
    assert [e.label for e in at.expander if e.label == "Hold this case"] == ["Hold this case"]
    at.button(key="label.previous").click().run()
    assert shown_claim(at) == "case-1-c1"
    assert [i.value for i in at.info] == [
        "The second label on this claim has landed: your label is final here; a disagreement goes to adjudication."]
    assert [e.label for e in at.expander if e.label == "Hold this case"] == []
    assert "label.hold_button" not in [b.key for b in at.button]


def test_the_case_box_starts_open_and_a_closed_one_stays_closed_on_the_next_claim(engine):
    at = open_app("aoi")
    assert [e.proto.expanded for e in at.expander if e.label == "**Question**: Question of case-1?"] == [True]
    at.session_state["label.case_open"] = False  # the user closes it
    at.run()
    label(at, "support")
    assert shown_claim(at) == "case-1-c2"
    assert [e.proto.expanded for e in at.expander if e.label.startswith("**Question**")] == [False]
    assert at.session_state["label.case_open"] is False


def test_the_label_and_adjudicate_pages_mark_the_claim_shown_for_the_scroll_to_the_top(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    markers = [h.proto.body for h in at.get("html") if "data-annotator-claim-screen" in h.proto.body]
    assert len(markers) == 1 and f'data-claim="{claim_pk}"' in markers[0] and "scrollTo" in markers[0]
    at.button(key="label.next").click().run()
    markers = [h.proto.body for h in at.get("html") if "data-annotator-claim-screen" in h.proto.body]
    assert f'data-claim="{at.session_state["label.claim_pk"]}"' in markers[0] and at.session_state["label.claim_pk"] != claim_pk
    _label_both(engine)
    mika = open_app("mika")
    markers = [h.proto.body for h in mika.get("html") if "data-annotator-claim-screen" in h.proto.body]
    assert len(markers) == 1 and f'data-claim="{_claim_pk(engine, "case-1-c2")}"' in markers[0]


# --- adjudication --------------------------------------------------------------------------------


def _label_both(engine) -> None:  # noqa: ANN001
    label_queue(open_app("aoi"), 0, rationales={"case-1-c2": f"{MARKER}: passage 1 says so"})
    label_queue(open_app("ren"), 1, rationales={"case-1-c2": "second rationale: passage 2 disagrees"})


def test_the_disagreement_reaches_the_adjudicator_as_labeler_1_and_2_without_names(engine):
    _label_both(engine)
    at = open_app("mika")
    assert [c.value for c in at.caption if c.value.startswith("Claims waiting for a decision")] == [
        "Claims waiting for a decision: 1 (claims you label are not shown)."]
    assert at.selectbox(key="adjudicate.claim_pk").value == _claim_pk(engine, "case-1-c2")
    dump = page_dump(at)
    assert "Labeler 1" in dump and "Labeler 2" in dump
    assert not has_word("aoi", dump) and not has_word("ren", dump)
    markdowns = [m.value for m in at.markdown]
    assert "**Labeler 1**" in markdowns and "**Labeler 2**" in markdowns
    assert sorted(badges(at)) == ["contradict", "support"]
    texts = [t.value for t in at.text]
    assert f"{MARKER}: passage 1 says so" in texts and "second rationale: passage 2 disagrees" in texts


def test_the_adjudicator_sees_the_passages_numbered_and_which_label_cites_which(engine):
    at = open_app("aoi")
    label(at, "support")
    label(at, "support", cite=("case-1-p1",))
    label(at, "insufficient")
    at = open_app("ren")
    label(at, "support")
    label(at, "contradict", cite=("case-1-p1", "case-1-p2"))
    label(at, "insufficient")
    mika = open_app("mika")
    markdowns = [m.value for m in mika.markdown]
    assert "**Passage 1: Policy 1.1**" in markdowns and "**Passage 2: Policy 1.2**" in markdowns
    captions = [c.value for c in mika.caption]
    cited = [c.split(" · ")[0] for c in captions if c.startswith("Cited: ")]  # Labeler 1's, then Labeler 2's
    both = "Cited: passage 1 (case-1-p1), passage 2 (case-1-p2)"
    assert sorted(cited) == sorted(["Cited: passage 1 (case-1-p1)", both])
    citing_both = cited.index(both) + 1  # the number of ren's label, whichever it is
    assert sorted(c for c in captions if "Cited by" in c) == sorted([
        ":material/bookmark: Cited by Labeler 1, Labeler 2", f":material/bookmark: Cited by Labeler {citing_both}"])


def test_the_claim_shown_has_a_link_to_copy_that_opens_it(engine):
    at = open_app("aoi")
    codes = [c.value for c in at.code]
    assert codes == ["/?claim=case-1-c1&dataset=pilot"]  # AppTest has no address: the link from the app's root
    at = open_app("aoi", query={"claim": "case-1-c2"})
    assert shown_claim(at) == "case-1-c2" and [c.value for c in at.code] == ["/?claim=case-1-c2&dataset=pilot"]
    _label_both(engine)
    assert [c.value for c in open_app("mika").code] == ["/?claim=case-1-c2&dataset=pilot"]


def test_a_claims_address_keeps_the_apps_root_and_encodes_the_id():
    assert ui_components.claim_address("http://localhost:8501/label", "c-1") == "http://localhost:8501/?claim=c-1"
    assert ui_components.claim_address("https://h.example/team/adjudicate", "a b/ü&x") == (
        "https://h.example/team/?claim=a%20b%2F%C3%BC%26x")
    assert ui_components.claim_address("http://h:8600/", "x") == "http://h:8600/?claim=x"
    assert ui_components.claim_address(None, "x") == "/?claim=x"


@ON_BOTH
def test_the_adjudicator_decides_and_the_queue_empties(engine):
    _label_both(engine)
    at = open_app("mika")
    claim_pk = _claim_pk(engine, "case-1-c2")
    at.text_area(key=f"adjudicate.rationale.{claim_pk}").input("passage 2 states another amount")
    at.selectbox(key=f"adjudicate.severity.{claim_pk}").set_value("amount_or_deadline")
    decision_button(at, "contradict").click().run()
    assert not at.exception
    assert [t.value for t in at.toast] == ["Decided contradict on claim case-1-c2."]
    assert [s.value for s in at.success] == ["No disputed claim waits for you."]
    with session_scope(engine) as session:
        status = project_status(session, OPERATOR)
        assert {k: v for k, v in status["claims_by_state"].items() if v} == {"agreed": 2, "adjudicated": 1, "unlabeled": 1}
        assert status["labels"] == 6  # the disagreement is kept


def test_a_decision_without_a_rationale_is_refused_and_the_claim_waits_with_the_input_kept(engine):
    _label_both(engine)
    at = open_app("mika")
    claim_pk = _claim_pk(engine, "case-1-c2")
    assert at.text_area(key=f"adjudicate.rationale.{claim_pk}").label == "Rationale (required)"
    at.selectbox(key=f"adjudicate.severity.{claim_pk}").set_value("amount_or_deadline")
    at.text_area(key=f"adjudicate.rationale.{claim_pk}").input("   ")
    decision_button(at, "contradict").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "write a rationale for the final label: why the labels are decided so (it is recorded with the decision and "
        "released with it); nothing was saved"]
    assert [t.value for t in at.toast] == []
    assert at.selectbox(key="adjudicate.claim_pk").value == claim_pk
    assert at.selectbox(key=f"adjudicate.severity.{claim_pk}").value == "amount_or_deadline"  # kept for the retry
    with session_scope(engine) as session:
        assert [item.claim_id for item in adjudication_queue(session, OPERATOR)] == ["case-1-c2"]
    at.text_area(key=f"adjudicate.rationale.{claim_pk}").input("passage 2 states another amount")
    decision_button(at, "contradict").click().run()
    assert [t.value for t in at.toast] == ["Decided contradict on claim case-1-c2."]


# --- releases ------------------------------------------------------------------------------------


def _decide(engine) -> None:  # noqa: ANN001
    _label_both(engine)
    at = open_app("mika")
    at.text_area(key=f"adjudicate.rationale.{_claim_pk(engine, 'case-1-c2')}").input("passage 2 decides")
    decision_button(at, "contradict").click().run()
    assert [t.value for t in at.toast] == ["Decided contradict on claim case-1-c2."]


@ON_BOTH
def test_an_admin_creates_an_only_final_release_on_the_releases_page(engine, tmp_path):
    _decide(engine)
    at = open_app("admin")
    at.switch_page("views/releases.py").run()
    at.text_input(key="releases.name").input("gold-v1")
    at.checkbox(key="releases.only_final").check()
    at.button(key="releases.create_button").click().run()
    assert not at.exception
    folder = (tmp_path / "data" / "releases" / "gold-v1").resolve()
    assert [s.value for s in at.success] == [
        f"Release gold-v1 created with 3 claims in {folder}. Left out: unlabeled 1."]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["scope"]["only_final"] is True
    assert manifest["counts"]["claims"] == 3
    files = ["gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl", "manifest.json"]  # no gold.excel.csv: no --excel
    assert [b.proto.label for b in at.get("download_button")] == files
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)
    at.button(key="releases.verify").click().run()
    assert [s.value for s in at.success] == ["Release gold-v1: every file matches its manifest."]


def test_a_release_without_only_final_is_refused_while_a_claim_is_disputed(engine, tmp_path):
    _label_both(engine)
    at = open_app("admin")
    at.switch_page("views/releases.py").run()
    at.text_input(key="releases.name").input("gold-v1")
    at.button(key="releases.create_button").click().run()
    assert len(at.error) == 1
    message = at.error[0].value
    assert message.startswith("2 of 4 claims in any dataset are not final (")
    assert "disputed 1" in message and "unlabeled 1" in message and "--only-final" in message
    assert not (tmp_path / "data" / "releases" / "gold-v1").exists()
    assert [c.value for c in at.main.caption] == ["No release yet."]


# --- agreement and admin -------------------------------------------------------------------------


@ON_BOTH
def test_the_agreement_page_shows_the_figures_with_their_n_and_the_guideline_note(engine):
    _label_both(engine)
    at = open_app("admin")
    at.switch_page("views/agreement.py").run()
    assert not at.exception
    assert any("not a measure of the RAG system's quality" in i.value for i in at.info)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Percent agreement"] == "0.667"
    assert "n = 3 / 4" in [c.value.split(" · ")[-1] for c in at.caption]
    slices = at.dataframe[1].value
    assert list(slices["Slice"]) == ["normal", "paraphrase"]
    assert list(slices["Note"]) == ["indicative only", "indicative only"]
    confusion = at.dataframe[2].value
    assert confusion.to_numpy().tolist() == [[1, 1, 0], [0, 0, 0], [0, 0, 1]]


@ON_BOTH
def test_an_admin_assigns_chosen_cases_and_adds_a_user(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.text_area(key="admin.assign_cases").input("case-3")
    at.multiselect(key="admin.assign_labelers").select("aoi").select("ren")
    at.button(key="admin.assign_button").click().run()
    assert [s.value for s in at.success] == ["2 new assignments for 1 cases to aoi & ren."]
    at.text_input(key="admin.new_name").input("sora")
    at.text_input(key="admin.new_password").input("sora-pass-1234")
    at.button(key="admin.add_button").click().run()
    assert [s.value for s in at.success] == ["User sora added."]
    assert at.session_state["admin.new_password"] == ""
    names = list(at.dataframe[0].value["Name"])
    assert names == ["admin", "aoi", "mika", "ren", "sora"]
    assert open_app("sora", "sora-pass-1234").session_state["auth.user_name"] == "sora"


@ON_BOTH
def test_the_admin_status_tab_counts_claims_by_state(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Cases"], metrics["Claims"], metrics["Labels"], metrics["Cases on hold"]) == ("3", "4", "0", "0")
    by_state = at.dataframe[1].value
    assert dict(zip(by_state["State"], by_state["Claims"], strict=True))["unlabeled"] == 4


def test_admin_errors_are_shown_as_messages(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.multiselect(key="admin.assign_labelers").select("aoi")
    at.button(key="admin.assign_button").click().run()
    assert [e.value for e in at.error] == ["Choose exactly two labelers."]
    at.text_input(key="admin.new_name").input("aoi")
    at.button(key="admin.add_button").click().run()
    assert [e.value for e in at.error] == ["a user named 'aoi' exists already"]


def open_admin_tab(at: AppTest) -> str:
    """The label of the tab the Admin page opens on (st.tabs' default)."""
    container = next(node for node in at.main if getattr(node, "type", None) == "tab_container")
    return at.tabs[container.proto.tab_container.default_tab_index].label


def add_user_form(at: AppTest, name: str, password: str = "", no_password: bool = False) -> None:
    at.text_input(key="admin.new_name").input(name)
    at.text_input(key="admin.new_password").input(password)
    at.checkbox(key="admin.new_no_password").set_value(no_password)
    at.button(key="admin.add_button").click().run()


def stored_user(engine, name: str):  # noqa: ANN001, ANN201 - Engine; User or None
    with session_scope(engine) as session:
        return session.exec(select(User).where(User.name == name)).first()


def test_the_add_user_form_sends_the_password_and_the_page_stays_on_the_users_tab(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    assert open_admin_tab(at) == "Assign cases"
    add_user_form(at, "newbie5", "longenough1")
    assert not at.exception
    assert [s.value for s in at.success] == ["User newbie5 added."]
    assert at.session_state["admin.new_password"] == ""
    assert open_admin_tab(at) == "Users"
    with session_scope(engine) as session:
        assert authenticate(session, "newbie5", "longenough1").name == "newbie5"


@pytest.mark.parametrize("password, message", [
    ("", 'Type a password (at least 8 characters), or tick "No password" for a user who logs in by single sign-on.'),
    ("short", "a password needs at least 8 characters"),
])
def test_adding_a_user_without_a_valid_password_is_refused_and_creates_nobody(engine, password, message):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    add_user_form(at, "newbie5", password)
    assert [e.value for e in at.error] == [message]
    assert at.session_state["admin.new_password"] == ""
    assert open_admin_tab(at) == "Users"
    assert stored_user(engine, "newbie5") is None


def test_the_no_password_box_adds_a_passwordless_user(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    add_user_form(at, "sso-user", no_password=True)
    assert [s.value for s in at.success] == ["User sso-user added."]
    user = stored_user(engine, "sso-user")
    assert user is not None and user.password_hash is None
    add_user_form(at, "both", "longenough1", no_password=True)
    assert [e.value for e in at.error] == ['You typed a password and ticked "No password": clear one of them.']
    assert stored_user(engine, "both") is None


def test_the_reset_form_sets_the_password_and_stays_on_the_users_tab(engine):
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.selectbox(key="admin.reset_user").select("aoi")
    at.text_input(key="admin.reset_password").input("short")
    at.button(key="admin.reset_button").click().run()
    assert [e.value for e in at.error] == ["a password needs at least 8 characters"]
    assert open_admin_tab(at) == "Users"
    at.text_input(key="admin.reset_password").input("aoi-new-pass-1")
    at.button(key="admin.reset_button").click().run()
    assert [s.value for s in at.success] == ["Password of aoi set."]
    assert at.session_state["admin.reset_password"] == ""
    with session_scope(engine) as session:
        assert authenticate(session, "aoi", "aoi-new-pass-1").name == "aoi"


# --- the demo --------------------------------------------------------------------------------------


def test_a_demo_labeler_starts_on_the_first_demo_claim_with_its_case(tmp_path, monkeypatch):
    from annotator.services.demo import DEMO_FILE, DEMO_USERS, seed_demo

    url = f"sqlite:///{tmp_path}/demo.db"
    demo_engine = init_db(url)
    with session_scope(demo_engine) as session:
        seed_demo(session, release_dir=tmp_path / "releases")
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    first_case = json.loads(DEMO_FILE.read_text(encoding="utf-8").splitlines()[0])
    passwords = {user.name: user.password for user in DEMO_USERS}
    at = open_app("aoi", passwords["aoi"])
    assert at.get("progress")[0].proto.text == "0 of 48 claims labeled"
    assert shown_claim(at) == first_case["claims"][0]["claim_id"]
    assert first_case["claims"][0]["text"] in [t.value for t in at.text]
    (case_box,) = [e for e in at.expander if e.label.startswith("**Question**")]  # open, the question in its header
    assert case_box.label == f"**Question**: {first_case['question']}" and case_box.proto.expanded
    (answer,) = [h.proto.body for h in case_box.get("html")]
    assert html.unescape(re.sub(r"<[^>]+>", "", answer)) == (
        "Generated answer (the words it shares with the claim marked): " + first_case["answer"])
    assert re.findall(r"<mark [^>]*>(.*?)</mark>", answer)[:3] == ["経費", "精算", "支出"]  # the claim's words, marked
    demo_engine.dispose()


def test_a_rationale_over_the_import_limit_is_refused_naming_its_length_and_kept_on_screen(engine):
    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    at.session_state[f"label.rationale.{claim_pk}"] = "x" * 100_001  # pasted: the box takes it, the save says why not
    label_button(at, "support").click().run()
    assert [e.value for e in at.error] == [
        "the rationale is 100,001 characters long, over the limit of 100,000; shorten it"]
    with session_scope(engine) as session:
        assert session.exec(select(Label)).all() == []
    assert at.session_state["label.claim_pk"] == claim_pk
    assert len(at.text_area(key=f"label.rationale.{claim_pk}").value) == 100_001  # nothing typed is lost


def test_a_full_disk_while_typing_and_saving_says_so_and_keeps_the_input_on_the_label_page(engine, monkeypatch):
    import annotator.db as annotator_db
    from annotator.models import Draft

    at = open_app("aoi")
    claim_pk = at.session_state["label.claim_pk"]
    configure = annotator_db._configure_sqlite

    def full(connection, record):  # noqa: ANN001, ANN202 - the database may not grow by a page
        configure(connection, record)
        connection.execute("PRAGMA max_page_count=1")

    monkeypatch.setattr(annotator_db, "_configure_sqlite", full)
    st.cache_resource.clear()  # the app's next engine opens "full" connections
    typed = "a long rationale that needs new pages " * 1000
    at.text_area(key=f"label.rationale.{claim_pk}").input(typed).run()  # the draft save on_change
    full_disk = "the disk is full; nothing was saved. Free space and try again"
    assert not at.exception and [e.value for e in at.error] == [full_disk]
    label_button(at, "contradict").click().run()
    assert not at.exception and [e.value for e in at.error] == [full_disk]
    assert at.session_state["label.claim_pk"] == claim_pk
    assert at.text_area(key=f"label.rationale.{claim_pk}").value == typed
    assert at.session_state[f"label.draft_value.{claim_pk}"] == "contradict"  # the chosen label, unsaved
    with session_scope(engine) as session:
        assert session.exec(select(Label)).all() == [] and session.exec(select(Draft)).all() == []



BUSY = "the app is busy: every database connection stayed in use for 10 seconds; nothing was saved. Try again in a moment"


def test_a_login_that_finds_every_database_connection_busy_says_try_again_not_a_traceback(engine, monkeypatch):
    import annotator.services.users as users
    from annotator.db import _connections_busy

    def busy(*_args, **_kwargs):
        raise _connections_busy()

    monkeypatch.setattr(users, "authenticate", busy)
    at = open_app("aoi")
    assert [e.value for e in at.error] == [BUSY] and not at.exception
    assert "auth.user_pk" not in at.session_state
    assert [t.value for t in at.title] == ["RAG claim annotator"]  # the login page, ready for another try


def test_a_page_that_finds_every_database_connection_busy_says_try_again_not_a_traceback(engine, monkeypatch):
    from annotator.db import _connections_busy

    at = open_app("aoi")
    busy, real = [True], ui_components.session_user

    def session_user(session):  # noqa: ANN001, ANN202 - the page's account read, busy once
        if busy:
            busy.pop()
            raise _connections_busy()
        return real(session)

    monkeypatch.setattr(ui_components, "session_user", session_user)
    at.run()
    assert [e.value for e in at.error] == [BUSY] and not at.exception
    at.run()
    assert not at.error and not at.exception and at.session_state["auth.user_name"] == "aoi"  # still logged in


def test_the_admin_status_tab_lists_a_labelers_hold_and_lifts_it(engine):
    from annotator.services.labeling import holds_in_force, put_on_hold

    with session_scope(engine) as session:
        case_pk = session.exec(select(Case.id).where(Case.case_id == "case-1")).one()
        put_on_hold(session, get_user(session, "aoi"), case_pk, "missing_logs", "no retrieval log")
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    holds = at.dataframe[-1].value
    assert [list(holds[column]) for column in ("Case", "Reason", "Note", "Placed by")] == [
        ["case-1"], ["missing logs"], ["no retrieval log"], ["aoi"]]
    at.button(key=f"admin.lift_holds.{case_pk}").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Lifted 1 hold(s) on case-1."]  # nothing in the id makes Markdown
    assert "No hold is in force." in [t.value for t in at.text]
    with session_scope(engine) as session:
        assert holds_in_force(session, OPERATOR) == []


def test_a_page_run_reads_the_account_without_waiting_for_a_writer_on_sqlite(engine, monkeypatch):
    import sqlite3

    import annotator.db as annotator_db

    at = open_app("aoi", home=True)
    monkeypatch.setattr(annotator_db, "SQLITE_BUSY_TIMEOUT_MS", 300)  # a write lock waited for fails in 0.3 s
    st.cache_resource.clear()
    writer = sqlite3.connect(engine.url.database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a long import or release holds the write lock
    try:
        at.run()
        assert not at.exception and [e.value for e in at.error] == []
        assert at.session_state[ui_components.USER_NAME] == "aoi"  # still logged in, the page drawn
    finally:
        writer.execute("ROLLBACK")
        writer.close()
