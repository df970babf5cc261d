"""Inline SVG charts drawn in Python: no JavaScript library, no network, deterministic
output (coordinates rounded, series in the order given). Every text is escaped."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import escape

from statbench.leaderboard.render.efficiency import pareto_front

#: Tableau 10: distinguishable, colour-blind friendly.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
_RECALL = re.compile(r"^R@(\d+)$")


@dataclass
class Series:
    label: str
    values: dict  #: x (k, or category) -> value
    reference: bool = False  #: published figure: drawn dashed

def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]

def recall_cutoffs(measures: list[dict]) -> list[tuple[int, str]]:
    """(k, label) of the plain ``R@k`` measures, by k."""
    found = []
    for m in measures:
        match = _RECALL.match(m["ir_measure"].replace(" ", ""))
        if match:
            found.append((int(match.group(1)), m["label"]))
    return sorted(found)

def _f(x: float) -> str:
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text

def _short(text: str, n: int = 34) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"

def _legend(series: list[Series], x: float, y: float) -> list[str]:
    out = []
    for i, s in enumerate(series):
        yy = y + i * 18
        dash = ' stroke-dasharray="5 3"' if s.reference else ""
        out.append(
            f'<g class="legend-item"><title>{escape(s.label)}</title>'
            f'<line x1="{_f(x)}" y1="{_f(yy)}" x2="{_f(x + 18)}" y2="{_f(yy)}" stroke="{colour(i)}" stroke-width="3"{dash}/>'
            f'<text x="{_f(x + 24)}" y="{_f(yy + 4)}">{escape(_short(s.label))}</text></g>'
        )
    return out

def recall_curves(series: list[Series], title: str = "Recall@k") -> str:
    """Lines of recall against k (log scale), one per series; empty string if < 2 cutoffs."""
    ks = sorted({k for s in series for k in s.values})
    if len(ks) < 2 or not series:
        return ""
    width, height, left, right, top, bottom, legend_w = 560, 300, 48, 16, 28, 40, 260
    pw, ph = width - left - right, height - top - bottom
    lo, hi = math.log(ks[0]), math.log(ks[-1])

    def px(k):
        return left + (math.log(k) - lo) / (hi - lo) * pw

    def py(v):
        return top + (1 - max(0.0, min(1.0, v))) * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width + legend_w} '
        f'{max(height, top + 18 * len(series) + 10)}" width="{width + legend_w}">',
        f"<title>{escape(title)}</title>",
        f'<text class="chart-title" x="{left}" y="16">{escape(title)}</text>',
    ]
    for tick in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        y = py(tick)
        parts.append(f'<line class="grid" x1="{left}" y1="{_f(y)}" x2="{left + pw}" y2="{_f(y)}"/>')
        parts.append(f'<text class="tick" x="{left - 6}" y="{_f(y + 4)}" text-anchor="end">{tick:.1f}</text>')
    for k in ks:
        x = px(k)
        parts.append(f'<line class="grid" x1="{_f(x)}" y1="{top}" x2="{_f(x)}" y2="{top + ph}"/>')
        parts.append(f'<text class="tick" x="{_f(x)}" y="{top + ph + 16}" text-anchor="middle">{k}</text>')
    parts.append(f'<text class="axis" x="{left + pw / 2:.0f}" y="{height - 6}" text-anchor="middle">k (log scale)</text>')
    for i, s in enumerate(series):
        points = [(px(k), py(v)) for k, v in sorted(s.values.items())]
        dash = ' stroke-dasharray="5 3"' if s.reference else ""
        path = " ".join(f"{_f(x)},{_f(y)}" for x, y in points)
        parts.append(f'<polyline fill="none" stroke="{colour(i)}" stroke-width="2"{dash} points="{path}"/>')
        for (x, y), (k, v) in zip(points, sorted(s.values.items())):
            parts.append(
                f'<circle cx="{_f(x)}" cy="{_f(y)}" r="3" fill="{colour(i)}">'
                f"<title>{escape(s.label)}: R@{k} = {v:.4f}</title></circle>"
            )
    parts.extend(_legend(series, width + 8, top + 4))
    parts.append("</svg>")
    return "".join(parts)

def category_bars(categories: list[str], series: list[Series], measure: str, group: str) -> str:
    """Horizontal grouped bars: per category, one bar per series."""
    if not categories or not series:
        return ""
    bar, gap, left, right, top, legend_w = 9, 10, 190, 60, 30, 260
    width = 560
    group_h = bar * len(series) + gap
    height = top + group_h * len(categories) + 28
    top_value = max([1.0] + [v for s in series for v in s.values.values()])
    pw = width - left - right

    def px(v):
        return left + max(0.0, v) / top_value * pw

    title = f"{measure} by {group}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width + legend_w} '
        f'{max(height, top + 18 * len(series) + 10)}" width="{width + legend_w}">',
        f"<title>{escape(title)}</title>",
        f'<text class="chart-title" x="8" y="16">{escape(title)}</text>',
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = px(tick * top_value)
        parts.append(f'<line class="grid" x1="{_f(x)}" y1="{top - 4}" x2="{_f(x)}" y2="{height - 24}"/>')
        parts.append(f'<text class="tick" x="{_f(x)}" y="{height - 10}" text-anchor="middle">{tick * top_value:.2f}</text>')
    for c, category in enumerate(categories):
        y0 = top + c * group_h
        parts.append(
            f'<text class="cat" x="{left - 6}" y="{_f(y0 + group_h / 2)}" text-anchor="end">'
            f"<title>{escape(category)}</title>{escape(_short(category, 30))}</text>"
        )
        for i, s in enumerate(series):
            if category not in s.values:
                continue
            v = s.values[category]
            y = y0 + i * bar
            parts.append(
                f'<rect x="{left}" y="{_f(y)}" width="{_f(px(v) - left)}" height="{bar - 1}" fill="{colour(i)}">'
                f"<title>{escape(s.label)} — {escape(category)}: {v:.4f}</title></rect>"
            )
    parts.extend(_legend(series, width + 8, top + 4))
    parts.append("</svg>")
    return "".join(parts)

@dataclass
class Point:
    label: str
    x: float  #: what a row costs (latency, USD): less is better
    y: float  #: its quality: more is better

def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        return [10.0 ** e for e in range(first, last + 1)]
    step = (hi - lo) / 4
    return [lo + i * step for i in range(5)]

def _tick_text(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000 or abs(v) < 0.01:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{v:.3g}"

def pareto_plot(points: list[Point], title: str, x_label: str, y_label: str) -> str:
    """Quality against cost, one dot per row, the Pareto frontier (the rows no other row
    beats on both) drawn as a staircase and named in the legend; a log x axis when the
    costs span more than 20x. Empty string when fewer than two rows have both figures."""
    points = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    if len(points) < 2:
        return ""
    front = pareto_front([(p.x, p.y) for p in points])
    frame = _ParetoFrame([p.x for p in points], [p.y for p in points])
    width, height, top = frame.width, frame.height, frame.top
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart pareto" role="img" viewBox="0 0 {width + frame.legend_w} '
        f'{max(height, top + 18 * len(front) + 10)}" width="{width + frame.legend_w}">',
        f"<title>{escape(title)}</title>",
        f'<text class="chart-title" x="{frame.left}" y="16">{escape(title)}</text>',
    ]
    parts += frame.axes(x_label, y_label)
    parts += _pareto_marks(frame, points, front)
    parts.extend(_legend([Series(points[i].label, {}) for i in front], width + 8, top + 4))
    parts.append("</svg>")
    return "".join(parts)


class _ParetoFrame:
    """The Pareto plot's axes: their ranges (a log x axis when the costs span more than 20x)
    and where a figure is drawn (:meth:`px`, :meth:`py`)."""

    width, height, left, right, top, bottom, legend_w = 560, 300, 56, 16, 28, 40, 260

    def __init__(self, xs: list[float], ys: list[float]):
        self.log = min(xs) > 0 and max(xs) / min(xs) > 20
        if self.log:
            self.x_lo, self.x_hi = 10.0 ** math.floor(math.log10(min(xs))), 10.0 ** math.ceil(math.log10(max(xs)))
        else:
            self.x_lo, self.x_hi = min(0.0, min(xs)), max(xs) * 1.05 if max(xs) > 0 else 1.0
        self.y_lo, self.y_hi = math.floor(min(ys) * 20) / 20, math.ceil(max(ys) * 20) / 20
        if self.y_hi <= self.y_lo:
            self.y_lo, self.y_hi = self.y_lo - 0.05, self.y_hi + 0.05
        self.pw, self.ph = self.width - self.left - self.right, self.height - self.top - self.bottom

    def px(self, x):
        if self.log:
            return self.left + (math.log10(x) - math.log10(self.x_lo)) / (
                math.log10(self.x_hi) - math.log10(self.x_lo)) * self.pw
        return self.left + (x - self.x_lo) / (self.x_hi - self.x_lo) * self.pw

    def py(self, y):
        return self.top + (1 - (y - self.y_lo) / (self.y_hi - self.y_lo)) * self.ph

    def axes(self, x_label: str, y_label: str) -> list[str]:
        """The grid, the ticks and the axes' labels."""
        left, top, pw, ph = self.left, self.top, self.pw, self.ph
        parts = []
        for tick in _ticks(self.y_lo, self.y_hi, False):
            y = self.py(tick)
            parts.append(f'<line class="grid" x1="{left}" y1="{_f(y)}" x2="{left + pw}" y2="{_f(y)}"/>')
            parts.append(f'<text class="tick" x="{left - 6}" y="{_f(y + 4)}" text-anchor="end">{tick:.3f}</text>')
        for tick in _ticks(self.x_lo, self.x_hi, self.log):
            x = self.px(tick)
            parts.append(f'<line class="grid" x1="{_f(x)}" y1="{top}" x2="{_f(x)}" y2="{top + ph}"/>')
            parts.append(f'<text class="tick" x="{_f(x)}" y="{top + ph + 16}" text-anchor="middle">'
                         f'{_tick_text(tick)}</text>')
        axis = f"{x_label}{' (log scale)' if self.log else ''}"
        parts.append(f'<text class="axis" x="{left + pw / 2:.0f}" y="{self.height - 6}" text-anchor="middle">'
                     f'{escape(axis)}</text>')
        parts.append(f'<text class="axis" x="12" y="{top + ph / 2:.0f}" text-anchor="middle" '
                     f'transform="rotate(-90 12 {top + ph / 2:.0f})">{escape(y_label)}</text>')
        return parts


def _pareto_marks(frame: _ParetoFrame, points: list[Point], front: list[int]) -> list[str]:
    """The frontier (a staircase through the non-dominated rows, cheapest first) and a dot
    per row: grey when dominated, coloured as in the legend when on the frontier."""
    px, py = frame.px, frame.py
    parts = []
    steps = []
    for n, i in enumerate(front):
        if n:
            steps.append((px(points[i].x), py(points[front[n - 1]].y)))
        steps.append((px(points[i].x), py(points[i].y)))
    if len(steps) > 1:
        parts.append('<polyline class="frontier" fill="none" stroke="#1d2330" stroke-width="1.5" '
                     f'stroke-dasharray="4 2" points="{" ".join(f"{_f(x)},{_f(y)}" for x, y in steps)}"/>')
    on_front = set(front)
    for i, p in enumerate(points):
        if i in on_front:
            continue
        parts.append(f'<circle class="dominated" cx="{_f(px(p.x))}" cy="{_f(py(p.y))}" r="3" fill="#bab0ac">'
                     f"<title>{escape(p.label)}: {_tick_text(p.x)}, {p.y:.4f}</title></circle>")
    for n, i in enumerate(front):
        p = points[i]
        parts.append(f'<circle class="front" cx="{_f(px(p.x))}" cy="{_f(py(p.y))}" r="4.5" fill="{colour(n)}" '
                     f'stroke="#1d2330" stroke-width="0.8"><title>{escape(p.label)}: {_tick_text(p.x)}, {p.y:.4f} '
                     f"(on the frontier)</title></circle>")
    return parts
