"""Label tables: the long table of ratings `annotator agreement --labels FILE` reads, CSV (UTF-8,
BOM allowed, or CP932) or JSONL with the columns item_id, rater, label (agreement.py computes on
it). Read over the readers' shared layer: CSV bytes decoded and quotes never closed found as for
every CSV (csv_text), JSON objects refusing a repeated key (jsonl.loads_unique), text in NFC.
Its refusals are its own (English, as `annotator agreement` prints them): ImportFileError and
ImportRowError naming the file, `line N` and the field.

A plain CSV (no quotes, no blank lines) that passes every check is parsed by pandas' pyarrow
engine (benchmarks/agreement.py measures it); anything else is read line by line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from annotator.errors import ImportFileError, ImportRowError
from annotator.formats.csv_text import check_quotes_closed, decode_csv_bytes
from annotator.formats.jsonl import MAX_NESTING, DuplicateKeyError, loads_unique
from annotator.messages import msg
from annotator.formats.reading import nfc
from annotator.text import MAX_TEXT_CHARS
from annotator.vocabulary import LABELS

if TYPE_CHECKING:  # pandas is imported when a file is read, not with agreement.py
    import pandas as pd

COLUMNS: tuple[str, ...] = ("item_id", "rater", "label")
"""The columns of a label table (CSV header or JSONL keys)."""


def read_label_table(path: str | Path, categories: Sequence[str] = LABELS) -> list[tuple[str, str, str, int]]:
    """Read a label table: CSV (UTF-8, BOM allowed) or JSONL with item_id, rater, label.

    path: a .csv file whose header names the columns item_id, rater, label (exactly those
        names, any order, other columns ignored), or a .jsonl/.ndjson file with one object
        per line holding those keys (item_id and rater: text or integer; label: text).
        Values are stripped of surrounding blanks; blank lines are skipped.
    categories: the declared categories; any other label is an error.
    Returns one (item_id, rater, label, line) tuple per rating, in file order, `line` being
        the 1-based line where the record starts: ready for compute_agreement. A repeated
        line (same item, rater and label) is kept once.
    Raises ImportFileError (missing file, unknown extension, empty file) and ImportRowError
        naming the file, `line N`, the field and what to do (bad header, empty value, wrong
        number of fields, invalid JSON, wrong type, unknown label, the same item and rater
        with two different labels: both lines named).
    For large files prefer read_label_frame: the same rows as a DataFrame, without building
    Python tuples.
    """
    frame = read_label_frame(path, categories)
    return list(zip(*(frame[c].tolist() for c in (*COLUMNS, "line"))))


def read_label_frame(path: str | Path, categories: Sequence[str] = LABELS, keep: Sequence[str] = ()) -> pd.DataFrame:
    """read_label_table's rows as a DataFrame (columns item_id, rater, label, line) that
    compute_agreement takes as it is; same input, checks and errors.

    keep: more columns to read as text (e.g. "slice" for compute_agreement(by="slice")); each
        must be in the file (ImportRowError naming the column otherwise); values may be empty.

    A plain CSV (no quotes, no blank lines) that passes every check is parsed by pandas'
    pyarrow engine; anything else, or any problem, is read line by line with the csv module,
    which names the first bad line.
    """
    import pandas as pd

    path, cats, keep = Path(path), tuple(categories), tuple(keep)
    if path.is_dir():
        raise ImportFileError(f"{path} is a folder, not a file: give a .csv or .jsonl file with columns item_id, rater, label")
    if not path.exists():
        raise ImportFileError(f"{path}: file not found")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise ImportFileError(f"{path}: unknown label table format {suffix!r}. "
                              "Give a .csv or .jsonl file with columns item_id, rater, label")
    data = _read_bytes(path)
    frame = _plain_csv_frame(path, data, cats, keep) if suffix == ".csv" else None
    if frame is None:
        if suffix == ".csv":
            rows = _csv_rows(path, decode_csv_bytes(path, data)[0], cats, keep)
        else:
            rows = _jsonl_rows(path, _decode(path, data), cats, keep)
        frame = pd.DataFrame(_drop_repeats(path, rows), columns=[*COLUMNS, "line", *keep])
    if frame.empty:
        raise ImportFileError(f"{path}: the file holds no ratings. Give one line per rating with item_id, rater, label")
    for column in keep:
        _check_one_group(path, frame, column)
    return frame


def _check_one_group(path: Path, frame: pd.DataFrame, column: str) -> None:
    """ImportRowError at the first line giving an item another `column` value than before."""
    first = frame.groupby("item_id", sort=False)[column].transform("first")
    clash = np.flatnonzero((frame[column] != first).to_numpy())
    if clash.size:
        row = frame.iloc[int(clash[0])]
        earlier = frame[(frame["item_id"] == row["item_id"])].iloc[0]
        raise ImportRowError(str(path), int(row["line"]), column,
                             f"item {_short(row['item_id'])} has {column} {_short(row[column])} here but "
                             f"{_short(earlier[column])} on line {int(earlier['line'])}",
                             f"Give each item one {column}")


def _short(value: Any, limit: int = 60) -> str:
    """repr(value), cut to about `limit` characters for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 4] + "...'"


def _plain_csv_frame(path: Path, data: bytes, categories: tuple[str, ...], keep: tuple[str, ...]) -> pd.DataFrame | None:
    """The table of a plain, valid CSV parsed by pandas; None when the careful reader is needed.

    Plain: no quote character, no lone carriage return, no blank line, so each line is one
    record and line numbers are row numbers. Valid: UTF-8, at least one rating, every line
    has the header's number of fields, no value is empty, every label is declared, no
    (item, rater) pair repeats. Otherwise None: _csv_rows then reads the file and names the
    first problem.
    """
    import pandas as pd

    header = _plain_header(data)
    if header is None or _CONTROL_BYTE.search(data):
        return None
    index = _header_index(path, header, keep)
    raw = _arrow_text_columns(data, len(header))
    if raw is None:
        return None
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if len(raw) != n_lines - 1:  # pyarrow skipped blank lines: line numbers would shift
        return None
    blanks = _MAY_HOLD_BLANKS.search(data) is not None  # else no value has blanks to strip
    strip = (lambda column: column.str.strip().str.normalize("NFC")) if blanks else (lambda column: column)  # noqa: E731
    frame = pd.DataFrame({name: strip(raw[k]) for name, k in zip(COLUMNS, index)})
    frame["line"] = np.arange(2, len(frame) + 2)
    for name, k in zip(keep, index[len(COLUMNS):]):
        frame[name] = strip(raw[k])
    if (frame[list(COLUMNS)] == "").to_numpy().any() or not frame["label"].isin(categories).all():
        return None
    if blanks and any(frame[c].str.contains(_INVISIBLE).any() for c in COLUMNS):
        return None
    item, _ = pd.factorize(frame["item_id"])
    rater, raters = pd.factorize(frame["rater"])
    return None if pd.Index(item * len(raters) + rater).duplicated().any() else frame


def _arrow_text_columns(data: bytes, width: int) -> pd.DataFrame | None:
    """The records after the header as text columns 0..width-1, parsed by pyarrow with every
    column typed as text (so "001" stays "001"); None when pyarrow refuses the bytes."""
    import pandas as pd
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    names = [str(k) for k in range(width)]
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(data),
            read_options=pa_csv.ReadOptions(skip_rows=1, column_names=names),
            convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):  # a ragged row, invalid UTF-8, no rows
        return None
    return pd.DataFrame({k: table.column(n).to_numpy(zero_copy_only=False) for k, n in enumerate(names)})


def _plain_header(data: bytes) -> list[str] | None:
    """The stripped header names of unquoted CSV bytes; None if quoted, blank or odd."""
    if b'"' in data or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    try:
        first = data[:data.find(b"\n")].decode("utf-8").rstrip("\r") if b"\n" in data else ""
    except UnicodeDecodeError:
        return None
    names = [name.strip() for name in first.split(",")]
    return names if first.strip() and not re.search(_CONTROL, first) else None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes without a leading UTF-8 BOM; ImportFileError when it cannot be read."""
    try:
        return path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except FileNotFoundError:
        raise ImportFileError(f"{path}: file not found. Check the path") from None
    except OSError as exc:
        raise ImportFileError(f"{path}: cannot be read ({exc.strerror}). Check the path") from None


def _decode(path: Path, data: bytes) -> str:
    """`data` as UTF-8 text; ImportRowError naming the line of the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ImportRowError(str(path), line, None, "the text is not valid UTF-8",
                             "Save the file as UTF-8 (with or without BOM)") from None


def _csv_rows(path: Path, text: str, categories: tuple[str, ...], keep: tuple[str, ...] = ()) -> list[tuple]:
    """(item_id, rater, label, line, *keep) of each CSV record, checked for shape and empty values."""
    reader = csv.reader(io.StringIO(text, newline=""))
    first = next(reader, None)
    if first is None:
        raise ImportFileError(f"{path}: the file is empty. "
                              "Give a header line item_id,rater,label and one line per rating")
    if not any(name.strip() for name in first):
        raise ImportRowError(str(path), 1, None, "the first line is blank",
                             "Put the header item_id,rater,label on the first line")
    header = [name.strip() for name in first]
    if any(re.search(_CONTROL, name) for name in header):
        raise ImportRowError(str(path), 1, None, "the header holds control characters (NUL bytes?)",
                             "Save the file as UTF-8 (UTF-16 files are not read)")
    index = _header_index(path, header, keep)
    rows = []
    for line, fields in _records(path, text, reader, header):
        if not fields:
            continue
        if len(fields) != len(header) or any("\n" in f or "\r" in f for f in fields):
            check_quotes_closed(str(path), text, line, header)  # a stray quote may swallow later lines
        if len(fields) != len(header):
            raise ImportRowError(str(path), line, None,
                                 f"{len(fields)} fields where the header has {len(header)}",
                                 "Give every line the header's columns (quote values with commas)")
        _check_lengths(path, line, fields, header)
        values = [nfc(fields[k].strip()) for k in index]
        _check_values(path, line, values, categories)
        rows.append((values[0], values[1], values[2], line, *values[3:]))
    return rows


def _check_lengths(path: Path, line: int, fields: list[str], header: list[str]) -> None:
    """ImportRowError naming the line and column of a cell over MAX_TEXT_CHARS characters (most
    often a runaway quote that swallowed later lines), as the imports refuse one."""
    for name, field in zip(header, fields, strict=False):
        if len(field) > MAX_TEXT_CHARS:
            raise ImportRowError(str(path), line, name or None,
                                 f"the cell is {len(field):,} characters long, over the limit of {MAX_TEXT_CHARS:,}",
                                 "Check the quotes of this line; split very long texts")


def _records(path: Path, text: str, reader: Any, header: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(line where the record starts, fields) of each CSV record after the header; a field over
    csv's size limit (most often an unclosed quote) is an ImportRowError naming its line."""
    start = reader.line_num + 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            check_quotes_closed(str(path), text, start, header)
            raise ImportRowError(str(path), start, None, f"the record cannot be read ({error})",
                                 "Check the quotes of this line; split very long texts") from None
        line, start = start, reader.line_num + 1
        yield line, fields


def _header_index(path: Path, header: list[str], keep: tuple[str, ...] = ()) -> list[int]:
    """Positions of item_id, rater, label and the `keep` columns in the header; ImportRowError
    on line 1 otherwise."""
    for name in (*COLUMNS, *keep):
        if header.count(name) != 1:
            problem = "names it twice" if name in header else "has no such column"
            hint = ("Name the columns item_id, rater, label, once each, in the first line" if name in COLUMNS
                    else f"Add a column {name} to break agreement down by it, or leave out --by {name}")
            raise ImportRowError(str(path), 1, name, f"the header {problem} (found: {', '.join(header)})", hint)
    return [header.index(name) for name in (*COLUMNS, *keep)]


_CONTROL = r"[\x00-\x1f\x7f]"
"""A control character (NUL, tab, escape, ...): never part of an id, a name or a label."""

_INVISIBLE = "[\u200b-\u200f\u2060\ufeff]"
"""A zero-width or direction mark: invisible, so two names that look the same would differ."""

_CONTROL_BYTE = re.compile(rb"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]")
"""A control character other than a line break in a file's bytes: the careful reader names it."""

_MAY_HOLD_BLANKS = re.compile(rb"[ \x80-\xff]")
"""A space or a non-ASCII byte (which may be part of a Unicode blank such as U+3000)."""


def _check_values(path: Path, line: int, values: Sequence[Any], categories: tuple[str, ...]) -> None:
    """ImportRowError for an empty item_id, rater or label, one holding a control character,
    or a label not declared."""
    for name, value in zip(COLUMNS, values):
        if value is None or value == "":
            article = "an" if name == "item_id" else "a"
            raise ImportRowError(str(path), line, name, f"{name} is empty", f"Give every line {article} {name}")
        control = re.search(_CONTROL, value) or re.search(_INVISIBLE, value)
        if control:
            raise ImportRowError(str(path), line, name,
                                 f"{name} {_short(value)} holds the invisible or control character "
                                 f"U+{ord(control.group()):04X}",
                                 "Remove it (check the file's encoding: UTF-16 files must be saved as UTF-8)")
    if values[2] not in categories:
        raise ImportRowError(str(path), line, "label",
                             f"label {_short(values[2])} is not one of the declared categories "
                             f"({', '.join(categories)})",
                             "Correct the label, or declare the category (--categories)")


def _jsonl_rows(path: Path, text: str, categories: tuple[str, ...], keep: tuple[str, ...] = ()) -> list[tuple]:
    """(item_id, rater, label, line, *keep) of each JSONL line; blank lines are skipped."""
    rows = []
    for line, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            row = _jsonl_row(path, line, raw, keep)
            _check_values(path, line, row[:3], categories)
            rows.append(row)
    return rows


def _jsonl_row(path: Path, line: int, raw: str, keep: tuple[str, ...] = ()) -> tuple:
    """One JSONL line as (item_id, rater, label, line, *keep); ImportRowError when malformed."""
    try:
        obj = loads_unique(raw)
    except RecursionError:
        raise ImportRowError(str(path), line, None, msg("msg.import.problem.too_deep", most=MAX_NESTING),
                             msg("msg.import.fix.too_deep")) from None
    except DuplicateKeyError as exc:
        raise ImportRowError(str(path), line, exc.key, f"the key '{exc.key}' appears twice in one JSON object",
                             "Keep one of them: which value was meant is unknown") from None
    except json.JSONDecodeError as exc:
        raise ImportRowError(str(path), line, None, f"not valid JSON ({exc.msg}, column {exc.colno})",
                             "Write one JSON object per line") from None
    if not isinstance(obj, dict):
        raise ImportRowError(str(path), line, None, "not a JSON object",
                             "Write one object per line with item_id, rater, label")
    values = [obj.get(name) for name in (*COLUMNS, *keep)]
    for name, value in zip((*COLUMNS, *keep), values):
        allowed = (str,) if name == "label" else (str, int)
        if value is None:
            fix = ("Give every line item_id, rater and label" if name in COLUMNS
                   else f"Give every line a {name} to break agreement down by it, or leave out --by {name}")
            raise ImportRowError(str(path), line, name, f"{name} is missing", fix)
        if isinstance(value, bool) or not isinstance(value, allowed):
            kind = "text" if name == "label" else "text or an integer"
            raise ImportRowError(str(path), line, name, f"{name} is {type(value).__name__}, not {kind}",
                                 f"Write {name} as {kind}")
    return (nfc(str(values[0]).strip()), nfc(str(values[1]).strip()), nfc(values[2].strip()), line,
            *(nfc(str(v).strip()) for v in values[3:]))


def _drop_repeats(path: Path, rows: list[tuple]) -> list[tuple]:
    """Rows without exact repeats; ImportRowError naming both lines of a conflicting pair."""
    seen: dict[tuple[str, str], tuple[str, int]] = {}
    extras: dict[tuple[str, str], tuple] = {}
    kept = []
    for row in rows:
        item_id, rater, label, line = row[:4]
        earlier = seen.setdefault((item_id, rater), (label, line))
        first_extras = extras.setdefault((item_id, rater), row[4:])
        if earlier[1] == line:
            kept.append(row)
        elif earlier[0] == label and first_extras != row[4:]:
            raise ImportRowError(str(path), line, None,
                                 f"item {_short(item_id)} by {_short(rater)} repeats line {earlier[1]} "
                                 "with another group value", "Keep one line per item and rater")
        elif earlier[0] != label:
            raise ImportRowError(str(path), line, "label",
                                 f"item {item_id!r} is labeled twice by {rater!r}: "
                                 f"{earlier[0]!r} on line {earlier[1]}, {label!r} on line {line}",
                                 "Keep one label per item and rater")
    return kept
