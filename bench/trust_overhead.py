"""What the checks that keep figures trustworthy cost inside one run.

Runs one model on one task in this process with a fresh cache (cold), then again (cached),
and times, inside those same runs, every check added for trustworthy figures: the task
identity checksums (corpus, queries), the loaded-data checks, the ranking checks, cache
manifests (sealing on write, verification on read) and the staged output swap. Reported
as shares of each run's wall time, so a noisy machine changes little.

    python bench/trust_overhead.py --task stard --data-dir ../shared/data/stard \
        --output bench/results/trust_overhead.md
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from statbench.data.atomic import write_text

#: (module, attribute path, label): the new checks, timed where they are called.
PROBES = [
    ("statbench.run.runcache", "corpus_checksum", "corpus checksum"),
    ("statbench.run.runcache", "queries_checksum", "queries + qrels checksum"),
    ("statbench.run.runner", "check_task_data", "loaded-data checks"),
    ("statbench.run.runner", "check_rankings", "ranking checks"),
    ("statbench.storage.cache", "CacheEntry.verify", "cache manifest verification"),
    ("statbench.storage.cache", "CacheEntry._seal", "cache manifest sealing"),
    ("statbench.run.outputs", "OutputSet.check", "output folder check"),
    ("statbench.run.outputs", "OutputSet._swap_in", "output swap"),
]


def instrument(spent: dict[str, float]):
    import importlib

    for module_name, attr, label in PROBES:
        module = importlib.import_module(module_name)
        owner, _, name = attr.rpartition(".")
        target = getattr(module, owner) if owner else module
        original = getattr(target, name)

        def timed(*args, _original=original, _label=label, **kwargs):
            t0 = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - t0

        setattr(target, name, functools.wraps(original)(timed))


def one_run(task: str, model: str, data_dir: Path, output: Path) -> float:
    from statbench.run.runner import execute
    from statbench.run.request import RunRequest

    t0 = time.perf_counter()
    execute(RunRequest(task=task, model=model, data_dir=data_dir, output=output),
            logging.getLogger("bench"), lambda description, total=None: (lambda n=1: None))
    return time.perf_counter() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="stard")
    parser.add_argument("--model", default="bm25")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path, help="write the table here (Markdown)")
    args = parser.parse_args(argv)

    rows = []
    spent: dict[str, float] = {}
    instrument(spent)
    with tempfile.TemporaryDirectory(prefix="statbench-bench-") as tmp:
        os.environ["STATBENCH_CACHE"] = str(Path(tmp) / "cache")
        for phase in ("cold", "cached"):
            spent.clear()
            wall = one_run(args.task, args.model, args.data_dir, Path(tmp) / f"out-{phase}")
            rows.append((phase, wall, dict(spent)))

    labels = [label for _, _, label in PROBES]
    lines = [f"# Cost of the trustworthy-figures checks: {args.model} on {args.task}", "",
             f"`{' '.join(['python', 'bench/trust_overhead.py', *(argv if argv is not None else sys.argv[1:])])}`",
             "", "| check | " + " | ".join(f"{phase} (s) | share of {phase} run" for phase, _, _ in rows) + " |",
             "|---|" + "---:|---:|" * len(rows)]
    for label in labels:
        cells = []
        for _, wall, spent in rows:
            cells += [f"{spent.get(label, 0.0):.3f}", f"{100 * spent.get(label, 0.0) / wall:.1f}%"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    totals = []
    for _, wall, spent in rows:
        total = sum(spent.values())
        totals += [f"**{total:.3f}**", f"**{100 * total / wall:.1f}%**"]
    lines.append("| **all checks** | " + " | ".join(totals) + " |")
    lines.append("| run wall time | " + " | ".join(f"{wall:.2f} |" for _, wall, _ in rows) + " |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.output:
        write_text(args.output, table)
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
