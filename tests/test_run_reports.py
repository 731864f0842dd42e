"""Run reports and run comparisons on SQLite and PostgreSQL (services/run_reports.py): a small world
of cases with required, forbidden and outdated evidence, expected behaviours and answers, its
agreed and adjudicated gold released, runs imported through services.runs.import_run, and the
reports' figures checked case by case against values computed by hand. The pure scoring
(run_scoring.py, run_compare.py) has its own table tests; these check what the service feeds it."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotator.db import session_scope
from annotator.errors import InvalidValueError, NotFoundError, PermissionDeniedError, ReleaseVerifyError
from annotator.models import Case, Claim, ClaimPassage, Label, Passage, User
from annotator.release import read_released_cases, read_released_passages, release_layout
from annotator.services.access import OPERATOR
from annotator.services.labeling import assign_cases
from annotator.services.releases import create_release
from annotator.services.run_reports import compare_report, gate_exit_code, run_report
from annotator.services.runs import import_run
from tests.test_release_service import Seeder
from tests.test_service_types import not_plain

N_BOOT = 200

# The world: dataset pilot, its passages (doc_id, version) and cases.
#   passage  doc  version   shown with
#   p1       A    2026-04   q1-a, q4-a
#   p2       A    2026-04   q1-a, q2-b, q4-a
#   p3       B    2025-01   q2-b            an old version of document B (p4 is newer)
#   p4       B    2026-04   q1-b
#   p5       C    2026-04   q2-a
#   p6       D    2026-04   q2-c            forbidden to q3 (another department's)
#   p9       A    2026-04   q5-a            q5 is unlabeled, so p9 is outside the release
# A label cites the first passage its claim is shown with (Seeder).
#   case  slice       split    metadata                                                 claims (gold)
#   q1    normal      dev      required [p1, p4], expected answer_with_citation,        q1-a support, q1-b support
#                              expected_answer "Refunds within 30 days."
#   q2    paraphrase  dev      none                                                     q2-a support (one passage: p5),
#                                                                                       q2-b contradict (adjudicated; cites p2),
#                                                                                       q2-c insufficient (p6: not evidence)
#   q3    normal      holdout  required [p4], forbidden [p6], outdated [p1],            q3-a support (shown with p4, p1)
#                              expected abstain
#   q4    normal      dev      expected refuse                                          q4-a insufficient (p1, p2: no evidence)
#   q5    normal      dev      -                                                        q5-a unlabeled (not released)
PASSAGES = {"p1": ("A", "2026-04"), "p2": ("A", "2026-04"), "p3": ("B", "2025-01"), "p4": ("B", "2026-04"),
            "p5": ("C", "2026-04"), "p6": ("D", "2026-04"), "p9": ("A", "2026-04")}
METADATA = {
    "q1": {"required_evidence_ids": ["p1", "p4"], "expected_behavior": "answer_with_citation",
           "expected_answer": "Refunds within 30 days."},
    "q3": {"required_evidence_ids": ["p4"], "forbidden_evidence_ids": ["p6"], "outdated_passage_ids": ["p1"],
           "expected_behavior": "abstain"},
    "q4": {"expected_behavior": "refuse"},
}
AGREED = {"alice": "support", "bob": "support"}


def seed_world(session: Session, dataset: str = "pilot") -> Seeder:
    seed = Seeder(session, dataset)
    seed.claim("q1", "q1-a", passages=("p1", "p2"), labels=AGREED)
    seed.claim("q1", "q1-b", passages=("p4",), labels=AGREED)
    seed.claim("q2", "q2-a", slice_="paraphrase", passages=("p5",), labels=AGREED)
    seed.claim("q2", "q2-b", slice_="paraphrase", passages=("p2", "p3"), labels={"alice": "contradict", "bob": "support"},
               adjudication=("carol", "contradict"))
    seed.claim("q2", "q2-c", slice_="paraphrase", passages=("p6",), labels={"alice": "insufficient", "bob": "insufficient"})
    seed.claim("q3", "q3-a", split="holdout", passages=("p4", "p1"), labels=AGREED)
    seed.claim("q4", "q4-a", passages=("p1", "p2"), labels={"alice": "insufficient", "bob": "insufficient"})
    seed.claim("q5", "q5-a", passages=("p9",))
    for passage_id, (doc_id, version) in PASSAGES.items():
        seed.passages[passage_id].doc_id, seed.passages[passage_id].version = doc_id, version
    for case_id, metadata in METADATA.items():
        seed.cases[case_id].meta = metadata
    session.flush()
    return seed


def line(case_id: str, retrieved: list[str], behavior: str = "answer", **more: object) -> dict:
    return {"case_id": case_id, "retrieved": retrieved, "behavior": behavior, **more}


def supported(*texts: str) -> list[dict]:
    return [{"text": text, "label": "support"} for text in texts]


BASE = [
    # q1: both relevant passages in the top 5 (ranks 2 and 5), p3 an old version, web-1 unknown; the answer
    # differs from the expected one in white space only: passed, labeled stale_evidence
    line("q1", ["p2", "p1", "p3", "web-1", "p4"], answer="  Refunds  within\n30 days. ", cited=["p1"],
         claims=supported("Refunds take 30 days.", "They are paid to the card.")),
    # q2: one of its two relevant passages (p5, rank 2); a claim contradicted with severity legal
    line("q2", ["p9", "p5", "p6"], answer="No.", claims=[
        {"text": "It is allowed.", "label": "support"},
        {"text": "Anyone may do it.", "label": "contradict", "severity": "legal", "claim_id": "x2"}]),
    # q3 (holdout): the forbidden p6, the outdated p1; an answer where the gold expects abstain
    line("q3", ["p6", "p4", "p1"], answer="Yes.", claims=[{"text": "Probably.", "label": "insufficient", "claim_id": "x3"}]),
    # q4: no relevant evidence, refused as expected
    line("q4", [], "refuse"),
    # q5: a case the release does not hold
    line("q5", ["p9"], answer="Maybe."),
]
"""The baseline run: one blocker of each kind, a stale passage, an unknown id, a case outside the release."""

GOOD = [
    line("q1", ["p1", "p4"], answer="Refunds within 30 days.", cited=["p1"], claims=supported("Refunds take 30 days.")),
    line("q2", ["p5", "p2"], answer="No.", claims=supported("It is not allowed.")),
    line("q3", ["p4"], "abstain"),
    line("q4", [], "refuse"),
]
"""Every case passed, no blocker."""

MISSES = [
    line("q1", ["p9"], answer="Refunds within 30 days.", cited=["p9"], claims=supported("Refunds take 30 days.")),
    line("q2", ["web-1"], answer="No.", claims=supported("It is not allowed.")),
    line("q3", ["p4"], "abstain"),
    line("q4", [], "refuse"),
]
"""q1 and q2 miss their evidence (retrieval failures, no blocker); q3 and q4 as GOOD."""


def run_file(tmp_path: Path, lines: list[dict], name: str) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in lines), encoding="utf-8")
    return path


def imported(engine, tmp_path: Path, name: str, lines: list[dict], **options: object) -> None:  # noqa: ANN001
    with session_scope(engine) as session:
        import_run(session, OPERATOR, run_file(tmp_path, lines, name), run=name, **options)


@pytest.fixture
def world(any_engine, tmp_path):
    """The world above with release v1 (its final claims) and the runs base, good and misses."""
    with session_scope(any_engine) as session:
        seed_world(session)
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    for name, lines in (("base", BASE), ("good", GOOD), ("misses", MISSES)):
        imported(any_engine, tmp_path, name, lines)
    return any_engine


def report(engine, name: str = "base", release: str | Path = "v1", **options) -> dict:  # noqa: ANN001, ANN003
    options.setdefault("n_bootstrap", N_BOOT)
    with session_scope(engine) as session:
        data = run_report(session, OPERATOR, name, release, **options)
    json.dumps(data, allow_nan=False)
    return data


def compare(engine, base: str, candidate: str, release: str | Path = "v1", **options) -> dict:  # noqa: ANN001, ANN003
    options.setdefault("n_bootstrap", N_BOOT)
    with session_scope(engine) as session:
        data = compare_report(session, OPERATOR, base, candidate, release, **options)
    json.dumps(data, allow_nan=False)
    return data


def cases_of(data: dict) -> dict[str, dict]:
    return {case["case_id"]: case for case in data["cases"]}


REPORT_KEYS = ("run", "release", "release_manifest_sha256", "k", "unit", "cases", "n_cases", "n_scored", "n_no_evidence",
               "mean_recall_at_k", "mean_precision_at_k", "hit_rate_at_k", "mrr", "mean_ndcg_at_k", "claim_support_rate",
               "behavior_match_rate", "status_counts", "blockers", "by_slice", "by_split")
"""The top-level keys issue 17 names for a run report (a contract: extended, never renamed)."""
GROUP_KEYS = ("n_cases", "n_scored", "n_no_evidence", "mean_recall_at_k", "mean_precision_at_k", "hit_rate_at_k", "mrr",
              "mean_ndcg_at_k", "claim_support_rate", "behavior_match_rate", "status_counts", "blockers", "ci95")
"""The figures of the report, of each slice and of each split ("of the same shape")."""
CASE_KEYS = ("case_id", "slice", "split", "recall_at_k", "precision_at_k", "hit_at_k", "reciprocal_rank", "ndcg_at_k",
             "forbidden_retrieved", "stale_retrieved", "behavior_match", "answer_match", "claim_support_rate",
             "retrieval_ok", "generation_ok", "status", "failure_labels")
"""The per-case keys the issue names."""
COMPARE_KEYS = ("fixed", "regressed", "fix_rate", "regression_rate", "by_slice", "pass_rate_difference", "ci95",
                "mcnemar_p", "metric_deltas", "blockers", "decision", "reasons", "split")
"""The keys the issue names for a comparison."""


# ------------------------------------------------------------------------------- the report


def test_the_report_holds_every_key_the_issue_names_overall_per_slice_per_split_and_per_case(world):
    data = report(world)
    assert set(REPORT_KEYS) <= set(data)
    for group in (data, *data["by_slice"].values(), *data["by_split"].values()):
        assert set(GROUP_KEYS) <= set(group)
        assert set(group["ci95"]) >= {"mean_recall_at_k", "mean_precision_at_k", "hit_rate_at_k", "mrr", "mean_ndcg_at_k",
                                      "claim_support_rate", "behavior_match_rate"}
    assert set(data["by_slice"]) == {"normal", "paraphrase"} and set(data["by_split"]) == {"dev", "holdout"}
    for case in data["cases"]:
        assert set(CASE_KEYS) <= set(case)
    assert (data["run"], data["release"], data["k"], data["unit"], data["split"], data["retrieval_rule"]) == (
        "base", "v1", 5, "passage", "all", "all")
    assert len(data["release_manifest_sha256"]) == 64 and data["release_stored_as"] == "v1"
    assert not_plain(data) == []


def test_each_case_is_scored_as_computed_by_hand(world):
    data = report(world)
    assert [case["case_id"] for case in data["cases"]] == ["q1", "q2", "q3", "q4"]  # release order; q5 is not in it
    q1, q2, q3, q4 = (cases_of(data)[case_id] for case_id in ("q1", "q2", "q3", "q4"))
    # q1: relevant = its required_evidence_ids p1, p4, at ranks 2 and 5 of p2, p1, p3, web-1, p4
    assert (q1["n_relevant"], q1["recall_at_k"], q1["precision_at_k"], q1["hit_at_k"], q1["reciprocal_rank"]) == (
        2, 1.0, 2 / 5, 1.0, 1 / 2)
    assert q1["ndcg_at_k"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6)) / (1 + 1 / math.log2(3)))
    assert q1["stale_retrieved"] == ["p3"]  # an old version of document B, whose p4 (2026-04) the release holds
    assert q1["forbidden_retrieved"] == [] and q1["n_unknown_retrieved"] == 1  # web-1
    assert (q1["behavior_match"], q1["answer_match"], q1["claim_support_rate"]) == (True, True, 1.0)
    assert (q1["retrieval_ok"], q1["generation_ok"], q1["status"], q1["failure_labels"]) == (
        True, True, "passed", ["stale_evidence"])
    # q2: no required evidence: p5 (q2-a is shown with it alone) and p2 (cited by the labels agreeing with q2-b's
    # adjudicated contradict); p6 (q2-c, insufficient) is not evidence; p5 at rank 2 of p9, p5, p6
    assert (q2["n_relevant"], q2["recall_at_k"], q2["precision_at_k"], q2["reciprocal_rank"]) == (2, 0.5, 0.2, 0.5)
    assert q2["ndcg_at_k"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert (q2["behavior_match"], q2["answer_match"], q2["claim_support_rate"]) == (None, None, 0.5)
    assert (q2["retrieval_ok"], q2["status"], q2["failure_labels"]) == (False, "both", ["partial_evidence", "unsupported_claim"])
    # q3: p4 at rank 2; the forbidden p6 and the outdated p1 (its outdated_passage_ids) fetched; answered, not abstained
    assert (q3["n_relevant"], q3["recall_at_k"], q3["reciprocal_rank"]) == (1, 1.0, 0.5)
    assert (q3["forbidden_retrieved"], q3["stale_retrieved"]) == (["p6"], ["p1"])
    assert (q3["behavior_match"], q3["retrieval_ok"], q3["generation_ok"], q3["status"]) == (False, True, False, "both")
    assert q3["failure_labels"] == ["stale_evidence", "unauthorized_evidence", "unsupported_claim", "behavior_mismatch"]
    # q4: no relevant evidence (its claim is insufficient): no retrieval figure, scored on behaviour
    assert [q4[m] for m in ("recall_at_k", "precision_at_k", "hit_at_k", "reciprocal_rank", "ndcg_at_k")] == [None] * 5
    assert (q4["behavior_match"], q4["retrieval_ok"], q4["status"]) == (True, None, "passed")


def test_the_aggregates_are_the_means_of_the_scored_cases(world):
    data = report(world)
    assert (data["n_cases"], data["n_scored"], data["n_no_evidence"]) == (4, 3, 1)
    assert data["mean_recall_at_k"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert data["mean_precision_at_k"] == pytest.approx((0.4 + 0.2 + 0.2) / 3)
    assert data["mrr"] == pytest.approx(0.5) and data["hit_rate_at_k"] == 1.0
    assert data["claim_support_rate"] == pytest.approx(3 / 5)  # 2 of q1, 1 of q2, 0 of q3
    assert data["behavior_match_rate"] == pytest.approx(2 / 3)  # q1, q3, q4 expect one; q3 misses it
    assert data["pass_rate"] == pytest.approx(2 / 4)
    assert data["status_counts"] == {"passed": 2, "retrieval_failure": 0, "generation_failure": 0, "both": 2}
    assert data["n_unknown_retrieved"] == 1
    low, high = data["ci95"]["mean_recall_at_k"]
    assert low <= data["mean_recall_at_k"] <= high
    assert data["by_split"]["holdout"]["n_cases"] == 1 and data["by_slice"]["paraphrase"]["mean_recall_at_k"] == 0.5


def test_the_blockers_of_all_three_kinds_name_their_case_and_reason(world):
    blockers = report(world)["blockers"]
    assert blockers == [
        {"case_id": "q2", "reason": "severe_contradiction", "claim_id": "x2", "text": "Anyone may do it.", "severity": "legal"},
        {"case_id": "q3", "reason": "forbidden_evidence", "passage_ids": ["p6"]},
        {"case_id": "q3", "reason": "answered_when_expected", "expected": "abstain",
         "claims": [{"claim_id": "x3", "text": "Probably.", "label": "insufficient"}]},
    ]
    assert report(world, split="dev")["blockers"] == blockers[:1]
    assert report(world, "good")["blockers"] == []


def test_unit_doc_counts_a_document_once_at_its_best_rank_and_maps_passages_outside_the_release_by_the_database(world):
    data = report(world, unit="doc")
    assert data["unit"] == "doc"
    q1, q2, q3 = (cases_of(data)[case_id] for case_id in ("q1", "q2", "q3"))
    # q1: p2, p1, p3, web-1, p4 are documents A, B, (web-1): A and B relevant, A at rank 1 (p2 and p1 count once)
    assert (q1["n_relevant"], q1["recall_at_k"], q1["precision_at_k"], q1["reciprocal_rank"], q1["ndcg_at_k"]) == (
        2, 1.0, 2 / 5, 1.0, 1.0)
    assert q1["stale_retrieved"] == ["p3"]  # forbidden and stale passages are still passages
    # q2: p9 (outside the release: its document A from the database), p5 (C), p6 (D); relevant C (p5) and A (p2)
    assert (q2["recall_at_k"], q2["reciprocal_rank"], q2["retrieval_ok"]) == (1.0, 1.0, True)
    assert "partial_evidence" not in q2["failure_labels"]
    # q3: p6, p4, p1 are D, B, A; relevant B (p4) at rank 2
    assert (q3["recall_at_k"], q3["reciprocal_rank"], q3["forbidden_retrieved"]) == (1.0, 0.5, ["p6"])


def test_a_required_passage_outside_the_release_is_mapped_to_its_document_by_the_database(world, tmp_path):
    with session_scope(world) as session:
        q6 = Case(dataset_id=session.exec(select(Case.dataset_id)).first(), case_id="q6", position=9, slice="normal",
                  split="dev", meta={"required_evidence_ids": ["p9"]})
        session.add(q6)
        session.flush()
        claim = Claim(dataset_id=q6.dataset_id, case_pk=q6.id, claim_id="q6-a", text="claim q6-a")
        session.add(claim)
        session.flush()
        p5 = session.exec(select(Passage).where(Passage.passage_id == "p5")).one()
        session.add(ClaimPassage(claim_pk=claim.id, passage_pk=p5.id, position=0))
        for name in ("alice", "bob"):
            labeler = session.exec(select(User).where(User.name == name)).one()
            session.add(Label(claim_pk=claim.id, labeler_pk=labeler.id, value="support", passage_ids=["p5"],
                              guideline_version="g1"))
    with session_scope(world) as session:
        create_release(session, OPERATOR, "v2", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    imported(world, tmp_path, "doc-a", [line("q6", ["p2"], answer="Yes.", claims=supported("Yes."))])
    by_passage = cases_of(report(world, "doc-a", "v2"))["q6"]
    assert (by_passage["n_relevant"], by_passage["recall_at_k"]) == (1, 0.0)  # p9, not p5: required evidence overrides
    by_doc = cases_of(report(world, "doc-a", "v2", unit="doc"))["q6"]
    assert (by_doc["recall_at_k"], by_doc["reciprocal_rank"], by_doc["status"]) == (1.0, 1.0, "passed")  # p2 and p9 are A


def test_k_and_the_retrieval_rule_decide_when_retrieval_is_ok(world):
    at_two = cases_of(report(world, k=2))
    assert (at_two["q1"]["recall_at_k"], at_two["q1"]["precision_at_k"], at_two["q1"]["retrieval_ok"]) == (0.5, 0.5, False)
    assert at_two["q1"]["status"] == "retrieval_failure" and "partial_evidence" in at_two["q1"]["failure_labels"]
    assert at_two["q1"]["reciprocal_rank"] == 0.5  # the first relevant rank over the whole list, whatever k
    any_rule = report(world, k=2, rule="any")
    assert any_rule["retrieval_rule"] == "any"
    q1 = cases_of(any_rule)["q1"]
    assert (q1["retrieval_ok"], q1["status"]) == (True, "passed") and "partial_evidence" in q1["failure_labels"]


def test_a_split_scores_its_cases_only(world):
    holdout = report(world, split="holdout")
    assert [case["case_id"] for case in holdout["cases"]] == ["q3"] and holdout["split"] == "holdout"
    assert (holdout["n_cases"], holdout["n_release_cases"], holdout["n_missing"]) == (1, 1, 0)
    assert set(holdout["by_split"]) == {"holdout"}
    dev = report(world, split="dev")
    assert [case["case_id"] for case in dev["cases"]] == ["q1", "q2", "q4"] and dev["n_release_cases"] == 3
    assert dev["mean_recall_at_k"] == pytest.approx(0.75)


def test_missing_cases_and_cases_outside_the_release_are_counted_and_warned_of(world, tmp_path):
    base = report(world)
    assert (base["n_release_cases"], base["n_missing"], base["n_outside_release"]) == (4, 0, 1)  # q5
    assert base["warnings"] == ["run base has 1 cases the release does not hold: they are not scored"]
    imported(world, tmp_path, "two", GOOD[:2])
    two = report(world, "two")
    assert (two["n_cases"], two["n_release_cases"], two["n_missing"], two["n_outside_release"]) == (2, 4, 2, 0)
    assert two["warnings"] == [("run two has 2 of the 4 cases of the release in this split missing: the figures "
                                "cover the cases it has")]
    assert report(world, "two", split="holdout")["n_missing"] == 1


def test_a_run_of_another_dataset_is_warned_of_and_its_figures_say_why_they_are_none(world, tmp_path):
    with session_scope(world) as session:
        Seeder(session, "other").claim("z1", "z1-a")
    imported(world, tmp_path, "elsewhere", [line("z1", ["p1"])])
    data = report(world, "elsewhere")
    assert data["n_cases"] == 0 and data["n_outside_release"] == 1 and data["mean_recall_at_k"] is None
    assert data["undefined"]["mean_recall_at_k"] == "there are no cases (0/0)"
    assert any("run elsewhere (dataset other) has no case of this release (datasets pilot)" in w for w in data["warnings"])


def test_a_release_folder_gives_the_stored_releases_report_and_a_copy_is_scored_with_a_warning(world, tmp_path):
    by_name, by_folder = report(world), report(world, release=tmp_path / "releases" / "v1")
    assert by_folder["release"] == str(tmp_path / "releases" / "v1") and by_folder["release_stored_as"] == "v1"
    for key in ("cases", "blockers", "mean_recall_at_k", "ci95", "by_slice", "release_manifest_sha256"):
        assert by_name[key] == by_folder[key]
    as_text = report(world, release=str(tmp_path / "releases" / "v1"))  # a str naming no stored release: a folder
    assert as_text["cases"] == by_name["cases"]
    copy = tmp_path / "copy of v1"
    shutil.copytree(tmp_path / "releases" / "v1", copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["creator"] = "someone else"
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    copied = report(world, release=copy)
    assert copied["release_stored_as"] is None and copied["cases"] == by_name["cases"]
    assert any("is not a release this database holds" in w for w in copied["warnings"])


def test_a_tampered_release_is_refused_by_name_and_as_a_folder(world, tmp_path):
    parquet = release_layout(tmp_path / "releases" / "v1").parquet
    parquet.write_bytes(parquet.read_bytes() + b"\0")
    for release in ("v1", tmp_path / "releases" / "v1"):
        with pytest.raises(ReleaseVerifyError, match="gold.parquet"):
            report(world, release=release)
        with pytest.raises(ReleaseVerifyError, match="gold.parquet"):
            compare(world, "base", "good", release=release)


def _gold_keys(folder: Path) -> tuple[list[str], list[str]]:
    import pyarrow.parquet as pq

    table = pq.read_table(release_layout(folder).parquet, columns=["dataset", "case_id"])
    return table.column("dataset").to_pylist(), table.column("case_id").to_pylist()


def test_the_passages_reader_gives_what_the_whole_lines_hold_and_refuses_a_broken_or_misplaced_line(world, tmp_path):
    folder = tmp_path / "releases" / "v1"
    datasets, case_ids = _gold_keys(folder)
    lines = read_released_cases(folder, datasets, case_ids)
    expected = {(line["dataset"], p["passage_id"]): (p.get("doc_id") or "", p.get("version") or "")
                for line in lines for p in line["passages"]}
    assert len(expected) >= 5 and read_released_passages(folder, datasets, case_ids) == expected
    assert ("pilot", "p3") in expected and expected[("pilot", "p3")][1] == "2025-01"
    cases = release_layout(folder).cases
    text = cases.read_text(encoding="utf-8").splitlines(keepends=True)
    for broken, error in ((['{"case_id": "q1", "passages": [{"doc_id": "A"}]}\n'] + text[1:], "line 1: unreadable"),
                          (text[:1] + ["[1, 2]\n"] + text[2:], "line 2: unreadable"),
                          (text[:1] + text[2:], "does not follow the claims"),
                          (text[:1] + text[1:2] * 2 + text[2:], "does not follow the claims")):
        cases.write_text("".join(broken), encoding="utf-8")
        with pytest.raises(ReleaseVerifyError, match=error):
            read_released_passages(folder, datasets, case_ids)
    cases.unlink()
    assert read_released_passages(folder, datasets, case_ids) is None and read_released_cases(folder, datasets, case_ids) == []


def test_a_stale_passage_is_an_old_version_in_the_release_or_one_the_case_names(world):
    cases = cases_of(report(world))
    assert cases["q1"]["stale_retrieved"] == ["p3"]  # doc B 2025-01, beside p4 (2026-04) in the release
    assert cases["q3"]["stale_retrieved"] == ["p1"]  # q3's outdated_passage_ids; p1 is no old version
    assert cases["q2"]["stale_retrieved"] == []  # p9 is outside the release, p5 and p6 current
    assert "stale_evidence" in cases["q1"]["failure_labels"] and cases["q1"]["status"] == "passed"  # a label only


def test_a_superseded_release_says_so(world, tmp_path):
    with session_scope(world) as session:
        create_release(session, OPERATOR, "v2", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    assert report(world)["superseded_by"] == ["v2"] and report(world, release="v2")["superseded_by"] == []
    assert compare(world, "base", "good")["superseded_by"] == ["v2"]


# ------------------------------------------------------------------------------- refusals


def test_an_unknown_run_or_release_is_named(world, tmp_path):
    with pytest.raises(NotFoundError, match="no run named 'nope'.*base"):
        report(world, "nope")
    with pytest.raises(NotFoundError, match="no release named 'v9'"):
        report(world, release="v9")
    with pytest.raises(NotFoundError, match="holds no manifest.json"):
        report(world, release=tmp_path)
    with pytest.raises(NotFoundError, match="no run named 'nope'"):
        compare(world, "base", "nope")
    with pytest.raises(NotFoundError, match="no release named 'v9'"):
        compare(world, "base", "good", release="v9")


@pytest.mark.parametrize("options, words", [
    ({"k": 0}, "k 0: give the rank cut"),
    ({"k": -3}, "k -3"),
    ({"k": True}, "k True"),
    ({"k": 2.5}, "k 2.5"),
    ({"unit": "page"}, "unit 'page': score retrieval by one of passage, doc"),
    ({"split": "test"}, "split 'test': choose one of all, dev, holdout"),
    ({"rule": "most"}, "retrieval rule 'most': choose one of all, any"),
    ({"n_bootstrap": 5}, "use 0 bootstrap resamples (no intervals) or at least 100"),
    ({"n_bootstrap": -1}, "use 0 bootstrap resamples"),
])
def test_a_bad_k_unit_split_rule_or_bootstrap_is_refused_in_words(world, options, words):
    with pytest.raises(InvalidValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        report(world, **options)
    with pytest.raises(InvalidValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        compare(world, "base", "good", **options)


@pytest.mark.parametrize("options, words", [
    ({"margin": -0.1}, "margin -0.1: give the pass-rate loss"),
    ({"margin": 1.0}, "margin 1.0"),
    ({"margin": float("nan")}, "margin nan"),
    ({"margin": float("inf")}, "margin inf"),
    ({"alpha": 0.0}, "alpha 0.0: give the level"),
    ({"alpha": 1.0}, "alpha 1.0"),
    ({"alpha": float("nan")}, "alpha nan"),
])
def test_a_bad_margin_or_alpha_is_refused_in_words(world, options, words):
    with pytest.raises(InvalidValueError, match=words):
        compare(world, "base", "good", **options)


def test_the_same_run_twice_is_refused(world):
    with pytest.raises(InvalidValueError, match="run 'base' is given as both the baseline and the candidate"):
        compare(world, "base", "base")


def test_only_an_admin_may_score_or_compare_runs(world):
    with Session(world) as session:
        people = [session.exec(select(User).where(User.name == name)).one() for name in ("alice", "carol")]
    for person in people:
        with session_scope(world) as session:
            with pytest.raises(PermissionDeniedError, match="only an admin"):
                run_report(session, person, "base", "v1", n_bootstrap=0)
            with pytest.raises(PermissionDeniedError, match="only an admin"):
                compare_report(session, person, "base", "good", "v1", n_bootstrap=0)
            with pytest.raises(PermissionDeniedError, match="only an admin"):
                run_report(session, None, "base", "v1", n_bootstrap=0)


def test_an_admin_still_to_label_a_released_claim_is_refused_the_report_and_the_comparison(world, tmp_path):
    with session_scope(world) as session:
        session.add_all([User(name="root", roles="admin,labeler"), User(name="chief", roles="admin,labeler")])
        session.flush()
        cases = {case.case_id: case.id for case in session.exec(select(Case))}
        assign_cases(session, OPERATOR, [cases["q1"]], ["root"])
        assign_cases(session, OPERATOR, [cases["q5"]], ["chief"])  # q5 is outside the release
    for release in ("v1", tmp_path / "releases" / "v1"):
        with session_scope(world) as session:
            root, chief = (session.exec(select(User).where(User.name == name)).one() for name in ("root", "chief"))
            with pytest.raises(PermissionDeniedError, match="you cannot score a run against this release: it holds "
                                                            "claims you are assigned to label"):
                run_report(session, root, "base", release, n_bootstrap=0)
            with pytest.raises(PermissionDeniedError, match="assigned to label"):
                compare_report(session, root, "base", "good", release, n_bootstrap=0)
            assert run_report(session, chief, "base", release, n_bootstrap=0)["n_cases"] == 4


# ------------------------------------------------------------------------------- compare


def test_the_comparison_holds_every_key_the_issue_names_in_plain_python_types(world):
    data = compare(world, "base", "good", split="all")
    assert set(COMPARE_KEYS) <= set(data)
    assert (data["base"], data["candidate"], data["release"], data["k"], data["unit"]) == ("base", "good", "v1", 5, "passage")
    assert set(data["metric_deltas"]) >= {"mean_recall_at_k", "mrr", "pass_rate", "claim_support_rate"}
    for figures in data["by_slice"].values():
        assert {"n", "fixed", "regressed", "fix_rate", "regression_rate", "regression_p", "regression_p_holm",
                "regresses"} <= set(figures)
    assert not_plain(data) == []
    assert type(data["mcnemar_p"]) is float and type(data["n_common"]) is int


def test_a_candidate_that_fixes_cases_and_regresses_none_ships(world):
    data = compare(world, "misses", "good", split="all")
    assert (data["decision"], data["fixed"], data["regressed"]) == ("ship", ["q1", "q2"], [])
    assert (data["fix_rate"], data["regression_rate"]) == (1.0, 0.0)
    assert (data["pass_rate_base"], data["pass_rate_candidate"], data["pass_rate_difference"]) == (0.5, 1.0, 0.5)
    assert data["ci95"]["pass_rate_difference"][0] >= 0 and data["blockers"] == []
    assert data["mcnemar_p"] == pytest.approx(0.5)  # 2 discordant cases, both one way: 2 * (1/2)^2
    assert any("lower bound is not below 0" in reason for reason in data["reasons"])
    assert gate_exit_code(data["decision"]) == 0


def test_a_candidate_that_regresses_cases_without_a_blocker_holds(world):
    data = compare(world, "good", "misses", split="all")
    assert (data["decision"], data["fixed"], data["regressed"]) == ("hold", [], ["q1", "q2"])
    assert data["ci95"]["pass_rate_difference"][0] < 0 and data["blockers"] == []
    assert any("lower bound is below 0" in reason for reason in data["reasons"])
    assert data["by_slice"]["normal"]["regressed"] == ["q1"] and data["by_slice"]["paraphrase"]["regressed"] == ["q2"]
    assert gate_exit_code(data["decision"]) == 3
    wide = compare(world, "good", "misses", split="all", margin=0.9)  # a resample of q1 and q2 alone loses them both
    assert wide["decision"] == "hold" and wide["margin"] == 0.9
    assert any("[-1.000, 0.000]: its lower bound is below -0.900" in reason for reason in wide["reasons"])


def test_a_candidate_with_a_blocker_is_blocked_whatever_its_pass_rate(world):
    data = compare(world, "good", "base", split="all")
    assert data["decision"] == "blocked" and gate_exit_code("blocked") == 1
    assert [blocker["reason"] for blocker in data["blockers"]] == [
        "severe_contradiction", "forbidden_evidence", "answered_when_expected"]
    assert data["reasons"][0].startswith("3 blockers: case q2: claim x2 is contradicted, severity legal; "
                                         "case q3 retrieved forbidden passage p6")
    assert data["regressed"] == ["q2", "q3"] and data["n_only_candidate"] == 0  # q5 is outside the release


def test_the_decision_uses_the_holdout_by_default_and_all_cases_when_the_release_has_none(world, tmp_path):
    chosen = compare(world, "misses", "good")
    assert (chosen["split"], chosen["split_chosen"], chosen["n_common"]) == ("holdout", "default", 1)  # q3
    given = compare(world, "misses", "good", split="dev")
    assert (given["split"], given["split_chosen"], given["n_common"]) == ("dev", "given", 3)
    with session_scope(world) as session:
        seed = Seeder(session, "devonly")
        for case_id in ("d1", "d2"):
            seed.claim(case_id, f"{case_id}-a", passages=(f"{case_id}-p",), labels=AGREED)
    with session_scope(world) as session:
        create_release(session, OPERATOR, "dev-only", dataset="devonly", only_final=True, out_dir=tmp_path / "releases",
                       n_bootstrap=0)
    imported(world, tmp_path, "dev-base", [line("d1", ["x"]), line("d2", ["d2-p"])], dataset="devonly")
    imported(world, tmp_path, "dev-candidate", [line("d1", ["d1-p"]), line("d2", ["d2-p"])], dataset="devonly")
    data = compare(world, "dev-base", "dev-candidate", release="dev-only")
    assert (data["split"], data["split_chosen"], data["n_common"], data["fixed"]) == ("all", "default", 2, ["d1"])


def test_cases_only_one_run_has_are_counted_not_compared(world, tmp_path):
    imported(world, tmp_path, "two", GOOD[:2])
    data = compare(world, "misses", "two", split="all")
    assert (data["n_common"], data["n_only_base"], data["n_only_candidate"]) == (2, 2, 0)
    assert data["fixed"] == ["q1", "q2"]
    assert any("2 cases of the baseline and 0 of the candidate are not in both runs" in w for w in data["warnings"])


def test_the_demo_is_blocked_on_its_holdout_and_lists_its_fixed_and_regressed_cases_on_all(any_engine, tmp_path):
    from annotator.services.demo import DEMO_RELEASE, DEMO_RUNS, seed_demo

    with session_scope(any_engine) as session:
        seed_demo(session, release_dir=tmp_path)
    (base, _, _), (candidate, _, _) = DEMO_RUNS
    held = compare(any_engine, base, candidate, release=DEMO_RELEASE)
    assert (held["decision"], held["split"], held["split_chosen"]) == ("blocked", "holdout", "default")
    assert gate_exit_code(held["decision"]) == 1
    assert held["blockers"] and all(blocker["case_id"] and blocker["reason"] for blocker in held["blockers"])
    assert any(blocker["reason"] == "forbidden_evidence" for blocker in held["blockers"])
    assert held["reasons"][0].startswith(("1 blocker: case", f"{len(held['blockers'])} blockers: case"))
    whole = compare(any_engine, base, candidate, release=DEMO_RELEASE, split="all")
    assert whole["split_chosen"] == "given" and whole["decision"] == "blocked"
    assert whole["fixed"] and whole["regressed"] and not set(whole["fixed"]) & set(whole["regressed"])
    before = cases_of(report(any_engine, base, DEMO_RELEASE))
    after = cases_of(report(any_engine, candidate, DEMO_RELEASE))
    assert whole["fixed"] == [c for c in before if before[c]["status"] != "passed" and after[c]["status"] == "passed"]
    assert whole["regressed"] == [c for c in before if before[c]["status"] == "passed" and after[c]["status"] != "passed"]
    assert whole["n_common"] == len(before) and not_plain(whole) == []
    dev = compare(any_engine, base, candidate, release=DEMO_RELEASE, split="dev")  # the leak is a holdout case
    assert dev["regressed"] == [] and "demo-32" not in {c for c in dev["fixed"]}
    assert (dev["decision"], dev["n_blockers_other_cases"]) == ("blocked", 1)  # a blocker anywhere blocks
    assert [blocker["case_id"] for blocker in dev["blockers"]] == ["demo-32"]


def test_runs_of_two_datasets_are_refused_even_where_their_case_ids_are_the_same(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        for dataset in ("en", "ja"):
            seed = Seeder(session, dataset)
            for case_id in ("q1", "q2"):
                seed.claim(case_id, f"{dataset}-{case_id}-a", passages=(f"{dataset}-{case_id}-p",), labels=AGREED)
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "both", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    imported(any_engine, tmp_path, "en-run", [line("q1", ["en-q1-p"]), line("q2", ["x"])], dataset="en")
    imported(any_engine, tmp_path, "ja-run", [line("q1", ["x"]), line("q2", ["ja-q2-p"], claims=[
        {"text": "It leaks.", "label": "contradict", "severity": "leak"}])], dataset="ja")
    with pytest.raises(InvalidValueError) as caught:  # no case of one is a case of the other: nothing to compare
        compare(any_engine, "en-run", "ja-run", release="both")
    assert str(caught.value) == ("run 'en-run' is a run of dataset en and run 'ja-run' of dataset ja: no case is in both, "
                                 "so there is nothing to compare; compare two runs of one dataset")
