"""What the imports of row files (labels, adjudications) share: the claims a chunk names,
looked up once (`ChunkClaims`: an unknown or ambiguous id and a claim the caller is still to
label are refused), and repeats of a row checked across chunks (`RowImport`), CHUNK_ROWS rows
at a time."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlmodel import Session, select

from annotator import formats
from annotator.errors import ImportRowError
from annotator.formats import AdjudicationRecord, LabelRecord
from annotator.messages import msg
from annotator.models import Claim, utcnow
from annotator.services.access import Caller
from annotator.services.blind import claims_still_to_label
from annotator.services.imports.shared import PeopleSoFar, Tally, batches, stream
from annotator.services.lookup import get_dataset

T = TypeVar("T")


CHUNK_ROWS = 5_000
"""Labels or adjudications read, checked and written together: bounds memory, keeps statements large."""


R = TypeVar("R", LabelRecord, AdjudicationRecord)


class RowImport:
    """What a labels or adjudications import keeps between chunks: the file, the dataset (looked
    up at the first chunk), counts, the people it named (created or given `role`) and the rows
    it imported (`seen`: one key and content digest per row, `formats.Seen`)."""

    def __init__(self, session: Session, actor: Caller, path: str, dataset: str | None, update: bool,
                 skips: formats.Skips | None, kind: str, role: str, seen: str):
        self.session, self.actor, self.path, self.dataset, self.update, self.skips = session, actor, path, dataset, update, skips
        self.tally, self.people = Tally(kind), PeopleSoFar(session, role, path)
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

    def stream(self, source: formats.Source[R]) -> None:
        """Feed the records of `source` to the import's `add`, CHUNK_ROWS at a time (`shared.stream`)."""
        stream(source, CHUNK_ROWS, self.add)  # type: ignore[attr-defined] - each kind of import has its add

    def claims_of(self, claim_ids: Iterable[str]) -> ChunkClaims:
        """The chunk's claims (`ChunkClaims`), the dataset looked up the first time."""
        if self.dataset is not None and self._dataset_pk is None:
            self._dataset_pk = get_dataset(self.session, self.dataset).id
        return ChunkClaims.of(self.session, self.actor, self.path, sorted(set(claim_ids)), self.dataset, self._dataset_pk)


@dataclass(frozen=True)
class ChunkClaims:
    """The claims a chunk of a labels or adjudications file names: claim id -> the pks of the
    claims with that id (in the dataset, or in all), and those of them the caller is still to label."""

    path: str
    dataset: str | None
    found: dict[str, list[int]]
    blind: frozenset[int]

    @classmethod
    def of(cls, session: Session, actor: Caller, path: str, claim_ids: Sequence[str], dataset: str | None,
           dataset_pk: int | None) -> ChunkClaims:
        found: dict[str, list[int]] = defaultdict(list)
        for batch in batches(claim_ids):
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
