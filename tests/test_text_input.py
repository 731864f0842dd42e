"""Typed text every database can store, and user names that cannot look like another's."""

from __future__ import annotations

import pytest

from annotator.db import session_scope
from annotator.errors import InvalidValueError
from annotator.models import Claim, Draft, Label, User
from annotator.services.access import OPERATOR
from annotator.services.drafts import save_draft
from annotator.services.labeling import assigned_claims, put_on_hold, save_label
from annotator.services.users import add_user, authenticate, get_user
from annotator.text import check_free_text, clean_name, is_blank, shown_as_code_point
from sqlmodel import func, select
from tests.factories import pilot


@pytest.mark.parametrize("text, code, position", [("before \x00 after", "0000", 8), ("lone \ud800 surrogate", "D800", 6)])
def test_text_no_database_can_store_is_refused_naming_the_field_and_position(text, code, position):
    with pytest.raises(InvalidValueError, match=rf"the rationale holds the character U\+{code} at position {position}\b"):
        check_free_text("rationale", text)


def test_ordinary_text_passes_as_typed():
    text = "①髙 ｶﾀｶﾅ\ttab\nline \u202e kept"  # free text keeps what the user typed
    assert check_free_text("note", text) == text


@pytest.mark.parametrize("text", ["", " \t\n\u3000", "\u200b", "\u200c\u200d\u200e\u200f", "\u2060\u2061\u2064",
                                  "\ufeff", "\u202a\u202e", "\u2066\u2069", " \u200b\n\u202e ", "\x1b\x85"])
def test_a_text_of_only_white_space_format_and_control_characters_is_blank(text):
    assert is_blank(text)


@pytest.mark.parametrize("text", ["a", "\u200bx", "。", "-", "👍", "\u3164", "\u200b\u00e9\u200b", "\u0301"])
def test_a_text_with_one_visible_character_is_not_blank(text):
    assert not is_blank(text)  # U+3164 (HANGUL FILLER) is a letter (Lo): not blank; a combining mark neither


@pytest.mark.parametrize("character, shown", [
    ("\u200b", True), ("\u2060", True), ("\ufeff", True), ("\u202e", True), ("\u2066", True), ("\u061c", True),
    ("\x1b", True), ("\x9b", True), ("\n", True), ("\u2028", True), ("\U000e0001", True),
    ("\u200c", False), ("\u200d", False), ("a", False), ("葵", False), (" ", False), ("\u3000", False), ("\ufe0f", False),
])
def test_the_characters_shown_as_code_points_are_format_control_and_separator_characters_but_the_joiners(character, shown):
    assert shown_as_code_point(character) is shown


def test_a_nul_in_a_rationale_draft_or_note_is_refused_and_nothing_is_written_on_either_database(any_engine):
    with session_scope(any_engine) as s:
        pilot(s)
    with session_scope(any_engine) as s:
        alice = get_user(s, "alice")
        claim_pk = assigned_claims(s, alice)[0]
        with pytest.raises(InvalidValueError, match="rationale"):
            save_label(s, alice, claim_pk, "support", rationale="a \x00 b")
        with pytest.raises(InvalidValueError, match="rationale"):
            save_draft(s, alice, claim_pk, rationale="a \x00 b")
        with pytest.raises(InvalidValueError, match="note"):
            put_on_hold(s, alice, s.get(Claim, claim_pk).case_pk, "missing_logs", note="\x00")
    with session_scope(any_engine) as s:
        assert s.exec(select(func.count(Label.id)).where(Label.claim_pk == claim_pk)).one() == 0
        assert s.exec(select(func.count(Draft.id))).one() == 0


def test_a_rationale_or_note_over_the_import_limit_is_refused_naming_its_length_and_nothing_is_written(engine):
    assert check_free_text("rationale", "x" * 100_000) == "x" * 100_000  # the limit itself passes
    with session_scope(engine) as s:
        pilot(s)
    with session_scope(engine) as s:
        alice = get_user(s, "alice")
        claim_pk = assigned_claims(s, alice)[0]
        with pytest.raises(InvalidValueError, match=r"^the rationale is 150,000 characters long, over the limit of "
                                                     r"100,000; shorten it$"):
            save_label(s, alice, claim_pk, "support", rationale="x" * 150_000)
        with pytest.raises(InvalidValueError, match="rationale is 100,001 characters long"):
            save_draft(s, alice, claim_pk, rationale="x" * 100_001)
        with pytest.raises(InvalidValueError, match="note is 100,001 characters long"):
            put_on_hold(s, alice, s.get(Claim, claim_pk).case_pk, "missing_logs", note="x" * 100_001)
    with session_scope(engine) as s:
        assert s.exec(select(func.count(Label.id))).one() == 0
        assert s.exec(select(func.count(Draft.id))).one() == 0


@pytest.mark.parametrize("name", ["ad\u202emin", "zero\u200bwidth", "tab\tname", "bom\ufeff"])
def test_a_user_name_with_an_invisible_character_is_refused(engine, name):
    with session_scope(engine) as s:
        with pytest.raises(InvalidValueError, match="invisible character"):
            add_user(s, OPERATOR, name, ["labeler"], "long-enough-1")
    with session_scope(engine) as s:
        assert s.exec(select(func.count(User.id))).one() == 0


def test_a_combined_and_a_precomposed_name_are_one_name_and_log_in_either_way(engine):
    combined, precomposed = "e\u0301ve", "\u00e9ve"
    assert clean_name(combined) == precomposed
    with session_scope(engine) as s:
        add_user(s, OPERATOR, combined, ["labeler"], "long-enough-1")
        with pytest.raises(InvalidValueError, match="exists already"):
            add_user(s, OPERATOR, precomposed, ["labeler"], "long-enough-1")
    with session_scope(engine) as s:
        assert authenticate(s, combined, "long-enough-1").name == precomposed
        assert get_user(s, combined).name == precomposed
