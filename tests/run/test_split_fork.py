"""Splits ranked in a forked copy of the run (statbench.run.splitfork): the run file, results
and run.log of one process, whatever the fork does (finishes, dies, fails, meets an invalid
cache entry); no fork where it could change a figure."""

from __future__ import annotations

import json
import logging
import os
import re
import sys

import pytest

from statbench.errors import StatbenchError
from statbench.models.lexical.bm25 import BM25
from statbench.run import processes, splitfork
from statbench.run import runner as runner_module
from statbench.run.request import RunRequest
from statbench.run.runner import Run, _SplitRunner

LOG = logging.getLogger("statbench.test-split-fork")
#: what differs between two processes' runs of the same request
VARYING = ("timings", "command", "created", "efficiency")
FOLDS = [f"fold-{i}" for i in range(1, 6)]


def no_progress(description, total=None):
    return lambda n=1: None


@pytest.fixture
def forks(monkeypatch):
    """The split names each fork of the test was given (recorded in this process)."""
    started: list[list[str]] = []
    original = splitfork.SplitFork.__init__

    def spy(self, names, *args):
        started.append(list(names))
        original(self, names, *args)

    monkeypatch.setattr(splitfork.SplitFork, "__init__", spy)
    monkeypatch.setattr(runner_module, "can_fork", lambda: True)  # even when earlier tests loaded torch
    return started


def run_once(stard_dir, out, monkeypatch, workers: int, **more):
    monkeypatch.setenv("STATBENCH_WORKERS", str(workers))
    monkeypatch.setenv("STATBENCH_CACHE", str(out.parent / f"cache-{out.name}"))
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(f"{record.levelname} {record.getMessage()}")
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    try:
        Run(RunRequest(task="stard", model="bm25", data_dir=stard_dir, output=out, **more), LOG, no_progress).execute()
    finally:
        LOG.removeHandler(handler)
    return lines


def masked(lines: list[str]) -> list[str]:
    """Log lines without their timings and the test's folders."""
    return [re.sub(r"\d+\.\d+ s", "S s", line).replace("alone", "OUT").replace("forked", "OUT") for line in lines]


def outputs(out, cache_name: str) -> dict:
    results = json.loads((out / "results.json").read_text())
    for name in VARYING:
        results.pop(name)
    # the cache folder differs between the two runs compared: only its place under it is compared
    for event in results.get("cache_invalid", []):
        event["entry"] = event["entry"].split(cache_name, 1)[-1]
    log = masked((out / "run.log").read_text().splitlines())
    return {"run": (out / "run.trec").read_bytes(), "qrels": (out / "qrels.trec").read_bytes(), "results": results,
            "log": log}


def compare(stard_dir, tmp_path, monkeypatch, forks, **more):
    """The outputs, console lines and efficiency of one process and of a run with a fork."""
    alone = run_once(stard_dir, tmp_path / "alone", monkeypatch, 1, **more)
    assert forks == []
    forked = run_once(stard_dir, tmp_path / "forked", monkeypatch, 2, **more)
    one, two = (outputs(tmp_path / name, f"cache-{name}") for name in ("alone", "forked"))
    efficiency = [json.loads((tmp_path / name / "results.json").read_text())["efficiency"] for name in ("alone", "forked")]
    return one, two, alone, forked, efficiency


def errors_alone_and_forked(stard_dir, tmp_path, monkeypatch) -> list[str]:
    """The one-line errors of a run in one process, then of the same run with a fork; neither
    leaves an output folder."""
    errors = []
    for workers, name in ((1, "alone"), (2, "forked")):
        with pytest.raises(StatbenchError) as caught:
            run_once(stard_dir, tmp_path / name, monkeypatch, workers)
        errors.append(str(caught.value))
        assert not (tmp_path / name).exists()
    return errors


def test_a_fork_ranks_later_splits_and_the_run_is_one_process_s(stard_dir, tmp_path, monkeypatch, forks):
    one, two, alone, forked, efficiency = compare(stard_dir, tmp_path, monkeypatch, forks)
    assert forks == [["fold-4", "fold-5"]]  # after fold-1 built the index: the later half of the four left
    assert two == one
    assert two["results"]["cache"] == {fold: "miss" for fold in FOLDS}
    assert masked(forked) == masked(alone)  # said on the console in the same order
    assert [f"{fold}: 1 test query ranked" in line for fold, line in
            zip(FOLDS, [line for line in forked if "ranked" in line])] == [True] * 5
    # what the fork measured is counted: every query's latency, the search time of all five splits
    assert efficiency[1]["query_latency"]["queries"] == efficiency[0]["query_latency"]["queries"] == 5
    assert efficiency[1]["throughput_qps"] > 0


def test_the_fork_scores_its_splits_and_this_process_reads_them(stard_dir, tmp_path, monkeypatch, forks):
    computed: list[list[str]] = []  # the test queries this process computed scores for, per call
    original = runner_module.per_query_scores

    def spy(qrels, rankings, measures, qids):
        computed.append(list(qids))
        return original(qrels, rankings, measures, qids)

    monkeypatch.setattr(runner_module, "per_query_scores", spy)
    run_once(stard_dir, tmp_path / "forked", monkeypatch, 2)
    assert forks == [["fold-4", "fold-5"]]
    # this process scored its own three splits (the fork's calls are not in its list), and read the fork's
    assert len(computed) == 3
    assert len(list((tmp_path / "cache-forked").rglob("scores.json"))) == 5
    computed.clear()
    run_once(stard_dir, tmp_path / "alone", monkeypatch, 1)
    assert len(computed) == 5


def test_a_fork_that_dies_leaves_its_splits_to_this_process(stard_dir, tmp_path, monkeypatch, forks):
    parent = os.getpid()
    original = _SplitRunner._compute

    def dies_in_the_fork(self, split, staging):
        if os.getpid() != parent:
            os._exit(9)
        return original(self, split, staging)

    monkeypatch.setattr(_SplitRunner, "_compute", dies_in_the_fork)
    one, two, *_ = compare(stard_dir, tmp_path, monkeypatch, forks)
    assert forks == [["fold-4", "fold-5"]]
    assert two == one and two["results"]["cache"] == {fold: "miss" for fold in FOLDS}


def test_a_fork_that_dies_after_a_split_keeps_that_split_s_report(stard_dir, tmp_path, monkeypatch, forks):
    parent = os.getpid()
    original = _SplitRunner._compute

    def dies_on_the_second(self, split, staging):
        if os.getpid() != parent and split.name == "fold-5":
            os._exit(9)
        return original(self, split, staging)

    monkeypatch.setattr(_SplitRunner, "_compute", dies_on_the_second)
    one, two, *_ = compare(stard_dir, tmp_path, monkeypatch, forks)
    assert two == one and two["results"]["cache"] == {fold: "miss" for fold in FOLDS}


def test_a_model_error_in_a_fork_s_split_is_raised_as_in_one_process(stard_dir, tmp_path, monkeypatch, forks):
    original = BM25.search

    def fails_on_the_last_fold(self, queries, k, ctx):
        if ctx.split is not None and ctx.split.name == "fold-5":
            raise RuntimeError("index lost")
        return original(self, queries, k, ctx)

    monkeypatch.setattr(BM25, "search", fails_on_the_last_fold)
    errors = errors_alone_and_forked(stard_dir, tmp_path, monkeypatch)
    assert forks == [["fold-4", "fold-5"]]
    assert errors[1] == errors[0] and "index lost" in errors[0] and "fold-5" in errors[0]


def test_an_invalid_entry_the_fork_meets_is_recorded(stard_dir, tmp_path, monkeypatch, forks):
    """The fork rebuilds an invalid split entry and the run records it (results.json
    cache_invalid), as one process records it."""
    entries = {}
    original_entry = _SplitRunner.entry

    def remembered(self, split):
        entries[split.name] = entry = original_entry(self, split)
        return entry

    monkeypatch.setattr(_SplitRunner, "entry", remembered)

    def damage(path):
        path.mkdir(parents=True)
        (path / "manifest.json").write_text("{not json")

    spy = splitfork.SplitFork.__init__

    def damaged_first(self, names, *args):  # after the fork was decided on, before it runs
        damage(entries[names[-1]].path)
        spy(self, names, *args)

    # one process: the same entry damaged before the run
    run_once(stard_dir, tmp_path / "dry", monkeypatch, 1)
    relative = entries["fold-5"].path.relative_to(tmp_path / "cache-dry")
    damage(tmp_path / "cache-alone" / relative)
    monkeypatch.setattr(splitfork.SplitFork, "__init__", damaged_first)
    one, two, *_ = compare(stard_dir, tmp_path, monkeypatch, forks)
    assert forks == [["fold-4", "fold-5"]]
    (event,) = one["results"]["cache_invalid"]
    assert event["entry"].endswith(str(relative))
    assert two == one


@pytest.mark.parametrize("why", ["one worker", "fork-unsafe module", "not declared", "reranker"])
def test_no_fork_where_it_could_change_a_figure_or_is_switched_off(stard_dir, tmp_path, monkeypatch, forks, why):
    workers, more = 2, {}
    if why == "one worker":
        workers = 1
    elif why == "fork-unsafe module":
        monkeypatch.setattr(runner_module, "can_fork", processes.can_fork)
        monkeypatch.setitem(sys.modules, "jnius", object())  # pyserini's JVM bridge
    elif why == "not declared":  # a retriever's search may change what the run reads back (stats)
        monkeypatch.setattr(BM25, "fork_search", False)
    else:  # a reranker's API usage and latencies are this process's
        monkeypatch.setattr(runner_module._SplitRunner, "_start_fork", _with_reranker(_SplitRunner._start_fork))
    run_once(stard_dir, tmp_path / "out", monkeypatch, workers, **more)
    assert forks == []


def _with_reranker(start_fork):
    """``_start_fork`` asked as if the run had a reranker."""

    def with_reranker(self, current):
        saved, self.reranker = self.reranker, object()
        try:
            return start_fork(self, current)
        finally:
            self.reranker = saved

    return with_reranker


def test_workers_must_be_a_number(monkeypatch):
    monkeypatch.setenv("STATBENCH_WORKERS", "two")
    with pytest.raises(StatbenchError, match="STATBENCH_WORKERS='two': expected a whole number"):
        splitfork.run_processes(10_000)


@pytest.mark.parametrize(("configured", "queries", "cpus", "expected"),
                         [("", 10_000, 2, 2), ("", 499, 2, 1), ("", 10_000, 1, 1), ("1", 10_000, 2, 1),
                          ("2", 3, 1, 2), ("8", 3, 2, 2), ("0", 10_000, 2, 1)])
def test_run_processes(monkeypatch, configured, queries, cpus, expected):
    monkeypatch.setenv("STATBENCH_WORKERS", configured)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    assert splitfork.run_processes(queries) == expected


def test_the_fork_s_lines_reach_a_log_that_is_no_registered_logger(stard_dir, tmp_path, monkeypatch, forks):
    monkeypatch.setenv("STATBENCH_WORKERS", "2")
    log = logging.Logger("a run's own log")  # noqa: LOG001 - not from getLogger: no name leads back to it
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    log.addHandler(handler)
    Run(RunRequest(task="stard", model="bm25", data_dir=stard_dir, output=tmp_path / "out"), log, no_progress).execute()
    assert forks == [["fold-4", "fold-5"]]
    assert [line.split(":")[0] for line in lines if "ranked" in line] == FOLDS


def test_a_scoring_error_is_raised_where_one_process_raises_it(stard_dir, tmp_path, monkeypatch, forks):
    original = runner_module.per_query_scores

    def fails(qrels, rankings, measures, qids):
        if "1" in qids:
            raise StatbenchError("ir-measures cannot compute 'R@5': ValueError: broken")
        return original(qrels, rankings, measures, qids)

    monkeypatch.setattr(runner_module, "per_query_scores", fails)
    ranked: list[str] = []
    check = Run.check_ranked
    monkeypatch.setattr(Run, "check_ranked", lambda self, *args: (ranked.append("checked"), check(self, *args))[1])
    errors = errors_alone_and_forked(stard_dir, tmp_path, monkeypatch)
    assert forks == [["fold-4", "fold-5"]]
    assert errors[0] == errors[1] == "ir-measures cannot compute 'R@5': ValueError: broken"
    assert ranked == ["checked", "checked"]  # raised after the ranking's checks, in both (the fork's failure unsaid)
