"""RAG runs: what a RAG system did with each case of a dataset (the passages it retrieved, ranked;
its behaviour, answer, cited passages and claims), imported once and never changed, then scored
against a frozen gold release and compared with another run.

Runs are for admins only (Permission.SCORE_RUNS): a run report shows each case's gold evidence.
A run's passage ids need not be passages of its dataset (a retriever may return anything from its
index): they are kept, counted (`n_unknown_retrieved`) and, when a run is scored, count as not
relevant. Its case ids must be cases of one dataset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import Text, cast, insert
from sqlmodel import Session, select

from annotator import formats
from annotator.errors import InvalidValueError, NotFoundError
from annotator.formats import RunCaseRecord
from annotator.messages import Message, msg, shortened
from annotator.models import Case, Dataset, Passage, Run, RunCase
from annotator.release import sha256_file
from annotator.services.access import Caller, is_operator, require
from annotator.services.audit import record_event
from annotator.services.imports.named import NamedIds, nothing_stored, refuse_taken_name
from annotator.services.imports.shared import ImportReport, check_dataset_name, refused_when_concurrent, skipped_lines_of
from annotator.services.lookup import get_dataset
from annotator.text import MAX_ID_CHARS, MAX_TEXT_CHARS, RUN_NAME_CHARS, check_free_text, is_run_name
from annotator.workflow import Permission

META_KEYS: tuple[str, ...] = ("system", "model", "prompt", "index", "corpus_release")
"""The documented keys of a run's meta (`--meta KEY=VALUE`): the system, its generator model, its
prompt version, its retrieval index and the corpus release it searched. Any other key that is a
name (`META_KEY`) is kept too."""
META_KEY_CHARS = 64
META_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
LOOKUP_BATCH = 500
"""Ids per IN (...) list and rows per INSERT statement."""
WHOLE_DATASET_ABOVE = 20 * LOOKUP_BATCH
"""More distinct passage ids than this: read all the dataset's passage ids once, not in batches."""
_CASES = NamedIds(Case, "case_id", unknown="msg.import.problem.no_case", unknown_in="msg.import.problem.no_case_in",
                  unknown_fix="msg.import.fix.import_run_case_first", ambiguous="msg.import.problem.ambiguous_case",
                  two_datasets="msg.run.two_datasets")
"""A run's case ids: cases of one dataset."""


def check_run_name(name: str) -> str:
    """`name` when it is a valid run name (`text.is_run_name`, the judge runs' rule: letters,
    digits and `. _ : + -`, starting with a letter or digit, at most RUN_NAME_CHARS characters).
    Raises InvalidValueError otherwise."""
    if not is_run_name(name):
        raise InvalidValueError.of("msg.run.bad_name", name=repr(shortened(str(name), MAX_ID_CHARS)), most=RUN_NAME_CHARS)
    return name


def check_meta(meta: Mapping[str, str]) -> dict[str, str]:
    """A run's meta as stored: the documented keys (META_KEYS) first, in their order, then the
    others as given; values as typed.
    Raises InvalidValueError for a key that is not a name (META_KEY, at most META_KEY_CHARS
    characters) and for a value longer than text.MAX_ID_CHARS or holding a character no database
    stores (text.check_free_text)."""
    for key, value in meta.items():
        if not isinstance(key, str) or len(key) > META_KEY_CHARS or not META_KEY.fullmatch(key):
            raise InvalidValueError.of("msg.run.bad_meta_key", name=repr(shortened(str(key), MAX_ID_CHARS)), most=META_KEY_CHARS)
        check_free_text(f"--meta {key}", value, MAX_ID_CHARS)
    order = [key for key in META_KEYS if key in meta] + [key for key in meta if key not in META_KEYS]
    return {key: meta[key] for key in order}


# ------------------------------------------------------------------------------ import


@dataclass(frozen=True)
class RunImport:
    """What `import_run` stored: the run (`run_json` shape), the import report, and how many
    retrieved and cited passage ids the file gave (n_retrieved, n_cited) and how many cited ids
    are not passages of the run's dataset (the retrieved ones: run["n_unknown_retrieved"])."""

    run: dict[str, Any]
    report: ImportReport
    n_retrieved: int = 0
    n_cited: int = 0
    n_unknown_cited: int = 0

    def summary_lines(self) -> list[str]:
        """The import report's lines, the passage ids the dataset does not know (when there are
        any), then "Run NAME stored: N cases (file SHA-256 ...)": the English texts of
        `summary_messages`."""
        return [str(line) for line in self.summary_messages()]

    def summary_messages(self) -> list[Message | str]:
        """The summary's lines as messages, for the app to write in the user's language."""
        return [*self.report.summary_messages(), *self.notes(), self.stored_message()]

    def notes(self) -> list[Message]:
        """The passage ids the run's dataset does not know, retrieved and cited (none: [])."""
        dataset = self.run["dataset"]
        notes = []
        if self.run["n_unknown_retrieved"]:
            notes.append(msg("msg.run.unknown_retrieved", n=self.run["n_unknown_retrieved"], of=self.n_retrieved, dataset=dataset))
        if self.n_unknown_cited:
            notes.append(msg("msg.run.unknown_cited", n=self.n_unknown_cited, of=self.n_cited, dataset=dataset))
        return notes

    def stored_message(self) -> Message:
        return msg("msg.run.stored", run=self.run["name"], n=self.run["n_cases"], sha256=self.run["source_sha256"])


@refused_when_concurrent("runs")
def import_run(session: Session, actor: Caller, path: str | Path, *, run: str, dataset: str | None = None,
               meta: Mapping[str, str] | None = None, note: str = "", partial: bool = False,
               fmt: str = "auto") -> RunImport:
    """Import a run file (JSONL, one case a line: case_id, retrieved, behavior[, answer, cited,
    claims]; or a RAGAS file, its contexts' order the ranking and its response the answer; see
    `formats.read_run`) as the new run `run`, immutable from then on.

    Case ids are looked up in `dataset`, or across all datasets (the run's dataset is the one its
    cases are in). Passage ids (retrieved, cited) need not be passages of that dataset: they are
    kept and counted (the run's n_unknown_retrieved; RunImport.n_unknown_cited).
    meta: KEY -> VALUE kept with the run (`check_meta`; the documented keys are META_KEYS).
    note: free text kept with the run (at most MAX_TEXT_CHARS).
    partial: skip the bad lines (listed in the report's `skipped_lines`) and store the others;
        without it one bad line stores nothing. The file's SHA-256 is kept with the run.
    fmt: "auto", "jsonl" or "ragas" (case ids as `import_cases` made them from the same file).
    Raises PermissionDeniedError unless `actor` may score runs; InvalidValueError for a bad run
    name, one taken in any letter case, a bad dataset name, a bad meta key or value, or a too long
    note; NotFoundError for an unknown dataset; ImportFileError for a missing, unreadable or empty
    file (or one whose every line was skipped); ImportRowError naming file, line and field: a bad
    line (formats.read_run), an unknown case id, a case id found in two datasets (name
    --dataset), cases of two datasets in one run.
    """
    require(actor, Permission.SCORE_RUNS)
    check_run_name(run)
    check_dataset_name(dataset)
    stored_meta = check_meta(meta or {})
    check_free_text("note", note, MAX_TEXT_CHARS)
    refuse_taken_name(session, Run.name, run, "msg.run.name_taken")
    dataset_pk = get_dataset(session, dataset).id if dataset is not None else None
    skips = formats.Skips() if partial else None
    source = formats.read_run(path, fmt, skips=skips)
    records = list(source.records)
    resolved = _CASES.resolved(session, source.path, records, dataset, dataset_pk, skips)
    if not resolved:
        raise nothing_stored(source.path, skips, "msg.run.all_skipped", "msg.run.none_stored")
    run_dataset_pk = resolved[0][2]
    kept = [record for record, _, _ in resolved]
    known = _known_passages(session, run_dataset_pk, {pid for record in kept for pid in (*record.retrieved, *record.cited)})
    n_retrieved, n_unknown_retrieved = _count_unknown((record.retrieved for record in kept), known)
    n_cited, n_unknown_cited = _count_unknown((record.cited for record in kept), known)
    run_pk = _store(session, actor, source.path, run, resolved, stored_meta, note, n_unknown_retrieved)
    counts = {"runs": {"new": len(resolved), "unchanged": 0, "updated": 0}}
    report = ImportReport(source.path, source.format, source.encoding, session.get(Dataset, run_dataset_pk).name, counts,
                          warnings=tuple(source.warnings), skipped_lines=skipped_lines_of(skips),
                          reading_notes=tuple(source.notes))
    return RunImport(run_json(session, session.get(Run, run_pk)), report, n_retrieved, n_cited, n_unknown_cited)


def _known_passages(session: Session, dataset_pk: int, passage_ids: set[str]) -> set[str]:
    """The ids among `passage_ids` that are passages of the dataset: IN lists of LOOKUP_BATCH ids,
    or, for more than WHOLE_DATASET_ABOVE ids, every passage id of the dataset read once."""
    if len(passage_ids) > WHOLE_DATASET_ABOVE:
        every = session.exec(select(Passage.passage_id).where(Passage.dataset_id == dataset_pk))
        return passage_ids.intersection(every)
    known: set[str] = set()
    wanted = sorted(passage_ids)
    for start in range(0, len(wanted), LOOKUP_BATCH):
        known.update(session.exec(select(Passage.passage_id).where(
            Passage.dataset_id == dataset_pk, Passage.passage_id.in_(wanted[start:start + LOOKUP_BATCH]))))
    return known


def _count_unknown(id_lists: Iterable[Sequence[str]], known: set[str]) -> tuple[int, int]:
    """(ids, ids not in `known`) over the lists, each occurrence counted."""
    total = unknown = 0
    for ids in id_lists:
        total += len(ids)
        unknown += len(ids) - sum(map(known.__contains__, ids))
    return total, unknown


def _store(session: Session, actor: Caller, path: str, name: str, resolved: list[tuple[RunCaseRecord, int, int]],
           meta: dict[str, str], note: str, n_unknown_retrieved: int) -> int:
    """Insert the run and its cases, record the import in the audit trail; the run's pk."""
    run = Run(name=name, dataset_pk=resolved[0][2], meta=meta, note=note, creator="" if is_operator(actor) else actor.name,
              source_name=Path(path).name, source_sha256=sha256_file(path), n_cases=len(resolved),
              n_unknown_retrieved=n_unknown_retrieved)
    session.add(run)
    session.flush()
    rows = [{"run_pk": run.id, "case_pk": case_pk, "position": position, "line": record.line,
             "retrieved": list(record.retrieved), "behavior": record.behavior, "answer": record.answer,
             "cited": list(record.cited), "claims": [_claim_json(claim) for claim in record.claims]}
            for position, (record, case_pk, _) in enumerate(resolved)]
    for start in range(0, len(rows), LOOKUP_BATCH):
        session.exec(insert(RunCase.__table__), params=rows[start:start + LOOKUP_BATCH])
    record_event(session, actor_pk=actor.id, entity="run", entity_pk=run.id, action="create",
                 after={"name": name, "cases": len(rows), "source_sha256": run.source_sha256})
    return run.id


def _claim_json(claim: formats.RunClaimRecord) -> dict[str, str | None]:
    return {"text": claim.text, "label": claim.label, "claim_id": claim.claim_id, "severity": claim.severity}


# ------------------------------------------------------------------------------- list


def run_json(session: Session, run: Run) -> dict[str, Any]:
    """A run as plain data: name, dataset, meta (KEY -> VALUE), note, creator, created_at (ISO
    8601, UTC), source_name, source_sha256, n_cases, n_unknown_retrieved."""
    return _runs_json(session, [run])[0]


def list_runs(session: Session, actor: Caller) -> list[dict[str, Any]]:
    """Every run (`run_json`), newest first: two queries, whatever the number of runs.
    Raises PermissionDeniedError unless `actor` may score runs."""
    require(actor, Permission.SCORE_RUNS)
    return _runs_json(session, list(session.exec(select(Run).order_by(Run.created_at.desc(), Run.id.desc()))))


def _runs_json(session: Session, runs: list[Run]) -> list[dict[str, Any]]:
    datasets = dict(session.exec(select(Dataset.id, Dataset.name)).all()) if runs else {}
    return [{"name": run.name, "dataset": datasets.get(run.dataset_pk), "meta": {str(k): str(v) for k, v in (run.meta or {}).items()},
             "note": run.note, "creator": run.creator, "created_at": run.created_at.isoformat(),
             "source_name": run.source_name, "source_sha256": run.source_sha256, "n_cases": int(run.n_cases),
             "n_unknown_retrieved": int(run.n_unknown_retrieved)} for run in runs]


def get_run(session: Session, actor: Caller, name: str) -> Run:
    """The run called `name` (exactly). Raises PermissionDeniedError unless `actor` may score
    runs; NotFoundError listing the runs there are."""
    require(actor, Permission.SCORE_RUNS)
    run = session.exec(select(Run).where(Run.name == name)).first()
    if run is None:
        names = ", ".join(session.exec(select(Run.name).order_by(Run.name))) or msg("msg.release.none")
        raise NotFoundError.of("msg.run.unknown", name=shortened(name, MAX_ID_CHARS), names=names)
    return run


def run_cases(session: Session, actor: Caller, name: str) -> list[dict[str, Any]]:
    """What run `name` did with each case, in its file's order, as plain data: {dataset, case_id,
    retrieved (passage ids, best first), behavior, answer (text or None), cited (passage ids),
    claims ([{text, label, claim_id, severity}])}.
    Raises PermissionDeniedError unless `actor` may score runs; NotFoundError for an unknown run."""
    run = get_run(session, actor, name)
    dataset = session.get(Dataset, run.dataset_pk).name
    # the JSON columns read as their text and decoded here by msgspec, which builds a run's
    # million ids about a third faster than the json module behind the JSON type (the same values)
    query = (select(Case.case_id, cast(RunCase.retrieved, Text), RunCase.behavior, RunCase.answer,
                    cast(RunCase.cited, Text), cast(RunCase.claims, Text))
             .join(Case, Case.id == RunCase.case_pk).where(RunCase.run_pk == run.id).order_by(RunCase.position))
    ids, claims_of = _IDS.decode, _CLAIMS.decode
    return [{"dataset": dataset, "case_id": case_id, "retrieved": ids(retrieved) or [] if retrieved else [],
             "behavior": behavior, "answer": answer, "cited": ids(cited) or [] if cited else [],
             "claims": claims_of(claims) or [] if claims else []}
            for case_id, retrieved, behavior, answer, cited, claims in session.exec(query)]


_IDS = msgspec.json.Decoder(list[str] | None)
"""A RunCase's `retrieved` or `cited` column as stored (JSON text: a list of passage ids, or null)."""

_CLAIMS = msgspec.json.Decoder(list[dict[str, Any]] | None)
"""A RunCase's `claims` column as stored (JSON text: a list of objects, or null)."""
