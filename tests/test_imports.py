"""Imports into the database: cases, labels, adjudications; one transaction each, nothing lands
on an error; re-import is a no-op; --update marks adjudicated claims stale.

CLIMATE-FEVER: Diggelmann et al. (2020), arXiv:2012.00614, where `annotator data fetch climate-fever`
puts it (tests/conftest.py, CLIMATE_FEVER).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.errors import ImportFileError, ImportRowError, InvalidValueError
from annotator.models import (
    Adjudication, Case, Claim, ClaimPassage, Dataset, Label, LabelEvent, Passage, User, utcnow,
)
from annotator.services.imports import import_adjudications, import_cases, import_labels
from annotator.services.states import claim_states
from annotator.workflow import State
from tests.conftest import CLIMATE_FEVER, TEST_DATA, need
from tests.factories import json_says

TABLES = (Dataset, Case, Claim, Passage, ClaimPassage, User, Label, LabelEvent, Adjudication)


def row_counts(engine) -> dict[str, int]:  # noqa: ANN001 - an Engine
    with session_scope(engine) as session:
        return {table.__name__: session.exec(select(func.count()).select_from(table)).one() for table in TABLES}


def claim_pk(session, claim_id: str) -> int:  # noqa: ANN001 - a Session
    return session.exec(select(Claim.id).where(Claim.claim_id == claim_id)).one()


def import_native(engine) -> None:  # noqa: ANN001
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")


def import_native_labels(engine) -> None:  # noqa: ANN001
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, TEST_DATA / "labels_native.csv")


# ---------------------------------------------------------------- cases


def test_native_import_stores_cases_claims_and_passages_in_order(any_engine):
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    assert (report.format, report.encoding, report.dataset) == ("jsonl", "UTF-8", "default")
    assert report.counts == {"cases": {"new": 2, "unchanged": 0, "updated": 0},
                             "claims": {"new": 3, "unchanged": 0, "updated": 0},
                             "passages": {"new": 2, "unchanged": 0, "updated": 0}}
    with session_scope(any_engine) as session:
        cases = session.exec(select(Case.case_id, Case.position, Case.slice, Case.split, Case.meta).order_by(Case.position)).all()
        assert cases == [("n1", 0, "updated_document", "dev", {"model": "m-1", "prompt_version": "p3"}),
                         ("n2", 1, "normal", "holdout", {})]
        claims = session.exec(select(Claim.claim_id, Claim.position, Claim.text).order_by(Claim.id)).all()
        assert claims == [("n1-c1", 0, "The travel policy was updated in April 2024."),
                          ("n1-c2", 1, "The Caf\u00e9 memo was approved by 髙橋."),
                          ("n2-c1", 0, "The travel policy dates from April 2024.")]
        shown = session.exec(select(Claim.claim_id, Passage.passage_id, ClaimPassage.position)
                             .join(ClaimPassage, ClaimPassage.claim_pk == Claim.id)
                             .join(Passage, Passage.id == ClaimPassage.passage_pk)
                             .order_by(Claim.id, ClaimPassage.position)).all()
        assert shown == [("n1-c1", "p1", 0), ("n1-c2", "p1", 0), ("n1-c2", "p2", 1), ("n2-c1", "p1", 0)]
        assert session.exec(select(Dataset.name, Dataset.source_format)).all() == [("default", "jsonl")]


@pytest.mark.parametrize("name, encoding", [
    ("import_flat_utf8.csv", "UTF-8"), ("import_flat_utf8_bom.csv", "UTF-8 with BOM"), ("import_flat_cp932.csv", "CP932"),
])
def test_csv_import_reports_the_encoding_and_keeps_the_characters(engine, name, encoding):
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, TEST_DATA / name, dataset="flat")
    assert report.encoding == encoding
    assert report.summary_lines()[0] == f"Read {name} as {encoding} (csv) into dataset 'flat': 2 cases, 3 claims, 3 passages"
    with session_scope(engine) as session:
        texts = session.exec(select(Passage.text).order_by(Passage.id)).all()
        assert texts == ["Approved by 髙橋 of ㈱ Example,\non the first of April.", "The board of ㈱ Example met.",
                         "It is not permitted."]
        assert session.exec(select(Case.answer).where(Case.case_id == "f1")).one() == "髙橋 of ㈱ Example approved it, on ① April."


def test_reimport_changes_nothing_and_says_0_new_n_unchanged(any_engine):
    import_native(any_engine)
    before = row_counts(any_engine)
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    assert row_counts(any_engine) == before
    assert "cases: 0 new, 2 unchanged, 0 updated" in report.summary()
    assert report.summary_lines()[1:] == ["  cases: 0 new, 2 unchanged, 0 updated",
                                    "  claims: 0 new, 3 unchanged, 0 updated",
                                    "  passages: 0 new, 2 unchanged, 0 updated"]


def test_same_claim_id_with_other_text_than_the_database_is_refused_naming_id_and_line(any_engine, tmp_path):
    import_native(any_engine)
    changed = _native_with_changed_claim(tmp_path)
    before = row_counts(any_engine)
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_cases(session, OPERATOR, changed)
    assert (caught.value.line, caught.value.field) == (1, "claims[0].text")
    message = str(caught.value)
    assert re.fullmatch(
        re.escape(f"{changed}, line 1, field 'claims[0].text': claim 'n1-c1' is already in dataset 'default' (stored version written ")
        + r"\d{4}-\d\d-\d\d \d\d:\d\d" + re.escape(" UTC) with another text: text 'The travel policy was updated "
        "in April 2024.' in the database, 'The travel policy was updated in May 2024.' in this file. Import with "
        "--update to replace it (an adjudicated claim then becomes stale), or give it another id"), message), message
    assert row_counts(any_engine) == before


def _native_with_changed_claim(tmp_path: Path) -> Path:
    lines = (TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["claims"][0]["text"] = "The travel policy was updated in May 2024."
    path = tmp_path / "changed.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def test_update_of_an_adjudicated_claim_makes_it_stale_and_is_audited(any_engine, tmp_path):
    import_native(any_engine)
    import_native_labels(any_engine)
    with session_scope(any_engine) as session:
        carol = User(name="carol", roles="adjudicator")
        session.add(carol)
        session.flush()
        pk = claim_pk(session, "n1-c1")
        session.add(Adjudication(claim_pk=pk, adjudicator_pk=carol.id, value="support", decided_at=utcnow()))
    with session_scope(any_engine) as session:
        assert claim_states(session, claim_pks=[pk])[pk] is State.ADJUDICATED
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, _native_with_changed_claim(tmp_path), update=True)
    assert report.counts["claims"] == {"new": 0, "unchanged": 1, "updated": 1}
    with session_scope(any_engine) as session:
        assert claim_states(session, claim_pks=[pk])[pk] is State.STALE
        event = session.exec(select(LabelEvent).where(LabelEvent.entity == "claim", LabelEvent.claim_pk == pk)).one()
        assert event.action == "update"
        assert event.before["text"] == "The travel policy was updated in April 2024."
        assert event.after["text"] == "The travel policy was updated in May 2024."


def test_update_of_a_passage_marks_the_claims_shown_with_it_changed(engine, tmp_path):
    import_native(engine)
    record = json.loads((TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines()[0])
    record["passages"][1]["text"] = "Approved by 髙橋 of ㈱ Example on 1 April."
    path = tmp_path / "passage.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, path, update=True)
    assert report.counts["passages"] == {"new": 0, "unchanged": 1, "updated": 1}
    assert report.warnings == ("1 claims are shown with changed passages: they are marked changed "
                               "(adjudicated ones become stale)",)
    with session_scope(engine) as session:
        assert session.exec(select(Passage.text).where(Passage.passage_id == "p2")).one() == record["passages"][1]["text"]
        events = session.exec(select(LabelEvent.claim_pk).where(LabelEvent.entity == "claim")).all()
        assert events == [claim_pk(session, "n1-c2")]


@pytest.mark.parametrize("name, line, field", [
    ("import_broken_json.jsonl", 2, None),
    ("import_claim_missing_text.jsonl", 2, "claims[1].text"),
    ("import_case_id_twice.jsonl", 3, "case_id"),
    ("import_passage_of_other_case.jsonl", 2, "claims[0].passage_ids[1]"),
    ("import_claim_no_passages.jsonl", 1, "claims[0].passage_ids"),
    ("import_case_without_split.jsonl", 2, "split"),
    ("import_passage_without_title.jsonl", 1, "passages[0].title"),
    ("import_unclosed_quote.csv", 3, "case_id"),
    ("import_id_space.csv", 4, "claim_id"),
    ("import_undecodable.csv", 3, "claim"),
    ("import_missing_column.csv", 1, None),
])
def test_broken_case_file_names_file_line_and_field_and_nothing_lands(any_engine, name, line, field):
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / name)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(TEST_DATA / name), line, field)
    assert f"{name}, line {line}" in str(error)
    assert set(row_counts(any_engine).values()) == {0}


def test_votes_are_refused_for_a_file_that_is_not_climate_fever(engine):
    with pytest.raises(InvalidValueError, match="only be imported from a CLIMATE-FEVER file"), session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl", with_votes=True)


# ---------------------------------------------------------------- labels


def test_labels_import_creates_labelers_without_password_and_says_so(any_engine):
    import_native(any_engine)
    with session_scope(any_engine) as session:
        report = import_labels(session, OPERATOR, TEST_DATA / "labels_native.csv")
    assert report.counts == {"labels": {"new": 5, "unchanged": 0, "updated": 0}}
    assert report.created_users == ("alice", "bob")
    assert "Created users alice, bob (role labeler, no password: they cannot log in until an admin sets one)" in report.summary_lines()
    with session_scope(any_engine) as session:
        users = session.exec(select(User.name, User.roles, User.password_hash).order_by(User.name)).all()
        assert users == [("alice", "labeler", None), ("bob", "labeler", None)]
        label = session.exec(select(Label).join(User, User.id == Label.labeler_pk)
                             .where(Label.claim_pk == claim_pk(session, "n1-c2"), User.name == "alice")).one()
        assert (label.value, label.passage_ids, label.source, label.revision) == ("support", ["p1", "p2"], "import", 1)
        events = session.exec(select(LabelEvent.entity, LabelEvent.action).where(LabelEvent.entity == "label")).all()
        assert events == [("label", "create")] * 5
        states = claim_states(session)
        assert sorted(state.value for state in states.values()) == ["agreed", "disputed", "single"]


def test_labels_reimport_is_unchanged_and_other_content_is_refused_unless_update(any_engine, tmp_path):
    import_native(any_engine)
    import_native_labels(any_engine)
    with session_scope(any_engine) as session:
        assert import_labels(session, OPERATOR, TEST_DATA / "labels_native.csv").counts["labels"] == {"new": 0, "unchanged": 5, "updated": 0}
    changed = tmp_path / "labels.csv"
    changed.write_text("claim_id,labeler,label,rationale,passage_ids\nn1-c1,bob,support,Now I see April.,p1\n", encoding="utf-8")
    before = row_counts(any_engine)
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_labels(session, OPERATOR, changed)
    assert str(caught.value) == (
        f"{changed}, line 2, field 'label': bob already labeled claim 'n1-c1' with another label, rationale: "
        "label 'contradict' in the database, 'support' in this file; rationale 'I read 2023, not 2024.' in the database, "
        "'Now I see April.' in this file. Import with --update to replace the stored label (revision + 1; an adjudicated "
        "claim then becomes stale)")
    assert row_counts(any_engine) == before
    with session_scope(any_engine) as session:
        report = import_labels(session, OPERATOR, changed, update=True)
    assert report.counts["labels"] == {"new": 0, "unchanged": 0, "updated": 1}
    with session_scope(any_engine) as session:
        label = session.exec(select(Label).join(User, User.id == Label.labeler_pk).where(User.name == "bob",
                             Label.claim_pk == claim_pk(session, "n1-c1"))).one()
        assert (label.value, label.revision) == ("support", 2)
        event = session.exec(select(LabelEvent).where(LabelEvent.entity == "label", LabelEvent.action == "update")).one()
        assert (event.before["value"], event.after["value"], event.after["revision"]) == ("contradict", "support", 2)


@pytest.mark.parametrize("name, line, field, problem", [
    ("labels_unknown_label.csv", 3, "label", "unknown label 'supports'"),
    ("labels_unknown_claim.csv", 3, "claim_id", "no claim with id 'n9-c9'"),
    ("labels_uncited_passage.csv", 2, "passage_ids", "claim 'n1-c1' is not shown with passage 'p2'"),
    ("labels_support_with_severity.csv", 3, "severity", "severity 'leak' is given with the label support, but a supported "
                                                        "claim has no severity. Leave severity empty"),
    ("labels_unclosed_quote.csv", 3, "rationale", 'a quoted field is never closed (a missing "?)'),
])
def test_broken_labels_file_names_line_and_field_and_nothing_lands(any_engine, name, line, field, problem):
    import_native(any_engine)
    before = row_counts(any_engine)
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_labels(session, OPERATOR, TEST_DATA / name)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert problem in str(caught.value)
    assert row_counts(any_engine) == before


def test_claim_id_in_two_datasets_asks_for_the_dataset(engine):
    import_native(engine)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl", dataset="copy")
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_labels(session, OPERATOR, TEST_DATA / "labels_native.csv")
    assert (caught.value.line, caught.value.field) == (2, "claim_id")
    assert "--dataset" in str(caught.value)
    with session_scope(engine) as session:
        report = import_labels(session, OPERATOR, TEST_DATA / "labels_native.csv", dataset="copy")
    assert report.counts["labels"]["new"] == 5
    with session_scope(engine) as session:
        datasets = session.exec(select(Dataset.name).join(Claim, Claim.dataset_id == Dataset.id)
                                .join(Label, Label.claim_pk == Claim.id).distinct()).all()
        assert datasets == ["copy"]


# ---------------------------------------------------------------- adjudications


def test_adjudication_of_a_disputed_claim_creates_the_adjudicator(any_engine):
    import_native(any_engine)
    import_native_labels(any_engine)
    with session_scope(any_engine) as session:
        report = import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    assert report.counts == {"adjudications": {"new": 1, "unchanged": 0, "updated": 0}}
    assert "Created user carol (role adjudicator, no password: they cannot log in until an admin sets one)" in report.summary_lines()
    with session_scope(any_engine) as session:
        pk = claim_pk(session, "n1-c1")
        assert claim_states(session, claim_pks=[pk])[pk] is State.ADJUDICATED
        assert session.exec(select(User.roles).where(User.name == "carol")).one() == "adjudicator"
        event = session.exec(select(LabelEvent).where(LabelEvent.entity == "adjudication")).one()
        assert (event.claim_pk, event.action, event.after["value"]) == (pk, "create", "support")
    with session_scope(any_engine) as session:
        again = import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    assert again.counts == {"adjudications": {"new": 0, "unchanged": 1, "updated": 0}}


def test_adjudicator_who_labeled_the_claim_is_refused_naming_the_line(any_engine):
    import_native(any_engine)
    import_native_labels(any_engine)
    before = row_counts(any_engine)
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_by_labeler.csv")
    assert (caught.value.line, caught.value.field) == (2, "adjudicator")
    assert "bob labeled claim 'n1-c1' and cannot adjudicate it" in str(caught.value)
    assert row_counts(any_engine) == before


def test_adjudication_of_an_agreed_claim_is_refused_naming_the_state(engine):
    import_native(engine)
    import_native_labels(engine)
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_agreed_claim.csv")
    assert (caught.value.line, caught.value.field) == (2, "claim_id")
    assert "claim 'n1-c2' is agreed; only a disputed or stale claim can be adjudicated" in str(caught.value)


def test_stale_claim_gets_its_adjudication_replaced(engine, tmp_path):
    import_native(engine)
    import_native_labels(engine)
    with session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, _native_with_changed_claim(tmp_path), update=True)
    with session_scope(engine) as session:
        report = import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    assert report.counts["adjudications"] == {"new": 0, "unchanged": 0, "updated": 1}
    with session_scope(engine) as session:
        pk = claim_pk(session, "n1-c1")
        assert claim_states(session, claim_pks=[pk])[pk] is State.ADJUDICATED
        assert session.exec(select(Adjudication.revision)).one() == 2


# ---------------------------------------------------------------- CLIMATE-FEVER


def test_tiny_climate_fever_with_votes_labels_by_slot_and_vote_3_adjudicates_only_disputed(engine):
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", first_votes=2)
    assert report.dataset == "climate-fever"
    assert (report.total("cases"), report.total("claims"), report.total("passages"), report.total("labels")) == (2, 4, 3, 8)
    with session_scope(engine) as session:
        labels = session.exec(select(Claim.claim_id, User.name, Label.value).join(Claim, Claim.id == Label.claim_pk)
                              .join(User, User.id == Label.labeler_pk).where(Claim.claim_id == "t1-1").order_by(User.name)).all()
        assert labels == [("t1-1", "cf-vote-1", "support"), ("t1-1", "cf-vote-2", "insufficient")]  # non-null votes 1, 2
    with session_scope(engine) as session:
        report = import_adjudications(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", vote=3)
    assert report.counts["adjudications"]["new"] == 2  # t1-1 and t2-1; t2-0 is disputed without a third vote
    assert report.skipped == {"not disputed (agreed)": 1, "disputed but no vote 3": 1}
    with session_scope(engine) as session:
        decided = session.exec(select(Claim.claim_id, Adjudication.value).join(Claim, Claim.id == Adjudication.claim_pk)
                               .order_by(Claim.claim_id)).all()
        assert decided == [("t1-1", "contradict"), ("t2-1", "contradict")]


def test_vote_adjudication_by_a_voter_who_labeled_the_claim_is_refused(engine):
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", with_votes=True)
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", vote=3)
    assert (caught.value.line, caught.value.field) == (1, "adjudicator")  # t1-1: slot 3 voted, so cf-vote-3 labeled it
    assert "cf-vote-3 labeled claim 't1-1' and cannot adjudicate it" in str(caught.value)


def _first_two_votes_and_third(path: Path) -> tuple[int, int]:
    """From the file: how many non-null first-two votes there are, and how many evidences are
    disputed on those two votes and have a third non-null vote."""
    n_labels = n_adjudicable = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            for evidence in json.loads(line)["evidences"]:
                cast = [vote for vote in evidence["votes"] if vote is not None]
                n_labels += min(2, len(cast))
                n_adjudicable += len(cast) >= 3 and cast[0] != cast[1]
    return n_labels, n_adjudicable


@pytest.mark.slow
def test_climate_fever_first_two_votes_then_third_vote_adjudicates_disputed_claims(any_engine, tmp_path):
    path = need(CLIMATE_FEVER)
    n_labels, n_adjudicable = _first_two_votes_and_third(path)
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, path, first_votes=2)
    assert (report.total("cases"), report.total("claims"), report.total("labels")) == (1535, 7675, n_labels)
    assert report.created_users == ("cf-vote-1", "cf-vote-2")
    assert report.summary_lines()[0].startswith("Read climate-fever.jsonl as UTF-8 (climate-fever) into dataset 'climate-fever': "
                                          "1,535 cases, 7,675 claims")
    with session_scope(any_engine) as session:
        report = import_adjudications(session, OPERATOR, path, vote=3)
    assert report.counts["adjudications"]["new"] == n_adjudicable
    with session_scope(any_engine) as session:
        states = claim_states(session)
        assert sum(state is State.ADJUDICATED for state in states.values()) == n_adjudicable
        assert sum(state is State.DISPUTED for state in states.values()) == report.skipped["disputed but no vote 3"]


def test_label_by_the_claims_adjudicator_is_refused_naming_the_line(engine, tmp_path):
    import_native(engine)
    import_native_labels(engine)
    with session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    path = tmp_path / "labels.csv"
    path.write_text("claim_id,labeler,label\nn2-c1,carol,support\nn1-c1,carol,support\n", encoding="utf-8")
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_labels(session, OPERATOR, path)
    assert (caught.value.line, caught.value.field) == (3, "labeler")
    assert "carol adjudicated claim 'n1-c1' and cannot also label it" in str(caught.value)


def test_vote_labels_by_a_voter_who_adjudicated_the_claim_are_refused(engine):
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", first_votes=2)
    with session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", vote=3)
    before = row_counts(engine)
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", first_votes=3)
    assert (caught.value.line, caught.value.field) == (1, "votes")
    assert "cf-vote-3 adjudicated claim 't1-1' and cannot also label it" in str(caught.value)
    assert row_counts(engine) == before


# ---------------------------------------------------------------- what a new user ran into


def test_a_case_file_without_a_split_names_line_and_field_and_says_to_add_it(engine):
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_case_without_split.jsonl")
    assert str(caught.value) == (f"{TEST_DATA / 'import_case_without_split.jsonl'}, line 2, field 'split': the case has no "
                                 "'split'. Add \"split\": \"dev\" to the case (one of dev, holdout)")
    assert set(row_counts(engine).values()) == {0}


def test_the_demo_file_still_imports(tmp_path, monkeypatch):
    from annotator.db import init_db
    from tests.conftest import DEMO, need

    monkeypatch.chdir(tmp_path)
    engine = init_db("sqlite://")  # in memory: no file is made
    assert list(tmp_path.iterdir()) == []
    with session_scope(engine) as session:
        report = import_cases(session, OPERATOR, need(DEMO), fmt="jsonl", dataset="demo")
    assert report.total("cases") == 20 and report.warnings == ()


LABEL_CONFLICTS = [
    ("n1-c1,bob,contradict,I read 2024.,p1,", "rationale",
     "rationale 'I read 2023, not 2024.' in the database, 'I read 2024.' in this file"),
    ("n1-c2,alice,support,,p2,", "passage_ids", "passage_ids 'p1; p2' in the database, 'p2' in this file"),
    ("n1-c1,bob,contradict,\"I read 2023, not 2024.\",p1,legal", "severity", "severity empty in the database, 'legal' in this file"),
]


@pytest.mark.parametrize("row, field, shown", LABEL_CONFLICTS)
def test_a_label_stored_with_other_content_is_refused_naming_the_claim_id_and_both_values(engine, tmp_path, row, field, shown):
    import_native(engine)
    import_native_labels(engine)
    path = tmp_path / "labels.csv"
    path.write_text("claim_id,labeler,label,rationale,passage_ids,severity\n" + row + "\n", encoding="utf-8")
    before = row_counts(engine)
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_labels(session, OPERATOR, path)
    claim_id, labeler = row.split(",")[:2]
    assert str(caught.value) == (
        f"{path}, line 2, field '{field}': {labeler} already labeled claim '{claim_id}' with another {field}: {shown}. "
        "Import with --update to replace the stored label (revision + 1; an adjudicated claim then becomes stale)")
    assert row_counts(engine) == before


def test_an_adjudication_stored_with_another_decision_is_refused_unless_update(any_engine, tmp_path):
    import_native(any_engine)
    import_native_labels(any_engine)
    with session_scope(any_engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    path = tmp_path / "adjudications.csv"
    path.write_text("claim_id,adjudicator,label,rationale\nn1-c1,carol,contradict,The handbook is the newer source.\n",
                    encoding="utf-8")
    before = row_counts(any_engine)
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_adjudications(session, OPERATOR, path)
    assert str(caught.value) == (
        f"{path}, line 2, field 'label': claim 'n1-c1' is already adjudicated with another label: label 'support' in the "
        "database, 'contradict' in this file. Import with --update to replace the stored decision (revision + 1)")
    assert row_counts(any_engine) == before
    with session_scope(any_engine) as session:
        report = import_adjudications(session, OPERATOR, path, update=True)
    assert report.counts["adjudications"] == {"new": 0, "unchanged": 0, "updated": 1}
    with session_scope(any_engine) as session:
        pk = claim_pk(session, "n1-c1")
        assert claim_states(session, claim_pks=[pk])[pk] is State.ADJUDICATED
        assert session.exec(select(Adjudication.value, Adjudication.revision)).one() == ("contradict", 2)
        event = session.exec(select(LabelEvent).where(LabelEvent.entity == "adjudication", LabelEvent.action == "update")).one()
        assert (event.before["value"], event.after["value"], event.after["revision"]) == ("support", "contradict", 2)


def test_an_adjudication_by_another_adjudicator_of_a_decided_claim_names_the_adjudicator(engine, tmp_path):
    import_native(engine)
    import_native_labels(engine)
    with session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv")
    path = tmp_path / "adjudications.csv"
    path.write_text("claim_id,adjudicator,label,rationale\nn1-c1,dave,support,The handbook is the newer source.\n",
                    encoding="utf-8")
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_adjudications(session, OPERATOR, path)
    assert (caught.value.line, caught.value.field) == (2, "adjudicator")
    assert "claim 'n1-c1' is already adjudicated with another adjudicator: adjudicator 'carol' in the database, 'dave' in this file" \
        in str(caught.value)


def test_an_adjudication_with_a_severity_on_support_is_refused_and_nothing_lands(engine):
    import_native(engine)
    import_native_labels(engine)
    before = row_counts(engine)
    path = TEST_DATA / "adjudications_support_with_severity.csv"
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_adjudications(session, OPERATOR, path)
    assert str(caught.value) == (f"{path}, line 2, field 'severity': severity 'legal' is given with the label support, but a "
                                 "supported claim has no severity. Leave severity empty, or choose the label contradict or insufficient")
    assert row_counts(engine) == before


def test_a_labels_import_that_gives_an_existing_person_the_labeler_role_says_so(engine, tmp_path):
    import_native(engine)
    with session_scope(engine) as session:
        session.add(User(name="mika", roles="adjudicator"))
    path = tmp_path / "labels.csv"
    path.write_text("claim_id,labeler,label\nn2-c1,mika,support\nn2-c1,alice,support\n", encoding="utf-8")
    with session_scope(engine) as session:
        report = import_labels(session, OPERATOR, path)
    assert (report.created_users, report.given_role_users, report.given_role) == (("alice",), ("mika",), "labeler")
    assert report.summary_lines()[2:] == [
        "Created user alice (role labeler, no password: they cannot log in until an admin sets one)",
        "Gave role labeler to mika (an existing user, who keeps their other roles)",
    ]
    with session_scope(engine) as session:
        assert session.exec(select(User.roles).where(User.name == "mika")).one() == "labeler,adjudicator"
    with session_scope(engine) as session:
        again = import_labels(session, OPERATOR, path)
    assert again.given_role_users == () and not any(line.startswith("Gave role") for line in again.summary_lines())


def test_an_adjudications_import_that_gives_a_labeler_the_adjudicator_role_says_so(engine, tmp_path):
    import_native(engine)
    import_native_labels(engine)
    with session_scope(engine) as session:
        session.add(User(name="ren", roles="labeler"))
    path = tmp_path / "adjudications.csv"
    path.write_text("claim_id,adjudicator,label\nn1-c1,ren,support\n", encoding="utf-8")
    with session_scope(engine) as session:
        report = import_adjudications(session, OPERATOR, path)
    assert report.summary_lines()[-1] == "Gave role adjudicator to ren (an existing user, who keeps their other roles)"


@pytest.mark.parametrize("name, problem", [
    ("   ", "the dataset name '   ' is blank: give a name (e.g. --dataset pilot), or leave --dataset out to use the default"),
    ("", "the dataset name '' is blank: give a name (e.g. --dataset pilot), or leave --dataset out to use the default"),
    (" pilot", "the dataset name ' pilot' has spaces around it: use --dataset 'pilot'"),
    ("pilot\t", "the dataset name 'pilot\\t' has spaces around it: use --dataset 'pilot'"),
])
def test_a_blank_or_space_padded_dataset_name_is_refused_and_nothing_lands(engine, name, problem):
    for run in (lambda session: import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl", dataset=name),
                lambda session: import_labels(session, OPERATOR, TEST_DATA / "labels_native.csv", dataset=name),
                lambda session: import_adjudications(session, OPERATOR, TEST_DATA / "adjudications_native.csv", dataset=name)):
        with pytest.raises(InvalidValueError) as caught, session_scope(engine) as session:
            run(session)
        assert str(caught.value) == problem
    assert set(row_counts(engine).values()) == {0}


@pytest.mark.parametrize("target, problem", [
    ("folder", "{path} is a folder, not a file: name the file to import, inside that folder"),
    ("/dev/null", "{path} is not a regular file (a device, pipe or socket): save the data to a file and import that file"),
    ("empty", "{path} is empty (0 bytes): export the data again, or name another file"),
    ("utf16", "{path}: UTF-16 is not supported: save the file as UTF-8 (Excel: 'CSV UTF-8') and import again"),
])
def test_a_path_that_is_not_a_usable_file_says_what_it_is_and_nothing_lands(engine, tmp_path, target, problem):
    path = {"folder": tmp_path, "/dev/null": Path("/dev/null"), "empty": tmp_path / "empty.csv",
            "utf16": TEST_DATA / "import_utf16.csv"}[target]
    if target == "empty":
        path.write_bytes(b"")
    for run in (import_cases, import_labels, import_adjudications):
        with pytest.raises(ImportFileError) as caught, session_scope(engine) as session:
            run(session, OPERATOR, path)
        assert str(caught.value) == problem.format(path=path)
    assert set(row_counts(engine).values()) == {0}


# ---------------------------------------------------------------- --partial: labels and adjudications

LABELS_ONE_BAD = {
    # file name -> (content, bad line, the refusal after "{path}, line N")
    "labels.csv": ("claim_id,labeler,label,rationale,passage_ids\n"
                   "n1-c1,alice,support,The handbook says April 2024.,p1\n"
                   "n1-c1,bob,maybe,,p1\n"
                   "n1-c2,alice,support,,p1; p2\n",
                   3, ", field 'label': unknown label 'maybe'. Use one of: support, contradict, insufficient"),
    "labels.jsonl": ('{"claim_id": "n1-c1", "labeler": "alice", "label": "support", "passage_ids": ["p1"]}\n'
                     '{"claim_id": "n9-c9", "labeler": "bob", "label": "support"}\n'
                     '{"claim_id": "n1-c2", "labeler": "alice", "label": "support", "passage_ids": ["p1", "p2"]}\n',
                     2, ", field 'claim_id': no claim with id 'n9-c9'. Import the claim's case first, or fix the id"),
}


@pytest.mark.parametrize("name", list(LABELS_ONE_BAD))
def test_a_labels_file_with_one_bad_line_is_refused_whole_and_nothing_lands(engine, tmp_path, name):
    content, line, problem = LABELS_ONE_BAD[name]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    import_native(engine)
    before = row_counts(engine)
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_labels(session, OPERATOR, path)
    assert str(caught.value) == f"{path}, line {line}{problem}"
    assert row_counts(engine) == before


@pytest.mark.parametrize("name", list(LABELS_ONE_BAD))
def test_a_partial_labels_import_lands_the_good_lines_and_lists_the_bad_one(any_engine, tmp_path, name):
    content, line, problem = LABELS_ONE_BAD[name]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    import_native(any_engine)
    with session_scope(any_engine) as session:
        report = import_labels(session, OPERATOR, path, partial=True)
    assert report.counts == {"labels": {"new": 2, "unchanged": 0, "updated": 0}}
    assert report.created_users == ("alice",)
    assert [(s.line, s.field) for s in report.skipped_lines] == [(line, problem.split("'")[1])]
    assert report.summary_lines()[-2:] == ["Skipped 1 bad line (--partial):", f"  {path}, line {line}{problem}"]
    with session_scope(any_engine) as session:
        stored = session.exec(select(Claim.claim_id, User.name, Label.value).join(Claim, Claim.id == Label.claim_pk)
                              .join(User, User.id == Label.labeler_pk).order_by(Claim.claim_id)).all()
    assert stored == [("n1-c1", "alice", "support"), ("n1-c2", "alice", "support")]
    with session_scope(any_engine) as session:  # again: the good lines are unchanged, the bad one listed again
        again = import_labels(session, OPERATOR, path, partial=True)
    assert again.counts == {"labels": {"new": 0, "unchanged": 2, "updated": 0}}
    assert again.skipped_lines == report.skipped_lines


ADJUDICATIONS_ONE_BAD = {
    # file name -> (content, bad line, the refusal after "{path}, line N"); n1-c1 is disputed, n1-c2 agreed
    "adjudications.csv": ("claim_id,adjudicator,label,rationale\n"
                          "n1-c2,carol,support,Agreed anyway.\n"
                          "n1-c1,carol,support,The handbook is the newer source.\n",
                          2, ", field 'claim_id': claim 'n1-c2' is agreed; only a disputed or stale claim can be "
                          "adjudicated. Remove the line, or check the claim id"),
    "adjudications.jsonl": ('{"claim_id": "n1-c1", "adjudicator": "carol", "label": "support"}\n'
                            '{"claim_id": "n1-c2", "adjudicator": "carol", "label": "support",}\n',
                            2, ": not valid JSON: "
                            + json_says('{"claim_id": "n1-c2", "adjudicator": "carol", "label": "support",}') + ". "
                            'Write each record as one JSON object on one line, e.g. {"case_id": "c1", ...}'),
}


@pytest.mark.parametrize("name", list(ADJUDICATIONS_ONE_BAD))
def test_an_adjudications_file_with_one_bad_line_is_refused_whole_and_nothing_lands(engine, tmp_path, name):
    content, line, problem = ADJUDICATIONS_ONE_BAD[name]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    import_native(engine)
    import_native_labels(engine)
    before = row_counts(engine)
    with pytest.raises(ImportRowError) as caught, session_scope(engine) as session:
        import_adjudications(session, OPERATOR, path)
    assert str(caught.value) == f"{path}, line {line}{problem}"
    assert row_counts(engine) == before


@pytest.mark.parametrize("name", list(ADJUDICATIONS_ONE_BAD))
def test_a_partial_adjudications_import_lands_the_good_lines_and_lists_the_bad_one(any_engine, tmp_path, name):
    content, line, problem = ADJUDICATIONS_ONE_BAD[name]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    import_native(any_engine)
    import_native_labels(any_engine)
    with session_scope(any_engine) as session:
        report = import_adjudications(session, OPERATOR, path, partial=True)
    assert report.counts == {"adjudications": {"new": 1, "unchanged": 0, "updated": 0}}
    assert report.summary_lines()[-2:] == ["Skipped 1 bad line (--partial):", f"  {path}, line {line}{problem}"]
    with session_scope(any_engine) as session:
        pk = claim_pk(session, "n1-c1")
        assert claim_states(session, claim_pks=[pk])[pk] is State.ADJUDICATED
        assert session.exec(select(Adjudication.claim_pk)).all() == [pk]


def test_partial_does_not_go_with_vote_adjudications(engine):
    with pytest.raises(InvalidValueError) as caught, session_scope(engine) as session:
        import_adjudications(session, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", vote=3, partial=True)
    assert str(caught.value) == "--partial works with a CSV or JSONL file of adjudications, not with --vote"


def test_labels_are_streamed_in_chunks_across_which_repeats_and_people_carry(engine, tmp_path, monkeypatch):
    """CHUNK_ROWS = 2: the repeat on line 4 of line 2 is dropped, alice is created once."""
    from annotator.services.imports import rows

    monkeypatch.setattr(rows, "CHUNK_ROWS", 2)
    content, _line, _problem = LABELS_ONE_BAD["labels.csv"]
    lines = content.splitlines()
    path = tmp_path / "labels.csv"
    path.write_text("\n".join([lines[0], lines[1], lines[3], lines[1], "n2-c1,bob,insufficient,,"]) + "\n", encoding="utf-8")
    import_native(engine)
    with session_scope(engine) as session:
        report = import_labels(session, OPERATOR, path)
    assert report.counts == {"labels": {"new": 3, "unchanged": 0, "updated": 0}}
    assert report.created_users == ("alice", "bob")


def run_cli(*args: str, cwd: Path):  # noqa: ANN201 - a CompletedProcess
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "annotator", *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", timeout=120)


@pytest.mark.parametrize("command, name", [("labels", "labels.csv"), ("adjudications", "adjudications.csv")])
def test_cli_labels_and_adjudications_import_partial_print_the_skipped_line_as_annotator_import(tmp_path, command, name):
    content, line, problem = (LABELS_ONE_BAD | ADJUDICATIONS_ONE_BAD)[name]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'a.db'}"
    assert run_cli("import", str(TEST_DATA / "import_native.jsonl"), "--db", db, cwd=tmp_path).returncode == 0
    if command == "adjudications":
        assert run_cli("labels", "import", str(TEST_DATA / "labels_native.csv"), "--db", db, cwd=tmp_path).returncode == 0
    done = run_cli(command, "import", str(path), "--db", db, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: {path}, line {line}{problem}\n")
    done = run_cli(command, "import", str(path), "--partial", "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == f"  {command}: {2 if command == 'labels' else 1} new, 0 unchanged, 0 updated"
    assert done.stdout.splitlines()[-2:] == ["Skipped 1 bad line (--partial):", f"  {path}, line {line}{problem}"]


def _native_with_changed_texts(tmp_path: Path, case_ids: tuple[str, ...]) -> Path:
    """import_native.jsonl's cases, the first claim of each case in `case_ids` with another text."""
    records = {}
    for line in (TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["case_id"]] = record
    for case_id in case_ids:
        records[case_id]["claims"][0]["text"] += " (revised)"
    path = tmp_path / "revised.jsonl"
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records.values()), encoding="utf-8")
    return path


@pytest.mark.parametrize("case_ids, line", [
    (("n1", "n2"), "Marked 3 labels for review: made before their claims' text or passages changed, they are back in "
                   "their labelers' queues (Label page) to be saved again; a claim with two or more labels is stale until "
                   "each label to review is saved again or an adjudicator decides the claim (a claim with one label "
                   "stays single)"),
    (("n2",), "Marked 1 label for review: made before its claim's text or passages changed, it is back in its labeler's "
              "queue (Label page) to be saved again; a claim with two or more labels is stale until each label to review "
              "is saved again or an adjudicator decides the claim (a claim with one label stays single)"),
])
def test_update_says_truly_which_claims_labels_to_review_make_stale(any_engine, tmp_path, case_ids, line):
    """n1-c1 has two labels (alice, bob): stale after its text changes; n2-c1 one (alice): single."""
    import_native(any_engine)
    import_native_labels(any_engine)
    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, _native_with_changed_texts(tmp_path, case_ids), update=True)
    assert line in report.summary_lines()
    with session_scope(any_engine) as session:
        states = {claim_id: claim_states(session, claim_pks=[claim_pk(session, claim_id)])[claim_pk(session, claim_id)]
                  for claim_id in ("n1-c1", "n2-c1")}
    assert states == {"n1-c1": State.STALE if "n1" in case_ids else State.DISPUTED, "n2-c1": State.SINGLE}


@pytest.mark.parametrize("change, noun, key", [("claim", "claim", "n1-c1"), ("case", "case", "n1")])
def test_a_refusal_without_update_says_when_the_stored_version_was_written_not_first_imported(any_engine, tmp_path,
                                                                                              change, noun, key):
    import_native(any_engine)
    long_ago = datetime(2020, 1, 2, 3, 4, tzinfo=UTC)
    with session_scope(any_engine) as session:
        for model in (Case, Claim):
            for row in session.exec(select(model)).all():
                row.created_at = row.updated_at = long_ago
                session.add(row)
    record = json.loads((TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines()[0])
    if change == "claim":
        record["claims"][0]["text"] = "The travel policy was updated in May 2024."
    else:
        record["question"] = "When was the travel policy last updated?"
    path = tmp_path / "changed.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, path, update=True)
    with session_scope(any_engine) as session:
        model, id_column = (Claim, Claim.claim_id) if change == "claim" else (Case, Case.case_id)
        written = session.exec(select(model.updated_at).where(id_column == key)).one()
    assert written > long_ago
    with pytest.raises(ImportRowError) as caught, session_scope(any_engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    assert f"{noun} '{key}' is already in dataset 'default' (stored version written {written:%Y-%m-%d %H:%M} UTC) " \
        "with another " in str(caught.value)
    assert "2020-01-02" not in str(caught.value)


# ------------------------------------------------------------------ two imports at the same time


@pytest.mark.postgres
def test_a_second_import_of_the_same_cases_at_the_same_time_is_refused_clearly_and_writes_nothing(postgres_url):
    import threading
    import time

    from sqlmodel import func, select

    from annotator.db import init_db, session_scope
    from annotator.errors import ConcurrentImportError
    from annotator.models import Case, Claim, Dataset
    from annotator.services.access import OPERATOR
    from annotator.services.imports import import_cases
    from tests.conftest import DEMO

    engine = init_db(postgres_url)
    first_done, outcome = threading.Event(), {}

    def first() -> None:  # imports, then holds its transaction open while the second starts
        with session_scope(engine) as session:
            import_cases(session, OPERATOR, DEMO, fmt="jsonl")
            first_done.set()
            time.sleep(1.5)

    def second() -> None:
        first_done.wait()
        try:
            with session_scope(engine) as session:
                outcome["report"] = import_cases(session, OPERATOR, DEMO, fmt="jsonl")
        except Exception as error:  # noqa: BLE001 - the test looks at what came out
            outcome["error"] = error

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert isinstance(outcome.get("error"), ConcurrentImportError), outcome
    assert str(outcome["error"]) == ("another import of these cases ran at the same time; nothing was imported; "
                                     "run it again")
    with session_scope(engine) as session:  # the first import, whole; nothing of the second
        assert session.exec(select(func.count()).select_from(Dataset)).one() == 1
        assert session.exec(select(func.count()).select_from(Case)).one() == 20
        claims = session.exec(select(func.count()).select_from(Claim)).one()
    with session_scope(engine) as session:  # run again: now a harmless repeat
        again = import_cases(session, OPERATOR, DEMO, fmt="jsonl")
    assert again.counts["claims"] == {"new": 0, "unchanged": claims, "updated": 0}
    engine.dispose()
