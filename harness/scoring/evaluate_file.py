"""``statbench evaluate``: score a run file made anywhere against a task's judgements,
in one declared tie order, refusing a run that does not belong to the task."""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from statbench.data.checksum import file_sha256
from statbench.data.runfile import (
    TIE_ORDER,
    float32_ties,
    order_as_trec_eval,
    read_run,
    strictly_decreasing_at_float32,
)
from statbench.errors import StatbenchError
from statbench.loading.load import load_task, start_task
from statbench.loading.loadcache import summary_entry
from statbench.loading.splits import select_splits
from statbench.registry.plugins import get_registry
from statbench.results.record import EvaluatedRun, RunFile
from statbench.scoring.evaluation import score_splits

if TYPE_CHECKING:
    from statbench.contract.records import Ranking
    from statbench.contract.taskinfo import TaskInfo
    from statbench.loading.loadcache import TaskSummary


@dataclass(frozen=True)
class ScoringTask:
    """What scoring a run needs of a task, loaded once (:func:`load_scoring_task`): its
    measures and splits (``info``), its judgements and splits (``data``: the cached summary,
    or the summary of a full load) and its corpus's document ids. Scoring many runs against
    one ``ScoringTask`` (:func:`evaluate_rankings`) hashes and reads the task's files once."""

    name: str
    info: TaskInfo
    data: TaskSummary
    corpus: Collection[str]

    @classmethod
    def of(cls, loaded) -> ScoringTask:
        """From a :class:`~statbench.loading.load.LoadedTask` (the caller says its notes); the
        corpus's ids only (a full load's documents are not kept)."""
        return cls(loaded.task.name, loaded.info, loaded.summary, frozenset(loaded.doc_ids()))


def load_scoring_task(task_name: str, data_dir: Path | None, log) -> ScoringTask:
    """The task's judgements, splits and document ids (from the cached summary of these very
    data files when there is one, else from a full load, which leaves one)."""
    entry = get_registry().get("tasks", task_name)
    loaded = load_task(entry, data_dir, log, task=start_task(entry), summary=True)
    loaded.say_notes(log)
    return ScoringTask.of(loaded)


def evaluate_run_file(path: Path, task_name: str, data_dir: Path | None, wanted: list[str] | None, log,
                      protocol: str | None = None) -> EvaluatedRun:
    """Score an existing run with the task's measures, split by split (scores used as given).

    The run is read strictly (runfile.read_run: no NaN/inf, no duplicate lines, not empty)
    and scored by :func:`evaluate_rankings` (which says what is refused and how ties are
    ordered).

    Only the judgements and splits are needed of the task: they come from the summary a run
    left in the cache for these very data files (see loadcache.py), else from a full load
    (which leaves one). The summary's key (the data files' checksums) is taken while the
    run is parsed, and the run's checksum while it is scored: hashing lets go of the
    interpreter, so it runs on another core meanwhile."""
    entry = get_registry().get("tasks", task_name)
    task = start_task(entry)
    with ThreadPoolExecutor(max_workers=1) as pool:  # leaving waits for the hashing (on any error too)
        keyed = pool.submit(summary_entry, task, entry, data_dir, log)
        rankings = read_run(path)
        run_sha256 = pool.submit(file_sha256, path)  # a regular file: read_run opened it
        # only the judgements and splits are needed: a valid cached summary stands in for the load
        loaded = load_task(entry, data_dir, log, task=task, summary=True, summary_at=keyed.result())
        loaded.say_notes(log)
        return evaluate_rankings(path, rankings, ScoringTask.of(loaded), wanted, log, protocol,
                                 run_sha256=run_sha256.result)


def evaluate_rankings(path: Path, rankings: dict, scoring: ScoringTask, wanted: list[str] | None, log,
                      protocol: str | None = None, *, run_sha256: str | Callable[[], str]) -> EvaluatedRun:
    """Score ``rankings`` (read strictly from the run file ``path`` by runfile.read_run; put
    in order here, in place) against a task already loaded (:func:`load_scoring_task`).
    ``run_sha256``: the run file's sha256 (or a function giving it, asked for once scored).

    Query ids the task does not know and documents outside its corpus are reported, and a
    run that answers none of the evaluated queries, or ranks none of the corpus's documents
    for them (another task's run, or doc ids of another form), is refused rather than
    scored as zeros.
    Every ranking that is not strictly decreasing at float32 is put in one declared order,
    trec_eval's (runfile.TIE_ORDER: score desc compared at float32, then doc id desc), with
    scores made strictly decreasing at float32 (runfile.order_as_trec_eval), so every
    measure, ir-measures (any provider) or custom, sees that one order, the one trec_eval
    itself would use; a run without such ties is scored in its own order (a statbench run,
    strict at float32, gives exactly the figures of the run that wrote it). When some
    evaluated query had ties, the results say so (``tie_order``) and the log says how many."""
    info, data, corpus, name = scoring.info, scoring.data, scoring.corpus, scoring.name
    splits = select_splits(info, data, wanted, protocol)
    unknown = sorted(set(rankings) - set(data.query_ids))
    if unknown:
        log.warning("%s: %d query id(s) not in task %s ignored (e.g. %s)", path, len(unknown), name,
                    ", ".join(unknown[:3]))
    evaluated = {q for s in splits for q in s.test if q in data.qrels}
    if not evaluated & set(rankings):
        raise StatbenchError(f"{path}: the run ranks none of the {len(evaluated)} evaluated queries of task "
                             f"{name} (its query ids look like {', '.join(sorted(rankings)[:3])}); "
                             "is it a run of another task?")
    ranked_docs = set(map(operator.itemgetter(0), itertools.chain.from_iterable(
        rankings[q] for q in evaluated.intersection(rankings))))
    foreign = sorted(ranked_docs.difference(corpus))
    if foreign and len(foreign) == len(ranked_docs):
        raise StatbenchError(f"{path}: none of the {len(foreign)} document id(s) it ranks for the evaluated "
                             f"queries is in the corpus of task {name} (they look like "
                             f"{', '.join(foreign[:3])}); is it a run of another task?")
    if foreign:
        log.warning("%s: %d document id(s) are not in the corpus of task %s (e.g. %s); they count as "
                    "non-relevant", path, len(foreign), name, ", ".join(foreign[:3]))
    unordered = [qid for qid, ranking in rankings.items() if not strictly_decreasing_at_float32(ranking)]
    tied = sorted(q for q in evaluated.intersection(unordered) if float32_ties(rankings[q]))
    if tied:
        log.info("%s: %d of %d evaluated quer(y/ies) rank documents with scores equal at 32-bit precision "
                 "(e.g. %s); every measure sees them in one order: %s", path, len(tied),
                 len(evaluated & set(rankings)), ", ".join(tied[:3]), TIE_ORDER)
        warn_reordered(path, {q: rankings[q] for q in tied}, len(evaluated & set(rankings)), log)
    for qid in unordered:
        rankings[qid] = order_as_trec_eval(rankings[qid])
    scores = score_splits(info.measures, data, splits, rankings)
    sha = run_sha256 if isinstance(run_sha256, str) else run_sha256()
    return EvaluatedRun(**scores.scores_fields() | {"tie_order": TIE_ORDER if tied else None},
                        data_checksum=data.checksum,  # the data scored on (compare refuses other data)
                        run_file=RunFile(path=str(path), sha256=sha))


def warn_reordered(path: Path, tied: dict, answered: int, log) -> None:
    """One warning when the order scored (trec_eval's, :data:`TIE_ORDER`) is not the order the
    file's own scores give: scores that differ in the file but are equal once read as 32-bit
    floats, as trec_eval reads them (scores around 1e9, or differing in the 9th digit). It
    says how many of the ``answered`` evaluated queries, one example, and what to write
    instead. Exact ties in the file are not counted: the file leaves their order open."""
    swapped = {qid: pair for qid, ranking in sorted(tied.items()) if (pair := float32_reordering(ranking))}
    if not swapped:
        return
    qid, ((a, score_a), (b, score_b)) = next(iter(swapped.items()))
    log.warning("%s: %d of %d evaluated queries are not scored in the order of the file's scores: scores that "
                "differ in the file are equal at 32-bit precision, so trec_eval's order applies, %s; e.g. "
                "query %s: documents %s (score %r) and %s (score %r) are both %s at float32, so %s is ranked "
                "above %s; write scores that differ at float32 (or rank-derived scores, e.g. -rank)",
                path, len(swapped), answered, TIE_ORDER, qid, a, score_a, b, score_b,
                shortest_float32_text(score_a), b, a)


def float32_reordering(ranking: Ranking) -> tuple[tuple[str, float], tuple[str, float]] | None:
    """Whether trec_eval's order (:data:`TIE_ORDER`) ranks the documents otherwise than the
    scores as written do (double precision, exact ties broken by the same doc id rule): then
    the first two documents it swaps, ``((A, score A), (B, score B))`` with score A > score B
    in the file but equal at float32, so that B is ranked above A. ``None``: the file's
    scores give the order that is scored (exact ties aside, which the file itself leaves open)."""
    written = [doc for doc, _ in sorted(ranking, key=lambda pair: (pair[1], pair[0]), reverse=True)]
    scored = [doc for doc, _ in order_as_trec_eval(ranking)]
    if written == scored:
        return None
    # the first difference: A is the best left by the written scores, B by trec_eval's order;
    # (score A, A) > (score B, B) and (float32 A, A) < (float32 B, B) give score A > score B,
    # equal at float32 (see the tests)
    a, b = next((w, s) for w, s in zip(written, scored) if w != s)
    scores = dict(ranking)
    return (a, scores[a]), (b, scores[b])


def shortest_float32_text(score: float) -> str:
    """The shortest decimal text of the float32 that ``score`` reads as (trec_eval's reading):
    9 significant digits always identify a float32."""
    single = array("f", (score,))[0]
    if not math.isfinite(single):
        return repr(single)
    for digits in range(1, 10):
        value = float(f"{single:.{digits}g}")
        if array("f", (value,))[0] == single:
            return repr(value)
    return repr(single)  # not reached
