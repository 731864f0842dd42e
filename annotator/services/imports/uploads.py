"""An uploaded file (the app's Import page): checked (imported in a savepoint, then rolled back:
the report, every bad line, a preview), then imported for real, its messages naming the file as
the user named it."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from sqlmodel import Session

from annotator import formats
from annotator.errors import AnnotatorError, ImportRowError, InvalidValueError, PermissionDeniedError
from annotator.formats.kinds import upload_kinds
from annotator.messages import Joined, Message
from annotator.services.access import Caller, require
from annotator.services.imports.adjudications import import_adjudications
from annotator.services.imports.cases import import_cases
from annotator.services.imports.labels import import_labels
from annotator.services.imports.shared import ImportReport, SkippedLine
from annotator.workflow import Permission

T = TypeVar("T")


UPLOAD_KINDS: tuple[str, ...] = upload_kinds()
"""What the app's Import page imports: a case file (import_cases), labels or adjudications (the
registry, formats.kinds)."""

UPLOAD_SUFFIXES: tuple[str, ...] = ("jsonl", "csv", "parquet")
"""The file name endings the Import page's file picker takes, whatever the kind (one list, so that a
file picked stays picked when the kind changes): JSON lines and CSV, and Parquet, which only the
RAGAS reader reads (any other reader refuses it saying so)."""

PREVIEW_ROWS = 20
"""Claims (case files), labels or adjudications shown in a check's preview."""


@dataclass(frozen=True)
class UploadOptions:
    """The options of an upload, as the command line's: kind (one of UPLOAD_KINDS); fmt (cases:
    auto | jsonl | csv | climate-fever | ragas; adjudications: auto | jsonl | csv; labels: auto only);
    dataset; update; partial; slices (case files only)."""

    kind: str = "cases"
    fmt: str = "auto"
    dataset: str | None = None
    update: bool = False
    partial: bool = False
    slices: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportCheck:
    """What importing an uploaded file would do, found by importing it and rolling back.

    report: the import's report, exactly as an import now would give it (None when refused);
    refusal: the refusal's message (None when the file would import); bad_lines: when refused,
    every bad line found (file, line, field, reason): the refusal's own and, for a case file,
    every other one (a partial run, rolled back too, finds them); preview: the first PREVIEW_ROWS
    claims, labels or adjudications of the file as rows (column -> value), when not refused.
    """

    report: ImportReport | None
    refusal: str | None = None
    bad_lines: tuple[SkippedLine, ...] = ()
    preview: tuple[dict[str, Any], ...] = ()
    refusal_message: Message | str | None = None
    """The refusal as a message (formats.refusal_message), for the app to write in the user's language."""


def check_upload(session: Session, actor: Caller, name: str, data: bytes, options: UploadOptions) -> ImportCheck:
    """Import the uploaded file `data` (named `name`) in a savepoint of `session` and roll it back:
    the report is the one an import would give now, and nothing is written.

    Messages and the report name the file `name`, never the temporary file it was saved to. A
    refusal of the file (bad line, unknown dataset, blind rule, ...) is returned, not raised.
    Raises PermissionDeniedError unless `actor` may import, InvalidValueError for an unknown kind
    or options of another kind (partial or slices for labels).
    """
    require(actor, Permission.IMPORT)
    with _uploaded(name, data) as path:
        try:
            report = _rolled_back(session, lambda: _import_file(session, actor, path, options, None))
        except PermissionDeniedError:
            raise
        except AnnotatorError as error:
            named = _named(error, path, name)
            return ImportCheck(None, str(named), _bad_lines(session, actor, path, name, options, named),
                               refusal_message=formats.refusal_message(named))
        skipped = {line.line for line in report.skipped_lines}
        return ImportCheck(_named_report(report, path, name), preview=_preview(path, options, skipped))


def import_upload(session: Session, actor: Caller, name: str, data: bytes, options: UploadOptions, *,
                  progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import the uploaded file `data` (named `name`) in `session`'s transaction, as the command
    line imports a file; progress(bytes_read, size) as import_cases calls it (labels and
    adjudications: at the start and the end). Errors and the report name the file `name`.
    Raises what check_upload returns as a refusal, PermissionDeniedError and InvalidValueError."""
    require(actor, Permission.IMPORT)
    with _uploaded(name, data) as path:
        try:
            report = _import_file(session, actor, path, options, progress)
        except PermissionDeniedError:
            raise
        except AnnotatorError as error:
            raise _named(error, path, name) from None
        return _named_report(report, path, name)


def _import_file(session: Session, actor: Caller, path: Path, options: UploadOptions,
                 progress: Callable[[int, int], None] | None) -> ImportReport:
    if options.kind not in UPLOAD_KINDS:
        raise InvalidValueError.of("msg.import.option.unknown_kind", kind=repr(options.kind), choices=", ".join(UPLOAD_KINDS))
    if options.kind == "cases":
        return import_cases(session, actor, path, fmt=options.fmt, dataset=options.dataset, update=options.update,
                            partial=options.partial, slices=options.slices, progress=progress)
    if options.slices:
        raise InvalidValueError.of("msg.import.option.slices_cases_only")
    size = path.stat().st_size
    if progress is not None:
        progress(0, size)
    if options.kind == "labels":
        if options.fmt != "auto":
            raise InvalidValueError.of("msg.import.option.labels_auto")
        report = import_labels(session, actor, path, dataset=options.dataset, update=options.update,
                               partial=options.partial)
    else:
        report = import_adjudications(session, actor, path, dataset=options.dataset, fmt=options.fmt,
                                      update=options.update, partial=options.partial)
    if progress is not None:
        progress(size, size)
    return report


def _rolled_back(session: Session, run: Callable[[], T]) -> T:
    """run() in a savepoint that is rolled back whatever happens."""
    savepoint = session.begin_nested()
    try:
        return run()
    finally:
        if savepoint.is_active:
            savepoint.rollback()


def _bad_lines(session: Session, actor: Caller, path: Path, name: str, options: UploadOptions,
               refusal: AnnotatorError) -> tuple[SkippedLine, ...]:
    """Every bad line of a refused file: the refusal's line and those a partial run (rolled back)
    skips."""
    own = (SkippedLine.of(refusal),) if isinstance(refusal, ImportRowError) else ()
    if options.partial or not own:
        return own
    try:
        report = _rolled_back(session, lambda: _import_file(session, actor, path, replace(options, partial=True), None))
    except AnnotatorError:
        return own
    found = _named_report(report, path, name).skipped_lines
    return found if any(line.line == own[0].line for line in found) else tuple(sorted(
        (*own, *found), key=lambda line: line.line or 0))


@contextmanager
def _uploaded(name: str, data: bytes) -> Iterator[Path]:
    """`data` saved under its own file name (its suffix tells the format) in a new temporary folder,
    removed afterwards."""
    safe = Path(name.replace("\\", "/")).name.replace("\x00", "")
    if safe in ("", ".", "..") or len(safe.encode()) > 200:
        safe = "upload" + Path(safe).suffix[:10]
    with tempfile.TemporaryDirectory(prefix="annotator-upload-") as folder:
        path = Path(folder) / safe
        path.write_bytes(data)
        yield path


def _named(error: AnnotatorError, path: Path, name: str) -> AnnotatorError:
    """The same error naming the file `name` instead of the temporary `path` (in its message too)."""
    if isinstance(error, ImportRowError):
        return ImportRowError(error.path.replace(str(path), name), error.line, error.field,
                              _renamed(error.problem, path, name), _renamed(error.fix, path, name))
    if error.key is not None:
        return type(error).of(error.key, **{key: _renamed(value, path, name) for key, value in error.fields.items()})
    return type(error)(str(error).replace(str(path), name))


def _renamed(value: T, path: Path, name: str) -> T:
    """A text, or a message with its fields (Joined parts too), naming the file `name` instead of `path`."""
    if isinstance(value, str):
        return value.replace(str(path), name)  # type: ignore[return-value]
    if isinstance(value, Message):
        return Message(value.key, {key: _renamed(field_value, path, name)  # type: ignore[return-value]
                                   for key, field_value in value.fields.items()})
    if isinstance(value, Joined):
        return Joined(tuple(_renamed(part, path, name) for part in value.parts), value.separator)  # type: ignore[return-value]
    return value


def _named_report(report: ImportReport, path: Path, name: str) -> ImportReport:
    return replace(report, path=name, warnings=tuple(warning.replace(str(path), name) for warning in report.warnings),
                   skipped_lines=tuple(replace(line, path=name, reason=line.reason.replace(str(path), name),
                                               reason_message=_renamed(line.reason_message, path, name))
                                       for line in report.skipped_lines))


def _preview(path: Path, options: UploadOptions, skipped: set[int | None]) -> tuple[dict[str, Any], ...]:
    """The first PREVIEW_ROWS claims (with their case), labels or adjudications the file holds,
    leaving out the cases on the `skipped` lines (a partial import's)."""
    rows: Iterable[dict[str, Any]]
    skips = formats.Skips() if options.partial else None
    if options.kind == "cases":
        source = formats.read_cases(path, options.fmt, skips=skips)
        rows = ({"line": claim.line, "case_id": case.case_id, "claim_id": claim.claim_id, "claim": claim.text,
                 "slice": case.slice, "split": case.split,
                 "passages": ", ".join(claim.passage_ids or tuple(p.passage_id for p in case.passages))}
                for case in source.records if case.line not in skipped
                for claim in case.claims if claim.line not in skipped)
    elif options.kind == "labels":
        rows = ({"line": r.line, "claim_id": r.claim_id, "labeler": r.labeler, "label": r.label,
                 "rationale": r.rationale, "passage_ids": ", ".join(r.passage_ids), "severity": r.severity}
                for r in formats.read_labels(path, skips=skips).records if r.line not in skipped)
    else:
        rows = ({"line": r.line, "claim_id": r.claim_id, "adjudicator": r.adjudicator, "label": r.label,
                 "rationale": r.rationale, "severity": r.severity}
                for r in formats.read_adjudications(path, options.fmt, skips=skips).records if r.line not in skipped)
    return tuple(itertools.islice(rows, PREVIEW_ROWS))
