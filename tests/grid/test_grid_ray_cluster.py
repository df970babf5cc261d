"""`statbench grid --executor ray` on a cluster started the way users start one: `ray start
--head` and a second node `ray start --address`, each a subprocess on 127.0.0.1 (not Ray
started inside the test process). The grid joins it through RAY_ADDRESS, --ray-address
HOST:PORT and --ray-address auto; the second node is killed in the middle of a grid.

Each node runs in its own session (``start_new_session``) and is stopped by killing, by
PID, the processes of that session (Ray puts each worker in a process group of its own,
but in the node's session): never ``ray stop``, which kills every Ray process of the user
on the machine (other tests may have Ray running in-process)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import grid_fixtures
import pytest
from grid_fixtures import cell_outputs, grid, mrr

pytest.importorskip("ray")

# one Ray test at a time on one xdist worker (see tests/grid/test_grid_ray.py)
pytestmark = pytest.mark.xdist_group("ray")

RAY = shutil.which("ray") or str(Path(sys.executable).parent / "ray")

EXPERIMENT = """
    tasks:
      - {{name: stard, data_dir: {data}}}
    models:
      - {{label: rot, model: rotate, params: {{offset: {offsets}, delay: {delay}}}}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session_of(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except (ProcessLookupError, PermissionError):
        return None


class Node:
    """One `ray start --block` in a session of its own: it and every process it starts
    (GCS, raylet, Ray workers, the cells they run) can be found and killed together."""

    def __init__(self, args: list[str], temp_dir: Path, env: dict):
        temp_dir.mkdir(parents=True)
        self.log = temp_dir.with_suffix(".log")
        args = [RAY, "start", *args, "--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--temp-dir",
                str(temp_dir), "--block", "--disable-usage-stats", "--dashboard-agent-listen-port",
                str(free_port()), "--metrics-export-port", str(free_port())]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env={**os.environ, **env}, start_new_session=True)

    def wait_started(self, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if "Ray runtime started" in self.log.read_text(errors="replace"):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.5)
        pytest.fail(f"ray start did not start:\n{self.log.read_text(errors='replace')[-3000:]}")

    def pids(self) -> list[int]:
        return [int(p) for p in os.listdir("/proc") if p.isdigit() and session_of(int(p)) == self.process.pid]

    def kill(self) -> None:
        """SIGKILL every process of the node's session, as a machine failure would."""
        for _ in range(3):  # a process may start another while we kill
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        self.process.wait(timeout=30)


@pytest.fixture
def world(tmp_path):
    return grid_fixtures.world(tmp_path)


@contextlib.contextmanager
def ray_cluster(env: dict, nodes: int, head_env: dict, worker_env: dict):
    """A head and ``nodes - 1`` other nodes (1 CPU each) on 127.0.0.1, each a `ray start`
    in a session of its own; the rotate plugin is installed on all (PYTHONPATH), as
    statbench and its plugins must be on every node."""
    port = free_port()
    short = Path(tempfile.mkdtemp(prefix="sbray-"))  # Ray's socket paths must stay under 107 bytes
    started = []
    try:
        head = Node(["--head", "--port", str(port), "--include-dashboard=false", "--dashboard-port", str(free_port())],
                    short / "head", {**env, **head_env})
        started.append(head)
        head.wait_started()
        for i in range(1, nodes):
            worker = Node(["--address", f"127.0.0.1:{port}"], short / f"worker{i}", {**env, **worker_env})
            started.append(worker)
            worker.wait_started()
        yield {"address": f"127.0.0.1:{port}", "head": head, "worker": started[-1], "temp_dir": short / "head"}
    finally:
        for node in reversed(started):
            node.kill()
        shutil.rmtree(short, ignore_errors=True)


@pytest.fixture
def cluster(world):
    """Two nodes without token authentication (said explicitly: a token in ~/.ray, left by
    anything else on the machine, would otherwise put the head in token mode)."""
    with ray_cluster(world[1], 2, {"RAY_AUTH_MODE": "disabled"}, {"RAY_AUTH_MODE": "disabled"}) as found:
        yield found


@pytest.fixture
def token_cluster(world, tmp_path):
    """Issue 21's cluster: a Ray token exists (`ray get-auth-token --generate`; here a file
    of the test's own, RAY_AUTH_TOKEN_PATH), RAY_AUTH_MODE is unset, so `ray start --head`
    turns token authentication on. A second node must say RAY_AUTH_MODE=token to join."""
    token = tmp_path / "auth_token"
    token.write_text(secrets.token_hex(32))
    env = {**world[1], "RAY_AUTH_TOKEN_PATH": str(token)}
    with ray_cluster(env, 2, {}, {"RAY_AUTH_MODE": "token"}) as found:
        yield {**found, "env": env}


def write_experiment(path: Path, data: Path, offsets, delay: float) -> Path:
    path.write_text(textwrap.dedent(EXPERIMENT.format(data=data, offsets=list(offsets), delay=delay)))
    return path


def kill_when_a_cell_runs_on(node: Node, logs: Path, seconds: float = 120) -> dict:
    """Watch the cells' logs; kill ``node`` once a cell's attempt runs in one of its
    processes (its Ray worker is in the node's session). Returns what was killed."""
    seen: dict = {}

    def watch():
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and node.process.poll() is None:
            for log in logs.glob("*.log") if logs.is_dir() else ():
                for pid in re.findall(r"\(worker pid (\d+)\)", log.read_text(errors="replace")):
                    if session_of(int(pid)) == node.process.pid:
                        time.sleep(1.0)  # mid-cell: the cell sleeps `delay` s per split
                        seen.update(cell=log.stem, pid=int(pid))
                        node.kill()
                        return
            time.sleep(0.2)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    seen["thread"] = thread
    return seen


def test_grid_on_a_ray_start_cluster_survives_a_killed_node(world, cluster, tmp_path):
    data, env = world
    offsets = [0, 1, 2, 3]
    # the reference: the same cells, sequential, without the delay (figures and run files do not depend on it)
    write_experiment(tmp_path / "fast.yaml", data, offsets, 0.0)
    seq = grid(tmp_path / "fast.yaml", "--output", tmp_path / "seq", "--cache", tmp_path / "c0", "--executor",
               "sequential", env=env)
    assert seq.returncode == 0, seq.stdout + seq.stderr
    reference = cell_outputs(tmp_path / "seq")
    assert len(reference) == 4
    assert reference["stard/rot,offset=1"][1]["aggregate"]["MRR@3"]["mean"] == pytest.approx(
        mrr(1, ("0", "1", "2", "3", "4")))

    # 1. RAY_ADDRESS (what `ray job submit` sets): no num_cpus passed to a running cluster
    slow = write_experiment(tmp_path / "slow.yaml", data, offsets, 0.4)
    root = tmp_path / "ray"
    killed = kill_when_a_cell_runs_on(cluster["worker"], root / "logs")
    first = grid(slow, "--output", root, "--cache", tmp_path / "c1", "--executor", "ray",
                 env={**env, "RAY_ADDRESS": cluster["address"]})
    killed["thread"].join(timeout=5)
    assert "cell" in killed, "no cell ran on the worker node: " + first.stdout + first.stderr
    # every cell either finished (retried on the head) or is reported failed, in one line, exit 2
    if first.returncode != 0:
        assert first.returncode == 2 and first.stderr.strip().count("\n") == 0, first.stdout + first.stderr
        assert "cells failed" in first.stderr
    log = (root / "logs" / f"{killed['cell']}.log").read_text()
    attempts = log.split("=== cell ")[1:]
    assert f"worker pid {killed['pid']})" in attempts[0] and "=== exit code" not in attempts[0]  # killed mid-cell

    # 2. --ray-address HOST:PORT: the rerun finishes whatever was not done, and skips the rest
    rerun = grid(slow, "--output", root, "--cache", tmp_path / "c1", "--executor", "ray", "--ray-address",
                 cluster["address"], env=env)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    summary = json.loads((root / "summary.json").read_text())
    assert summary["counts"]["failed"] == 0 and summary["counts"]["done"] + summary["counts"]["skipped"] == 4
    # every finished cell is byte-identical to the sequential one (run file and figures)
    assert cell_outputs(root) == reference

    # 3. --ray-address auto (Ray finds the cluster from its temp folder's ray_current_cluster)
    auto = grid(tmp_path / "fast.yaml", "--output", tmp_path / "auto", "--cache", tmp_path / "c2", "--executor",
                "ray", "--ray-address", "auto", env={**env, "RAY_TMPDIR": str(cluster["temp_dir"])})
    assert auto.returncode == 0, auto.stdout + auto.stderr
    assert "4 cells: 4 run now" in auto.stdout
    assert cell_outputs(tmp_path / "auto") == reference


def test_a_token_authenticated_cluster_is_joined_by_address(world, token_cluster, tmp_path, monkeypatch):
    """`ray start --head` uses the local token when RAY_AUTH_MODE is unset; Ray's driver
    does not for an explicit address, so the grid does (as `ray.init("auto")` does)."""
    data, _ = world
    env = dict(token_cluster["env"])
    # as a user's shell: unset (Ray started in this process, by another test, may have set it)
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    path = write_experiment(tmp_path / "exp.yaml", data, [0, 1], 0.0)
    by_env = grid(path, "--output", tmp_path / "a", "--cache", tmp_path / "c", "--executor", "ray",
                  env={**env, "RAY_ADDRESS": token_cluster["address"]})
    assert by_env.returncode == 0, by_env.stdout + by_env.stderr
    by_option = grid(path, "--output", tmp_path / "b", "--cache", tmp_path / "c", "--executor", "ray",
                     "--ray-address", token_cluster["address"], env=env)
    assert by_option.returncode == 0, by_option.stdout + by_option.stderr
    assert "2 cells: 2 run now" in by_option.stdout
    assert cell_outputs(tmp_path / "a") == cell_outputs(tmp_path / "b") and len(cell_outputs(tmp_path / "a")) == 2


@pytest.mark.parametrize("how", ["option", "environment", "ray-url"])
def test_an_unreachable_cluster_is_one_line_naming_the_address(world, tmp_path, how):
    data, env = world
    path = write_experiment(tmp_path / "exp.yaml", data, [0], 0.0)
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    if how == "ray-url":
        address = "ray://" + address
    args = ["--ray-address", address] if how != "environment" else []
    result = grid(path, "--output", tmp_path / "out", "--executor", "ray", *args,
                  env={**env, **({"RAY_ADDRESS": address} if how == "environment" else {})})
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: no Ray cluster answers at {address} (")
    assert not (tmp_path / "out" / "stard").exists()  # no cell started


def test_workers_with_a_running_cluster_is_refused(world, tmp_path):
    data, env = world
    path = write_experiment(tmp_path / "exp.yaml", data, [0], 0.0)
    result = grid(path, "--output", tmp_path / "out", "--executor", "ray", "--workers", "2", "--ray-address",
                  "127.0.0.1:6399", env=env)
    assert result.returncode == 2
    assert "--workers sets the CPUs of a Ray cluster started here" in result.stderr
