"""The per-query explorer of a board (issue 23 §2): static pages, ``explorer/SLUG.html``,
``explorer/SLUG.p2.html``, ... (50 queries a page, as the boards page their rows), each
query with its text, its relevant articles (id, heading path where the task has structure,
the first 200 characters) and, per system, the rank at which each was found; and one script
beside them, ``explorer/data/SLUG.js``, from which the page's filters list queries across
all pages: queries no system answers in the top 100, queries only one system answers, the
largest wins and losses between two chosen systems (the per-query differences of the
board's tested measure, the paired test's), a system's worst queries.

What is shown comes from two places only. Per-query figures and ranks: the board's rows
(their results and their run files, which must hash to ``run_file.sha256``). Query and
article text, judgements and structure: the task as loaded from ``--data-dir TASK=DIR``
(or the default folder ``--verify`` loads), and only when its data checksum is the board's:
the site never shows text the task does not provide, nor text of another data version.
Without such data the explorer shows ids and figures only, and says why."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from statbench.data.runfile import order_as_trec_eval, read_run, strictly_decreasing_at_float32
from statbench.errors import StatbenchError
from statbench.leaderboard.caches.runcopies import plain_content
from statbench.loading.load import load_task, start_task
from statbench.registry.plugins import get_registry
from statbench.storage.filedigests import file_digests
from statbench.storage.paths import data_root

#: queries per page (the boards' rows per page)
PAGE_SIZE = 50
#: systems an explorer holds at most: the best rows by the tested measure, and the baseline
#: (a board of hundreds of rows would make every query's table, and the script, that long)
MAX_SYSTEMS = 24
#: "answers" a query: a relevant article within this rank
ANSWER_DEPTH = 100
#: characters of an article's text shown
ARTICLE_CHARS = 200
#: characters of a query's text in the script (the lists the filters build)
SNIPPET_CHARS = 48
#: a label longer than this is shown in a query's table as its model's name (the legend has it whole)
SHORT_LABEL = 40
#: the label a board's recall at 100 must be spelt with to stand in for ranks (no judgements)
RECALL_100 = "R@100"


@dataclass
class TaskTexts:
    """The task data the explorer may show, by task: loaded once per build from the folder
    ``--data-dir TASK=DIR`` names, or (``default_folders``, with ``--verify``) from the
    task's default folder. A folder named that does not load stops the build; a default
    folder without data leaves that task's explorer with ids only."""

    data_dirs: Mapping[str, Path] = field(default_factory=dict)
    default_folders: bool = False
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("statbench.leaderboard.render.explorer"))
    _loaded: dict[str, tuple[object | None, str | None]] = field(default_factory=dict)

    def identity(self, tasks=()) -> dict:
        """What the build's digest records of these data (a board is rendered again when the
        folder or its files change: each file by its content). ``tasks``: the boards' tasks,
        whose default folders are read when no folder is named for them (``default_folders``)."""
        out = {}
        for task, folder in sorted(self.data_dirs.items()):
            out[task] = [str(folder), _folder_state(Path(folder))]
        if self.default_folders:
            for task in sorted(set(tasks) - set(self.data_dirs)):
                folder = data_root() / task
                out[task] = [str(folder), _folder_state(folder), "default"]
        return {"dirs": out, "default_folders": self.default_folders}

    def get(self, task: str, checksum: str):
        """(TaskData, None) when the task's data of this checksum is at hand, else (None, why)."""
        if task not in self._loaded:
            self._loaded[task] = self._load(task)
        data, why = self._loaded[task]
        if data is None:
            return None, why
        if data.checksum != checksum:
            return None, (f"the task data given is another version (data checksum {data.checksum[:12]}…, this "
                          f"board's {checksum[:12]}…): its text is not shown here")
        return data, None

    def _load(self, task: str):
        given = self.data_dirs.get(task)
        if given is None and not self.default_folders:
            return None, f"no task data given (leaderboard build --data-dir {task}=DIR shows the text)"
        entry = get_registry().tasks.get(task)
        if entry is None:
            return None, f"task {task!r} is not installed here, so its data cannot be read"
        try:
            loaded = load_task(entry, Path(given) if given is not None else None, self.log, task=start_task(entry))
        except StatbenchError as exc:
            if given is not None:
                raise
            return None, f"no local data of task {task} (give --data-dir {task}=DIR): {str(exc).splitlines()[0]}"
        return loaded.data, None

def _folder_state(folder: Path) -> list:
    """(relative name, sha256) of every file below ``folder``: its content, never its size
    and times (:mod:`statbench.storage.filedigests` finds it again by its stat only where that
    provably identifies it)."""
    digests = file_digests("leaderboard")
    try:
        return sorted([str(p.relative_to(folder)), digests.sha256(p)] for p in folder.rglob("*") if p.is_file())
    except OSError:
        return []

# --- the model ---------------------------------------------------------------------------------


def _systems(page: dict, rows) -> list[tuple[dict, object]]:
    """(view, row) of the systems shown: the board's rows in its order (tested measure,
    best first), at most :data:`MAX_SYSTEMS`, the baseline always among them."""
    by_key = {r.key: r for r in rows}
    views = [v for v in page["rows"] if not v["reference"]]
    chosen = views[:MAX_SYSTEMS]
    base = next((v for v in views if v.get("is_baseline")), None)
    if base is not None and base not in chosen:
        chosen = chosen[:MAX_SYSTEMS - 1] + [base]
    return [(v, by_key[v["key"]]) for v in chosen]

def _query_order(rows) -> tuple[list[str], dict[str, str]]:
    """The query ids of the systems shown (``rows``) in their splits' order (each split's
    recorded ids, else the remaining ids sorted), and each query's split. Only the systems
    shown: reading every row's per-query scores was 5 s of a build of 10,000 results."""
    order, split_of = [], {}
    for split in rows[0].results.splits:
        for qid in split.query_ids or ():
            if qid not in split_of:
                split_of[qid] = split.name
                order.append(qid)
    rest = set()
    for row in rows:
        rest.update(q for q in row.query_scores(_any_label(row)) if q not in split_of)
    order.extend(sorted(rest))
    return order, split_of

def _any_label(row) -> str:
    return row.results.measures[0].label

def _run_rankings(row, results_root: Path, run_source):
    """The row's run (query -> ranking in the order the measures saw it), or (None, why).
    ``run_source``: the site's rule for which run file a row may use (inside the results)."""
    from pathlib import PurePosixPath

    source, problem = run_source(row, results_root)
    if source is None:
        return None, "no run file"
    gzipped = source.name == f"{PurePosixPath(row.results.run_file.path).name}.gz"
    try:
        content = plain_content(source, gzipped=gzipped)
    except StatbenchError as exc:  # a damaged or over-large gzip
        return None, f"its run file does not read: {str(exc).splitlines()[0]}"
    if hashlib.sha256(content).hexdigest() != row.results.run_file.sha256:
        return None, "its run file does not match run_file.sha256"
    fd, name = tempfile.mkstemp(suffix=".trec")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        return read_run(name, allow_empty=True), None
    except StatbenchError as exc:
        return None, f"its run file does not read: {str(exc).splitlines()[0]}"
    finally:
        os.unlink(name)

def _ranks(ranking, relevant: list[str]) -> list[int | None]:
    """The rank (1-based, in trec_eval's order: the order the measures saw) of each relevant
    article, ``None`` where the ranking does not hold it."""

    if not strictly_decreasing_at_float32(ranking):
        ranking = order_as_trec_eval(ranking)
    wanted = set(relevant)
    found = {}
    for i, (doc, _) in enumerate(ranking, 1):
        if doc in wanted:
            found[doc] = i
            if len(found) == len(wanted):
                break
    return [found.get(doc) for doc in relevant]

def _fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"

def explorer_model(page: dict, rows, task_texts: TaskTexts | None, results_root: Path, run_source,
                   page_size: int = PAGE_SIZE) -> dict:
    """Everything the explorer's pages and script show of one board (see the module's note)."""
    slug, tested = page["slug"], page["tested"]
    systems = _systems(page, rows)
    qids, split_of = _query_order([row for _, row in systems] or rows[:1])
    checksum = rows[0].results.task.data_checksum
    no_data = f"no task data given (leaderboard build --data-dir {rows[0].task}=DIR shows the text)"
    data, no_text = task_texts.get(rows[0].task, checksum) if task_texts is not None else (None, no_data)
    scores = [row.query_scores(tested) for _, row in systems]
    relevant = _relevant(data, qids)
    rank_table, depth, no_ranks = _rank_tables(systems, data, qids, relevant, results_root, run_source)
    answers, answered_by = _answers(systems, qids, rank_table, rows)
    files = [f"{slug}.html"] + [f"{slug}.p{i}.html" for i in range(2, -(-len(qids) // page_size) + 1)]
    system_views = _system_views(systems, rank_table)
    queries = [_query(n, qid, data, split_of.get(qid, ""), relevant, page_size,
                      _figures(qid, system_views, scores, rank_table, depth, answers[n]))
               for n, qid in enumerate(qids)]
    default_a = next((v["key"] for v in system_views if v["baseline"]), system_views[0]["key"] if system_views else "")
    blob = {
        "tested": tested,
        "page_size": page_size,
        "pages": files,
        "depth": ANSWER_DEPTH,
        "answered_by": answered_by,
        "systems": system_views,
        "queries": qids,
        "snippets": [_cut(q["text"], SNIPPET_CHARS) if q["text"] else "" for q in queries],
        "scores": [[s.get(q) for q in qids] for s in scores],
        "best": [None if table is None else [min((r for r in table[q] if r is not None), default=None) for q in qids]
                 for table in rank_table],
        "answers": [sorted(a) for a in answers],
        "board": page["name"],
    }
    return {
        "slug": slug,
        "board": page["name"],
        "words": page["words"],
        "task_href": f"../{page['parts'][0]['file']}",
        "tested": tested,
        "text_shown": data is not None,
        "no_text": no_text,
        "structure": data is not None and any(a["heading"] for q in queries for a in q["articles"]),
        "no_ranks": no_ranks,
        "answered_by": answered_by,
        "systems": system_views,
        "n_rows": sum(1 for v in page["rows"] if not v["reference"]),
        "queries": queries,
        "files": files,
        "page_size": page_size,
        "blob": blob,
        "keys": {v["key"] for v in system_views},
        "default_a": default_a,
        "default_b": next((v["key"] for v in system_views if v["key"] != default_a), default_a),
    }


def _relevant(data, qids: list[str]) -> dict[str, list[str]]:
    """Each query's relevant articles, highest grade first (none without the task's data)."""
    if data is None:
        return {}
    return {qid: [doc for doc, grade in sorted((data.qrels.get(qid) or {}).items(), key=lambda dg: (-dg[1], dg[0]))
                  if grade > 0]
            for qid in qids}


def _rank_tables(systems, data, qids: list[str], relevant: dict, results_root: Path, run_source):
    """Per system: the ranks of each query's relevant articles in its run file and the run's
    depth per query (None and {} without the task's data or a readable run file), and why a
    system's ranks are not shown."""
    rank_table: list[dict[str, list] | None] = []
    depth: list[dict[str, int]] = []
    no_ranks: list[str] = []
    for view, row in systems:
        rankings, why = _run_rankings(row, results_root, run_source) if data is not None else (None, None)
        if rankings is None:
            rank_table.append(None)
            depth.append({})
            if why is not None:
                no_ranks.append(f"{view['label']}: {why}")
            continue
        rank_table.append({q: _ranks(rankings.get(q, []), relevant[q]) for q in qids})
        depth.append({q: len(rankings.get(q, [])) for q in qids})
    return rank_table, depth, no_ranks


def _system_views(systems, rank_table: list) -> list[dict]:
    """Each system as the pages name it: each query's table names a system by its tag and name
    (S3 bm25); the page's legend gives each tag's full label once (labels with every parameter
    made most of a page)."""
    return [{"key": v["key"], "label": v["label"], "tag": f"S{i + 1}",
             "name": v["label"] if len(v["label"]) <= SHORT_LABEL else f"{row.name} (…)",
             "ranks": rank_table[i] is not None, "baseline": bool(v.get("is_baseline"))}
            for i, (v, row) in enumerate(systems)]


def _query(n: int, qid: str, data, split: str, relevant: dict, page_size: int, figures: list[dict]) -> dict:
    """One query as the explorer shows it: its text, its relevant articles, each system's figures."""
    query = data.queries.get(qid) if data is not None else None
    return {"n": n, "id": qid, "split": split, "text": query.text if query else None,
            "articles": _articles(data, qid, relevant), "figures": figures, "page": n // page_size}


def _articles(data, qid: str, relevant: dict) -> list[dict]:
    """A query's relevant articles with their text (cut), heading and grade."""
    articles = []
    for doc in relevant.get(qid, []):
        article = data.corpus.get(doc)
        articles.append({
            "id": doc,
            "in_corpus": article is not None,
            "heading": (article.fields.get("heading_path", "") if article is not None else ""),
            "text": _cut(article.text, ARTICLE_CHARS) if article is not None else "",
            "grade": data.qrels[qid][doc],
        })
    return articles


def _figures(qid: str, system_views: list[dict], scores: list, rank_table: list, depth: list,
             answering: set[int]) -> list[dict]:
    """Each system's figures on one query: its score, the relevant articles' ranks, its depth."""
    return [{"tag": view["tag"], "name": view["name"], "score": _fmt(scores[i].get(qid)),
             "ranks": rank_table[i][qid] if rank_table[i] is not None else None,
             "k": depth[i].get(qid), "answers": i in answering}
            for i, view in enumerate(system_views)]


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "…"

def _answers(systems, qids, rank_table, rows) -> tuple[list[set[int]], str | None]:
    """Per query, the systems with a relevant article in the top :data:`ANSWER_DEPTH`: from
    the ranks (judgements and run files at hand), else from a per-query R@100 > 0 (the same
    fact: ir-measures' R@100 counts the articles of grade >= 1 in the top 100), else unknown."""
    answers = [set() for _ in qids]
    if any(table is not None for table in rank_table):
        for i, table in enumerate(rank_table):
            if table is None:
                continue
            for n, qid in enumerate(qids):
                if any(r is not None and r <= ANSWER_DEPTH for r in table[qid]):
                    answers[n].add(i)
        return answers, "ranks"
    recall = [m.label for m in rows[0].results.measures if m.ir_measure == RECALL_100]
    if not recall:
        return answers, None
    for i, (_, row) in enumerate(systems):
        values = row.query_scores(recall[0])
        for n, qid in enumerate(qids):
            if (values.get(qid) or 0.0) > 0.0:
                answers[n].add(i)
    return answers, recall[0]

# --- writing -----------------------------------------------------------------------------------


def explorer_files(env, context: dict, page: dict, rows, results_root: Path, task_texts: TaskTexts | None, *,
                   run_source, to_json) -> tuple[dict, dict[str, str]]:
    """A board's explorer: (what the board's page links to, the files' text by path
    relative to the site). ``run_source`` and ``to_json`` are the site's own rules (which
    run file a row may use; JSON safe in a page), passed in: the site imports this module."""
    model = explorer_model(page, rows, task_texts, Path(results_root), run_source)
    files = {f"explorer/data/{model['slug']}.js": f"window.statbenchExplorer = {to_json(model['blob'])};\n"}
    template = env.get_template("explorer.html")
    size = model["page_size"]
    for i, file in enumerate(model["files"]):
        part = {"number": i + 1, "file": file, "queries": model["queries"][i * size:(i + 1) * size],
                "first": i * size + 1, "last": min(len(model["queries"]), (i + 1) * size)}
        files[f"explorer/{file}"] = template.render(ex=model, part=part, data_src=f"data/{model['slug']}.js", **context)
    link = {"href": f"explorer/{model['files'][0]}", "shown": model["keys"], "text_shown": model["text_shown"]}
    return link, files
