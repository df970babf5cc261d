"""Results for the overview's tests (issue 36 §1): configurations on the boards of the
built-in tasks, with constant per-query scores (so every bootstrap resample gives the
observed ranks: intervals collapse and every rank is checked by hand), and a small
benchmark ``mini-v1`` over stard (official protocol), ukstat and bsard, declared by an
in-process plugin."""

from __future__ import annotations

import contextlib
import types
from pathlib import Path

from statbench import hookimpl
from statbench.api import Benchmark, BenchmarkTask
from statbench.leaderboard.sample import make_results, write_result
from statbench.testing import registered_plugin

MINI = Benchmark(name="mini", version="1", description="three tasks, for the tests", tasks=(
    BenchmarkTask("stard", "R@100", protocol="official"),
    BenchmarkTask("ukstat", "nDCG@10"),
    BenchmarkTask("bsard", "R@100"),
))
#: task -> (its split in MINI, the primary measure's label and spelling)
TASKS = {"stard": ("dev", "R@100", "R@100"), "ukstat": ("test", "nDCG@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10"),
         "bsard": ("test", "R@100", "R@100")}
QUERIES = [f"q{i}" for i in range(4)]


def write_run(root: Path, task: str, model: str, value, *, family: str = "lexical", trained: bool = False,
              params: dict | None = None, qids=QUERIES, splits: dict | None = None, folder: str | None = None) -> Path:
    """A result of ``model`` on ``task`` whose primary measure scores ``value`` on every query
    (``value``: a number, or a list of one score per query)."""
    split, label, spelling = TASKS[task]
    values = value if isinstance(value, list) else [value] * len(qids)
    per_query = {q: {label: v} for q, v in zip(qids, values)}
    results = make_results(per_query, task=task, measures=[label], splits=splits or {split: list(qids)}, model=model,
                           family=family, trained=trained, params=params)
    results["measures"] = [{"label": label, "ir_measure": spelling}]
    return write_result(root / (folder or f"{task}-{model}"), results)


def write_mini(root: Path) -> Path:
    """A, B, C as in the hand-computed example: stard A .8 B .6 C .4; ukstat B .7 C .5 (A did
    not run it); bsard: nobody."""
    write_run(root, "stard", "model-a", 0.8)
    write_run(root, "stard", "model-b", 0.6, family="dense", trained=True)
    write_run(root, "stard", "model-c", 0.4, family="dense")
    write_run(root, "ukstat", "model-b", 0.7, family="dense", trained=True)
    write_run(root, "ukstat", "model-c", 0.5, family="dense")
    return root


@contextlib.contextmanager
def mini_benchmark():
    """``mini-v1`` declared (beside statutes-v1) for the duration of the block."""
    module = types.ModuleType("mini_benchmark")

    @hookimpl
    def register_benchmarks(register):
        register(MINI)

    module.register_benchmarks = register_benchmarks
    with registered_plugin(module, "mini_benchmark"):
        yield MINI


def overview_site(results: Path, out: Path) -> Path:
    """The site of ``results`` (``leaderboard build``: its first page holds the overview, with
    static/overview.js beside it). Returns index.html."""
    from statbench.leaderboard.render.build import build_site

    build_site(results, out, copy_runs=False)
    return out / "index.html"
