"""Run one cell's command as a child process, its output in the cell's log file.

The same function runs in a local worker thread, a Ray task and a Slurm job, so a cell
behaves identically everywhere. A crashing cell cannot take the grid down: only its exit
code comes back. The child dies with the process that started it (``PR_SET_PDEATHSIG`` on
Linux): a killed Ray worker or a cancelled Slurm job leaves no orphan writing the cell's
outputs while the retry runs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

#: thread pools a cell's libraries size by these (set to the cell's CPUs unless already set)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "RAYON_NUM_THREADS")


@dataclass(frozen=True)
class CellJob:
    """What a worker needs to run a cell (picklable: it travels to Ray and Slurm workers)."""

    cell_id: str
    argv: tuple[str, ...]
    log_path: str
    cwd: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CellOutcome:
    cell_id: str
    returncode: int
    seconds: float
    #: the last line of the cell's output that starts with "Error:" (or the last line)
    error: str = ""
    host: str = ""
    pid: int = 0


def _die_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: children may outlive a killed worker
        pass


def run_cell(job: CellJob) -> CellOutcome:
    """Run ``job``; its output is appended to ``job.log_path`` (one section per attempt)."""
    log_path = Path(job.log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **job.env}
    started = time.perf_counter()
    with open(log_path, "ab") as log:
        header = (f"=== cell {job.cell_id} on {socket.gethostname()} (worker pid {os.getpid()}) at "
                  f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n$ {' '.join(job.argv)}\n")
        log.write(header.encode())
        log.flush()
        try:
            code = subprocess.call(list(job.argv), cwd=job.cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        except OSError as exc:
            log.write(f"Error: cannot start the cell: {exc}\n".encode())
            code = 127
        seconds = time.perf_counter() - started
        log.write(f"=== exit code {code} after {seconds:.1f} s\n".encode())
    return CellOutcome(cell_id=job.cell_id, returncode=code, seconds=seconds,
                       error="" if code == 0 else _error_line(log_path), host=socket.gethostname(), pid=os.getpid())


def _error_line(log_path: Path) -> str:
    """The attempt's 'Error: ...' line, else its last line of output."""
    try:
        text = log_path.read_bytes()[-20000:].decode("utf-8", "replace")
    except OSError:
        return ""
    section = text.rsplit("=== cell ", 1)[-1].splitlines()[2:-1]
    errors = [line for line in section if line.startswith("Error:")]
    if errors:
        return errors[-1][len("Error:"):].strip()
    lines = [line for line in section if line.strip()]
    return lines[-1].strip() if lines else "no output"
