"""`import_adjudications`: from a CSV or JSONL file of decisions, or (vote mode) the K-th
non-null vote of every disputed claim of a CLIMATE-FEVER file, as decided by cf-vote-K."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlmodel import Session, select

from annotator import formats
from annotator.db import refresh_statistics
from annotator.errors import ImportFileError, ImportRowError, InvalidValueError
from annotator.formats import AdjudicationRecord, ClaimRecord
from annotator.formats.kinds import kind
from annotator.messages import Term, english, msg
from annotator.models import Adjudication, Claim, utcnow
from annotator.services.access import Caller, require
from annotator.services.audit import event_row, record_event, record_events
from annotator.services.imports.rows import RowImport
from annotator.services.imports.shared import (
    ImportReport, KINDS, PeopleSoFar, Tally, batches, bulk_insert, check_dataset_name, differences,
    refused_when_concurrent, skipped_lines_of,
)
from annotator.services.imports.stored import labelers_of, states_of, stored_adjudications
from annotator.services.lookup import get_dataset
from annotator.services.states import claim_states
from annotator.workflow import Permission, State


ADJUDICABLE: frozenset[State] = frozenset({State.DISPUTED, State.STALE})


ADJUDICATION_FIELDS = ("adjudicator", "label", "rationale", "severity")


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


@refused_when_concurrent("adjudications")
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
    source = formats.read_adjudications(path, fmt, skips=skips, unique=False)  # repeats: `RowImport.checked`
    run = _AdjudicationImport(session, actor, source.path, dataset, update, skips)
    run.stream(source)
    if run.read == 0 and not skips:
        raise ImportFileError.of("msg.import.file.no_adjudications", path=str(source.path))
    refresh_statistics(session)
    report = run.people.people().report(source.path, source.format, source.encoding, dataset, run.tally.as_dict(),
                                        dict(run.skipped), source.warnings)
    return replace(report, skipped_lines=skipped_lines_of(skips))


class _AdjudicationImport(RowImport):
    """One adjudications import (CSV or JSONL), fed chunk by chunk (`add`)."""

    def __init__(self, session: Session, actor: Caller, path: str, dataset: str | None, update: bool,
                 skips: formats.Skips | None):
        super().__init__(session, actor, path, dataset, update, skips, "adjudications", "adjudicator",
                         "adjudication of claim")

    def add(self, records: list[AdjudicationRecord]) -> None:
        self.read += len(records)
        claims = self.claims_of(record.claim_id for record in records)
        pks = claims.pks()
        stored, labelers, states = (stored_adjudications(self.session, pks), labelers_of(self.session, pks),
                                    states_of(self.session, pks))

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
    name = dataset or kind("adjudications").default_datasets["climate-fever"]
    dataset_pk = get_dataset(session, name).id
    claim_pks = _pk_map(session, Claim.claim_id, Claim.id, Claim.dataset_id, dataset_pk)
    states = claim_states(session, dataset_pk)
    tally, skipped = Tally("adjudications"), Counter()
    items = []
    for case in source.records:
        for claim in case.claims:
            item = _vote_item(source.path, name, claim, claim_pks, states, vote, skipped)
            if item is not None:
                items.append(item)
    planned = _plan_adjudications(session, source.path, items, states, tally, skipped)
    people = PeopleSoFar(session, "adjudicator", source.path)
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
                        tally: Tally, skipped: Counter) -> list[_PlannedAdjudication]:
    """Vote mode: plan every adjudication (`_plan_adjudication`), counting outcomes and skips."""
    pks = [item.claim_pk for item in items]
    stored, labelers = stored_adjudications(session, pks), labelers_of(session, pks)
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
        differing, shown = differences(dict(zip(ADJUDICATION_FIELDS, found[1:5], strict=True)), item.fields())
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
    bulk_insert(session, Adjudication, [
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
    for batch in batches(sorted(claim_pks)):
        found.update(dict(session.exec(select(Adjudication.claim_pk, Adjudication.id).where(Adjudication.claim_pk.in_(batch))).all()))
    return found


def _pk_map(session: Session, id_column: Any, pk_column: Any, dataset_column: Any, dataset_pk: int) -> dict[str, int]:
    """The user's id -> primary key for every row of one table in one dataset, in one query."""
    return dict(session.exec(select(id_column, pk_column).where(dataset_column == dataset_pk)).all())
