"""Authorization in the service layer: every service that reads or writes what a role may not
see checks its caller, whatever page, URL or command calls it."""

import pytest

from annotator.db import session_scope
from annotator.errors import (
    AnnotatorError, ImportFileError, InvalidValueError, NotFoundError, PermissionDeniedError, ReleaseBlockedError,
)
from annotator.services import corrections, history, labeling, releases, reports, status, users
from annotator.services.access import OPERATOR, caller_roles, require
from annotator.services.fingerprint import label_fingerprint
from annotator.services.imports import import_cases, import_labels
from annotator.services.users import get_user
from annotator.workflow import Permission, allowed
from tests.factories import pilot

ROLE_SETS = {
    "labeler": frozenset({"labeler"}),
    "adjudicator": frozenset({"adjudicator"}),
    "labeling adjudicator": frozenset({"labeler", "adjudicator"}),
    "admin": frozenset({"admin"}),
}

EXPECTED = {  # permission -> role sets that grant it
    Permission.LABEL: {"labeler", "labeling adjudicator"},
    Permission.ADJUDICATE: {"adjudicator", "labeling adjudicator"},
    Permission.SEE_AGREEMENT: {"admin"},
    Permission.SEE_STATUS: {"adjudicator", "labeling adjudicator", "admin"},
    Permission.IMPORT: {"admin"},
    Permission.ASSIGN: {"admin"},
    Permission.RELEASE: {"admin"},
    Permission.MANAGE_USERS: {"admin"},
    Permission.SEE_HISTORY: {"admin"},
    Permission.CORRECT_LABELS: {"admin"},
    Permission.CALIBRATE: {"admin"},
    Permission.SCORE_RUNS: {"admin"},
    Permission.LIFT_HOLDS: {"admin"},
    Permission.REVIEW_CLAIMS: {"admin"},
}


@pytest.mark.parametrize("permission", list(Permission))
def test_the_permission_table(permission):
    granted = {name for name, roles in ROLE_SETS.items() if allowed(roles, permission)}
    assert granted == EXPECTED[permission]


def test_the_command_line_holds_every_permission_and_a_disabled_user_none(engine):
    for permission in Permission:
        require(OPERATOR, permission)
    with session_scope(engine) as s:
        pilot(s)
        root = get_user(s, "root")
        users.set_active(s, OPERATOR, get_user(s, "alice"), False)
        assert caller_roles(get_user(s, "alice")) == frozenset()
        with pytest.raises(PermissionDeniedError):
            require(get_user(s, "alice"), Permission.LABEL)
        require(root, Permission.RELEASE)
    with pytest.raises(PermissionDeniedError):
        require(None, Permission.SEE_STATUS)


CALLS = {  # service call -> the permission it needs
    "agreement_report": (lambda s, who, tmp: reports.agreement_report(s, who, n_bootstrap=0), Permission.SEE_AGREEMENT),
    "label_table": (lambda s, who, tmp: reports.label_table(s, who), Permission.SEE_AGREEMENT),
    "label_fingerprint": (lambda s, who, tmp: label_fingerprint(s, who), Permission.SEE_AGREEMENT),
    "project_status": (lambda s, who, tmp: status.project_status(s, who), Permission.SEE_STATUS),
    "list_releases": (lambda s, who, tmp: releases.list_releases(s, who), Permission.RELEASE),
    "create_release": (lambda s, who, tmp: releases.create_release(s, who, "v1", out_dir=tmp, only_final=True,
                                                                   n_bootstrap=0), Permission.RELEASE),
    "import_cases": (lambda s, who, tmp: import_cases(s, who, tmp / "missing.jsonl"), Permission.IMPORT),
    "import_labels": (lambda s, who, tmp: import_labels(s, who, tmp / "missing.csv"), Permission.IMPORT),
    "list_users": (lambda s, who, tmp: users.list_users(s, who), Permission.MANAGE_USERS),
    "add_user": (lambda s, who, tmp: users.add_user(s, who, "eve", ["admin"], "eve-password"), Permission.MANAGE_USERS),
    "set_password": (lambda s, who, tmp: users.set_password(s, who, get_user(s, "root"), "taken-over"),
                     Permission.MANAGE_USERS),
    "set_active": (lambda s, who, tmp: users.set_active(s, who, get_user(s, "root"), False), Permission.MANAGE_USERS),
    "set_roles": (lambda s, who, tmp: users.set_roles(s, who, get_user(s, "alice"), ["admin"]), Permission.MANAGE_USERS),
    "assign_cases": (lambda s, who, tmp: labeling.assign_cases(s, who, [1], ["alice", "bob"]), Permission.ASSIGN),
    "claim_history": (lambda s, who, tmp: history.claim_history_view(s, who, "case-1-c1"), Permission.SEE_HISTORY),
    "correction_view": (lambda s, who, tmp: corrections.correction_view(s, who, "case-1-c1"), Permission.CORRECT_LABELS),
    "correct_label": (lambda s, who, tmp: corrections.correct_label(s, who, 1, "alice", "support", reason="typo",
                                                                    expected_revision=1), Permission.CORRECT_LABELS),
}


PERMITTED_BUT_REFUSED = {
    ("import_cases", ImportFileError),  # tmp/missing.jsonl: no such file
    ("import_labels", ImportFileError),
    ("create_release", ReleaseBlockedError),  # no claim is final yet
    ("correct_label", NotFoundError),  # alice has no label to correct
    ("set_active", InvalidValueError),  # root would disable root
}
"""The calls above that a caller with the permission gets refused for another reason: their
arguments point to nothing (any other error of a permitted call fails the test)."""


@pytest.fixture
def team_db(any_engine):
    with session_scope(any_engine) as s:
        pilot(s)
    return any_engine


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("who", ["alice", "carol", "root"])  # labeler, adjudicator, admin
def test_every_service_refuses_a_caller_without_the_permission_and_changes_nothing(team_db, tmp_path, name, who):
    call, permission = CALLS[name]
    from sqlmodel import func, select

    from annotator.models import LabelEvent, User

    with session_scope(team_db) as s:
        before = (s.exec(select(func.count()).select_from(LabelEvent)).one(), [u.roles for u in s.exec(select(User))])
    caller_may = allowed(ROLE_SETS[{"alice": "labeler", "carol": "adjudicator", "root": "admin"}[who]], permission)
    try:
        with session_scope(team_db) as s:
            call(s, get_user(s, who), tmp_path)
    except PermissionDeniedError:
        assert not caller_may, f"{who} was refused {name}"
        with session_scope(team_db) as s:
            after = (s.exec(select(func.count()).select_from(LabelEvent)).one(), [u.roles for u in s.exec(select(User))])
        assert after == before
    except AnnotatorError as error:  # a permitted call may be refused for its own reasons: a missing file
        assert caller_may, f"{who} reached {name} past the permission check"
        assert (name, type(error)) in PERMITTED_BUT_REFUSED, f"{name} refused {who}: {error!r}"
    else:
        assert caller_may, f"{who} was allowed {name}"
