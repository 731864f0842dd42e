"""A JSON line nested past any record's shape (thousands of levels, or more than
formats.jsonl.MAX_NESTING) is refused naming the file and line, never a RecursionError
traceback, in every JSONL reader: cases, labels, adjudications, judge labels, runs and agreement's
label tables."""

from __future__ import annotations

import json

import pytest

from annotator import formats
from annotator.errors import ImportRowError
from annotator.formats.jsonl import MAX_NESTING
from annotator.formats.label_table import read_label_table

BASE = {"case_id": "c1", "claim_id": "c1-1", "labeler": "aoi", "label": "support", "retrieved": [], "behavior": "answer",
        "item_id": "i1", "rater": "aoi", "question": "Q", "answer": "A", "passages": [], "claims": []}


def deep_line(levels: int) -> str:
    return json.dumps(BASE)[:-1] + ', "deep": ' + "[" * levels + "]" * levels + "}\n"


READERS = {
    "cases": lambda path: list(formats.read_cases(path, "jsonl").records),
    "labels": lambda path: list(formats.read_labels(path).records),
    "judge labels": lambda path: list(formats.read_judge_labels(path, "jsonl").records),
    "runs": lambda path: list(formats.read_run(path).records),
    "agreement label table": lambda path: read_label_table(path),
}


CASES = [(reader, levels) for reader in READERS for levels in (MAX_NESTING + 1, 5000)
         if not (reader == "agreement label table" and levels < 1000)]
"""agreement's label table keeps only item_id, rater and label: a deep extra value it can parse is ignored."""


@pytest.mark.parametrize("reader, levels", CASES)
def test_a_line_nested_too_deep_is_refused_naming_file_and_line(tmp_path, reader, levels):
    path = tmp_path / "deep.jsonl"
    path.write_text(deep_line(levels), encoding="utf-8")
    with pytest.raises(ImportRowError) as caught:
        READERS[reader](path)
    assert caught.value.line == 1 and str(path) in str(caught.value)
    assert f"nest more than {MAX_NESTING} levels deep" in str(caught.value)


def test_nesting_up_to_the_limit_reads_on():
    line = json.dumps({"metadata": {"a": [[{"b": [1]}]]}})
    assert formats.loads_unique(line)["metadata"]["a"][0][0]["b"] == [1]
