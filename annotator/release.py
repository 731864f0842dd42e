"""Gold release folders, without a database: the layout, writing the data files and the
manifest, hashing and verifying.

A release folder `NAME/` holds `gold.jsonl`, `gold.csv`, `gold.parquet` and `manifest.json`
(`release_layout` is the one place those names are defined). The data files (`gold.*`) hold no
release name and no time, and are written deterministically: the same records give the same
bytes under any release name. The folder is written under a temporary sibling name, fsynced,
given modes 0755 (folder) and 0644 (files) and renamed into place, so a failure leaves no `NAME/`
folder behind; a file-system failure becomes ReleaseWriteError. Two release names that differ only
in case are refused (they are one folder on case-insensitive file systems).

Text is written as raw UTF-8 everywhere: `gold.jsonl` and `manifest.json` keep non-ASCII characters
as they are (no `\\uXXXX` escapes).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import annotator
from annotator.durable import sync_folder
from annotator.errors import InvalidValueError, ReleaseExistsError, ReleaseVerifyError, ReleaseWriteError
from annotator.vocabulary import LABELS

SCHEMA_VERSION = 1
"""Version of the release folder's format (data files and manifest); bump on any change."""

RESOLUTIONS: tuple[str, ...] = ("agreed", "adjudicated")

RECORD_KEYS: tuple[str, ...] = (
    "dataset",
    "case_id",
    "claim_id",
    "claim",
    "gold_label",
    "resolution",
    "severity",
    "slice",
    "split",
    "passage_ids",
    "labels",
    "adjudication",
)
"""The keys of one gold record, in the order `gold.jsonl` writes them."""

LABEL_KEYS: tuple[str, ...] = ("labeler", "label", "rationale", "passage_ids", "severity")
ADJUDICATION_KEYS: tuple[str, ...] = ("adjudicator", "label", "rationale", "severity")
_RECORD_KEY_SET, _LABEL_KEY_SET, _ADJUDICATION_KEY_SET = map(frozenset, (RECORD_KEYS, LABEL_KEYS, ADJUDICATION_KEYS))
_FLAT_KEYS: tuple[str, ...] = tuple(key for key in RECORD_KEYS if key not in ("labels", "adjudication"))
_NO_LABEL: tuple[None, ...] = (None,) * len(LABEL_KEYS)
_NO_ADJUDICATION: tuple[None, ...] = (None,) * len(ADJUDICATION_KEYS)
_JSON_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")
"""First characters that make a spreadsheet read a cell as a formula (full-width ones too)."""

MIN_LABEL_COLUMNS = 2
"""`gold.csv` always has at least this many label column groups (double labeling)."""

FOLDER_MODE = 0o755
"""Mode of a written release folder (readable by everyone; mkdtemp would leave 0700)."""
FILE_MODE = 0o644
"""Mode of each file of a written release."""

_NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
_RESERVED_NAMES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))})
"""Folder names Windows refuses, whatever the extension."""
_MAX_NAME_LENGTH = 100

# Pinned Parquet writer options: no timestamps are written by pyarrow; these fix the rest.
_PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "version": "2.6",
    "data_page_version": "1.0",
    "use_dictionary": True,
    "write_statistics": True,
    "row_group_size": 1 << 20,
}

_TEXT = pa.string()
PARQUET_SCHEMA = pa.schema(
    [
        ("dataset", _TEXT),
        ("case_id", _TEXT),
        ("claim_id", _TEXT),
        ("claim", _TEXT),
        ("gold_label", _TEXT),
        ("resolution", _TEXT),
        ("severity", _TEXT),
        ("slice", _TEXT),
        ("split", _TEXT),
        ("passage_ids", pa.list_(_TEXT)),
        (
            "labels",
            pa.list_(
                pa.struct(
                    [
                        ("labeler", _TEXT),
                        ("label", _TEXT),
                        ("rationale", _TEXT),
                        ("passage_ids", pa.list_(_TEXT)),
                        ("severity", _TEXT),
                    ]
                )
            ),
        ),
        (
            "adjudication",
            pa.struct([("adjudicator", _TEXT), ("label", _TEXT), ("rationale", _TEXT), ("severity", _TEXT)]),
        ),
    ]
)
"""The fixed schema of `gold.parquet` (one row per claim, the columns of RECORD_KEYS)."""


@dataclass(frozen=True)
class ReleaseLayout:
    """The paths of one release folder's files."""

    folder: Path
    jsonl: Path
    csv: Path
    parquet: Path
    manifest: Path

    @property
    def data_files(self) -> dict[str, Path]:
        """file name -> path of the data files (everything but the manifest), in writing order."""
        return {path.name: path for path in (self.jsonl, self.csv, self.parquet)}

    @property
    def all_files(self) -> dict[str, Path]:
        """file name -> path of every file of the release, the manifest last."""
        return {**self.data_files, self.manifest.name: self.manifest}


def release_layout(folder: str | os.PathLike[str]) -> ReleaseLayout:
    """The layout of the release folder `folder`: the one place the file names are defined."""
    folder = Path(folder)
    return ReleaseLayout(
        folder=folder,
        jsonl=folder / "gold.jsonl",
        csv=folder / "gold.csv",
        parquet=folder / "gold.parquet",
        manifest=folder / "manifest.json",
    )


def check_release_name(name: str) -> str:
    """`name` if it is a valid release name: letters, digits, `.`, `_`, `-`, not starting with
    `.` (no hidden folders, no `.`/`..`), at most 100 characters.

    Raises InvalidValueError naming the allowed characters otherwise.
    """
    if (not isinstance(name, str) or not _NAME_PATTERN.fullmatch(name) or name[0] in ".-" or name.endswith(".")
            or len(name) > _MAX_NAME_LENGTH or name.split(".")[0].lower() in _RESERVED_NAMES):
        raise InvalidValueError(
            f"invalid release name {name!r}: use letters, digits, '.', '_' and '-' "
            f"(not starting with '.' or '-', not ending with '.', not a reserved device name such as 'con', "
            f"at most {_MAX_NAME_LENGTH} characters), e.g. gold-v1"
        )
    return name


def check_release_target(out_dir: str | os.PathLike[str], name: str) -> Path:
    """The folder `out_dir/name` that a new release called `name` would be written to, when it can be.

    Raises InvalidValueError for a bad name; ReleaseWriteError when `out_dir` exists but is not a
    folder (or cannot be listed); ReleaseExistsError when `out_dir` holds an entry called `name`,
    or one whose name differs from it only in case (naming that entry).
    """
    check_release_name(name)
    out_dir = Path(out_dir)
    final = out_dir / name
    try:
        if not out_dir.exists():
            return final
        if not out_dir.is_dir():
            raise ReleaseWriteError(f"cannot write the release folder {final}: {out_dir} is a file, not a folder; nothing was written")
        wanted = name.casefold()
        existing = sorted(entry.name for entry in os.scandir(out_dir) if entry.name.casefold() == wanted)
    except OSError as error:
        raise _write_error(final, error) from error
    if name in existing:
        raise ReleaseExistsError(f"release folder {final} exists already; releases are immutable: choose a new name")
    if existing:
        raise ReleaseExistsError(
            f"release folder {out_dir / existing[0]} exists already and its name differs from '{name}' only in "
            "case (the same folder on case-insensitive file systems): choose a new name"
        )
    return final


def _write_error(final: Path, error: OSError) -> ReleaseWriteError:
    """ReleaseWriteError naming the release folder and the operating system's reason."""
    reason = error.strerror or str(error) or type(error).__name__
    if error.filename is not None and Path(os.fsdecode(error.filename)) != final:
        reason += f" ({os.fsdecode(error.filename)})"
    return ReleaseWriteError(f"cannot write the release folder {final}: {reason}; nothing was written")


def spreadsheet_safe(cell: str) -> str:
    """The cell text with a `'` in front when it starts like a formula (see FORMULA_PREFIXES);
    the rest of the text is kept as it is. Other text is returned unchanged."""
    return "'" + cell if cell.startswith(FORMULA_PREFIXES) else cell


# ---------------------------------------------------------------------------------- records


def ordered_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """One gold record with its keys (and its labels' and adjudication's keys) in the fixed order.

    record: a mapping with exactly the keys of RECORD_KEYS; `labels` a list of mappings with the
        keys of LABEL_KEYS; `adjudication` a mapping with the keys of ADJUDICATION_KEYS or None.
    Returns the record itself when it is already a dict in that order with list passage_ids
    (what the service builds), else an ordered copy.
    Raises ValueError when a key is missing or unknown, or `resolution` is not agreed|adjudicated.
    """
    _check_keys(record, _RECORD_KEY_SET, "record")
    if record["resolution"] not in RESOLUTIONS:
        raise ValueError(f"record {record['claim_id']!r}: resolution must be one of {RESOLUTIONS}, got {record['resolution']!r}")
    if _in_order(record):
        return record  # already canonical (the service builds records so): nothing to copy
    out = {key: record[key] for key in RECORD_KEYS}
    out["passage_ids"] = list(record["passage_ids"] or [])
    out["labels"] = [_ordered_label(label) for label in record["labels"]]
    adjudication = record["adjudication"]
    if adjudication is not None:
        _check_keys(adjudication, _ADJUDICATION_KEY_SET, "adjudication")
        out["adjudication"] = {key: adjudication[key] for key in ADJUDICATION_KEYS}
    return out


def _in_order(record: Mapping[str, Any]) -> bool:
    adjudication = record["adjudication"]
    return (
        record.__class__ is dict
        and tuple(record) == RECORD_KEYS
        and record["passage_ids"].__class__ is list
        and record["labels"].__class__ is list
        and all(
            label.__class__ is dict and tuple(label) == LABEL_KEYS and label["passage_ids"].__class__ is list
            for label in record["labels"]
        )
        and (adjudication is None or (adjudication.__class__ is dict and tuple(adjudication) == ADJUDICATION_KEYS))
    )


def _ordered_label(label: Mapping[str, Any]) -> dict[str, Any]:
    _check_keys(label, _LABEL_KEY_SET, "label")
    out = {key: label[key] for key in LABEL_KEYS}
    out["passage_ids"] = list(label["passage_ids"] or [])
    return out


def _check_keys(mapping: Mapping[str, Any], keys: frozenset[str], what: str) -> None:
    if mapping.keys() != keys:
        missing = sorted(set(keys) - set(mapping))
        unknown = sorted(set(mapping) - set(keys))
        raise ValueError(f"{what} keys do not match: missing {missing}, unknown {unknown}")


def _ordered_records(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    ordered = [ordered_record(record) for record in records]
    seen: set[tuple[str, str]] = set()
    for record in ordered:
        key = (record["dataset"], record["claim_id"])
        if key in seen:
            raise ValueError(f"claim {key[1]!r} of dataset {key[0]!r} appears twice in the release records")
        seen.add(key)
    return ordered


def count_records(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The manifest's counts: {"claims": n, "by_label", "by_slice", "by_split", "by_resolution",
    "by_severity": {value: n}}. Every declared label and resolution is named (zero when none);
    slices, splits and severities only where they occur; claims without severity are not counted
    in by_severity."""
    def tally(key: str, always: Sequence[str] = ()) -> dict[str, int]:
        counter = Counter(record[key] for record in records if record[key] is not None)
        return {**{value: 0 for value in always}, **dict(sorted(counter.items()))}

    return {
        "claims": len(records),
        "by_label": tally("gold_label", LABELS),
        "by_slice": tally("slice"),
        "by_split": tally("split"),
        "by_resolution": tally("resolution", RESOLUTIONS),
        "by_severity": tally("severity"),
    }


# ------------------------------------------------------------------------------ data files


def write_jsonl(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """`gold.jsonl`: one ordered record a line, UTF-8 without escapes, `\\n` line ends."""
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(_JSON_LINE.encode(record) + "\n")
        _sync(out)


def csv_header(n_labels: int) -> list[str]:
    """The columns of `gold.csv` with `n_labels` label column groups (`labeler_1`, `label_1`,
    `rationale_1`, `passage_ids_1`, `severity_1`, ...)."""
    head = [key for key in RECORD_KEYS if key not in ("labels", "adjudication")]
    labels = [f"{key}_{i}" for i in range(1, n_labels + 1) for key in LABEL_KEYS]
    adjudication = ["adjudicator", "adjudication_label", "adjudication_rationale", "adjudication_severity"]
    return head + labels + adjudication


def csv_row(record: Mapping[str, Any], n_labels: int) -> list[str]:
    """One record flattened into the cells of `csv_header(n_labels)`: lists joined with `;`,
    None as an empty cell, every cell made spreadsheet-safe."""
    cells = [record[key] for key in _FLAT_KEYS]
    labels = record["labels"]
    for i in range(n_labels):
        cells += [labels[i][key] for key in LABEL_KEYS] if i < len(labels) else _NO_LABEL
    adjudication = record["adjudication"]
    cells += _NO_ADJUDICATION if adjudication is None else [adjudication[key] for key in ADJUDICATION_KEYS]
    return list(map(spreadsheet_safe, [cell if cell.__class__ is str else _cell_text(cell) for cell in cells]))


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ";".join(map(str, value))
    return str(value)


def write_csv(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """`gold.csv`: UTF-8 with a BOM, `\\r\\n` line ends, one row per claim (see `csv_row`)."""
    n_labels = max([MIN_LABEL_COLUMNS, *(len(record["labels"]) for record in records)])
    with open(path, "w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(csv_header(n_labels))
        writer.writerows(csv_row(record, n_labels) for record in records)
        _sync(out)


def write_parquet(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """`gold.parquet`: PARQUET_SCHEMA, pinned writer options (zstd level 3, format 2.6)."""
    table = pa.Table.from_pylist(list(records), schema=PARQUET_SCHEMA)
    pq.write_table(table, path, **_PARQUET_OPTIONS)
    with open(path, "rb") as written:
        os.fsync(written.fileno())


# ---------------------------------------------------------------------------- the folder


def write_release(
    out_dir: str | os.PathLike[str],
    name: str,
    records: Iterable[Mapping[str, Any]],
    manifest_fields: Mapping[str, Any],
) -> Path:
    """Write the release folder `out_dir/name/` and return its path.

    records: one mapping per claim with the keys of RECORD_KEYS (see `ordered_record`), already
        sorted by the caller (dataset, case position, claim position); the order is kept.
    manifest_fields: JSON-ready fields for `manifest.json` (created_at, creator, scope, excluded,
        agreement, ...). This function adds `name`, `counts`, `files`, `schema_version` and
        `software_version`; a field of those names in manifest_fields raises ValueError.
    Everything is written to a temporary sibling folder `out_dir/.name.tmp-XXXX`, fsynced, given
    modes FOLDER_MODE/FILE_MODE and renamed into place; on any failure the temporary folder is
    removed and no `name` folder exists. `out_dir` is created when missing (and left, empty, when
    writing then fails).
    Raises InvalidValueError for a bad name; ReleaseExistsError when `out_dir` holds `name` or a
    name that differs from it only in case (see `check_release_target`); ReleaseWriteError when
    the file system refuses (out_dir is a file, cannot be created, disk full, ...), naming the
    folder and the reason; ValueError for malformed records.
    """
    final = check_release_target(out_dir, name)
    out_dir = final.parent
    ordered = _ordered_records(records)
    reserved = {"name", "counts", "files", "schema_version", "software_version"} & set(manifest_fields)
    if reserved:
        raise ValueError(f"manifest_fields may not set {sorted(reserved)}: write_release sets them")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=out_dir))
    except OSError as error:
        raise _write_error(final, error) from error
    try:
        _write_contents(temp, name, ordered, manifest_fields)
        _rename_into_place(temp, final)
    except BaseException as error:
        shutil.rmtree(temp, ignore_errors=True)
        if isinstance(error, OSError):
            raise _write_error(final, error) from error
        raise
    try:
        sync_folder(out_dir)
    except OSError as error:  # the rename may not be durable: take the release back out
        shutil.rmtree(final, ignore_errors=True)
        raise _write_error(final, error) from error
    return final


def _write_contents(folder: Path, name: str, records: list[dict[str, Any]], fields: Mapping[str, Any]) -> None:
    layout = release_layout(folder)
    write_jsonl(layout.jsonl, records)
    write_csv(layout.csv, records)
    write_parquet(layout.parquet, records)
    manifest = {
        **fields,
        "name": name,
        "counts": count_records(records),
        "files": {file_name: file_entry(path) for file_name, path in layout.data_files.items()},
        "schema_version": SCHEMA_VERSION,
        "software_version": annotator.__version__,
    }
    with open(layout.manifest, "w", encoding="utf-8", newline="\n") as out:
        out.write(manifest_text(manifest))
        _sync(out)
    for path in layout.all_files.values():
        os.chmod(path, FILE_MODE)
    os.chmod(folder, FOLDER_MODE)
    sync_folder(folder)


def _rename_into_place(temp: Path, final: Path) -> None:
    check_release_target(final.parent, final.name)
    try:
        os.rename(temp, final)
    except OSError as error:  # another writer took the name between the check and the rename
        if final.exists():
            raise ReleaseExistsError(f"release folder {final} exists already; choose a new name") from error
        raise


def manifest_text(manifest: Mapping[str, Any]) -> str:
    """The text of `manifest.json`: pretty-printed (indent 2), keys sorted, final newline, non-ASCII
    text kept as raw characters (no `\\uXXXX` escapes, like gold.jsonl). Raises ValueError on NaN or infinity (not JSON)."""
    return json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _sync(handle: Any) -> None:
    handle.flush()
    os.fsync(handle.fileno())


# ------------------------------------------------------------------------- hashes, verify


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, as 64 lowercase hex digits (read in chunks)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def file_entry(path: Path) -> dict[str, Any]:
    """The manifest entry of one file: {"sha256": hex digest, "bytes": size}."""
    return {"sha256": sha256_file(path), "bytes": path.stat().st_size}


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed `manifest.json` of a release folder.

    Raises ReleaseVerifyError when it is missing, unreadable or not a JSON object.
    """
    path = release_layout(folder).manifest
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseVerifyError(f"{path.name}: missing in {Path(folder)}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReleaseVerifyError(f"{path.name}: unreadable ({error})") from None
    if not isinstance(manifest, dict):
        raise ReleaseVerifyError(f"{path.name}: not a JSON object")
    return manifest


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of verifying a release folder against its manifest."""

    ok: bool
    problems: tuple[str, ...]  # one line each, starting with the file name
    files: tuple[str, ...]  # the files checked: names whose SHA-256 was recomputed
    manifest_sha256: str | None = None  # SHA-256 of manifest.json as found; None when it is missing


def verify_release(folder: str | os.PathLike[str], expected_manifest_sha256: str | None = None) -> VerifyResult:
    """Recompute the SHA-256 and size of every file `manifest.json` lists and compare.

    expected_manifest_sha256: the SHA-256 of `manifest.json` recorded when the release was created
        (GoldRelease.manifest_sha256; hex, any case). The manifest cannot vouch for itself: without
        this, an edit of the manifest that leaves the `files` entries alone (its counts, say) is
        not detected.
    Problems (each names the file): a missing folder or manifest, a manifest whose SHA-256 differs
    from expected_manifest_sha256 (when given), an unreadable manifest or one without a `files`
    object, a listed file that is missing or changed, a data file of the layout that the
    manifest does not list, a listed name that is not a plain file name, and any file or folder
    in the release that is not listed. Returns a VerifyResult (with the manifest's own SHA-256);
    never raises for a bad release (see `check_release`).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return VerifyResult(False, (f"{folder}: not a release folder (missing or not a directory)",), ())
    manifest_path = release_layout(folder).manifest
    manifest_sha256 = _hash_if_readable(manifest_path)
    problems: list[str] = []
    if expected_manifest_sha256 is not None and manifest_sha256 is not None:
        if manifest_sha256 != expected_manifest_sha256.strip().lower():
            problems.append(
                f"{manifest_path.name} was changed after the release was created: its SHA-256 is {manifest_sha256}, "
                f"the release recorded {expected_manifest_sha256}"
            )
    try:
        listed = _listed_files(read_manifest(folder))
    except ReleaseVerifyError as error:
        return VerifyResult(False, (*problems, str(error)), (), manifest_sha256)
    checked: list[str] = []
    for file_name, entry in listed.items():
        if Path(file_name).name != file_name or file_name in (".", "..", release_layout(folder).manifest.name):
            problems.append(f"{file_name}: listed in manifest.json but not a plain data file name")
        elif not (folder / file_name).is_file():
            problems.append(f"{file_name}: missing")
        else:
            checked.append(file_name)
            problems += _compare(folder / file_name, entry)
    problems += _unlisted_problems(folder, listed)
    return VerifyResult(not problems, tuple(problems), tuple(checked), manifest_sha256)


def _hash_if_readable(path: Path) -> str | None:
    try:
        return sha256_file(path)
    except OSError:  # missing or unreadable: read_manifest reports it
        return None


def check_release(folder: str | os.PathLike[str], expected_manifest_sha256: str | None = None) -> VerifyResult:
    """Verify a release folder (see `verify_release`) and return the result when it is ok.

    Raises ReleaseVerifyError listing every problem otherwise.
    """
    result = verify_release(folder, expected_manifest_sha256)
    if not result.ok:
        raise ReleaseVerifyError(
            f"release {Path(folder)} does not match its manifest: " + "; ".join(result.problems)
        )
    return result


def _listed_files(manifest: dict[str, Any]) -> dict[str, Any]:
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise ReleaseVerifyError("manifest.json: has no 'files' object listing the release's files")
    return dict(sorted(files.items()))


def _compare(path: Path, entry: Any) -> list[str]:
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        return [f"{path.name}: its manifest entry has no sha256"]
    actual = file_entry(path)
    if actual["sha256"] != entry["sha256"].lower():
        return [f"{path.name}: changed (sha256 {actual['sha256']}, manifest says {entry['sha256']})"]
    if "bytes" in entry and actual["bytes"] != entry["bytes"]:
        return [f"{path.name}: changed ({actual['bytes']} bytes, manifest says {entry['bytes']})"]
    return []


def _unlisted_problems(folder: Path, listed: Mapping[str, Any]) -> list[str]:
    layout = release_layout(folder)
    problems = [f"{name}: not listed in manifest.json" for name in layout.data_files if name not in listed]
    expected = set(listed) | set(layout.data_files) | {layout.manifest.name}
    for entry in sorted(folder.iterdir()):
        if entry.name not in expected:
            kind = "folder" if entry.is_dir() else "file"
            problems.append(f"{entry.name}: unexpected {kind} (not listed in manifest.json)")
    return problems
