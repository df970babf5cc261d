"""▲/▼ on every measure of a board: one Holm family over every test on it.

Each row paired with the baseline (the same non-empty query set, every query scored) is tested
on each measure of the family with the board's test — the two-sided Wilcoxon signed-rank test
on the per-query differences, zero differences dropped — and the p-values of ALL these tests
(rows x measures) are Holm-adjusted together: marking more measures costs power, it never
multiplies the false alarms. A test is significant when its adjusted p is below alpha; its
direction is the sign of the mean difference (system - baseline): ▲ better, ▼ worse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from statbench.leaderboard.ranking.significance import wilcoxon_rows
from statbench.scoring.significance import ALPHA, holm


@dataclass(frozen=True)
class MeasureMark:
    """One row's test against the baseline on one measure."""

    direction: int  #: +1 significantly better (▲), -1 significantly worse (▼), 0 neither
    p_value: float  #: the test's two-sided p
    p_holm: float  #: adjusted over the whole family
    mean_diff: float  #: mean over the queries of system - baseline


@dataclass(frozen=True)
class BoardFamily:
    """Every test on a board, Holm-adjusted together."""

    marks: dict[tuple[str, str], MeasureMark]  #: (row key, measure) -> its mark
    tests: int  #: how many tests Holm corrected over
    measures: tuple[str, ...]  #: the measures of the family
    alpha: float


def measure_tests(baseline, systems: Mapping[str, object]) -> dict[str, tuple[float, float]]:
    """Row -> (two-sided p, mean difference) of each system against the baseline on one measure:
    ``baseline`` and every system's scores are arrays over the same queries, in one order."""
    if not systems:
        return {}
    names = list(systems)
    base = np.asarray(baseline, dtype=float)
    diffs = np.array([np.asarray(systems[n], dtype=float) for n in names]).reshape(len(names), len(base)) - base
    tested = wilcoxon_rows(diffs)
    return {name: (p, float(d.mean())) for name, (_, p), d in zip(names, tested, diffs)}


def board_family(tests: Mapping[tuple[str, str], tuple[float, float]], measures, alpha: float = ALPHA) -> BoardFamily:
    """The marks of ``tests`` ((row key, measure) -> (p, mean difference)), Holm-adjusted
    together (in sorted (row, measure) order, so the result does not depend on the mapping's
    order)."""
    keys = sorted(tests)
    adjusted = holm([tests[k][0] for k in keys])
    marks = {}
    for key, p_adj in zip(keys, adjusted):
        p, diff = tests[key]
        direction = 0 if not p_adj < alpha or diff == 0 else (1 if diff > 0 else -1)
        marks[key] = MeasureMark(direction=direction, p_value=p, p_holm=p_adj, mean_diff=diff)
    return BoardFamily(marks=marks, tests=len(keys), measures=tuple(measures), alpha=alpha)
