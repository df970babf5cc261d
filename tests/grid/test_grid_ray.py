"""`statbench grid --executor ray` on a real local Ray cluster (2 CPUs, started for the test):
the same run files and figures as sequential cells, and a worker killed mid-cell retried."""

from __future__ import annotations

import json
import sys
import textwrap

import grid_fixtures
import pytest
from grid_fixtures import cell_outputs, grid, mrr

ray = pytest.importorskip("ray")

# one Ray test at a time on one xdist worker: `ray.init()` without an address joins the cluster
# Ray last recorded on this machine (ray_current_cluster), which may be another test's
pytestmark = pytest.mark.xdist_group("ray")

EXPERIMENT = """
    tasks:
      - {{name: stard, data_dir: {data}}}
    models:
      - {{label: bm25-sweep, model: bm25, params: {{k1: [0.9, 1.5], b: [0.4, 0.75]}}}}
      - {{label: rot, model: rotate, params: {{offset: [1, 3]}}}}
"""


@pytest.fixture
def world(tmp_path):
    return grid_fixtures.world(tmp_path)


def test_ray_cells_match_sequential_cells_byte_for_byte(world, tmp_path):
    data, env = world
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(EXPERIMENT.format(data=data)))
    seq = grid(path, "--output", tmp_path / "seq", "--cache", tmp_path / "c1", "--executor", "sequential", env=env)
    assert seq.returncode == 0, seq.stdout + seq.stderr
    # a fresh local Ray cluster with 2 CPUs, started (and stopped) by the grid
    on_ray = grid(path, "--output", tmp_path / "ray", "--cache", tmp_path / "c2", "--executor", "ray",
                  "--workers", 2, env=env)
    assert on_ray.returncode == 0, on_ray.stdout + on_ray.stderr
    a, b = cell_outputs(tmp_path / "seq"), cell_outputs(tmp_path / "ray")
    assert len(a) == 6 and a == b
    assert b["stard/rot,offset=3"][1]["aggregate"]["MRR@3"]["mean"] == pytest.approx(
        mrr(3, ("0", "1", "2", "3", "4")))
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["executor"] == "ray" and summary["counts"]["done"] == 6
    again = grid(path, "--output", tmp_path / "ray", "--cache", tmp_path / "c2", "--executor", "ray", env=env)
    assert again.returncode == 0 and "6 cells: 0 run now, 6 already done" in again.stdout


KILL_WORKER_ONCE = """
import os, signal, sys
marker = sys.argv[1]
if not os.path.exists(marker):
    open(marker, "w").close()
    os.kill(os.getppid(), signal.SIGKILL)  # the Ray worker running this cell dies mid-cell
os.execv(sys.executable, [sys.executable, "-m", "statbench.commands.cli", *sys.argv[2:]])
"""


@pytest.fixture
def ray_cluster():
    """A fresh local Ray cluster of 2 CPUs owned by this test."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_a_worker_killed_mid_cell_is_retried_and_the_grid_completes(world, tmp_path, ray_cluster):
    from statbench.grid.cellrun import CellJob
    from statbench.grid.executors import RayExecutor
    from statbench.grid.spec import Resources

    data, env = world  # env travels with each job (the cluster's workers were started before this test)
    marker = tmp_path / "killed-once"

    def run_args(out, offset):
        return ["run", "--task", "stard", "--model", "rotate", "--param", f"offset={offset}", "--data-dir", str(data),
                "--output", str(out), "--no-progress"]

    victim = CellJob("victim", (sys.executable, "-c", KILL_WORKER_ONCE, str(marker),
                                *run_args(tmp_path / "victim", 2)), str(tmp_path / "logs" / "victim.log"),
                     str(tmp_path), env)
    bystander = CellJob("bystander", (sys.executable, "-m", "statbench.commands.cli", *run_args(tmp_path / "bystander", 4)),
                        str(tmp_path / "logs" / "bystander.log"), str(tmp_path), env)
    events = []
    outcomes = RayExecutor(max_retries=2).run(
        [(victim, Resources()), (bystander, Resources())], lambda cid, state, outcome: events.append((cid, state)))
    by_id = {o.cell_id: o for o in outcomes}
    assert by_id["victim"].returncode == 0 and by_id["bystander"].returncode == 0
    assert marker.exists()
    log = (tmp_path / "logs" / "victim.log").read_text()
    headers = [line for line in log.splitlines() if line.startswith("=== cell victim")]
    assert len(headers) == 2  # the first attempt's worker was killed; Ray ran the task again
    pids = {line.split("worker pid ")[1].split(")")[0] for line in headers}
    assert len(pids) == 2 and str(by_id["victim"].pid) in pids
    results = json.loads((tmp_path / "victim" / "results.json").read_text())
    assert results["all_queries"]["MRR@3"] == pytest.approx(mrr(2, ("0", "1", "2", "3", "4")))
    assert ("victim", "done") in events and ("bystander", "done") in events
