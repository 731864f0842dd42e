"""benchmarks/climate_fever_retrieval.py: the corpus is every distinct passage the import makes,
the two qrels rules count votes as documented, the ranking breaks ties by passage id, and the run
files it writes hold every case once, best first, with no repeats. The retrievers themselves
(bm25s, sentence-transformers) are not in the project's environments; bm25 runs when bm25s is
importable, and the other tests stand a small scorer in for them."""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

from tests.conftest import need_module

from tests.conftest import REPO, TEST_DATA

SCRIPT = REPO / "benchmarks" / "climate_fever_retrieval.py"
TINY_CLIMATE_FEVER = TEST_DATA / "import_climate_fever_tiny.jsonl"


def _load_script():  # noqa: ANN202 - the script as a module
    spec = importlib.util.spec_from_file_location("climate_fever_retrieval", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


retrieval = _load_script()


@pytest.mark.parametrize("votes, expected", [
    (("support", "support"), "support"),
    (("contradict", "insufficient", "contradict"), "contradict"),
    (("support", "contradict"), None),                              # a tie is no majority
    (("support", "support", "contradict", "insufficient"), None),   # 2 of 4 is not more than half
    (("support", "contradict", "insufficient"), None),
    ((), None),
])
def test_majority_label_needs_more_than_half_of_the_votes(votes, expected):
    assert retrieval.majority_label(votes) == expected


@pytest.mark.parametrize("votes, expected", [
    (("support", "support", "contradict"), "support"),     # agreed: the third vote is not read
    (("support", "insufficient", "contradict"), "contradict"),  # disputed: the adjudicator's vote
    (("support", "insufficient"), None),                   # disputed, no third vote: not released
    (("support",), None),                                  # labeled once: never final
])
def test_release_label_is_the_agreed_pair_else_the_third_vote(votes, expected):
    assert retrieval.release_label(votes) == expected


def test_corpus_is_every_distinct_passage_in_id_order_and_the_qrels_follow_the_votes():
    # t1: Sea level:1 (S, S), Sea level:2 (S, N, R); t2: Glacier:7 (R, N), Sea level:1 (N, R, R).
    task = retrieval.read_task(TINY_CLIMATE_FEVER)
    assert task.passage_ids == ("Glacier:7", "Sea level:1", "Sea level:2")
    assert task.n_pairs == 4 and dict(task.repeats) == {"Sea level:1": 2}
    assert [query.case_id for query in task.queries] == ["t1", "t2"]
    assert retrieval.qrels(task.queries, "majority") == {"t1": ("Sea level:1",), "t2": ("Sea level:1",)}
    # release: t1's Sea level:2 is disputed (S, N) and its third vote is R; t2's Sea level:1 is
    # disputed (N, R), third vote R; t2's Glacier:7 (R, N) has no third vote.
    assert retrieval.qrels(task.queries, "release") == {"t1": ("Sea level:1", "Sea level:2"), "t2": ("Sea level:1",)}


def test_ranking_is_by_score_with_ties_to_the_smaller_index_and_cut_at_top():
    scores = np.array([[0.5, 0.9, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    assert retrieval.ranked(scores, top=3, positive_only=False) == [[1, 0, 2], [0, 1, 2]]
    assert retrieval.ranked(scores, top=10, positive_only=True) == [[1, 0, 2], []]


def _overlap_scores(queries, corpus, _batch_size):  # noqa: ANN001, ANN202 - a SCORERS stand-in
    """Shared lower-cased words, a stand-in retriever with ties and zeros."""
    words = [set(text.lower().split()) for text in corpus]
    return np.array([[len(set(query.lower().split()) & w) for w in words] for query in queries], dtype=np.float32), {}


def _lines(path):  # noqa: ANN001, ANN202
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_run_files_hold_every_case_once_best_first_with_no_repeats(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(retrieval.SCORERS, "dense", _overlap_scores)
    assert retrieval.main([str(TINY_CLIMATE_FEVER), "--out", str(tmp_path), "--retrievers", "dense", "--top", "2"]) == 0
    lines = _lines(tmp_path / "dense.jsonl")
    assert [line["case_id"] for line in lines] == ["t1", "t2"]
    # t1 "Sea level rise has accelerated." shares "rise" and "has" with Sea level:1 and no word with
    # the other two: the tie at 0 goes to the smaller id.
    assert lines[0] == {"case_id": "t1", "retrieved": ["Sea level:1", "Glacier:7"], "behavior": "answer"}
    assert all(len(line["retrieved"]) == len(set(line["retrieved"])) == 2 for line in lines)
    assert json.loads((tmp_path / "qrels-majority.json").read_text(encoding="utf-8")) == {
        "t1": ["Sea level:1"], "t2": ["Sea level:1"]}
    out = capsys.readouterr().out
    assert "corpus: 3 distinct evidence sentences (4 claim-evidence pairs, 2 claims)" in out
    assert "gives the same figures" in out or "ir-measures is not installed" in out


def test_bm25_lists_only_passages_sharing_a_term(tmp_path):
    need_module("bm25s", "bm25s")
    need_module("Stemmer", "PyStemmer")
    assert retrieval.main([str(TINY_CLIMATE_FEVER), "--out", str(tmp_path), "--retrievers", "bm25"]) == 0
    lines = _lines(tmp_path / "bm25.jsonl")
    assert [line["retrieved"] for line in lines] == [["Sea level:1"], ["Glacier:7"]]


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as stop:
        retrieval.main([str(tmp_path / "nope.jsonl"), "--out", str(tmp_path)])
    assert stop.value.code == 2
