"""Issue 23 §2's per-query explorer at scale: 1,543 STARD queries x 20 systems.

The results are ``bench/leaderboard_scale.py``'s generated STARD results (5 folds, 1,543
queries, 10 measures, a bm25 baseline, rerankers on a quarter of the rows), with run files
of 100 articles per query. The task data the explorer shows is the real STARD (queries,
articles, heading paths: ``--data-dir``, default /work/shared/data/stard) put on the
generated query ids: query i of the board gets the i-th real query's text and its real
relevant articles, placed in each run at ranks drawn per system (some beyond the run), so
every query shows its text, its articles and their ranks. Without the real data, text of
the same lengths is made up.

For each figure: the explorer's build (in-process, the site's board rendered with and
without the explorer), the size of its pages and of its script, and the first page and a
later one in headless Chromium as ``bench/leaderboard_scale.py`` loads the boards (system
``chromium`` driven by Playwright, file://, network blocked; medians of 3 loads):
DOMContentLoaded, load, the script's ``explorer-ready`` mark, then each filter (click to
laid out).

    nice -n 5 python bench/explorer_scale.py --work /tmp/explorer-scale --output bench/results/explorer_scale.md
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import leaderboard_scale as scale  # noqa: E402

HEADER = """# The per-query explorer at scale (issue 23 §2)

`nice -n 5 python bench/explorer_scale.py --work /tmp/explorer-scale --output bench/results/explorer_scale.md`
(the table below is its output). 1,543 STARD queries × 20 systems: bench/leaderboard_scale.py's
generated STARD results (5 folds, a bm25 baseline, rerankers on a quarter of the rows), run
files of 100 articles per query with each query's relevant articles placed at drawn ranks
(a difficulty per query shared by the systems, a skill per system), real STARD query and
article text with heading paths (`/work/shared/data/stard`) on the generated query ids. The
generated per-query figures are not computed from those ranks: a size and speed bench.

Browser: headless Chromium (`/usr/bin/chromium`, Playwright, file://, network blocked) as
bench/leaderboard_scale.py loads the boards, medians of 3 loads; "explorer interactive" is the
script's `explorer-ready` mark; a filter is the *Show* menu changed until the new layout is
computed. Build times are wall seconds on 2 CPU cores shared with other sessions: the
explorer's model is mostly reading the 20 run files (3.1 M lines) with statbench's strict run
reader; the board-only build ran second-warm (its records cached).

Size limits: the boards' own at 1,000 results (bench/results/leaderboard_scale.md): largest
page 420 KiB, first view (page + its script) 831 KiB.

"""
SYSTEMS = 20
DEPTH = 100
SEED = 23


@dataclass
class _Data:
    """A loaded task's shape, what the explorer reads: queries, corpus, qrels, checksum."""

    queries: dict
    corpus: dict
    qrels: dict
    checksum: str


def _real_stard(data_dir: Path):
    from statbench.loading.load import load_task, start_task
    from statbench.registry.plugins import get_registry

    entry = get_registry().tasks["stard"]
    return load_task(entry, data_dir, logging.getLogger("bench"), task=start_task(entry)).data


def task_data(results: Path, data_dir: Path | None) -> tuple[_Data, str]:
    """The board's queries with real STARD text and articles (see the module's note), and
    the run files rewritten so that the relevant articles are ranked where drawn."""
    from statbench.api import Document, Query

    rng = random.Random(SEED)
    first = json.loads(next(results.rglob("results.json")).read_text("utf-8"))
    qids = [q for s in first["splits"] for q in (s.get("query_ids") or [])] or sorted(first["per_query"])
    real = _real_stard(data_dir) if data_dir is not None and data_dir.is_dir() else None
    queries, corpus, qrels = {}, {}, {}
    if real is not None:
        real_q = sorted(real.queries, key=lambda q: (len(q), q))
        source = "real STARD text"
    for i, qid in enumerate(qids):
        if real is not None:
            rq = real_q[i % len(real_q)]
            queries[qid] = Query(qid, real.queries[rq].text)
            for doc in real.qrels.get(rq, {}):
                if doc in real.corpus:
                    corpus[doc] = real.corpus[doc]
            qrels[qid] = {doc: grade for doc, grade in real.qrels.get(rq, {}).items() if doc in real.corpus}
        else:
            source = "made-up text of STARD's lengths"
            queries[qid] = Query(qid, "问" * rng.randint(8, 40))
            docs = {f"art-{i}-{j}": 1 for j in range(rng.choice([1, 1, 2, 3]))}
            for doc in docs:
                corpus[doc] = Document(doc, "条" * rng.randint(60, 400), fields={"heading_path": "法 › 第一章 › 第二节"})
            qrels[qid] = docs
    _place(results, qrels, rng)
    return _Data(queries, corpus, qrels, scale.CHECKSUMS["stard"]), source


def _place(results: Path, qrels: dict, rng: random.Random) -> None:
    """Each run file rewritten with the query's relevant articles at drawn ranks (its
    results' run_file.sha256 updated to the new file)."""
    import hashlib

    difficulty = {qid: rng.random() for qid in qrels}  # shared by the systems: some queries none answers
    for path in sorted(results.rglob("results.json")):
        obj = json.loads(path.read_text("utf-8"))
        skill = rng.random()
        lines = []
        for qid, rel in qrels.items():
            docs = [f"doc{qid}-{d}" for d in range(DEPTH)]
            for doc in rel:
                rank = int(min(10**4, 2 ** rng.gauss(1 + 9 * difficulty[qid] + 3 * (1 - skill), 1.5)))
                if 1 <= rank <= DEPTH:
                    docs[rank - 1] = doc
            seen, ranking = set(), []
            for doc in docs:
                if doc not in seen:
                    seen.add(doc)
                    ranking.append(doc)
            lines += [f"{qid} Q0 {doc} {r + 1} {DEPTH - r}.0 x\n" for r, doc in enumerate(ranking)]
        text = "".join(lines).encode("utf-8")
        (path.parent / obj["run_file"]["path"]).write_bytes(text)
        obj["run_file"]["sha256"] = hashlib.sha256(text).hexdigest()
        path.write_text(json.dumps(obj), encoding="utf-8")


class _Texts:
    """Stands in for :class:`statbench.leaderboard.render.explorer.TaskTexts` with the data above."""

    def __init__(self, data):
        self.data = data

    def identity(self):
        return {"bench": True}

    def get(self, task, checksum):
        return (self.data, None) if checksum == self.data.checksum else (None, "other data")


def build(results: Path, site: Path, texts) -> dict:
    """The site built in this process, the explorer's part timed apart."""
    from statbench.leaderboard.render import explorer
    from statbench.leaderboard.render.build import build_site

    spent, spent_cpu = [], []
    original = explorer.explorer_model

    def timed(*args, **kwargs):
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)
            spent_cpu.append(time.process_time() - started_cpu)

    explorer.explorer_model = timed
    try:
        started, started_cpu = time.perf_counter(), time.process_time()
        build_site(results, site, explorer=texts)
        total, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    finally:
        explorer.explorer_model = original
    return {"total": total, "cpu": cpu, "model": sum(spent), "model_cpu": sum(spent_cpu)}


_NAV = """() => { const n = performance.getEntriesByType('navigation')[0];
  const ready = performance.getEntriesByName('explorer-ready')[0];
  return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, ready: ready ? ready.startTime : null,
          queries: document.querySelectorAll('section.query').length}; }"""
_CHOOSE = """([value]) => { const view = document.getElementById('ex-view'); const t0 = performance.now();
  view.value = value; view.dispatchEvent(new Event('change'));
  document.body.getBoundingClientRect(); void document.body.offsetHeight;
  return [performance.now() - t0, document.querySelectorAll('#ex-results tbody tr').length]; }"""


def page_load(path: Path, repeat: int = 3) -> dict:
    from playwright.sync_api import sync_playwright

    figures: dict[str, list] = {}
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=scale.CHROMIUM, headless=True,
                                                        args=scale.FLAGS, viewport={"width": 1400, "height": 900})
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else route.abort())
        try:
            for _ in range(repeat):
                page = context.new_page()
                page.goto(path.as_uri(), wait_until="load")
                nav = page.evaluate(_NAV)
                for key, value in nav.items():
                    figures.setdefault(key, []).append(value)
                for view in ("none", "one", "pair", "system"):
                    ms, listed = page.evaluate(_CHOOSE, [view])
                    figures.setdefault(f"filter {view}", []).append(ms)
                    figures.setdefault(f"filter {view}: rows listed", []).append(listed)
                page.close()
        finally:
            context.close()
    return {k: statistics.median(v) if all(x is not None for x in v) else None for k, v in figures.items()}


def measure(work: Path, data_dir: Path | None) -> dict:
    work = Path(work)
    results = work / "results"
    if not (results / ".complete").is_file():
        import shutil

        shutil.rmtree(results, ignore_errors=True)
        scale.generate(results, SYSTEMS, run_depth=DEPTH, only=("stard",))
        (results / ".complete").write_text("ok\n")
    data, source = task_data(results, data_dir)
    load = os.getloadavg()[0]
    plain = build(results, work / "site-board-only", None)
    full = build(results, work / "site", _Texts(data))
    site = work / "site" / "explorer"
    pages = {p.name: p.stat().st_size for p in site.glob("*.html")}
    script = (site / "data" / "stard.js").stat().st_size
    board = {p.name: p.stat().st_size for p in (work / "site").glob("task-stard*.html")}
    board_data = sum(p.stat().st_size for p in (work / "site" / "data").glob("*.js")) if (work / "site" / "data").is_dir() else 0
    browser = {name: page_load(site / name) for name in ("stard.html", "stard.p17.html")}
    figures = {"load": load, "source": source, "queries": len(data.queries), "systems": SYSTEMS, "plain": plain, "full": full,
               "pages": pages, "script": script, "board": board, "board_data": board_data, "browser": browser}
    print(json.dumps(figures, default=str), file=sys.stderr, flush=True)
    return figures


def table(f: dict) -> str:
    kib = lambda n: f"{n / 1024:.0f} KiB"  # noqa: E731
    largest = max(f["pages"].items(), key=lambda kv: kv[1])
    lines = ["| | figure |", "|---|---|",
             f"| queries × systems | {f['queries']:,} × {f['systems']} ({f['source']}) |",
             f"| site build in-process, board only / board + explorer: wall | {f['plain']['total']:.1f} s / {f['full']['total']:.1f} s |",
             f"| — CPU (user + system) | {f['plain']['cpu']:.1f} s / {f['full']['cpu']:.1f} s |",
             f"| the explorer's model (run files read, ranks found): wall / CPU | {f['full']['model']:.1f} s / "
             f"{f['full']['model_cpu']:.1f} s |",
             f"| load average (1 min) before the builds, 2 shared cores | {f['load']:.1f} |",
             f"| explorer pages | {len(f['pages'])} pages, {kib(sum(f['pages'].values()))} in all |",
             f"| largest explorer page | {largest[0]}: {kib(largest[1])} |",
             f"| the explorer's script (data/stard.js) | {kib(f['script'])} |",
             f"| first view: stard.html + its script | {kib(f['pages']['stard.html'] + f['script'])} |",
             f"| the board's own page, for scale: task-stard.html | {kib(f['board'].get('task-stard.html', 0))} |"]
    for name, b in f["browser"].items():
        lines.append(f"| {name}: queries shown | {b['queries']:.0f} |")
        for key, label in (("dcl", "DOMContentLoaded"), ("load", "load event"), ("ready", "explorer interactive")):
            lines.append(f"| {name}: {label} | {b[key]:.0f} ms |")
        for view in ("none", "one", "pair", "system"):
            lines.append(f"| {name}: filter {view} ({b[f'filter {view}: rows listed']:.0f} rows listed) | "
                         f"{b[f'filter {view}']:.0f} ms |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "explorer-scale")
    parser.add_argument("--data-dir", type=Path, default=Path("/work/shared/data/stard"))
    parser.add_argument("--output", type=Path, help="write the table there, under HEADER")
    args = parser.parse_args()
    text = table(measure(args.work, args.data_dir))
    print(text)
    if args.output:
        args.output.write_text(HEADER + text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
