"""Scoring: per-query values (ir-measures, and custom measures plugins register),
split means, and mean ± std over splits."""

from __future__ import annotations

import statistics
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
    scores 0 on every measure (trec_eval would silently leave it out and inflate the mean)."""
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
        run_dict = {qid: dict(rankings[qid]) for qid in ranked}
        for group in _compatible_groups(standard):
            labels: dict[str, list[str]] = {}  # one measure may be reported under several labels
            for m in group:
                labels.setdefault(str(ir_measures.parse_measure(m.ir_measure)), []).append(m.label)
            wanted = [ir_measures.parse_measure(name) for name in labels]
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


def _compatible_groups(measures: Sequence[Measure]) -> list[list[Measure]]:
    """Split ir-measures measures so that no call mixes one measure with different parameters.

    ir-measures 0.4 mislabels results when, say, ``nDCG@10`` and
    ``nDCG(gains=...)@10`` are computed in one call; measures are therefore grouped
    by their parameters other than the cutoff. Custom measures are left out (they are
    computed on their own, see :func:`per_query_scores`)."""
    from .measures import is_custom, parse_measure

    groups: dict[str, list[Measure]] = {}
    for m in measures:
        parsed = parse_measure(m.ir_measure)
        if is_custom(parsed):
            continue
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
    return all(a[1] > b[1] for a, b in zip(ranking, ranking[1:]))


def evaluate_run_file(path: Path, task_name: str, data_dir: Path | None, wanted: list[str] | None, log,
                      protocol: str | None = None) -> dict:
    """Score an existing run with the task's measures, split by split (scores used as given).

    The run is read strictly (runfile.read_run: no NaN/inf, no duplicate lines, not empty);
    query ids the task does not know and documents outside its corpus are reported, and a
    run that answers none of the evaluated queries is refused rather than scored as zeros.
    Documents are ranked by score, ties broken by doc id ascending, exactly as the harness
    orders its own runs (runfile.order_ranking), so every measure, ir-measures or custom,
    sees one and the same order (ir-measures' providers would break ties each their way)."""
    from .checks import check_task_data
    from .checksum import file_sha256
    from .errors import StatbenchError
    from .plugins import call_plugin, get_registry
    from .runfile import order_ranking, read_run
    from .splits import select_splits

    from .loadcache import read_doc_ids, read_summary, summary_entry, write_summary
    from .runcache import task_identity

    entry = get_registry().get("tasks", task_name)
    task = call_plugin(entry, "starting", entry.cls)
    info = entry.cls.task_info()
    rankings = read_run(path)
    # the judgements and splits only: from the summary a run left in the cache for these
    # very data files (see loadcache.py), else from a full load (which leaves one)
    at = summary_entry(task, entry, data_dir, log)
    data = read_summary(at) if at is not None else None
    if data is not None:
        for level, message in data.log:
            log.log(level, "%s", message)
        corpus = read_doc_ids(at)
    else:
        from .dataio import recording_opened
        from .loadcache import TaskSummary

        with recording_opened() as opened:  # a loader reading an undeclared file leaves no summary
            loaded = call_plugin(entry, "loading", lambda: task.load(data_dir, log))
        check_task_data(task.name, loaded)
        data = TaskSummary.of(loaded, task_identity(entry, info, loaded))
        if at is not None:
            write_summary(at, data, loaded, opened)
        corpus = loaded.corpus
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
    foreign = sorted({d for q in evaluated & set(rankings) for d, _ in rankings[q] if d not in corpus})
    if foreign:
        log.warning("%s: %d document id(s) are not in the corpus of task %s (e.g. %s); they count as "
                    "non-relevant", path, len(foreign), task.name, ", ".join(foreign[:3]))
    tied = sorted(q for q in evaluated & set(rankings) if len({s for _, s in rankings[q]}) < len(rankings[q]))
    if tied:
        log.info("%s: %d quer(y/ies) rank documents with equal scores (e.g. %s); ties are broken by doc id "
                 "ascending, as the harness does", path, len(tied), ", ".join(tied[:3]))
    rankings = {qid: ranking if _strictly_ordered(ranking) else order_ranking(ranking)
                for qid, ranking in rankings.items()}
    results = score_splits(info.measures, data, splits, rankings)
    results["run_file"] = {"path": str(path), "sha256": file_sha256(path)}
    return results
