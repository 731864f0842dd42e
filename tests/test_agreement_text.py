"""The agreement report as terminal text (annotator/agreement_text.py): a figure that rounds to
zero is never written -0.000, an interval from 0 (or below) to 1 says why it bounds nothing, and
an analytic interval left out says why; reasons shared by several coefficients share a line."""

from __future__ import annotations

from annotator.agreement import compute_agreement
from annotator.agreement_text import format_agreement
from annotator.messages import english
from annotator.vocabulary import INDICATIVE_BELOW

WHOLE = english("msg.agreement.whole_range")


def rows(pairs: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    return [(f"i{n}", rater, label) for n, pair in enumerate(pairs) for rater, label in zip("ab", pair)]


FEW = [("support", "support"), ("contradict", "contradict"), ("support", "contradict"),
       ("insufficient", "insufficient"), ("support", "support")]
"""Five claims: every chance-corrected interval reaches from 0 or below to 1."""


def test_a_few_items_say_why_the_interval_bounds_nothing_and_why_no_analytic_interval():
    data = compute_agreement(rows(FEW), n_bootstrap=1000, seed=0).to_json()
    whole = [m for m, ci in data["ci95"].items() if ci and round(ci[0], 3) <= 0 and round(ci[1], 3) >= 1]
    assert whole  # the data is a case in point
    text = format_agreement(data)
    assert f"  the interval of {', '.join(whole)}: {WHOLE}" in text.splitlines()
    why = english("msg.agreement.analytic_few_items", n=5, below=INDICATIVE_BELOW)
    assert f"  no analytic interval for percent_agreement, cohen_kappa: {why}" in text.splitlines()


def test_many_items_give_no_such_note():
    pairs = [("support", "support")] * 20 + [("contradict", "contradict")] * 15 + [("insufficient", "support")] * 5
    text = format_agreement(compute_agreement(rows(pairs), n_bootstrap=200, seed=0).to_json())
    assert "the interval of" not in text and "no analytic interval" not in text


def test_a_negative_zero_is_written_as_zero_and_a_negative_figure_keeps_its_sign():
    data = compute_agreement(rows(FEW * 4), n_bootstrap=0).to_json()
    data["ci95"]["gwet_ac1"] = [-8.326672684688674e-17, 1.0]  # what a bootstrap's float sums give
    data["ci95"]["scott_pi"] = [-0.25, 0.9]
    data["gwet_ac1"] = -0.0
    data["by_category"]["support"]["ci95"] = [-0.0, 1.0]
    text = format_agreement(data)
    assert "-0.000" not in text and "-0.0000" not in text
    line = next(line for line in text.splitlines() if line.strip().startswith("gwet_ac1"))
    assert line.split()[1:3] == ["0.0000", "[0.000,"]
    assert "[-0.250, 0.900]" in text
    assert f"  the interval of support: {WHOLE}" in text.splitlines()  # specific agreement too
