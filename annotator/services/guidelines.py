"""The labeling guideline: a Markdown text that admins publish as named versions ("v1", "2026-11").

Low agreement on a pilot means the guideline is unclear (docs/domain.md, "The procedure"): the team rewrites it and
publishes a new version, and every label records the version it was made under
(labeling.save_label reads the current one in the statement that locks the claim), so agreement
can be reported per version. Rules, checked here whatever page or command calls:
- Only admins publish, as themselves: `published_by` names them. The command line names the
  admin (`annotator guideline publish FILE --by NAME`).
- A version name is not empty, holds no invisible character, and is never used twice; a
  published version is never edited or removed: a change is a new version.
- The text is stored as given after NFC normalization, with line ends as "\\n"; `sha256` is of
  its UTF-8 bytes. An empty text (only blanks) and the same text as the current version are
  refused: there would be nothing new to label under.
- The current guideline is the one published last. Publishing changes no stored label: a label
  keeps the version it was saved under.
- Every publish is one audit event (entity `guideline`, action `create`).
Everyone who can log in may read the guideline (it is shown beside the claim), so reading takes
no caller.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, func, select

from annotator.errors import ImportFileError, InvalidValueError, NotFoundError, PermissionDeniedError
from annotator.messages import msg, shortened
from annotator.models import Guideline, User, utcnow
from annotator.services.access import Caller, caller_roles, is_operator
from annotator.services.audit import record_event
from annotator.text import MAX_ID_CHARS, check_free_text, clean_name, is_blank

MAX_VERSION_LENGTH = 64
"""The longest version name accepted, in characters."""
MAX_GUIDELINE_CHARS = 1_000_000
"""The longest guideline text accepted, in characters (a document, longer than a rationale)."""


@dataclass(frozen=True)
class GuidelineView:
    """One published version of the guideline, as pages and the command line show it."""

    version: str
    markdown: str
    sha256: str  # of the Markdown text, UTF-8
    published_at: datetime  # timezone-aware UTC
    published_by: str  # the admin's user name

    @property
    def chars(self) -> int:
        """The text's length in characters."""
        return len(self.markdown)


def publish_guideline(session: Session, admin: Caller, version: str, markdown: str) -> GuidelineView:
    """Publish `markdown` as guideline `version`; from now on it is the current guideline, and
    labels saved from now on record `version`.

    admin: the admin who publishes (a User with the admin role; recorded as `published_by`).
    version: the version's name, e.g. "v2" or "2026-11"; NFC-normalized and stripped.
    markdown: the guideline's text (Markdown); NFC-normalized, line ends made "\\n".
    Returns the published version.
    Raises PermissionDeniedError unless `admin` is an active user with the admin role;
    InvalidValueError for the command line's operator (name the admin), an empty or too long
    version name or one with an invisible character, a version that exists already, an empty
    text or one holding a character no database can store, or the same text as the current
    version. Nothing is written then. One audit event records the publish.
    """
    if is_operator(admin):
        raise InvalidValueError.of("msg.guideline.no_admin")
    if "admin" not in caller_roles(admin):
        raise PermissionDeniedError.of("msg.guideline.admin_only")
    name = _check_version(version)
    text = _normalized(check_free_text("guideline", markdown, most=MAX_GUIDELINE_CHARS))
    if is_blank(text):
        raise InvalidValueError.of("msg.guideline.empty")
    taken = session.exec(select(Guideline.version).where(func.lower(Guideline.version) == name.lower())).first()
    if taken is not None:  # v2 and V2 would be two groups of one version in the agreement report
        if taken == name:
            raise InvalidValueError.of("msg.guideline.version_exists", version=name)
        raise InvalidValueError.of("msg.guideline.version_case", version=name, taken=taken)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    current = _current_row(session)
    if current is not None and current.sha256 == digest:
        raise InvalidValueError.of("msg.guideline.unchanged", version=current.version)
    row = Guideline(version=name, markdown=text, sha256=digest, published_at=utcnow(), published_by=admin.id)
    try:
        with session.begin_nested():  # another admin may publish the same version name at once
            session.add(row)
    except IntegrityError:
        raise InvalidValueError.of("msg.guideline.published_meanwhile", version=name) from None
    record_event(session, actor_pk=admin.id, entity="guideline", entity_pk=row.id, action="create",
                 after={"version": name, "sha256": digest, "chars": len(text)})
    return _view(row, admin.name)


def current_guideline(session: Session) -> GuidelineView | None:
    """The current guideline (the one published last), or None when none is published."""
    row = _current_row(session)
    return None if row is None else _view(row, _publisher(session, row))


def list_guidelines(session: Session) -> list[GuidelineView]:
    """Every published version, the current (newest) first."""
    rows = session.exec(select(Guideline, User.name).join(User, User.id == Guideline.published_by)
                        .order_by(Guideline.id.desc())).all()
    return [_view(row, name) for row, name in rows]


def get_guideline(session: Session, version: str) -> GuidelineView:
    """The published guideline `version`. Raises NotFoundError, naming the published versions."""
    name = unicodedata.normalize("NFC", version).strip()
    row = session.exec(select(Guideline).where(Guideline.version == name)).first()
    if row is None:
        known = [g.version for g in list_guidelines(session)]
        raise NotFoundError.of("msg.guideline.unknown", version=shortened(name, MAX_ID_CHARS),
                               known=", ".join(known) or msg("msg.guideline.none_yet"))
    return _view(row, _publisher(session, row))


def guideline_text(data: bytes, source: str) -> str:
    """The Markdown text of an uploaded or read guideline file's bytes.

    data: the file's bytes, UTF-8 with or without a byte order mark.
    source: the file's name, for the messages.
    Raises ImportFileError naming `source` when the bytes are not UTF-8 (saying where) or hold
    no text (empty or only blanks).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data:
        raise ImportFileError.of("msg.guideline.utf16", source=source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportFileError.of("msg.guideline.not_utf8", source=source, byte=f"0x{data[error.start]:02X}",
                                 position=error.start + 1) from None
    if not text.strip():
        raise ImportFileError.of("msg.guideline.empty_file", source=source)
    return text


def read_guideline_file(path: Path) -> str:
    """The Markdown text of the guideline file at `path` (the command line's `guideline publish`).
    Raises ImportFileError naming the file when it is missing, a folder, empty or not UTF-8."""
    if path.is_dir():
        raise ImportFileError(f"{path} is a folder, not a file: name the guideline's Markdown file")
    if not path.exists():
        raise ImportFileError(f"{path}: no such file. Check the path (relative paths start from the current folder)")
    if not path.is_file():
        raise ImportFileError(f"{path} is not a regular file: save the guideline to a file and name that file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ImportFileError(f"{path}: cannot be read ({error.strerror}). Check the file's permissions") from None
    return guideline_text(data, str(path))


def _check_version(version: str) -> str:
    name = clean_name(version)
    if not name:
        raise InvalidValueError.of("msg.guideline.version_empty")
    if len(name) > MAX_VERSION_LENGTH:
        raise InvalidValueError.of("msg.guideline.version_long", n=len(name), most=MAX_VERSION_LENGTH)
    return name


def _normalized(markdown: str) -> str:
    """NFC, \n line ends and one final line break (trailing blank lines and spaces at the end
    dropped): a text that differs from another only there is the same guideline. Spaces at the
    end of inner lines are kept: two of them are a line break in Markdown."""
    return unicodedata.normalize("NFC", markdown.replace("\r\n", "\n").replace("\r", "\n")).rstrip() + "\n"


def _current_row(session: Session) -> Guideline | None:
    return session.exec(select(Guideline).order_by(Guideline.id.desc()).limit(1)).first()


def _publisher(session: Session, row: Guideline) -> str:
    user = session.get(User, row.published_by)
    return "" if user is None else user.name


def _view(row: Guideline, publisher: str) -> GuidelineView:
    return GuidelineView(row.version, row.markdown, row.sha256, row.published_at, publisher)
