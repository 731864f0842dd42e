"""The records the readers give out (plain frozen data, one per case, claim, passage, label,
adjudication, judge label or run case of a file) and `Source`, an opened input file streaming them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class PassageRecord:
    """One evidence passage as read from a file."""

    passage_id: str
    doc_id: str
    version: str
    title: str
    text: str
    line: int
    prefix: str = ""
    """Where the passage is in its record, e.g. "passages[1]." (native JSONL)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """The file's name of a content field where it is not the same (CSV: "text" -> "passage_text")."""
    first: bool = True
    """False when an earlier case of the same file already gave this passage (identical)."""

    def content(self) -> dict[str, str]:
        """The passage's fields that must match for a repeat of its id to be harmless."""
        return {"doc_id": self.doc_id, "version": self.version, "title": self.title, "text": self.text}

    def field_of(self, key: str) -> str:
        """The field path of a content key in the file, e.g. "passages[1].text"."""
        return self.prefix + self.names.get(key, key)


@dataclass(frozen=True)
class ClaimRecord:
    """One claim as read from a file: its passages (ids, in the order shown) and, for
    CLIMATE-FEVER, its votes by slot (our label names; None = no vote)."""

    claim_id: str
    text: str
    passage_ids: tuple[str, ...]
    line: int
    votes: tuple[str | None, ...] = ()
    prefix: str = ""
    """Where the claim is in its record, e.g. "claims[0]." (native JSONL)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """The file's name of a content field where it is not the same (CSV: "text" -> "claim")."""
    span: tuple[int, int] | None = None
    """Where the claim is in its case's answer: (start, end) in code points, answer[start:end] ==
    text; None when the file does not say (native, CSV, CLIMATE-FEVER) or the text is not found there."""

    def field_of(self, key: str) -> str:
        """The field path of a content key ("case_id", "text", "passage_ids") in the file, e.g.
        "claims[0].text"."""
        return self.prefix + self.names.get(key, key)


@dataclass(frozen=True)
class CaseRecord:
    """One case as read from a file, with its passages and claims in file order."""

    case_id: str
    question: str
    answer: str
    slice: str
    split: str
    metadata: dict[str, Any]
    passages: tuple[PassageRecord, ...]
    claims: tuple[ClaimRecord, ...]
    line: int

    def content(self) -> dict[str, Any]:
        """The case's own fields (not its claims or passages)."""
        return {"question": self.question, "answer": self.answer, "slice": self.slice,
                "split": self.split, "metadata": self.metadata}


@dataclass(frozen=True)
class LabelRecord:
    """One row of a labels file."""

    claim_id: str
    labeler: str
    label: str
    rationale: str
    passage_ids: tuple[str, ...]
    severity: str | None
    line: int


@dataclass(frozen=True)
class AdjudicationRecord:
    """One row of an adjudications file."""

    claim_id: str
    adjudicator: str
    label: str
    rationale: str
    severity: str | None
    line: int


@dataclass(frozen=True)
class JudgeLabelRecord:
    """One row of a judge labels file: an automatic judge's label of one claim, with its
    confidence (0..1; None when the file gives none) and rationale ("" when none)."""

    line: int
    claim_id: str
    label: str
    confidence: float | None
    rationale: str


@dataclass(frozen=True)
class RunClaimRecord:
    """One claim of a run's answer, with its label (from a judge or a person), its claim id when
    the file gives one (None otherwise) and its severity (None when none)."""

    text: str
    label: str
    claim_id: str | None
    severity: str | None


@dataclass(frozen=True)
class RunCaseRecord:
    """One line of a run file: what the RAG system did with one case. retrieved: passage ids,
    ranked best first, each once; behavior: one of vocabulary.BEHAVIORS; answer: None when the
    file gives none; cited: the passage ids the answer cites; claims: the answer's claims."""

    line: int
    case_id: str
    retrieved: tuple[str, ...]
    behavior: str
    answer: str | None
    cited: tuple[str, ...]
    claims: tuple[RunClaimRecord, ...]


@dataclass(frozen=True)
class Source(Generic[T]):
    """An opened input file: its format, the encoding used, and its records (an iterator, read
    once). `warnings` fills up while the records are read (unknown columns and fields)."""

    path: str
    format: str
    encoding: str
    records: Iterator[T]
    warnings: list[str] = field(default_factory=list)
    position: Position = field(default_factory=lambda: Position())
    """How far `records` has read the file, as it goes (case files; labels and adjudications: not kept)."""
    notes: list[Any] = field(default_factory=list)
    """What the reader made of the file, as messages for the import's report, filled once the
    records are read (RAGAS: where the case ids and claims came from); empty for the other formats."""


@dataclass
class Position:
    """How far a reader has read its file (bytes), for a progress bar; `size` is the file's size."""

    size: int = 0
    bytes_read: int = 0
