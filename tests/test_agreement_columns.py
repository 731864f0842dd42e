"""compute_agreement on a table of plain columns (a dict of lists, what the database reports
give it) as on a DataFrame or tuples, and `factorize`, which codes the columns as pandas.factorize
does without loading pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from annotator.agreement import compute_agreement, factorize
from annotator.errors import AgreementInputError

SEQUENCES = [
    [],
    ["b", "a", "b", "c", "a"],
    ["x", None, "y", float("nan"), "x", np.nan, None],
    [3, 1, 3, 2, 1, 1],
    [1.5, float("nan"), 1.5, 2.0],
    ["1", 1, "1", 1],
    np.array(["s", "t", "s"]),
    np.array([2.0, np.nan, 2.0, 3.0]),
    np.array([np.float32(1), np.float32("nan"), np.float32(1)]),
    np.array(["a", None, "a"], dtype=object),
    np.array([7, 7, 8]),
]


@pytest.mark.parametrize("values", SEQUENCES, ids=repr)
def test_factorize_is_pandas_factorize(values):
    codes, uniques = factorize(values)
    as_array = values
    if isinstance(values, list):  # pandas takes arrays only (a list became an object array before)
        as_array = np.empty(len(values), dtype=object)
        as_array[:] = values
    expected_codes, expected_uniques = pd.factorize(as_array)
    assert codes.tolist() == expected_codes.tolist() and codes.dtype == np.int64
    assert uniques == list(expected_uniques)


def test_factorize_hands_a_pandas_object_to_pandas():
    labels = pd.Categorical(["b", "a", "b"], categories=["a", "b", "z"])
    codes, uniques = factorize(labels)
    assert codes.tolist() == [0, 1, 0] and uniques == ["b", "a"]
    assert factorize(pd.Series(["q", None, "q"]))[0].tolist() == [0, -1, 0]


def ratings(n=60, seed=4):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        group = "normal" if i % 3 else "paraphrase"
        for rater in ("ann", "ben", "cy")[: 2 + i % 2]:
            rows.append((f"c{i}", rater, ("support", "contradict", "insufficient")[rng.integers(3)], group))
    return rows


def test_a_dict_of_columns_gives_the_report_of_the_same_dataframe_and_tuples():
    rows = ratings()
    columns = {name: [row[k] for row in rows] for k, name in enumerate(("item_id", "rater", "label", "slice"))}
    from_dict = compute_agreement(columns, n_bootstrap=200, seed=1, by="slice")
    from_frame = compute_agreement(pd.DataFrame(columns), n_bootstrap=200, seed=1, by="slice")
    from_tuples = compute_agreement([row[:3] for row in rows], n_bootstrap=200, seed=1)
    assert from_dict == from_frame
    assert from_dict.to_json()["krippendorff_alpha"] == from_tuples.to_json()["krippendorff_alpha"]
    assert set(from_dict.groups["slice"]) == {"normal", "paraphrase"}


def test_a_dict_of_columns_is_checked_as_a_dataframe_is():
    rows = ratings(10)
    columns = {name: [row[k] for row in rows] for k, name in enumerate(("item_id", "rater", "label"))}
    with pytest.raises(AgreementInputError, match="no column 'slice'"):
        compute_agreement(columns, n_bootstrap=0, by="slice")
    with pytest.raises(AgreementInputError, match="differ in length"):
        compute_agreement({**columns, "label": columns["label"][:-1]}, n_bootstrap=0)
    twice = {name: values + values[:1] for name, values in columns.items()}
    with pytest.raises(AgreementInputError, match="rated twice"):
        compute_agreement({**twice, "line": list(range(2, len(twice["label"]) + 2))}, n_bootstrap=0)


def test_a_report_on_plain_columns_does_not_load_pandas():
    code = ("import sys\n"
            "from annotator.agreement import compute_agreement\n"
            "columns = {'item_id': ['a', 'a', 'b', 'b'] * 5, 'rater': ['x', 'y'] * 10,\n"
            "           'label': ['support', 'support', 'contradict', 'support'] * 5, 'slice': ['n'] * 20}\n"
            "columns['item_id'] = [f'{item}{k // 4}' for k, item in enumerate(columns['item_id'])]\n"
            "report = compute_agreement(columns, n_bootstrap=100, by='slice')\n"
            "assert report.n_items == 10, report.n_items\n"
            "import annotator.services.releases, annotator.services.reports\n"
            "print('pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
