"""Breakdowns: each measure's mean over the queries sharing an attribute value.

Attributes, all taken at scoring time, after the run:

- the task's own per-query attributes (``TaskData.groups``: BSARD's ``category``, UK's
  ``legislation_type``), one value per query;
- ``law``: the law (root of the heading path) of the query's relevant articles, for tasks
  with structure. A query whose relevant articles lie in several laws counts once in
  *each* of them (so a law's figure is over every query that needs one of its articles,
  and the values' query counts add up to more than the queries);
- ``relevant_articles``: how many articles are judged relevant (grade > 0), in
  :data:`RELEVANT_BUCKETS`;
- ``query_length``: the query's length, in characters for languages written without word
  spaces (zh) and in words otherwise, in :data:`LENGTH_BUCKETS`.

The law and the number of relevant articles come from the judgements: they are never
shown to a model (models see ids, texts and structure only); they exist in the cached
task summary (:class:`statbench.loading.queryfacts.QueryFacts`) for scoring alone.
"""

from __future__ import annotations

from typing import Sequence

from statbench.results.record import BreakdownGroup

#: (lowest, highest) counts of relevant articles per bucket; ``None``: no upper bound
RELEVANT_BUCKETS: tuple[tuple[int, int | None], ...] = ((0, 0), (1, 1), (2, 2), (3, 3), (4, 5), (6, None))
#: length unit -> bucket bounds as for :data:`RELEVANT_BUCKETS` (zh: STARD's quartiles are
#: about 17, 23 and 34 characters)
LENGTH_BUCKETS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "characters": ((0, 15), (16, 25), (26, 40), (41, 80), (81, None)),
    "words": ((0, 10), (11, 20), (21, 40), (41, 80), (81, None)),
}
LAW_RULE = ("the law (root of the heading path) of each relevant article; a query whose relevant articles lie in "
            "several laws counts in each of them")
#: a query none of whose relevant articles is placed in a heading path
UNPLACED = "(no heading path)"


def bucket_label(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}–{high}"


def bucket_of(value: int, buckets) -> str:
    for low, high in buckets:
        if value >= low and (high is None or value <= high):
            return bucket_label(low, high)
    raise ValueError(f"{value} is in no bucket")


def query_attributes(data, qids: Sequence[str]) -> tuple[dict[str, dict[str, tuple[str, ...]]], dict[str, tuple]]:
    """Group name -> query id -> the query's value(s), for ``qids``; and group name ->
    (value order: a declared list, ``"name"`` or ``"count"``; rule). ``data`` needs ``qrels``
    and ``groups``; the derived attributes need its ``facts`` (a task summary has them;
    without them only the task's own attributes are broken down)."""
    members: dict[str, dict[str, tuple[str, ...]]] = {}
    how: dict[str, tuple] = {}
    for group, values in data.groups.items():
        members[group] = {q: (values[q],) for q in qids if q in values}
        how[group] = ("name", f"the task's recorded {group} of the query")
    facts = getattr(data, "facts", None)
    if facts is None:
        return members, how
    qrels = data.qrels
    relevant = {q: sorted(d for d, grade in qrels[q].items() if grade > 0) for q in qids}
    if facts.laws:
        members["law"] = {q: tuple(sorted({facts.laws[d] for d in docs if d in facts.laws})) or (UNPLACED,)
                          for q, docs in relevant.items()}
        how["law"] = ("count", LAW_RULE)
    members["relevant_articles"] = {q: (bucket_of(len(docs), RELEVANT_BUCKETS),) for q, docs in relevant.items()}
    how["relevant_articles"] = ([bucket_label(*b) for b in RELEVANT_BUCKETS],
                                "the number of articles judged relevant (grade > 0)")
    buckets = LENGTH_BUCKETS[facts.unit]
    members["query_length"] = {q: (bucket_of(facts.lengths[q], buckets),) for q in qids if q in facts.lengths}
    how["query_length"] = ([bucket_label(*b) for b in buckets],
                           f"the query's length in {facts.unit} "
                           f"({'white space not counted' if facts.unit == 'characters' else 'split at white space'})")
    return members, how


def breakdown_groups(data, qids: Sequence[str]) -> dict[str, tuple[BreakdownGroup, dict[str, list[str]]]]:
    """Group name -> (how it was formed, value -> its evaluated queries), over the evaluated
    ``qids`` pooled over splits. Values no evaluated query has are left out; declared buckets
    keep their order, the task's own values go by name, laws by query count (most first)."""
    members, how = query_attributes(data, qids)
    out: dict[str, tuple[BreakdownGroup, dict[str, list[str]]]] = {}
    for group, of_query in members.items():
        by_value: dict[str, list[str]] = {}
        for q in qids:
            for value in of_query.get(q, ()):
                by_value.setdefault(value, []).append(q)
        if not by_value:
            continue
        order, rule = how[group]
        if order == "name":
            values = sorted(by_value)
        elif order == "count":
            values = sorted(by_value, key=lambda v: (-len(by_value[v]), v))
        else:
            values = [v for v in order if v in by_value]
        out[group] = (BreakdownGroup(values=values, n_queries={v: len(by_value[v]) for v in values}, rule=rule),
                      {v: by_value[v] for v in values})
    return out
