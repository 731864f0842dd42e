"""The database tables. Tables are defined here and only here (Streamlit re-executes pages;
a table defined twice raises "Table already defined").

Primary keys are integers (`id`); the ids users give in files (`case_id`, `claim_id`,
`passage_id`) are strings unique within a dataset. Every datetime is timezone-aware UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, Column, DateTime, Index, UniqueConstraint
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel


class UTCDateTime(TypeDecorator):
    """A datetime stored as naive UTC and always returned timezone-aware (SQLite keeps no zone)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("datetimes must be timezone-aware")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def _time(nullable: bool = False, index: bool = False) -> Any:
    column = Column(UTCDateTime(), nullable=nullable, index=index)
    if nullable:
        return Field(default=None, sa_column=column)
    return Field(default_factory=utcnow, sa_column=column)


def _json(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(JSON, nullable=nullable))


class Dataset(SQLModel, table=True):
    """A named collection of cases from one or more imports; ids in files are unique within it."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, index=True)
    source_format: str = ""
    created_at: datetime = _time()


class Case(SQLModel, table=True):
    """One question put to the RAG system, with its answer, slice, split and metadata."""

    __table_args__ = (UniqueConstraint("dataset_id", "case_id"),)
    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="dataset.id", index=True)
    case_id: str
    position: int = 0  # order of the case in its import, for stable queues
    question: str = ""
    answer: str = ""
    slice: str = ""
    split: str = ""
    meta: dict | None = _json()
    created_at: datetime = _time()
    updated_at: datetime = _time()


class Passage(SQLModel, table=True):
    """A piece of evidence text; the same passage can be shown with many claims."""

    __table_args__ = (
        UniqueConstraint("dataset_id", "passage_id"),
        Index("ix_passage_document", "dataset_id", "doc_id"),  # a document's versions (labeling.versions_in_dataset)
    )
    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="dataset.id", index=True)
    passage_id: str
    doc_id: str = ""
    version: str = ""
    title: str = ""
    text: str = ""


class Claim(SQLModel, table=True):
    """One atomic statement to verify: the unit that is labeled, adjudicated and released."""

    __table_args__ = (
        UniqueConstraint("dataset_id", "claim_id"),
        Index("ix_claim_case_order", "case_pk", "position", "id"),  # a case's claims in queue order
    )
    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="dataset.id", index=True)
    case_pk: int = Field(foreign_key="case.id", index=True)
    claim_id: str = Field(index=True)
    position: int = 0  # order within its case
    text: str = ""
    span_start: int | None = None  # where the claim is in its case's answer, in code points: answer[start:end]
    span_end: int | None = None  # None: not known (the file did not say, or the text is not in the answer)
    created_at: datetime = _time()
    updated_at: datetime = _time()  # content changed: marks an adjudication stale


class ClaimPassage(SQLModel, table=True):
    """Which passages a claim is shown with, in order."""

    claim_pk: int = Field(foreign_key="claim.id", primary_key=True)
    passage_pk: int = Field(foreign_key="passage.id", primary_key=True, index=True)
    position: int = 0


class User(SQLModel, table=True):
    """A person who logs in: labeler, adjudicator and/or admin."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, index=True)
    roles: str = ""  # comma-separated names from vocabulary.ROLES
    password_hash: str | None = None  # None: cannot log in until a password is set
    active: bool = True
    created_at: datetime = _time()
    locale: str | None = None  # the interface language, "en" or "ja"; None: follow the browser


class LoginThrottle(SQLModel, table=True):
    """Failed logins in a row under one typed user name, whether or not a user has that name (so
    the login delay does not tell which names exist). Deleted by a successful login or a new
    password; forgotten LOGIN_FAILURE_MEMORY after the last failure."""

    __tablename__ = "login_throttle"
    name: str = Field(primary_key=True)  # the name as typed, NFC-normalized and stripped
    failed_logins: int = 0
    locked_until: datetime | None = _time(nullable=True)  # no login attempt is checked before then
    last_failed_at: datetime = _time(index=True)


class LoginSession(SQLModel, table=True):
    """One login of a user in one browser (the README's "Login sessions"): the browser holds a
    random token in an HttpOnly cookie and only the token's SHA-256 is stored. A login first gets
    a one-time ticket (its SHA-256 here too, for TICKET_SECONDS) that the browser trades for the
    token; `token_sha256` is None until then. Ends at `expires_at`, after the idle expiry since
    `last_seen_at`, or when revoked (`revoked_at`, `revoked_reason`). services/login_sessions.py
    is the one place that reads and writes it."""

    __tablename__ = "login_session"
    id: int | None = Field(default=None, primary_key=True)
    user_pk: int = Field(foreign_key="user.id", index=True)
    token_sha256: str | None = Field(default=None, unique=True)  # hex; None until the ticket is traded
    ticket_sha256: str | None = Field(default=None, unique=True)  # hex; None once traded
    ticket_expires_at: datetime | None = _time(nullable=True)
    created_at: datetime = _time()
    last_seen_at: datetime = _time()
    expires_at: datetime = _time(index=True)  # the absolute expiry, set at login
    revoked_at: datetime | None = _time(nullable=True)
    revoked_reason: str | None = None  # one of login_sessions.REVOKE_REASONS


class Setting(SQLModel, table=True):
    """A setting an admin changes in the app or at the command line, by name (e.g.
    "login.idle_seconds"); a name without a row has its default. The value is JSON."""

    name: str = Field(primary_key=True)
    value: Any = Field(sa_column=Column(JSON, nullable=False))
    updated_at: datetime = _time()
    updated_by_pk: int | None = Field(default=None, foreign_key="user.id")


class Assignment(SQLModel, table=True):
    """A case given to a labeler to label (two labelers per case for double labeling).

    `dataset_id` and `case_position` are the case's own, copied when the assignment is made
    (neither ever changes for a case): with the index ix_assignment_queue a labeler's queue is
    read in its order from the index, without sorting their cases (services/labeling.py).
    """

    __table_args__ = (
        UniqueConstraint("case_pk", "labeler_pk"),
        Index("ix_assignment_queue", "labeler_pk", "dataset_id", "case_position", "case_pk", unique=True),
    )
    id: int | None = Field(default=None, primary_key=True)
    case_pk: int = Field(foreign_key="case.id", index=True)
    labeler_pk: int = Field(foreign_key="user.id", index=True)
    dataset_id: int = 0  # Case.dataset_id
    case_position: int = 0  # Case.position
    created_at: datetime = _time()


class Label(SQLModel, table=True):
    """One labeler's current label of one claim; its history is in LabelEvent."""

    __table_args__ = (
        UniqueConstraint("claim_pk", "labeler_pk"),
        Index("ix_label_labeler_claim", "labeler_pk", "claim_pk"),
    )
    id: int | None = Field(default=None, primary_key=True)
    claim_pk: int = Field(foreign_key="claim.id", index=True)
    labeler_pk: int = Field(foreign_key="user.id")
    value: str
    passage_ids: list | None = _json()  # cited passage ids (the user's string ids)
    rationale: str = ""
    severity: str | None = None
    guideline_version: str = ""
    source: str = "app"  # app | import | correction (an admin changed it: services/corrections.py)
    revision: int = 1
    created_at: datetime = _time()
    updated_at: datetime = _time()


class LabelEvent(SQLModel, table=True):
    """Append-only audit trail of every write (labels, adjudications, holds, assignments, users,
    releases): who, when, what, before and after."""

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _time(index=True)
    actor_pk: int | None = Field(default=None, foreign_key="user.id")
    entity: str  # label | adjudication | hold | assignment | user | release | claim
    entity_pk: int | None = None
    claim_pk: int | None = Field(default=None, index=True)
    action: str  # create | update | delete
    before: dict | None = _json()
    after: dict | None = _json()


class Hold(SQLModel, table=True):
    """A case put on hold; a hold with `lifted_at` set no longer applies."""

    id: int | None = Field(default=None, primary_key=True)
    case_pk: int = Field(foreign_key="case.id", index=True)
    reason: str
    note: str = ""
    created_by: int | None = Field(default=None, foreign_key="user.id")
    created_at: datetime = _time()
    lifted_at: datetime | None = _time(nullable=True)


class Adjudication(SQLModel, table=True):
    """The adjudicator's decision on a disputed claim (one current row per claim)."""

    id: int | None = Field(default=None, primary_key=True)
    claim_pk: int = Field(foreign_key="claim.id", unique=True, index=True)
    adjudicator_pk: int = Field(foreign_key="user.id")
    value: str
    rationale: str = ""
    severity: str | None = None
    revision: int = 1
    decided_at: datetime = _time()


class GoldRelease(SQLModel, table=True):
    """A frozen, hashed gold release; its files live in `path`."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True, index=True)
    created_at: datetime = _time()
    creator: str = ""
    path: str = ""
    manifest_sha256: str = ""
    scope: dict | None = _json()
    counts: dict | None = _json()


class GoldLabel(SQLModel, table=True):
    """One claim's gold label in one release."""

    __table_args__ = (UniqueConstraint("release_pk", "claim_pk"),)
    id: int | None = Field(default=None, primary_key=True)
    release_pk: int = Field(foreign_key="goldrelease.id", index=True)
    claim_pk: int = Field(foreign_key="claim.id", index=True)
    gold_label: str
    resolution: str  # agreed | adjudicated


class Guideline(SQLModel, table=True):
    """One published version of the labeling guideline (Markdown). Published versions are never
    edited: a change is a new version. The current guideline is the one published last (highest
    id); every label records the version that was current when it was saved."""

    __table_args__ = (CheckConstraint("version <> ''", name="ck_guideline_version_not_empty"),)
    id: int | None = Field(default=None, primary_key=True)
    version: str = Field(unique=True, index=True)  # the admin's name for it: "v1", "2026-11"
    markdown: str
    sha256: str  # of the Markdown text, UTF-8
    published_at: datetime = _time()
    published_by: int = Field(foreign_key="user.id")


class JudgeRun(SQLModel, table=True):
    """An automatic judge's run (an LLM or any grader), whose labels are calibrated against a gold
    release. Immutable once imported: no service updates or deletes a run or its labels."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    dataset_pk: int | None = Field(default=None, foreign_key="dataset.id", index=True)
    model: str = ""
    prompt_version: str = ""
    note: str = ""
    creator: str = ""  # the user who imported it; "" for the command line
    source_name: str = ""  # the imported file's name
    source_sha256: str = ""  # of the imported file's bytes
    created_at: datetime = _time()


class JudgeLabel(SQLModel, table=True):
    """An automatic judge's label of one claim in one run, with its confidence (0..1) and
    rationale when the file gave them. Never shown to labelers or adjudicators."""

    __table_args__ = (UniqueConstraint("run_pk", "claim_pk"),)
    id: int | None = Field(default=None, primary_key=True)
    run_pk: int = Field(foreign_key="judgerun.id", index=True)
    claim_pk: int = Field(foreign_key="claim.id")
    value: str
    confidence: float | None = None
    rationale: str = ""


class Run(SQLModel, table=True):
    """One run of a RAG system over a dataset's cases (formats/runs.py reads its file), scored
    against gold releases and compared with other runs. Immutable once imported: no service
    updates or deletes a run or its cases."""

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)  # refused when taken in any letter case (services/runs.py)
    dataset_pk: int = Field(foreign_key="dataset.id", index=True)
    meta: dict | None = _json()  # every --meta KEY=VALUE (system, model, prompt, index, corpus_release, ...)
    note: str = ""
    creator: str = ""  # the user who imported it; "" for the command line
    source_name: str = ""  # the imported file's name
    source_sha256: str = ""  # of the imported file's bytes
    n_cases: int = 0
    n_unknown_retrieved: int = 0  # retrieved passage ids the dataset does not know (over all its cases)
    created_at: datetime = _time()


class RunCase(SQLModel, table=True):
    """What a run did with one case: the passage ids it retrieved (ranked, best first), its
    behaviour, answer, cited passage ids and claims, as its file gave them."""

    __table_args__ = (UniqueConstraint("run_pk", "case_pk"),)
    id: int | None = Field(default=None, primary_key=True)
    run_pk: int = Field(foreign_key="run.id", index=True)
    case_pk: int = Field(foreign_key="case.id")
    position: int = 0  # order in the run's file
    line: int = 0  # line of the run's file
    retrieved: list | None = _json()  # passage ids (the user's string ids), best first
    behavior: str = ""  # one of vocabulary.BEHAVIORS
    answer: str | None = None
    cited: list | None = _json()  # passage ids the answer cites
    claims: list | None = _json()  # [{text, label, claim_id | None, severity | None}]


class Draft(SQLModel, table=True):
    """A labeler's unsaved input on one claim, kept while they type so a reload or reconnect
    restores it. Private to its labeler; not a label (no agreement, release or export reads it)
    and not audited. Deleted when their label on the claim is saved or they discard it."""

    __table_args__ = (UniqueConstraint("labeler_pk", "claim_pk"),)
    id: int | None = Field(default=None, primary_key=True)
    labeler_pk: int = Field(foreign_key="user.id")
    claim_pk: int = Field(foreign_key="claim.id")
    value: str | None = None  # a label chosen but not saved (a refused save), else None
    passage_ids: list | None = _json()  # cited passage ids (the user's string ids)
    rationale: str = ""
    severity: str | None = None
    updated_at: datetime = _time()
