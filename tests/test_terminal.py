"""Values from users and files printed to a terminal: escape sequences, C1 and bidirectional
controls shown escaped (annotator/terminal.py), by every command line print of such values."""

from __future__ import annotations

import json

import pytest

from annotator.db import session_scope
from annotator.models import User
from annotator.terminal import json_safe, terminal_safe
from tests.conftest import annotator

HOSTILE = "eve\x1b[2J\x1b]0;pwned\x07\x9b31m\u202egnp.exe\r"
SHOWN = "eve\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\u202egnp.exe\\x0d"


@pytest.mark.parametrize("value, shown", [
    (HOSTILE, SHOWN),
    ("tab\tand\nline", "tab\\x09and\\x0aline"),
    ("\x7f\x80\u061c\u200e\u200f\u2028\u2029\u202a\u2066\u2069", "\\x7f\\x80\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a\\u2066\\u2069"),
    ("aoi 葵 ①㈱ é", "aoi 葵 ①㈱ é"),
    ("b-\u200b1", "b-\\u200b1"),
    ("\u200b\u2060\u2064\ufeff\u00ad\U000e0001", "\\u200b\\u2060\\u2064\\ufeff\\xad\\U000e0001"),
    ("👩\u200d👩\u200d👧 می\u200cخواهم 🇯🇵 👍🏽 ❤\ufe0f", "👩\u200d👩\u200d👧 می\u200cخواهم 🇯🇵 👍🏽 ❤\ufe0f"),  # joiners kept
    (42, "42"),
])
def test_terminal_safe_shows_every_control_character_escaped_and_keeps_all_other_text(value, shown):
    assert terminal_safe(value) == shown


def test_terminal_safe_keeps_the_line_breaks_and_tabs_a_program_composed_when_asked():
    assert terminal_safe("a\tb\nc\x1b[0m", keep="\n\t") == "a\tb\nc\\x1b[0m"


def test_json_safe_escapes_c1_and_bidi_controls_and_gives_the_same_json_value():
    value = {"name": HOSTILE, "葵": ["\u202e", "\x9b"]}
    dumped = json_safe(json.dumps(value, ensure_ascii=False))
    assert json.loads(dumped) == value
    assert terminal_safe(dumped) == dumped  # nothing left a terminal would act on
    assert "葵" in dumped and "\\u202e" in dumped and "\\u009b" in dumped


def test_json_safe_escapes_invisible_characters_as_the_terminal_does_and_keeps_joiners_and_line_breaks():
    value = {"id": "b-\u200b1", "t": ["\ufeff\u2060", "x\U000e0001", "👩\u200d👧"]}
    dumped = json_safe(json.dumps(value, ensure_ascii=False, indent=2))
    assert json.loads(dumped) == value
    assert "b-\\u200b1" in dumped and "\\ufeff\\u2060" in dumped and "x\\udb40\\udc01" in dumped
    assert "👩\u200d👧" in dumped and dumped.count("\n") == 7
    assert terminal_safe(dumped, keep="\n") == dumped


def test_the_terminal_escapes_what_the_app_shows_as_a_code_point():
    from annotator.ui.plain import visible
    sample = "".join(map(chr, [*range(0x00, 0x250), *range(0x2000, 0x2070), 0xFEFF, *range(0xFFF0, 0xFFFE),
                               0x1F469, 0xE0001, 0xE0067, 0x110BD]))
    for character in sample:
        shown_app, shown_terminal = visible(character) != character, terminal_safe(character) != character
        assert shown_app == shown_terminal or character in "\n\t", hex(ord(character))




def test_users_list_shows_a_stored_name_with_escape_sequences_escaped(any_db_url, any_engine):
    with session_scope(any_engine) as session:  # a name stored before names were checked, or by hand
        session.add(User(name=HOSTILE, roles="labeler"))
    code, out, _ = annotator("users", "list", "--db", any_db_url)
    assert code == 0 and out == f"{SHOWN:<20} {'labeler':<28} no password\n"
    code, out, _ = annotator("users", "list", "--json", "--db", any_db_url)
    assert code == 0 and json.loads(out)[0]["name"] == HOSTILE and terminal_safe(out, keep="\n") == out


def test_agreement_from_a_labels_file_prints_a_hostile_slice_name_escaped(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("item_id,rater,label,slice\n"
                    f"i1,ann,support,\"s\x1b[31m\"\ni1,bea,support,\"s\x1b[31m\"\n"
                    f"i2,ann,support,\"s\x1b[31m\"\ni2,bea,contradict,\"s\x1b[31m\"\n", encoding="utf-8")
    code, out, err = annotator("agreement", "--labels", str(path), "--by", "slice", "--bootstrap", "0")
    assert code == 0, err
    assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out and "\r" not in out
    assert "s\\x1b[31m" in out


def test_an_error_naming_a_hostile_value_prints_it_escaped(sqlite_url, engine):
    code, out, err = annotator("users", "disable", "x\x1b[2Jy", "--db", sqlite_url)
    assert code == 1 and "\x1b" not in err and "x\\x1b[2Jy" in err
