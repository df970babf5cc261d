"""`statbench grid` held to both rules: "done" means the result's own data checksum is the
data's now, a cell is recorded done when it finishes, a grid file's errors name file, key
and line before any cell starts, and --check says what a figure is compared with (paper
or statbench's own, same or other data, budget rows not checked)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.grid.check import delta_text

import grid_fixtures
from fixture_data import STARD_CORPUS, write_jsonl
from grid_fixtures import grid, mrr

ALL = ("0", "1", "2", "3", "4")


@pytest.fixture
def world(tmp_path):
    return grid_fixtures.world(tmp_path)


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def wait_for(predicate, what: str, seconds: float = 120, process=None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        if process is not None and process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the grid ended before {what}: {out}{err}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def start_grid(*args, env) -> subprocess.Popen:
    """The grid in a session of its own: :func:`kill_grid` ends it and every cell it started
    (a submitit local job outlives a killed grid otherwise)."""
    return subprocess.Popen([sys.executable, "-m", "statbench.commands.cli", "grid", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env},
                            start_new_session=True)


def kill_grid(process: subprocess.Popen) -> None:
    """SIGKILL the grid's session (the grid, its cells, their children), as a lost machine would."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate(timeout=60)


def dry_states(stdout: str) -> dict[str, str]:
    """cell -> "done" / "to run", from ``grid --dry-run``."""
    return {line[8:].strip(): line[:7].strip() for line in stdout.splitlines() if line.startswith(("done ", "to run"))}


# --- done means: the result's own data checksum is the data's now ----------------------------


def test_data_changed_while_a_cell_was_queued_and_back_is_not_done(world, tmp_path):
    data, env = world
    gate = tmp_path / "gate"
    gate.mkdir()
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models: [{{label: rot, model: rotate, params: {{offset: [0, 1]}}}}]
    """)
    args = (path, "--output", tmp_path / "out", "--cache", tmp_path / "cache", "--executor", "sequential")
    original = (data / "corpus.jsonl").read_bytes()
    for offset in (0, 1):
        (gate / f"{offset}.hold").touch()
    process = start_grid(*args, env={**env, "SBGRID_GATE": str(gate)})
    try:
        wait_for((gate / "0.indexed").exists, "cell offset=0 loaded its data", process=process)
        # while offset=1 is queued, the data changes ...
        write_jsonl(data / "corpus.jsonl", [*STARD_CORPUS, {"name": "附加 条款", "content": "新增的条文。"}])
        (gate / "0.hold").unlink()
        wait_for((gate / "1.indexed").exists, "cell offset=1 loaded its data", process=process)
        # ... and changes back once offset=1 has read it
        (data / "corpus.jsonl").write_bytes(original)
        (gate / "1.hold").unlink()
        out, err = process.communicate(timeout=300)
    finally:
        kill_grid(process)
    # the grid does not present cells computed on two different data as one experiment
    assert process.returncode == 2, out + err
    assert err.strip().splitlines()[-1].startswith(
        "Error: 1 of 2 cells failed (first: stard/rot,offset=1: the task's data changed while the grid ran")
    checksums = {o: json.loads((tmp_path / "out" / "stard" / f"rot,offset={o}" / "results.json").read_text())
                 ["task"]["data_checksum"] for o in (0, 1)}
    assert checksums[0] != checksums[1]  # offset=1 was computed on the other data
    dry = grid(*args, "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry_states(dry.stdout) == {"stard/rot,offset=0": "done", "stard/rot,offset=1": "to run"}
    again = grid(*args, env=env)
    assert again.returncode == 0 and "2 cells: 1 run now, 1 already done" in again.stdout, again.stdout
    rerun = json.loads((tmp_path / "out" / "stard" / "rot,offset=1" / "results.json").read_text())
    assert rerun["task"]["data_checksum"] == checksums[0]


def test_an_interrupted_grid_resumes_with_the_cells_it_had_not_finished(world, tmp_path):
    """Cells are recorded done as they finish: killing the grid during its last cell keeps
    the others done (they were all in one batch)."""
    data, env = world
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: rot, model: rotate, params: {{offset: [0, 1]}}}}
          - {{label: slow, model: rotate, params: {{offset: 2, delay: 60}}}}
    """)
    states = interrupted(tmp_path, path, env, "--executor", "sequential", done_before_kill=2)
    assert states == {"stard/rot,offset=0": "done", "stard/rot,offset=1": "done", "stard/slow": "to run"}


def interrupted(tmp_path, path, env, *args, done_before_kill: int) -> dict[str, str]:
    """Run the grid, kill it once ``done_before_kill`` cells are recorded done, and return
    what ``--dry-run`` then says of each cell."""
    common = (path, "--output", tmp_path / "out", "--cache", tmp_path / "cache")
    done = tmp_path / "out" / ".grid" / "done"
    process = start_grid(*common, *args, env=env)
    try:
        wait_for(lambda: len(list(done.glob("*.json"))) >= done_before_kill,
                 f"{done_before_kill} cells recorded done", seconds=240, process=process)
    finally:
        kill_grid(process)
    dry = grid(*common, *args, "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    return dry_states(dry.stdout)


def test_a_tuning_search_interrupted_resumes_with_its_unfinished_cells(world, tmp_path):
    data, env = world
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: rot, model: rotate, params: {{offset: [0, 1], delay: [0, 60]}}, tune: {{on: official, measure: MRR@3}}}}
    """)
    states = interrupted(tmp_path, path, env, "--workers", "4", done_before_kill=2)
    assert states == {"stard/rot@official,offset=0,delay=0": "done", "stard/rot@official,offset=0,delay=60": "to run",
                      "stard/rot@official,offset=1,delay=0": "done", "stard/rot@official,offset=1,delay=60": "to run"}


def test_a_slurm_array_interrupted_resumes_with_its_unfinished_cells(world, tmp_path):
    pytest.importorskip("submitit")
    data, env = world
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: rot, model: rotate, params: {{offset: [0, 1]}}}}
          - {{label: slow, model: rotate, params: {{offset: 2, delay: 60}}}}
    """)
    states = interrupted(tmp_path, path, env, "--executor", "slurm-local", done_before_kill=2)
    assert states == {"stard/rot,offset=0": "done", "stard/rot,offset=1": "done", "stard/slow": "to run"}


# --- a grid file's errors: file, key and line, before any cell starts -------------------------

BAD = [
    ("tasks: &t [{name: stard, data_dir: *t}]\nmodels: [{model: bm25}]\n", 1, "tasks/0/data_dir",
     "recursive alias"),
    ("tasks: [{name: stard}]\nmodels: [{model: bm25}]\nexpected:\n  - {row: r, task: stard, label: bm25,\n"
     "     scores: {R@100: .nan}, tolerance: 0.01}\n", 5, "expected/0/scores/R@100", "nan is not a finite number"),
    ("tasks: [{name: stard}]\nmodels: [{model: bm25}]\nexpected:\n  - {row: r, task: stard, label: bm25,\n"
     "     scores: {R@100: 0.5},\n     tolerance: .inf}\n", 6, "expected/0/tolerance", "inf is not a finite number"),
    ("tasks:\n  - {name: stard, protocol: 10-fold}\nmodels: [{model: bm25}]\n", 2, "tasks/0/protocol",
     "unknown protocol '10-fold' of task stard; valid choices: 5-fold"),
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params:\n      k1: [0.9, abc]\n", 5,
     "models/0/params/k1", "parameter k1='abc' for bm25"),
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    params:\n      kone: [0.9, 1.2]\n", 5,
     "models/0/params/kone", "unknown parameter of bm25 'kone'"),
    ("tasks: [{name: stard}]\nmodels:\n  - model: bm25\n    reranker: nope\n", 4, "models/0/reranker",
     "unknown reranker 'nope'"),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\ntasks: [{name: stard}]\nmodels: [{model: bm25}]\n", None, None,
     "expands to more than 100,000 values"),
]


@pytest.mark.parametrize("text, line, key, message", BAD)
def test_grid_file_errors_name_file_key_and_line(tmp_path, text, line, key, message):
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["grid", str(path), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    (error,) = result.output.strip().splitlines()
    assert error.startswith(f"Error: {path}, line {line}" if line else f"Error: {path}, line"), error
    if key:
        assert f"key {key!r}" in error, error
    assert message in error, error
    assert not (tmp_path / "out").exists()  # found before any cell started


# --- --check: what each figure is compared with -----------------------------------------------


def test_delta_never_prints_minus_zero():
    assert delta_text(0.10, 0.10004) == "0.0000"
    assert delta_text(0.10004, 0.10) == "0.0000"
    assert delta_text(0.25, 0.2) == "+0.0500"
    assert delta_text(0.2, 0.25) == "-0.0500"
    assert delta_text(None, 0.2) == "—"


def check_rows(root: Path) -> dict:
    return {(r["row"], r["measure"]): r for r in json.loads((root / "summary.json").read_text())["check"]}


def test_check_separates_paper_and_regression_rows_and_says_when_data_differs(world, tmp_path):
    data, env = world
    good = mrr(2, ALL)
    base = write(tmp_path / "base.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: rot, model: rotate, params: {{offset: 2}}}}
          - {{label: small, model: rotate, params: {{offset: 2, preset: small}}}}
    """)
    first = grid(base, "--output", tmp_path / "out", "--cache", tmp_path / "cache", env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    ours = json.loads((tmp_path / "out" / "stard" / "rot" / "results.json").read_text())["task"]["data_checksum"]
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - {{label: rot, model: rotate, params: {{offset: 2}}}}
          - {{label: small, model: rotate, params: {{offset: 2, preset: small}}}}
        expected:
          - {{row: same-data, task: stard, label: rot, scores: {{MRR@3: {good}}}, tolerance: 0.001,
             data: {{checksum: "{ours}"}}}}
          - {{row: other-data, task: stard, label: rot, scores: {{MRR@3: 0.9}}, tolerance: 0.001,
             data: {{corpus_size: 55348, queries: 1543, description: the paper's corpus}}}}
          - {{row: budget, task: stard, label: small, scores: {{MRR@3: 0.9}}, tolerance: 0.001,
             data: {{checksum: "{ours}"}}}}
          - {{row: ours-before, task: stard, label: rot, kind: regression, scores: {{MRR@3: {good + 0.00004}}},
             tolerance: 0.0001}}
    """)
    preview = grid(path, "--output", tmp_path / "out", "--cache", tmp_path / "cache", "--dry-run", "--check",
                   env=env)
    assert preview.returncode == 0, preview.stderr
    assert "reproduction check: paper figures (expected)" in preview.stdout
    assert "regression check: statbench's own earlier figures (expected)" in preview.stdout
    assert "55,348" in preview.stdout and "1,543" in preview.stdout
    result = grid(path, "--output", tmp_path / "out", "--cache", tmp_path / "cache", "--check", env=env)
    # the only FAIL is on other data: reported, not a failed reproduction
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 FAIL on other data than the paper's (not counted" in result.stdout
    rows = check_rows(tmp_path / "out")
    assert rows["same-data", "MRR@3"]["status"] == "OK" and rows["same-data", "MRR@3"]["data"] == "same"
    other = rows["other-data", "MRR@3"]
    assert other["status"] == "FAIL" and other["data"] == "other"
    assert other["data_note"] == "other data: paper 55,348 articles, 1,543 queries; ours 6 articles, 5 queries"
    assert rows["budget", "MRR@3"]["status"] == "NOT CHECKED"
    assert rows["budget", "MRR@3"]["reason"].startswith("budget: not checked (preset=small")
    regression = rows["ours-before", "MRR@3"]
    assert regression["kind"] == "regression" and regression["status"] == "OK" and regression["data"] == ""
    text = result.stdout
    assert text.index("reproduction check: paper figures") < text.index("regression check: statbench's own")
    assert "-0.0000" not in text and "0.0000" in text


def test_check_fails_a_paper_row_on_the_same_data(world, tmp_path):
    data, env = world
    base = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models: [{{label: rot, model: rotate, params: {{offset: 2}}}}]
        expected:
          - {{row: far, task: stard, label: rot, scores: {{MRR@3: 0.9}}, tolerance: 0.001, data: {{corpus_size: 99}}}}
          - {{row: undeclared, task: stard, label: rot, scores: {{MRR@3: 0.9}}, tolerance: 0.001}}
    """)
    result = grid(base, "--output", tmp_path / "out", "--check", env=env)
    assert result.returncode == 2
    # data not declared is not known to be other data: it counts, and the row says so
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: --check: 1 of 2 expected figures FAIL (first: undeclared MRR@3)")
    rows = check_rows(tmp_path / "out")
    assert rows["undeclared", "MRR@3"]["data"] == "unknown" and rows["far", "MRR@3"]["data"] == "other"


# --- beir:PATH grids and leaderboards built concurrently ---------------------------------------


def test_a_beir_grid_runs_twice_and_reports_the_tasks_primary_measure(tmp_path):
    from beir_fixtures import write_beir

    folder = write_beir(tmp_path / "lawqa")
    args = ("--task", f"beir:{folder}", "--model", "bm25", "--output", tmp_path / "out", "--cache", tmp_path / "c")
    first = grid(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    second = grid(*args)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "1 cells: 0 run now, 1 already done" in second.stdout
    from statbench.registry.plugins import get_registry

    primary = get_registry().get("tasks", f"beir:{folder}").cls.task_info().primary
    (cell,) = json.loads((tmp_path / "out" / "summary.json").read_text())["cells"]
    assert cell["status"] == "skipped" and cell["primary_measure"] == primary


@pytest.mark.slow
def test_two_grids_build_the_leaderboard_on_one_root(world, tmp_path):
    data, env = world
    path = write(tmp_path / "exp.yaml", f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models: [{{label: rot, model: rotate, params: {{offset: [0, 1]}}}}]
        leaderboard: {tmp_path / "board"}
    """)
    args = (path, "--output", tmp_path / "out", "--cache", tmp_path / "cache")
    assert grid(*args, env=env).returncode == 0
    results = []
    threads = [threading.Thread(target=lambda: results.append(grid(*args, env=env))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.returncode for r in results] == [0, 0], [r.stdout + r.stderr for r in results]
    assert (tmp_path / "board" / "index.html").is_file()
    assert not list((tmp_path / "out" / ".grid").glob("leaderboard-input*"))
