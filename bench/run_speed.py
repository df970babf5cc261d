"""The run path's four figures (issue 37), as whole processes: ``statbench run`` of STARD BM25
cold (empty cache), warm (everything cached), its cold peak RSS, and how much slower the
Lucene backend is cold.

Each round runs, one after another: a cold default run (a fresh ``STATBENCH_CACHE``), then
``--warm`` warm runs on that cache, then a cold Lucene run (``--param backend=lucene``, a fresh
cache); with ``--baseline DIR`` (a source tree of another version, e.g. ``git archive HEAD``
unpacked) the same three for that tree in the same round, so both see the same machine load.
Every figure is the median over the rounds; the machine's 1-minute load average is taken
before and after. Wall and CPU seconds and peak RSS are the process's own (``wait4``: the
analysis workers it forks included in CPU, not in RSS). Every default run's ``run.trec``
must have one sha256 (and the baseline's the same): the figures are only comparable then.

    python bench/run_speed.py --data-dir ../shared/data/stard --rounds 5 \\
        --output bench/results/run_speed.md
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: a ``statbench`` whose package folders are those of another source tree: the editable
#: install's finder maps statbench.* to folders; the launcher points that mapping elsewhere
LAUNCHER = """
import sys
import __editable___statbench_0_1_0_finder as finder
root, here = sys.argv.pop(1), {here!r}
finder.MAPPING.update({{name: path.replace(here, root, 1) for name, path in finder.MAPPING.items()}})
from statbench.commands.cli import main
sys.argv[0] = "statbench"
main()
"""


def run_once(code: str | None, args: list[str], cache: Path, output: Path) -> dict:
    """One whole ``statbench run`` process: wall, CPU, peak RSS, run file sha256."""
    env = {**os.environ, "STATBENCH_CACHE": str(cache)}
    if code is None:
        command = [sys.executable, "-c", "from statbench.commands.cli import main; main()"]
    else:
        command = [sys.executable, "-c", LAUNCHER.format(here=str(ROOT)), code]
    command += ["run", *args, "--no-progress", "--output", str(output)]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[3:] if code else command[2:])} failed ({process.returncode}):\n{stderr}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "sha256": hashlib.sha256((output / "run.trec").read_bytes()).hexdigest()}


def one_round(code: str | None, args: list[str], warm: int, work: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"cold": [], "warm": [], "lucene": []}
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    out["cold"].append(run_once(code, args, cache, work / "out"))
    for _ in range(warm):
        out["warm"].append(run_once(code, args, cache, work / "out"))
    shutil.rmtree(cache)
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    out["lucene"].append(run_once(code, [*args, "--param", "backend=lucene"], cache, work / "out-lucene"))
    shutil.rmtree(cache)
    return out


def figures(runs: dict[str, list[dict]]) -> dict[str, float]:
    med = lambda kind, what: statistics.median(r[what] for r in runs[kind])  # noqa: E731
    return {"cold": med("cold", "wall"), "cold_cpu": med("cold", "cpu"), "warm": med("warm", "wall"),
            "warm_cpu": med("warm", "cpu"), "rss": med("cold", "rss_mib"), "lucene": med("lucene", "wall"),
            "ratio": med("lucene", "wall") / med("cold", "wall")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="STARD's data folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", type=int, default=3, help="warm runs per round")
    parser.add_argument("--baseline", type=Path, help="source tree of the version to compare with")
    parser.add_argument("--output", type=Path, help="markdown file to write (else printed only)")
    options = parser.parse_args()
    args = ["--task", "stard", "--model", "bm25", "--data-dir", str(options.data_dir.resolve())]
    versions = {"this tree": None, **({"baseline": str(options.baseline.resolve())} if options.baseline else {})}
    runs = {name: {"cold": [], "warm": [], "lucene": []} for name in versions}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="run-speed-") as work:
        for index in range(options.rounds):
            for name, code in versions.items():
                done = one_round(code, args, options.warm, Path(work))
                for kind, items in done.items():
                    runs[name][kind].extend(items)
            print(f"round {index + 1}/{options.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    load_after = os.getloadavg()
    shas = {r["sha256"] for name in runs for kind in ("cold", "warm") for r in runs[name][kind]}
    if len(shas) != 1:
        raise SystemExit(f"the default runs wrote {len(shas)} different run files: {sorted(shas)}")
    text = report(options, versions, {name: figures(r) for name, r in runs.items()}, shas.pop(), load_before,
                  load_after)
    print(text)
    if options.output:
        options.output.write_text(text, "utf-8")


def report(options, versions, figs: dict[str, dict], sha: str, before, after) -> str:
    lines = [
        "# Run speed: STARD BM25, whole `statbench run` processes",
        "",
        f"`statbench run --task stard --model bm25` (run.trec sha256 {sha[:16]}…, identical in every default run). "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}. "
        f"{options.rounds} interleaved rounds (cold, {options.warm} warm, cold Lucene"
        f"{', for each version in turn' if len(versions) > 1 else ''}); medians.",
        "",
        "| version | cold wall (s) | cold CPU (s) | warm wall (s) | warm CPU (s) | cold peak RSS (MiB) "
        "| Lucene cold wall (s) | Lucene / default, cold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, f in figs.items():
        lines.append(f"| {name} | {f['cold']:.2f} | {f['cold_cpu']:.2f} | {f['warm']:.3f} | {f['warm_cpu']:.3f} "
                     f"| {f['rss']:.0f} | {f['lucene']:.2f} | {f['ratio']:.2f}× |")
    if "baseline" in figs:
        new, old = figs["this tree"], figs["baseline"]
        lines += ["", f"This tree / baseline: cold wall {new['cold'] / old['cold']:.2f}×, warm wall "
                      f"{new['warm'] / old['warm']:.2f}×, cold peak RSS {new['rss'] / old['rss']:.2f}×."]
    lines += [
        "",
        "- Goals (issue 37): warm ≤ 0.30 s, cold ≤ 3.0 s, cold peak RSS ≤ 320 MiB, Lucene ≥ 5× the default's "
        "cold wall.",
        "- *CPU*: user + system seconds of the process and the analysis workers it forks (on a loaded machine "
        "wall times stretch, CPU times much less).",
        f"- 1-minute load average {before[0]:.2f} before and {after[0]:.2f} after the runs (other work on the "
        "machine inflates every wall time; compare versions within one table).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
