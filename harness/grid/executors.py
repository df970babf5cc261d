"""Where cells run: local worker processes, a Ray cluster, or Slurm job arrays (submitit).

Every executor runs the same :func:`~statbench.grid.cellrun.run_cell` on each job and
reports through ``events(cell_id, state, outcome)`` (states: ``running``, ``done``,
``failed``); it returns every job's :class:`CellOutcome`, whatever happened to the others.
Ray and submitit are imported only by their executor."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from statbench.errors import StatbenchError, one_line
from statbench.grid.cellrun import CellJob, CellOutcome, run_cell
from statbench.grid.spec import Resources

Events = Callable[[str, str, "CellOutcome | None"], None]
Work = Sequence[tuple[CellJob, Resources]]


def _report(events: Events, outcome: CellOutcome) -> CellOutcome:
    events(outcome.cell_id, "done" if outcome.returncode == 0 else "failed", outcome)
    return outcome


def _lost(job: CellJob, message: str) -> CellOutcome:
    return CellOutcome(cell_id=job.cell_id, returncode=-1, seconds=0.0, error=message)


def visible_gpus() -> list[str]:
    """The GPUs local cells may use: ``CUDA_VISIBLE_DEVICES``, else what ``nvidia-smi -L`` lists."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is not None:
        return [g for g in value.split(",") if g.strip() and g.strip() != "-1"]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(listed.splitlines()) if line.startswith("GPU ")]


class LocalExecutor:
    """N worker slots on this machine: a cell takes as many slots as it declares CPUs
    (capped at N), and a GPU cell one of the visible GPUs (``CUDA_VISIBLE_DEVICES`` set
    for it), so the machine is never oversubscribed. ``workers=1`` runs cells one by one."""

    name = "local"

    def __init__(self, workers: int | None = None, gpus: list[str] | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.gpus = visible_gpus() if gpus is None else list(gpus)

    def run(self, work: Work, events: Events) -> list[CellOutcome]:
        lock = threading.Condition()
        free = {"cpus": self.workers, "gpus": list(self.gpus)}

        def one(job: CellJob, needs: Resources) -> CellOutcome:
            cpus = min(needs.cpus, self.workers)
            if needs.gpus > len(self.gpus):
                return _report(events, _lost(job, f"needs {needs.gpus} GPU(s); this machine has {len(self.gpus)}"))
            with lock:
                lock.wait_for(lambda: free["cpus"] >= cpus and len(free["gpus"]) >= needs.gpus)
                free["cpus"] -= cpus
                taken = [free["gpus"].pop(0) for _ in range(needs.gpus)]
            try:
                if needs.gpus:
                    job = CellJob(job.cell_id, job.argv, job.log_path, job.cwd,
                                  {**job.env, "CUDA_VISIBLE_DEVICES": ",".join(taken)})
                events(job.cell_id, "running", None)
                return _report(events, run_cell(job))
            finally:
                with lock:
                    free["cpus"] += cpus
                    free["gpus"].extend(taken)
                    lock.notify_all()

        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(lambda item: one(*item), work))


#: seconds to wait for a TCP connection to a cluster's address before giving up on it
PROBE_SECONDS = 3.0


def ray_address(given: str | None) -> str | None:
    """The cluster to join: ``--ray-address``, else Ray's own ``RAY_ADDRESS`` (what
    ``ray job submit`` sets), else None (start a local cluster)."""
    return given or os.environ.get("RAY_ADDRESS") or None


def probe_address(address: str, seconds: float = PROBE_SECONDS) -> None:
    """Refuse, in one line and within ``seconds``, an address nothing listens on
    (``HOST:PORT`` of a head's GCS, or ``ray://HOST:PORT``); ``auto`` is left to Ray,
    which finds the cluster started on this machine."""
    import socket

    if address == "auto" or address.startswith("local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise StatbenchError(f"--ray-address {address!r}: give HOST:PORT (the head's GCS port, 6379 unless "
                             "`ray start --head --port` said otherwise), ray://HOST:10001 or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds):
            pass
    except OSError as exc:
        raise StatbenchError(f"no Ray cluster answers at {address} ({exc.strerror or exc}): start one with "
                             "`ray start --head --port PORT`, or check the address") from None


def _token_auth_as_ray_start_does() -> None:
    """Use the local Ray token (``~/.ray/auth_token``, ``RAY_AUTH_TOKEN[_PATH]``) when
    ``RAY_AUTH_MODE`` is unset, as ``ray start --head`` and ``ray.init("auto")`` do: Ray
    does not for an explicit address, so a cluster that ``ray start`` put in token mode
    refused ``--ray-address HOST:PORT`` and ``RAY_ADDRESS`` ("Authentication token is
    missing"). A token sent to a cluster without token authentication is ignored."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


class RayExecutor:
    """Each cell a Ray task declaring its CPUs, GPUs and memory. A task whose worker dies
    (killed, out of memory, node lost) is retried by Ray on another worker up to
    ``max_retries`` times; cells resume from the statbench cache, which must be on storage
    every node sees (as must the output root).

    With an address (``--ray-address``, or ``RAY_ADDRESS``) the grid joins that cluster
    and asks it for nothing but tasks (Ray refuses ``num_cpus`` when joining: the cluster's
    nodes declare their own); without one it starts a local cluster of ``num_cpus`` CPUs
    and stops it at the end."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, max_retries: int = 3):
        self.address, self.num_cpus, self.max_retries = ray_address(address), num_cpus, max_retries
        if self.address and num_cpus is not None:
            raise StatbenchError(f"--workers sets the CPUs of a Ray cluster started here; the cluster at "
                                 f"{self.address} has its own (leave --workers out)")

    def _init(self, ray) -> None:
        options = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
        if not self.address:
            ray.init(num_cpus=self.num_cpus or os.cpu_count(), **options)
            return
        probe_address(self.address)
        _token_auth_as_ray_start_does()
        try:
            ray.init(address=self.address, **options)
        except Exception as exc:  # noqa: BLE001 - Ray's own reasons (auth token, version) in one line
            raise StatbenchError(f"cannot join the Ray cluster at {self.address}: {one_line(exc)}") from None

    def run(self, work: Work, events: Events) -> list[CellOutcome]:
        try:
            import ray
        except ImportError:
            raise StatbenchError("--executor ray needs Ray: pip install 'statbench[ray]'") from None
        started_here = not ray.is_initialized()
        if started_here:
            self._init(ray)
        try:
            remote = ray.remote(run_cell)
            pending = {}
            for job, needs in work:
                options = {"num_cpus": needs.cpus, "num_gpus": needs.gpus, "max_retries": self.max_retries,
                           "retry_exceptions": False}
                if needs.memory_gb:
                    options["memory"] = int(needs.memory_gb * 2**30)
                pending[remote.options(**options).remote(job)] = job
                events(job.cell_id, "submitted", None)
            outcomes = []
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(ready[0])
                try:
                    outcome = ray.get(ready[0])
                except Exception as exc:  # noqa: BLE001 - a task lost beyond its retries
                    outcome = _lost(job, f"ray: {one_line(exc)}")
                outcomes.append(_report(events, outcome))
            return outcomes
        finally:
            if started_here:
                ray.shutdown()


class SlurmExecutor:
    """Cells as Slurm job arrays through submitit (one array per distinct resource need),
    at most ``array_parallelism`` running at once. A job pre-empted or timed out is
    requeued and resumes from the statbench cache (``slurm_task.CellTask`` is
    checkpointable). ``local=True`` uses submitit's LocalExecutor (no Slurm)."""

    name = "slurm"

    def __init__(self, folder: Path, partition: str | None = None, array_parallelism: int | None = None,
                 additional: dict | None = None, local: bool = False):
        self.folder, self.partition, self.local = Path(folder), partition, local
        self.array_parallelism, self.additional = array_parallelism, dict(additional or {})

    def run(self, work: Work, events: Events) -> list[CellOutcome]:
        try:
            import submitit
        except ImportError:
            raise StatbenchError("--executor slurm needs submitit: pip install 'statbench[slurm]'") from None
        from statbench.grid.slurm_task import CellTask  # inside: it imports submitit (optional, heavy)

        groups: dict[Resources, list[CellJob]] = {}
        for job, needs in work:
            groups.setdefault(needs, []).append(job)
        submitted = []
        for needs, jobs in groups.items():
            executor = self._executor(submitit, needs)
            for job, handle in zip(jobs, executor.map_array(CellTask(), jobs)):
                submitted.append((handle, job))
                events(job.cell_id, "submitted", None)
        by_handle = {id(handle): job for handle, job in submitted}
        outcomes = []
        for handle in submitit.helpers.as_completed([h for h, _ in submitted], poll_frequency=1):
            job = by_handle[id(handle)]
            try:
                outcome = handle.result()
            except Exception as exc:  # noqa: BLE001 - failed, cancelled, timed out beyond requeues
                outcome = _lost(job, f"slurm job {handle.job_id}: {one_line(exc)}")
            outcomes.append(_report(events, outcome))
        return outcomes

    def _executor(self, submitit, needs: Resources):
        if self.local:
            executor = submitit.LocalExecutor(folder=str(self.folder))
            executor.update_parameters(timeout_min=needs.time_min, gpus_per_node=needs.gpus,
                                       cpus_per_task=needs.cpus)
            return executor
        executor = submitit.AutoExecutor(folder=str(self.folder), cluster="slurm")
        params = {"timeout_min": needs.time_min, "cpus_per_task": needs.cpus, "tasks_per_node": 1, "nodes": 1,
                  "slurm_additional_parameters": self.additional}
        if needs.gpus:
            params["gpus_per_node"] = needs.gpus
        if needs.memory_gb:
            params["mem_gb"] = needs.memory_gb
        if self.partition:
            params["slurm_partition"] = self.partition
        if self.array_parallelism:
            params["slurm_array_parallelism"] = self.array_parallelism
        executor.update_parameters(**params)
        return executor


def make_executor(name: str, *, root: Path, workers: int | None = None, ray_address: str | None = None,
                  slurm_partition: str | None = None, slurm_array_parallelism: int | None = None,
                  slurm_additional: dict | None = None):
    if name == "sequential":
        return LocalExecutor(workers=1)
    if name == "local":
        return LocalExecutor(workers=workers)
    if name == "ray":
        return RayExecutor(address=ray_address, num_cpus=workers)
    if name in ("slurm", "slurm-local"):
        return SlurmExecutor(Path(root) / ".grid" / "slurm", slurm_partition, slurm_array_parallelism,
                             slurm_additional, local=name == "slurm-local")
    raise StatbenchError(f"unknown executor {name!r}; valid choices: local, sequential, ray, slurm, slurm-local")
