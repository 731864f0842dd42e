"""RAGAS files imported on SQLite and PostgreSQL: cases, claims with their spans and passages stored
alike from JSON lines, CSV and Parquet; the same file imported twice changes nothing; a context
shared by two questions is one passage; a bad record stores nothing (unless --partial); the same
file imported as a run, its contexts' order the ranking; and the command line."""

from __future__ import annotations

import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator.db import session_scope
from annotator.errors import ImportRowError, InvalidValueError
from annotator.models import Case, Claim, ClaimPassage, Dataset, LabelEvent, Passage, RunCase
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases
from annotator.services.runs import import_run, run_cases
from tests.conftest import TEST_DATA, annotator
from tests.test_formats_ragas import (
    BAD_IN_EVERY_CONTAINER, PARIS, TOKYO, WRITERS, legacy, second_line, sha, write_csv, write_jsonl, write_parquet,
)

TABLES = (Dataset, Case, Claim, Passage, ClaimPassage, LabelEvent)


def counts(engine) -> dict[str, int]:  # noqa: ANN001 - an Engine
    with session_scope(engine) as session:
        return {table.__name__: session.exec(select(func.count()).select_from(table)).one() for table in TABLES}


def imported(engine, path, **options):  # noqa: ANN001, ANN003, ANN201 - an Engine, a path, import_cases' options
    with session_scope(engine) as session:
        return import_cases(session, OPERATOR, path, **options)


def stored(engine, dataset: str = "default") -> list[tuple]:  # noqa: ANN001
    """Each case of `dataset` with its claims (text, span, passages shown) and passages, in order."""
    with session_scope(engine) as session:
        dataset_pk = session.exec(select(Dataset.id).where(Dataset.name == dataset)).one()
        rows = []
        for case in session.exec(select(Case).where(Case.dataset_id == dataset_pk).order_by(Case.position)):
            claims = []
            for claim in session.exec(select(Claim).where(Claim.case_pk == case.id).order_by(Claim.position)):
                shown = session.exec(select(Passage.passage_id, Passage.text).join(ClaimPassage, ClaimPassage.passage_pk == Passage.id)
                                     .where(ClaimPassage.claim_pk == claim.id).order_by(ClaimPassage.position)).all()
                claims.append((claim.claim_id, claim.text, claim.span_start, claim.span_end, [tuple(row) for row in shown]))
            rows.append((case.case_id, case.question, case.answer, case.slice, case.split, case.meta, claims))
        return rows


# ---------------------------------------------------------------- cases


def test_a_ragas_file_stores_its_cases_claims_with_spans_and_passages(any_engine, tmp_path):
    report = imported(any_engine, write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO), fmt="ragas")
    assert (report.format, report.dataset) == ("ragas", "default")
    assert report.counts == {"cases": {"new": 2, "unchanged": 0, "updated": 0}, "claims": {"new": 4, "unchanged": 0, "updated": 0},
                             "passages": {"new": 3, "unchanged": 0, "updated": 0}}
    paris_id = "ragas-" + sha(PARIS["user_input"], PARIS["response"])
    [paris, tokyo] = stored(any_engine)
    shown = [("ctx-" + sha(text), text) for text in PARIS["retrieved_contexts"]]
    assert paris == (paris_id, PARIS["user_input"], PARIS["response"], "normal", "dev", {"expected_answer": "Paris"}, [
        (f"{paris_id}-c1", "Paris is the capital of France.", 0, 31, shown),
        (f"{paris_id}-c2", "It had 2.1 million people in 2023.", 32, 66, shown)])
    for claim_id, text, start, end, _ in paris[-1] + tokyo[-1]:
        answer = paris[2] if claim_id.startswith(paris_id) else tokyo[2]
        assert answer[start:end] == text
    assert tokyo[5] == {"expected_answer": "東京"}
    with session_scope(any_engine) as session:
        assert session.exec(select(Dataset.source_format)).all() == ["ragas"]
    assert [str(note) for note in report.notes()][:2] == [
        "Case ids: 0 from the file's case_id or id, 2 made from the question and answer (ragas- and 16 hex digits of "
        "their SHA-256: the same on every import of the same texts)",
        "Claims: 2 answers cut into sentences, 0 kept whole, 0 given in the file (claims)"]


def test_the_same_file_imported_twice_keeps_its_ids_and_adds_nothing(any_engine, tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO)
    imported(any_engine, path, fmt="ragas")
    before, rows = counts(any_engine), stored(any_engine)
    again = imported(any_engine, path)  # auto: detected as RAGAS
    assert again.counts == {"cases": {"new": 0, "unchanged": 2, "updated": 0}, "claims": {"new": 0, "unchanged": 4, "updated": 0},
                            "passages": {"new": 0, "unchanged": 3, "updated": 0}}
    assert (counts(any_engine), stored(any_engine)) == (before, rows)


def test_a_context_retrieved_for_two_questions_is_one_passage_shown_with_both(any_engine, tmp_path):
    imported(any_engine, write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO), fmt="ragas")
    shared = "ctx-" + sha("Paris had 2.1 million residents in 2023.")
    with session_scope(any_engine) as session:
        assert session.exec(select(func.count()).select_from(Passage).where(Passage.passage_id == shared)).one() == 1
        cases = session.exec(select(Case.case_id).distinct().join(Claim, Claim.case_pk == Case.id)
                             .join(ClaimPassage, ClaimPassage.claim_pk == Claim.id)
                             .join(Passage, Passage.id == ClaimPassage.passage_pk).where(Passage.passage_id == shared)).all()
    assert len(cases) == 2


@pytest.mark.parametrize("write, suffix", [(write_csv, ".csv"), (write_parquet, ".parquet")], ids=["csv", "parquet"])
def test_csv_and_parquet_store_what_json_lines_store_under_either_spelling(any_engine, tmp_path, write, suffix):
    imported(any_engine, write_jsonl(tmp_path / "r.jsonl", PARIS, TOKYO), fmt="ragas", dataset="from-jsonl")
    report = imported(any_engine, write(tmp_path / f"r{suffix}", legacy(PARIS), legacy(TOKYO)), fmt="ragas", dataset="other")
    assert report.encoding == ("UTF-8" if suffix == ".csv" else "Parquet")
    assert stored(any_engine, "other") == stored(any_engine, "from-jsonl")


def test_claims_whole_and_given_claims(any_engine, tmp_path):
    given = {**TOKYO, "case_id": "t1", "claims": ["人口は約1400万人です。", "大阪です。"]}
    imported(any_engine, write_jsonl(tmp_path / "r.jsonl", {**PARIS, "case_id": "p1"}, given), fmt="ragas", claims="whole")
    claims = [claim[:4] for case in stored(any_engine) for claim in case[-1]]
    assert claims == [("p1-c1", PARIS["response"], 0, len(PARIS["response"])), ("t1-c1", "人口は約1400万人です。", 5, 18),
                      ("t1-c2", "大阪です。", None, None)]


def test_claims_is_refused_for_another_format_and_a_mode_it_does_not_know(any_engine, tmp_path):
    with pytest.raises(InvalidValueError, match="--claims applies to RAGAS files only"):
        imported(any_engine, TEST_DATA / "import_native.jsonl", claims="whole")
    with pytest.raises(InvalidValueError, match="--claims must be sentences or whole, not 'words'"):
        imported(any_engine, write_jsonl(tmp_path / "r.jsonl", PARIS), claims="words")
    assert counts(any_engine)["Case"] == 0


def test_an_update_moves_a_claims_span_with_its_answer_and_records_it(any_engine, tmp_path):
    record = {**PARIS, "case_id": "p1", "response": "It is big.", "claims": ["It is big."]}
    imported(any_engine, write_jsonl(tmp_path / "a.jsonl", record), fmt="ragas")
    moved = write_jsonl(tmp_path / "b.jsonl", {**record, "response": "Paris: It is big."})
    with pytest.raises(ImportRowError, match="already in dataset 'default'"):
        imported(any_engine, moved, fmt="ragas")
    report = imported(any_engine, moved, fmt="ragas", update=True)
    assert report.counts["claims"] == {"new": 0, "unchanged": 0, "updated": 1}
    assert stored(any_engine)[0][-1][0][:4] == ("p1-c1", "It is big.", 7, 17)
    with session_scope(any_engine) as session:
        [event] = session.exec(select(LabelEvent).where(LabelEvent.entity == "claim")).all()
    assert (event.before["span"], event.after["span"]) == ([0, 10], [7, 17])


def test_native_claims_store_no_span_and_audit_as_before(any_engine):
    imported(any_engine, TEST_DATA / "import_native.jsonl")
    with session_scope(any_engine) as session:
        assert set(session.exec(select(Claim.span_start, Claim.span_end)).all()) == {(None, None)}


# ---------------------------------------------------------------- bad input: nothing stored


@pytest.mark.parametrize("change, field", [
    ({"user_input": None}, "user_input"), ({"response": None}, "response"), ({"retrieved_contexts": [1]}, "retrieved_contexts[0]"),
    ({"retrieved_context_ids": ["a"]}, "retrieved_context_ids"), ({"claims": []}, "claims"),
    ({"claims": ["\u200b"]}, "claims[0]"), ({"retrieved_contexts": ["\u200b"]}, "retrieved_contexts[0]"),
    ({"response": "\u200b"}, "response"),
])
def test_a_bad_record_late_in_the_file_stores_nothing_and_partial_stores_the_rest(any_engine, tmp_path, change, field):
    path = write_jsonl(tmp_path / "r.jsonl", TOKYO, {**PARIS, **change})
    with pytest.raises(ImportRowError) as caught:
        imported(any_engine, path, fmt="ragas")
    assert (caught.value.line, caught.value.field) == (2, field)
    assert set(counts(any_engine).values()) == {0}
    report = imported(any_engine, path, fmt="ragas", partial=True)
    assert [(line.line, line.field) for line in report.skipped_lines] == [(2, field)]
    assert [case[1] for case in stored(any_engine)] == [TOKYO["user_input"]]


@WRITERS
@pytest.mark.parametrize("change, field", [(change, field) for change, field, _ in BAD_IN_EVERY_CONTAINER],
                         ids=["no-question", "no-answer", "null-context", "ids-length", "punctuation", "symbols"])
def test_a_bad_record_in_json_lines_csv_or_parquet_stores_nothing_and_partial_stores_the_rest(engine, tmp_path, write,
                                                                                              change, field):
    suffix = {write_jsonl: "jsonl", write_csv: "csv", write_parquet: "parquet"}[write]
    path = write(tmp_path / f"r.{suffix}", TOKYO, {**PARIS, **change})
    with pytest.raises(ImportRowError) as caught:
        imported(engine, path, fmt="ragas")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), second_line(write), field)
    assert set(counts(engine).values()) == {0}
    report = imported(engine, path, fmt="ragas", partial=True)
    assert [(line.path, line.line, line.field) for line in report.skipped_lines] == [(str(path), second_line(write), field)]
    assert [case[1] for case in stored(engine)] == [TOKYO["user_input"]]


def test_a_parquet_file_of_another_schema_stores_nothing(any_engine, tmp_path):
    path = write_parquet(tmp_path / "gold.parquet", {"claim_id": "c1", "gold_label": "support"})
    with pytest.raises(ImportRowError, match="missing column"):
        imported(any_engine, path, fmt="ragas", partial=True)
    assert set(counts(any_engine).values()) == {0}


# ---------------------------------------------------------------- as a run


def test_the_same_file_imports_as_a_run_its_contexts_order_the_ranking(any_engine, tmp_path):
    path = write_parquet(tmp_path / "r.parquet", PARIS, {**TOKYO, "id": "t1"})
    imported(any_engine, path)
    with session_scope(any_engine) as session:
        done = import_run(session, OPERATOR, path, run="baseline", fmt="ragas")
        ran = run_cases(session, OPERATOR, "baseline")
    assert done.run["n_cases"] == 2 and done.run["n_unknown_retrieved"] == 0
    paris_id = "ragas-" + sha(PARIS["user_input"], PARIS["response"])
    assert [(case["case_id"], case["retrieved"], case["behavior"], case["answer"]) for case in ran] == [
        (paris_id, ["ctx-" + sha(text) for text in PARIS["retrieved_contexts"]], "answer", PARIS["response"]),
        ("t1", ["ctx-" + sha(text) for text in TOKYO["retrieved_contexts"]], "answer", TOKYO["response"])]
    assert str(done.report.notes()[0]).startswith("Case ids: 1 from the file's case_id or id, 1 made")


def test_a_run_of_a_ragas_file_refuses_an_unknown_case_and_stores_nothing(any_engine, tmp_path):
    imported(any_engine, write_jsonl(tmp_path / "one.jsonl", PARIS))
    both = write_jsonl(tmp_path / "both.jsonl", PARIS, TOKYO)
    with pytest.raises(ImportRowError, match="no case with id 'ragas-") as caught, session_scope(any_engine) as session:
        import_run(session, OPERATOR, both, run="r1", fmt="ragas")
    assert (caught.value.line, caught.value.field) == (2, "case_id")
    with session_scope(any_engine) as session:
        assert session.exec(select(func.count()).select_from(RunCase)).one() == 0


# ---------------------------------------------------------------- command line


def test_the_command_line_imports_a_ragas_file_and_its_run(any_db_url, tmp_path):
    path = write_csv(tmp_path / "eval.csv", PARIS, TOKYO)
    ran = annotator("import", str(path), "--format", "ragas", "--claims", "sentences", "--db", any_db_url)
    assert (ran.code, ran.err) == (0, "")
    assert ran.out.splitlines()[:2] == ["Read eval.csv as UTF-8 (ragas) into dataset 'default': 2 cases, 4 claims, 3 passages",
                                        "  cases: 2 new, 0 unchanged, 0 updated"]
    assert "Claims: 2 answers cut into sentences, 0 kept whole, 0 given in the file (claims)" in ran.out
    ran = annotator("run", "import", str(path), "--run", "r1", "--format", "ragas", "--db", any_db_url)
    assert (ran.code, ran.err) == (0, "") and "Run r1 stored: 2 cases" in ran.out


def test_the_command_line_refuses_a_bad_record_naming_file_line_and_field_and_a_bad_claims_mode(sqlite_url, tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", PARIS, {**TOKYO, "retrieved_contexts": "東京"})
    ran = annotator("import", str(path), "--format", "ragas", "--db", sqlite_url)
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (f"Error: {path}, line 2, field 'retrieved_contexts': expected a list, got a string. "
                       "Write 'retrieved_contexts' as a JSON list [...]\n")
    ran = annotator("import", str(path), "--claims", "words", "--db", sqlite_url)
    assert ran.code == 2 and "'words': choose one of sentences, whole" in ran.err
    for change, field, message in (
            ({"claims": ["\u200b"]}, "claims[0]", "missing or empty value. Remove the empty claim from the list, or write its text"),
            ({"retrieved_contexts": ["\u200b"]}, "retrieved_contexts[0]",
             "missing or empty value. Remove the empty text from the list, or write the text")):
        path = write_jsonl(tmp_path / "blank.jsonl", PARIS, {**TOKYO, **change})
        ran = annotator("import", str(path), "--format", "ragas", "--db", sqlite_url)
        assert (ran.code, ran.out, ran.err) == (1, "", f"Error: {path}, line 2, field '{field}': {message}\n")


def test_the_command_line_with_partial_imports_the_good_records_and_lists_the_bad_ones(sqlite_url, tmp_path):
    path = write_parquet(tmp_path / "eval.parquet", PARIS, {**TOKYO, "response": "…！？"}, {**TOKYO, "user_input": None})
    ran = annotator("import", str(path), "--format", "ragas", "--db", sqlite_url)
    assert ran.code == 1 and ran.err.startswith(f"Error: {path}, line 2, field 'response': the answer holds no sentence")
    ran = annotator("import", str(path), "--format", "ragas", "--partial", "--db", sqlite_url)
    assert (ran.code, ran.err) == (0, "")
    assert ran.out.startswith("Read eval.parquet as Parquet (ragas) into dataset 'default': 1 cases, 2 claims, 2 passages")
    assert "Skipped 2 bad lines (--partial):" in ran.out
    assert f"{path}, line 2, field 'response': the answer holds no sentence to make a claim of" in ran.out
    assert f"{path}, line 3, field 'user_input': the record has no question" in ran.out
    # where the ids and claims came from: the stored record only (line 2 had its id made, then no sentence)
    assert "Case ids: 0 from the file's case_id or id, 1 made from the question" in ran.out
    assert "Claims: 1 answers cut into sentences, 0 kept whole" in ran.out


def test_the_import_page_checks_a_ragas_upload_with_a_preview_and_stores_nothing(engine, tmp_path):
    from annotator.services.imports import UploadOptions, check_upload

    data = write_csv(tmp_path / "eval.csv", PARIS, TOKYO).read_bytes()
    with session_scope(engine) as session:
        check = check_upload(session, OPERATOR, "eval.csv", data, UploadOptions(fmt="ragas"))
    assert check.refusal is None and check.report.format == "ragas"
    assert [row["claim"] for row in check.preview] == ["Paris is the capital of France.", "It had 2.1 million people in 2023.",
                                                       "東京です。", "人口は約1400万人です。"]
    assert str(check.report.notes()[1]) == "Claims: 2 answers cut into sentences, 0 kept whole, 0 given in the file (claims)"
    assert set(counts(engine).values()) == {0}


@pytest.mark.parametrize("partial", [False, True])
def test_a_csv_without_an_answer_column_is_refused_at_its_header_and_stores_nothing(engine, tmp_path, partial):
    path = tmp_path / "eval.csv"
    path.write_text('user_input,retrieved_contexts\nWhere?,"[""Paris.""]"\nWhen?,"[""Now.""]"\n', encoding="utf-8")
    with pytest.raises(ImportRowError) as refused:
        imported(engine, path, fmt="ragas", partial=partial)
    assert (refused.value.path, refused.value.line, refused.value.field) == (str(path), 1, None)
    assert str(refused.value).startswith(f"{path}, line 1: missing column(s) response/answer. ")
    assert counts(engine) == dict.fromkeys(counts(engine), 0)
