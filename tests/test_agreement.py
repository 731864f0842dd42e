"""Tests of annotator.agreement: published worked examples, cross-checks against scikit-learn,
invariances, undefined cases, bootstrap intervals, groups, label-table reading, and
CLIMATE-FEVER (Diggelmann et al., 2020, arXiv:2012.00614) agreement figures.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from annotator.agreement import (
    METRICS,
    compute_agreement,
    covers_whole_range,
    items_needed,
    kappa_paradox,
    pair_bootstrap_ci95,
    read_label_frame,
    read_label_table,
)
from annotator.formats.label_table import _csv_rows, _plain_csv_frame
from annotator.errors import AgreementInputError, ImportFileError, ImportRowError, UndefinedCategoryError
from annotator.vocabulary import CLIMATE_FEVER_LABELS, INDICATIVE_BELOW, LABELS

from tests.conftest import AGREEMENT_CASES as CASES_FILE
from tests.conftest import CLIMATE_FEVER, need


def long_rows(matrix, raters=None):
    """(item, rater, label) rows of an items x raters matrix, None = no rating."""
    raters = raters or [f"r{j}" for j in range(max((len(r) for r in matrix), default=0))]
    return [(f"i{i}", raters[j], v) for i, row in enumerate(matrix) for j, v in enumerate(row) if v is not None]


def two_rater_rows(a, b):
    """(item, rater, label) rows of two equally long label lists, raters 'a' and 'b'."""
    return long_rows([[x, y] for x, y in zip(a, b)], ["a", "b"])


def random_two_raters(n, seed, agree=0.6, q=3):
    """Two label lists over LABELS that agree on about `agree` of n items beyond chance."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, q, n)
    b = np.where(rng.random(n) < agree, a, rng.integers(0, q, n))
    cats = np.array(LABELS[:q])
    return list(cats[a]), list(cats[b])


# ---------------------------------------------------------------------------------------------
# Published worked examples


def _reference_cases():
    """The nominal cases of tests/data/agreement_cases.json (sources: tests/data/agreement_cases.md)."""
    cases = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return [pytest.param(c, id=c["name"]) for c in cases
            if c["level_of_measurement"] == "nominal" and c["metric"] in METRICS]


@pytest.mark.parametrize("case", _reference_cases())
def test_published_example_gives_its_value(case):
    report = compute_agreement(long_rows(case["data"]), case["categories"], n_bootstrap=0)
    coefficient = report.coefficient(case["metric"])
    if case["expected"] is None:
        assert coefficient.value is None
        assert coefficient.undefined_reason and report.undefined[case["metric"]] == coefficient.undefined_reason
    else:
        assert coefficient.value is not None
        assert abs(coefficient.value - case["expected"]) <= case["tolerance"] + 1e-12


def test_reference_file_has_every_metric_we_compute():
    covered = {c["metric"] for c in json.loads(CASES_FILE.read_text(encoding="utf-8"))
               if c["level_of_measurement"] == "nominal"}
    assert set(METRICS) <= covered


# ---------------------------------------------------------------------------------------------
# Cohen's kappa against scikit-learn


def sklearn_kappa(a, b, labels=LABELS):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(a, b, labels=list(labels))
    return None if np.isnan(value) else value


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=40))
def test_cohen_kappa_equals_sklearn_with_declared_labels(pairs):
    a, b = zip(*pairs)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    expected = sklearn_kappa(a, b)
    if expected is None:
        assert report.cohen_kappa.value is None and "cohen_kappa" in report.undefined
    else:
        assert report.cohen_kappa.value == pytest.approx(expected, abs=1e-12)
    assert report.percent_agreement.value == pytest.approx(np.mean(np.array(a) == np.array(b)), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_uses_only_items_both_rated(seed):
    a, b = random_two_raters(500, seed)
    rng = np.random.default_rng(100 + seed)
    a = [None if drop else x for x, drop in zip(a, rng.random(500) < 0.2)]
    b = [None if drop else y for y, drop in zip(b, rng.random(500) < 0.2)]
    both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    assert report.cohen_kappa.n_used == len(both)
    assert report.cohen_kappa.value == pytest.approx(sklearn_kappa(*zip(*both)), abs=1e-12)
    assert report.n_in_scope == sum(x is not None or y is not None for x, y in zip(a, b))


def test_each_pair_of_three_raters_gets_sklearn_kappa_and_its_confusion():
    rng = np.random.default_rng(7)
    matrix = [[LABELS[k] if rng.random() > 0.15 else None for k in rng.integers(0, 3, 3)] for _ in range(300)]
    report = compute_agreement(long_rows(matrix, ["ann", "bea", "cy"]), n_bootstrap=0)
    assert report.cohen_kappa.value is None
    assert "exactly two raters" in report.undefined["cohen_kappa"]
    assert report.confusion is None
    assert [(p.rater_a, p.rater_b) for p in report.by_pair] == [("ann", "bea"), ("ann", "cy"), ("bea", "cy")]
    for pair, (ja, jb) in zip(report.by_pair, [(0, 1), (0, 2), (1, 2)]):
        shared = [(row[ja], row[jb]) for row in matrix if row[ja] is not None and row[jb] is not None]
        a, b = zip(*shared)
        assert pair.n_items == len(shared)
        assert pair.cohen_kappa.value == pytest.approx(sklearn_kappa(a, b), abs=1e-12)
        expected = [[sum(x == ra and y == rb for x, y in shared) for rb in LABELS] for ra in LABELS]
        assert pair.confusion == expected


# ---------------------------------------------------------------------------------------------
# Invariances


def test_coefficients_do_not_depend_on_category_order():
    a, b = random_two_raters(200, 3)
    rows = two_rater_rows(a, b)
    plain = compute_agreement(rows, LABELS, n_bootstrap=0)
    order = (2, 0, 1)
    permuted = compute_agreement(rows, tuple(LABELS[k] for k in order), n_bootstrap=0)
    for metric in METRICS:
        assert permuted.coefficient(metric).value == pytest.approx(plain.coefficient(metric).value, abs=1e-12)
    assert permuted.confusion == [[plain.confusion[i][j] for j in order] for i in order]


def test_swapping_the_raters_keeps_kappa_and_transposes_the_confusion():
    a, b = random_two_raters(200, 4)
    ab = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    ba = compute_agreement(two_rater_rows(b, a), n_bootstrap=0)
    for metric in METRICS:
        assert ba.coefficient(metric).value == pytest.approx(ab.coefficient(metric).value, abs=1e-12)
    assert ba.confusion == np.array(ab.confusion).T.tolist()


def test_unused_declared_categories_change_only_the_coefficients_that_count_them():
    """62 declared categories (too many for one integer key per item pattern) against 3."""
    rng = np.random.default_rng(18)
    matrix = [[LABELS[k] if rng.random() > 0.2 else None for k in rng.integers(0, 3, 3)] for _ in range(100)]
    many = LABELS + tuple(f"unused{k}" for k in range(59))
    few_report = compute_agreement(long_rows(matrix), LABELS, n_bootstrap=0)
    many_report = compute_agreement(long_rows(matrix), many, n_bootstrap=0)
    for metric in ("percent_agreement", "scott_pi", "fleiss_kappa", "krippendorff_alpha"):
        assert many_report.coefficient(metric).value == pytest.approx(few_report.coefficient(metric).value, abs=1e-12)
    pa = few_report.percent_agreement.value
    assert many_report.brennan_prediger.value == pytest.approx((pa - 1 / 62) / (1 - 1 / 62), abs=1e-12)
    assert many_report.gwet_ac1.value != pytest.approx(few_report.gwet_ac1.value, abs=1e-6)


def test_row_order_changes_nothing_in_the_report():
    rng = np.random.default_rng(5)
    matrix = [[LABELS[k] if rng.random() > 0.2 else None for k in rng.integers(0, 3, 4)] for _ in range(150)]
    rows = long_rows(matrix)
    shuffled = [rows[k] for k in rng.permutation(len(rows))]
    assert compute_agreement(shuffled, n_bootstrap=200).to_json() == compute_agreement(rows, n_bootstrap=200).to_json()


def test_dataframe_and_tuples_give_the_same_report():
    a, b = random_two_raters(120, 6)
    rows = two_rater_rows(a, b)
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "label"])
    assert compute_agreement(frame, n_bootstrap=100).to_json() == compute_agreement(rows, n_bootstrap=100).to_json()


# ---------------------------------------------------------------------------------------------
# Undefined cases


def test_everyone_using_one_category_leaves_chance_corrected_coefficients_undefined():
    report = compute_agreement(two_rater_rows(["support"] * 12, ["support"] * 12), n_bootstrap=100)
    assert set(report.undefined) == {"cohen_kappa", "scott_pi", "fleiss_kappa", "krippendorff_alpha"}
    for metric, reason in report.undefined.items():
        assert report.coefficient(metric).value is None
        assert "'support'" in reason and "0/0" in reason
        assert report.ci95[metric] is None
    assert report.percent_agreement.value == 1.0
    assert report.gwet_ac1.value == 1.0
    assert report.brennan_prediger.value == 1.0
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["cohen_kappa"] is None and data["ci95"]["cohen_kappa"] is None
    assert data["percent_agreement"] == 1.0


def test_one_rater_using_a_single_category_gives_kappa_zero():
    other = ["support", "contradict", "insufficient", "support", "contradict", "support"]
    report = compute_agreement(two_rater_rows(["support"] * 6, other), n_bootstrap=0)
    assert report.cohen_kappa.value == 0.0
    assert "cohen_kappa" not in report.undefined


def test_no_item_with_two_ratings_leaves_every_coefficient_undefined():
    rows = [("i1", "a", "support"), ("i2", "b", "contradict"), ("i3", "a", "insufficient")]
    report = compute_agreement(rows, n_bootstrap=100)
    assert report.n_items == 0 and report.n_in_scope == 3 and report.n_raters == 2
    assert set(report.undefined) == set(METRICS)
    assert report.undefined["percent_agreement"] == "no item has two or more ratings (0/0)"
    assert report.undefined["cohen_kappa"] == "no item was rated by both raters"
    assert report.indicative
    json.dumps(report.to_json(), allow_nan=False)


def test_empty_input_is_a_report_of_nothing():
    report = compute_agreement([], n_bootstrap=100)
    assert (report.n_items, report.n_in_scope, report.n_raters) == (0, 0, 0)
    assert set(report.undefined) == set(METRICS)
    json.dumps(report.to_json(), allow_nan=False)


def test_json_has_the_documented_keys_and_no_nan():
    a, b = random_two_raters(80, 8)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=100)
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert {"n_items", "n_in_scope", "n_raters", "categories", "n_used", "ci95", "undefined",
            "label_counts", "by_pair", "confusion", *METRICS} <= set(data)
    assert data["n_items"] == 80 and data["n_raters"] == 2 and data["categories"] == list(LABELS)
    assert data["confusion"] == data["by_pair"][0]["confusion"] == report.confusion
    assert sum(map(sum, data["confusion"])) == 80
    assert data["label_counts"]["a"] == {c: a.count(c) for c in LABELS}
    assert all(len(data["ci95"][m]) == 2 for m in METRICS)
    assert all(0.0 <= data[m] <= 1.0 for m in METRICS)
    assert data["by_slice"] == {}
    assert set(data["by_category"]) == set(LABELS) and data["paradox"] is None
    assert data["sample_size"]["metric"] == "krippendorff_alpha"


# ---------------------------------------------------------------------------------------------
# Input errors


def test_label_outside_the_declared_set_is_named():
    with pytest.raises(UndefinedCategoryError, match=r"'maybe'"):
        compute_agreement([("i1", "a", "support"), ("i1", "b", "maybe")], n_bootstrap=0)


def test_label_outside_the_declared_set_is_named_with_its_line():
    rows = [("i1", "a", "support", 2), ("i1", "b", "contradict", 3), ("i2", "a", "SUPPORTS", 7)]
    with pytest.raises(UndefinedCategoryError, match=r"'SUPPORTS'.*line 7"):
        compute_agreement(rows, n_bootstrap=0)
    frame = pd.DataFrame(rows, columns=["item_id", "rater", "label", "line"])
    with pytest.raises(UndefinedCategoryError, match=r"'SUPPORTS'.*line 7"):
        compute_agreement(frame, n_bootstrap=0)


def test_a_category_of_another_declared_set_is_refused():
    with pytest.raises(UndefinedCategoryError, match=r"'insufficient'"):
        compute_agreement([("i1", "a", "insufficient"), ("i1", "b", "support")], ("support", "contradict"))


def test_the_same_item_and_rater_twice_is_refused():
    rows = [("i1", "a", "support", 2), ("i1", "b", "support", 3), ("i1", "a", "contradict", 4)]
    with pytest.raises(ValueError, match=r"'i1' is rated twice by 'a' \(lines 2 and 4\)"):
        compute_agreement(rows, n_bootstrap=0)
    with pytest.raises(ValueError, match=r"'i1' is rated twice by 'a'"):
        compute_agreement([r[:3] for r in rows], n_bootstrap=0)


@pytest.mark.parametrize("categories", [("support",), ("support", "support", "contradict")])
def test_categories_must_be_two_or_more_and_distinct(categories):
    with pytest.raises(ValueError):
        compute_agreement([("i1", "a", "support")], categories)


def test_rows_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match="item_id, rater, label"):
        compute_agreement([("i1", "a")], n_bootstrap=0)


def test_a_missing_rater_in_a_frame_is_refused():
    frame = pd.DataFrame({"item_id": ["i1", "i1"], "rater": ["a", None], "label": ["support"] * 2})
    with pytest.raises(ValueError, match="rater is missing"):
        compute_agreement(frame, n_bootstrap=0)


# ---------------------------------------------------------------------------------------------
# Bootstrap intervals


def test_bootstrap_interval_is_reproducible_with_the_same_seed():
    a, b = random_two_raters(200, 9)
    rows = two_rater_rows(a, b)
    first = compute_agreement(rows, n_bootstrap=300, seed=11).ci95
    assert compute_agreement(rows, n_bootstrap=300, seed=11).ci95 == first
    assert compute_agreement(rows, n_bootstrap=300, seed=12).ci95 != first


def test_bootstrap_interval_contains_the_estimate():
    rng = np.random.default_rng(10)
    truth = rng.integers(0, 3, 400)
    matrix = [[LABELS[t] if rng.random() < 0.75 else LABELS[rng.integers(0, 3)] for _ in range(3)] for t in truth]
    report = compute_agreement(long_rows(matrix), n_bootstrap=1000, seed=0)
    for metric in METRICS:
        if metric == "cohen_kappa":
            continue  # three raters: undefined
        low, high = report.ci95[metric]
        assert low < report.coefficient(metric).value < high
        assert high - low < 0.2


def test_no_bootstrap_no_intervals():
    a, b = random_two_raters(50, 12)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    assert report.ci95 == {m: None for m in METRICS}


def test_bootstrap_matches_recomputing_on_index_resampled_items():
    """The pattern-multinomial bootstrap has the distribution of resampling item indices:
    its interval agrees with percentiles of coefficients recomputed on resampled data sets,
    here with missing ratings (three raters, some items rated once)."""
    rng = np.random.default_rng(13)
    truth = rng.integers(0, 3, 120)
    matrix = [[(LABELS[t] if rng.random() < 0.7 else LABELS[rng.integers(0, 3)]) if rng.random() > 0.3 else None
               for _ in range(3)] for t in truth]
    matrix = [row for row in matrix if any(v is not None for v in row)]
    fast = compute_agreement(long_rows(matrix), n_bootstrap=4000, seed=1).ci95
    picks = np.random.default_rng(2).integers(0, len(matrix), size=(600, len(matrix)))
    naive = {m: [] for m in METRICS}
    for pick in picks:
        report = compute_agreement(long_rows([matrix[k] for k in pick]), n_bootstrap=0)
        for m in METRICS:
            naive[m].append(np.nan if report.coefficient(m).value is None else report.coefficient(m).value)
    for metric in ("percent_agreement", "scott_pi", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"):
        low, high = np.nanpercentile(naive[metric], [2.5, 97.5])
        width = high - low
        assert fast[metric][0] == pytest.approx(low, abs=0.12 * width)
        assert fast[metric][1] == pytest.approx(high, abs=0.12 * width)


def test_cohen_bootstrap_matches_recomputing_on_index_resampled_items():
    a, b = random_two_raters(150, 14, agree=0.5)
    fast = compute_agreement(two_rater_rows(a, b), n_bootstrap=4000, seed=3).ci95["cohen_kappa"]
    code_a, code_b = (np.array([LABELS.index(x) for x in labels]) for labels in (a, b))
    picks = np.random.default_rng(4).integers(0, len(a), size=(4000, len(a)))
    p_o = (code_a[picks] == code_b[picks]).mean(axis=1)
    margin_a, margin_b = ((codes[picks][:, :, None] == np.arange(3)).mean(axis=1) for codes in (code_a, code_b))
    p_e = (margin_a * margin_b).sum(axis=1)
    naive = (p_o - p_e) / (1 - p_e)  # Cohen (1960), per index-resampled data set
    assert naive[0] == pytest.approx(sklearn_kappa(np.array(a)[picks[0]], np.array(b)[picks[0]]), abs=1e-12)
    low, high = np.percentile(naive, [2.5, 97.5])
    assert fast[0] == pytest.approx(low, abs=0.08 * (high - low))
    assert fast[1] == pytest.approx(high, abs=0.08 * (high - low))


# ---------------------------------------------------------------------------------------------
# Groups (slices)


def sliced_frame():
    a, b = random_two_raters(15, 15)
    frame = pd.DataFrame(two_rater_rows(a, b), columns=["item_id", "rater", "label"])
    frame["slice"] = np.where(frame["item_id"].str[1:].astype(int) < 12, "normal", "permission")
    return frame


def test_a_slice_below_ten_items_is_indicative():
    report = compute_agreement(sliced_frame(), n_bootstrap=100, by="slice")
    assert list(report.groups["slice"]) == ["normal", "permission"]
    assert report.groups["slice"]["normal"].n_items == 12 and not report.groups["slice"]["normal"].indicative
    assert report.groups["slice"]["permission"].n_items == 3 and report.groups["slice"]["permission"].indicative
    assert INDICATIVE_BELOW == 10
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert set(data["by_slice"]) == {"normal", "permission"}
    assert data["by_slice"]["permission"]["indicative"] is True
    assert data["by_slice"]["permission"]["n_items"] == 3


def test_a_slice_report_equals_the_report_of_its_items_alone():
    frame = sliced_frame()
    report = compute_agreement(frame, n_bootstrap=100, by="slice")
    alone = compute_agreement(frame[frame["slice"] == "normal"].drop(columns="slice"), n_bootstrap=100)
    assert report.groups["slice"]["normal"].to_json() == alone.to_json()


def many_raters_frame(n_raters: int = 6, n_items: int = 240, seed: int = 3) -> pd.DataFrame:
    """Items labeled by rotating pairs of n_raters raters (a third on every fifth item), each
    copying a hidden label with their own accuracy, in two slices."""
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.5, 0.95, n_raters)
    rows = []
    for i in range(n_items):
        truth = rng.integers(0, 3)
        a = i % n_raters
        raters = {a, (a + 1 + (i // n_raters) % (n_raters - 1)) % n_raters}
        if i % 5 == 4:
            raters.add((a + 3) % n_raters if (a + 3) % n_raters not in raters else (a + 4) % n_raters)
        for r in sorted(raters):
            label = truth if rng.random() < accuracy[r] else rng.integers(0, 3)
            rows.append((f"i{i}", f"r{r}", LABELS[label], "normal" if i % 3 else "paraphrase"))
    return pd.DataFrame(rows, columns=["item_id", "rater", "label", "slice"])


def test_pairs_left_without_bootstrap_get_the_very_same_intervals_later_from_their_confusion():
    frame = many_raters_frame()
    full = compute_agreement(frame, n_bootstrap=200, seed=5, by="slice")
    lazy = compute_agreement(frame, n_bootstrap=200, seed=5, by="slice", pair_bootstrap=False)
    assert len(full.by_pair) == 15  # every pair of the six raters shares items
    for whole, part in [(full, lazy), *zip(full.groups["slice"].values(), lazy.groups["slice"].values())]:
        assert [p.ci95 for p in part.by_pair] == [{}] * len(whole.by_pair)
        assert any(p.ci95["cohen_kappa"] for p in whole.by_pair)
        for kept, left in zip(whole.by_pair, part.by_pair, strict=True):
            assert pair_bootstrap_ci95(left.confusion, 200, seed=5) == kept.ci95  # equal floats, not approximately
            assert pair_bootstrap_ci95(left.to_json()["confusion"], 200, seed=5) == kept.ci95
            assert left == replace(kept, ci95={})
        assert replace(part, by_pair=(), groups={}) == replace(whole, by_pair=(), groups={})


def test_a_pair_whose_kappa_is_undefined_gets_a_percent_agreement_interval_only():
    intervals = pair_bootstrap_ci95([[12, 0, 0], [0, 0, 0], [0, 0, 0]], 1000)
    assert intervals["cohen_kappa"] is None
    assert intervals["percent_agreement"] == (1.0, 1.0)
    assert pair_bootstrap_ci95([[3, 1], [0, 4]], 0) == {}


@pytest.mark.parametrize("confusion, n_bootstrap", [([[0, 0], [0, 0]], 1000), ([[1, 2, 3]], 1000),
                                                    ([[1, -1], [0, 2]], 1000), ([[1, 2], [3, 4]], 50)])
def test_a_pair_bootstrap_of_no_items_a_bad_matrix_or_too_few_resamples_is_refused(confusion, n_bootstrap):
    with pytest.raises(AgreementInputError):
        pair_bootstrap_ci95(confusion, n_bootstrap)


def test_two_raters_without_pair_bootstrap_keep_the_reports_intervals_on_their_one_pair():
    a, b = random_two_raters(60, 4)
    full = compute_agreement(two_rater_rows(a, b), n_bootstrap=300)
    lazy = compute_agreement(two_rater_rows(a, b), n_bootstrap=300, pair_bootstrap=False)
    assert lazy.by_pair == full.by_pair
    assert lazy.by_pair[0].ci95 == {m: full.ci95[m] for m in ("cohen_kappa", "percent_agreement")}


def test_groups_without_pairs_change_nothing_else():
    frame = many_raters_frame()
    full = compute_agreement(frame, n_bootstrap=100, by="slice")
    slim = compute_agreement(frame, n_bootstrap=100, by="slice", group_pairs=False)
    assert slim.by_pair == full.by_pair
    assert slim.groups["slice"] == {g: replace(r, by_pair=()) for g, r in full.groups["slice"].items()}


def test_an_item_in_two_slices_is_refused():
    frame = sliced_frame()
    frame.loc[0, "slice"] = "paraphrase"
    with pytest.raises(ValueError, match=r"'i0' has two values in column 'slice'"):
        compute_agreement(frame, by="slice")


def test_grouping_needs_a_frame_with_the_column():
    with pytest.raises(ValueError, match="slice"):
        compute_agreement([("i1", "a", "support")], by="slice")
    with pytest.raises(ValueError, match="slice"):
        compute_agreement(pd.DataFrame({"item_id": ["i1"], "rater": ["a"], "label": ["support"]}), by="slice")


# ---------------------------------------------------------------------------------------------
# Label tables from files


def write(tmp_path, name, content, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def test_csv_with_bom_and_crlf_is_read_with_line_numbers(tmp_path):
    path = write(tmp_path, "labels.csv", "\ufeffitem_id,rater,label\r\nc1,ann,support\r\nc1,bea,contradict\r\n")
    assert read_label_table(path) == [("c1", "ann", "support", 2), ("c1", "bea", "contradict", 3)]


def test_csv_columns_may_come_in_any_order_with_extra_columns(tmp_path):
    path = write(tmp_path, "labels.csv", "label,note,rater,item_id\nsupport,x,ann,001\n")
    assert read_label_table(path) == [("001", "ann", "support", 2)]


def test_quoted_newline_keeps_the_line_where_each_record_starts(tmp_path):
    path = write(tmp_path, "labels.csv",
                 'item_id,rater,label,note\nc1,ann,support,"first\nsecond line"\n\nc2,ann,maybe,\n')
    with pytest.raises(ImportRowError) as caught:
        read_label_table(path)
    assert caught.value.line == 5 and caught.value.field == "label"


@pytest.mark.parametrize("name, content, line, field", [
    ("labels.csv", 'item_id,rater,label\n"c1\nsecond line",ann,support\n', 2, "item_id"),
    ("labels.csv", "item_id,rater,label\nc1,ann\x00,support\n", 2, "rater"),
    ("labels.jsonl", '{"item_id": "c1", "rater": "ann\\u0000", "label": "support"}\n', 1, "rater"),
])
def test_a_control_character_in_an_id_or_name_is_refused(tmp_path, name, content, line, field):
    with pytest.raises(ImportRowError) as caught:
        read_label_table(write(tmp_path, name, content))
    assert (caught.value.line, caught.value.field) == (line, field) and "control character" in str(caught.value)


def test_a_utf16_file_without_bom_is_named_as_such(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes("item_id,rater,label\nc1,ann,support\n".encode("utf-16-le"))
    with pytest.raises(ImportRowError, match="UTF-16") as caught:
        read_label_table(path)
    assert caught.value.line == 1 and "\x00" not in str(caught.value)


def test_a_cp932_label_table_is_read(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes("item_id,rater,label\n髙①,ann,support\n髙①,bea,support\n".encode("cp932"))
    assert read_label_table(path) == [("髙①", "ann", "support", 2), ("髙①", "bea", "support", 3)]


@pytest.mark.parametrize("name, content", [
    ("labels.csv", "item_id,rater,label\n"),
    ("labels.jsonl", "\n\n"),
])
def test_a_label_table_without_ratings_is_refused(tmp_path, name, content):
    with pytest.raises(ImportFileError, match="no ratings"):
        read_label_table(write(tmp_path, name, content))


@pytest.mark.parametrize("name, content, line", [
    ("labels.csv", "item_id,rater,label,slice\n1,a,support,normal\n1,b,support,paraphrase\n", 3),
    ("labels.jsonl", '{"item_id":"1","rater":"a","label":"support","slice":"normal"}\n'
                     '{"item_id":"1","rater":"b","label":"support","slice":"paraphrase"}\n', 2),
])
def test_an_item_in_two_groups_of_a_label_file_is_named_with_both_lines(tmp_path, name, content, line):
    with pytest.raises(ImportRowError) as caught:
        read_label_frame(write(tmp_path, name, content), keep=("slice",))
    assert (caught.value.line, caught.value.field) == (line, "slice")
    assert "'paraphrase'" in str(caught.value) and f"'normal' on line {line - 1}" in str(caught.value)


def test_a_long_unknown_label_is_cut_short_in_the_message(tmp_path):
    with pytest.raises(ImportRowError) as caught:
        read_label_table(write(tmp_path, "labels.csv", "item_id,rater,label\n1,a," + "x" * 100_000 + "\n"))
    assert len(str(caught.value)) < 500


def test_too_few_bootstrap_resamples_are_refused_and_mostly_undefined_resamples_give_no_interval():
    from annotator.errors import AgreementInputError

    with pytest.raises(AgreementInputError, match="at least 100"):
        compute_agreement(two_rater_rows(["support"], ["support"]), n_bootstrap=1)
    a = ["support"] * 9 + ["support"]
    b = ["support"] * 9 + ["contradict"]
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=1000)
    assert report.cohen_kappa.value == 0.0 and report.ci95["cohen_kappa"] is None
    assert "resamples" in report.ci95_missing["cohen_kappa"]
    assert report.ci95["percent_agreement"] is not None and "percent_agreement" not in report.ci95_missing
    assert items_needed(report, metric="percent_agreement", half_width=1.0).items_needed >= INDICATIVE_BELOW


@pytest.mark.parametrize("content, expected", [
    ("item_id,rater,label\nc1,ann,support\n\nc1,bea,support\n", [2, 4]),
    ("item_id,rater,label\r\nc1,ann,support\r\n\r\nc1,bea,support", [2, 4]),
    ("\n\nitem_id,rater,label\nc1,ann,support\n", None),
])
def test_blank_lines_do_not_shift_line_numbers(tmp_path, content, expected):
    path = write(tmp_path, "labels.csv", content)
    if expected is None:  # the header must be the first line
        with pytest.raises(ImportRowError, match="line 1"):
            read_label_table(path)
    else:
        assert [row[3] for row in read_label_table(path)] == expected


@pytest.mark.parametrize("keep", [(), ("slice",)])
def test_plain_and_careful_csv_readers_agree(tmp_path, keep):
    a, b = random_two_raters(50, 16)
    text = "slice,item_id,rater,label\n" + "".join(
        f"s{len(i) % 3},{i},{r},{lab}\n" for i, r, lab in two_rater_rows(a, b))
    path = write(tmp_path, "labels.csv", text)
    fast = _plain_csv_frame(path, text.encode("utf-8"), LABELS, keep)
    assert fast is not None and list(fast.columns) == ["item_id", "rater", "label", "line", *keep]
    assert list(fast.itertuples(index=False, name=None)) == _csv_rows(path, text, LABELS, keep)


def test_jsonl_is_read_with_line_numbers_and_blank_lines_skipped(tmp_path):
    path = write(tmp_path, "labels.jsonl",
                 '{"item_id": "c1", "rater": "ann", "label": "support"}\n\n'
                 '{"item_id": 7, "rater": "bea", "label": "insufficient"}\n')
    assert read_label_table(path) == [("c1", "ann", "support", 1), ("7", "bea", "insufficient", 3)]


def test_an_exact_repeat_is_kept_once(tmp_path):
    path = write(tmp_path, "labels.csv", "item_id,rater,label\nc1,ann,support\nc1,bea,support\nc1,ann,support\n")
    assert read_label_table(path) == [("c1", "ann", "support", 2), ("c1", "bea", "support", 3)]


@pytest.mark.parametrize("name, content, line, field, words", [
    ("l.csv", "item_id,rater,lable\nc1,ann,support\n", 1, "label", "no such column"),
    ("l.csv", "item_id,rater,label,rater\nc1,ann,support,x\n", 1, "rater", "twice"),
    ("l.csv", "item_id,rater,label\nc1,ann,support\nc1,,support\n", 3, "rater", "rater is empty"),
    ("l.csv", "item_id,rater,label\nc1,ann,support\nc2,ann,support\nc3,ann,maybe\n", 4, "label", "'maybe'"),
    ("l.csv", "item_id,rater,label\nc1,ann,support\nc1,bea,support,extra\n", 3, None, "4 fields"),
    ("l.csv", "item_id,rater,label\nc1,ann\n", 2, None, "2 fields"),
    ("l.csv", "item_id,rater,label\nc1,ann,support\nc2,ann,support\nc1,ann,contradict\n", 4, "label",
     "line 2, 'contradict' on line 4"),
    ("l.csv", b"item_id,rater,label\nc1,ann,support\nc\xe9,ann,support\n", 3, "item_id", "neither UTF-8 nor CP932"),
    ("l.jsonl", '{"item_id": "c1", "rater": "ann", "label": "support"}\n{"item_id": "c2", "rater": \n', 2, None,
     "not valid JSON"),
    ("l.jsonl", '{"item_id": "c1", "rater": "ann", "label": 1}\n', 1, "label", "not text"),
    ("l.jsonl", '{"item_id": "c1", "label": "support"}\n', 1, "rater", "rater is missing"),
    ("l.jsonl", '["c1", "ann", "support"]\n', 1, None, "not a JSON object"),
    ("l.jsonl", '{"item_id": "c1", "rater": "ann", "label": "REFUTES"}\n', 1, "label", "'REFUTES'"),
])
def test_a_bad_label_table_names_file_line_and_field(tmp_path, name, content, line, field, words):
    path = write(tmp_path, name, content)
    with pytest.raises(ImportRowError) as caught:
        read_label_table(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    message = str(error)
    assert message.startswith(f"{path}, line {line}")
    assert (f"field '{field}'" in message) == (field is not None)
    assert words in message
    assert error.fix


def test_a_missing_or_unknown_file_is_a_file_error(tmp_path):
    with pytest.raises(ImportFileError, match="not found"):
        read_label_table(tmp_path / "absent.csv")
    with pytest.raises(ImportFileError, match=r"'\.xlsx'"):
        read_label_table(write(tmp_path, "labels.xlsx", "x"))
    with pytest.raises(ImportFileError, match="empty"):
        read_label_table(write(tmp_path, "labels.csv", ""))


def test_a_label_table_feeds_compute_agreement(tmp_path):
    a, b = random_two_raters(40, 17)
    text = "item_id,rater,label\n" + "".join(f"{i},{r},{lab}\n" for i, r, lab in two_rater_rows(a, b))
    path = write(tmp_path, "labels.csv", text)
    from_rows = compute_agreement(two_rater_rows(a, b), n_bootstrap=100)
    assert compute_agreement(read_label_table(path), n_bootstrap=100).to_json() == from_rows.to_json()
    assert compute_agreement(read_label_frame(path), n_bootstrap=100).to_json() == from_rows.to_json()


def test_declared_categories_apply_to_label_tables(tmp_path):
    path = write(tmp_path, "labels.csv", "item_id,rater,label\nc1,ann,yes\nc1,bea,no\n")
    assert read_label_table(path, ("yes", "no")) == [("c1", "ann", "yes", 2), ("c1", "bea", "no", 3)]
    with pytest.raises(ImportRowError, match="'yes'"):
        read_label_table(path)


# ---------------------------------------------------------------------------------------------
# CLIMATE-FEVER (Diggelmann et al., 2020, arXiv:2012.00614)


@pytest.fixture(scope="module")
def climate_fever_votes():
    need(CLIMATE_FEVER)
    votes = {}
    with CLIMATE_FEVER.open(encoding="utf-8") as lines:
        for line in lines:
            claim = json.loads(line)
            for k, evidence in enumerate(claim["evidences"]):
                votes[f"{claim['claim_id']}-{k}"] = [CLIMATE_FEVER_LABELS[v] if v else None for v in evidence["votes"]]
    return votes


def test_climate_fever_first_two_votes_agreement_equals_an_independent_computation(climate_fever_votes):
    """The first two votes of each evidence as two raters. The dataset's paper publishes
    Krippendorff's alpha over all votes (below), not these figures: they are checked against
    scikit-learn's kappa and a plain count, and pinned as reproduced values (0.5445, 0.2961)."""
    rows, firsts, seconds = [], [], []
    for item, slots in climate_fever_votes.items():
        first, second = [v for v in slots if v is not None][:2]
        rows += [(item, "v1", first), (item, "v2", second)]
        firsts.append(first)
        seconds.append(second)
    report = compute_agreement(rows, n_bootstrap=200)
    assert report.n_items == 7675
    agreeing = sum(a == b for a, b in zip(firsts, seconds, strict=True))
    assert report.percent_agreement.value == pytest.approx(agreeing / len(firsts), abs=1e-12)
    assert report.cohen_kappa.value == pytest.approx(cohen_kappa_score(firsts, seconds), abs=1e-12)
    assert round(report.percent_agreement.value, 4) == 0.5445  # reproduced, not published
    assert round(report.cohen_kappa.value, 4) == 0.2961
    low, high = report.ci95["cohen_kappa"]
    assert low < report.cohen_kappa.value < high


def test_climate_fever_krippendorff_alpha_over_all_votes(climate_fever_votes):
    rows = [(item, f"slot{j + 1}", v) for item, slots in climate_fever_votes.items()
            for j, v in enumerate(slots) if v is not None]
    report = compute_agreement(rows, n_bootstrap=0)
    assert report.n_raters == 5 and report.n_items == 7675
    assert round(report.krippendorff_alpha.value, 3) == 0.334


def test_a_folder_given_as_a_label_table_is_named_as_a_folder(tmp_path):
    with pytest.raises(ImportFileError, match="is a folder, not a file"):
        read_label_table(tmp_path)
    with pytest.raises(ImportFileError, match="file not found"):
        read_label_table(tmp_path / "absent")


# ---------------------------------------------------------------------------------------------
# Specific agreement per category


@given(st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=60))
@settings(max_examples=60, deadline=None)
def test_two_rater_specific_agreement_is_2nkk_over_the_margins(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    for k in LABELS:
        both = sum(1 for x, y in pairs if x == y == k)
        margins = a.count(k) + b.count(k)
        part = report.by_category[k]
        assert part.specific_agreement.n_used == margins
        if margins == 0:
            assert part.specific_agreement.value is None and k in part.specific_agreement.undefined_reason
        else:
            assert part.specific_agreement.value == pytest.approx(2 * both / margins)


def test_multi_rater_specific_agreement_counts_ordered_pairs_of_raters():
    matrix = [["support", "support", "contradict"], ["support", None, "support"],
              ["insufficient", "insufficient", "insufficient"], ["contradict", None, None]]
    report = compute_agreement(long_rows(matrix), n_bootstrap=0)
    for k in LABELS:  # brute force: every ordered pair of distinct raters on an item
        first_says_k = agree = 0
        for row in matrix:
            given_labels = [v for v in row if v is not None]
            for i, x in enumerate(given_labels):
                for j, y in enumerate(given_labels):
                    if i != j and x == k:
                        first_says_k += 1
                        agree += y == k
        assert report.by_category[k].specific_agreement.value == pytest.approx(agree / first_says_k)


def test_specific_agreement_intervals_contain_the_estimate():
    a, b = random_two_raters(200, 21)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=300)
    for part in report.by_category.values():
        low, high = part.ci95
        assert low <= part.specific_agreement.value <= high


# ---------------------------------------------------------------------------------------------
# Analytic intervals and pairs


def test_analytic_kappa_interval_is_statsmodels_and_percent_agreement_is_wilson():
    from statsmodels.stats.inter_rater import cohens_kappa
    from statsmodels.stats.proportion import proportion_confint

    a, b = random_two_raters(150, 5)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    table = np.array(report.confusion)
    expected = cohens_kappa(table)
    assert report.analytic_ci95["cohen_kappa"] == pytest.approx((expected.kappa_low, expected.kappa_upp))
    agree = int(np.trace(table))
    assert report.analytic_ci95["percent_agreement"] == pytest.approx(proportion_confint(agree, 150, method="wilson"))
    assert report.by_pair[0].analytic_ci95 == report.analytic_ci95
    assert json.loads(json.dumps(report.to_json(), allow_nan=False))["analytic_ci95"]["fleiss_kappa"] is None


def test_no_analytic_interval_for_more_than_two_raters_or_an_undefined_kappa():
    matrix = [["support", "contradict", "support"]] * 5 + [["contradict"] * 3] * 5
    assert compute_agreement(long_rows(matrix), n_bootstrap=0).analytic_ci95 == {}
    same = compute_agreement(two_rater_rows(["support"] * 6, ["support"] * 6), n_bootstrap=0)
    assert same.analytic_ci95.get("cohen_kappa") is None


def test_an_analytic_interval_left_out_says_why_in_the_report_and_its_pair():
    few = compute_agreement(two_rater_rows(["support", "contradict", "support", "insufficient"] * 2,
                                           ["support", "contradict", "contradict", "insufficient"] * 2), n_bootstrap=0)
    assert few.n_items == 8 < INDICATIVE_BELOW and not any(few.analytic_ci95.values())
    why = f"a large-sample interval needs at least {INDICATIVE_BELOW} items; there are 8"
    assert few.analytic_ci95_missing == {"percent_agreement": why, "cohen_kappa": why}
    data = json.loads(json.dumps(few.to_json(), allow_nan=False))
    assert data["analytic_ci95_missing"] == few.analytic_ci95_missing
    assert data["by_pair"][0]["analytic_ci95_missing"] == few.analytic_ci95_missing

    alike = compute_agreement(two_rater_rows(["support", "contradict"] * 6, ["support", "contradict"] * 6), n_bootstrap=0)
    assert alike.cohen_kappa.value == 1.0 and alike.analytic_ci95["percent_agreement"] is not None
    assert alike.analytic_ci95_missing == {"cohen_kappa": "its large-sample variance is zero (as when every item is "
                                                          "labeled alike), which gives no interval"}
    undefined = compute_agreement(two_rater_rows(["support"] * 12, ["support"] * 12), n_bootstrap=0)
    assert undefined.analytic_ci95_missing == {"cohen_kappa": "the coefficient is undefined"}
    enough = compute_agreement(two_rater_rows(*random_two_raters(150, 5)), n_bootstrap=0)
    assert enough.analytic_ci95_missing == {} and enough.to_json()["analytic_ci95_missing"] == {}
    three = [["support", "contradict", "support"]] * 5 + [["contradict"] * 3] * 5
    assert compute_agreement(long_rows(three), n_bootstrap=0).to_json()["analytic_ci95_missing"] == {}


@pytest.mark.parametrize("interval, whole", [
    ((0.0, 1.0), True), ((-8.3e-17, 1.0), True), ((-0.25, 1.0), True), ((0.0004, 0.9996), True),
    ((0.0006, 1.0), False), ((0.0, 0.9994), False), ((-1.0, 0.5), False), ((0.4, 1.0), False), (None, False),
])
def test_an_interval_covers_the_whole_range_from_0_or_below_to_1_at_three_decimals(interval, whole):
    assert covers_whole_range(interval) is whole


def test_a_handful_of_items_gives_intervals_over_the_whole_range_and_many_items_none():
    few = compute_agreement(two_rater_rows(["support", "contradict", "support", "insufficient", "support"],
                                           ["support", "contradict", "contradict", "insufficient", "support"]))
    assert covers_whole_range(few.ci95["scott_pi"])
    many = compute_agreement(two_rater_rows(*random_two_raters(300, 5)))
    assert not any(covers_whole_range(ci) for ci in many.ci95.values())


def test_each_pair_of_three_raters_gets_a_bootstrap_interval_around_its_kappa():
    rng = np.random.default_rng(3)
    matrix = [[LABELS[k], LABELS[k if rng.random() < 0.7 else rng.integers(3)], LABELS[rng.integers(3)]]
              for k in rng.integers(0, 3, 120)]
    report = compute_agreement(long_rows(matrix), n_bootstrap=400)
    assert len(report.by_pair) == 3
    for pair in report.by_pair:
        low, high = pair.ci95["cohen_kappa"]
        assert low <= pair.cohen_kappa.value <= high and high - low > 0.01


def test_the_one_pair_of_a_two_rater_report_has_the_report_s_intervals():
    a, b = random_two_raters(90, 8)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=200)
    pair = report.by_pair[0]
    assert pair.ci95 == {m: report.ci95[m] for m in ("cohen_kappa", "percent_agreement")}


# ---------------------------------------------------------------------------------------------
# The kappa paradox and sample-size guidance


def test_high_agreement_on_skewed_labels_is_flagged_as_the_kappa_paradox():
    a = ["support"] * 90 + ["support"] * 5 + ["contradict"] * 5
    b = ["support"] * 90 + ["contradict"] * 5 + ["support"] * 5
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=0)
    paradox = kappa_paradox(report)
    assert paradox is not None and paradox.kappa_metric == "cohen_kappa"
    assert paradox.percent_agreement == pytest.approx(0.9) and paradox.kappa < 0.0
    assert paradox.dominant_category == "support" and paradox.dominant_share == pytest.approx(0.95)
    assert paradox.gwet_ac1 == report.gwet_ac1.value > 0.85
    assert report.to_json()["paradox"]["dominant_category"] == "support"


def test_balanced_labels_or_low_agreement_are_no_paradox():
    a, b = random_two_raters(300, 2, agree=0.95)
    assert kappa_paradox(compute_agreement(two_rater_rows(a, b), n_bootstrap=0)) is None
    a, b = random_two_raters(300, 2, agree=0.2)
    assert compute_agreement(two_rater_rows(a, b), n_bootstrap=0).to_json()["paradox"] is None


def test_items_needed_scales_the_interval_with_the_square_root_of_n():
    a, b = random_two_raters(20, 4)
    report = compute_agreement(two_rater_rows(a, b), n_bootstrap=1000)
    low, high = report.ci95["krippendorff_alpha"]
    guide = items_needed(report, half_width=0.1)
    assert guide.half_width == pytest.approx((high - low) / 2)
    assert guide.items_needed == int(np.ceil(20 * (guide.half_width / 0.1) ** 2))
    assert guide.more_items == guide.items_needed - 20 > 0
    assert items_needed(report, half_width=1.0).more_items == 0
    assert report.to_json(target_half_width=0.05)["sample_size"]["items_needed"] > guide.items_needed


def test_the_estimate_is_close_to_what_more_items_really_give():
    a, b = random_two_raters(4000, 9)
    small = compute_agreement(two_rater_rows(a[:100], b[:100]), n_bootstrap=2000)
    guide = items_needed(small, half_width=0.05)
    big = compute_agreement(two_rater_rows(a[:guide.items_needed], b[:guide.items_needed]), n_bootstrap=2000)
    low, high = big.ci95["krippendorff_alpha"]
    assert (high - low) / 2 == pytest.approx(0.05, abs=0.015)


def test_no_guidance_without_an_interval_and_a_target_must_be_positive():
    report = compute_agreement(two_rater_rows(["support"] * 8, ["support"] * 8), n_bootstrap=100)
    assert items_needed(report) is None and report.to_json()["sample_size"] is None
    with pytest.raises(ValueError, match="half-width"):
        items_needed(report, half_width=0)


# ---------------------------------------------------------------------------------------------
# Several breakdowns at once, and group columns read from label files


def test_a_report_can_be_broken_down_by_several_columns():
    frame = sliced_frame()
    frame["split"] = np.where(frame["item_id"].str[-1].isin(list("02468")), "dev", "test")
    report = compute_agreement(frame, n_bootstrap=100, by=("slice", "split"))
    assert set(report.groups) == {"slice", "split"}
    assert sum(r.n_items for r in report.groups["split"].values()) == report.n_items
    data = report.to_json()
    assert set(data["by_split"]) == {"dev", "test"} and set(data["by_slice"]) == {"normal", "permission"}


@pytest.mark.parametrize("name, text", [
    ("labels.csv", "item_id,rater,label,slice\nc1,a,support,normal\nc1,b,support,normal\n"
                   "c2,a,support,\nc2,b,contradict,\n"),
    ("labels.csv", 'item_id,rater,label,slice\nc1,a,support,normal\nc1,b,support,"normal"\n'
                   "c2,a,support,\nc2,b,contradict,\n"),
    ("labels.jsonl", '{"item_id":"c1","rater":"a","label":"support","slice":"normal"}\n'
                     '{"item_id":"c1","rater":"b","label":"support","slice":"normal"}\n'
                     '{"item_id":"c2","rater":"a","label":"support","slice":""}\n'
                     '{"item_id":"c2","rater":"b","label":"contradict","slice":""}\n'),
])
def test_a_label_file_can_carry_a_group_column(tmp_path, name, text):
    frame = read_label_frame(write(tmp_path, name, text), keep=("slice",))
    assert frame["slice"].tolist() == ["normal", "normal", "", ""]
    report = compute_agreement(frame, n_bootstrap=0, by="slice")
    assert report.groups["slice"]["normal"].percent_agreement.value == 1.0
    assert report.groups["slice"][""].percent_agreement.value == 0.0


@pytest.mark.parametrize("name, text", [
    ("labels.csv", "item_id,rater,label\nc1,a,support\n"),
    ("labels.jsonl", '{"item_id":"c1","rater":"a","label":"support"}\n'),
])
def test_a_missing_group_column_is_named(tmp_path, name, text):
    with pytest.raises(ImportRowError) as error:
        read_label_frame(write(tmp_path, name, text), keep=("slice",))
    assert error.value.field == "slice" and error.value.line == 1 and "--by slice" in str(error.value)


def test_a_stray_quote_in_an_ignored_column_is_named_not_swallowing_the_rest(tmp_path):
    text = 'item_id,rater,label,note\na,r1,support,"oops\nb,r1,support,x\nb,r2,support,x\n'
    with pytest.raises(ImportRowError) as caught:
        read_label_table(write(tmp_path, "labels.csv", text))
    assert caught.value.line == 2 and "never closed" in str(caught.value)


def test_an_overlong_quoted_field_is_an_error_naming_its_line(tmp_path):
    text = 'item_id,rater,label,note\na,r1,support,"' + "x" * 200_000 + '"\n'
    with pytest.raises(ImportRowError) as caught:
        read_label_table(write(tmp_path, "labels.csv", text))
    assert caught.value.line == 2


def test_a_repeated_rating_with_another_group_value_is_refused(tmp_path):
    text = "item_id,rater,label,slice\na,r1,support,x\na,r2,support,x\na,r1,support,y\n"
    with pytest.raises(ImportRowError) as caught:
        read_label_frame(write(tmp_path, "labels.csv", text), keep=("slice",))
    assert caught.value.line == 4 and "repeats line 2" in str(caught.value)


def test_no_analytic_interval_from_a_handful_of_items():
    report = compute_agreement(two_rater_rows(["support", "contradict"] * 2, ["support", "contradict", "contradict", "support"]),
                               n_bootstrap=0)
    assert not any(report.analytic_ci95.values())


@pytest.mark.parametrize("name", ["labels.csv", "labels.jsonl"])
def test_names_are_nfc_normalized_so_two_spellings_are_one_rater(tmp_path, name):
    composed, decomposed = "r\u00e9", "re\u0301"
    rows = [("a", composed, "support"), ("a", "x", "support"), ("b", decomposed, "contradict"), ("b", "x", "support")]
    if name.endswith(".csv"):
        text = "item_id,rater,label\n" + "".join(f"{i},{r},{lab}\n" for i, r, lab in rows)
    else:
        text = "".join(json.dumps({"item_id": i, "rater": r, "label": lab}) + "\n" for i, r, lab in rows)
    frame = read_label_frame(write(tmp_path, name, text))
    assert set(frame["rater"]) == {composed, "x"}


@pytest.mark.parametrize("name, text", [
    ("labels.csv", "item_id,rater,label\na,r1\u200b,support\n"),
    ("labels.jsonl", '{"item_id": "a", "rater": "r1\\u200b", "label": "support"}\n'),
])
def test_an_invisible_character_in_a_name_is_refused(tmp_path, name, text):
    with pytest.raises(ImportRowError, match="U\\+200B") as caught:
        read_label_table(write(tmp_path, name, text))
    assert caught.value.field == "rater"


def test_a_labels_jsonl_line_giving_a_key_twice_is_refused_naming_file_line_and_key(tmp_path):
    path = write(tmp_path, "labels.jsonl", '{"item_id": "c1", "rater": "ann", "label": "support"}\n'
                                           '{"item_id": "c1", "rater": "bea", "label": "support", "label": "contradict"}\n')
    with pytest.raises(ImportRowError) as caught:
        read_label_frame(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 2, "label")
    assert str(caught.value) == (f"{path}, line 2, field 'label': the key 'label' appears twice in one JSON object. "
                                 "Keep one of them: which value was meant is unknown")
