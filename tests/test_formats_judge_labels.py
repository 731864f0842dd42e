"""The judge labels reader: CSV (UTF-8, BOM, CP932) and JSONL with claim_id, label and optional
confidence and rationale; each refusal names the file, line and field, and a partial read
(`skips`) lists the bad lines and gives the good ones."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from annotator import formats
from annotator.errors import ImportFileError, ImportRowError
from annotator.formats import JudgeLabelRecord, Skips, read_judge_labels
from annotator.text import MAX_ID_CHARS, MAX_TEXT_CHARS
from tests.conftest import TEST_DATA

ALLOWED = "support, contradict, insufficient"


def refusal(path: Path, **options) -> ImportRowError:  # noqa: ANN003 - read_judge_labels' options
    with pytest.raises(ImportRowError) as caught:
        list(read_judge_labels(path, **options).records)
    return caught.value


def partial(path: Path, **options) -> tuple[list[JudgeLabelRecord], list[ImportRowError]]:  # noqa: ANN003
    skips = Skips()
    records = list(read_judge_labels(path, skips=skips, **options).records)
    return records, skips.errors


def where(error: ImportRowError) -> tuple[str, int | None, str | None]:
    return Path(error.path).name, error.line, error.field


@pytest.mark.parametrize("name, first_line", [("judge_labels.csv", 2), ("judge_labels.jsonl", 1)])
def test_a_judge_labels_file_reads_in_csv_and_jsonl(name, first_line):
    source = read_judge_labels(TEST_DATA / name)
    records = list(source.records)
    assert source.format == Path(name).suffix[1:]
    assert records == [
        JudgeLabelRecord(first_line, "n1-c1", "support", 0.9, "The handbook says April 2024."),
        JudgeLabelRecord(first_line + 1, "n1-c2", "contradict", None, ""),
        JudgeLabelRecord(first_line + 2, "n2-c1", "insufficient", 0.0, "Nothing about it, anywhere."),
        JudgeLabelRecord(first_line + 3, "n2-c2", "support", 1.0, ""),
    ]
    assert all(type(record.confidence) in (float, type(None)) for record in records)


def test_an_unknown_column_or_field_is_warned_about_as_for_labels_and_ignored():
    csv_source = read_judge_labels(TEST_DATA / "judge_labels.csv")
    list(csv_source.records)
    assert csv_source.warnings == [f"{TEST_DATA / 'judge_labels.csv'}, line 1: column 'model' is not one of "
                                   "claim_id, label, confidence, rationale; it is ignored"]
    jsonl_source = read_judge_labels(TEST_DATA / "judge_labels.jsonl")
    list(jsonl_source.records)
    assert jsonl_source.warnings == [f"{TEST_DATA / 'judge_labels.jsonl'}, line 1: field 'model' is not one of "
                                     "claim_id, label, confidence, rationale; it is ignored"]


@pytest.mark.parametrize("name, encoding", [("judge_labels_cp932.csv", "CP932"), ("judge_labels_bom.csv", "UTF-8 with BOM")])
def test_cp932_and_bom_files_are_detected_and_read_the_same(name, encoding):
    source = read_judge_labels(TEST_DATA / name)
    assert source.encoding == encoding
    assert list(source.records) == [JudgeLabelRecord(2, "ja-1", "support", 0.8, "髙橋の資料①に書かれている"),
                                    JudgeLabelRecord(3, "ja-2", "contradict", None, "㈱の発表と矛盾する")]


def test_texts_are_nfc_normalized_and_compatibility_characters_kept(tmp_path):
    path = tmp_path / "judge.jsonl"
    decomposed = unicodedata.normalize("NFD", "café ① ガ")
    path.write_text(json.dumps({"claim_id": unicodedata.normalize("NFD", "kä"), "label": "support",
                                "rationale": decomposed}) + "\n", encoding="utf-8")
    [record] = read_judge_labels(path).records
    assert (record.claim_id, record.rationale) == ("kä", "café ① ガ")
    assert record.rationale != decomposed


@pytest.mark.parametrize("line, problem", [
    (3, "unknown label 'Support'. Use one of: " + ALLOWED),
    (4, "unknown label ' support '. Use one of: " + ALLOWED),
    (5, "missing or empty value. Give every row a label: one of " + ALLOWED),
    (6, "missing or empty value. Give every row a label: one of " + ALLOWED),
    (7, "unknown label 'supports'. Use one of: " + ALLOWED),
])
def test_a_label_not_exactly_one_of_the_categories_is_refused_naming_file_line_and_field(tmp_path, line, problem):
    lines = (TEST_DATA / "judge_bad_labels.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "judge.csv"
    path.write_text(lines[0] + lines[1] + lines[line - 1], encoding="utf-8")  # the good line 2, then the bad one
    error = refusal(path)
    assert (error.line, error.field) == (3, "label")
    assert str(error) == f"{path}, line 3, field 'label': {problem}"


def test_with_skips_every_bad_label_is_listed_and_the_good_lines_come_through():
    path = TEST_DATA / "judge_bad_labels.csv"
    records, skipped = partial(path)
    assert [(record.line, record.claim_id, record.label) for record in records] == [(2, "k1", "support"),
                                                                                    (8, "k7", "contradict")]
    assert [where(error) for error in skipped] == [("judge_bad_labels.csv", line, "label") for line in (3, 4, 5, 6, 7)]


def test_the_categories_can_be_declared_and_the_message_lists_them(tmp_path):
    path = tmp_path / "judge.csv"
    path.write_text("claim_id,label\nk1,pass\nk2,support\n", encoding="utf-8")
    assert next(read_judge_labels(path, categories=("pass", "fail")).records).label == "pass"
    error = refusal(path, categories=("pass", "fail"))
    assert str(error) == f"{path}, line 3, field 'label': unknown label 'support'. Use one of: pass, fail"


@pytest.mark.parametrize("line, problem", [
    (3, "confidence 'high' is not a number"),
    (4, "confidence 'NaN' is not a number"),
    (5, "confidence 'inf' is not a number"),
    (6, "confidence 1.5 is not between 0 and 1"),
    (7, "confidence -0.1 is not between 0 and 1"),
    (8, "confidence '0,5' is not a number"),
])
def test_a_csv_confidence_that_is_not_a_number_from_0_to_1_is_refused(tmp_path, line, problem):
    lines = (TEST_DATA / "judge_bad_confidence.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "judge.csv"
    path.write_text(lines[0] + lines[line - 1], encoding="utf-8")
    error = refusal(path)
    assert str(error) == (f"{path}, line 2, field 'confidence': {problem}. Write the judge's confidence as a number "
                          "from 0 to 1 (such as 0.75), or leave it empty for none")


def test_with_skips_bad_confidences_are_listed_and_an_empty_cell_is_no_confidence():
    records, skipped = partial(TEST_DATA / "judge_bad_confidence.csv")
    assert [(record.line, record.confidence) for record in records] == [(2, 0.25), (9, None)]
    assert [where(error) for error in skipped] == [("judge_bad_confidence.csv", line, "confidence")
                                                   for line in range(3, 9)]


def test_jsonl_refusals_name_the_line_and_field_and_the_good_lines_come_through():
    path = TEST_DATA / "judge_bad.jsonl"
    records, skipped = partial(path)
    assert [(record.line, record.claim_id, record.confidence) for record in records] == [
        (1, "k1", None), (10, "k10", None), (11, "11", 0.5)]
    said = {error.line: (error.field, str(error).split(": ", 1)[1]) for error in skipped}
    assert said == {
        2: ("label", "missing or empty value. Give every row a label: one of " + ALLOWED),
        3: ("label", "unknown label 1. Use one of: " + ALLOWED),
        4: ("label", "unknown label 'Support'. Use one of: " + ALLOWED),
        5: ("confidence", "confidence is true/false, not a number. Write the judge's confidence as a number from 0 "
                          "to 1 (such as 0.75), or leave it empty for none"),
        6: ("confidence", "confidence is a string, not a number. Write the judge's confidence as a number from 0 "
                          "to 1 (such as 0.75), or leave it empty for none"),
        7: ("confidence", "confidence nan is not between 0 and 1. Write the judge's confidence as a number from 0 "
                          "to 1 (such as 0.75), or leave it empty for none"),
        8: ("confidence", "confidence inf is not between 0 and 1. Write the judge's confidence as a number from 0 "
                          "to 1 (such as 0.75), or leave it empty for none"),
        9: ("confidence", "confidence 2 is not between 0 and 1. Write the judge's confidence as a number from 0 to 1 "
                          "(such as 0.75), or leave it empty for none"),
        12: ("label", "the key 'label' appears twice in one JSON object. Keep one of them: which value was meant is "
                      "unknown, so nothing is guessed"),
        13: ("claim_id", "missing or empty value. Give every record a non-empty 'claim_id'"),
    }
    with pytest.raises(ImportRowError) as caught:
        list(read_judge_labels(path).records)
    assert where(caught.value) == ("judge_bad.jsonl", 2, "label")


def test_a_missing_blank_space_padded_or_too_long_claim_id_is_refused():
    records, skipped = partial(TEST_DATA / "judge_bad_claim_ids.csv")
    assert [record.claim_id for record in records] == ["k1", "k5"]
    said = {error.line: (error.field, error.problem) for error in skipped}
    assert [(line, field) for line, (field, _problem) in said.items()] == [(3, "claim_id"), (4, "claim_id"), (5, "claim_id")]
    assert str(said[3][1]) == "missing or empty value"
    assert str(said[4][1]) == "id ' k3' has spaces around it"
    assert str(said[5][1]) == (f"the value is {MAX_ID_CHARS + 1:,} characters long, over the limit of {MAX_ID_CHARS:,} "
                               "for an id or name")


def test_the_same_claim_twice_is_refused_naming_both_lines_even_when_the_rows_are_the_same():
    path = TEST_DATA / "judge_claim_twice.csv"
    error = refusal(path)
    assert str(error) == (f"{path}, line 4, field 'claim_id': claim 'k1' is also on line 2: a judge run gives one "
                          "label per claim. Keep one row per claim")
    records, skipped = partial(path)
    assert [(record.line, record.claim_id) for record in records] == [(2, "k1"), (3, "k2"), (5, "k3")]
    assert [(error.line, str(error.problem)) for error in skipped] == [
        (4, "claim 'k1' is also on line 2: a judge run gives one label per claim"),
        (6, "claim 'k2' is also on line 3: a judge run gives one label per claim")]


def test_a_claim_whose_first_line_was_skipped_is_read_from_its_next_good_line(tmp_path):
    path = tmp_path / "judge.csv"
    path.write_text("claim_id,label\nk1,Support\nk1,support\n", encoding="utf-8")
    records, skipped = partial(path)
    assert [(record.line, record.label) for record in records] == [(3, "support")]
    assert [error.line for error in skipped] == [2]


def test_a_rationale_over_the_text_limit_is_refused(tmp_path):
    path = tmp_path / "judge.csv"
    path.write_text(f"claim_id,label,rationale\nk1,support,ok\nk2,support,{'x' * (MAX_TEXT_CHARS + 1)}\n", encoding="utf-8")
    error = refusal(path)
    assert (error.line, error.field) == (3, "rationale")
    assert str(error.problem) == f"the text is {MAX_TEXT_CHARS + 1:,} characters long, over the limit of {MAX_TEXT_CHARS:,}"
    records, skipped = partial(path)
    assert [record.claim_id for record in records] == ["k1"] and [error.line for error in skipped] == [3]


def test_a_missing_label_column_is_refused_at_the_header(tmp_path):
    path = tmp_path / "judge.csv"
    path.write_text("claim_id,judgement\nk1,support\n", encoding="utf-8")
    with pytest.raises(ImportRowError) as caught:
        read_judge_labels(path, skips=Skips())
    assert (caught.value.line, str(caught.value.problem)) == (1, "missing column(s) label")


@pytest.mark.parametrize("content", ["claim_id,label,confidence,rationale\n", ""])
def test_an_empty_file_is_refused(tmp_path, content):
    path = tmp_path / "judge.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportFileError) as caught:
        list(read_judge_labels(path).records)
    assert str(path) in str(caught.value)


def test_a_header_only_file_is_refused_as_holding_no_judge_labels_with_or_without_skips():
    path = TEST_DATA / "judge_header_only.csv"
    for skips in (None, Skips()):
        with pytest.raises(ImportFileError) as caught:
            list(read_judge_labels(path, skips=skips).records)
        assert str(caught.value) == f"{path}: the file holds no judge labels"


def test_a_file_whose_every_line_was_skipped_is_not_called_empty(tmp_path):
    path = tmp_path / "judge.csv"
    path.write_text("claim_id,label\nk1,Support\n", encoding="utf-8")
    records, skipped = partial(path)
    assert records == [] and [error.line for error in skipped] == [2]


def test_the_judge_reader_is_exported_with_the_other_readers():
    assert formats.read_judge_labels is read_judge_labels
    assert formats.JUDGE_LABEL_COLUMNS == ("claim_id", "label", "confidence", "rationale")
