"""The judge report's terminal text: ids and names from files are escaped, so a line break or an
escape sequence in a claim id, case id, slice or release name never starts a line of its own."""

from __future__ import annotations

from annotator.calibration_text import format_judge_report

HOSTILE = "c1\nWARNING: none\x1b[31m"


def report(**changes: object) -> dict:
    data = {"run": "judge-1", "release": "gold\nv1", "release_manifest_sha256": "ab" * 32, "superseded_by": [],
            "holdout_views": {}, "split": "dev", "n_holdout_left_out": 0, "n_gold": 1, "n_items": 1, "n_missing": 0,
            "warnings": ["folder\nholds\x07 a bell"], "by_slice": {"slice\r1": {"n_gold": 1, "n_items": 1}, "s2": {"n_gold": 0, "n_items": 0}},
            "by_split": {}, "disagreements": [{"claim_id": HOSTILE, "case_id": "case\x9b1", "slice": "s", "split": "dev",
                                                "gold_label": "support", "judge_label": "contradict"}]}
    data.update(changes)
    return data


def test_every_id_from_a_file_is_escaped_and_starts_no_line_of_its_own():
    text = format_judge_report(report())
    lines = text.split("\n")
    assert not any(line.startswith("WARNING: none") or line.startswith("holds") or line.startswith("v1") for line in lines)
    assert "c1\\x0aWARNING: none\\x1b[31m" in text and "case\\x9b1" in text and "gold\\x0av1" in text
    assert "slice\\x0d1" in text and "folder\\x0aholds\\x07 a bell" in text
    assert not any(ch in text for ch in "\x1b\x07\x9b\r")


def test_plain_ids_are_written_as_they_are():
    text = format_judge_report(report(release="gold-v1", disagreements=[
        {"claim_id": "demo-21-c3", "case_id": "demo-21", "slice": "normal", "split": "dev", "gold_label": "contradict",
         "judge_label": "support"}]))
    assert "judge run judge-1 against release gold-v1" in text
    assert "  demo-21-c3\tdemo-21\tnormal\tdev\tgold contradict\tjudge support" in text
