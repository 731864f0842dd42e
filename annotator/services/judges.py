"""Judge runs: an automatic judge's labels of claims (an LLM, or any grader), imported once and
never changed, and their calibration against a frozen gold release (`judge_report`).

The gold of a report comes from the release folder, verified against its manifest first, never
from the live database: the same release and run give the same report, whatever was labeled
since. Judge labels are for admins only (Permission.CALIBRATE): a labeler or adjudicator who saw
them would be anchored by them (the blind rule's reason, docs/domain.md).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import func, insert
from sqlmodel import Session, select

from annotator import calibration, formats
from annotator.errors import ImportFileError, ImportRowError, InvalidValueError, NotFoundError, PermissionDeniedError
from annotator.formats import JudgeLabelRecord
from annotator.messages import Message, english, msg, shortened
from annotator.models import Case, Claim, Dataset, GoldRelease, JudgeLabel, JudgeRun, LabelEvent, User
from annotator.release import check_release, read_manifest, release_layout
from annotator.services.access import Caller, is_operator, require
from annotator.services.audit import record_event
from annotator.services.blind import claims_still_to_label
from annotator.services import imports as _imports  # until the imports package makes these public
from annotator.services.imports import ImportReport, check_dataset_name

refused_when_concurrent = _imports._refused_when_concurrent
skipped_lines = _imports._skipped_lines
from annotator.services.lookup import get_dataset
from annotator.services.releases import check_stored_release
from annotator.text import MAX_ID_CHARS, MAX_TEXT_CHARS, check_free_text
from annotator.vocabulary import LABELS, SPLITS
from annotator.workflow import Permission

RUN_NAME_CHARS = 100
"""The longest judge run name."""
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]*")
POSITIVE = "support"
"""The label a judge's pass means: false pass and false fail rates and the support rate count it."""
DEV, HOLDOUT = SPLITS
HOLDOUT_EVENT = "holdout_view"
"""The audit trail's entity for one viewing of a release's holdout figures for a run."""
PPI_ASSUMPTION = english("msg.judge.ppi_assumption")
LOOKUP_BATCH = 500


def check_run_name(name: str) -> str:
    """`name` when it is a valid judge run name: letters, digits and `. _ : + -`, starting with a
    letter or digit, at most RUN_NAME_CHARS characters. Raises InvalidValueError otherwise."""
    if not isinstance(name, str) or len(name) > RUN_NAME_CHARS or not _RUN_NAME.fullmatch(name):
        raise InvalidValueError.of("msg.judge.bad_name", name=repr(shortened(str(name), MAX_ID_CHARS)),
                                   most=RUN_NAME_CHARS)
    return name


# ------------------------------------------------------------------------------ import


@dataclass(frozen=True)
class JudgeImport:
    """What `import_judge_labels` stored: the run (`run_json` shape) and the import report."""

    run: dict[str, Any]
    report: ImportReport

    def summary_lines(self) -> list[str]:
        """The import report's lines, then "Judge run NAME stored: N labels (file SHA-256 ...)"."""
        return [*self.report.summary_lines(), str(self.stored_message())]

    def stored_message(self) -> Message:
        return msg("msg.judge.stored", run=self.run["name"], n=self.run["n_labels"], sha256=self.run["source_sha256"])


@refused_when_concurrent("judge_labels")
def import_judge_labels(session: Session, actor: Caller, path: str | Path, *, run: str, dataset: str | None = None,
                        model: str = "", prompt_version: str = "", note: str = "", partial: bool = False,
                        fmt: str = "auto") -> JudgeImport:
    """Import a judge labels file (CSV or JSONL: claim_id, label[, confidence, rationale]; see
    `formats.read_judge_labels`) as the new judge run `run`, immutable from then on.

    Claim ids are looked up in `dataset`, or across all datasets (the run's dataset is the one its
    claims are in). model, prompt_version, note: free text kept with the run (note at most
    MAX_TEXT_CHARS). partial: skip the bad lines (listed in the report's `skipped_lines`) and store
    the others; without it one bad line stores nothing. The file's SHA-256 is kept with the run.
    Raises PermissionDeniedError unless `actor` may calibrate; InvalidValueError for a bad or taken
    run name or dataset name, or a too long note; NotFoundError for an unknown dataset;
    ImportFileError for a missing, unreadable or empty file (or one whose every line was skipped);
    ImportRowError naming file, line and field: a bad line (formats), an unknown claim id, a claim
    id found in two datasets (name --dataset), claims of two datasets in one run.
    """
    require(actor, Permission.CALIBRATE)
    check_run_name(run)
    check_dataset_name(dataset)
    for field_name, value in (("model", model), ("prompt_version", prompt_version)):
        check_free_text(field_name, value, MAX_ID_CHARS)
    check_free_text("note", note, MAX_TEXT_CHARS)
    _refuse_taken(session, run)
    dataset_pk = get_dataset(session, dataset).id if dataset is not None else None
    skips = formats.Skips() if partial else None
    source = formats.read_judge_labels(path, skips=skips)
    records = list(source.records)
    found = _claims_named(session, [record.claim_id for record in records], dataset_pk)
    stored = _resolved(source.path, records, found, dataset, skips)
    if not stored:
        raise ImportFileError.of("msg.judge.none_stored", path=str(source.path))
    run_pk, run_dataset_pk = _store(session, actor, source.path, run, stored, model, prompt_version, note)
    counts = {"judge_labels": {"new": len(stored), "unchanged": 0, "updated": 0}}
    report = ImportReport(source.path, source.format, source.encoding, _dataset_name(session, run_dataset_pk), counts,
                          warnings=tuple(source.warnings), skipped_lines=skipped_lines(skips))
    return JudgeImport(run_json(session, session.get(JudgeRun, run_pk)), report)


def _refuse_taken(session: Session, run: str) -> None:
    taken = session.exec(select(JudgeRun.name).where(func.lower(JudgeRun.name) == run.lower())).first()
    if taken is not None:
        raise InvalidValueError.of("msg.judge.name_taken", name=run, taken=taken)


def _claims_named(session: Session, claim_ids: Sequence[str], dataset_pk: int | None) -> dict[str, list[tuple[int, int]]]:
    """claim id -> [(claim pk, dataset pk)] of the claims with that id (in the dataset, or in all)."""
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    wanted = sorted(set(claim_ids))
    for start in range(0, len(wanted), LOOKUP_BATCH):
        query = select(Claim.claim_id, Claim.id, Claim.dataset_id).where(Claim.claim_id.in_(wanted[start:start + LOOKUP_BATCH]))
        if dataset_pk is not None:
            query = query.where(Claim.dataset_id == dataset_pk)
        for claim_id, pk, claim_dataset in session.exec(query):
            found[claim_id].append((pk, claim_dataset))
    return found


def _resolved(path: str, records: list[JudgeLabelRecord], found: dict[str, list[tuple[int, int]]], dataset: str | None,
              skips: formats.Skips | None) -> list[tuple[JudgeLabelRecord, int, int]]:
    """(record, claim pk, dataset pk) of each record, in file order. Raises ImportRowError for an
    unknown or ambiguous claim id, and for a claim of another dataset than the run's first claim
    (with `skips`: the line is skipped and listed instead)."""
    first_dataset: list[int] = []

    def one(record: JudgeLabelRecord) -> tuple[JudgeLabelRecord, int, int]:
        claims = found.get(record.claim_id, [])
        if not claims:
            problem = (msg("msg.import.problem.no_claim_in", claim_id=record.claim_id, dataset=dataset) if dataset
                       else msg("msg.import.problem.no_claim", claim_id=record.claim_id))
            raise ImportRowError(path, record.line, "claim_id", problem, msg("msg.import.fix.import_case_first"))
        if len(claims) > 1:
            raise ImportRowError(path, record.line, "claim_id", msg("msg.import.problem.ambiguous_claim", claim_id=record.claim_id),
                                 msg("msg.import.fix.name_dataset"))
        pk, claim_dataset = claims[0]
        if first_dataset and claim_dataset != first_dataset[0]:
            raise ImportRowError(path, record.line, "claim_id", msg("msg.judge.two_datasets", claim_id=record.claim_id),
                                 msg("msg.import.fix.name_dataset"))
        first_dataset[:] = [claim_dataset]
        return record, pk, claim_dataset

    return list(formats.skipping(records, one, skips))


def _store(session: Session, actor: Caller, path: str, name: str, stored: list[tuple[JudgeLabelRecord, int, int]],
           model: str, prompt_version: str, note: str) -> tuple[int, int]:
    """Insert the run and its labels, record the import in the audit trail; (run pk, dataset pk)."""
    dataset_pk = stored[0][2]
    run = JudgeRun(name=name, dataset_pk=dataset_pk, model=model, prompt_version=prompt_version, note=note,
                   creator="" if is_operator(actor) else actor.name, source_name=Path(path).name,
                   source_sha256=_file_sha256(path))
    session.add(run)
    session.flush()
    rows = [{"run_pk": run.id, "claim_pk": pk, "value": record.label, "confidence": record.confidence,
             "rationale": record.rationale} for record, pk, _ in stored]
    for start in range(0, len(rows), LOOKUP_BATCH):
        session.exec(insert(JudgeLabel.__table__), params=rows[start:start + LOOKUP_BATCH])
    record_event(session, actor_pk=actor.id, entity="judge_run", entity_pk=run.id, action="create",
                 after={"name": name, "labels": len(rows), "source_sha256": run.source_sha256})
    return run.id, dataset_pk


def _file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _dataset_name(session: Session, dataset_pk: int | None) -> str | None:
    return None if dataset_pk is None else session.get(Dataset, dataset_pk).name


# ------------------------------------------------------------------------------- list


def run_json(session: Session, run: JudgeRun) -> dict[str, Any]:
    """A judge run as plain data: name, dataset, model, prompt_version, note, creator,
    created_at (ISO 8601, UTC), source_name, source_sha256, n_labels, label_counts."""
    counts = dict(session.exec(select(JudgeLabel.value, func.count()).where(JudgeLabel.run_pk == run.id)
                               .group_by(JudgeLabel.value)).all())
    return {"name": run.name, "dataset": _dataset_name(session, run.dataset_pk), "model": run.model,
            "prompt_version": run.prompt_version, "note": run.note, "creator": run.creator,
            "created_at": run.created_at.isoformat(), "source_name": run.source_name, "source_sha256": run.source_sha256,
            "n_labels": int(sum(counts.values())), "label_counts": {label: int(counts.get(label, 0)) for label in LABELS}}


def list_judge_runs(session: Session, actor: Caller) -> list[dict[str, Any]]:
    """Every judge run (`run_json`), newest first."""
    require(actor, Permission.CALIBRATE)
    runs = session.exec(select(JudgeRun).order_by(JudgeRun.created_at.desc(), JudgeRun.id.desc()))
    return [run_json(session, run) for run in runs]


def get_judge_run(session: Session, actor: Caller, name: str) -> JudgeRun:
    """The judge run called `name`. Raises NotFoundError listing the runs there are."""
    require(actor, Permission.CALIBRATE)
    run = session.exec(select(JudgeRun).where(JudgeRun.name == name)).first()
    if run is None:
        names = ", ".join(session.exec(select(JudgeRun.name).order_by(JudgeRun.name))) or msg("msg.release.none")
        raise NotFoundError.of("msg.judge.unknown", name=shortened(name, MAX_ID_CHARS), names=names)
    return run


# ------------------------------------------------------------------------ fingerprint


class ReportFingerprint(NamedTuple):
    """What a judge report of a stored release depends on besides its options, as a hashable
    tuple: equal fingerprints, equal reports (a page caches the report on it)."""

    run: str
    run_sha256: str  # the run's source file (a run is immutable; a database rebuilt under the same name differs)
    run_created: str  # ISO 8601
    release: str
    manifest_sha256: str  # the release's manifest hash as the database recorded it
    later_releases: tuple[str, ...]  # the releases stored after it (superseded_by is among them)
    holdout_views: tuple[int, int]  # (this run, any run): the report states them
    viewer: tuple[int, int, int, int] | None  # (caller key, claims still to label, sum and max of their keys), else None


def report_fingerprint(session: Session, actor: Caller, name: str, release: str) -> ReportFingerprint:
    """The fingerprint of `judge_report(session, actor, name, release)` for a stored release
    `release` (by name): a few indexed queries, no gold file is read. `viewer` names a caller who
    is still to label claims (the report refuses them when the release holds one): their report
    is theirs, recomputed whenever they label or are assigned a claim.
    Raises PermissionDeniedError unless `actor` may calibrate; NotFoundError for an unknown run or
    release."""
    require(actor, Permission.CALIBRATE)
    run = get_judge_run(session, actor, name)
    stored = list(session.exec(select(GoldRelease).order_by(GoldRelease.created_at, GoldRelease.id)))
    this = next((index for index, row in enumerate(stored) if row.name == release), None)
    if this is None:
        names = ", ".join(sorted(row.name for row in stored)) or msg("msg.release.none")
        raise NotFoundError.of("msg.release.unknown", name=shortened(release, MAX_ID_CHARS), names=names)
    manifest_sha256 = stored[this].manifest_sha256 or ""
    views = _holdout_views(session, run.id, manifest_sha256)
    return ReportFingerprint(run.name, run.source_sha256, run.created_at.isoformat(), release, manifest_sha256,
                             tuple(row.name for row in stored[this + 1:]), (views["this_run"], views["any_run"]),
                             _viewer(session, actor))


def _viewer(session: Session, actor: Caller) -> tuple[int, int, int, int] | None:
    hidden = claims_still_to_label(session, actor)
    if hidden is None:
        return None
    pks = list(session.exec(hidden))
    return actor.id, len(pks), sum(pks), max(pks, default=0)


# ----------------------------------------------------------------------------- report


@dataclass(frozen=True)
class _Gold:
    """A verified release's gold, one entry per claim, columns as lists (in release order)."""

    release: str
    folder: Path
    manifest_sha256: str
    manifest: dict[str, Any]
    keys: list[tuple[str, str]]  # (dataset, claim_id)
    case_keys: list[str]  # dataset + NUL + case_id: the bootstrap's unit
    case_ids: list[str]
    labels: list[str]
    slices: list[str]
    splits: list[str]
    human_labels: list[list[dict[str, Any]]]  # the blind labels: [{"labeler", "label", ...}]


def judge_report(session: Session, actor: Caller, name: str, release: str | Path, *, by: Iterable[str] = ("slice", "split"),
                 n_bootstrap: int = 1000, seed: int = 0, holdout: bool = False) -> dict[str, Any]:
    """Judge run `name` scored against the gold of `release`, as one plain JSON-ready dict.

    release: a stored release's name (a str; verified against its folder's manifest and the
        manifest hash the database recorded) or a release folder (a Path; verified against its
        manifest). The gold labels come from the folder's gold.parquet, never the database.
    by: "slice" and/or "split": the breakdowns to compute (`by_slice`, `by_split`; {} otherwise).
    n_bootstrap, seed: case-level bootstrap resamples for `ci95` (0: none), numpy seed.
    holdout: False: the figures cover the dev split only, and `n_holdout_left_out` counts the
        holdout claims left out. True: they cover the holdout split, `by_split` shows both, and
        the viewing is recorded in the audit trail (`holdout_views` counts the viewings of this
        release's holdout for this run and for any run, this one included).
    Keys: run, run_meta, release, release_path, release_manifest_sha256, superseded_by, split,
    n_holdout_left_out, holdout_views, n_gold, n_items, n_missing, the figures of
    `calibration.score_judge` (percent_agreement, cohen_kappa, confusion, false_pass_rate,
    false_fail_rate, ci95, ci95_analytic, undefined, indicative, denominators), by_slice, by_split,
    humans (labeler -> the same figures of their blind labels), human_range (metric -> [min, max]
    over the labelers), corrected_support_rate (`_corrected`, or None with a reason in
    `undefined`), disagreements (claim_id, case_id, slice, split, gold_label, judge_label),
    n_bootstrap, seed. Rates are fractions 0..1.
    Raises PermissionDeniedError unless `actor` may calibrate, and when the release holds a claim
    `actor` is still to label (the blind rule); NotFoundError for an unknown run or release;
    ReleaseVerifyError when the release does not match its manifest.
    """
    require(actor, Permission.CALIBRATE)
    groups = _checked_by(by)
    run = get_judge_run(session, actor, name)
    gold = _read_gold(session, actor, release)
    _refuse_blind(session, actor, set(gold.keys))
    judged = _judge_labels(session, run.id)
    split = HOLDOUT if holdout else DEV
    views = _record_holdout_view(session, actor, run, gold) if holdout else _holdout_views(session, run.id, gold.manifest_sha256)
    rows = [i for i, s in enumerate(gold.splits) if s == split]
    report: dict[str, Any] = {
        "run": run.name, "run_meta": run_json(session, run), "release": gold.release, "release_path": str(gold.folder),
        "release_manifest_sha256": gold.manifest_sha256, "superseded_by": _superseded_by(session, gold),
        "split": split, "n_holdout_left_out": 0 if holdout else sum(1 for s in gold.splits if s == HOLDOUT),
        "holdout_views": views,
        **_scored(gold, judged, rows, n_bootstrap, seed),
        "by_slice": _by(gold, judged, rows, gold.slices, n_bootstrap, seed) if "slice" in groups else {},
        "by_split": (_by(gold, judged, _all_or(rows, holdout, gold), gold.splits, n_bootstrap, seed)
                     if "split" in groups else {}),
        "n_bootstrap": n_bootstrap, "seed": seed,
    }
    report["humans"] = _humans(gold, rows, n_bootstrap, seed)
    report["human_range"] = _human_range(report["humans"])
    report["corrected_support_rate"] = _corrected(session, gold, judged, rows, report["undefined"])
    report["disagreements"] = _disagreements(gold, judged, rows)
    return report


def _checked_by(by: Iterable[str]) -> tuple[str, ...]:
    groups = tuple(dict.fromkeys(part.strip() for part in by if part.strip()))
    for group in groups:
        if group not in ("slice", "split"):
            raise InvalidValueError.of("msg.judge.bad_by", by=group)
    return groups


def _all_or(rows: list[int], holdout: bool, gold: _Gold) -> list[int]:
    """The rows `by_split` breaks down: both splits once the holdout is shown, else the dev rows."""
    return list(range(len(gold.keys))) if holdout else rows


def _read_gold(session: Session, actor: Caller, release: str | Path) -> _Gold:
    """The gold of a verified release (a stored release's name, or a folder)."""
    if isinstance(release, str) and _is_unstored_folder(session, release):
        release = Path(release)
    if isinstance(release, Path):
        result, folder, shown = check_release(release), release, str(release)
    else:
        result = check_stored_release(session, actor, release)
        folder = Path(session.exec(select(GoldRelease.path).where(GoldRelease.name == release)).one())
        shown = release
    import pyarrow.parquet as pq

    table = pq.read_table(release_layout(folder).parquet,
                          columns=["dataset", "case_id", "claim_id", "gold_label", "slice", "split", "labels"])
    columns = table.to_pydict()
    datasets, case_ids = columns["dataset"], columns["case_id"]
    return _Gold(shown, folder, result.manifest_sha256 or "", read_manifest(folder),
                 list(zip(datasets, columns["claim_id"])), [f"{d}\0{c}" for d, c in zip(datasets, case_ids)], case_ids,
                 columns["gold_label"], columns["slice"], columns["split"], columns["labels"])


def _is_unstored_folder(session: Session, given: str) -> bool:
    """Whether `given` names no stored release but a folder holding a manifest.json."""
    stored = session.exec(select(GoldRelease.id).where(GoldRelease.name == given)).first()
    return stored is None and release_layout(given).manifest.is_file()


def _refuse_blind(session: Session, actor: Caller, keys: set[tuple[str, str]]) -> None:
    """PermissionDeniedError when the release holds a claim `actor` is assigned to label and has not
    labeled yet: the report shows its gold label and the labelers' labels."""
    hidden = claims_still_to_label(session, actor)
    if hidden is None:
        return
    pks = list(session.exec(hidden))
    for start in range(0, len(pks), LOOKUP_BATCH):
        query = (select(Dataset.name, Claim.claim_id).join(Dataset, Dataset.id == Claim.dataset_id)
                 .where(Claim.id.in_(pks[start:start + LOOKUP_BATCH])))
        if any(tuple(row) in keys for row in session.exec(query)):
            raise PermissionDeniedError.of("msg.release.still_to_label", doing=msg("msg.judge.doing_report"))


def _judge_labels(session: Session, run_pk: int) -> dict[tuple[str, str], tuple[str, str]]:
    """(dataset, claim_id) -> (judge label, slice of the claim's case) of every label of the run."""
    query = (select(Dataset.name, Claim.claim_id, JudgeLabel.value, Case.slice)
             .join(Claim, Claim.id == JudgeLabel.claim_pk).join(Case, Case.id == Claim.case_pk)
             .join(Dataset, Dataset.id == Claim.dataset_id).where(JudgeLabel.run_pk == run_pk))
    return {(dataset, claim_id): (value, slice_) for dataset, claim_id, value, slice_ in session.exec(query)}


def _scored(gold: _Gold, judged: dict[tuple[str, str], tuple[str, str]], rows: list[int], n_bootstrap: int,
            seed: int) -> dict[str, Any]:
    """n_gold, n_items, n_missing and `calibration.score_judge` of the judge on `rows`."""
    labeled = [i for i in rows if gold.keys[i] in judged]
    scores = calibration.score_judge([gold.case_keys[i] for i in labeled], [gold.labels[i] for i in labeled],
                                     [judged[gold.keys[i]][0] for i in labeled], LABELS, n_bootstrap=n_bootstrap,
                                     seed=seed, positive=POSITIVE)
    return {"n_gold": len(rows), "n_items": len(labeled), "n_missing": len(rows) - len(labeled), **scores}


def _by(gold: _Gold, judged: dict, rows: list[int], values: list[str], n_bootstrap: int, seed: int) -> dict[str, Any]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for i in rows:
        grouped[values[i]].append(i)
    return {value: _scored(gold, judged, grouped[value], n_bootstrap, seed) for value in sorted(grouped)}


def _humans(gold: _Gold, rows: list[int], n_bootstrap: int, seed: int) -> dict[str, Any]:
    """labeler -> their blind labels on `rows` scored against the gold as the judge is."""
    by_labeler: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for i in rows:
        for label in gold.human_labels[i] or ():
            by_labeler[label["labeler"]].append((i, label["label"]))
    humans = {}
    for labeler in sorted(by_labeler):
        items = by_labeler[labeler]
        scores = calibration.score_judge([gold.case_keys[i] for i, _ in items], [gold.labels[i] for i, _ in items],
                                         [label for _, label in items], LABELS, n_bootstrap=n_bootstrap, seed=seed,
                                         positive=POSITIVE)
        humans[labeler] = {"n_items": len(items), **scores}
    return humans


HUMAN_RANGE_METRICS = ("percent_agreement", "cohen_kappa", "false_pass_rate", "false_fail_rate")


def _human_range(humans: dict[str, Any]) -> dict[str, list[float] | None]:
    """metric -> [lowest, highest] over the labelers who have it; None when none has."""
    ranges: dict[str, list[float] | None] = {}
    for metric in HUMAN_RANGE_METRICS:
        values = [scores[metric] for scores in humans.values() if scores.get(metric) is not None]
        ranges[metric] = [min(values), max(values)] if values else None
    return ranges


def _corrected(session: Session, gold: _Gold, judged: dict[tuple[str, str], tuple[str, str]], rows: list[int],
               undefined: dict[str, Any]) -> dict[str, Any] | None:
    """The prediction-powered estimate of the support rate (`calibration.corrected_rate`) from the
    judge's labels on the claims outside the release and the gold on the released claims of
    `rows` it labeled; None (with a reason in `undefined`) when the run labels no other claim."""
    released = set(gold.keys)
    outside = [value for key, value in judged.items() if key not in released]
    labeled = [i for i in rows if gold.keys[i] in judged]
    if not outside:
        undefined["corrected_support_rate"] = english("msg.judge.no_outside")
        return None
    if not labeled:
        undefined["corrected_support_rate"] = english("msg.judge.none_in_split")
        return None
    estimate = calibration.corrected_rate([label == POSITIVE for label, _ in outside],
                                          [judged[gold.keys[i]][0] == POSITIVE for i in labeled],
                                          [gold.labels[i] == POSITIVE for i in labeled])
    mix = calibration.slice_mix_differs([gold.slices[i] for i in labeled], [slice_ for _, slice_ in outside])
    return {**estimate, "assumption": PPI_ASSUMPTION, "slice_mix": mix}


def _disagreements(gold: _Gold, judged: dict[tuple[str, str], tuple[str, str]], rows: list[int]) -> list[dict[str, Any]]:
    return [{"dataset": gold.keys[i][0], "claim_id": gold.keys[i][1], "case_id": gold.case_ids[i], "slice": gold.slices[i],
             "split": gold.splits[i], "gold_label": gold.labels[i], "judge_label": judged[gold.keys[i]][0]}
            for i in rows if gold.keys[i] in judged and judged[gold.keys[i]][0] != gold.labels[i]]


def _superseded_by(session: Session, gold: _Gold) -> list[str]:
    """The stored releases created after this one that cover one of its datasets, oldest first.
    "After": later in the database's order when the release is stored there (found by its manifest
    hash), else created after the manifest's created_at (which is to the second)."""
    datasets = set((gold.manifest.get("scope") or {}).get("datasets") or [])
    releases = list(session.exec(select(GoldRelease).order_by(GoldRelease.created_at, GoldRelease.id)))
    this = next((release for release in releases if release.manifest_sha256 == gold.manifest_sha256), None)
    if this is not None:
        later = releases[releases.index(this) + 1:]
    else:
        created = _manifest_time(gold.manifest.get("created_at"))
        later = [] if created is None else [r for r in releases if r.created_at.replace(microsecond=0) > created]
    return [release.name for release in later if datasets & set((release.scope or {}).get("datasets") or [])]


def _manifest_time(created: Any) -> datetime | None:
    """A manifest's created_at (ISO 8601, UTC) as an aware datetime; None when it is not one."""
    try:
        moment = datetime.fromisoformat(str(created).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _record_holdout_view(session: Session, actor: Caller, run: JudgeRun, gold: _Gold) -> dict[str, int]:
    record_event(session, actor_pk=actor.id, entity=HOLDOUT_EVENT, entity_pk=run.id, action="create",
                 after={"run": run.name, "release": gold.release, "release_manifest_sha256": gold.manifest_sha256})
    session.flush()
    return _holdout_views(session, run.id, gold.manifest_sha256)


def _holdout_views(session: Session, run_pk: int, manifest_sha256: str) -> dict[str, int]:
    """{"this_run": n, "any_run": n}: the recorded viewings of this release's holdout figures."""
    events = session.exec(select(LabelEvent.entity_pk, LabelEvent.after).where(LabelEvent.entity == HOLDOUT_EVENT))
    of_release = [pk for pk, after in events if (after or {}).get("release_manifest_sha256") == manifest_sha256]
    return {"this_run": sum(1 for pk in of_release if pk == run_pk), "any_run": len(of_release)}
