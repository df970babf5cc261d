"""Issue 15's leaderboard at scale: build the site from N generated results and time it.

The results are realistic in shape: three boards as the real tasks have them (STARD: 5
folds, 1,543 queries, 10 measures; BSARD: 222 test queries, 7 measures, a topic
breakdown; UK statutes: 100 queries, 17 measures, graded nDCG, frozen pools, a
legislation-type breakdown), registered model names with their full parameters, a bm25
baseline on every board (so the significance tests run), rerankers on a quarter of the
rows, and a run file per result (``--run-depth`` documents per query) whose checksum is
the one in the results. Per-query scores come from simulated ranks of the relevant
articles (shared query difficulty + model skill), so they tie and correlate as real
scores do. Every file passes ``statbench.results.record.read_results`` and the leaderboard's
checks.

For each N: wall seconds of ``statbench leaderboard build`` in a fresh process, the split
of an in-process build (reading + validating, significance with its bootstrap, run-file
copies, rendering, writing), the size of the pages, and the page in headless Chromium
(system ``chromium`` driven by Playwright, file://, network blocked): DOMContentLoaded,
load, the script's ``leaderboard-ready`` mark, and the time to sort a column, to go to
page 2 and to filter.

    nice -n 5 python bench/leaderboard_scale.py --work /tmp/lb-scale --sizes 100 1000 \
        --output bench/results/leaderboard_scale.md

:func:`measure` is what ``bench/overheads.py`` calls; :func:`table` formats its figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SEED = 15
PAD = 10**9  #: the rank of a relevant article slot a query does not have
#: board -> (splits with their query counts, (breakdown group, categories) or None, pools)
BOARDS = {
    "stard": ({"fold-1": 309, "fold-2": 309, "fold-3": 309, "fold-4": 308, "fold-5": 308}, None, False),
    "bsard": ({"test": 222}, ("topic", ["family", "housing", "immigration", "money", "work", "justice"]), False),
    "ukstat": ({"test": 100}, ("legislation type", ["ukpga", "uksi", "asp", "wsi"]), True),
}
#: first stages drawn per board (the first row of each board is the bm25 baseline)
MODELS = {
    "stard": ["bm25", "ql", "tfidf", "word2vec", "fasttext", "sailer-zh", "sailer-zh-ft", "lawformer", "lawformer-ft",
              "chinese-roberta", "chinese-roberta-ft", "minilm", "minilm-ft", "dsr", "gdsr", "lsi", "charngram"],
    "bsard": ["bm25", "ql", "tfidf", "word2vec", "fasttext", "camembert", "camembert-ft", "mpnet", "mpnet-ft",
              "biencoder", "biencoder-ft", "two-tower", "two-tower-ft", "doct5query", "colbertv2", "dsr"],
    "ukstat": ["bm25", "ql", "tfidf", "sailer-en", "sailer-en-ft", "mpnet", "mpnet-ft", "minilm", "minilm-ft",
               "biencoder", "colbertv2", "charngram"],
}
RERANKERS = ["monot5", "cross-encoder", "minilm-ce", "bge-reranker-base", "bge-reranker-large", "modernbert-ce"]
CHECKSUMS = {name: hashlib.sha256(name.encode()).hexdigest() for name in BOARDS}


# --- generating results --------------------------------------------------------------------


def _measure_values(label: str, ir_measure: str, ranks, grades, n_rel):
    """Per-query values of one measure from the ranks of the relevant articles (numpy
    arrays: ranks and grades are (queries, max relevant), padded with a huge rank)."""
    import re

    import numpy as np

    cut = re.search(r"@(\d+)", ir_measure)
    k = int(cut.group(1)) if cut else PAD
    name = re.match(r"[A-Za-z]+", ir_measure).group(0)
    hit = (ranks <= k) & (ranks < PAD)
    if name == "R":
        if "grade" in label:  # "R@5 (grade 3)", "R@5 (grade >=2)": recall of the highly relevant only
            wanted = grades >= (3 if "grade 3" in label else 2)
            count = wanted.sum(axis=1)
            return np.where(count > 0, (hit & wanted).sum(axis=1) / np.maximum(count, 1), 0.0)
        return hit.sum(axis=1) / n_rel
    if name == "RR":
        first = ranks.min(axis=1)
        return np.where(first <= k, 1.0 / first, 0.0)
    if name in ("AP", "Rprec"):
        order = np.arange(1, ranks.shape[1] + 1)[None, :]
        if name == "Rprec":
            return (ranks <= n_rel[:, None]).sum(axis=1) / n_rel
        return np.where(hit, order / ranks, 0.0).sum(axis=1) / n_rel
    if name == "nDCG":
        gains = np.where(grades > 0, 2.0 ** grades - 1, 0.0)  # gains={0:0,1:1,2:3,3:7}
        dcg = np.where(hit, gains / np.log2(ranks + 1.0), 0.0).sum(axis=1)
        ideal = -np.sort(-gains, axis=1)
        positions = np.arange(1, ranks.shape[1] + 1)[None, :]
        idcg = np.where(positions <= k, ideal / np.log2(positions + 1.0), 0.0).sum(axis=1)
        return np.where(idcg > 0, dcg / np.maximum(idcg, 1e-12), 0.0)
    raise ValueError(f"no simulation for {ir_measure}")


def _board_queries(board: str, rng):
    """Query ids, relevant counts, grades and difficulty of a board (the same for every model)."""
    import numpy as np

    splits = BOARDS[board][0]
    qids = {name: [f"{board[:2]}{name[-1]}-{i:04d}" for i in range(n)] for name, n in splits.items()}
    total = sum(splits.values())
    n_rel = rng.choice([1, 1, 1, 2, 2, 3, 4], size=total)
    grades = np.where(np.arange(4)[None, :] < n_rel[:, None], rng.integers(1, 4, size=(total, 4)), 0)
    difficulty = rng.beta(2, 2, size=total)
    return qids, n_rel, grades, difficulty


def _per_query(board: str, measures, queries, skill: float, rng) -> dict[str, dict[str, float]]:
    import numpy as np

    qids, n_rel, grades, difficulty = queries
    flat = [q for names in qids.values() for q in names]
    total = len(flat)
    # log-rank of each relevant article: hard queries and weak models rank it low
    log_rank = (difficulty[:, None] * 13 * (1.2 - skill) + rng.normal(0, 1.5, size=(total, 4))).clip(0, 11.5)
    ranks = np.floor(np.exp(log_rank)).astype(np.int64)
    ranks = np.sort(ranks, axis=1)
    for j in range(1, 4):  # distinct ranks
        ranks[:, j] = np.maximum(ranks[:, j], ranks[:, j - 1] + 1)
    ranks = np.where(np.arange(4)[None, :] < n_rel[:, None], ranks, PAD)
    columns = {m["label"]: _measure_values(m["label"], m["ir_measure"], ranks, grades, n_rel) for m in measures}
    labels = list(columns)
    table = np.column_stack([columns[label] for label in labels]).tolist()
    return {q: dict(zip(labels, row)) for q, row in zip(flat, table)}


def _row_spec(board: str, j: int, rng) -> dict:
    """Model, parameters, reranker and pool of the j-th result of a board (j = 0: bm25)."""
    from statbench.registry.plugins import get_registry

    registry = get_registry()
    names = MODELS[board]
    name = names[j % len(names)]
    entry = registry.retrievers.get(name)
    params = dict(entry.cls.defaults()) if entry else {}
    family = getattr(entry.cls, "family", "lexical") if entry else "lexical"
    round_ = j // len(names)
    if j:
        params["seed"] = round_ if name != "bm25" else round_ + 1000  # a distinct configuration per row
    reranker = pool = None
    if j and j % 4 == 3:
        rr = RERANKERS[(j // 4) % len(RERANKERS)]
        rr_entry = registry.rerankers.get(rr)
        reranker = {"name": rr, "family": "reranker", "version": "1",
                    "params": {**(dict(rr_entry.cls.defaults()) if rr_entry else {}), "depth": 100},
                    "plugin": {"name": rr, "distribution": "statbench", "version": "0.1.0"}}
        if BOARDS[board][2]:
            pool = ("bm25-top100", "dense-top100")[j % 2]
    trained = name.endswith("-ft") or name in ("dsr", "gdsr", "lsi")
    skill = 0.25 + 0.5 * rng.random() + (0.1 if reranker else 0.0) + (0.08 if trained else 0.0)
    return {"name": name, "family": family, "params": params, "reranker": reranker, "pool": pool,
            "trained": trained, "skill": min(skill, 0.95)}


def _efficiency(spec: dict, queries: int, rng) -> dict:
    """An efficiency record shaped as the runner writes it (issue 22): lexical rows on 2 CPU
    cores, the others on a GPU, paid-API figures for a third of the reranked rows, and some
    figures left out (not measured) as a cached split leaves them."""
    neural = spec["family"] != "lexical"
    latency = (0.4 if not neural else 6.0) * (1 + 4 * rng.random()) + (120.0 * rng.random() if spec["reranker"] else 0)
    record = {
        "query_latency": {"median_ms": round(latency, 3), "p95_ms": round(latency * (1.5 + rng.random()), 3),
                          "batch_size": 1 if spec["reranker"] else 32, "queries": queries},
        "throughput_qps": round(1000.0 / latency, 3),
        "peak_memory_mb": round(300 + (5000 if neural else 500) * rng.random(), 1),
        "hardware": {"cpu_model": "AMD EPYC 7B13", "cpu_cores": 2 if not neural else 16,
                     "gpu": "NVIDIA H100 80GB HBM3" if neural else None},
    }
    if rng.random() < 0.8:  # a run whose index came from the cache has no index time or size
        record["index_seconds"] = round((20 if not neural else 900) * (0.5 + rng.random()), 2)
        record["index_bytes"] = int((40 if not neural else 400) * 2**20 * (0.5 + rng.random()))
    if spec["reranker"] and rng.random() < 0.34:
        docs = queries * 100
        record["api"] = {"documents_sent": docs, "tokens_sent": None, "cost_usd": round(docs / 100 * 0.002, 4),
                         "price": "$2.00 per 1,000 searches of up to 100 documents (2024-05)"}
    return record


def generate(root: Path, n: int, seed: int = SEED, run_depth: int = 10, start: int = 0,
             only: tuple[str, ...] | None = None) -> list[Path]:
    """``n`` results (with their run files) under ``root``, dealt round-robin to the three
    boards; deterministic for a seed (``created`` dates included). ``start``: the results
    ``r{start}...`` of a larger set (each board's configurations continue from there);
    ``only``: the boards to write (the others' turns are skipped)."""
    import numpy as np

    from statbench.leaderboard.sample import sample_results, write_result
    from statbench.registry.plugins import get_registry

    registry = get_registry()
    rng = np.random.default_rng(seed)
    queries = {board: _board_queries(board, rng) for board in BOARDS}
    measures = {board: [{"label": m.label, "ir_measure": m.ir_measure} for m in registry.tasks[board].cls.measures]
                for board in BOARDS}
    boards = list(BOARDS)
    counters = {board: len(range(b, start, len(boards))) for b, board in enumerate(boards)}
    paths = []
    i = start - 1
    while len(paths) < n:
        i += 1
        board = boards[i % len(boards)]
        j = counters[board]
        counters[board] += 1
        if only is not None and board not in only:
            continue
        spec = _row_spec(board, j, rng)
        per_query = _per_query(board, measures[board], queries[board], spec["skill"], rng)
        qids = queries[board][0]
        breakdown = None
        if BOARDS[board][1]:
            group, categories = BOARDS[board][1]
            flat = sorted(per_query)
            by_cat = {c: [q for k, q in enumerate(flat) if k % len(categories) == ci] for ci, c in enumerate(categories)}
            breakdown = {group: {c: {m["label"]: float(np.mean([per_query[q][m["label"]] for q in qs]))
                                     for m in measures[board]} for c, qs in by_cat.items()}}
        command = f"statbench run --task {board} --model {spec['name']}" + "".join(
            f" --param {k}={v}" for k, v in sorted(spec["params"].items()) if k == "seed")
        if spec["reranker"]:
            command += f" --reranker {spec['reranker']['name']}"
        if spec["pool"]:
            command += f" --pool {spec['pool']}"
        record = sample_results(
            per_query, task=board, model=spec["name"], family=spec["family"], params=spec["params"],
            trained=spec["trained"], reranker=spec["reranker"], pool=spec["pool"], splits=qids,
            measures=[m["label"] for m in measures[board]], breakdown=breakdown, command=command,
            created=f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00",
        )
        results = record.to_json()
        results["measures"] = measures[board]  # the task's ir_measures, not the labels
        results["task"]["data_checksum"] = CHECKSUMS[board]
        results["task"]["protocol"] = ""
        results["environment"] = {"python": "3.11.9", "platform": "Linux-6.1-x86_64",
                                  **({"accelerator": "NVIDIA H100 80GB HBM3"} if spec["family"] != "lexical" else {})}
        flat = [q for names in qids.values() for q in names]
        results["efficiency"] = _efficiency(spec, len(flat), rng)
        run = "".join(f"{q} Q0 doc{(hash_ * 7919 + d) % 100000} {d + 1} {run_depth - d:.4f} {spec['name']}\n"
                      for hash_, q in enumerate(flat) for d in range(run_depth))
        paths.append(write_result(root / board / f"r{i:05d}", results, run))
    return paths


# --- building ------------------------------------------------------------------------------

#: the phases an in-process build is split into: module attribute -> phase
PHASES = {
    ("statbench.leaderboard.render.build", "collect"): "read + validate",
    ("statbench.leaderboard.render.build", "_significance"): "significance",
    ("statbench.leaderboard.render.build", "_copy_run"): "run-file copies",
    ("statbench.leaderboard.render.build", "_charts"): "plots",
    ("statbench.leaderboard.render.build", "_write"): "render + write",
}


def profile_build(results: Path, out: Path) -> dict:
    """Build in this process with the phases timed (wrapping the site's functions: a few
    microseconds per call, no profiler overhead). ``bootstrap`` is counted inside
    ``significance``; ``render + write`` holds the template rendering of every page."""
    import importlib

    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    saved = []

    def timed(fn, phase):
        def wrapper(*args, **kwargs):
            started, started_cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                times[phase] = times.get(phase, 0.0) + time.perf_counter() - started
                cpu[phase] = cpu.get(phase, 0.0) + time.process_time() - started_cpu
        return wrapper

    targets = dict(PHASES)
    # the bootstrap: board-wide (statbench.leaderboard.ranking.significance) or per comparison (before it)
    targets[("statbench.leaderboard.ranking.significance", "bootstrap_intervals")] = "bootstrap"
    targets[("statbench.scoring.significance", "bootstrap_ci")] = "bootstrap"
    for (module_name, attr), phase in targets.items():
        try:
            module = importlib.import_module(module_name)
            original = getattr(module, attr)
        except (ImportError, AttributeError):
            continue
        saved.append((module, attr, original))
        setattr(module, attr, timed(original, phase))
    # rendering: the templates' render, timed apart from the writes
    import jinja2

    render = jinja2.Template.render
    saved.append((jinja2.Template, "render", render))
    jinja2.Template.render = timed(render, "render")
    try:
        from statbench.leaderboard.render.build import build_site

        try:  # what `statbench leaderboard build` passes (the same options: the same manifest)
            from statbench.leaderboard.render.explorer import TaskTexts

            options = {"explorer": TaskTexts(data_dirs={}, default_folders=False)}
        except ImportError:
            options = {}
        started, started_cpu = time.perf_counter(), time.process_time()
        report = build_site(results, out, **options)
        total, total_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    finally:
        for module, attr, original in saved:
            setattr(module, attr, original)
    return {"total": total, "phases": times, "total_cpu": total_cpu, "phases_cpu": cpu, "rows": report.rows,
            "problems": len(report.problems)}


def cli_build(results: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of ``statbench leaderboard build`` in a fresh
    process, imports included. CPU seconds say what the build costs when other processes
    share the cores (on an idle machine, wall ~ CPU for the single-process parts)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "statbench.commands.cli", "leaderboard", "build", "--results", str(results),
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def site_size(site: Path) -> dict:
    pages = {p.name: p.stat().st_size for p in site.glob("*.html")}
    data = {str(p.relative_to(site)): p.stat().st_size for p in site.rglob("*") if p.is_file()
            and p.suffix in (".json", ".js") and p.parent.name != "static"}
    runs = sum(p.stat().st_size for p in (site / "runs").rglob("*") if p.is_file()) if (site / "runs").is_dir() else 0
    return {"pages": pages, "largest_page": max(pages.items(), key=lambda kv: kv[1]), "data": data, "runs": runs}


# --- the page in Chromium ------------------------------------------------------------------

CHROMIUM = os.environ.get("STATBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]

_NAV = """() => { const n = performance.getEntriesByType('navigation')[0];
  const ready = performance.getEntriesByName('leaderboard-ready')[0];
  return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, ready: ready ? ready.startTime : null,
          rows: document.querySelectorAll('#leaderboard tbody.row:not([hidden])').length}; }"""
#: click, then force style and layout: the time until the new order is on screen
_CLICK = """(selector) => { const el = document.querySelector(selector); if (!el) return null;
  const t0 = performance.now(); el.click(); document.body.getBoundingClientRect(); void document.body.offsetHeight;
  return performance.now() - t0; }"""


def page_load(page_path: Path, repeat: int = 3) -> dict:
    """Median times (ms) of the page in headless Chromium, from file:// with no network:
    DOMContentLoaded, load, ``leaderboard-ready`` (the script's mark once the table is
    interactive), then a sort, page 2 and a family filter (click to laid out)."""
    import statistics
    import tempfile

    from playwright.sync_api import sync_playwright

    figures: dict[str, list] = {}
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
                                                        viewport={"width": 1400, "height": 900})
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else route.abort())
        try:
            for _ in range(repeat):
                page = context.new_page()
                page.goto(page_path.as_uri(), wait_until="load")
                nav = page.evaluate(_NAV)
                sort = page.evaluate(_CLICK, "#leaderboard th[data-col='label'] button.sort")
                sort_num = page.evaluate(_CLICK, "#leaderboard th.tested button.sort")
                next_page = page.evaluate(_CLICK, ".lb-pager button[data-page='next']")
                family = page.evaluate(_CLICK, "input[name='family'][value='lexical']")
                for key, value in {**nav, "sort by name": sort, "sort by tested measure": sort_num,
                                   "page 2": next_page, "filter family": family}.items():
                    figures.setdefault(key, []).append(value)
                page.close()
        finally:
            context.close()
    return {k: (statistics.median(v) if all(x is not None for x in v) else None) for k, v in figures.items()}


# --- the whole measurement -----------------------------------------------------------------


def measure(work: Path, sizes=(100, 1000), run_depth: int = 10, browser: bool = True) -> dict:
    """For each size: generate (kept between calls when complete), build in a fresh
    process and in-process (phases), size the pages, load the largest in Chromium."""
    work = Path(work)
    out = {}
    for n in sizes:
        results = work / f"results-{n}"
        stamp = results / f".complete-{n}-{run_depth}"
        if not stamp.is_file():
            shutil.rmtree(results, ignore_errors=True)
            started = time.perf_counter()
            generate(results, n, run_depth=run_depth)
            stamp.write_text("ok\n")
            print(f"generated {n} results in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        input_bytes = sum(p.stat().st_size for p in results.rglob("*") if p.is_file())
        wall, cpu = cli_build(results, work / f"site-{n}-cli")
        prof = profile_build(results, work / f"site-{n}")
        sizes_ = site_size(work / f"site-{n}")
        figures = {"n": n, "input_bytes": input_bytes, "wall": wall, "cpu": cpu, "per_result": wall / n, "profile": prof,
                   "site": sizes_}
        if browser:  # each board's first page, and a later page of stard
            pages = [name for name in sorted(sizes_["pages"]) if name.startswith("task-") and name.count(".") == 1]
            pages += [name for name in ("task-stard.p2.html",) if name in sizes_["pages"]]
            figures["browser"] = {name: page_load(work / f"site-{n}" / name) for name in pages}
        print(json.dumps(figures, default=str), file=sys.stderr, flush=True)
        out[n] = figures
    return out


def _ensure_generated(work: Path, n: int, run_depth: int) -> Path:
    results = work / f"results-{n}"
    stamp = results / f".complete-{n}-{run_depth}"
    if not stamp.is_file():
        shutil.rmtree(results, ignore_errors=True)
        started = time.perf_counter()
        generate(results, n, run_depth=run_depth)
        stamp.write_text("ok\n")
        print(f"generated {n} results in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return results


def _html_inodes(site: Path) -> dict[str, int]:
    return {p.name: p.stat().st_ino for p in site.glob("*.html")}


def _same_tree(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    return files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and all(
        (a / rel).read_bytes() == (b / rel).read_bytes() for rel in files)


def overview_built(site: Path) -> dict:
    """What the site's first page shows of the overview (issue 36): the benchmark sections,
    the configurations listed, the task columns run (a build without it gives zeros)."""
    import re

    html = (site / "index.html").read_text("utf-8")
    return {"benchmarks": len(re.findall(r'<section class="overview" id="benchmark-', html)),
            "configurations": len(re.findall(r'<tr data-family=', html)),
            "columns_not_run": len(re.findall(r'<span class="not-run">not run</span>', html))}


def incremental(work: Path, n: int, added: int = 10, run_depth: int = 10, board: str = "bsard") -> dict:
    """Issue 22's incremental build: a full build of ``n`` results into a new folder, the
    same build again (nothing changed), then ``added`` results added to one board and built
    again; each in a fresh process (wall, CPU). Then which pages were written anew (their
    inode changed; the others are the previous build's, hard-linked), whether the site
    equals a full build into an empty folder byte for byte, and where an unchanged rebuild
    spends its time (in-process phases)."""
    from statbench.storage.paths import cache_root

    work = Path(work)
    results = _ensure_generated(work, n, run_depth)
    extra = results / "added"
    shutil.rmtree(extra, ignore_errors=True)
    # a cold start: nothing kept from earlier builds under $STATBENCH_CACHE (validated records,
    # significance comparisons, gzipped run files)
    for kept in ("leaderboard-records", "leaderboard-significance", "leaderboard-runs", "file-digests"):
        shutil.rmtree(cache_root() / kept, ignore_errors=True)
    site, full_site = work / f"site-{n}-incremental", work / f"site-{n}-full"
    for folder in (site, full_site):
        shutil.rmtree(folder, ignore_errors=True)
    load = {}
    try:
        load["cold"] = os.getloadavg()[0]
        cold = cli_build(results, site)
        load["unchanged"] = os.getloadavg()[0]
        unchanged = cli_build(results, site)
        profile = profile_build(results, site)
        before = _html_inodes(site)
        generate(extra, added, run_depth=run_depth, start=n, only=(board,))
        load["after"] = os.getloadavg()[0]
        after = cli_build(results, site)
        inodes = _html_inodes(site)
        rewritten = sorted(name for name, ino in inodes.items() if before.get(name) != ino)
        full = cli_build(results, full_site)
        identical = _same_tree(site, full_site)
        overview = overview_built(site)
    finally:
        shutil.rmtree(extra, ignore_errors=True)
    figures = {"n": n, "added": added, "board": board, "cold": cold, "unchanged": unchanged, "after": after,
               "full_after": full, "rewritten": rewritten, "pages": len(inodes), "identical": identical,
               "profile_unchanged": profile, "load": load,
               "overview": overview}
    print(json.dumps(figures, default=str), file=sys.stderr, flush=True)
    return figures


def incremental_table(runs: list[dict]) -> str:
    lines = ["| | " + " | ".join(f"N = {r['n']:,}" for r in runs) + " |", "|---" * (len(runs) + 1) + "|"]

    def row(label, fn):
        lines.append(f"| {label} | " + " | ".join(fn(r) for r in runs) + " |")

    def wall_cpu(key):
        return lambda r: f"{r[key][0]:.1f} s / {r[key][1]:.1f} s"

    row("full build: empty folder, cold record cache: wall / CPU", wall_cpu("cold"))
    row("rebuild, nothing changed: wall / CPU", wall_cpu("unchanged"))
    row("— of which reading + validating every results file (in-process)",
        lambda r: f"{r['profile_unchanged']['phases'].get('read + validate', 0):.1f} s "
                  f"({r['profile_unchanged']['phases'].get('read + validate', 0) / r['profile_unchanged']['total']:.0%})")
    row("rebuild after adding 10 results to one board: wall / CPU",
        lambda r: f"{r['after'][0]:.1f} s / {r['after'][1]:.1f} s")
    row("full build of the same results: empty folder, warm record cache: wall / CPU", wall_cpu("full_after"))
    row("ratio rebuild after adding / cold full build (wall)", lambda r: f"{r['after'][0] / r['cold'][0]:.2f}")
    row("pages written anew / pages", lambda r: f"{len(r['rewritten'])} / {r['pages']} "
                                                 f"({', '.join(r['rewritten'][:4])}{', …' if len(r['rewritten']) > 4 else ''})")
    row("incremental site == full build, byte for byte", lambda r: "yes" if r["identical"] else "**NO**")
    row("overview on the first page: benchmarks / configurations / task columns not run",
        lambda r: "{benchmarks} / {configurations} / {columns_not_run}".format(**r["overview"]) if "overview" in r
        else "not built")
    row("load average (1 min) before the cold / unchanged / after-adding builds",
        lambda r: " / ".join(f"{r.get('load', {}).get(k, float('nan')):.1f}" for k in ("cold", "unchanged", "after")))
    return "\n".join(lines)


def table(figures: dict) -> str:
    """The figures as a markdown table (one column per size)."""
    sizes = sorted(figures)
    cols = " | ".join(f"N = {n:,}" for n in sizes)
    lines = [f"| | {cols} |", "|---" * (len(sizes) + 1) + "|"]

    def row(label, fn):
        lines.append(f"| {label} | " + " | ".join(fn(figures[n]) for n in sizes) + " |")

    row("input (results + run files)", lambda f: f"{f['input_bytes'] / 2**20:.0f} MiB")
    row("`statbench leaderboard build`, wall (fresh process)", lambda f: f"{f['wall']:.1f} s")
    row("— its CPU time (user + system)", lambda f: f"{f['cpu']:.1f} s" if "cpu" in f else "—")
    row("seconds per result (wall)", lambda f: f"{f['per_result']:.4f} s")
    row("in-process build, wall / CPU", lambda f: f"{f['profile']['total']:.1f} s / {f['profile'].get('total_cpu', 0):.1f} s")
    phases = ["read + validate", "significance", "bootstrap", "run-file copies", "plots", "render", "render + write"]
    names = {"bootstrap": "bootstrap (in significance)", "render + write": "writing the pages (rendering aside)",
             "render": "rendering the templates"}

    def phase_cell(f, p):
        prof = f["profile"]
        wall, cpu = prof["phases"].get(p, 0.0), prof.get("phases_cpu", {}).get(p)
        text = f"{wall:.2f} s ({100 * wall / prof['total']:.0f}%)"
        if cpu is not None:
            text += f" / CPU {cpu:.2f} s ({100 * cpu / prof['total_cpu']:.0f}%)"
        return text

    for phase in phases:
        row(f"— {names.get(phase, phase)}", lambda f, p=phase: phase_cell(f, p))
    row("largest page", lambda f: f"{f['site']['largest_page'][0]}: {f['site']['largest_page'][1] / 1024:.0f} KiB")
    row("all pages", lambda f: f"{sum(f['site']['pages'].values()) / 1024:.0f} KiB in {len(f['site']['pages'])} files")
    row("stard's first view: task-stard.html + its JSON script",
        lambda f: f"{(f['site']['pages']['task-stard.html'] + f['site']['data'].get('data/task-stard.js', 0)) / 1024:.0f} KiB")
    row("the boards' JSON scripts (data/)", lambda f: f"{sum(f['site']['data'].values()) / 1024:.0f} KiB in "
                                                      f"{len(f['site']['data'])} files" if f["site"]["data"] else "inline")
    row("run files (gzipped)", lambda f: f"{f['site']['runs'] / 2**20:.1f} MiB")
    pages = sorted({p for f in figures.values() for p in f.get("browser", {})})
    keys = ["rows", "dcl", "load", "ready", "sort by name", "sort by tested measure", "page 2", "filter family"]
    names = {"rows": "rows shown", "dcl": "DOMContentLoaded", "load": "load event", "ready": "table interactive"}
    for p in pages:
        for key in keys:
            def fmt(f, p=p, key=key):
                value = f.get("browser", {}).get(p, {}).get(key)
                if value is None:
                    return "—"
                return f"{value:.0f}" if key == "rows" else f"{value:.0f} ms"
            row(f"{p}: {names.get(key, key)}", fmt)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/statbench-lb-scale"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--run-depth", type=int, default=10)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--output", type=Path, help="markdown file for the table")
    parser.add_argument("--json", type=Path, help="file for every figure, as JSON")
    parser.add_argument("--incremental", type=int, nargs="+", metavar="N",
                        help="measure incremental builds (issue 22) at these sizes instead")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.incremental:
        runs = [incremental(args.work, n, run_depth=args.run_depth) for n in args.incremental]
        text = "\n".join([
            "## Incremental builds (issue 22)", "",
            f"`python bench/leaderboard_scale.py --incremental {' '.join(map(str, args.incremental))}` on "
            f"{os.cpu_count()} CPUs; fresh process per build.", "", incremental_table(runs), ""])
        print(text)
        if args.output:
            args.output.write_text(text, "utf-8")
        if args.json:
            args.json.write_text(json.dumps(runs, indent=1, default=str), "utf-8")
        return
    figures = measure(args.work, args.sizes, args.run_depth, not args.no_browser)
    text = "\n".join([
        "# Leaderboard at scale (issue 15)", "",
        f"`python bench/leaderboard_scale.py --sizes {' '.join(map(str, args.sizes))}` on {os.cpu_count()} CPUs; "
        f"results dealt round-robin to stard / bsard / ukstat, run files of {args.run_depth} documents per query.",
        "", table(figures), ""])
    print(text)
    if args.output:
        args.output.write_text(text, "utf-8")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str), "utf-8")


if __name__ == "__main__":
    main()
