"""What the core and the services say (annotator/messages.py) reads in the user's language in the
app, and exactly as before in English (the command line prints str(error)): every message key
has a Japanese text with the same fields, every key the code uses exists, a refusal keeps its key
and fields, and the Label, Adjudicate and Home pages show service refusals in Japanese."""

from __future__ import annotations

import ast
import copy
import pickle
import string
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from annotator.db import init_db, session_scope
from annotator.errors import (
    AnnotatorError,
    ImportFileError,
    InvalidValueError,
    LoginError,
    NotDisputedError,
    NotFoundError,
    OnHoldError,
    PermissionDeniedError,
    ReleaseBlockedError,
)
from annotator.agreement import compute_agreement
from annotator.messages import MESSAGES, Joined, Message, Term, english, field_name, msg, recognize, seconds
from annotator.models import Case, Claim, Label
from annotator.release import check_release_name
from annotator.services import adjudication, corrections, guidelines, history, home, labeling, lookup, releases, users
from annotator.services.access import require
from annotator.text import check_free_text, clean_name
from annotator.ui import components
from annotator.ui import format as fmt
from annotator.ui.catalog_ja import JAPANESE
from annotator.ui.i18n import ENGLISH, error_text, message_text, t, use_language
from annotator.workflow import Permission, State
from tests.factories import PASSWORD, pilot
from tests.conftest import label_button

PACKAGE = Path(__file__).resolve().parents[1] / "annotator"
APP = PACKAGE / "ui" / "app.py"


def _fields(text: str) -> list[str]:
    return sorted({name for _, name, _, _ in string.Formatter().parse(text) if name is not None})


# --- the catalog of messages ---------------------------------------------------------------------


def test_every_message_key_starts_with_msg_and_reaches_the_ui_catalog_unchanged():
    assert [key for key in MESSAGES if not key.startswith("msg.")] == []
    assert {key: text for key, text in ENGLISH.items() if key.startswith("msg.")} == MESSAGES


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_every_message_has_a_japanese_text_with_the_same_fields(key):
    assert key in JAPANESE
    assert _fields(JAPANESE[key]) == _fields(MESSAGES[key])
    words = "".join(literal for literal, _, _, _ in string.Formatter().parse(MESSAGES[key]))
    assert JAPANESE[key] != MESSAGES[key] or not any(c.isalpha() for c in words)  # "{field}: {value}" may stay


def _message_keys_used(path: Path) -> list[tuple[int, str]]:
    """(line, key) of every literal message key in `path`: SomeError.of("msg..."), msg("msg..."),
    english("msg..."), t("msg...")."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name in {"of", "msg", "english", "t"} and node.args[0].value.startswith("msg."):
            found.append((node.lineno, node.args[0].value))
        elif name in {"of", "msg", "english"}:
            found.append((node.lineno, node.args[0].value))  # a key without the prefix is wrong too
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_message_key_the_code_uses_exists(path):
    assert [(line, key) for line, key in _message_keys_used(path) if key not in MESSAGES] == []


def test_every_permission_has_its_refusal():
    assert [p.value for p in Permission if f"msg.denied.{p.value}" not in MESSAGES] == []


def test_msg_refuses_an_unknown_key():
    with pytest.raises(KeyError, match="msg.no_such_message"):
        msg("msg.no_such_message")


# --- English: exactly what the command line printed before ----------------------------------------


@pytest.mark.parametrize("message, expected", [
    (msg("msg.not_in_queue"), "this claim is not in your queue"),
    (msg("msg.claim_not_in_queue", claim_id="c-9"), "claim 'c-9' is not in your queue"),
    (msg("msg.login_wrong"), "unknown user name or wrong password (or the account has no password yet)"),
    (msg("msg.login_wrong_wait", wait=seconds(1)),
     "unknown user name or wrong password (or the account has no password yet); wait 1 second before trying again"),
    (msg("msg.login_throttled", wait=seconds(16)), "too many failed logins for this name: wait 16 seconds, then try again"),
    (msg("msg.not_disputed", state=Term("state", "agreed")),
     "this claim is agreed, not disputed: there is nothing to decide"),
    (msg("msg.passages_not_shown", passage_ids=str(["p9"])), "cited passages ['p9'] are not shown with this claim"),
    (msg("msg.unstorable_character", field=field_name("rationale"), character="U+0000", position=3),
     "the rationale holds the character U+0000 at position 3, which cannot be stored; remove it"),
    (msg("msg.unstorable_character", field=field_name("title"), character="U+0000", position=1),
     "the title holds the character U+0000 at position 1, which cannot be stored; remove it"),
    (msg("msg.assign_different_labelers", names=msg("msg.assign_none")), "name different labelers, got none"),
    (msg("msg.user_exists_case", name="Alice"), "a user named 'Alice' exists already (names differ only in case)"),
    (msg("msg.labeler_n", n=2), "Labeler 2"),
])
def test_a_message_s_english_text_is_the_wording_the_command_line_prints(message, expected):
    assert str(message) == expected == english(message.key, **message.fields)
    with use_language("en"):
        assert message_text(message) == expected


def test_an_error_raised_with_a_message_keeps_its_key_and_fields_and_says_it_in_english():
    error = NotDisputedError.of("msg.not_disputed", state=Term("state", "agreed"))
    assert (error.key, dict(error.fields)) == ("msg.not_disputed", {"state": Term("state", "agreed")})
    assert str(error) == "this claim is agreed, not disputed: there is nothing to decide"
    assert error.args == (str(error),)
    assert error.message == Message("msg.not_disputed", error.fields)
    plain = InvalidValueError("some text")
    assert (plain.key, dict(plain.fields), plain.message, str(plain)) == (None, {}, None, "some text")


@pytest.fixture
def engine(tmp_path):
    engine = init_db(f"sqlite:///{tmp_path}/m.db")
    with session_scope(engine) as session:
        pilot(session)
    yield engine
    engine.dispose()


def _claim(session, claim_id: str) -> Claim:  # noqa: ANN001
    return session.exec(select(Claim).where(Claim.claim_id == claim_id)).one()


def test_service_refusals_carry_their_key_and_the_unchanged_english_text(engine):
    with session_scope(engine) as session:
        alice, bob = users.get_user(session, "alice"), users.get_user(session, "bob")
        claim = _claim(session, "case-1-c1")
        labeling.put_on_hold(session, alice, claim.case_pk, "missing_logs")  # alice's own hold
        with pytest.raises(OnHoldError) as held:
            labeling.save_label(session, alice, claim.id, "support")
        with pytest.raises(PermissionDeniedError) as denied:
            require(alice, Permission.RELEASE)
        with pytest.raises(PermissionDeniedError) as link:
            home.open_claim_link(session, alice, "no-such-claim")
        with pytest.raises(InvalidValueError) as unknown:
            labeling.save_label(session, bob, _claim(session, "case-2-c1").id, "maybe")
        with pytest.raises(InvalidValueError) as unstorable:
            check_free_text("note", "ab\x00")
        with pytest.raises(InvalidValueError) as invisible:
            clean_name("a\u200bb")
    assert [(e.value.key, str(e.value)) for e in (held, denied, link, unknown, unstorable, invisible)] == [
        ("msg.on_hold", "this case is on hold; it cannot be labeled until the hold is lifted"),
        ("msg.denied.release", "only an admin may create, download or verify gold releases"),
        ("msg.claim_not_in_queue", "claim 'no-such-claim' is not in your queue"),
        ("msg.unknown_label", "unknown label 'maybe'; use one of support, contradict, insufficient"),
        ("msg.unstorable_character", "the note holds the character U+0000 at position 3, which cannot be stored; remove it"),
        ("msg.invisible_in_name", "the name holds the invisible character U+200B at position 2; type the name again "
                                  "without it"),
    ]


def test_a_wrong_login_says_the_same_in_english_as_before(engine):
    with session_scope(engine) as session:
        with pytest.raises(LoginError) as wrong:
            users.authenticate(session, "alice", "not the password")
    assert (wrong.value.key, str(wrong.value)) == (
        "msg.login_wrong", "unknown user name or wrong password (or the account has no password yet)")


# --- Japanese --------------------------------------------------------------------------------------


@pytest.mark.parametrize("error, japanese", [
    (OnHoldError.of("msg.on_hold"), "このケースは保留中です。保留が解除されるまでラベルを付けられません。"),
    (PermissionDeniedError.of("msg.claim_not_in_queue", claim_id="c-9"), "主張「c-9」はあなたのキューにありません。"),
    # a vocabulary word in a field is the catalog's word; a nested message is in the same language
    (NotDisputedError.of("msg.not_disputed", state=Term("state", "agreed")),
     "この主張は「一致」で、不一致ではありません。裁定するものはありません。"),
    (LoginError.of("msg.login_throttled", wait=seconds(16)),
     "この名前でのログインの失敗が多すぎます。16 秒待ってから、もう一度お試しください。"),
    (InvalidValueError.of("msg.unstorable_character", field=field_name("rationale"), character="U+0000", position=3),
     "判断理由の 3 文字目に保存できない文字 U+0000 があります。削除してください。"),
    (InvalidValueError.of("msg.assign_different_labelers", names=msg("msg.assign_none")),
     "異なるアノテーターを指定してください（指定: なし）。"),
    # a word without a catalog entry is written as it is
    (NotDisputedError.of("msg.not_disputed", state=Term("state", "unheard_of")),
     "この主張は「unheard_of」で、不一致ではありません。裁定するものはありません。"),
])
def test_in_japanese_an_error_with_a_key_is_said_in_japanese(error, japanese):
    with use_language("ja"):
        assert error_text(error) == japanese
        assert t(error.key, **error.fields) == japanese
    assert error_text(error) == str(error)  # outside a Streamlit run: English


def test_an_error_without_a_key_is_shown_as_raised():
    with use_language("ja"):
        assert error_text(AnnotatorError("a text from elsewhere")) == "a text from elsewhere"


def test_flash_error_queues_the_japanese_text(monkeypatch):
    queued = []
    monkeypatch.setattr(components, "flash", lambda kind, text: queued.append((kind, text)))
    with use_language("ja"):
        components.flash_error(PermissionDeniedError.of("msg.hold_not_assigned"))
        components.flash_error(PermissionDeniedError("plain"))
    assert queued == [("error", "保留にできるのは、あなたに割り当てられたケースだけです。"), ("error", "plain")]


# --- the pages, in a Japanese browser --------------------------------------------------------------


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/a.db"
    engine = init_db(url)
    with session_scope(engine) as session:
        pilot(session)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    # AppTest reads a run's widgets through their format_func in the test's thread, outside any
    # run: in the language that run was in (see tests/test_ui_i18n.py).
    with use_language("ja"):
        yield engine
    st.cache_resource.clear()
    engine.dispose()


def _open(name: str, password: str = PASSWORD, query: dict | None = None) -> AppTest:
    """A new tab of a Japanese browser, logged in as `name`, on the Home page."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.context["locale"] = "ja-JP"
    at.query_params.update(query or {})
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(password)
    at.form_submit_button[0].click().run()
    assert not at.exception
    return at


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_a_wrong_password_is_refused_in_japanese(app_db):
    at = _open("alice", "wrong password")
    assert _errors(at) == [JAPANESE["msg.login_wrong"]]


def test_a_stale_save_on_the_label_page_is_refused_in_japanese(app_db):
    first = _open("alice").switch_page("views/label.py").run()
    second = _open("alice").switch_page("views/label.py").run()
    label_button(second, "support").click().run()  # the other tab saves first
    assert _errors(second) == []
    claim_pk = first.session_state["label.claim_pk"]
    first.text_area(key=f"label.rationale.{claim_pk}").input("最初のタブで入力")
    label_button(first, "contradict").click().run()
    assert not first.exception
    assert _errors(first) == [JAPANESE["msg.label_changed_elsewhere"]]
    assert first.text_area(key=f"label.rationale.{claim_pk}").value == "最初のタブで入力"


def test_a_save_on_a_case_put_on_hold_meanwhile_is_refused_in_japanese_once(app_db):
    at = _open("alice").switch_page("views/label.py").run()
    with session_scope(app_db) as session:  # alice holds the case in another tab
        case_pk = session.exec(select(Case.id).where(Case.case_id == "case-1")).one()
        labeling.put_on_hold(session, users.get_user(session, "alice"), case_pk, "gold_undetermined")
    label_button(at, "insufficient").click().run()
    assert not at.exception
    assert _errors(at) == []  # the page says the case is on hold; the refusal does not say it again
    assert [w.value for w in at.warning] == [JAPANESE["label.on_hold"].format(reason=JAPANESE["hold.gold_undetermined"])]
    with session_scope(app_db) as session:
        assert session.exec(select(Label)).all() == []


def test_a_claim_link_outside_the_queue_is_refused_in_japanese_on_the_home_page(app_db):
    at = _open("alice", query={"claim": "no-such-claim"})
    assert _errors(at) == ["主張「no-such-claim」はあなたのキューにありません。"]


def test_the_adjudicate_page_names_the_labels_in_japanese(app_db):
    with session_scope(app_db) as session:
        claim = _claim(session, "case-1-c1")
        labeling.save_label(session, users.get_user(session, "alice"), claim.id, "support")
        labeling.save_label(session, users.get_user(session, "bob"), claim.id, "contradict")
    at = _open("carol").switch_page("views/adjudicate.py").run()
    assert not at.exception
    names = [m.value for m in at.markdown if m.value.startswith("**アノテーター")]
    assert names == ["**アノテーター 1**", "**アノテーター 2**"]
    assert "Labeler" not in " ".join(m.value for m in at.markdown)


def test_the_blind_labels_keep_their_english_names_and_numbers(engine):
    with session_scope(engine) as session:
        claim = _claim(session, "case-1-c1")
        labeling.save_label(session, users.get_user(session, "alice"), claim.id, "support")
        labeling.save_label(session, users.get_user(session, "bob"), claim.id, "contradict")
        view = adjudication.view_for_adjudicator(session, users.get_user(session, "carol"), claim.id)
    assert [(label.display_name, label.number) for label in view.labels] == [("Labeler 1", 1), ("Labeler 2", 2)]
    with use_language("ja"):
        assert [t("msg.labeler_n", n=label.number) for label in view.labels] == ["アノテーター 1", "アノテーター 2"]


def test_operator_refusals_stay_english_at_the_command_line():
    """The command line prints str(error): English whatever the language of a page."""
    with use_language("ja"):
        with pytest.raises(PermissionDeniedError) as denied:
            require(None, Permission.MANAGE_USERS)
        assert str(denied.value) == "only an admin may manage users"


# --- a claim's history and an agreement report's notes -----------------------------------------------


def test_a_claim_s_history_reads_the_same_in_english_and_is_written_in_japanese(engine):
    with session_scope(engine) as session:
        alice, bob, root = (users.get_user(session, name) for name in ("alice", "bob", "root"))
        claim = _claim(session, "case-1-c1")
        labeling.save_label(session, alice, claim.id, "support")
        labeling.save_label(session, alice, claim.id, "contradict", expected_revision=1)
        labeling.put_on_hold(session, bob, claim.case_pk, "missing_logs")
        found = history.claim_history_view(session, root, "case-1-c1")
    rows = [row for row in found.rows if row.entity in ("label", "hold")]
    assert [(row.who, row.what, row.change) for row in rows] == [
        ("alice", "label created", "labeler: alice; value: support; revision: 1"),
        ("alice", "label revised", "labeler: alice; value: support -> contradict; revision: 1 -> 2"),
        ("bob", "case put on hold", "reason: missing_logs"),
    ]
    assigned = next(row for row in found.rows if row.entity == "assignment")
    assert (assigned.who, assigned.who_message) == (history.NO_ACTOR, msg("msg.history.no_actor"))
    with use_language("ja"):
        assert message_text(assigned.who_message) == "コマンドライン / インポート"
        assert [(message_text(row.what_message), "; ".join(message_text(part) for part in row.change_messages))
                for row in rows] == [
            ("ラベルの作成", "アノテーター: alice; ラベル: 支持; リビジョン: 1"),
            ("ラベルの修正", "アノテーター: alice; ラベル: 支持 -> 矛盾; リビジョン: 1 -> 2"),
            ("ケースの保留", "理由: ログ不足"),
        ]


@pytest.mark.parametrize("key", sorted(key for key in MESSAGES if key.startswith("msg.agreement.")))
def test_every_agreement_note_is_recognized_from_its_english_text(key):
    fields = {name: f"<{name}>" for name in _fields(MESSAGES[key])}
    assert recognize(english(key, **fields), "msg.agreement.") == Message(key, fields)


def test_an_agreement_report_s_notes_are_written_in_japanese_on_the_page():
    rows = [(f"i{n}", rater, "support") for n in range(3) for rater in ("a", "b")]
    report = compute_agreement(rows, n_bootstrap=100).to_json()
    assert report["undefined"]["scott_pi"] == "every rating is 'support': expected agreement is 1 (0/0)"
    assert report["by_category"]["contradict"]["undefined"] == (
        "no rating on an item with two or more ratings is 'contradict' (0/0)")
    english_notes = [*report["undefined"].values(), *report["ci95_missing"].values(),
                     *(part["undefined"] for part in report["by_category"].values() if part.get("undefined"))]
    assert [note for note in english_notes if recognize(note, "msg.agreement.") is None] == []
    assert fmt.reason(report, "scott_pi") == report["undefined"]["scott_pi"]  # English: as the core wrote it
    with use_language("ja"):
        assert fmt.reason(report, "scott_pi") == "すべてのラベルが 'support' です。偶然に期待される一致が 1 です（0/0）"
        assert fmt.figure(report, "scott_pi") == "算出不能: すべてのラベルが 'support' です。偶然に期待される一致が 1 です（0/0）"
        assert fmt.note("a note from elsewhere") == "a note from elsewhere"


# --- the admin's refusals: releases, guidelines, corrections ------------------------------------------


def test_a_blocked_release_says_the_same_in_english_and_counts_the_states_in_japanese():
    states = {1: State.DISPUTED, 2: State.DISPUTED, 3: State.ON_HOLD, 4: State.AGREED}
    with pytest.raises(ReleaseBlockedError) as blocked:
        releases.choose_claims(states, "pilot", only_final=False)
    assert str(blocked.value) == (
        "3 of 4 claims in dataset 'pilot' are not final (disputed 2, on_hold 1): label, adjudicate or lift the holds "
        "on them first, or release only the agreed and adjudicated claims (\"only final\" in the app, --only-final on "
        "the command line)")
    with use_language("ja"):
        assert error_text(blocked.value).startswith(
            "データセット「pilot」の主張 4 件のうち 3 件が確定していません（不一致 2 件, 保留中 1 件）。")
    with pytest.raises(ReleaseBlockedError) as empty:
        releases.choose_claims({}, None, only_final=True)
    assert str(empty.value) == "there is no claim in any dataset to release; import cases first"


def test_guideline_and_correction_refusals_keep_their_english_and_have_japanese(engine):
    with session_scope(engine) as session:
        with pytest.raises(NotFoundError) as unknown:
            guidelines.get_guideline(session, "v9")
        root = users.get_user(session, "root")
        claim = _claim(session, "case-1-c1")
        with pytest.raises(NotFoundError) as no_label:
            corrections.correct_label(session, root, claim.id, "alice", "support", reason="slip", expected_revision=1)
    with pytest.raises(ImportFileError) as utf16:
        guidelines.guideline_text("指針".encode("utf-16"), "guide.md")
    assert [str(e.value) for e in (unknown, no_label, utf16)] == [
        "no guideline version 'v9'; published: none yet",
        "'alice' has no label on claim 'case-1-c1' (labeled by: nobody)",
        "guide.md: UTF-16 (or a file with NUL bytes) is not supported: save the guideline as UTF-8 text and try again",
    ]
    with use_language("ja"):
        assert [error_text(e.value) for e in (unknown, no_label)] == [
            "ガイドラインの版「v9」はありません。公開済みの版: まだありません",
            "「alice」は主張「case-1-c1」にラベルを付けていません（ラベルを付けた人: なし）。",
        ]


def test_an_error_with_a_message_survives_pickling_and_copying():
    error = ReleaseBlockedError.of("msg.release.none_final", where=msg("msg.release.where_any"),
                                   counts=Joined((msg("msg.release.state_count", state=Term("state", "disputed"), n=1),)))
    for copied in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error)):
        assert (type(copied), str(copied), copied.key) == (ReleaseBlockedError, str(error), error.key)
        with use_language("ja"):
            assert error_text(copied) == "すべてのデータセットには、リリースできる一致または裁定済みの主張がありません（不一致 1 件）。"


@pytest.mark.parametrize("kind", ["claim", "case"])
def test_every_kind_lookup_names_has_its_messages(kind):
    assert [key for key in (f"msg.lookup.no_{kind}", f"msg.lookup.no_{kind}_in", f"msg.lookup.ambiguous_{kind}")
            if key not in MESSAGES] == []


def test_lookup_and_release_name_refusals_keep_their_english_and_have_japanese(engine):
    with session_scope(engine) as session:
        with pytest.raises(NotFoundError) as no_case:
            lookup.find_case(session, "case-9", "pilot")
        with pytest.raises(NotFoundError) as no_dataset:
            lookup.get_dataset(session, "other")
    with pytest.raises(InvalidValueError) as bad_name:
        check_release_name("../gold")
    assert [str(e.value) for e in (no_case, no_dataset, bad_name)] == [
        "no case with id 'case-9' in dataset 'pilot'",
        "no dataset named 'other' (datasets: pilot)",
        "invalid release name '../gold': use letters, digits, '.', '_' and '-' (not starting with '.' or '-', not "
        "ending with '.', not a reserved device name such as 'con', at most 100 characters), e.g. gold-v1",
    ]
    with use_language("ja"):
        assert [error_text(e.value) for e in (no_case, no_dataset)] == [
            "データセット「pilot」に、ID が「case-9」のケースはありません。",
            "データセット「other」はありません（データセット: pilot）。",
        ]
