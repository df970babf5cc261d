"""Wall time of one grid run sequentially, with local workers and on a local Ray cluster.

Each executor runs the whole grid from an empty cache and an empty output root (so each
does all the work), then the figures and run files of every cell are compared across
executors (they must be byte-identical), and the grid is invoked a second time on the
Ray outputs (it must run no cell). Times are reported as ratios to the sequential run.

    nice -n 10 python bench/grid_executors.py reproductions/lexical.yaml --root /tmp/grid/bench \\
        --workers 2 --output bench/results/grid_executors.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

EXECUTORS = ("sequential", "local", "ray")


def run_grid(experiment: Path, root: Path, executor: str, workers: int, check: bool) -> tuple[float, int, str]:
    out, cache = root / executor / "out", root / executor / "cache"
    args = [sys.executable, "-m", "statbench.commands.cli", "grid", str(experiment), "--output", str(out), "--cache", str(cache),
            "--executor", executor, "--workers", str(workers), "--no-live"]
    if check:
        args.append("--check")
    started = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    (root / executor).mkdir(parents=True, exist_ok=True)
    (root / executor / "grid.log").write_text(proc.stdout + proc.stderr)
    return seconds, proc.returncode, proc.stdout + proc.stderr


def cell_files(out: Path) -> dict[str, tuple[str, str]]:
    """cell folder -> (sha256 of run.trec, the figures of results.json as canonical JSON)."""
    found = {}
    for results in sorted(out.glob("*/*/results.json")):
        obj = json.loads(results.read_text())
        figures = json.dumps({k: obj[k] for k in ("aggregate", "per_query", "splits")}, sort_keys=True)
        run = hashlib.sha256((results.parent / "run.trec").read_bytes()).hexdigest()
        found[str(results.parent.relative_to(out))] = (run, hashlib.sha256(figures.encode()).hexdigest())
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", type=Path)
    parser.add_argument("--root", type=Path, default=Path("/tmp/grid/bench"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executors", default=",".join(EXECUTORS))
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    executors = args.executors.split(",")
    times, codes = {}, {}
    for executor in executors:
        shutil.rmtree(args.root / executor, ignore_errors=True)
        print(f"[{executor}] running the grid ...", file=sys.stderr, flush=True)
        times[executor], codes[executor], _ = run_grid(args.experiment, args.root, executor, args.workers,
                                                      check=executor == "ray")
        print(f"[{executor}] {times[executor]:.1f} s, exit code {codes[executor]}", file=sys.stderr, flush=True)
    files = {e: cell_files(args.root / e / "out") for e in executors}
    base = files[executors[0]]
    identical = {e: files[e] == base for e in executors}
    again, again_code, again_text = run_grid(args.experiment, args.root, executors[-1], args.workers, check=True)
    summary = json.loads((args.root / executors[-1] / "out" / "summary.json").read_text())
    worked = sum(1 for c in summary["cells"] if c["attempts"])
    lines = [
        f"# `statbench grid {args.experiment}`: sequential vs local workers vs Ray", "",
        f"{len(base)} cells; each executor from an empty cache and output root; {args.workers} workers "
        f"(local) / a fresh local Ray cluster with {args.workers} CPUs; machine: {os.cpu_count()} cores shared "
        "with other jobs, runs under `nice -n 10`.", "",
        "| executor | wall time (s) | ratio to sequential | exit code | run files and figures identical to "
        f"{executors[0]} |", "|---|---:|---:|---:|---|",
    ]
    for e in executors:
        lines.append(f"| {e} | {times[e]:.1f} | {times[e] / times[executors[0]]:.2f} | {codes[e]} | "
                     f"{'yes' if identical[e] else 'NO'} ({len(files[e])} cells) |")
    lines += ["", f"Second invocation on the {executors[-1]} outputs: {again:.1f} s, exit code {again_code}, "
              f"{worked} cell(s) run (0 expected: every cell skipped as done).", "",
              "Check (`--check`) of the second invocation:", "", "```", _check_lines(again_text), "```", "",
              "Regenerate: `" + " ".join(["nice -n 10 python bench/grid_executors.py", str(args.experiment),
                                         "--root", str(args.root), "--workers", str(args.workers)])
              + (f" --output {args.output}" if args.output else "") + "`"]
    text = "\n".join(lines) + "\n"
    if args.output:
        args.output.write_text(text)
    print(text)


def _check_lines(text: str) -> str:
    keep = [line for line in text.splitlines() if " OK" in line or "FAIL" in line or "reproduction" in line]
    return "\n".join(keep) or text[-3000:]


if __name__ == "__main__":
    main()
