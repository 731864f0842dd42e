"""save_label_as, the label page's save: the same rows, events and refusals as save_label, with
the logged-in account checked in the statement that locks the claim."""

import unicodedata

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.errors import InvalidValueError, LabelLockedError, NotFoundError, OnHoldError, PermissionDeniedError, StaleWriteError
from annotator.models import Claim, Draft, Label, LabelEvent
from annotator.services.access import OPERATOR
from annotator.services.drafts import discard_draft, save_draft
from annotator.services.labeling import assigned_claims, next_claim_for, put_on_hold, save_label, save_label_as
from annotator.services.users import get_user, set_active
from annotator.vocabulary import HOLD_REASONS
from tests.factories import pilot


@pytest.fixture
def team(any_engine):
    with session_scope(any_engine) as s:
        pilot(s)
        pks = {n: get_user(s, n).id for n in ("alice", "bob", "carol", "root")}
    return any_engine, pks


def _events(s, claim_pk):
    return [(e.action, e.actor_pk, e.entity, e.entity_pk, e.claim_pk, e.before, e.after)
            for e in s.exec(select(LabelEvent).where(LabelEvent.claim_pk == claim_pk, LabelEvent.entity == "label").order_by(LabelEvent.id))]


def test_same_rows_and_events_as_save_label(team):
    engine, pks = team
    with session_scope(engine) as s:
        a, b = assigned_claims(s, get_user(s, "alice"))[:2]
    with session_scope(engine) as s:
        save_label(s, get_user(s, "alice"), a, "contradict", passage_ids=["pilot-p1-2"], rationale=" why ", severity="legal", guideline_version="g1")
    with session_scope(engine) as s:
        saved = save_label_as(s, "alice", pks["alice"], b, "contradict", passage_ids=["pilot-p1-2"], rationale=" why ", severity="legal", guideline_version="g1")
        assert (saved.revision, saved.written) == (1, True)
        assert saved.labeler.id == pks["alice"] and saved.labeler.name == "alice"
        assert next_claim_for(s, saved.labeler) is not None
    with session_scope(engine) as s:
        la = s.exec(select(Label).where(Label.claim_pk == a)).one()
        lb = s.exec(select(Label).where(Label.claim_pk == b)).one()
        assert saved.id == lb.id
        cols = ("labeler_pk", "value", "rationale", "severity", "guideline_version", "source", "revision")
        assert [getattr(la, c) for c in cols] == [getattr(lb, c) for c in cols]
        ea, eb = _events(s, a), _events(s, b)
        assert len(ea) == len(eb) == 1
        assert ea[0][:3] == eb[0][:3] and ea[0][5] == eb[0][5]
        assert eb[0][3] == lb.id and eb[0][4] == b
        assert {k: v for k, v in ea[0][6].items() if k != "passage_ids"} == {k: v for k, v in eb[0][6].items() if k != "passage_ids"}
        assert eb[0][6]["passage_ids"] == ["pilot-p1-2"]
        ev = s.exec(select(LabelEvent).where(LabelEvent.claim_pk == b)).one()
        assert ev.at == lb.created_at  # the event is dated by the label it records


def test_repeat_is_a_noop_revision_and_stale_and_lock(team):
    engine, pks = team
    with session_scope(engine) as s:
        c = assigned_claims(s, get_user(s, "alice"))[0]
    for _ in range(2):
        with session_scope(engine) as s:
            saved = save_label_as(s, "alice", pks["alice"], c, "support")
    assert saved.written is False and saved.revision == 1
    with session_scope(engine) as s:
        saved = save_label_as(s, "alice", pks["alice"], c, "insufficient", expected_revision=1)
        assert (saved.written, saved.revision) == (True, 2)
    with session_scope(engine) as s, pytest.raises(StaleWriteError):
        save_label_as(s, "alice", pks["alice"], c, "contradict", expected_revision=1)
    with session_scope(engine) as s, pytest.raises(StaleWriteError):
        save_label_as(s, "alice", pks["alice"], c, "contradict")
    with session_scope(engine) as s:
        save_label_as(s, "bob", pks["bob"], c, "support")
    with session_scope(engine) as s, pytest.raises(LabelLockedError):
        save_label_as(s, "alice", pks["alice"], c, "contradict", expected_revision=2)
    with session_scope(engine) as s:
        assert [e[0] for e in _events(s, c)] == ["create", "update", "create"]


@pytest.mark.parametrize("who", ["nobody", "wrong_pk", "wrong_name", "disabled", "none"])
def test_account_refused_and_nothing_lands(team, who):
    engine, pks = team
    with session_scope(engine) as s:
        c = assigned_claims(s, get_user(s, "alice"))[0]
        if who == "disabled":
            set_active(s, OPERATOR, get_user(s, "alice"), False)
    name, pk = {"nobody": ("alice", 99999), "wrong_pk": ("alice", pks["bob"]), "wrong_name": ("bob", pks["alice"]),
                "disabled": ("alice", pks["alice"]), "none": (None, None)}[who]
    with session_scope(engine) as s, pytest.raises(PermissionDeniedError, match="log in again"):
        save_label_as(s, name, pk, c, "support")
    with session_scope(engine) as s:
        assert s.exec(select(Label).where(Label.claim_pk == c)).all() == []
        assert _events(s, c) == []


def test_nfc_name_is_accepted(team):
    engine, pks = team
    with session_scope(engine) as s:
        c = assigned_claims(s, get_user(s, "alice"))[0]
        assert save_label_as(s, unicodedata.normalize("NFD", "alice"), pks["alice"], c, "support").written


def test_unassigned_nonlabeler_hold_unknown_invalid(team):
    engine, pks = team
    with session_scope(engine) as s:
        c = assigned_claims(s, get_user(s, "alice"))[0]
    with session_scope(engine) as s, pytest.raises(PermissionDeniedError, match="not in your queue"):
        save_label_as(s, "carol", pks["carol"], c, "support")
    with session_scope(engine) as s, pytest.raises(NotFoundError):
        save_label_as(s, "alice", pks["alice"], 987654, "support")
    with session_scope(engine) as s, pytest.raises(InvalidValueError):
        save_label_as(s, "alice", pks["alice"], c, "support", passage_ids=["nope"])
    with session_scope(engine) as s, pytest.raises(InvalidValueError):
        save_label_as(s, "alice", pks["alice"], c, "bogus")
    with session_scope(engine) as s:  # a hold is its holder's own: alice's parks the case for her
        put_on_hold(s, get_user(s, "alice"), s.get(Claim, c).case_pk, HOLD_REASONS[0])
    with session_scope(engine) as s, pytest.raises(OnHoldError):
        save_label_as(s, "alice", pks["alice"], c, "support")
    with session_scope(engine) as s:
        assert s.exec(select(Label).where(Label.claim_pk == c)).all() == []


def test_draft_is_removed_and_page_sequence_works(team):
    engine, pks = team
    with session_scope(engine) as s:
        alice = get_user(s, "alice")
        c = assigned_claims(s, alice)[0]
        save_draft(s, alice, c, value="support", rationale="draft text")
    with session_scope(engine) as s:
        me = save_label_as(s, "alice", pks["alice"], c, "support").labeler
        discard_draft(s, me, c)
        assert next_claim_for(s, me) != c
    with session_scope(engine) as s:
        assert s.exec(select(Draft)).all() == []
