"""Imports into the database: cases (native JSONL, flat CSV, CLIMATE-FEVER, optionally with its
votes as labels), labels and adjudications.

Every function works in the caller's session, whose `session_scope` makes the import ONE
transaction: a refusal (`ImportRowError` naming file, line and field) rolls back everything,
however late in the file. Case imports stream: CHUNK_CASES cases at a time are read, checked,
compared with what the dataset holds of their ids (one query per table and BATCH ids), and
written in bulk (one executemany per table; generated keys fetched back per table, never one
row at a time). Label and adjudication imports (CSV or JSONL) stream the same way (`_stream`),
CHUNK_ROWS rows at a time. With `partial`, a bad line is skipped and listed instead
(`formats.skipping`, the one place that turns a refusal into a skip).

CLIMATE-FEVER: Diggelmann et al. (2020), arXiv:2012.00614.
"""

from __future__ import annotations

import functools
import itertools
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import delete, func, insert, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotator import formats
from annotator.bulk import collector_paused
from annotator.errors import AnnotatorError, ConcurrentImportError, ImportFileError, ImportRowError, InvalidValueError, PermissionDeniedError
from annotator.messages import MESSAGES, Joined, Message, Term, english, msg, recognize
from annotator.services.access import Caller, require
from annotator.workflow import Permission
from annotator.formats import AdjudicationRecord, CaseRecord, ClaimRecord, LabelRecord, PassageRecord
from annotator.models import (
    Adjudication, Case, Claim, ClaimPassage, Dataset, Label, Passage, User, utcnow,
)
from annotator.db import refresh_statistics
from annotator.services.audit import event_row, record_event, record_events
from annotator.services.blind import claims_still_to_label
from annotator.services.lookup import get_dataset
from annotator.services.states import claim_states
from annotator.services.users import KnownNames, ensure_user
from annotator.text import MAX_ID_CHARS, only_case_differs
from annotator.vocabulary import SLICES
from annotator.workflow import State

BATCH = 500
"""Rows per INSERT statement and ids per IN (...) list: well under SQLite's variable limit."""

DEFAULT_DATASETS: dict[str, str] = {"jsonl": "default", "csv": "default", "climate-fever": "climate-fever"}
"""The dataset an import goes to when none is named, by file format."""

ADJUDICABLE: frozenset[State] = frozenset({State.DISPUTED, State.STALE})

KINDS = ("new", "unchanged", "updated")
T = TypeVar("T")


# ---------------------------------------------------------------- the report


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
        existing users given a role, the labels marked for review, the claims skipped (vote mode)."""
        notes = []
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


class _Tally:
    """Counts new / unchanged / updated records per kind while an import is planned."""

    def __init__(self, *kinds: str):
        self.counts: dict[str, Counter[str]] = {kind: Counter() for kind in kinds}

    def add(self, kind: str, outcome: str, n: int = 1) -> None:
        self.counts[kind][outcome] += n

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {kind: {k: counts[k] for k in KINDS} for kind, counts in self.counts.items()}


# ---------------------------------------------------------------- import_cases


_UNIQUE_VIOLATION = "23505"
"""PostgreSQL's SQLSTATE unique_violation."""


def _refused_when_concurrent(kind: str) -> Callable[[Callable[..., ImportReport]], Callable[..., ImportReport]]:
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


@_refused_when_concurrent("cases")
def import_cases(
    session: Session,
    actor: Caller,
    path: str | Path,
    *,
    fmt: str = "auto",
    dataset: str | None = None,
    with_votes: bool = False,
    first_votes: int | None = None,
    update: bool = False,
    partial: bool = False,
    slices: Iterable[str] = (),
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import a case file into `dataset` (created when missing).

    path: a native JSONL, flat CSV or CLIMATE-FEVER file (see `annotator.formats`); fmt: "auto",
        "jsonl", "csv" or "climate-fever". dataset: default "default" (native, CSV) or
        "climate-fever". with_votes: CLIMATE-FEVER vote slot j becomes a label by cf-vote-{j+1};
        first_votes=N: the k-th non-null vote becomes a label by cf-vote-{k}, k = 1..N.
    update: replace cases, claims, passages and vote labels whose content differs from the
        database (claims get a new updated_at, so adjudicated ones become stale and the labels
        written before are to review, workflow.label_to_review, counted in the report's
        `labels_to_review`; every change is recorded in the audit trail); without it such a
        difference is an error.
    partial: skip the bad lines (each is listed in the report's `skipped_lines`: file, line,
        field, reason) and import the others; without it one bad line refuses the whole file.
    slices: slice names declared for this import (`--slices`), known besides `vocabulary.SLICES`
        and the slices the dataset already uses; any other slice is refused (a typo).
    progress: called as progress(bytes_read, file_size) after each chunk of cases.
    Re-importing the same file changes nothing ("0 new, N unchanged").

    Streams: the file is read, checked and written CHUNK_CASES cases at a time, in the caller's
    transaction, so a refusal late in the file still leaves nothing. Memory holds the ids seen and
    a digest of each (formats.Seen), not the records.
    Raises ImportFileError (missing, empty, UTF-16 or not a regular file), ImportRowError (a bad
    line, an unknown slice, or an id already stored with other content), InvalidValueError (a
    blank or space-padded dataset name, vote options on a non-CLIMATE-FEVER file).
    """
    require(actor, Permission.IMPORT)
    check_dataset_name(dataset)
    skips = formats.Skips() if partial else None
    source = formats.read_cases(path, fmt, skips=skips)
    _check_vote_options(source.format, with_votes, first_votes)
    name = dataset or DEFAULT_DATASETS[source.format]
    found = session.exec(select(Dataset).where(Dataset.name == name)).first()
    run = _CaseImport(session, source.path, source.format, name, found.id if found else None, update, skips,
                      _votes_picker(with_votes, first_votes), _known_slices(session, found.id if found else None, slices))
    _stream(source, CHUNK_CASES, run.add, progress)
    if run.cases_read == 0 and not skips:
        raise ImportFileError.of("msg.import.file.no_cases", path=str(source.path))
    refresh_statistics(session)
    warnings = list(source.warnings) + run.warnings()
    people = run.people()
    return replace(people.report(source.path, source.format, source.encoding, name, run.tally.as_dict(), {}, warnings),
                   skipped_lines=_skipped_lines(skips),
                   labels_to_review=run.labels_to_review(claims_still_to_label(session, actor)))


def _skipped_lines(skips: formats.Skips | None) -> tuple[SkippedLine, ...]:
    """The lines a partial import skipped, in file order (the report's `skipped_lines`)."""
    return tuple(SkippedLine.of(error) for error in sorted(skips.errors if skips else (), key=lambda error: error.line or 0))


CHUNK_CASES = 2_000
"""Cases read, checked and written together: bounds memory, keeps statements large."""


def _stream(source: formats.Source[T], size: int, add: Callable[[list[T]], None],
            progress: Callable[[int, int], None] | None = None) -> None:
    """Feed the records of `source` to add(chunk), `size` records at a time, the garbage collector
    run once per chunk (`bulk.collector_paused`); progress(bytes_read, file_size) after each chunk
    and at the end. Every streamed import (cases, labels, adjudications) reads its file this way."""
    with collector_paused() as collect:
        for chunk in _chunks(source.records, size):
            add(chunk)
            collect()
            if progress is not None:
                progress(source.position.bytes_read, source.position.size)
    if progress is not None:
        progress(source.position.size, source.position.size)  # blank lines after the last record: read too


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _known_slices(session: Session, dataset_pk: int | None, declared: Iterable[str]) -> frozenset[str]:
    """The slices an import may use: vocabulary.SLICES, the dataset's own, and those declared."""
    used = set() if dataset_pk is None else set(session.exec(select(Case.slice).where(Case.dataset_id == dataset_pk).distinct()))
    return frozenset(SLICES) | used | {name.strip() for name in declared if name.strip()}


def _votes_picker(with_votes: bool, first_n: int | None) -> Callable[[tuple[str | None, ...]], list[tuple[str, str]]] | None:
    if not with_votes and first_n is None:
        return None
    return formats.slot_votes if with_votes else (lambda votes: formats.first_votes(votes, first_n or 0))


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


def _check_vote_options(fmt: str, with_votes: bool, first_votes: int | None) -> None:
    if with_votes and first_votes is not None:
        raise InvalidValueError.of("msg.import.option.votes_both")
    if (with_votes or first_votes is not None) and fmt != "climate-fever":
        raise InvalidValueError.of("msg.import.option.votes_not_climate_fever", fmt=fmt)
    if first_votes is not None and not 1 <= first_votes <= 5:
        raise InvalidValueError.of("msg.import.option.first_votes_range", n=first_votes)


@dataclass(frozen=True)
class _Found:
    """A record as stored: its pk, content (as the file's record gives it) and when that stored
    version was last written (its updated_at: the first import, or a later `--update`)."""

    pk: int
    content: dict[str, Any]
    written_at: datetime | None = None


@dataclass
class _ChunkStored:
    """What the dataset holds of one chunk's ids: id -> _Found."""

    cases: dict[str, _Found] = field(default_factory=dict)
    claims: dict[str, _Found] = field(default_factory=dict)
    passages: dict[str, _Found] = field(default_factory=dict)
    labels: dict[tuple[Any, str], _StoredLabel] = field(default_factory=dict)  # (claim pk, labeler) -> label
    adjudicators: dict[int, str] = field(default_factory=dict)  # claim pk -> adjudicator's name


def _case_content(question: str, answer: str, slice_: str, split: str, meta: dict | None) -> dict[str, Any]:
    return {"question": question, "answer": answer, "slice": slice_, "split": split, "metadata": meta or {}}


def _passage_content(doc_id: str, version: str, title: str, text: str) -> dict[str, str]:
    return {"doc_id": doc_id, "version": version, "title": title, "text": text}


def _claim_content(case_id: str, claim: ClaimRecord) -> dict[str, Any]:
    return {"case_id": case_id, "text": claim.text, "passage_ids": list(claim.passage_ids)}


@dataclass
class _CasePlan:
    """What one chunk of an import writes: new records, and changed ones with their stored pk and
    content before the change."""

    new_passages: dict[str, PassageRecord] = field(default_factory=dict)
    changed_passages: list[tuple[int, dict[str, Any], PassageRecord]] = field(default_factory=list)
    new_cases: list[CaseRecord] = field(default_factory=list)
    changed_cases: list[tuple[int, dict[str, Any], CaseRecord]] = field(default_factory=list)
    new_claims: list[tuple[str, int, ClaimRecord]] = field(default_factory=list)  # case_id, position, claim
    changed_claims: list[tuple[int, dict[str, Any], str, int, ClaimRecord]] = field(default_factory=list)
    votes: list[_LabelItem] = field(default_factory=list)
    handled_passages: set[str] = field(default_factory=set)


class _CaseImport:
    """One import of cases, fed chunk by chunk (`add`): each chunk is compared with what the
    dataset holds of its ids (one query per table and BATCH ids), checked, and written in bulk.
    Holds only counts, the people it created and the next case position between chunks."""

    def __init__(self, session: Session, path: str, fmt: str, dataset: str, dataset_pk: int | None, update: bool,
                 skips: formats.Skips | None, pick_votes: Callable[[tuple[str | None, ...]], list[tuple[str, str]]] | None,
                 known_slices: frozenset[str]):
        self.session, self.path, self.fmt, self.dataset, self.dataset_pk = session, path, fmt, dataset, dataset_pk
        self.update, self.skips, self.pick_votes, self.known_slices = update, skips, pick_votes, known_slices
        self.fresh = dataset_pk is None  # created by this import: nothing stored but what it wrote
        self.tally = _Tally("cases", "claims", "passages", *(("labels",) if pick_votes else ()))
        self.cases_read, self.touched = 0, 0
        self.changed_claims: set[int] = set()  # claims whose text or passages this import changed
        self.now = utcnow()
        self.next_position = 0 if dataset_pk is None else (session.exec(
            select(func.max(Case.position)).where(Case.dataset_id == dataset_pk)).one() or -1) + 1
        self._people = _PeopleSoFar(session, "labeler", path)

    # ---- reading and checking

    def add(self, cases: list[CaseRecord]) -> None:
        self.cases_read += len(cases)
        stored = self._stored(cases)
        plan = _CasePlan()
        for outcomes in formats.skipping(cases, lambda case: self._check_case(case, stored, plan), self.skips):
            for kind, outcome in outcomes:
                self.tally.add(kind, outcome)
        if self.dataset_pk is None and (plan.new_cases or plan.new_passages):
            self.dataset_pk = _create_dataset(self.session, self.dataset, self.fmt, self.now)
        self._write(plan, stored)

    def _check_case(self, case: CaseRecord, stored: _ChunkStored, plan: _CasePlan) -> list[tuple[str, str]]:
        """Compare a case, its passages and claims with the database; plan the writes only when
        all of it passes (a partial import skips the whole line). Returns the counts to add."""
        if case.slice and case.slice not in self.known_slices:
            raise ImportRowError(self.path, case.line, "slice",
                                 msg("msg.import.problem.unknown_slice", slice=repr(case.slice),
                                     known=", ".join(sorted(self.known_slices))),
                                 msg("msg.import.fix.declare_slice", slice=case.slice))
        outcomes: list[tuple[str, str]] = []
        passages: list[tuple[str, Any, PassageRecord]] = []
        seen_here: set[str] = set()
        for passage in case.passages:
            pid = passage.passage_id
            if pid in plan.handled_passages or pid in seen_here:
                continue
            seen_here.add(pid)
            found = stored.passages.get(pid)
            outcome = self._compare("passage", pid, passage.content(), found, passage.line, passage.field_of, None)
            if outcome == "unchanged" and not passage.first:
                outcome = ""  # the file gave it before: counted there
            passages.append((outcome, found, passage))
        found_case = stored.cases.get(case.case_id)
        case_outcome = self._compare("case", case.case_id, case.content(), found_case, case.line, lambda key: key,
                                     found_case.written_at if found_case else None)
        claims = []
        for position, claim in enumerate(case.claims):
            found = stored.claims.get(claim.claim_id)
            content = _claim_content(case.case_id, claim)
            claims.append((self._compare("claim", claim.claim_id, content, found, claim.line, claim.field_of,
                                         found.written_at if found else None), found, position, claim))
        votes = self._votes(case, stored)
        # all checks passed: plan
        for outcome, found, passage in passages:
            plan.handled_passages.add(passage.passage_id)
            if outcome == "new":
                plan.new_passages[passage.passage_id] = passage
            elif outcome == "updated":
                plan.changed_passages.append((found.pk, found.content, passage))
            if outcome:
                outcomes.append(("passages", outcome))
        if case_outcome == "new":
            plan.new_cases.append(case)
        elif case_outcome == "updated":
            plan.changed_cases.append((found_case.pk, found_case.content, case))
        outcomes.append(("cases", case_outcome))
        for outcome, found, position, claim in claims:
            if outcome == "new":
                plan.new_claims.append((case.case_id, position, claim))
            elif outcome == "updated":
                plan.changed_claims.append((found.pk, found.content, case.case_id, position, claim))
            outcomes.append(("claims", outcome))
        plan.votes += [item for item in votes if item.stored is not _UNCHANGED_LABEL]
        outcomes += [("labels", "unchanged" if item.stored is _UNCHANGED_LABEL else "updated" if item.stored else "new")
                     for item in votes]
        return outcomes

    def _compare(self, noun: str, key: str, content: dict[str, Any], found: _Found | None, line: int,
                 field_of: Callable[[str], str], since: datetime | None) -> str:
        """"new", "unchanged" or "updated". Raises ImportRowError naming the file's line and field
        path, the dataset, when the stored version was last written (`since`: first imported or
        replaced by an `--update`), and both values, unless `update`."""
        if found is None:
            return "new"
        if found.content == content:
            return "unchanged"
        if not self.update:
            differing, shown = _differences(found.content, content)
            when = msg("msg.import.problem.stored_when", time=f"{since:%Y-%m-%d %H:%M}") if since is not None else ""
            noun_said = msg(f"msg.import.noun.{noun}")
            raise ImportRowError(
                self.path, line, field_of(differing[0]),
                msg("msg.import.problem.stored_other", noun=noun_said, id=key, dataset=self.dataset, when=when,
                    fields=", ".join(differing), shown=shown),
                msg("msg.import.fix.update_or_new_id", noun=noun_said),
            )
        return "updated"

    def _votes(self, case: CaseRecord, stored: _ChunkStored) -> list[_LabelItem]:
        """The case's CLIMATE-FEVER votes to import as labels, each with its stored label
        (`_UNCHANGED_LABEL` when the same). Raises ImportRowError for a voter who adjudicated the
        claim, or a stored label with other content (without `update`)."""
        if self.pick_votes is None:
            return []
        items = []
        for claim in case.claims:
            found = stored.claims.get(claim.claim_id)
            for labeler, value in self.pick_votes(claim.votes):
                self._people.check(labeler, claim.line, "votes")
                item = _LabelItem(claim.claim_id, claim.claim_id, labeler, value, claim.line)
                if found is None:
                    items.append(item)
                    continue
                if stored.adjudicators.get(found.pk) == labeler:
                    raise ImportRowError(self.path, claim.line, "votes",
                                         msg("msg.import.problem.voter_adjudicated", labeler=labeler,
                                             claim_id=claim.claim_id), msg("msg.import.fix.fewer_votes"))
                label = stored.labels.get((found.pk, labeler))
                if label is None:
                    items.append(item)
                elif label.content() == item.content():
                    items.append(replace(item, stored=_UNCHANGED_LABEL))
                elif not self.update:
                    raise _label_stored_other(self.path, claim.line, labeler, claim.claim_id, label.fields(), item.fields())
                else:
                    items.append(replace(item, stored=label))
        return items

    def _stored(self, cases: list[CaseRecord]) -> _ChunkStored:
        """What the dataset holds of the chunk's ids. A dataset this import created holds only what
        it wrote, and the reader drops repeats, so only passages given again are looked up there."""
        stored = _ChunkStored()
        if self.dataset_pk is None:
            return stored
        session, dataset_pk = self.session, self.dataset_pk
        passage_ids = sorted({p.passage_id for case in cases for p in case.passages if not (self.fresh and p.first)})
        for batch in _batches(passage_ids):
            for row in session.exec(select(Passage.passage_id, Passage.id, Passage.doc_id, Passage.version, Passage.title,
                                           Passage.text).where(Passage.dataset_id == dataset_pk, Passage.passage_id.in_(batch))):
                stored.passages[row[0]] = _Found(row[1], _passage_content(*row[2:]))
        if self.fresh:
            return stored
        for batch in _batches([case.case_id for case in cases]):
            for row in session.exec(select(Case.case_id, Case.id, Case.question, Case.answer, Case.slice, Case.split, Case.meta,
                                           Case.updated_at).where(Case.dataset_id == dataset_pk, Case.case_id.in_(batch))):
                stored.cases[row[0]] = _Found(row[1], _case_content(*row[2:7]), row[7])
        claim_rows = []
        for batch in _batches([claim.claim_id for case in cases for claim in case.claims]):
            claim_rows += session.exec(select(Claim.claim_id, Claim.id, Case.case_id, Claim.text, Claim.updated_at)
                                       .join(Case, Case.id == Claim.case_pk)
                                       .where(Claim.dataset_id == dataset_pk, Claim.claim_id.in_(batch))).all()
        shown = _shown_passages(session, [row[1] for row in claim_rows])
        for claim_id, pk, case_id, text, written_at in claim_rows:
            stored.claims[claim_id] = _Found(pk, {"case_id": case_id, "text": text, "passage_ids": shown.get(pk, [])}, written_at)
        if self.pick_votes is not None:
            claim_pks = [found.pk for found in stored.claims.values()]
            stored.labels = _stored_labels_by_claim_pk(session, claim_pks)
            stored.adjudicators = {pk: name for pk, (_, name, *_rest) in _stored_adjudications(session, claim_pks).items()}
        return stored

    # ---- writing

    def _write(self, plan: _CasePlan, stored: _ChunkStored) -> None:
        session, dataset_pk = self.session, self.dataset_pk
        passage_pks = {pid: found.pk for pid, found in stored.passages.items()}
        passage_pks.update(self._insert_new(Passage, Passage.passage_id, [
            {"dataset_id": dataset_pk, "passage_id": p.passage_id, **p.content()} for p in plan.new_passages.values()]))
        for pk, _before, passage in plan.changed_passages:
            session.exec(update(Passage).where(Passage.id == pk).values(**passage.content()))
        case_pks = {case_id: found.pk for case_id, found in stored.cases.items()}
        case_pks.update(self._insert_new(Case, Case.case_id, [
            {"dataset_id": dataset_pk, "case_id": case.case_id, "position": self.next_position + i, **_case_row(case),
             "created_at": self.now, "updated_at": self.now} for i, case in enumerate(plan.new_cases)]))
        self.next_position += len(plan.new_cases)
        for pk, before, case in plan.changed_cases:
            session.exec(update(Case).where(Case.id == pk).values(**_case_row(case), updated_at=self.now))
            record_event(session, actor_pk=None, entity="case", entity_pk=pk, action="update", before=before, after=case.content())
        claim_pks = {claim_id: found.pk for claim_id, found in stored.claims.items()}
        claim_pks.update(self._insert_new(Claim, Claim.claim_id, [
            {"dataset_id": dataset_pk, "case_pk": case_pks[case_id], "claim_id": claim.claim_id, "position": position,
             "text": claim.text, "created_at": self.now, "updated_at": self.now}
            for case_id, position, claim in plan.new_claims]))
        for pk, before, case_id, position, claim in plan.changed_claims:
            session.exec(update(Claim).where(Claim.id == pk).values(
                case_pk=case_pks[case_id], position=position, text=claim.text, updated_at=self.now))
            record_event(session, actor_pk=None, entity="claim", entity_pk=pk, claim_pk=pk, action="update",
                         before=before, after=_claim_content(case_id, claim))
        _insert(session, ClaimPassage, [
            {"claim_pk": claim_pks[claim.claim_id], "passage_pk": passage_pks[passage_id], "position": position}
            for _case_id, _position, claim in plan.new_claims for position, passage_id in enumerate(claim.passage_ids)])
        for pk, before, _case_id, _position, claim in plan.changed_claims:
            if before["passage_ids"] != list(claim.passage_ids):
                session.exec(delete(ClaimPassage).where(ClaimPassage.claim_pk == pk))
                _insert(session, ClaimPassage, [{"claim_pk": pk, "passage_pk": passage_pks[passage_id], "position": position}
                                                for position, passage_id in enumerate(claim.passage_ids)])
        touched = _touch_claims_of_changed_passages(session, plan, self.now)
        self.touched += len(touched)
        self.changed_claims |= touched | {pk for pk, *_rest in plan.changed_claims}
        if plan.votes:
            users = self._people.pks(item.labeler for item in plan.votes)
            _write_labels(session, plan.votes, lambda item: claim_pks[item.claim], users, self.now)

    def _insert_new(self, model: Any, id_column: Any, rows: list[dict[str, Any]]) -> dict[str, int]:
        """Insert rows in bulk; returns user id -> pk of the rows inserted (those with a pk above
        the table's largest before: one query, no IN list)."""
        if not rows:
            return {}
        before = self.session.exec(select(func.max(model.id))).one() or 0
        _insert(self.session, model, rows)
        return dict(self.session.exec(select(id_column, model.id).where(
            model.dataset_id == self.dataset_pk, model.id > before)).all())

    def people(self) -> _People:
        return self._people.people()

    def labels_to_review(self, hidden: Any = None) -> int:
        """How many labels of the claims this import changed were written before it: each is now
        to review (workflow.label_to_review; labels this import wrote are not).

        hidden: the claims the importing admin still has to label (blind.claims_still_to_label),
        whose labels are left out of the count: it would move when another labeler labels one
        of them (the blind rule). None (the command line, or nothing left to label): all count."""
        def counted(batch: list[int]) -> int:
            query = select(func.count(Label.id)).where(Label.claim_pk.in_(batch), Label.updated_at < self.now)
            return self.session.exec(query if hidden is None else query.where(Label.claim_pk.not_in(hidden))).one()

        return sum(counted(batch) for batch in _batches(sorted(self.changed_claims)))

    def warnings(self) -> list[str]:
        if not self.touched:
            return []
        return [english("msg.import.warn.changed_passages", n=f"{self.touched:,}")]


_UNCHANGED_LABEL: Any = object()


def _create_dataset(session: Session, name: str, fmt: str, now: datetime) -> int:
    dataset = Dataset(name=name, source_format=fmt, created_at=now)
    session.add(dataset)
    session.flush()
    return dataset.id


def _case_row(case: CaseRecord) -> dict[str, Any]:
    return {"question": case.question, "answer": case.answer, "slice": case.slice, "split": case.split,
            "meta": case.metadata}


def _touch_claims_of_changed_passages(session: Session, plan: _CasePlan, now: datetime) -> set[int]:
    """A changed passage changes every claim shown with it: their updated_at moves (adjudicated
    ones become stale, labels made before are to review) and each gets an audit event. Returns
    the claims' keys."""
    touched: set[int] = set()
    for pk, before, passage in plan.changed_passages:
        claim_pks = list(session.exec(select(ClaimPassage.claim_pk).where(ClaimPassage.passage_pk == pk)))
        for claim_pk in claim_pks:
            record_event(session, actor_pk=None, entity="claim", entity_pk=claim_pk, claim_pk=claim_pk, action="update",
                         before={"passage_id": passage.passage_id, **before},
                         after={"passage_id": passage.passage_id, **passage.content()})
        touched.update(claim_pks)
    for batch in _batches(sorted(touched)):
        session.exec(update(Claim).where(Claim.id.in_(batch)).values(updated_at=now))
    return touched


# ---------------------------------------------------------------- labels (shared)


@dataclass(frozen=True)
class _StoredLabel:
    """A label as stored: its pk, content and revision."""

    pk: int
    value: str
    rationale: str
    passage_ids: tuple[str, ...]
    severity: str | None
    revision: int

    def content(self) -> tuple[Any, ...]:
        return (self.value, self.rationale, self.passage_ids, self.severity)

    def fields(self) -> dict[str, Any]:
        """The content by the names of the file's columns."""
        return dict(zip(LABEL_FIELDS, self.content(), strict=True))


LABEL_FIELDS = ("label", "rationale", "passage_ids", "severity")
ADJUDICATION_FIELDS = ("adjudicator", "label", "rationale", "severity")


@dataclass(frozen=True)
class _LabelItem:
    """A label to import. `claim` is the claim id (case imports) or the claim's pk (labels
    imports), `claim_id` the claim id as the user wrote it; `stored` is the label it replaces,
    None for a new one."""

    claim: Any
    claim_id: str
    labeler: str
    value: str
    line: int
    rationale: str = ""
    passage_ids: tuple[str, ...] = ()
    severity: str | None = None
    stored: _StoredLabel | None = None

    def content(self) -> tuple[Any, ...]:
        return (self.value, self.rationale, self.passage_ids, self.severity)

    def fields(self) -> dict[str, Any]:
        """The content by the names of the file's columns."""
        return dict(zip(LABEL_FIELDS, self.content(), strict=True))

    def audit(self, revision: int) -> dict[str, Any]:
        return {"labeler": self.labeler, "value": self.value, "rationale": self.rationale,
                "passage_ids": list(self.passage_ids), "severity": self.severity, "revision": revision, "source": "import"}


def _plan_label(path: str, item: _LabelItem, stored: dict[tuple[Any, str], _StoredLabel],
                update: bool) -> tuple[str, _LabelItem | None]:
    """The outcome ("new", "unchanged", "updated") and the label to write (None when unchanged;
    with `update`, a changed one carries its stored row). Raises ImportRowError naming the line
    for a stored label with other content without `update`."""
    found = stored.get((item.claim, item.labeler))
    if found is None:
        return "new", item
    if found.content() == item.content():
        return "unchanged", None
    if not update:
        raise _label_stored_other(path, item.line, item.labeler, item.claim_id, found.fields(), item.fields())
    return "updated", _replace_stored(item, found)


def _label_stored_other(path: str, line: int, labeler: str, claim_id: str, stored: dict[str, Any],
                        new: dict[str, Any]) -> ImportRowError:
    """The refusal of a label whose labeler has a stored label on the claim with other content,
    naming the first differing field and showing both values (without --update)."""
    differing, shown = _differences(stored, new)
    return ImportRowError(path, line, differing[0],
                          msg("msg.import.problem.label_stored_other", labeler=labeler, claim_id=claim_id,
                              fields=", ".join(differing), shown=shown),
                          msg("msg.import.fix.update_label"))


def _replace_stored(item: _LabelItem, found: _StoredLabel) -> _LabelItem:
    return replace(item, stored=found)


SHOWN_CHARACTERS = 60
"""A stored or new text longer than this is cut in error messages."""


def _differences(stored: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], Joined]:
    """The names of the fields whose values differ, and each shown as "label 'contradict' in the
    database, 'support' in this file" (messages joined by "; ")."""
    differing = [name for name in new if stored.get(name) != new[name]]
    shown = Joined(tuple(msg("msg.import.problem.difference", name=name, stored=_shown(stored.get(name)),
                             new=_shown(new[name])) for name in differing), "; ")
    return differing, shown


def _shown(value: Any) -> Message | str:
    if value is None or value in ("", ()):
        return msg("msg.import.problem.empty_value")
    text = "; ".join(value) if isinstance(value, tuple | list) else str(value)
    if len(text) > SHOWN_CHARACTERS:
        text = text[:SHOWN_CHARACTERS - 1] + "\u2026"
    return f"'{text}'"


def _stored_label(row: Sequence[Any]) -> _StoredLabel:
    pk, value, rationale, passage_ids, severity, revision = row
    return _StoredLabel(pk, value, rationale, tuple(passage_ids or ()), severity, revision)


_LABEL_COLUMNS = (Label.id, Label.value, Label.rationale, Label.passage_ids, Label.severity, Label.revision)


def _stored_labels_by_claim_id(session: Session, dataset_pk: int | None) -> dict[tuple[Any, str], _StoredLabel]:
    """(claim id, labeler name) -> stored label, for one dataset, in one query."""
    if dataset_pk is None:
        return {}
    query = (select(Claim.claim_id, User.name, *_LABEL_COLUMNS).join(Claim, Claim.id == Label.claim_pk)
             .join(User, User.id == Label.labeler_pk).where(Claim.dataset_id == dataset_pk))
    return {(row[0], row[1]): _stored_label(row[2:]) for row in session.exec(query)}


def _stored_labels_by_claim_pk(session: Session, claim_pks: Iterable[int]) -> dict[tuple[Any, str], _StoredLabel]:
    """(claim pk, labeler name) -> stored label, for the given claims."""
    found = {}
    for batch in _batches(sorted(set(claim_pks))):
        query = (select(Label.claim_pk, User.name, *_LABEL_COLUMNS).join(User, User.id == Label.labeler_pk)
                 .where(Label.claim_pk.in_(batch)))
        found.update({(row[0], row[1]): _stored_label(row[2:]) for row in session.exec(query)})
    return found


def _write_labels(session: Session, items: list[_LabelItem], claim_pk_of: Callable[[_LabelItem], int],
                  users: dict[str, int], now: datetime) -> None:
    """Insert the new labels in bulk and update the changed ones (revision + 1); every one gets
    an audit event."""
    new = [item for item in items if item.stored is None]
    _insert(session, Label, [
        {"claim_pk": claim_pk_of(item), "labeler_pk": users[item.labeler], "value": item.value,
         "passage_ids": list(item.passage_ids) or None, "rationale": item.rationale, "severity": item.severity,
         "guideline_version": "", "source": "import", "revision": 1, "created_at": now, "updated_at": now}
        for item in new
    ])
    label_pks = _label_pks(session, {claim_pk_of(item) for item in new})
    record_events(session, [
        event_row(now, "label", label_pks[claim_pk_of(item), users[item.labeler]], claim_pk_of(item), "create",
                   None, item.audit(1))
        for item in new
    ])
    for item in items:
        if item.stored is not None:
            _update_label(session, item, claim_pk_of(item), now)


def _update_label(session: Session, item: _LabelItem, claim_pk: int, now: datetime) -> None:
    old = item.stored
    session.exec(update(Label).where(Label.id == old.pk).values(
        value=item.value, rationale=item.rationale, passage_ids=list(item.passage_ids) or None,
        severity=item.severity, source="import", revision=old.revision + 1, updated_at=now))
    before = {"labeler": item.labeler, "value": old.value, "rationale": old.rationale,
              "passage_ids": list(old.passage_ids), "severity": old.severity, "revision": old.revision}
    record_event(session, actor_pk=None, entity="label", entity_pk=old.pk, claim_pk=claim_pk, action="update",
                 before=before, after=item.audit(old.revision + 1))


def _label_pks(session: Session, claim_pks: Iterable[int]) -> dict[tuple[int, int], int]:
    """(claim pk, labeler pk) -> label pk for every label of the given claims."""
    found = {}
    for batch in _batches(sorted(claim_pks)):
        rows = session.exec(select(Label.claim_pk, Label.labeler_pk, Label.id).where(Label.claim_pk.in_(batch)))
        found.update({(claim_pk, labeler_pk): pk for claim_pk, labeler_pk, pk in rows})
    return found


# ---------------------------------------------------------------- import_labels


@_refused_when_concurrent("labels")
def import_labels(session: Session, actor: Caller, path: str | Path, *, dataset: str | None = None, update: bool = False,
                  partial: bool = False) -> ImportReport:
    """Import labels from a CSV or JSONL file (claim_id, labeler, label[, rationale, passage_ids,
    severity]; see `formats.read_labels`).

    Claim ids are looked up in `dataset`, or across all datasets. Unknown labelers are created
    with role labeler and no password. A stored (claim, labeler) label with the same content is
    unchanged; with other content it is refused unless `update` (then revision + 1). Every
    created or changed label is recorded in the audit trail.
    partial: skip the bad lines (each is listed in the report's `skipped_lines`: file, line,
        field, reason) and import the others; without it one bad line refuses the whole file. Of
        two rows for one (claim, labeler) with other content the first good one is imported and
        the later ones listed; a skipped row does not count (`_RowImport.checked`).
    Streams as `import_cases`: CHUNK_ROWS labels at a time are read, checked and written, in the
    caller's transaction (memory: the (claim, labeler) keys imported and a digest of each).
    Raises ImportFileError (missing or empty file), NotFoundError (unknown dataset),
    ImportRowError naming the line: bad row, unknown claim id, claim id in two datasets (name
    --dataset), cited passage the claim is not shown with, labeler who adjudicated the claim,
    labeler whose name differs only in case from a user's or looks like it (users.taken_name, as
    `users add`), a labeler name or id that is too long (text.MAX_NAME_CHARS, MAX_ID_CHARS) or a
    name with an invisible character,
    the same claim and labeler on an earlier row with other content, stored label with other
    content (naming the fields, stored and new values), a claim the caller is still to label
    (the blind rule).
    InvalidValueError for a blank, space-padded or too long dataset name. An existing person
    without the labeler role gets it, and the report says so.
    """
    require(actor, Permission.IMPORT)
    check_dataset_name(dataset)
    skips = formats.Skips() if partial else None
    source = formats.read_labels(path, skips=skips, unique=False)  # repeats: checked by the run (`_RowImport.checked`)
    run = _LabelImport(session, actor, source.path, dataset, update, skips)
    _stream(source, CHUNK_ROWS, run.add)
    if run.read == 0 and not skips:
        raise ImportFileError.of("msg.import.file.no_labels", path=str(source.path))
    refresh_statistics(session)
    report = run.people.people().report(source.path, source.format, source.encoding, dataset, run.tally.as_dict(), {},
                                        source.warnings)
    return replace(report, skipped_lines=_skipped_lines(skips))


CHUNK_ROWS = 5_000
"""Labels or adjudications read, checked and written together: bounds memory, keeps statements large."""


R = TypeVar("R", LabelRecord, AdjudicationRecord)


class _RowImport:
    """What a labels or adjudications import keeps between chunks: the file, the dataset (looked
    up at the first chunk), counts, the people it named (created or given `role`) and the rows
    it imported (`seen`: one key and content digest per row, `formats.Seen`)."""

    def __init__(self, session: Session, actor: Caller, path: str, dataset: str | None, update: bool,
                 skips: formats.Skips | None, kind: str, role: str, seen: str):
        self.session, self.actor, self.path, self.dataset, self.update, self.skips = session, actor, path, dataset, update, skips
        self.tally, self.people = _Tally(kind), _PeopleSoFar(session, role, path)
        self.seen = formats.Seen(path, seen)
        self.skipped: Counter[str] = Counter()
        self.read = 0
        self.now = utcnow()
        self._dataset_pk: int | None = None

    def checked(self, records: list[R], key: Callable[[R], tuple[Any, dict[str, Any]]], field_name: str,
                check: Callable[[R], T]) -> Iterator[T]:
        """check(record) of each record, in file order, but for a repeat of an earlier row: with the
        same content it is left out, with other content refused (ImportRowError naming both lines
        and `field_name`). With `partial`, a refused row is skipped and listed (`formats.skipping`)
        and its key forgotten: a row counts as seen only once all its checks passed, so a later
        row for the same key is imported when it is good (the first good row of a key wins)."""
        def one(record: R) -> T | None:
            row_key, content = key(record)
            if not self.seen.first_time(row_key, content, record.line, field_name):
                return None
            try:
                return check(record)
            except ImportRowError:
                self.seen.forget([row_key])
                raise
        return (result for result in formats.skipping(records, one, self.skips) if result is not None)

    def claims_of(self, claim_ids: Iterable[str]) -> _ChunkClaims:
        """The chunk's claims (`_ChunkClaims`), the dataset looked up the first time."""
        if self.dataset is not None and self._dataset_pk is None:
            self._dataset_pk = get_dataset(self.session, self.dataset).id
        return _ChunkClaims.of(self.session, self.actor, self.path, sorted(set(claim_ids)), self.dataset, self._dataset_pk)


class _LabelImport(_RowImport):
    """One labels import, fed chunk by chunk (`add`)."""

    def __init__(self, session: Session, actor: Caller, path: str, dataset: str | None, update: bool,
                 skips: formats.Skips | None):
        super().__init__(session, actor, path, dataset, update, skips, "labels", "labeler", "label of claim")

    def add(self, records: list[LabelRecord]) -> None:
        self.read += len(records)
        claims = self.claims_of(record.claim_id for record in records)
        pks = claims.pks()
        shown = _shown_passages(self.session, pks)
        adjudicators = {pk: name for pk, (_, name, *_rest) in _stored_adjudications(self.session, pks).items()}
        stored = _stored_labels_by_claim_pk(self.session, pks)

        def check(record: LabelRecord) -> tuple[str, _LabelItem | None]:
            self.people.check(record.labeler, record.line, "labeler")
            item = _checked_label(self.path, record, claims.pk_of(record.claim_id, record.line), shown, adjudicators)
            planned = _plan_label(self.path, item, stored, self.update)
            self.people.add(record.labeler, record.line)
            return planned

        planned = []
        for outcome, item in self.checked(records, formats.label_key, "labeler", check):
            self.tally.add("labels", outcome)
            if item is not None:
                planned.append(item)
        users = self.people.pks(item.labeler for item in planned)
        _write_labels(self.session, planned, lambda item: item.claim, users, self.now)


def _checked_label(path: str, record: LabelRecord, claim_pk: int, shown: dict[int, list[str]],
                   adjudicators: dict[int, str]) -> _LabelItem:
    """The record as a label item for its claim. Raises ImportRowError for a cited passage the
    claim is not shown with, or a labeler who adjudicated the claim."""
    allowed = shown.get(claim_pk, [])
    for passage_id in record.passage_ids:
        if passage_id not in allowed:
            raise ImportRowError(path, record.line, "passage_ids",
                                 msg("msg.import.problem.passage_not_shown", claim_id=record.claim_id,
                                     passage_id=passage_id),
                                 msg("msg.import.fix.cite_shown", passages=formats.ids_or_none(allowed)))
    if adjudicators.get(claim_pk) == record.labeler:
        raise ImportRowError(path, record.line, "labeler",
                             msg("msg.import.problem.voter_adjudicated", labeler=record.labeler, claim_id=record.claim_id),
                             msg("msg.import.fix.label_to_other"))
    return _LabelItem(claim_pk, record.claim_id, record.labeler, record.label, record.line, record.rationale,
                      record.passage_ids, record.severity)


# ---------------------------------------------------------------- import_adjudications


@dataclass(frozen=True)
class _AdjudicationItem:
    """An adjudication to import: its claim (pk and id), the decision and the file line."""

    claim_pk: int
    claim_id: str
    adjudicator: str
    value: str
    rationale: str
    severity: str | None
    line: int

    def content(self) -> tuple[Any, ...]:
        return (self.adjudicator, self.value, self.rationale, self.severity)

    def fields(self) -> dict[str, Any]:
        """The content by the names of the file's columns."""
        return dict(zip(ADJUDICATION_FIELDS, self.content(), strict=True))

    def audit(self, revision: int) -> dict[str, Any]:
        return {"adjudicator": self.adjudicator, "value": self.value, "rationale": self.rationale,
                "severity": self.severity, "revision": revision}


@_refused_when_concurrent("adjudications")
def import_adjudications(
    session: Session,
    actor: Caller, path: str | Path, *, dataset: str | None = None, fmt: str = "auto", vote: int | None = None,
    update: bool = False, partial: bool = False,
) -> ImportReport:
    """Import adjudications: from a CSV or JSONL file (claim_id, adjudicator, label[, rationale,
    severity]), or, with a CLIMATE-FEVER file and `vote=K`, the K-th non-null vote of every
    evidence whose claim is disputed, as decided by cf-vote-K.

    Unknown adjudicators are created with role adjudicator and no password. The claim must be
    disputed or stale (a stale claim's adjudication is replaced, revision + 1); the same
    adjudication imported again is unchanged; another decision for an adjudicated claim is
    refused (naming the fields, stored and new values) unless `update`, which replaces it
    (revision + 1, audited). In vote mode, claims not disputed or without a K-th vote are
    skipped and counted in the report. An existing person without the adjudicator role gets it,
    and the report says so.
    partial (CSV or JSONL only): skip the bad lines (listed in the report's `skipped_lines`) and
    import the others; without it one bad line refuses the whole file. Streams as `import_labels`.
    Raises ImportFileError (missing or empty file, vote option with the wrong file),
    NotFoundError (unknown dataset), InvalidValueError (blank, space-padded or too long dataset
    name), ImportRowError naming the line: bad row, unknown or ambiguous claim id, adjudicator who
    labeled the claim, adjudicator whose name differs only in case from a user's or looks like it
    (as in `import_labels`), the same claim on an earlier row with another decision (with `partial`, the
    first good row is imported), claim in another state, adjudicated claim decided otherwise, a
    claim the caller is still to label (the blind rule). InvalidValueError also for `partial`
    with `vote`.
    """
    require(actor, Permission.IMPORT)
    check_dataset_name(dataset)
    fmt = formats.detect_format(path) if fmt == "auto" and Path(path).is_file() else fmt
    if fmt == "climate-fever":
        if vote is None:
            raise ImportFileError.of("msg.import.file.vote_needed", path=str(path))
        if partial:
            raise InvalidValueError.of("msg.import.option.partial_vote")
        return _import_vote_adjudications(session, path, dataset, vote)
    if vote is not None:
        raise ImportFileError.of("msg.import.file.vote_not_climate_fever", path=str(path))
    skips = formats.Skips() if partial else None
    source = formats.read_adjudications(path, fmt, skips=skips, unique=False)  # repeats: `_RowImport.checked`
    run = _AdjudicationImport(session, actor, source.path, dataset, update, skips)
    _stream(source, CHUNK_ROWS, run.add)
    if run.read == 0 and not skips:
        raise ImportFileError.of("msg.import.file.no_adjudications", path=str(source.path))
    refresh_statistics(session)
    report = run.people.people().report(source.path, source.format, source.encoding, dataset, run.tally.as_dict(),
                                        dict(run.skipped), source.warnings)
    return replace(report, skipped_lines=_skipped_lines(skips))


class _AdjudicationImport(_RowImport):
    """One adjudications import (CSV or JSONL), fed chunk by chunk (`add`)."""

    def __init__(self, session: Session, actor: Caller, path: str, dataset: str | None, update: bool,
                 skips: formats.Skips | None):
        super().__init__(session, actor, path, dataset, update, skips, "adjudications", "adjudicator",
                         "adjudication of claim")

    def add(self, records: list[AdjudicationRecord]) -> None:
        self.read += len(records)
        claims = self.claims_of(record.claim_id for record in records)
        pks = claims.pks()
        stored, labelers, states = (_stored_adjudications(self.session, pks), _labelers(self.session, pks),
                                    _states_of(self.session, pks))

        def check(record: AdjudicationRecord) -> tuple[str, _PlannedAdjudication | None]:
            self.people.check(record.adjudicator, record.line, "adjudicator")
            item = _adjudication_item(record, claims.pk_of(record.claim_id, record.line))
            planned = _plan_adjudication(self.path, item, stored.get(item.claim_pk), states[item.claim_pk],
                                         labelers.get(item.claim_pk, set()), vote_mode=False, update=self.update)
            self.people.add(record.adjudicator, record.line)
            return planned

        planned, names = [], []
        for outcome, plan in self.checked(records, formats.adjudication_key, "claim_id", check):
            self.tally.add("adjudications", outcome)
            if plan is not None:
                names.append(plan.item.adjudicator)
                planned.append(plan)
        _write_adjudications(self.session, planned, self.people.pks(names), self.now)


def _adjudication_item(record: AdjudicationRecord, claim_pk: int) -> _AdjudicationItem:
    return _AdjudicationItem(claim_pk, record.claim_id, record.adjudicator, record.label, record.rationale,
                             record.severity, record.line)


def _import_vote_adjudications(session: Session, path: str | Path, dataset: str | None, vote: int) -> ImportReport:
    """Vote mode: the K-th non-null vote of each disputed CLIMATE-FEVER claim, by cf-vote-K."""
    if not 1 <= vote <= 5:
        raise InvalidValueError.of("msg.import.option.vote_range", n=vote)
    source = formats.read_cases(path, "climate-fever")
    name = dataset or DEFAULT_DATASETS["climate-fever"]
    dataset_pk = get_dataset(session, name).id
    claim_pks = _pk_map(session, Claim.claim_id, Claim.id, Claim.dataset_id, dataset_pk)
    states = claim_states(session, dataset_pk)
    tally, skipped = _Tally("adjudications"), Counter()
    items = []
    for case in source.records:
        for claim in case.claims:
            item = _vote_item(source.path, name, claim, claim_pks, states, vote, skipped)
            if item is not None:
                items.append(item)
    planned = _plan_adjudications(session, source.path, items, states, tally, skipped)
    people = _PeopleSoFar(session, "adjudicator", source.path)
    _write_adjudications(session, planned, people.pks([formats.voter_name(vote)] if planned else []), utcnow())
    refresh_statistics(session)
    return people.people().report(source.path, source.format, source.encoding, name, tally.as_dict(), dict(skipped), ())


def _vote_item(path: str, dataset: str, claim: ClaimRecord, claim_pks: dict[str, int], states: dict[int, State],
               vote: int, skipped: Counter) -> _AdjudicationItem | None:
    """The adjudication vote K gives this claim, or None (counted in `skipped`) when the claim
    is not disputed or has no K-th vote. An adjudicated claim is passed on (it may be unchanged)."""
    claim_pk = claim_pks.get(claim.claim_id)
    if claim_pk is None:
        raise ImportRowError(path, claim.line, "claim_id",
                             msg("msg.import.problem.claim_not_in_dataset", claim_id=claim.claim_id, dataset=dataset),
                             msg("msg.import.fix.import_first"))
    state = states[claim_pk]
    if state not in (State.DISPUTED, State.ADJUDICATED):
        skipped[_not_disputed(state)] += 1
        return None
    value = formats.nth_vote(claim.votes, vote)
    if value is None:
        skipped[english("msg.import.skip.no_vote", vote=vote)] += 1
        return None
    return _AdjudicationItem(claim_pk, claim.claim_id, formats.voter_name(vote), value,
                             f"CLIMATE-FEVER vote {vote}", None, claim.line)


@dataclass(frozen=True)
class _PlannedAdjudication:
    item: _AdjudicationItem
    stored: tuple[Any, ...] | None  # (pk, adjudicator, value, rationale, severity, revision) replaced


def _plan_adjudications(session: Session, path: str, items: list[_AdjudicationItem], states: dict[int, State],
                        tally: _Tally, skipped: Counter) -> list[_PlannedAdjudication]:
    """Vote mode: plan every adjudication (`_plan_adjudication`), counting outcomes and skips."""
    pks = [item.claim_pk for item in items]
    stored, labelers = _stored_adjudications(session, pks), _labelers(session, pks)
    planned = []
    for item in items:
        outcome, plan = _plan_adjudication(path, item, stored.get(item.claim_pk), states[item.claim_pk],
                                           labelers.get(item.claim_pk, set()), vote_mode=True)
        if outcome in KINDS:
            tally.add("adjudications", outcome)
        else:
            skipped[outcome] += 1
        if plan is not None:
            planned.append(plan)
    return planned


def _plan_adjudication(path: str, item: _AdjudicationItem, found: tuple[Any, ...] | None, state: State,
                       labelers: set[str], *, vote_mode: bool, update: bool = False,
                       ) -> tuple[str, _PlannedAdjudication | None]:
    """Check one adjudication against the rules: its outcome ("new", "unchanged", "updated", or in
    vote mode the reason it is skipped) and what to write (None when nothing). `found` is the
    claim's stored adjudication, `labelers` the names of those who labeled it. Raises
    ImportRowError naming the line when the adjudicator labeled the claim, the claim is neither
    disputed nor stale, or (without `update`) the claim is adjudicated with another decision. The
    same adjudication again is unchanged; in vote mode an adjudicated claim with another decision
    is skipped, not an error."""
    if found is not None and tuple(found[1:5]) == item.content() and state is State.ADJUDICATED:
        return "unchanged", None
    if vote_mode and state not in ADJUDICABLE:
        return _not_disputed(state), None
    replacing = found is not None and state is State.ADJUDICATED
    if replacing and not update:
        differing, shown = _differences(dict(zip(ADJUDICATION_FIELDS, found[1:5], strict=True)), item.fields())
        raise ImportRowError(path, item.line, differing[0],
                             msg("msg.import.problem.adjudicated_other", claim_id=item.claim_id,
                                 fields=", ".join(differing), shown=shown),
                             msg("msg.import.fix.update_decision"))
    _check_adjudicable(path, item, state, labelers, ADJUDICABLE | {State.ADJUDICATED} if replacing else ADJUDICABLE)
    return ("new" if found is None else "updated"), _PlannedAdjudication(item, found)


def _check_adjudicable(path: str, item: _AdjudicationItem, state: State, labelers: set[str],
                       allowed: frozenset[State] = ADJUDICABLE) -> None:
    if item.adjudicator in labelers:
        raise ImportRowError(path, item.line, "adjudicator",
                             msg("msg.import.problem.labeler_adjudicates", adjudicator=item.adjudicator,
                                 claim_id=item.claim_id), msg("msg.import.fix.claim_to_other"))
    if state not in allowed:
        raise ImportRowError(path, item.line, "claim_id",
                             msg("msg.import.problem.not_adjudicable", claim_id=item.claim_id,
                                 state=Term("state", state.value)), msg("msg.import.fix.remove_line"))


def _not_disputed(state: State) -> str:
    """Why vote mode skips a claim in `state`: "not disputed (agreed)" (a key of ImportReport.skipped)."""
    return english("msg.import.skip.not_disputed", state=state.value)


def _write_adjudications(session: Session, planned: list[_PlannedAdjudication], users: dict[str, int],
                         now: datetime) -> None:
    """Insert the new adjudications in bulk, replace the stale (or, with --update, adjudicated)
    ones (revision + 1), and record an audit event for each. users: adjudicator name -> user pk."""
    new = [plan.item for plan in planned if plan.stored is None]
    _insert(session, Adjudication, [
        {"claim_pk": item.claim_pk, "adjudicator_pk": users[item.adjudicator], "value": item.value,
         "rationale": item.rationale, "severity": item.severity, "revision": 1, "decided_at": now}
        for item in new
    ])
    adjudication_pks = _adjudication_pks(session, [item.claim_pk for item in new])
    record_events(session, [
        event_row(now, "adjudication", adjudication_pks[item.claim_pk], item.claim_pk, "create", None, item.audit(1))
        for item in new
    ])
    for plan in planned:
        if plan.stored is not None:
            _replace_adjudication(session, plan, users, now)


def _replace_adjudication(session: Session, plan: _PlannedAdjudication, users: dict[str, int], now: datetime) -> None:
    pk, adjudicator, value, rationale, severity, revision = plan.stored
    item = plan.item
    session.exec(update(Adjudication).where(Adjudication.id == pk).values(
        adjudicator_pk=users[item.adjudicator], value=item.value, rationale=item.rationale, severity=item.severity,
        revision=revision + 1, decided_at=now))
    before = {"adjudicator": adjudicator, "value": value, "rationale": rationale, "severity": severity, "revision": revision}
    record_event(session, actor_pk=None, entity="adjudication", entity_pk=pk, claim_pk=item.claim_pk, action="update",
                 before=before, after=item.audit(revision + 1))


def _adjudication_pks(session: Session, claim_pks: list[int]) -> dict[int, int]:
    found = {}
    for batch in _batches(sorted(claim_pks)):
        found.update(dict(session.exec(select(Adjudication.claim_pk, Adjudication.id).where(Adjudication.claim_pk.in_(batch))).all()))
    return found


def _stored_adjudications(session: Session, claim_pks: Iterable[int]) -> dict[int, tuple[Any, ...]]:
    """claim pk -> (pk, adjudicator name, value, rationale, severity, revision)."""
    found = {}
    for batch in _batches(sorted(set(claim_pks))):
        query = (select(Adjudication.claim_pk, Adjudication.id, User.name, Adjudication.value, Adjudication.rationale,
                        Adjudication.severity, Adjudication.revision)
                 .join(User, User.id == Adjudication.adjudicator_pk).where(Adjudication.claim_pk.in_(batch)))
        found.update({row[0]: tuple(row[1:]) for row in session.exec(query)})
    return found


def _labelers(session: Session, claim_pks: Iterable[int]) -> dict[int, set[str]]:
    """claim pk -> names of the people who labeled it."""
    found: dict[int, set[str]] = defaultdict(set)
    for batch in _batches(sorted(set(claim_pks))):
        query = select(Label.claim_pk, User.name).join(User, User.id == Label.labeler_pk).where(Label.claim_pk.in_(batch))
        for claim_pk, name in session.exec(query):
            found[claim_pk].add(name)
    return found


def _states_of(session: Session, claim_pks: Iterable[int]) -> dict[int, State]:
    states: dict[int, State] = {}
    for batch in _batches(sorted(set(claim_pks))):
        states.update(claim_states(session, claim_pks=batch))
    return states


# ---------------------------------------------------------------- shared helpers


@dataclass(frozen=True)
class _ChunkClaims:
    """The claims a chunk of a labels or adjudications file names: claim id -> the pks of the
    claims with that id (in the dataset, or in all), and those of them the caller is still to label."""

    path: str
    dataset: str | None
    found: dict[str, list[int]]
    blind: frozenset[int]

    @classmethod
    def of(cls, session: Session, actor: Caller, path: str, claim_ids: Sequence[str], dataset: str | None,
           dataset_pk: int | None) -> _ChunkClaims:
        found: dict[str, list[int]] = defaultdict(list)
        for batch in _batches(claim_ids):
            query = select(Claim.claim_id, Claim.id).where(Claim.claim_id.in_(batch))
            if dataset_pk is not None:
                query = query.where(Claim.dataset_id == dataset_pk)
            for claim_id, pk in session.exec(query):
                found[claim_id].append(pk)
        hidden = claims_still_to_label(session, actor)
        blind = frozenset() if hidden is None else frozenset(set(session.exec(hidden)) & {
            pk for pks in found.values() for pk in pks})
        return cls(path, dataset, dict(found), blind)

    def pks(self) -> list[int]:
        """The pks of the claims named once (the others are refused, `pk_of`)."""
        return [pks[0] for pks in self.found.values() if len(pks) == 1]

    def pk_of(self, claim_id: str, line: int) -> int:
        """The claim's pk. Raises ImportRowError naming the line when the claim id is unknown, found
        in two datasets (asking for --dataset), or names a claim the caller is assigned to label and
        has not labeled yet: the import's checks compare each row with the claim's stored labels and
        decision, so its messages would tell them of the other labels (the blind rule, blind.py)."""
        pks = self.found.get(claim_id)
        if not pks:
            problem = (msg("msg.import.problem.no_claim_in", claim_id=claim_id, dataset=self.dataset) if self.dataset
                       else msg("msg.import.problem.no_claim", claim_id=claim_id))
            raise ImportRowError(self.path, line, "claim_id", problem, msg("msg.import.fix.import_case_first"))
        if len(pks) > 1:
            raise ImportRowError(self.path, line, "claim_id", msg("msg.import.problem.ambiguous_claim", claim_id=claim_id),
                                 msg("msg.import.fix.name_dataset"))
        if pks[0] in self.blind:
            raise ImportRowError(self.path, line, "claim_id", msg("msg.import.problem.still_to_label", claim_id=claim_id),
                                 msg("msg.import.fix.label_first"))
        return pks[0]


def _shown_passages(session: Session, claim_pks: Iterable[int]) -> dict[int, list[str]]:
    """claim pk -> ids of the passages it is shown with, in order."""
    shown: dict[int, list[str]] = defaultdict(list)
    for batch in _batches(sorted(set(claim_pks))):
        query = (select(ClaimPassage.claim_pk, Passage.passage_id).join(Passage, Passage.id == ClaimPassage.passage_pk)
                 .where(ClaimPassage.claim_pk.in_(batch)).order_by(ClaimPassage.claim_pk, ClaimPassage.position))
        for claim_pk, passage_id in session.exec(query):
            shown[claim_pk].append(passage_id)
    return shown


@dataclass(frozen=True)
class _People:
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


def _ensure_users(session: Session, names: list[str], role: str, known: KnownNames | None = None) -> _People:
    """The user pk of every name, creating unknown people with `role` and no password
    (`ensure_user`: safe when imports run at once; it also gives a known person lacking `role`
    that role, which is noted so that the report says so)."""
    lacking = set()
    for batch in _batches(names):
        for name, roles in session.exec(select(User.name, User.roles).where(User.name.in_(batch))):
            if role not in roles.split(","):
                lacking.add(name)
    pks, created = {}, []
    for name in names:
        user, is_new = ensure_user(session, name, role, known)
        pks[name] = user.id
        if is_new:
            created.append(name)
    return _People(role, pks, tuple(created), tuple(name for name in names if name in lacking))


class _PeopleSoFar:
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

    def people(self) -> _People:
        return _People(self.role, dict(self._pks), tuple(sorted(self._created)), tuple(sorted(self._given)))


def _pk_map(session: Session, id_column: Any, pk_column: Any, dataset_column: Any, dataset_pk: int) -> dict[str, int]:
    """The user's id -> primary key for every row of one table in one dataset, in one query."""
    return dict(session.exec(select(id_column, pk_column).where(dataset_column == dataset_pk)).all())


def _insert(session: Session, model: Any, rows: list[dict[str, Any]]) -> None:
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
        for batch in _batches(rows):
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
                values = [process(first)] * len(values)
            else:
                values = [process(value) for value in values]
        columns.append(values)
    connection.exec_driver_sql(sql, list(zip(*columns)))


def _batches(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]


# ---------------------------------------------------------------- an uploaded file: checked, then imported (the app)


UPLOAD_KINDS = ("cases", "labels", "adjudications")
"""What the app's Import page imports: a case file (import_cases), labels or adjudications."""

PREVIEW_ROWS = 20
"""Claims (case files), labels or adjudications shown in a check's preview."""


@dataclass(frozen=True)
class UploadOptions:
    """The options of an upload, as the command line's: kind (one of UPLOAD_KINDS); fmt (cases:
    auto | jsonl | csv | climate-fever; adjudications: auto | jsonl | csv; labels: auto only);
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
