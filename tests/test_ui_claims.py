"""The Claim review page through AppTest: an admin chooses a dataset and a case, reads the answer
and its claims in order, splits one with a preview of the two parts, merges, edits and drops with a
reason; a labeled claim shows why it cannot be split, merged or dropped and is edited only with
"Keep the labels"; a refusal (no reason) changes nothing; the page is the admins' only, and reads
in Japanese too. Seed: tests/test_claim_review.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import select
from streamlit.testing.v1 import AppTest

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.models import Claim, LabelEvent
from annotator.services.users import get_user, set_locale
from tests.conftest import ON_BOTH, seeded_url
from tests.factories import PASSWORD
from tests.test_claim_review import ANSWER, TEXTS, label, seed

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"


@pytest.fixture
def engine(request, tmp_path, monkeypatch):
    url = seeded_url(request, f"sqlite:///{tmp_path}/a.db", seed)
    engine = init_db(url)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def open_page(name: str = "root") -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    at.switch_page("views/claims.py").run()
    assert not at.exception
    return at


def pk_of(engine, claim_id: str) -> int:  # noqa: ANN001
    with session_scope(engine) as s:
        return s.exec(select(Claim.id).where(Claim.claim_id == claim_id, Claim.dataset_id == 1)).one()


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def claim_ids(engine) -> list[str]:  # noqa: ANN001
    with session_scope(engine) as s:
        return list(s.exec(select(Claim.claim_id).where(Claim.case_pk == 1).order_by(Claim.position)))


@ON_BOTH
def test_the_page_shows_the_answer_and_claims_and_splits_one_with_a_preview(engine):
    at = open_page()
    assert [t.value for t in at.title] == ["Claim review"]
    assert at.selectbox(key="claims.dataset").value == "other"  # datasets by name
    at.selectbox(key="claims.dataset").set_value("pilot").run()
    assert at.selectbox(key="claims.case.pilot").value == "r-1"
    shown = texts(at)
    assert shown[:2] == ["有給休暇は何日？", ANSWER] and shown[2] == TEXTS[0]
    assert "**Claim 2: r-1-c2**" in [m.value for m in at.markdown]
    pk = pk_of(engine, "r-1-c2")
    at.number_input(key=f"claims.at.{pk}").set_value(3).run()
    assert ["申請は", "3日前までに行います。"] == [v for v in texts(at) if v in ("申請は", "3日前までに行います。")]
    at.text_input(key=f"claims.split_reason.{pk}").input("two steps")
    at.button(key=f"claims.split.{pk}").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Split claim r-1-c2 into r-1-c2 and r-1-c2-2."]
    assert claim_ids(engine) == ["r-1-c1", "r-1-c2", "r-1-c2-2", "r-1-c3"]
    assert "3日前までに行います。" in texts(at)  # the page shows the claims as they now are


def test_merge_edit_and_drop_each_need_a_reason_and_write_one_change(engine):
    at = open_page()
    at.selectbox(key="claims.dataset").set_value("pilot").run()
    pk2, pk3 = pk_of(engine, "r-1-c2"), pk_of(engine, "r-1-c3")
    with session_scope(engine) as s:
        events = len(s.exec(select(LabelEvent.id)).all())
    at.button(key=f"claims.drop.{pk3}").click().run()  # no reason
    assert [e.value for e in at.error] == ["give a reason for the change: it is recorded in the claim's history"]
    assert claim_ids(engine) == ["r-1-c1", "r-1-c2", "r-1-c3"]
    at.text_input(key=f"claims.drop_reason.{pk3}").input("not a factual statement")
    at.button(key=f"claims.drop.{pk3}").click().run()
    assert [s.value for s in at.success] == ["Dropped claim r-1-c3."]
    assert claim_ids(engine) == ["r-1-c1", "r-1-c2"]
    at.text_input(key=f"claims.merge_reason.{pk_of(engine, 'r-1-c1')}").input("one statement")
    at.button(key=f"claims.merge.{pk_of(engine, 'r-1-c1')}").click().run()
    assert [s.value for s in at.success] == ["Merged claim r-1-c2 into r-1-c1."]
    assert claim_ids(engine) == ["r-1-c1"]
    pk1 = pk_of(engine, "r-1-c1")
    at.text_area(key=f"claims.text.{pk1}").input("有給休暇は年20日です。")
    at.text_input(key=f"claims.edit_reason.{pk1}").input("only the first fact")
    at.button(key=f"claims.edit.{pk1}").click().run()
    assert [s.value for s in at.success] == ["Saved the new text of claim r-1-c1."]
    with session_scope(engine) as s:
        assert s.get(Claim, pk1).text == "有給休暇は年20日です。"
        assert len(s.exec(select(LabelEvent.id)).all()) == events + 3 + 1  # drop (1), merge (2), edit (1)
    assert pk2 not in (pk1,)


def test_a_labeled_claim_says_why_and_is_edited_only_keeping_its_labels(engine):
    label(engine, "r-1-c1", "alice", "bob")
    at = open_page()
    at.selectbox(key="claims.dataset").set_value("pilot").run()
    pk = pk_of(engine, "r-1-c1")
    captions = [c.value for c in at.caption]
    assert any(c.startswith(":material/block: claim 'r-1-c1' has 2 label(s), which a split would take") for c in captions)
    assert not [b for b in at.button if b.key in (f"claims.split.{pk}", f"claims.merge.{pk}", f"claims.drop.{pk}")]
    at.text_area(key=f"claims.text.{pk}").input("有給休暇は年20日")
    at.text_input(key=f"claims.edit_reason.{pk}").input("trim")
    at.button(key=f"claims.edit.{pk}").click().run()
    assert [e.value for e in at.error][0].startswith("claim 'r-1-c1' has 2 label(s): its text changes only")
    with session_scope(engine) as s:
        assert s.get(Claim, pk).text == TEXTS[0]
    at.checkbox(key=f"claims.keep_labels.{pk}").check()
    at.text_input(key=f"claims.edit_reason.{pk}").input("trim")
    at.button(key=f"claims.edit.{pk}").click().run()
    assert [s.value for s in at.success] == ["Saved the new text of claim r-1-c1. 2 labels are now to review."]


def test_an_admin_who_labels_the_case_is_refused_and_a_labeler_cannot_open_the_page(engine):
    at = open_page("boss")
    at.selectbox(key="claims.dataset").set_value("pilot").run()
    at.selectbox(key="claims.case.pilot").set_value("r-2").run()
    assert [e.value for e in at.error] == [
        "you label case 'r-2' yourself, so another admin must review its claims"]
    labeler = AppTest.from_file(str(APP), default_timeout=30)
    labeler.run()
    labeler.text_input(key="login.name").input("alice")
    labeler.text_input(key="login.password").input(PASSWORD)
    labeler.form_submit_button[0].click().run()
    with pytest.raises(ValueError):
        labeler.switch_page("views/claims.py")


def test_the_page_reads_in_japanese(engine):
    with session_scope(engine) as s:
        set_locale(s, get_user(s, "root"), "ja")
    at = open_page()
    at.selectbox(key="claims.dataset").set_value("pilot").run()
    assert [t.value for t in at.title] == ["主張の見直し"]
    assert "**主張 1: r-1-c1**" in [m.value for m in at.markdown]
    pk = pk_of(engine, "r-1-c3")
    assert ":material/block: 主張「r-1-c3」はケース「r-1」の最後の主張なので、結合する次の主張がありません。その前の主張を結合してください。" in [
        c.value for c in at.caption]
    at.button(key=f"claims.drop.{pk}").click().run()
    assert [e.value for e in at.error] == ["変更の理由を入力してください。理由は主張の履歴に記録されます。"]


def test_a_dataset_with_more_cases_than_the_list_holds_takes_a_typed_case_id(engine, monkeypatch):
    from annotator.services import claim_review

    monkeypatch.setattr(claim_review, "CASE_CHOICES", 2)
    at = open_page()
    at.selectbox(key="claims.dataset").set_value("pilot").run()
    at.text_input(key="claims.case_typed.pilot").input("r-2").run()
    assert not at.exception
    assert texts(at)[:3] == ["Q?", "An answer.", "An answer."]
