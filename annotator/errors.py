"""One exception class per failure. Services raise them; the command line prints them and
exits non-zero; pages show them with `st.error`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Self

from annotator.messages import Message, msg


class AnnotatorError(Exception):
    """Base class: a failure the user can act on, with a message that says what to do.

    Raised with a Message (`SomeError.of(key, **fields)`, annotator/messages.py), the error keeps
    its `key` and `fields`, so the app can say it in the user's language; str(error) is the
    message's English text either way. Raised with a plain text, `key` is None."""

    key: str | None = None
    fields: Mapping[str, object] = MappingProxyType({})

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], Message):
            self.key, self.fields = args[0].key, args[0].fields
            args = (str(args[0]),)
        super().__init__(*args)

    @classmethod
    def of(cls, key: str, **fields: object) -> Self:
        """The error saying the message `key` (of annotator.messages.MESSAGES) with `fields`."""
        return cls(msg(key, **fields))

    @property
    def message(self) -> Message | None:
        """The error's message, None when it was raised with a plain text."""
        return None if self.key is None else Message(self.key, self.fields)


class DatabaseUnavailableError(AnnotatorError):
    """The database URL is malformed, or the database cannot be opened or reached."""


class ImportRowError(AnnotatorError):
    """A line of an input file cannot be imported."""

    def __init__(self, path: str, line: int | None, field: str | None, problem: str, fix: str):
        self.path, self.line, self.field, self.problem, self.fix = path, line, field, problem, fix
        where = str(path) + (f", line {line}" if line is not None else "")
        where += f", field '{field}'" if field else ""
        super().__init__(f"{where}: {problem}. {fix}")


class ImportFileError(AnnotatorError):
    """An input file as a whole cannot be read (missing, wrong encoding, unknown format)."""


class NotFoundError(AnnotatorError):
    """A named thing (claim, case, user, dataset, release) does not exist."""


class AmbiguousIdError(AnnotatorError):
    """An id exists in more than one dataset; the user must name the dataset."""


class PermissionDeniedError(AnnotatorError):
    """The user's role or relation to the claim does not allow this action."""


class StaleWriteError(AnnotatorError):
    """Someone changed the record after it was read; the write was refused, nothing changed."""


class ContentChangedError(StaleWriteError):
    """The claim's text or passages changed after the writer was shown them (an import with
    --update); the label or decision was refused, nothing changed."""


class GuidelineChangedError(StaleWriteError):
    """A guideline version was published after the writer was shown the guideline; the label
    was refused, nothing changed."""


class LabelLockedError(AnnotatorError):
    """A label can no longer be revised: the claim's second label has landed."""


class NotDisputedError(AnnotatorError):
    """Only a disputed (or stale) claim can be adjudicated."""


class OnHoldError(AnnotatorError):
    """The claim's case is on hold; it cannot be labeled until the hold is lifted."""


class CaseFinalError(AnnotatorError):
    """A case whose claims are all agreed or adjudicated cannot be put on hold."""


class InvalidValueError(AnnotatorError):
    """A value (label, severity, hold reason, role, category) is not one of the allowed ones."""


class LoginError(AnnotatorError):
    """The user name or password is wrong, or the user cannot log in."""


class ReleaseBlockedError(AnnotatorError):
    """A release cannot be created: claims in scope are not final."""


class ReleaseExistsError(AnnotatorError):
    """A release (or its folder) with that name already exists; releases are immutable."""


class ReleaseVerifyError(AnnotatorError):
    """A release folder does not match its manifest (missing, altered or extra files)."""


class ExportError(AnnotatorError):
    """A release cannot be exported as asked (it has no cases.jsonl; the output file is a folder,
    inside a release folder, or cannot be written); nothing was written."""


class UndefinedCategoryError(AnnotatorError):
    """A label outside the declared category set was found in agreement input."""


class ReleaseWriteError(AnnotatorError):
    """A release folder could not be written (the file system refused); nothing was left behind."""


class BackupTargetError(AnnotatorError):
    """The backup file cannot be written where asked (exists, no folder, not writable, the database itself)."""


class BackupUnsupportedError(AnnotatorError):
    """The database is not a SQLite file this command can copy (PostgreSQL: use pg_dump)."""


class BackupFailedError(AnnotatorError):
    """The copy could not be completed or failed its integrity check (nothing was written), or it
    was written but could not be synced to disk; the message says which."""


class FetchError(AnnotatorError):
    """A public data set could not be downloaded, or its bytes did not match their SHA-256; nothing was written."""


class PortUnavailableError(AnnotatorError):
    """The app cannot listen where asked: the port is taken, or the address is not this machine's."""


class AgreementInputError(AnnotatorError, ValueError):
    """Ratings that an agreement report cannot be computed from (a repeated rating, an item in
    two groups, too few bootstrap resamples, ...)."""


class CalibrationInputError(AnnotatorError, ValueError):
    """Labels, answers or settings that a judge's calibration cannot be computed from (unequal
    lengths, a label outside the categories, a missing case id, a value that is not 0/1, ...)."""


class DatabaseBusyError(AnnotatorError):
    """SQLite stayed locked by another writer past the busy timeout; nothing was written: retry."""


class DiskFullError(AnnotatorError):
    """The disk (or the database's size limit) is full; the transaction was rolled back, nothing was saved."""


class DatabaseReadOnlyError(DatabaseUnavailableError):
    """The database can be read but not written (file or folder permissions, a read-only role or server)."""


class ConcurrentImportError(AnnotatorError):
    """Another import wrote the same cases (or labels) at the same time; this one wrote nothing: run it again."""


class LoginBusyError(LoginError):
    """Too many logins were waiting for a password check in this process; this one was not
    checked: retry."""


class ConnectionsBusyError(DatabaseBusyError):
    """Every connection of the engine's pool stayed in use past the pool timeout (many sessions
    at once); nothing was written: retry."""
