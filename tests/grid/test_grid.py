"""`statbench grid`: experiment files, cells, skipping what is done, failures, tuning, --check.

Cells are real `statbench run` subprocesses on a miniature STARD; the third-party model
``rotate`` (tests/grid_fixtures.py) gives figures computed by hand here."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.grid.spec import read_grid

import grid_fixtures
from grid_fixtures import DEV, cell_outputs, grid, mrr

ALL = ("0", "1", "2", "3", "4")


@pytest.fixture
def world(tmp_path):
    """(data folder, environment for subprocesses that see the rotate plugin)."""
    return grid_fixtures.world(tmp_path)


def write(path, text: str):
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


SWEEP = """
    name: sweep
    tasks:
      - {{name: stard, data_dir: {data}}}
    models:
      - label: bm25-sweep
        model: bm25
        params: {{k1: [0.9, 1.5], b: [0.4, 0.75]}}
      - {{label: rot, model: rotate, params: {{offset: [0, 2]}}}}
"""


# --- the file -------------------------------------------------------------------------------

BAD_FILES = [
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    colour: red\n", 4, "models/0/colour",
     "unknown key 'colour' (known keys: label, model, pool, params"),
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params: {k1: {a: 1}}\n", 4, "models/0/params/k1",
     "is not of type"),
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params: {k1: []}\n", 4, "models/0/params/k1",
     "should be non-empty"),
    ("tasks: [{name: stard}]\nmodels:\n  - {model: bm25, pool: bm25}\n", 3, "models/0",
     "exactly one of 'model' or 'pool'"),
    ("tasks: [{name: stard}]\nmodels: [{model: bm25}]\nmodels: [{model: ql}]\n", 3, "models", "appears twice"),
    ("models: [{model: bm25}]\n", 1, None, "'tasks' is a required property"),
    ("tasks: [{name: stard}]\nmodels: [{model: bm25}]\nexpected:\n  - {row: r, task: stard, label: ql, "
     "scores: {R@100: 0.5}, tolerance: 0.01}\n", 4, "expected/0", "no model labelled 'ql'"),
    ("tasks: [{name: stard, protocol: 5-fold, splits: [fold-1]}]\nmodels: [{model: bm25}]\n", 1, "tasks/0",
     "give 'protocol' or 'splits', not both"),
    ("tasks: [{name: stard}]\nmodels: [{model: bm25, tune: {on: dev, measure: R@100}}]\n", 2, "models/0/tune",
     "tune needs a parameter grid"),
    ("tasks: [{name: stard}\nmodels: [{model: bm25}]\n", 2, None, "not valid YAML"),
]


@pytest.mark.parametrize("text, line, key, message", BAD_FILES)
def test_schema_errors_name_file_key_and_line(tmp_path, text, line, key, message):
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["grid", str(path)])
    assert result.exit_code == 2
    (error,) = result.output.strip().splitlines()  # one line
    assert error.startswith(f"Error: {path}, line {line}")
    if key:
        assert f"key {key!r}" in error
    assert message in error


def test_unknown_model_and_bad_param_value_stop_the_grid_before_any_cell(tmp_path):
    for models, message in (("[{model: bm26}]", "unknown retriever 'bm26'"),
                            ("[{model: bm25, params: {k1: [1.2, -1]}}]", "k1")):
        path = write(tmp_path / "exp.yaml", f"output: {tmp_path / 'out'}\ntasks: [{{name: stard}}]\nmodels: {models}\n")
        result = CliRunner().invoke(cli, ["grid", str(path)])
        assert result.exit_code == 2 and message in result.output, result.output
        assert not (tmp_path / "out").exists()


def test_params_lists_expand_into_the_product_of_cells(tmp_path):
    path = write(tmp_path / "exp.yaml", SWEEP.format(data=tmp_path).replace("model: rotate", "model: bm25")
                 .replace("offset", "k1"))
    from statbench.grid.cells import expand

    cells = expand(read_grid(path), tmp_path / "out")
    assert [c.id for c in cells] == [
        "stard/bm25-sweep,k1=0.9,b=0.4", "stard/bm25-sweep,k1=0.9,b=0.75", "stard/bm25-sweep,k1=1.5,b=0.4",
        "stard/bm25-sweep,k1=1.5,b=0.75", "stard/rot,k1=0", "stard/rot,k1=2"]
    assert cells[1].command == (f"statbench run --task stard --model bm25 --param k1=0.9 --param b=0.75 --data-dir "
                                f"{tmp_path} --output {tmp_path / 'out' / 'stard' / 'bm25-sweep,k1=0.9,b=0.75'} "
                                "--no-progress")


# --- running ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_sequential_and_local_workers_agree_and_a_second_invocation_does_nothing(world, tmp_path):
    data, env = world
    path = write(tmp_path / "exp.yaml", SWEEP.format(data=data))
    seq = grid(path, "--output", tmp_path / "seq", "--cache", tmp_path / "c1", "--executor", "sequential", env=env)
    assert seq.returncode == 0, seq.stdout + seq.stderr
    par = grid(path, "--output", tmp_path / "par", "--cache", tmp_path / "c2", "--workers", 3, env=env)
    assert par.returncode == 0, par.stdout + par.stderr
    a, b = cell_outputs(tmp_path / "seq"), cell_outputs(tmp_path / "par")
    assert len(a) == 6 and a == b  # byte-identical run files, identical figures
    # rotate's figures are the hand-computed ones
    for offset in (0, 2):
        figures = a[f"stard/rot,offset={offset}"][1]
        assert figures["aggregate"]["MRR@3"]["mean"] == pytest.approx(mrr(offset, ALL))
    summary = json.loads((tmp_path / "par" / "summary.json").read_text())
    assert {c["status"] for c in summary["cells"]} == {"done"} and summary["counts"]["done"] == 6
    assert all((tmp_path / "par" / "logs" / (c["cell"].replace("/", "--") + ".log")).is_file()
               for c in summary["cells"])
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "par").glob("*/*/*")}

    again = grid(path, "--output", tmp_path / "par", "--cache", tmp_path / "c2", "--workers", 3, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    summary = json.loads((tmp_path / "par" / "summary.json").read_text())
    assert {c["status"] for c in summary["cells"]} == {"skipped"}
    assert sum(c["attempts"] for c in summary["cells"]) == 0
    assert "6 cells: 0 run now, 6 already done" in again.stdout
    assert stamps == {p: p.stat().st_mtime_ns for p in (tmp_path / "par").glob("*/*/*")}

    # changed data (same size, same mtime: only the content differs): every cell runs again;
    # a tampered results.json: that cell runs again
    queries = data / "queries.json"
    before, text = queries.stat(), queries.read_text(encoding="utf-8")
    changed = text.replace("的", "了", 1)
    assert changed != text and len(changed.encode()) == len(text.encode())
    queries.write_text(changed, encoding="utf-8")
    os.utime(queries, ns=(before.st_atime_ns, before.st_mtime_ns))
    rerun = grid(path, "--output", tmp_path / "par", "--cache", tmp_path / "c2", "--workers", 3, env=env)
    summary = json.loads((tmp_path / "par" / "summary.json").read_text())
    assert rerun.returncode == 0 and {c["status"] for c in summary["cells"]} == {"done"}
    target = tmp_path / "par" / "stard" / "rot,offset=2" / "results.json"
    target.write_text(target.read_text().replace('"MRR@3"', '"MRR@3" ', 1))
    once_more = grid(path, "--output", tmp_path / "par", "--cache", tmp_path / "c2", env=env)
    summary = json.loads((tmp_path / "par" / "summary.json").read_text())
    assert once_more.returncode == 0
    assert [c["cell"] for c in summary["cells"] if c["status"] == "done"] == ["stard/rot,offset=2"]


def test_a_failed_cell_does_not_stop_the_others_and_exits_2(world, tmp_path):
    data, env = world
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: broken, model: rotate, params: {{fail: true}}}}
          - {{label: fine, model: rotate, params: {{offset: 1}}}}
    """)
    result = grid(path, "--output", tmp_path / "out", "--retry", 1, "--workers", 2, env=env)
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: 1 of 2 cells failed (first: stard/broken: ")
    assert "rotate was asked to fail" in last
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    rows = {c["cell"]: c for c in summary["cells"]}
    assert rows["stard/fine"]["status"] == "done" and rows["stard/fine"]["attempts"] == 1
    assert rows["stard/broken"]["status"] == "failed" and rows["stard/broken"]["attempts"] == 2  # --retry 1
    log = (tmp_path / "out" / "logs" / "stard--broken.log").read_text()
    assert log.count("=== cell stard/broken") == 2 and "rotate was asked to fail" in log
    assert not (tmp_path / "out" / "stard" / "broken" / "results.json").exists()


def test_tuning_picks_the_best_cell_on_dev_and_runs_only_it_on_test(world, tmp_path):
    data, env = world
    offsets = [1, 2, 0, 5]
    scores = {o: mrr(o, DEV) for o in offsets}
    best = max(offsets, key=lambda o: scores[o])
    assert best == 0 and sorted(scores.values())[-1] > sorted(scores.values())[-2]  # a unique best, not the first
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - label: rot
            model: rotate
            params: {{offset: {offsets}}}
            tune: {{on: official, measure: MRR@3}}
        leaderboard: {tmp_path / "board"}
    """)
    result = grid(path, "--output", tmp_path / "out", "--workers", 2, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    # the leaderboard shows the tuned cell only, not the search
    assert "1 result(s) on 1 task page(s)" in result.stdout and (tmp_path / "board" / "index.html").is_file()
    # the row links to a copy of the experiment file it was run (and checked) from
    copies = list((tmp_path / "board" / "reproductions").glob("*-exp.yaml"))
    assert len(copies) == 1 and copies[0].read_bytes() == path.read_bytes()
    page = next(p for p in (tmp_path / "board").glob("task-stard*.html")).read_text("utf-8")
    assert f'class="reproduction" href="reproductions/{copies[0].name}">exp.yaml</a>' in page
    record = json.loads((tmp_path / "out" / "tuning" / "stard--rot.json").read_text())
    assert [c["params"]["offset"] for c in record["candidates"]] == offsets
    assert [c["score"] for c in record["candidates"]] == pytest.approx([scores[o] for o in offsets])
    assert record["best"]["params"] == {"offset": best}
    tuned = json.loads((tmp_path / "out" / "stard" / "rot" / "results.json").read_text())
    assert "--param offset=0" in tuned["command"] and "--protocol" not in tuned["command"]
    assert len(tuned["splits"]) == 5  # the task's default protocol (5 folds)
    assert tuned["all_queries"]["MRR@3"] == pytest.approx(mrr(best, ALL))
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [(c["cell"], c["role"]) for c in summary["cells"]] == [
        *[(f"stard/rot@official,offset={o}", "search") for o in offsets], ("stard/rot", "tuned")]
    # searched on dev only
    search = json.loads((tmp_path / "out" / "stard" / "rot@official,offset=1" / "results.json").read_text())
    assert [s["name"] for s in search["splits"]] == ["dev"]


def test_check_prints_ok_and_fail_rows_against_hand_made_expectations(world, tmp_path):
    data, env = world
    good, bad = mrr(2, ALL), mrr(2, ALL) + 0.05
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models: [{{label: rot, model: rotate, params: {{offset: 2}}}}]
        expected:
          - {{row: right, task: stard, label: rot, scores: {{MRR@3: {good}}}, tolerance: 0.001}}
          - {{row: wrong, task: stard, label: rot, scores: {{MRR@3: {bad}}}, tolerance: 0.01}}
          - {{row: wide, task: stard, label: rot, scores: {{MRR@3: {bad}}}, tolerance: 0.06}}
    """)
    result = grid(path, "--output", tmp_path / "out", "--check", env=env)
    assert result.returncode == 2
    status = {line.split("│")[1].strip(): line.split("│")[9].strip() for line in result.stdout.splitlines()
              if line.startswith("│") and line.split("│")[1].strip() in ("right", "wrong", "wide")}
    assert status == {"right": "OK", "wrong": "FAIL", "wide": "OK"}
    assert result.stderr.strip().splitlines()[-1] == "Error: --check: 1 of 3 expected figures FAIL (first: wrong MRR@3)"
    check = json.loads((tmp_path / "out" / "summary.json").read_text())["check"]
    assert [(r["row"], r["status"]) for r in check] == [("right", "OK"), ("wrong", "FAIL"), ("wide", "OK")]
    assert check[1]["measured"] == pytest.approx(good)
