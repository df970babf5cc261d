"""The overview's data: for each declared benchmark, one column per task (exactly one board),
one row per configuration that ran at least one of them, and the ranks across tasks.

- A column is one board (rows already comparable: same task version, data, split set and
  measure definitions). Its candidates: the boards of the task at the declared version (else
  the installed one), whose splits are the declared protocol's (else the default's), whose
  data checksum is the declared one (when declared) and which define the primary measure as
  the installed task does. Of several, the one with the most rows, then the board named after
  the task, then by name; the others are named on the page. None: the task is "not run".
- A row is a configuration: :attr:`Row.key` (its identity holds no task, so bm25 at its
  defaults is one row however many boards it is on).
- A cell is the board's figure on the primary measure (mean over splits where there are
  several); a missing cell is None, never 0, and is left out of the ranks.
- Ranks (:func:`statbench.leaderboard.ranking.aggregate.aggregate_ranks`) are fed, per column,
  the per-query scores of the rows that share the column's query set; a row that saw the test
  queries (declared on its card) or was scored on other queries is shown and not ranked there.
  They are computed over all the benchmark's tasks and again over each language's tasks (the
  page's language filter shows those).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from statbench.leaderboard.collect.rows import BoardKey, Row
from statbench.leaderboard.ranking.aggregate import AggregateRank, TaskScores, aggregate_ranks
from statbench.leaderboard.ranking.board_ranks import RANK_RESAMPLES
from statbench.leaderboard.render.overview_cache import ColumnCache, RankCache, SamplesCache, TaskDigests
from statbench.leaderboard.render.rows import short_params

#: the filter value of the ranks over every task
ALL = "all"
#: resamples x configurations the intervals may take (the time of a build with thousands of
#: configurations): past it, fewer resamples (at least MIN_RESAMPLES), which the page says
RESAMPLE_CELLS = 1_600_000
MIN_RESAMPLES = 200


@dataclass(frozen=True)
class Column:
    """One task of a benchmark as the overview shows it."""

    task: str
    measure: str
    language: str
    title: str
    board: str | None  #: the board whose rows fill the column (None: not run)
    others: tuple[str, ...] = ()  #: the task's other boards, not in the overview
    queries: int = 0  #: the queries the column ranks on


@dataclass
class OverviewRow:
    key: str
    label: str
    family: str
    trained: bool
    cells: list  #: per column: the figure, or None (not run)
    #: per column: "" (ranked), "seen" (saw the test queries), "queries" (other query set), or None (not run)
    marks: list
    ranks: dict = field(default_factory=dict)  #: task set (ALL or a language) -> AggregateRank

    @property
    def tasks_run(self) -> int:
        return sum(cell is not None for cell in self.cells)


@dataclass
class Overview:
    benchmark: object  #: the :class:`~statbench.contract.benchmark.Benchmark`
    columns: list[Column]
    rows: list[OverviewRow]
    resamples: int
    languages: list[str]  #: the languages of the columns that were run, in column order


def pick_board(entry, info, keys: dict[str, BoardKey], sizes: dict[str, int]) -> tuple[str | None, tuple[str, ...]]:
    """(the board that fills ``entry``'s column or None, the task's other boards)."""
    version = entry.version or info.version
    protocol = info.protocol(entry.protocol or None)
    splits = sorted(protocol.splits) if protocol is not None else None
    spelling = {m.label: m.ir_measure for m in info.measures}.get(entry.measure)
    same_task = sorted(name for name, key in keys.items() if key.task == entry.task and name in sizes)

    def fits(key: BoardKey) -> bool:
        return (key.version == version and (splits is None or sorted(s for s, _ in key.splits) == splits)
                and (not entry.data or key.checksum == entry.data)
                and dict(key.measures).get(entry.measure) == spelling)

    candidates = [name for name in same_task if fits(keys[name])]
    if not candidates:
        return None, tuple(same_task)
    chosen = min(candidates, key=lambda name: (-sizes[name], name != entry.task, name))
    return chosen, tuple(name for name in same_task if name != chosen)


def config_label(row: Row) -> str:
    """The configuration as the boards label it: model (parameters) → reranker (parameters) [pool]."""
    text = row.model.name
    params = short_params(row, "retrievers")
    if params:
        text += f" ({params})"
    if row.reranker is not None:
        text += f" → {row.reranker.name}"
        rr_params = short_params(row, "rerankers")
        if rr_params:
            text += f" ({rr_params})"
    if row.pool and row.model.name != f"pool:{row.pool}":
        text += f" [pool {row.pool}]"
    return text


def _seen(row: Row) -> bool:
    card = getattr(row, "card", None)
    return bool(card and card.test_queries_seen)


def _column(rows: list[Row], measure: str, cache: ColumnCache) -> tuple[dict, dict, dict, TaskScores | None, int]:
    """(row key -> figure, row key -> label, row key -> mark, the ranked rows' per-query
    scores, the number of queries ranked on)."""
    figures, labels, marks, scored = {}, {}, {}, []
    for row in rows:
        figure, qids, values, labels[row.key] = cache.column(row, config_label)
        figures[row.key] = figure
        if figure is None:
            continue
        if _seen(row):
            marks[row.key] = "seen"
            continue
        scored.append((row.key, qids, values))
    groups: dict[tuple, int] = {}
    for _, qids, _ in scored:
        groups[qids] = groups.get(qids, 0) + 1
    # the query set most rows share (then the largest): the column ranks on it
    common = max(groups, key=lambda ids: (groups[ids], len(ids), ids)) if groups else ()
    systems, columns = [], []
    for key, qids, values in scored:
        if qids != common or not common:
            marks[key] = "queries"
            continue
        marks[key] = ""
        systems.append(key)
        columns.append(values)
    if not systems:
        return figures, labels, marks, None, 0
    return figures, labels, marks, TaskScores(systems=tuple(systems), scores=np.column_stack(columns)), len(common)


def overview(benchmark, task_infos: dict, boards: dict[str, list[Row]], keys: dict[str, BoardKey],
             resamples: int = RANK_RESAMPLES) -> Overview:
    """The overview of ``benchmark`` from the collected ``boards`` (name -> rows) and their
    ``keys``; ``task_infos``: task name -> the installed task's TaskInfo. ``resamples``: the
    bootstrap's, as many as a board's rank intervals take, fewer past RESAMPLE_CELLS; the
    ranks of unchanged columns are kept between builds (:mod:`.overview_cache`)."""
    sizes = {name: len(rows) for name, rows in boards.items()}
    columns, scores, by_key = [], {}, {}
    for i, entry in enumerate(benchmark.tasks):
        info = task_infos[entry.task]
        board, others = pick_board(entry, info, keys, sizes)
        queries = 0
        if board is not None:
            cache = ColumnCache(board, entry.measure)
            figures, labels, marks, task_scores, queries = _column(boards[board], entry.measure, cache)
            cache.save()
            if task_scores is not None:
                scores[entry.task] = task_scores
            for row in boards[board]:
                view = by_key.get(row.key)
                if view is None:
                    view = by_key[row.key] = OverviewRow(
                        key=row.key, label=labels[row.key], family=row.family, trained=row.trained,
                        cells=[None] * len(benchmark.tasks), marks=[None] * len(benchmark.tasks))
                view.cells[i] = figures[row.key]
                view.marks[i] = marks.get(row.key)
        columns.append(Column(task=entry.task, measure=entry.measure, language=info.language,
                              title=getattr(info, "description", "") or entry.task, board=board, others=others,
                              queries=queries))
    rows = list(by_key.values())
    _unique_labels(rows)
    languages = list(dict.fromkeys(c.language for c in columns if c.board is not None))
    sets = {ALL: scores}
    for language in languages:
        sets[language] = {c.task: scores[c.task] for c in columns if c.language == language and c.task in scores}
    resamples = min(resamples, max(MIN_RESAMPLES, RESAMPLE_CELLS // max(len(rows), 1)))
    digests = TaskDigests()  # each task's scores hashed once for every set and cache
    kept, samples = RankCache(benchmark.id), SamplesCache(benchmark.id, digests)
    for name, tasks in sets.items():
        if not tasks:
            continue
        ranks = kept.ranks(tasks, resamples, lambda tasks=tasks: aggregate_ranks(tasks, resamples, kept=samples), digests)
        for key, rank in ranks.items():
            by_key[key].ranks[name] = rank
    kept.save()
    rows.sort(key=lambda r: _order(r.ranks.get(ALL), r))
    return Overview(benchmark=benchmark, columns=columns, rows=rows, resamples=resamples, languages=languages)


def _order(rank: AggregateRank | None, row: OverviewRow) -> tuple:
    """Ranked rows by Borda rank, then mean rank; unranked ones after, by label."""
    if rank is None:
        return (1, 0, 0.0, row.label, row.key)
    return (0, rank.borda_rank, rank.mean_rank, row.label, row.key)


def _unique_labels(rows: list[OverviewRow]) -> None:
    """Two configurations never share a label: the later ones get their key."""
    seen: dict[str, int] = {}
    for row in rows:
        seen[row.label] = seen.get(row.label, 0) + 1
    for row in rows:
        if seen[row.label] > 1:
            row.label += f" [key {row.key}]"
