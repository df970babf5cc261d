"""Scoring: per-query values (ir-measures, and custom measures plugins register),
split means, and mean ± std over splits."""

from __future__ import annotations

import itertools
import logging
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
    measures are computed by ir-measures, custom ones by their ``per_query``, all on one
    order: a ranking whose scores are not strictly decreasing at float32 (a tie for
    trec_eval, which reads scores as C floats) is first put in the harness's order
    (:func:`statbench.runfile.order_ranking`: score desc, then doc id asc, scores made
    strictly decreasing at float32), so no evaluator can break a tie its own way. A ranking
    from the harness, or one ``evaluate`` put in trec_eval's order, is already strict.
    A judged query the run has no line for scores 0 on every measure (trec_eval would
    silently leave it out and inflate the mean).

    ir-measures is called once per measure family; a family whose every measure only looks
    at the top ``k`` documents (:func:`_top_depth`) is given each ranking cut just below its
    largest ``k`` (:func:`_cut`): the same figures, without sorting and scoring documents
    that cannot count."""
    import ir_measures

    from .measures import is_custom, parse_measure
    from .runfile import order_ranking, strictly_decreasing_at_float32

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
            for metric in ir_measures.iter_calc(wanted, qrels_dict, run_dict):
                if metric.query_id in scores:
                    for label in labels[str(metric.measure)]:
                        scores[metric.query_id][label] = float(metric.value)
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


def evaluate_run_file(path: Path, task_name: str, data_dir: Path | None, wanted: list[str] | None, log,
                      protocol: str | None = None) -> dict:
    """Score an existing run with the task's measures, split by split (scores used as given).

    The run is read strictly (runfile.read_run: no NaN/inf, no duplicate lines, not empty);
    query ids the task does not know and documents outside its corpus are reported, and a
    run that answers none of the evaluated queries, or ranks none of the corpus's documents
    for them (another task's run, or doc ids of another form), is refused rather than
    scored as zeros.
    Every ranking that is not strictly decreasing at float32 is put in one declared order,
    trec_eval's (runfile.TIE_ORDER: score desc compared at float32, then doc id desc), with
    scores made strictly decreasing at float32 (runfile.order_as_trec_eval), so every
    measure, ir-measures (any provider) or custom, sees that one order, the one trec_eval
    itself would use; a run without such ties is scored in its own order (a statbench run,
    strict at float32, gives exactly the figures of the run that wrote it). When some
    evaluated query had ties, the results say so (``tie_order``) and the log says how many.

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
    from .runfile import TIE_ORDER, float32_ties, order_as_trec_eval, read_run, strictly_decreasing_at_float32
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
        if foreign and len(foreign) == len(ranked_docs):
            raise StatbenchError(f"{path}: none of the {len(foreign)} document id(s) it ranks for the evaluated "
                                 f"queries is in the corpus of task {task.name} (they look like "
                                 f"{', '.join(foreign[:3])}); is it a run of another task?")
        if foreign:
            log.warning("%s: %d document id(s) are not in the corpus of task %s (e.g. %s); they count as "
                        "non-relevant", path, len(foreign), task.name, ", ".join(foreign[:3]))
        unordered = [qid for qid, ranking in rankings.items() if not strictly_decreasing_at_float32(ranking)]
        tied = sorted(q for q in evaluated.intersection(unordered) if float32_ties(rankings[q]))
        if tied:
            log.info("%s: %d of %d evaluated quer(y/ies) rank documents with scores equal at 32-bit precision "
                     "(e.g. %s); every measure sees them in one order: %s", path, len(tied),
                     len(evaluated & set(rankings)), ", ".join(tied[:3]), TIE_ORDER)
        for qid in unordered:
            rankings[qid] = order_as_trec_eval(rankings[qid])
        results = score_splits(info.measures, data, splits, rankings)
        if tied:
            results["tie_order"] = TIE_ORDER
        results["data_checksum"] = data.checksum  # the data scored on (compare refuses other data)
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
        # what the loader said: warnings on the console once per data version, as a run does
        from .data_notes import say_once

        for level, message in data.log:
            if level < logging.WARNING:
                log.log(level, "%s", message)
        say_once(log, task.name, data.checksum, data.log)
        return data, read_doc_ids(at)
    with recording_opened() as opened, _paused_gc():
        loaded = call_plugin(entry, "loading", lambda: task.load(data_dir, log))
    check_task_data(task.name, loaded)
    data = TaskSummary.of(loaded, task_identity(entry, info, loaded))
    if at is not None:
        write_summary(at, data, loaded, opened)
    return data, loaded.corpus
