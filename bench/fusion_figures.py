"""Issue 23 §1: BM25 + MiniLM (all-MiniLM-L6-v2, zero-shot) fused by RRF on the UK statutes
and on STARD (5 folds), with the paired test against each component; writes
``bench/results/fusion/TASK/bm25+minilm-rrf/`` (results.json, run.trec.gz, run.log) and
``bench/results/fusion/README.md``.

Components are committed output folders (their ``run.trec`` or ``run.trec.gz`` checked against
their results' sha256 by ``statbench fuse``); STARD's MiniLM run is made here when missing
(about 40 min on 2 busy CPUs; ``STATBENCH_CACHE`` keeps it). Run from the repository root:

    python bench/fusion_figures.py [--task ukstat] [--task stard]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path("bench/results/fusion")
DATA = {"ukstat": "../shared/data/uk_statuterank", "stard": "../shared/data/stard"}
COMPONENTS = {
    "ukstat": {"bm25": Path("bench/results/lexical/ukstat/bm25-default"),
               "minilm": Path("bench/results/ukstat-minilm-zeroshot")},
    "stard": {"bm25": Path("bench/results/lexical/stard/bm25-default"),
              "minilm": OUT / "stard" / "minilm"},
}
MEASURES = {"ukstat": ["nDCG@10", "MRR@10", "R@10", "R@100"], "stard": ["R@10", "R@100", "MRR@10", "R@200"]}
STATBENCH = [sys.executable, "-m", "statbench.commands.cli"]


def sh(*args, capture=False) -> str:
    print("+", " ".join(map(str, args)), flush=True)
    done = subprocess.run([*STATBENCH, *map(str, args)], cwd=ROOT, check=True, text=True,
                          capture_output=capture)
    return done.stdout if capture else ""


def gzip_run(folder: Path) -> None:
    """run.trec -> run.trec.gz (reproducible bytes, as the other committed runs); qrels.trec dropped."""
    plain = ROOT / folder / "run.trec"
    with open(plain.with_suffix(".trec.gz"), "wb") as handle, \
            gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=9) as gz:
        gz.write(plain.read_bytes())
    plain.unlink()
    (ROOT / folder / "qrels.trec").unlink(missing_ok=True)


def ensure_stard_minilm() -> None:
    target = COMPONENTS["stard"]["minilm"]
    if (ROOT / target / "results.json").is_file():
        return
    sh("run", "--task", "stard", "--model", "minilm", "--data-dir", DATA["stard"], "--output", target, "--no-progress")
    gzip_run(target)


def figures(results: Path, measures: list[str]) -> dict[str, float]:
    aggregate = json.loads((ROOT / results / "results.json").read_text())["aggregate"]
    return {m: aggregate[m]["mean"] for m in measures}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", action="append", choices=sorted(COMPONENTS))
    tasks = parser.parse_args().task or sorted(COMPONENTS)
    intro = ("Written by `python bench/fusion_figures.py`: each fused row is `statbench fuse` of two committed "
             "output folders (ranx RRF, k=60, fold by fold on STARD), and B is tested against each component "
             "with `statbench compare` (Wilcoxon signed-rank, paired on every query; Holm over the measures "
             "listed; * = significant at 0.05 after Holm). The `fusion` retriever (`statbench run --model fusion "
             "--param runs=bm25,minilm`) gives the same run file, byte for byte (checked on the real UK set with "
             "runs=bm25,tfidf: both sha256 9be2474cec1f...; on STARD with runs=bm25,minilm, 5 folds, reusing the "
             "10 cached component split runs: both 724b69fc4e27...; tests/models/fusion/test_fusion.py checks it on every test run). "
             "STARD's MiniLM component (`bench/results/fusion/stard/minilm`, 62 min on 2 busy CPU cores) gives "
             "exactly the H100 run's figures (`bench/unverified/gpu/stard/minilm`, kept off the boards: no run file).")
    lines = ["# Fusion: BM25 + MiniLM by RRF (issue 23 §1)", "", intro, ""]
    for task in tasks:
        if task == "stard":
            ensure_stard_minilm()
        parts = COMPONENTS[task]
        fused = OUT / task / "bm25+minilm-rrf"
        if (ROOT / fused).exists():
            shutil.rmtree(ROOT / fused)
        sh("fuse", *parts.values(), "--task", task, "--method", "rrf", "--data-dir", DATA[task], "--output", fused)
        gzip_run(fused)
        measures = MEASURES[task]
        rows = {name: figures(path, measures) for name, path in parts.items()}
        rows["RRF(bm25, minilm)"] = figures(fused, measures)
        lines += [f"## {task}", "", "| run | " + " | ".join(measures) + " | results |", "|---|" + "---|" * (len(measures) + 1)]
        for name, values in rows.items():
            where = fused if name.startswith("RRF") else parts[name]
            lines.append(f"| {name} | " + " | ".join(f"{values[m]:.4f}" for m in measures) + f" | `{where}` |")
        lines += ["", "Paired tests of the fused run (B) against each component (A):", ""]
        lines += ["| A | measure | A | B | B - A | 95% CI | wins/ties/losses | p (Holm) |", "|---|---|---|---|---|---|---|---|"]
        for name, path in parts.items():
            args = ["compare", path / "results.json", fused / "results.json", "--json"]
            for m in measures:
                args += ["--measure", m]
            for test in json.loads(sh(*args, capture=True))["comparisons"]:
                lines.append(_row(name, test))
        lines.append("")
    (ROOT / OUT / "README.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT / 'README.md'}")


def _row(name: str, t: dict) -> str:
    mark = " *" if t["significant"] else ""
    return (f"| {name} | {t['measure']} | {t['mean_baseline']:.4f} | {t['mean_system']:.4f} | {t['mean_diff']:+.4f}{mark} | "
            f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}] | {t['wins']}/{t['ties']}/{t['losses']} | {t['p_holm']:.4f} |")


if __name__ == "__main__":
    os.environ.setdefault("STATBENCH_CACHE", os.path.expanduser("~/.cache/statbench"))
    main()
