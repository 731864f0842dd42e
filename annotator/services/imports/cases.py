"""`import_cases`: a native JSONL, flat CSV, CLIMATE-FEVER (optionally with its votes as labels) or
RAGAS file, read, checked against the dataset and written CHUNK_CASES cases at a time.

CLIMATE-FEVER: Diggelmann et al. (2020), arXiv:2012.00614.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, update
from sqlmodel import Session, select

from annotator import formats
from annotator.db import refresh_statistics
from annotator.errors import ImportFileError, ImportRowError, InvalidValueError
from annotator.formats import CaseRecord, ClaimRecord, PassageRecord
from annotator.messages import english, msg
from annotator.models import Case, Claim, ClaimPassage, Dataset, Passage, utcnow
from annotator.services.access import Caller, require
from annotator.services.audit import record_event
from annotator.services.blind import claims_still_to_label
from annotator.services.claim_content import change_claim_content, labels_written_before
from annotator.services.imports.labels import LabelItem, UNCHANGED_LABEL, stored_label_conflict, write_labels
from annotator.services.imports.shared import (
    DEFAULT_DATASETS, ImportReport, People, PeopleSoFar, Tally, batches, bulk_insert, check_dataset_name,
    differences, refused_when_concurrent, skipped_lines_of, stream,
)
from annotator.services.imports.stored import (
    StoredLabel, shown_passages, stored_adjudications, stored_labels_by_claim_pk,
)
from annotator.vocabulary import SLICES
from annotator.workflow import Permission


@refused_when_concurrent("cases")
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
    claims: str | None = None,
) -> ImportReport:
    """Import a case file into `dataset` (created when missing).

    path: a native JSONL, flat CSV, CLIMATE-FEVER or RAGAS file (see `annotator.formats`); fmt:
        "auto", "jsonl", "csv", "climate-fever" or "ragas". dataset: default "default" (native,
        CSV, RAGAS) or "climate-fever". with_votes: CLIMATE-FEVER vote slot j becomes a label by
        cf-vote-{j+1}; first_votes=N: the k-th non-null vote becomes a label by cf-vote-{k}, k = 1..N.
    claims: RAGAS only (`--claims`): how an answer without its own `claims` is cut, "sentences"
        (None: the default) or "whole" (formats/ragas.py); each claim's span in the answer is stored.
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
    Raises ImportFileError (missing, empty, UTF-16 or not a regular file; a Parquet file that is
    not RAGAS or does not read), ImportRowError (a bad line, an unknown slice, or an id already
    stored with other content), InvalidValueError (a blank or space-padded dataset name, vote
    options on a non-CLIMATE-FEVER file, a --claims other than sentences or whole, or on a file
    that is not RAGAS).
    """
    require(actor, Permission.IMPORT)
    check_dataset_name(dataset)
    if claims is not None and claims not in formats.CLAIM_MODES:
        raise InvalidValueError.of("msg.import.option.claims_mode", mode=repr(claims))
    skips = formats.Skips() if partial else None
    source = formats.read_cases(path, fmt, skips=skips, claims=claims or formats.CLAIM_MODES[0])
    _check_vote_options(source.format, with_votes, first_votes)
    if claims is not None and source.format != "ragas":
        raise InvalidValueError.of("msg.import.option.claims_ragas_only", fmt=source.format)
    name = dataset or DEFAULT_DATASETS[source.format]
    found = session.exec(select(Dataset).where(Dataset.name == name)).first()
    run = _CaseImport(session, source.path, source.format, name, found.id if found else None, update, skips,
                      _votes_picker(with_votes, first_votes), _known_slices(session, found.id if found else None, slices))
    stream(source, CHUNK_CASES, run.add, progress)
    if run.cases_read == 0 and not skips:
        raise ImportFileError.of("msg.import.file.no_cases", path=str(source.path))
    refresh_statistics(session)
    warnings = list(source.warnings) + run.warnings()
    people = run.people()
    return replace(people.report(source.path, source.format, source.encoding, name, run.tally.as_dict(), {}, warnings),
                   skipped_lines=skipped_lines_of(skips), reading_notes=tuple(source.notes),
                   labels_to_review=run.labels_to_review(claims_still_to_label(session, actor)))


CHUNK_CASES = 2_000
"""Cases read, checked and written together: bounds memory, keeps statements large."""


def _known_slices(session: Session, dataset_pk: int | None, declared: Iterable[str]) -> frozenset[str]:
    """The slices an import may use: vocabulary.SLICES, the dataset's own, and those declared."""
    used = set() if dataset_pk is None else set(session.exec(select(Case.slice).where(Case.dataset_id == dataset_pk).distinct()))
    return frozenset(SLICES) | used | {name.strip() for name in declared if name.strip()}


def _votes_picker(with_votes: bool, first_n: int | None) -> Callable[[tuple[str | None, ...]], list[tuple[str, str]]] | None:
    if not with_votes and first_n is None:
        return None
    return formats.slot_votes if with_votes else (lambda votes: formats.first_votes(votes, first_n or 0))


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
    labels: dict[tuple[Any, str], StoredLabel] = field(default_factory=dict)  # (claim pk, labeler) -> label
    adjudicators: dict[int, str] = field(default_factory=dict)  # claim pk -> adjudicator's name


def _case_content(question: str, answer: str, slice_: str, split: str, meta: dict | None) -> dict[str, Any]:
    return {"question": question, "answer": answer, "slice": slice_, "split": split, "metadata": meta or {}}


def _passage_content(doc_id: str, version: str, title: str, text: str) -> dict[str, str]:
    return {"doc_id": doc_id, "version": version, "title": title, "text": text}


def _claim_content(case_id: str, claim: ClaimRecord) -> dict[str, Any]:
    return _stored_claim_content(case_id, claim.text, list(claim.passage_ids), claim.span)


def _stored_claim_content(case_id: str, text: str, passage_ids: list[str], span: tuple[int, int] | None) -> dict[str, Any]:
    """A claim's content as compared and audited; its span ([start, end]) only when it has one, so
    that a claim without one (native, CSV, CLIMATE-FEVER) reads as before."""
    content: dict[str, Any] = {"case_id": case_id, "text": text, "passage_ids": passage_ids}
    if span is not None:
        content["span"] = list(span)
    return content


def _span_columns(claim: ClaimRecord) -> dict[str, int | None]:
    """The claim's span as the claim table stores it."""
    start, end = claim.span if claim.span is not None else (None, None)
    return {"span_start": start, "span_end": end}


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
    votes: list[LabelItem] = field(default_factory=list)
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
        self.tally = Tally("cases", "claims", "passages", *(("labels",) if pick_votes else ()))
        self.cases_read, self.touched = 0, 0
        self.changed_claims: set[int] = set()  # claims whose text or passages this import changed
        self.now = utcnow()
        self.next_position = 0 if dataset_pk is None else (session.exec(
            select(func.max(Case.position)).where(Case.dataset_id == dataset_pk)).one() or -1) + 1
        self._people = PeopleSoFar(session, "labeler", path)

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
            outcome = self._compare("passage", pid, passage.content() if found else None, found, passage.line,
                                    passage.field_of, None)
            if outcome == "unchanged" and not passage.first:
                outcome = ""  # the file gave it before: counted there
            passages.append((outcome, found, passage))
        found_case = stored.cases.get(case.case_id)
        case_outcome = self._compare("case", case.case_id, case.content() if found_case else None, found_case, case.line,
                                     _same_name, found_case.written_at if found_case else None)
        claims = []
        for position, claim in enumerate(case.claims):
            found = stored.claims.get(claim.claim_id)
            content = _claim_content(case.case_id, claim) if found else None
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
        plan.votes += [item for item in votes if item.stored is not UNCHANGED_LABEL]
        outcomes += [("labels", "unchanged" if item.stored is UNCHANGED_LABEL else "updated" if item.stored else "new")
                     for item in votes]
        return outcomes

    def _compare(self, noun: str, key: str, content: dict[str, Any] | None, found: _Found | None, line: int,
                 field_of: Callable[[str], str], since: datetime | None) -> str:
        """"new", "unchanged" or "updated" (content: the file's, None when nothing is `found`). Raises ImportRowError naming the file's line and field
        path, the dataset, when the stored version was last written (`since`: first imported or
        replaced by an `--update`), and both values, unless `update`."""
        if found is None:
            return "new"
        if found.content == content:
            return "unchanged"
        if not self.update:
            differing, shown = differences(found.content, content)
            when = msg("msg.import.problem.stored_when", time=f"{since:%Y-%m-%d %H:%M}") if since is not None else ""
            noun_said = msg(f"msg.import.noun.{noun}")
            raise ImportRowError(
                self.path, line, field_of(differing[0]),
                msg("msg.import.problem.stored_other", noun=noun_said, id=key, dataset=self.dataset, when=when,
                    fields=", ".join(differing), shown=shown),
                msg("msg.import.fix.update_or_new_id", noun=noun_said),
            )
        return "updated"

    def _votes(self, case: CaseRecord, stored: _ChunkStored) -> list[LabelItem]:
        """The case's CLIMATE-FEVER votes to import as labels, each with its stored label
        (`UNCHANGED_LABEL` when the same). Raises ImportRowError for a voter who adjudicated the
        claim, or a stored label with other content (without `update`)."""
        if self.pick_votes is None:
            return []
        items = []
        for claim in case.claims:
            found = stored.claims.get(claim.claim_id)
            for labeler, value in self.pick_votes(claim.votes):
                self._people.check(labeler, claim.line, "votes")
                item = LabelItem(claim.claim_id, claim.claim_id, labeler, value, claim.line)
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
                    items.append(replace(item, stored=UNCHANGED_LABEL))
                elif not self.update:
                    raise stored_label_conflict(self.path, claim.line, labeler, claim.claim_id, label.fields(), item.fields())
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
        for batch in batches(passage_ids):
            for row in session.exec(select(Passage.passage_id, Passage.id, Passage.doc_id, Passage.version, Passage.title,
                                           Passage.text).where(Passage.dataset_id == dataset_pk, Passage.passage_id.in_(batch))):
                stored.passages[row[0]] = _Found(row[1], _passage_content(*row[2:]))
        if self.fresh:
            return stored
        for batch in batches([case.case_id for case in cases]):
            for row in session.exec(select(Case.case_id, Case.id, Case.question, Case.answer, Case.slice, Case.split, Case.meta,
                                           Case.updated_at).where(Case.dataset_id == dataset_pk, Case.case_id.in_(batch))):
                stored.cases[row[0]] = _Found(row[1], _case_content(*row[2:7]), row[7])
        claim_rows = []
        for batch in batches([claim.claim_id for case in cases for claim in case.claims]):
            claim_rows += session.exec(select(Claim.claim_id, Claim.id, Case.case_id, Claim.text, Claim.updated_at,
                                              Claim.span_start, Claim.span_end)
                                       .join(Case, Case.id == Claim.case_pk)
                                       .where(Claim.dataset_id == dataset_pk, Claim.claim_id.in_(batch))).all()
        shown = shown_passages(session, [row[1] for row in claim_rows])
        for claim_id, pk, case_id, text, written_at, start, end in claim_rows:
            span = None if start is None or end is None else (start, end)
            stored.claims[claim_id] = _Found(pk, _stored_claim_content(case_id, text, shown.get(pk, []), span), written_at)
        if self.pick_votes is not None:
            claim_pks = [found.pk for found in stored.claims.values()]
            stored.labels = stored_labels_by_claim_pk(session, claim_pks)
            stored.adjudicators = {pk: name for pk, (_, name, *_rest) in stored_adjudications(session, claim_pks).items()}
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
             "text": claim.text, **_span_columns(claim), "created_at": self.now, "updated_at": self.now}
            for case_id, position, claim in plan.new_claims]))
        for pk, before, case_id, position, claim in plan.changed_claims:
            change_claim_content(session, pk, {"case_pk": case_pks[case_id], "position": position, "text": claim.text,
                                               **_span_columns(claim)},
                                 before=before, after=_claim_content(case_id, claim), now=self.now)
        bulk_insert(session, ClaimPassage, [
            {"claim_pk": claim_pks[claim.claim_id], "passage_pk": passage_pks[passage_id], "position": position}
            for _case_id, _position, claim in plan.new_claims for position, passage_id in enumerate(claim.passage_ids)])
        for pk, before, _case_id, _position, claim in plan.changed_claims:
            if before["passage_ids"] != list(claim.passage_ids):
                session.exec(delete(ClaimPassage).where(ClaimPassage.claim_pk == pk))
                bulk_insert(session, ClaimPassage, [{"claim_pk": pk, "passage_pk": passage_pks[passage_id], "position": position}
                                                for position, passage_id in enumerate(claim.passage_ids)])
        touched = _touch_claims_of_changed_passages(session, plan, self.now)
        self.touched += len(touched)
        self.changed_claims |= touched | {pk for pk, *_rest in plan.changed_claims}
        if plan.votes:
            users = self._people.pks(item.labeler for item in plan.votes)
            write_labels(session, plan.votes, lambda item: claim_pks[item.claim], users, self.now)

    def _insert_new(self, model: Any, id_column: Any, rows: list[dict[str, Any]]) -> dict[str, int]:
        """Insert rows in bulk; returns user id -> pk of the rows inserted (those with a pk above
        the table's largest before: one query, no IN list)."""
        if not rows:
            return {}
        before = self.session.exec(select(func.max(model.id))).one() or 0
        bulk_insert(self.session, model, rows)
        return dict(self.session.exec(select(id_column, model.id).where(
            model.dataset_id == self.dataset_pk, model.id > before)).all())

    def people(self) -> People:
        return self._people.people()

    def labels_to_review(self, hidden: Any = None) -> int:
        """How many labels of the claims this import changed were written before it: each is now
        to review (workflow.label_to_review; labels this import wrote are not).

        hidden: the claims the importing admin still has to label (blind.claims_still_to_label),
        whose labels are left out of the count: it would move when another labeler labels one
        of them (the blind rule). None (the command line, or nothing left to label): all count."""
        return sum(labels_written_before(self.session, batch, self.now, hidden)
                   for batch in batches(sorted(self.changed_claims)))

    def warnings(self) -> list[str]:
        if not self.touched:
            return []
        return [english("msg.import.warn.changed_passages", n=f"{self.touched:,}")]


def _same_name(key: str) -> str:
    """A case's field path in the file: its key."""
    return key


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
    for batch in batches(sorted(touched)):
        session.exec(update(Claim).where(Claim.id.in_(batch)).values(updated_at=now))
    return touched
