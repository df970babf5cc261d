"""Scoring with ir-measures: per-query values, split means, and mean ± std over splits."""

from __future__ import annotations

import statistics
from typing import Iterable, Mapping, Sequence

from .api import Measure, Qrels, Ranking

PerQuery = dict[str, dict[str, float]]


def per_query_scores(
    qrels: Qrels, rankings: Mapping[str, Ranking], measures: Sequence[Measure], qids: Iterable[str]
) -> PerQuery:
    """Score each query in ``qids`` with ir-measures.

    A judged query the run has no line for scores 0 on every measure (trec_eval would
    silently leave it out and inflate the mean)."""
    import ir_measures

    qids = [q for q in qids if q in qrels]
    qrels_dict = {qid: dict(qrels[qid]) for qid in qids}
    run_dict = {qid: dict(rankings[qid]) for qid in qids if rankings.get(qid)}
    scores: PerQuery = {qid: {m.label: 0.0 for m in measures} for qid in qids}
    for group in _compatible_groups(measures):
        by_name = {str(ir_measures.parse_measure(m.ir_measure)): m.label for m in group}
        parsed = [ir_measures.parse_measure(m.ir_measure) for m in group]
        for metric in ir_measures.iter_calc(parsed, qrels_dict, run_dict):
            if metric.query_id in scores:
                scores[metric.query_id][by_name[str(metric.measure)]] = float(metric.value)
    return scores


def _compatible_groups(measures: Sequence[Measure]) -> list[list[Measure]]:
    """Split measures so that no call mixes one measure with different parameters.

    ir-measures 0.4 mislabels results when, say, ``nDCG@10`` and
    ``nDCG(gains=...)@10`` are computed in one call; measures are therefore grouped
    by their parameters other than the cutoff."""
    import ir_measures

    groups: dict[str, list[Measure]] = {}
    for m in measures:
        parsed = ir_measures.parse_measure(m.ir_measure)
        params = {k: v for k, v in parsed.params.items() if k != "cutoff"}
        groups.setdefault(repr(sorted(params.items(), key=str)), []).append(m)
    return list(groups.values())


def mean_scores(scores: PerQuery, measures: Sequence[Measure], qids: Iterable[str] | None = None) -> dict[str, float]:
    rows = [scores[q] for q in (qids if qids is not None else scores) if q in scores]
    if not rows:
        return {m.label: 0.0 for m in measures}
    return {m.label: sum(r[m.label] for r in rows) / len(rows) for m in measures}


def over_splits(split_means: Mapping[str, Mapping[str, float]], measures: Sequence[Measure]) -> dict[str, dict[str, float]]:
    """Mean and (sample) standard deviation of each measure across splits."""
    out: dict[str, dict[str, float]] = {}
    for m in measures:
        values = [means[m.label] for means in split_means.values()]
        out[m.label] = {
            "mean": statistics.fmean(values) if values else 0.0,
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        }
    return out
