"""What makes a results record publishable (on a board, or as an input of ``compare``):
checks on :class:`~statbench.results.record.RunScores` / ``Results`` for what the schema
cannot say. Every measure scored in the aggregate, each split and each query; split names
unique; every score finite, and within [0, 1] for a measure known to be bounded; the
aggregate the mean and std of the splits; the per-query scores averaging to the splits';
efficiency and cost figures that do not contradict each other or the timings
(:func:`efficiency_problems`). :func:`read_publishable` is the strict reader plus these checks."""

from __future__ import annotations

import math
import re
import statistics
import sys
from operator import itemgetter

from statbench.errors import DataFormatError
from statbench.results.record import Results, RunScores, as_scores, read_results
from statbench.scoring.efficiency_checks import efficiency_problems
from statbench.scoring.measures import custom_bounds

#: ir-measures measures whose every value lies in [0, 1] (by name, as in ``R@100``,
#: ``nDCG(gains=...)@10``, ``RR(rel=2)@5``). Others (NumRet, RBP, INST, alpha_nDCG, ...)
#: are only checked for being finite.
BOUNDED_MEASURES = frozenset({
    "AP", "MAP", "P", "Precision", "R", "Recall", "RR", "MRR", "nDCG", "NDCG", "Rprec", "RPrec",
    "Success", "Judged", "Bpref", "BPref", "ERR", "IPrec", "SetP", "SetR", "SetF", "SetAP",
    "Accuracy", "Compat",
})
_MEASURE_NAME = re.compile(r"\s*([^\W\d]\w*)")
_NEGATIVE_GAIN = re.compile(r"gains\s*=\s*\{[^}]*:\s*-")
#: relative/absolute tolerance of the aggregate and per-query consistency checks (float
#: summation order only: files written by ``statbench run`` agree to ~1e-16)
TOLERANCE = 1e-9
#: problems listed in one error line (the rest are counted)
SHOWN_PROBLEMS = 5


def is_bounded(measure: str) -> bool:
    """Whether every value of the measure ``measure`` lies in [0, 1]: an ir-measures measure
    listed in :data:`BOUNDED_MEASURES`, or a custom measure (statbench.scoring.measures) of a
    registered plugin whose declared ``bounds`` lie within [0, 1]. Any other (a custom
    measure whose plugin is not installed included) is only checked for being finite."""
    match = _MEASURE_NAME.match(measure)
    if match and match.group(1) in BOUNDED_MEASURES:
        return not _NEGATIVE_GAIN.search(measure)  # nDCG with a negative gain can go below 0
    import ir_measures

    if match and match.group(1) in ir_measures.measures.registry:
        return False
    bounds = custom_bounds(measure)
    return bounds is not None and bounds[0] >= 0.0 and bounds[1] <= 1.0


def _record(obj) -> RunScores:
    """The record checked: ``obj`` itself, or of a schema-valid dict a :class:`Results`
    (a results file's) or its scores part (``statbench evaluate --json``'s)."""
    if isinstance(obj, RunScores):
        return obj
    return Results.from_json(obj) if "timings" in obj else as_scores(obj)


def query_columns(per_query, labels: list[str]) -> dict[str, tuple] | None:
    """Measure label -> its per-query scores (in the queries' order), the labels in the first
    query's order, when every query holds exactly ``labels`` (each of them, no other, the
    labels unique): the usual record, taken with one ``itemgetter`` over the rows instead of a
    loop per query (the record cache keeps its table from them: ``QueryTable.of_columns``).
    None otherwise (a query lacking or adding a measure): the checks take their general way."""
    if not labels or len(set(labels)) != len(labels) or not per_query:
        return None
    rows = per_query.values()
    try:
        order = list(next(iter(rows)))
        if set(order) != set(labels) or sum(map(len, rows)) != len(labels) * len(per_query):
            return None
        taken = list(map(itemgetter(*order), rows))
    except (KeyError, TypeError):  # a query without one of the measures (or not a mapping)
        return None
    # each row holds every label and, by the count, nothing else
    columns = zip(*taken) if len(order) > 1 else [tuple(taken)]
    return dict(zip(order, columns))


def consistency_problems(results, columns: dict | None = None) -> list[str]:
    """What the schema cannot say: every measure scored in the aggregate, each split and
    each query; split names unique; no split without queries. ``columns``: the record's
    :func:`query_columns` (every query then holds every measure)."""
    scores = _record(results)
    labels = scores.labels
    problems = []
    if len(set(labels)) != len(labels):
        problems.append("measures: duplicate labels")
    missing = [m for m in labels if m not in scores.aggregate]
    if missing:
        problems.append(f"aggregate: no value for {', '.join(missing)}")
    names = [s.name for s in scores.splits]
    if len(set(names)) != len(names):
        problems.append(f"splits: duplicate names ({', '.join(sorted({n for n in names if names.count(n) > 1}))})")
    for split in scores.splits:
        lacking = [m for m in labels if m not in split.scores]
        if lacking:
            problems.append(f"splits/{split.name}: no score for {', '.join(lacking)}")
        if split.n_queries == 0:
            problems.append(f"splits/{split.name}: n_queries is 0 (a split without queries has no score)")
    wanted = set(labels)
    for qid, row in (() if columns is not None else scores.per_query.items()):
        if not wanted <= row.keys():
            problems.append(f"per_query/{qid}: no score for {', '.join(m for m in labels if m not in row)}")
            break
    return problems


def _per_query_fine(per_query: dict, bounded: dict[str, bool], columns: dict | None = None) -> bool:
    """Whether every per-query score is finite, and within [0, 1] for a bounded measure:
    one pass per measure with C-level ``sum``/``min``/``max`` (a per-query table is most of
    a results file) instead of a check per score. False only means "look closer".
    ``columns``: the table's :func:`query_columns`, when it has them."""
    rows = list(per_query.values()) if columns is None else []
    for label in (set().union(*rows) if columns is None else columns):
        if columns is not None:
            values = columns[label]
        else:
            try:
                values = list(map(itemgetter(label), rows))
            except KeyError:  # a measure only some queries have
                values = [scores[label] for scores in rows if label in scores]
        try:
            total = sum(values)
        except TypeError:
            return False
        if total - total != 0:  # an inf or a NaN (or a sum that overflows): the slow path says which
            return False
        limit = bounded.get(label)
        if limit is None:
            limit = bounded[label] = is_bounded(label)
        if limit and not (min(values) >= 0.0 and max(values) <= 1.0):
            return False
    return True


def score_problems(results, columns: dict | None = None) -> list[str]:
    """Every score that cannot be right: non-finite anywhere, outside [0, 1] for a bounded
    measure (aggregate, all_queries, splits, per_query, breakdown), a negative or too large
    std, a negative or non-finite timing or throughput. Each names its field, e.g.
    ``per_query/q7/R@100: 7.5 is outside [0, 1]``. ``columns``: as :func:`consistency_problems`."""
    record = _record(results)
    bounded = {m.label: is_bounded(m.ir_measure) for m in record.measures}
    problems: list[str] = []
    per_query = record.per_query
    if _per_query_fine(per_query, bounded, columns):
        per_query = {}  # checked: the loop below has only the small tables left

    def check_one(where: str, label: str, value) -> None:
        limit = bounded.get(label)
        if limit is None:
            limit = bounded[label] = is_bounded(label)
        if not math.isfinite(value):
            problems.append(f"{where}: {value!r} is not a finite number")
        elif limit and not 0.0 <= value <= 1.0:
            problems.append(f"{where}: {value!r} is outside [0, 1]")

    def check(where: str, scores: dict) -> None:
        for label, value in scores.items():
            check_one(f"{where}/{label}", label, value)

    for label, agg in record.aggregate.items():
        check_one(f"aggregate/{label}/mean", label, agg.mean)
        std = agg.std
        if not math.isfinite(std) or std < 0:
            problems.append(f"aggregate/{label}/std: {std!r} is not a non-negative number")
        elif bounded.get(label, False) and std > 1.0:
            problems.append(f"aggregate/{label}/std: {std!r} is larger than any std of scores in [0, 1]")
    check("all_queries", record.all_queries or {})
    for split in record.splits:
        check(f"splits/{split.name}", split.scores)
    for qid, scores in per_query.items():
        check(f"per_query/{qid}", scores)
    for group, values in (record.breakdown or {}).items():
        for value, scores in values.items():
            check(f"breakdown/{group}/{value}", scores)
    for section in ("timings", "throughput"):
        for name, value in (getattr(record, section, None) or {}).items():
            if not math.isfinite(value) or value < 0:
                problems.append(f"{section}/{name}: {value!r} is not a non-negative number")
    return problems


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _std_surely_close(recorded: float, values: list) -> bool:
    """Whether ``recorded`` is certainly :func:`_close` to ``statistics.stdev(values)`` (the
    sample std computed exactly, then rounded), told from a float computation and a bound on
    its error; False when not certain (the exact std then decides, and names itself).

    With the mean ``m`` rounded from the exact sum (``fsum``), ``sum((x - m)**2)`` is the
    exact sum of squares plus ``n * (m - mean)**2``, and every other step is one rounding: the
    float std is within ``~6 eps * std + 3 eps * max|x|`` of the exact one. The bound used is
    16 eps * (std + max|x|) plus an absolute 1e-300 (subnormals), and the verdict is taken only
    with half of the tolerance: what is left of it covers the bound's own roundings."""
    try:
        mean = math.fsum(values) / len(values)
        std = math.sqrt(math.fsum([(x - mean) * (x - mean) for x in values]) / (len(values) - 1))
        bound = 16 * sys.float_info.epsilon * (std + max(map(abs, values))) + 1e-300
        gap = abs(recorded - std) + bound
    except (OverflowError, ValueError, TypeError):  # figures too large for floats: the exact way says
        return False
    if not (math.isfinite(gap) and math.isfinite(recorded)):
        return False
    return gap <= 0.5 * max(TOLERANCE * max(abs(recorded), std - bound), TOLERANCE)


def agreement_problems(results, columns: dict | None = None) -> list[str]:
    """Figures that contradict each other: the aggregate must be the mean and sample std of
    the split scores (what the table shows next to the per-split values), and when the
    splits are disjoint the per-query scores must average to the splits' query-weighted
    mean (what the significance tests use). ``columns``: as :func:`consistency_problems`."""
    scores = _record(results)
    problems = []
    splits = scores.splits
    counts = [s.n_queries for s in splits]
    per_query = scores.per_query
    for label in scores.labels:
        values = [s.scores[label] for s in splits]
        agg = scores.aggregate[label]
        mean = statistics.fmean(values)
        if not _close(agg.mean, mean):
            problems.append(f"aggregate/{label}/mean: {agg.mean!r} is not the mean over the splits ({mean!r})")
        if len(values) > 1 and _std_surely_close(agg.std, values):
            pass  # decided without statistics.stdev's exact arithmetic (~30 µs a measure)
        else:
            std = statistics.stdev(values) if len(values) > 1 else 0.0
            if not _close(agg.std, std):
                problems.append(f"aggregate/{label}/std: {agg.std!r} is not the std over the splits ({std!r})")
        if per_query and len(per_query) == sum(counts):
            column = columns[label] if columns is not None else map(itemgetter(label), per_query.values())
            pooled = math.fsum(column) / len(per_query)
            weighted = math.fsum(n * v for n, v in zip(counts, values)) / sum(counts)
            if not _close(pooled, weighted):
                problems.append(f"per_query/*/{label}: the per-query mean {pooled!r} disagrees with the splits' "
                                f"({weighted!r})")
    if len(per_query) > sum(counts):
        problems.append(f"per_query: {len(per_query)} queries, more than the {sum(counts)} the splits count")
    return problems


def check_results(results, columns: dict | None = None) -> list[str]:
    """All the problems of a record (or a schema-valid results dict): empty when every
    figure can be published. ``columns``: the record's :func:`query_columns` when the caller
    took them (else taken here, once for the three checks)."""
    results = _record(results)
    if columns is None:
        columns = query_columns(results.per_query, results.labels)
    problems = consistency_problems(results, columns)
    if problems:
        return problems
    problems = score_problems(results, columns)
    if problems:
        return problems
    try:
        problems = agreement_problems(results, columns)
    except OverflowError:  # finite figures of an unbounded measure whose sum is not (1e308 twice)
        problems = ["aggregate: its figures are too large to be averaged (a float overflows): no run scored them"]
    return problems + efficiency_problems(results)


def join_problems(problems: list[str]) -> str:
    """The first problems in one line, the rest counted."""
    text = "; ".join(problems[:SHOWN_PROBLEMS])
    if len(problems) > SHOWN_PROBLEMS:
        text += f" (and {len(problems) - SHOWN_PROBLEMS} more)"
    return text


def read_publishable(path) -> Results:
    """:func:`~statbench.results.record.read_results` plus :func:`check_results`: the record
    of a file whose every figure can be published, or a ``DataFormatError`` naming the file
    and the fields."""
    results = Results.from_json(read_results(path))
    problems = check_results(results)
    if problems:
        raise DataFormatError(path, join_problems(problems))
    return results
