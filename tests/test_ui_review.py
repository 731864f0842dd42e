"""The Label and Adjudicate pages through AppTest: the case's RAG fields (required / forbidden
evidence, expected behaviour, principal, corpus release) are shown, required and forbidden
passages are named in words next to them; a label to review after `import --update` comes back
with a notice and is saved again with the same value. Seed and helpers: tests/test_ui_app.py.
"""

from __future__ import annotations

from sqlmodel import delete, select

from annotator.db import session_scope
from annotator.models import Case, Claim, ClaimPassage, Label, utcnow
from annotator.services.audit import record_event
from annotator.services.states import claim_states
from annotator.workflow import State
from tests.conftest import decision_button, label_button
from tests.test_ui_app import _label_both, _claim_pk, engine, open_app, shown_claim  # noqa: F401 - engine: a fixture

META = {"required_evidence_ids": ["case-1-p1"], "forbidden_evidence_ids": ["case-1-p2"],
        "expected_behavior": "answer_with_citation", "principal": {"role": "contractor", "dept": "sales"},
        "corpus_release": "2026-04-r2"}

DETAILS = ["**Required evidence**: case-1-p1", "**Forbidden evidence**: case-1-p2",
           "**Expected behaviour**: answer_with_citation",
           '**Principal (who asks)**: \\{"dept": "sales", "role": "contractor"\\}',
           "**Corpus release**: 2026-04-r2"]


def _set_meta(engine) -> None:  # noqa: ANN001, F811
    with session_scope(engine) as session:
        case = session.exec(select(Case).where(Case.case_id == "case-1")).one()
        case.meta = META
        session.add(case)


def case_line(at) -> str:  # noqa: ANN001
    """The case's one line above the question: id, slice, split and its RAG fields."""
    (line,) = [c.value for c in at.caption if c.value.startswith("Case ")]
    return line


def _roles_shown(at) -> list[str]:  # noqa: ANN001
    return [m.value for m in at.markdown if m.value.startswith(":material/check_circle:") or m.value.startswith(":material/block:")]


def test_the_label_page_shows_the_cases_rag_fields_and_marks_required_and_forbidden_passages(engine):  # noqa: F811
    _set_meta(engine)
    at = open_app("aoi")
    assert shown_claim(at) == "case-1-c1"
    assert case_line(at) == "Case case-1 · slice normal · split dev · " + " · ".join(DETAILS)  # one line
    assert _roles_shown(at) == [":material/check_circle: **Required evidence for this case**",
                                ":material/block: **Forbidden evidence for this case: the answer must not use it**"]


def test_a_case_without_rag_fields_shows_no_details(engine):  # noqa: F811
    at = open_app("aoi")
    assert case_line(at) == "Case case-1 · slice normal · split dev"
    assert _roles_shown(at) == []


def test_the_adjudicator_sees_the_cases_rag_fields(engine):  # noqa: F811
    _label_both(engine)
    _set_meta(engine)
    at = open_app("mika")
    assert shown_claim(at) == "case-1-c2"
    assert case_line(at) == "Case case-1 · slice normal · split dev · " + " · ".join(DETAILS)
    assert len(_roles_shown(at)) == 2


def test_a_label_to_review_comes_back_with_a_notice_and_the_same_value_clears_it(engine):  # noqa: F811
    _label_both(engine)
    pk = _claim_pk(engine, "case-1-c1")
    with session_scope(engine) as session:  # what `import --update` of the claim's text does
        claim = session.get(Claim, pk)
        before = {"case_id": "case-1", "text": claim.text, "passage_ids": ["case-1-p1", "case-1-p2"]}
        claim.text, claim.updated_at = "Claim text 1.1, revised.", utcnow()
        session.add(claim)
        record_event(session, actor_pk=None, entity="claim", entity_pk=pk, claim_pk=pk, action="update",
                     before=before, after={**before, "text": claim.text})
    with session_scope(engine) as session:
        assert claim_states(session, claim_pks=[pk])[pk] is State.STALE
    at = open_app("aoi")
    assert shown_claim(at) == "case-1-c1"
    assert [w.value for w in at.warning] == [
        "This claim changed after you labeled it (text); review your label: your saved label is filled in below, "
        "save it again (changed or not)."]
    assert label_button(at, "support").proto.type == "primary"  # the saved value, prefilled
    label_button(at, "support").click().run()
    assert not at.exception and [e.value for e in at.error] == []
    assert [t.value for t in at.toast] == ["Saved support on claim case-1-c1."]
    with session_scope(engine) as session:
        revisions = dict(session.exec(select(Label.labeler_pk, Label.revision).where(Label.claim_pk == pk)).all())
        assert sorted(revisions.values()) == [1, 2]
        assert claim_states(session, claim_pks=[pk])[pk] is State.STALE  # ren still to review
    at = open_app("ren")
    assert shown_claim(at) == "case-1-c1"
    label_button(at, "support").click().run()
    with session_scope(engine) as session:
        assert claim_states(session, claim_pks=[pk])[pk] is State.AGREED


def _change_text(engine, pk: int, text: str) -> None:  # noqa: ANN001, F811 - what `import --update` of the claim's text does
    with session_scope(engine) as session:
        claim = session.get(Claim, pk)
        before = {"case_id": "case-1", "text": claim.text, "passage_ids": ["case-1-p1", "case-1-p2"]}
        claim.text, claim.updated_at = text, utcnow()
        session.add(claim)
        record_event(session, actor_pk=None, entity="claim", entity_pk=pk, claim_pk=pk, action="update",
                     before=before, after={**before, "text": text})


def test_a_label_pressed_on_a_claim_that_changed_after_the_page_showed_it_is_refused_then_saves_once_read(engine):  # noqa: F811
    at = open_app("aoi")
    assert shown_claim(at) == "case-1-c1"
    pk = _claim_pk(engine, "case-1-c1")
    _change_text(engine, pk, "Claim text 1.1, changed while aoi read it.")
    label_button(at, "support").click().run()
    assert [e.value for e in at.error] == [
        "this claim's text or passages changed after you opened it (an import with --update); your input is kept: "
        "read the claim again, then save"]
    assert not any("saved elsewhere" in w.value for w in at.warning)  # not the other-tab notice: nothing was
    with session_scope(engine) as session:
        assert session.exec(select(Label).where(Label.claim_pk == pk)).all() == []
    assert shown_claim(at) == "case-1-c1"  # the new text is on screen now
    label_button(at, "support").click().run()
    assert [t.value for t in at.toast] == ["Saved support on claim case-1-c1."]


def test_a_decision_pressed_on_a_claim_that_changed_after_the_page_showed_it_is_refused(engine):  # noqa: F811
    _label_both(engine)
    at = open_app("mika")
    assert shown_claim(at) == "case-1-c2"
    pk = _claim_pk(engine, "case-1-c2")
    _change_text(engine, pk, "Claim text 1.2, changed while mika read it.")
    decision_button(at, "support").click().run()
    assert any("changed after you opened it" in e.value for e in at.error)
    with session_scope(engine) as session:
        assert claim_states(session, claim_pks=[pk])[pk] is not State.ADJUDICATED


def test_a_citation_of_a_passage_the_claim_no_longer_shows_is_named_before_a_save_drops_it(engine):  # noqa: F811
    at = open_app("aoi")
    at.checkbox(key=[c.key for c in at.checkbox if c.key.endswith(".case-1-p2")][0]).check().run()
    label_button(at, "support").click().run()
    pk = _claim_pk(engine, "case-1-c1")
    with session_scope(engine) as session:  # what `import --update` of the claim's passages does
        claim = session.get(Claim, pk)
        claim.updated_at = utcnow()
        session.exec(delete(ClaimPassage).where(ClaimPassage.claim_pk == pk, ClaimPassage.position == 1))
        session.add(claim)
        record_event(session, actor_pk=None, entity="claim", entity_pk=pk, claim_pk=pk, action="update",
                     before={"passage_ids": ["case-1-p1", "case-1-p2"]}, after={"passage_ids": ["case-1-p1"]})
    at = open_app("aoi")
    assert shown_claim(at) == "case-1-c1"
    assert ("Your saved label cites case-1-p2, which this claim no longer shows: saving drops that citation. "
            "Cite the passages shown that justify your label.") in [w.value for w in at.warning]
