"""Gold release folders, without a database: the layout, writing the data files and the
manifest, hashing and verifying.

A release folder `NAME/` holds `gold.jsonl`, `gold.csv`, `gold.parquet`, `cases.jsonl` (the
released claims as a native case file, to import again), optionally `gold.excel.csv`, and
`manifest.json` (`release_layout` is the one place those names are defined). The data files hold
no release name and no time, and are written deterministically: the same records give the same
bytes under any release name. The folder is staged under a temporary sibling name
`.NAME.tmp-XXXXXXXX` (locked while its writer runs), fsynced, given modes 0755 (folder) and 0644
(files), and only then renamed into place (`stage_release`, `StagedRelease.finish`), so a failure
leaves no `NAME/` folder behind; a file-system failure becomes ReleaseWriteError. A staging folder
is never a release: `verify_release` refuses one. Two release names that differ only in case are
refused (they are one folder on case-insensitive file systems).

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
import signal
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

import annotator
from annotator.durable import sync_folder
from annotator.filemodes import PRIVATE_FILE, PRIVATE_FOLDER, make_private_folders, private_mode
from annotator.formats import loads_unique
from annotator.errors import InvalidValueError, ReleaseExistsError, ReleaseVerifyError, ReleaseWriteError
from annotator.messages import Joined, Message, english, recognize
from annotator.vocabulary import LABELS

try:  # POSIX: a staging folder is locked by its writer, so a cleanup never removes a live one
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SCHEMA_VERSION = 2
"""Version of the release folder's format (data files and manifest); bump on any change.
2: `case_metadata` in the gold files (the last column of gold.csv), `cases.jsonl`, optional
`gold.excel.csv`."""

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
    "case_metadata",
)
"""The keys of one gold record, in the order `gold.jsonl` writes them. `case_metadata` is the
case's metadata object (Case.meta); gold.csv and gold.parquet hold it as JSON text with sorted
keys (`metadata_text`)."""

LABEL_KEYS: tuple[str, ...] = ("labeler", "label", "rationale", "passage_ids", "severity")
ADJUDICATION_KEYS: tuple[str, ...] = ("adjudicator", "label", "rationale", "severity")
_RECORD_KEY_SET, _LABEL_KEY_SET, _ADJUDICATION_KEY_SET = map(frozenset, (RECORD_KEYS, LABEL_KEYS, ADJUDICATION_KEYS))
_FLAT_KEYS: tuple[str, ...] = tuple(key for key in RECORD_KEYS if key not in ("labels", "adjudication", "case_metadata"))
_NO_LABEL: tuple[None, ...] = (None,) * len(LABEL_KEYS)
_NO_ADJUDICATION: tuple[None, ...] = (None,) * len(ADJUDICATION_KEYS)
_JSON_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")
"""First characters that make a spreadsheet read a cell as a formula (full-width ones too)."""
_FORMULA_FIRST = frozenset(FORMULA_PREFIXES)  # each prefix is one character: a set lookup of cell[:1]

MIN_LABEL_COLUMNS = 2
"""`gold.csv` always has at least this many label column groups (double labeling)."""

EXCEL_CELL_LIMIT = 32_767
"""The most characters an Excel cell holds; `gold.excel.csv` cuts longer cells (see EXCEL_CUT_MARK)."""
EXCEL_CUT_MARK = " [...cut: Excel holds 32,767 characters a cell; the full text is in gold.jsonl]"
"""What ends a cell of `gold.excel.csv` that was cut to EXCEL_CELL_LIMIT characters."""

KILL_AT_ENV = "ANNOTATOR_TEST_KILL_AT"
"""Crash-safety tests only: the step ("writing", "staged", "committed") at which `kill_point`
kills the process with SIGKILL. Unset in normal use."""

_STAGING = re.compile(r"\.(?P<name>[A-Za-z0-9._-]+)\.tmp-[a-z0-9_]+")
"""A staging folder's name: `.NAME.tmp-` and mkdtemp's random letters, digits and `_`."""

FOLDER_MODE = PRIVATE_FOLDER
"""Mode of a written release folder (0700, less what the umask forbids: annotator.filemodes)."""
FILE_MODE = PRIVATE_FILE
"""Mode of each file of a written release (0600, less what the umask forbids)."""

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
        ("case_metadata", _TEXT),
    ]
)
"""The fixed schema of `gold.parquet` (one row per claim, the columns of RECORD_KEYS;
case_metadata as JSON text with sorted keys)."""


@dataclass(frozen=True)
class ReleaseLayout:
    """The paths of one release folder's files."""

    folder: Path
    jsonl: Path
    csv: Path
    parquet: Path
    cases: Path
    excel: Path
    manifest: Path

    @property
    def required_files(self) -> dict[str, Path]:
        """file name -> path of the data files every release has (since schema 1): the gold files."""
        return {path.name: path for path in (self.jsonl, self.csv, self.parquet)}

    @property
    def data_files(self) -> dict[str, Path]:
        """file name -> path of every data file a release can have (everything but the manifest),
        in writing order; `cases.jsonl` since schema 2, `gold.excel.csv` only when asked for."""
        return {path.name: path for path in (self.jsonl, self.csv, self.parquet, self.cases, self.excel)}

    @property
    def all_files(self) -> dict[str, Path]:
        """file name -> path of every file a release can have, the manifest last."""
        return {**self.data_files, self.manifest.name: self.manifest}

    def present_files(self) -> dict[str, Path]:
        """`all_files` limited to the files that exist (a release of schema 1 has no cases.jsonl,
        one created without --excel no gold.excel.csv)."""
        return {name: path for name, path in self.all_files.items() if path.is_file()}


def release_layout(folder: str | os.PathLike[str]) -> ReleaseLayout:
    """The layout of the release folder `folder`: the one place the file names are defined."""
    folder = Path(folder)
    return ReleaseLayout(
        folder=folder,
        jsonl=folder / "gold.jsonl",
        csv=folder / "gold.csv",
        parquet=folder / "gold.parquet",
        cases=folder / "cases.jsonl",
        excel=folder / "gold.excel.csv",
        manifest=folder / "manifest.json",
    )


def check_release_name(name: str) -> str:
    """`name` if it is a valid release name: letters, digits, `.`, `_`, `-`, not starting with
    `.` (no hidden folders, no `.`/`..`), at most 100 characters.

    Raises InvalidValueError naming the allowed characters otherwise.
    """
    if (not isinstance(name, str) or not _NAME_PATTERN.fullmatch(name) or name[0] in ".-" or name.endswith(".")
            or len(name) > _MAX_NAME_LENGTH or name.split(".")[0].lower() in _RESERVED_NAMES):
        raise InvalidValueError.of("msg.release.bad_name", name=repr(name), most=_MAX_NAME_LENGTH)
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
            raise ReleaseWriteError.of("msg.release.out_dir_is_file", folder=str(final), out_dir=str(out_dir))
        wanted = name.casefold()
        existing = sorted(entry.name for entry in os.scandir(out_dir) if entry.name.casefold() == wanted)
    except OSError as error:
        raise _write_error(final, error) from error
    if name in existing:
        raise ReleaseExistsError.of("msg.release.folder_exists", folder=str(final))
    if existing:
        raise ReleaseExistsError.of("msg.release.folder_exists_case", folder=str(out_dir / existing[0]), name=name)
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
    return "'" + cell if cell[:1] in _FORMULA_FIRST else cell


# ---------------------------------------------------------------------------------- records


def ordered_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """One gold record with its keys (and its labels' and adjudication's keys) in the fixed order.

    record: a mapping with exactly the keys of RECORD_KEYS; `labels` a list of mappings with the
        keys of LABEL_KEYS; `adjudication` a mapping with the keys of ADJUDICATION_KEYS or None;
        `case_metadata` a mapping (None is taken as {}).
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
    out["case_metadata"] = dict(record["case_metadata"] or {})
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
        and record["case_metadata"].__class__ is dict
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


def metadata_text(metadata: Mapping[str, Any] | None) -> str:
    """A case's metadata as the one-line JSON text that gold.csv and gold.parquet hold: keys sorted
    (at every depth), raw UTF-8, `{}` for none. Raises ValueError on NaN or infinity."""
    return json.dumps(metadata or {}, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def csv_header(n_labels: int) -> list[str]:
    """The columns of `gold.csv` with `n_labels` label column groups (`labeler_1`, `label_1`,
    `rationale_1`, `passage_ids_1`, `severity_1`, ...), then the adjudication's, then
    `case_metadata` (last, so that the columns before it are where they were in schema 1)."""
    labels = [f"{key}_{i}" for i in range(1, n_labels + 1) for key in LABEL_KEYS]
    adjudication = ["adjudicator", "adjudication_label", "adjudication_rationale", "adjudication_severity"]
    return list(_FLAT_KEYS) + labels + adjudication + ["case_metadata"]


def csv_row(record: Mapping[str, Any], n_labels: int, case_metadata: str | None = None) -> list[str]:
    """One record flattened into the cells of `csv_header(n_labels)`: lists joined with `;`,
    None as an empty cell, case_metadata as `metadata_text` (or the text given, already computed),
    every cell made spreadsheet-safe."""
    cells = [record[key] for key in _FLAT_KEYS]
    labels = record["labels"]
    for i in range(n_labels):
        cells += [labels[i][key] for key in LABEL_KEYS] if i < len(labels) else _NO_LABEL
    adjudication = record["adjudication"]
    cells += _NO_ADJUDICATION if adjudication is None else [adjudication[key] for key in ADJUDICATION_KEYS]
    cells.append(metadata_text(record["case_metadata"]) if case_metadata is None else case_metadata)
    texts = [cell if cell.__class__ is str else _cell_text(cell) for cell in cells]
    return ["'" + text if text[:1] in _FORMULA_FIRST else text for text in texts]  # spreadsheet_safe, inlined


def _metadata_texts(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """`metadata_text` of each record's case_metadata, computed once per metadata object (the
    records of one case share theirs: 100,000 claims of 25,000 cases cost 25,000 encodings)."""
    texts: dict[int, str] = {}
    out = []
    for record in records:
        metadata = record["case_metadata"]
        text = texts.get(id(metadata))
        if text is None:
            text = texts[id(metadata)] = metadata_text(metadata)
        out.append(text)
    return out


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ";".join(map(str, value))
    return str(value)


def excel_cell(cell: str) -> str:
    """A `gold.csv` cell as `gold.excel.csv` writes it: cut to EXCEL_CELL_LIMIT characters, ending
    with EXCEL_CUT_MARK, when it is longer (Excel would split or cut it without saying so)."""
    if len(cell) <= EXCEL_CELL_LIMIT:
        return cell
    return cell[: EXCEL_CELL_LIMIT - len(EXCEL_CUT_MARK)] + EXCEL_CUT_MARK


def _csv_rows(records: Sequence[Mapping[str, Any]], excel: bool) -> tuple[list[str], Iterator[list[str]]]:
    n_labels = max([MIN_LABEL_COLUMNS, *(len(record["labels"]) for record in records)])
    rows = (csv_row(record, n_labels, text) for record, text in zip(records, _metadata_texts(records), strict=True))
    if excel:
        rows = ([excel_cell(cell) for cell in row] for row in rows)
    return csv_header(n_labels), rows


def _write_table(path: Path, header: list[str], rows: Iterable[list[str]]) -> None:
    with open(path, "w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(header)
        writer.writerows(rows)
        _sync(out)


def write_csv(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """`gold.csv`: UTF-8 with a BOM, `\\r\\n` line ends, one spreadsheet-safe row per claim (see
    `csv_row`). Its format is part of the contract (docs/design.md, "File formats"): it does not change."""
    _write_table(path, *_csv_rows(records, excel=False))


def write_excel_csv(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """`gold.excel.csv` (`release create --excel`): the rows of gold.csv, in the same encoding
    (UTF-8 with a BOM, `\\r\\n`, spreadsheet-safe), with every cell longer than Excel's limit cut
    (`excel_cell`). The file to open in Excel; scripts read gold.csv, gold.jsonl or gold.parquet."""
    _write_table(path, *_csv_rows(records, excel=True))


def write_parquet(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """`gold.parquet`: PARQUET_SCHEMA, pinned writer options (zstd level 3, format 2.6)."""
    columns = {key: [record[key] for record in records] for key in RECORD_KEYS if key != "case_metadata"}
    columns["case_metadata"] = _metadata_texts(records)
    table = pa.Table.from_pydict(columns, schema=PARQUET_SCHEMA)
    pq.write_table(table, path, **_PARQUET_OPTIONS)
    with open(path, "rb") as written:
        os.fsync(written.fileno())


CASE_KEYS: tuple[str, ...] = ("case_id", "question", "answer", "slice", "split", "metadata", "passages", "claims")
PASSAGE_KEYS: tuple[str, ...] = ("passage_id", "doc_id", "version", "title", "text")
CLAIM_KEYS: tuple[str, ...] = ("claim_id", "text", "passage_ids")
"""The keys of one line of `cases.jsonl`, its passages and its claims: the native import format
(docs/design.md, "File formats"), in that order."""


def write_cases(path: Path, cases: Iterable[Mapping[str, Any]]) -> None:
    """`cases.jsonl`: one case a line in the native import format (CASE_KEYS, PASSAGE_KEYS,
    CLAIM_KEYS, in that order), UTF-8 without escapes, `\\n` line ends; `annotator import` reads it.

    cases: mappings with the keys of CASE_KEYS, in the order to write (the service gives the
        released claims' cases, each with exactly its released claims and their passages).
    Raises ValueError when a key is missing or unknown.
    """
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for case in cases:
            _check_keys(case, frozenset(CASE_KEYS), "case")
            line = {key: case[key] for key in CASE_KEYS}
            line["metadata"] = dict(case["metadata"] or {})
            line["passages"] = [{key: passage[key] for key in PASSAGE_KEYS} for passage in case["passages"]]
            line["claims"] = [{key: (list(claim[key]) if key == "passage_ids" else claim[key]) for key in CLAIM_KEYS}
                              for claim in case["claims"]]
            out.write(_JSON_LINE.encode(line) + "\n")
        _sync(out)


def read_released_cases(folder: str | os.PathLike[str], datasets: Sequence[str], case_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The lines of a release's `cases.jsonl` (see `write_cases`), each with its `dataset` added.

    folder: a verified release folder. datasets, case_ids: gold.parquet's `dataset` and `case_id`
        columns, in release order: `cases.jsonl` holds one line for each run of consecutive claims
        of one case, in that order, which is how a line finds its dataset (the line does not name it).
    Returns [] for a release of schema 1 (no cases.jsonl).
    Raises ReleaseVerifyError (msg.verify.cases_mismatch) when the lines do not follow the claims.
    """
    return [{**line, "dataset": dataset} for dataset, line in _case_lines(folder, datasets, case_ids, json.loads)]


class _ReleasedPassage(msgspec.Struct):
    """What `read_released_passages` decodes of a passage of a cases.jsonl line (the rest, its
    title and text, is skipped unread)."""

    passage_id: str
    doc_id: str | None = None
    version: str | None = None


class _PassagesLine(msgspec.Struct):
    """What `read_released_passages` decodes of a cases.jsonl line."""

    case_id: str | None = None
    passages: list[_ReleasedPassage] | None = None


_PASSAGES_LINE = msgspec.json.Decoder(_PassagesLine)


def read_released_passages(folder: str | os.PathLike[str], datasets: Sequence[str],
                           case_ids: Sequence[str]) -> dict[tuple[str, str], tuple[str, str]] | None:
    """(dataset, passage_id) -> (doc_id, version) of every passage of a release's `cases.jsonl`
    ("" for a missing one), read without the passages' texts: what scoring a run needs of it.

    Arguments as `read_released_cases`, whose pairing of lines with datasets this shares.
    Returns None for a release of schema 1 (no cases.jsonl).
    Raises ReleaseVerifyError (msg.verify.cases_mismatch) when the lines do not follow the claims,
    msg.verify.line_unreadable when a line is not the JSON object `write_cases` writes.
    """
    if not release_layout(folder).cases.is_file():
        return None
    return {(dataset, passage.passage_id): (passage.doc_id or "", passage.version or "")
            for dataset, line in _case_lines(folder, datasets, case_ids, _PASSAGES_LINE.decode)
            for passage in line.passages or ()}


def _case_lines(folder: str | os.PathLike[str], datasets: Sequence[str], case_ids: Sequence[str],
                decode: Callable[[str], Any]) -> Iterator[tuple[str, Any]]:
    """(dataset, decoded line) for each line of the release's cases.jsonl, `decode` giving a
    mapping or an object with a `case_id`, checked to follow the claims (see read_released_cases);
    nothing when the release has no cases.jsonl."""
    path = release_layout(folder).cases
    if not path.is_file():
        return
    keys = [key for i, key in enumerate(zip(datasets, case_ids)) if i == 0 or key != (datasets[i - 1], case_ids[i - 1])]
    number = 0
    with open(path, encoding="utf-8") as source:
        for number, text in enumerate(source, start=1):
            try:
                line = decode(text)
            except (ValueError, msgspec.DecodeError) as error:  # msgspec's ValidationError is a DecodeError
                raise ReleaseVerifyError.of("msg.verify.line_unreadable", name=path.name, line=number, error=str(error)) from None
            case_id = line.get("case_id") if isinstance(line, dict) else getattr(line, "case_id", None)
            if number > len(keys) or case_id != keys[number - 1][1]:
                raise ReleaseVerifyError.of("msg.verify.cases_mismatch", name=path.name, line=number)
            yield keys[number - 1][0], line
    if number != len(keys):
        raise ReleaseVerifyError.of("msg.verify.cases_mismatch", name=path.name, line=number + 1)


# ---------------------------------------------------------------------------- the folder


def write_release(
    out_dir: str | os.PathLike[str],
    name: str,
    records: Iterable[Mapping[str, Any]],
    manifest_fields: Mapping[str, Any],
    *,
    cases: Iterable[Mapping[str, Any]] = (),
    excel: bool = False,
) -> Path:
    """Write the release folder `out_dir/name/` and return its path: `stage_release`, then
    `StagedRelease.finish` (on any failure nothing is left: no folder, no staging folder).

    See `stage_release` for the arguments and what is raised. The service stages, commits its rows
    and only then finishes, so that no folder appears for a release the database does not hold.
    """
    staged = stage_release(out_dir, name, records, manifest_fields, cases=cases, excel=excel)
    return staged.finish(undo_on_failure=True)


def stage_release(
    out_dir: str | os.PathLike[str],
    name: str,
    records: Iterable[Mapping[str, Any]],
    manifest_fields: Mapping[str, Any],
    *,
    cases: Iterable[Mapping[str, Any]] = (),
    excel: bool = False,
) -> StagedRelease:
    """Write every file of release `name` into a new staging folder `out_dir/.name.tmp-XXXXXXXX`,
    fsynced, with modes FOLDER_MODE/FILE_MODE, and return it, locked, to be finished (renamed
    into place) or discarded.

    records: one mapping per claim with the keys of RECORD_KEYS (see `ordered_record`), already
        sorted by the caller (dataset, case position, claim position); the order is kept.
    manifest_fields: JSON-ready fields for `manifest.json` (created_at, creator, scope, excluded,
        agreement, ...). This function adds `name`, `counts`, `files`, `schema_version` and
        `software_version`; a field of those names in manifest_fields raises ValueError.
    cases: the lines of `cases.jsonl` (see `write_cases`); none gives an empty file.
    excel: also write `gold.excel.csv` (see `write_excel_csv`).
    On any failure the staging folder is removed. `out_dir` is created when missing (and left,
    empty, when writing then fails).
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
        make_private_folders(out_dir)
        temp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=out_dir))
    except OSError as error:
        raise _write_error(final, error) from error
    lock = None
    try:
        lock = _lock(temp, wait=True)
        _write_contents(temp, name, ordered, manifest_fields, cases, excel)
        manifest_sha256 = sha256_file(release_layout(temp).manifest)
    except BaseException as error:
        shutil.rmtree(temp, ignore_errors=True)
        _unlock(lock)
        if isinstance(error, OSError):
            raise _write_error(final, error) from error
        raise
    return StagedRelease(temp, final, manifest_sha256, lock)


class StagedRelease:
    """A release written completely under its staging name, not yet renamed into place; its
    writer holds a lock on it (released by `finish`, `discard`, or the end of the process)."""

    def __init__(self, temp: Path, final: Path, manifest_sha256: str, lock: int | None):
        self.temp, self.final, self.manifest_sha256 = temp, final, manifest_sha256
        self._lock = lock

    def finish(self, *, undo_on_failure: bool) -> Path:
        """Rename the staging folder to its final name, sync the parent folder, unlock; return
        the final path.

        undo_on_failure: on a failure, remove what was written (the staging folder, or the
            renamed folder when only the sync failed); without it (the database already holds the
            release) the folder is left where it is, for `finish_staged` to complete later.
        Raises ReleaseExistsError when the final name was taken meanwhile; ReleaseWriteError.
        """
        try:
            try:
                _rename_into_place(self.temp, self.final)
            except BaseException as error:
                if undo_on_failure:
                    shutil.rmtree(self.temp, ignore_errors=True)
                if isinstance(error, OSError):
                    raise _write_error(self.final, error) from error
                raise
            try:
                sync_folder(self.final.parent)
            except OSError as error:  # the rename may not be durable
                if undo_on_failure:  # take the release back out
                    shutil.rmtree(self.final, ignore_errors=True)
                raise _write_error(self.final, error) from error
        finally:
            self._lock = _unlock(self._lock)
        return self.final

    def discard(self) -> None:
        """Remove the staging folder and unlock (nothing of the release is left)."""
        shutil.rmtree(self.temp, ignore_errors=True)
        self._lock = _unlock(self._lock)


def _write_contents(folder: Path, name: str, records: list[dict[str, Any]], fields: Mapping[str, Any],
                    cases: Iterable[Mapping[str, Any]], excel: bool) -> None:
    layout = release_layout(folder)
    write_jsonl(layout.jsonl, records)
    kill_point("writing")
    write_csv(layout.csv, records)
    write_parquet(layout.parquet, records)
    write_cases(layout.cases, cases)
    if excel:
        write_excel_csv(layout.excel, records)
    manifest = {
        **fields,
        "name": name,
        "counts": count_records(records),
        "files": {file_name: file_entry(path) for file_name, path in layout.data_files.items() if path.exists()},
        "schema_version": SCHEMA_VERSION,
        "software_version": annotator.__version__,
    }
    with open(layout.manifest, "w", encoding="utf-8", newline="\n") as out:
        out.write(manifest_text(manifest))
        _sync(out)
    for path in layout.present_files().values():
        os.chmod(path, private_mode(FILE_MODE))
    os.chmod(folder, private_mode(FOLDER_MODE))
    sync_folder(folder)


def _rename_into_place(temp: Path, final: Path) -> None:
    check_release_target(final.parent, final.name)
    try:
        os.rename(temp, final)
    except OSError as error:  # another writer took the name between the check and the rename
        if final.exists():
            raise ReleaseExistsError(f"release folder {final} exists already; choose a new name") from error
        raise


def kill_point(step: str) -> None:
    """Crash-safety tests only: kill this process with SIGKILL when the environment variable
    ANNOTATOR_TEST_KILL_AT names `step` ("writing": gold.jsonl written; "staged": every file staged,
    nothing committed; "committed": the database holds the release, the folder is not renamed)."""
    if os.environ.get(KILL_AT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


# ----------------------------------------------------------------- staging folders, recovery


@dataclass(frozen=True)
class StagingFolder:
    """A staging folder found in an output folder: the release name it was for, and its path."""

    name: str
    path: Path


def staging_name(folder: str | os.PathLike[str]) -> str | None:
    """The release name a staging folder `.NAME.tmp-XXXXXXXX` was written for; None for any other
    folder name."""
    match = _STAGING.fullmatch(Path(folder).name)
    return match["name"] if match else None


def staging_folders(out_dir: str | os.PathLike[str], name: str | None = None) -> list[StagingFolder]:
    """The staging folders in `out_dir` (of release `name` only, when given), by folder name; []
    when out_dir is missing or cannot be listed."""
    try:
        entries = sorted(os.scandir(out_dir), key=lambda entry: entry.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        staged_for = staging_name(entry.name)
        if staged_for is not None and (name is None or staged_for == name) and entry.is_dir(follow_symlinks=False):
            found.append(StagingFolder(staged_for, Path(entry.path)))
    return found


@contextmanager
def claimed(staging: StagingFolder) -> Iterator[bool]:
    """Lock a staging folder for a cleanup: yields True when no running writer holds it (its
    `release create` was stopped), False when one does (leave it alone)."""
    try:
        lock = _lock(staging.path, wait=False)
    except OSError:  # gone meanwhile, or cannot be opened
        yield False
        return
    try:
        yield lock is not None or fcntl is None
    finally:
        _unlock(lock)


def finish_staged(staging: StagingFolder, expected_manifest_sha256: str) -> Path | None:
    """Complete a release whose `release create` was stopped after the database recorded it and
    before its folder was renamed into place: when the staging folder is complete (verifies
    against its manifest) and its manifest's SHA-256 is the recorded one, and the final name is
    free, rename it into place and return the final path; else None (nothing is changed).
    Call it on a folder `claimed` returned True for. Raises ReleaseWriteError when the rename fails."""
    final = staging.path.parent / staging.name
    if final.exists() or not _verify(staging.path, expected_manifest_sha256).ok:
        return None
    try:
        os.rename(staging.path, final)
        sync_folder(final.parent)
    except OSError as error:
        raise ReleaseWriteError(f"cannot finish the release folder {final} from {staging.path.name}: "
                                f"{error.strerror or error}") from error
    return final


def _lock(folder: Path, *, wait: bool) -> int | None:
    """An exclusive lock on `folder` (a descriptor to pass to `_unlock`); None when another
    process holds it and `wait` is False, or when the platform has no flock."""
    if fcntl is None:  # pragma: no cover - Windows: no lock, no concurrent cleanup protection
        return None
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(descriptor)
        return None
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _unlock(descriptor: int | None) -> None:
    if descriptor is not None:
        os.close(descriptor)  # closing the descriptor releases the flock


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
        manifest = loads_unique(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseVerifyError.of("msg.verify.missing_in", name=path.name, folder=str(Path(folder))) from None
    except (OSError, ValueError) as error:  # UnicodeDecodeError, JSONDecodeError, DuplicateKeyError
        raise ReleaseVerifyError.of("msg.verify.unreadable", name=path.name, error=str(error)) from None
    if not isinstance(manifest, dict):
        raise ReleaseVerifyError.of("msg.verify.not_object", name=path.name)
    return manifest


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of verifying a release folder against its manifest."""

    ok: bool
    problems: tuple[str, ...]  # one line each, starting with the file name (English: see `problem_message`)
    files: tuple[str, ...]  # the files checked: names whose SHA-256 was recomputed
    manifest_sha256: str | None = None  # SHA-256 of manifest.json as found; None when it is missing
    notes: tuple[str, ...] = ()  # what was done on the way, e.g. a stopped release finished


def verify_release(folder: str | os.PathLike[str], expected_manifest_sha256: str | None = None) -> VerifyResult:
    """Recompute the SHA-256 and size of every file `manifest.json` lists and compare.

    expected_manifest_sha256: the SHA-256 of `manifest.json` recorded when the release was created
        (GoldRelease.manifest_sha256; hex, any case). The manifest cannot vouch for itself: without
        this, an edit of the manifest that leaves the `files` entries alone (its counts, say) is
        not detected.
    Problems (each names the file): a missing folder or manifest, a manifest whose SHA-256 differs
    from expected_manifest_sha256 (when given), an unreadable manifest or one without a `files`
    object, a listed file that is missing or changed, a gold file (`required_files`) that the
    manifest does not list, a listed name that is not a plain file name, and any file or folder
    in the release that is not listed; a symbolic link anywhere in the folder (nothing is then
    read); a staging folder `.NAME.tmp-XXXXXXXX` is refused whole
    (it is a release only once renamed into place). Returns a VerifyResult (with the manifest's
    own SHA-256); never raises for a bad release (see `check_release`).
    """
    folder = Path(folder)
    if staging_name(folder) is not None and folder.is_dir():
        return VerifyResult(False, (english("msg.verify.staging", folder=folder.name),), ())
    return _verify(folder, expected_manifest_sha256)


def problem_message(problem: str) -> Message | str:
    """A verify problem (VerifyResult.problems: English text) as its message (msg.verify.*, found
    again by messages.recognize), for the app to write in the user's language; the text as it is
    when it is none of them."""
    return recognize(problem, "msg.verify.") or problem


def _verify(folder: Path, expected_manifest_sha256: str | None) -> VerifyResult:
    """`verify_release` without the refusal of staging folders."""
    if not folder.is_dir():
        return VerifyResult(False, (english("msg.verify.not_a_folder", folder=str(folder)),), ())
    links = _symlinks(folder)
    if links:  # nothing is read through a link: it may point out of the release
        return VerifyResult(False, tuple(english("msg.verify.symlink", name=name) for name in links), ())
    manifest_path = release_layout(folder).manifest
    manifest_sha256 = _hash_if_readable(manifest_path)
    problems: list[str] = []
    if expected_manifest_sha256 is not None and manifest_sha256 is not None:
        if manifest_sha256 != expected_manifest_sha256.strip().lower():
            problems.append(english("msg.verify.manifest_changed", name=manifest_path.name, actual=manifest_sha256,
                                    expected=expected_manifest_sha256))
    try:
        listed = _listed_files(read_manifest(folder))
    except ReleaseVerifyError as error:
        return VerifyResult(False, (*problems, str(error)), (), manifest_sha256)
    checked: list[str] = []
    for file_name, entry in listed.items():
        if Path(file_name).name != file_name or file_name in (".", "..", release_layout(folder).manifest.name):
            problems.append(english("msg.verify.not_plain_name", name=file_name))
        elif not (folder / file_name).is_file():
            problems.append(english("msg.verify.missing", name=file_name))
        else:
            checked.append(file_name)
            problems += _compare(folder / file_name, entry)
    problems += _unlisted_problems(folder, listed)
    return VerifyResult(not problems, tuple(problems), tuple(checked), manifest_sha256)


def _symlinks(folder: Path) -> list[str]:
    """The symbolic links anywhere in `folder` (files and folders, links not followed), as paths
    relative to it, sorted. A release holds only plain files."""
    found = []
    for root, folders, files in os.walk(folder):  # os.walk does not descend into linked folders
        for name in (*folders, *files):
            if os.path.islink(os.path.join(root, name)):
                found.append(Path(os.path.relpath(os.path.join(root, name), folder)).as_posix())
    return sorted(found)


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
        raise ReleaseVerifyError.of("msg.release.verify_mismatch", folder=str(Path(folder)),
                                    problems=Joined(tuple(problem_message(p) for p in result.problems), "; "))
    return result


def _listed_files(manifest: dict[str, Any]) -> dict[str, Any]:
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise ReleaseVerifyError.of("msg.verify.no_files", name="manifest.json")
    return dict(sorted(files.items()))


def _compare(path: Path, entry: Any) -> list[str]:
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        return [english("msg.verify.no_sha256", name=path.name)]
    actual = file_entry(path)
    if actual["sha256"] != entry["sha256"].lower():
        return [english("msg.verify.changed_sha256", name=path.name, actual=actual["sha256"], expected=entry["sha256"])]
    if "bytes" in entry and actual["bytes"] != entry["bytes"]:
        return [english("msg.verify.changed_bytes", name=path.name, actual=actual["bytes"], expected=entry["bytes"])]
    return []


def _unlisted_problems(folder: Path, listed: Mapping[str, Any]) -> list[str]:
    layout = release_layout(folder)
    problems = [english("msg.verify.not_listed", name=name) for name in layout.required_files if name not in listed]
    expected = set(listed) | set(layout.data_files) | {layout.manifest.name}
    for entry in sorted(folder.iterdir()):
        if entry.name not in expected:
            key = "msg.verify.unexpected_folder" if entry.is_dir() else "msg.verify.unexpected_file"
            problems.append(english(key, name=entry.name))
    return problems


# ------------------------------------------------------------------------------------ diff


@dataclass(frozen=True)
class GoldChange:
    """One claim that differs between two releases: its gold label in the older one (`before`,
    None when added) and in the newer one (`after`, None when removed); in
    `ReleaseDiff.resolution_changed`, its resolution (agreed, adjudicated) in each."""

    dataset: str
    case_id: str
    claim_id: str
    before: str | None
    after: str | None

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "case_id": self.case_id, "claim_id": self.claim_id,
                "from": self.before, "to": self.after}


@dataclass(frozen=True)
class ContentChange:
    """A claim in both releases whose content changed: its text (`claim`), the passages it is shown
    with (`passage_ids`: the list, order included), and the passages in both whose text changed
    (`passage_text`, their ids in the newer release's order; read from cases.jsonl, so empty when
    a release has none)."""

    dataset: str
    case_id: str
    claim_id: str
    claim: bool
    passage_ids: bool
    passage_text: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "case_id": self.case_id, "claim_id": self.claim_id,
                "claim_changed": self.claim, "passage_ids_changed": self.passage_ids,
                "passage_text_changed": list(self.passage_text)}


@dataclass(frozen=True)
class ReleaseDiff:
    """What changed from one release (`old`) to another (`new`), claim by claim. A claim in both
    can be in several of `changed`, `text_or_passages_changed` and `resolution_changed`."""

    added: tuple[GoldChange, ...]  # in new only, in new's order
    removed: tuple[GoldChange, ...]  # in old only, in old's order
    changed: tuple[GoldChange, ...]  # in both with another gold label, in new's order
    unchanged: int  # in both with the same gold label (whatever else changed: see below)
    text_or_passages_changed: tuple[ContentChange, ...] = ()  # in both with another text or passages, new's order
    resolution_changed: tuple[GoldChange, ...] = ()  # in both, from/to: the resolution (agreed, adjudicated)
    nothing_changed: int = 0  # in both with the same gold label, resolution, text and passages

    def counts(self) -> dict[str, int]:
        """{"added", "removed", "changed", "unchanged"}: numbers of claims (as ever: `unchanged`
        counts the claims in both with the same gold label; see `change_counts`)."""
        return {"added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
                "unchanged": self.unchanged}

    def change_counts(self) -> dict[str, int]:
        """{"text_or_passages_changed", "resolution_changed", "nothing_changed"}: numbers of claims
        in both releases whose text or passages changed, whose resolution changed, and with the same
        gold label, resolution, text and passages."""
        return {"text_or_passages_changed": len(self.text_or_passages_changed),
                "resolution_changed": len(self.resolution_changed), "nothing_changed": self.nothing_changed}

    def changes_by_label(self) -> list[dict[str, Any]]:
        """[{"from", "to", "claims"}] for the gold-label changes, most frequent first (then by labels)."""
        counter = Counter((change.before, change.after) for change in self.changed)
        return [{"from": before, "to": after, "claims": n}
                for (before, after), n in sorted(counter.items(), key=lambda item: (-item[1], item[0]))]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data: counts, changes_by_label, the added, removed and changed claims (as
        ever), then change_counts and the text_or_passages_changed and resolution_changed claims."""
        return {
            "counts": self.counts(),
            "changes_by_label": self.changes_by_label(),
            "added": [change.to_json() for change in self.added],
            "removed": [change.to_json() for change in self.removed],
            "changed": [change.to_json() for change in self.changed],
            "change_counts": self.change_counts(),
            "text_or_passages_changed": [change.to_json() for change in self.text_or_passages_changed],
            "resolution_changed": [change.to_json() for change in self.resolution_changed],
        }


PassageTexts = dict[tuple[str, str], dict[str, str]]
"""(dataset, claim_id) -> {passage_id: text} of the passages each released claim is shown with."""


def diff_releases(old: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]], *,
                  old_passages: PassageTexts | None = None, new_passages: PassageTexts | None = None) -> ReleaseDiff:
    """Compare two releases' gold records claim by claim, a claim being (dataset, claim_id).

    old, new: gold records (as in gold.jsonl) with at least dataset, case_id, claim_id and
        gold_label, each claim once; claim (the text), passage_ids and resolution are compared
        when given (a key missing on both sides is the same).
    old_passages, new_passages: the passages' texts (`read_passage_texts`); a passage's text is
        compared only when both are given.
    Returns the claims added (in new only), removed (in old only), whose gold label changed, whose
    text or passages changed, and whose resolution changed, and how many are in both with the same
    gold label (`unchanged`) and with nothing of these changed (`nothing_changed`).
    Raises ValueError when a claim appears twice in one side.
    """
    old_by_key = _by_claim(old, "old")
    new_by_key = _by_claim(new, "new")
    added, changed, unchanged, contents, resolutions, nothing = [], [], 0, [], [], 0
    for key, record in new_by_key.items():
        before = old_by_key.get(key)
        if before is None:
            added.append(_change(record, None, record["gold_label"]))
            continue
        if before["gold_label"] != record["gold_label"]:
            changed.append(_change(record, before["gold_label"], record["gold_label"]))
        else:
            unchanged += 1
        content = _content_change(key, before, record, old_passages, new_passages)
        if content is not None:
            contents.append(content)
        resolution = before.get("resolution") != record.get("resolution")
        if resolution:
            resolutions.append(_change(record, before.get("resolution"), record.get("resolution")))
        if before["gold_label"] == record["gold_label"] and content is None and not resolution:
            nothing += 1
    removed = [_change(record, record["gold_label"], None) for key, record in old_by_key.items() if key not in new_by_key]
    return ReleaseDiff(tuple(added), tuple(removed), tuple(changed), unchanged, tuple(contents), tuple(resolutions), nothing)


def _content_change(key: tuple[str, str], before: Mapping[str, Any], after: Mapping[str, Any],
                    old_passages: PassageTexts | None, new_passages: PassageTexts | None) -> ContentChange | None:
    """What changed of a claim's text and passages between two releases, None when nothing."""
    ids_before, ids_after = list(before.get("passage_ids") or []), list(after.get("passage_ids") or [])
    texts: tuple[str, ...] = ()
    if old_passages is not None and new_passages is not None:
        was, now = old_passages.get(key, {}), new_passages.get(key, {})
        texts = tuple(pid for pid in ids_after if pid in was and pid in now and was[pid] != now[pid])
    claim, ids = before.get("claim") != after.get("claim"), ids_before != ids_after
    if not (claim or ids or texts):
        return None
    return ContentChange(after["dataset"], after["case_id"], after["claim_id"], claim, ids, texts)


def _by_claim(records: Iterable[Mapping[str, Any]], side: str) -> dict[tuple[str, str], Mapping[str, Any]]:
    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for record in records:
        key = (record["dataset"], record["claim_id"])
        if key in by_key:
            raise ValueError(f"claim {key[1]!r} of dataset {key[0]!r} appears twice in the {side} release")
        by_key[key] = record
    return by_key


def _change(record: Mapping[str, Any], before: str | None, after: str | None) -> GoldChange:
    return GoldChange(record["dataset"], record["case_id"], record["claim_id"], before, after)


def read_passage_texts(folder: str | os.PathLike[str], records: Sequence[Mapping[str, Any]]) -> PassageTexts | None:
    """The texts of the passages each released claim is shown with, from the release's cases.jsonl:
    (dataset, claim_id) -> {passage_id: text}; None for a release without cases.jsonl (made before
    it existed). `records`: the release's gold records (`read_gold`), which name each claim's
    dataset: cases.jsonl holds the same claims in the same order, without it (verify the folder first).
    Raises ReleaseVerifyError naming cases.jsonl and the line when a line is unreadable or its
    claims are not those of gold.jsonl, in order."""
    path = release_layout(folder).cases
    if not path.is_file():
        return None
    texts: PassageTexts = {}
    claims, number = iter(records), 0
    try:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                case = loads_unique(line)
                passages = {passage["passage_id"]: passage["text"] for passage in case["passages"]}
                for claim in case["claims"]:
                    record = next(claims, None)
                    if record is None or (record["case_id"], record["claim_id"]) != (case["case_id"], claim["claim_id"]):
                        raise ValueError(f"claim {claim['claim_id']!r} of case {case['case_id']!r} is not the next "
                                         "claim of gold.jsonl")
                    texts[record["dataset"], record["claim_id"]] = {pid: passages[pid] for pid in claim["passage_ids"]}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise ReleaseVerifyError.of("msg.verify.line_unreadable", name=path.name, line=number, error=str(error)) from None
    if next(claims, None) is not None:
        raise ReleaseVerifyError.of("msg.verify.fewer_claims", name=path.name)
    return texts


def read_gold(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The gold records of a release folder, from its gold.jsonl (verify the folder first).
    Raises ReleaseVerifyError when gold.jsonl is missing or a line is not a JSON object, naming it."""
    path = release_layout(folder).jsonl
    records, number = [], 0
    try:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                record = loads_unique(line)
                if not isinstance(record, dict):
                    raise ValueError("not a JSON object")
                records.append(record)
    except FileNotFoundError:
        raise ReleaseVerifyError.of("msg.verify.missing_in", name=path.name, folder=str(Path(folder))) from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ReleaseVerifyError.of("msg.verify.line_unreadable", name=path.name, line=number, error=str(error)) from None
    return records

