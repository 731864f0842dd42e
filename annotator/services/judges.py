"""Judge runs: an automatic judge's labels of claims (an LLM, or any grader), imported once and
never changed, and their calibration against a frozen gold release (`judge_report`).

The gold of a report comes from the release folder, verified against its manifest first, never
from the live database: the same release and run give the same report, whatever was labeled
since. Judge labels are for admins only (Permission.CALIBRATE): a labeler or adjudicator who saw
them would be anchored by them (the blind rule's reason, docs/domain.md).
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from sqlalchemy import func, insert
from sqlmodel import Session, select

from annotator import calibration, formats
from annotator.errors import InvalidValueError, NotFoundError
from annotator.formats import JudgeLabelRecord
from annotator.messages import Message, english, msg, shortened
from annotator.models import Case, Claim, Dataset, GoldRelease, JudgeLabel, JudgeRun, LabelEvent
from annotator.release import sha256_file
from annotator.services.access import Caller, is_operator, require
from annotator.services.audit import record_event
from annotator.services.blind import claims_still_to_label
from annotator.services.gold_source import VerifiedRelease, open_release, refuse_blind, superseded_by
from annotator.services.imports.named import NamedIds, nothing_stored, refuse_taken_name
from annotator.services.imports.shared import ImportReport, check_dataset_name, refused_when_concurrent, skipped_lines_of
from annotator.services.lookup import get_dataset
from annotator.text import MAX_ID_CHARS, MAX_TEXT_CHARS, RUN_NAME_CHARS, check_free_text, is_run_name
from annotator.vocabulary import LABELS, SPLITS
from annotator.workflow import Permission

POSITIVE = "support"
"""The label a judge's pass means: false pass and false fail rates and the support rate count it."""
DEV, HOLDOUT = SPLITS
HOLDOUT_EVENT = "holdout_view"
"""The audit trail's entity for one viewing of a release's holdout figures for a run."""
PPI_ASSUMPTION = english("msg.judge.ppi_assumption")
LOOKUP_BATCH = 500
_CLAIMS = NamedIds(Claim, "claim_id", unknown="msg.import.problem.no_claim", unknown_in="msg.import.problem.no_claim_in",
                   unknown_fix="msg.import.fix.import_case_first", ambiguous="msg.import.problem.ambiguous_claim",
                   two_datasets="msg.judge.two_datasets")
"""A judge run's claim ids: claims of one dataset."""


def check_run_name(name: str) -> str:
    """`name` when it is a valid judge run name (`text.is_run_name`: letters, digits and `. _ : + -`,
    starting with a letter or digit, at most RUN_NAME_CHARS characters). Raises InvalidValueError
    otherwise."""
    if not is_run_name(name):
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
    fmt: "auto" (by the file's suffix, else its first line), "csv" or "jsonl".
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
    refuse_taken_name(session, JudgeRun.name, run, "msg.judge.name_taken")
    dataset_pk = get_dataset(session, dataset).id if dataset is not None else None
    skips = formats.Skips() if partial else None
    source = formats.read_judge_labels(path, fmt, skips=skips)
    records = list(source.records)
    stored = _CLAIMS.resolved(session, source.path, records, dataset, dataset_pk, skips)
    if not stored:
        raise nothing_stored(source.path, skips, "msg.judge.all_skipped", "msg.judge.none_stored")
    run_pk, run_dataset_pk = _store(session, actor, source.path, run, stored, model, prompt_version, note)
    counts = {"judge_labels": {"new": len(stored), "unchanged": 0, "updated": 0}}
    report = ImportReport(source.path, source.format, source.encoding, _dataset_name(session, run_dataset_pk), counts,
                          warnings=tuple(source.warnings), skipped_lines=skipped_lines_of(skips))
    return JudgeImport(run_json(session, session.get(JudgeRun, run_pk)), report)


def _store(session: Session, actor: Caller, path: str, name: str, stored: list[tuple[JudgeLabelRecord, int, int]],
           model: str, prompt_version: str, note: str) -> tuple[int, int]:
    """Insert the run and its labels, record the import in the audit trail; (run pk, dataset pk)."""
    dataset_pk = stored[0][2]
    run = JudgeRun(name=name, dataset_pk=dataset_pk, model=model, prompt_version=prompt_version, note=note,
                   creator="" if is_operator(actor) else actor.name, source_name=Path(path).name,
                   source_sha256=sha256_file(path))
    session.add(run)
    session.flush()
    rows = [{"run_pk": run.id, "claim_pk": pk, "value": record.label, "confidence": record.confidence,
             "rationale": record.rationale} for record, pk, _ in stored]
    for start in range(0, len(rows), LOOKUP_BATCH):
        session.exec(insert(JudgeLabel.__table__), params=rows[start:start + LOOKUP_BATCH])
    record_event(session, actor_pk=actor.id, entity="judge_run", entity_pk=run.id, action="create",
                 after={"name": name, "labels": len(rows), "source_sha256": run.source_sha256})
    return run.id, dataset_pk


def _dataset_name(session: Session, dataset_pk: int | None) -> str | None:
    return None if dataset_pk is None else session.get(Dataset, dataset_pk).name


# ------------------------------------------------------------------------------- list


def run_json(session: Session, run: JudgeRun, label_counts: dict[str, int] | None = None) -> dict[str, Any]:
    """A judge run as plain data: name, dataset, model, prompt_version, note, creator,
    created_at (ISO 8601, UTC), source_name, source_sha256, n_labels, label_counts.
    label_counts: label -> the run's labels of it, when the caller has them (else counted here)."""
    return _runs_json(session, [run], None if label_counts is None else {run.id: label_counts})[0]


def list_judge_runs(session: Session, actor: Caller) -> list[dict[str, Any]]:
    """Every judge run (`run_json`), newest first: two queries, whatever the number of runs."""
    require(actor, Permission.CALIBRATE)
    return _runs_json(session, list(session.exec(select(JudgeRun).order_by(JudgeRun.created_at.desc(), JudgeRun.id.desc()))))


def _runs_json(session: Session, runs: list[JudgeRun], known: dict[int, dict[str, int]] | None = None) -> list[dict[str, Any]]:
    """`run_json` of each run, their label counts in one grouped query (unless `known`: run pk ->
    label -> count)."""
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for pk, given in (known or {}).items():
        counts[pk] = {str(label): int(n) for label, n in given.items()}
    if runs and known is None:
        query = (select(JudgeLabel.run_pk, JudgeLabel.value, func.count()).where(JudgeLabel.run_pk.in_([r.id for r in runs]))
                 .group_by(JudgeLabel.run_pk, JudgeLabel.value))
        for run_pk, value, n in session.exec(query):
            counts[run_pk][value] = int(n)
    datasets = dict(session.exec(select(Dataset.id, Dataset.name)).all()) if runs else {}
    return [{"name": run.name, "dataset": datasets.get(run.dataset_pk), "model": run.model,
             "prompt_version": run.prompt_version, "note": run.note, "creator": run.creator,
             "created_at": run.created_at.isoformat(), "source_name": run.source_name,
             "source_sha256": run.source_sha256, "n_labels": sum(counts[run.id].values()),
             "label_counts": {label: counts[run.id].get(label, 0) for label in LABELS}} for run in runs]


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


GOLD_COLUMNS = ["dataset", "case_id", "claim_id", "gold_label", "slice", "split"]
"""The columns of gold.parquet a report reads (the blind labels are read apart: `_human_labels`)."""
DISAGREEMENT_COLUMNS = ["dataset", "claim_id", "case_id", "slice", "split", "gold_label", "judge_label"]


@dataclass(frozen=True)
class _Gold:
    """A verified release's gold: one row per claim in release order (GOLD_COLUMNS, `case_key`: a
    code for the claim's dataset and case id, the bootstrap's unit) and its blind labels (`humans`: row, labeler, label)."""

    release: str
    folder: Path
    manifest_sha256: str
    manifest: dict[str, Any]
    claims: pd.DataFrame
    humans: pd.DataFrame
    stored_as: str | None  # the stored release whose manifest this is; None for a folder the database does not hold


def judge_report(session: Session, actor: Caller, name: str, release: str | Path, *, by: Iterable[str] = ("slice", "split"),
                 n_bootstrap: int = 1000, seed: int = 0, holdout: bool = False) -> dict[str, Any]:
    """Judge run `name` scored against the gold of `release`, as one plain JSON-ready dict.

    release: a stored release's name (a str; verified against its folder's manifest and the
        manifest hash the database recorded) or a release folder (a Path, or a str naming no stored
        release but a folder with a manifest.json; verified against its manifest). The gold labels
        come from the folder's gold.parquet, never the database.
    by: "slice" and/or "split": the breakdowns to compute (`by_slice`, `by_split`; {} otherwise).
    n_bootstrap, seed: case-level bootstrap resamples for `ci95` (0: none), numpy seed.
    holdout: False: the figures cover the dev split only, and `n_holdout_left_out` counts the
        holdout claims left out. True: they cover the holdout split, `by_split` shows both, and
        the viewing is recorded in the audit trail (`holdout_views` counts the viewings of this
        release's holdout for this run and for any run, this one included).
    Keys: run, run_meta, release, release_path, release_manifest_sha256, superseded_by, split,
    n_holdout_left_out, holdout_views, n_gold, n_items, n_missing, the figures of
    `calibration.score_judge` (percent_agreement, cohen_kappa, confusion, false_pass_rate,
    false_fail_rate, ci95, ci95_analytic, undefined, indicative, denominators, ...), by_slice,
    by_split, humans (labeler -> the same figures of their blind labels on the claims the judge
    labeled), human_range (metric -> [min, max] over the labelers), corrected_support_rate
    (`_corrected`, or None with a reason in `undefined`), disagreements (dataset, claim_id,
    case_id, slice, split, gold_label, judge_label), n_bootstrap, seed. Rates are fractions 0..1.
    Raises PermissionDeniedError unless `actor` may calibrate, and when the release holds a claim
    `actor` is still to label (the blind rule); NotFoundError for an unknown run or release;
    ReleaseVerifyError when the release does not match its manifest; InvalidValueError for a
    breakdown other than slice or split.
    """
    require(actor, Permission.CALIBRATE)
    groups = _checked_by(by)
    run = get_judge_run(session, actor, name)
    gold = _read_gold(session, actor, release)
    _refuse_blind(session, actor, gold.claims)
    judged = _judge_labels(session, run.id)
    claims = _coded(gold.claims.merge(judged[["dataset", "claim_id", "judge_label", "judged_row"]], how="left",
                                      on=["dataset", "claim_id"]))
    split = HOLDOUT if holdout else DEV
    in_split = (claims["split"] == split).to_numpy()
    shown = claims if in_split.all() else claims[in_split]  # no copy when every claim is in the split
    if holdout and gold.stored_as is None:
        raise InvalidValueError.of("msg.judge.holdout_unstored", folder=str(gold.folder))
    record = holdout and not shown.empty  # a release without holdout claims has no holdout to look at
    views = _record_holdout_view(session, actor, run, gold) if record else _holdout_views(session, run.id, gold.manifest_sha256)
    with ThreadPoolExecutor(max_workers=SCORING_THREADS) as pool:
        overall = _scored(pool, shown, n_bootstrap, seed)
        by_slice = _by(pool, shown, "slice", n_bootstrap, seed, overall) if "slice" in groups else {}
        by_split = {}
        if "split" in groups:  # with --holdout, both splits; else the split shown
            by_split = _by(pool, claims, "split", n_bootstrap, seed) if holdout else _by(pool, shown, "split", n_bootstrap, seed, overall)
        humans = _humans(pool, shown.loc[shown["judge_label"].notna(), SCORED_COLUMNS], gold.humans, n_bootstrap, seed)
    report: dict[str, Any] = {
        "run": run.name, "run_meta": run_json(session, run, judged["judge_label"].value_counts().to_dict()),
        "release": gold.release, "release_path": str(gold.folder),
        "release_manifest_sha256": gold.manifest_sha256, "release_stored_as": gold.stored_as,
        "superseded_by": _superseded_by(session, gold),
        "split": split, "n_holdout_left_out": 0 if holdout else int((claims["split"] == HOLDOUT).sum()),
        "holdout_views": views,
        **overall.result(),
        "by_slice": _results(by_slice, overall),
        "by_split": _results(by_split, overall),
        "n_bootstrap": n_bootstrap, "seed": seed,
        "humans": _results(humans, overall),
    }
    report["human_range"] = _human_range(report["humans"])
    outside = _outside(session, judged, claims)
    report["corrected_support_rate"] = _corrected(gold, outside, shown, report["undefined"], n_bootstrap, seed)
    report["warnings"] = _warnings(session, run, gold, report, holdout)
    report["disagreements"] = _disagreements(shown)
    return report


def _checked_by(by: Iterable[str]) -> tuple[str, ...]:
    groups = tuple(dict.fromkeys(part.strip() for part in by if part.strip()))
    for group in groups:
        if group not in ("slice", "split"):
            raise InvalidValueError.of("msg.judge.bad_by", by=group)
    return groups


def _read_gold(session: Session, actor: Caller, release: str | Path) -> _Gold:
    """The gold of a verified release (a stored release's name, or a folder; gold_source.open_release)."""
    verified = open_release(session, actor, release)
    import pyarrow.parquet as pq

    table = pq.read_table(verified.parquet, columns=[*GOLD_COLUMNS, "labels"])
    claims = table.select(GOLD_COLUMNS).to_pandas()
    claims["case_key"] = pd.factorize(claims["dataset"] + "\0" + claims["case_id"])[0]  # one code per case
    return _Gold(verified.release, verified.folder, verified.manifest_sha256, verified.manifest, claims,
                 _human_labels(table.column("labels")), verified.stored_as)


def _human_labels(labels: Any) -> pd.DataFrame:
    """The blind labels of gold.parquet's `labels` column (a list of structs per claim) as a table
    of row (the claim's position in the release), labeler and label."""
    import pyarrow.compute as pc

    labels = labels.combine_chunks()
    flat = pc.list_flatten(labels)
    return pd.DataFrame({"row": pc.list_parent_indices(labels).to_numpy(),
                         "labeler": pc.dictionary_encode(flat.field("labeler")).to_pandas(),
                         "label": pc.dictionary_encode(flat.field("label")).to_pandas()})


def _refuse_blind(session: Session, actor: Caller, claims: pd.DataFrame) -> None:
    """The blind rule over the release's claims (gold_source.refuse_blind)."""
    refuse_blind(session, actor, zip(claims["dataset"], claims["claim_id"]), msg("msg.judge.doing_report"))


def _judge_labels(session: Session, run_pk: int) -> pd.DataFrame:
    """Every label of the run: dataset, claim_id, judge_label, case_pk (the claim's case's key) and
    judged_row (0..n-1, the label's row here).
    Read through the driver's own cursor, in the session's transaction: a row object per label
    would cost more than the query (100,000 labels). The dataset's name is looked up once per
    dataset, not joined once per label."""
    query = (select(Claim.claim_id, JudgeLabel.value, Claim.case_pk, Claim.dataset_id)
             .join(Claim, Claim.id == JudgeLabel.claim_pk).where(JudgeLabel.run_pk == run_pk))
    connection = session.connection()
    compiled = query.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True})  # run_pk: an int
    cursor = connection.connection.driver_connection.cursor()
    try:
        cursor.execute(str(compiled))
        rows = cursor.fetchall()
    finally:
        cursor.close()
    frame = pd.DataFrame(rows, columns=["claim_id", "judge_label", "case_pk", "dataset_pk"])
    names = dict(session.exec(select(Dataset.id, Dataset.name)).all())
    pks = frame["dataset_pk"].unique()
    frame["dataset"] = names[int(pks[0])] if len(pks) == 1 else frame["dataset_pk"].map(names)  # one dataset: one value
    frame["judged_row"] = np.arange(len(frame))
    return frame


def _outside(session: Session, judged: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """The run's labels of claims outside the release (`judged` rows no row of `claims` matched),
    with the slice and case_id of each claim's case."""
    matched = np.zeros(len(judged), dtype=bool)
    matched[claims["judged_row"].dropna().to_numpy().astype(np.int64)] = True
    outside = judged[~matched]
    if outside.empty:
        return outside.assign(slice=pd.Series(dtype=object), case_id=pd.Series(dtype=object))
    pks = outside["case_pk"].unique().tolist()
    cases: dict[int, tuple[str, str]] = {}
    for start in range(0, len(pks), LOOKUP_BATCH):
        query = select(Case.id, Case.slice, Case.case_id).where(Case.id.in_(pks[start:start + LOOKUP_BATCH]))
        cases.update((pk, (slice_, case_id)) for pk, slice_, case_id in session.exec(query).all())
    found = outside["case_pk"].map(cases)
    return outside.assign(slice=[pair[0] for pair in found], case_id=[pair[1] for pair in found])


def _coded(claims: pd.DataFrame) -> pd.DataFrame:
    """`claims` with gold_label and judge_label as categoricals over the same categories (the
    declared labels, then any other value, which score_judge names): each breakdown then takes
    and compares integer codes, not texts."""
    seen = pd.unique(pd.concat([claims["gold_label"], claims["judge_label"]], ignore_index=True).dropna())
    categories = [*LABELS, *sorted(str(v) for v in seen if v not in LABELS)]
    return claims.assign(gold_label=pd.Categorical(claims["gold_label"], categories=categories),
                         judge_label=pd.Categorical(claims["judge_label"], categories=categories))


SCORED_COLUMNS = ["case_key", "gold_label", "judge_label"]
"""The columns of the claims that `_scored` reads."""

SCORING_THREADS = 2
"""Threads that score the judge overall, by slice and by split, and the labelers, at once: the
multinomial draws of the bootstraps (most of a report's time) release the GIL. Each scoring
draws from its own generator seeded with `seed`, so the figures do not depend on the threads."""


def _scored(pool: Executor, claims: pd.DataFrame, n_bootstrap: int, seed: int) -> Future[dict[str, Any]]:
    """n_gold, n_items, n_missing and `calibration.score_judge` of the judge on `claims`, computed on `pool`."""
    labeled = claims.loc[claims["judge_label"].notna(), SCORED_COLUMNS]
    counts = {"n_gold": len(claims), "n_items": len(labeled), "n_missing": len(claims) - len(labeled)}
    return pool.submit(_score, counts, labeled["case_key"].to_numpy(), labeled["gold_label"], labeled["judge_label"],
                       n_bootstrap, seed)


def _score(counts: dict[str, int], cases: np.ndarray, gold: pd.Series, said: pd.Series, n_bootstrap: int,
           seed: int) -> dict[str, Any]:
    """`counts` and `calibration.score_judge` of the labels `said` against `gold` (categoricals)."""
    return {**counts, **calibration.score_judge(cases, gold, said, LABELS, n_bootstrap=n_bootstrap, seed=seed, positive=POSITIVE)}


def _by(pool: Executor, claims: pd.DataFrame, column: str, n_bootstrap: int, seed: int,
        whole: Future[dict[str, Any]] | None = None) -> dict[str, Future[dict[str, Any]]]:
    """value -> `_scored` of the claims with that value of `column`; a single group is `whole`
    (the figures of all of `claims`, the same numbers: the same claims and seed) when given."""
    groups = claims[[*SCORED_COLUMNS, column]].groupby(column, sort=True, observed=True)
    if whole is not None and groups.ngroups == 1:
        return {str(next(iter(groups.groups))): whole}
    return {str(value): _scored(pool, group, n_bootstrap, seed) for value, group in groups}


def _results(scored: dict[str, Future[dict[str, Any]]], whole: Future[dict[str, Any]]) -> dict[str, Any]:
    """Each future's figures; a copy of `whole`'s, which the report goes on to complete."""
    return {key: copy.deepcopy(future.result()) if future is whole else future.result() for key, future in scored.items()}


def _humans(pool: Executor, judged: pd.DataFrame, humans: pd.DataFrame, n_bootstrap: int,
            seed: int) -> dict[str, Future[dict[str, Any]]]:
    """labeler -> their blind labels on the claims `judged` (the claims the judge labeled, so that
    judge and humans are read on the same claims) scored against the gold as the judge is,
    computed on `pool`. A labeler's figures are optimistic: the gold of an agreed claim is their
    own label."""
    theirs = humans[humans["row"].isin(judged.index)]
    scored = {}
    for labeler, labels in theirs.groupby("labeler", sort=True, observed=True):
        claims = judged.loc[labels["row"].to_numpy()]
        scored[str(labeler)] = pool.submit(_score, {"n_items": len(labels)}, claims["case_key"].to_numpy(),
                                           claims["gold_label"], labels["label"], n_bootstrap, seed)
    return scored


HUMAN_RANGE_METRICS = ("percent_agreement", "cohen_kappa", "false_pass_rate", "false_fail_rate")


def _human_range(humans: dict[str, Any]) -> dict[str, list[float] | None]:
    """metric -> [lowest, highest] over the labelers who have it; None when none has."""
    ranges: dict[str, list[float] | None] = {}
    for metric in HUMAN_RANGE_METRICS:
        values = [scores[metric] for scores in humans.values() if scores.get(metric) is not None]
        ranges[metric] = [min(values), max(values)] if values else None
    return ranges


def _corrected(gold: _Gold, outside: pd.DataFrame, shown: pd.DataFrame, undefined: dict[str, Any], n_bootstrap: int,
               seed: int) -> dict[str, Any] | None:
    """The prediction-powered estimate of the support rate (`calibration.corrected_rate`, its
    intervals resampling cases) from the judge's labels on the claims outside the release
    (`outside`, from `_outside`) and the gold on the released claims of `shown` it labeled; None
    (with a reason in `undefined`) when the run labels no other claim. `left_out`: how many of the
    claims outside the release the release's manifest lists as left out, by state (they were not
    chosen at random)."""
    labeled = shown[shown["judge_label"].notna()]
    if outside.empty:
        undefined["corrected_support_rate"] = english("msg.judge.no_outside")
        return None
    if labeled.empty:
        undefined["corrected_support_rate"] = english("msg.judge.none_in_split")
        return None
    estimate = calibration.corrected_rate((outside["judge_label"] == POSITIVE).to_numpy(),
                                          (labeled["judge_label"] == POSITIVE).to_numpy(),
                                          (labeled["gold_label"] == POSITIVE).to_numpy(),
                                          unlabeled_cases=outside["case_pk"].to_numpy(),
                                          labeled_cases=labeled["case_key"].to_numpy(), n_bootstrap=n_bootstrap, seed=seed)
    mix = calibration.slice_mix_differs(labeled["slice"].to_numpy(), outside["slice"].to_numpy())
    return {**estimate, "assumption": PPI_ASSUMPTION, "slice_mix": mix, "left_out": _left_out(gold, outside)}


def _left_out(gold: _Gold, outside: pd.DataFrame) -> dict[str, int]:
    """state -> how many of the `outside` claims the release's manifest lists as left out in it."""
    listed = ((gold.manifest.get("excluded") or {}).get("claim_ids") or {})
    keys = set(zip(outside["dataset"], outside["claim_id"]))
    counts = {state: sum(1 for dataset, ids in (by_dataset or {}).items() for claim_id in ids if (dataset, claim_id) in keys)
              for state, by_dataset in listed.items()}
    return {state: n for state, n in counts.items() if n}


def _warnings(session: Session, run: JudgeRun, gold: _Gold, report: dict[str, Any], holdout: bool) -> list[str]:
    """What a reader of the figures must know (English texts of msg.judge.warn_*, found again by
    messages.recognize): a folder the database does not hold, no claim in common, a judge that
    labeled part of the gold, a holdout asked of a release without one, claims outside the release
    that it left out on purpose."""
    warnings = []
    if gold.stored_as is None:
        warnings.append(english("msg.judge.warn_unstored", folder=str(gold.folder)))
    if report["n_gold"] and not report["n_items"]:
        datasets = ", ".join((gold.manifest.get("scope") or {}).get("datasets") or []) or "-"
        warnings.append(english("msg.judge.warn_no_overlap", run=run.name, dataset=_dataset_name(session, run.dataset_pk) or "-",
                                datasets=datasets))
    elif report["n_missing"]:
        warnings.append(english("msg.judge.warn_subset", n=report["n_items"], of=report["n_gold"]))
    if holdout and not report["n_gold"]:
        warnings.append(english("msg.judge.warn_no_holdout"))
    corrected = report.get("corrected_support_rate") or {}
    if corrected.get("left_out"):
        states = ", ".join(f"{state} {n}" for state, n in corrected["left_out"].items())
        warnings.append(english("msg.judge.warn_left_out", n=sum(corrected["left_out"].values()),
                                of=corrected["n_unlabeled"], states=states))
    return warnings


def _disagreements(shown: pd.DataFrame) -> list[dict[str, Any]]:
    differ = shown[shown["judge_label"].notna() & (shown["judge_label"] != shown["gold_label"])]
    columns = [differ[column].astype(object).tolist() for column in DISAGREEMENT_COLUMNS]
    return [dict(zip(DISAGREEMENT_COLUMNS, values)) for values in zip(*columns)]


def _superseded_by(session: Session, gold: _Gold) -> list[str]:
    return superseded_by(session, VerifiedRelease(gold.release, gold.folder, gold.manifest_sha256, gold.manifest,
                                                  gold.stored_as))


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
