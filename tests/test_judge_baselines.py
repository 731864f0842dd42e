"""benchmarks/judge_baselines.py: the judge label files it writes hold the claim ids the import
makes, one of the three labels and a confidence in 0..1, the same bytes on every run; its cues and
its vote counting behave as documented."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.formats import read_cases
from annotator.vocabulary import LABELS
from tests.conftest import DEMO, REPO, TEST_DATA

SCRIPT = REPO / "benchmarks" / "judge_baselines.py"
TINY_CLIMATE_FEVER = TEST_DATA / "import_climate_fever_tiny.jsonl"


def _load_script():  # noqa: ANN202 - the script as a module
    spec = importlib.util.spec_from_file_location("judge_baselines", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


judge_baselines = _load_script()


def _imported_claim_ids(path: Path, fmt: str) -> set[str]:
    return {claim.claim_id for case in read_cases(path, fmt=fmt).records for claim in case.claims}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("cases, fmt", [(TINY_CLIMATE_FEVER, "climate-fever"), (DEMO, "jsonl")])
def test_lexical_judge_labels_every_imported_claim_once_with_a_label_and_confidence(tmp_path, cases, fmt):
    out = tmp_path / "judge.jsonl"
    assert judge_baselines.main(["lexical", str(cases), "--format", fmt, "--out", str(out)]) == 0
    lines = _lines(out)
    ids = [line["claim_id"] for line in lines]
    assert sorted(ids) == sorted(_imported_claim_ids(cases, fmt))
    for line in lines:
        assert line["label"] in LABELS
        assert 0.0 <= line["confidence"] <= 1.0
        assert line["rationale"].startswith("lexical: coverage ")


def test_climate_fever_claim_ids_are_the_claim_id_and_evidence_number(tmp_path):
    out = tmp_path / "judge.jsonl"
    judge_baselines.main(["lexical", str(TINY_CLIMATE_FEVER), "--format", "climate-fever", "--out", str(out)])
    assert [line["claim_id"] for line in _lines(out)] == ["t1-0", "t1-1", "t2-0", "t2-1"]


@pytest.mark.parametrize("cases, fmt", [(TINY_CLIMATE_FEVER, "climate-fever"), (DEMO, "jsonl")])
def test_lexical_judge_file_is_the_same_in_a_process_with_another_hash_seed(tmp_path, cases, fmt):
    here, there = tmp_path / "here.jsonl", tmp_path / "there.jsonl"
    judge_baselines.main(["lexical", str(cases), "--format", fmt, "--out", str(here)])
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, str(SCRIPT), "lexical", str(cases), "--format", fmt, "--out", str(there)],
                   env=env, check=True, capture_output=True)
    assert there.read_bytes() == here.read_bytes()


def test_votes_judge_takes_the_votes_after_the_first_two_non_null_ones(tmp_path):
    # t1-0: SUPPORTS, SUPPORTS (no third vote); t1-1: SUPPORTS, -, NOT_ENOUGH_INFO, REFUTES;
    # t2-0: REFUTES, NOT_ENOUGH_INFO; t2-1: NOT_ENOUGH_INFO, REFUTES, REFUTES.
    out = tmp_path / "votes.jsonl"
    assert judge_baselines.main(["votes", str(TINY_CLIMATE_FEVER), "--out", str(out)]) == 0
    assert [(line["claim_id"], line["label"], line["confidence"]) for line in _lines(out)] == [
        ("t1-1", "contradict", 1.0), ("t2-1", "contradict", 1.0)]


def test_votes_judge_majority_breaks_a_tie_by_the_vote_cast_first(tmp_path):
    out = tmp_path / "votes.jsonl"
    judge_baselines.main(["votes", str(TINY_CLIMATE_FEVER), "--from-vote", "2", "--out", str(out)])
    assert [(line["claim_id"], line["label"], line["confidence"]) for line in _lines(out)] == [
        ("t1-0", "support", 1.0), ("t1-1", "insufficient", 0.5), ("t2-0", "insufficient", 1.0),
        ("t2-1", "contradict", 1.0)]


def test_single_vote_judge_has_no_confidence():
    votes = ("support", None, "insufficient", "contradict", "contradict")
    found = judge_baselines.remaining_vote_label(votes, 3, single=True)
    assert (found.label, found.confidence) == ("contradict", None)
    majority = judge_baselines.remaining_vote_label(votes, 3, single=False)
    assert (majority.label, majority.confidence) == ("contradict", 1.0)
    assert judge_baselines.remaining_vote_label(votes, 5, single=True) is None


@pytest.mark.parametrize("text, expected", [
    ("Sea level rise has accelerated.", False),
    ("Sea level rise has not accelerated.", True),
    ("There is no evidence that it isn't warming.", False),  # two negations
    ("在宅勤務は認められない。", True),
    ("申請できません。", True),
    ("翌月５日までに申請しなければならない。", False),  # "must": a double negation
    ("領収書の添付は少ない。", False),  # 少ない is an adjective, not a negation
])
def test_negation_is_an_odd_number_of_negations(text, expected):
    assert judge_baselines.negated(text) is expected


def test_numbers_read_full_width_digits_but_not_circled_ones():
    assert judge_baselines.numbers("①50万円未満　３か月　税込3,000円　20% of 1998 was warm") == {
        ("50", "万"), ("3", "か月"), ("3000", "円"), ("20", "%")}


@pytest.mark.parametrize("claim, sentence, cue", [
    ("Glaciers are growing everywhere.", "Most glaciers are retreating.", "opposite"),
    ("Arctic ice is not shrinking.", "Arctic ice is shrinking fast.", "negation"),
    ("Warming is 3 degrees.", "Warming is 1.5 degrees.", "number"),
    ("申請期限は翌月５日である。", "申請は翌月10日までに行う。", "number"),
    ("3,000円以上の支出には領収書が要る。", "3,000円未満の支出には領収書が要る。", "opposite"),
])
def test_a_contradiction_cue_makes_an_on_topic_claim_contradicted(claim, sentence, cue):
    idf = {key: 1.0 for key in judge_baselines.word_keys(claim + " " + sentence)}
    cues = judge_baselines.contradiction_cues(claim, sentence)
    assert any(found.startswith(cue) for found in cues), cues
    label, confidence = judge_baselines.decide(judge_baselines.coverage(claim, sentence, idf), cues)
    assert label == "contradict" and 0.5 < confidence <= 0.95


@pytest.mark.parametrize("cover, cues, expected", [
    (0.1, ["negation in one only"], ("insufficient", 0.9)),  # off topic: cues ignored
    (0.4, [], ("insufficient", 0.6)),
    (0.8, [], ("support", 0.8)),
    (1.0, ["number 5 日 differs"], ("contradict", 0.85)),
])
def test_decision_thresholds(cover, cues, expected):
    label, confidence = judge_baselines.decide(cover, cues)
    assert (label, round(confidence, 6)) == expected


def test_an_old_version_shown_beside_its_new_one_is_not_judged():
    items = {item.claim_id: item for item in judge_baselines.claim_items(DEMO, "jsonl")}
    # demo-04: the 2025-04 travel rules are shown beside the 2026-04 ones (and named outdated)
    assert [p.passage_id for p in items["demo-04-c1"].passages] == ["p-ryohi-1-2026-04"]


def test_votes_of_a_file_that_is_not_climate_fever_is_refused_as_the_import_refuses_it(tmp_path, capsys):
    out = tmp_path / "votes.jsonl"
    assert judge_baselines.main(["votes", str(DEMO), "--out", str(out)]) == 1
    assert "line 1, field 'claim_id'" in capsys.readouterr().err
    assert not out.exists()
