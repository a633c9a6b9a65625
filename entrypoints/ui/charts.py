"""Entry point (ui): small inline SVG drawn on the server: a hit's evidence bars and plots.

No chart library and no script: numbers become rectangles and polylines here, labels are
escaped text. Presentation attributes (width, fill classes) need no inline style, so the
pages' Content-Security-Policy can forbid inline styles and scripts altogether.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Final

from memlane.domain.search import ScoreExplanation
from memlane.entrypoints.ui.html import Safe, fill, join

_BAR_WIDTH: Final = 120
_ROW: Final = 15


def _shown(label: str, value: float | None) -> str:
    if value is None:
        return "–"
    return f"×{1.0 + value:.3f}" if label == "time" else f"{value:.3f}"


def evidence_bars(explanation: ScoreExplanation | None) -> Safe:
    """Four bars: keyword, vector, fusion, decay, each in [0, 1] (a missing leg says so); then
    piece, a note chunk's best piece's cosine, when the vector score mixed it in; and time, when
    the question's time words moved the hit (the bar is the multiplier's distance from 1, drawn
    in the "down" colour for a demotion; the figure is the multiplier)."""
    if explanation is None:
        return Safe("")
    rows: tuple[tuple[str, float | None], ...] = (
        ("keyword", explanation.text_score),
        ("vector", explanation.vector_score),
        ("fusion", explanation.fused_score),
        ("decay", explanation.decay_factor),
    )
    if explanation.best_piece is not None:
        rows = (*rows, ("piece", explanation.best_piece))
    if explanation.time_boost != 1.0:
        rows = (*rows, ("time", explanation.time_boost - 1.0))
    drawn = []
    for index, (label, value) in enumerate(rows):
        y = index * _ROW
        # A demotion (time multiplier below 1) is as long as its cut, not an empty bar.
        down = label == "time" and value is not None and value < 0
        share = 0.0 if value is None else min(max(-value if down else value, 0.0), 1.0)
        drawn.append(
            fill(
                '<g class="ev-$label" data-evidence="$label" data-value="$shown">'
                '<text x="0" y="$ty" class="ev-label">$label</text>'
                '<rect x="56" y="$ry" width="$full" height="9" class="ev-track"/>'
                '<rect x="56" y="$ry" width="$width" height="9" class="ev-bar$down"/>'
                '<text x="$vx" y="$ty" class="ev-value">$shown</text></g>',
                label=label,
                ty=y + 10,
                ry=y + 2,
                full=_BAR_WIDTH,
                width=round(share * _BAR_WIDTH, 1),
                down=" ev-down" if down else "",
                vx=56 + _BAR_WIDTH + 6,
                shown=_shown(label, value),
            )
        )
    return fill(
        '<svg class="evidence" role="img" aria-label="$aria" width="$w" height="$h" '
        'viewBox="0 0 $w $h">$rows</svg>',
        aria="evidence: "
        + ", ".join(f"{n} {'none' if v is None else _shown(n, v)}" for n, v in rows),
        w=56 + _BAR_WIDTH + 48,
        h=len(rows) * _ROW,
        rows=join(drawn),
    )


@dataclass(frozen=True, slots=True)
class Series:
    """Points to plot: (epoch seconds, value), oldest first."""

    title: str
    unit: str
    points: Sequence[tuple[float, float]]
    css: str  # the class the stylesheet colours


_W: Final = 560
_H: Final = 150
_PAD_L: Final = 56
_PAD_R: Final = 12
_PAD_T: Final = 22
_PAD_B: Final = 24


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%m-%d %H:%M")


def _number(value: float, unit: str) -> str:
    if unit == "ms" and value >= 10_000:
        return f"{value / 1000:,.0f} s"
    return f"{value:,.0f} {unit}".strip()


def time_plot(series: Series, *, bars: bool = False) -> Safe:
    """A plot of `series` over time: a step line (or bars), the axes' end labels, a title."""
    points = list(series.points)
    header = fill('<text x="$x" y="14" class="plot-title">$t</text>', x=_PAD_L, t=series.title)
    if not points:
        body = join(
            [header, fill('<text x="$x" y="70" class="plot-empty">no data yet</text>', x=_PAD_L)]
        )
        return _svg(series, body)
    t0, t1 = points[0][0], points[-1][0]
    span = (t1 - t0) or 1.0
    top = max(v for _, v in points) or 1.0
    inner_w, inner_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(t: float) -> float:
        return round(_PAD_L + (t - t0) / span * inner_w, 1) if t1 > t0 else _PAD_L + inner_w / 2

    def y(v: float) -> float:
        return round(_PAD_T + inner_h - v / top * inner_h, 1)

    marks: list[Safe] = []
    if bars:
        for t, v in points:
            marks.append(
                fill(
                    '<rect x="$x" y="$y" width="4" height="$h" class="plot-mark">'
                    "<title>$tip</title></rect>",
                    x=x(t) - 2,
                    y=y(v),
                    h=round(_PAD_T + inner_h - y(v), 1),
                    tip=f"{_when(t)}: {_number(v, series.unit)}",
                )
            )
    else:
        path = [f"{x(points[0][0])},{y(points[0][1])}"]
        for (_, previous), (t, v) in pairwise(points):
            path += [f"{x(t)},{y(previous)}", f"{x(t)},{y(v)}"]
        marks.append(fill('<polyline points="$p" class="plot-line"/>', p=" ".join(path)))
        marks += [
            fill(
                '<circle cx="$x" cy="$y" r="2.5" class="plot-mark"><title>$tip</title></circle>',
                x=x(t),
                y=y(v),
                tip=f"{_when(t)}: {_number(v, series.unit)}",
            )
            for t, v in points
        ]
    axes = fill(
        '<line x1="$l" y1="$b" x2="$r" y2="$b" class="plot-axis"/>'
        '<line x1="$l" y1="$t" x2="$l" y2="$b" class="plot-axis"/>'
        '<text x="$lx" y="$ty" class="plot-label" text-anchor="end">$top</text>'
        '<text x="$lx" y="$b" class="plot-label" text-anchor="end">0</text>'
        '<text x="$l" y="$by" class="plot-label">$first</text>'
        '<text x="$r" y="$by" class="plot-label" text-anchor="end">$last</text>',
        l=_PAD_L,
        r=_W - _PAD_R,
        t=_PAD_T,
        b=_PAD_T + inner_h,
        lx=_PAD_L - 4,
        ty=_PAD_T + 8,
        by=_H - 6,
        top=_number(top, series.unit),
        first=_when(t0),
        last=_when(t1),
    )
    return _svg(series, join([header, axes, *marks]))


def _svg(series: Series, body: Safe) -> Safe:
    return fill(
        '<svg class="plot $css" role="img" aria-label="$title" width="$w" height="$h" '
        'viewBox="0 0 $w $h" data-points="$n">$body</svg>',
        css=series.css,
        title=series.title,
        w=_W,
        h=_H,
        n=len(series.points),
        body=body,
    )
