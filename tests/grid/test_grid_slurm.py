"""`statbench grid --executor slurm`: cells as a submitit job array on a real single-node
Slurm when one answers here (.ci/slurm-setup.sh starts one), else through submitit's local
executor (``--executor slurm-local``), which runs the same pickled cell tasks without Slurm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap

import pytest
from grid_fixtures import grid, install_rotate, mrr, write_stard

pytest.importorskip("submitit")

# one Slurm test at a time on one xdist worker: the pre-emption test signals every queued
# job named `submitit`, which would include another test's array
pytestmark = pytest.mark.xdist_group("slurm")

ALL = ("0", "1", "2", "3", "4")


def slurm_answers() -> bool:
    if shutil.which("sinfo") is None:
        return False
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and any(s in out.stdout for s in ("idle", "mix", "alloc"))


EXECUTOR = "slurm" if slurm_answers() else "slurm-local"


def test_cells_run_as_a_job_array_and_a_second_invocation_does_nothing(tmp_path):
    data = write_stard(tmp_path / "stard")
    site = install_rotate(tmp_path / "site")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models: [{{label: rot, model: rotate, params: {{offset: [0, 1, 4]}}}}]
        resources: {{cpus: 1, time_min: 10}}
        slurm: {{array_parallelism: 2}}
    """))
    result = grid(path, "--output", tmp_path / "out", "--executor", EXECUTOR, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["executor"] == EXECUTOR and summary["counts"]["done"] == 3
    for offset in (0, 1, 4):
        results = json.loads((tmp_path / "out" / "stard" / f"rot,offset={offset}" / "results.json").read_text())
        assert results["all_queries"]["MRR@3"] == pytest.approx(mrr(offset, ALL))
    # submitit's own files (pickled tasks, job output) live under the grid's .grid/slurm
    assert any((tmp_path / "out" / ".grid" / "slurm").iterdir())
    again = grid(path, "--output", tmp_path / "out", "--executor", EXECUTOR, env=env)
    assert again.returncode == 0 and "3 cells: 0 run now, 3 already done" in again.stdout


PREEMPTED_ONCE = """
import os, sys, time
marker = sys.argv[1]
if not os.path.exists(marker):
    open(marker, "w").close()
    time.sleep(600)  # pre-empted during this attempt
os.execv(sys.executable, [sys.executable, "-m", "statbench.commands.cli", *sys.argv[2:]])
"""


@pytest.mark.skipif(EXECUTOR != "slurm", reason="needs a real Slurm (.ci/slurm-setup.sh)")
def test_a_preempted_job_is_requeued_and_its_cell_completes(tmp_path):
    """Slurm signals the job (USR2, as before a pre-emption or time-out); submitit requeues
    it; the requeued job runs the cell again. Slurm delays a requeued job by about two
    minutes, so this test is slow."""
    import sys
    import threading
    import time

    from statbench.grid.cellrun import CellJob
    from statbench.grid.executors import SlurmExecutor
    from statbench.grid.spec import Resources

    data = write_stard(tmp_path / "stard")
    site = install_rotate(tmp_path / "site")
    marker = tmp_path / "started-once"
    args = ["run", "--task", "stard", "--model", "rotate", "--param", "offset=3", "--data-dir", str(data),
            "--output", str(tmp_path / "cell"), "--no-progress"]
    job = CellJob("pre", (sys.executable, "-c", PREEMPTED_ONCE, str(marker), *args), str(tmp_path / "pre.log"),
                  str(tmp_path), {"PYTHONPATH": str(site)})
    signalled = []

    def preempt():
        while not marker.exists():
            time.sleep(0.5)
        for job_id in subprocess.run(["squeue", "-h", "-o", "%i", "-n", "submitit"], capture_output=True,
                                     text=True).stdout.split():
            subprocess.run(["scancel", "--signal=USR2", job_id], check=True)
            signalled.append(job_id)

    threading.Thread(target=preempt, daemon=True).start()
    (outcome,) = SlurmExecutor(tmp_path / "slurm").run([(job, Resources(time_min=10))], lambda *a: None)
    assert signalled and outcome.returncode == 0
    log = (tmp_path / "pre.log").read_text()
    assert log.count("=== cell pre ") == 2 and log.count("=== exit code") == 1  # the first attempt never ended
    results = json.loads((tmp_path / "cell" / "results.json").read_text())
    assert results["all_queries"]["MRR@3"] == pytest.approx(mrr(3, ALL))
