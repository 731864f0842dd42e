"""Claim addresses name the dataset: claim ids are unique per dataset only (models.Claim), and an
exported release re-imported into another dataset keeps its claim ids. A link `?claim=ID&dataset=NAME`
opens exactly that claim; an older link without the dataset opens the claim when its id is in one
dataset of the caller's reach, and is refused, naming those datasets, when it is in several."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.errors import AmbiguousIdError, PermissionDeniedError
from annotator.models import Case, Claim, ClaimPassage, Dataset, Passage
from annotator.services import home
from annotator.services.access import OPERATOR
from annotator.services.labeling import assign_cases, find_assigned_claim, save_label
from annotator.services.lookup import find_case, find_claim
from annotator.services.users import add_user, get_user
from annotator.ui.components import claim_address
from tests.factories import PASSWORD, make_dataset, pilot
from tests.test_ui_app import engine, open_app, shown_claim  # noqa: F401 - engine: a fixture

AGAIN = "pilot-again"
AMBIGUOUS = ("claim 'case-1-c1' is in more than one of your datasets (pilot, pilot-again); open it from your queue, "
             "or add &dataset=NAME to the address (claim=...&dataset=...)")


def _two_datasets(session) -> None:  # noqa: ANN001
    """pilot (alice and bob label it) and pilot-again, the same claim ids, whose case-1 only alice labels."""
    pilot(session)
    again = make_dataset(session, AGAIN, n_cases=1, claims_per_case=1)
    assign_cases(session, OPERATOR, [find_case(session, "case-1", AGAIN).id], ["alice"])
    assert again.id is not None


def test_a_claim_id_in_two_datasets_opens_the_named_one_and_refuses_to_guess(any_engine):
    with session_scope(any_engine) as s:
        _two_datasets(s)
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        mine, again = find_claim(s, "case-1-c1", "pilot").id, find_claim(s, "case-1-c1", AGAIN).id
        assert mine != again
        assert find_assigned_claim(s, alice, "case-1-c1", "pilot") == mine
        assert find_assigned_claim(s, alice, "case-1-c1", AGAIN) == again
        with pytest.raises(AmbiguousIdError) as refused:
            find_assigned_claim(s, alice, "case-1-c1")
        assert str(refused.value) == AMBIGUOUS
        assert find_assigned_claim(s, alice, "case-1-c2") == find_claim(s, "case-1-c2", "pilot").id  # one dataset: an old link works
        assert find_assigned_claim(s, bob, "case-1-c1") == mine  # unique in bob's queue: nothing said of pilot-again
        for dataset in (AGAIN, "no-such-dataset"):  # not in his queue, or no such dataset: one refusal
            with pytest.raises(PermissionDeniedError) as denied:
                find_assigned_claim(s, bob, "case-1-c1", dataset)
            assert str(denied.value) == "claim 'case-1-c1' is not in your queue"

        assert home.open_claim_link(s, alice, "case-1-c1", AGAIN) == home.ClaimLink("label", again, "case-1-c1", AGAIN)
        with pytest.raises(AmbiguousIdError, match="more than one of your datasets"):
            home.open_claim_link(s, alice, "case-1-c1")
        assert home.open_claim_link(s, bob, "case-1-c1") == home.ClaimLink("label", mine, "case-1-c1", "pilot")

        save_label(s, alice, mine, "support")
        overview = home.labeler_overview(s, alice)
        assert (overview.next_claim_id, overview.next_claim_dataset) == ("case-1-c2", "pilot")


def test_a_claim_to_label_in_one_dataset_and_to_decide_in_another_is_never_picked_silently(any_engine):
    with session_scope(any_engine) as s:
        _two_datasets(s)
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        mine = find_claim(s, "case-1-c1", "pilot").id
        save_label(s, alice, mine, "support")
        save_label(s, bob, mine, "contradict")  # pilot's case-1-c1 waits for a decision
        dana = add_user(s, OPERATOR, "dana", ["labeler", "adjudicator"], PASSWORD)
        assign_cases(s, OPERATOR, [find_case(s, "case-1", AGAIN).id], ["dana"])
        with pytest.raises(AmbiguousIdError, match=r"\(pilot, pilot-again\)"):
            home.open_claim_link(s, dana, "case-1-c1")
        assert home.open_claim_link(s, dana, "case-1-c1", "pilot") == home.ClaimLink("adjudicate", mine, "case-1-c1", "pilot")
        assert home.open_claim_link(s, dana, "case-1-c1", AGAIN).page == "label"
        carol = get_user(s, "carol")  # an adjudicator only: the dispute is the one claim of that id in her reach
        assert home.open_claim_link(s, carol, "case-1-c1") == home.ClaimLink("adjudicate", mine, "case-1-c1", "pilot")
        with pytest.raises(PermissionDeniedError, match="not waiting for your decision"):
            home.open_claim_link(s, carol, "case-1-c1", AGAIN)
        assert home.adjudicator_overview(s, carol).oldest_claim_dataset == "pilot"


def test_a_claims_address_carries_its_dataset_percent_encoded():
    assert claim_address("http://localhost:8501/label", "c-1", "mine again/ü&x") == (
        "http://localhost:8501/?claim=c-1&dataset=mine%20again%2F%C3%BC%26x")
    assert claim_address(None, "c-1", AGAIN) == "/?claim=c-1&dataset=pilot-again"
    assert claim_address(None, "c-1") == "/?claim=c-1"


# --- the app ---------------------------------------------------------------------------------------


def _again(engine) -> None:  # noqa: ANN001
    """A second dataset with test_ui_app's case-1 and its claim ids, assigned to aoi; aoi has labeled
    every claim of pilot in their queue, so the next claim is pilot-again's case-1-c1."""
    with session_scope(engine) as s:
        dataset = Dataset(name=AGAIN, source_format="test")
        s.add(dataset)
        s.flush()
        case = Case(dataset_id=dataset.id, case_id="case-1", position=1, question="Question again?", answer="Answer again.",
                    slice="normal", split="dev", meta={})
        s.add(case)
        s.flush()
        passage = Passage(dataset_id=dataset.id, passage_id="again-p1", doc_id="doc-a", version="1", title="Again",
                          text="Evidence again.")
        s.add(passage)
        s.flush()
        claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id="case-1-c1", position=1, text="Claim text again.")
        s.add(claim)
        s.flush()
        s.add(ClaimPassage(claim_pk=claim.id, passage_pk=passage.id, position=0))
        assign_cases(s, OPERATOR, [case.id], ["aoi"])
        aoi = get_user(s, "aoi")
        pilot_pk = s.exec(select(Dataset.id).where(Dataset.name == "pilot")).one()
        for pk in s.exec(select(Claim.id).where(Claim.dataset_id == pilot_pk, Claim.claim_id != "case-3-c1")):
            save_label(s, aoi, pk, "support")


def _links(at) -> list[tuple[str, str]]:  # noqa: ANN001
    return [(link.proto.label, link.proto.query_string) for link in at.get("page_link")]


def test_the_home_link_and_the_label_page_open_the_claim_of_the_named_dataset(engine):  # noqa: F811
    _again(engine)
    at = open_app("aoi", home=True)
    assert ("Label the next claim: case-1-c1", "claim=case-1-c1&dataset=pilot-again") in _links(at)

    label = open_app("aoi", query={"claim": "case-1-c1", "dataset": AGAIN})
    assert [t.value for t in label.title] == ["Label"] and shown_claim(label) == "case-1-c1"
    texts = [t.value for t in label.text]
    assert "Claim text again." in texts and "Claim text 1.1." not in texts
    assert any(c.value.startswith("Dataset pilot-again · Case case-1") for c in label.caption)  # two datasets: named
    assert [c.value for c in label.code] == ["/?claim=case-1-c1&dataset=pilot-again"]  # the Link popover's address

    mine = open_app("aoi", query={"claim": "case-1-c1", "dataset": "pilot"})
    assert "Claim text 1.1." in [t.value for t in mine.text]
    assert [c.value for c in mine.code] == ["/?claim=case-1-c1&dataset=pilot"]


def test_an_ambiguous_old_link_is_refused_naming_the_datasets_and_opens_nothing(engine):  # noqa: F811
    _again(engine)
    refused = open_app("aoi", query={"claim": "case-1-c1"}, home=True)
    assert [t.value for t in refused.title] == ["Home"]
    assert [e.value for e in refused.error] == [AMBIGUOUS]
    assert "claim" not in refused.query_params and "dataset" not in refused.query_params
    unique = open_app("aoi", query={"claim": "case-2-c1"})  # an old link to an id of one dataset still opens
    assert shown_claim(unique) == "case-2-c1"
    ren = open_app("ren", query={"claim": "case-1-c1"})  # in one dataset of ren's queue: no refusal, nothing of pilot-again
    assert shown_claim(ren) == "case-1-c1" and [e.value for e in ren.error] == []
    assert any(c.value.startswith("Dataset pilot · Case case-1") for c in ren.caption)  # their claim's own dataset


def test_the_case_line_names_no_dataset_when_the_project_has_one(engine):  # noqa: F811
    at = open_app("aoi")
    assert not any("Dataset" in c.value for c in at.caption)
    assert [c.value for c in at.code] == ["/?claim=case-1-c1&dataset=pilot"]


def test_a_history_link_names_the_dataset_and_the_tab_keeps_it_in_the_address(engine):  # noqa: F811
    _again(engine)
    at = open_app("admin", query={"history": "case-1-c1", "dataset": AGAIN})
    at.switch_page("views/admin.py").run()
    assert at.text_input(key="admin.history_claim").value == "case-1-c1"
    assert at.selectbox(key="admin.history_dataset.case-1-c1").value == AGAIN  # the link's dataset, not the first
    shown = [m.value.replace("\\", "") for m in at.markdown]
    assert "**Claim case-1-c1 · case case-1 · dataset pilot-again**" in shown
    assert at.query_params["history"] == "case-1-c1" and at.query_params["dataset"] == AGAIN
    at.selectbox(key="admin.history_dataset.case-1-c1").select("pilot").run()
    assert at.query_params["dataset"] == "pilot"  # the address follows the dataset picked
    assert "**Claim case-1-c1 · case case-1 · dataset pilot**" in [m.value.replace("\\", "") for m in at.markdown]


def test_a_link_with_its_dataset_is_kept_through_the_login(engine):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    from tests.test_ui_app import APP, PASSWORDS

    _again(engine)
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params.update({"claim": "case-1-c1", "dataset": AGAIN})
    at.run()  # a new tab starts logged out, on the login page
    at.query_params.clear()  # the browser lands on the main page: only the kept link remains
    at.text_input(key="login.name").input("aoi")
    at.text_input(key="login.password").input(PASSWORDS["aoi"])
    at.form_submit_button[0].click().run()
    assert shown_claim(at) == "case-1-c1" and "Claim text again." in [t.value for t in at.text]
    assert "auth.pending_claim_dataset" not in at.session_state


def test_the_adjudicate_page_names_the_dataset_and_links_the_claim_with_it(engine):  # noqa: F811
    _again(engine)
    with session_scope(engine) as s:
        pilot_claim = s.exec(select(Claim.id).join(Dataset).where(Claim.claim_id == "case-1-c1", Dataset.name == "pilot")).one()
        save_label(s, get_user(s, "ren"), pilot_claim, "contradict")  # aoi said support: a dispute in pilot
    at = open_app("mika")
    assert [t.value for t in at.title] == ["Adjudicate"]
    assert any(c.value.startswith("Dataset pilot · Case case-1") for c in at.caption)
    assert [c.value for c in at.code] == ["/?claim=case-1-c1&dataset=pilot"]
