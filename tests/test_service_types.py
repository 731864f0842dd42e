"""Every service result a page uses holds plain Python values on SQLite and on PostgreSQL.

PostgreSQL returns SUM over a COUNT as NUMERIC (a `Decimal` in Python) where SQLite returns an
int; `Decimal(6) == 6`, so value tests pass on both while `st.progress` refuses the Decimal and
the Label page crashed on PostgreSQL. These tests assert the *types*: each service function that
annotator/ui/views/*.py, app.py or components.py calls runs on one seeded database per backend
(labels agreed and disputed, an adjudication, a hold, a draft, a guideline, a release) and its
result is walked down to its leaves, which must be int, float, str, bool, None, a date or time, a
path or an enum member: no Decimal, no Row, no numpy scalar. Containers: list, tuple (named
tuples too), set, dict, dataclasses and table models (their columns).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from pathlib import Path, PurePath
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import inspect as sa_inspect
from sqlmodel import SQLModel

from annotator.db import init_db, read_scope, session_scope
from annotator.services import (
    adjudication, claim_review, corrections, drafts, fingerprint, guidelines, history, home, imports, labeling, lookup, releases,
    reports, status, users,
)
from annotator.services.access import OPERATOR
from annotator.services.lookup import find_case, find_claim
from annotator.services.numbers import plain_number, plain_row
from tests.factories import PASSWORD, pilot

PLAIN_LEAVES = (int, float, str, bool, type(None), datetime, date, time, timedelta, Path, enum.Enum)


def not_plain(value: Any, where: str = "result") -> list[str]:
    """Where `value` holds something other than plain Python values, as 'path: type' lines."""
    if isinstance(value, PLAIN_LEAVES):
        return [] if type(value) in PLAIN_LEAVES or isinstance(value, (enum.Enum, PurePath)) else [
            f"{where}: {type(value).__module__}.{type(value).__qualname__}"]
    if isinstance(value, SQLModel):  # its loaded columns (a detached partial row holds only some)
        loaded = sa_inspect(value).dict
        return [problem for column in type(value).__table__.columns if column.key in loaded
                for problem in not_plain(loaded[column.key], f"{where}.{column.key}")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [problem for item in dataclasses.fields(value)
                for problem in not_plain(getattr(value, item.name), f"{where}.{item.name}")]
    if type(value) in (list, set, frozenset) or (isinstance(value, tuple) and type(value).__module__ != "sqlalchemy.engine.row"
                                                 and not type(value).__name__ == "Row"):
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
            return [problem for name, item in zip(value._fields, value)
                    for problem in not_plain(item, f"{where}.{name}")]
        return [problem for index, item in enumerate(value) for problem in not_plain(item, f"{where}[{index}]")]
    if type(value) is dict:
        return [problem for key, item in value.items()
                for problem in not_plain(key, f"{where} key {key!r}") + not_plain(item, f"{where}[{key!r}]")]
    return [f"{where}: {type(value).__module__}.{type(value).__qualname__}"]


def test_the_walk_names_a_decimal_a_row_and_a_numpy_scalar_where_they_are():
    from decimal import Decimal

    import numpy as np
    from sqlalchemy import create_engine, text

    with create_engine("sqlite://").connect() as connection:
        row = connection.execute(text("SELECT 1 AS one")).one()
    assert not_plain({"done": (1, Decimal(6)), "rows": [row], "alpha": np.float64(0.5)}) == [
        "result['done'][1]: decimal.Decimal", "result['rows'][0]: sqlalchemy.engine.row.Row",
        "result['alpha']: numpy.float64"]
    assert not_plain({"n": 1, "x": 0.5, "at": datetime(2026, 1, 1), "path": Path("a"), "none": None, "ok": True}) == []


def test_plain_row_makes_decimals_and_numpy_scalars_ints_and_floats_and_keeps_the_rest():
    from decimal import Decimal

    import numpy as np

    converted = plain_row((Decimal(6), Decimal("0.25"), np.int64(3), np.float64(0.5), None, "a", True, 2, 1.5))
    assert converted == (6, 0.25, 3, 0.5, None, "a", True, 2, 1.5)
    assert [type(value) for value in converted] == [int, float, int, float, type(None), str, bool, int, float]
    assert type(plain_number(Decimal("1E+2"))) is int


@pytest.fixture(scope="module")
def seeded(module_db_url, tmp_path_factory):
    """pilot (case-1..3, two claims each, assigned to alice and bob): case-1-c1 agreed, case-1-c2
    disputed, case-2-c1 disputed and adjudicated by carol, case-3 on hold (alice), a draft of
    alice's on case-2-c2, the guideline v1, the releases gold-v1 and gold-v2 (only final).
    Yields the engine and what the writing services returned (their results are checked too)."""
    engine = init_db(module_db_url)
    out = tmp_path_factory.mktemp("releases")
    written: dict[str, Any] = {}
    with session_scope(engine) as session:
        pilot(session)
        alice, bob, carol = (users.get_user(session, name) for name in ("alice", "bob", "carol"))
        pk = {claim_id: find_claim(session, claim_id).id for claim_id in ("case-1-c1", "case-1-c2", "case-2-c1", "case-2-c2")}
        for claim_id, (a, b) in {"case-1-c1": ("support", "support"), "case-1-c2": ("support", "contradict"),
                                 "case-2-c1": ("support", "insufficient")}.items():
            written["save_label_as"] = labeling.save_label_as(session, "alice", alice.id, pk[claim_id], a,
                                                              rationale="why", passage_ids=["pilot-p1-1"] if claim_id == "case-1-c1" else [])
            labeling.save_label_as(session, "bob", bob.id, pk[claim_id], b, severity=None if b == "support" else "other")
        written["adjudicate"] = adjudication.adjudicate(session, carol, pk["case-2-c1"], "insufficient", rationale="decided")
        written["put_on_hold"] = labeling.put_on_hold(session, alice, find_case(session, "case-3").id, "missing_logs")
        written["save_draft"] = drafts.save_draft(session, alice, pk["case-2-c2"], rationale="half a thought")
        written["publish_guideline"] = guidelines.publish_guideline(session, users.get_user(session, "root"), "v1", "# Guideline\n")
    for name in ("gold-v1", "gold-v2"):
        with session_scope(engine) as session:
            written[f"create_release {name}"] = releases.create_release(session, OPERATOR, name, only_final=True,
                                                                        out_dir=out, n_bootstrap=100)
    yield SimpleNamespace(engine=engine, written=written, pk=pk)
    engine.dispose()


def _me(session, name: str):  # noqa: ANN001, ANN202 - Session; User
    return users.get_user(session, name)


# name -> call(session, pk) for each service function a page calls (annotator/ui/views/*.py,
# app.py, components.py, language.py, guideline.py), with the arguments the page gives it.
READS: dict[str, Callable[[Any, dict[str, int]], Any]] = {
    "labeling.progress_for": lambda s, pk: labeling.progress_for(s, _me(s, "alice")),
    "labeling.queue_place": lambda s, pk: labeling.queue_place(s, _me(s, "alice"), pk["case-1-c2"]),
    "labeling.next_claim_for": lambda s, pk: labeling.next_claim_for(s, _me(s, "alice")),
    "labeling.first_queued_claim": lambda s, pk: labeling.first_queued_claim(s, _me(s, "alice")),
    "labeling.find_assigned_claim": lambda s, pk: labeling.find_assigned_claim(s, _me(s, "alice"), "case-1-c1"),
    "labeling.claim_for_labeler": lambda s, pk: labeling.claim_for_labeler(s, _me(s, "alice"), pk["case-1-c1"]),
    "labeling.claim_for_labeler (a draft)": lambda s, pk: labeling.claim_for_labeler(s, _me(s, "alice"), pk["case-2-c2"]),
    "labeling.first_unassigned_cases": lambda s, pk: labeling.first_unassigned_cases(s, 20, lookup.dataset_pk(s, "pilot")),
    "drafts.get_draft": lambda s, pk: drafts.get_draft(s, _me(s, "alice"), pk["case-2-c2"]),
    "home.labeler_overview": lambda s, pk: home.labeler_overview(s, _me(s, "alice")),
    "home.adjudicator_overview": lambda s, pk: home.adjudicator_overview(s, _me(s, "carol")),
    "home.admin_overview": lambda s, pk: home.admin_overview(s, _me(s, "root")),
    "home.open_claim_link": lambda s, pk: home.open_claim_link(s, _me(s, "carol"), "case-1-c2"),
    "adjudication.adjudication_queue": lambda s, pk: adjudication.adjudication_queue(s, _me(s, "carol")),
    "adjudication.view_for_adjudicator": lambda s, pk: adjudication.view_for_adjudicator(s, _me(s, "carol"), pk["case-1-c2"]),
    "reports.agreement_report": lambda s, pk: reports.agreement_report(
        s, _me(s, "root"), lookup.dataset_pk(s, "pilot"), by=reports.GROUP_COLUMNS, n_bootstrap=100),
    "fingerprint.label_fingerprint": lambda s, pk: fingerprint.label_fingerprint(s, _me(s, "root"), lookup.dataset_pk(s, "pilot")),
    "releases.list_releases": lambda s, pk: releases.list_releases(s, _me(s, "root")),
    "releases.verify_stored_release": lambda s, pk: releases.verify_stored_release(s, _me(s, "root"), "gold-v1"),
    "releases.release_files": lambda s, pk: releases.release_files(s, _me(s, "root"), "gold-v1"),
    "releases.compare_releases": lambda s, pk: releases.compare_releases(s, _me(s, "root"), "gold-v1", "gold-v2"),
    "status.project_status": lambda s, pk: status.project_status(s, _me(s, "root")),
    "history.claim_datasets": lambda s, pk: history.claim_datasets(s, _me(s, "root"), "case-2-c1"),
    "history.claim_history_view": lambda s, pk: history.claim_history_view(s, _me(s, "root"), "case-2-c1"),
    "corrections.correction_view": lambda s, pk: corrections.correction_view(s, _me(s, "root"), "case-2-c1"),
    "claim_review.review_case_ids": lambda s, pk: claim_review.review_case_ids(s, _me(s, "root"), "pilot"),
    "claim_review.case_review": lambda s, pk: claim_review.case_review(s, _me(s, "root"), "case-2"),
    "guidelines.list_guidelines": lambda s, pk: guidelines.list_guidelines(s),
    "guidelines.current_guideline": lambda s, pk: guidelines.current_guideline(s),
    "users.list_users": lambda s, pk: users.list_users(s, _me(s, "root")),
    "users.get_user": lambda s, pk: users.get_user(s, "alice"),
    "users.authenticate": lambda s, pk: users.authenticate(s, "alice", PASSWORD),
    "users.roles_of": lambda s, pk: users.roles_of(_me(s, "root")),
    "lookup.list_datasets": lambda s, pk: lookup.list_datasets(s),
    "imports.check_upload": lambda s, pk: imports.check_upload(
        s, _me(s, "root"), "cases.jsonl", (Path(__file__).parent.parent / "data" / "demo.jsonl").read_bytes()[:4000]
        .rsplit(b"\n", 1)[0] + b"\n", imports.UploadOptions(kind="cases", dataset="uploaded")),
}


@pytest.mark.parametrize("service", list(READS))
def test_a_service_a_page_reads_returns_only_plain_python_values(seeded, service):
    with read_scope(seeded.engine) as session:
        result = READS[service](session, seeded.pk)
        assert result is not None or service == "labeling.next_claim_for"
        assert not_plain(result) == []


@pytest.mark.parametrize("service", ["publish_guideline", "save_label_as", "adjudicate", "put_on_hold", "save_draft",
                                     "create_release gold-v1", "create_release gold-v2"])
def test_a_service_a_page_writes_with_returns_only_plain_python_values(seeded, service):
    assert not_plain(seeded.written[service]) == []


def test_the_progress_and_queue_place_are_ints_on_both_databases(seeded):
    """The Label page's st.progress refused the Decimal that PostgreSQL's SUM gave."""
    with read_scope(seeded.engine) as session:
        alice = _me(session, "alice")
        progress = labeling.progress_for(session, alice)
        place = labeling.queue_place(session, alice, seeded.pk["case-1-c2"])
    assert [(value, type(value)) for value in progress] == [(3, int), (6, int)]
    assert (place.position, type(place.position)) == (2, int)


def test_an_upload_imported_for_real_reports_only_plain_python_values(module_db_url, seeded):
    demo = (Path(__file__).parent.parent / "data" / "demo.jsonl").read_bytes().split(b"\n")[0] + b"\n"
    with session_scope(seeded.engine) as session:
        report = imports.import_upload(session, _me(session, "root"), "one.jsonl", demo,
                                       imports.UploadOptions(kind="cases", dataset="uploaded-for-real"))
    assert not_plain(report) == []
