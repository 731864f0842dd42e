"""Keyboard-first labeling and the reading aids on the Label and Adjudicate pages, driven through
AppTest: the keys each button carries, the cite buttons that flip the checkbox's own state (and
so the draft and the saved label), the toast after a save, the list of keys on the page, the
claim's words marked in each passage, escaped passage markup, the scrolling box of a long passage,
and the "Old version" mark. (The keys pressed in a real browser: test_e2e_browser.py.)

Each test gets a fresh migrated SQLite database: case-1 (Japanese) shows an old and a new version
of the travel rule and a long memo full of markup; case-2 (English) two versions v2 and v10 of
one document; case-3 a passage its metadata names as outdated. All three are assigned to aoi
and ren; mika adjudicates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import select
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.models import Case, Claim, ClaimPassage, Dataset, Label, Passage
from annotator.services import drafts
from annotator.services.access import OPERATOR
from annotator.services.labeling import assign_cases, save_label
from annotator.services.users import add_user, get_user
from annotator.ui.components import PASSAGE_HEIGHT, plain_markdown
from tests.conftest import label_button

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"
PASSWORD = "keyboard-pass-1234"
MEMO_TITLE = "<b>Memo</b> **loud** [x](http://evil.example)"
MEMO_TEXT = ("<script>alert('x')</script> **not bold** [link](http://evil.example) <img src=x onerror=alert(1)> "
             "日当の説明。\n" + "".join(f"行 {n} の補足。\n" for n in range(1, 21)))

CASES = {  # case_id -> (slice, metadata, passages (id, doc, version, title, text), claims (id, text))
    "case-1": ("updated_document", {}, [
        ("p-old", "ryohi", "2025-04", "出張旅費規程 第８条", "国内出張の日当は１日2,000円とする。"),
        ("p-new", "ryohi", "2026-04", "出張旅費規程 第８条", "国内出張の日当は１日2,500円とする。"),
        ("p-memo", "memo", "v1", MEMO_TITLE, MEMO_TEXT),
    ], [("case-1-c1", "国内出張の日当は１日2,000円である。"), ("case-1-c2", "宿泊費は実費で支給される。")]),
    "case-2": ("normal", {}, [
        ("e-v2", "expenses", "v2", "Expense policy", "Expense claims must be filed by the 10th of the following month."),
        ("e-v10", "expenses", "v10", "Expense policy", "Expense claims must be filed by the 5th of the following month."),
    ], [("case-2-c1", "Expenses are filed by the 10th of the next month.")]),
    "case-3": ("normal", {"outdated_passage_ids": ["m-1"]}, [
        ("m-1", "remote", "", "Remote work", "Remote work is allowed two days a week."),
    ], [("case-3-c1", "Remote work is allowed three days a week.")]),
    "case-4": ("normal", {}, [  # the document's newer versions are shown with case-2's claim only
        ("e-v1", "expenses", "v1", "Expense policy", "Expense claims must be filed by the 20th of the following month."),
    ], [("case-4-c1", "Expenses are filed by the 20th of the next month.")]),
}


def _seed(session) -> None:  # noqa: ANN001 - Session
    dataset = Dataset(name="pilot", source_format="test")
    session.add(dataset)
    session.flush()
    case_pks = []
    for position, (case_id, (slice_, meta, passages, claims)) in enumerate(CASES.items(), start=1):
        case = Case(dataset_id=dataset.id, case_id=case_id, position=position, question=f"Question of {case_id}?",
                    answer=f"Answer of {case_id}.", slice=slice_, split="dev", meta=meta)
        session.add(case)
        session.flush()
        case_pks.append(case.id)
        rows = [Passage(dataset_id=dataset.id, passage_id=pid, doc_id=doc, version=version, title=title, text=text)
                for pid, doc, version, title, text in passages]
        session.add_all(rows)
        session.flush()
        for j, (claim_id, text) in enumerate(claims, start=1):
            claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=claim_id, position=j, text=text)
            session.add(claim)
            session.flush()
            session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=p.id, position=k) for k, p in enumerate(rows)])
    for name, roles in (("aoi", ["labeler"]), ("ren", ["labeler"]), ("mika", ["adjudicator"])):
        add_user(session, OPERATOR, name, roles, PASSWORD)
    assign_cases(session, OPERATOR, case_pks, ["aoi", "ren"])


@pytest.fixture
def engine(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/k.db"
    engine = init_db(url)
    with session_scope(engine) as session:
        _seed(session)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)  # tests click faster than people
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def _pk(engine, claim_id: str) -> int:  # noqa: ANN001
    with session_scope(engine) as session:
        return session.exec(select(Claim.id).where(Claim.claim_id == claim_id)).one()


def open_page(name: str = "aoi", page: str = "label") -> AppTest:
    """A new browser session logged in as `name`, on views/`page`.py."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception
    return at


def go_to(at: AppTest, claim_id: str) -> None:
    """Move with the Next button until the page shows `claim_id`."""
    for _ in range(5):
        if shown_claim(at) == claim_id:
            return
        at.button(key="label.next").click().run()
    assert shown_claim(at) == claim_id


def shown_claim(at: AppTest) -> str:
    return next(s.value for s in at.header if s.value.startswith("Claim ")).removeprefix("Claim ")


def passage_html(at: AppTest) -> list[str]:
    """The bodies of the passages' st.html elements, in order (not the generated answer's, whose box
    heads the page: answer_html)."""
    answer = answer_html(at)
    return [h.proto.body for h in at.html if "white-space: pre-wrap" in h.proto.body and h.proto.body != answer]


def answer_html(at: AppTest) -> str:
    """The body of the generated answer's st.html, in the box headed by the question."""
    (box,) = [e for e in at.expander if e.label.startswith("**Question**")]
    (body,) = [h.proto.body for h in box.get("html")]
    return body


def marked(body: str) -> list[str]:
    return re.findall(r"<mark [^>]*>(.*?)</mark>", body)


# --- the keys ----------------------------------------------------------------------------------


def test_the_label_move_and_cite_buttons_carry_their_keys(engine):
    at = open_page()
    assert shown_claim(at) == "case-1-c1"
    shortcuts = {b.key: b.proto.shortcut for b in at.button if b.key and b.proto.shortcut}
    assert shortcuts == {
        label_button(at, "support").key: "1", label_button(at, "contradict").key: "2",
        label_button(at, "insufficient").key: "3",
        "label.next": "j", "label.previous": "k",
        "label.cite_button.1": "shift+1", "label.cite_button.2": "shift+2", "label.cite_button.3": "shift+3",
    }
    assert [at.button(key=f"label.cite_button.{n}").label for n in (1, 2, 3)] == [
        "Cite passage 1", "Cite passage 2", "Cite passage 3"]


def test_the_keys_are_listed_in_words_under_the_label_buttons(engine):
    at = open_page()
    captions = [c.value for c in at.caption]
    keys = ["Keys 1, 2, 3 save support, contradict, insufficient.",
            "Shift+1, Shift+2, Shift+3: cite or uncite passage 1, 2, 3.",
            "J: next claim. K: previous claim. A save opens the next claim at once.",
            "R: write the rationale (Tab from it goes to the buttons).",
            "The keys do nothing while you type in a text box: press Tab to leave it first."]
    start = captions.index(keys[0])
    assert captions[start:start + 5] == keys
    go_to(at, "case-2-c1")  # two passages: two cite keys
    assert "Shift+1, Shift+2: cite or uncite passage 1, 2." in [c.value for c in at.caption]


def test_a_cite_button_flips_the_checkbox_s_state_and_the_draft_and_says_what_it_will_do(engine):
    at = open_page()
    claim_pk = _pk(engine, "case-1-c1")
    at.button(key="label.cite_button.2").click().run()
    assert not at.exception
    assert at.session_state[f"label.cite.{claim_pk}.p-new"] is True
    assert at.checkbox(key=f"label.cite.{claim_pk}.p-new").value is True
    assert at.checkbox(key=f"label.cite.{claim_pk}.p-old").value is False
    assert at.button(key="label.cite_button.2").label == "Uncite passage 2"
    assert at.button(key="label.cite_button.2").proto.icon == ":material/bookmark_remove:"
    with session_scope(engine) as session:
        assert drafts.get_draft(session, get_user(session, "aoi"), claim_pk).passage_ids == ("p-new",)

    at.checkbox(key=f"label.cite.{claim_pk}.p-old").check().run()  # the checkbox and the button share one state
    at.button(key="label.cite_button.2").click().run()
    assert at.checkbox(key=f"label.cite.{claim_pk}.p-new").value is False
    assert at.button(key="label.cite_button.2").label == "Cite passage 2"
    with session_scope(engine) as session:
        assert drafts.get_draft(session, get_user(session, "aoi"), claim_pk).passage_ids == ("p-old",)


def test_a_save_cites_what_the_keys_chose_toasts_what_it_saved_and_opens_the_next_claim(engine):
    at = open_page()
    claim_pk = _pk(engine, "case-1-c1")
    at.button(key="label.cite_button.1").click().run()
    at.button(key="label.cite_button.3").click().run()
    label_button(at, "contradict").click().run()
    assert not at.exception and [e.value for e in at.error] == []
    assert [toast.value for toast in at.toast] == ["Saved contradict on claim case-1-c1."]
    assert shown_claim(at) == "case-1-c2"
    with session_scope(engine) as session:
        label = session.exec(select(Label).where(Label.claim_pk == claim_pk)).one()
        assert (label.value, list(label.passage_ids)) == ("contradict", ["p-old", "p-memo"])
        assert drafts.get_draft(session, get_user(session, "aoi"), claim_pk) is None
    at.button(key="label.previous").click().run()  # back: the saved label is shown in words and with an icon
    assert shown_claim(at) == "case-1-c1"
    assert label_button(at, "contradict").proto.icon == ":material/check:"
    assert label_button(at, "support").proto.icon == ""
    assert [at.checkbox(key=f"label.cite.{claim_pk}.{pid}").value for pid in ("p-old", "p-new", "p-memo")] == [
        True, False, True]


# --- reading aids ------------------------------------------------------------------------------


def test_the_claim_s_words_are_marked_in_each_passage_and_listed_under_it(engine):
    at = open_page()
    old, new, memo = passage_html(at)
    assert marked(old) == ["国内出張", "日当", "１日2,000円"]  # touching words are one mark
    assert marked(new) == ["国内出張", "日当", "１日"]  # 2,500円 is not the claim's 2,000円
    assert marked(memo) == ["日当"]
    captions = [c.value for c in at.caption]
    assert "Shared with the claim (marked bold and underlined): 国内, 出張, 日当, １日, 2,000円" in captions
    go_to(at, "case-2-c1")
    v2, v10 = passage_html(at)
    assert marked(v2) == ["Expense", "filed", "10th", "month"]  # "Expenses" is "Expense"; "by the" no content word
    assert marked(v10) == ["Expense", "filed", "month"]


def test_a_passage_s_own_markup_is_shown_as_written(engine):
    at = open_page()
    memo = passage_html(at)[2]
    assert "<script" not in memo and "<img" not in memo and "<b>" not in memo
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; **not bold** [link](http://evil.example)" in memo
    assert f"**Passage 3: {plain_markdown(MEMO_TITLE)}**" in [m.value for m in at.markdown]
    assert not any("<b>Memo</b>" in m.value for m in at.markdown)


def _blocks_with_height(node, height: int) -> list:  # noqa: ANN001 - an AppTest node
    found = []
    proto = getattr(node, "proto", None)
    config = getattr(proto, "height_config", None) if isinstance(node, Block) else None
    if config is not None and config.pixel_height == height:
        found.append(node)
    for child in getattr(node, "children", {}).values():
        found += _blocks_with_height(child, height)
    return found


def _html_inside(node) -> list[str]:  # noqa: ANN001
    own = [node.proto.body] if getattr(node, "type", None) == "html" else []
    return own + [body for child in getattr(node, "children", {}).values() for body in _html_inside(child)]


def test_only_a_long_passage_scrolls_in_a_box_under_its_title(engine):
    at = open_page()
    boxes = _blocks_with_height(at._tree, PASSAGE_HEIGHT)
    assert len(boxes) == 1
    inside = _html_inside(boxes[0])
    assert len(inside) == 1 and "行 20 の補足" in inside[0]
    headings = [m.value for m in _markdown_inside(boxes[0])]
    assert headings == []  # title and ids stay above the box


def _markdown_inside(node) -> list:  # noqa: ANN001
    own = [node] if getattr(node, "type", None) == "markdown" else []
    return own + [m for child in getattr(node, "children", {}).values() for m in _markdown_inside(child)]


def test_an_old_version_is_marked_in_words_and_with_an_icon(engine):
    at = open_page()
    olds = [m.value for m in at.markdown if "Old version" in m.value]
    assert olds == [":material/history: **Old version**: a newer version of document ryohi (2026-04) is among "
                    "these passages."]
    go_to(at, "case-2-c1")  # v10 is newer than v2
    assert [m.value for m in at.markdown if "Old version" in m.value] == [
        ":material/history: **Old version**: a newer version of document expenses (v10) is among these passages."]
    go_to(at, "case-3-c1")
    assert [m.value for m in at.markdown if "Old version" in m.value] == [
        ":material/history: **Old version**: the case's data marks this passage as outdated."]
    go_to(at, "case-4-c1")  # v2 and v10 of the document are passages of another case
    assert [m.value for m in at.markdown if "Old version" in m.value] == [
        ":material/history: **Old version**: a newer version of document expenses (v10) is in this dataset, not "
        "among these passages."]


def test_the_adjudicate_page_marks_the_claim_s_words_too(engine):
    claim_pk = _pk(engine, "case-1-c1")
    with session_scope(engine) as session:
        save_label(session, get_user(session, "aoi"), claim_pk, "support")
        save_label(session, get_user(session, "ren"), claim_pk, "contradict")
    at = open_page("mika", "adjudicate")
    assert at.selectbox(key="adjudicate.claim_pk").value == claim_pk
    old, new, _ = passage_html(at)
    assert marked(old) == ["国内出張", "日当", "１日2,000円"] and marked(new) == ["国内出張", "日当", "１日"]
    assert any(m.value.startswith(":material/history: **Old version**") for m in at.markdown)


def test_the_label_page_marks_the_claim_shown_for_the_browsers_key_guard(engine):
    at = open_page()
    markers = [h.proto.body for h in at.get("html") if "data-annotator-key-guard" in h.proto.body]
    assert len(markers) == 1
    assert f'data-claim="{at.session_state["label.claim_pk"]}"' in markers[0]
    assert 'data-keys="1 2 3"' in markers[0] and 'data-buttons="st-key-label-button-"' in markers[0]
    assert 'window.addEventListener("keydown"' in markers[0]  # the script rides with the marker
