"""The Home page: each role's overview (services/home.py) on SQLite and PostgreSQL, where a
`?claim=` link leads each role, the blind rule on a labeler's home and an admin's who labels, and
the page itself through AppTest (seed and helpers: tests/test_ui_app.py)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from sqlmodel import select, update

from annotator.db import session_scope
from annotator.errors import PermissionDeniedError, ReleaseBlockedError
from annotator.models import Claim, Label
from annotator.services import home
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate, adjudication_queue
from annotator.services.labeling import assign_cases, next_claim_for, progress_for, put_on_hold, save_label
from annotator.services.lookup import find_case, find_claim
from annotator.services.releases import create_release
from annotator.services.reports import agreement_report
from annotator.services.status import project_status
from annotator.services.users import add_user, get_user
from annotator.ui.charts import StateBar, state_chart
from annotator.workflow import State
from tests.factories import PASSWORD, pilot
from tests.test_ui_app import (  # noqa: F401 - engine: a fixture
    MARKER, _claim_pk, _label_both, engine, has_word, open_app, page_dump, shown_claim,
)
from tests.conftest import ON_BOTH, label_button


def _pk(session, claim_id: str) -> int:  # noqa: ANN001
    return find_claim(session, claim_id).id


def _touch(session, claim_id: str, when: datetime) -> None:  # noqa: ANN001
    """What `import --update` does to a claim's content time."""
    session.exec(update(Claim).where(Claim.claim_id == claim_id).values(updated_at=when))


def _set_label_time(session, claim_id: str, name: str, when: datetime) -> None:  # noqa: ANN001
    labeler = get_user(session, name).id
    session.exec(update(Label).where(Label.claim_pk == _pk(session, claim_id), Label.labeler_pk == labeler)
                 .values(updated_at=when, created_at=when))


# --- the labeler ---------------------------------------------------------------------------------


def test_the_labelers_queue_is_split_into_to_label_to_review_on_hold_and_done(any_engine):
    """pilot: case-1 (normal), case-2 (paraphrase), case-3 (normal), two claims each, all assigned
    to alice and bob."""
    with session_scope(any_engine) as session:
        pilot(session)
        alice = get_user(session, "alice")
        for claim_id in ("case-1-c1", "case-1-c2"):
            save_label(session, alice, _pk(session, claim_id), "support")
        _set_label_time(session, "case-1-c1", "alice", datetime(2026, 1, 1, tzinfo=UTC))
        _touch(session, "case-1-c1", datetime(2026, 2, 1, tzinfo=UTC))  # changed after alice labeled it
        put_on_hold(session, alice, find_case(session, "case-3").id, "missing_logs")
    with session_scope(any_engine) as session:
        alice = get_user(session, "alice")
        overview = home.labeler_overview(session, alice)
        assert overview.counts == home.QueueCounts(to_label=2, to_review=1, on_hold=2, done=1)
        assert (overview.counts.done, overview.counts.assigned) == progress_for(session, alice) == (1, 6)
        assert [(row.dataset, row.slice, row.counts) for row in overview.by_slice] == [
            ("pilot", "normal", home.QueueCounts(to_review=1, on_hold=2, done=1)),
            ("pilot", "paraphrase", home.QueueCounts(to_label=2)),
        ]
        assert overview.next_claim_pk == next_claim_for(session, alice) == _pk(session, "case-1-c1")
        assert overview.next_claim_id == "case-1-c1"  # the label to review comes first, in queue order


def test_a_labeler_whose_queue_is_done_has_no_next_claim_and_a_held_claim_waits(any_engine):
    with session_scope(any_engine) as session:
        pilot(session, n_cases=1)
        bob = get_user(session, "bob")
        save_label(session, bob, _pk(session, "case-1-c1"), "contradict")
        put_on_hold(session, bob, find_case(session, "case-1").id, "permission_unknown")
        overview = home.labeler_overview(session, bob)
        assert overview.counts == home.QueueCounts(on_hold=1, done=1)
        assert (overview.next_claim_pk, overview.next_claim_id) == (None, None)
        nobody = add_user(session, OPERATOR, "newcomer", ["labeler"], PASSWORD)
        assert home.labeler_overview(session, nobody) == home.LabelerOverview(home.QueueCounts(), (), None, None)


@pytest.mark.parametrize("function", [home.labeler_overview, home.adjudicator_overview, home.admin_overview])
def test_an_overview_is_refused_to_a_user_without_its_role(any_engine, function):
    with session_scope(any_engine) as session:
        pilot(session, n_cases=1)
        outsider = {home.labeler_overview: "carol", home.adjudicator_overview: "alice",
                    home.admin_overview: "carol"}[function]
        with pytest.raises(PermissionDeniedError):
            function(session, get_user(session, outsider))


def test_a_labelers_overview_is_the_same_before_and_after_the_other_labeler_labels_their_claim(any_engine):
    """The blind rule: bob labeling (and revising) a claim alice has still to label changes nothing
    alice's overview holds."""
    with session_scope(any_engine) as session:
        pilot(session)
        save_label(session, get_user(session, "alice"), _pk(session, "case-1-c2"), "support")
        before = home.labeler_overview(session, get_user(session, "alice"))
    with session_scope(any_engine) as session:
        bob = get_user(session, "bob")
        label = save_label(session, bob, _pk(session, "case-1-c1"), "contradict", rationale="bob's reason",
                           severity="leak")
        save_label(session, bob, _pk(session, "case-1-c1"), "insufficient", expected_revision=label.revision)
        save_label(session, bob, _pk(session, "case-1-c2"), "contradict")  # a claim alice has labeled: a dispute
    with session_scope(any_engine) as session:
        assert home.labeler_overview(session, get_user(session, "alice")) == before


# --- the adjudicator -----------------------------------------------------------------------------


def _disputes(session) -> None:  # noqa: ANN001
    """pilot with case-1-c1 (normal) and case-2-c1 (paraphrase) disputed, case-1-c2 agreed; the
    disputes' second labels written on 3 and 5 March."""
    pilot(session)
    alice, bob = get_user(session, "alice"), get_user(session, "bob")
    for claim_id, (a, b) in {"case-1-c1": ("support", "contradict"), "case-1-c2": ("support", "support"),
                             "case-2-c1": ("insufficient", "support")}.items():
        save_label(session, alice, _pk(session, claim_id), a)
        save_label(session, bob, _pk(session, claim_id), b)
    for claim_id, day in (("case-2-c1", 3), ("case-1-c1", 5)):
        _set_label_time(session, claim_id, "alice", datetime(2026, 3, day - 1, 9, tzinfo=UTC))
        _set_label_time(session, claim_id, "bob", datetime(2026, 3, day, 17, 30, tzinfo=UTC))
        _touch(session, claim_id, datetime(2026, 3, 1, tzinfo=UTC))


def test_the_adjudicators_overview_counts_the_waiting_disputes_by_slice_with_the_oldest(any_engine):
    with session_scope(any_engine) as session:
        _disputes(session)
        carol = get_user(session, "carol")
        overview = home.adjudicator_overview(session, carol)
        assert (overview.waiting, overview.disputed, overview.stale) == (2, 2, 0)
        assert overview.waiting == len(adjudication_queue(session, carol))
        assert (overview.oldest_since, overview.oldest_claim_id) == (date(2026, 3, 3), "case-2-c1")
        assert overview.by_slice == (home.SliceDisputes("normal", 1, 0, date(2026, 3, 5)),
                                     home.SliceDisputes("paraphrase", 1, 0, date(2026, 3, 3)))
        adjudicate(session, carol, _pk(session, "case-2-c1"), "support", rationale="the passage says so")
    with session_scope(any_engine) as session:
        _touch(session, "case-2-c1", datetime(2030, 6, 7, 8, tzinfo=UTC))  # changed after the decision: stale
    with session_scope(any_engine) as session:
        overview = home.adjudicator_overview(session, get_user(session, "carol"))
        assert (overview.waiting, overview.disputed, overview.stale) == (2, 1, 1)
        assert (overview.oldest_since, overview.oldest_claim_id) == (date(2026, 3, 5), "case-1-c1")
        assert overview.by_slice[1] == home.SliceDisputes("paraphrase", 1, 1, date(2030, 6, 7))
        days = [overview.oldest_since, *(row.oldest_since for row in overview.by_slice)]
        assert {type(day) for day in days} == {date}  # a day, never the labels' times


def test_an_adjudicator_who_labels_does_not_count_the_disputes_of_their_own_cases(any_engine):
    with session_scope(any_engine) as session:
        _disputes(session)
        dana = add_user(session, OPERATOR, "dana", ["labeler", "adjudicator"], PASSWORD)
        assign_cases(session, OPERATOR, [find_case(session, "case-2").id], ["dana"])
        overview = home.adjudicator_overview(session, dana)
        assert (overview.waiting, overview.oldest_claim_id) == (1, "case-1-c1")
        assert [row.slice for row in overview.by_slice] == ["normal"]


def test_nothing_waiting_gives_an_empty_overview(any_engine):
    with session_scope(any_engine) as session:
        pilot(session, n_cases=1)
        assert home.adjudicator_overview(session, get_user(session, "carol")) == home.AdjudicatorOverview(
            0, 0, 0, None, None, ())


# --- the admin -----------------------------------------------------------------------------------


def test_the_admins_overview_counts_states_as_project_status_and_agreement_as_the_report(any_engine):
    with session_scope(any_engine) as session:
        _disputes(session)
        put_on_hold(session, get_user(session, "root"), find_case(session, "case-3").id, "gold_undetermined")
        save_label(session, get_user(session, "alice"), _pk(session, "case-2-c2"), "support")
        root = get_user(session, "root")
        overview = home.admin_overview(session, root)
        status = project_status(session, root)
        assert overview.by_state == status["claims_by_state"]
        assert {k: v for k, v in overview.by_state.items() if v} == {"disputed": 2, "agreed": 1, "single": 1,
                                                                     "on_hold": 2}
        assert (overview.claims, overview.claims_left_out) == (status["claims"], 0) == (6, 0)
        assert [row.slice for row in overview.by_slice] == ["normal", "paraphrase"]
        assert {k: v for k, v in overview.by_slice[0].by_state.items() if v} == {"disputed": 1, "agreed": 1,
                                                                                 "on_hold": 2}
        assert set(overview.by_slice[0].by_state) == {state.value for state in State}
        report = agreement_report(session, root, n_bootstrap=0).to_json()
        assert overview.agreement == {key: report[key] for key in home.AGREEMENT_KEYS}
        assert (overview.agreement["n_items"], overview.agreement["percent_agreement"]) == (3, pytest.approx(1 / 3))
        assert not {"label_counts", "by_pair", "confusion"} & set(overview.agreement)  # nothing that names labelers


def test_what_blocks_the_release_is_what_release_create_refuses(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        _disputes(session)
        root = get_user(session, "root")
        check = home.admin_overview(session, root).release
        assert check.refused_by == {"unlabeled": 3, "disputed": 2}  # in State order
        assert (check.final, check.leaks) == (1, 0)
        with pytest.raises(ReleaseBlockedError) as refused:
            create_release(session, root, "gold-v1", out_dir=tmp_path, n_bootstrap=0)
        assert check.refusal == str(refused.value)
        dataset_pk = find_case(session, "case-1").dataset_id
        assert home.admin_overview(session, root, dataset_pk).release.refusal.startswith(
            "5 of 6 claims in dataset 'pilot' are not final")


def test_a_release_with_every_claim_final_is_not_blocked_and_a_leak_is_counted(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        pilot(session, n_cases=1)
        alice, bob = get_user(session, "alice"), get_user(session, "bob")
        save_label(session, alice, _pk(session, "case-1-c1"), "contradict", severity="leak")
        save_label(session, bob, _pk(session, "case-1-c1"), "contradict", severity="other")
        save_label(session, alice, _pk(session, "case-1-c2"), "support")
        save_label(session, bob, _pk(session, "case-1-c2"), "support")
        root = get_user(session, "root")
        check = home.admin_overview(session, root).release
        assert check == home.ReleaseCheck(refused_by={}, refusal=None, final=2, leaks=1)
        manifest = create_release(session, root, "gold-v1", out_dir=tmp_path, n_bootstrap=0).path / "manifest.json"
    assert json.loads(manifest.read_text(encoding="utf-8"))["release_blockers"]["leak"]["claims"] == check.leaks


def test_an_admin_who_labels_sees_no_figure_move_when_another_labels_a_claim_they_still_have_to_label(any_engine):
    """boss (admin and labeler) is assigned case-1 with alice and bob: its claims are left out of
    boss's figures (as project_status does) until boss labels them, and block the release apart."""
    with session_scope(any_engine) as session:
        pilot(session)
        add_user(session, OPERATOR, "boss", ["admin", "labeler"], PASSWORD)
        assign_cases(session, OPERATOR, [find_case(session, "case-1").id], ["boss"])
        alice = get_user(session, "alice")
        save_label(session, alice, _pk(session, "case-2-c1"), "support")
        save_label(session, get_user(session, "bob"), _pk(session, "case-2-c1"), "contradict")
        boss = get_user(session, "boss")
        before = home.admin_overview(session, boss)
        status = project_status(session, boss)
        assert (before.claims_left_out, before.by_state) == (status["claims_left_out"], status["claims_by_state"])
        assert (before.claims, before.claims_left_out) == (4, 2)
        assert before.release.refused_by == {"unlabeled": 3, "disputed": 1, home.STILL_TO_LABEL: 2}
    with session_scope(any_engine) as session:
        for name, value in (("alice", "contradict"), ("bob", "insufficient")):  # a dispute boss must not learn of
            save_label(session, get_user(session, name), _pk(session, "case-1-c1"), value, severity="leak")
    with session_scope(any_engine) as session:
        assert home.admin_overview(session, get_user(session, "boss")) == before
        root = home.admin_overview(session, get_user(session, "root"))
        assert (root.by_state["disputed"], root.claims_left_out) == (2, 0)


def _count_agreement_reports(monkeypatch) -> list[int]:  # noqa: ANN001
    """Count the agreement reports services/home.py computes (one item per report)."""
    calls: list[int] = []
    computed = home.agreement_report

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return computed(*args, **kwargs)

    monkeypatch.setattr(home, "agreement_report", counted)  # each test's database is new: nothing cached
    return calls


def test_the_admins_agreement_is_computed_once_while_labels_stay_and_again_at_any_label_change(any_engine, monkeypatch, tmp_path):
    """_disputes: case-1-c1 support/contradict, case-1-c2 support/support, case-2-c1 insufficient/support."""
    from annotator.services.corrections import correct_label
    from annotator.services.imports import import_labels

    calls = _count_agreement_reports(monkeypatch)
    with session_scope(any_engine) as session:
        _disputes(session)

    def figures() -> dict:
        with session_scope(any_engine) as session:
            root = get_user(session, "root")
            shown = home.admin_overview(session, root).agreement
            report = agreement_report(session, root, n_bootstrap=0).to_json()
            assert shown == {key: report[key] for key in home.AGREEMENT_KEYS}  # never a stale figure
            return shown

    first = figures()
    assert (first["n_items"], first["percent_agreement"], len(calls)) == (3, pytest.approx(1 / 3), 1)
    assert figures() == first and figures() == first
    assert len(calls) == 1  # reruns with the labels as they were reuse the figures

    with session_scope(any_engine) as session:  # a new label
        save_label(session, get_user(session, "alice"), _pk(session, "case-2-c2"), "support")
    assert (figures()["n_items"], len(calls)) == (3, 2)
    with session_scope(any_engine) as session:  # its labeler revises it (the second label is not in yet)
        save_label(session, get_user(session, "alice"), _pk(session, "case-2-c2"), "contradict", expected_revision=1)
    assert (figures()["n_items"], len(calls)) == (3, 3)
    with session_scope(any_engine) as session:
        save_label(session, get_user(session, "bob"), _pk(session, "case-2-c2"), "contradict")
    assert (figures()["n_items"], figures()["percent_agreement"], len(calls)) == (4, pytest.approx(2 / 4), 4)

    with session_scope(any_engine) as session:  # an admin corrects a label
        correct_label(session, get_user(session, "root"), _pk(session, "case-1-c1"), "bob", "support",
                      reason="typo", expected_revision=1)
    assert (figures()["percent_agreement"], len(calls)) == (pytest.approx(3 / 4), 5)

    labels = tmp_path / "labels.csv"  # one stored label replaced (revision 2), two new ones
    labels.write_text("claim_id,labeler,label\ncase-2-c1,bob,insufficient\ncase-3-c1,alice,support\n"
                      "case-3-c1,bob,contradict\n", encoding="utf-8")
    with session_scope(any_engine) as session:
        import_labels(session, OPERATOR, labels, update=True)
    assert (figures()["n_items"], figures()["percent_agreement"], len(calls)) == (5, pytest.approx(4 / 5), 6)


# --- claim links ---------------------------------------------------------------------------------


def test_a_claim_link_leads_a_labeler_to_their_own_claim_and_refuses_every_other_alike(any_engine):
    with session_scope(any_engine) as session:
        pilot(session, n_cases=1)
        alice = get_user(session, "alice")
        assert home.open_claim_link(session, alice, "case-1-c2") == home.ClaimLink("label", _pk(session, "case-1-c2"),
                                                                                   "case-1-c2", "pilot")
        add_user(session, OPERATOR, "eve", ["labeler"], PASSWORD)
        for claim_id in ("case-1-c2", "no-such-claim"):  # someone else's claim, a claim that does not exist
            with pytest.raises(PermissionDeniedError) as refused:
                home.open_claim_link(session, get_user(session, "eve"), claim_id)
            assert str(refused.value) == f"claim '{claim_id}' is not in your queue"


def test_a_claim_link_leads_an_adjudicator_to_a_waiting_dispute_only(any_engine):
    with session_scope(any_engine) as session:
        _disputes(session)
        carol = get_user(session, "carol")
        assert home.open_claim_link(session, carol, "case-2-c1") == home.ClaimLink(
            "adjudicate", _pk(session, "case-2-c1"), "case-2-c1", "pilot")
        for claim_id in ("case-1-c2", "case-3-c1", "no-such-claim"):  # agreed, unlabeled, unknown
            with pytest.raises(PermissionDeniedError) as refused:
                home.open_claim_link(session, carol, claim_id)
            assert str(refused.value) == f"claim '{claim_id}' is not waiting for your decision"
        dana = add_user(session, OPERATOR, "dana", ["labeler", "adjudicator"], PASSWORD)
        assign_cases(session, OPERATOR, [find_case(session, "case-2").id], ["dana"])
        assert home.open_claim_link(session, dana, "case-2-c1").page == "label"  # theirs to label, never to decide
        assert home.open_claim_link(session, dana, "case-1-c1").page == "adjudicate"
        with pytest.raises(PermissionDeniedError, match="neither in your queue nor waiting for your decision"):
            home.open_claim_link(session, dana, "case-1-c2")
        with pytest.raises(PermissionDeniedError, match="'case-1-c1' is not in your queue"):
            home.open_claim_link(session, get_user(session, "root"), "case-1-c1")  # an admin has no queue


# --- the chart -----------------------------------------------------------------------------------


def test_the_state_chart_prints_each_bars_state_and_count_and_leaves_out_empty_bars():
    bars = [StateBar("normal", "agreed", 3, "agreed: 3"), StateBar("normal", "disputed", 0, "disputed: 0"),
            StateBar("paraphrase", "disputed", 1, "disputed: 1")]
    spec = state_chart(bars, states=["unlabeled", "agreed", "disputed"], title="Claims", x_title="Claims",
                       y_title="Slice", legend_title="State").to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [(row["group"], row["state"], row["text"]) for row in rows] == [("normal", "agreed", "agreed: 3"),
                                                                          ("paraphrase", "disputed", "disputed: 1")]
    bar, text = spec["layer"]
    assert bar["encoding"]["color"]["title"] == "State"
    assert bar["encoding"]["color"]["scale"]["domain"] == ["unlabeled", "agreed", "disputed"]
    assert text["mark"]["type"] == "text" and text["encoding"]["text"]["field"] == "text"
    assert bar["encoding"]["y"]["title"] == "Slice" and bar["encoding"]["y"]["sort"] == ["normal", "paraphrase"]
    with pytest.raises(ValueError):
        state_chart([StateBar("normal", "agreed", 0, "agreed: 0")], states=["agreed"], title="t", x_title="x",
                    y_title="y", legend_title="l")


# --- the page ------------------------------------------------------------------------------------


def _links(at) -> list[tuple[str, str, str]]:  # noqa: ANN001
    """(label, page, query string) of every page link."""
    return [(link.proto.label, link.proto.page, link.proto.query_string) for link in at.get("page_link")]


@ON_BOTH
def test_a_labelers_home_shows_the_queue_and_links_the_next_claim_on_the_label_page(engine):
    at = open_app("aoi", home=True)
    assert [t.value for t in at.title] == ["Home"]
    assert [s.value for s in at.header] == ["Your queue"]  # no other role's section
    assert at.get("progress")[0].proto.text == "0 of 3 claims labeled"
    assert {m.label: m.value for m in at.metric} == {"To label": "3", "To review": "0", "On hold": "0", "Done": "0"}
    assert _links(at) == [("Label the next claim: case-1-c1", "label", "claim=case-1-c1&dataset=pilot")]
    assert list(at.dataframe[0].value["Slice"]) == ["normal", "paraphrase"]
    labeling = open_app("aoi")  # on to the Label page, as the link does
    label_button(labeling, "support").click().run()
    at.run()
    assert at.get("progress")[0].proto.text == "1 of 3 claims labeled"
    assert _links(at) == [("Label the next claim: case-1-c2", "label", "claim=case-1-c2&dataset=pilot")]


def test_a_claim_link_to_the_main_address_opens_the_labelers_claim_on_the_label_page(engine):
    at = open_app("aoi", query={"claim": "case-1-c2"}, home=True)
    assert [t.value for t in at.title] == ["Label"]
    assert shown_claim(at) == "case-1-c2"


def test_a_labelers_home_is_the_same_before_and_after_the_other_labeler_labels(engine):
    before = page_dump(open_app("ren", home=True))
    aoi = open_app("aoi")
    aoi.text_area(key=f"label.rationale.{aoi.session_state['label.claim_pk']}").input("MARKER-home-blind")
    label_button(aoi, "contradict").click().run()  # case-1-c1, which ren has still to label
    assert [t.value for t in aoi.toast] == ["Saved contradict on claim case-1-c1."]
    after = page_dump(open_app("ren", home=True))
    assert after == before
    assert "MARKER-home-blind" not in after and "aoi" not in after


def _two_disputes(engine) -> None:  # noqa: ANN001
    """case-1-c1 and case-1-c2 disputed by aoi and ren, case-2-c1 agreed."""
    with session_scope(engine) as session:
        for claim_id, values in {"case-1-c1": ("support", "contradict"), "case-1-c2": ("insufficient", "support"),
                                 "case-2-c1": ("support", "support")}.items():
            for name, value in zip(("aoi", "ren"), values, strict=True):
                save_label(session, get_user(session, name), _pk(session, claim_id), value, rationale=f"{name} says")


@ON_BOTH
def test_an_adjudicators_home_counts_the_disputes_and_links_the_adjudicate_page(engine):
    _two_disputes(engine)
    at = open_app("mika", home=True)
    assert [s.value for s in at.header] == ["Disputes waiting for you"]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Waiting"], metrics["Of them stale"]) == ("2", "0")
    with session_scope(engine) as session:  # a dispute waits from its second label (a run past midnight UTC moves it)
        since = min(max(session.exec(select(Label.created_at).join(Claim).where(Claim.claim_id == claim_id)).all())
                    for claim_id in ("case-1-c1", "case-1-c2"))
    assert metrics["Oldest waiting since"] == since.date().isoformat()
    assert list(at.dataframe[0].value["Slice"]) == ["normal"]
    assert _links(at) == [("Open the Adjudicate page (2 waiting)", "adjudicate", ""),
                          ("Decide the oldest first: case-1-c1", "", "claim=case-1-c1&dataset=pilot")]  # "": Home, the main address
    dump = page_dump(at)
    assert "aoi" not in dump and "ren says" not in dump


def test_a_claim_link_opens_a_waiting_dispute_on_the_adjudicate_page_and_refuses_other_claims(engine):
    _two_disputes(engine)
    at = open_app("mika", query={"claim": "case-1-c2"}, home=True)
    assert [t.value for t in at.title] == ["Adjudicate"]
    assert at.selectbox(key="adjudicate.claim_pk").value == _claim_pk(engine, "case-1-c2")  # not the first in queue
    for claim_id in ("case-2-c1", "case-3-c1", "no-such-claim"):  # agreed, unlabeled, unknown: one message
        refused = open_app("mika", query={"claim": claim_id}, home=True)
        assert [t.value for t in refused.title] == ["Home"]
        assert [e.value for e in refused.error] == [f"claim '{claim_id}' is not waiting for your decision"]
        assert "Claim text" not in page_dump(refused)
    labeler = open_app("aoi", query={"claim": "case-3-c1"}, home=True)  # a labeler: not assigned to them
    assert [e.value for e in labeler.error] == ["claim 'case-3-c1' is not in your queue"]


@ON_BOTH
def test_an_admins_home_charts_states_by_slice_shows_agreement_and_what_blocks_the_release(engine):
    _label_both(engine)
    at = open_app("admin", home=True)
    assert [s.value for s in at.header] == ["Disputes waiting for you", "Project"]
    states = at.dataframe[1].value
    assert {k: v for k, v in zip(states["State"], states["Claims"], strict=True) if v} == {
        "unlabeled": 1, "agreed": 2, "disputed": 1}
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["title"]["text"] == "Claims by slice and state"
    assert spec["layer"][0]["encoding"]["color"]["title"] == "State"
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Claims"], metrics["Final (agreed or adjudicated)"]) == ("4", "2")
    assert metrics["Percent agreement"] == "0.667"  # as the Agreement page shows it
    assert "n = 3 / 4" in [c.value for c in at.caption]
    assert [w.value for w in at.warning] == [
        "A release of every claim (release create without --only-final) is refused now:"]
    assert [m.value for m in at.markdown if m.value.startswith("**") and ":" in m.value][-2:] == [
        "**unlabeled**: 1", "**disputed**: 1"]
    assert any(c.value.startswith("release create says: 2 of 4 claims in any dataset are not final") for c in at.caption)
    links = _links(at)
    assert ("Assign cases or wait for labels (Admin)", "admin", "") in links
    assert ("Decide the disputes", "adjudicate", "") in links
    assert ("Open the Agreement page (intervals, slices, pairs)", "agreement", "") in links
    assert ("Open the Releases page", "releases", "") in links
    dump = page_dump(at)
    assert not has_word("aoi", dump) and not has_word("ren", dump) and MARKER not in dump


def test_an_admins_home_reruns_without_computing_agreement_again_and_shows_a_corrected_label_at_once(engine, monkeypatch):
    from annotator.services.corrections import correct_label

    _label_both(engine)  # case-1-c2 is the one disagreement: ren's contradict
    calls = _count_agreement_reports(monkeypatch)
    at = open_app("admin", home=True)

    def percent() -> str:
        return next(m.value for m in at.metric if m.label == "Percent agreement")

    assert (percent(), len(calls)) == ("0.667", 1)
    at.run()
    at.run()
    assert not at.exception
    assert (percent(), len(calls)) == ("0.667", 1)  # the reruns reused it

    with session_scope(engine) as session:  # in another browser session, say
        correct_label(session, get_user(session, "admin"), _pk(session, "case-1-c2"), "ren", "support",
                      reason="misclick", expected_revision=1)
    at.run()
    assert (percent(), len(calls)) == ("1.000", 2)  # the correction shows on the next run
    at.run()
    assert (percent(), len(calls)) == ("1.000", 2)


def test_the_admins_home_reuses_its_agreement_figures_on_reruns_and_shows_a_new_label_at_the_next(engine, monkeypatch):
    """The page through AppTest: reruns with the labels unchanged compute no report; a label saved
    meanwhile (through the service, as another browser would) shows at the next rerun."""
    from annotator.ui.i18n import t

    calls = _count_agreement_reports(monkeypatch)
    with session_scope(engine) as session:  # case-1-c1 agreed, case-1-c2 disputed
        for claim_id, values in {"case-1-c1": ("support", "support"), "case-1-c2": ("support", "contradict")}.items():
            for name, value in zip(("aoi", "ren"), values, strict=True):
                save_label(session, get_user(session, name), _pk(session, claim_id), value)

    def percent_agreement(at) -> str:  # noqa: ANN001
        return {m.label: m.value for m in at.metric}[t("metric.percent_agreement")]

    at = open_app("admin", home=True)
    assert (percent_agreement(at), len(calls)) == ("0.500", 1)
    at.run()
    at.run()
    assert (percent_agreement(at), len(calls)) == ("0.500", 1)  # reruns reuse the figures
    with session_scope(engine) as session:
        for name in ("aoi", "ren"):
            save_label(session, get_user(session, name), _pk(session, "case-2-c1"), "insufficient")
    at.run()
    assert (percent_agreement(at), len(calls)) == ("0.667", 2)
    assert not at.exception
