"""The run file reader: JSONL, one case a line with case_id, retrieved, behavior and the optional
answer, cited and claims; each refusal names the file, line and field with its exact problem and
fix, and a partial read (`skips`) lists the bad lines and gives the good ones."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from annotator import formats
from annotator.errors import ImportFileError, ImportRowError
from annotator.formats import RunCaseRecord, RunClaimRecord, Skips, read_run
from annotator.text import MAX_ID_CHARS, MAX_TEXT_CHARS
from annotator.ui.i18n import message_text, use_language

BEHAVIORS = "answer, abstain, clarify, refuse"
LABELS = "support, contradict, insufficient"
GOOD = {"case_id": "q1", "retrieved": ["p1", "p2"], "behavior": "answer"}


def run_file(tmp_path: Path, *lines: object, name: str = "run.jsonl") -> Path:
    """A run file of `lines`: dicts written as JSON, strings as they are."""
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
                            for line in lines), encoding="utf-8")
    return path


def refusal(path: Path, **options) -> ImportRowError:  # noqa: ANN003 - read_run's options
    with pytest.raises(ImportRowError) as caught:
        list(read_run(path, **options).records)
    return caught.value


def partial(path: Path) -> tuple[list[RunCaseRecord], list[ImportRowError]]:
    skips = Skips()
    records = list(read_run(path, skips=skips).records)
    return records, skips.errors


def test_a_run_file_reads_every_field_in_file_order(tmp_path):
    path = run_file(tmp_path, {
        "case_id": "q1", "retrieved": ["p3", "p1", "zz-not-in-any-dataset"], "behavior": "answer",
        "answer": "April 2024.", "cited": ["p3"],
        "claims": [{"text": "It started in April 2024.", "label": "support", "claim_id": "q1-a1"},
                   {"text": "Refunds take 5 days.", "label": "contradict", "severity": "amount_or_deadline"},
                   {"text": "Nothing else.", "label": "insufficient", "claim_id": None, "severity": None}],
    }, "", {"case_id": "q2", "retrieved": [], "behavior": "abstain", "answer": None},
        {"case_id": 7, "retrieved": ["p9"], "behavior": "refuse", "answer": "", "cited": None, "claims": None})
    source = read_run(path)
    assert (source.format, source.encoding) == ("jsonl", "UTF-8")
    assert list(source.records) == [
        RunCaseRecord(1, "q1", ("p3", "p1", "zz-not-in-any-dataset"), "answer", "April 2024.", ("p3",), (
            RunClaimRecord("It started in April 2024.", "support", "q1-a1", None),
            RunClaimRecord("Refunds take 5 days.", "contradict", None, "amount_or_deadline"),
            RunClaimRecord("Nothing else.", "insufficient", None, None))),
        RunCaseRecord(3, "q2", (), "abstain", None, (), ()),
        RunCaseRecord(4, "7", ("p9",), "refuse", "", (), ()),
    ]
    assert source.warnings == []


def test_ids_and_texts_are_nfc_and_compatibility_characters_kept(tmp_path):
    nfd = unicodedata.normalize("NFD", "café ① ガ")
    path = run_file(tmp_path, {"case_id": unicodedata.normalize("NFD", "kä"), "retrieved": [unicodedata.normalize("NFD", "pä")],
                               "behavior": "answer", "answer": nfd, "claims": [{"text": nfd, "label": "support"}]})
    [record] = read_run(path).records
    assert (record.case_id, record.retrieved, record.answer, record.claims[0].text) == ("kä", ("pä",), "café ① ガ", "café ① ガ")


def test_an_unknown_field_is_warned_about_once_per_place_and_ignored(tmp_path):
    path = run_file(tmp_path, {**GOOD, "score": 0.3, "claims": [{"text": "t", "label": "support", "judge": "x"}]},
                    {**GOOD, "case_id": "q2", "score": 0.5, "claims": [{"text": "t", "label": "support", "judge": "y"}]})
    source = read_run(path)
    assert [record.case_id for record in source.records] == ["q1", "q2"]
    assert source.warnings == [
        f"{path}, line 1: field 'score' is not one of case_id, retrieved, behavior, answer, cited, claims; it is ignored",
        f"{path}, line 1: field 'claims[0].judge' is not one of text, label, claim_id, severity; it is ignored"]


@pytest.mark.parametrize("record, field, problem", [
    ({"retrieved": ["p1"], "behavior": "answer"}, "case_id",
     "missing or empty value. Give every record a non-empty 'case_id'"),
    ({**GOOD, "case_id": " q1"}, "case_id", "id ' q1' has spaces around it. Remove the leading and "
                                            "trailing spaces from the id"),
    ({"case_id": "q1", "behavior": "answer"}, "retrieved",
     "the case has no 'retrieved'. Give the passage ids the system retrieved, ranked best first, e.g. \"retrieved\": "
     "[\"p1\", \"p2\"] ([] when it retrieved none)"),
    ({**GOOD, "retrieved": None}, "retrieved",
     "the value is null. Give the passage ids the system retrieved, ranked best first, e.g. \"retrieved\": "
     "[\"p1\", \"p2\"] ([] when it retrieved none)"),
    ({**GOOD, "retrieved": "p1,p2"}, "retrieved",
     "expected a list of passage ids, got a string. Write it as a JSON list, e.g. \"retrieved\": [\"p1\", \"p2\"]"),
    ({**GOOD, "retrieved": ["p1", "p2", "p3", 4]}, "retrieved[3]",
     "expected a string id, got a number. Write the id in double quotes"),
    ({**GOOD, "retrieved": ["p1", ""]}, "retrieved[1]",
     "missing or empty value. Give every record a non-empty 'retrieved[1]'"),
    ({**GOOD, "retrieved": ["p1", "p2 "]}, "retrieved[1]",
     "id 'p2 ' has spaces around it. Remove the leading and trailing spaces from the id"),
    ({**GOOD, "retrieved": ["p1", "x" * (MAX_ID_CHARS + 1)]}, "retrieved[1]",
     f"the value is {MAX_ID_CHARS + 1:,} characters long, over the limit of {MAX_ID_CHARS:,} for an id or name. "
     "Use a shorter id or name"),
    ({**GOOD, "retrieved": ["p1", "p2", "p3", "p2"]}, "retrieved[3]",
     "passage 'p2' is ranked twice, at retrieved[1] and retrieved[3]. Rank each passage once, at its best rank"),
    ({"case_id": "q1", "retrieved": []}, "behavior", f"missing or empty value. Give every line a behavior: one of {BEHAVIORS}"),
    ({**GOOD, "behavior": " "}, "behavior", f"missing or empty value. Give every line a behavior: one of {BEHAVIORS}"),
    ({**GOOD, "behavior": "Answer"}, "behavior", f"unknown value 'Answer'. Use one of: {BEHAVIORS}"),
    ({**GOOD, "behavior": "answer "}, "behavior", f"unknown value 'answer '. Use one of: {BEHAVIORS}"),
    ({**GOOD, "behavior": "answer_with_citation"}, "behavior",
     f"unknown value 'answer_with_citation'. Use one of: {BEHAVIORS}"),
    ({**GOOD, "behavior": 1}, "behavior", f"unknown value 1. Use one of: {BEHAVIORS}"),
    ({**GOOD, "answer": ["April"]}, "answer",
     "expected a string, got a list. Write the answer as a text in double quotes, or null when there is none"),
    ({**GOOD, "answer": "x" * (MAX_TEXT_CHARS + 1)}, "answer",
     f"the text is {MAX_TEXT_CHARS + 1:,} characters long, over the limit of {MAX_TEXT_CHARS:,}. Shorten it "
     "(split a long document into passages), or check the file for a quote that is never closed"),
    ({**GOOD, "cited": "p1"}, "cited",
     "expected a list of passage ids, got a string. Write it as a JSON list, e.g. \"cited\": [\"p1\", \"p2\"]"),
    ({**GOOD, "cited": ["p1", None]}, "cited[1]", "missing or empty value. Give every record a non-empty 'cited[1]'"),
    ({**GOOD, "claims": {"text": "t", "label": "support"}}, "claims",
     "expected a list, got an object. Write 'claims' as a JSON list [...]"),
    ({**GOOD, "claims": ["It started in April."]}, "claims[0]",
     "expected a JSON object, got a string. Write it as {...}"),
    ({**GOOD, "claims": [{"text": "t", "label": "support"}, {"label": "support"}]}, "claims[1].text",
     "missing or empty value. Give every record a non-empty 'text'"),
    ({**GOOD, "claims": [{"text": " ", "label": "support"}]}, "claims[0].text",
     "missing or empty value. Give every record a non-empty 'text'"),
    ({**GOOD, "claims": [{"text": "t"}]}, "claims[0].label", f"missing or empty value. Give every row a label: one of {LABELS}"),
    ({**GOOD, "claims": [{"text": "t", "label": "Support"}]}, "claims[0].label", f"unknown label 'Support'. Use one of: {LABELS}"),
    ({**GOOD, "claims": [{"text": "t", "label": "supported"}]}, "claims[0].label",
     f"unknown label 'supported'. Use one of: {LABELS}"),
    ({**GOOD, "claims": [{"text": "t", "label": "contradict", "severity": "high"}]}, "claims[0].severity",
     "unknown value 'high'. Use one of: leak, legal, amount_or_deadline, other"),
    ({**GOOD, "claims": [{"text": "t", "label": "support", "severity": "leak"}]}, "claims[0].severity", None),
    ({**GOOD, "claims": [{"text": "a", "label": "support", "claim_id": "k1"}, {"text": "b", "label": "support"},
                         {"text": "c", "label": "contradict", "claim_id": "k1"}]}, "claims[2].claim_id",
     "claim 'k1' is also claims[0] of this case. Give each claim of a case its own claim_id, or none"),
    ({**GOOD, "claims": [{"text": "a", "label": "support", "claim_id": " k1"}]}, "claims[0].claim_id", None),
])
def test_each_bad_field_is_refused_naming_file_line_and_field(tmp_path, record, field, problem):
    path = run_file(tmp_path, {**GOOD, "case_id": "q0"}, record)
    error = refusal(path)
    assert (error.path, error.line, error.field) == (str(path), 2, field)
    if problem is not None:
        assert str(error) == f"{path}, line 2, field '{field}': {problem}"


def test_the_same_case_twice_is_refused_naming_the_other_line_even_when_the_lines_are_the_same(tmp_path):
    path = run_file(tmp_path, GOOD, {**GOOD, "case_id": "q2"}, GOOD, {**GOOD, "case_id": "q2", "behavior": "abstain"})
    error = refusal(path)
    assert str(error) == (f"{path}, line 3, field 'case_id': case 'q1' is also on line 1: a run gives one line per case. "
                          "Keep one line per case")
    records, skipped = partial(path)
    assert [(record.line, record.case_id) for record in records] == [(1, "q1"), (2, "q2")]
    assert [(error.line, error.field) for error in skipped] == [(3, "case_id"), (4, "case_id")]


def test_a_case_whose_first_line_was_skipped_is_read_from_its_next_good_line(tmp_path):
    path = run_file(tmp_path, {**GOOD, "behavior": "Answer"}, GOOD)
    records, skipped = partial(path)
    assert [record.line for record in records] == [2] and [error.line for error in skipped] == [1]


def test_with_skips_every_bad_line_is_listed_and_the_good_lines_come_through(tmp_path):
    path = run_file(tmp_path, GOOD, "{not json", {**GOOD, "case_id": "q3", "retrieved": "p1"},
                    {**GOOD, "case_id": "q4"}, '{"case_id": "q5", "case_id": "q6", "retrieved": [], "behavior": "answer"}',
                    [1, 2], {**GOOD, "case_id": "q7", "claims": [{"text": "t", "label": "nope"}]})
    records, skipped = partial(path)
    assert [record.case_id for record in records] == ["q1", "q4"]
    assert [(error.line, error.field) for error in skipped] == [
        (2, None), (3, "retrieved"), (5, "case_id"), (6, None), (7, "claims[0].label")]


def test_a_file_whose_every_line_was_skipped_is_not_called_empty(tmp_path):
    records, skipped = partial(run_file(tmp_path, {**GOOD, "behavior": "x"}))
    assert records == [] and [error.line for error in skipped] == [1]


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_an_empty_or_blank_file_is_refused(tmp_path, content):
    path = tmp_path / "run.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportFileError) as caught:
        list(read_run(path).records)
    assert str(path) in str(caught.value)


def test_a_file_with_no_record_is_refused_as_holding_no_case_of_a_run(tmp_path, monkeypatch):
    path = run_file(tmp_path, GOOD)
    monkeypatch.setattr("annotator.formats.runs.json_lines", lambda *args: ("UTF-8", iter(())))
    with pytest.raises(ImportFileError) as caught:
        list(read_run(path).records)
    assert str(caught.value) == f"{path}: the file holds no case of a run"


def test_only_jsonl_is_a_run_format(tmp_path):
    path = run_file(tmp_path, GOOD, name="run.txt")
    assert read_run(path, "jsonl").format == read_run(path).format == "jsonl"
    with pytest.raises(ImportFileError, match="csv"):
        read_run(path, "csv")


@pytest.mark.parametrize("record", [
    {**GOOD, "retrieved": ["p1", "p2", "p1"]}, {**GOOD, "behavior": "shrug"}, {**GOOD, "answer": 3},
    {**GOOD, "claims": [{"text": "a", "label": "support", "claim_id": "k"}, {"text": "b", "label": "support", "claim_id": "k"}]},
    {"case_id": "q1", "behavior": "answer"}, GOOD,
])
def test_a_refused_line_keeps_its_english_and_reads_in_japanese(tmp_path, record):
    error = refusal(run_file(tmp_path, GOOD, record))
    said = formats.refusal_message(error)
    assert str(said) == str(error)
    with use_language("ja"):
        japanese = message_text(said)
    assert japanese.startswith(f"{error.path} の 2 行目")
    assert str(error.problem) not in japanese and str(error.fix) not in japanese


@pytest.mark.parametrize("ids", [
    [], ["a"], ["a", "b c"], ["a\nb"], ["e\u0301"], ["\u0301a"], ["é"], ["x" * MAX_ID_CHARS], ["x" * (MAX_ID_CHARS + 1)],
    ["a "], [" a"], ["a", "\u3000b"], ["a\u00a0"], ["a\n"], ["a", "b\t"], ["", "a"], ["a", ""], [1], ["a", None],
    ["a", ["b"]], ["a\u2028"],
])
def test_the_quick_check_of_an_id_list_takes_exactly_the_lists_check_ident_takes_unchanged(ids):
    from annotator.formats.runs import _plain_ids

    row = formats.Row("run.jsonl", 1, {})
    try:
        unchanged = [row.check_ident(f"retrieved[{i}]", item) for i, item in enumerate(ids)] == ids
    except ImportRowError:
        unchanged = False
    assert _plain_ids(ids) is unchanged


def test_the_run_reader_is_exported_with_the_other_readers():
    assert formats.read_run is read_run
    assert formats.RUN_KEYS == ("case_id", "retrieved", "behavior", "answer", "cited", "claims")
    assert formats.RUN_FORMATS == ("jsonl", "ragas")
