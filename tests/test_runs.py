"""RAG runs on SQLite and PostgreSQL: the import (immutable, hashed, refused whole on a bad line
unless --partial, passage ids the dataset does not know kept and counted), the list, a run's cases
as plain data, who may see them, and the `annotator run import | list` command line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sqlmodel import Session, func, select

from annotator.db import session_scope
from annotator.errors import ImportFileError, ImportRowError, InvalidValueError, NotFoundError, PermissionDeniedError
from annotator.models import LabelEvent, Run, RunCase, User
from annotator.services import runs
from annotator.services.access import OPERATOR
from annotator.services.runs import get_run, import_run, list_runs, run_cases
from tests.conftest import annotator
from tests.test_release_service import Seeder
from tests.test_service_types import not_plain

CASES = {"q1": ("p1", "p2"), "q2": ("p3",), "q3": ("p4", "p5")}
"""The cases of dataset pilot, each with one claim shown with these passages."""

LINES = [
    {"case_id": "q1", "retrieved": ["p2", "web-7", "p1"], "behavior": "answer", "answer": "Since April 2024.",
     "cited": ["p2"], "claims": [{"text": "It started in April 2024.", "label": "support", "claim_id": "a1"},
                                 {"text": "Refunds take 5 days.", "label": "contradict", "severity": "amount_or_deadline"}]},
    {"case_id": "q2", "retrieved": ["web-8", "p3"], "behavior": "abstain", "answer": None, "cited": ["web-8"]},
    {"case_id": "q3", "retrieved": [], "behavior": "clarify"},
]
"""A run of the three cases: 5 retrieved ids, two of them (web-7, web-8) no passage of pilot; 2 cited, one unknown."""


def seed(session: Session) -> Seeder:
    seeder = Seeder(session)
    for case_id, passages in CASES.items():
        seeder.claim(case_id, f"{case_id}-c1", passages=passages, split="holdout" if case_id == "q3" else "dev")
    seeder.user("alice")
    seeder.user("carol", "adjudicator")
    return seeder


def run_file(tmp_path: Path, lines: list[object] = LINES, name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def pilot(any_engine):
    with session_scope(any_engine) as session:
        seed(session)
    return any_engine


def imported(engine, path: Path, run: str = "r1", **options) -> runs.RunImport:  # noqa: ANN001, ANN003
    with session_scope(engine) as session:
        return import_run(session, OPERATOR, path, run=run, **options)


def counts(engine) -> tuple[int, int]:  # noqa: ANN001
    with Session(engine) as session:
        return (session.exec(select(func.count()).select_from(Run)).one(),
                session.exec(select(func.count()).select_from(RunCase)).one())


# ------------------------------------------------------------------------------- import


def test_an_imported_run_keeps_its_cases_in_file_order_its_meta_the_file_hash_and_who_when(pilot, tmp_path):
    path = run_file(tmp_path)
    done = imported(pilot, path, meta={"team": "search", "model": "m-2", "system": "rag-v2"}, note="after the reindex")
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    with session_scope(pilot) as session:
        listed = list_runs(session, OPERATOR)
        cases = run_cases(session, OPERATOR, "r1")
        event = session.exec(select(LabelEvent).where(LabelEvent.entity == "run")).one()
    assert listed == [done.run]
    [run] = listed
    assert {key: value for key, value in run.items() if key != "created_at"} == {
        "name": "r1", "dataset": "pilot", "meta": {"system": "rag-v2", "model": "m-2", "team": "search"},
        "note": "after the reindex", "creator": "", "source_name": "run.jsonl", "source_sha256": sha256,
        "n_cases": 3, "n_unknown_retrieved": 2}
    assert list(run["meta"]) == ["system", "model", "team"]  # the documented keys first
    assert run["created_at"].endswith("+00:00")
    assert cases == [
        {"dataset": "pilot", "case_id": "q1", "retrieved": ["p2", "web-7", "p1"], "behavior": "answer",
         "answer": "Since April 2024.", "cited": ["p2"],
         "claims": [{"text": "It started in April 2024.", "label": "support", "claim_id": "a1", "severity": None},
                    {"text": "Refunds take 5 days.", "label": "contradict", "claim_id": None,
                     "severity": "amount_or_deadline"}]},
        {"dataset": "pilot", "case_id": "q2", "retrieved": ["web-8", "p3"], "behavior": "abstain", "answer": None,
         "cited": ["web-8"], "claims": []},
        {"dataset": "pilot", "case_id": "q3", "retrieved": [], "behavior": "clarify", "answer": None, "cited": [],
         "claims": []},
    ]
    assert event.after == {"name": "r1", "cases": 3, "source_sha256": sha256}
    assert (done.n_retrieved, done.n_cited, done.n_unknown_cited) == (5, 2, 1)


def test_the_import_report_counts_the_passage_ids_the_dataset_does_not_know(pilot, tmp_path):
    lines = imported(pilot, run_file(tmp_path)).summary_lines()
    assert lines[0] == "Read run.jsonl as UTF-8 (jsonl) into dataset 'pilot': 3 run cases"
    assert lines[1:] == [
        "  run cases: 3 new, 0 unchanged, 0 updated",
        "2 of the 5 retrieved passage ids are not passages of dataset 'pilot': they are kept, and count as not relevant",
        "1 of the 2 cited passage ids are not passages of dataset 'pilot': they are kept",
        f"Run r1 stored: 3 cases (file SHA-256 {hashlib.sha256((tmp_path / 'run.jsonl').read_bytes()).hexdigest()}).",
    ]


def test_a_run_of_known_passages_only_says_nothing_about_unknown_ones(pilot, tmp_path):
    done = imported(pilot, run_file(tmp_path, [{"case_id": "q1", "retrieved": ["p1"], "behavior": "answer"}]))
    assert done.run["n_unknown_retrieved"] == 0 and done.notes() == []
    assert not any("not passages" in line for line in done.summary_lines())


def test_the_passages_of_a_big_run_are_looked_up_in_one_read_of_the_dataset(pilot, tmp_path, monkeypatch):
    monkeypatch.setattr(runs, "WHOLE_DATASET_ABOVE", 2)
    done = imported(pilot, run_file(tmp_path))
    assert (done.run["n_unknown_retrieved"], done.n_unknown_cited) == (2, 1)


def test_a_run_is_immutable_and_its_name_is_never_reused_in_any_letter_case(pilot, tmp_path):
    imported(pilot, run_file(tmp_path))
    with session_scope(pilot) as session:
        before = run_cases(session, OPERATOR, "r1")
    for name in ("r1", "R1"):
        with pytest.raises(InvalidValueError) as refused:
            imported(pilot, run_file(tmp_path, LINES[:1]), run=name)
        assert str(refused.value) == ("a run named 'r1' exists already; a run is never changed once imported: give the "
                                      "new one another name")
    assert counts(pilot) == (1, 3)
    with session_scope(pilot) as session:
        assert run_cases(session, OPERATOR, "r1") == before
    writers = [name for name in vars(runs) if name.split("_")[0] in ("update", "delete", "remove", "edit", "replace")]
    assert writers == []


@pytest.mark.parametrize("name", ["", " r2", "r 2", "r/2", "-r2", "x" * 101, "r\u202e2", "ｒ2"])
def test_a_bad_run_name_is_refused(pilot, tmp_path, name):
    with pytest.raises(InvalidValueError, match="is not a run name"):
        imported(pilot, run_file(tmp_path), run=name)
    assert counts(pilot) == (0, 0)


def test_an_unknown_case_refuses_the_file_naming_line_and_field_and_stores_nothing(pilot, tmp_path):
    path = run_file(tmp_path, [LINES[0], {**LINES[1], "case_id": "nope"}, LINES[2]])
    with pytest.raises(ImportRowError) as refused:
        imported(pilot, path)
    assert str(refused.value) == (f"{path}, line 2, field 'case_id': no case with id 'nope'. Import the case first "
                                  "(annotator import), or fix the id")
    with pytest.raises(ImportRowError) as refused:
        imported(pilot, path, dataset="pilot")
    assert "no case with id 'nope' in dataset 'pilot'" in str(refused.value)
    assert counts(pilot) == (0, 0)


def test_a_bad_line_anywhere_stores_nothing(pilot, tmp_path):
    path = run_file(tmp_path, [*LINES, {"case_id": "q1", "retrieved": ["p1", "p1"], "behavior": "answer"}])
    with pytest.raises(ImportRowError) as refused:
        imported(pilot, path)
    assert (refused.value.line, refused.value.field) == (4, "retrieved[1]")
    assert counts(pilot) == (0, 0)
    with pytest.raises(ImportRowError, match="field 'behavior'"):
        imported(pilot, run_file(tmp_path, [LINES[0], {**LINES[1], "behavior": "Abstain"}]))
    assert counts(pilot) == (0, 0)


def test_partial_stores_the_good_lines_and_lists_the_bad_ones(pilot, tmp_path):
    path = run_file(tmp_path, [LINES[0], {**LINES[1], "case_id": "nope"}, {**LINES[2], "behavior": "shrug"}, LINES[1]])
    done = imported(pilot, path, partial=True)
    assert done.run["n_cases"] == 2 and done.run["n_unknown_retrieved"] == 2
    assert [(line.line, line.field) for line in done.report.skipped_lines] == [(2, "case_id"), (3, "behavior")]
    assert "Skipped 2 bad lines (--partial):" in done.summary_lines()
    with session_scope(pilot) as session:
        assert [case["case_id"] for case in run_cases(session, OPERATOR, "r1")] == ["q1", "q2"]


def test_a_file_whose_every_line_is_skipped_stores_no_run(pilot, tmp_path):
    path = run_file(tmp_path, [{**LINES[0], "case_id": "nope"}, {**LINES[1], "case_id": "nada"}])
    with pytest.raises(ImportFileError) as refused:
        imported(pilot, path, partial=True)
    assert str(refused.value).startswith(f"{path}: no run was stored: --partial skipped all 2 lines. The first, line 1, "
                                         "field 'case_id': no case with id 'nope'")
    assert counts(pilot) == (0, 0)


def test_a_case_id_in_two_datasets_needs_the_dataset_and_a_run_covers_one_dataset(pilot, tmp_path):
    with session_scope(pilot) as session:
        other = Seeder(session, "other")
        other.claim("q1", "o-c1", passages=("o1",))
        other.claim("q9", "o-c9", passages=("o9",))
    path = run_file(tmp_path, [{"case_id": "q1", "retrieved": ["o1", "p1"], "behavior": "answer"}])
    with pytest.raises(ImportRowError) as refused:
        imported(pilot, path)
    assert str(refused.value) == (f"{path}, line 1, field 'case_id': case id 'q1' exists in more than one dataset. "
                                  "Name the dataset with --dataset")
    done = imported(pilot, path, dataset="other")
    assert done.run["dataset"] == "other" and done.run["n_unknown_retrieved"] == 1  # p1 is pilot's, not other's
    mixed = run_file(tmp_path, [LINES[1], {"case_id": "q9", "retrieved": [], "behavior": "refuse"}], name="mixed.jsonl")
    with pytest.raises(ImportRowError) as refused:
        imported(pilot, mixed, run="r2")
    assert (refused.value.line, refused.value.field) == (2, "case_id")
    assert "case q9 is in another dataset than the run's earlier cases" in str(refused.value)
    with pytest.raises(NotFoundError, match="no dataset"):
        imported(pilot, path, run="r3", dataset="nowhere")


@pytest.mark.parametrize("meta, words", [
    ({"": "x"}, "--meta key '' is not a name"),
    ({"model name": "x"}, "--meta key 'model name' is not a name"),
    ({"1st": "x"}, "--meta key '1st' is not a name"),
    ({"k" * 65: "x"}, "at most 64 characters"),
    ({"model": "m" * 201}, "is 201 characters long, over the limit of 200"),
    ({"model": "a\x00b"}, "U+0000"),
])
def test_a_bad_meta_key_or_value_is_refused_before_the_file_is_read(pilot, tmp_path, meta, words):
    with pytest.raises(InvalidValueError) as refused:
        imported(pilot, tmp_path / "missing.jsonl", meta=meta)
    assert words in str(refused.value)
    assert counts(pilot) == (0, 0)


def test_only_an_admin_may_import_list_or_read_runs(pilot, tmp_path):
    imported(pilot, run_file(tmp_path))
    with Session(pilot) as session:
        people = [session.exec(select(User).where(User.name == name)).one() for name in ("alice", "carol")]
    expected = ("only an admin may import RAG runs or score and compare them (a run report shows each case's gold "
                "evidence)")
    for person in people:
        for service, args, options in ((import_run, (run_file(tmp_path),), {"run": "r9"}), (list_runs, (), {}),
                                       (get_run, ("r1",), {}), (run_cases, ("r1",), {})):
            with pytest.raises(PermissionDeniedError) as refused, session_scope(pilot) as session:
                service(session, person, *args, **options)
            assert str(refused.value) == expected
    assert counts(pilot) == (1, 3)


def test_an_unknown_run_is_refused_listing_the_runs_there_are(pilot, tmp_path):
    with session_scope(pilot) as session:
        with pytest.raises(NotFoundError) as refused:
            get_run(session, OPERATOR, "r1")
        assert str(refused.value) == "no run named 'r1' (runs: none)"
    imported(pilot, run_file(tmp_path), run="base")
    imported(pilot, run_file(tmp_path), run="cand")
    with session_scope(pilot) as session:
        with pytest.raises(NotFoundError) as refused:
            run_cases(session, OPERATOR, "BASE")
        assert str(refused.value) == "no run named 'BASE' (runs: base, cand)"
        assert [run["name"] for run in list_runs(session, OPERATOR)] == ["cand", "base"]  # newest first
        assert get_run(session, OPERATOR, "base").n_cases == 3


def test_the_run_services_give_plain_python_values(pilot, tmp_path):
    done = imported(pilot, run_file(tmp_path), meta={"model": "m"})
    with session_scope(pilot) as session:
        results = {"import": done.run, "list": list_runs(session, OPERATOR), "cases": run_cases(session, OPERATOR, "r1"),
                   "json": runs.run_json(session, get_run(session, OPERATOR, "r1"))}
    assert not_plain(results) == []
    assert type(results["list"][0]["n_cases"]) is int and type(results["cases"][0]["retrieved"]) is list


# ---------------------------------------------------------------------------------- CLI


def test_the_command_line_imports_and_lists_runs(any_db_url, tmp_path):
    from annotator.db import init_db

    engine = init_db(any_db_url, create=True)
    with session_scope(engine) as session:
        seed(session)
    engine.dispose()
    path = run_file(tmp_path)
    ran = annotator("run", "import", str(path), "--run", "base", "--meta", "model=m-1", "--meta", "prompt=p=2",
                    "--note", "first", "--db", any_db_url)
    assert ran.code == 0, ran.out + ran.err
    assert "Run base stored: 3 cases" in ran.out and "2 of the 5 retrieved passage ids" in ran.out
    listed = json.loads(annotator("run", "list", "--json", "--db", any_db_url).out)
    assert [(run["name"], run["meta"], run["n_cases"], run["note"]) for run in listed] == [
        ("base", {"model": "m-1", "prompt": "p=2"}, 3, "first")]
    text = annotator("run", "list", "--db", any_db_url).out.splitlines()
    assert text[0] == "1 run"
    assert text[1].startswith("  base\tpilot\t3 cases\t2 unknown retrieved\tmodel=m-1 prompt=p=2\t")
    assert text[1].endswith(f"\trun.jsonl\tsha256 {listed[0]['source_sha256']}\tfirst")  # the file, its SHA-256, the note
    again = annotator("run", "import", str(path), "--run", "BASE", "--db", any_db_url)
    assert again.code == 1 and "a run named 'base' exists already" in again.err
    bad = annotator("run", "import", str(run_file(tmp_path, [{"case_id": "q1", "retrieved": "p1", "behavior": "answer"}],
                                                  name="bad.jsonl")), "--run", "r2", "--db", any_db_url)
    assert bad.code == 1 and "bad.jsonl, line 1, field 'retrieved': expected a list of passage ids" in bad.err


@pytest.mark.parametrize("option, words", [
    ("model", "'model': write KEY=VALUE"),
    ("=m-1", "'=m-1': the key before '=' is empty"),
    (" =m-1", "the key before '=' is empty"),
])
def test_a_meta_option_without_a_key_and_value_is_a_usage_error_naming_it(tmp_path, option, words):
    ran = annotator("run", "import", str(run_file(tmp_path)), "--run", "r1", "--meta", option,
                    "--db", f"sqlite:///{tmp_path / 'never.db'}")
    assert ran.code == 2 and "--meta" in ran.err and words in " ".join(ran.err.replace("│", " ").split())
    assert not (tmp_path / "never.db").exists()


def test_a_meta_key_given_twice_is_a_usage_error(tmp_path):
    ran = annotator("run", "import", str(run_file(tmp_path)), "--run", "r1", "--meta", "model=a", "--meta", "model=b")
    assert ran.code == 2 and "the key 'model' is given twice" in " ".join(ran.err.replace("│", " ").split())


def test_a_control_character_in_a_listed_run_is_shown_escaped(pilot, tmp_path):
    imported(pilot, run_file(tmp_path, name="run\x1b[31m.jsonl"), meta={"model": "m\tx\x1b]0;pwned\x07"})
    with session_scope(pilot) as session:
        [run] = list_runs(session, OPERATOR)
    assert run["meta"] == {"model": "m\tx\x1b]0;pwned\x07"}
    url = str(pilot.url.render_as_string(hide_password=False))
    text = annotator("run", "list", "--db", url).out
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text
    assert text.splitlines()[1].count("\t") == 7  # the tab inside the value is escaped: the columns hold (no note: no column)
