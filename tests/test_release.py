"""The release folder without a database: layout, deterministic data files, spreadsheet-safe CSV,
the manifest's hashes, atomic writing and verification."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import annotator
from annotator import release
from annotator.errors import InvalidValueError, ReleaseExistsError, ReleaseVerifyError, ReleaseWriteError
from annotator.release import (
    FORMULA_PREFIXES,
    SCHEMA_VERSION,
    check_release,
    check_release_name,
    check_release_target,
    release_layout,
    sha256_file,
    spreadsheet_safe,
    verify_release,
    write_release,
)

FIELDS = {"created_at": "2025-01-02T03:04:05+00:00", "creator": "admin", "scope": {"dataset": "pilot"}}


def _label(labeler: str, label: str, severity: str | None = None, passage_ids=("p1",), rationale="") -> dict:
    return {"labeler": labeler, "label": label, "rationale": rationale, "passage_ids": list(passage_ids), "severity": severity}


def _records() -> list[dict]:
    return [
        {
            "dataset": "pilot",
            "case_id": "q1",
            "claim_id": "q1-a",
            "claim": "返金は30日以内に可能です。",
            "gold_label": "support",
            "resolution": "agreed",
            "severity": None,
            "slice": "normal",
            "split": "dev",
            "passage_ids": ["p2", "p1"],
            "labels": [_label("alice", "support", rationale="段落2に記載"), _label("bob", "support")],
            "adjudication": None,
            "case_metadata": {"required_evidence_ids": ["p2"], "expected_behavior": "answer", "principal": "社員"},
        },
        {
            "dataset": "pilot",
            "case_id": "q1",
            "claim_id": "q1-b",
            "claim": "=HYPERLINK(\"http://x\")",
            "gold_label": "contradict",
            "resolution": "adjudicated",
            "severity": "legal",
            "slice": "normal",
            "split": "dev",
            "passage_ids": ["p1"],
            "labels": [_label("alice", "support"), _label("bob", "contradict", "legal", ("p1", "p3"), "+1 says no")],
            "adjudication": {"adjudicator": "carol", "label": "contradict", "rationale": "-see p1", "severity": "legal"},
            "case_metadata": {},
        },
    ]


def _write(tmp_path: Path, name: str = "gold-v1", records=None, fields=FIELDS) -> Path:
    return write_release(tmp_path, name, _records() if records is None else records, fields)


def _csv_rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8-sig"), newline="")))


# ------------------------------------------------------------------------------ layout, names


def test_layout_names_every_release_file_and_the_gold_files_every_release_has(tmp_path):
    layout = release_layout(tmp_path / "v1")
    assert list(layout.required_files) == ["gold.jsonl", "gold.csv", "gold.parquet"]
    assert list(layout.data_files) == ["gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl", "gold.excel.csv"]
    assert list(layout.all_files) == [*layout.data_files, "manifest.json"]
    assert layout.manifest == tmp_path / "v1" / "manifest.json"


@pytest.mark.parametrize("name", ["gold-v1", "v1.0", "pilot_2025-01", "A1"])
def test_release_names_of_letters_digits_dot_underscore_dash_are_accepted(name):
    assert check_release_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", ".hidden", "a/b", "../up", "v 1", "金", "a\\b", "x" * 101,
                                  "-x", "gold-v1.", "con", "NUL.v1", "com1", "lpt9"])
def test_other_release_names_are_refused(name, tmp_path):
    with pytest.raises(InvalidValueError, match="release name"):
        write_release(tmp_path, name, _records(), FIELDS)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ spreadsheet


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠"])
def test_a_cell_starting_like_a_formula_gets_a_quote_and_keeps_its_text(prefix):
    assert spreadsheet_safe(prefix + "SUM(A1:A9)") == "'" + prefix + "SUM(A1:A9)"


@pytest.mark.parametrize("cell", ["", "plain", "a=b", " =1", "'=already", "1+1", "返金"])
def test_other_cells_are_unchanged(cell):
    assert spreadsheet_safe(cell) == cell


def test_the_listed_formula_prefixes_are_exactly_the_documented_ones():
    assert set(FORMULA_PREFIXES) == {"=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠"}


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠"])
def test_gold_csv_escapes_every_prefix_while_jsonl_and_parquet_keep_the_raw_text(tmp_path, prefix):
    records = _records()
    text = prefix + "cmd|' /C calc'!A0"
    records[0]["claim"] = text
    records[0]["labels"][0]["rationale"] = text
    folder = _write(tmp_path, records=records)
    row = _csv_rows(folder / "gold.csv")[0]
    assert row["claim"] == "'" + text
    assert row["rationale_1"] == "'" + text
    assert json.loads((folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()[0])["claim"] == text
    table = pq.read_table(folder / "gold.parquet").to_pylist()
    assert table[0]["claim"] == text
    assert table[0]["labels"][0]["rationale"] == text


# ------------------------------------------------------------------------------ data files


def test_gold_jsonl_has_one_claim_a_line_in_the_given_order_with_fixed_keys_and_raw_unicode(tmp_path):
    folder = _write(tmp_path)
    raw = (folder / "gold.jsonl").read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    assert "返金は30日以内に可能です。".encode() in raw
    lines = raw.decode("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == _records()
    assert list(json.loads(lines[1])) == [
        "dataset", "case_id", "claim_id", "claim", "gold_label", "resolution", "severity",
        "slice", "split", "passage_ids", "labels", "adjudication", "case_metadata",
    ]
    assert list(json.loads(lines[1])["labels"][1]) == ["labeler", "label", "rationale", "passage_ids", "severity"]
    assert list(json.loads(lines[1])["adjudication"]) == ["adjudicator", "label", "rationale", "severity"]


def test_japanese_text_is_raw_utf8_in_gold_jsonl_and_manifest_never_escaped(tmp_path):
    records = _records()
    records[0]["slice"] = "言い換え"
    folder = _write(tmp_path, records=records, fields={**FIELDS, "creator": "田中", "scope": {"dataset": "試験"}})
    jsonl = (folder / "gold.jsonl").read_bytes()
    assert "返金は30日以内に可能です。".encode() in jsonl and "段落2に記載".encode() in jsonl and "言い換え".encode() in jsonl
    assert b"\\u" not in jsonl
    manifest = (folder / "manifest.json").read_bytes()
    assert "田中".encode() in manifest and "試験".encode() in manifest and '"言い換え": 1'.encode() in manifest
    assert b"\\u" not in manifest
    assert json.loads(manifest)["creator"] == "田中"
    csv_text = (folder / "gold.csv").read_bytes().decode("utf-8-sig")
    assert "返金は30日以内に可能です。" in csv_text


def test_record_keys_given_in_any_order_are_written_in_the_fixed_order(tmp_path):
    records = [dict(reversed(list(record.items()))) for record in _records()]
    folder = _write(tmp_path, records=records)
    assert (folder / "gold.jsonl").read_bytes() == (_write(tmp_path, "other").joinpath("gold.jsonl")).read_bytes()


def test_gold_csv_is_utf8_with_bom_crlf_and_flattens_labels_and_adjudication(tmp_path):
    folder = _write(tmp_path)
    raw = (folder / "gold.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    assert raw.count(b"\r\n") == 3 and b"\n" not in raw.replace(b"\r\n", b"")
    rows = _csv_rows(folder / "gold.csv")
    assert list(rows[0]) == [
        "dataset", "case_id", "claim_id", "claim", "gold_label", "resolution", "severity", "slice", "split", "passage_ids",
        "labeler_1", "label_1", "rationale_1", "passage_ids_1", "severity_1",
        "labeler_2", "label_2", "rationale_2", "passage_ids_2", "severity_2",
        "adjudicator", "adjudication_label", "adjudication_rationale", "adjudication_severity", "case_metadata",
    ]
    assert rows[0]["passage_ids"] == "p2;p1"
    assert rows[0]["case_metadata"] == '{"expected_behavior":"answer","principal":"社員","required_evidence_ids":["p2"]}'
    assert rows[0]["severity"] == "" and rows[0]["adjudicator"] == ""
    assert rows[1] == {
        "dataset": "pilot", "case_id": "q1", "claim_id": "q1-b", "claim": "'=HYPERLINK(\"http://x\")",
        "gold_label": "contradict", "resolution": "adjudicated", "severity": "legal", "slice": "normal", "split": "dev",
        "passage_ids": "p1",
        "labeler_1": "alice", "label_1": "support", "rationale_1": "", "passage_ids_1": "p1", "severity_1": "",
        "labeler_2": "bob", "label_2": "contradict", "rationale_2": "'+1 says no", "passage_ids_2": "p1;p3",
        "severity_2": "legal",
        "adjudicator": "carol", "adjudication_label": "contradict", "adjudication_rationale": "'-see p1",
        "adjudication_severity": "legal", "case_metadata": "{}",
    }


def test_gold_csv_grows_label_columns_for_claims_with_more_than_two_labels(tmp_path):
    records = _records()
    records[0]["labels"].append(_label("dave", "support"))
    rows = _csv_rows(_write(tmp_path, records=records) / "gold.csv")
    assert rows[0]["labeler_3"] == "dave" and rows[1]["labeler_3"] == ""


def test_gold_parquet_has_the_fixed_schema_and_the_records(tmp_path):
    folder = _write(tmp_path)
    table = pq.read_table(folder / "gold.parquet")
    assert table.schema.equals(release.PARQUET_SCHEMA)
    expected = [{**record, "case_metadata": release.metadata_text(record["case_metadata"])} for record in _records()]
    assert table.to_pylist() == expected
    assert json.loads(table.to_pylist()[0]["case_metadata"]) == _records()[0]["case_metadata"]
    metadata = pq.ParquetFile(folder / "gold.parquet").metadata
    assert metadata.row_group(0).column(0).compression == "ZSTD"


def test_the_same_records_under_two_names_give_byte_identical_data_files(tmp_path):
    cases = [{"case_id": "q1", "question": "質問", "answer": "", "slice": "normal", "split": "dev", "metadata": {"b": 1, "a": 2},
              "passages": [{"passage_id": "p1", "doc_id": "", "version": "", "title": "", "text": "本文"}],
              "claims": [{"claim_id": "q1-a", "text": "主張", "passage_ids": ["p1"]}]}]
    first = write_release(tmp_path, "v1", _records(), FIELDS, cases=cases, excel=True)
    second = write_release(tmp_path, "v2", _records(), {**FIELDS, "created_at": "2030-01-01T00:00:00+00:00"}, cases=cases, excel=True)
    for name in ("gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl", "gold.excel.csv"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
        assert b"v1" not in (first / name).read_bytes() and b"2025-01-02" not in (first / name).read_bytes()
    assert (first / "manifest.json").read_bytes() != (second / "manifest.json").read_bytes()


def test_an_empty_record_list_still_gives_valid_files(tmp_path):
    folder = _write(tmp_path, records=[])
    assert (folder / "gold.jsonl").read_bytes() == b""
    assert pq.read_table(folder / "gold.parquet").num_rows == 0
    assert check_release(folder).ok


def test_a_claim_twice_in_the_records_is_refused(tmp_path):
    records = _records()
    records[1]["claim_id"] = "q1-a"
    with pytest.raises(ValueError, match="q1-a"):
        _write(tmp_path, records=records)
    assert list(tmp_path.iterdir()) == []


def test_a_record_with_a_missing_key_is_refused(tmp_path):
    records = _records()
    del records[0]["split"]
    with pytest.raises(ValueError, match="split"):
        _write(tmp_path, records=records)


def test_manifest_fields_may_not_override_what_write_release_computes(tmp_path):
    with pytest.raises(ValueError, match="files"):
        _write(tmp_path, fields={**FIELDS, "files": {}})


# ------------------------------------------------------------------------------ manifest


def test_manifest_is_sorted_pretty_json_with_counts_versions_and_file_hashes(tmp_path):
    folder = _write(tmp_path)
    text = (folder / "manifest.json").read_text(encoding="utf-8")
    manifest = json.loads(text)
    assert text == json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert manifest["name"] == "gold-v1"
    assert manifest["created_at"] == "2025-01-02T03:04:05+00:00"
    assert manifest["creator"] == "admin"
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["software_version"] == annotator.__version__
    assert manifest["counts"] == {
        "claims": 2,
        "by_label": {"support": 1, "contradict": 1, "insufficient": 0},
        "by_slice": {"normal": 2},
        "by_split": {"dev": 2},
        "by_resolution": {"agreed": 1, "adjudicated": 1},
        "by_severity": {"legal": 1},
    }
    assert set(manifest["files"]) == {"gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl"}
    for name, entry in manifest["files"].items():
        assert entry == {"sha256": sha256_file(folder / name), "bytes": (folder / name).stat().st_size}


# ------------------------------------------------------------------------------ writing


def test_an_existing_release_folder_is_refused_and_left_alone(tmp_path):
    folder = _write(tmp_path)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    with pytest.raises(ReleaseExistsError, match="gold-v1"):
        _write(tmp_path, fields={**FIELDS, "creator": "someone else"})
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_a_failure_mid_write_leaves_neither_the_release_nor_the_temporary_folder(tmp_path, monkeypatch):
    def broken_parquet(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(release.pq, "write_table", broken_parquet)
    with pytest.raises(ReleaseWriteError) as failed:
        _write(tmp_path)
    assert str(failed.value) == f"cannot write the release folder {tmp_path / 'gold-v1'}: disk full; nothing was written"
    assert list(tmp_path.iterdir()) == []


def test_an_out_dir_that_cannot_be_created_is_a_clear_error_naming_the_folder_and_the_reason(tmp_path):
    with pytest.raises(ReleaseWriteError) as failed:
        write_release("/proc/nope", "v1", _records(), FIELDS)
    assert str(failed.value) == (
        "cannot write the release folder /proc/nope/v1: No such file or directory (/proc/nope); nothing was written"
    )
    assert not Path("/proc/nope").exists()


def test_an_out_dir_that_is_a_file_is_a_clear_error_and_the_file_is_left_alone(tmp_path):
    target = tmp_path / "out"
    target.write_text("not a folder", encoding="utf-8")
    with pytest.raises(ReleaseWriteError) as failed:
        write_release(target, "v1", _records(), FIELDS)
    assert str(failed.value) == f"cannot write the release folder {target / 'v1'}: {target} is a file, not a folder; nothing was written"
    assert [path.name for path in tmp_path.iterdir()] == ["out"] and target.read_text(encoding="utf-8") == "not a folder"
    with pytest.raises(ReleaseWriteError, match="is a file, not a folder"):
        check_release_target(target, "v1")


def test_an_out_dir_below_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ReleaseWriteError) as failed:
        write_release(tmp_path / "file" / "sub", "v1", _records(), FIELDS)
    assert str(failed.value).startswith(f"cannot write the release folder {tmp_path / 'file' / 'sub' / 'v1'}: Not a directory")
    assert [path.name for path in tmp_path.iterdir()] == ["file"]


def test_a_failure_after_the_rename_takes_the_release_back_out(tmp_path, monkeypatch):
    real_sync_folder = release.sync_folder

    def broken_sync(folder):
        if Path(folder) == tmp_path:
            raise OSError(5, "Input/output error")
        real_sync_folder(folder)

    monkeypatch.setattr(release, "sync_folder", broken_sync)
    with pytest.raises(ReleaseWriteError) as failed:
        _write(tmp_path)
    assert str(failed.value) == f"cannot write the release folder {tmp_path / 'gold-v1'}: Input/output error; nothing was written"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("umask, folder_mode, file_mode", [(0o022, 0o700, 0o600), (0o000, 0o700, 0o600),
                                                      (0o077, 0o700, 0o600), (0o277, 0o500, 0o400)])
def test_the_release_folder_is_0700_and_its_files_0600_unless_the_umask_is_stricter(tmp_path, umask, folder_mode, file_mode):
    previous = os.umask(umask)
    try:
        folder = _write(tmp_path / "new" / "out")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(folder.stat().st_mode) == folder_mode
    assert {path.name: stat.S_IMODE(path.stat().st_mode) for path in folder.iterdir()} == {
        "gold.jsonl": file_mode, "gold.csv": file_mode, "gold.parquet": file_mode, "cases.jsonl": file_mode,
        "manifest.json": file_mode,
    }
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700 & ~umask  # the folders it made for --out


def test_a_name_differing_only_in_case_from_an_existing_folder_is_refused_naming_it(tmp_path):
    first = _write(tmp_path, "r1")
    with pytest.raises(ReleaseExistsError) as refused:
        _write(tmp_path, "R1")
    assert str(refused.value) == (
        f"release folder {first} exists already and its name differs from 'R1' only in case "
        "(the same folder on case-insensitive file systems): choose a new name"
    )
    assert [path.name for path in tmp_path.iterdir()] == ["r1"]
    (tmp_path / "Gold-V2").mkdir()
    with pytest.raises(ReleaseExistsError, match="Gold-V2 exists already and its name differs from 'gold-v2' only in case"):
        check_release_target(tmp_path, "gold-v2")
    assert check_release_target(tmp_path, "r2") == tmp_path / "r2"


def test_the_folder_is_written_under_a_temporary_sibling_name_then_renamed(tmp_path, monkeypatch):
    renames = []
    real_rename = release.os.rename

    def spy(source, target):
        renames.append((Path(source), Path(target)))
        assert sorted(path.name for path in Path(source).iterdir()) == [
            "cases.jsonl", "gold.csv", "gold.jsonl", "gold.parquet", "manifest.json"]
        real_rename(source, target)

    monkeypatch.setattr(release.os, "rename", spy)
    folder = _write(tmp_path)
    [(source, target)] = renames
    assert source.parent == tmp_path and source.name.startswith(".gold-v1.tmp-")
    assert target == folder == tmp_path / "gold-v1"
    assert [path.name for path in tmp_path.iterdir()] == ["gold-v1"]


def test_out_dir_is_created_when_missing(tmp_path):
    folder = write_release(tmp_path / "a" / "b", "v1", _records(), FIELDS)
    assert folder == tmp_path / "a" / "b" / "v1" and check_release(folder).ok


# ------------------------------------------------------------------------------ verify


def test_verify_passes_on_a_fresh_release(tmp_path):
    folder = _write(tmp_path)
    result = verify_release(folder)
    assert result.ok and result.problems == ()
    assert sorted(result.files) == ["cases.jsonl", "gold.csv", "gold.jsonl", "gold.parquet"]
    assert result.manifest_sha256 == sha256_file(folder / "manifest.json")
    assert check_release(folder) == result
    recorded = sha256_file(folder / "manifest.json")
    assert verify_release(folder, recorded) == result
    assert check_release(folder, recorded.upper()) == result


def _edit_manifest_counts(folder: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["counts"]["claims"] = 999
    (folder / "manifest.json").write_text(release.manifest_text(manifest), encoding="utf-8")


def test_an_edited_manifest_is_caught_only_against_the_recorded_manifest_hash(tmp_path):
    folder = _write(tmp_path)
    recorded = sha256_file(folder / "manifest.json")
    _edit_manifest_counts(folder)
    now = sha256_file(folder / "manifest.json")
    # The manifest cannot vouch for itself: its file hashes still match.
    assert verify_release(folder).ok and verify_release(folder).manifest_sha256 == now
    result = verify_release(folder, expected_manifest_sha256=recorded)
    assert not result.ok
    assert result.problems == (
        f"manifest.json does not have the expected SHA-256: it is {now}, expected {recorded} (the file was changed "
        "after the release was created, or the SHA-256 given is another release's)",
    )
    assert result.manifest_sha256 == now and sorted(result.files) == ["cases.jsonl", "gold.csv", "gold.jsonl", "gold.parquet"]
    with pytest.raises(ReleaseVerifyError) as failed:
        check_release(folder, expected_manifest_sha256=recorded)
    assert str(failed.value) == f"release {folder} does not match its manifest: {result.problems[0]}"


def test_the_recorded_hash_check_comes_with_the_other_problems(tmp_path):
    folder = _write(tmp_path)
    recorded = sha256_file(folder / "manifest.json")
    (folder / "manifest.json").write_text("{not json", encoding="utf-8")
    result = verify_release(folder, recorded)
    assert [problem.split(" ")[0] for problem in result.problems] == ["manifest.json", "manifest.json:"]
    assert result.problems[0].startswith("manifest.json does not have the expected SHA-256")
    assert result.problems[1].startswith("manifest.json: unreadable")
    (folder / "manifest.json").unlink()
    result = verify_release(folder, recorded)
    assert result.problems == (f"manifest.json: missing in {folder}",) and result.manifest_sha256 is None


def test_verify_fails_naming_gold_csv_after_one_byte_changes(tmp_path):
    folder = _write(tmp_path)
    data = bytearray((folder / "gold.csv").read_bytes())
    data[10] ^= 0x01
    (folder / "gold.csv").write_bytes(bytes(data))
    result = verify_release(folder)
    assert not result.ok
    assert len(result.problems) == 1 and result.problems[0].startswith("gold.csv: changed (sha256")
    with pytest.raises(ReleaseVerifyError, match="gold.csv: changed"):
        check_release(folder)


def test_verify_fails_naming_a_deleted_file(tmp_path):
    folder = _write(tmp_path)
    (folder / "gold.parquet").unlink()
    result = verify_release(folder)
    assert not result.ok and result.problems == ("gold.parquet: missing",)
    assert "gold.parquet" not in result.files
    with pytest.raises(ReleaseVerifyError, match="gold.parquet: missing"):
        check_release(folder)


def test_verify_fails_naming_an_added_file(tmp_path):
    folder = _write(tmp_path)
    (folder / "notes.txt").write_text("hello", encoding="utf-8")
    result = verify_release(folder)
    assert not result.ok
    assert result.problems == ("notes.txt: unexpected file (not listed in manifest.json)",)
    with pytest.raises(ReleaseVerifyError, match="notes.txt"):
        check_release(folder)


def test_verify_fails_on_a_missing_or_unreadable_manifest(tmp_path):
    folder = _write(tmp_path)
    (folder / "manifest.json").write_text("{not json", encoding="utf-8")
    assert verify_release(folder).problems[0].startswith("manifest.json: unreadable")
    (folder / "manifest.json").unlink()
    assert verify_release(folder).problems[0].startswith("manifest.json: missing")
    with pytest.raises(ReleaseVerifyError, match="manifest.json: missing"):
        check_release(folder)


def test_verify_fails_on_a_folder_that_does_not_exist(tmp_path):
    result = verify_release(tmp_path / "nope")
    assert not result.ok and "not a release folder" in result.problems[0]


def test_verify_refuses_a_manifest_that_lists_paths_outside_the_folder(tmp_path):
    folder = _write(tmp_path)
    (tmp_path / "secret").write_text("x", encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["../secret"] = {"sha256": sha256_file(tmp_path / "secret"), "bytes": 1}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = verify_release(folder)
    assert result.problems == ("../secret: listed in manifest.json but not a plain data file name",)


def test_verify_fails_when_the_manifest_stops_listing_a_data_file(tmp_path):
    folder = _write(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    del manifest["files"]["gold.csv"]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert verify_release(folder).problems == ("gold.csv: not listed in manifest.json",)


# ------------------------------------------------------------------------------ excel, cases.jsonl


def test_excel_writes_gold_excel_csv_beside_an_unchanged_gold_csv_listed_and_hashed(tmp_path):
    plain = _write(tmp_path, "plain")
    excel = write_release(tmp_path, "excel", _records(), FIELDS, excel=True)
    assert (excel / "gold.csv").read_bytes() == (plain / "gold.csv").read_bytes()
    assert not (plain / "gold.excel.csv").exists()
    raw = (excel / "gold.excel.csv").read_bytes()
    assert raw == (excel / "gold.csv").read_bytes()  # short cells: the same rows, BOM, CRLF, quotes
    manifest = json.loads((excel / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["gold.excel.csv"] == {"sha256": sha256_file(excel / "gold.excel.csv"), "bytes": len(raw)}
    assert "gold.excel.csv" in check_release(excel).files
    (excel / "gold.excel.csv").write_bytes(raw.replace(b"alice", b"alicf"))
    assert verify_release(excel).problems[0].startswith("gold.excel.csv: changed")


def test_gold_excel_csv_cuts_cells_longer_than_excel_holds_and_gold_csv_keeps_them(tmp_path):
    records = _records()
    records[0]["labels"][0]["rationale"] = "長" * 40_000
    folder = write_release(tmp_path, "v1", records, FIELDS, excel=True)
    excel_cell = _csv_rows(folder / "gold.excel.csv")[0]["rationale_1"]
    assert len(excel_cell) == release.EXCEL_CELL_LIMIT and excel_cell.endswith(release.EXCEL_CUT_MARK)
    assert excel_cell.startswith("長" * 1000)
    assert _csv_rows(folder / "gold.csv")[0]["rationale_1"] == "長" * 40_000


def test_cases_jsonl_is_written_in_the_native_format_in_the_given_order(tmp_path):
    case = {"claims": [{"passage_ids": ("p2",), "text": "主張", "claim_id": "q1-a"}], "split": "dev", "slice": "normal",
            "answer": "", "question": "質問", "case_id": "q1", "metadata": {"principal": "社員"},
            "passages": [{"text": "本文\n2行目", "title": "", "version": "v1", "doc_id": "d", "passage_id": "p2"}]}
    folder = write_release(tmp_path, "v1", _records(), FIELDS, cases=[case])
    raw = (folder / "cases.jsonl").read_bytes()
    assert raw.endswith(b"\n") and b"\\u" not in raw and raw.count(b"\n") == 1
    line = json.loads(raw)
    assert list(line) == ["case_id", "question", "answer", "slice", "split", "metadata", "passages", "claims"]
    assert list(line["passages"][0]) == ["passage_id", "doc_id", "version", "title", "text"]
    assert line["claims"] == [{"claim_id": "q1-a", "text": "主張", "passage_ids": ["p2"]}]
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]["cases.jsonl"]["sha256"] == \
        sha256_file(folder / "cases.jsonl")


def test_gold_jsonl_carries_case_metadata_as_an_object_and_gold_csv_as_sorted_json(tmp_path):
    folder = _write(tmp_path)
    first = json.loads((folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["case_metadata"] == {"required_evidence_ids": ["p2"], "expected_behavior": "answer", "principal": "社員"}
    assert release.metadata_text({"b": {"z": 1, "a": 2}, "a": "＝"}) == '{"a":"＝","b":{"a":2,"z":1}}'


def test_a_release_of_schema_1_without_cases_jsonl_still_verifies(tmp_path):
    folder = _write(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    del manifest["files"]["cases.jsonl"]
    (folder / "cases.jsonl").unlink()
    (folder / "manifest.json").write_text(release.manifest_text(manifest), encoding="utf-8")
    assert check_release(folder).files == ("gold.csv", "gold.jsonl", "gold.parquet")


# ------------------------------------------------------------------------------ staging


def test_a_staged_release_is_not_a_release_until_finished(tmp_path):
    staged = release.stage_release(tmp_path, "v1", _records(), FIELDS)
    assert staged.temp.name.startswith(".v1.tmp-") and not (tmp_path / "v1").exists()
    assert release.staging_name(staged.temp) == "v1"
    result = verify_release(staged.temp)
    assert not result.ok and result.problems[0].startswith(f"{staged.temp.name}: the staging folder of a `release create`")
    assert staged.manifest_sha256 == sha256_file(staged.temp / "manifest.json")
    assert staged.finish(undo_on_failure=True) == tmp_path / "v1"
    assert check_release(tmp_path / "v1", staged.manifest_sha256).ok and [p.name for p in tmp_path.iterdir()] == ["v1"]


def test_a_staging_folder_held_by_its_writer_is_not_claimed_and_a_stopped_one_is(tmp_path):
    staged = release.stage_release(tmp_path, "v1", _records(), FIELDS)
    [found] = release.staging_folders(tmp_path)
    assert found == release.StagingFolder("v1", staged.temp)
    with release.claimed(found) as free:
        assert free is False  # the writer (this process, another descriptor) holds its lock
    staged._lock = release._unlock(staged._lock)  # as when the writer is killed
    with release.claimed(found) as free:
        assert free is True
    assert release.finish_staged(found, "0" * 64) is None  # not the recorded manifest: left alone
    assert release.finish_staged(found, staged.manifest_sha256) == tmp_path / "v1"
    assert check_release(tmp_path / "v1").ok


@pytest.mark.parametrize("name, expected", [(".v1.tmp-ab_c12x9", "v1"), (".a.tmp-x.tmp-k2j4h5g6", "a.tmp-x"),
                                            ("v1", None), (".v1.tmp-", None), (".v1.tmp-AB", None), (".v1.tmp-a.b", None)])
def test_staging_folder_names_are_recognised_exactly(name, expected):
    assert release.staging_name(name) == expected


# ------------------------------------------------------------------------------ diff


def _gold(*rows):
    return [{"dataset": d, "case_id": c, "claim_id": i, "gold_label": g} for d, c, i, g in rows]


def test_diff_names_added_removed_and_changed_claims_with_counts():
    old = _gold(("p", "q1", "a", "support"), ("p", "q1", "b", "contradict"), ("p", "q2", "c", "insufficient"),
                ("x", "q1", "a", "support"))
    new = _gold(("p", "q1", "a", "contradict"), ("p", "q2", "c", "insufficient"), ("p", "q3", "d", "support"),
                ("x", "q1", "a", "contradict"))
    diff = release.diff_releases(old, new)
    assert diff.counts() == {"added": 1, "removed": 1, "changed": 2, "unchanged": 1}
    assert diff.added == (release.GoldChange("p", "q3", "d", None, "support"),)
    assert diff.removed == (release.GoldChange("p", "q1", "b", "contradict", None),)
    assert [c.to_json() for c in diff.changed] == [
        {"dataset": "p", "case_id": "q1", "claim_id": "a", "from": "support", "to": "contradict"},
        {"dataset": "x", "case_id": "q1", "claim_id": "a", "from": "support", "to": "contradict"},
    ]
    assert diff.changes_by_label() == [{"from": "support", "to": "contradict", "claims": 2}]
    assert release.diff_releases(new, new).counts() == {"added": 0, "removed": 0, "changed": 0, "unchanged": 4}


def test_diff_refuses_a_claim_twice_on_one_side():
    with pytest.raises(ValueError, match="appears twice in the new release"):
        release.diff_releases([], _gold(("p", "q1", "a", "support"), ("p", "q1", "a", "support")))


# ------------------------------------------------------------------------- links and repeated keys


@pytest.mark.parametrize("where", ["gold.csv", "sub/gold.csv"])
def test_verify_refuses_a_symlinked_file_anywhere_in_the_release_naming_it(tmp_path, where):
    folder = _write(tmp_path)
    outside = tmp_path / "outside.csv"
    outside.write_bytes((folder / "gold.csv").read_bytes())  # the same bytes: only the link is wrong
    (folder / where).parent.mkdir(exist_ok=True)
    if where == "gold.csv":
        (folder / "gold.csv").unlink()
    (folder / where).symlink_to(outside)
    result = verify_release(folder)
    assert not result.ok
    assert result.problems == (f"{where}: a symbolic link; a release folder holds only plain files (a link can point "
                               "out of it): replace it with the file itself",)
    with pytest.raises(ReleaseVerifyError, match=f"{where}: a symbolic link"):
        check_release(folder)


def test_verify_refuses_a_symlinked_folder_in_the_release_without_following_it(tmp_path):
    folder = _write(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link-inside").symlink_to(tmp_path)
    (folder / "extra").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert verify_release(folder).problems == ("extra: a symbolic link; a release folder holds only plain files (a "
                                               "link can point out of it): replace it with the file itself",)


def test_a_manifest_giving_a_key_twice_is_refused_naming_the_key(tmp_path):
    folder = _write(tmp_path)
    text = (folder / "manifest.json").read_text(encoding="utf-8")
    (folder / "manifest.json").write_text(text.replace("{", '{\n  "files": {},', 1), encoding="utf-8")
    result = verify_release(folder)
    assert result.problems == ("manifest.json: unreadable (the key 'files' appears twice in one object)",)


def test_a_gold_jsonl_line_giving_a_key_twice_is_refused_naming_line_and_key(tmp_path):
    folder = _write(tmp_path)
    lines = (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace("{", '{"gold_label": "support", ', 1)
    (folder / "gold.jsonl").write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ReleaseVerifyError) as caught:
        release.read_gold(folder)
    assert str(caught.value) == "gold.jsonl, line 2: unreadable (the key 'gold_label' appears twice in one object)"
