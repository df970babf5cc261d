"""Issue 15's fixed costs, as ratios, in one run (absolute wall times printed alongside).

- cached vs cold STARD BM25 run (``statbench run``, fresh cache; run.trec sha256 checked);
- ``statbench evaluate`` vs the plain ``ir_measures`` CLI on the same qrels and run;
- text analysis with 1 vs 2 processes (STATBENCH_WORKERS) on STARD and on the simulated
  UK real layout;
- peak RSS of loading STARD x8 and the simulated UK real layout (124,796 passages, about
  471 MB), as a multiple of the corpus file;
- the leaderboard's build time per result (N sample results).

Ratios are what count (2 shared cores here); run it with ``nice`` when the machine is busy.

    nice -n 10 python bench/overheads.py --stard ../shared/data/stard --uk-eval \
        ../shared/data/uk_statuterank/eval_statutory_100queries_approved.jsonl \
        --work /tmp/overheads --output bench/results/overheads.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

MEASURES = ["R@5", "R@10", "R@20", "R@30", "R@50", "R@100", "R@200", "RR@3", "RR@5", "RR@10"]
UK_PASSAGES, UK_BYTES = 124_796, 471_000_000


def wall(cmd: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def median_wall(cmd, repeat: int, env=None) -> float:
    return statistics.median(wall(cmd, env) for _ in range(repeat))


def statbench(*args) -> list[str]:
    return [sys.executable, "-m", "statbench.cli", *args]


def runs(stard: Path, work: Path, repeat: int) -> dict:
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {"STATBENCH_CACHE": str(cache)}
    run = statbench("run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard), "--no-progress")
    cold = wall([*run, "--output", str(work / "cold")], env)
    cached = median_wall([*run, "--output", str(work / "cached")], repeat, env)
    sha = {name: hashlib.sha256((work / name / "run.trec").read_bytes()).hexdigest() for name in ("cold", "cached")}
    qrels, run_file = work / "cached" / "qrels.trec", work / "cached" / "run.trec"
    irm = median_wall([str(Path(sys.executable).with_name("ir_measures")), str(qrels), str(run_file), *MEASURES], repeat)
    ev = median_wall(statbench("evaluate", "--task", "stard", "--data-dir", str(stard), str(run_file)), repeat, env)
    return {"cold": cold, "cached": cached, "sha256": sha, "ir_measures": irm, "evaluate": ev}


def uk_layout(eval_set: Path, path: Path) -> Path:
    """A corpus in the real layout with the real one's size: the evaluation set's 300 judged
    passages (content and metadata), repeated with fresh ids until 124,796 passages."""
    if path.is_file() and path.stat().st_size > UK_BYTES * 0.9:
        return path
    chunks = [answer["chunk"] | {"chunk_id": answer["chunk_id"]}
              for line in eval_set.read_text("utf-8").splitlines() if line.strip()
              for answer in json.loads(line)["answers"]]
    target = UK_BYTES // UK_PASSAGES
    with open(path, "w", encoding="utf-8") as out:
        out.write("[\n")
        for i in range(UK_PASSAGES):
            chunk = chunks[i % len(chunks)]
            content = chunk["content"]
            while len(content.encode()) < target - 400:
                content += "\n" + chunk["content"]
            content = content.encode()[: target - 400].decode("utf-8", "ignore")
            meta = {**chunk.get("metadata", {}), "chunk_id": f"sim:{i}", "chunk_position": i % 40}
            out.write(("," if i else "") + json.dumps({"content": content, "metadata": meta}, ensure_ascii=False) + "\n")
        out.write("]\n")
    return path


def stard_x8(stard: Path, work: Path) -> Path:
    folder = work / "stard-x8"
    if not (folder / "corpus.jsonl").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        source = next(p for p in (stard / "corpus.jsonl", stard / "data" / "corpus.jsonl",
                                  stard / "rebuilt" / "corpus.jsonl") if p.is_file())
        lines = source.read_text("utf-8").splitlines()
        with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
            for copy in range(8):
                for line in lines:
                    obj = json.loads(line)
                    if copy:
                        obj["name"] = f"{obj['name']}副本{copy}"
                    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        queries = next(p for p in (stard / "queries.json", stard / "data" / "queries.json") if p.is_file())
        shutil.copy(queries, folder / "queries.json")
    return folder


PEAK = """
import resource, sys, logging
from pathlib import Path
kind, where = sys.argv[1], Path(sys.argv[2])
if kind == "uk":
    from statbench.tasks.ukstat import read_real_corpus
    corpus = read_real_corpus(where)
else:
    from statbench.tasks.stard import Stard
    corpus = Stard().load(where, logging.getLogger("x")).corpus
print(len(corpus), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peak_rss(kind: str, where: Path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", PEAK, kind, str(where)], check=True, capture_output=True, text=True)
    count, peak = out.stdout.split()
    return int(count), int(peak)


def analysis(texts: list[str], language: str) -> dict:
    from statbench.models.analysis import Analyzer, analyse_texts

    out = {}
    for workers in ("1", "2"):
        os.environ["STATBENCH_WORKERS"] = workers
        started = time.perf_counter()
        tokens = analyse_texts(Analyzer(language), texts)
        out[workers] = time.perf_counter() - started
        out[f"tokens{workers}"] = hashlib.sha256(repr(tokens).encode()).hexdigest()
    os.environ.pop("STATBENCH_WORKERS", None)
    return out


def leaderboard(work: Path, sizes=(20, 100)) -> dict:
    from statbench.atomic import write_json
    from statbench.leaderboard.sample import make_results

    import random

    out = {}
    for n in sizes:
        folder = work / f"board-{n}"
        shutil.rmtree(folder, ignore_errors=True)
        rng = random.Random(n)
        for i in range(n):
            per_query = {f"q{q}": {m: round(rng.random(), 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")}
                         for q in range(300)}
            write_json(folder / f"r{i}" / "results.json", make_results(per_query, model=f"m{i}"))
        out[n] = wall(statbench("leaderboard", "build", "--results", str(folder), "--out", str(work / f"site-{n}"),
                                "--no-run-files"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stard", type=Path, required=True)
    parser.add_argument("--uk-eval", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/statbench-overheads"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    lines = ["# Fixed costs (issue 15)", "", f"`python bench/overheads.py` on {os.cpu_count()} CPUs, "
             f"medians of {args.repeat} (cold run: one).", ""]

    r = runs(args.stard, args.work, args.repeat)
    print(r, flush=True)
    lines += ["| measure | ratio | wall times | acceptance |", "|---|---|---|---|",
              f"| cached / cold STARD BM25 run | {r['cached'] / r['cold']:.3f} | {r['cached']:.2f} s / {r['cold']:.2f} s "
              f"| cached < 2 s, cold < 10 s |",
              f"| statbench evaluate / ir_measures CLI | {r['evaluate'] / r['ir_measures']:.2f} | {r['evaluate']:.2f} s / "
              f"{r['ir_measures']:.2f} s | <= 1.1 |"]

    from statbench.tasks.stard import Stard
    import logging

    stard_texts = [d.text for d in Stard().load(args.stard, logging.getLogger("x")).corpus.values()]
    zh = analysis(stard_texts, "zh")
    uk_path = uk_layout(args.uk_eval, args.work / "corpus_uklegislation.json")
    from statbench.tasks.ukstat import read_real_corpus

    uk_texts = [d.text for d in read_real_corpus(uk_path).values()]
    en = analysis(uk_texts, "en")
    del uk_texts
    print(zh, en, flush=True)
    for label, a in (("STARD (zh)", zh), ("UK simulated (en)", en)):
        same = "identical tokens" if a["tokens1"] == a["tokens2"] else "TOKENS DIFFER"
        lines.append(f"| analysis, 1 / 2 processes, {label} | {a['1'] / a['2']:.2f}x | {a['1']:.1f} s / {a['2']:.1f} s "
                     f"({same}) | >= 1.6x on the UK corpus |")

    x8 = stard_x8(args.stard, args.work)
    n8, peak8 = peak_rss("stard", x8)
    size8 = (x8 / "corpus.jsonl").stat().st_size
    nuk, peakuk = peak_rss("uk", uk_path)
    sizeuk = uk_path.stat().st_size
    lines += [f"| peak RSS / corpus file, STARD x8 ({n8:,} articles) | {peak8 / size8:.2f} | {peak8 / 2**20:.0f} MiB / "
              f"{size8 / 2**20:.0f} MiB | <= 3 |",
              f"| peak RSS / corpus file, UK real layout simulated ({nuk:,} passages) | {peakuk / sizeuk:.2f} | "
              f"{peakuk / 2**20:.0f} MiB / {sizeuk / 2**20:.0f} MiB | <= 3 |"]

    board = leaderboard(args.work)
    (small, t_small), (large, t_large) = sorted(board.items())
    per = (t_large - t_small) / (large - small)
    lines.append(f"| leaderboard build, seconds per result (marginal, {small} -> {large} results) | {per:.3f} s | "
                 f"{t_small:.1f} s / {t_large:.1f} s; 1,000 results ~ {t_small + per * (1000 - small):.0f} s | "
                 "1,000 results < 30 s |")
    lines += ["", f"run.trec sha256: cold {r['sha256']['cold'][:16]}, cached {r['sha256']['cached'][:16]} "
              "(reference f8ee76f17a7b75e4)", ""]
    text = "\n".join(lines)
    print(text)
    if args.output:
        args.output.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
