"""A claim's history (services/history.py) and the audit trail behind it.

Every write path (labels, adjudications, holds, assignments, users, releases, imports with and
without --update) records exactly one event per write with the right before and after; only
admins read a claim's history; the Admin page shows it, with the labelers' names, to admins only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import func, select
from streamlit.testing.v1 import AppTest

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.services.access import OPERATOR
from annotator.errors import AmbiguousIdError, NotFoundError, PermissionDeniedError
from annotator.models import Case, Claim, ClaimPassage, Dataset, Label, LabelEvent, Passage, User
from annotator.services.adjudication import adjudicate
from annotator.services.history import NO_ACTOR, claim_datasets, claim_history_view
from annotator.services.imports import import_adjudications, import_cases, import_labels
from annotator.services.labeling import assign_cases, lift_hold, lift_holds, put_on_hold, save_label
from annotator.services.releases import create_release
from annotator.services.users import add_user, ensure_user, get_user, set_active, set_password, set_roles
from tests.conftest import TEST_DATA, decision_button
from tests.factories import PASSWORD, make_dataset, make_team, pilot
from tests.test_ui_app import APP, _seed, has_word, label_queue, open_app, page_dump

ADMIN_PAGE = Path(APP).parent / "views" / "admin.py"


# --- helpers ---------------------------------------------------------------------------------------


def writes(engine, action) -> list[dict]:  # noqa: ANN001 - an Engine, a callable(Session)
    """Run `action(session)` in one transaction; return the events it appended, oldest first."""
    with session_scope(engine) as session:
        since = session.exec(select(func.max(LabelEvent.id))).one() or 0
    with session_scope(engine) as session:
        action(session)
    with session_scope(engine) as session:
        query = select(LabelEvent).where(LabelEvent.id > since).order_by(LabelEvent.id)
        return [event.model_dump() for event in session.exec(query)]


def kinds(events: list[dict]) -> list[tuple[str, str]]:
    return [(event["entity"], event["action"]) for event in events]


def claim_of(session, claim_id: str, dataset: str | None = None) -> Claim:  # noqa: ANN001
    query = select(Claim).where(Claim.claim_id == claim_id)
    if dataset is not None:
        query = query.join(Dataset, Dataset.id == Claim.dataset_id).where(Dataset.name == dataset)
    return session.exec(query).one()


def pk_of(session, model, **where) -> int:  # noqa: ANN001
    query = select(model.id)
    for column, value in where.items():
        query = query.where(getattr(model, column) == value)
    return session.exec(query).one()


@pytest.fixture
def team_db(any_engine):
    """Three cases of two claims (case-1-c1 ...) assigned to alice and bob; carol adjudicates,
    root is the admin."""
    with session_scope(any_engine) as session:
        pilot(session)
    return any_engine


@pytest.fixture
def imported_db(any_engine):
    """tests/data/import_native.jsonl imported (claims n1-c1, n1-c2, n2-c1 in dataset 'default')."""
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, TEST_DATA / "import_native.jsonl")
    return any_engine


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _native_changed(tmp_path: Path, change) -> Path:  # noqa: ANN001 - callable(list of records)
    """import_native.jsonl (its two cases n1, n2, without the file's harmless repeat of n1), with
    `change` applied to the records."""
    by_id: dict[str, dict] = {}
    for line in (TEST_DATA / "import_native.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            by_id.setdefault(json.loads(line)["case_id"], json.loads(line))
    records = list(by_id.values())
    change(records)
    return _write(tmp_path, "changed.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")


# --- every write path records exactly one event per write -----------------------------------------


def test_save_label_records_one_create_one_revision_and_nothing_for_a_repeated_click(team_db):
    with session_scope(team_db) as s:
        alice, claim_pk = get_user(s, "alice").id, claim_of(s, "case-1-c1").id

    created = writes(team_db, lambda s: save_label(s, get_user(s, "alice"), claim_pk, "support",
                                                   passage_ids=["pilot-p1-1"], rationale="p1 says so"))
    assert kinds(created) == [("label", "create")]
    assert (created[0]["actor_pk"], created[0]["claim_pk"], created[0]["before"]) == (alice, claim_pk, None)
    assert created[0]["after"] == {"value": "support", "passage_ids": ["pilot-p1-1"], "rationale": "p1 says so",
                                   "severity": None, "guideline_version": "", "revision": 1}

    repeated = writes(team_db, lambda s: save_label(s, get_user(s, "alice"), claim_pk, "support",
                                                    passage_ids=["pilot-p1-1"], rationale="p1 says so", expected_revision=1))
    assert repeated == []

    revised = writes(team_db, lambda s: save_label(s, get_user(s, "alice"), claim_pk, "contradict", severity="legal",
                                                   rationale="p2 disagrees", expected_revision=1))
    assert kinds(revised) == [("label", "update")]
    assert revised[0]["entity_pk"] == created[0]["entity_pk"]
    assert revised[0]["before"] == created[0]["after"]
    assert revised[0]["after"] == {"value": "contradict", "passage_ids": [], "rationale": "p2 disagrees",
                                   "severity": "legal", "guideline_version": "", "revision": 2}


def test_labels_import_records_one_event_per_label_and_update_one_per_changed_label(imported_db, tmp_path):
    created = writes(imported_db, lambda s: import_labels(s, OPERATOR, TEST_DATA / "labels_native.csv"))
    assert kinds(created) == [("user", "create")] * 2 + [("label", "create")] * 5  # alice, bob; 5 rows
    with session_scope(imported_db) as s:
        labels = {(claim_pk, name): pk for pk, claim_pk, name in s.exec(
            select(Label.id, Label.claim_pk, User.name).join(User, User.id == Label.labeler_pk))}
        n1_c1 = claim_of(s, "n1-c1").id
    assert sorted((e["claim_pk"], e["after"]["labeler"]) for e in created[2:]) == sorted(labels)
    assert all(labels[e["claim_pk"], e["after"]["labeler"]] == e["entity_pk"] for e in created[2:])
    assert all(e["actor_pk"] is None and e["before"] is None for e in created)
    assert created[2]["after"] == {"labeler": "alice", "value": "support", "rationale": "The handbook says April 2024.",
                                   "passage_ids": ["p1"], "severity": None, "revision": 1, "source": "import"}

    assert writes(imported_db, lambda s: import_labels(s, OPERATOR, TEST_DATA / "labels_native.csv")) == []

    changed = _write(tmp_path, "labels.csv", "claim_id,labeler,label,rationale,passage_ids\n"
                                             "n1-c1,alice,contradict,Read it again.,p1\n")
    updated = writes(imported_db, lambda s: import_labels(s, OPERATOR, changed, update=True))
    assert kinds(updated) == [("label", "update")]
    assert (updated[0]["entity_pk"], updated[0]["claim_pk"], updated[0]["actor_pk"]) == (labels[n1_c1, "alice"], n1_c1, None)
    assert updated[0]["before"] == {"labeler": "alice", "value": "support", "rationale": "The handbook says April 2024.",
                                    "passage_ids": ["p1"], "severity": None, "revision": 1}
    assert updated[0]["after"] == {"labeler": "alice", "value": "contradict", "rationale": "Read it again.",
                                   "passage_ids": ["p1"], "severity": None, "revision": 2, "source": "import"}


def test_climate_fever_vote_labels_record_one_event_per_vote(any_engine):
    events = writes(any_engine, lambda s: import_cases(s, OPERATOR, TEST_DATA / "import_climate_fever_tiny.jsonl", first_votes=2))
    with session_scope(any_engine) as s:
        n_labels = s.exec(select(func.count()).select_from(Label)).one()
    assert n_labels == 8
    assert kinds(events) == [("user", "create")] * 2 + [("label", "create")] * n_labels


def test_adjudicate_records_one_decision_and_one_revision(team_db):
    with session_scope(team_db) as s:
        claim_pk = claim_of(s, "case-1-c1").id
        save_label(s, get_user(s, "alice"), claim_pk, "support")
        save_label(s, get_user(s, "bob"), claim_pk, "contradict")
        carol = get_user(s, "carol").id

    decided = writes(team_db, lambda s: adjudicate(s, get_user(s, "carol"), claim_pk, "contradict", rationale="p2 rules"))
    assert kinds(decided) == [("adjudication", "create")]
    assert (decided[0]["actor_pk"], decided[0]["claim_pk"], decided[0]["before"]) == (carol, claim_pk, None)
    assert decided[0]["after"] == {"adjudicator": "carol", "value": "contradict", "rationale": "p2 rules",
                                   "severity": None, "revision": 1}

    revised = writes(team_db, lambda s: adjudicate(s, get_user(s, "carol"), claim_pk, "insufficient",
                                                   rationale="neither passage says", expected_revision=1))
    assert kinds(revised) == [("adjudication", "update")]
    assert revised[0]["before"] == decided[0]["after"]
    assert revised[0]["after"] == {"adjudicator": "carol", "value": "insufficient", "rationale": "neither passage says",
                                   "severity": None, "revision": 2}


def test_adjudications_import_records_one_event_per_decision_and_update_one_per_replaced(imported_db, tmp_path):
    with session_scope(imported_db) as s:
        import_labels(s, OPERATOR, TEST_DATA / "labels_native.csv")  # n1-c1 disputed
        n1_c1 = claim_of(s, "n1-c1").id
    created = writes(imported_db, lambda s: import_adjudications(s, OPERATOR, TEST_DATA / "adjudications_native.csv"))
    assert kinds(created) == [("user", "create"), ("adjudication", "create")]  # carol, her decision
    assert (created[1]["claim_pk"], created[1]["actor_pk"], created[1]["before"]) == (n1_c1, None, None)
    assert created[1]["after"] == {"adjudicator": "carol", "value": "support", "rationale": "The handbook is the newer source.",
                                   "severity": None, "revision": 1}

    assert writes(imported_db, lambda s: import_adjudications(s, OPERATOR, TEST_DATA / "adjudications_native.csv")) == []

    other = _write(tmp_path, "adjudications.csv", "claim_id,adjudicator,label,rationale\nn1-c1,carol,contradict,Second look.\n")
    replaced = writes(imported_db, lambda s: import_adjudications(s, OPERATOR, other, update=True))
    assert kinds(replaced) == [("adjudication", "update")]
    assert replaced[0]["entity_pk"] == created[1]["entity_pk"]
    assert replaced[0]["before"] == created[1]["after"]
    assert replaced[0]["after"] == {"adjudicator": "carol", "value": "contradict", "rationale": "Second look.",
                                    "severity": None, "revision": 2}


def test_a_hold_records_one_event_when_placed_and_one_when_lifted_and_nothing_when_repeated(team_db):
    with session_scope(team_db) as s:
        case_pk, alice = pk_of(s, Case, case_id="case-1"), get_user(s, "alice").id
    placed = writes(team_db, lambda s: put_on_hold(s, get_user(s, "alice"), case_pk, "missing_logs", " no logs "))
    assert kinds(placed) == [("hold", "create")]
    assert (placed[0]["actor_pk"], placed[0]["claim_pk"], placed[0]["before"]) == (alice, None, None)
    assert placed[0]["after"] == {"case_pk": case_pk, "reason": "missing_logs", "note": "no logs"}
    assert writes(team_db, lambda s: put_on_hold(s, get_user(s, "alice"), case_pk, "gold_undetermined")) == []

    lifted = writes(team_db, lambda s: lift_holds(s, get_user(s, "root"), case_pk))
    assert kinds(lifted) == [("hold", "update")]
    assert lifted[0]["entity_pk"] == placed[0]["entity_pk"]
    what = {"case_pk": case_pk, "reason": "missing_logs"}
    assert (lifted[0]["before"], lifted[0]["after"]) == ({**what, "lifted": False}, {**what, "lifted": True})
    assert writes(team_db, lambda s: lift_holds(s, get_user(s, "root"), case_pk)) == []
    assert writes(team_db, lambda s: lift_hold(s, get_user(s, "alice"), case_pk)) == []


def test_assigning_records_one_event_per_new_assignment_and_nothing_for_existing_ones(any_engine):
    with session_scope(any_engine) as s:
        make_dataset(s)
        make_team(s)
        cases = [pk_of(s, Case, case_id="case-1"), pk_of(s, Case, case_id="case-2")]
        root = get_user(s, "root").id
    events = writes(any_engine, lambda s: assign_cases(s, s.get(User, root), cases, ["alice", "bob"]))
    assert kinds(events) == [("assignment", "create")] * 4
    assert [e["after"] for e in events] == [{"case_pk": case_pk, "labeler": name} for case_pk in cases for name in ("alice", "bob")]
    assert all(e["actor_pk"] == root and e["before"] is None and e["claim_pk"] is None for e in events)
    assert writes(any_engine, lambda s: assign_cases(s, s.get(User, root), cases, ["alice", "bob"])) == []


def test_user_writes_record_one_event_each_without_any_password_or_hash(any_engine):
    with session_scope(any_engine) as s:
        root = add_user(s, OPERATOR, "root", ["admin"], PASSWORD).id
    added = writes(any_engine, lambda s: add_user(s, s.get(User, root), "dana", ["labeler"], "dana-secret-1"))
    assert kinds(added) == [("user", "create")]
    assert added[0]["after"] == {"name": "dana", "roles": "labeler", "active": True, "has_password": True}

    roles = writes(any_engine, lambda s: set_roles(s, s.get(User, root), get_user(s, "dana"), ["labeler", "adjudicator"]))
    assert kinds(roles) == [("user", "update")]
    assert (roles[0]["before"]["roles"], roles[0]["after"]["roles"]) == ("labeler", "labeler,adjudicator")

    disabled = writes(any_engine, lambda s: set_active(s, s.get(User, root), get_user(s, "dana"), False))
    assert kinds(disabled) == [("user", "update")]
    assert (disabled[0]["before"]["active"], disabled[0]["after"]["active"]) == (True, False)

    imported = writes(any_engine, lambda s: ensure_user(s, "erin", "labeler"))
    assert kinds(imported) == [("user", "create")]
    assert imported[0]["after"] == {"name": "erin", "roles": "labeler", "active": True, "has_password": False}
    assert writes(any_engine, lambda s: ensure_user(s, "erin", "labeler")) == []
    given = writes(any_engine, lambda s: ensure_user(s, "erin", "adjudicator"))
    assert kinds(given) == [("user", "update")]
    assert (given[0]["before"]["roles"], given[0]["after"]["roles"]) == ("labeler", "labeler,adjudicator")

    first_password = writes(any_engine, lambda s: set_password(s, s.get(User, root), get_user(s, "erin"), "erin-secret-1"))
    assert kinds(first_password) == [("user", "update")]
    assert (first_password[0]["before"]["has_password"], first_password[0]["after"]["has_password"]) == (False, True)

    with session_scope(any_engine) as s:
        stored = json.dumps([[e.before, e.after] for e in s.exec(select(LabelEvent))])
        hashes = [h for h in s.exec(select(User.password_hash)) if h]
    assert "dana-secret-1" not in stored and "erin-secret-1" not in stored and PASSWORD not in stored
    assert len(hashes) == 3 and not any(h in stored for h in hashes)
    assert "argon2" not in stored


def test_a_password_reset_is_visible_in_its_event(any_engine):
    with session_scope(any_engine) as s:
        add_user(s, OPERATOR, "dana", ["labeler"], "dana-secret-1")
    reset = writes(any_engine, lambda s: set_password(s, OPERATOR, get_user(s, "dana"), "dana-secret-2"))
    assert kinds(reset) == [("user", "update")]
    assert reset[0]["before"] != reset[0]["after"]


def test_create_release_records_one_event(team_db, tmp_path):
    with session_scope(team_db) as s:
        claim_pk = claim_of(s, "case-1-c1").id
        save_label(s, get_user(s, "alice"), claim_pk, "support")
        save_label(s, get_user(s, "bob"), claim_pk, "support")
        root = get_user(s, "root").id
    events = writes(team_db, lambda s: create_release(s, OPERATOR, "gold-v1", only_final=True, out_dir=tmp_path, creator="root",
                                                      n_bootstrap=100))
    assert kinds(events) == [("release", "create")]
    assert (events[0]["actor_pk"], events[0]["claim_pk"]) == (root, None)
    assert events[0]["after"]["name"] == "gold-v1"
    assert events[0]["after"]["counts"]["claims"] == 1
    assert len(events[0]["after"]["manifest_sha256"]) == 64


def test_import_update_records_one_event_per_changed_case_claim_and_claim_shown_with_a_changed_passage(imported_db, tmp_path):
    with session_scope(imported_db) as s:
        n1, n1_c1 = pk_of(s, Case, case_id="n1"), claim_of(s, "n1-c1").id

    def change_case_and_claim(records):  # noqa: ANN001, ANN202
        records[0]["question"] = "When was the travel policy last updated?"
        records[0]["claims"][0]["text"] = "The travel policy was updated in May 2024."

    events = writes(imported_db, lambda s: import_cases(s, OPERATOR, _native_changed(tmp_path, change_case_and_claim), update=True))
    assert kinds(events) == [("case", "update"), ("claim", "update")]
    case_event, claim_event = events
    assert (case_event["entity_pk"], case_event["claim_pk"], case_event["actor_pk"]) == (n1, None, None)
    assert (case_event["before"]["question"], case_event["after"]["question"]) == (
        "When was the travel policy updated?", "When was the travel policy last updated?")
    assert (claim_event["entity_pk"], claim_event["claim_pk"]) == (n1_c1, n1_c1)
    assert claim_event["before"] == {"case_id": "n1", "text": "The travel policy was updated in April 2024.", "passage_ids": ["p1"]}
    assert claim_event["after"] == {"case_id": "n1", "text": "The travel policy was updated in May 2024.", "passage_ids": ["p1"]}

    def change_passage_p1(records):  # noqa: ANN001, ANN202
        change_case_and_claim(records)
        for record in records:
            record["passages"][0]["version"] = "2024-05"

    events = writes(imported_db, lambda s: import_cases(s, OPERATOR, _native_changed(tmp_path, change_passage_p1), update=True))
    with session_scope(imported_db) as s:
        shown_with_p1 = sorted(s.exec(select(ClaimPassage.claim_pk).join(Passage, Passage.id == ClaimPassage.passage_pk)
                                      .where(Passage.passage_id == "p1")))
    assert len(shown_with_p1) == 3
    assert kinds(events) == [("claim", "update")] * 3
    assert sorted(e["claim_pk"] for e in events) == shown_with_p1
    assert all((e["before"]["passage_id"], e["before"]["version"], e["after"]["version"]) == ("p1", "2024-04", "2024-05")
               for e in events)


# --- the history view -------------------------------------------------------------------------------


def _rows(engine, claim_id: str, who: str = "root", dataset: str | None = None) -> list[tuple[str, str, str]]:  # noqa: ANN001
    with session_scope(engine) as s:
        found = claim_history_view(s, get_user(s, who), claim_id, dataset)
    return [(row.who, row.what, row.change) for row in found.rows]


def test_an_admin_reads_a_claims_history_oldest_first_with_its_cases_holds_and_assignments(team_db):
    with session_scope(team_db) as s:
        alice, bob, carol, root = (get_user(s, name) for name in ("alice", "bob", "carol", "root"))
        first, sibling = claim_of(s, "case-1-c1").id, claim_of(s, "case-1-c2").id
        case_1, case_2 = pk_of(s, Case, case_id="case-1"), pk_of(s, Case, case_id="case-2")
        save_label(s, alice, first, "support", passage_ids=["pilot-p1-1"], rationale="p1 says so")
        save_label(s, alice, sibling, "insufficient", rationale="NOT-THIS-CLAIM")
        put_on_hold(s, bob, case_1, "missing_logs", "no retrieval log")
        put_on_hold(s, bob, case_2, "permission_unknown", "NOT-THIS-CASE")
        lift_holds(s, root, case_1)
        save_label(s, alice, first, "contradict", severity="amount_or_deadline", rationale="p2 differs", expected_revision=1)
        save_label(s, bob, first, "support")
        adjudicate(s, carol, first, "contradict", rationale="p2 is newer")
    with session_scope(team_db) as s:
        found = claim_history_view(s, get_user(s, "root"), "case-1-c1")
    assert (found.claim_id, found.dataset, found.case_id, found.text) == ("case-1-c1", "pilot", "case-1", "主張 1-1")
    assert [(row.who, row.what, row.change) for row in found.rows] == [
        (NO_ACTOR, "case assigned", "labeler: alice"),
        (NO_ACTOR, "case assigned", "labeler: bob"),
        ("alice", "label created", 'labeler: alice; value: support; passage ids: pilot-p1-1; rationale: "p1 says so"; revision: 1'),
        ("bob", "case put on hold", 'reason: missing_logs; note: "no retrieval log"'),
        ("root", "case hold lifted", 'reason: missing_logs; note: "no retrieval log"'),
        ("alice", "label revised", 'labeler: alice; value: support -> contradict; passage ids: pilot-p1-1 -> -; '
                                   'rationale: "p1 says so" -> "p2 differs"; severity: - -> amount_or_deadline; revision: 1 -> 2'),
        ("bob", "label created", "labeler: bob; value: support; revision: 1"),
        ("carol", "adjudication decided", 'adjudicator: carol; value: contradict; rationale: "p2 is newer"; revision: 1'),
    ]
    assert [(row.entity, row.action) for row in found.rows][-1] == ("adjudication", "create")
    times = [row.when for row in found.rows]
    assert times == sorted(times) and all(when.endswith("+00:00") and "T" in when for when in times)


@pytest.mark.parametrize("who", ["alice", "carol", "labeler-adjudicator"])
def test_only_an_admin_may_read_a_claims_history(team_db, who):
    with session_scope(team_db) as s:
        add_user(s, OPERATOR, "labeler-adjudicator", ["labeler", "adjudicator"], PASSWORD)
        save_label(s, get_user(s, "alice"), claim_of(s, "case-1-c1").id, "support")
    with session_scope(team_db) as s:
        with pytest.raises(PermissionDeniedError, match="only an admin"):
            claim_history_view(s, get_user(s, who), "case-1-c1")
        with pytest.raises(PermissionDeniedError, match="only an admin"):
            claim_datasets(s, get_user(s, who), "case-1-c1")
        with pytest.raises(PermissionDeniedError):  # checked before the claim is looked up: says nothing about ids
            claim_history_view(s, get_user(s, who), "no-such-claim")
        assert len(claim_history_view(s, get_user(s, "root"), "case-1-c1").rows) == 3


def test_imports_show_as_the_command_line_with_label_claim_passage_and_case_changes(imported_db, tmp_path):
    with session_scope(imported_db) as s:
        import_labels(s, OPERATOR, TEST_DATA / "labels_native.csv")
        import_adjudications(s, OPERATOR, TEST_DATA / "adjudications_native.csv")
        add_user(s, OPERATOR, "root", ["admin"], PASSWORD)
    with session_scope(imported_db) as s:
        import_labels(s, OPERATOR, _write(tmp_path, "labels.csv", "claim_id,labeler,label,rationale,passage_ids\n"
                                                        "n1-c1,bob,support,Read it again.,p1\n"), update=True)

    def change(records):  # noqa: ANN001, ANN202
        records[0]["answer"] = "It was updated in May 2024."
        records[0]["claims"][0]["text"] = "The travel policy was updated in May 2024."
        records[0]["passages"][0]["title"] = "Handbook 2024"
        records[1]["passages"][0]["title"] = "Handbook 2024"

    with session_scope(imported_db) as s:
        import_cases(s, OPERATOR, _native_changed(tmp_path, change), update=True)
    rows = _rows(imported_db, "n1-c1")
    assert {who for who, _what, _change in rows} == {NO_ACTOR}
    assert [(what, change) for _who, what, change in rows] == [
        ("label created", 'labeler: alice; value: support; passage ids: p1; rationale: "The handbook says April 2024."; '
                          "source: import; revision: 1"),
        ("label created", 'labeler: bob; value: contradict; passage ids: p1; rationale: "I read 2023, not 2024."; '
                          "source: import; revision: 1"),
        ("adjudication decided", 'adjudicator: carol; value: support; rationale: "The handbook is the newer source."; revision: 1'),
        ("label revised", 'labeler: bob; value: contradict -> support; rationale: "I read 2023, not 2024." -> "Read it again."; '
                          "source: - -> import; revision: 1 -> 2"),
        ("case changed by import --update", 'answer: "It was updated in April 2024 and approved by 髙橋 of ㈱ Example." '
                                            '-> "It was updated in May 2024."'),
        ("claim changed by import --update", 'text: "The travel policy was updated in April 2024." '
                                             '-> "The travel policy was updated in May 2024."'),
        ("passage changed by import --update", 'passage: p1; title: "Handbook" -> "Handbook 2024"'),
    ]
    assert all("user" not in what for _who, what, _change in rows)  # the users the imports created are not the claim's


def test_a_release_of_the_claim_shows_its_gold_label_and_other_claims_releases_do_not(team_db, tmp_path):
    with session_scope(team_db) as s:
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        for claim_id, (a, b) in {"case-1-c1": ("support", "contradict"), "case-1-c2": ("insufficient", "insufficient")}.items():
            save_label(s, alice, claim_of(s, claim_id).id, a)
            save_label(s, bob, claim_of(s, claim_id).id, b)
    with session_scope(team_db) as s:
        create_release(s, OPERATOR, "gold-v1", only_final=True, out_dir=tmp_path, creator="root", n_bootstrap=100)
        adjudicate(s, get_user(s, "carol"), claim_of(s, "case-1-c1").id, "contradict", rationale="p2 rules")
    with session_scope(team_db) as s:
        create_release(s, OPERATOR, "gold-v2", only_final=True, out_dir=tmp_path, creator="root", n_bootstrap=100)
    assert [(who, change) for who, what, change in _rows(team_db, "case-1-c1") if what == "released in a gold release"] == [
        ("root", "release: gold-v2; gold label: contradict (adjudicated)")]
    assert [(who, change) for who, what, change in _rows(team_db, "case-1-c2") if what == "released in a gold release"] == [
        ("root", "release: gold-v1; gold label: insufficient (agreed)"),
        ("root", "release: gold-v2; gold label: insufficient (agreed)")]


def test_a_claim_id_in_two_datasets_needs_its_dataset_and_shows_only_that_claims_events(any_engine):
    with session_scope(any_engine) as s:
        make_dataset(s, "pilot")
        make_dataset(s, "other")
        make_team(s)
        pilot_case, other_case = (s.exec(select(Case.id).join(Dataset, Dataset.id == Case.dataset_id)
                                         .where(Case.case_id == "case-1", Dataset.name == name)).one() for name in ("pilot", "other"))
        assign_cases(s, OPERATOR, [pilot_case, other_case], ["alice", "bob"])
        save_label(s, get_user(s, "alice"), claim_of(s, "case-1-c1", "pilot").id, "support")
        save_label(s, get_user(s, "bob"), claim_of(s, "case-1-c1", "other").id, "insufficient")
    with session_scope(any_engine) as s:
        root = get_user(s, "root")
        assert claim_datasets(s, root, "case-1-c1") == ["other", "pilot"]
        assert claim_datasets(s, root, "nope") == []
        with pytest.raises(AmbiguousIdError):
            claim_history_view(s, root, "case-1-c1")
        with pytest.raises(NotFoundError):
            claim_history_view(s, root, "nope")
    assert _rows(any_engine, "case-1-c1", dataset="other") == [
        (NO_ACTOR, "case assigned", "labeler: alice"), (NO_ACTOR, "case assigned", "labeler: bob"),
        ("bob", "label created", "labeler: bob; value: insufficient; revision: 1")]
    assert _rows(any_engine, "case-1-c1", dataset="pilot")[-1] == ("alice", "label created", "labeler: alice; value: support; revision: 1")


# --- the Admin page ----------------------------------------------------------------------------------


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    """tests/test_ui_app.py's app database: cases case-1..3 of dataset pilot, users aoi, ren
    (labelers), mika (adjudicator), admin (admin, adjudicator); case-1 and case-2 assigned to aoi
    and ren. The app reads it through DATABASE_URL."""
    url = f"sqlite:///{tmp_path}/a.db"
    engine = init_db(url)
    with session_scope(engine) as session:
        _seed(session)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


MARKDOWN_RATIONALE = "see **p1** :red[now] <b>x</b>"
DECISION_RATIONALE = "p2 states it"


def _label_and_adjudicate() -> None:
    label_queue(open_app("aoi"), 0, rationales={"case-1-c2": MARKDOWN_RATIONALE})
    label_queue(open_app("ren"), 1)
    mika = open_app("mika")
    mika.text_area(key=f"adjudicate.rationale.{mika.session_state['adjudicate.claim_pk']}").input(DECISION_RATIONALE)
    decision_button(mika, "contradict").click().run()
    assert [t.value for t in mika.toast] == ["Decided contradict on claim case-1-c2."]


def _unescaped(text: str) -> str:
    """A table cell as the browser shows it: the page backslash-escapes Markdown in its cells."""
    return re.sub(r"\\(.)", r"\1", text)


def _history_table(at: AppTest):  # noqa: ANN202 - a DataFrame
    """The history table's cells as shown."""
    tables = [table.value for table in at.table if list(table.value.columns) == ["When (UTC)", "Who", "What", "Change (before -> after)"]]
    assert len(tables) == 1
    return tables[0].map(_unescaped)


def test_an_admin_sees_the_history_of_a_labeled_adjudicated_claim_with_the_labelers_names(app_db):
    _label_and_adjudicate()
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.text_input(key="admin.history_claim").input("case-1-c2").run()
    assert not at.exception and [e.value for e in at.error] == []
    assert at.query_params["history"] == "case-1-c2"  # the address now links to this history
    table = _history_table(at)
    assert list(zip(table["Who"], table["What"], strict=True)) == [
        (NO_ACTOR, "case assigned"), (NO_ACTOR, "case assigned"),
        ("aoi", "label created"), ("ren", "label created"), ("mika", "adjudication decided")]
    assert list(table["Change (before -> after)"])[2:] == [
        f'labeler: aoi; value: support; rationale: "{MARKDOWN_RATIONALE}"; revision: 1',
        "labeler: ren; value: contradict; revision: 1",
        f'adjudicator: mika; value: contradict; rationale: "{DECISION_RATIONALE}"; revision: 1']
    raw = next(t.value for t in at.table)["Change (before -> after)"][2]  # Markdown in a rationale is shown as typed
    assert r"\*\*p1\*\* \:red\[now\] \<b\>x\</b\>" in raw
    assert "**Claim case-1-c2 · case case-1 · dataset pilot**" in [_unescaped(m.value) for m in at.markdown]


def test_a_history_link_opens_the_claim_and_an_unknown_id_says_so(app_db):
    _label_and_adjudicate()
    at = open_app("admin", query={"history": "case-1-c1"})
    at.switch_page("views/admin.py").run()
    assert at.text_input(key="admin.history_claim").value == "case-1-c1"
    assert list(_history_table(at)["Who"]) == [NO_ACTOR, NO_ACTOR, "aoi", "ren"]
    at.text_input(key="admin.history_claim").input("no-such-claim").run()
    assert [w.value for w in at.warning] == ["No claim has the id 'no-such-claim'."]


def test_a_history_link_kept_from_before_the_login_opens_the_claim(app_db):
    at = open_app("admin")
    at.session_state["auth.pending_history"] = "case-2-c1"  # what app.py would keep from ?history= at login
    at.switch_page("views/admin.py").run()
    assert at.text_input(key="admin.history_claim").value == "case-2-c1"
    assert "auth.pending_history" not in at.session_state
    assert list(_history_table(at)["What"]) == ["case assigned", "case assigned"]


def test_a_claim_id_in_two_datasets_gets_a_dataset_select(app_db):
    with session_scope(app_db) as s:
        other = Dataset(name="other", source_format="test")
        s.add(other)
        s.flush()
        case = Case(dataset_id=other.id, case_id="case-1", question="?", answer=".", slice="normal", split="dev", meta={})
        s.add(case)
        s.flush()
        s.add(Claim(dataset_id=other.id, case_pk=case.id, claim_id="case-1-c2", text="Another claim."))
    _label_and_adjudicate()
    at = open_app("admin")
    at.switch_page("views/admin.py").run()
    at.text_input(key="admin.history_claim").input("case-1-c2").run()
    select_box = at.selectbox(key="admin.history_dataset.case-1-c2")
    assert select_box.options == ["other", "pilot"]
    assert [i.value for i in at.info] == ["Nothing is recorded about this claim yet."]  # "other" first: no event
    select_box.set_value("pilot").run()
    assert list(_history_table(at)["Who"])[-1] == "mika"


def test_a_labeler_cannot_open_the_admin_page_or_see_any_history(app_db):
    _label_and_adjudicate()
    aoi = open_app("aoi", query={"history": "case-1-c2"})
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        aoi.switch_page("views/admin.py")
    dump = page_dump(aoi)
    assert not has_word("ren", dump) and not has_word("mika", dump)

    direct = AppTest.from_file(str(ADMIN_PAGE), default_timeout=30)  # the page file run on its own, as aoi
    direct.query_params["history"] = "case-1-c2"
    direct.session_state["auth.user_name"] = "aoi"
    with session_scope(app_db) as s:
        direct.session_state["auth.user_pk"] = get_user(s, "aoi").id
    direct.run()
    assert [e.value for e in direct.error] == ["You cannot open this page with your roles."]
    assert len(direct.table) == 0 and len(direct.dataframe) == 0
    dump = page_dump(direct)
    assert not has_word("ren", dump) and not has_word("mika", dump) and "label created" not in dump
