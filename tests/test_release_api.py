"""The gold for the people who use a release, on SQLite and PostgreSQL: `annotator.load_release`
(verified first: a changed or missing file is refused, named), `release export --format ragas`
(the RAGAS record shape with the gold labels per claim), and the README's "Use a release"
snippets, run as they are written (pandas, DuckDB, Hugging Face datasets, annotator)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from sqlmodel import select

import annotator
from annotator.db import init_db, session_scope
from annotator.errors import AnnotatorError, ExportError, ReleaseVerifyError
from annotator.models import Case, Claim
from annotator.release import release_layout, write_release
from annotator.release_export import GOLD_CLAIM_KEYS, RAGAS_KEYS, ragas_records, write_export
from annotator.release_load import load_release
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate
from annotator.services.imports import import_cases
from annotator.services.labeling import assign_cases, save_label
from annotator.services.releases import create_release
from annotator.services.users import add_user, get_user
from tests.conftest import REPO, need_module
from tests.conftest import annotator as run_annotator

RELEASE = "gold-v1"

CASES = [
    {"case_id": "refund", "question": "How long do I have to return an item?",
     "answer": "You have 30 days to return an item. Refunds take 5 business days.", "slice": "normal", "split": "dev",
     "metadata": {"expected_answer": "30 days from delivery.", "reference_contexts": ["Returns are accepted within 30 days."],
                  "required_evidence_ids": ["p-returns"], "team": "support"},
     "passages": [{"passage_id": "p-returns", "doc_id": "policy", "version": "v2", "title": "Returns",
                   "text": "Returns are accepted within 30 days of delivery."},
                  {"passage_id": "p-refunds", "doc_id": "policy", "version": "v2", "title": "Refunds",
                   "text": "Refunds are paid within 14 days."}],
     "claims": [{"claim_id": "refund-c1", "text": "You have 30 days to return an item."},
                {"claim_id": "refund-c2", "text": "Refunds take 5 business days."}]},
    {"case_id": "返品", "question": "返品はいつまでできますか？", "answer": "返品は30日以内です。送料は無料です。",
     "slice": "paraphrase", "split": "holdout", "metadata": {},
     "passages": [{"passage_id": "p-返品", "doc_id": "規約", "version": "", "title": "", "text": "返品は商品到着後30日以内に受け付けます。"}],
     "claims": [{"claim_id": "返品-c1", "text": "返品は30日以内です。"},
                {"claim_id": "返品-c2", "text": "送料は無料です。"}]},
]
"""Two cases, English and Japanese; claim refund-c2 is disputed and adjudicated, 返品-c2 stays
disputed and so is left out of the release (--only-final)."""

LABELS = {"refund-c1": ("support", "support"), "refund-c2": ("support", "contradict"),
          "返品-c1": ("support", "support"), "返品-c2": ("insufficient", "support")}


@pytest.fixture(scope="module")
def released(module_db_url, tmp_path_factory) -> Path:
    """Release gold-v1 of CASES, made through import, two labelers and an adjudication on each
    database; its folder."""
    root = tmp_path_factory.mktemp("release-api")
    source = root / "cases.jsonl"
    source.write_text("".join(json.dumps(case, ensure_ascii=False) + "\n" for case in CASES), encoding="utf-8")
    engine = init_db(module_db_url)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, source, fmt="jsonl", dataset="shop")
        add_user(session, OPERATOR, "ann", ["labeler"])
        add_user(session, OPERATOR, "ben", ["labeler"])
        add_user(session, OPERATOR, "cid", ["adjudicator"])
        assign_cases(session, OPERATOR, list(session.exec(select(Case.id))), ["ann", "ben"])
    for index, name in enumerate(("ann", "ben")):
        with session_scope(engine) as session:
            me = get_user(session, name)
            for claim in session.exec(select(Claim)).all():
                value = LABELS[claim.claim_id][index]
                save_label(session, me, claim.id, value, severity="other" if value == "contradict" else None)
    with session_scope(engine) as session:
        claim = session.exec(select(Claim).where(Claim.claim_id == "refund-c2")).one()
        adjudicate(session, get_user(session, "cid"), claim.id, "contradict", rationale="p-refunds says 14 days", severity="other")
    with session_scope(engine) as session:
        created = create_release(session, OPERATOR, RELEASE, only_final=True, out_dir=root / "releases", n_bootstrap=0)
    engine.dispose()
    return created.path


@pytest.fixture
def copy(released, tmp_path) -> Path:
    """A copy of the release to change (modes and bytes kept)."""
    return Path(shutil.copytree(released, tmp_path / RELEASE))


def _gold_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in release_layout(folder).jsonl.read_text(encoding="utf-8").splitlines()]


def _manifest_sha256(folder: Path) -> str:
    import hashlib

    return hashlib.sha256(release_layout(folder).manifest.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------ load_release


def test_a_good_release_loads_as_pandas_reads_its_gold_parquet(released):
    gold = annotator.load_release(released)
    expected = pd.read_parquet(released / "gold.parquet")
    pd.testing.assert_frame_equal(gold, expected)
    assert list(gold.dtypes) == list(expected.dtypes)
    assert list(gold["claim_id"]) == [line["claim_id"] for line in _gold_lines(released)] == ["refund-c1", "refund-c2", "返品-c1"]
    assert list(gold["gold_label"]) == ["support", "contradict", "support"]


@pytest.mark.parametrize("given", ["folder", "manifest.json", "gold.parquet", "str"])
def test_the_folder_its_manifest_or_another_of_its_files_name_the_release(released, given):
    path = {"folder": released, "str": str(released)}.get(given, released / given)
    pd.testing.assert_frame_equal(load_release(path), pd.read_parquet(released / "gold.parquet"))


def test_the_manifest_hash_given_checks_the_manifest_itself(copy):
    sha256 = _manifest_sha256(copy)
    assert len(load_release(copy, sha256.upper())) == 3
    manifest = json.loads(release_layout(copy).manifest.read_text(encoding="utf-8"))
    manifest["counts"]["claims"] = 99  # the files' entries still match: only the recorded hash catches it
    release_layout(copy).manifest.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    assert len(load_release(copy)) == 3
    with pytest.raises(ReleaseVerifyError, match=r"manifest\.json does not have the expected SHA-256"):
        load_release(copy, sha256)


@pytest.mark.parametrize("name", ["gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl", "manifest.json"])
def test_a_changed_byte_in_any_file_is_refused_naming_the_file(copy, name):
    sha256 = _manifest_sha256(copy)
    path = copy / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ReleaseVerifyError) as refused:
        load_release(copy, sha256)
    text = str(refused.value)
    assert text.startswith(f"release {copy} does not match its manifest, so its gold was not loaded: {name}")
    assert "Take a new copy of the release from where it was published" in text
    assert isinstance(refused.value, AnnotatorError) and refused.value.key == "msg.release.load_mismatch"


@pytest.mark.parametrize("name", ["gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl"])
def test_a_missing_file_is_refused_naming_it(copy, name):
    (copy / name).unlink()
    with pytest.raises(ReleaseVerifyError, match=rf"so its gold was not loaded: {re.escape(name)}: missing"):
        load_release(copy)


def test_a_missing_manifest_and_an_added_file_are_refused_naming_them(copy):
    (copy / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ReleaseVerifyError, match=r"notes\.txt: unexpected file"):
        load_release(copy)
    (copy / "manifest.json").unlink()
    with pytest.raises(ReleaseVerifyError, match=r"manifest\.json: missing in"):
        load_release(copy)


def test_a_path_that_is_no_release_is_refused_saying_what_to_give(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("not a release", encoding="utf-8")
    for path in (tmp_path / "nowhere", other):
        with pytest.raises(ReleaseVerifyError) as refused:
            load_release(path)
        assert str(refused.value) == (f"{path} is not a release folder: give the folder `release create` wrote "
                                      "(it holds manifest.json and gold.parquet), or its manifest.json")


def test_gold_parquet_changed_after_the_check_is_refused_not_returned(copy, monkeypatch):
    from annotator import release_load

    checked = release_load.verify_release

    def check_then_change(folder, expected=None):  # noqa: ANN001, ANN202
        result = checked(folder, expected)
        path = Path(folder) / "gold.parquet"
        data = bytearray(path.read_bytes())
        data[-20] ^= 0x01
        path.write_bytes(bytes(data))
        return result

    monkeypatch.setattr(release_load, "verify_release", check_then_change)
    with pytest.raises(ReleaseVerifyError, match=r"gold\.parquet: changed \(sha256 [0-9a-f]{64}, manifest says"):
        load_release(copy)


def test_import_annotator_stays_light_and_load_release_is_the_function():
    code = "import sys, annotator; print(sorted(m for m in ('pandas', 'pyarrow', 'sqlmodel') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert annotator.load_release is load_release
    assert "load_release" in dir(annotator) and "load_release" in annotator.__all__
    from annotator import load_release as imported

    assert imported is load_release
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        annotator.nothing  # noqa: B018


# ---------------------------------------------------------------------------- export: RAGAS


def test_the_ragas_export_holds_one_record_per_released_case_with_the_gold_per_claim(released):
    records = list(ragas_records(released))
    assert [list(record) for record in records] == [list(RAGAS_KEYS)] * 2
    refund, returns = records
    assert refund["case_id"] == "refund" and returns["case_id"] == "返品"
    assert refund["user_input"] == CASES[0]["question"] and refund["response"] == CASES[0]["answer"]
    assert refund["retrieved_contexts"] == [passage["text"] for passage in CASES[0]["passages"]]
    assert refund["retrieved_context_ids"] == ["p-returns", "p-refunds"]
    assert refund["reference"] == "30 days from delivery."
    assert refund["reference_contexts"] == ["Returns are accepted within 30 days."]
    assert refund["metadata"] == {"required_evidence_ids": ["p-returns"], "team": "support"}
    assert (refund["slice"], refund["split"], returns["slice"], returns["split"]) == ("normal", "dev", "paraphrase", "holdout")
    assert refund["claims"] == ["You have 30 days to return an item.", "Refunds take 5 business days."]
    assert [list(claim) for claim in refund["gold_claims"]] == [list(GOLD_CLAIM_KEYS)] * 2
    assert [(c["claim_id"], c["gold_label"], c["resolution"], c["severity"]) for c in refund["gold_claims"]] == [
        ("refund-c1", "support", "agreed", None), ("refund-c2", "contradict", "adjudicated", "other")]
    assert {claim["dataset"] for record in records for claim in record["gold_claims"]} == {"shop"}
    # a case without a reference; its disputed claim is not in the release, so not in the export
    assert returns["reference"] is None and returns["reference_contexts"] is None and returns["metadata"] == {}
    assert returns["retrieved_context_ids"] == ["p-返品"]
    assert returns["claims"] == ["返品は30日以内です。"]
    assert [claim["claim_id"] for claim in returns["gold_claims"]] == ["返品-c1"]
    # every released claim once, in release order, with its gold label
    gold = _gold_lines(released)
    assert [(c["claim_id"], c["gold_label"], c["passage_ids"]) for record in records for c in record["gold_claims"]] == [
        (line["claim_id"], line["gold_label"], line["passage_ids"]) for line in gold]


def test_export_writes_raw_utf8_json_lines_the_same_bytes_each_time(released, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "out" / "b.jsonl"
    assert write_export(ragas_records(released), first, released).claims == 3
    write_export(ragas_records(released), second, released)
    data = first.read_bytes()
    assert data == second.read_bytes() and data.endswith(b"\n") and b"\r" not in data
    assert "返品は30日以内です。".encode() in data and b"\\u" not in data
    assert [json.loads(line) for line in data.decode("utf-8").splitlines()] == list(ragas_records(released))
    assert (first.stat().st_mode & 0o077) == 0


def test_export_refuses_a_file_inside_the_release_and_a_folder_writing_nothing(copy, tmp_path):
    before = sorted(path.name for path in copy.iterdir())
    with pytest.raises(ExportError, match=r"is inside the release folder .*: write the export elsewhere"):
        write_export(ragas_records(copy), copy / "gold.ragas.jsonl", copy)
    with pytest.raises(ExportError, match=r"is a folder: give the file to write"):
        write_export(ragas_records(copy), tmp_path, copy)
    assert sorted(path.name for path in copy.iterdir()) == before


def test_a_failure_while_reading_leaves_no_file_and_keeps_an_old_one(copy, tmp_path):
    out = tmp_path / "gold.ragas.jsonl"
    out.write_text("old\n", encoding="utf-8")

    def broken():  # noqa: ANN202
        yield from ragas_records(copy)
        raise ReleaseVerifyError("cases.jsonl: unreadable")

    with pytest.raises(ReleaseVerifyError):
        write_export(broken(), out, copy)
    assert out.read_text(encoding="utf-8") == "old\n"
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != copy.name) == ["gold.ragas.jsonl"]


def test_a_release_without_cases_jsonl_cannot_be_exported(tmp_path):
    record = {"dataset": "d", "case_id": "q1", "claim_id": "c1", "claim": "A claim.", "gold_label": "support",
              "resolution": "agreed", "severity": None, "slice": "normal", "split": "dev", "passage_ids": ["p1"],
              "labels": [], "adjudication": None, "case_metadata": {}}
    folder = write_release(tmp_path, "old", [record], {"created_at": "2026-01-01T00:00:00Z"})
    layout = release_layout(folder)
    layout.cases.unlink()
    manifest = json.loads(layout.manifest.read_text(encoding="utf-8"))
    del manifest["files"]["cases.jsonl"]
    layout.manifest.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ExportError, match=r"release old has no cases\.jsonl \(a release of schema 1\)"):
        list(ragas_records(folder, "old"))


def test_cases_jsonl_whose_claims_are_not_gold_jsonl_s_is_refused_naming_the_line(copy):
    cases = release_layout(copy).cases
    lines = cases.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["claims"].reverse()
    cases.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(ReleaseVerifyError, match=r"cases\.jsonl, line 1: does not follow the claims"):
        list(ragas_records(copy))


def test_release_export_on_the_command_line_by_folder_and_by_name(released, module_db_url, tmp_path):
    printed = run_annotator("release", "export", str(released), "--format", "ragas")
    assert printed.code == 0, printed.err
    out = tmp_path / "gold.ragas.jsonl"
    written = run_annotator("release", "export", RELEASE, "--output", str(out), "--db", module_db_url)
    assert written.code == 0, written.err
    assert written.out == f"Wrote 2 cases (3 claims) of release {RELEASE} to {out}\n"
    assert printed.out.encode("utf-8") == out.read_bytes() == b"".join(
        json.dumps(record, ensure_ascii=False).encode() + b"\n" for record in ragas_records(released))


def test_release_export_refuses_another_format_a_changed_release_and_an_unknown_name(copy, module_db_url):
    other = run_annotator("release", "export", str(copy), "--format", "csv")
    assert other.code == 2 and "'csv': choose one of ragas" in other.err
    (copy / "gold.csv").write_bytes(b"changed")
    changed = run_annotator("release", "export", str(copy))
    assert changed.code == 1 and "gold.csv: changed" in changed.err and changed.out == ""
    unknown = run_annotator("release", "export", "nope", "--db", module_db_url)
    assert unknown.code == 1 and "no release named 'nope'" in unknown.err


def test_stdout_shows_control_characters_escaped_and_the_file_keeps_them(copy, tmp_path):
    cases = release_layout(copy).cases
    lines = cases.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["question"] += "\u202e\x9b"
    cases.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    out = tmp_path / "raw.jsonl"
    write_export(ragas_records(copy), out, copy)  # the folder is not verified here: the text is what matters
    assert "\u202e\x9b" in out.read_text(encoding="utf-8")
    from annotator.release_export import json_line
    from annotator.terminal import json_safe

    shown = json_safe(json_line(next(ragas_records(copy))))
    assert "\u202e" not in shown and "\\u202e\\u009b" in shown
    assert json.loads(shown) == next(ragas_records(copy))


# ------------------------------------------------------------------- the README's snippets


SECTION = "## Use a release"


def readme_snippets() -> list[str]:
    """The ```python blocks of the README's "Use a release" section, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:] if end < 0 else text[start:end]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


SNIPPET_MODULES = {"pandas": "pandas", "duckdb": "duckdb", "datasets": "datasets", "annotator": "annotator"}
"""The module a snippet shows -> the package that installs it."""


def _module(snippet: str) -> str:
    """The one module of SNIPPET_MODULES that the snippet imports."""
    found = [name for name in re.findall(r"^(?:import|from) (\w+)", snippet, flags=re.M) if name in SNIPPET_MODULES]
    assert len(found) == 1, f"a README snippet shows one of {sorted(SNIPPET_MODULES)}:\n{snippet}"
    return found[0]


def test_the_readme_shows_pandas_duckdb_datasets_and_load_release():
    assert sorted(_module(snippet) for snippet in readme_snippets()) == sorted(SNIPPET_MODULES)


@pytest.mark.parametrize("module", sorted(SNIPPET_MODULES))
def test_each_readme_snippet_runs_as_written_and_counts_the_gold_labels(released, tmp_path, module):
    """The snippet runs in a folder holding data/releases/gold-v1 (where the README says a release
    is); its last line printed is the gold labels' counts, which must be the release's."""
    need_module(module, SNIPPET_MODULES[module])
    snippet = next(snippet for snippet in readme_snippets() if _module(snippet) == module)
    shutil.copytree(released, tmp_path / "data" / "releases" / RELEASE)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    counts = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert {str(label): int(n) for label, n in dict(counts).items()} == dict(Counter(line["gold_label"] for line in _gold_lines(released)))
