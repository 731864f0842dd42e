"""What every import shares: its report (`ImportReport`, `SkippedLine`, `skipped_lines_of`), its
counts (`Tally`), a reader's records streamed a chunk at a time (`stream`, `chunks`), rows
written in bulk (`bulk_insert`, `batches`: BATCH rows per statement or ids per IN list), the
refusal of an import that raced another one (`refused_when_concurrent`), the people its records
name (`PeopleSoFar`: created with a role, or given it) and the check of a dataset name. The
imports of cases, labels and adjudications stand on it; so may a new kind of import."""

from __future__ import annotations

import functools
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotator import formats
from annotator.bulk import collector_paused
from annotator.errors import ConcurrentImportError, ImportRowError, InvalidValueError
from annotator.formats.kinds import kind
from annotator.messages import Joined, MESSAGES, Message, Term, msg, recognize
from annotator.models import User
from annotator.services.users import KnownNames, ensure_user
from annotator.text import MAX_ID_CHARS, only_case_differs


BATCH = 500
"""Rows per INSERT statement and ids per IN (...) list: well under SQLite's variable limit."""


DEFAULT_DATASETS: dict[str, str] = dict(kind("cases").default_datasets)
"""The dataset a case import goes to when none is named, by file format (the registry, formats.kinds)."""


KINDS = ("new", "unchanged", "updated")
T = TypeVar("T")


@dataclass(frozen=True)
class ImportReport:
    """What an import read and did.

    counts: kind ("cases", "claims", "passages", "labels", "adjudications") -> {"new": n,
        "unchanged": n, "updated": n}. created_users: names created by this import, all with
    `created_role` and no password. given_role_users: existing people who lacked `given_role`
    (labeler or adjudicator) and were given it by this import. skipped: reason -> how many
    records were skipped (vote-mode adjudications only). skipped_lines: the bad lines a partial
    import (`--partial`) left out, each with file, line, field and reason. warnings: lines to show
    (unknown columns, claims marked changed). labels_to_review: labels this import (`--update`)
    marked for review, made before the text or passages of their claim changed
    (workflow.label_to_review): each is back in its labeler's queue until saved again; a claim
    with two or more labels is stale while any of them is to review, until they are saved again or
    an adjudicator decides the claim (a claim with one label stays single: workflow.claim_state).
    For an importing admin who still has claims to label, those claims' labels are not counted
    (the blind rule, services/blind.py); the command line counts them all.
    """

    path: str
    format: str
    encoding: str
    dataset: str | None
    counts: dict[str, dict[str, int]]
    created_users: tuple[str, ...] = ()
    created_role: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    given_role_users: tuple[str, ...] = ()
    given_role: str | None = None
    skipped_lines: tuple[SkippedLine, ...] = ()
    labels_to_review: int = 0
    reading_notes: tuple[Message, ...] = ()
    """What the reader made of the file (formats.Source.notes; RAGAS: where its case ids and
    claims came from), shown first among the notes."""

    def total(self, kind: str) -> int:
        """How many records of `kind` the file held (new + unchanged + updated)."""
        return sum(self.counts.get(kind, {}).values())

    def summary(self) -> str:
        """The human lines the command line prints (`summary_lines`, joined by newlines)."""
        return "\n".join(self.summary_lines())

    def summary_lines(self) -> list[str]:
        """The summary as lines, e.g. "Read climate-fever.jsonl as UTF-8 (climate-fever) into
        dataset 'climate-fever': 1,535 cases, 7,675 claims, ...", one line of counts per kind
        ("  claims: 0 new, 7,675 unchanged, 0 updated"), the users created, the existing users given
        a role ("Gave role labeler to mika ..."), skips and warnings: the English texts of
        `summary_messages`."""
        return [str(line) for line in self.summary_messages()]

    def summary_messages(self) -> list[Message | str]:
        """The summary's lines as messages (annotator/messages.py), for the app to write in the
        user's language: `headline`, the counts per kind, `notes`, the lines skipped and the
        warnings (`warning_messages`)."""
        lines: list[Message | str] = [self.headline()]
        lines += [msg("msg.import.report.counts", kind=self.kind_name(kind), **{k: counts.get(k, 0) for k in KINDS})
                  for kind, counts in self.counts.items()]
        lines += self.notes()
        if self.skipped_lines:
            n = len(self.skipped_lines)
            lines.append(msg("msg.import.report.skipped_lines" if n > 1 else "msg.import.report.skipped_line", n=n))
            lines += [msg("msg.import.report.skipped_entry", line=skipped.message()) for skipped in self.skipped_lines]
        lines += [msg("msg.import.report.warning", warning=warning) for warning in self.warning_messages()]
        return lines

    def warning_messages(self) -> list[Message | str]:
        """The warnings (English texts) as their messages (msg.import.warn.*, found again by
        messages.recognize), for the app to write in the user's language; a warning that is none
        of them as it is."""
        return [recognize(warning, "msg.import.warn.") or warning for warning in self.warnings]

    @staticmethod
    def kind_name(kind: str) -> Message | str:
        """A kind of record of the counts ("cases", "claims", "passages", "labels",
        "adjudications") as a message field; another kind as it is."""
        key = f"msg.import.kind.{kind}"
        return msg(key) if key in MESSAGES else kind

    def headline(self) -> Message:
        """The summary's first line: "Read FILE as ENCODING (FORMAT) into dataset 'D': 2 cases, ..."."""
        totals = Joined(tuple(msg("msg.import.report.total", n=self.total(kind), kind=self.kind_name(kind))
                              for kind in self.counts))
        encoding = msg("msg.import.encoding.utf8_bom") if self.encoding == formats.UTF8_BOM else self.encoding
        read = dict(file=Path(self.path).name, encoding=encoding, format=self.format, totals=totals)
        if self.dataset:
            return msg("msg.import.report.read_into", dataset=self.dataset, **read)
        return msg("msg.import.report.read", **read)

    def notes(self) -> list[Message]:
        """The summary's lines between the counts and the lines skipped: the users created, the
        existing users given a role, the labels marked for review, the claims skipped (vote mode);
        first, what the reader made of the file (`reading_notes`)."""
        notes = list(self.reading_notes)
        if self.created_users:
            key = "msg.import.report.created_users" if len(self.created_users) > 1 else "msg.import.report.created_user"
            notes.append(msg(key, names=", ".join(self.created_users), role=Term("role", self.created_role or "")))
        if self.given_role_users:
            key = "msg.import.report.gave_role_many" if len(self.given_role_users) > 1 else "msg.import.report.gave_role_one"
            notes.append(msg(key, role=Term("role", self.given_role or ""), names=", ".join(self.given_role_users)))
        if self.labels_to_review:
            key = "msg.import.report.to_review_one" if self.labels_to_review == 1 else "msg.import.report.to_review_many"
            notes.append(msg(key, n=self.labels_to_review))
        notes += [msg("msg.import.report.skipped_claims", n=count, reason=_skip_reason(reason))
                  for reason, count in sorted(self.skipped.items())]
        return notes


def _skip_reason(reason: str) -> Message | str:
    """A reason a vote-mode import skipped claims (a key of ImportReport.skipped, English text) as
    its message, the claim's state a vocabulary word; the text as it is when it is none of them."""
    found = recognize(reason, "msg.import.skip.")
    if found is None or "state" not in found.fields:
        return found or reason
    return msg(found.key, state=Term("state", str(found.fields["state"])))


class Tally:
    """Counts new / unchanged / updated records per kind while an import is planned."""

    def __init__(self, *kinds: str):
        self.counts: dict[str, Counter[str]] = {kind: Counter() for kind in kinds}

    def add(self, kind: str, outcome: str, n: int = 1) -> None:
        self.counts[kind][outcome] += n

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {kind: {k: counts[k] for k in KINDS} for kind, counts in self.counts.items()}


_UNIQUE_VIOLATION = "23505"
"""PostgreSQL's SQLSTATE unique_violation."""


def refused_when_concurrent(kind: str) -> Callable[[Callable[..., ImportReport]], Callable[..., ImportReport]]:
    """An import (of `kind`: "cases", "labels", "adjudications") that raises ConcurrentImportError
    when another transaction inserted the same rows first (PostgreSQL: this one waited on the
    unique index, then hit unique_violation). The caller's session_scope rolls everything of it
    back; SQLite serializes writers (BEGIN IMMEDIATE), so there a second import runs after the first."""

    def decorate(function: Callable[..., ImportReport]) -> Callable[..., ImportReport]:
        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> ImportReport:
            try:
                return function(*args, **kwargs)
            except IntegrityError as error:
                if getattr(error.orig, "sqlstate", None) != _UNIQUE_VIOLATION:
                    raise
                raise ConcurrentImportError.of("msg.import.concurrent", kind=msg(f"msg.import.kind.{kind}")) from None

        return guarded

    return decorate


def skipped_lines_of(skips: formats.Skips | None) -> tuple[SkippedLine, ...]:
    """The lines a partial import skipped, in file order (the report's `skipped_lines`)."""
    return tuple(SkippedLine.of(error) for error in sorted(skips.errors if skips else (), key=lambda error: error.line or 0))


def stream(source: formats.Source[T], size: int, add: Callable[[list[T]], None],
           progress: Callable[[int, int], None] | None = None) -> None:
    """Feed the records of `source` to add(chunk), `size` records at a time, the garbage collector
    run once per chunk (`bulk.collector_paused`); progress(bytes_read, file_size) after each chunk
    and at the end. Every streamed import (cases, labels, adjudications) reads its file this way."""
    with collector_paused() as collect:
        for chunk in chunks(source.records, size):
            add(chunk)
            collect()
            if progress is not None:
                progress(source.position.bytes_read, source.position.size)
    if progress is not None:
        progress(source.position.size, source.position.size)  # blank lines after the last record: read too


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last one shorter), read as they are asked for."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@dataclass(frozen=True)
class SkippedLine:
    """A line a partial import skipped (or a refused file's bad line): where, which field, and why
    (problem and what to do). `reason` is the English text ("problem. fix"), `reason_message` the
    same as a message (msg.import.reason: set by `of`, for the app to write in the user's language;
    left out of comparisons, which the English text decides)."""

    path: str
    line: int | None
    field: str | None
    reason: str
    reason_message: Message | None = field(default=None, compare=False)

    @classmethod
    def of(cls, error: ImportRowError) -> SkippedLine:
        """The line `error` refused."""
        reason = msg("msg.import.reason", problem=error.problem, fix=error.fix)
        return cls(error.path, error.line, error.field, str(reason), reason)

    def said(self) -> Message | str:
        """Why the line is refused, as a message when there is one (else the English text)."""
        return self.reason_message or self.reason

    def message(self) -> Message:
        """The whole line as a message: "FILE, line N, field 'F': problem. fix"."""
        return msg("msg.import.row", where=formats.where_message(self.path, self.line, self.field), reason=self.said())

    def __str__(self) -> str:
        return str(self.message())


def check_dataset_name(dataset: str | None) -> None:
    """Raises InvalidValueError for a dataset name (`--dataset`) that is blank, has spaces around
    it or is longer than text.MAX_ID_CHARS."""
    if dataset is None:
        return
    if len(dataset) > MAX_ID_CHARS:
        raise InvalidValueError.of("msg.import.option.dataset_too_long", n=len(dataset), most=MAX_ID_CHARS)
    if not dataset.strip():
        raise InvalidValueError.of("msg.import.option.dataset_blank", name=repr(dataset))
    if dataset != dataset.strip():
        raise InvalidValueError.of("msg.import.option.dataset_spaces", name=repr(dataset), stripped=repr(dataset.strip()))


SHOWN_CHARACTERS = 60
"""A stored or new text longer than this is cut in error messages."""


def differences(stored: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], Joined]:
    """The names of the fields whose values differ, and each shown as "label 'contradict' in the
    database, 'support' in this file" (messages joined by "; ")."""
    differing = [name for name in new if stored.get(name) != new[name]]
    shown = Joined(tuple(msg("msg.import.problem.difference", name=name, stored=_shown(stored.get(name)),
                             new=_shown(new[name])) for name in differing), "; ")
    return differing, shown


def _shown(value: Any) -> Message | str:
    if value is None or value in ("", ()):
        return msg("msg.import.problem.empty_value")
    text = "; ".join(map(str, value)) if isinstance(value, tuple | list) else str(value)
    if len(text) > SHOWN_CHARACTERS:
        text = text[:SHOWN_CHARACTERS - 1] + "\u2026"
    return f"'{text}'"


@dataclass(frozen=True)
class People:
    """The people an import's records name: name -> user pk, the names created (with `role`, no
    password) and the names of existing people who lacked `role` and were given it."""

    role: str
    pks: dict[str, int]
    created: tuple[str, ...]
    given_role: tuple[str, ...]

    def report(self, path: str, fmt: str, encoding: str, dataset: str | None, counts: dict[str, dict[str, int]],
               skipped: dict[str, int], warnings: Iterable[str]) -> ImportReport:
        return ImportReport(path, fmt, encoding, dataset, counts, self.created, self.role if self.created else None,
                            skipped, tuple(warnings), self.given_role, self.role if self.given_role else None)


def _ensure_users(session: Session, names: list[str], role: str, known: KnownNames | None = None) -> People:
    """The user pk of every name, creating unknown people with `role` and no password
    (`ensure_user`: safe when imports run at once; it also gives a known person lacking `role`
    that role, which is noted so that the report says so)."""
    lacking = set()
    for batch in batches(names):
        for name, roles in session.exec(select(User.name, User.roles).where(User.name.in_(batch))):
            if role not in roles.split(","):
                lacking.add(name)
    pks, created = {}, []
    for name in names:
        user, is_new = ensure_user(session, name, role, known)
        pks[name] = user.id
        if is_new:
            created.append(name)
    return People(role, pks, tuple(created), tuple(name for name in names if name in lacking))


class PeopleSoFar:
    """The people a streamed import names, gathered chunk by chunk: name -> user pk, and the names
    created with `role` or given it (`_ensure_users`), for the report (`people`)."""

    def __init__(self, session: Session, role: str, path: str):
        self.session, self.role, self.path = session, role, path
        self._pks: dict[str, int] = {}
        self._created: list[str] = []
        self._given: list[str] = []
        self._first_lines: dict[str, int] = {}  # name -> the line that named it first (`add`)
        self._checked: set[str] = set()  # names `check` let pass since the last user was created
        self._known: KnownNames | None = None  # the users' names, read at the first `check` (`known`)

    def known(self) -> KnownNames:
        """The users' names (users.KnownNames), read once per import and kept up to date with the
        people it creates: one skeleton per new name, not one query or skeleton per row."""
        if self._known is None:
            self._known = KnownNames.of(self.session)
        return self._known

    def check(self, name: str, line: int, field_name: str) -> None:
        """Raises ImportRowError naming the line and field when `name` differs only in case from
        the name of a user, or looks like it (one this import created from an earlier line
        included): the rule of `annotator users add` (users.taken_name), so that one person
        never gets two accounts."""
        if name in self._pks or name in self._checked:
            return
        taken = self.known().taken(name)
        if taken is None or taken == name:
            self._checked.add(name)
            return
        earlier = self._first_lines.get(taken)
        whose = (msg("msg.import.problem.created_for_line", line=earlier)
                 if earlier is not None and taken in self._created else "")
        if only_case_differs(name, taken):
            problem = msg("msg.import.problem.name_case", role=Term("role", self.role), name=name, taken=taken,
                          whose=whose)
            fix = msg("msg.import.fix.existing_name", taken=taken)
        else:
            problem = msg("msg.import.problem.name_looks_like", role=Term("role", self.role), name=name, taken=taken,
                          whose=whose)
            fix = msg("msg.import.fix.lookalike_name", taken=taken)
        raise ImportRowError(self.path, line, field_name, problem, fix)

    def add(self, name: str, line: int) -> None:
        """Know `name` from now on (created or given the role at once, `pks`), so that `check`
        refuses another spelling of it on a later line; `line` named it first."""
        if name not in self._pks:
            self._first_lines[name] = line
            self.pks([name])

    def pks(self, names: Iterable[str]) -> dict[str, int]:
        """name -> user pk for every name seen so far, `names` ensured (created or given the role)."""
        missing = sorted(set(names) - self._pks.keys())
        if missing:
            people = _ensure_users(self.session, missing, self.role, self.known())
            self._pks.update(people.pks)
            self._created += people.created
            self._given += people.given_role
            if people.created:
                self._checked.clear()  # a name checked before may now differ only in case from a new one
        return self._pks

    def people(self) -> People:
        return People(self.role, dict(self._pks), tuple(sorted(self._created)), tuple(sorted(self._given)))


def bulk_insert(session: Session, model: Any, rows: list[dict[str, Any]]) -> None:
    """Bulk insert, every row with the same keys. SQLite: one executemany of all rows through the
    driver (each row binds its own parameters, so the variable limit does not apply), with the
    columns' own bind processors (datetimes, JSON) applied once per distinct value object. Other
    databases: SQLAlchemy Core, BATCH rows per executemany. (Measured here on 15,000 events:
    executemany 0.7 s on PostgreSQL, 0.5 s on SQLite; multi-row VALUES with RETURNING 1.0-1.3 s
    on PostgreSQL, where psycopg re-parses each long statement.)"""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    if dialect.name != "sqlite":
        for batch in batches(rows):
            session.exec(insert(model.__table__), params=list(batch))
        return
    table, names = model.__table__, list(rows[0])
    quote = dialect.identifier_preparer.quote
    sql = (f"INSERT INTO {dialect.identifier_preparer.format_table(table)} ({', '.join(quote(name) for name in names)}) "
           f"VALUES ({', '.join('?' for _ in names)})")
    columns = []
    for name in names:
        values = [row[name] for row in rows]
        process = table.c[name].type.bind_processor(dialect)
        if process is not None:
            first = values[0]
            if all(value is first for value in values):  # the import's one timestamp: convert it once
                converted = process(first)
                if isinstance(converted, datetime) and dialect.driver == "pysqlite":
                    converted = sqlite3.adapt(converted)  # the text the driver binds it as, made once, not per row
                values = [converted] * len(values)
            else:
                values = [process(value) for value in values]
        columns.append(values)
    connection.exec_driver_sql(sql, list(zip(*columns)))


def batches(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """`items` in slices of BATCH (rows per INSERT statement, ids per IN list)."""
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]
