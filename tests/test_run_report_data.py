"""benchmarks/run_report_data.py: the synthetic dataset imports, two agreeing labelers put every
claim in an --only-final release, the qrels it writes are what relevant_evidence gives over that
release, and the two runs are well-formed lists that differ on the cases it says it changed."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from annotator.db import session_scope
from annotator.retrieval import relevant_evidence
from annotator.services import releases
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases, import_labels
from tests.conftest import REPO

SCRIPT = REPO / "benchmarks" / "run_report_data.py"


def _load_script():  # noqa: ANN202 - the script as a module
    spec = importlib.util.spec_from_file_location("run_report_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


run_report_data = _load_script()


def _run(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _qrels(path: Path) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        case_id, _, passage_id, relevance = line.split(" ")
        assert relevance == "1"
        found.setdefault(case_id, []).append(passage_id)
    return {case_id: tuple(ids) for case_id, ids in found.items()}


def test_every_claim_is_released_and_the_qrels_are_relevant_evidence_over_the_release(tmp_path, engine):
    written = run_report_data.generate(tmp_path / "data", n_cases=300, n_retrieved=20, seed=3)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, written.cases, fmt="jsonl", dataset="bench-runs")
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, written.labels, dataset="bench-runs")
    with session_scope(engine) as session:
        created = releases.create_release(session, OPERATOR, "bench-gold", only_final=True,
                                          out_dir=tmp_path / "releases", n_bootstrap=0)
    assert created.counts["claims"] == 300 and created.excluded == {}
    claims: dict[str, list[dict]] = {}
    for line in (created.path / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        claim = json.loads(line)
        claims.setdefault(claim["case_id"], []).append(claim)
    relevant = {case_id: relevant_evidence(found[0]["case_metadata"].get("required_evidence_ids"), found)
                for case_id, found in claims.items()}
    assert _qrels(written.qrels) == {case_id: ids for case_id, ids in relevant.items() if ids}
    assert written.n_with_evidence == len(_qrels(written.qrels))
    assert 0 < written.n_with_evidence < 300  # some cases have no relevant evidence (n_no_evidence)


def test_runs_hold_every_case_once_with_distinct_ids_and_differ_only_where_changed(tmp_path):
    written = run_report_data.generate(tmp_path, n_cases=400, n_retrieved=30, changed=0.25, seed=1)
    base, candidate = _run(written.base), _run(written.candidate)
    case_ids = [json.loads(line)["case_id"] for line in written.cases.read_text(encoding="utf-8").splitlines()]
    for run in (base, candidate):
        assert [line["case_id"] for line in run] == case_ids
        for line in run:
            assert set(line) == {"case_id", "retrieved", "behavior"} and line["behavior"] == "answer"
            assert len(line["retrieved"]) == 30 == len(set(line["retrieved"]))
    differ = sum(1 for one, other in zip(base, candidate, strict=True) if one != other)
    assert 0 < differ <= written.n_changed < 400
    qrels = _qrels(written.qrels)
    assert any(set(qrels.get(line["case_id"], ())) & set(line["retrieved"][:5]) for line in base)


def test_forbidden_passages_are_never_retrieved(tmp_path):
    written = run_report_data.generate(tmp_path, n_cases=2000, n_retrieved=10, seed=5)
    forbidden = {}
    for line in written.cases.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        forbidden[case["case_id"]] = set(case["metadata"].get("forbidden_evidence_ids", ()))
    assert any(forbidden.values())
    for path in (written.base, written.candidate):
        assert all(not forbidden[line["case_id"]] & set(line["retrieved"]) for line in _run(path))


def test_the_same_arguments_give_the_same_bytes(tmp_path):
    one = run_report_data.generate(tmp_path / "one", n_cases=50, n_retrieved=10, seed=7)
    two = run_report_data.generate(tmp_path / "two", n_cases=50, n_retrieved=10, seed=7)
    for name in ("cases", "labels", "base", "candidate", "qrels"):
        assert getattr(one, name).read_bytes() == getattr(two, name).read_bytes()


@pytest.mark.parametrize("kwargs", [{"n_cases": 0}, {"n_retrieved": 0}, {"changed": 1.5}, {"n_passages": 2},
                                    {"n_cases": 5, "n_retrieved": 10}])
def test_impossible_arguments_are_refused(tmp_path, kwargs):
    with pytest.raises(ValueError):
        run_report_data.generate(tmp_path, **kwargs)
