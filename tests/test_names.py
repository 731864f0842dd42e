"""One rule for every new user name, from every path (users add in the service, the command line
and the Admin page; labels, adjudications and CLIMATE-FEVER vote imports): no invisible
characters, at most MAX_NAME_CHARS characters, and none that looks like an existing user's name
(text.name_skeletons); and the length limit of ids (MAX_ID_CHARS). On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import func
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from annotator.db import session_scope
from annotator.errors import InvalidValueError
from annotator.models import Adjudication, Case, Label, User
from annotator.services.access import OPERATOR
from annotator.services.users import add_user, ensure_user, list_users
from annotator.text import MAX_ID_CHARS, MAX_NAME_CHARS, name_skeletons
from tests.test_hostile_inputs import TEST_DATA, annotator, counts, imported, labeled

LOOKS_LIKE = "'{name}' looks like the existing user '{taken}'; use that name or choose one that cannot be mistaken for it"
FIX = "Use that name ('{taken}') if it is the same person, or choose one that cannot be mistaken for it"


def users(engine) -> list[str]:  # noqa: ANN001 - an Engine
    with session_scope(engine) as session:
        return list(session.exec(select(User.name).order_by(User.name)))


# ---------------------------------------------------------------- the skeleton


@pytest.mark.parametrize("new, existing", [
    ("ａlice", "alice"),  # full-width a (width: NFKC)
    ("аlice", "alice"),  # Cyrillic a (another script)
    ("ΑLICE", "alice"),  # Greek capital alpha, and case
    ("AIice", "Alice"),  # capital I for l
    ("alice1", "alicel"),  # the digit one for l (UTS #39 puts them in one class)
    ("Іvan", "ivan"),  # Cyrillic capital I, case-folded
    ("ﾔﾏﾀﾞ", "ヤマダ"),  # half-width katakana
])
def test_names_that_look_alike_share_a_skeleton(new, existing):
    assert set(name_skeletons(new)) & set(name_skeletons(existing))


@pytest.mark.parametrize("one, other", [("alice", "alicia"), ("山田", "山口"), ("ren", "rem"), ("aoi", "ao")])
def test_names_that_do_not_look_alike_share_no_skeleton(one, other):
    assert not set(name_skeletons(one)) & set(name_skeletons(other))


# ---------------------------------------------------------------- users add: service, command line


@pytest.mark.parametrize("new", ["ａlice", "аlice", "AIice"])
def test_users_add_refuses_a_name_that_looks_like_an_existing_user_naming_them(any_engine, new):
    with session_scope(any_engine) as session:
        add_user(session, OPERATOR, "Alice", ["labeler"], "long-enough-1")
    with session_scope(any_engine) as session, pytest.raises(InvalidValueError) as refused:
        add_user(session, OPERATOR, new, ["labeler"], "long-enough-1")
    assert str(refused.value) == LOOKS_LIKE.format(name=new, taken="Alice")
    assert users(any_engine) == ["Alice"]


@pytest.mark.parametrize("name, code, position", [
    ("ali\u00adce", "00AD", 4),  # soft hyphen (Cf)
    ("ali\u2028ce", "2028", 4),  # line separator (Zl)
    ("ali\u2029ce", "2029", 4),  # paragraph separator (Zp)
    ("a\ufe0flice", "FE0F", 2),  # variation selector (default-ignorable, Mn)
    ("a\u034flice", "034F", 2),  # combining grapheme joiner (default-ignorable, Mn)
    ("a\u3164lice", "3164", 2),  # Hangul filler (default-ignorable, Lo)
    ("a\U000e0041lice", "E0041", 2),  # tag letter A (Cf)
    ("a\u180elice", "180E", 2),  # Mongolian vowel separator (Cf)
])
def test_users_add_refuses_every_invisible_character_naming_it(any_engine, name, code, position):
    with session_scope(any_engine) as session, pytest.raises(InvalidValueError) as refused:
        add_user(session, OPERATOR, name, ["labeler"], "long-enough-1")
    assert str(refused.value) == (f"the name holds the invisible character U+{code} at position {position}; type the "
                                  "name again without it")
    assert users(any_engine) == []


def test_users_add_takes_a_name_of_the_limit_and_refuses_a_longer_one(any_engine):
    with session_scope(any_engine) as session:
        add_user(session, OPERATOR, "x" * MAX_NAME_CHARS, ["labeler"], None)
    with session_scope(any_engine) as session, pytest.raises(InvalidValueError) as refused:
        add_user(session, OPERATOR, "y" * 1_000_000, ["labeler"], None)
    assert str(refused.value) == "the name is 1,000,000 characters long, over the limit of 100; shorten it"
    assert users(any_engine) == ["x" * MAX_NAME_CHARS]


def test_the_command_line_refuses_a_look_alike_and_a_too_long_name_with_a_message(any_db_url, any_engine):
    assert annotator("init", "--db", any_db_url).code == 0
    assert annotator("users", "add", "aoi", "--role", "labeler", "--no-password", "--db", any_db_url).code == 0
    ran = annotator("users", "add", "ａoi", "--role", "labeler", "--no-password", "--db", any_db_url)
    assert (ran.code, ran.out, ran.err) == (1, "", f"Error: {LOOKS_LIKE.format(name='ａoi', taken='aoi')}\n")
    ran = annotator("users", "add", "n" * 101, "--role", "labeler", "--no-password", "--db", any_db_url)
    assert (ran.code, ran.err) == (1, "Error: the name is 101 characters long, over the limit of 100; shorten it\n")
    ran = annotator("users", "add", "ren\u200d", "--role", "labeler", "--no-password", "--db", any_db_url)
    assert (ran.code, ran.err) == (1, "Error: the name holds the invisible character U+200D at position 4; type the "
                                      "name again without it\n")
    assert users(any_engine) == ["aoi"]


def test_existing_look_alike_names_still_open_and_each_is_itself(any_engine):
    """Names stored before the rule that look alike are left alone: listed, imported to by
    their exact name; only a new name is refused."""
    with session_scope(any_engine) as session:
        session.add_all([User(name="alice", roles="labeler"), User(name="ａlice", roles="labeler")])
    with session_scope(any_engine) as session:
        assert [user.name for user in list_users(session, OPERATOR)] == ["alice", "ａlice"]
        assert ensure_user(session, "ａlice", "labeler")[1] is False
        assert ensure_user(session, "alice", "adjudicator")[1] is False
        with pytest.raises(InvalidValueError) as refused:
            add_user(session, OPERATOR, "аlice", ["labeler"], None)  # Cyrillic a: new, refused
        assert str(refused.value) == LOOKS_LIKE.format(name="аlice", taken="alice")


# ---------------------------------------------------------------- imports


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command, header, row, message", [
    ("labels", "claim_id,labeler,label", "n2-c1,аlice,support",  # Cyrillic a
     "line 2, field 'labeler': labeler 'аlice' looks like the existing user 'alice'. " + FIX.format(taken="alice")),
    ("labels", "claim_id,labeler,label", "n2-c1,ａlice,support",  # full-width a
     "line 2, field 'labeler': labeler 'ａlice' looks like the existing user 'alice'. " + FIX.format(taken="alice")),
    ("adjudications", "claim_id,adjudicator,label", "n1-c1,carоl,support",  # Cyrillic o; alice and bob labeled n1-c1
     None),
    ("labels", "claim_id,labeler,label", "n2-c1,bo\u200bb,support",
     "line 2, field 'labeler': the name holds the invisible character U+200B at position 3. Type the name again "
     "without it"),
    ("adjudications", "claim_id,adjudicator,label", "n1-c1,ca\u2066rol,support",
     "line 2, field 'adjudicator': the name holds the invisible character U+2066 at position 3. Type the name again "
     "without it"),
    ("labels", "claim_id,labeler,label", "n2-c1," + "z" * 101 + ",support",
     "line 2, field 'labeler': the value is 101 characters long, over the limit of 100 for an id or name. Use a "
     "shorter id or name"),
    ("labels", "claim_id,labeler,label", "n2-c1," + "z" * 1_000_000 + ",support",  # past the id limit too: still 100
     "line 2, field 'labeler': the value is 1,000,000 characters long, over the limit of 100 for an id or name. Use "
     "a shorter id or name"),
])
def test_an_import_refuses_a_bad_new_name_naming_file_line_and_field_and_nothing_lands(
        any_db_url, any_engine, tmp_path, command, header, row, message):
    labeled(any_db_url)
    if message is None:  # a look-alike of a user this test adds first
        assert annotator("users", "add", "carol", "--role", "adjudicator", "--no-password", "--db", any_db_url).code == 0
        message = ("line 2, field 'adjudicator': adjudicator 'carоl' looks like the existing user 'carol'. "
                   + FIX.format(taken="carol"))
    before, names = counts(any_engine), users(any_engine)
    path = write(tmp_path / f"{command}.csv", f"{header}\n{row}\n")
    ran = annotator(command, "import", str(path), "--db", any_db_url)
    assert (ran.code, ran.out, ran.err) == (1, "", f"Error: {path}, {message}\n")
    assert counts(any_engine) == before and users(any_engine) == names
    with session_scope(any_engine) as session:
        assert session.exec(select(func.count()).select_from(Adjudication)).one() == 0


def test_a_look_alike_of_a_name_an_earlier_line_created_is_refused_naming_that_line(any_db_url, any_engine, tmp_path):
    labeled(any_db_url)
    path = write(tmp_path / "labels.csv", "claim_id,labeler,label\nn2-c1,mika,support\nn1-c2,ｍika,support\n")
    ran = annotator("labels", "import", str(path), "--db", any_db_url)
    assert (ran.code, ran.err) == (1, f"Error: {path}, line 3, field 'labeler': labeler 'ｍika' looks like the existing "
                                      "user 'mika' (created by this import for line 2). " + FIX.format(taken="mika") + "\n")
    assert users(any_engine) == ["alice", "bob"]
    ran = annotator("labels", "import", str(path), "--partial", "--db", any_db_url)
    assert ran.code == 0 and "Created user mika (role labeler" in ran.out
    assert users(any_engine) == ["alice", "bob", "mika"]


def test_an_import_names_an_existing_look_alike_user_by_their_exact_name(any_db_url, any_engine, tmp_path):
    labeled(any_db_url)
    with session_scope(any_engine) as session:
        session.add(User(name="ａlice", roles="labeler"))  # stored before the rule
    path = write(tmp_path / "labels.csv", "claim_id,labeler,label\nn2-c1,ａlice,support\n")
    ran = annotator("labels", "import", str(path), "--db", any_db_url)
    assert (ran.code, ran.err) == (0, ""), ran.err
    with session_scope(any_engine) as session:
        assert session.exec(select(func.count()).select_from(Label)).one() == 6
    assert users(any_engine) == ["alice", "bob", "ａlice"]


def test_climate_fever_votes_refuse_a_voter_name_that_looks_like_an_existing_user(any_db_url, any_engine, tmp_path):
    """cf-vote-1 looks like a user cf-vote-l (the digit one and the letter l are one class)."""
    path = write(tmp_path / "cf.jsonl", json.dumps({
        "claim_id": "7", "claim": "Ice is melting.", "claim_label": "SUPPORTS",
        "evidences": [{"evidence_id": "e1", "article": "Ice", "evidence": "It melts.", "votes": ["SUPPORTS", "SUPPORTS"]}],
    }) + "\n")
    assert annotator("init", "--db", any_db_url).code == 0
    assert annotator("users", "add", "cf-vote-l", "--role", "labeler", "--no-password", "--db", any_db_url).code == 0
    ran = annotator("import", str(path), "--with-votes", "--db", any_db_url)
    assert (ran.code, ran.err) == (1, f"Error: {path}, line 1, field 'votes': labeler 'cf-vote-1' looks like the "
                                      "existing user 'cf-vote-l'. " + FIX.format(taken="cf-vote-l") + "\n")
    assert users(any_engine) == ["cf-vote-l"]
    with session_scope(any_engine) as session:
        assert session.exec(select(func.count()).select_from(Case)).one() == 0


# ---------------------------------------------------------------- id length


def native_case(**overrides: str) -> str:
    case = {"case_id": "c1", "question": "Q?", "answer": "A.", "slice": "normal", "split": "dev",
            "passages": [{"passage_id": "p1", "doc_id": "d1", "version": "v1", "title": "T", "text": "Text."}],
            "claims": [{"claim_id": "c1-1", "text": "A claim."}]}
    for key, value in overrides.items():
        if key in ("passage_id", "doc_id"):
            case["passages"][0][key] = value
            if key == "passage_id":
                case["claims"][0]["passage_ids"] = [value]
        elif key == "claim_id":
            case["claims"][0][key] = value
        else:
            case[key] = value
    return json.dumps(case, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("key, field, length", [
    ("case_id", "case_id", 1_000_000), ("claim_id", "claims[0].claim_id", 1_000_000),
    ("passage_id", "passages[0].passage_id", 5_000), ("doc_id", "passages[0].doc_id", 5_000), ("slice", "slice", 201),
])
def test_an_id_over_the_limit_is_refused_naming_file_line_and_field_on_every_database(
        any_db_url, any_engine, tmp_path, key, field, length):
    """(A text over 100,000 characters is refused as a text first, where the field is one.)"""
    path = write(tmp_path / "cases.jsonl", native_case(**{key: "i" * length}))
    ran = annotator("import", str(path), "--slices", "i" * MAX_ID_CHARS, "--db", any_db_url)
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (f"Error: {path}, line 1, field '{field}': the value is {length:,} characters long, over the "
                       f"limit of {MAX_ID_CHARS} for an id or name. Use a shorter id or name\n")
    with session_scope(any_engine) as session:
        assert session.exec(select(func.count()).select_from(Case)).one() == 0


def test_ids_of_the_limit_are_stored_on_every_database(any_db_url, any_engine, tmp_path):
    long_id = "i" * MAX_ID_CHARS
    path = write(tmp_path / "cases.jsonl", native_case(case_id=long_id, claim_id=long_id, passage_id=long_id,
                                                        doc_id=long_id, slice=long_id))
    ran = annotator("import", str(path), "--slices", long_id, "--dataset", "d" * MAX_ID_CHARS, "--db", any_db_url)
    assert (ran.code, ran.err) == (0, ""), ran.err
    with session_scope(any_engine) as session:
        assert session.exec(select(Case.case_id, Case.slice)).one() == (long_id, long_id)


def test_a_dataset_name_over_the_limit_is_refused_with_a_message(any_db_url, any_engine):
    ran = annotator("import", str(TEST_DATA / "import_native.jsonl"), "--dataset", "d" * 201, "--db", any_db_url)
    assert (ran.code, ran.err) == (1, "Error: the dataset name is 201 characters long, over the limit of 200: use a "
                                      "shorter --dataset\n")


# ---------------------------------------------------------------- the Admin page's form


APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"


@pytest.fixture
def admin_app(any_db_url, any_engine, monkeypatch, tmp_path):
    with session_scope(any_engine) as session:
        add_user(session, OPERATOR, "admin", ["admin"], "admin-pass-1234")
        add_user(session, OPERATOR, "aoi", ["labeler"], "aoi-pass-1234")
    monkeypatch.setenv("DATABASE_URL", any_db_url)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.run()
    at.text_input(key="login.name").input("admin")
    at.text_input(key="login.password").input("admin-pass-1234")
    at.form_submit_button[0].click().run()
    at.switch_page("views/admin.py").run()
    yield at
    st.cache_resource.clear()


@pytest.mark.parametrize("name, message", [
    ("аoi", LOOKS_LIKE.format(name="аoi", taken="aoi")),
    ("AOI", "a user named 'aoi' exists already (names differ only in case)"),
    ("ao\u2060i", "the name holds the invisible character U+2060 at position 3; type the name again without it"),
    ("n" * 150, "the name is 150 characters long, over the limit of 100; shorten it"),
])
def test_the_admin_form_refuses_a_bad_name_with_its_message_and_adds_nobody(admin_app, any_engine, name, message):
    at = admin_app
    at.text_input(key="admin.new_name").input(name)
    at.text_input(key="admin.new_password").input("long-enough-1")
    at.button(key="admin.add_button").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [message]
    assert users(any_engine) == ["admin", "aoi"]
