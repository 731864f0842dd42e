"""Files real teams bring: one small hostile input per failure kind (tests/data/), fed through
the `annotator` command line as a user runs it, each refused with its exact message, exit status 1
and nothing landing (or read right, where it must be); and what `--partial`, `--slices`, the RAG
case fields, streaming in chunks and the CP932 check do with them. On SQLite and PostgreSQL where
the database matters.

Kind (the issue's list) -> data file -> test:
  1 encodings     import_flat_utf8.csv, import_flat_utf8_bom.csv, import_flat_cp932.csv
                  -> test_csv_in_utf8_utf8_with_bom_or_cp932_is_read_and_the_encoding_reported;
                  import_undecodable.csv, import_cp932_unassigned_byte.csv (0xA0), import_cp932_byte_80.csv,
                  import_cp932_byte_ff.csv, import_utf16.csv -> REFUSALS
  2 CSV           import_flat_utf8.csv (quoted newline and comma) -> the encodings test;
                  import_flat_reordered.csv
                  -> test_csv_columns_in_any_order_read_the_same_and_extra_columns_are_metadata;
                  import_missing_column.csv, import_unclosed_quote.csv -> REFUSALS
  3 text          import_text_nfd_and_compat.jsonl -> test_text_is_stored_nfc_and_never_nfkc;
                  import_id_space.csv -> REFUSALS
  4 ids           import_native.jsonl -> test_reimport_through_the_cli_says_0_new_n_unchanged_and_writes_nothing;
                  import_case_id_twice.jsonl -> REFUSALS;
                  import_native_claim_changed.jsonl
                  -> test_other_content_for_a_stored_id_is_refused_naming_both_places_unless_update
  5 broken input  import_broken_json.jsonl, import_partial_mixed.jsonl, import_case_no_claims.jsonl,
                  import_claim_missing_text.jsonl, import_claim_no_passages.jsonl, import_unknown_slice.jsonl,
                  import_oversized_text.jsonl -> REFUSALS;
                  labels_unknown_label.csv -> test_an_unknown_label_is_refused_with_its_exact_message_and_no_label_lands;
                  import_partial_mixed.jsonl -> the --partial tests
  6 RAG fields    import_rag_*.jsonl, import_flat_rag_both_spellings.csv -> REFUSALS; import_rag_fields.jsonl,
                  import_flat_rag.csv -> the RAG case field tests
  7 RAGAS files   import_ragas_no_answer.jsonl, import_ragas_ids_length.jsonl, import_ragas_no_sentence.jsonl,
                  import_ragas_contexts_not_texts.csv, import_ragas_context_ids_as_contexts.parquet (found by auto)
                  -> REFUSALS (every container and --partial: tests/test_formats_ragas.py, test_imports_ragas.py)
  9 gold.csv      import_formula_cells.jsonl, labels_formula_cells.csv
                  -> test_gold_csv_quotes_formula_cells_and_jsonl_and_parquet_keep_them_raw
 12 tampering     the same release -> test_release_verify_names_the_tampered_file
 13 people, repeats labels_labeler_case.csv, adjudications_adjudicator_case.csv, labels_two_spellings.csv (a name
                  that differs only in case from a user's) -> NAME_IN_ANOTHER_CASE;
                  adjudications_labeler_then_another.csv, labels_bad_then_good_same_key.csv (--partial: a row refused
                  against the database, then a good one for the same claim) -> BAD_THEN_GOOD;
                  labels_same_claim_and_labeler_twice.csv, adjudications_same_claim_twice.csv -> SAME_KEY_TWICE
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator import formats
from annotator.db import session_scope
from annotator.errors import ImportRowError
from annotator.models import Adjudication, Case, Claim, ClaimPassage, Dataset, Label, Passage, User
from annotator.release import sha256_file
from annotator.services.imports import cases as case_imports, rows as row_imports
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases
from tests.conftest import TEST_DATA, Ran, annotator
from tests.factories import json_says

KNOWN = "insufficient_evidence, normal, paraphrase, permission, updated_document"
TABLES = (Dataset, Case, Claim, Passage, ClaimPassage, User, Label)


def counts(engine) -> dict[str, int]:  # noqa: ANN001 - an Engine
    with session_scope(engine) as session:
        return {model.__name__: session.exec(select(func.count()).select_from(model)).one() for model in TABLES}


NOTHING = {model.__name__: 0 for model in TABLES}


def _line(name: str, number: int) -> str:
    """Line `number` (from 1) of the test data file `name`."""
    return (TEST_DATA / name).read_text(encoding="utf-8").splitlines()[number - 1]


def refused(engine, path: Path, **options) -> ImportRowError:  # noqa: ANN001
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_cases(session, OPERATOR, path, **options)
    return caught.value




def imported(name: str, db_url: str, *options: str) -> Ran:
    """`annotator import tests/data/NAME`, which must succeed."""
    ran = annotator("import", str(TEST_DATA / name), *options, "--db", db_url)
    assert (ran.code, ran.err) == (0, ""), ran.err
    return ran


# ---------------------------------------------------------------- one file per failure kind: refused

REFUSALS = [
    # 1 encodings
    ("import_undecodable.csv",
     "line 3, field 'claim': byte 98 (0x81) is neither UTF-8 nor CP932. Save the file as UTF-8 (Excel: 'CSV UTF-8') "
     "or as CP932 and import again"),
    ("import_cp932_unassigned_byte.csv",
     "line 2, field 'passage_text': byte 162 (0xa0) is neither UTF-8 nor CP932 (UTF-8 fails at byte 116, CP932 at "
     "byte 162). Save the file as UTF-8 (Excel: 'CSV UTF-8') or as CP932 and import again"),
    ("import_cp932_byte_80.csv",
     "line 3, field 'claim': byte 96 (0x80) is neither UTF-8 nor CP932 (UTF-8 fails at byte 57, CP932 at byte 96). "
     "Save the file as UTF-8 (Excel: 'CSV UTF-8') or as CP932 and import again"),
    ("import_cp932_byte_ff.csv",
     "line 3, field 'claim': byte 96 (0xff) is neither UTF-8 nor CP932 (UTF-8 fails at byte 57, CP932 at byte 96). "
     "Save the file as UTF-8 (Excel: 'CSV UTF-8') or as CP932 and import again"),
    ("import_utf16.csv", None),  # a file-level error: no line
    # 2 CSV
    ("import_missing_column.csv",
     "line 1: missing column(s) passage_text. Add them to the header row (required: case_id, claim_id, claim, "
     "passage_id, passage_text)"),
    ("import_unclosed_quote.csv",
     "line 3, field 'case_id': a quoted field is never closed (a missing \"?). Add the closing \" at the end of the "
     "cell, and write a \" inside a quoted cell as \"\""),
    # 3 text
    ("import_id_space.csv",  # line 4: the quoted newline in line 2's record is counted
     "line 4, field 'claim_id': id 'x1-c2 ' has spaces around it. Remove the leading and trailing spaces from the id"),
    # 4 ids
    ("import_case_id_twice.jsonl",
     "line 3, field 'case_id': case 's1' is also on line 1 with other content. Give one of them another id, or make "
     "both the same"),
    # 5 broken input
    ("import_broken_json.jsonl",
     f"line 2: not valid JSON: {json_says(_line('import_broken_json.jsonl', 2))}. Write each record as one JSON object on one line, "
     'e.g. {"case_id": "c1", ...}'),
    ("import_partial_mixed.jsonl",  # without --partial
     f"line 2: not valid JSON: {json_says(_line('import_partial_mixed.jsonl', 2))}. Write each record as one JSON object on one line, "
     'e.g. {"case_id": "c1", ...}'),
    ("import_case_no_claims.jsonl",
     "line 2, field 'claims': the case has no claims. Give the case a non-empty list of claims"),
    ("import_claim_missing_text.jsonl",
     "line 2, field 'claims[1].text': missing or empty value. Give every record a non-empty 'text'"),
    ("import_claim_no_passages.jsonl",
     "line 1, field 'claims[0].passage_ids': claim 'w1-c1' has no passages. Give the case a list of passages, or "
     "the claim a list of passage_ids"),
    ("import_unknown_slice.jsonl",
     f"line 2, field 'slice': unknown slice 'nromal' (known: {KNOWN}). Fix the name, or declare the new slice: "
     "--slices nromal"),
    ("import_oversized_text.jsonl",
     "line 2, field 'claims[0].text': the text is 100,001 characters long, over the limit of 100,000. Shorten it "
     "(split a long document into passages), or check the file for a quote that is never closed"),
    # 6 RAG case fields
    ("import_rag_both_spellings.jsonl",
     "line 1, field 'requiredEvidenceIds': 'required_evidence_ids' and 'requiredEvidenceIds' are the same field, "
     "given twice. Keep one of them (it is stored as 'required_evidence_ids')"),
    ("import_flat_rag_both_spellings.csv",
     "line 2, field 'corpusRelease': 'corpus_release' and 'corpusRelease' are the same field, given twice. "
     "Keep one of them (it is stored as 'corpus_release')"),
    ("import_rag_unknown_evidence.jsonl",
     "line 1, field 'forbiddenEvidenceIds[1]': evidence 'r2-p9' is not one of this case's passages (r2-p1, r2-p2). "
     "Name passages of the case, or add the passage to it"),
    ("import_rag_ids_not_a_list.jsonl",
     "line 1, field 'requiredEvidenceIds': expected a list of passage ids, got a string. Write it as a JSON list, "
     'e.g. "requiredEvidenceIds": ["p1", "p2"]'),
    # 7 RAGAS files (found by --format auto)
    ("import_ragas_no_answer.jsonl",
     "line 2, field 'response': the record has no answer ('response' or 'answer'). Give every record the system's "
     "answer as 'response' (or 'answer'): it is what is cut into claims to check"),
    ("import_ragas_ids_length.jsonl",
     "line 2, field 'retrieved_context_ids': 1 ids for 2 texts in 'retrieved_contexts'. Give one id per text of "
     "'retrieved_contexts', in the same order, or leave retrieved_context_ids out (ids are then made from the texts)"),
    ("import_ragas_no_sentence.jsonl",
     "line 2, field 'response': the answer holds no sentence to make a claim of (no letter or digit: only punctuation, "
     "symbols or white space). Give the record an answer with at least one sentence, or its claims as a list of texts "
     "in 'claims', or import with --claims whole"),
    ("import_ragas_contexts_not_texts.csv",
     "line 3, field 'contexts[1]': expected a string, got a number. Write it in double quotes"),
    ("import_ragas_context_ids_as_contexts.parquet",
     "field 'retrieved_contexts': the column is list<int64>, not a list of texts (list<string>). Write the file with "
     "RAGAS's columns: user_input (or question) and response (or answer) as text, retrieved_contexts (or contexts) as "
     "a list of texts, and optionally retrieved_context_ids, reference (or ground_truth), reference_contexts, claims "
     "and case_id (or id)"),
]


@pytest.mark.parametrize("name, message", REFUSALS, ids=[name for name, _ in REFUSALS])
def test_each_hostile_case_file_is_refused_with_its_exact_message_exit_1_and_nothing_lands(any_db_url, any_engine,
                                                                                         name, message):
    path = TEST_DATA / name
    ran = annotator("import", str(path), "--db", any_db_url)
    if message is None:  # UTF-16: the whole file, before any line
        message = "UTF-16 is not supported: save the file as UTF-8 (Excel: 'CSV UTF-8') and import again"
        assert ran.err == f"Error: {path}: {message}\n"
    else:
        assert ran.err == f"Error: {path}, {message}\n"
    assert (ran.code, ran.out) == (1, "")
    assert counts(any_engine) == NOTHING


def test_an_unknown_label_is_refused_with_its_exact_message_and_no_label_lands(any_db_url, any_engine):
    imported("import_native.jsonl", any_db_url)
    before = counts(any_engine)
    path = TEST_DATA / "labels_unknown_label.csv"
    ran = annotator("labels", "import", str(path), "--db", any_db_url)
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (f"Error: {path}, line 3, field 'label': unknown label 'supports'. Use one of: support, "
                       "contradict, insufficient\n")
    assert counts(any_engine) == before and before["Label"] == before["User"] == 0


# ---------------------------------------------------------------- encodings and CSV: read right

FLAT_TEXTS = ["Approved by 髙橋 of ㈱ Example,\non the first of April.", "The board of ㈱ Example met.", "It is not permitted."]


@pytest.mark.parametrize("name, encoding", [
    ("import_flat_utf8.csv", "UTF-8"), ("import_flat_utf8_bom.csv", "UTF-8 with BOM"), ("import_flat_cp932.csv", "CP932"),
])
def test_csv_in_utf8_utf8_with_bom_or_cp932_is_read_and_the_encoding_reported(engine, sqlite_url, name, encoding):
    ran = imported(name, sqlite_url)
    assert ran.out == (f"Read {name} as {encoding} (csv) into dataset 'default': 2 cases, 3 claims, 3 passages\n"
                       "  cases: 2 new, 0 unchanged, 0 updated\n"
                       "  claims: 3 new, 0 unchanged, 0 updated\n"
                       "  passages: 3 new, 0 unchanged, 0 updated\n")
    with session_scope(engine) as session:  # the quoted newline and comma, and 髙 ① ㈱ from CP932's NEC/IBM rows
        assert session.exec(select(Passage.text).order_by(Passage.id)).all() == FLAT_TEXTS
        assert session.exec(select(Case.answer).where(Case.case_id == "f1")).one() == "髙橋 of ㈱ Example approved it, on ① April."
        assert session.exec(select(Passage.title).where(Passage.passage_id == "p1")).one() == "Memo ①"


def test_csv_columns_in_any_order_read_the_same_and_extra_columns_are_metadata(engine, sqlite_url):
    path = TEST_DATA / "import_flat_reordered.csv"
    ran = imported(path.name, sqlite_url)
    assert ran.out == (
        "Read import_flat_reordered.csv as UTF-8 (csv) into dataset 'default': 1 cases, 1 claims, 2 passages\n"
        "  cases: 1 new, 0 unchanged, 0 updated\n"
        "  claims: 1 new, 0 unchanged, 0 updated\n"
        "  passages: 2 new, 0 unchanged, 0 updated\n"
        f"Warning: {path}, line 1: column 'model_version' is not one of case_id, question, answer, slice, split, "
        "claim_id, claim, passage_id, doc_id, passage_version, passage_title, passage_text; it is kept as case metadata\n")
    with session_scope(engine) as session:
        case = session.exec(select(Case)).one()
        assert (case.case_id, case.question, case.answer, case.meta) == (
            "f1", "Who approved the memo?", "髙橋 of ㈱ Example approved it, on ① April.", {"model_version": "m-7"})
        assert session.exec(select(Claim.claim_id, Claim.text)).all() == [("f1-c1", "髙橋 approved the memo.")]
        assert session.exec(select(Passage.passage_id, Passage.text).order_by(Passage.id)).all() == [
            ("p1", FLAT_TEXTS[0]), ("p2", FLAT_TEXTS[1])]


# ---------------------------------------------------------------- text


def test_text_is_stored_nfc_and_never_nfkc(engine, sqlite_url):
    raw = json.loads((TEST_DATA / "import_text_nfd_and_compat.jsonl").read_text(encoding="utf-8"))["claims"][0]["text"]
    assert raw != unicodedata.normalize("NFC", raw)  # the file holds e + U+0301 and か + U+3099
    imported("import_text_nfd_and_compat.jsonl", sqlite_url)
    with session_scope(engine) as session:
        stored = session.exec(select(Claim.text)).one()
    assert stored == "Caf\u00e9 \u304c ①㈱ ｱｲｳ １２３"  # composed; circled one, (株), half-width kana, full-width digits kept
    assert stored != unicodedata.normalize("NFKC", stored)


# ---------------------------------------------------------------- ids


def test_reimport_through_the_cli_says_0_new_n_unchanged_and_writes_nothing(any_db_url, any_engine):
    imported("import_native.jsonl", any_db_url)
    before = counts(any_engine)
    ran = imported("import_native.jsonl", any_db_url)
    assert ran.out == ("Read import_native.jsonl as UTF-8 (jsonl) into dataset 'default': 2 cases, 3 claims, 2 passages\n"
                       "  cases: 0 new, 2 unchanged, 0 updated\n"
                       "  claims: 0 new, 3 unchanged, 0 updated\n"
                       "  passages: 0 new, 2 unchanged, 0 updated\n")
    assert counts(any_engine) == before


def test_other_content_for_a_stored_id_is_refused_naming_both_places_unless_update(any_db_url, any_engine):
    imported("import_native.jsonl", any_db_url)
    before = counts(any_engine)
    path = TEST_DATA / "import_native_claim_changed.jsonl"
    ran = annotator("import", str(path), "--db", any_db_url)
    assert (ran.code, ran.out) == (1, "")
    assert re.fullmatch(
        re.escape(f"Error: {path}, line 1, field 'claims[0].text': claim 'n1-c1' is already in dataset 'default' "
                  "(stored version written ") + r"\d{4}-\d\d-\d\d \d\d:\d\d" + re.escape(
            " UTC) with another text: text 'The travel policy was updated in April 2024.' in the database, 'The travel "
            "policy was updated in May 2024.' in this file. Import with --update to replace it (an adjudicated claim "
            "then becomes stale), or give it another id\n"), ran.err), ran.err
    assert counts(any_engine) == before
    ran = imported(path.name, any_db_url, "--update")
    assert ran.out == ("Read import_native_claim_changed.jsonl as UTF-8 (jsonl) into dataset 'default': 1 cases, "
                       "2 claims, 2 passages\n"
                       "  cases: 0 new, 1 unchanged, 0 updated\n"
                       "  claims: 0 new, 1 unchanged, 1 updated\n"
                       "  passages: 0 new, 2 unchanged, 0 updated\n")
    with session_scope(any_engine) as session:
        assert session.exec(select(Claim.text).where(Claim.claim_id == "n1-c1")).one() == \
            "The travel policy was updated in May 2024."
    assert counts(any_engine) == before


# ---------------------------------------------------------------- the release: spreadsheet-safe, verified

FORMULA_PREFIXES = ["=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠"]  # the order of x-c1 .. x-c10


@pytest.fixture
def formula_release(sqlite_url, tmp_path) -> Path:
    """A release of import_formula_cells.jsonl with labels_formula_cells.csv: claim x-c{i} and
    alice's rationale start with FORMULA_PREFIXES[i - 1]; every claim agreed (support)."""
    imported("import_formula_cells.jsonl", sqlite_url)
    ran = annotator("labels", "import", str(TEST_DATA / "labels_formula_cells.csv"), "--db", sqlite_url)
    assert (ran.code, ran.err) == (0, ""), ran.err
    ran = annotator("release", "create", "gold-v1", "--out", str(tmp_path / "rel"), "--bootstrap", "0", "--db", sqlite_url)
    assert (ran.code, ran.err) == (0, ""), ran.err
    return tmp_path / "rel" / "gold-v1"


def test_gold_csv_quotes_formula_cells_and_jsonl_and_parquet_keep_them_raw(formula_release):
    claims = [prefix + 'HYPERLINK("http://x")' for prefix in FORMULA_PREFIXES]
    rationales = [prefix + "1+1" for prefix in FORMULA_PREFIXES]
    text = (formula_release / "gold.csv").read_bytes().decode("utf-8-sig")
    rows = sorted(csv.DictReader(io.StringIO(text, newline="")), key=lambda row: int(row["claim_id"][3:]))
    assert [row["claim"] for row in rows] == ["'" + claim for claim in claims]
    assert [row["rationale_1"] for row in rows] == ["'" + rationale for rationale in rationales]
    lines = (formula_release / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    records = sorted((json.loads(line) for line in lines), key=lambda record: int(record["claim_id"][3:]))
    assert [record["claim"] for record in records] == claims
    assert [record["labels"][0]["rationale"] for record in records] == rationales
    table = sorted(pq.read_table(formula_release / "gold.parquet").to_pylist(), key=lambda row: int(row["claim_id"][3:]))
    assert [row["claim"] for row in table] == claims


TAMPER = {
    "edit": lambda folder: (folder / "gold.csv").write_bytes((folder / "gold.csv").read_bytes().replace(b"'=", b"=", 1)),
    "delete": lambda folder: (folder / "gold.parquet").unlink(),
    "add": lambda folder: (folder / "notes.txt").write_text("x", encoding="utf-8"),
}


@pytest.mark.parametrize("tamper, problem", [
    ("edit", "gold.csv: changed (sha256 {now}, manifest says {listed})"),
    ("delete", "gold.parquet: missing"),
    ("add", "notes.txt: unexpected file (not listed in manifest.json)"),
])
def test_release_verify_names_the_tampered_file(formula_release, tamper, problem):
    ran = annotator("release", "verify", str(formula_release))
    assert (ran.code, ran.err) == (0, "")
    assert ran.out.splitlines()[0] == f"OK: {formula_release} matches its manifest (4 files checked)"
    listed = json.loads((formula_release / "manifest.json").read_text(encoding="utf-8"))["files"]["gold.csv"]["sha256"]
    TAMPER[tamper](formula_release)
    problem = problem.format(now=sha256_file(formula_release / "gold.csv"), listed=listed)
    ran = annotator("release", "verify", str(formula_release))
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == f"Error: release {formula_release} does not match its manifest: {problem}\n"


# ---------------------------------------------------------------- CP932 in memory


@pytest.mark.parametrize("byte, char", [(b"\x80", "\x80"), (b"\xa0", "\uf8f0"), (b"\xfd", "\uf8f1"),
                                        (b"\xfe", "\uf8f2"), (b"\xff", "\uf8f3")])
def test_bytes_pythons_cp932_codec_maps_to_junk_are_refused_naming_offset_and_line(byte, char):
    assert byte.decode("cp932") == char  # the hole: Python reads them as characters
    data = "case_id,claim\nc1,質問\n".encode("cp932") + b"c2,x" + byte + b"y\n"
    with pytest.raises(ImportRowError) as caught:
        formats.decode_csv_bytes("x.csv", data)
    offset = data.index(byte, len("case_id,claim\nc1,質問\n".encode("cp932")))
    assert (caught.value.line, caught.value.field) == (3, "claim")
    assert f"byte {offset} (0x{byte[0]:02x}) is neither UTF-8 nor CP932" in str(caught.value)


def test_half_width_katakana_and_nec_specials_are_still_read_as_cp932():
    text = "ｱｲｳ①㈱髙"
    assert formats.decode_csv_bytes("x.csv", text.encode("cp932")) == (text, "CP932")


# ---------------------------------------------------------------- one transaction, streamed


def test_a_refusal_late_in_the_file_rolls_back_the_chunks_already_written(any_engine, monkeypatch):
    monkeypatch.setattr(case_imports, "CHUNK_CASES", 2)  # lines 1-4 are written in two chunks before line 5
    written = []
    monkeypatch.setattr(case_imports._CaseImport, "_write", _spy(case_imports._CaseImport._write, written))
    error = refused(any_engine, TEST_DATA / "import_late_conflict.jsonl")
    assert (error.line, error.field) == (5, "claims[0].claim_id")
    assert "claim 'l1-c1' is also on line 1 with other content (case_id, text, passage_ids differ)" in str(error)
    assert written == [2, 2]
    assert counts(any_engine) == NOTHING


def _spy(write, calls: list):  # noqa: ANN001, ANN202
    def spied(self, plan, stored):  # noqa: ANN001, ANN202
        calls.append(len(plan.new_cases))
        return write(self, plan, stored)
    return spied


def test_a_refusal_against_the_database_late_in_the_file_rolls_back_everything(any_engine, monkeypatch, tmp_path):
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    before = counts(any_engine)
    monkeypatch.setattr(case_imports, "CHUNK_CASES", 1)
    lines = [line for line in (TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    changed = json.loads(lines[1])
    changed["passages"][0]["text"] = "Changed."
    new = {**json.loads(lines[0]), "case_id": "new-1", "passages": [], "claims": [{"claim_id": "new-1-c1", "text": "x",
                                                                                 "passage_ids": None}]}
    new["passages"] = [{"passage_id": "p-new", "doc_id": "", "version": "", "title": "", "text": "New."}]
    path = tmp_path / "late.jsonl"
    path.write_text(json.dumps(new) + "\n" + json.dumps(changed) + "\n", encoding="utf-8")
    error = refused(any_engine, path)
    passage = changed["passages"][0]
    assert (error.line, error.field) == (2, "passages[0].text")
    assert str(error) == (f"{path}, line 2, field 'passages[0].text': passage '{passage['passage_id']}' is already in "
                          f"dataset 'default' with another text: text '{json.loads(lines[1])['passages'][0]['text']}' "
                          "in the database, 'Changed.' in this file. Import with --update to replace it (an adjudicated "
                          "passage then becomes stale), or give it another id")
    assert counts(any_engine) == before


def test_progress_is_reported_per_chunk_in_bytes_up_to_the_file_size(engine, monkeypatch):
    monkeypatch.setattr(case_imports, "CHUNK_CASES", 1)
    path = TEST_DATA / "import_native.jsonl"
    seen = []
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, path, progress=lambda done, total: seen.append((done, total)))
    size = path.stat().st_size
    assert [total for _done, total in seen] == [size] * 3
    assert 0 < seen[0][0] < seen[1][0] < seen[2][0] == size


def test_the_reader_keeps_a_digest_per_id_not_the_records(tmp_path):
    seen = formats.Seen("f.jsonl", "claim")
    assert seen.first_time("k", {"case_id": "c", "text": "t" * 1000, "passage_ids": ("p",)}, 7, "claim_id")
    assert all(type(value) is int for value in seen._seen.values())
    assert not seen.first_time("k", {"case_id": "c", "text": "t" * 1000, "passage_ids": ("p",)}, 9, "claim_id")
    with pytest.raises(ImportRowError, match=re.escape("claim 'k' is also on line 7 with other content (text differ)")):
        seen.first_time("k", {"case_id": "c", "text": "u", "passage_ids": ("p",)}, 9, "claim_id")


def test_metadata_in_another_key_order_is_a_harmless_repeat(tmp_path):
    record = {"case_id": "c1", "question": "Q?", "answer": "", "slice": "normal", "split": "dev",
              "passages": [{"passage_id": "p1", "doc_id": "", "version": "", "title": "", "text": "T."}],
              "claims": [{"claim_id": "k1", "text": "C."}]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({**record, "metadata": {"a": 1, "b": [1, 2]}}) + "\n"
                    + json.dumps({**record, "metadata": {"b": [1, 2], "a": 1}}) + "\n", encoding="utf-8")
    assert [case.case_id for case in formats.read_cases(path).records] == ["c1"]


# ---------------------------------------------------------------- --partial


def test_partial_import_lands_the_good_lines_and_lists_every_skipped_line_in_file_order(any_engine):
    path = TEST_DATA / "import_partial_mixed.jsonl"
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, path, partial=True)
    assert [(s.line, s.field) for s in report.skipped_lines] == [(2, None), (3, "slice"), (4, "claims[0].text")]
    assert report.summary_lines()[-4:] == [
        "Skipped 3 bad lines (--partial):",
        f'  {path}, line 2: not valid JSON: {json_says(_line(path.name, 2))}. Write each record as one JSON object on one '
        'line, e.g. {"case_id": "c1", ...}',
        f"  {path}, line 3, field 'slice': unknown slice 'nromal' (known: {KNOWN}). Fix the name, or declare the new "
        "slice: --slices nromal",
        f"  {path}, line 4, field 'claims[0].text': missing or empty value. Give every record a non-empty 'text'",
    ]
    with session_scope(any_engine) as session:
        assert session.exec(select(Case.case_id).order_by(Case.position)).all() == ["pm1", "pm5"]
    assert counts(any_engine) == {**NOTHING, "Dataset": 1, "Case": 2, "Claim": 2, "Passage": 2, "ClaimPassage": 2}


def test_partial_import_skips_a_line_that_conflicts_with_the_database_and_keeps_the_rest(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    lines = [line for line in (TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    changed = json.loads(lines[0])
    changed["claims"][0]["text"] = "Other."
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(changed) + "\n" + lines[1] + "\n", encoding="utf-8")
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, path, partial=True)
    assert [(s.line, s.field) for s in report.skipped_lines] == [(1, "claims[0].text")]
    assert report.counts["cases"] == {"new": 0, "unchanged": 1, "updated": 0}


def test_a_partial_skip_forgets_the_ids_of_the_skipped_line(tmp_path):
    """A claim id on a skipped line may come again, with other content, on a good line."""
    good = {"case_id": "c2", "question": "Q?", "answer": "", "slice": "normal", "split": "dev", "metadata": {},
            "passages": [{"passage_id": "p1", "doc_id": "", "version": "", "title": "", "text": "T."}],
            "claims": [{"claim_id": "k1", "text": "Good."}]}
    bad = {**good, "case_id": "c1", "claims": [{"claim_id": "k1", "text": "Bad."}, {"claim_id": "k2"}]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    skips = formats.Skips()
    cases = list(formats.read_cases(path, skips=skips).records)
    assert [(case.case_id, [claim.text for claim in case.claims]) for case in cases] == [("c2", ["Good."])]
    assert [(error.line, error.field) for error in skips.errors] == [(1, "claims[1].text")]


# ---------------------------------------------------------------- slices


def test_a_declared_slice_and_one_the_dataset_already_uses_are_known(any_engine, tmp_path):
    path = TEST_DATA / "import_unknown_slice.jsonl"
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, path, slices=["nromal"])
    assert report.counts["cases"]["new"] == 2
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    record.update(case_id="s3", claims=[{"claim_id": "s3-c1", "text": "Another."}])
    record["passages"][0]["passage_id"] = "s3-p1"
    again = tmp_path / "again.jsonl"
    again.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with session_scope(any_engine) as session:  # the dataset uses "nromal" now: no --slices needed
        assert import_cases(session, OPERATOR, again).counts["cases"]["new"] == 1


def test_climate_fever_and_the_demo_data_use_known_slices():
    from annotator.vocabulary import SLICES
    assert formats.CLIMATE_FEVER_SLICE in SLICES
    assert {case.slice for case in formats.read_cases(TEST_DATA.parents[1] / "data" / "demo.jsonl").records} <= set(SLICES)


# ---------------------------------------------------------------- RAG case fields


def test_rag_fields_in_either_spelling_are_stored_in_metadata_under_snake_case_without_warnings(any_engine):
    path = TEST_DATA / "import_rag_fields.jsonl"
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, path)
        stored = dict(session.exec(select(Case.case_id, Case.meta)).all())
    assert report.warnings == ()
    assert stored == {
        "g1": {"required_evidence_ids": ["g1-p1"], "forbidden_evidence_ids": ["g1-p2"], "expected_behavior": "answer",
               "principal": "user:hr-07", "corpus_release": "2024-06"},
        "g2": {"required_evidence_ids": [], "expected_behavior": "refuse", "principal": {"user": "u-12", "groups": ["sales"]},
               "corpus_release": "2024-06"},
    }
    with session_scope(any_engine) as session:  # the same file again: unchanged
        assert import_cases(session, OPERATOR, path).counts["cases"] == {"new": 0, "unchanged": 2, "updated": 0}


def test_flat_csv_rag_columns_take_semicolon_separated_ids(any_engine):
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, TEST_DATA / "import_flat_rag.csv")
        meta = session.exec(select(Case.meta)).one()
    assert report.warnings == ()
    assert meta == {"required_evidence_ids": ["p1"], "forbidden_evidence_ids": ["p2"], "expected_behavior": "answer",
                    "principal": "user:hr-07", "corpus_release": "2024-06"}


def test_a_csv_rag_id_that_is_not_a_passage_of_the_case_is_refused_at_the_case_line(tmp_path):
    path = tmp_path / "flat.csv"
    path.write_text("case_id,question,claim_id,claim,passage_id,passage_text,required_evidence_ids\n"
                    "c1,Q?,k1,A claim.,p1,Text.,p1; p7\n", encoding="utf-8")
    with pytest.raises(ImportRowError) as caught:
        list(formats.read_cases(path).records)
    assert str(caught.value) == (f"{path}, line 2, field 'required_evidence_ids': evidence 'p7' is not one of this "
                                 "case's passages (p1). Name passages of the case, or add the passage to it")


@pytest.mark.parametrize("value, problem", [
    (123, "expected a string, got a number"),
    (["answer"], "expected a string, got a list"),
])
def test_expected_behavior_must_be_a_string(tmp_path, value, problem):
    record = json.loads((TEST_DATA / "import_rag_fields.jsonl").read_text(encoding="utf-8").splitlines()[0])
    record["expectedBehavior"] = value
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ImportRowError) as caught:
        list(formats.read_cases(path).records)
    assert (caught.value.line, caught.value.field) == (1, "expectedBehavior")
    assert problem in str(caught.value)


# ---------------------------------------------------------------- the command line


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "annotator", *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", timeout=120)


def test_cli_partial_prints_every_skipped_line_and_no_progress_bar_when_not_a_terminal(tmp_path):
    path = TEST_DATA / "import_partial_mixed.jsonl"
    done = cli("import", str(path), "--partial", "--db", f"sqlite:///{tmp_path / 'a.db'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[:5] == [
        "Read import_partial_mixed.jsonl as UTF-8 (jsonl) into dataset 'default': 2 cases, 2 claims, 2 passages",
        "  cases: 2 new, 0 unchanged, 0 updated",
        "  claims: 2 new, 0 unchanged, 0 updated",
        "  passages: 2 new, 0 unchanged, 0 updated",
        "Skipped 3 bad lines (--partial):",
    ]
    assert [line.split(": ")[0] for line in done.stdout.splitlines()[5:]] == [
        f"  {path}, line 2", f"  {path}, line 3, field 'slice'", f"  {path}, line 4, field 'claims[0].text'"]


def test_cli_without_partial_refuses_the_file_and_slices_declares_a_new_one(tmp_path):
    path = TEST_DATA / "import_unknown_slice.jsonl"
    db = f"sqlite:///{tmp_path / 'a.db'}"
    done = cli("import", str(path), "--db", db, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (f"Error: {path}, line 2, field 'slice': unknown slice 'nromal' (known: {KNOWN}). Fix the "
                           "name, or declare the new slice: --slices nromal\n")
    done = cli("import", str(path), "--slices", "nromal, pilot", "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "cases: 2 new, 0 unchanged, 0 updated" in done.stdout


# ---------------------------------------------------------------- labels and adjudications: people and repeats

USE_THE_NAME = ("Use the existing name exactly ('{name}'): names that differ only in case are one person's, and "
                "`annotator users add` refuses them too")
NAME_IN_ANOTHER_CASE = [
    # command, data file, the refusal after "{path}, "
    ("labels", "labels_labeler_case.csv",
     "line 2, field 'labeler': labeler 'Alice' differs only in case from the existing user 'alice'. "
     + USE_THE_NAME.format(name="alice")),
    ("adjudications", "adjudications_adjudicator_case.csv",  # bob labeled n1-c1: BOB would adjudicate his own claim
     "line 2, field 'adjudicator': adjudicator 'BOB' differs only in case from the existing user 'bob'. "
     + USE_THE_NAME.format(name="bob")),
    ("labels", "labels_two_spellings.csv",  # two spellings in one file: the first creates mika
     "line 3, field 'labeler': labeler 'Mika' differs only in case from the existing user 'mika' (created by this "
     "import for line 2). " + USE_THE_NAME.format(name="mika")),
]


def labeled(db_url: str) -> None:
    """import_native.jsonl, then labels_native.csv: alice and bob label; n1-c1 is disputed."""
    imported("import_native.jsonl", db_url)
    ran = annotator("labels", "import", str(TEST_DATA / "labels_native.csv"), "--db", db_url)
    assert (ran.code, ran.err) == (0, ""), ran.err


@pytest.mark.parametrize("command, name, message", NAME_IN_ANOTHER_CASE, ids=[name for _, name, _ in NAME_IN_ANOTHER_CASE])
def test_a_name_differing_only_in_case_from_a_user_is_refused_naming_line_field_and_user_and_nothing_lands(
        any_db_url, any_engine, command, name, message):
    labeled(any_db_url)
    before = counts(any_engine)
    path = TEST_DATA / name
    ran = annotator(command, "import", str(path), "--db", any_db_url)
    assert (ran.code, ran.out, ran.err) == (1, "", f"Error: {path}, {message}\n")
    assert counts(any_engine) == before
    with session_scope(any_engine) as session:
        assert session.exec(select(User.name).order_by(User.name)).all() == ["alice", "bob"]
        assert session.exec(select(func.count()).select_from(Adjudication)).one() == 0


def test_users_add_and_imports_refuse_a_name_in_another_case_by_the_same_rule(any_db_url, any_engine):
    labeled(any_db_url)
    ran = annotator("users", "add", "ALICE", "--role", "labeler", "--no-password", "--db", any_db_url)
    assert (ran.code, ran.err) == (1, "Error: a user named 'alice' exists already (names differ only in case)\n")
    ran = annotator("labels", "import", str(TEST_DATA / "labels_labeler_case.csv"), "--db", any_db_url)
    assert (ran.code, "'Alice' differs only in case from the existing user 'alice'" in ran.err) == (1, True)


def test_partial_skips_a_name_in_another_case_and_lands_the_first_spelling(any_db_url, any_engine):
    labeled(any_db_url)
    path = TEST_DATA / "labels_two_spellings.csv"
    ran = annotator("labels", "import", str(path), "--partial", "--db", any_db_url)
    assert (ran.code, ran.err) == (0, "")
    assert ran.out.splitlines()[1:] == [
        "  labels: 1 new, 0 unchanged, 0 updated",
        "Created user mika (role labeler, no password: they cannot log in until an admin sets one)",
        "Skipped 1 bad line (--partial):",
        f"  {path}, {NAME_IN_ANOTHER_CASE[2][2]}",
    ]
    with session_scope(any_engine) as session:
        assert session.exec(select(User.name).order_by(User.name)).all() == ["alice", "bob", "mika"]


BAD_THEN_GOOD = [
    # command, data file, the refusal of line 2 after "{path}, line 2", what line 3 lands
    ("adjudications", "adjudications_labeler_then_another.csv",
     ", field 'adjudicator': bob labeled claim 'n1-c1' and cannot adjudicate it. An adjudicator never adjudicates a "
     "claim they labeled: give the claim to someone else", ("n1-c1", "carol", "support")),
    ("labels", "labels_bad_then_good_same_key.csv",
     ", field 'passage_ids': claim 'n1-c1' is not shown with passage 'p2'. Cite only passages the claim is shown "
     "with: p1", ("n1-c1", "dave", "support")),
]


@pytest.mark.parametrize("chunk", [5_000, 1])
@pytest.mark.parametrize("command, name, problem, lands", BAD_THEN_GOOD, ids=[name for _, name, _, _ in BAD_THEN_GOOD])
def test_partial_a_row_refused_by_the_database_does_not_block_a_later_good_row_for_the_same_key(
        any_db_url, any_engine, monkeypatch, chunk, command, name, problem, lands):
    """Line 2 is refused against the database and skipped; line 3, for the same claim (and labeler),
    is good and lands: a skipped row does not count as seen, in one chunk or across chunks."""
    monkeypatch.setattr(row_imports, "CHUNK_ROWS", chunk)
    labeled(any_db_url)
    path = TEST_DATA / name
    ran = annotator(command, "import", str(path), "--partial", "--db", any_db_url)
    assert (ran.code, ran.err) == (0, "")
    assert ran.out.splitlines()[1] == f"  {command}: 1 new, 0 unchanged, 0 updated"
    assert ran.out.splitlines()[-2:] == ["Skipped 1 bad line (--partial):", f"  {path}, line 2{problem}"]
    model, person = (Adjudication, Adjudication.adjudicator_pk) if command == "adjudications" else (Label, Label.labeler_pk)
    with session_scope(any_engine) as session:
        rows = session.exec(select(Claim.claim_id, User.name, model.value).join(Claim, Claim.id == model.claim_pk)
                            .join(User, User.id == person).where(User.name == lands[1])).all()
    assert rows == [lands]


SAME_KEY_TWICE = [
    # command, data file, the refusal of line 3 after "{path}, line 3"
    ("labels", "labels_same_claim_and_labeler_twice.csv",
     ", field 'labeler': label of claim 'n2-c1', 'dave' is also on line 2 with other content (label differ). Keep one "
     "row per claim and labeler, or make both the same"),
    ("adjudications", "adjudications_same_claim_twice.csv",
     ", field 'claim_id': adjudication of claim 'n1-c1' is also on line 2 with other content (adjudicator differ). "
     "Keep one row per claim, or make both the same"),
]


@pytest.mark.parametrize("command, name, problem", SAME_KEY_TWICE, ids=[name for _, name, _ in SAME_KEY_TWICE])
def test_two_rows_for_one_label_or_decision_say_keep_one_row_and_partial_keeps_the_first(any_db_url, any_engine,
                                                                                         command, name, problem):
    labeled(any_db_url)
    before = counts(any_engine)
    path = TEST_DATA / name
    ran = annotator(command, "import", str(path), "--db", any_db_url)
    assert (ran.code, ran.out, ran.err) == (1, "", f"Error: {path}, line 3{problem}\n")
    assert counts(any_engine) == before
    ran = annotator(command, "import", str(path), "--partial", "--db", any_db_url)
    assert (ran.code, ran.err) == (0, "")
    assert ran.out.splitlines()[1] == f"  {command}: 1 new, 0 unchanged, 0 updated"
    assert ran.out.splitlines()[-2:] == ["Skipped 1 bad line (--partial):", f"  {path}, line 3{problem}"]
