"""Scoring: per-query values (ir-measures, and custom measures plugins register),
split means, and mean ± std over splits."""

from __future__ import annotations

import operator
import statistics
from array import array
from typing import Iterable, Mapping, Sequence

from statbench.contract.records import Measure, Qrels, Ranking, Split, TaskData
from statbench.data.runfile import order_ranking, strictly_decreasing_at_float32
from statbench.errors import StatbenchError
from statbench.results.record import MeanStd, MeasureRecord, RunScores, SplitScores
from statbench.scoring.breakdowns import breakdown_groups
from statbench.scoring.measures import is_custom, parse_measure
from statbench.storage.ir_measures_version import check_imported

PerQuery = dict[str, dict[str, float]]


def per_query_scores(
    qrels: Qrels, rankings: Mapping[str, Ranking], measures: Sequence[Measure], qids: Iterable[str]
) -> PerQuery:
    """Score each judged query in ``qids`` on every measure.

    Each measure string is read by :func:`statbench.scoring.measures.parse_measure`: ir-measures
    measures are computed by ir-measures, custom ones by their ``per_query``, all on one
    order: a ranking whose scores are not strictly decreasing at float32 (a tie for
    trec_eval, which reads scores as C floats) is first put in the harness's order
    (:func:`statbench.data.runfile.order_ranking`: score desc, then doc id asc, scores made
    strictly decreasing at float32), so no evaluator can break a tie its own way. A ranking
    from the harness, or one ``evaluate`` put in trec_eval's order, is already strict.
    A judged query the run has no line for scores 0 on every measure (trec_eval would
    silently leave it out and inflate the mean).

    ir-measures is called once per measure family; a family whose every measure only looks
    at the top ``k`` documents (:func:`_top_depth`) is given each ranking cut just below its
    largest ``k`` (:func:`_cut`): the same figures, without sorting and scoring documents
    that cannot count."""
    import ir_measures

    check_imported(ir_measures)
    qids = [q for q in qids if q in qrels]
    scores: PerQuery = {qid: {m.label: 0.0 for m in measures} for qid in qids}
    parsed = [(m, parse_measure(m.ir_measure)) for m in measures]
    standard = [m for m, p in parsed if not is_custom(p)]
    custom = [(m, p) for m, p in parsed if is_custom(p)]
    ranked = [qid for qid in qids if rankings.get(qid)]
    rankings = {qid: ranking if strictly_decreasing_at_float32(ranking) else order_ranking(ranking)
                for qid, ranking in ((qid, rankings[qid]) for qid in ranked)}
    if standard:
        qrels_dict = {qid: dict(qrels[qid]) for qid in qids}
        whole: dict | None = None
        for group in _compatible_groups(standard):
            labels: dict[str, list[str]] = {}  # one measure may be reported under several labels
            for m in group:
                labels.setdefault(str(ir_measures.parse_measure(m.ir_measure)), []).append(m.label)
            wanted = [ir_measures.parse_measure(name) for name in labels]
            depth = _top_depth(wanted)
            if depth is None:
                if whole is None:
                    whole = {qid: dict(rankings[qid]) for qid in ranked}
                run_dict = whole
            else:
                run_dict = {qid: dict(_cut(rankings[qid], depth)) for qid in ranked}
            try:
                for metric in ir_measures.iter_calc(wanted, qrels_dict, run_dict):
                    if metric.query_id in scores:
                        for label in labels[str(metric.measure)]:
                            scores[metric.query_id][label] = float(metric.value)
            except StatbenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - ir-measures' providers raise assorted types
                shown = " ".join(str(exc).split())[:200]
                raise StatbenchError(f"ir-measures cannot compute {', '.join(map(repr, labels))}: "
                                     f"{type(exc).__name__}: {shown}") from None
    if custom:
        for qid in ranked:
            for m, measure in custom:
                scores[qid][m.label] = measure.score(rankings[qid], qrels[qid], qid)
    return scores


#: ir-measures measures whose value with a cut-off ``@k`` depends on the ranking's top k
#: documents only (and on the judgements), with these parameters only (computed by
#: pytrec_eval, or for RR in Python): the judged-only variants condense the ranking first, so
#: documents below k can move up, and another ``dcg`` goes to a provider reading scores
#: written as text; those are never cut.
_TOP_K_MEASURES = frozenset({"P", "R", "RR", "nDCG", "AP", "Success"})
_TOP_K_PARAMS = frozenset({"cutoff", "rel", "gains"})


def _top_depth(measures) -> int | None:
    """The largest cut-off of ``measures`` when each of them only looks that deep, else ``None``."""
    depths = []
    for measure in measures:
        cutoff = measure.params.get("cutoff")
        if (measure.NAME not in _TOP_K_MEASURES or not set(measure.params) <= _TOP_K_PARAMS
                or not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1):
            return None
        depths.append(cutoff)
    return max(depths) if depths else None


def _cut(ranking: Ranking, depth: int) -> Ranking:
    """The first ``depth`` documents of a ranking in score order, and those after them whose
    score ties with the last one in single precision: no document left out can be ranked
    above one kept, by any provider. (trec_eval, behind pytrec_eval, keeps a score as a C
    float and orders a tie by doc id descending.) Every ranking scored here is strictly
    decreasing at float32 (:func:`per_query_scores`), so this is its first ``depth``
    documents; the tail check keeps the cut safe for any ranking."""
    if len(ranking) <= depth:
        return ranking
    tail = array("f", map(_SCORE, ranking[depth - 1:]))
    for i in range(1, len(tail)):
        if tail[i - 1] > tail[i]:
            return ranking[:depth - 1 + i]
    return ranking


_SCORE = operator.itemgetter(1)


def _compatible_groups(measures: Sequence[Measure]) -> list[list[Measure]]:
    """Split ir-measures measures so that no call mixes one measure with different
    parameters, nor two measure families (each family is cut to its own depth).

    ir-measures 0.4 mislabels results when, say, ``nDCG@10`` and
    ``nDCG(gains=...)@10`` are computed in one call; measures are therefore grouped
    by their name and their parameters other than the cutoff. Custom measures are left
    out (they are computed on their own, see :func:`per_query_scores`)."""
    groups: dict[str, list[Measure]] = {}
    for m in measures:
        parsed = parse_measure(m.ir_measure)
        if is_custom(parsed):
            continue
        params = {k: v for k, v in parsed.params.items() if k != "cutoff"}
        groups.setdefault(repr((parsed.NAME, sorted(params.items(), key=str))), []).append(m)
    return list(groups.values())


def mean_scores(scores: PerQuery, measures: Sequence[Measure], qids: Iterable[str] | None = None) -> dict[str, float]:
    rows = [scores[q] for q in (qids if qids is not None else scores) if q in scores]
    if not rows:
        return {m.label: 0.0 for m in measures}
    # summed in the rows' order as before (the same float), without a generator per measure
    return {m.label: sum(map(operator.itemgetter(m.label), rows)) / len(rows) for m in measures}


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


def score_splits(measures: Sequence[Measure], data: TaskData, splits: list[Split],
                 rankings: Mapping[str, Ranking] | None = None, *, per_query: PerQuery | None = None,
                 ranked: set[str] | None = None) -> RunScores:
    """Per-query scores, means per split, mean ± std over splits, pooled means and the
    breakdowns (:mod:`statbench.scoring.breakdowns`: the task's attributes, and the law,
    number of relevant articles and length of each query where ``data`` has ``facts``), as
    the typed :class:`RunScores` that results are built from. ``data`` needs ``qrels`` and
    ``groups`` (and ``facts`` for the derived breakdowns).

    The per-query scores are computed from ``rankings``, or given (``per_query``, with
    ``ranked``: the queries with at least one ranked document), e.g. from the cache."""
    all_qids = [q for s in splits for q in s.test if q in data.qrels]
    if per_query is None:
        per_query = per_query_scores(data.qrels, rankings, measures, all_qids)
        ranked = {q for q in all_qids if rankings.get(q)}
    else:
        per_query = {q: per_query[q] for q in all_qids}
    split_rows, split_means = [], {}
    for split in splits:
        qids = [q for q in split.test if q in per_query]
        means = mean_scores(per_query, measures, qids)
        split_means[split.name] = means
        split_rows.append(SplitScores(name=split.name, n_queries=len(qids),
                                      queries_without_results=sum(1 for q in qids if q not in ranked), scores=means))
    groups = breakdown_groups(data, all_qids)
    breakdown = {group: {value: mean_scores(per_query, measures, qids) for value, qids in members.items()}
                 for group, (_, members) in groups.items()}
    return RunScores(
        measures=[MeasureRecord(label=m.label, ir_measure=m.ir_measure) for m in measures],
        splits=split_rows,
        aggregate={label: MeanStd(**values) for label, values in over_splits(split_means, measures).items()},
        all_queries=mean_scores(per_query, measures, all_qids),
        per_query=per_query,
        breakdown=breakdown or None,
        breakdown_groups={group: formed for group, (formed, _) in groups.items()} or None,
    )
