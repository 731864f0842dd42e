"""The RAGAS reader (formats/ragas.py): both spellings, JSON lines, CSV and Parquet read alike; case
and passage ids given or made from the content; answers cut into claims with their spans; the
same file read as a run; every bad record refused naming file, line and field."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotator import formats
from annotator.errors import ImportFileError, ImportRowError
from annotator.formats import ragas
from annotator.segment import Segment

PARIS = {"user_input": "What is the capital of France?",
         "response": "Paris is the capital of France. It had 2.1 million people in 2023.",
         "retrieved_contexts": ["Paris is the capital and most populous city of France.",
                                "Paris had 2.1 million residents in 2023."],
         "reference": "Paris"}
TOKYO = {"user_input": "日本の首都はどこですか？",
         "response": "東京です。人口は約1400万人です。",
         "retrieved_contexts": ["東京は日本の首都である。", "Paris had 2.1 million residents in 2023."],
         "reference": "東京"}
LEGACY = {"user_input": "question", "response": "answer", "retrieved_contexts": "contexts", "reference": "ground_truth"}
"""RAGAS's names -> the names of its 0.1 releases."""


def legacy(record: dict) -> dict:
    return {LEGACY.get(key, key): value for key, value in record.items()}


def write_jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")
    return path


def write_csv(path: Path, *records: dict) -> Path:
    """Records as CSV: a list as a JSON array in its cell."""
    names = list(dict.fromkeys(key for record in records for key in record))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        for record in records:
            writer.writerow([json.dumps(record[name], ensure_ascii=False) if isinstance(record.get(name), list)
                             else record.get(name, "") for name in names])
    return path


def write_parquet(path: Path, *records: dict) -> Path:
    """Records as a Parquet file, a column for every field any record has (null where a record has none)."""
    names = list(dict.fromkeys(key for record in records for key in record))
    pq.write_table(pa.table({name: [record.get(name) for record in records] for name in names}), path)
    return path


def cases(path: Path, fmt: str = "ragas", **options) -> tuple[formats.Source, list[formats.CaseRecord]]:
    source = formats.read_cases(path, fmt, **options)
    return source, list(source.records)


def refusal(path: Path, fmt: str = "ragas", **options) -> ImportRowError:
    with pytest.raises(ImportRowError) as caught:
        cases(path, fmt, **options)
    return caught.value


def sha(*texts: str) -> str:
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]


def stored_shape(records: list[formats.CaseRecord]) -> list[tuple]:
    """What an import stores of each case, its claims and passages."""
    return [(case.case_id, case.question, case.answer, case.slice, case.split, case.metadata,
             [(p.passage_id, p.text) for p in case.passages],
             [(c.claim_id, c.text, c.passage_ids, c.span) for c in case.claims]) for case in records]


# ---------------------------------------------------------------- reading


def test_a_ragas_file_reads_as_cases_with_claims_passages_and_the_reference_as_expected_answer(tmp_path):
    source, records = cases(write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO))
    assert (source.format, source.encoding) == ("ragas", "UTF-8")
    paris, tokyo = records
    assert paris.case_id == "ragas-" + sha(PARIS["user_input"], PARIS["response"])
    assert (paris.question, paris.answer, paris.slice, paris.split) == (PARIS["user_input"], PARIS["response"], "normal", "dev")
    assert paris.metadata == {"expected_answer": "Paris"}
    assert [(p.passage_id, p.text) for p in paris.passages] == [
        ("ctx-" + sha(text), text) for text in PARIS["retrieved_contexts"]]
    assert [(c.claim_id, c.text) for c in paris.claims] == [
        (f"{paris.case_id}-c1", "Paris is the capital of France."), (f"{paris.case_id}-c2", "It had 2.1 million people in 2023.")]
    assert all(claim.passage_ids == tuple(p.passage_id for p in paris.passages) for claim in paris.claims)
    assert [c.text for c in tokyo.claims] == ["東京です。", "人口は約1400万人です。"]
    for case in records:
        assert all(case.answer[c.span[0]:c.span[1]] == c.text for c in case.claims)


def test_the_same_context_text_under_two_questions_is_one_passage(tmp_path):
    _, (paris, tokyo) = cases(write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO))
    shared = "ctx-" + sha("Paris had 2.1 million residents in 2023.")
    assert shared in [p.passage_id for p in paris.passages] and shared in [p.passage_id for p in tokyo.passages]
    assert [p.first for p in tokyo.passages if p.passage_id == shared] == [False]  # given by the first case already


def test_both_spellings_read_the_same_cases(tmp_path):
    _, modern = cases(write_jsonl(tmp_path / "modern.jsonl", PARIS, TOKYO))
    _, older = cases(write_jsonl(tmp_path / "older.jsonl", legacy(PARIS), legacy(TOKYO)))
    assert stored_shape(older) == stored_shape(modern)


@pytest.mark.parametrize("write", [write_csv, write_parquet], ids=["csv", "parquet"])
def test_csv_and_parquet_read_the_same_cases_as_json_lines(tmp_path, write):
    _, expected = cases(write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO))
    suffix = ".csv" if write is write_csv else ".parquet"
    source, records = cases(write(tmp_path / f"r{suffix}", PARIS, TOKYO))
    assert stored_shape(records) == stored_shape(expected)
    assert source.encoding == ("UTF-8" if write is write_csv else "Parquet")
    assert [case.line for case in records] == ([2, 3] if write is write_csv else [1, 2])


def test_given_ids_are_used_for_cases_and_passages_and_the_other_fields_kept_as_metadata(tmp_path):
    record = {**PARIS, "id": 7, "retrieved_context_ids": ["doc-1#3", "doc-2#1"], "reference_contexts": ["Paris is the capital."],
              "source": "wiki", "metadata": {"team": "search"}, "slice": "paraphrase", "split": "holdout"}
    source, [case] = cases(write_jsonl(tmp_path / "r.jsonl", record))
    assert case.case_id == "7" and [c.claim_id for c in case.claims] == ["7-c1", "7-c2"]
    assert [p.passage_id for p in case.passages] == ["doc-1#3", "doc-2#1"]
    assert (case.slice, case.split) == ("paraphrase", "holdout")
    assert case.metadata == {"team": "search", "source": "wiki", "expected_answer": "Paris",
                             "reference_contexts": ["Paris is the capital."]}
    assert source.warnings == [f"{tmp_path / 'r.jsonl'}, line 1: field 'source' is not one of {', '.join(ragas.RAGAS_KEYS)}; "
                               "it is kept as case metadata"]


def test_the_report_notes_say_where_case_ids_and_claims_came_from(tmp_path):
    given = {**TOKYO, "case_id": "t1", "claims": ["東京です。"]}
    source, _ = cases(write_jsonl(tmp_path / "r.jsonl", PARIS, given))
    assert [str(note) for note in source.notes] == [
        "Case ids: 1 from the file's case_id or id, 1 made from the question and answer (ragas- and 16 hex digits of "
        "their SHA-256: the same on every import of the same texts)",
        "Claims: 1 answers cut into sentences, 0 kept whole, 1 given in the file (claims)"]


# ---------------------------------------------------------------- claims and spans


def test_claims_whole_is_the_answer_without_the_white_space_around_it(tmp_path):
    record = {**PARIS, "response": "  Paris is the capital. It is large.\n"}
    _, [case] = cases(write_jsonl(tmp_path / "r.jsonl", record), claims="whole")
    [claim] = case.claims
    assert (claim.text, claim.span) == ("Paris is the capital. It is large.", (2, 36))


def test_given_claims_are_used_whatever_claims_says_each_found_in_order_or_none(tmp_path):
    record = {**PARIS, "response": "It rains. Paris is big. It rains.", "claims": ["It rains.", "It rains.", "Lyon is small."]}
    for mode in ragas.CLAIM_MODES:
        _, [case] = cases(write_jsonl(tmp_path / "r.jsonl", record), claims=mode)
        assert [(c.text, c.span) for c in case.claims] == [("It rains.", (0, 9)), ("It rains.", (24, 33)), ("Lyon is small.", None)]


def test_spans_count_code_points_over_emoji_and_combining_characters(tmp_path):
    answer = "Caf\u0065\u0301 🇯🇵 is open. 👩\u200d🔬 works there."  # e + combining acute is NFC-composed to é
    _, [case] = cases(write_jsonl(tmp_path / "r.jsonl", {**PARIS, "response": answer, "claims": ["👩\u200d🔬 works there."]}))
    [claim] = case.claims
    assert case.answer[claim.span[0]:claim.span[1]] == claim.text
    assert case.answer.startswith("Café ")  # é is one code point after NFC, the flag two, the scientist three
    assert claim.span == (17, 33)
    _, [cut] = cases(write_jsonl(tmp_path / "cut.jsonl", {**PARIS, "response": answer}))
    assert [(c.text, c.span) for c in cut.claims] == [("Café 🇯🇵 is open.", (0, 16)), ("👩‍🔬 works there.", (17, 33))]


# ---------------------------------------------------------------- as a run


def test_a_ragas_file_reads_as_a_run_its_contexts_order_the_ranking(tmp_path):
    record = {**PARIS, "retrieved_contexts": ["b", "a", "b"]}
    source = formats.read_run(write_jsonl(tmp_path / "r.jsonl", record, TOKYO), "ragas")
    first, second = list(source.records)
    assert source.format == "ragas"
    assert first.case_id == "ragas-" + sha(PARIS["user_input"], PARIS["response"])
    assert first.retrieved == ("ctx-" + sha("b"), "ctx-" + sha("a"))  # a text given twice keeps its best rank
    assert (first.behavior, first.answer, first.cited, first.claims) == ("answer", PARIS["response"], (), ())
    assert second.line == 2


def test_a_run_of_a_ragas_file_names_the_cases_its_case_import_made(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", PARIS, {**TOKYO, "case_id": "t1"})
    _, records = cases(path)
    run = formats.read_run(path)  # auto: a RAGAS record
    assert [(r.case_id, r.retrieved) for r in run.records] == [
        (case.case_id, tuple(p.passage_id for p in case.passages)) for case in records]


# ---------------------------------------------------------------- detection


def test_auto_detects_ragas_in_json_lines_csv_and_parquet_and_leaves_the_other_formats_alone(tmp_path):
    assert formats.detect_format(write_jsonl(tmp_path / "r.jsonl", PARIS)) == "ragas"
    assert formats.detect_format(write_jsonl(tmp_path / "old.jsonl", legacy(PARIS))) == "ragas"
    assert formats.detect_format(write_jsonl(tmp_path / "ctx.jsonl", {"question": "q", "contexts": []})) == "ragas"
    assert formats.detect_format(write_csv(tmp_path / "r.csv", PARIS)) == "ragas"
    assert formats.detect_format(write_parquet(tmp_path / "r.parquet", PARIS)) == "ragas"
    native = {"case_id": "c1", "question": "q", "answer": "a", "slice": "normal", "split": "dev", "metadata": {},
              "passages": [], "claims": []}
    assert formats.detect_format(write_jsonl(tmp_path / "n.jsonl", native)) == "jsonl"
    (tmp_path / "flat.csv").write_text("case_id,question,claim_id,claim,passage_id,passage_text,contexts\n", encoding="utf-8")
    assert formats.detect_format(tmp_path / "flat.csv") == "csv"


# ---------------------------------------------------------------- bad input


def where(error: ImportRowError) -> tuple:
    return error.path, error.line, error.field


@pytest.mark.parametrize("change, field, message", [
    ({"user_input": None}, "user_input",
     "the record has no question ('user_input' or 'question'). Give every record the question put to the system as "
     "'user_input' (or 'question')"),
    ({"response": "  "}, "response",
     "the record has no answer ('response' or 'answer'). Give every record the system's answer as 'response' (or "
     "'answer'): it is what is cut into claims to check"),
    ({"retrieved_contexts": "Paris is the capital."}, "retrieved_contexts",
     "expected a list, got a string. Write 'retrieved_contexts' as a JSON list [...]"),
    ({"retrieved_contexts": ["ok", 3]}, "retrieved_contexts[1]", "expected a string, got a number. Write it in double quotes"),
    ({"retrieved_contexts": ["ok", " "]}, "retrieved_contexts[1]",
     "missing or empty value. Remove the empty text from the list, or write the text"),
    ({"retrieved_contexts": ["ok", "\u200b"]}, "retrieved_contexts[1]",  # only invisible characters: blank too
     "missing or empty value. Remove the empty text from the list, or write the text"),
    ({"retrieved_contexts": ["\ufeff\u2060 \u202e\u2066"]}, "retrieved_contexts[0]",
     "missing or empty value. Remove the empty text from the list, or write the text"),
    ({"response": "\u200b"}, "response",
     "the record has no answer ('response' or 'answer'). Give every record the system's answer as 'response' (or "
     "'answer'): it is what is cut into claims to check"),
    ({"user_input": "\u200e\u200f"}, "user_input",
     "the record has no question ('user_input' or 'question'). Give every record the question put to the system as "
     "'user_input' (or 'question')"),
    ({"claims": ["ok", "\u200b"]}, "claims[1]", "missing or empty value. Remove the empty claim from the list, or write its text"),
    ({"claims": ["ok", " "]}, "claims[1]", "missing or empty value. Remove the empty claim from the list, or write its text"),
    ({"retrieved_contexts": []}, "retrieved_contexts",
     "the record has no retrieved contexts, so its claims would have no passage to be checked against. Give every "
     "record the texts the system retrieved, best first, as 'retrieved_contexts': a list of texts"),
    ({"retrieved_context_ids": ["p1"]}, "retrieved_context_ids",
     "1 ids for 2 texts in 'retrieved_contexts'. Give one id per text of 'retrieved_contexts', in the same order, or "
     "leave retrieved_context_ids out (ids are then made from the texts)"),
    ({"retrieved_context_ids": ["p1", "p1"]}, "retrieved_contexts",
     "passage 'p1' is given twice in this record with other content (text differ). Give one of them another id"),
    ({"question": "also a question"}, "question",
     "'user_input' and 'question' are the same field, given twice. Keep only one of them"),
    ({"claims": []}, "claims",
     "the case has no claims. Give 'claims' at least one text, or leave it out to cut the answer into claims (--claims)"),
    ({"claims": ["ok", {"text": "x"}]}, "claims[1]", "expected a string, got an object. Write it in double quotes"),
    ({"split": "test"}, "split", "unknown value 'test'. Use one of: dev, holdout"),
])
def test_each_bad_record_is_refused_naming_file_line_and_field(tmp_path, change, field, message):
    path = write_jsonl(tmp_path / "r.jsonl", TOKYO, {**PARIS, **change})
    error = refusal(path)
    assert where(error) == (str(path), 2, field)
    assert str(error) == f"{path}, line 2, field '{field}': {message}"


def test_an_answer_that_segments_to_no_claim_is_refused_at_its_field(tmp_path, monkeypatch):
    monkeypatch.setattr(ragas, "sentences", lambda answer, language=None: [Segment(0, 1, " ")])
    path = write_jsonl(tmp_path / "r.jsonl", legacy(PARIS))
    error = refusal(path)
    assert where(error) == (str(path), 1, "answer")
    assert str(error).endswith("the answer holds no sentence to make a claim of (no letter or digit: only punctuation, "
                               "symbols or white space). Give the record an answer with at "
                               "least one sentence, or its claims as a list of texts in 'claims', or import with --claims whole")
    _, [case] = cases(path, claims="whole")  # the whole answer is a claim all the same
    assert [c.text for c in case.claims] == [PARIS["response"]]


WRITERS = pytest.mark.parametrize("write", [write_jsonl, write_csv, write_parquet], ids=["jsonl", "csv", "parquet"])
"""A test run on a RAGAS file as JSON lines, CSV and Parquet."""


def second_line(write) -> int:  # noqa: ANN001 - a writer
    """The line (Parquet: the row) of a file's second record: CSV has its header on line 1."""
    return 3 if write is write_csv else 2


NO_SENTENCE = ("the answer holds no sentence to make a claim of (no letter or digit: only punctuation, symbols or white "
               "space). Give the record an answer with at least one sentence, or its claims as a list of texts in "
               "'claims', or import with --claims whole")

BAD_IN_EVERY_CONTAINER = [
    ({"user_input": None}, "user_input",
     "the record has no question ('user_input' or 'question'). Give every record the question put to the system as "
     "'user_input' (or 'question')"),
    ({"response": None}, "response",
     "the record has no answer ('response' or 'answer'). Give every record the system's answer as 'response' (or "
     "'answer'): it is what is cut into claims to check"),
    ({"retrieved_contexts": ["ok", None]}, "retrieved_contexts[1]", "expected a string, got null. Write it in double quotes"),
    ({"retrieved_context_ids": ["p1", "p2", "p3"]}, "retrieved_context_ids",
     "3 ids for 2 texts in 'retrieved_contexts'. Give one id per text of 'retrieved_contexts', in the same order, or "
     "leave retrieved_context_ids out (ids are then made from the texts)"),
    ({"response": "…！？"}, "response", NO_SENTENCE),
    ({"response": "・・・\n- ...\n👍 🙏"}, "response", NO_SENTENCE),
]
"""Bad records any container can hold: no question, no answer, a context that is no text, ids of
another number than the contexts, answers with no sentence (the real segmenter)."""


@WRITERS
@pytest.mark.parametrize("change, field, message", BAD_IN_EVERY_CONTAINER,
                         ids=["no-question", "no-answer", "null-context", "ids-length", "punctuation", "symbols"])
def test_a_bad_record_is_refused_in_json_lines_csv_and_parquet_naming_file_line_and_field(tmp_path, write, change, field,
                                                                                          message):
    suffix = {write_jsonl: "jsonl", write_csv: "csv", write_parquet: "parquet"}[write]
    path = write(tmp_path / f"r.{suffix}", TOKYO, {**PARIS, **change})
    error = refusal(path)
    assert where(error) == (str(path), second_line(write), field)
    assert str(error) == f"{path}, line {second_line(write)}, field '{field}': {message}"
    skips = formats.Skips()  # --partial: the good record is read, the bad one listed
    _, records = cases(path, skips=skips)
    assert [case.question for case in records] == [TOKYO["user_input"]]
    assert [(error.line, error.field) for error in skips.errors] == [(second_line(write), field)]


@pytest.mark.parametrize("write, cell, field, message", [
    (write_jsonl, "Paris is the capital.", "retrieved_contexts",
     "expected a list, got a string. Write 'retrieved_contexts' as a JSON list [...]"),
    (write_jsonl, {"text": "Paris is the capital."}, "retrieved_contexts",
     "expected a list, got an object. Write 'retrieved_contexts' as a JSON list [...]"),
    (write_jsonl, [["Paris"]], "retrieved_contexts[0]", "expected a string, got a list. Write it in double quotes"),
    (write_csv, ["ok", 3], "retrieved_contexts[1]", "expected a string, got a number. Write it in double quotes"),
    (write_csv, '"Paris is the capital."', "retrieved_contexts",
     "expected a list, got a string. Write 'retrieved_contexts' as a JSON list [...]"),
    (write_csv, "Paris is the capital.", "retrieved_contexts",
     'the cell is not JSON (Expecting value). In a RAGAS CSV file, write a list as a JSON array in its cell, e.g. '
     '["first text", "second text"], and metadata as a JSON object {...}'),
], ids=["jsonl-text", "jsonl-object", "jsonl-nested", "csv-number", "csv-json-text", "csv-not-json"])
def test_contexts_that_are_not_a_list_of_texts_are_refused_naming_the_field(tmp_path, write, cell, field, message):
    suffix = "csv" if write is write_csv else "jsonl"
    path = write(tmp_path / f"r.{suffix}", TOKYO, {**PARIS, "retrieved_contexts": cell})
    error = refusal(path)
    assert where(error) == (str(path), second_line(write), field)
    assert str(error) == f"{path}, line {second_line(write)}, field '{field}': {message}"


RAGAS_COLUMNS = ("Write the file with RAGAS's columns: user_input (or question) and response (or answer) as text, "
                 "retrieved_contexts (or contexts) as a list of texts, and optionally retrieved_context_ids, reference "
                 "(or ground_truth), reference_contexts, claims and case_id (or id)")


@pytest.mark.parametrize("columns, field, problem", [
    ({"user_input": ["q"], "response": ["A b."], "retrieved_contexts": [[1, 2]]}, "retrieved_contexts",
     "the column is list<int64>, not a list of texts (list<string>)"),
    ({"user_input": ["q"], "response": ["A b."], "retrieved_contexts": [[{"text": "a"}]]}, "retrieved_contexts",
     "the column is list<struct<text: string>>, not a list of texts (list<string>)"),
    ({"user_input": [1], "response": ["A b."], "retrieved_contexts": [["a"]]}, "user_input",
     "the column is int64, not text (string)"),
    ({"question": ["q"], "answer": [b"A b."], "contexts": [["a"]]}, "answer", "the column is binary, not text (string)"),
    ({"user_input": ["q"], "response": ["A b."], "retrieved_contexts": [["a"]], "retrieved_context_ids": [[1.5]]},
     "retrieved_context_ids", "the column is list<double>, not a list of texts (list<string>)"),
    ({"user_input": ["q"], "retrieved_contexts": [["a"]]}, None, "missing column(s) response/answer"),
    ({"response": ["A b."], "contexts": [["a"]]}, None, "missing column(s) user_input/question"),
], ids=["int-contexts", "struct-contexts", "int-question", "binary-answer", "float-ids", "no-answer", "no-question"])
def test_a_parquet_file_of_another_schema_is_refused_as_a_whole_naming_the_column(tmp_path, columns, field, problem):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table(columns), path)
    for skips in (None, formats.Skips()):  # --partial or not: no row of it can be read
        with pytest.raises(ImportRowError) as caught:
            cases(path, skips=skips)
        assert where(caught.value) == (str(path), None, field)
        assert str(caught.value) == f"{path}{'' if field is None else f', field {field!r}'}: {problem}. {RAGAS_COLUMNS}"


def test_a_csv_list_cell_that_is_not_json_is_refused_naming_its_row_and_column(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('user_input,response,retrieved_contexts\nq,A.,"[""ok""]"\nq2,B.,ok\n', encoding="utf-8")
    error = refusal(path)
    assert where(error) == (str(path), 3, "retrieved_contexts")
    assert "the cell is not JSON (Expecting value)" in str(error)
    assert 'write a list as a JSON array in its cell, e.g. ["first text", "second text"]' in str(error)


def test_a_parquet_file_of_another_schema_is_refused_naming_the_column(tmp_path):
    other = write_parquet(tmp_path / "gold.parquet", {"claim_id": "c1", "gold_label": "support"})
    error = refusal(other)
    assert where(error) == (str(other), None, None)
    assert str(error).startswith(f"{other}: missing column(s) user_input/question, response/answer. Write the file with "
                                 "RAGAS's columns")
    typed = write_parquet(tmp_path / "typed.parquet", {"user_input": "q", "response": "A.", "retrieved_contexts": 3})
    error = refusal(typed)
    assert where(error) == (str(typed), None, "retrieved_contexts")
    assert "the column is int64, not a list of texts (list<string>)" in str(error)


def test_a_broken_parquet_file_or_parquet_under_another_format_is_refused_as_a_file(tmp_path):
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1" + b"\x00" * 20)
    with pytest.raises(ImportFileError, match="starts as a Parquet file but cannot be read as one"):
        cases(broken)
    good = write_parquet(tmp_path / "r.parquet", PARIS)
    with pytest.raises(ImportFileError, match=r"is a Parquet file: only RAGAS records are read from Parquet \(--format ragas\)"):
        cases(good, "jsonl")
    with pytest.raises(ImportFileError, match="is a Parquet file"):
        formats.read_labels(good)


def test_a_partial_read_skips_the_bad_records_and_keeps_the_good_ones(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", PARIS, {**TOKYO, "response": None}, legacy(TOKYO))
    skips = formats.Skips()
    _, records = cases(path, skips=skips)
    assert [case.line for case in records] == [1, 3]
    assert [(error.line, error.field) for error in skips.errors] == [(2, "response")]


def test_a_case_id_given_twice_with_other_content_is_refused_naming_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", {**PARIS, "case_id": "x"}, {**TOKYO, "case_id": "x"})
    error = refusal(path)
    assert where(error)[1:] == (2, "case_id")
    assert "case 'x' is also on line 1 with other content" in str(error)


def test_an_identical_repeat_is_dropped(tmp_path):
    _, records = cases(write_jsonl(tmp_path / "r.jsonl", PARIS, PARIS, TOKYO))
    assert [case.line for case in records] == [1, 3]


def test_a_reference_that_contradicts_the_metadatas_expected_answer_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", {**PARIS, "metadata": {"expected_answer": "Lyon"}})
    error = refusal(path)
    assert where(error) == (str(path), 1, "reference")
    assert str(error).endswith("'reference' and the metadata key 'expected_answer' have other values. Keep only one of them")
    _, [case] = cases(write_jsonl(tmp_path / "same.jsonl", {**PARIS, "metadata": {"expected_answer": "Paris"}}))
    assert case.metadata == {"expected_answer": "Paris"}


@WRITERS
def test_the_gold_an_export_holds_is_not_imported_and_the_warning_says_why(tmp_path, write):
    """`gold_claims` (what `release export --format ragas` writes beside RAGAS's fields) is neither
    a field nor case metadata, in any container; the warning names it once."""
    gold = [{"dataset": "d", "claim_id": "x-c1", "text": "Paris is the capital of France.", "gold_label": "contradict",
             "resolution": "adjudicated", "severity": "other", "passage_ids": ["p1"]}]
    exported = {**PARIS, "case_id": "x", "claims": ["Paris is the capital of France."], "gold_claims": gold}
    suffix = {write_jsonl: "jsonl", write_csv: "csv", write_parquet: "parquet"}[write]
    path = write(tmp_path / f"gold.{suffix}", exported, {**exported, "case_id": "y"})
    source, records = cases(path)
    assert [case.metadata for case in records] == [{"expected_answer": "Paris"}] * 2
    noun, line = ("column", 1) if write is write_csv else ("field", 1)
    assert source.warnings == [f"{path}, line {line}: {noun} 'gold_claims' is written by `annotator release export` "
                               "(a release's gold labels, which labelers must not see); it was not imported"]
    assert "gold_claims" not in ragas.RAGAS_KEYS and ragas.EXPORT_ONLY_KEYS == ("gold_claims",)
    run = formats.read_run(path, "ragas")
    assert [case.case_id for case in run.records] == ["x", "y"] and run.warnings == source.warnings
