"""`annotator claims list | split | merge | edit | drop` on a RAGAS answer cut into sentences, on
SQLite and PostgreSQL: each prints what changed, a refusal is `Error: ...` with exit 1 and
changes nothing, a bad option is a usage error (exit 2), and `edit --update` keeps the labels of a
labeled claim and marks them to review."""

from __future__ import annotations

import json

from sqlmodel import select

from annotator.db import init_db, session_scope
from annotator.models import Claim, Label, LabelEvent
from tests.conftest import annotator

RECORD = {"user_input": "有給休暇は何日？",
          "response": "有給休暇は年20日です。申請は3日前までに行います。\n- ご不明点はお問い合わせください。",
          "retrieved_contexts": ["有給休暇は年20日。"], "id": "r-1"}


def _imported(tmp_path, url: str) -> str:  # noqa: ANN001
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(RECORD, ensure_ascii=False) + "\n", encoding="utf-8")
    assert annotator("import", str(path), "--format", "ragas", "--db", url).code == 0
    return url


def _rows(url: str) -> tuple:
    engine = init_db(url)
    try:
        with session_scope(engine) as s:
            claims = sorted(tuple(r) for r in s.exec(select(Claim.claim_id, Claim.position, Claim.text, Claim.span_start,
                                                            Claim.span_end, Claim.updated_at)))
            return claims, sorted(tuple(r) for r in s.exec(select(Label.id, Label.value, Label.revision))), \
                len(s.exec(select(LabelEvent.id)).all())
    finally:
        engine.dispose()


def test_claims_list_split_merge_edit_and_drop_print_what_changed(tmp_path, any_db_url):
    url = _imported(tmp_path, any_db_url)
    listed = annotator("claims", "list", "r-1", "--db", url)
    assert listed.code == 0, listed.err
    assert listed.out.splitlines()[:5] == [
        "Case r-1 (dataset default): 3 claims",
        '  answer: "有給休暇は年20日です。申請は3日前までに行います。\\n- ご不明点はお問い合わせください。"',
        '  0\tr-1-c1\tspan 0-12\tlabels 0\t"有給休暇は年20日です。"',
        '  1\tr-1-c2\tspan 12-26\tlabels 0\t"申請は3日前までに行います。"',
        '  2\tr-1-c3\tspan 29-45\tlabels 0\t"ご不明点はお問い合わせください。"']
    split = annotator("claims", "split", "r-1-c2", "--at", "3", "--reason", "two steps", "--db", url)
    assert split.code == 0, split.err
    assert split.out.splitlines() == [
        'Split claim r-1-c2 at 3 into r-1-c2 and r-1-c2-2 (case r-1, dataset default); reason "two steps"',
        " before:", '  r-1-c2\tposition 1\tspan 12-26\t"申請は3日前までに行います。"',
        " after:", '  r-1-c2\tposition 1\tspan 12-15\t"申請は"', '  r-1-c2-2\tposition 2\tspan 15-26\t"3日前までに行います。"']
    merged = annotator("claims", "merge", "r-1-c2", "--reason", "one step after all", "--db", url)
    assert merged.code == 0, merged.err
    assert merged.out.splitlines()[-1] == '  r-1-c2\tposition 1\tspan 12-26\t"申請は3日前までに行います。"'
    dropped = annotator("claims", "drop", "r-1-c3", "--reason", "not a factual statement", "--db", url)
    assert dropped.code == 0, dropped.err
    assert dropped.out.startswith("Dropped claim r-1-c3 (case r-1, dataset default)")
    edited = annotator("claims", "edit", "r-1-c1", "--text", "有給休暇は年20日", "--reason", "trim", "--db", url)
    assert edited.code == 0 and edited.out.splitlines()[-1] == '  r-1-c1\tposition 0\tspan 0-9\t"有給休暇は年20日"'
    again = annotator("claims", "edit", "r-1-c1", "--text", "有給休暇は年20日", "--reason", "trim", "--db", url)
    assert again.out == "Nothing changed: claim r-1-c1 already has that text.\n"
    as_json = json.loads(annotator("claims", "list", "r-1", "--json", "--db", url).out)
    assert [(c["claim_id"], c["position"], c["span"], c["labels"]) for c in as_json["claims"]] == [
        ("r-1-c1", 0, [0, 9], 0), ("r-1-c2", 1, [12, 26], 0)]
    assert set(as_json) == {"dataset", "case_id", "question", "answer", "claims"}
    assert set(as_json["claims"][0]) == {"claim_id", "position", "span", "text", "passage_ids", "labels", "has_draft",
                                         "refused"}


def test_a_refused_change_exits_1_naming_what_to_do_and_changes_nothing(tmp_path, any_db_url):
    url = _imported(tmp_path, any_db_url)
    labels = tmp_path / "labels.csv"
    labels.write_text("claim_id,labeler,label\nr-1-c1,aoi,support\nr-1-c1,ren,support\n", encoding="utf-8")
    assert annotator("labels", "import", str(labels), "--db", url).code == 0
    before = _rows(url)
    for args, said in (
            (("split", "r-1-c1", "--at", "3"), "claim 'r-1-c1' has 2 label(s)"),
            (("merge", "r-1-c1"), "claim 'r-1-c1' has 2 label(s)"),
            (("drop", "r-1-c1"), "claim 'r-1-c1' has 2 label(s)"),
            (("edit", "r-1-c1", "--text", "別の本文"), "Add --update (`annotator claims edit r-1-c1 --text TEXT"),
            (("split", "r-1-c2", "--at", "0"), "offset 0 does not cut claim 'r-1-c2' in two"),
            (("merge", "r-1-c3"), "claim 'r-1-c3' is the last claim of case 'r-1'"),
            (("drop", "r-1-c9"), "no claim with id 'r-1-c9'")):
        ran = annotator("claims", *args, "--reason", "r", "--db", url)
        assert (ran.code, ran.out) == (1, ""), args
        assert ran.err.startswith("Error: ") and said in ran.err, (args, ran.err)
    for reason in ("  ", "\u200b", "\ufeff\u2060 \u202e"):  # invisible characters only: blank too
        blank = annotator("claims", "drop", "r-1-c3", "--reason", reason, "--db", url)
        assert (blank.code, blank.err) == (1, "Error: give a reason for the change: it is recorded in the claim's history\n")
    for text in (" ", "\u200b", "\u200b\u200f\n"):
        blank = annotator("claims", "edit", "r-1-c3", "--text", text, "--reason", "x", "--db", url)
        assert (blank.code, blank.err) == (1, "Error: give the claim's new text (it may not be blank)\n"), text
    assert _rows(url) == before
    assert annotator("claims", "split", "r-1-c2", "--at", "three", "--reason", "r", "--db", url).code == 2
    assert annotator("claims", "split", "r-1-c2", "--reason", "r", "--db", url).code == 2  # --at is required
    assert _rows(url) == before


def test_edit_update_keeps_the_labels_and_marks_them_to_review(tmp_path, any_db_url):
    url = _imported(tmp_path, any_db_url)
    labels = tmp_path / "labels.csv"
    labels.write_text("claim_id,labeler,label\nr-1-c1,aoi,support\nr-1-c1,ren,support\n", encoding="utf-8")
    assert annotator("labels", "import", str(labels), "--db", url).code == 0
    _claims, stored, _events = _rows(url)
    ran = annotator("claims", "edit", "r-1-c1", "--text", "有給休暇は年20日", "--reason", "trim", "--update", "--db", url)
    assert ran.code == 0, ran.err
    assert ran.out.splitlines()[-1] == (
        "  2 labels to review: each labeler finds the claim back in their queue (two or more such labels make it stale "
        "until they save again or an adjudicator decides).")
    assert _rows(url)[1] == stored
    status = json.loads(annotator("status", "--json", "--db", url).out)
    assert status["claims_by_state"]["stale"] == 1


def test_claims_list_without_a_case_lists_the_datasets_case_ids_and_needs_the_dataset(tmp_path, sqlite_url):
    url = _imported(tmp_path, sqlite_url)
    second = tmp_path / "more.jsonl"
    second.write_text(json.dumps({**RECORD, "id": "r-2"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert annotator("import", str(second), "--format", "ragas", "--db", url).code == 0
    listed = annotator("claims", "list", "--dataset", "default", "--db", url)
    assert (listed.code, listed.out) == (0, "r-1\nr-2\n")
    assert json.loads(annotator("claims", "list", "--dataset", "default", "--json", "--db", url).out) == {
        "dataset": "default", "case_ids": ["r-1", "r-2"]}
    usage = annotator("claims", "list", "--db", url)
    assert usage.code == 2 and "give a case id, or --dataset NAME" in usage.err


def test_an_id_and_a_text_with_an_invisible_character_print_it_escaped(tmp_path, any_db_url):
    path = tmp_path / "answers.jsonl"
    record = {**RECORD, "id": "b-\u200b1", "response": "有給は\u200b20日です。申請は3日前です。"}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert annotator("import", str(path), "--format", "ragas", "--db", any_db_url).code == 0
    listed = annotator("claims", "list", "b-\u200b1", "--db", any_db_url)
    assert listed.code == 0, listed.err
    assert "\u200b" not in listed.out
    assert listed.out.splitlines()[0] == "Case b-\\u200b1 (dataset default): 2 claims"
    assert listed.out.splitlines()[2] == '  0\tb-\\u200b1-c1\tspan 0-10\tlabels 0\t"有給は\\u200b20日です。"'
    as_json = annotator("claims", "list", "b-\u200b1", "--json", "--db", any_db_url)
    assert "\u200b" not in as_json.out and "b-\\u200b1" in as_json.out
    assert json.loads(as_json.out)["case_id"] == "b-\u200b1"  # the same value, escaped
    dropped = annotator("claims", "drop", "b-\u200b1-c2", "--reason", "x\u200by", "--db", any_db_url)
    assert dropped.code == 0 and "\u200b" not in dropped.out and 'reason "x\\u200by"' in dropped.out
