"""Claim review (services/claim_review.py) on SQLite and PostgreSQL: an admin splits, merges, edits
and drops the claims an answer was cut into, with a reason, one audit event per claim touched; a
claim that holds work (a label, a decision, a judge's label, a release, a draft) is refused with
what to do instead, and every refusal changes nothing; `edit --update` keeps the labels and makes
them to review through the same function `import --update` uses; the History shows each change in
English and Japanese."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.errors import AmbiguousIdError, InvalidValueError, NotFoundError, PermissionDeniedError
from annotator.models import (
    Adjudication, Case, Claim, ClaimPassage, Dataset, Draft, JudgeLabel, JudgeRun, Label, LabelEvent, Passage, utcnow,
)
from annotator.services import claim_review as review
from annotator.services import claim_content
from annotator.services.access import OPERATOR
from annotator.services.history import claim_history_view
from annotator.services.labeling import assign_cases, save_label
from annotator.services.states import claim_states
from annotator.services.users import add_user, get_user
from annotator.workflow import State
from tests.factories import PASSWORD

ANSWER = "有給休暇は年20日です。申請は3日前までに行います。\n- ご不明点はお問い合わせください。"
TEXTS = ("有給休暇は年20日です。", "申請は3日前までに行います。", "ご不明点はお問い合わせください。")


def seed(session) -> None:  # noqa: ANN001 - a Session
    """Dataset "pilot": case r-1 (ANSWER, three claims r-1-c1..c3 with their spans, each shown with
    passages p1 and p2) and case r-2 (one claim, no span). Dataset "other": a claim r-1-c1 too.
    Users: root (admin), alice and bob (labelers), boss (admin and labeler, assigned r-2)."""
    for name in ("pilot", "other"):
        dataset = Dataset(name=name, source_format="test")
        session.add(dataset)
        session.flush()
        case = Case(dataset_id=dataset.id, case_id="r-1", position=0, question="有給休暇は何日？", answer=ANSWER,
                    slice="normal", split="dev", meta={})
        session.add(case)
        session.flush()
        passages = [Passage(dataset_id=dataset.id, passage_id=f"p{k}", doc_id="d", version="v1", title=f"T{k}",
                            text=f"根拠 {k}") for k in (1, 2, 3)]
        session.add_all(passages)
        session.flush()
        texts = TEXTS if name == "pilot" else TEXTS[:1]
        for position, text in enumerate(texts):
            start = ANSWER.find(text)
            claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=f"r-1-c{position + 1}", position=position,
                          text=text, span_start=start, span_end=start + len(text))
            session.add(claim)
            session.flush()
            session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=p.id, position=k) for k, p in enumerate(passages[:2])])
        if name == "pilot":
            other = Case(dataset_id=dataset.id, case_id="r-2", position=1, question="Q?", answer="An answer.",
                         slice="normal", split="dev", meta={})
            session.add(other)
            session.flush()
            claim = Claim(dataset_id=dataset.id, case_pk=other.id, claim_id="r-2-c1", position=0, text="An answer.")
            session.add(claim)
            session.flush()
            session.add(ClaimPassage(claim_pk=claim.id, passage_pk=passages[2].id, position=0))
    for name, roles in (("root", ["admin"]), ("alice", ["labeler"]), ("bob", ["labeler"]), ("boss", ["admin", "labeler"])):
        add_user(session, OPERATOR, name, roles, PASSWORD)
    r2 = session.exec(select(Case.id).where(Case.case_id == "r-2")).one()
    assign_cases(session, OPERATOR, [r2], ["alice", "boss"])


@pytest.fixture
def db(any_engine):
    with session_scope(any_engine) as session:
        seed(session)
    return any_engine


def state(engine) -> dict:  # noqa: ANN001
    """Everything a review could write: claims, passage links, labels, drafts, events."""
    with session_scope(engine) as s:
        return {
            "claims": sorted(tuple(row) for row in s.exec(select(Claim.id, Claim.claim_id, Claim.case_pk, Claim.position,
                                                                  Claim.text, Claim.span_start, Claim.span_end,
                                                                  Claim.updated_at))),
            "links": sorted(tuple(row) for row in s.exec(select(ClaimPassage.claim_pk, ClaimPassage.passage_pk,
                                                                 ClaimPassage.position))),
            "labels": sorted(tuple(row) for row in s.exec(select(Label.id, Label.claim_pk, Label.value, Label.revision))),
            "drafts": sorted(tuple(row) for row in s.exec(select(Draft.id, Draft.claim_pk))),
            "events": len(s.exec(select(LabelEvent.id)).all()),
        }


def claims_of(engine, case_id: str = "r-1", dataset: str = "pilot") -> list[tuple]:  # noqa: ANN001
    """(claim_id, position, text, span, passage ids) of the case's claims, in order."""
    with session_scope(engine) as s:
        view = review.case_review(s, OPERATOR, case_id, dataset)
    return [(c.claim_id, c.position, c.text, c.span, c.passage_ids) for c in view.claims]


def span_of(text: str) -> tuple[int, int]:
    return ANSWER.find(text), ANSWER.find(text) + len(text)


def label(engine, claim_id: str, *who: str) -> None:  # noqa: ANN001
    """Assign r-1 to `who` and save a support label of each on the claim."""
    with session_scope(engine) as s:
        case = s.exec(select(Case).join(Dataset).where(Case.case_id == "r-1", Dataset.name == "pilot")).one()
        assign_cases(s, OPERATOR, [case.id], list(who))
        pk = s.exec(select(Claim.id).where(Claim.claim_id == claim_id, Claim.dataset_id == case.dataset_id)).one()
        for name in who:
            save_label(s, get_user(s, name), pk, "support")


def test_the_review_lists_a_cases_claims_in_order_with_spans_labels_and_what_is_refused(db):
    label(db, "r-1-c1", "alice")
    with session_scope(db) as s:
        view = review.case_review(s, get_user(s, "root"), "r-1", "pilot")
    assert (view.dataset, view.case_id, view.answer) == ("pilot", "r-1", ANSWER)
    assert [(c.claim_id, c.position, c.text, c.span, c.labels, c.passage_ids) for c in view.claims] == [
        ("r-1-c1", 0, TEXTS[0], span_of(TEXTS[0]), 1, ("p1", "p2")),
        ("r-1-c2", 1, TEXTS[1], span_of(TEXTS[1]), 0, ("p1", "p2")),
        ("r-1-c3", 2, TEXTS[2], span_of(TEXTS[2]), 0, ("p1", "p2"))]
    first, second, last = view.claims
    assert set(first.refusals) == {"split", "merge", "edit", "drop"}
    assert first.refusals["edit"].key == "msg.review.labeled.edit"
    assert second.refusals == {}  # merging c2 with c3 is fine: neither is labeled
    assert set(last.refusals) == {"merge"} and last.refusals["merge"].key == "msg.review.no_next"


def test_a_split_keeps_the_first_part_under_the_id_and_puts_the_second_right_after_it(db):
    at = len("申請は")
    with session_scope(db) as s:
        done = review.split_claim(s, get_user(s, "root"), "r-1-c2", at, reason="two steps", dataset="pilot")
    assert (done.operation, done.reason, done.changed) == ("split", "two steps", True)
    assert [(c.claim_id, c.text) for c in done.before] == [("r-1-c2", TEXTS[1])]
    assert [(c.claim_id, c.position, c.text, c.span) for c in done.after] == [
        ("r-1-c2", 1, "申請は", span_of("申請は")), ("r-1-c2-2", 2, "3日前までに行います。", span_of("3日前までに行います。"))]
    assert claims_of(db) == [
        ("r-1-c1", 0, TEXTS[0], span_of(TEXTS[0]), ("p1", "p2")),
        ("r-1-c2", 1, "申請は", span_of("申請は"), ("p1", "p2")),
        ("r-1-c2-2", 2, "3日前までに行います。", span_of("3日前までに行います。"), ("p1", "p2")),
        ("r-1-c3", 3, TEXTS[2], span_of(TEXTS[2]), ("p1", "p2"))]
    with session_scope(db) as s:  # a second split of the same claim takes the next free id
        again = review.split_claim(s, OPERATOR, "r-1-c2", 1, reason="once more", dataset="pilot")
    assert [c.claim_id for c in again.after] == ["r-1-c2", "r-1-c2-3"]
    assert [c[0] for c in claims_of(db)] == ["r-1-c1", "r-1-c2", "r-1-c2-3", "r-1-c2-2", "r-1-c3"]
    with session_scope(db) as s:
        root = get_user(s, "root").id
        events = s.exec(select(LabelEvent).where(LabelEvent.entity == "claim").order_by(LabelEvent.id)).all()
        first, made = events[0], events[1]
        assert (first.action, first.actor_pk, first.before["text"], first.after["text"], first.after["new_claim"],
                first.after["reason"]) == ("update", root, TEXTS[1], "申請は", "r-1-c2-2", "two steps")
        assert (made.action, made.after["claim_id"], made.after["text"], made.after["split_from"]) == (
            "create", "r-1-c2-2", "3日前までに行います。", "r-1-c2")
        assert made.claim_pk == s.exec(select(Claim.id).where(Claim.claim_id == "r-1-c2-2")).one()


def test_a_claim_without_a_span_splits_into_parts_without_spans_stripped(db):
    with session_scope(db) as s:
        done = review.split_claim(s, OPERATOR, "r-2-c1", 3, reason="r")
    assert [(c.claim_id, c.text, c.span, c.passage_ids) for c in done.after] == [
        ("r-2-c1", "An", None, ("p3",)), ("r-2-c1-2", "answer.", None, ("p3",))]


@pytest.mark.parametrize(("at", "key"), [(0, "msg.review.bad_offset"), (len(TEXTS[0]), "msg.review.bad_offset"),
                                         (-1, "msg.review.bad_offset"), (99, "msg.review.bad_offset")])
def test_a_split_outside_the_text_is_refused_and_changes_nothing(db, at, key):
    before = state(db)
    with pytest.raises(InvalidValueError) as refused, session_scope(db) as s:
        review.split_claim(s, OPERATOR, "r-1-c1", at, reason="r", dataset="pilot")
    assert refused.value.key == key
    assert state(db) == before


def test_a_split_leaving_a_blank_part_or_inside_a_character_is_refused(db):
    with session_scope(db) as s:
        review.edit_claim(s, OPERATOR, "r-2-c1", "OK \U0001F44D\U0001F3FD yes.", reason="emoji")
    before = state(db)
    with pytest.raises(InvalidValueError) as inside, session_scope(db) as s:
        review.split_claim(s, OPERATOR, "r-2-c1", 4, reason="r")  # between the thumb and its skin tone
    assert inside.value.key == "msg.review.inside_character"
    assert "give 3 or 5 instead" in str(inside.value)
    assert state(db) == before
    with session_scope(db) as s:  # a text stored with white space around it (a file may give one)
        claim = s.exec(select(Claim).where(Claim.claim_id == "r-2-c1")).one()
        claim.text = "An answer.   "
        s.add(claim)
    before = state(db)
    with pytest.raises(InvalidValueError) as blank, session_scope(db) as s:
        review.split_claim(s, OPERATOR, "r-2-c1", 11, reason="r")
    assert blank.value.key == "msg.review.bad_offset"
    assert str(blank.value) == ("offset 11 does not cut claim 'r-2-c1' in two: give an offset from 1 to 12 (code "
                                "points into its text, which is 13 long) with text on both sides of it")
    assert state(db) == before
    with session_scope(db) as s:  # invisible characters after the cut: a blank part all the same
        claim = s.exec(select(Claim).where(Claim.claim_id == "r-2-c1")).one()
        claim.text = "An answer.\u200b\u2060"
        s.add(claim)
    before = state(db)
    with pytest.raises(InvalidValueError) as blank, session_scope(db) as s:
        review.split_claim(s, OPERATOR, "r-2-c1", 10, reason="r")
    assert blank.value.key == "msg.review.bad_offset"
    for text in (" ", "\u200b", "\u200b\u200f \ufeff"):
        with pytest.raises(InvalidValueError) as blank, session_scope(db) as s:
            review.edit_claim(s, OPERATOR, "r-2-c1", text, reason="r")
        assert blank.value.key == "msg.review.text_needed"
    assert state(db) == before


def test_the_split_of_text_in_two_non_blank_parts_at_a_space_works(db):
    with session_scope(db) as s:
        review.edit_claim(s, OPERATOR, "r-2-c1", "A  b", reason="spaces")
        done = review.split_claim(s, OPERATOR, "r-2-c1", 2, reason="r")
    assert [c.text for c in done.after] == ["A", "b"]


def test_a_merge_joins_the_answers_text_between_known_spans(db):
    with session_scope(db) as s:
        done = review.merge_claims(s, get_user(s, "root"), "r-1-c2", reason="one statement", dataset="pilot")
    merged = "申請は3日前までに行います。\n- ご不明点はお問い合わせください。"
    assert [(c.claim_id, c.text) for c in done.before] == [("r-1-c2", TEXTS[1]), ("r-1-c3", TEXTS[2])]
    assert [(c.claim_id, c.position, c.text, c.span) for c in done.after] == [
        ("r-1-c2", 1, merged, (span_of(TEXTS[1])[0], span_of(TEXTS[2])[1]))]
    assert ANSWER[done.after[0].span[0]:done.after[0].span[1]] == merged
    assert [c[0] for c in claims_of(db)] == ["r-1-c1", "r-1-c2"]
    with session_scope(db) as s:
        gone = s.exec(select(LabelEvent).where(LabelEvent.action == "delete")).one()
        assert (gone.entity, gone.before["claim_id"], gone.before["text"], gone.after["merged_into"]) == (
            "claim", "r-1-c3", TEXTS[2], "r-1-c2")
        assert s.exec(select(Claim).where(Claim.claim_id == "r-1-c3", Claim.dataset_id == 1)).first() is None


def test_a_merge_without_spans_joins_with_one_space_and_the_passages_of_both(db):
    with session_scope(db) as s:
        review.split_claim(s, OPERATOR, "r-2-c1", 3, reason="r")
        p1 = s.exec(select(Passage.id).where(Passage.passage_id == "p1", Passage.dataset_id == 1)).one()
        second = s.exec(select(Claim.id).where(Claim.claim_id == "r-2-c1-2")).one()
        s.add(ClaimPassage(claim_pk=second, passage_pk=p1, position=1))
    with session_scope(db) as s:
        review.edit_claim(s, OPERATOR, "r-2-c1", "Ans", reason="no span now")
        done = review.merge_claims(s, OPERATOR, "r-2-c1", reason="back")
    assert [(c.text, c.span, c.passage_ids) for c in done.after] == [("Ans answer.", None, ("p3", "p1"))]


def test_merging_the_last_claim_or_with_a_labeled_next_claim_is_refused_naming_it(db):
    label(db, "r-1-c3", "alice")
    before = state(db)
    with pytest.raises(InvalidValueError) as last, session_scope(db) as s:
        review.merge_claims(s, OPERATOR, "r-1-c3", reason="r", dataset="pilot")
    assert last.value.key == "msg.review.no_next"
    with pytest.raises(InvalidValueError) as labeled, session_scope(db) as s:
        review.merge_claims(s, OPERATOR, "r-1-c2", reason="r", dataset="pilot")
    assert labeled.value.key == "msg.review.labeled.merge" and labeled.value.fields["claim_id"] == "r-1-c3"
    assert "claims edit r-1-c3 --text TEXT --reason TEXT --update" in str(labeled.value)
    assert state(db) == before


def test_an_edit_finds_the_new_text_in_the_answer_or_keeps_no_span(db):
    events = state(db)["events"]
    with session_scope(db) as s:
        found = review.edit_claim(s, OPERATOR, "r-1-c1", " 有給休暇は年20日 ", reason="trim", dataset="pilot")
        lost = review.edit_claim(s, OPERATOR, "r-1-c2", "申請は前日まで。", reason="r", dataset="pilot")
    assert [(c.text, c.span) for c in found.after] == [("有給休暇は年20日", (0, 9))]
    assert [(c.text, c.span) for c in lost.after] == [("申請は前日まで。", None)]
    with session_scope(db) as s:
        same = review.edit_claim(s, OPERATOR, "r-1-c1", "有給休暇は年20日", reason="again", dataset="pilot")
    assert same.changed is False
    assert state(db)["events"] == events + 2  # the two edits; the same text again wrote nothing


def test_an_edit_of_a_labeled_claim_is_refused_and_with_update_keeps_the_labels_to_review(db):
    label(db, "r-1-c1", "alice", "bob")
    before = state(db)
    with pytest.raises(InvalidValueError) as refused, session_scope(db) as s:
        review.edit_claim(s, get_user(s, "root"), "r-1-c1", "有給休暇は年20日", reason="r", dataset="pilot")
    assert refused.value.key == "msg.review.labeled.edit"
    assert "claims edit r-1-c1 --text TEXT --reason TEXT --update" in str(refused.value)
    assert state(db) == before
    with session_scope(db) as s:
        pk = s.exec(select(Claim.id).where(Claim.claim_id == "r-1-c1", Claim.dataset_id == 1)).one()
        assert claim_states(s, claim_pks=[pk])[pk] is State.AGREED
        done = review.edit_claim(s, get_user(s, "root"), "r-1-c1", "有給休暇は年20日", reason="r", update=True,
                                 dataset="pilot")
    assert (done.changed, done.labels_to_review) == (True, 2)
    after = state(db)
    assert after["labels"] == before["labels"]  # kept as they were
    with session_scope(db) as s:
        assert claim_states(s, claim_pks=[pk])[pk] is State.STALE
        event = s.exec(select(LabelEvent).where(LabelEvent.entity == "claim")).one()
        assert (event.before["text"], event.after["text"], event.after["reason"]) == (TEXTS[0], "有給休暇は年20日", "r")


def test_edit_update_and_import_update_write_through_the_same_function(db, monkeypatch):
    calls = []
    original = claim_content.change_claim_content
    monkeypatch.setattr(review, "change_claim_content", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    with session_scope(db) as s:
        review.edit_claim(s, OPERATOR, "r-1-c1", "新しい本文", reason="r", update=True, dataset="pilot")
    assert len(calls) == 1
    from annotator.services.imports import cases

    assert cases.change_claim_content is claim_content.change_claim_content


def test_a_drop_removes_the_claim_and_its_links_and_the_case_history_shows_it(db):
    with session_scope(db) as s:
        pk = s.exec(select(Claim.id).where(Claim.claim_id == "r-1-c3", Claim.dataset_id == 1)).one()
        done = review.drop_claim(s, get_user(s, "root"), "r-1-c3", reason="not a factual statement", dataset="pilot")
    assert ([c.claim_id for c in done.before], done.after) == (["r-1-c3"], ())
    assert [c[0] for c in claims_of(db)] == ["r-1-c1", "r-1-c2"]
    with session_scope(db) as s:
        assert s.exec(select(ClaimPassage).where(ClaimPassage.claim_pk == pk)).first() is None
        rows = claim_history_view(s, OPERATOR, "r-1-c1", "pilot").rows
    (row,) = [row for row in rows if row.entity == "case"]
    assert row.what == "claim dropped from the case by an admin"
    assert row.who == "root"
    assert row.change.startswith("claim: r-1-c3; ")
    assert '"ご不明点はお問い合わせください。" -> -' in row.change and row.change.endswith("reason: not a factual statement")


def test_dropping_the_only_claim_of_a_case_or_a_labeled_claim_is_refused(db):
    label(db, "r-1-c2", "alice")
    before = state(db)
    with pytest.raises(InvalidValueError) as only, session_scope(db) as s:
        review.drop_claim(s, OPERATOR, "r-2-c1", reason="r")
    assert only.value.key == "msg.review.last_claim"
    with pytest.raises(InvalidValueError) as labeled, session_scope(db) as s:
        review.drop_claim(s, OPERATOR, "r-1-c2", reason="r", dataset="pilot")
    assert labeled.value.key == "msg.review.labeled.drop"
    assert state(db) == before


@pytest.mark.parametrize("operation", ["split", "merge", "edit", "drop"])
def test_every_change_needs_a_reason_and_a_known_claim_and_refuses_a_labeler_and_an_admin_who_labels_the_case(db, operation):
    def call(s, who, claim_id="r-1-c1", reason="r", dataset="pilot"):  # noqa: ANN001, ANN202
        if operation == "split":
            return review.split_claim(s, who, claim_id, 2, reason=reason, dataset=dataset)
        if operation == "merge":
            return review.merge_claims(s, who, claim_id, reason=reason, dataset=dataset)
        if operation == "edit":
            return review.edit_claim(s, who, claim_id, "新しい本文", reason=reason, dataset=dataset)
        return review.drop_claim(s, who, claim_id, reason=reason, dataset=dataset)

    before = state(db)
    for reason in ("", "   \n", "\u200b", "\ufeff \u202e\u2069"):  # invisible characters only are blank too
        with pytest.raises(InvalidValueError) as blank, session_scope(db) as s:
            call(s, OPERATOR, reason=reason)
        assert blank.value.key == "msg.review.reason_needed"
    with pytest.raises(InvalidValueError) as long, session_scope(db) as s:
        call(s, OPERATOR, reason="x" * 100_001)
    assert long.value.key == "msg.text_too_long"
    with pytest.raises(NotFoundError), session_scope(db) as s:
        call(s, OPERATOR, claim_id="r-9-c1")
    with pytest.raises(AmbiguousIdError), session_scope(db) as s:
        call(s, OPERATOR, dataset=None)
    with pytest.raises(NotFoundError), session_scope(db) as s:
        call(s, OPERATOR, dataset="nowhere")
    with pytest.raises(PermissionDeniedError), session_scope(db) as s:
        call(s, get_user(s, "alice"))
    with pytest.raises(PermissionDeniedError) as own, session_scope(db) as s:
        call(s, get_user(s, "boss"), claim_id="r-2-c1", dataset=None)
    assert own.value.key == "msg.review.own_case"
    assert state(db) == before


def test_a_draft_a_decision_and_a_judges_label_each_stop_a_change(db):
    with session_scope(db) as s:
        pk = {claim_id: s.exec(select(Claim.id).where(Claim.claim_id == claim_id, Claim.dataset_id == 1)).one()
              for claim_id in ("r-1-c1", "r-1-c2", "r-1-c3")}
        alice = get_user(s, "alice").id
        s.add(Draft(labeler_pk=alice, claim_pk=pk["r-1-c1"], rationale="typing..."))
        s.add(Draft(labeler_pk=alice, claim_pk=pk["r-1-c3"]))  # an empty draft holds nothing to lose
        s.add(Adjudication(claim_pk=pk["r-1-c2"], adjudicator_pk=get_user(s, "root").id, value="support"))
        run = JudgeRun(name="judge-1")
        s.add(run)
        s.flush()
        s.add(JudgeLabel(run_pk=run.id, claim_pk=pk["r-1-c3"], value="support"))
    before = state(db)
    for claim_id, key in (("r-1-c1", "msg.review.draft"), ("r-1-c2", "msg.review.decided"), ("r-1-c3", "msg.review.judged")):
        with pytest.raises(InvalidValueError) as refused, session_scope(db) as s:
            review.edit_claim(s, OPERATOR, claim_id, "別の本文", reason="r", dataset="pilot")
        assert refused.value.key == key, claim_id
        assert claim_id in str(refused.value)
    assert "judge-1" in str(refused.value)
    assert state(db) == before


def test_the_history_shows_each_change_in_english_and_japanese(db):
    from annotator.ui.i18n import message_text, use_language

    with session_scope(db) as s:
        review.split_claim(s, get_user(s, "root"), "r-1-c2", 3, reason="two steps", dataset="pilot")
        review.merge_claims(s, OPERATOR, "r-1-c2", reason="back again", dataset="pilot")
        review.edit_claim(s, OPERATOR, "r-1-c2", "申請は3日前まで。", reason="shorter", dataset="pilot")
        review.split_claim(s, OPERATOR, "r-1-c1", 2, reason="r", dataset="pilot")
        rows = claim_history_view(s, OPERATOR, "r-1-c2", "pilot").rows
        made = claim_history_view(s, OPERATOR, "r-1-c1-2", "pilot").rows
    assert [row.what for row in rows] == ["claim split by an admin", "claim merged with the next one by an admin",
                                          "claim text edited by an admin"]
    assert rows[0].change == ('text: "申請は3日前までに行います。" -> "申請は"; span in the answer: 12, 26 -> 12, 15; '
                              'new claim: r-1-c2-2; reason: two steps')
    assert "merged claim: r-1-c2-2" in rows[1].change
    assert [row.what for row in made] == ["claim made by a split"]
    assert "split from: r-1-c1" in made[0].change
    with use_language("ja"):
        assert [message_text(row.what_message) for row in rows] == [
            "管理者による主張の分割", "管理者による次の主張との結合", "管理者による主張の本文の編集"]
        assert "新しい主張: r-1-c2-2" in "; ".join(message_text(part) for part in rows[0].change_messages)


def test_an_admin_sees_the_claims_of_a_case_they_do_not_label_and_the_labels_it_holds(db):
    with session_scope(db) as s:
        with pytest.raises(PermissionDeniedError):
            review.case_review(s, get_user(s, "boss"), "r-2")
        assert review.case_review(s, get_user(s, "boss"), "r-1", "pilot").claims[0].labels == 0
        assert review.review_case_ids(s, get_user(s, "root"), "pilot") == ["r-1", "r-2"]
        with pytest.raises(PermissionDeniedError):
            review.review_case_ids(s, get_user(s, "alice"), "pilot")


def test_a_claim_edited_then_labeled_keeps_its_new_content_for_the_labeler(db):
    with session_scope(db) as s:
        review.edit_claim(s, OPERATOR, "r-2-c1", "An answer, reviewed.", reason="r")
        pk = s.exec(select(Claim.id).where(Claim.claim_id == "r-2-c1")).one()
        save_label(s, get_user(s, "alice"), pk, "support")
        assert claim_states(s, claim_pks=[pk])[pk] is State.SINGLE
        assert s.get(Claim, pk).updated_at <= utcnow()
