"""What the case readers (native JSONL, flat CSV, CLIMATE-FEVER) share: the RAG case fields,
a case's passages without repeats, and a file's cases without repeats (`unique_cases`: a case,
claim or passage id given twice with other content is refused naming both lines)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from annotator.errors import ImportRowError
from annotator.formats.reading import Row, Seen, Skips, canonical, differing, ids_or_none, json_type, nfc, nfc_json
from annotator.formats.records import CaseRecord, PassageRecord
from annotator.messages import msg


RAG_CASE_FIELDS: dict[str, str] = {
    "required_evidence_ids": "requiredEvidenceIds",
    "forbidden_evidence_ids": "forbiddenEvidenceIds",
    "outdated_passage_ids": "outdatedPassageIds",
    "expected_behavior": "expectedBehavior",
    "expected_answer": "expectedAnswer",
    "principal": "principal",
    "corpus_release": "corpusRelease",
}
"""The RAG case fields a case record may carry (canonical snake_case -> camelCase), stored in the
case's metadata under the snake_case key. The id lists must name passages of the case."""
RAG_ID_LISTS: tuple[str, ...] = ("required_evidence_ids", "forbidden_evidence_ids", "outdated_passage_ids")
RAG_SPELLINGS: frozenset[str] = frozenset(RAG_CASE_FIELDS) | frozenset(RAG_CASE_FIELDS.values())


def rag_fields(row: Row, passage_ids: list[str], metadata: dict[str, Any], *, id_list: str = "json") -> dict[str, Any]:
    """The RAG case fields of a record (`RAG_CASE_FIELDS`, either spelling) by their snake_case
    names, checked: id lists are lists of ids naming passages of the case (`passage_ids`; in CSV,
    id_list="csv", one cell of ids separated by ";"), expected_behavior and corpus_release are
    strings, principal a string or an object. Raises ImportRowError for both spellings of one
    field, a wrong type, an unknown passage, or a value that contradicts the same key in the
    case's `metadata`."""
    found: dict[str, Any] = {}
    for snake, camel in RAG_CASE_FIELDS.items():
        given = [name for name in dict.fromkeys((snake, camel)) if row.values.get(name) not in (None, "")]
        if len(given) > 1:
            raise row.error(camel, msg("msg.import.problem.both_spellings", snake=snake, camel=camel),
                            msg("msg.import.fix.keep_spelling", snake=snake))
        if not given:
            continue
        name = given[0]
        if snake in RAG_ID_LISTS:
            value: Any = _rag_id_list(row, name, passage_ids, id_list)
        elif snake == "principal" and isinstance(row.values[name], dict):
            value = nfc_json(row.values[name])
        else:
            value = row.text(name)
        if snake in metadata and metadata[snake] != value:
            raise row.error(name, msg("msg.import.problem.rag_and_metadata", name=name, snake=snake),
                            msg("msg.import.fix.keep_one"))
        found[snake] = value
    return found


def _rag_id_list(row: Row, name: str, passage_ids: list[str], id_list: str) -> list[str]:
    raw = row.values[name]
    if id_list == "csv":
        ids = [nfc(part.strip()) for part in raw.split(";") if part.strip()]
        paths = [name] * len(ids)
    else:
        if not isinstance(raw, list):
            raise row.error(name, msg("msg.import.problem.expected_id_list", type=json_type(raw)),
                            msg("msg.import.fix.id_list", name=name))
        paths = [f"{name}[{i}]" for i in range(len(raw))]
        ids = [row.check_ident(path, item) for path, item in zip(paths, raw, strict=True)]
    for path, evidence_id in zip(paths, ids, strict=True):
        if evidence_id not in passage_ids:
            raise row.error(path, msg("msg.import.problem.unknown_evidence", id=evidence_id,
                                      passages=ids_or_none(passage_ids)), msg("msg.import.fix.name_case_passages"))
    return ids


def distinct_passages(row: Row, key: str, passages: list[PassageRecord]) -> tuple[PassageRecord, ...]:
    """The case's passages with identical repeats dropped; a repeat with other content is refused."""
    by_id: dict[str, PassageRecord] = {}
    for passage in passages:
        first = by_id.setdefault(passage.passage_id, passage)
        if first.content() != passage.content():
            raise row.error(key, msg("msg.import.problem.passage_twice_in_record", id=passage.passage_id,
                                     differing=differing(first.content(), passage.content())),
                            msg("msg.import.fix.another_id"))
    return tuple(by_id.values())


def unique_cases(path: str, cases: Iterable[CaseRecord], claim_field: str = "claims[{}].claim_id",
                 passage_field: str = "passages[{}].passage_id", skips: Skips | None = None) -> Iterator[CaseRecord]:
    """Drop identical repeats of a case; refuse a case, claim or passage id given twice in the file
    with other content (a passage shown in several cases is normal; its later copies are marked
    `first=False`). The *_field templates name the field in errors, formatted with the claim's or
    passage's index in its case. With `skips`, a refused case is noted and skipped, and the ids it
    brought are forgotten."""
    seen = Seen(path, "case"), Seen(path, "claim"), Seen(path, "passage")
    for case in cases:
        added: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        try:
            unique = _unique_case(case, seen, added, claim_field, passage_field)
        except ImportRowError as error:
            if skips is None:
                raise
            skips.add(error)
            for kind, keys in zip(seen, added, strict=True):
                kind.forget(keys)
            continue
        if unique is not None:
            yield unique


def _unique_case(case: CaseRecord, seen: tuple[Seen, Seen, Seen], added: tuple[list[Any], list[Any], list[Any]],
                 claim_field: str, passage_field: str) -> CaseRecord | None:
    seen_cases, seen_claims, seen_passages = seen
    whole = (case.question, case.answer, case.slice, case.split, canonical(case.metadata),
             tuple((p.passage_id, p.doc_id, p.version, p.title, p.text) for p in case.passages),
             tuple((c.claim_id, c.text, c.passage_ids, c.votes, c.span) for c in case.claims))
    if not seen_cases.first_time(case.case_id, whole, case.line, "case_id"):
        return None
    added[0].append(case.case_id)
    passages = []
    for i, passage in enumerate(case.passages):
        if seen_passages.first_time(passage.passage_id, passage.content(), passage.line, passage_field.format(i)):
            added[2].append(passage.passage_id)
            passages.append(passage)
        else:
            passages.append(replace(passage, first=False))
    claims = []
    for i, claim in enumerate(case.claims):
        if seen_claims.first_time(claim.claim_id, {"case_id": case.case_id, "text": claim.text, "passage_ids": claim.passage_ids},
                                  claim.line, claim_field.format(i)):
            added[1].append(claim.claim_id)
            claims.append(claim)
    if len(claims) == len(case.claims) and all(passage.first for passage in passages):
        return case  # nothing dropped or marked: the same record (no copy)
    return replace(case, passages=tuple(passages), claims=tuple(claims))
