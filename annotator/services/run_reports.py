"""A RAG run scored against a frozen gold release (`run_report`), and a candidate run compared with
its baseline on the same cases (`compare_report`): the service side of `annotator run report` and
`annotator run compare`, and of the Runs page.

The gold comes from the release folder, verified first (services/gold_source.py): each case's
slice, split, RAG fields (its metadata) and released claims from gold.parquet, its passages'
documents and versions from cases.jsonl. The live database gives only the run and, for passage ids
the release does not hold, whether the dataset knows them and their document (the corpus, not the
gold). The scoring itself is pure (run_scoring.py, run_compare.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import filterfalse
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

from sqlalchemy import func
from sqlmodel import Session, select

from annotator import run_compare, run_scoring
from annotator.agreement import MIN_BOOTSTRAP
from annotator.bulk import collector_paused
from annotator.errors import InvalidValueError, NotFoundError
from annotator.highlight import old_versions
from annotator.messages import english, msg, shortened
from annotator.models import Case, Dataset, GoldRelease, Passage, RunCase
from annotator.release import read_released_cases, read_released_passages
from annotator.retrieval import UNKNOWN_PREFIX, relevant_evidence, to_documents
from annotator.services.access import Caller, require
from annotator.services.blind import claims_still_to_label
from annotator.services.gold_source import VerifiedRelease, open_release, refuse_blind, superseded_by
from annotator.services.runs import get_run, run_cases, run_json
from annotator.text import MAX_ID_CHARS
from annotator.vocabulary import EXPECTED_BEHAVIORS, REPORT_SPLITS, RETRIEVAL_RULES, RETRIEVAL_UNITS
from annotator.workflow import Permission

UNITS = RETRIEVAL_UNITS
DEFAULT_K = 5
GOLD_COLUMNS = ["dataset", "case_id", "claim_id", "gold_label", "slice", "split", "passage_ids", "labels", "case_metadata"]
LOOKUP_BATCH = 500


@dataclass
class _ReleaseCase:
    """One case of the release as the scoring reads it (passage level; `--unit doc` maps it)."""

    dataset: str
    case_id: str
    slice: str
    split: str
    metadata: dict[str, Any]
    claims: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _RunGold:
    """A verified release's cases keyed by (dataset, case_id), in release order, and its passages:
    (dataset, passage_id) -> (doc_id, version)."""

    verified: VerifiedRelease
    cases: dict[tuple[str, str], _ReleaseCase]
    passages: dict[tuple[str, str], tuple[str, str]]
    has_passages: bool  # False for a release of schema 1 (no cases.jsonl)
    kept: dict[str, Any] | None = None  # the cases.jsonl line of the case _read_gold was asked to keep

    def datasets(self) -> list[str]:
        return list(dict.fromkeys(dataset for dataset, _ in self.cases))

    def has_holdout(self) -> bool:
        return any(case.split == "holdout" for case in self.cases.values())


def _checked(k: int, unit: str, split: str, rule: str, n_bootstrap: int) -> None:
    """InvalidValueError for a k that is not a whole number >= 1, a unit, split or rule outside
    its choices, and a number of resamples other than 0 or at least agreement.MIN_BOOTSTRAP."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidValueError.of("msg.run.bad_k", k=repr(k))
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or n_bootstrap < 0 or 0 < n_bootstrap < MIN_BOOTSTRAP:
        raise InvalidValueError.of("msg.calibration.bootstrap", minimum=MIN_BOOTSTRAP, n=repr(n_bootstrap))
    for value, choices, key in ((unit, UNITS, "msg.run.bad_unit"), (split, REPORT_SPLITS, "msg.run.bad_split"),
                                (rule, RETRIEVAL_RULES, "msg.run.bad_rule")):
        if value not in choices:
            raise InvalidValueError.of(key, value=repr(value), choices=", ".join(choices))


@collector_paused()  # a run's lists hold a million ids: every automatic full collection would walk them all
def run_report(session: Session, actor: Caller, name: str, release: str | Path, *, k: int = DEFAULT_K,
               unit: str = "passage", split: str = "all", rule: str = "all", n_bootstrap: int = 1000,
               seed: int = 0) -> dict[str, Any]:
    """Run `name` scored case by case against the gold of `release`, as one plain JSON-ready dict.

    release: a stored release's name or a release folder (gold_source.open_release).
    k: the rank cut of the retrieval figures (>= 1). unit: "passage" or "doc" (a document counts
        once, at the best rank of its passages). split: "all", "dev" or "holdout": the cases scored.
    rule: "all" (retrieval is ok when every relevant passage is in the top k) or "any" (one is).
    n_bootstrap, seed: case-level bootstrap resamples of the intervals (`ci95`), numpy seed.
    Keys: run, run_meta, release, release_path, release_manifest_sha256, release_stored_as,
    superseded_by, k, unit, split, retrieval_rule, n_bootstrap, seed, the figures of
    run_scoring.summarize (n_cases, n_scored, n_no_evidence, mean_recall_at_k, mean_precision_at_k,
    hit_rate_at_k, mrr, mean_ndcg_at_k, claim_support_rate, behavior_match_rate, pass_rate,
    status_counts, failure_label_counts, blockers, n_unknown_retrieved, ci95, undefined), by_slice
    and by_split (the same figures per group), cases (run_scoring.score_case per case, with its
    dataset, in release order), n_release_cases (the release's cases in the split), n_missing (of
    those, the cases the run has not), n_outside_release (the run's cases the release does not
    hold), warnings (English texts of msg.run.warn_*).
    Raises PermissionDeniedError unless `actor` may score runs, or when the release holds a claim
    `actor` is still to label (the blind rule); NotFoundError for an unknown run or release;
    ReleaseVerifyError when the release does not match its manifest; InvalidValueError for a bad
    k, unit, split or rule, or an n_bootstrap other than 0 or at least agreement.MIN_BOOTSTRAP.
    """
    require(actor, Permission.SCORE_RUNS)
    _checked(k, unit, split, rule, n_bootstrap)
    meta = run_json(session, get_run(session, actor, name))
    gold = _read_gold(session, actor, release)
    if unit == "doc" and not gold.has_passages:
        raise InvalidValueError.of("msg.run.doc_needs_cases", release=gold.verified.release)
    scored, counts = _score_run(session, actor, name, meta, gold, k=k, unit=unit, split=split, rule=rule)
    report: dict[str, Any] = {
        "run": name, "run_meta": meta, **_release_keys(session, gold),
        "k": k, "unit": unit, "split": split, "retrieval_rule": rule, "n_bootstrap": n_bootstrap, "seed": seed,
        **run_scoring.summarize(scored, n_bootstrap=n_bootstrap, seed=seed),
        "by_slice": run_scoring.summarize_by(scored, "slice", n_bootstrap=n_bootstrap, seed=seed),
        "by_split": run_scoring.summarize_by(scored, "split", n_bootstrap=n_bootstrap, seed=seed),
        "cases": scored, **counts,
    }
    report["warnings"] = _warnings(gold, meta, report)
    return report


@collector_paused()
def compare_report(session: Session, actor: Caller, base: str, candidate: str, release: str | Path, *,
                   k: int = DEFAULT_K, unit: str = "passage", split: str | None = None, rule: str = "all",
                   margin: float = 0.0, alpha: float = 0.05, n_bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Candidate run `candidate` compared with baseline run `base` on the cases both have, against
    the gold of `release`, with the gate's decision.

    split: None (the default): the holdout split when the release has holdout cases, else all
        cases (the decision is made on cases kept unseen while tuning); else "all", "dev" or
        "holdout". margin: the pass-rate loss (a fraction, >= 0) the gate tolerates. alpha: the
        level of the per-slice regression tests (Holm-corrected). Other arguments as `run_report`.
    Keys: the figures of run_compare.compare_runs (n_common, n_only_base, n_only_candidate, fixed,
    regressed, fix_rate, regression_rate, pass_rate_base, pass_rate_candidate,
    pass_rate_difference, ci95, mcnemar_p, by_slice, metric_deltas, blockers, decision, reasons,
    margin, alpha, n_bootstrap, seed), and base, candidate, base_meta, candidate_meta, release,
    release_path, release_manifest_sha256, release_stored_as, superseded_by, k, unit, split,
    split_chosen ("default" when the split was chosen by the release, "given" otherwise),
    retrieval_rule, warnings.
    Two runs of different datasets have no case in common (a case is one dataset's, whatever its
    id): all their cases are counted, none compared, and a warning says why.
    The candidate's blockers in the release's cases outside `split` are in `blockers` too (they
    block: a leak in a dev case stops a change decided on the holdout; n_blockers_other_cases).
    Raises as `run_report`, and InvalidValueError for a negative or non-finite margin, an alpha
    outside (0, 1), the same run given twice, or runs of two datasets (no case is in both).
    """
    require(actor, Permission.SCORE_RUNS)
    if base == candidate:
        raise InvalidValueError.of("msg.run.same_twice", name=base)
    if not (isinstance(margin, int | float) and 0.0 <= float(margin) < 1.0):
        raise InvalidValueError.of("msg.run.bad_margin", margin=repr(margin))
    if not (isinstance(alpha, int | float) and 0.0 < float(alpha) < 1.0):
        raise InvalidValueError.of("msg.run.bad_alpha", alpha=repr(alpha))
    metas = {role: run_json(session, get_run(session, actor, run)) for role, run in (("base", base), ("candidate", candidate))}
    if metas["base"].get("dataset") != metas["candidate"].get("dataset"):  # no case of one is a case of the other
        raise InvalidValueError.of("msg.run.two_datasets_compared", base=base, candidate=candidate,
                                   base_dataset=metas["base"].get("dataset") or "-",
                                   candidate_dataset=metas["candidate"].get("dataset") or "-")
    gold = _read_gold(session, actor, release)
    chosen = "given" if split is not None else "default"
    if split is None:
        split = "holdout" if gold.has_holdout() else "all"
    _checked(k, unit, split, rule, n_bootstrap)
    if unit == "doc" and not gold.has_passages:
        raise InvalidValueError.of("msg.run.doc_needs_cases", release=gold.verified.release)
    base_cases = _score_run(session, actor, base, metas["base"], gold, k=k, unit=unit, split=split, rule=rule)[0]
    # the candidate scored on every case once: its blockers in the release's other cases block too
    whole = _score_run(session, actor, candidate, metas["candidate"], gold, k=k, unit=unit, split="all", rule=rule)[0]
    scored = {"base": base_cases, "candidate": [case for case in whole if split == "all" or case["split"] == split]}
    others = [case for case in whole if split != "all" and case["split"] != split]
    compared = run_compare.compare_runs(scored["base"], scored["candidate"], margin=float(margin), alpha=float(alpha),
                                        n_bootstrap=n_bootstrap, seed=seed, other_candidate_cases=others)
    report = {"base": base, "candidate": candidate, "base_meta": metas["base"], "candidate_meta": metas["candidate"],
              **_release_keys(session, gold), "k": k, "unit": unit, "split": split, "split_chosen": chosen,
              "retrieval_rule": rule, **compared}
    report["warnings"] = _compare_warnings(gold, report)
    return report


def gate_exit_code(decision: str) -> int:
    """The exit code of `run compare --gate` for a decision: ship 0, blocked 1, hold 3."""
    return run_compare.gate_exit_code(decision)


class ReportFingerprint(NamedTuple):
    """What a run report or comparison against a stored release depends on besides its options,
    as a hashable tuple: equal fingerprints, equal reports (the Runs page caches on it)."""

    runs: tuple[tuple[str, str, str], ...]  # (name, source SHA-256, created_at) of each run: a run never changes
    release: str
    manifest_sha256: str  # the release's manifest hash as the database recorded it
    later_releases: tuple[str, ...]  # the releases stored after it (superseded_by is among them)
    corpus: tuple[tuple[str, int, int], ...]  # (dataset, passages, their highest key): passages outside the release
    viewer: tuple[int, int, int, int] | None  # (caller key, claims still to label, sum and max of their keys), else None


def report_fingerprint(session: Session, actor: Caller, runs: Sequence[str], release: str) -> ReportFingerprint:
    """The fingerprint of `run_report` (one run) or `compare_report` (two) of `runs` against the
    stored release `release` (by name): a few indexed queries, no gold file is read (the page
    verifies the folder apart, on every run). `corpus` follows the passages of the runs'
    datasets, which tell a retrieved passage the release does not hold from an unknown id (a
    passage changed in place by `import --update` keeps its key: its new document is not seen).
    `viewer` names a caller who is still to label claims (the reports refuse them when the
    release holds one): their report is theirs, recomputed whenever they label or are assigned.
    Raises PermissionDeniedError unless `actor` may score runs; NotFoundError for an unknown run
    or release."""
    require(actor, Permission.SCORE_RUNS)
    found = [get_run(session, actor, name) for name in runs]
    stored = list(session.exec(select(GoldRelease).order_by(GoldRelease.created_at, GoldRelease.id)))
    this = next((index for index, row in enumerate(stored) if row.name == release), None)
    if this is None:
        names = ", ".join(sorted(row.name for row in stored)) or msg("msg.release.none")
        raise NotFoundError.of("msg.release.unknown", name=shortened(release, MAX_ID_CHARS), names=names)
    corpus = []
    for dataset_pk in sorted({run.dataset_pk for run in found}):
        count, highest = session.exec(select(func.count(Passage.id), func.max(Passage.id))
                                      .where(Passage.dataset_id == dataset_pk)).one()
        corpus.append((session.get(Dataset, dataset_pk).name, int(count), int(highest or 0)))
    return ReportFingerprint(tuple((run.name, run.source_sha256, run.created_at.isoformat()) for run in found), release,
                             stored[this].manifest_sha256 or "", tuple(row.name for row in stored[this + 1:]),
                             tuple(corpus), _viewer(session, actor))


def _viewer(session: Session, actor: Caller) -> tuple[int, int, int, int] | None:
    hidden = claims_still_to_label(session, actor)
    if hidden is None:
        return None
    pks = list(session.exec(hidden))
    return actor.id, len(pks), sum(pks), max(pks, default=0)


CLAIM_COLUMNS = ["dataset", "case_id", "claim_id", "claim", "gold_label", "severity", "resolution", "passage_ids"]
"""The columns of gold.parquet a case's detail shows of its claims (no labeler's name or label)."""


def case_detail(session: Session, actor: Caller, name: str, release: str | Path, case_id: str, *,
                k: int = DEFAULT_K, unit: str = "passage", rule: str = "all") -> dict[str, Any]:
    """One case of run `name` beside its gold in `release`, for the Runs page's case view.

    release, k, unit, rule: as `run_report` (the case is scored as the report scores it).
    Returns a plain JSON-ready dict:
        run, release, release_manifest_sha256, k, unit, retrieval_rule, dataset, case_id, slice,
        split, question and released_answer (the case's question and the answer its labelers
            saw, from the release's cases.jsonl; None for a release of schema 1);
        score: the case scored (run_scoring.score_case: status, failure_labels, blockers, the
            retrieval figures, behaviour and answer matches, ...);
        relevant: the case's relevant ids in the unit scored (passage or document ids);
        missed: those not in the top k;
        retrieved: the run's list, best first: {rank (1-based, the run's passage rank),
            passage_id, doc_id and version (None when unknown), unit_rank (the rank of its
            document among the documents for unit doc, else its rank), in_top_k, relevant,
            forbidden, stale, unknown (the dataset does not know it), cited (the run's answer
            cites it), in_release (the release holds it), title, text (from the case's line in
            the release, else from the dataset; None for an unknown id)};
        passages: the case's passages in the release, in its order: {passage_id, doc_id, version,
            title, text, relevant, forbidden, stale, rank (its rank in the run, None when not
            retrieved), in_top_k};
        claims: the case's released claims: {claim_id, text, gold_label, severity, resolution,
            passage_ids} (no labeler's name or label);
        behavior, expected_behavior, answer, expected_answer, cited, run_claims (the run's
            claims: {text, label, claim_id, severity}).
    Raises PermissionDeniedError unless `actor` may score runs, or when the release holds a claim
    `actor` is still to label; NotFoundError for an unknown run or release, and when the run or
    the release lacks the case; ReleaseVerifyError when the release does not match its
    manifest; InvalidValueError for a bad k, unit or rule.
    """
    require(actor, Permission.SCORE_RUNS)
    _checked(k, unit, "all", rule, 0)
    run = get_run(session, actor, name)
    meta = run_json(session, run)
    dataset = meta.get("dataset")
    gold = _read_gold(session, actor, release, keep=(dataset, case_id))
    if unit == "doc" and not gold.has_passages:
        raise InvalidValueError.of("msg.run.doc_needs_cases", release=gold.verified.release)
    case, ran = gold.cases.get((dataset, case_id)), _run_case(session, run.id, case_id)
    if case is None or ran is None:
        raise NotFoundError.of("msg.run.case_not_in_release" if case is None else "msg.run.case_not_in_run", run=name,
                               case_id=shortened(case_id, MAX_ID_CHARS), release=gold.verified.release)
    retrieved = ran["retrieved"]
    line = gold.kept or {}
    wanted = [*retrieved, *(_ids(case.metadata, "required_evidence_ids") if unit == "doc" else ())]
    corpus = _corpus(session, dataset, _released_passages(gold, dataset), wanted)
    document_of = {passage_id: doc_id for passage_id, (doc_id, _) in corpus.items() if doc_id} if unit == "doc" else None
    gold_case = _gold_case(case, _old_passages(gold, dataset), document_of)
    ranked = to_documents(retrieved, document_of) if document_of is not None else list(retrieved)
    score = run_scoring.score_case(
        gold_case, retrieved=retrieved, ranked=ranked if document_of is not None else None, behavior=ran["behavior"],
        answer=ran["answer"], cited=ran["cited"], claims=ran["claims"], k=k, rule=rule,
        n_unknown=sum(1 for passage_id in retrieved if passage_id not in corpus))
    unit_rank = {unit_id: rank for rank, unit_id in enumerate(ranked, start=1)}
    relevant = set(gold_case.relevant)

    def unit_of(passage_id: str, doc_id: str | None) -> str:
        if document_of is None:
            return passage_id
        return doc_id or UNKNOWN_PREFIX + passage_id

    released = {passage["passage_id"]: passage for passage in line.get("passages") or ()}
    texts = _passage_texts(session, dataset, [p for p in retrieved if p in corpus and p not in released])
    rows = []
    for rank, passage_id in enumerate(retrieved, start=1):
        doc_id, version = corpus.get(passage_id, (None, None))
        shown = released.get(passage_id) or texts.get(passage_id) or {}
        at = unit_rank[unit_of(passage_id, doc_id)]
        rows.append({"rank": rank, "passage_id": passage_id, "doc_id": doc_id or None, "version": version or None,
                     "unit_rank": at, "in_top_k": at <= k, "relevant": unit_of(passage_id, doc_id) in relevant,
                     "forbidden": passage_id in gold_case.forbidden, "stale": passage_id in gold_case.stale,
                     "unknown": passage_id not in corpus, "cited": passage_id in ran["cited"],
                     "in_release": (dataset, passage_id) in gold.passages,
                     "title": shown.get("title"), "text": shown.get("text")})
    fetched = {row["passage_id"]: row for row in rows}
    passages = []
    for passage in line.get("passages") or ():
        passage_id, doc_id = passage["passage_id"], passage.get("doc_id") or ""
        row = fetched.get(passage_id) or {}
        passages.append({"passage_id": passage_id, "doc_id": doc_id or None, "version": passage.get("version") or None,
                         "title": passage.get("title") or "", "text": passage.get("text") or "",
                         "relevant": unit_of(passage_id, doc_id) in relevant, "forbidden": passage_id in gold_case.forbidden,
                         "stale": passage_id in gold_case.stale, "rank": row.get("rank"), "in_top_k": bool(row.get("in_top_k"))})
    return {
        "run": name, "release": gold.verified.release, "release_manifest_sha256": gold.verified.manifest_sha256,
        "k": k, "unit": unit, "retrieval_rule": rule, "dataset": dataset, "case_id": case_id,
        "slice": case.slice, "split": case.split, "question": line.get("question"), "released_answer": line.get("answer"),
        "score": score, "relevant": list(gold_case.relevant),
        "missed": [unit_id for unit_id in gold_case.relevant if unit_rank.get(unit_id, k + 1) > k],
        "retrieved": rows, "passages": passages, "claims": _released_claims(gold, dataset, case_id),
        "behavior": ran["behavior"], "expected_behavior": gold_case.expected_behavior, "answer": ran["answer"],
        "expected_answer": gold_case.expected_answer, "cited": list(ran["cited"]), "run_claims": list(ran["claims"]),
    }


def _run_case(session: Session, run_pk: int, case_id: str) -> dict[str, Any] | None:
    """What run `run_pk` did with the case `case_id` of its dataset (services.runs.run_cases'
    shape, without dataset), or None when it has no such case."""
    query = (select(RunCase.retrieved, RunCase.behavior, RunCase.answer, RunCase.cited, RunCase.claims)
             .join(Case, Case.id == RunCase.case_pk).where(RunCase.run_pk == run_pk, Case.case_id == case_id))
    row = session.exec(query).first()
    if row is None:
        return None
    retrieved, behavior, answer, cited, claims = row
    return {"case_id": case_id, "retrieved": retrieved or [], "behavior": behavior, "answer": answer,
            "cited": cited or [], "claims": claims or []}


def _passage_texts(session: Session, dataset: str | None, passage_ids: Sequence[str]) -> dict[str, dict[str, str]]:
    """passage id -> {title, text} of the dataset's passages among `passage_ids` (the corpus)."""
    if not passage_ids or dataset is None:
        return {}
    dataset_pk = session.exec(select(Dataset.id).where(Dataset.name == dataset)).first()
    found: dict[str, dict[str, str]] = {}
    wanted = sorted(set(passage_ids))
    for start in range(0, len(wanted), LOOKUP_BATCH):
        query = (select(Passage.passage_id, Passage.title, Passage.text)
                 .where(Passage.dataset_id == dataset_pk, Passage.passage_id.in_(wanted[start:start + LOOKUP_BATCH])))
        found.update((passage_id, {"title": title, "text": text}) for passage_id, title, text in session.exec(query))
    return found


def _released_claims(gold: _RunGold, dataset: str | None, case_id: str) -> list[dict[str, Any]]:
    """The claims of one case in the (verified) release's gold.parquet, in release order."""
    import pyarrow.parquet as pq

    table = pq.read_table(gold.verified.parquet, columns=CLAIM_COLUMNS,
                          filters=[("dataset", "=", dataset or ""), ("case_id", "=", case_id)])
    return [{"claim_id": row["claim_id"], "text": row["claim"], "gold_label": row["gold_label"],
             "severity": row["severity"], "resolution": row["resolution"], "passage_ids": list(row["passage_ids"] or [])}
            for row in table.to_pylist()]


# ------------------------------------------------------------------------------ the gold


def _read_gold(session: Session, actor: Caller, release: str | Path, keep: tuple[str, str] | None = None) -> _RunGold:
    """The cases of a verified release, with the blind rule applied to its claims; with `keep`
    (dataset, case id), that case's cases.jsonl line too (question, passages with their texts)."""
    import pyarrow.parquet as pq

    verified = open_release(session, actor, release)
    table = pq.read_table(verified.parquet, columns=GOLD_COLUMNS)
    columns = {name: table.column(name).to_pylist() for name in GOLD_COLUMNS}
    refuse_blind(session, actor, zip(columns["dataset"], columns["claim_id"]), msg("msg.run.doing_report"))
    cases: dict[tuple[str, str], _ReleaseCase] = {}
    for row in zip(*(columns[name] for name in GOLD_COLUMNS)):
        record = dict(zip(GOLD_COLUMNS, row))
        key = (record["dataset"], record["case_id"])
        case = cases.get(key)
        if case is None:
            metadata = json.loads(record["case_metadata"]) if record["case_metadata"] else {}
            case = cases[key] = _ReleaseCase(key[0], key[1], record["slice"] or "", record["split"] or "",
                                             metadata if isinstance(metadata, dict) else {})
        case.claims.append(record)
    passages = read_released_passages(verified.folder, columns["dataset"], columns["case_id"])
    kept = None
    if keep and passages is not None:  # one case shown: its line whole, texts and all
        lines = read_released_cases(verified.folder, columns["dataset"], columns["case_id"])
        kept = next((line for line in lines if (line["dataset"], line.get("case_id")) == keep), None)
    return _RunGold(verified, cases, passages or {}, passages is not None or not cases, kept)


def _release_keys(session: Session, gold: _RunGold) -> dict[str, Any]:
    verified = gold.verified
    return {"release": verified.release, "release_path": str(verified.folder),
            "release_manifest_sha256": verified.manifest_sha256, "release_stored_as": verified.stored_as,
            "superseded_by": superseded_by(session, verified)}


def _old_passages(gold: _RunGold, dataset: str) -> frozenset[str]:
    """The passages of `dataset` in the release that are an old version of their document
    (highlight.old_versions over each document's passages).

    Whether a passage is old depends only on its version and the other versions of its document,
    so the rule runs over one stand-in per distinct version (its passage id the version) and its
    answer is mapped back to the passages: the same passages, without comparing every pair of a
    document's passages (a document of n passages in one version costs n, not n^2)."""
    by_doc: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for (name, passage_id), (doc_id, version) in gold.passages.items():
        if name == dataset and doc_id:
            by_doc[doc_id][version].append(passage_id)
    old: set[str] = set()
    for doc_id, versions in by_doc.items():
        if len(versions) > 1:
            stand_ins = [SimpleNamespace(passage_id=version, doc_id=doc_id, version=version) for version in versions]
            for version in old_versions(stand_ins):
                old.update(versions[version])
    return frozenset(old)


def _ids(metadata: Mapping[str, Any], key: str) -> list[str]:
    value = metadata.get(key)
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _text(metadata: Mapping[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    return value if isinstance(value, str) and value != "" else None


def _gold_case(case: _ReleaseCase, old: frozenset[str], document_of: Mapping[str, str] | None) -> run_scoring.GoldCase:
    """The scoring's view of one release case: its relevant evidence (retrieval.relevant_evidence,
    mapped to documents when `document_of` is given), forbidden passages, stale passages (`old`,
    the release's old versions, and the case's own outdated_passage_ids), expected behaviour (None
    when the case's value is not one of EXPECTED_BEHAVIORS) and expected answer."""
    relevant = relevant_evidence(_ids(case.metadata, "required_evidence_ids"), case.claims)
    if document_of is not None:
        relevant = tuple(to_documents(relevant, document_of))
    outdated = _ids(case.metadata, "outdated_passage_ids")
    expected = _text(case.metadata, "expected_behavior")
    return run_scoring.GoldCase(
        case_id=case.case_id, slice=case.slice, split=case.split, relevant=relevant,
        forbidden=frozenset(_ids(case.metadata, "forbidden_evidence_ids")), stale=old | frozenset(outdated) if outdated else old,
        expected_behavior=expected if expected in EXPECTED_BEHAVIORS else None,
        expected_answer=_text(case.metadata, "expected_answer"))


# ------------------------------------------------------------------------------ scoring


def _score_run(session: Session, actor: Caller, name: str, meta: Mapping[str, Any], gold: _RunGold, *, k: int,
               unit: str, split: str, rule: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The run's cases in the release (and the split) scored, in release order, and the counts of
    the cases left out: n_release_cases, n_missing, n_outside_release."""
    dataset = meta.get("dataset")
    mine = {case["case_id"]: case for case in run_cases(session, actor, name) if case["dataset"] == dataset}
    in_split = [case for (name_, _), case in gold.cases.items()
                if name_ == dataset and (split == "all" or case.split == split)]
    outside = sum(1 for case_id in mine if (dataset, case_id) not in gold.cases)
    ran_cases = [(case, mine[case.case_id]) for case in in_split if case.case_id in mine]
    # one pass over the retrieved ids, in C: those the release does not hold, a few (most lists
    # hold none: issuperset answers that without a Python call per id; filterfalse finds them)
    release_passages = _released_passages(gold, dataset)
    released = frozenset(release_passages)  # a set is probed faster than a dict
    not_released = [[] if released.issuperset(ran["retrieved"]) else list(filterfalse(released.__contains__, ran["retrieved"]))
                    for _, ran in ran_cases]
    outside_release = set().union(*not_released)
    if unit == "doc":  # a required passage need not be one the release holds: its document is the corpus's too
        outside_release.update(passage_id for case, _ in ran_cases for passage_id in _ids(case.metadata, "required_evidence_ids")
                      if passage_id not in released)
    corpus = _corpus(session, dataset, release_passages, outside_release)
    old = _old_passages(gold, dataset)
    document_of = {passage_id: doc_id for passage_id, (doc_id, _) in corpus.items() if doc_id} if unit == "doc" else None
    scored = []
    for (case, ran), others in zip(ran_cases, not_released):
        retrieved = ran["retrieved"]
        result = run_scoring.score_case(
            _gold_case(case, old, document_of), retrieved=retrieved,
            ranked=to_documents(retrieved, document_of) if document_of is not None else None,
            behavior=ran["behavior"], answer=ran["answer"], cited=ran["cited"], claims=ran["claims"], k=k, rule=rule,
            n_unknown=len(others) - sum(map(corpus.__contains__, others)))
        scored.append({"dataset": dataset, **result})
    counts = {"n_release_cases": len(in_split), "n_missing": len(in_split) - len(scored), "n_outside_release": outside}
    return scored, counts


def _released_passages(gold: _RunGold, dataset: str | None) -> dict[str, tuple[str, str]]:
    """passage id -> (doc_id, version) of the release's passages of `dataset`."""
    return {passage_id: value for (name, passage_id), value in gold.passages.items() if name == dataset}


def _corpus(session: Session, dataset: str | None, released: dict[str, tuple[str, str]],
            others: Iterable[str]) -> dict[str, tuple[str, str]]:
    """passage id -> (doc_id, version) of the passages the dataset knows among the release's and
    `others`: `released` (the release's passages of the dataset, completed here and returned), and
    those of `others` (retrieved ids the release does not hold, and for `--unit doc` the required
    ones) the database has (the corpus; only their document is used)."""
    missing = sorted(set(others) - released.keys())
    if not missing or dataset is None:
        return released
    dataset_pk = session.exec(select(Dataset.id).where(Dataset.name == dataset)).first()
    for start in range(0, len(missing), LOOKUP_BATCH):
        query = (select(Passage.passage_id, Passage.doc_id, Passage.version)
                 .where(Passage.dataset_id == dataset_pk, Passage.passage_id.in_(missing[start:start + LOOKUP_BATCH])))
        released.update((passage_id, (doc_id or "", version or "")) for passage_id, doc_id, version in session.exec(query).all())
    return released


# ------------------------------------------------------------------------------ warnings


def _warnings(gold: _RunGold, meta: Mapping[str, Any], report: Mapping[str, Any]) -> list[str]:
    """What a reader of the figures must know (English texts of msg.run.warn_*)."""
    warnings = []
    if gold.verified.stored_as is None:
        warnings.append(english("msg.judge.warn_unstored", folder=str(gold.verified.folder)))
    if meta.get("dataset") not in gold.datasets():
        warnings.append(english("msg.run.warn_no_overlap", run=meta.get("name"), dataset=meta.get("dataset") or "-",
                                datasets=", ".join(gold.datasets()) or "-"))
    elif report["n_missing"]:
        warnings.append(english("msg.run.warn_missing", run=meta.get("name"), n=report["n_missing"],
                                of=report["n_release_cases"]))
    if report["n_outside_release"]:
        warnings.append(english("msg.run.warn_outside", run=meta.get("name"), n=report["n_outside_release"]))
    return warnings


def _compare_warnings(gold: _RunGold, report: Mapping[str, Any]) -> list[str]:
    warnings = []
    if gold.verified.stored_as is None:
        warnings.append(english("msg.judge.warn_unstored", folder=str(gold.verified.folder)))
    if report["n_only_base"] or report["n_only_candidate"]:
        warnings.append(english("msg.run.warn_not_common", base=report["n_only_base"], candidate=report["n_only_candidate"]))
    return warnings


__all__ = ["DEFAULT_K", "REPORT_SPLITS", "RETRIEVAL_RULES", "UNITS", "ReportFingerprint", "case_detail", "compare_report",
           "gate_exit_code", "report_fingerprint", "run_report"]
