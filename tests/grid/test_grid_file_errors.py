"""Red-team (R5) regressions for `statbench grid`: file errors found before any cell
(duplicate sweep values, huge sweeps, rerank_depth without a reranker, measures the task
does not report, tuning on the split it is evaluated on), and tuning that says its ties
and the queries it shares with its evaluation."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli

import grid_fixtures
from grid_fixtures import DEV, grid, mrr


@pytest.fixture
def world(tmp_path):
    return grid_fixtures.world(tmp_path)


def write(path, text: str):
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


BAD = [
    # one value twice in a sweep: two cells, one folder (was: no line, no key, "give the models distinct labels")
    ("tasks: [{name: stard}]\nmodels:\n  - {model: bm25, params: {k1: [0.9, 1.2, 0.9]}}\n", 3,
     "models/0/params/k1/2", "lists 0.9 twice"),
    # a boolean and its spelling as a string are one command-line value
    ("tasks: [{name: stard}]\nmodels:\n  - {model: bm25, params: {k1: [1.2]}}\n  - model: bm25\n"
     "    label: b2\n    params: {b: [true, 'true']}\n", 6, "models/1/params/b/1", "lists true twice"),
    # 1 and 1.0 of a float parameter: one configuration under two folders
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params:\n      b: 0.5\n      k1: [1, 1.0]\n", 6,
     "models/0/params/k1", "one configuration twice"),
    # a product of lists that would take hours to expand
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params: {k1: [" + ", ".join(str(i / 10) for i in range(100))
     + "], b: [" + ", ".join(str(i / 100) for i in range(101)) + "]}\n", 4, "models/0/params",
     "more than 1,000 cells"),
    # statbench run refuses --rerank-depth without --reranker; the grid dropped it silently
    ("tasks: [{name: stard}]\nmodels:\n  - {model: bm25, rerank_depth: 20}\n", 3, "models/0/rerank_depth",
     "rerank_depth without a reranker"),
    # a measure the task does not report: was a FAIL after every cell ran
    ("tasks: [{name: stard}]\nmodels: [{label: b, model: bm25}]\nexpected:\n"
     "  - {row: r, task: stard, label: b, scores: {R@100: 0.6, nDCG@10: 0.5}, tolerance: 0.01}\n", 4,
     "expected/0/scores/nDCG@10", "task stard reports no measure 'nDCG@10'"),
    # an expected row on a sweep: was a FAIL ("2 cells are labelled ...") after every cell ran
    ("tasks: [{name: stard}]\nmodels: [{label: b, model: bm25, params: {k1: [0.9, 1.2]}}]\nexpected:\n"
     "  - {row: r, task: stard, label: b, scores: {R@100: 0.6}, tolerance: 0.01}\n", 4,
     "expected/0/label", "is a sweep"),
    # labels that differ only in case: one folder on a case-insensitive file system
    ("tasks: [{name: stard}]\nmodels:\n  - {label: BM, model: bm25}\n  - {label: bm, model: ql}\n", 4,
     "models/1", "in another case"),
    # a tuning measure the task does not report: was an error after the whole search ran
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params: {k1: [0.9, 1.2]}\n"
     "    tune: {on: official, measure: nDCG@10}\n", 5, "models/0/tune/measure", "reports no measure 'nDCG@10'"),
    # tuning on the very split the tuned cell is scored on
    ("tasks: [{name: bsard}]\nmodels:\n  - model: bm25\n    params: {k1: [0.9, 1.2]}\n"
     "    tune: {on: test, measure: R@100}\n", 5, "models/0/tune/on", "would tune on test queries"),
    ("tasks: [{name: stard, protocol: official}]\nmodels:\n  - model: bm25\n    params: {k1: [0.9, 1.2]}\n"
     "    tune: {on: dev, measure: R@100}\n", 5, "models/0/tune/on", "searches the split(s) dev"),
]


@pytest.mark.parametrize("text, line, key, message", BAD, ids=["dup-sweep-value", "dup-bool-value", "int-and-float", "huge-sweep",
                         "rerank-depth", "expected-measure", "expected-sweep", "label-case", "tune-measure", "tune-on-test", "tune-on-dev-official"])
def test_grid_file_errors_name_file_key_and_line_before_any_cell(tmp_path, text, line, key, message):
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["grid", str(path), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    (error,) = result.output.strip().splitlines()
    assert error.startswith(f"Error: {path}, line {line}, key {key!r}: "), error
    assert message in error, error
    assert not (tmp_path / "out").exists()


def test_tuning_ties_and_shared_queries_are_said(world, tmp_path):
    data, env = world
    # offsets 0 and 5 rotate the 6-document miniature corpus to the same order: a tie
    assert mrr(0, DEV) == mrr(6, DEV)
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: rot, model: rotate, params: {{offset: [0, 6]}}, tune: {{on: official, measure: MRR@3}}}}
    """)
    result = grid(path, "--output", tmp_path / "out", "--workers", 2, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    record = json.loads((tmp_path / "out" / "tuning" / "stard--rot.json").read_text())
    assert record["best"]["cell"] == "stard/rot@official,offset=0"
    assert record["best"]["tied_with"] == ["stard/rot@official,offset=6"]
    assert "ties with stard/rot@official,offset=6" in result.stdout
    # the search's dev queries are among the 5 folds' test queries: said, in the summary and on the console
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    tuned = next(c for c in summary["cells"] if c["role"] == "tuned")
    assert "tuned on 3 of the 5 queries it is evaluated on" in tuned["error"]
    assert any("tuned on 3 of the 5 queries" in line for line in summary["tuning_leaks"])
    assert "tuned on 3 of the 5 queries" in " ".join(result.stdout.split())


@pytest.mark.parametrize("task, model, line, key", [
    ("{name: stard, data_dir: DATA, splits: [dev, nosuch]}", "{label: r, model: rotate}", 1, "tasks/0/splits/1"),
    ("{name: stard, data_dir: DATA}",
     "{label: r, model: rotate, params: {offset: [0, 1]}, tune: {on: nosuch, measure: MRR@3}}", 3,
     "models/0/tune/on"),
], ids=["task-splits", "tune-on"])
def test_an_unknown_split_is_found_before_any_cell(world, tmp_path, task, model, line, key):
    data, env = world
    path = tmp_path / "exp.yaml"
    path.write_text(f"tasks: [{task.replace('DATA', str(data))}]\nmodels:\n  - {model}\n")
    result = grid(path, "--output", tmp_path / "out", env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    (error,) = result.stderr.strip().splitlines()
    assert error == (f"Error: {path}, line {line}, key {key!r}: unknown split of task stard 'nosuch'; valid choices: "
                     "dev, fold-1, fold-2, fold-3, fold-4, fold-5"), error
    assert not (tmp_path / "out").exists()
