"""CLIMATE-FEVER files: one case per claim (`case_id` = its `claim_id`), one claim per evidence,
id `{claim_id}-{k}` for its k-th evidence, shown with that evidence sentence as its only
passage; the votes kept by slot, in our label names.

Source: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), "CLIMATE-FEVER: A Dataset
for Verification of Real-World Climate Claims", arXiv:2012.00614.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from annotator.formats.case_parts import distinct_passages, unique_cases
from annotator.formats.jsonl import json_lines
from annotator.formats.reading import Row, Skips, list_value, skipping
from annotator.formats.records import CaseRecord, ClaimRecord, PassageRecord, Position, Source
from annotator.messages import msg
from annotator.vocabulary import CLIMATE_FEVER_LABELS


CLIMATE_FEVER_SOURCE = "CLIMATE-FEVER (Diggelmann et al., 2020)"
CLIMATE_FEVER_SLICE = "normal"  # the file's own group is not one of our slices
CLIMATE_FEVER_SPLIT = "dev"
VOTER_PREFIX = "cf-vote-"


def voter_name(k: int) -> str:
    """The labeler name of CLIMATE-FEVER vote k (1-based): "cf-vote-k"."""
    return f"{VOTER_PREFIX}{k}"


def slot_votes(votes: Iterable[str | None]) -> list[tuple[str, str]]:
    """(labeler, label) for every non-null vote slot j, as labeler cf-vote-{j+1} (`--with-votes`)."""
    return [(voter_name(j + 1), vote) for j, vote in enumerate(votes) if vote is not None]


def first_votes(votes: Iterable[str | None], n: int) -> list[tuple[str, str]]:
    """(labeler, label) for the first `n` non-null votes: the k-th as labeler cf-vote-{k}."""
    cast = [vote for vote in votes if vote is not None][:n]
    return [(voter_name(k), vote) for k, vote in enumerate(cast, start=1)]


def nth_vote(votes: Iterable[str | None], k: int) -> str | None:
    """The k-th (1-based) non-null vote, or None when there are fewer than k votes."""
    cast = [vote for vote in votes if vote is not None]
    return cast[k - 1] if 0 < k <= len(cast) else None


CLIMATE_FEVER_VOTES = tuple(CLIMATE_FEVER_LABELS)


def read_climate_fever(path: Path, skips: Skips | None = None) -> Source[CaseRecord]:
    """The cases of a CLIMATE-FEVER file (see `read_cases`, fmt "climate-fever")."""
    position = Position(path.stat().st_size)
    encoding, rows = json_lines(path, skips, position)
    cases = unique_cases(str(path), skipping(rows, _climate_fever_case, skips), "evidences[{}]", "evidences", skips)
    return Source(str(path), "climate-fever", encoding, cases, [], position)


CLIMATE_FEVER_CLAIM_NAMES: dict[str, str] = {"text": "claim", "case_id": "claim_id", "passage_ids": "evidence_id"}
CLIMATE_FEVER_PASSAGE_NAMES: dict[str, str] = {"text": "evidence", "title": "article", "doc_id": "article"}


def _climate_fever_case(row: Row) -> CaseRecord:
    """One CLIMATE-FEVER claim as one case: one claim per evidence, `{claim_id}-{k}`, shown with
    that evidence sentence only; votes kept by slot, mapped to our label names."""
    case_id = row.ident("claim_id")
    text = row.text("claim", required=True)
    evidences = list_value(row, "evidences")
    if not evidences:
        raise row.error("evidences", msg("msg.import.problem.no_evidences"), msg("msg.import.fix.give_evidences"))
    passages, claims = [], []
    for k, value in enumerate(evidences):
        evidence = row.child("evidences", k, value)
        passage = _climate_fever_passage(evidence)
        passages.append(passage)
        claims.append(ClaimRecord(f"{case_id}-{k}", text, (passage.passage_id,), row.line, _climate_fever_votes(evidence),
                                  names={**CLIMATE_FEVER_CLAIM_NAMES, "passage_ids": f"evidences[{k}].evidence_id"}))
    return CaseRecord(
        case_id=case_id, question=text, answer="", slice=CLIMATE_FEVER_SLICE, split=CLIMATE_FEVER_SPLIT,
        metadata={"claim_label": row.text("claim_label"), "source": CLIMATE_FEVER_SOURCE},
        passages=distinct_passages(row, "evidences", passages), claims=tuple(claims), line=row.line,
    )


def _climate_fever_passage(evidence: Row) -> PassageRecord:
    article = evidence.text("article")
    return PassageRecord(evidence.ident("evidence_id"), article, "", article, evidence.text("evidence", required=True),
                         evidence.line, prefix=evidence.prefix, names=CLIMATE_FEVER_PASSAGE_NAMES)


def _climate_fever_votes(evidence: Row) -> tuple[str | None, ...]:
    votes = list_value(evidence, "votes")
    mapped = []
    for j, vote in enumerate(votes):
        if vote is not None and vote not in CLIMATE_FEVER_LABELS:
            raise evidence.error(f"votes[{j}]", msg("msg.import.problem.unknown_vote", vote=repr(vote)),
                                 msg("msg.import.fix.vote_choices", choices=", ".join(CLIMATE_FEVER_VOTES)))
        mapped.append(None if vote is None else CLIMATE_FEVER_LABELS[vote])
    return tuple(mapped)
