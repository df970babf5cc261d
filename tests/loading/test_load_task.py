"""One way to load a task (statbench.loading.load.load_task): a task plugin that raises, raises
a DataFormatError, or returns something that is not TaskData gives the same one line through
every entry point (exit 2 where a command); a loader's dropped items are listed in run.log,
counted on the console, listed there with -v."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import STARD_QUERIES

from statbench import hookimpl
from statbench.api import Reranker
from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.tasks.stard import Stard
from statbench.testing import check_task, registered_plugin


class Broken(Stard):
    """STARD's declaration and files, a loader that fails in the way ``mode`` says."""

    name = "stard-broken"
    mode = "raise"

    def load(self, data_dir, log):
        if Broken.mode == "raise":
            raise RuntimeError("the disk is on fire")
        if Broken.mode == "format":
            raise DataFormatError(Path(data_dir) / "corpus.jsonl", "not JSON", line=3)
        return {"corpus": {}}  # not TaskData


class Teacher(Reranker):
    name = "broken-test-teacher"

    def rerank(self, queries, candidates, corpus, ctx):
        return {q.id: [(d, 1.0 / (i + 1)) for i, d in enumerate(candidates[q.id])] for q in queries}


class BrokenPlugin:
    @hookimpl
    def register_tasks(self, register):
        register(Broken)

    @hookimpl
    def register_rerankers(self, register):
        register(Teacher)


EXPECTED = {
    "raise": "task 'stard-broken' (broken-plugin:stard-broken) failed while loading: RuntimeError: the disk is on fire",
    "format": "{data}/corpus.jsonl, line 3: not JSON",
    "invalid": "task 'stard-broken': load() returned dict, not statbench.api.TaskData",
}


def _cli_error(*args) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    lines = [line for line in result.output.splitlines() if line.strip()]
    return result.exit_code, lines[-1] if lines else ""


def _errors(stard_dir: Path, tmp_path: Path) -> dict[str, tuple]:
    """What each entry point says when the task's load fails."""
    run_file = tmp_path / "run.trec"
    run_file.write_text("0 Q0 民法典第五十四条 1 1.0 x\n", encoding="utf-8")
    queries = tmp_path / "train.jsonl"
    queries.write_text(json.dumps({"qid": "t1", "query": "婚姻", "passages": ["x"]}, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    found = {
        "run": _cli_error("run", "--task", "stard-broken", "--model", "bm25", "--data-dir", stard_dir,
                          "--output", tmp_path / "out", "--no-progress"),
        "evaluate": _cli_error("evaluate", run_file, "--task", "stard-broken", "--data-dir", stard_dir),
        "pool build": _cli_error("pool", "build", "--task", "stard-broken", "--retriever", "bm25", "--depth", "3",
                                 "--data-dir", stard_dir, "--no-progress"),
        "distill": _cli_error("distill", "--task", "stard-broken", "--teacher", "broken-test-teacher", "--queries",
                              queries, "--data-dir", stard_dir, "--output", tmp_path / "distilled", "--no-progress"),
    }
    import ir_datasets

    import statbench.loading.irds as irds

    try:
        irds.register({"stard-broken": stard_dir})
        with pytest.raises(Exception) as raised:
            list(ir_datasets.load("statbench/stard-broken").queries_iter())
        found["ir_datasets"] = ("raised", str(raised.value))
    finally:
        irds.forget()
    with pytest.raises(AssertionError) as raised:
        check_task(Broken, stard_dir)
    found["check_task"] = ("raised", str(raised.value))
    return found


@pytest.mark.parametrize("mode", ["raise", "format", "invalid"])
def test_a_failing_task_load_says_one_same_line_through_every_entry_point(stard_dir, tmp_path, mode, monkeypatch):
    monkeypatch.setattr(Broken, "mode", mode)
    expected = EXPECTED[mode].format(data=stard_dir)
    with registered_plugin(BrokenPlugin(), "broken-plugin"):
        found = _errors(stard_dir, tmp_path)
    for where, (code, line) in found.items():
        if code == "raised":
            assert line == expected, where
        else:
            assert (code, line) == (2, f"Error: {expected}"), where
    assert not (tmp_path / "out").exists() and not (tmp_path / "distilled").exists()


# --- dropped items: run.log lists each, the console counts them (lists them with -v) -----------------------------


def _with_dropped_items(stard_dir: Path) -> None:
    """A query judged on an article the corpus lacks, and a query without text."""
    unknown = {"query_id": 9, "问题": "无关的问题", "match_id": [99], "match_name": ["不存在法第一条"]}
    blank = {"query_id": 10, "问题": "  ", "match_id": [1], "match_name": ["民法典第五十四条"]}
    (stard_dir / "queries.json").write_text(json.dumps([*STARD_QUERIES, unknown, blank], ensure_ascii=False), "utf-8")


def _run(stard_dir, out, *verbose):
    result = CliRunner().invoke(cli, [*verbose, "run", "--task", "stard", "--model", "bm25", "--data-dir",
                                      str(stard_dir), "--output", str(out), "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split()), json.loads((out / "results.json").read_text())["task"]["dropped"]


def test_dropped_items_are_listed_in_run_log_and_counted_on_the_console(stard_dir, tmp_path):
    _with_dropped_items(stard_dir)
    first, dropped = _run(stard_dir, tmp_path / "loaded")
    second, again = _run(stard_dir, tmp_path / "cached")  # every split cached: the load's summary stands in
    assert len(dropped) == 3 and again == dropped
    count = "stard: 3 items dropped: run.log lists them"
    for out in ("loaded", "cached"):
        log = (tmp_path / out / "run.log").read_text("utf-8").splitlines()
        assert sum(line.startswith(f"warning: {count}") for line in log) == 1, log
        for item in dropped:  # every item once, on a line of its own
            assert log.count(f"info: dropped: {item}") == 1, (item, log)
    # the console: the count, once for these data files; never the items
    assert count in first and "said once for these data files" in first and "items dropped" not in second
    assert not any(" ".join(item.split()) in first + second for item in dropped)
    verbose, _ = _run(stard_dir, tmp_path / "verbose", "-v")
    for item in dropped:  # -v lists them, on every run
        assert f"dropped: {' '.join(item.split())}" in verbose, item
