"""Paired significance tests of systems against a baseline, on per-query scores.

Pure numpy/scipy with fixed seeds, so the same scores always give the same figures.
A system is tested only on exactly the query set the baseline scored (the same non-empty
set of query ids, see :func:`query_set_difference`): a test on part of the queries, or on
none, is no test and is refused rather than reported as "not significant". For each system:

- Wilcoxon signed-rank test (two-sided, ``zero_method="wilcox"``): queries on which the
  two systems score the same are *discarded* before ranking, the classical test (ties
  are common in IR: many queries score 0 or 1 for both systems). p is exact up to 50
  non-zero differences without tied magnitudes, from the normal approximation otherwise
  (scipy's ``method="auto"``). If every difference is zero the test is not run and p
  is 1 (no evidence of any difference).
- Holm–Bonferroni adjustment over all the comparisons against the same baseline.
- Cohen's d of the paired differences: mean / sample std (``None`` when the std is 0).
- 95% percentile bootstrap confidence interval of the mean difference
  (10,000 resamples of the queries, seeded).
- win / tie / loss counts of the system against the baseline.

Differences are always *system − baseline*: positive means the system is better.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Mapping

from statbench.errors import StatbenchError
from statbench.results.record import as_scores

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20240917


@dataclass(frozen=True)
class Comparison:
    """One system against the baseline on one measure."""

    system: str
    baseline: str
    measure: str
    n: int
    mean_baseline: float
    mean_system: float
    mean_diff: float
    ci_low: float
    ci_high: float
    cohens_d: float | None
    wins: int
    ties: int
    losses: int
    statistic: float | None
    p_value: float
    p_holm: float
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        return self.p_holm < self.alpha

    @property
    def direction(self) -> int:
        """+1 significantly better than the baseline, -1 significantly worse, 0 otherwise."""
        if not self.significant or self.mean_diff == 0:
            return 0
        return 1 if self.mean_diff > 0 else -1

    def as_dict(self) -> dict:
        return {**asdict(self), "significant": self.significant, "direction": self.direction}


def primary_measure(task_name: str, labels, info=None) -> str:
    """The measure tested by default: the task's declared primary measure
    (``TaskInfo.primary_measure``) when the results report it, else nDCG@10 or R@100 if
    they report them, else their first measure."""
    labels = list(labels)
    declared = info.primary_measure if info is not None else None
    for candidate in (declared, "nDCG@10", "R@100"):
        if candidate and candidate in labels:
            return candidate
    if not labels:
        raise StatbenchError(f"task {task_name!r} reports no measures")
    return labels[0]


def query_set_difference(baseline: Mapping[str, float], system: Mapping[str, float],
                         names: tuple[str, str] = ("the baseline", "the system")) -> str | None:
    """Why the two cannot be paired, or None when they scored exactly the same, non-empty,
    set of query ids (a paired test on fewer queries would not be the test of these runs)."""
    if not baseline or not system:
        empty = [name for name, scores in zip(names, (baseline, system)) if not scores]
        return f"no per-query score in {' and '.join(empty)}"
    only_base = sorted(set(baseline) - set(system))
    only_system = sorted(set(system) - set(baseline))
    if not only_base and not only_system:
        return None
    parts = [
        f"{len(only)} quer{'y' if len(only) == 1 else 'ies'} scored only by {name} (e.g. {', '.join(only[:3])})"
        for name, only in zip(names, (only_base, only_system)) if only
    ]
    return "different query sets: " + "; ".join(parts)


def paired_arrays(baseline: Mapping[str, float], system: Mapping[str, float]):
    """Scores on the query ids both runs have, in sorted id order."""
    import numpy as np

    qids = sorted(set(baseline) & set(system))
    return (np.array([baseline[q] for q in qids], dtype=float), np.array([system[q] for q in qids], dtype=float))


def wilcoxon_p(diffs) -> tuple[float | None, float]:
    """(statistic, two-sided p) of the signed-rank test; zero differences dropped."""
    import numpy as np
    from scipy import stats

    nonzero = np.asarray(diffs)[np.asarray(diffs) != 0]
    if len(nonzero) == 0:
        return None, 1.0
    # zeros removed here rather than by scipy, so that its method choice ("auto": exact
    # null distribution up to 50 differences without tied |d|, else the normal
    # approximation) depends on the differences kept, not on how many ties were dropped
    result = stats.wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided")
    return float(result.statistic), float(result.pvalue)


def bootstrap_ci(diffs, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference (resampling queries)."""
    import numpy as np

    n = len(diffs)
    if n == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)  # bound memory: at most ~2M indices at a time
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = diffs[idx].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def cohens_d(diffs) -> float | None:
    import numpy as np

    diffs = np.asarray(diffs, dtype=float)
    # equal differences up to float noise (0.05 written as 0.35 - 0.3 on every query): sd 0, d undefined
    if len(diffs) < 2 or np.ptp(diffs) <= 1e-12 * max(1.0, float(np.max(np.abs(diffs)))):
        return None
    sd = float(np.std(diffs, ddof=1))
    return None if sd == 0 else float(np.mean(diffs)) / sd


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values (monotone, capped at 1), input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def require_paired(baseline_name: str, baseline: Mapping[str, float], systems: Mapping[str, Mapping[str, float]],
                   measure: str) -> None:
    """``StatbenchError`` unless every system scored exactly the baseline's query set."""
    for name in sorted(systems):
        problem = query_set_difference(baseline, systems[name], (repr(baseline_name), repr(name)))
        if problem is not None:
            raise StatbenchError(f"{name!r} cannot be tested against {baseline_name!r} on {measure}: {problem}")


def with_holm(raw: list[dict], alpha: float) -> list[Comparison]:
    """The comparisons of one family (``raw``: Comparison fields but ``p_holm``/``alpha``),
    their p-values Holm-adjusted together."""
    adjusted = holm([r["p_value"] for r in raw])
    return [Comparison(**r, p_holm=p_adj, alpha=alpha) for r, p_adj in zip(raw, adjusted)]


def compare_to_baseline(
    baseline_name: str,
    baseline: Mapping[str, float],
    systems: Mapping[str, Mapping[str, float]],
    measure: str,
    alpha: float = ALPHA,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[Comparison]:
    """Test every system against the baseline; ``baseline``/``systems`` map query id -> score.

    Systems are handled in sorted name order, each bootstrap with the same seed, so a
    comparison does not depend on which other systems are present (except through Holm).
    Every system must have scored exactly the baseline's query set (``StatbenchError``
    otherwise: callers leave such systems out, see :func:`query_set_difference`)."""
    require_paired(baseline_name, baseline, systems, measure)
    raw = []
    for name in sorted(systems):
        base, sys_ = paired_arrays(baseline, systems[name])
        diffs = sys_ - base
        statistic, p = wilcoxon_p(diffs)
        low, high = bootstrap_ci(diffs, resamples, seed)
        raw.append(
            dict(
                system=name, baseline=baseline_name, measure=measure, n=len(diffs),
                mean_baseline=_mean(base), mean_system=_mean(sys_), mean_diff=_mean(diffs),
                ci_low=low, ci_high=high, cohens_d=cohens_d(diffs),
                wins=int((diffs > 0).sum()), ties=int((diffs == 0).sum()), losses=int((diffs < 0).sum()),
                statistic=statistic, p_value=p,
            )
        )
    return with_holm(raw, alpha)


def _mean(values) -> float:
    return float(values.mean()) if len(values) else 0.0


def per_query_measure(results, measure: str, source: str = "results") -> dict[str, float]:
    """query id -> score on ``measure`` from a :class:`~statbench.results.record.RunScores` (a
    ``Results`` is one), or from a results dict or evaluate_run_file's output."""
    scores = as_scores(results)
    labels = scores.labels
    if measure not in labels:
        raise StatbenchError(f"{source}: no measure {measure!r}; it reports: {', '.join(labels)}")
    return {qid: float(value) for qid, value in scores.query_scores(measure).items()}


def format_p(p: float) -> str:
    if math.isnan(p):
        return "n/a"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"
