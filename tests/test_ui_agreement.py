"""The Agreement page driven through AppTest: every coefficient with its interval and n,
undefined coefficients with their reason, the kappa paradox, small-sample guidance, breakdowns
(indicative groups, single groups hidden), the cached report, and who may open the page. Also
the pure builders behind it (annotator.ui.format, annotator.ui.charts) and the label fingerprint.

Each test seeds a fresh SQLite database: one case with one claim per planned row, assigned to
alice and bob, labeled through the labeling service with the planned values and guideline
versions. Expected figures come from `agreement_report` on the same labels (seeded bootstrap,
so the same numbers as the page), or are worked out by hand.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import select
from streamlit.testing.v1 import AppTest

import annotator.services.reports as reports
from annotator.agreement import METRICS, compute_agreement
from annotator.services.access import OPERATOR
from annotator.db import init_db, session_scope
from annotator.models import Case, Claim
from annotator.services.fingerprint import label_fingerprint
from annotator.services.labeling import assign_cases, save_label
from annotator.services.users import add_user, get_user
from annotator.ui import charts
from annotator.ui import format as fmt
from annotator.ui.i18n import t, use_language
from tests.conftest import ON_BOTH, no_seed, seeded_url
from tests.factories import PASSWORD, make_dataset, make_team
from tests.test_ui_app import page_dump

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"
PAGE = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "views" / "agreement.py"
GROUPS = ("slice", "split", "guideline_version")

# One planned claim: (slice, split, (alice's label, version), (bob's label, version)); None: no label.
Plan = list[tuple[str, str, tuple[str, str] | None, tuple[str, str] | None]]


def plan_of(pairs: list[tuple[str, str]], slice_: str = "normal", split: str = "dev", version: str = "g1") -> Plan:
    """Claims labeled `pairs` (alice's, bob's), all in one slice, split and guideline version."""
    return [(slice_, split, (a, version), (b, version)) for a, b in pairs]


BALANCED = plan_of([("support", "support")] * 5 + [("contradict", "contradict")] * 5
                   + [("insufficient", "insufficient")] * 4 + [("support", "contradict"), ("insufficient", "support")])
"""16 claims, the three categories evenly used, 14 agreements: no paradox."""

SKEWED = plan_of([("support", "support")] * 18 + [("support", "contradict"), ("contradict", "support")])
"""20 claims, 18 both support, one disagreement each way: percent agreement 0.9, Cohen's kappa
(0.9 - 0.905) / (1 - 0.905) = -0.053 (each labeler 19 support, 1 contradict), support 95% of labels."""

ONE_CATEGORY = plan_of([("support", "support")] * 6)
"""Every label support: every chance-corrected coefficient is 0/0."""

SLICED = (plan_of([("support", "support")] * 8 + [("contradict", "contradict")] * 3 + [("support", "insufficient")])
          + plan_of([("support", "support"), ("contradict", "support"), ("insufficient", "insufficient")],
                    slice_="paraphrase"))
"""12 claims in slice normal (not indicative) and 3 in paraphrase (indicative); all dev, all g1."""


def seed(engine, plan: Plan) -> None:  # noqa: ANN001 - Engine
    """Cases case-1.. (one claim each) with the plan's slices and splits, the factory team,
    every case assigned to alice and bob, and the planned labels saved."""
    with session_scope(engine) as session:
        dataset = make_dataset(session, n_cases=len(plan), claims_per_case=1, slices=("normal",))
        make_team(session)
        cases = session.exec(select(Case).where(Case.dataset_id == dataset.id).order_by(Case.position)).all()
        for case, (slice_, split, _, _) in zip(cases, plan, strict=True):
            case.slice, case.split = slice_, split
            session.add(case)
        assign_cases(session, OPERATOR, [c.id for c in cases], ["alice", "bob"])
        users = {name: get_user(session, name) for name in ("alice", "bob")}
        for case, (_, _, alice, bob) in zip(cases, plan, strict=True):
            claim = session.exec(select(Claim).where(Claim.case_pk == case.id)).one()
            for name, planned in (("alice", alice), ("bob", bob)):
                if planned is not None:
                    save_label(session, users[name], claim.id, planned[0], guideline_version=planned[1])


@pytest.fixture
def engine(request, tmp_path, monkeypatch):
    """An empty database the app opens: SQLite, or PostgreSQL as well for a test marked ON_BOTH."""
    url = seeded_url(request, f"sqlite:///{tmp_path}/agreement.db", no_seed)
    engine = init_db(url)
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    yield engine
    st.cache_data.clear()
    st.cache_resource.clear()
    engine.dispose()


@pytest.fixture
def report_calls(monkeypatch):
    """Counts the page's calls of reports.agreement_report (the bootstrap computation)."""
    calls = []
    real = reports.agreement_report

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(reports, "agreement_report", counting)
    return calls


def expected(engine, target: float = 0.1) -> dict:  # noqa: ANN001
    """The report the page should show: same labels, same bootstrap, same seed."""
    with session_scope(engine) as session:
        return reports.agreement_report(session, OPERATOR, None, by=GROUPS, n_bootstrap=reports.DEFAULT_BOOTSTRAP,
                                        seed=0).to_json(target_half_width=target)


def open_page(name: str = "root") -> AppTest:
    """Log in as `name` and open the Agreement page."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    at.switch_page("views/agreement.py").run()
    assert not at.exception
    assert [e.value for e in at.error] == []
    return at


def overall(at: AppTest) -> dict[str, dict[str, str]]:
    """The overall table: coefficient name -> its row."""
    frame = at.table[0].value
    return {row[t("col.metric")]: row for row in frame.to_dict("records")}


def figure_of(value: float, ci: list[float], digits: int = 3) -> str:
    return f"{value:.{digits}f} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def metrics_shown(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def chart_specs(at: AppTest) -> list[dict]:
    import json

    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


# --- figures, intervals, n -----------------------------------------------------------------------


@ON_BOTH
def test_every_coefficient_is_shown_with_its_interval_analytic_interval_and_n(engine):
    seed(engine, BALANCED)
    want = expected(engine)
    at = open_page()
    rows = overall(at)
    assert list(rows) == [t(f"metric.{m}") for m in METRICS]
    for metric in METRICS:
        row = rows[t(f"metric.{metric}")]
        assert row[t("col.value")] == figure_of(want[metric], want["ci95"][metric])
        assert row[t("col.n")] == f"{want['n_used'][metric]} / 16"
        analytic = want["analytic_ci95"][metric]
        assert row[t("col.analytic")] == (f"[{analytic[0]:.3f}, {analytic[1]:.3f}]" if analytic else "—")
    assert want["analytic_ci95"]["cohen_kappa"] and want["analytic_ci95"]["percent_agreement"]
    assert metrics_shown(at) == {t(f"metric.{m}"): f"{want[m]:.3f}" for m in fmt.MAIN_METRICS}
    captions = [c.value for c in at.caption]
    for metric in fmt.MAIN_METRICS:
        assert f"{figure_of(want[metric], want['ci95'][metric])} · n = 16 / 16" in captions


FEW = plan_of([("support", "support"), ("contradict", "contradict"), ("support", "contradict"),
               ("insufficient", "insufficient"), ("support", "support")])
"""5 claims: too few for an analytic interval; chance-corrected intervals reach from 0 or below to 1."""


def whole_range_metrics(report: dict) -> list[str]:
    """The coefficients whose bootstrap interval runs from 0 (or below) to 1 at three decimals."""
    return [m for m in METRICS if report.get(m) is not None and (ci := report["ci95"].get(m))
            and round(ci[0], 3) <= 0 and round(ci[1], 3) >= 1]


@ON_BOTH
def test_a_few_claims_say_why_an_interval_bounds_nothing_and_why_no_analytic_interval(engine):
    seed(engine, FEW)
    want = expected(engine)
    whole = whole_range_metrics(want)
    assert whole and not any(want["analytic_ci95"].values())  # the data is a case in point
    at = open_page()
    rows = overall(at)
    for metric in ("percent_agreement", "cohen_kappa"):
        assert rows[t(f"metric.{metric}")][t("col.analytic")] == (
            "none: a large-sample interval needs at least 10 items; there are 5")
    assert rows[t("metric.scott_pi")][t("col.analytic")] == "—"  # no analytic interval exists for it
    captions = [c.value for c in at.caption]
    assert (f"The interval of {', '.join(t(f'metric.{m}') for m in whole)}: it runs from 0 (or below) to 1, so it "
            "rules nothing out: too few items to bound it; label more items.") in captions
    assert not re.search(r"-0\.0+\b", page_dump(at))  # a negative zero is 0


def test_a_group_figure_whose_interval_bounds_nothing_points_to_a_note_that_says_why(engine):
    seed(engine, SLICED)
    part = expected(engine)["by_slice"]["paraphrase"]
    whole = [m for m in whole_range_metrics(part) if m in fmt.GROUP_METRICS]
    assert whole
    at = open_page()
    paraphrase = at.dataframe[1].value.iloc[1]
    assert paraphrase[t("col.slice")] == "paraphrase"
    for metric in whole:
        assert paraphrase[t(f"metric_short.{metric}")] == f"{fmt.figure(part, metric, 2)} (note 1)"
    normal = at.dataframe[1].value.iloc[0]
    assert "(note" not in " ".join(normal[t(f"metric_short.{m}")] for m in fmt.GROUP_METRICS)
    assert ("Note 1. Interval: it runs from 0 (or below) to 1, so it rules nothing out: too few items to bound it; "
            "label more items.") in [c.value for c in at.caption]


def test_the_percent_agreement_shown_is_the_share_of_claims_labeled_alike(engine):
    seed(engine, BALANCED)
    assert metrics_shown(open_page())[t("metric.percent_agreement")] == f"{14 / 16:.3f}"


def test_an_undefined_coefficient_reads_undefined_with_its_reason_never_nan(engine):
    seed(engine, ONE_CATEGORY)
    want = expected(engine)
    assert want["cohen_kappa"] is None and want["krippendorff_alpha"] is None
    at = open_page()
    rows = overall(at)
    for metric in ("cohen_kappa", "scott_pi", "fleiss_kappa", "krippendorff_alpha"):
        reason = want["undefined"][metric]
        assert reason  # the core says why
        assert rows[t(f"metric.{metric}")][t("col.value")] == f"undefined: {reason}"
    assert rows[t("metric.percent_agreement")][t("col.value")].startswith("1.000 [")
    assert metrics_shown(at)[t("metric.cohen_kappa")] == "undefined"
    assert f"undefined: {want['undefined']['cohen_kappa']} · n = 6 / 6" in [c.value for c in at.caption]
    shown = page_dump(at)
    assert not re.search(r"\bnan\b", shown, re.IGNORECASE)
    assert "None" not in "".join(str(v) for row in rows.values() for v in row.values())


def test_with_no_claim_labeled_twice_every_figure_says_why_and_the_page_stops_there(engine):
    seed(engine, [("normal", "dev", ("support", "g1"), None)] * 2)
    at = open_page("root")
    rows = overall(at)
    assert all(row[t("col.value")].startswith("undefined: ") for row in rows.values())
    assert [w.value for w in at.warning] == [t("agreement.no_pairs")]
    assert [s.value for s in at.header] == [t("agreement.overall")]


# --- the kappa paradox -----------------------------------------------------------------------


def test_skewed_high_agreement_explains_the_paradox_and_shows_ac1_beside_kappa(engine):
    seed(engine, SKEWED)
    want = expected(engine)
    assert want["percent_agreement"] == pytest.approx(0.9)
    assert want["cohen_kappa"] == pytest.approx((0.9 - 0.905) / (1 - 0.905))
    at = open_page()
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1
    text = warnings[0]
    assert "Percent agreement is high (0.900)" in text
    assert f"Cohen's kappa ({want['cohen_kappa']:.3f}) is much lower" in text
    assert "support holds 95% of the labels" in text
    assert f"Gwet's AC1, less sensitive to such skew, is {figure_of(want['gwet_ac1'], want['ci95']['gwet_ac1'])}" in text
    assert list(metrics_shown(at)) == [t("metric.percent_agreement"), t("metric.cohen_kappa"), t("metric.gwet_ac1"),
                                       t("metric.krippendorff_alpha")]
    assert metrics_shown(at)[t("metric.gwet_ac1")] == f"{want['gwet_ac1']:.3f}"


def test_balanced_data_shows_no_paradox_and_no_ac1_headline(engine):
    seed(engine, BALANCED)
    assert expected(engine)["paradox"] is None
    at = open_page()
    assert [w.value for w in at.warning] == []
    assert list(metrics_shown(at)) == [t(f"metric.{m}") for m in fmt.MAIN_METRICS]


def test_label_counts_per_labeler_are_shown_beside_the_coefficients(engine):
    seed(engine, SKEWED)
    counts = open_page().dataframe[0].value
    assert list(counts.columns) == ["alice", "bob"]
    assert list(counts.index) == ["support", "contradict", "insufficient", "Total"]
    assert list(counts["alice"]) == ["19 (95%)", "1 (5%)", "0 (0%)", "20"]


# --- small-sample guidance -------------------------------------------------------------------


def _more_needed(ci: list[float], n: int, target: float) -> int:
    half_width = (ci[1] - ci[0]) / 2
    return math.ceil(n * (half_width / target) ** 2) - n


def test_the_sample_size_text_names_the_claims_needed_for_the_chosen_target(engine):
    seed(engine, BALANCED)
    want = expected(engine)
    ci, n = want["ci95"]["krippendorff_alpha"], want["n_used"]["krippendorff_alpha"]
    more = _more_needed(ci, n, 0.10)
    assert more > 0
    at = open_page()
    assert at.radio(key="agreement.target").value == 0.10
    text = (f"About {more:,} more double-labeled claims would bring the 95% interval of Krippendorff's alpha (nominal) "
            f"to ±0.10 (now ±{(ci[1] - ci[0]) / 2:.2f} from 16 claims); an estimate assuming the labels keep "
            "their current mix.")
    assert text in [m.value for m in at.markdown]
    at.radio(key="agreement.target").set_value(0.05).run()
    more_05 = _more_needed(ci, n, 0.05)
    assert more_05 > more
    assert any(m.value.startswith(f"About {more_05:,} more double-labeled claims") and "to ±0.05" in m.value
               for m in at.markdown)


def test_an_interval_already_within_the_target_says_so(engine):
    seed(engine, plan_of([("support", "support")] * 36 + [("contradict", "contradict")] * 36
                         + [("insufficient", "insufficient")] * 36 + [("support", "contradict")] * 4
                         + [("contradict", "insufficient")] * 4 + [("insufficient", "support")] * 4))
    at = open_page()
    at.radio(key="agreement.target").set_value(0.20).run()
    sample = [m.value for m in at.markdown if "Krippendorff" in m.value]
    assert len(sample) == 1 and sample[0].startswith("The 95% interval of Krippendorff's alpha (nominal) is already ±")
    assert "within the target ±0.20" in sample[0]


def test_a_zero_width_interval_gives_no_estimate_and_says_why(engine):
    seed(engine, plan_of([("support", "support")] * 40 + [("contradict", "contradict")] * 40))
    at = open_page()
    sample = [m.value for m in at.markdown if m.value.startswith("No estimate of the claims needed")]
    assert len(sample) == 1 and "zero width" in sample[0]


def test_without_an_interval_the_sample_size_text_says_why(engine):
    seed(engine, ONE_CATEGORY)
    reason = expected(engine)["undefined"]["krippendorff_alpha"]
    at = open_page()
    assert (f"No estimate of the claims needed: Krippendorff's alpha (nominal) has no interval ({reason})."
            in [m.value for m in at.markdown])


# --- breakdowns ------------------------------------------------------------------------------


def test_the_slice_table_marks_a_slice_under_ten_claims_as_indicative_in_text(engine):
    seed(engine, SLICED)
    want = expected(engine)
    at = open_page()
    assert [tab.label for tab in at.tabs] == ["Per slice (2)"]
    table = at.dataframe[1].value
    assert list(table[t("col.slice")]) == ["normal", "paraphrase"]
    assert list(table[t("col.items")]) == [12, 3]
    assert list(table[t("col.indicative")]) == ["", "indicative only"]
    kappa = want["by_slice"]["normal"]
    assert table[t("metric_short.cohen_kappa")][0] == figure_of(kappa["cohen_kappa"], kappa["ci95"]["cohen_kappa"], 2)
    chart = next(spec for spec in chart_specs(at) if spec["title"]["text"].startswith("Slice"))
    assert chart["title"]["text"] == "Slice: coefficients per group with 95% intervals"
    point = next(layer for layer in chart["spec"]["layer"] if layer["mark"]["type"] == "point")
    shapes = point["encoding"]["shape"]["scale"]
    assert shapes == {"domain": ["10 or more claims", "indicative only (fewer than 10 claims)"],
                      "range": ["circle", "triangle-up"]}


def test_an_undefined_group_coefficient_points_to_a_note_that_gives_its_reason(engine):
    seed(engine, SLICED[:12] + plan_of([("support", "support")] * 3, slice_="paraphrase"))
    reasons = expected(engine)["by_slice"]["paraphrase"]["undefined"]
    at = open_page()
    paraphrase = at.dataframe[1].value.iloc[1]
    assert paraphrase[t("col.slice")] == "paraphrase"
    assert paraphrase[t("metric_short.cohen_kappa")] == "undefined (note 1)"
    assert paraphrase[t("metric_short.krippendorff_alpha")] == "undefined (note 2)"
    assert paraphrase[t("metric_short.percent_agreement")] == "1.00 [1.00, 1.00]"
    captions = [c.value for c in at.caption]
    assert f"Note 1. Undefined: {reasons['cohen_kappa']}." in captions
    assert f"Note 2. Undefined: {reasons['krippendorff_alpha']}." in captions


def test_a_breakdown_with_one_group_is_hidden_with_a_caption(engine):
    seed(engine, SLICED)
    at = open_page()
    captions = [c.value for c in at.caption]
    assert "Split: every claim with two labels is in one group (dev), so there is no breakdown." in captions
    assert "Guideline version: every claim with two labels is in one group (g1), so there is no breakdown." in captions
    assert not any(tab.label.startswith(("Per split", "Per guideline version")) for tab in at.tabs)


@ON_BOTH
def test_guideline_versions_get_a_tab_and_a_claim_labeled_under_two_versions_is_mixed(engine):
    seed(engine, plan_of([("support", "support")] * 3, version="g1") + plan_of([("contradict", "contradict")] * 2, version="g2")
         + [("normal", "holdout", ("support", "g1"), ("support", "g2"))])
    at = open_page()
    assert [tab.label for tab in at.tabs] == ["Per split (2)", "Per guideline version (3)"]
    versions = at.dataframe[2].value
    assert list(versions[t("col.guideline_version")]) == ["g1", "g2", "mixed (labels under different versions)"]
    assert list(versions[t("col.items")]) == [3, 2, 1]
    assert "Slice: every claim with two labels is in one group (normal), so there is no breakdown." in [
        c.value for c in at.caption]


# --- pairs and categories --------------------------------------------------------------------


def test_the_pair_table_and_confusion_matrix_show_kappa_with_interval_and_n(engine):
    seed(engine, BALANCED)
    want = expected(engine)
    at = open_page()
    confusion = at.dataframe[1].value  # no breakdown has two groups: the confusion matrix is next
    assert confusion.to_numpy().tolist() == want["by_pair"][0]["confusion"]
    pairs = at.dataframe[2].value
    assert pairs.iloc[0].tolist()[:4] == ["alice", "bob", 16, figure_of(want["cohen_kappa"], want["ci95"]["cohen_kappa"])]
    titles = [spec["title"]["text"] for spec in chart_specs(at)]
    assert "Confusion matrix of alice (rows) and bob (columns)" in titles


def test_specific_agreement_per_category_has_its_interval_and_a_one_line_explanation(engine):
    seed(engine, BALANCED)
    want = expected(engine)["by_category"]
    at = open_page()
    table = at.dataframe[3].value
    assert list(table[t("col.category")]) == ["support", "contradict", "insufficient"]
    support = want["support"]
    assert table[t("col.specific")][0] == figure_of(support["specific_agreement"], support["ci95"])
    assert list(table[t("col.ratings")]) == [want[c]["n_ratings"] for c in ("support", "contradict", "insufficient")]
    assert any(c.value.startswith("Specific agreement: when one labeler said a category (for example support), "
                                  "how often the other labeler said it too.") for c in at.caption)


def test_with_three_labelers_fleiss_kappa_headlines_and_a_pair_matrix_is_drawn(engine):
    seed(engine, BALANCED)
    with session_scope(engine) as session:
        add_user(session, OPERATOR, "dave", ["labeler"], PASSWORD)
        first = session.exec(select(Case).order_by(Case.position).limit(4)).all()
        assign_cases(session, OPERATOR, [c.id for c in first], ["dave"])
        dave = get_user(session, "dave")
        for case in first:
            save_label(session, dave, session.exec(select(Claim.id).where(Claim.case_pk == case.id)).one(), "support",
                       guideline_version="g1")
    want = expected(engine)
    assert want["n_raters"] == 3 and want["cohen_kappa"] is None
    at = open_page()
    assert list(metrics_shown(at)) == [t("metric.percent_agreement"), t("metric.fleiss_kappa"),
                                       t("metric.krippendorff_alpha")]
    assert metrics_shown(at)[t("metric.fleiss_kappa")] == f"{want['fleiss_kappa']:.3f}"
    pairs = at.dataframe[4].value  # label counts, then the three confusion matrices
    assert [tuple(row[:3]) for row in pairs.to_numpy().tolist()] == [
        ("alice", "bob", 16), ("alice", "dave", 4), ("bob", "dave", 4)]
    matrix = next(spec for spec in chart_specs(at) if spec["title"]["text"] == t("agreement.pair_matrix"))
    assert matrix["layer"][-1]["mark"]["type"] == "text"
    assert t("agreement.pair_matrix_two") not in [c.value for c in at.caption]


# --- many labelers: a page of pairs at a time --------------------------------------------------

MANY = [f"lab-{k:02d}" for k in range(1, 13)]
"""Twelve labelers: 66 pairs, more than the page draws at once (PAIRS_DRAWN)."""


def seed_many(engine, tmp_path) -> None:  # noqa: ANN001
    """One case of three claims per pair of MANY, labeled by that pair (labels import; seeded), so
    that every pair shares three claims and the pairs' kappas differ."""
    import itertools
    import random

    from annotator.services.imports import import_labels

    pairs = list(itertools.combinations(MANY, 2))
    rng = random.Random(20)
    lines = ["claim_id,labeler,label"]
    for k, (a, b) in enumerate(pairs, start=1):
        for j in range(1, 4):
            first = rng.choice(("support", "contradict", "insufficient"))
            second = first if rng.random() < 0.6 else rng.choice(("support", "contradict", "insufficient"))
            lines += [f"case-{k}-c{j},{a},{first}", f"case-{k}-c{j},{b},{second}"]
    path = tmp_path / "many.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with session_scope(engine) as session:
        make_dataset(session, n_cases=len(pairs), claims_per_case=3, slices=("normal",))
        make_team(session)
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, path)


def pair_heading(pair: dict) -> str:
    return t("agreement.pair", a=pair["rater_a"], b=pair["rater_b"], n=pair["n_items"])


def pair_rows(at: AppTest) -> dict[tuple[str, str], list]:
    """The pair table (the data frame with a row per pair): (labeler A, labeler B) -> its row."""
    table = next(df.value for df in at.dataframe if t("col.labeler_a") in df.value.columns)
    return {(row[0], row[1]): row for row in table.to_numpy().tolist()}


def test_with_many_labelers_ten_pairs_are_drawn_lowest_kappa_first_and_the_table_lists_every_pair(engine, tmp_path):
    seed_many(engine, tmp_path)
    want = expected(engine)
    assert (want["n_raters"], len(want["by_pair"])) == (12, 66)
    at = open_page()
    assert t("agreement.pairs_many", n=66, shown=10) in [c.value for c in at.caption]
    worst = fmt.ordered_pairs(want["by_pair"], "kappa")
    assert [e.label for e in at.expander] == [pair_heading(p) for p in worst[:10]]
    kappas = [p["cohen_kappa"] for p in worst if p["cohen_kappa"] is not None]
    assert kappas == sorted(kappas) and kappas[0] < kappas[-1]
    rows = pair_rows(at)
    assert len(rows) == 66 and list(rows) == [(p["rater_a"], p["rater_b"]) for p in worst]  # in the order chosen
    drawn = worst[0]  # resampled when drawn: the interval the full report gives
    kappa_shown = rows[drawn["rater_a"], drawn["rater_b"]][3]
    assert kappa_shown == figure_of(drawn["cohen_kappa"], drawn["ci95"]["cohen_kappa"])
    later = next(p for p in worst[10:] if p["cohen_kappa"] is not None)  # not drawn: not resampled
    assert rows[later["rater_a"], later["rater_b"]][3] == t("agreement.value_not_drawn",
                                                              value=f"{later['cohen_kappa']:.3f}")
    assert at.expander[0].dataframe[0].value.to_numpy().tolist() == drawn["confusion"]


def test_choosing_a_pair_draws_its_confusion_matrix_first_and_another_page_draws_the_next_ten(engine, tmp_path):
    seed_many(engine, tmp_path)
    want = expected(engine)
    worst = fmt.ordered_pairs(want["by_pair"], "kappa")
    best = worst[-1]  # far from the first page
    at = open_page()
    at.selectbox(key="agreement.pair_pick").set_value((best["rater_a"], best["rater_b"])).run()
    assert not at.exception
    assert at.expander[0].label == pair_heading(best)
    assert at.expander[0].proto.expanded
    assert at.expander[0].dataframe[0].value.to_numpy().tolist() == best["confusion"]
    row = pair_rows(at)[best["rater_a"], best["rater_b"]]
    assert row[4] == figure_of(best["percent_agreement"], best["ci95"]["percent_agreement"])

    at.selectbox(key="agreement.pair_page").set_value(10).run()
    assert [e.label for e in at.expander] == [pair_heading(p) for p in [best, *worst[10:20]]]
    at.selectbox(key="agreement.pair_pick").set_value(None)
    at.radio(key="agreement.pair_order").set_value("items").run()
    by_items = fmt.ordered_pairs(want["by_pair"], "items")
    assert [e.label for e in at.expander] == [pair_heading(p) for p in by_items[10:20]]
    assert not at.exception


def test_the_pairs_are_ordered_lowest_kappa_first_undefined_last_or_by_claims_or_by_name():
    pairs = [{"rater_a": "a", "rater_b": "b", "n_items": 4, "cohen_kappa": 0.5},
             {"rater_a": "a", "rater_b": "c", "n_items": 9, "cohen_kappa": None},
             {"rater_a": "b", "rater_b": "c", "n_items": 2, "cohen_kappa": -0.2},
             {"rater_a": "b", "rater_b": "d", "n_items": 9, "cohen_kappa": 0.5}]
    names = lambda order: [p["rater_a"] + p["rater_b"] for p in fmt.ordered_pairs(pairs, order)]  # noqa: E731
    assert names("kappa") == ["bc", "bd", "ab", "ac"]
    assert names("items") == ["bd", "ac", "ab", "bc"]
    assert names("name") == ["ab", "ac", "bc", "bd"]
    with pytest.raises(ValueError, match="unknown order"):
        fmt.ordered_pairs(pairs, "alpha")


# --- caching ---------------------------------------------------------------------------------


def test_the_report_is_computed_once_and_again_only_when_a_label_changes(engine, report_calls):
    seed(engine, BALANCED[:-1] + [("normal", "dev", ("insufficient", "g1"), None)])
    at = open_page()
    assert len(report_calls) == 1
    assert report_calls[0]["n_bootstrap"] == reports.DEFAULT_BOOTSTRAP
    at.radio(key="agreement.target").set_value(0.15).run()
    at.run()
    assert len(report_calls) == 1  # reruns reuse the cached report
    assert at.caption[0].value.startswith("15 claims with two or more labels, of 16 in scope")
    with session_scope(engine) as session:
        claim = session.exec(select(Claim).join(Case).where(Case.case_id == "case-16")).one()
        save_label(session, get_user(session, "bob"), claim.id, "support")
    at.run()
    assert len(report_calls) == 2
    assert at.caption[0].value.startswith("16 claims with two or more labels, of 16 in scope")


def test_the_fingerprint_moves_with_a_new_or_revised_label_and_only_in_its_dataset(any_engine):
    seed(any_engine, [("normal", "dev", ("support", "g1"), None)])
    with session_scope(any_engine) as session:
        other = make_dataset(session, name="other", n_cases=1, claims_per_case=1)
        pilot = session.exec(select(Claim.dataset_id).where(Claim.dataset_id != other.id)).first()
        before, before_other = label_fingerprint(session, OPERATOR, pilot), label_fingerprint(session, OPERATOR, other.id)
        claim = session.exec(select(Claim).where(Claim.dataset_id == pilot)).one()
        alice = get_user(session, "alice")
        label = save_label(session, alice, claim.id, "contradict", expected_revision=1)  # a revision, same row count
        revised = label_fingerprint(session, OPERATOR, pilot)
        save_label(session, get_user(session, "bob"), claim.id, "support")
        added = label_fingerprint(session, OPERATOR, pilot)
        assert label.revision == 2
        assert len({before, revised, added}) == 3
        assert (revised.labels, added.labels) == (1, 2)
        assert label_fingerprint(session, OPERATOR, other.id) == before_other
        assert label_fingerprint(session, OPERATOR, None).labels == 2


# --- who may open the page -------------------------------------------------------------------


@pytest.mark.parametrize("roles", [["labeler"], ["labeler", "adjudicator"]])
def test_a_labeler_opening_the_page_directly_gets_no_figure_and_no_computation(engine, report_calls, roles):
    seed(engine, SKEWED)
    with session_scope(engine) as session:
        user = add_user(session, OPERATOR, "lena", roles, PASSWORD)
        assign_cases(session, OPERATOR, [session.exec(select(Case.id)).first()], ["lena"])
        user_pk = user.id
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["auth.user_pk"] = user_pk
    at.session_state["auth.user_name"] = "lena"
    at.run()
    assert [e.value for e in at.error] == [t("auth.denied")]
    assert report_calls == []
    assert (len(at.metric), len(at.dataframe), len(at.table), len(at.get("vega_lite_chart"))) == (0, 0, 0, 0)
    dump = page_dump(at)
    assert "alice" not in dump and "bob" not in dump and "kappa" not in dump.lower()


def test_a_labeler_has_no_agreement_page_in_the_navigation(engine):
    seed(engine, SKEWED)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="login.name").input("alice")
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/agreement.py")


def test_an_adjudicator_gets_no_figure_either(engine, report_calls):
    """An adjudicator who saw which labeler disagreed how could tell who "Labeler 1" is."""
    seed(engine, SKEWED)
    with session_scope(engine) as session:
        user_pk = get_user(session, "carol").id
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["auth.user_pk"] = user_pk
    at.session_state["auth.user_name"] = "carol"
    at.run()
    assert [e.value for e in at.error] == [t("auth.denied")]
    assert report_calls == [] and len(at.metric) == 0
    assert "alice" not in page_dump(at) and "bob" not in page_dump(at)


def test_the_page_opens_for_an_admin(engine, report_calls):
    seed(engine, SKEWED)
    at = open_page("root")
    assert not at.exception and [e.value for e in at.error] == []
    assert len(report_calls) == 1 and len(at.metric) == 4


# --- the pure builders -----------------------------------------------------------------------


def test_figures_read_value_and_interval_or_undefined_with_the_reason():
    report = {"cohen_kappa": 0.71234, "ci95": {"cohen_kappa": [0.5, 0.9]}, "undefined": {"gwet_ac1": "0/0"},
              "gwet_ac1": None, "scott_pi": 0.2, "n_used": {"cohen_kappa": 18}, "n_in_scope": 20}
    assert fmt.figure(report, "cohen_kappa") == "0.712 [0.500, 0.900]"
    assert fmt.figure(report, "cohen_kappa", 2) == "0.71 [0.50, 0.90]"
    assert fmt.figure(report, "gwet_ac1") == "undefined: 0/0"
    assert fmt.figure(report, "scott_pi") == "0.200 (no interval)"
    assert fmt.n_text(report, "cohen_kappa") == "n = 18 / 20"
    assert fmt.group_name("slice", "") == "none set"
    assert fmt.group_name("guideline_version", "mixed") == "mixed (labels under different versions)"
    assert fmt.group_name("slice", "mixed") == "mixed"


def test_the_notes_on_intervals_are_written_in_japanese_and_never_as_minus_zero():
    report = compute_agreement([(f"i{n}", r, label) for n, pair in enumerate(
        [("support", "support"), ("contradict", "contradict"), ("support", "contradict"), ("insufficient", "insufficient")])
        for r, label in zip("ab", pair)], n_bootstrap=1000, seed=0).to_json()
    report["ci95"]["gwet_ac1"] = [-8.3e-17, 1.0]
    with use_language("ja"):
        assert fmt.analytic(report, "cohen_kappa") == "なし: 大標本区間には主張が 10 件以上必要です（現在 4 件）"
        assert fmt.analytic(report, "scott_pi") == "—"
        assert fmt.figure(report, "gwet_ac1").endswith("[0.000, 1.000]")
        assert fmt.whole_range_text({"A": [-0.0, 1.0], "B": [0.2, 1.0], "C": [-0.25, 1.0]}) == (
            "A、C の区間: 0（またはそれ以下）から 1 までに及び、何も絞り込めていません。主張が少なすぎて区間を"
            "絞れないためです。さらに主張にラベルを付けてください。")
        assert any(note.startswith(f"{t('metric.gwet_ac1')}") or t("metric.gwet_ac1") in note
                   for note in fmt.overall_notes(report))
    assert fmt.whole_range_text({"B": [0.2, 1.0]}) is None


def test_the_pair_matrix_prints_kappa_undefined_or_no_shared_claims_in_each_cell():
    rows = [("i1", "ann", "support"), ("i1", "ben", "support"), ("i2", "ann", "contradict"), ("i2", "ben", "contradict"),
            ("i3", "ann", "support"), ("i3", "cy", "support"), ("i4", "ann", "support"), ("i4", "cy", "support")]
    report = compute_agreement(rows, n_bootstrap=0).to_json()
    raters, cells = fmt.pair_cells(report)
    assert raters == ["ann", "ben", "cy"]
    assert [(c.rater_a, c.rater_b, c.text) for c in cells] == [
        ("ann", "ben", "1.00"), ("ann", "cy", "undefined"), ("ben", "cy", "no shared claims")]
    spec = charts.pair_matrix_chart(raters, cells, title="Cohen's kappa per pair", legend_title="kappa").to_dict()
    assert spec["title"]["text"] == "Cohen's kappa per pair"
    assert spec["layer"][2]["mark"]["type"] == "text" and spec["layer"][2]["encoding"]["text"]["field"] == "text"


def test_the_confusion_chart_prints_every_count_under_an_accessible_title():
    spec = charts.confusion_chart([[3, 1, 0], [0, 2, 0], [0, 0, 1]], ["support", "contradict", "insufficient"],
                                  "ann", "ben", title="Confusion matrix of ann and ben").to_dict()
    assert spec["title"]["text"] == spec["description"] == "Confusion matrix of ann and ben"
    text = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "text")
    assert text["encoding"]["text"]["field"] == "n"
    values = next(iter(spec["datasets"].values()))
    assert sorted(v["n"] for v in values) == [0, 0, 0, 0, 0, 1, 1, 2, 3]


def test_an_interval_chart_writes_undefined_as_text_and_refuses_no_points():
    points = [charts.IntervalPoint("a", "", 0.5, 0.3, 0.7, text="0.50"),
              charts.IntervalPoint("b", "", None, None, None, text="undefined")]
    spec = charts.interval_chart(points, title="T", x_title="x").to_dict()
    undefined_layer = next(layer for layer in spec["layer"] if layer.get("transform") == [{"filter": "!isValid(datum.value)"}])
    assert undefined_layer["mark"]["type"] == "text" and undefined_layer["encoding"]["text"]["field"] == "text"
    with pytest.raises(ValueError):
        charts.interval_chart([], title="T", x_title="x")


def test_a_labeler_name_is_shown_as_typed_never_as_markdown():
    from annotator.ui.components import plain_markdown

    assert plain_markdown("[click me](http://example.com)") == "\\[click me\\](http\\:\u2060//example.com)"
    assert plain_markdown("**bold** :red[x]") == r"\*\*bold\*\* \:red\[x\]"
