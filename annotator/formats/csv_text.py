"""CSV files: their encoding (UTF-8 with or without BOM, else CP932, strictly; the first byte
neither reads is refused naming its byte, line and field), their header, their rows streamed as
`Row`s a block at a time (READ_BYTES), and quotes never closed found at the line they open."""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from annotator.errors import ImportRowError
from annotator.formats.reading import CP932, UTF8, UTF8_BOM, Row, unknown_name_warning
from annotator.formats.records import Position, Source
from annotator.messages import Message, english, msg


CSV_FIELD_LIMIT = 2**31 - 1
"""The csv module refuses a cell over 131,072 characters by default, with an error that names no
line or field; raised here (process-wide) so that our own checks (MAX_TEXT_CHARS) name them."""
csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))


def decode_csv_bytes(path: str | Path, data: bytes) -> tuple[str, str]:
    """Decode a CSV file's bytes: UTF-8 (with or without BOM) strictly, else CP932 strictly.

    Returns (text, encoding name: "UTF-8", "UTF-8 with BOM" or "CP932").
    Raises ImportRowError naming the byte offset (counted from the file's first byte, a BOM
    included), line and (where the header says) field of the first byte neither encoding can
    read; the encoding that got further is the one reported. A file on disk is read the same way
    without holding its bytes by `csv_encoding`.
    """
    bom = data.startswith(UTF8_BOM_BYTES)
    try:
        return data.decode("utf-8-sig"), UTF8_BOM if bom else UTF8
    except UnicodeDecodeError as utf8_error:
        try:
            return _decode_cp932(data), CP932
        except UnicodeDecodeError as cp932_error:
            utf8_start = utf8_error.start + (len(UTF8_BOM_BYTES) if bom else 0)  # utf-8-sig counts after the BOM
            raise _undecodable(str(path), lambda: io.BytesIO(data), utf8_start, cp932_error.start) from None


UTF8_BOM_BYTES = b"\xef\xbb\xbf"
READ_BYTES = 1 << 16
"""How many bytes a CSV file is read at a time: memory per read, not per file."""

_CODECS: dict[str, str] = {UTF8: "utf-8", UTF8_BOM: "utf-8-sig", CP932: "cp932"}
"""The Python codec that reads each encoding `csv_encoding` reports (utf-8-sig drops the BOM)."""

_CP932_UNASSIGNED = re.compile("[\x80\uf8f0-\uf8f3]")
"""What Python's cp932 codec makes of the single bytes 0x80, 0xA0 and 0xFD-0xFF, which are no
character in CP932 (Microsoft's table leaves them unassigned; no two-byte sequence decodes to
these): U+0080 and the private-use U+F8F0-U+F8F3. Stored, they would be junk."""


def _decode_cp932(data: bytes) -> str:
    """`data` decoded as CP932, strictly: raises UnicodeDecodeError at the first byte that is not
    CP932, including the bytes Python's codec maps to junk (`_CP932_UNASSIGNED`)."""
    text = data.decode("cp932")
    junk = _CP932_UNASSIGNED.search(text)
    if junk is not None:
        start = len(text[:junk.start()].encode("cp932"))  # CP932 round-trips with the same byte lengths
        raise UnicodeDecodeError("cp932", data, start, start + 1, "byte is not assigned in CP932")
    return text


def csv_encoding(path: str | Path) -> str:
    """The encoding of the CSV file at `path`, found as `decode_csv_bytes` finds it (UTF-8 with or
    without BOM strictly, else CP932 strictly) but reading READ_BYTES at a time, never the whole file.

    Returns "UTF-8", "UTF-8 with BOM" or "CP932" (see `_CODECS` for the codec that reads it).
    Raises ImportRowError as `decode_csv_bytes` does, with the same message, for a file neither
    encoding can read.
    """
    path = Path(path)
    with path.open("rb") as handle:
        bom = handle.read(len(UTF8_BOM_BYTES)) == UTF8_BOM_BYTES
    utf8_start = _first_bad_byte(lambda: path.open("rb"), "utf-8", len(UTF8_BOM_BYTES) if bom else 0)
    if utf8_start is None:
        return UTF8_BOM if bom else UTF8
    cp932_start = _first_bad_byte(lambda: path.open("rb"), "cp932")
    if cp932_start is None:
        return CP932
    raise _undecodable(str(path), lambda: path.open("rb"), utf8_start, cp932_start)


def _first_bad_byte(open_bytes: Callable[[], BinaryIO], codec: str, skip: int = 0) -> int | None:
    """The offset of the first byte (from byte `skip` on) that `codec` cannot decode, None when
    all decode; read READ_BYTES at a time. For cp932 as `_decode_cp932` has it: the first byte
    the codec refuses, else the first it maps to junk (`_CP932_UNASSIGNED`)."""
    decoder = codecs.getincrementaldecoder(codec)("strict")
    fed, junk = skip, None  # fed: the bytes given to the decoder so far
    with open_bytes() as handle:
        handle.seek(skip)
        while True:
            chunk = handle.read(READ_BYTES)
            start = fed - len(decoder.getstate()[0])  # the decoder holds back a character's first bytes
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as error:  # error.object: the bytes held back, then chunk
                return start + error.start
            if codec == "cp932" and junk is None and (found := _CP932_UNASSIGNED.search(text)) is not None:
                junk = start + len(text[:found.start()].encode("cp932"))  # CP932 round-trips with the same lengths
            if not chunk:
                return junk
            fed += len(chunk)


def _undecodable(path: str, open_bytes: Callable[[], BinaryIO], utf8: int, cp932: int) -> ImportRowError:
    """The refusal of a CSV file that UTF-8 cannot read from byte `utf8` on, nor CP932 from byte
    `cp932`, naming the byte, line and field where the encoding that got further stops."""
    codec, start = ("utf-8-sig", utf8) if utf8 >= cp932 else ("cp932", cp932)
    with open_bytes() as handle:
        handle.seek(start)
        byte = handle.read(1)[0]
        handle.seek(0)
        with _text_lines(handle, codec, end=start) as prefix:
            line, field_name = _csv_position(prefix)
    where = "" if utf8 == cp932 else msg("msg.import.problem.encodings_fail", utf8=utf8, cp932=cp932)
    return ImportRowError(
        path, line, field_name,
        msg("msg.import.problem.not_utf8_nor_cp932", byte=start, hex=f"{byte:02x}", where=where),
        msg("msg.import.fix.csv_encoding"),
    )


def _csv_position(lines: Iterable[str]) -> tuple[int, str | None]:
    """The starting line and column name of the CSV record in which the text `lines` ends (the
    text before an undecodable byte, as lines with their line breaks); the column is None on the
    header line or past the header's width."""
    tail = _LastLine(lines)
    reader = csv.reader(tail)
    header: list[str] | None = None
    start, last = 1, (1, [""])
    for row in reader:
        last, start = (start, row), reader.line_num + 1
        header = header if header is not None else [name.strip() for name in row]
    if tail.last is None or tail.last.endswith(("\n", "\r")):
        last = (start, [""])  # the bad byte opens a new record
    line, row = last
    if line == 1 or header is None:
        return line, None
    return line, header[len(row) - 1] if len(row) <= len(header) else None


class _LastLine:
    """The lines of a text, remembering the last one given (None before any)."""

    def __init__(self, lines: Iterable[str]):
        self._lines = iter(lines)
        self.last: str | None = None

    def __iter__(self) -> _LastLine:
        return self

    def __next__(self) -> str:
        self.last = next(self._lines)
        return self.last


class _Bytes(io.RawIOBase):
    """The bytes of an open binary file up to `end` (None: to its end), read through; each read
    adds to `position.bytes_read` (progress as a CSV file is read)."""

    def __init__(self, handle: BinaryIO, end: int | None = None, position: Position | None = None):
        super().__init__()
        self._handle, self._end, self._position = handle, end, position
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer) if self._end is None else min(len(buffer), self._end - self._read)
        count = self._handle.readinto(memoryview(buffer)[:size]) if size > 0 else 0
        self._read += count or 0
        if self._position is not None:
            self._position.bytes_read += count or 0
        return count or 0


def _text_lines(handle: BinaryIO, codec: str, *, end: int | None = None,
                position: Position | None = None) -> io.TextIOWrapper:
    """The text of an open binary file (up to byte `end`), decoded strictly with `codec`, as lines
    split at \\r\\n, \\r and \\n and kept as written (what csv.reader expects); READ_BYTES at a time."""
    raw = io.BufferedReader(_Bytes(handle, end, position), buffer_size=READ_BYTES)
    return io.TextIOWrapper(raw, encoding=codec, errors="strict", newline="")


@contextmanager
def open_csv_text(path: Path, encoding: str, position: Position | None = None) -> Iterator[io.TextIOWrapper]:
    """The CSV file at `path` as lines of text in `encoding` (as `csv_encoding` found it); its
    bytes read are counted in `position`."""
    with path.open("rb") as handle, _text_lines(handle, _CODECS[encoding], position=position) as text:
        yield text


def csv_rows(path: Path, columns: tuple[str, ...], required: tuple[str, ...], extra: str = "ignored",
             also_known: frozenset[str] = frozenset(), position: Position | None = None) -> Source[Row]:
    """Open a CSV file and stream its rows as Row (values by column name, line = the record's
    starting line); rows with only empty cells are skipped. Each unknown column gives a warning
    saying what happens to it (`extra`), worded as for an unknown JSONL field. A quoted cell that
    is never closed (the csv module reads it to the end of the file) is refused at its line.

    The file is read READ_BYTES at a time: once here to find its encoding (`csv_encoding`) and
    check its header, once as the rows are read (counted in `position`, for progress).
    Raises ImportRowError here for undecodable bytes and a bad header (missing, doubled or
    unclosed-quote), and while the rows are read for a quote never closed and a row with more
    cells than the header.
    """
    encoding = csv_encoding(path)
    header, alone = _csv_header(path, encoding)
    if alone:  # the header is the only record: an unclosed quote may have swallowed the file
        _check_quotes_on_disk(path, encoding, 1, None)
    _check_header(str(path), header, required)
    warnings = [unknown_name_warning(str(path), 1, "column", name, columns, extra)
                for name in header if name and name not in columns and name not in also_known]
    warnings += [english("msg.import.warn.unnamed_column", path=str(path), line=1, number=number)
                 for number, name in enumerate(header, start=1) if not name]
    return Source(str(path), "csv", encoding, _csv_records(path, encoding, header, position), warnings)


def _csv_header(path: Path, encoding: str) -> tuple[list[str], bool]:
    """The header's column names (stripped; [] for no record at all) and whether it is the file's
    only record."""
    with open_csv_text(path, encoding) as text:
        reader = csv.reader(text)
        first = next(reader, None)
        return [name.strip() for name in first or []], next(reader, None) is None


def _numbered_records(reader: Any) -> Iterator[tuple[int, list[str], bool]]:
    """(starting line, cells, whether it is the last record) for each record of a csv reader."""
    start, previous = 1, None
    for cells in reader:
        if previous is not None:
            yield (*previous, False)
        previous, start = (start, cells), reader.line_num + 1
    if previous is not None:
        yield (*previous, True)


def _other_separator(header: list[str], required: tuple[str, ...]) -> Message | None:
    """"semicolons" or "tabs" (as messages) when the header is one cell that those split into all
    the required names (a file saved with another separator, as Excel does in some locales), else None."""
    if len(header) != 1:
        return None
    for mark, name in ((";", "semicolons"), ("\t", "tabs")):
        if all(column in (part.strip() for part in header[0].split(mark)) for column in required):
            return msg(f"msg.import.separator.{name}")
    return None


def _check_header(path: str, header: list[str], required: tuple[str, ...]) -> None:
    if not any(header):
        raise ImportRowError(path, 1, None, msg("msg.import.problem.no_header"),
                             msg("msg.import.fix.header", columns=", ".join(required)))
    if header[0].startswith("{"):  # a JSON object's first key: JSON lines read as CSV
        raise ImportRowError(path, 1, None, msg("msg.import.problem.json_as_csv"), msg("msg.import.fix.json_as_csv"))
    missing = [name for name in required if name not in header]
    separator = _other_separator(header, required)
    if separator is not None:
        raise ImportRowError(path, 1, None, msg("msg.import.problem.other_separator", header=header[0][:80],
                                                separator=separator), msg("msg.import.fix.commas"))
    if missing:
        raise ImportRowError(path, 1, None, msg("msg.import.problem.missing_columns", columns=", ".join(missing)),
                             msg("msg.import.fix.add_columns", required=", ".join(required)))
    doubled = sorted({name for name in header if name and header.count(name) > 1})
    if doubled:
        raise ImportRowError(path, 1, None, msg("msg.import.problem.doubled_columns", columns=", ".join(doubled)),
                             msg("msg.import.fix.keep_one_each"))


def _csv_records(path: Path, encoding: str, header: list[str], position: Position | None) -> Iterator[Row]:
    """The rows after the header, read from disk as they are asked for (see `csv_rows`)."""
    with open_csv_text(path, encoding, position) as text:
        records = _numbered_records(csv.reader(text))
        next(records, None)  # the header
        for line, cells, last in records:
            if last:  # a quote never closed swallows the rest of the file into the last record
                _check_quotes_on_disk(path, encoding, line, header)
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(header):
                raise ImportRowError(str(path), line, None,
                                     msg("msg.import.problem.extra_cells", cells=len(cells), columns=len(header)),
                                     msg("msg.import.fix.quote_commas"))
            values = dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=True))
            nul = next((name for name, value in values.items() if "\x00" in value), None)
            if nul is not None:
                raise ImportRowError(str(path), line, nul or None, msg("msg.import.problem.nul_cell"),
                                     msg("msg.import.fix.remove_nul"))
            yield Row(str(path), line, values)


_QUOTED_BODY = re.compile(r'(?:[^"]++|"")*+')
"""The inside of a quoted cell, up to its closing quote ("" is a quote) or the end of the line."""
_UNQUOTED_REST = re.compile(r"[^,\r\n]*")


def check_quotes_closed(path: str, text: str, line: int, header: list[str] | None) -> None:
    """Raises ImportRowError at the line (and column) where a quoted cell of the record starting
    on `line` of `text` (a whole CSV file, decoded) opens and is never closed; see
    `_check_quotes_in_lines`."""
    lines = io.StringIO(text, newline="")
    _check_quotes_in_lines(path, itertools.islice(lines, line - 1, None), line, header)


def _check_quotes_on_disk(path: Path, encoding: str, line: int, header: list[str] | None) -> None:
    """`check_quotes_closed` for the CSV file at `path`, read in `encoding` from disk a line at a
    time from `line` on (the lines before it are read and dropped)."""
    with open_csv_text(path, encoding) as text:
        _check_quotes_in_lines(str(path), itertools.islice(text, line - 1, None), line, header)


def _check_quotes_in_lines(path: str, lines: Iterable[str], line: int, header: list[str] | None) -> None:
    """Raises ImportRowError at the line (and column) where a quoted cell of the record whose text
    is `lines` (from its starting `line` to the end of the file, line breaks kept) opens and is
    never closed. The scan follows the csv module's default (excel, non-strict) reading: a quote
    opens a quoted cell only at the start of a cell, "" inside it is a quote, and text after the
    closing quote or a quote inside an unquoted cell is kept as is. Holds one line at a time."""
    lines = iter(lines)
    text, pos, index = next(lines, ""), 0, 0
    while pos < len(text):
        if text[pos] == '"':
            closed = _past_quoted_cell(lines, text, pos + 1, line)
            if closed is None:
                name = header[index] if header and index < len(header) else None
                raise ImportRowError(path, line, name, msg("msg.import.problem.unclosed_quote"),
                                     msg("msg.import.fix.close_quote"))
            text, pos, line = closed
        pos = _UNQUOTED_REST.match(text, pos).end()
        if pos >= len(text) or text[pos] != ",":
            return  # the record ends here
        pos, index = pos + 1, index + 1


def _past_quoted_cell(lines: Iterator[str], text: str, pos: int, line: int) -> tuple[str, int, int] | None:
    """Where a quoted cell whose inside starts at `pos` of `text` (line number `line`; `lines`: the
    lines after it) is closed: (the text of that line, the offset past the closing quote, its line
    number); None when the file ends first."""
    pos = _QUOTED_BODY.match(text, pos).end()
    while pos == len(text):  # the cell goes on past this line (a line ends in a line break, never in a quote)
        following = next(lines, None)
        if following is None:
            return None
        text, line = following, line + 1
        pos = _QUOTED_BODY.match(text).end()
    return text, pos + 1, line
