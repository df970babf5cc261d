"""Scoring: per-query values (ir-measures, and custom measures plugins register),
split means, and mean ± std over splits."""

from __future__ import annotations

import itertools
import operator
import statistics
from array import array
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .api import Measure, Qrels, Ranking, Split, TaskData

PerQuery = dict[str, dict[str, float]]


def per_query_scores(
    qrels: Qrels, rankings: Mapping[str, Ranking], measures: Sequence[Measure], qids: Iterable[str]
) -> PerQuery:
    """Score each judged query in ``qids`` on every measure.

    Each measure string is read by :func:`statbench.measures.parse_measure`: ir-measures
    measures are computed by ir-measures, custom ones by their ``per_query`` on the ranking
    ordered by score descending, then doc id ascending (the order the harness writes; a
    ranking from the harness is already in it). A judged query the run has no line for
    scores 0 on every measure (trec_eval would silently leave it out and inflate the mean).

    ir-measures is called once per measure family; a family whose every measure only looks
    at the top ``k`` documents (:func:`_top_depth`) is given each ranking in score order cut
    just below its largest ``k`` (:func:`_cut`): the same figures, without sorting and
    scoring documents that cannot count. A ranking not in score order is given whole."""
    import ir_measures

    from .measures import is_custom, parse_measure

    qids = [q for q in qids if q in qrels]
    scores: PerQuery = {qid: {m.label: 0.0 for m in measures} for qid in qids}
    parsed = [(m, parse_measure(m.ir_measure)) for m in measures]
    standard = [m for m, p in parsed if not is_custom(p)]
    custom = [(m, p) for m, p in parsed if is_custom(p)]
    ranked = [qid for qid in qids if rankings.get(qid)]
    if standard:
        qrels_dict = {qid: dict(qrels[qid]) for qid in qids}
        in_order = {qid for qid in ranked if _in_score_order(rankings[qid])}
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
                run_dict = {qid: dict(_cut(rankings[qid], depth) if qid in in_order else rankings[qid])
                            for qid in ranked}
            for metric in ir_measures.iter_calc(wanted, qrels_dict, run_dict):
                if metric.query_id in scores:
                    for label in labels[str(metric.measure)]:
                        scores[metric.query_id][label] = float(metric.value)
    if custom:
        for qid in ranked:
            ordered = sorted(rankings[qid], key=lambda pair: (-pair[1], pair[0]))
            for m, measure in custom:
                scores[qid][m.label] = measure.score(ordered, qrels[qid], qid)
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


def _in_score_order(ranking: Ranking) -> bool:
    scores = [s for _, s in ranking]
    return all(map(operator.ge, scores, scores[1:]))


def _cut(ranking: Ranking, depth: int) -> Ranking:
    """The first ``depth`` documents of a ranking in score order, and those after them whose
    score ties with the last one in single precision: no document left out can be ranked
    above one kept, by any provider. (trec_eval, behind pytrec_eval, keeps a score as a C
    float, so scores that differ in double precision only, as the harness's tie-breaking
    makes them, tie there and are ordered by doc id descending.)"""
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
    from .measures import is_custom, parse_measure

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


def score_splits(measures: Sequence[Measure], data: TaskData, splits: list[Split],
                 rankings: Mapping[str, Ranking] | None = None, *, per_query: PerQuery | None = None,
                 ranked: set[str] | None = None) -> dict:
    """Per-query scores, means per split, mean ± std over splits, pooled means and the
    task's breakdowns (e.g. per category). ``data`` needs ``qrels`` and ``groups`` only.

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
        split_rows.append(
            {
                "name": split.name,
                "n_queries": len(qids),
                "queries_without_results": sum(1 for q in qids if q not in ranked),
                "scores": means,
            }
        )
    breakdown = {
        group: {
            value: mean_scores(per_query, measures, [q for q in all_qids if members.get(q) == value])
            for value in sorted({members[q] for q in all_qids if q in members})
        }
        for group, members in data.groups.items()
    }
    results = {
        "measures": [{"label": m.label, "ir_measure": m.ir_measure} for m in measures],
        "splits": split_rows,
        "aggregate": over_splits(split_means, measures),
        "all_queries": mean_scores(per_query, measures, all_qids),
        "per_query": per_query,
    }
    if breakdown:
        results["breakdown"] = breakdown
    return results


def _strictly_ordered(ranking: Ranking) -> bool:
    """Already in the harness's order with no tie (order_ranking would return it unchanged)."""
    scores = [s for _, s in ranking]
    return all(map(operator.gt, scores, scores[1:]))


def evaluate_run_file(path: Path, task_name: str, data_dir: Path | None, wanted: list[str] | None, log,
                      protocol: str | None = None) -> dict:
    """Score an existing run with the task's measures, split by split (scores used as given).

    The run is read strictly (runfile.read_run: no NaN/inf, no duplicate lines, not empty);
    query ids the task does not know and documents outside its corpus are reported, and a
    run that answers none of the evaluated queries is refused rather than scored as zeros.
    Documents are ranked by score, ties broken by doc id ascending, exactly as the harness
    orders its own runs (runfile.order_ranking), so every measure, ir-measures or custom,
    sees one and the same order (ir-measures' providers would break ties each their way).

    Only the judgements and splits are needed of the task: they come from the summary a run
    left in the cache for these very data files (see loadcache.py), else from a full load
    (which leaves one). The summary's key (the data files' checksums) is taken while the
    run is parsed, and the run's checksum while it is scored: hashing lets go of the
    interpreter, so it runs on another core meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    from .checksum import file_sha256
    from .errors import StatbenchError
    from .loadcache import summary_entry
    from .plugins import call_plugin, get_registry
    from .runfile import order_ranking, read_run
    from .splits import select_splits

    entry = get_registry().get("tasks", task_name)
    task = call_plugin(entry, "starting", entry.cls)
    info = entry.cls.task_info()
    with ThreadPoolExecutor(max_workers=1) as pool:  # leaving waits for the hashing (on any error too)
        keyed = pool.submit(summary_entry, task, entry, data_dir, log)
        rankings = read_run(path)
        run_sha256 = pool.submit(file_sha256, path)  # a regular file: read_run opened it
        data, corpus = _judgements(entry, task, info, data_dir, keyed.result(), log)
        splits = select_splits(info, data, wanted, protocol)
        unknown = sorted(set(rankings) - set(data.query_ids))
        if unknown:
            log.warning("%s: %d query id(s) not in task %s ignored (e.g. %s)", path, len(unknown), task.name,
                        ", ".join(unknown[:3]))
        evaluated = {q for s in splits for q in s.test if q in data.qrels}
        if not evaluated & set(rankings):
            raise StatbenchError(f"{path}: the run ranks none of the {len(evaluated)} evaluated queries of task "
                                 f"{task.name} (its query ids look like {', '.join(sorted(rankings)[:3])}); "
                                 "is it a run of another task?")
        ranked_docs = set(map(operator.itemgetter(0), itertools.chain.from_iterable(
            rankings[q] for q in evaluated.intersection(rankings))))
        foreign = sorted(ranked_docs.difference(corpus))
        if foreign:
            log.warning("%s: %d document id(s) are not in the corpus of task %s (e.g. %s); they count as "
                        "non-relevant", path, len(foreign), task.name, ", ".join(foreign[:3]))
        unordered = {qid for qid, ranking in rankings.items() if not _strictly_ordered(ranking)}
        # strictly decreasing scores hold no tie
        tied = sorted(q for q in evaluated & unordered if len({s for _, s in rankings[q]}) < len(rankings[q]))
        if tied:
            log.info("%s: %d quer(y/ies) rank documents with equal scores (e.g. %s); ties are broken by doc id "
                     "ascending, as the harness does", path, len(tied), ", ".join(tied[:3]))
        for qid in unordered:
            rankings[qid] = order_ranking(rankings[qid])
        results = score_splits(info.measures, data, splits, rankings)
        results["run_file"] = {"path": str(path), "sha256": run_sha256.result()}
    return results


def _judgements(entry, task, info, data_dir: Path | None, at, log):
    """The task's summary (judgements, splits, query ids) and its corpus's ids: from the
    cached summary at ``at`` when it is valid, else from a full load, summarised in the
    cache under the same guard as the runner's (a loader that opened an undeclared file
    leaves no summary)."""
    from .checks import check_task_data
    from .dataio import _paused_gc, recording_opened
    from .loadcache import TaskSummary, read_doc_ids, read_summary, write_summary
    from .plugins import call_plugin
    from .runcache import task_identity

    data = read_summary(at) if at is not None else None
    if data is not None:
        for level, message in data.log:
            log.log(level, "%s", message)
        return data, read_doc_ids(at)
    with recording_opened() as opened, _paused_gc():
        loaded = call_plugin(entry, "loading", lambda: task.load(data_dir, log))
    check_task_data(task.name, loaded)
    data = TaskSummary.of(loaded, task_identity(entry, info, loaded))
    if at is not None:
        write_summary(at, data, loaded, opened)
    return data, loaded.corpus
