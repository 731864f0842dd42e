"""The file readers: each format reads right, each broken input names file, line and field.

CLIMATE-FEVER: Diggelmann et al. (2020), arXiv:2012.00614, where `annotator data fetch climate-fever`
puts it (tests/conftest.py, CLIMATE_FEVER).
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterable
from pathlib import Path

import pytest

from annotator import formats
from annotator.formats import csv_text
from annotator.errors import ImportFileError, ImportRowError
from tests.conftest import CLIMATE_FEVER, DEMO, TEST_DATA, need
from tests.factories import json_says

FLAT_FILES = [
    ("import_flat_utf8.csv", "UTF-8"),
    ("import_flat_utf8_bom.csv", "UTF-8 with BOM"),
    ("import_flat_cp932.csv", "CP932"),
]


def read_all(path: Path, fmt: str = "auto") -> tuple[formats.Source, list]:
    source = formats.read_cases(path, fmt)
    return source, list(source.records)


def error_of(call) -> ImportRowError:  # noqa: ANN001 - a zero-argument callable
    with pytest.raises(ImportRowError) as caught:
        call()
    return caught.value


CASE_FIELDS = {"question": "Q?", "answer": "A.", "slice": "normal", "split": "dev"}
PASSAGE_FIELDS = {"doc_id": "d", "version": "v1", "title": "T"}


def native(case_id: str = "c1", passages: tuple[str, ...] = ("p1",), claims: tuple[str, ...] = ("k",), **fields) -> dict:
    """A complete native record (every key of the format), with `fields` replacing or adding keys."""
    return {"case_id": case_id, **CASE_FIELDS, "metadata": {},
            "passages": [{"passage_id": p, **PASSAGE_FIELDS, "text": "t"} for p in passages],
            "claims": [{"claim_id": k, "text": "t"} for k in claims], **fields}


def write_jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")
    return path


# ---------------------------------------------------------------- native JSON lines


def test_native_jsonl_reads_cases_claims_and_passages_in_file_order():
    source, cases = read_all(TEST_DATA / "import_native.jsonl")
    assert (source.format, source.encoding) == ("jsonl", "UTF-8")
    assert [case.case_id for case in cases] == ["n1", "n2"]  # line 4 repeats line 1: dropped
    n1 = cases[0]
    assert (n1.slice, n1.split, n1.line) == ("updated_document", "dev", 1)
    assert n1.metadata == {"model": "m-1", "prompt_version": "p3"}
    assert [p.passage_id for p in n1.passages] == ["p1", "p2"]
    assert n1.passages[1].title == "Memo ①"
    assert [(c.claim_id, c.passage_ids) for c in n1.claims] == [("n1-c1", ("p1",)), ("n1-c2", ("p1", "p2"))]
    assert cases[1].line == 3  # the blank line 2 is skipped, not renumbered


def test_native_claim_without_passage_ids_is_shown_with_all_passages_of_its_case():
    _, cases = read_all(TEST_DATA / "import_native.jsonl")
    assert cases[0].claims[1].passage_ids == ("p1", "p2")
    assert cases[1].claims[0].passage_ids == ("p1",)


def test_text_is_nfc_normalized_and_compatibility_characters_are_kept():
    _, cases = read_all(TEST_DATA / "import_native.jsonl")
    assert cases[0].claims[1].text == "The Caf\u00e9 memo was approved by 髙橋."  # e + U+0301 composed
    assert "㈱" in cases[0].answer and "(株)" not in cases[0].answer  # NFC, never NFKC


def test_a_passage_shared_by_two_cases_is_a_harmless_repeat():
    _, cases = read_all(TEST_DATA / "import_native.jsonl")
    assert cases[0].passages[0] .content() == cases[1].passages[0].content()


def test_bad_json_line_is_named_with_what_json_expected():
    error = error_of(lambda: read_all(TEST_DATA / "import_broken_json.jsonl"))
    assert (error.path, error.line, error.field) == (str(TEST_DATA / "import_broken_json.jsonl"), 2, None)
    line = (TEST_DATA / "import_broken_json.jsonl").read_text(encoding="utf-8").splitlines()[1]
    assert f"not valid JSON: {json_says(line)}. " in str(error)
    assert "import_broken_json.jsonl, line 2:" in str(error)


def test_missing_claim_text_names_line_and_nested_field():
    error = error_of(lambda: read_all(TEST_DATA / "import_claim_missing_text.jsonl"))
    assert (error.line, error.field) == (2, "claims[1].text")
    assert "missing or empty" in str(error)


def test_same_case_id_twice_with_other_content_names_both_lines():
    error = error_of(lambda: read_all(TEST_DATA / "import_case_id_twice.jsonl"))
    assert (error.line, error.field) == (3, "case_id")
    assert "case 's1' is also on line 1 with other content" in str(error)
    assert "line 3" in str(error)


def test_claim_naming_a_passage_of_another_case_is_refused():
    error = error_of(lambda: read_all(TEST_DATA / "import_passage_of_other_case.jsonl"))
    assert (error.line, error.field) == (2, "claims[0].passage_ids[1]")
    assert "passage 'p9' is not one of this case's passages (p2)" in str(error)


def test_claim_with_no_passages_at_all_is_refused():
    error = error_of(lambda: read_all(TEST_DATA / "import_claim_no_passages.jsonl"))
    assert (error.line, error.field) == (1, "claims[0].passage_ids")
    assert "claim 'w1-c1' has no passages" in str(error)


@pytest.mark.parametrize("record, field, problem", [
    (native("c1 ", claims=()), "case_id", "id 'c1 ' has spaces around it"),
    (native(claims=()), "claims", "the case has no claims"),
    ({**native(), "passages": [{"passage_id": "p1", **PASSAGE_FIELDS}]}, "passages[0].text", "missing"),
    (native(passages=(" p1",)), "passages[0].passage_id", "spaces around it"),
    (native(split="test"), "split", "unknown value 'test'"),
    (native(metadata=[1]), "metadata", "expected an object"),
    ({**native(), "claims": [{"claim_id": "k", "text": "t", "passage_ids": []}]}, "claims[0].passage_ids", "has no passages"),
])
def test_each_broken_native_record_names_line_and_field(tmp_path, record, field, problem):
    path = write_jsonl(tmp_path / "cases.jsonl", native("c0", ("p0",), ("k0",)), record)
    error = error_of(lambda: read_all(path))
    assert (error.line, error.field) == (2, field)
    assert problem in str(error)


def test_same_claim_id_in_two_cases_names_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "cases.jsonl", native("c1", ("p",)), native("c2", ("p",)))
    error = error_of(lambda: read_all(path))
    assert (error.line, error.field) == (2, "claims[0].claim_id")
    assert "claim 'k' is also on line 1 with other content (case_id differ)" in str(error)


def test_undecodable_jsonl_line_names_the_byte_offset(tmp_path):
    path = tmp_path / "cases.jsonl"
    good = json.dumps(native("a")).encode() + b"\n"
    path.write_bytes(good + b'{"case_id": "b\xff"}\n')
    error = error_of(lambda: read_all(path, "jsonl"))
    assert error.line == 2
    assert f"byte {len(good) + 14} (0xff, column 15 of the line) is not UTF-8" in str(error)


# ---------------------------------------------------------------- flat CSV


@pytest.mark.parametrize("name, encoding", FLAT_FILES)
def test_flat_csv_is_read_in_its_detected_encoding(name, encoding):
    source, cases = read_all(TEST_DATA / name)
    assert (source.format, source.encoding) == ("csv", encoding)
    assert [case.case_id for case in cases] == ["f1", "f2"]
    f1 = cases[0]
    assert f1.answer == "髙橋 of ㈱ Example approved it, on ① April."
    assert [(c.claim_id, c.text, c.passage_ids, c.line) for c in f1.claims] == [
        ("f1-c1", "髙橋 approved the memo.", ("p1", "p2"), 2),
        ("f1-c2", "㈱ Example is the company.", ("p2",), 5),
    ]
    assert f1.passages[0].content() == {"doc_id": "memo", "version": "v1", "title": "Memo ①",
                                        "text": "Approved by 髙橋 of ㈱ Example,\non the first of April."}
    assert (cases[1].slice, cases[1].split, cases[1].line) == ("permission", "holdout", 6)


def test_flat_csv_with_columns_in_another_order_reads_the_same_and_keeps_extra_columns_as_metadata():
    source, cases = read_all(TEST_DATA / "import_flat_reordered.csv")
    _, utf8 = read_all(TEST_DATA / "import_flat_utf8.csv")
    assert cases[0].claims[0] == utf8[0].claims[0]
    assert cases[0].passages == utf8[0].passages[:1] + (cases[0].passages[1],)
    assert cases[0].passages[1].content() == utf8[0].passages[1].content()
    assert cases[0].metadata == {"model_version": "m-7"}
    assert source.warnings == [f"{TEST_DATA / 'import_flat_reordered.csv'}, line 1: column 'model_version' is not one of "
                               + ", ".join(formats.CSV_CASE_COLUMNS) + "; it is kept as case metadata"]


def test_csv_error_names_the_starting_line_of_its_record_after_a_multiline_field():
    error = error_of(lambda: read_all(TEST_DATA / "import_id_space.csv"))
    assert (error.line, error.field) == (4, "claim_id")  # record 1 spans lines 2-3
    assert "id 'x1-c2 ' has spaces around it" in str(error)


def test_csv_missing_required_column_is_named():
    error = error_of(lambda: read_all(TEST_DATA / "import_missing_column.csv"))
    assert error.line == 1
    assert "missing column(s) passage_text" in str(error)


def test_undecodable_csv_is_refused_naming_byte_offset_line_and_field():
    error = error_of(lambda: read_all(TEST_DATA / "import_undecodable.csv"))
    assert (error.line, error.field) == (3, "claim")
    assert "byte 98 (0x81) is neither UTF-8 nor CP932" in str(error)


def test_csv_rows_of_one_case_that_disagree_are_refused_naming_both_lines(tmp_path):
    path = tmp_path / "flat.csv"
    path.write_text("case_id,question,claim_id,claim,passage_id,passage_text\n"
                    "c1,Q1,k1,A claim.,p1,Text.\n"
                    "c1,Q2,k2,B claim.,p1,Text.\n", encoding="utf-8")
    error = error_of(lambda: read_all(path))
    assert (error.line, error.field) == (3, "case_id")
    assert "case 'c1' is also on line 2 with other content (question differ)" in str(error)


def test_decode_csv_bytes_tries_utf8_then_cp932_strictly():
    assert formats.decode_csv_bytes("x.csv", "髙①㈱".encode()) == ("髙①㈱", "UTF-8")
    assert formats.decode_csv_bytes("x.csv", "髙①㈱".encode("utf-8-sig")) == ("髙①㈱", "UTF-8 with BOM")
    assert formats.decode_csv_bytes("x.csv", "髙①㈱".encode("cp932")) == ("髙①㈱", "CP932")


# ---------------------------------------------------------------- flat CSV, streamed


FLAT_HEADER = "case_id,question,slice,split,claim_id,claim,passage_id,passage_text\n"


def flat_row(case: str, claim: str, passage: str, text: str = "Text.") -> str:
    return f"{case},Q {case}?,normal,dev,{claim},Claim {claim}.,{passage},{text}\n"


def write_flat(path: Path, rows: Iterable[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(FLAT_HEADER)
        out.writelines(rows)
    return path


@pytest.fixture
def rows_read(monkeypatch) -> list[int]:  # noqa: ANN001
    """The lines of the CSV rows read so far (by the second reading, which groups them)."""
    read: list[int] = []
    rows = csv_text._csv_records

    def spied(*args):  # noqa: ANN002, ANN202
        for row in rows(*args):
            read.append(row.line)
            yield row
    monkeypatch.setattr(csv_text, "_csv_records", spied)
    return read


def test_csv_files_are_never_read_whole(tmp_path, monkeypatch):
    cases = write_flat(tmp_path / "flat.csv", [flat_row("c1", "k1", "p1"), flat_row("c2", "k2", "p2")])
    labels = tmp_path / "labels.csv"
    labels.write_text("claim_id,labeler,label\nk1,a,support\n", encoding="utf-8")

    def whole(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise AssertionError(f"{self} was read whole")
    monkeypatch.setattr(Path, "read_bytes", whole)
    monkeypatch.setattr(Path, "read_text", whole)
    assert [case.case_id for case in formats.read_cases(cases).records] == ["c1", "c2"]
    assert [record.claim_id for record in formats.read_labels(labels).records] == ["k1"]


def test_csv_cases_come_out_while_the_file_is_still_being_read(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_text, "READ_BYTES", 4096)
    path = write_flat(tmp_path / "flat.csv", (flat_row(f"c{i}", f"k{i}-{j}", f"p{i}", "x" * 200)
                                              for i in range(500) for j in range(2)))
    size = path.stat().st_size
    source = formats.read_cases(path)
    assert source.position.bytes_read == 0
    assert next(source.records).case_id == "c0"
    assert 0 < source.position.bytes_read < size // 10  # progress is real, not the whole file at the first case
    assert sum(1 for _ in source.records) == 499
    assert source.position.bytes_read == source.position.size == size


def test_a_case_comes_out_as_soon_as_its_last_row_and_the_cases_before_it_are_read(tmp_path, rows_read):
    path = write_flat(tmp_path / "flat.csv", [flat_row("a", "a1", "pa"), flat_row("b", "b1", "pb"),
                                              flat_row("b", "b2", "pb"), flat_row("a", "a2", "pa"),
                                              flat_row("c", "c1", "pc"), flat_row("c", "c2", "pc")])
    records = formats.read_cases(path).records
    assert (next(records).case_id, rows_read) == ("a", [2, 3, 4, 5])  # b, complete at line 4, waits for a
    assert (next(records).case_id, rows_read) == ("b", [2, 3, 4, 5])
    assert (next(records).case_id, rows_read) == ("c", [2, 3, 4, 5, 6, 7])


def test_reading_a_big_csv_holds_about_one_case_not_the_file(tmp_path):
    path = write_flat(tmp_path / "big.csv", (flat_row(f"c{i}", f"k{i}-{j}", f"p{i}-{j}", "本文" * 1500)
                                             for i in range(200) for j in range(4)))
    size = path.stat().st_size  # about 7 MB; decoded whole and grouped, it took over 4 times that
    tracemalloc.start()
    try:
        count = sum(1 for _ in formats.read_cases(path).records)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 200
    assert peak < size // 5, f"peak {peak:,} bytes for a file of {size:,}"


def test_a_case_whose_rows_are_spread_across_the_file_is_grouped_whole_in_order_of_first_appearance(tmp_path):
    path = write_flat(tmp_path / "flat.csv", [
        flat_row("a", "a1", "pa1"),   # line 2
        flat_row("b", "b1", "pb1"),   # 3
        flat_row("c", "c1", "pc1"),   # 4
        flat_row("a", "a2", "pa1"),   # 5
        flat_row("b", "b1", "pb2"),   # 6
        flat_row("a", "a1", "pa2"),   # 7
        flat_row("b", "b1", "pb1"),   # 8: a repeat of line 3
    ])
    _, cases = read_all(path)
    assert [(case.case_id, case.line, case.question) for case in cases] == [("a", 2, "Q a?"), ("b", 3, "Q b?"),
                                                                           ("c", 4, "Q c?")]
    assert [[(c.claim_id, c.passage_ids, c.line) for c in case.claims] for case in cases] == [
        [("a1", ("pa1", "pa2"), 2), ("a2", ("pa1",), 5)],
        [("b1", ("pb1", "pb2"), 3)],
        [("c1", ("pc1",), 4)],
    ]
    assert [[(p.passage_id, p.line, p.first) for p in case.passages] for case in cases] == [
        [("pa1", 2, True), ("pa2", 7, True)], [("pb1", 3, True), ("pb2", 6, True)], [("pc1", 4, True)]]


def test_a_passage_is_first_in_the_first_case_that_comes_out_with_it(tmp_path):
    """The importer takes a passage marked first as new in a new dataset: it must be the first
    copy given out, even when another case's row named it earlier in the file."""
    path = write_flat(tmp_path / "flat.csv", [flat_row("b", "b1", "p2"), flat_row("a", "a1", "p"),
                                              flat_row("b", "b2", "p")])
    _, cases = read_all(path)
    assert [(case.case_id, [(p.passage_id, p.first) for p in case.passages]) for case in cases] == [
        ("b", [("p2", True), ("p", True)]), ("a", [("p", False)])]


def test_partial_csv_skips_the_case_of_a_bad_row_whole_even_when_that_row_was_its_last(tmp_path, rows_read):
    path = write_flat(tmp_path / "flat.csv", [flat_row("a", "a1", "pa"), flat_row("a", "a2 ", "pa"),
                                              flat_row("b", "b1", "pb"), flat_row("c ", "c1", "pc")])
    skips = formats.Skips()
    records = formats.read_cases(path, skips=skips).records
    first = next(records)
    assert ((first.case_id, [claim.claim_id for claim in first.claims]), rows_read) == (("b", ["b1"]), [2, 3, 4])
    assert list(records) == []
    assert [(error.line, error.field) for error in skips.errors] == [(2, "case_id"), (3, "claim_id"), (5, "case_id")]


@pytest.mark.parametrize("read_bytes", [1, 7])
@pytest.mark.parametrize("name, encoding", FLAT_FILES)
def test_a_csv_file_read_a_few_bytes_at_a_time_reads_the_same(monkeypatch, name, encoding, read_bytes):
    _, expected = read_all(TEST_DATA / name)
    monkeypatch.setattr(csv_text, "READ_BYTES", read_bytes)  # characters and line breaks split between reads
    source, cases = read_all(TEST_DATA / name)
    assert source.encoding == encoding
    assert cases == expected


@pytest.mark.parametrize("read_bytes", [1, 7, 1 << 16])
@pytest.mark.parametrize("name, message", [
    ("import_undecodable.csv", "line 3, field 'claim': byte 98 (0x81) is neither UTF-8 nor CP932."),
    ("import_cp932_unassigned_byte.csv", "line 2, field 'passage_text': byte 162 (0xa0) is neither UTF-8 nor CP932 "
                                         "(UTF-8 fails at byte 116, CP932 at byte 162)."),
])
def test_undecodable_csv_bytes_are_named_as_decode_csv_bytes_names_them_whatever_the_reads(monkeypatch, name, message,
                                                                                       read_bytes):
    path = TEST_DATA / name
    whole = error_of(lambda: formats.decode_csv_bytes(path, path.read_bytes()))
    monkeypatch.setattr(csv_text, "READ_BYTES", read_bytes)
    streamed = error_of(lambda: formats.read_cases(path))
    assert str(streamed) == str(whole)
    assert str(streamed).startswith(f"{path}, {message} ")


def test_an_undecodable_byte_after_a_bom_is_named_by_its_offset_in_the_file(tmp_path):
    data = b"\xef\xbb\xbf" + "case_id,claim\nc1,".encode() + b"\xff\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(data)
    expected = (f"{path}, line 2, field 'claim': byte 20 (0xff) is neither UTF-8 nor CP932 (UTF-8 fails at byte 20, "
                "CP932 at byte 0). Save the file as UTF-8 (Excel: 'CSV UTF-8') or as CP932 and import again")
    assert data[20] == 0xff
    assert str(error_of(lambda: formats.decode_csv_bytes(path, data))) == expected
    assert str(error_of(lambda: formats.read_labels(path))) == expected


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize("name, expected", [
    ("import_flat_utf8.csv", "csv"),
    ("import_native.jsonl", "jsonl"),
    ("import_climate_fever_tiny.jsonl", "climate-fever"),
    ("import_broken_json.jsonl", "jsonl"),
])
def test_format_is_detected_by_extension_and_content(name, expected):
    assert formats.detect_format(TEST_DATA / name) == expected


def test_missing_file_and_unknown_format_are_file_errors(tmp_path):
    with pytest.raises(ImportFileError, match="no such file"):
        formats.read_cases(tmp_path / "nope.jsonl")
    with pytest.raises(ImportFileError, match="unknown format 'xml'"):
        formats.read_cases(TEST_DATA / "import_native.jsonl", "xml")


# ---------------------------------------------------------------- CLIMATE-FEVER


def test_climate_fever_claim_becomes_one_case_with_one_claim_per_evidence():
    source, cases = read_all(TEST_DATA / "import_climate_fever_tiny.jsonl")
    assert source.format == "climate-fever"
    t1 = cases[0]
    assert (t1.case_id, t1.question, t1.answer, t1.slice, t1.split) == ("t1", "Sea level rise has accelerated.", "", "normal", "dev")
    assert t1.metadata == {"claim_label": "SUPPORTS", "source": "CLIMATE-FEVER (Diggelmann et al., 2020)"}
    assert [(c.claim_id, c.text, c.passage_ids) for c in t1.claims] == [
        ("t1-0", "Sea level rise has accelerated.", ("Sea level:1",)),
        ("t1-1", "Sea level rise has accelerated.", ("Sea level:2",)),
    ]
    assert t1.passages[0].content() == {"doc_id": "Sea level", "version": "", "title": "Sea level",
                                        "text": "The rate of rise has increased in recent decades."}
    assert t1.claims[1].votes == ("support", None, "insufficient", "contradict", None)


def test_vote_helpers_map_slots_and_non_null_votes():
    votes = ("support", None, "insufficient", "contradict", None)
    assert formats.slot_votes(votes) == [("cf-vote-1", "support"), ("cf-vote-3", "insufficient"), ("cf-vote-4", "contradict")]
    assert formats.first_votes(votes, 2) == [("cf-vote-1", "support"), ("cf-vote-2", "insufficient")]
    assert formats.nth_vote(votes, 3) == "contradict"
    assert formats.nth_vote(votes, 4) is None


def test_unknown_climate_fever_vote_names_line_and_field(tmp_path):
    path = tmp_path / "cf.jsonl"
    record = {"claim_id": "1", "claim": "c", "evidences": [
        {"evidence_id": "e", "article": "a", "evidence": "x", "votes": ["SUPPORTS", "MAYBE", None, None, None]}]}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    error = error_of(lambda: read_all(path))
    assert (error.line, error.field) == (1, "evidences[0].votes[1]")
    assert "unknown vote 'MAYBE'" in str(error) and "NOT_ENOUGH_INFO" in str(error)


def test_whole_climate_fever_file_reads_as_1535_cases_and_7675_claims():
    _, cases = read_all(need(CLIMATE_FEVER))
    assert len(cases) == 1535
    assert sum(len(case.claims) for case in cases) == 7675
    assert cases[0].claims[4].claim_id == "0-4"


# ---------------------------------------------------------------- labels and adjudications


@pytest.mark.parametrize("name", ["labels_native.csv", "labels_native.jsonl"])
def test_labels_file_reads_in_csv_and_jsonl(name):
    source = formats.read_labels(TEST_DATA / name)
    records = list(source.records)
    assert records[0] == formats.LabelRecord("n1-c1", "alice", "support", "The handbook says April 2024.", ("p1",), None, 2 if name.endswith(".csv") else 1)
    assert records[1].rationale == "I read 2023, not 2024."


def test_csv_passage_ids_are_separated_by_semicolons():
    records = list(formats.read_labels(TEST_DATA / "labels_native.csv").records)
    assert records[2].passage_ids == ("p1", "p2")
    assert records[3].passage_ids == ()


def test_unknown_label_names_value_line_field_and_allowed_ones():
    error = error_of(lambda: list(formats.read_labels(TEST_DATA / "labels_unknown_label.csv").records))
    assert (error.line, error.field) == (3, "label")
    assert "unknown label 'supports'. Use one of: support, contradict, insufficient" in str(error)


def test_unknown_severity_is_refused(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"claim_id": "k", "labeler": "a", "label": "contradict", "severity": "huge"}) + "\n", encoding="utf-8")
    error = error_of(lambda: list(formats.read_labels(path).records))
    assert (error.line, error.field) == (1, "severity")
    assert "leak, legal, amount_or_deadline, other" in str(error)


def test_same_label_twice_is_a_repeat_and_with_other_content_names_both_lines(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("claim_id,labeler,label\nk,a,support\nk,a,support\nk,a,contradict\n", encoding="utf-8")
    source = formats.read_labels(path)
    error = error_of(lambda: list(source.records))
    assert (error.line, error.field) == (4, "labeler")
    assert "label of claim 'k', 'a' is also on line 2 with other content (label differ)" in str(error)


def test_adjudications_file_reads_and_warns_about_unused_columns(tmp_path):
    path = tmp_path / "adjudications.csv"
    path.write_text("claim_id,adjudicator,label,rationale,note\nk,carol,support,Clear.,x\n", encoding="utf-8")
    source = formats.read_adjudications(path)
    assert list(source.records) == [formats.AdjudicationRecord("k", "carol", "support", "Clear.", None, 2)]
    assert source.warnings == [f"{path}, line 1: column 'note' is not one of claim_id, adjudicator, label, rationale, severity; it is ignored"]


# ---------------------------------------------------------------- every key of the native format


@pytest.mark.parametrize("key, add", [
    ("question", 'Add "question": "..." to the case (the question put to the system; it cannot be empty)'),
    ("answer", 'Add "answer": "..." to the case (the system\'s answer; "" if it gave none)'),
    ("slice", 'Add "slice": "..." to the case (e.g. "normal"; it cannot be empty)'),
    ("split", 'Add "split": "dev" to the case (one of dev, holdout)'),
])
def test_a_case_without_one_of_its_keys_is_refused_saying_what_to_add(tmp_path, key, add):
    record = native()
    del record[key]
    path = write_jsonl(tmp_path / "cases.jsonl", native("c0", ("p0",), ("k0",)), record)
    error = error_of(lambda: read_all(path))
    assert str(error) == f"{path}, line 2, field '{key}': the case has no '{key}'. {add}"


@pytest.mark.parametrize("key, add", [
    ("doc_id", 'Add "doc_id": "..." to the passage ("" if unknown)'),
    ("version", 'Add "version": "..." to the passage ("" if unknown)'),
    ("title", 'Add "title": "..." to the passage ("" if none)'),
])
def test_a_passage_without_one_of_its_keys_is_refused_saying_what_to_add(tmp_path, key, add):
    record = native(passages=("p1", "p2"))
    del record["passages"][1][key]
    path = write_jsonl(tmp_path / "cases.jsonl", record)
    error = error_of(lambda: read_all(path))
    assert str(error) == f"{path}, line 1, field 'passages[1].{key}': the passage has no '{key}'. {add}"


def test_empty_answer_doc_id_version_and_title_are_allowed(tmp_path):
    record = native(answer="")
    record["passages"][0].update(doc_id="", version="", title="")
    _, cases = read_all(write_jsonl(tmp_path / "cases.jsonl", record))
    assert cases[0].answer == ""
    assert cases[0].passages[0].content() == {"doc_id": "", "version": "", "title": "", "text": "t"}


@pytest.mark.parametrize("key, value, problem", [
    ("question", "", "the value is empty"),
    ("question", "  ", "the value is empty"),
    ("slice", "", "the value is empty"),
    ("split", "", "missing or empty value"),
    ("answer", None, "the value is null"),
])
def test_empty_question_slice_or_split_and_a_null_answer_are_refused(tmp_path, key, value, problem):
    path = write_jsonl(tmp_path / "cases.jsonl", native(**{key: value}))
    error = error_of(lambda: read_all(path))
    assert (error.line, error.field) == (1, key)
    assert f"field '{key}': {problem}" in str(error)


def test_the_demo_file_has_every_key_of_the_native_format():
    source, cases = read_all(need(DEMO))
    assert len(cases) == 20
    assert source.warnings == []


# ---------------------------------------------------------------- unknown fields and columns


def test_an_unknown_case_field_is_kept_as_metadata_with_the_same_warning_as_an_unknown_csv_column(tmp_path):
    path = write_jsonl(tmp_path / "cases.jsonl", native(metadata={"a": 1}, model_version="m-7"),
                       native("c2", ("p1",), ("k2",), model_version="m-8"))
    source, cases = read_all(path)
    assert [case.metadata for case in cases] == [{"a": 1, "model_version": "m-7"}, {"model_version": "m-8"}]
    assert source.warnings == [f"{path}, line 1: field 'model_version' is not one of "
                               + ", ".join(formats.NATIVE_CASE_KEYS) + "; it is kept as case metadata"]


def test_an_unknown_case_field_that_contradicts_the_metadata_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "cases.jsonl", native(metadata={"model": "a"}, model="b"))
    error = error_of(lambda: read_all(path))
    assert (error.line, error.field) == (1, "model")
    assert "'model' is both a field of the case and a key of its metadata, with other values" in str(error)


def test_an_unknown_passage_or_claim_field_is_warned_about_once(tmp_path):
    record = native(passages=("p1", "p2"))
    for passage in record["passages"]:
        passage["url"] = "https://example.org"
    record["claims"][0]["note"] = "x"
    source, _ = read_all(write_jsonl(tmp_path / "cases.jsonl", record))
    path = tmp_path / "cases.jsonl"
    assert source.warnings == [
        f"{path}, line 1: field 'passages[0].url' is not one of passage_id, doc_id, version, title, text; it is ignored",
        f"{path}, line 1: field 'claims[0].note' is not one of claim_id, text, passage_ids; it is ignored",
    ]


def test_an_unknown_column_and_an_unknown_field_of_a_labels_file_give_the_same_warning(tmp_path):
    csv_path = tmp_path / "labels.csv"
    csv_path.write_text("claim_id,labeler,label,note\nk,a,support,x\n", encoding="utf-8")
    jsonl_path = write_jsonl(tmp_path / "labels.jsonl", {"claim_id": "k", "labeler": "a", "label": "support", "note": "x"})
    known = "claim_id, labeler, label, rationale, passage_ids, severity"
    for path, noun in ((csv_path, "column"), (jsonl_path, "field")):
        source = formats.read_labels(path)
        assert [record.claim_id for record in source.records] == ["k"]
        assert source.warnings == [f"{path}, line 1: {noun} 'note' is not one of {known}; it is ignored"]


def test_a_csv_column_without_a_name_is_ignored_with_a_warning_and_not_kept_as_metadata(tmp_path):
    path = tmp_path / "flat.csv"
    path.write_text("case_id,claim_id,claim,passage_id,passage_text,\nc1,k1,A claim.,p1,Text.,stray\n", encoding="utf-8")
    source, cases = read_all(path)
    assert cases[0].metadata == {}
    assert source.warnings == [f"{path}, line 1: column 6 has no name in the header; it is ignored"]


# ---------------------------------------------------------------- files that are not what they seem


def test_a_folder_is_named_as_a_folder_not_a_missing_file(tmp_path):
    with pytest.raises(ImportFileError) as caught:
        formats.read_cases(tmp_path)
    assert str(caught.value) == f"{tmp_path} is a folder, not a file: name the file to import, inside that folder"


def test_a_device_is_not_a_regular_file():
    with pytest.raises(ImportFileError) as caught:
        formats.read_labels("/dev/null")
    assert str(caught.value) == ("/dev/null is not a regular file (a device, pipe or socket): save the data to a file "
                                 "and import that file")


@pytest.mark.parametrize("data, problem", [(b"", "is empty (0 bytes)"), (b"\xef\xbb\xbf\n \n", "is empty (only blank lines)")])
def test_an_empty_file_is_named_empty(tmp_path, data, problem):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data)
    with pytest.raises(ImportFileError) as caught:
        formats.read_cases(path)
    assert str(caught.value) == f"{path} {problem}: export the data again, or name another file"


@pytest.mark.parametrize("name, data", [
    ("cases.csv", "case_id,claim_id\n".encode("utf-16")),              # byte order mark FF FE
    ("cases.jsonl", b"\xfe\xff" + '{"case_id": "c1"}\n'.encode("utf-16-be")),
    ("cases.jsonl", '{"case_id": "c1"}\n'.encode("utf-16-le")),        # no byte order mark: NUL bytes
    ("labels.csv", "claim_id,labeler,label\n".encode("utf-16-be")),
])
def test_a_utf16_file_is_refused_asking_for_utf8(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    read = formats.read_labels if name.startswith("labels") else formats.read_cases
    with pytest.raises(ImportFileError) as caught:
        read(path)
    assert str(caught.value) == f"{path}: UTF-16 is not supported: save the file as UTF-8 (Excel: 'CSV UTF-8') and import again"


# ---------------------------------------------------------------- quotes and control characters


UNCLOSED = 'a quoted field is never closed (a missing "?). Add the closing " at the end of the cell, and write a " inside a quoted cell as ""'


def test_a_csv_quote_that_is_never_closed_is_named_at_its_line_and_column(tmp_path):
    path = tmp_path / "flat.csv"
    path.write_text("case_id,question,answer,claim_id,claim,passage_id,passage_text\n"
                    "c0,質問0,回答0,k0,主張0,p0,本文0\n"
                    '"c1,質問1,回答1,k1,主張1,p1,本文1\n'
                    "c2,質問2,回答2,k2,主張2,p2,本文2\n", encoding="utf-8")
    error = error_of(lambda: read_all(path))
    assert str(error) == f"{path}, line 3, field 'case_id': {UNCLOSED}"


def test_an_unclosed_quote_after_a_multiline_cell_is_named_where_it_opens(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text('claim_id,labeler,label,rationale\nk1,a,support,"two\nlines"\nk2,a,contradict,"It says ""30 days\nk3,a,support,\n',
                    encoding="utf-8")
    error = error_of(lambda: list(formats.read_labels(path).records))
    assert str(error) == f"{path}, line 4, field 'rationale': {UNCLOSED}"


def test_an_unclosed_quote_in_the_header_is_named_at_line_1(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text('claim_id,"labeler,label\nk1,a,support\n', encoding="utf-8")
    error = error_of(lambda: formats.read_labels(path))
    assert str(error) == f"{path}, line 1: {UNCLOSED}"


def test_closed_quotes_doubled_quotes_and_a_quote_inside_an_unquoted_cell_are_fine(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text('claim_id,labeler,label,rationale\nk1,a,contradict,"He said ""no"", twice"\nk2,a,insufficient,A 5" screen\n'
                    'k3,a,support,"multi\nline"', encoding="utf-8")
    records = list(formats.read_labels(path).records)
    assert [record.rationale for record in records] == ['He said "no", twice', 'A 5" screen', "multi\nline"]


def test_a_raw_control_character_in_json_is_named_once_with_its_column(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"claim_id": "k", "labeler": "a", "label": "support", "rationale": "a\ttab"}\n', encoding="utf-8")
    error = error_of(lambda: list(formats.read_labels(path).records))
    assert str(error) == (f"{path}, line 1: not valid JSON: {json_says(path.read_text(encoding='utf-8'))}. "
                          "A tab or line break inside a string must be written as \\t or \\n; each record is one JSON object on one line")


def test_an_unterminated_json_string_says_where_it_starts(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"claim_id": "k', encoding="utf-8")  # the string runs to the end of the file
    error = error_of(lambda: list(formats.read_labels(path).records))
    assert f"not valid JSON: {json_says(path.read_text(encoding='utf-8'))}." in str(error)


# ---------------------------------------------------------------- severity


@pytest.mark.parametrize("reader, name, text", [
    (formats.read_labels, "labels.csv", "claim_id,labeler,label,severity\nk,a,contradict,legal\nk,b,support,leak\n"),
    (formats.read_labels, "labels.jsonl", '{"claim_id": "k", "labeler": "a", "label": "contradict", "severity": "legal"}\n'
                                          '{"claim_id": "k", "labeler": "b", "label": "support", "severity": "leak"}\n'),
    (formats.read_adjudications, "adjudications.csv", "claim_id,adjudicator,label,severity\nj,c,insufficient,other\nk,c,support,leak\n"),
])
def test_a_severity_on_a_support_label_is_refused(tmp_path, reader, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    error = error_of(lambda: list(reader(path).records))
    line = 3 if name.endswith(".csv") else 2
    assert str(error) == (f"{path}, line {line}, field 'severity': severity 'leak' is given with the label support, but a "
                          "supported claim has no severity. Leave severity empty, or choose the label contradict or insufficient")


@pytest.mark.parametrize("escaped, words", [("\\ud800", "lone UTF-16 surrogate"), ("\\u0000", "NUL character")])
def test_a_character_no_database_can_store_is_refused_naming_the_line(tmp_path, escaped, words):
    from annotator.errors import ImportRowError
    from annotator.formats import read_cases

    good = ('{"case_id": "c1", "question": "q", "answer": "", "slice": "normal", "split": "dev", "metadata": {}, '
            '"passages": [{"passage_id": "p1", "doc_id": "", "version": "", "title": "", "text": "t"}], '
            '"claims": [{"claim_id": "c1-1", "text": "TEXT"}]}')
    path = tmp_path / "bad.jsonl"
    path.write_text(good.replace("TEXT", "emoji \\ud83d\\ude00 is fine") + "\n" + good.replace("TEXT", f"bad {escaped}") + "\n",
                    encoding="utf-8")
    with pytest.raises(ImportRowError) as refused:
        list(read_cases(path).records)
    assert refused.value.line == 2 and words in str(refused.value)


# ---------------------------------------------------------------- cells the csv module or a database cannot take


def test_a_csv_cell_over_the_csv_modules_own_limit_gets_our_length_error_naming_line_and_field(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("claim_id,labeler,label,rationale\nk1,aoi,support," + "x" * 200_000 + "\n", encoding="utf-8")
    source = formats.read_labels(path)
    error = error_of(lambda: list(source.records))
    assert (error.line, error.field) == (2, "rationale")
    assert "200,000 characters long, over the limit of 100,000" in str(error)


def test_a_nul_byte_in_a_utf8_csv_is_named_as_such_not_as_utf16(tmp_path):
    early = tmp_path / "early.csv"
    early.write_bytes(b"claim_id,labeler,label,rationale\nk1,aoi,support,a\x00b\n")
    with pytest.raises(ImportFileError) as refused:
        formats.check_input_file(early)
    assert "line 2: byte 49 is a NUL byte (0x00)" in str(refused.value)
    assert "UTF-16" not in str(refused.value)
    late = tmp_path / "late.csv"  # past the first KB, which check_input_file looks at
    late.write_bytes(b"claim_id,labeler,label,rationale\nk1,aoi,support," + b"r" * 2000 + b"\nk2,aoi,support,a\x00b\n")
    formats.check_input_file(late)
    error = error_of(lambda: list(formats.read_labels(late).records))
    assert (error.line, error.field) == (3, "rationale")
    assert "NUL byte" in str(error)


def test_a_utf16_file_without_a_byte_order_mark_is_still_named_utf16(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes("claim_id,labeler,label\nk1,aoi,support\n".encode("utf-16-le"))
    with pytest.raises(ImportFileError, match="UTF-16 is not supported"):
        formats.check_input_file(path)


@pytest.mark.parametrize(("mark", "name"), [(";", "semicolons"), ("\t", "tabs")])
def test_a_csv_separated_by_semicolons_or_tabs_is_named_as_such(tmp_path, mark, name):
    path = tmp_path / "labels.csv"
    path.write_text(mark.join(("claim_id", "labeler", "label")) + "\n" + mark.join(("k1", "aoi", "support")) + "\n",
                    encoding="utf-8")
    error = error_of(lambda: list(formats.read_labels(path).records))
    assert error.line == 1
    assert f"the file is separated by {name}, not commas" in str(error)


def test_a_partial_csv_import_skips_the_whole_case_of_a_refused_row_and_lists_each_of_its_rows(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text("case_id,claim_id,claim,passage_id,passage_text,split\n"
                    "g1,g1-c1,Claim one,g1-p1,Text one,dev\n"
                    "g2,g2-c1,Claim two,g2-p1,Text two,dev\n"
                    "g2,g2-c2,Claim three,g2-p1,Text two,bogus\n"
                    "g2,g2-c3,Claim four,g2-p1,Text two,dev\n"
                    "g3,g3-c1,Claim five,g3-p1,Text five,dev\n", encoding="utf-8")
    skips = formats.Skips()
    cases = list(formats.read_cases(path, skips=skips).records)
    assert [case.case_id for case in cases] == ["g1", "g3"]
    assert [(error.line, error.field) for error in skips.errors] == [(3, "case_id"), (4, "split"), (5, "case_id")]
    assert "case 'g2' is skipped whole" in str(skips.errors[0])
    assert "refused row on line 4" in str(skips.errors[2])


# ------------------------------------------------------------------ a key given twice in one object


@pytest.mark.parametrize("reader, line", [
    (lambda path: read_all(path), '{"case_id": "c1", "question": "Q?", "case_id": "c2"}'),
    (lambda path: list(formats.read_labels(path).records), '{"claim_id": "k1", "labeler": "aoi", "label": "support", "label": "contradict"}'),
    (lambda path: list(formats.read_adjudications(path).records), '{"claim_id": "k1", "adjudicator": "mei", "label": "support", "label": "insufficient"}'),
])
def test_a_key_given_twice_in_one_json_object_is_refused_naming_file_line_and_key(tmp_path, reader, line):
    path = tmp_path / "input.jsonl"
    path.write_text('\n' + line + '\n', encoding="utf-8")
    error = error_of(lambda: reader(path))
    key = "case_id" if "case_id" in line else "label"
    assert (error.path, error.line, error.field) == (str(path), 2, key)
    assert str(error) == (f"{path}, line 2, field '{key}': the key '{key}' appears twice in one JSON object. "
                          "Keep one of them: which value was meant is unknown, so nothing is guessed")


def test_a_key_given_twice_in_a_nested_object_or_in_two_unicode_spellings_is_refused(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text('{"case_id": "c1", "metadata": {"a": 1, "a": 2}}\n', encoding="utf-8")
    assert (error_of(lambda: read_all(path)).line, error_of(lambda: read_all(path)).field) == (1, "a")
    path.write_text('{"case_id": "c2", "caf\\u00e9": 1, "cafe\\u0301": 2}\n', encoding="utf-8")
    assert error_of(lambda: read_all(path)).field == "caf\u00e9"


def test_loads_unique_keeps_an_object_without_repeats_as_json_loads_does():
    text = '{"a": 1, "b": {"c": [1, {"d": null}]}, "é": "x"}'
    assert formats.loads_unique(text) == json.loads(text)
    with pytest.raises(formats.DuplicateKeyError) as caught:
        formats.loads_unique('[{"x": 1}, {"y": 1, "y": 1}]')
    assert caught.value.key == "y"


@pytest.mark.parametrize("fmt", ["csv", "ragas"])
def test_json_lines_read_as_csv_are_named_as_json_lines_at_line_1(tmp_path, fmt):
    path = tmp_path / ("cases.csv" if fmt == "csv" else "eval.csv")
    path.write_text('{"case_id": "c1", "question": "Q?", "answer": "A."}\n', encoding="utf-8")
    error = error_of(lambda: read_all(path, fmt))
    assert (error.path, error.line, error.field) == (str(path), 1, None)
    assert str(error) == (f"{path}, line 1: the file holds JSON lines, not CSV: its first line is a JSON object. "
                          "Import it as JSON lines: leave --format out, or give --format jsonl (ragas for RAGAS records)")


_WELL_FORMED = {"case_id": "c1", "question": "Cafe\u0301?", "answer": "", "slice": "normal", "split": "dev",
                "metadata": {"note": "e\u0301", "deep": [{"k\u0301": 1}]},
                "passages": [{"passage_id": "p1", "doc_id": "", "version": " ", "title": "t", "text": "Text\u0301"},
                             {"passage_id": "p2", "doc_id": "d", "version": "v1", "title": "", "text": "two"}],
                "claims": [{"claim_id": "k1", "text": "one"}, {"claim_id": "k2", "text": "x", "passage_ids": ["p2"]},
                           {"claim_id": "k3", "text": "y", "passage_ids": None}]}


@pytest.mark.parametrize("change", [
    {}, {"answer": "  "}, {"metadata": None}, {"passages": None, "claims": [{"claim_id": "k", "text": "t", "passage_ids": []}]},
    {"case_id": 7}, {"case_id": " c1"}, {"question": " "}, {"slice": "s" * 201}, {"split": "holdout"}, {"split": 1},
    {"passages": [{"passage_id": "p1", "doc_id": "d", "version": 2, "title": "t", "text": "x"}]},
    {"passages": [{"passage_id": "p1", "doc_id": "d", "version": "v", "title": "t", "text": "x"}] * 2},
    {"passages": [{"passage_id": "p1", "doc_id": "d", "version": "v", "title": "t", "text": " "}]},
    {"passages": [{"passage_id": "p1", "doc_id": "d", "version": "v", "title": "t", "text": "x", "extra": 1}]},
    {"claims": [{"claim_id": "k", "text": "t", "passage_ids": ["p1", "p1"]}]}, {"claims": []}, {"claims": ["k"]},
    {"claims": [{"claim_id": "k", "text": "t", "passage_ids": ["p9"]}]}, {"requiredEvidenceIds": ["p1"]}, {"extra": "kept"},
    {"question": "\u200b"}, {"claims": [{"claim_id": "k", "text": "\u200b\ufeff"}]},  # blank: only invisible characters
    {"passages": [{"passage_id": "p1", "doc_id": "d", "version": "v", "title": "t", "text": "\u2060"}]},
], ids=lambda change: ",".join(change) or "well-formed")
def test_the_native_fast_path_reads_a_record_as_the_checks_do_and_leaves_any_other_to_them(change):
    """A record the fast path takes reads exactly as the checks read it; one it declines is read
    or refused by the checks (the same warnings, the same refusal)."""
    from annotator.formats import native
    from annotator.formats.reading import Row, UnknownKeys

    row = Row("f.jsonl", 3, {**_WELL_FORMED, **change})

    def checked(use_fast_path: bool) -> tuple[object, list[str]]:
        warnings: list[str] = []
        original = native._well_formed_case
        native._well_formed_case = original if use_fast_path else (lambda row: None)
        try:
            return native._native_case(row, UnknownKeys(warnings)), warnings
        except ImportRowError as error:
            return str(error), warnings
        finally:
            native._well_formed_case = original

    assert checked(True) == checked(False)
    declined = native._well_formed_case(row) is None
    assert declined == (change not in ({}, {"answer": "  "}, {"metadata": None}, {"split": "holdout"}))
