"""Altair charts for the Agreement and Home pages: pure functions from plain data to a chart.

No Streamlit and no catalog lookups here: the page passes every text (titles, axis titles,
legend entries, "undefined") already translated. Every chart has a title, and every value it
shows is also printed as text (in the cell, or beside the point), so colour is never the only
carrier of a figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import altair as alt
import pandas as pd

SHAPES = ("circle", "triangle-up", "square", "diamond")
"""Point shapes for the notes of an interval chart, in the order the notes are given."""


@dataclass(frozen=True)
class IntervalPoint:
    """One point of an interval chart: a value with its 95% interval.

    row: the y label (a group, a coefficient, a category); panel: the facet it belongs to
    ("" for a chart of one panel); value, low, high: None when undefined or without interval;
    note: the marker legend entry (drawn as a shape); text: printed beside the point (the value,
    or why there is none).
    """

    row: str
    panel: str
    value: float | None
    low: float | None
    high: float | None
    note: str = ""
    text: str = ""


def _title(text: str, subtitle: str | None = None) -> alt.TitleParams:
    return alt.TitleParams(text=text, subtitle=subtitle or [], anchor="start")


def interval_chart(
    points: Sequence[IntervalPoint],
    *,
    title: str,
    x_title: str,
    y_title: str | None = None,
    domain: tuple[float, float] = (-1.0, 1.0),
    notes: Sequence[str] = (),
    panel_width: int = 200,
    subtitle: str | None = None,
    description: str = "",
) -> alt.Chart | alt.FacetChart:
    """A dot plot with whiskers: x = the value, y = the row; one panel per distinct `panel`
    (side by side, each headed by its name, without x titles: `subtitle`, or else `x_title`,
    goes under the title).

    notes: the possible IntervalPoint.note values in legend order; each gets a shape from
        SHAPES (so a group marked "indicative only" differs by shape, not only by colour).
    A point without a value is drawn as its `text` at the left edge of the panel; a reference
    line marks 0 when it lies in `domain`. Raises ValueError when `points` is empty.
    """
    if not points:
        raise ValueError("an interval chart needs at least one point")
    frame = pd.DataFrame([asdict(p) for p in points])
    rows = list(dict.fromkeys(frame["row"]))
    panels = list(dict.fromkeys(frame["panel"]))
    frame["edge"] = domain[0]
    faceted = len(panels) > 1
    axis_title = None if faceted else x_title
    y = alt.Y("row:N", sort=rows, title=y_title, axis=alt.Axis(labelLimit=320))
    x_scale = alt.Scale(domain=list(domain), nice=False)
    base = alt.Chart().encode(y=y)
    tooltip = [alt.Tooltip("row:N", title=y_title or " "), alt.Tooltip("text:N", title=x_title)]
    # Screen readers get each row from the text marks (and the table every page prints before the
    # chart); the point, whisker and zero-line marks are hidden from them (aria=False): an empty or
    # unlabelled mark container would be announced as an image without a name (axe: svg-img-alt).
    point = base.mark_point(filled=True, size=90, opacity=1, aria=False).encode(
        x=alt.X("value:Q", scale=x_scale, title=axis_title), tooltip=tooltip)
    if notes:
        shape_scale = alt.Scale(domain=list(notes), range=list(SHAPES[:len(notes)]))
        point = point.encode(shape=alt.Shape("note:N", scale=shape_scale, title=None,
                                             legend=alt.Legend(orient="bottom", labelLimit=0)))
    layers = [
        base.mark_rule(strokeWidth=2, aria=False).encode(x=alt.X("low:Q", scale=x_scale, title=axis_title), x2="high:Q")
        .transform_filter("isValid(datum.low) && isValid(datum.high)"),
        point.transform_filter("isValid(datum.value)"),
        base.mark_text(dy=-11, fontSize=11).encode(x=alt.X("value:Q", scale=x_scale), text="text:N")
        .transform_filter("isValid(datum.value)"),
        base.mark_text(align="left", dx=4, fontSize=11, fontStyle="italic").encode(
            x=alt.X("edge:Q", scale=x_scale), text="text:N", tooltip=tooltip)
        .transform_filter("!isValid(datum.value)"),
    ]
    if domain[0] < 0 < domain[1]:
        zero = alt.Chart().mark_rule(strokeDash=[4, 4], color="gray", opacity=0.6, aria=False).encode(x=alt.datum(0))
        layers.insert(0, zero)
    height = alt.Step(30 if len(rows) > 1 else 40)
    chart = alt.layer(*layers, data=frame).properties(width=panel_width, height=height)
    lines = [subtitle] if subtitle else [x_title] if faceted else []
    if faceted:
        chart = chart.facet(column=alt.Column("panel:N", sort=panels, title=None,
                                              header=alt.Header(labelFontWeight="bold", labelFontSize=12)))
    return chart.properties(title=_title(title, lines), description=description or title)


def confusion_chart(
    matrix: Sequence[Sequence[int]],
    categories: Sequence[str],
    rater_a: str,
    rater_b: str,
    *,
    title: str,
) -> alt.LayerChart:
    """A heatmap of a confusion matrix with the count printed in each cell.

    matrix[i][j] = claims `rater_a` put in categories[i] and `rater_b` in categories[j] (q x q,
    rows rater_a); categories: the display names, in the matrix's order.
    """
    long = pd.DataFrame(
        [{"a": categories[i], "b": categories[j], "n": int(n)}
         for i, row in enumerate(matrix) for j, n in enumerate(row)],
        columns=["a", "b", "n"],
    )
    base = alt.Chart(long).encode(
        x=alt.X("b:N", title=rater_b, sort=list(categories), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("a:N", title=rater_a, sort=list(categories)),
    )
    dark = alt.datum.n > max(int(long["n"].max()) if len(long) else 0, 1) / 2
    cells = base.mark_rect().encode(color=alt.Color("n:Q", legend=None, scale=alt.Scale(scheme="blues")),
                                    tooltip=["a:N", "b:N", "n:Q"])
    text = base.mark_text(fontSize=14).encode(
        text="n:Q", color=alt.condition(dark, alt.value("white"), alt.value("black")))
    return (cells + text).properties(title=_title(title), description=title, width=alt.Step(70), height=alt.Step(44))


@dataclass(frozen=True)
class PairCell:
    """One pair of labelers: `value` (None when undefined or not computed) and the text to print."""

    rater_a: str
    rater_b: str
    value: float | None
    text: str


def pair_matrix_chart(raters: Sequence[str], cells: Sequence[PairCell], *, title: str, legend_title: str,
                      description: str = "") -> alt.LayerChart:
    """A labelers x labelers heatmap of a pairwise coefficient in [-1, 1], drawn in both
    triangles, the value (or why there is none) printed in each cell; the diagonal is left empty.
    A cell without a value is grey, with its text."""
    rows = []
    for cell in cells:
        for a, b in ((cell.rater_a, cell.rater_b), (cell.rater_b, cell.rater_a)):
            rows.append({"a": a, "b": b, "value": cell.value, "text": cell.text})
    frame = pd.DataFrame(rows, columns=["a", "b", "value", "text"])
    order = list(raters)
    base = alt.Chart(frame).encode(
        x=alt.X("b:N", sort=order, title=None, axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("a:N", sort=order, title=None),
    )
    background = base.mark_rect(color="#eeeeee")
    colored = base.mark_rect().encode(
        color=alt.Color("value:Q", title=legend_title, scale=alt.Scale(scheme="redblue", domain=[-1, 1]),
                        legend=alt.Legend(orient="bottom", direction="horizontal", gradientLength=160)),
        tooltip=["a:N", "b:N", "text:N"],
    ).transform_filter("isValid(datum.value)")
    strong = "isValid(datum.value) && abs(datum.value) > 0.6"
    text = base.mark_text(fontSize=13).encode(
        text="text:N", color=alt.condition(strong, alt.value("white"), alt.value("black")))
    return (background + colored + text).properties(
        title=_title(title), description=description or title, width=alt.Step(90), height=alt.Step(44))


@dataclass(frozen=True)
class StateBar:
    """One bar of a state chart: `claims` claims of `group` (a slice) in `state` (its display
    name); text: printed at the bar's end (the state and the count, so that the bar reads
    without its colour)."""

    group: str
    state: str
    claims: int
    text: str


STATE_COLOURS = ("#9e9e9e", "#90caf9", "#2e7d32", "#ef6c00", "#1565c0", "#8e24aa", "#795548")
"""Bar colours for the claim states in workflow.State order (unlabeled grey, single light blue,
agreed green, disputed orange, adjudicated blue, stale purple, on hold brown); every bar also
carries its state in words, so the colour is never the only sign."""


def state_chart(bars: Sequence[StateBar], *, states: Sequence[str], title: str, x_title: str, y_title: str,
                legend_title: str, description: str = "") -> alt.LayerChart:
    """Horizontal bars of claims by group and state: one band per group on the y axis (in the
    order the bars come), one bar per state with claims inside it (in `states` order), coloured
    by state with a legend titled `legend_title`, and each bar's `text` printed at its end.

    states: every state's display name, in the order of the legend and of the bars in a band.
    Bars with no claims are left out. Raises ValueError when no bar has claims.
    """
    shown = [bar for bar in bars if bar.claims > 0]
    if not shown:
        raise ValueError("a state chart needs at least one bar with claims")
    frame = pd.DataFrame([asdict(bar) for bar in shown])
    groups = list(dict.fromkeys(frame["group"]))
    present = [state for state in states if state in set(frame["state"])]
    base = alt.Chart(frame).encode(
        y=alt.Y("group:N", sort=groups, title=y_title, axis=alt.Axis(labelLimit=240)),
        yOffset=alt.YOffset("state:N", sort=present),
        x=alt.X("claims:Q", title=x_title, axis=alt.Axis(tickMinStep=1),
                scale=alt.Scale(domain=[0, int(frame["claims"].max() * 1.25) + 1])),  # room for the texts
        tooltip=[alt.Tooltip("group:N", title=y_title), alt.Tooltip("state:N", title=legend_title),
                 alt.Tooltip("claims:Q", title=x_title)],
    )
    palette = STATE_COLOURS if len(states) == len(STATE_COLOURS) else None
    colour = alt.Color("state:N", title=legend_title, sort=list(states),
                       scale=alt.Scale(domain=list(states), range=palette) if palette else
                       alt.Scale(domain=list(states), scheme="tableau10"),
                       legend=alt.Legend(orient="bottom", labelLimit=0, columns=4))
    bar = base.mark_bar(height={"band": 0.9}).encode(color=colour)
    label = base.mark_text(align="left", dx=4, fontSize=11).encode(text="text:N")
    chart = alt.layer(bar, label).properties(width=520, height=alt.Step(16, **{"for": "offset"}))  # 16 px a bar
    return chart.properties(title=_title(title), description=description or title)
