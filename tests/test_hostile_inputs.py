"""Files real teams bring: one small hostile input per failure kind (tests/data/), each refused
with its exact message and nothing landing, and what `--partial`, `--slices`, the RAG case fields,
streaming in chunks and the CP932 check do with them. On SQLite and PostgreSQL where the
database matters."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator import formats
from annotator.db import session_scope
from annotator.errors import ImportRowError
from annotator.models import Case, Claim, ClaimPassage, Dataset, Passage
from annotator.services import imports
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases, import_labels
from tests.conftest import TEST_DATA

KNOWN = "insufficient_evidence, normal, paraphrase, permission, updated_document"


def counts(engine) -> dict[str, int]:  # noqa: ANN001 - an Engine
    with session_scope(engine) as session:
        return {model.__name__: session.exec(select(func.count()).select_from(model)).one()
                for model in (Dataset, Case, Claim, Passage, ClaimPassage)}


NOTHING = {"Dataset": 0, "Case": 0, "Claim": 0, "Passage": 0, "ClaimPassage": 0}


def refused(engine, path: Path, **options) -> ImportRowError:  # noqa: ANN001
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_cases(session, OPERATOR, path, **options)
    return caught.value


# ---------------------------------------------------------------- one file per failure kind


@pytest.mark.parametrize("name, message", [
    ("import_oversized_text.jsonl",
     "line 2, field 'claims[0].text': the text is 100,001 characters long, over the limit of 100,000. Shorten it "
     "(split a long document into passages), or check the file for a quote that is never closed"),
    ("import_unknown_slice.jsonl",
     f"line 2, field 'slice': unknown slice 'nromal' (known: {KNOWN}). Fix the name, or declare the new slice: "
     "--slices nromal"),
    ("import_rag_both_spellings.jsonl",
     "line 1, field 'requiredEvidenceIds': 'required_evidence_ids' and 'requiredEvidenceIds' are the same field, "
     "given twice. Keep one of them (it is stored as 'required_evidence_ids')"),
    ("import_rag_unknown_evidence.jsonl",
     "line 1, field 'forbiddenEvidenceIds[1]': evidence 'r2-p9' is not one of this case's passages (r2-p1, r2-p2). "
     "Name passages of the case, or add the passage to it"),
    ("import_rag_ids_not_a_list.jsonl",
     "line 1, field 'requiredEvidenceIds': expected a list of passage ids, got a string. Write it as a JSON list, "
     'e.g. "requiredEvidenceIds": ["p1", "p2"]'),
    ("import_flat_rag_both_spellings.csv",
     "line 2, field 'corpusRelease': 'corpus_release' and 'corpusRelease' are the same field, given twice. "
     "Keep one of them (it is stored as 'corpus_release')"),
    ("import_cp932_unassigned_byte.csv",
     "line 2, field 'passage_text': byte 162 (0xa0) is neither UTF-8 nor CP932 (UTF-8 fails at byte 116, CP932 at "
     "byte 162). Save the file as UTF-8 (Excel: 'CSV UTF-8') or as CP932 and import again"),
    ("import_claim_missing_text.jsonl",
     "line 2, field 'claims[1].text': missing or empty value. Give every record a non-empty 'text'"),
    ("import_claim_no_passages.jsonl",
     "line 1, field 'claims[0].passage_ids': claim 'w1-c1' has no passages. Give the case a list of passages, or "
     "the claim a list of passage_ids"),
    ("import_partial_mixed.jsonl",
     "line 2: not valid JSON: Expecting value at column 32. Write each record as one JSON object on one line, "
     'e.g. {"case_id": "c1", ...}'),
])
def test_each_hostile_case_file_is_refused_with_its_exact_message_and_nothing_lands(any_engine, name, message):
    error = refused(any_engine, TEST_DATA / name)
    assert str(error) == f"{TEST_DATA / name}, {message}"
    assert counts(any_engine) == NOTHING


def test_an_unknown_label_is_refused_with_its_exact_message(any_engine):
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_labels(session, OPERATOR, TEST_DATA / "labels_unknown_label.csv")
    assert str(caught.value) == (f"{TEST_DATA / 'labels_unknown_label.csv'}, line 3, field 'label': unknown label "
                                 "'supports'. Use one of: support, contradict, insufficient")


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
    monkeypatch.setattr(imports, "CHUNK_CASES", 2)  # lines 1-4 are written in two chunks before line 5
    written = []
    monkeypatch.setattr(imports._CaseImport, "_write", _spy(imports._CaseImport._write, written))
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
    monkeypatch.setattr(imports, "CHUNK_CASES", 1)
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
    monkeypatch.setattr(imports, "CHUNK_CASES", 1)
    path = TEST_DATA / "import_native.jsonl"
    seen = []
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, path, progress=lambda done, total: seen.append((done, total)))
    size = path.stat().st_size
    assert [total for _done, total in seen] == [size] * 3
    assert 0 < seen[0][0] < seen[1][0] < seen[2][0] == size


def test_the_reader_keeps_a_digest_per_id_not_the_records(tmp_path):
    seen = formats._Seen("f.jsonl", "claim")
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
        f'  {path}, line 2: not valid JSON: Expecting value at column 32. Write each record as one JSON object on one '
        'line, e.g. {"case_id": "c1", ...}',
        f"  {path}, line 3, field 'slice': unknown slice 'nromal' (known: {KNOWN}). Fix the name, or declare the new "
        "slice: --slices nromal",
        f"  {path}, line 4, field 'claims[0].text': missing or empty value. Give every record a non-empty 'text'",
    ]
    with session_scope(any_engine) as session:
        assert session.exec(select(Case.case_id).order_by(Case.position)).all() == ["pm1", "pm5"]
    assert counts(any_engine) == {"Dataset": 1, "Case": 2, "Claim": 2, "Passage": 2, "ClaimPassage": 2}


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
    assert "Skipped 3 bad lines (--partial):" in done.stdout
    assert f"  {path}, line 3, field 'slice': unknown slice 'nromal'" in done.stdout


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
