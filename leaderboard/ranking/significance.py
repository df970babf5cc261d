"""The significance tests of one board, all systems at once: the figures of
:func:`statbench.scoring.significance.compare_to_baseline`, computed on a (systems x queries)
matrix instead of one system at a time.

- Every system of a board is paired with the baseline on the same query set, and every
  bootstrap uses the same seed, so every system draws the same resampled query indices:
  they are drawn once per board (in the chunks ``bootstrap_ci`` draws them, so the
  random stream is the same), turned into counts per query, and one matrix product gives
  every system's resampled means. Same indices, same percentiles; the means are summed in
  another order (a dot product instead of numpy's pairwise sum), so the interval bounds
  agree with ``bootstrap_ci`` to ~1e-16, not bit for bit.
- The Wilcoxon test: scipy decides per system between its exact test, a permutation
  test and the normal approximation from the non-zero differences; every system for
  which it would take the normal approximation is tested in one vectorised call (zeros
  are left out there as in the one-system call, so the statistic and p are the same);
  its permutation test (13 or fewer differences, tied) is done by :func:`sign_flip_p`;
  its exact test (50 or fewer, untied) through
  :func:`statbench.scoring.significance.wilcoxon_p`, one system at a time.
- Means, Cohen's d, wins/ties/losses and Holm: as in the one-system code, per row.
"""

from __future__ import annotations

from typing import Mapping

from statbench.scoring.significance import (
    ALPHA,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Comparison,
    cohens_d,
    require_paired,
    wilcoxon_p,
    with_holm,
)

#: systems per block: bounds the memory of the resampled means (resamples x block floats)
BLOCK = 256
#: scipy's rule (method="auto"): the normal approximation above this many differences,
#: and at or below it when |differences| tie and there are more than ``_PERMUTATION_MAX``
_EXACT_MAX = 50
_PERMUTATION_MAX = 13


def bootstrap_intervals(diffs, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                        level: float = 0.95):
    """Percentile bootstrap intervals of the mean of every row of ``diffs`` (systems x
    queries), each as :func:`statbench.scoring.significance.bootstrap_ci` gives it for that row:
    (lows, highs) arrays."""
    import numpy as np

    diffs = np.asarray(diffs, dtype=float)
    m, n = diffs.shape
    lows, highs = np.zeros(m), np.zeros(m)
    if n == 0 or m == 0:
        return lows, highs
    tail = (1 - level) / 2
    chunk = max(1, 2_000_000 // n)  # bootstrap_ci's chunks: the same random stream
    spans = [(start, min(resamples, start + chunk)) for start in range(0, resamples, chunk)]

    def drawn():
        """The counts per query of each chunk of resamples, in the order of the random stream."""
        rng = np.random.default_rng(seed)
        for start, stop in spans:
            idx = rng.integers(0, n, size=(stop - start, n))
            offsets = (np.arange(stop - start) * n)[:, None]
            yield np.bincount((idx + offsets).ravel(), minlength=(stop - start) * n).reshape(stop - start, n)

    # drawn once for every block when they fit (small integers: <= 64 M of them), not again per block
    kept = [c.astype(np.min_scalar_type(n)) for c in drawn()] if m > BLOCK and resamples * n <= 64_000_000 else None
    for first in range(0, m, BLOCK):
        block = diffs[first:first + BLOCK]
        if len(block) < BLOCK:  # every block of one shape: a row's figures never depend on how many share it
            block = np.vstack([block, np.zeros((BLOCK - len(block), n))])
        # resamples x systems, each system's resamples contiguous: the quantile's partition runs along
        # them, in place (the same order statistics, hence the same bounds, ~3x faster than across rows)
        means = np.empty((len(block), resamples)).T
        for (start, stop), counts in zip(spans, kept if kept is not None else drawn()):
            means[start:stop] = (counts.astype(float) @ block.T) / n
        low, high = np.quantile(means, [tail, 1 - tail], axis=0, overwrite_input=True)
        size = min(BLOCK, m - first)
        lows[first:first + size], highs[first:first + size] = low[:size], high[:size]
    return lows, highs


def sign_flip_p(nonzero) -> tuple[float, float]:
    """(statistic, two-sided p) of the signed-rank test on at most 13 non-zero differences
    with tied magnitudes, as scipy gives it there (``method="auto"`` takes an exact
    permutation test: all 2**k sign flips), from one small matrix product instead of
    scipy's ``permutation_test`` (~0.1-0.7 s a call). The rank sums are sums of half
    integers, hence exact, and p is a count over 2**k: the same floats."""
    import numpy as np
    from scipy.stats import rankdata

    nonzero = np.asarray(nonzero, dtype=float)
    k = len(nonzero)
    ranks = rankdata(np.abs(nonzero))
    observed = ranks[nonzero > 0].sum()
    positive = ((np.arange(2 ** k)[:, None] >> np.arange(k)) & 1).astype(bool)  # every sign assignment
    null = (positive * ranks).sum(axis=1)
    less = np.count_nonzero(null <= observed) / 2 ** k
    greater = np.count_nonzero(null >= observed) / 2 ** k
    return float(min(observed, ranks.sum() - observed)), float(min(1.0, 2 * min(less, greater)))


def wilcoxon_rows(diffs) -> list[tuple[float | None, float]]:
    """(statistic, two-sided p) of every row, as :func:`statbench.scoring.significance.wilcoxon_p`
    gives it for that row."""
    import numpy as np
    from scipy import stats

    diffs = np.asarray(diffs, dtype=float)
    out: list[tuple[float | None, float] | None] = [None] * len(diffs)
    batch = []
    for i, row in enumerate(diffs):
        nonzero = row[row != 0]
        k = len(nonzero)
        if k == 0:
            out[i] = (None, 1.0)
        elif k > _EXACT_MAX:
            batch.append(i)
        elif len(np.unique(np.abs(nonzero))) < k:  # tied |differences|
            if k > _PERMUTATION_MAX:
                batch.append(i)
            else:
                out[i] = sign_flip_p(nonzero)
        else:
            out[i] = wilcoxon_p(nonzero)  # scipy's exact distribution: a few ms
    for first in range(0, len(batch), BLOCK):
        rows = batch[first:first + BLOCK]
        result = stats.wilcoxon(diffs[rows], zero_method="wilcox", method="asymptotic", alternative="two-sided",
                                axis=1)
        for i, statistic, p in zip(rows, np.atleast_1d(result.statistic), np.atleast_1d(result.pvalue)):
            out[i] = (float(statistic), float(p))
    return out


def compare_board(
    baseline_name: str,
    baseline: Mapping[str, float],
    systems: Mapping[str, Mapping[str, float]],
    measure: str,
    alpha: float = ALPHA,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[Comparison]:
    """:func:`statbench.scoring.significance.compare_to_baseline`, vectorised over the systems
    (same arguments, same order of results, same figures: see the module's note on the
    bootstrap)."""
    require_paired(baseline_name, baseline, systems, measure)
    figures = pair_figures(baseline, systems, resamples, seed)
    return with_holm([dict(system=name, baseline=baseline_name, measure=measure, **figures[name])
                      for name in sorted(systems)], alpha)


def pair_figures(baseline: Mapping[str, float], systems: Mapping[str, Mapping[str, float]],
                 resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> dict[str, dict]:
    """System -> the figures of its comparison with the baseline that depend on this pair
    alone (everything but the names, the measure and Holm's adjustment, which depends on the
    whole family): what :mod:`~statbench.leaderboard.caches.sigcache` keeps per pair. Each system's figures are the same
    whichever others are computed with it (every bootstrap block has one shape; the
    Wilcoxon test is row by row), so a board that gains a row re-tests only that row."""
    import numpy as np

    names = sorted(systems)
    if not names:
        return {}
    qids = sorted(baseline)
    base = np.array([baseline[q] for q in qids], dtype=float)
    # a system's scores: query id -> score, or already an array in the order of sorted(baseline)
    scores = np.array([systems[name] if isinstance(systems[name], np.ndarray) else [systems[name][q] for q in qids]
                       for name in names], dtype=float).reshape(len(names), len(qids))
    diffs = scores - base
    tests = wilcoxon_rows(diffs)
    lows, highs = bootstrap_intervals(diffs, resamples, seed)
    mean_base = float(base.mean())
    out = {}
    for i, name in enumerate(names):
        d = diffs[i]
        out[name] = dict(
            n=len(d), mean_baseline=mean_base, mean_system=float(scores[i].mean()), mean_diff=float(d.mean()),
            ci_low=float(lows[i]), ci_high=float(highs[i]), cohens_d=cohens_d(d),
            wins=int((d > 0).sum()), ties=int((d == 0).sum()), losses=int((d < 0).sum()),
            statistic=tests[i][0], p_value=tests[i][1],
        )
    return out
