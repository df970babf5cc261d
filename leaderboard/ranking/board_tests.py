"""The tests of a board on every measure of its family, against the baseline, Holm-adjusted together.

The family: every measure of the board (or the one ``--measure`` names). On the tested measure
the board's comparisons (:func:`statbench.leaderboard.render.task_page.board_significance`,
with their bootstrap intervals) give each row's p; on the others each row paired with the
baseline (exactly the baseline's queries scored on that measure) is tested with the same
Wilcoxon test, without a bootstrap. A row not paired on a measure is left out of the family on
that measure (and of Holm's count), never shown as not significant. Each pair's (p, mean
difference) is kept between builds by the two rows' per-query scores
(:class:`statbench.leaderboard.caches.sigcache.PairCache`), so a build re-tests only new rows.
"""

from __future__ import annotations

from dataclasses import replace

from statbench.leaderboard.caches.sigcache import PairCache
from statbench.leaderboard.ranking.board_scores import columns_by_query_set
from statbench.leaderboard.ranking.holm_family import BoardFamily, board_family, measure_tests
from statbench.scoring.significance import ALPHA

#: names the kept tests apart from the bootstrap figures of the same measure (and their version)
_KEPT = "\0wilcoxon-1"
#: rows whose tables are read at a time
_BLOCK = 256


def family_measures(labels: list[str], measure: str | None) -> list[str]:
    """The measures of a board's family: the one ``--measure`` names when the board reports it,
    else every measure of the board."""
    return [measure] if measure in labels else list(labels)


def _family_pairs(rows, base, measures: list[str]) -> dict[tuple[str, str], tuple[float, float]]:
    """(row key, measure) -> (p, mean difference) against the baseline, for every row paired with
    the baseline on that measure. Rows not kept from an earlier build are read a block at a time,
    each row's table once for every measure (a STARD table is ~120 KB: never all at once)."""
    kept = {m: PairCache.default(base.queries_sha256, m + _KEPT, 0, 0) for m in measures}
    others = [r for r in rows if r is not base]
    outcomes = {(r.key, m): kept[m].get(r.queries_sha256) for r in others for m in measures}
    fresh = [r for r in others if any(outcomes[(r.key, m)] is None for m in measures)]
    base_table: dict = {}
    placed: dict = {}  # each query order sorted once for every block and measure
    for first in range(0, len(fresh), _BLOCK):
        block = fresh[first:first + _BLOCK]
        tables = dict(base_table)
        for m in measures:
            missing = [r for r in block if outcomes[(r.key, m)] is None]
            if not missing:
                continue
            groups, _ = columns_by_query_set([base] + missing, m, tables, placed=placed)
            paired = next((g for g in groups.values() if base.key in g.keys), None)
            systems = {} if paired is None else {k: c for k, c in zip(paired.keys, paired.columns) if k != base.key}
            base_column = None if paired is None else paired.columns[paired.keys.index(base.key)]
            tested = measure_tests(base_column, systems) if systems else {}
            for r in missing:
                outcomes[(r.key, m)] = ("tested", tested[r.key]) if r.key in tested else ("untested", None)
                kept[m].put(r.queries_sha256, outcomes[(r.key, m)])
        base_table = {base.key: tables[base.key]} if base.key in tables else {}
    for cache in kept.values():
        cache.save()
    return {key: outcome[1] for key, outcome in outcomes.items() if outcome[0] == "tested"}


def board_tests(rows, base, labels: list[str], measure: str | None, tested: str, comparisons: dict,
                alpha: float = ALPHA) -> tuple[BoardFamily, dict]:
    """(The family's marks, the tested measure's comparisons with their p adjusted over the whole
    family). ``comparisons``: row key -> the board's comparison on ``tested``."""
    measures = family_measures(labels, measure)
    tests: dict[tuple[str, str], tuple[float, float]] = {}
    if tested in measures:
        tests.update({(key, tested): (c.p_value, c.mean_diff) for key, c in comparisons.items()})
    others = [m for m in measures if m != tested]
    if base is not None and others:
        tests.update(_family_pairs(rows, base, others))
    family = board_family(tests, measures, alpha)
    adjusted = {key: replace(c, p_holm=family.marks[(key, tested)].p_holm) if (key, tested) in family.marks else c
                for key, c in comparisons.items()}
    return family, adjusted
