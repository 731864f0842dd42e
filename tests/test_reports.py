"""Agreement reports from the database: blind labels only, breakdowns by slice, split and the
guideline version the labels were made under."""

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.services.access import OPERATOR
from annotator.models import Claim
from annotator.services.labeling import save_label
from annotator.services.reports import MIXED_VERSIONS, agreement_report, label_table
from annotator.services.users import get_user
from tests.factories import pilot


@pytest.fixture
def labeled_db(any_engine):
    """Six claims labeled by alice and bob: claims 1-2 both under v1 (agreeing), 3-4 both under
    v2 (disagreeing), 5 under v1 by alice and v2 by bob, 6 unlabeled by bob."""
    with session_scope(any_engine) as s:
        pilot(s)
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        claims = s.exec(select(Claim).order_by(Claim.id)).all()
        plan = [("support", "v1", "support", "v1"), ("contradict", "v1", "contradict", "v1"),
                ("support", "v2", "contradict", "v2"), ("insufficient", "v2", "support", "v2"),
                ("support", "v1", "support", "v2")]
        for claim, (a, va, b, vb) in zip(claims, plan):
            save_label(s, alice, claim.id, a, guideline_version=va)
            save_label(s, bob, claim.id, b, guideline_version=vb)
        save_label(s, alice, claims[5].id, "support", guideline_version="v2")
    return any_engine


def test_a_claim_labeled_under_two_guideline_versions_is_mixed(labeled_db):
    with session_scope(labeled_db) as s:
        table = label_table(s, OPERATOR)
    per_claim = table.groupby("item_id")["guideline_version"].unique().map(list).tolist()
    assert sorted(map(tuple, per_claim)) == sorted([("v1",), ("v1",), ("v2",), ("v2",), ("v2",), (MIXED_VERSIONS,)])


def test_agreement_is_broken_down_by_guideline_version(labeled_db):
    with session_scope(labeled_db) as s:
        report = agreement_report(s, OPERATOR, by=("slice", "guideline_version"), n_bootstrap=0)
    versions = report.groups["guideline_version"]
    assert set(versions) == {"v1", "v2", MIXED_VERSIONS}
    assert versions["v1"].percent_agreement.value == 1.0 and versions["v1"].n_items == 2
    assert versions["v2"].percent_agreement.value == 0.0 and versions["v2"].n_items == 2
    assert versions["v2"].n_in_scope == 3 and versions[MIXED_VERSIONS].n_items == 1
    assert all(part.indicative for part in versions.values())
    data = report.to_json()
    assert set(data["by_guideline_version"]) == {"v1", "v2", MIXED_VERSIONS} and data["by_slice"]


def test_an_unknown_breakdown_is_refused(labeled_db):
    with session_scope(labeled_db) as s, pytest.raises(ValueError, match="guideline_version"):
        agreement_report(s, OPERATOR, by="labeler", n_bootstrap=0)


def test_each_slice_counts_all_its_claims_in_scope_and_unlabeled_slices_are_listed(any_engine):
    from annotator.models import Case
    from annotator.services.labeling import save_label

    with session_scope(any_engine) as s:
        pilot(s, n_cases=4)  # slices alternate normal, paraphrase: two cases (four claims) each
        case4 = s.exec(select(Case).where(Case.case_id == "case-4")).one()
        case4.slice = "permission"
        s.add(case4)
        alice, bob = get_user(s, "alice"), get_user(s, "bob")
        first = s.exec(select(Claim).order_by(Claim.id)).first()
        save_label(s, alice, first.id, "support")
        save_label(s, bob, first.id, "support")
    with session_scope(any_engine) as s:
        report = agreement_report(s, OPERATOR, by="slice", n_bootstrap=0)
    slices = report.groups["slice"]
    assert {name: (part.n_items, part.n_in_scope) for name, part in slices.items()} == {
        "normal": (1, 4), "paraphrase": (0, 2), "permission": (0, 2)}
    assert report.to_json()["by_slice"]["permission"]["percent_agreement"] is None


def test_the_report_computed_without_pandas_is_the_one_of_label_tables_dataframe(labeled_db):
    from annotator.agreement import compute_agreement
    from annotator.services.reports import _label_columns

    with session_scope(labeled_db) as s:
        table = label_table(s, OPERATOR)
        columns = _label_columns(s, OPERATOR, None, None)
        report = agreement_report(s, OPERATOR, by=("slice", "guideline_version"), n_bootstrap=200, seed=3)
    assert {name: table[name].tolist() for name in table.columns} == columns
    assert MIXED_VERSIONS in columns["guideline_version"]
    from_frame = compute_agreement(table, n_bootstrap=200, seed=3, by=("slice", "guideline_version"))
    assert report.to_json()["by_pair"] == from_frame.to_json()["by_pair"]
    assert report.groups["guideline_version"] == from_frame.groups["guideline_version"]
    assert report.krippendorff_alpha == from_frame.krippendorff_alpha and report.ci95 == from_frame.ci95
