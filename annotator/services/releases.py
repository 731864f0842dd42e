"""Gold releases on the database side: choose the claims in scope, refuse while any is not final
(unless asked for the final ones only), build the gold records and the re-importable cases in a
handful of bulk queries, store GoldRelease/GoldLabel rows and write the folder through
`annotator.release`; verify, download and compare stored releases.

Crash safety: the folder is staged (written and fsynced under `.NAME.tmp-XXXXXXXX`), then the rows
are committed, then the folder is renamed into place. A process killed before the commit leaves
the database unchanged and only a staging folder, which `release verify` refuses and the next
`release create` in that folder removes; one killed between the commit and the rename leaves a
complete staging folder whose manifest hash the database holds, which the next `release create`
in that folder, `release verify --release NAME` or a download finishes (renames into place),
saying so."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import event, func, insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotator.bulk import collector_paused
from annotator.errors import (
    AnnotatorError,
    NotFoundError,
    PermissionDeniedError,
    ReleaseBlockedError,
    ReleaseExistsError,
    ReleaseVerifyError,
    ReleaseWriteError,
)
from annotator.messages import Joined, Message, Term, msg, shortened
from annotator.text import MAX_ID_CHARS
from annotator.services.access import Caller, is_operator, require
from annotator.workflow import Permission
from annotator.models import Adjudication, Case, Claim, ClaimPassage, Dataset, GoldLabel, GoldRelease, Label, Passage, User, utcnow
from annotator.release import (
    ReleaseDiff,
    StagedRelease,
    StagingFolder,
    VerifyResult,
    check_release,
    check_release_name,
    check_release_target,
    claimed,
    count_records,
    diff_releases,
    finish_staged,
    kill_point,
    read_gold,
    problem_message,
    read_passage_texts,
    metadata_text,
    release_layout,
    sha256_file,
    stage_release,
    staging_folders,
    verify_release,
)
from annotator.services.audit import record_event
from annotator.services.blind import claims_still_to_label
from annotator.services.lookup import dataset_pk as lookup_dataset_pk
from annotator.services.reports import agreement_report
from annotator.services.states import claim_facts
from annotator.vocabulary import SEVERITIES
from annotator.workflow import FINAL_STATES, State

DEFAULT_OUT_DIR = Path("data/releases")
BLOCKING_SEVERITY = "leak"
"""A single label or adjudication with this severity is noted as a release blocker."""


@dataclass(frozen=True)
class CreatedRelease:
    """A release just written: its folder, what it holds and what was left out."""

    name: str
    path: Path
    counts: dict[str, Any]  # as manifest.json "counts": claims, by_label, by_slice, ...
    excluded: dict[str, int]  # state -> claims left out (only states with any; empty when none)
    manifest_sha256: str
    notes: tuple[str, ...] = ()  # stopped creates found on the way: releases finished, staging folders removed


class _ClaimRow(NamedTuple):
    """One claim in scope with its case's fields (a tuple: 100,000 of them are built quickly)."""

    claim_pk: int
    case_pk: int
    dataset: str
    case_id: str
    claim_id: str
    text: str
    slice: str
    split: str
    sort_key: tuple


def create_release(
    session: Session,
    actor: Caller,
    name: str,
    *,
    dataset: str | None = None,
    only_final: bool = False,
    out_dir: Path = DEFAULT_OUT_DIR,
    creator: str = "",
    n_bootstrap: int = 1000,
    source_hashes: dict[str, str] | None = None,
    excel: bool = False,
) -> CreatedRelease:
    """Freeze the agreed and adjudicated claims of one dataset (or all) into `out_dir/name/`.

    Gold label: the agreed value, or the adjudication's value. Severity: the adjudication's when
    adjudicated; when agreed, the most severe of the labels' severities (SEVERITIES order, leak
    first), or None. Records are sorted by dataset name, case position, claim position, and carry
    their case's metadata. `cases.jsonl` holds the released claims' cases in the native import
    format (each case with exactly its released claims and the passages they are shown with);
    `excel` also writes `gold.excel.csv`. The manifest holds the counts, what was left out and
    why, an agreement report on the blind labels of the released claims (overall and by slice,
    `n_bootstrap` resamples, seed 0), the guideline versions, `source_hashes` (passed through), and
    any `leak` severity as a release blocker.
    Adds a GoldRelease row, one GoldLabel row per claim and a `release`/`create` event; nothing
    is committed here (the caller's session_scope does). The folder is staged complete now and
    renamed into place to `CreatedRelease.path` when the caller commits (removed if it rolls back;
    see the module docstring). Before that, staging folders of stopped creates in `out_dir` are
    finished or removed (CreatedRelease.notes says which). On a failure no folder is left and the
    rows are rolled back to a savepoint.

    Raises PermissionDeniedError unless `actor` may release, and when the scope holds a claim
    `actor` is assigned to label and has not labeled yet (its files would show the other labels,
    its counts of what is left out whether they labeled: the blind rule); InvalidValueError for a bad name; ReleaseExistsError when the name, or a name that
    differs from it only in case, is taken in the database or in `out_dir` (saying so when the
    release of that name was just finished from a stopped create); ReleaseWriteError
    when `out_dir` is a file or the folder cannot be written (the OS reason; no rows, no folder
    left), and, from the caller's commit, when the rename fails after it (the message says how
    to finish it);
    NotFoundError for an unknown dataset; ReleaseBlockedError when there is
    no claim in scope, when (without only_final) any claim in scope is not agreed or adjudicated
    (the message counts them by state), or when only_final leaves nothing to release.
    In every refused case nothing is written.
    """
    require(actor, Permission.RELEASE)
    creator = creator or ("" if is_operator(actor) else actor.name)
    out_dir = Path(out_dir)
    check_release_target(out_dir, name)
    notes = _finish_or_remove_stopped(session, out_dir)
    _refuse_taken(session, name, out_dir, notes)
    with collector_paused():
        scope_pk = lookup_dataset_pk(session, dataset)
        states = {pk: facts.state for pk, facts in claim_facts(session, scope_pk).items()}
        _refuse_blind(session, actor, set(states), msg("msg.release.doing_create"), key="msg.release.scope_still_to_label")
        final_pks, excluded = choose_claims(states, dataset, only_final)
        gathered = _gather(session, scope_pk, final_pks)
        records = [_record(row, gathered) for row in gathered.claims]
        created_at = utcnow()
        fields = {
            "created_at": created_at.isoformat(timespec="seconds"),
            "creator": creator,
            "scope": _scope(dataset, only_final, gathered, len(states)),
            "excluded": _excluded(excluded, gathered),
            "release_blockers": _release_blockers(gathered),
            "agreement": _agreement_json(session, actor, scope_pk, final_pks if excluded else None, n_bootstrap),
            "guideline_versions": gathered.guideline_versions(),
            "source_data_hashes": dict(sorted((source_hashes or {}).items())),
        }
        release = GoldRelease(name=name, created_at=created_at, creator=creator, path=str((out_dir / name).resolve()),
                              scope=fields["scope"], counts=count_records(records))
        folder = _store_and_write(session, release, out_dir, gathered, records, fields, excel)
    left_out = {state: len(pks) for state, pks in excluded.items()}
    return CreatedRelease(name, folder, release.counts, left_out, release.manifest_sha256, tuple(notes))


def list_releases(session: Session, actor: Caller) -> list[GoldRelease]:
    """Every gold release, newest first (ties broken by newest id)."""
    require(actor, Permission.RELEASE)
    query = select(GoldRelease).order_by(GoldRelease.created_at.desc(), GoldRelease.id.desc())
    return list(session.exec(query))


def get_release(session: Session, actor: Caller, name: str) -> GoldRelease:
    """The release called `name`. Raises NotFoundError listing the releases there are."""
    require(actor, Permission.RELEASE)
    release = session.exec(select(GoldRelease).where(GoldRelease.name == name)).first()
    if release is None:
        names = ", ".join(session.exec(select(GoldRelease.name).order_by(GoldRelease.name))) or msg("msg.release.none")
        raise NotFoundError.of("msg.release.unknown", name=shortened(name, MAX_ID_CHARS), names=names)
    return release


def verify_stored_release(session: Session, actor: Caller, name: str) -> VerifyResult:
    """Verify release `name`'s folder against its manifest and the manifest against the SHA-256
    the database recorded when the release was created (see `annotator.release.verify_release`):
    an edited manifest.json is a problem even when its `files` entries still match.

    When the folder is missing because its `release create` was stopped between the commit and the
    rename, the complete staging folder whose manifest has the recorded SHA-256 is renamed into
    place first (VerifyResult.notes says so).
    Returns the VerifyResult (never raises for a bad folder); a release with no recorded hash
    is a problem too. Raises NotFoundError when there is no release called `name`.
    """
    require(actor, Permission.RELEASE)
    release = get_release(session, actor, name)
    notes = _finish_stopped(release)
    result = verify_release(Path(release.path), release.manifest_sha256 or None)
    if release.manifest_sha256:
        return _with_notes(result, notes)
    missing = f"manifest.json: the database records no SHA-256 for release '{name}', so the manifest itself cannot be checked"
    return VerifyResult(False, (missing, *result.problems), result.files, result.manifest_sha256, tuple(notes))


def check_stored_release(session: Session, actor: Caller, name: str) -> VerifyResult:
    """`verify_stored_release`, returning the result when it is ok.

    Raises ReleaseVerifyError listing every problem otherwise; NotFoundError for an unknown name.
    """
    require(actor, Permission.RELEASE)
    result = verify_stored_release(session, actor, name)
    if not result.ok:
        path = get_release(session, actor, name).path
        problems = Joined(tuple(problem_message(problem) for problem in result.problems), "; ")  # English: as before
        raise ReleaseVerifyError.of("msg.release.mismatch", name=name, path=str(path), problems=problems)
    return result


def release_files(session: Session, actor: Caller, name: str) -> dict[str, Path]:
    """file name -> path of every file of release `name` (data files in layout order, then
    manifest.json; a release has the files its manifest lists), for downloads. Finishes a release
    whose create was stopped before the rename (see `verify_stored_release`).
    Raises NotFoundError when there is no such release or its folder is gone,
    PermissionDeniedError when it holds a claim `actor` is assigned to label and has not labeled
    yet (its files show the other labels: the blind rule)."""
    require(actor, Permission.RELEASE)
    release = get_release(session, actor, name)
    released = set(session.exec(select(GoldLabel.claim_pk).where(GoldLabel.release_pk == release.id)))
    _refuse_blind(session, actor, released, msg("msg.release.doing_download", name=name))
    _finish_stopped(release)
    layout = release_layout(Path(release.path))
    if not layout.folder.is_dir():
        raise NotFoundError.of("msg.release.folder_gone", name=name, folder=str(layout.folder))
    return layout.present_files()


@dataclass(frozen=True)
class ComparedRelease:
    """One side of a comparison: the release as given, where it was read, and what it holds."""

    release: str  # the name of a stored release, or the folder as given
    source: str  # "database" | "folder"
    path: Path
    claims: int
    manifest_sha256: str | None

    def to_json(self) -> dict[str, Any]:
        return {"release": self.release, "source": self.source, "path": str(self.path), "claims": self.claims,
                "manifest_sha256": self.manifest_sha256}


@dataclass(frozen=True)
class ReleaseComparison:
    """What changed from release `old` to release `new` (see `annotator.release.ReleaseDiff`)."""

    old: ComparedRelease
    new: ComparedRelease
    diff: ReleaseDiff

    def to_json(self) -> dict[str, Any]:
        """{"old", "new", "counts", "changes_by_label", "added", "removed", "changed", "change_counts",
        "text_or_passages_changed", "resolution_changed"}."""
        return {"old": self.old.to_json(), "new": self.new.to_json(), **self.diff.to_json()}


def compare_releases(session: Session | None, actor: Caller, old: str | Path, new: str | Path) -> ReleaseComparison:
    """The claims added, removed, whose gold label changed, whose text or passages (ids, or a
    passage's text: from cases.jsonl, when both releases have one) changed, and whose resolution
    (agreed, adjudicated) changed from release `old` to release `new`
    (see `annotator.release.diff_releases`), with counts.

    old, new: the name of a stored release (a str: what the Releases page passes), or a release
        folder (a Path; then `session` may be None when both are folders).
    Every side is verified first: a folder against its manifest, a stored release also against
    the manifest hash the database recorded (finishing one whose create was stopped before the
    rename, as `verify_stored_release` does).
    Raises PermissionDeniedError unless `actor` may release, and when a stored release holds a claim
    `actor` is assigned to label and has not labeled yet (its gold labels show the labels: the blind
    rule, as for downloading a release); NotFoundError for an unknown name; ReleaseVerifyError when
    a release does not match what was released, naming it and every file at fault, or its
    cases.jsonl does not hold the claims of its gold.jsonl (naming the line).
    """
    require(actor, Permission.RELEASE)
    stored = {given: get_release(session, actor, given) for given in (old, new) if not isinstance(given, Path)}
    if stored:
        pks = [release.id for release in stored.values()]
        released = set(session.exec(select(GoldLabel.claim_pk).where(GoldLabel.release_pk.in_(pks))))
        _refuse_blind(session, actor, released, msg("msg.release.doing_compare", old=old, new=new))
    sides, records, passages = [], [], []
    for given in (old, new):
        if isinstance(given, Path):
            result, path, source = check_release(given), given, "folder"
        else:
            result, path, source = check_stored_release(session, actor, given), Path(stored[given].path), "database"
        gold = read_gold(path)
        records.append(gold)
        passages.append(read_passage_texts(path, gold))
        sides.append(ComparedRelease(str(given), source, path, len(gold), result.manifest_sha256))
    return ReleaseComparison(sides[0], sides[1], diff_releases(*records, old_passages=passages[0], new_passages=passages[1]))


# ------------------------------------------------------------------------ stopped creates


def _finish_stopped(release: GoldRelease) -> list[str]:
    """Finish release `release` when its create was stopped between the commit and the rename: its
    folder is missing and a complete staging folder beside it has the recorded manifest hash.
    Returns what was done (one note, or none)."""
    final = Path(release.path)
    if final.exists() or not release.manifest_sha256:
        return []
    for staging in staging_folders(final.parent, final.name):
        with claimed(staging) as free:
            if free and finish_staged(staging, release.manifest_sha256) is not None:
                return [_finished_note(release.name, final, staging)]
    return []


def _finished_note(name: str, final: Path, staging: StagingFolder) -> str:
    return (f"finished release '{name}': its `release create` was stopped after the database recorded it and before "
            f"its folder was renamed into place; renamed {staging.path.name} to {final}")


def _finish_or_remove_stopped(session: Session, out_dir: Path) -> list[str]:
    """Clean up after stopped creates in `out_dir`: finish the staging folders of releases the
    database holds (see `_finish_stopped`) and remove the other staging folders that no running
    create holds (their releases were never committed). Returns a note per folder."""
    notes = []
    for staging in staging_folders(out_dir):
        with claimed(staging) as free:
            if not free:
                continue  # a create running now holds it
            release = session.exec(select(GoldRelease).where(GoldRelease.name == staging.name)).first()
            final = out_dir / staging.name
            recorded = release is not None and release.manifest_sha256 and Path(release.path) == final.resolve()
            if recorded and _manifest_sha256(staging.path) == release.manifest_sha256:
                if finish_staged(staging, release.manifest_sha256) is not None:
                    notes.append(_finished_note(release.name, final, staging))
                continue  # the recorded release's only copy, or a duplicate of it: never removed
            shutil.rmtree(staging.path, ignore_errors=True)
            notes.append(f"removed {staging.path.name}: the staging folder of a `release create` of '{staging.name}' "
                         "that was stopped before the database recorded it")
    return notes


def _manifest_sha256(folder: Path) -> str | None:
    try:
        return sha256_file(release_layout(folder).manifest)
    except OSError:
        return None


def _with_notes(result: VerifyResult, notes: list[str]) -> VerifyResult:
    if not notes:
        return result
    return VerifyResult(result.ok, result.problems, result.files, result.manifest_sha256, (*result.notes, *notes))


# ------------------------------------------------------------------------- scope and state


def _refuse_blind(session: Session, actor: Caller, claim_pks: set[int], doing: Message,
                  key: str = "msg.release.still_to_label") -> None:
    """PermissionDeniedError (message `key`) when any of `claim_pks` is a claim `actor` is still
    to label (an admin who also labels): release files hold every blind label with its labeler's
    name. A create checks every claim in its scope, not only those it would release: the claims
    it leaves out are counted by state in its manifest and in its refusal, and `single` against
    `unlabeled` would tell that the co-labeler labeled. The message names no claim."""
    hidden = claims_still_to_label(session, actor)
    if hidden is None or not claim_pks:
        return
    if set(session.exec(hidden)) & claim_pks:
        raise PermissionDeniedError.of(key, doing=doing)


def _refuse_taken(session: Session, name: str, out_dir: Path, notes: list[str] = ()) -> None:
    """Refuse a bad name, a name taken in the database or in `out_dir` (also when it differs only
    in case: one folder on case-insensitive file systems), and an `out_dir` that is a file. When
    `notes` say the release of that name was just finished from a stopped create, the message
    says so."""
    check_release_name(name)  # the name first: lower() below relies on ASCII names
    query = select(GoldRelease.name).where(func.lower(GoldRelease.name) == name.lower()).order_by(GoldRelease.name)
    taken = list(session.exec(query))
    if name in taken:
        finished = [note for note in notes if note.startswith(f"finished release '{name}'")]
        if finished:
            raise ReleaseExistsError.of("msg.release.finished_exists", finished=finished[0], name=name)
        raise ReleaseExistsError.of("msg.release.exists", name=name)
    if taken:
        raise ReleaseExistsError.of("msg.release.exists_case", taken=taken[0], name=name)
    check_release_target(out_dir, name)


def choose_claims(
    states: dict[int, State], dataset: str | None, only_final: bool
) -> tuple[set[int], dict[str, list[int]]]:
    """The one rule of which claims a release takes, for `release create` and the Home page's
    "what blocks the next release": (claim pks to release, state name -> claim pks left out, in
    workflow.State order). `states`: claim pk -> State of every claim in scope.
    Raises ReleaseBlockedError when there is no claim, when claims are not final and not
    `only_final` (the message counts them by state), or when no claim is final."""
    where = msg("msg.release.where_dataset", name=dataset) if dataset else msg("msg.release.where_any")
    if not states:
        raise ReleaseBlockedError.of("msg.release.no_claims", where=where)
    final = {pk for pk, state in states.items() if state in FINAL_STATES}
    excluded: dict[str, list[int]] = defaultdict(list)
    for pk, state in states.items():
        if state not in FINAL_STATES:
            excluded[state.value].append(pk)
    ordered = {state.value: excluded[state.value] for state in State if state.value in excluded}
    counts = Joined(tuple(msg("msg.release.state_count", state=Term("state", state), n=len(pks))
                          for state, pks in ordered.items()))
    if ordered and not only_final:
        raise ReleaseBlockedError.of("msg.release.not_final", n=sum(map(len, ordered.values())), total=len(states),
                                     where=where, counts=counts)
    if not final:
        raise ReleaseBlockedError.of("msg.release.none_final", where=where, counts=counts)
    return final, ordered


# ---------------------------------------------------------------------------- bulk loading


@dataclass(frozen=True)
class _Gathered:
    """Everything the records are built from, for the claims being released."""

    claims: list[_ClaimRow]  # sorted for the release
    passages: dict[int, list[str]]  # claim pk -> passage ids in shown order
    passage_pks: dict[int, list[int]]  # claim pk -> passage pks in shown order
    passage_content: dict[int, dict[str, str]]  # passage pk -> its native record (passage_id, doc_id, ...)
    cases: dict[int, tuple[str, str, dict[str, Any]]]  # case pk -> (question, answer, metadata, keys sorted)
    labels: dict[int, list[dict[str, Any]]]  # claim pk -> label records, by labeler name
    adjudications: dict[int, dict[str, Any]]  # claim pk -> adjudication record
    guidelines: dict[int, set[str]]  # claim pk -> guideline versions of its labels
    all_ids: dict[int, tuple[str, str]]  # every claim pk in scope -> (dataset, claim_id)
    datasets: list[str]  # datasets in scope, by name
    order: dict[int, tuple]  # every claim pk in scope -> sort key

    def guideline_versions(self) -> list[str]:
        return sorted(set().union(*self.guidelines.values()) - {""}) if self.guidelines else []


def _gather(session: Session, scope_pk: int | None, final_pks: set[int]) -> _Gathered:
    rows = _claim_rows(session, scope_pk)
    labels, guidelines = _labels(session, scope_pk, final_pks)
    passages, passage_pks = _passages(session, scope_pk, final_pks)
    return _Gathered(
        claims=sorted((row for row in rows if row.claim_pk in final_pks), key=lambda row: row.sort_key),
        passages=passages,
        passage_pks=passage_pks,
        passage_content=_passage_content(session, scope_pk),
        cases=_cases(session, scope_pk),
        labels=labels,
        adjudications=_adjudications(session, scope_pk, final_pks),
        guidelines=guidelines,
        all_ids={row.claim_pk: (row.dataset, row.claim_id) for row in rows},
        datasets=sorted({row.dataset for row in rows}),
        order={row.claim_pk: row.sort_key for row in rows},
    )


def _in_scope(query, scope_pk: int | None):  # noqa: ANN001, ANN202 - a Select
    return query if scope_pk is None else query.where(Claim.dataset_id == scope_pk)


def _rows(session: Session, query) -> list:  # noqa: ANN001 - a Select of columns
    """The rows of a column query, run on the session's connection (Core: no ORM row overhead)."""
    return session.connection().execute(query).all()


def _claim_rows(session: Session, scope_pk: int | None) -> list[_ClaimRow]:
    query = _in_scope(
        select(Claim.id, Claim.case_pk, Dataset.name, Case.case_id, Case.position, Claim.claim_id, Claim.position, Claim.text,
               Case.slice, Case.split)
        .join(Case, Case.id == Claim.case_pk)
        .join(Dataset, Dataset.id == Claim.dataset_id),
        scope_pk,
    )
    return [
        _ClaimRow(pk, case_pk, dataset, case_id, claim_id, text, slice_, split, (dataset, case_pos, case_id, claim_pos, claim_id))
        for pk, case_pk, dataset, case_id, case_pos, claim_id, claim_pos, text, slice_, split in _rows(session, query)
    ]


def _passages(session: Session, scope_pk: int | None, final_pks: set[int]) -> tuple[dict[int, list[str]], dict[int, list[int]]]:
    """(claim pk -> passage ids, claim pk -> passage pks), in the order each claim shows them."""
    query = _in_scope(
        select(ClaimPassage.claim_pk, Passage.id, Passage.passage_id)
        .join(Passage, Passage.id == ClaimPassage.passage_pk)
        .join(Claim, Claim.id == ClaimPassage.claim_pk)
        .order_by(ClaimPassage.claim_pk, ClaimPassage.position, Passage.passage_id),
        scope_pk,
    )
    ids: dict[int, list[str]] = defaultdict(list)
    pks: dict[int, list[int]] = defaultdict(list)
    for claim_pk, passage_pk, passage_id in _rows(session, query):
        if claim_pk in final_pks:
            ids[claim_pk].append(passage_id)
            pks[claim_pk].append(passage_pk)
    return ids, pks


def _passage_content(session: Session, scope_pk: int | None) -> dict[int, dict[str, str]]:
    query = select(Passage.id, Passage.passage_id, Passage.doc_id, Passage.version, Passage.title, Passage.text)
    if scope_pk is not None:
        query = query.where(Passage.dataset_id == scope_pk)
    return {
        pk: {"passage_id": passage_id, "doc_id": doc_id, "version": version, "title": title, "text": text}
        for pk, passage_id, doc_id, version, title, text in _rows(session, query)
    }


def _cases(session: Session, scope_pk: int | None) -> dict[int, tuple[str, str, dict[str, Any]]]:
    """case pk -> (question, answer, metadata with its keys sorted at every depth, so that the
    JSON written is the same whatever order the database gives them in)."""
    query = select(Case.id, Case.question, Case.answer, Case.meta)
    if scope_pk is not None:
        query = query.where(Case.dataset_id == scope_pk)
    return {pk: (question, answer, json.loads(metadata_text(meta))) for pk, question, answer, meta in _rows(session, query)}


def _labels(session: Session, scope_pk: int | None, final_pks: set[int]) -> tuple[dict[int, list[dict]], dict[int, set[str]]]:
    query = _in_scope(
        select(Label.claim_pk, User.name, Label.value, Label.rationale, Label.passage_ids, Label.severity, Label.guideline_version)
        .join(User, User.id == Label.labeler_pk)
        .join(Claim, Claim.id == Label.claim_pk),
        scope_pk,
    )
    labels: dict[int, list[dict]] = defaultdict(list)
    guidelines: dict[int, set[str]] = defaultdict(set)
    for claim_pk, labeler, value, rationale, passage_ids, severity, guideline in _rows(session, query):
        if claim_pk in final_pks:
            labels[claim_pk].append(
                {"labeler": labeler, "label": value, "rationale": rationale, "passage_ids": list(passage_ids or []), "severity": severity}
            )
            guidelines[claim_pk].add(guideline)
    for claim_labels in labels.values():
        claim_labels.sort(key=lambda label: label["labeler"])
    return labels, guidelines


def _adjudications(session: Session, scope_pk: int | None, final_pks: set[int]) -> dict[int, dict]:
    query = _in_scope(
        select(Adjudication.claim_pk, User.name, Adjudication.value, Adjudication.rationale, Adjudication.severity)
        .join(User, User.id == Adjudication.adjudicator_pk)
        .join(Claim, Claim.id == Adjudication.claim_pk),
        scope_pk,
    )
    return {
        claim_pk: {"adjudicator": name, "label": value, "rationale": rationale, "severity": severity}
        for claim_pk, name, value, rationale, severity in _rows(session, query)
        if claim_pk in final_pks
    }


# ---------------------------------------------------------------------------- the records


def most_severe(severities: Iterable[str | None]) -> str | None:
    """The most severe of `severities` in SEVERITIES order (leak first); unknown values rank
    after the known ones (alphabetically); None when there is none."""
    present = {severity for severity in severities if severity}
    if not present:
        return None
    return min(present, key=lambda s: (SEVERITIES.index(s) if s in SEVERITIES else len(SEVERITIES), s))


def _record(row: _ClaimRow, gathered: _Gathered) -> dict[str, Any]:
    labels = gathered.labels.get(row.claim_pk, [])
    adjudication = gathered.adjudications.get(row.claim_pk)
    if adjudication is not None:
        gold, resolution, severity = adjudication["label"], "adjudicated", adjudication["severity"]
    else:
        gold, resolution, severity = labels[0]["label"], "agreed", most_severe(label["severity"] for label in labels)
    return {
        "dataset": row.dataset,
        "case_id": row.case_id,
        "claim_id": row.claim_id,
        "claim": row.text,
        "gold_label": gold,
        "resolution": resolution,
        "severity": severity,
        "slice": row.slice,
        "split": row.split,
        "passage_ids": gathered.passages.get(row.claim_pk, []),
        "labels": labels,
        "adjudication": adjudication,
        "case_metadata": gathered.cases[row.case_pk][2],
    }


def _native_cases(gathered: _Gathered) -> list[dict[str, Any]]:
    """The lines of `cases.jsonl`: each case of a released claim, in release order, with exactly its
    released claims (their shown passages named) and the passages they are shown with (in the
    order the claims first show them)."""
    lines: list[dict[str, Any]] = []
    current: int | None = None
    seen: set[int] = set()
    for row in gathered.claims:
        if row.case_pk != current:
            current, seen = row.case_pk, set()
            question, answer, metadata = gathered.cases[row.case_pk]
            lines.append({"case_id": row.case_id, "question": question, "answer": answer, "slice": row.slice,
                          "split": row.split, "metadata": metadata, "passages": [], "claims": []})
        line = lines[-1]
        for passage_pk in gathered.passage_pks.get(row.claim_pk, []):
            if passage_pk not in seen:
                seen.add(passage_pk)
                line["passages"].append(gathered.passage_content[passage_pk])
        line["claims"].append({"claim_id": row.claim_id, "text": row.text, "passage_ids": gathered.passages.get(row.claim_pk, [])})
    return lines


# ----------------------------------------------------------------------------- manifest


def _ids_by_dataset(pks: Iterable[int], gathered: _Gathered) -> dict[str, list[str]]:
    """dataset -> claim ids (in release order) of the given claims."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for pk in sorted(pks, key=gathered.order.__getitem__):
        dataset, claim_id = gathered.all_ids[pk]
        grouped[dataset].append(claim_id)
    return dict(grouped)


def _scope(dataset: str | None, only_final: bool, gathered: _Gathered, n_in_scope: int) -> dict[str, Any]:
    return {"dataset": dataset, "datasets": gathered.datasets, "only_final": only_final, "claims_in_scope": n_in_scope}


def _excluded(excluded: dict[str, list[int]], gathered: _Gathered) -> dict[str, Any]:
    return {
        "counts": {state: len(pks) for state, pks in excluded.items()},
        "claim_ids": {state: _ids_by_dataset(pks, gathered) for state, pks in excluded.items()},
    }


def _release_blockers(gathered: _Gathered) -> dict[str, Any]:
    """{"leak": {"claims": n, "claim_ids": {dataset: [...]}}} when any released claim's label or
    adjudication has severity leak; {} otherwise."""
    leaking = [
        row.claim_pk
        for row in gathered.claims
        if any(label["severity"] == BLOCKING_SEVERITY for label in gathered.labels.get(row.claim_pk, []))
        or (gathered.adjudications.get(row.claim_pk) or {}).get("severity") == BLOCKING_SEVERITY
    ]
    if not leaking:
        return {}
    return {BLOCKING_SEVERITY: {"claims": len(leaking), "claim_ids": _ids_by_dataset(leaking, gathered)}}


def _agreement_json(session: Session, actor: Caller, scope_pk: int | None, claim_pks: set[int] | None, n_bootstrap: int) -> dict[str, Any]:
    """The agreement report (overall and by slice) on the blind labels of the released claims,
    as plain JSON data. `claim_pks` None means every claim in scope."""
    wanted = None if claim_pks is None else sorted(claim_pks)
    return agreement_report(session, actor, scope_pk, wanted, by="slice", n_bootstrap=n_bootstrap, seed=0).to_json()


# ------------------------------------------------------------------------------- writes


def _store_and_write(
    session: Session, release: GoldRelease, out_dir: Path, gathered: _Gathered, records: list[dict], fields: dict,
    excel: bool,
) -> Path:
    """Stage the folder and insert the rows with the manifest's hash and the event in a savepoint;
    the folder is renamed into place only when the caller commits the session's transaction, and
    removed when it rolls back (`_finish_on_commit`). So a killed process never leaves a folder the
    database does not hold, nor rows whose files were not completely written.

    On a failure here the rows are rolled back to the savepoint and the staging folder removed."""
    staged = stage_release(out_dir, release.name, records, fields, cases=_native_cases(gathered), excel=excel)
    try:
        with session.begin_nested():
            release.manifest_sha256 = staged.manifest_sha256
            _insert_rows(session, release, gathered.claims, records)
            _record_created(session, release)
            session.flush()
        _finish_on_commit(session, staged, release.name)
    except BaseException:
        staged.discard()
        raise
    kill_point("staged")
    return staged.final


def _finish_on_commit(session: Session, staged: StagedRelease, name: str) -> None:
    """Rename the staged folder into place right after the session's outermost transaction commits;
    remove it when that transaction ends otherwise (rollback, close). SQLAlchemy fires after_commit
    for savepoints too: only the commit immediately followed by the end of the outermost
    transaction counts.

    A failure of the rename after the commit raises ReleaseWriteError from the commit, the complete
    staging folder left in place for `_finish_stopped` (the message says how)."""
    root = session.get_transaction()
    state = {"committed": False, "done": False}

    def committed(_session: Session) -> None:
        state["committed"] = True

    def ended(_session: Session, transaction) -> None:  # noqa: ANN001 - a SessionTransaction
        if transaction is not root:
            state["committed"] = False  # that commit was a savepoint's
            return
        if state["done"]:
            return
        state["done"] = True
        if not state["committed"]:
            staged.discard()
            return
        kill_point("committed")
        try:
            staged.finish(undo_on_failure=False)
        except AnnotatorError as error:
            raise ReleaseWriteError.of("msg.release.write_failed", name=name, error=str(error),
                                       temp=str(staged.temp)) from error

    event.listen(session, "after_commit", committed)
    event.listen(session, "after_transaction_end", ended)


def _insert_rows(session: Session, release: GoldRelease, claims: list[_ClaimRow], records: list[dict]) -> None:
    """Add the GoldRelease row (its unique name guards against a concurrent create) and one
    GoldLabel row per released claim, in one bulk insert."""
    session.add(release)
    try:
        session.flush()
    except IntegrityError:
        raise ReleaseExistsError.of("msg.release.exists_meanwhile", name=release.name) from None
    rows = [
        {"release_pk": release.id, "claim_pk": row.claim_pk, "gold_label": record["gold_label"], "resolution": record["resolution"]}
        for row, record in zip(claims, records, strict=True)
    ]
    session.connection().execute(insert(GoldLabel.__table__), rows)  # Core executemany: no ORM bookkeeping


def _record_created(session: Session, release: GoldRelease) -> None:
    creator = release.creator
    actor = session.exec(select(User.id).where(User.name == creator)).first() if creator else None
    record_event(
        session,
        actor_pk=actor,
        entity="release",
        entity_pk=release.id,
        action="create",
        after={"name": release.name, "path": release.path, "manifest_sha256": release.manifest_sha256, "counts": release.counts},
    )
