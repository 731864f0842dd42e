"""What the database holds of the claims an import names: their stored labels and
adjudications, who labeled them, their states and the passages each is shown with; one query
per BATCH claims."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, select

from annotator.models import Adjudication, ClaimPassage, Label, Passage, User
from annotator.services.imports.shared import batches
from annotator.services.states import claim_states
from annotator.workflow import State


@dataclass(frozen=True)
class StoredLabel:
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


def _stored_label(row: Sequence[Any]) -> StoredLabel:
    pk, value, rationale, passage_ids, severity, revision = row
    return StoredLabel(pk, value, rationale, tuple(passage_ids or ()), severity, revision)


_LABEL_COLUMNS = (Label.id, Label.value, Label.rationale, Label.passage_ids, Label.severity, Label.revision)


def stored_labels_by_claim_pk(session: Session, claim_pks: Iterable[int]) -> dict[tuple[Any, str], StoredLabel]:
    """(claim pk, labeler name) -> stored label, for the given claims."""
    found = {}
    for batch in batches(sorted(set(claim_pks))):
        query = (select(Label.claim_pk, User.name, *_LABEL_COLUMNS).join(User, User.id == Label.labeler_pk)
                 .where(Label.claim_pk.in_(batch)))
        found.update({(row[0], row[1]): _stored_label(row[2:]) for row in session.exec(query)})
    return found


def stored_adjudications(session: Session, claim_pks: Iterable[int]) -> dict[int, tuple[Any, ...]]:
    """claim pk -> (pk, adjudicator name, value, rationale, severity, revision)."""
    found = {}
    for batch in batches(sorted(set(claim_pks))):
        query = (select(Adjudication.claim_pk, Adjudication.id, User.name, Adjudication.value, Adjudication.rationale,
                        Adjudication.severity, Adjudication.revision)
                 .join(User, User.id == Adjudication.adjudicator_pk).where(Adjudication.claim_pk.in_(batch)))
        found.update({row[0]: tuple(row[1:]) for row in session.exec(query)})
    return found


def labelers_of(session: Session, claim_pks: Iterable[int]) -> dict[int, set[str]]:
    """claim pk -> names of the people who labeled it."""
    found: dict[int, set[str]] = defaultdict(set)
    for batch in batches(sorted(set(claim_pks))):
        query = select(Label.claim_pk, User.name).join(User, User.id == Label.labeler_pk).where(Label.claim_pk.in_(batch))
        for claim_pk, name in session.exec(query):
            found[claim_pk].add(name)
    return found


def states_of(session: Session, claim_pks: Iterable[int]) -> dict[int, State]:
    """claim pk -> its workflow state, for the given claims (states.claim_states, BATCH at a time)."""
    states: dict[int, State] = {}
    for batch in batches(sorted(set(claim_pks))):
        states.update(claim_states(session, claim_pks=batch))
    return states


def shown_passages(session: Session, claim_pks: Iterable[int]) -> dict[int, list[str]]:
    """claim pk -> ids of the passages it is shown with, in order."""
    shown: dict[int, list[str]] = defaultdict(list)
    for batch in batches(sorted(set(claim_pks))):
        query = (select(ClaimPassage.claim_pk, Passage.passage_id).join(Passage, Passage.id == ClaimPassage.passage_pk)
                 .where(ClaimPassage.claim_pk.in_(batch)).order_by(ClaimPassage.claim_pk, ClaimPassage.position))
        for claim_pk, passage_id in session.exec(query):
            shown[claim_pk].append(passage_id)
    return shown
