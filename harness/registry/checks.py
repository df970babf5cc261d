"""The rules plugins must follow, checked in one place.

The registry checks classes when they are registered (:mod:`statbench.registry.class_checks`,
re-exported here), the runner checks what a task
loaded and every ranking a model returns before anything is cached or written, and
:mod:`statbench.testing` (the conformance kit for plugin authors) runs the very same
functions, so the runner is never laxer than the kit.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Collection, Mapping

from statbench.contract.records import Ranking, TaskData
from statbench.data.validation import EXAMPLES
from statbench.errors import StatbenchError
from statbench.registry.class_checks import PluginError, check_measure_labels, check_task_declaration
from statbench.registry.measure_names import check_measure_names
from statbench.registry.plugins import get_registry


class TaskDataError(StatbenchError):
    """What a task loaded is not a usable task (no documents, overlapping splits...)."""


def _has_space(text: str) -> bool:
    return not text or text.split() != [text]  # str.split() splits on exactly the str.isspace() characters


# --- classes -------------------------------------------------------------------------


def check_task_class(cls, registry=None) -> None:
    """A task class: its declaration (:class:`~statbench.contract.taskinfo.TaskInfo`, or the class
    attributes of an older plain task) is sound, its measures parse (custom names against
    ``registry``, by default the plugin registry), it implements load()."""
    check_task_declaration(cls)
    info = cls.task_info()
    check_measures(info.name, info.measures, registry)


def check_measures(owner: str, measures, registry=None) -> None:
    """A task's measures: :class:`Measure` records with distinct labels, each naming an
    ir-measures measure or a custom measure of ``registry`` (by default the plugin registry)."""
    check_measure_labels(owner, measures)
    check_measure_names(owner, measures, registry or get_registry)


# --- what a task loaded --------------------------------------------------------------


def check_task_data(task_name: str, data: TaskData) -> None:
    """A loaded task must be usable: ids TREC files can hold, something to search and to
    score, and splits whose test queries are known, judged, and never trained on."""
    who = f"task {task_name!r}"
    if not isinstance(data, TaskData):
        raise TaskDataError(f"{who}: load() returned {type(data).__name__}, not statbench.api.TaskData")
    for kind, table in (("document", data.corpus), ("query", data.queries)):
        if not table:
            raise TaskDataError(f"{who}: the loaded data has no {kind}s")
        bad = [i for i in table if not isinstance(i, str) or _has_space(i)]
        if bad:
            raise TaskDataError(f"{who}: {len(bad)} {kind} id(s) are empty, not strings, or contain whitespace, "
                                f"which TREC files cannot hold (e.g. {bad[0]!r}); the task loader must normalise them")
        wrong = next((i for i, item in table.items() if item.id != i), None)
        if wrong is not None:
            raise TaskDataError(f"{who}: {kind} stored under id {wrong!r} says its id is {table[wrong].id!r}")
    untexted = next((d.id for d in data.corpus.values() if not isinstance(d.text, str)), None)
    if untexted is not None:
        raise TaskDataError(f"{who}: document {untexted!r} has text of type "
                            f"{type(data.corpus[untexted].text).__name__}, not str")
    untexted = next((q.id for q in data.queries.values() if not isinstance(q.text, str)), None)
    if untexted is not None:
        raise TaskDataError(f"{who}: query {untexted!r} has text of type "
                            f"{type(data.queries[untexted].text).__name__}, not str")
    if not isinstance(data.checksum, str) or not re.fullmatch(r"[0-9a-f]{64}", data.checksum):
        raise TaskDataError(f"{who}: TaskData.checksum must be a sha256 hex digest (statbench.data.checksum.files_sha256), "
                            f"found {data.checksum!r}")
    if not any(g > 0 for docs in data.qrels.values() for g in docs.values()):
        raise TaskDataError(f"{who}: the loaded data has no relevance judgements")
    for qid, docs in data.qrels.items():
        unknown = [d for d in docs if d not in data.corpus]
        if unknown:
            raise TaskDataError(f"{who}: judgements of query {qid!r} name documents not in the corpus "
                                f"(e.g. {', '.join(map(repr, unknown[:EXAMPLES]))})")
        odd = next((g for g in docs.values() if isinstance(g, bool) or not isinstance(g, int)), None)
        if odd is not None:
            raise TaskDataError(f"{who}: query {qid!r} has a relevance grade {odd!r} that is not an integer")
    if not data.splits:
        raise TaskDataError(f"{who}: the loaded data has no splits")
    names = set()
    for split in [*data.splits, *data.extra_splits]:
        if split.name in names:
            raise TaskDataError(f"{who}: split {split.name!r} is declared twice")
        names.add(split.name)
        _check_split(who, split, data)


def _check_split(who: str, split, data: TaskData) -> None:
    unknown = [q for q in (*split.test, *split.train, *split.dev) if q not in data.queries]
    if unknown:
        raise TaskDataError(f"{who}: split {split.name!r} names unknown query ids "
                            f"(e.g. {', '.join(map(repr, unknown[:EXAMPLES]))})")
    if not split.test:
        raise TaskDataError(f"{who}: split {split.name!r} has no test queries")
    for other, ids in (("train", split.train), ("dev", split.dev)):
        overlap = sorted(set(split.test) & set(ids))
        if overlap:
            raise TaskDataError(f"{who}: split {split.name!r}: {len(overlap)} test query id(s) are also in its "
                                f"{other} set (e.g. {', '.join(map(repr, overlap[:EXAMPLES]))})")
    if len(set(split.test)) != len(split.test):
        raise TaskDataError(f"{who}: split {split.name!r} lists a test query twice")
    unjudged = [q for q in split.test if not any(g > 0 for g in data.qrels.get(q, {}).values())]
    if unjudged:
        # such a query would be left out of the means (or score 0) without a word: the loader
        # must drop it and say so in TaskData.dropped
        raise TaskDataError(f"{who}: split {split.name!r}: {len(unjudged)} test query(ies) have no relevant "
                            f"judgement (e.g. {', '.join(map(repr, unjudged[:EXAMPLES]))}); drop them in the "
                            "loader and list them in TaskData.dropped")


# --- what a model returned -----------------------------------------------------------


def check_rankings(rankings, *, owner: str, query_ids: Collection[str], corpus: Collection[str] = (),
                   candidates: Mapping[str, Collection[str]] | None = None, k: int | None = None
                   ) -> dict[str, Ranking]:
    """Check a model's output and return it as ``{qid: [(doc id, float score)]}``.

    A ranking maps asked query ids to (doc id, finite score) pairs; every doc id is known
    (in ``corpus``, or for a reranker among the query's ``candidates``), appears once,
    and holds no whitespace. With ``k``, a ranking holds at most ``k`` documents plus any
    tied with the k-th score (ties at the cut are the harness's to break). The first
    violation raises :class:`PluginError` naming ``owner``, the query and the offending id."""
    if not isinstance(rankings, Mapping):
        raise PluginError(f"{owner} returned {type(rankings).__name__}, not a dict query id -> ranking")
    asked = query_ids if isinstance(query_ids, (set, frozenset, dict)) else set(query_ids)
    out: dict[str, Ranking] = {}
    for qid, ranking in rankings.items():
        if not isinstance(qid, str) or qid not in asked:
            raise PluginError(f"{owner} returned a ranking for query id {qid!r}, which was not asked for")
        allowed = set(candidates.get(qid, ())) if candidates is not None else corpus
        out[qid] = _check_one(owner, qid, ranking, allowed, candidates is not None, k)
    return out


def _check_one(owner: str, qid: str, ranking, allowed, per_query: bool, k: int | None) -> Ranking:
    where = f"{owner}, query {qid!r}"
    if isinstance(ranking, (str, bytes, Mapping)) or not hasattr(ranking, "__iter__"):
        raise PluginError(f"{where}: a ranking must be a list of (doc id, score) pairs, found {type(ranking).__name__}")
    checked: Ranking = []
    seen: set[str] = set()
    for pair in ranking:
        try:
            doc_id, score = pair
        except (TypeError, ValueError):
            raise PluginError(f"{where}: {pair!r} is not a (doc id, score) pair") from None
        if not isinstance(doc_id, str):
            raise PluginError(f"{where}: doc id {doc_id!r} is a {type(doc_id).__name__}, not a str")
        if doc_id not in allowed:
            if _has_space(doc_id):
                raise PluginError(f"{where}: doc id {doc_id!r} is empty or contains whitespace")
            what = "among the candidates it was given" if per_query else "in the corpus"
            raise PluginError(f"{where}: doc id {doc_id!r} is not {what}")
        if doc_id in seen:
            raise PluginError(f"{where}: doc id {doc_id!r} is ranked twice")
        seen.add(doc_id)
        if type(score) is not float:
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise PluginError(f"{where}, doc {doc_id!r}: score {score!r} is not a real number")
            try:
                score = float(score)
            except (OverflowError, ValueError, TypeError):
                raise PluginError(f"{where}, doc {doc_id!r}: score {score!r} cannot be a float") from None
        if not math.isfinite(score):
            raise PluginError(f"{where}, doc {doc_id!r}: score {score!r} is not finite")
        checked.append((doc_id, score))
    if k is not None and len(checked) > k:
        kth = sorted((s for _, s in checked), reverse=True)[k - 1]
        beyond = sum(1 for _, s in checked if s < kth)
        if beyond:
            raise PluginError(f"{where}: returned {len(checked)} documents for k={k} "
                              f"({beyond} of them scored below the k-th)")
    return checked


def check_rerank_complete(reranked: Mapping[str, Ranking], candidates: Mapping[str, Collection[str]], *,
                          owner: str) -> None:
    """A reranker orders every candidate it was given, for every query that had any: one it
    leaves out would fall out of the ranking (R@100 .886 -> .748 without a word), and a
    query it leaves out would score 0. Run after :func:`check_rankings` (which has checked
    that what it returned are candidates, each once)."""
    for qid, given in candidates.items():
        if not given:
            continue
        if qid not in reranked:
            raise PluginError(f"{owner} returned no ranking for query {qid!r} ({len(given)} candidates given); a "
                              "reranker must order every candidate of every query")
        if len(reranked[qid]) != len(set(given)):
            returned = {doc for doc, _ in reranked[qid]}
            missing = next(doc for doc in given if doc not in returned)
            raise PluginError(f"{owner}, query {qid!r}: returned {len(reranked[qid])} of the {len(set(given))} "
                              f"candidates it was given (e.g. {missing!r} is missing); a reranker must order every "
                              "candidate")
