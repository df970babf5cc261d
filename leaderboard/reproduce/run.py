"""How ``leaderboard reproduce`` runs a submission's recorded command in its isolated
environment (:mod:`.env`): the command's own words less what a reproduction
replaces (``--data-dir``, ``--output``) or never wants (``--yes``: a reproduction spends no
money; the progress switch), a new empty ``STATBENCH_CACHE`` (a cached run would reproduce
nothing; downloaded weights and frozen pools are shared), the working folder a new empty one
(nothing of the caller's folder on the path), and a CPU budget: ``RLIMIT_CPU`` on the process
(and each it starts), and three times the budget on the clock."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
from pathlib import Path

from statbench.commands.cli import run
from statbench.leaderboard.reproduce.env import clean_environ, last_line
from statbench.leaderboard.verify.claims import command_words
from statbench.storage.paths import CACHE_ENV, DATA_ENV, cache_root, data_root

#: a re-run may take this many times its CPU budget on the clock (waiting is not free either)
WALL_FACTOR = 3
#: the cache folders a re-run shares with this one: downloaded weights and frozen pools (data,
#: checksummed where used); never runs, indexes or trained models
SHARED_CACHE = ("hf", "pools")
#: what a python in the isolated environment runs for statbench's command line
CLI = "import sys; sys.argv[0] = 'statbench'; from statbench.commands.cli import main; main()"
PROBE = "from statbench.leaderboard.reproduce.probe import main; main()"


class NotAttempted(Exception):
    """A submission that cannot be a fair re-run here; ``reason``: one line."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def run_environ(work: Path) -> dict[str, str]:
    """The variables of a re-run: a new empty cache (sharing only downloaded weights and
    pools), the data root this process uses (its default follows the cache), no spending."""
    cache = work / "cache"
    cache.mkdir()
    for name in SHARED_CACHE:
        shared = cache_root() / name
        if shared.is_dir():
            (cache / name).symlink_to(shared.resolve(), target_is_directory=True)
    return clean_environ(**{CACHE_ENV: str(cache), DATA_ENV: str(data_root().resolve())})


def _option_arity() -> dict[str, bool]:
    """``statbench run``'s options -> whether each takes a value (from the command itself)."""
    arity = {}
    for param in run.params:
        takes = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
        for name in [*param.opts, *param.secondary_opts]:
            arity[name] = takes
    return arity


#: options dropped from the recorded command (replaced, or never wanted in a reproduction)
_DROPPED = {"--data-dir", "--output", "--yes", "--progress", "--no-progress"}


def rerun_words(command: str) -> list[str] | None:
    """The recorded ``statbench run ...`` command as ``run`` words, without ``--data-dir``,
    ``--output``, ``--yes`` and the progress switch (each option's value, whatever it
    reads like, stays with it); None when it is not a ``statbench run`` command line."""
    words = command_words(command)
    if words is None:
        return None
    arity = _option_arity()
    out, i = ["run"], 1
    while i < len(words):
        word = words[i]
        name, eq, _ = word.partition("=")
        takes_value = arity.get(name if eq else word, False) and not eq
        if (name if eq else word) not in _DROPPED:
            out.append(word)
            if takes_value and i + 1 < len(words):
                out.append(words[i + 1])
        i += 2 if takes_value else 1
    return out


def task_word(words: list[str]) -> str | None:
    """The value of ``--task`` in ``run`` words."""
    for i, word in enumerate(words):
        if word == "--task" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--task="):
            return word.partition("=")[2]
    return None


def probe(env, work: Path, variables: dict, task: str, data_dir: Path | None, pool: str | None,
          budget: int = 1800) -> dict:
    """What :mod:`.probe` answers in the environment (the plugins it sees, the
    task's data facts), checked for shape, under the same CPU budget (seconds) as the run;
    :class:`NotAttempted` when it gives none."""
    out = work / "probe.json"
    command = [str(env.python), "-I", "-c", _limited(PROBE, budget), str(out), task]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    if pool is not None:
        command += ["--pool", pool]
    try:
        done = subprocess.run(command, cwd=work, env=variables, capture_output=True, text=True, check=False,
                              timeout=budget * WALL_FACTOR)
    except subprocess.TimeoutExpired:
        raise NotAttempted(f"over the CPU budget ({_duration(budget)}): statbench in the isolated environment did "
                           f"not answer in {_duration(budget * WALL_FACTOR)} (loading the plugins and the data)"
                           ) from None
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise NotAttempted(f"over the CPU budget ({_duration(budget)}) before the run (loading the plugins and the "
                           "data)")
    if done.returncode != 0 or not out.is_file():
        raise NotAttempted(f"statbench does not start in the isolated environment: "
                           f"{last_line(done.stderr) or f'exit code {done.returncode}'}")
    try:
        answer = json.loads(out.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise NotAttempted(f"statbench in the isolated environment gave no answer that reads: {exc}") from None
    if not _probe_shape(answer):
        raise NotAttempted("statbench in the isolated environment gave an answer of another shape")
    return answer


def _probe_shape(answer) -> bool:
    text = (str, type(None))
    plugin_keys = ("plugin", "distribution", "location", "version", "error")
    data_keys = ("checksum", "version", "pool_sha256", "problem")
    return (isinstance(answer, dict) and isinstance(answer.get("statbench"), str)
            and isinstance(answer.get("plugins"), list)
            and all(isinstance(p, dict) and isinstance(p.get("plugin"), str)
                    and all(isinstance(p.get(k), text) for k in plugin_keys) for p in answer["plugins"])
            and isinstance(answer.get("data"), dict)
            and all(isinstance(answer["data"].get(k), text) for k in data_keys))


def run_command(env, work: Path, variables: dict, words: list[str], data_dir: Path | None, output: Path, budget: int):
    """Run the command under the CPU budget (seconds); None when it finished, else the verdict."""
    argv = [*words, *(["--data-dir", str(data_dir)] if data_dir is not None else []), "--output", str(output),
            "--no-progress"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen([str(env.python), "-I", "-c", _limited(CLI, budget), *argv], cwd=work, env=variables,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    minutes = _duration(budget)
    try:
        _, stderr = process.communicate(timeout=budget * WALL_FACTOR)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        why = f"over the CPU budget ({minutes}): still running after {_duration(budget * WALL_FACTOR)} on the clock"
        return "not attempted", why, None, None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with contextlib.suppress(ProcessLookupError):  # what it left running
        os.killpg(process.pid, signal.SIGKILL)
    code = process.returncode
    if code in (-signal.SIGXCPU, -signal.SIGKILL) and used >= budget - 1 or code != 0 and used >= budget:
        return "not attempted", f"over the CPU budget ({minutes})", None, None
    if code < 0:
        name = signal.Signals(-code).name
        why = f"the re-run was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
        return "not attempted", why, None, None
    if code != 0:
        line = last_line(stderr).removeprefix("Error: ")
        return "not reproduced", f"the recorded command failed here: {line or f'exit code {code}'}", None, None
    return None


def _limited(code: str, seconds: int) -> str:
    """``code`` (a ``python -c`` program) that first limits its own CPU time to ``seconds``
    (``RLIMIT_CPU``: SIGXCPU, then SIGKILL 5 s later; each process it starts inherits it)."""
    return f"import resource\nresource.setrlimit(resource.RLIMIT_CPU, ({seconds}, {seconds + 5}))\n{code}"


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"
