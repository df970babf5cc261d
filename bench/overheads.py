"""Issue 15's fixed costs, as ratios, in one run (absolute wall and CPU times alongside).

- cold vs cached STARD BM25 run (``statbench run``, a fresh cache; wall and CPU seconds of
  the command; run.trec sha256 checked);
- ``statbench evaluate`` vs the plain ``ir_measures`` CLI on the same qrels and run, run
  alternately (wall and CPU), and their figures compared;
- text analysis with 1 vs 2 processes (STATBENCH_WORKERS) on STARD and on the simulated
  UK real layout;
- peak RSS of loading STARD x8 and the simulated UK real layout (124,796 passages, about
  471 MB), as a multiple of the corpus file, with the memory per article; and the peak RSS
  of a whole BM25 run on STARD x8 (load, index, search, score, write);
- the leaderboard build at 100 and 1,000 generated results, with page loads in headless
  Chromium (bench/leaderboard_scale.py); analysis from bench/analysis_workers.py.

Peak RSS is the child's own high-water mark (``VmHWM`` of /proc/self/status: the process
image after exec), never ``ru_maxrss``: Linux keeps ``ru_maxrss`` across fork and exec, so a
child of a large process would report the parent's peak.

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


def timed(cmd: list[str], env: dict | None = None, stdout=subprocess.DEVNULL) -> tuple[float, float, bytes]:
    """Wall and CPU (user + system, the command and its children) seconds of ``cmd``, and its
    standard output when ``stdout=subprocess.PIPE``."""
    started = time.perf_counter()
    process = subprocess.Popen(cmd, env={**os.environ, **(env or {})}, stdout=stdout, stderr=subprocess.DEVNULL)
    out = b""
    if stdout == subprocess.PIPE:
        with process.stdout:
            out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, cmd)
    return elapsed, usage.ru_utime + usage.ru_stime, out


def wall(cmd: list[str], env: dict | None = None) -> float:
    return timed(cmd, env)[0]


def median_wall(cmd, repeat: int, env=None) -> float:
    return statistics.median(wall(cmd, env) for _ in range(repeat))


def statbench(*args) -> list[str]:
    return [sys.executable, "-m", "statbench.commands.cli", *args]


def runs(stard: Path, work: Path, repeat: int) -> dict:
    """Cold (each on a fresh cache) then cached STARD BM25 runs; then ``statbench evaluate`` and the
    ir_measures CLI on the cached run's files, alternately (same load on the machine)."""
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {"STATBENCH_CACHE": str(cache)}
    run = statbench("run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard), "--no-progress")
    colds = []
    for _ in range(repeat):  # each on a fresh cache
        shutil.rmtree(cache, ignore_errors=True)
        colds.append(timed([*run, "--output", str(work / "cold")], env)[:2])
    cold = _medians(colds)
    cached = [timed([*run, "--output", str(work / "cached")], env)[:2] for _ in range(repeat)]
    sha = {name: hashlib.sha256((work / name / "run.trec").read_bytes()).hexdigest() for name in ("cold", "cached")}
    qrels, run_file = work / "cached" / "qrels.trec", work / "cached" / "run.trec"
    irm_cmd = [str(Path(sys.executable).with_name("ir_measures")), str(qrels), str(run_file), *MEASURES]
    ev_cmd = statbench("evaluate", "--task", "stard", "--data-dir", str(stard), str(run_file))
    irm, ev = [], []
    for _ in range(3 * repeat):  # short commands: more pairs
        irm.append(timed(irm_cmd)[:2])
        ev.append(timed(ev_cmd, env)[:2])
    figures = same_figures(irm_cmd, statbench("evaluate", "--task", "stard", "--data-dir", str(stard), "--json",
                                              str(run_file)), env)
    return {"cold": cold, "colds": colds, "cached": _medians(cached), "sha256": sha, "ir_measures": _medians(irm),
            "evaluate": _medians(ev), "same_figures": figures}


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in pairs), statistics.median(c for _, c in pairs)


def same_figures(irm_cmd: list[str], ev_cmd: list[str], env: dict) -> bool:
    """``statbench evaluate``'s mean over all queries equals what the ir_measures CLI prints
    (to the 4 decimals it prints), measure by measure."""
    printed = dict(line.split("\t") for line in timed(irm_cmd, stdout=subprocess.PIPE)[2].decode().splitlines())
    ours = json.loads(timed(ev_cmd, env, stdout=subprocess.PIPE)[2])
    labels = {m["ir_measure"]: m["label"] for m in ours["measures"]}
    return all(f"{ours['all_queries'][labels[name]]:.4f}" == value for name, value in printed.items())


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
import sys, logging
from pathlib import Path

def hwm():
    with open("/proc/self/status") as status:  # this process image's own peak (after exec)
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))

kind, where = sys.argv[1], Path(sys.argv[2])
if kind == "uk":
    from statbench.tasks.ukstat import read_real_corpus
    before = hwm()
    corpus = read_real_corpus(where)
else:
    from statbench.tasks.stard import Stard
    before = hwm()
    corpus = Stard().load(where, logging.getLogger("x")).corpus
print(len(corpus), hwm(), before)
"""


def peak_rss(kind: str, where: Path) -> tuple[int, int, int]:
    """Articles loaded, the loading process's peak RSS, and its RSS before loading (the
    interpreter and the imports), in bytes."""
    out = subprocess.run([sys.executable, "-c", PEAK, kind, str(where)], check=True, capture_output=True, text=True)
    count, peak, before = out.stdout.split()
    return int(count), int(peak), int(before)


RUN_PEAK = """
import atexit, glob, sys, threading, time

def hwm(pid="self"):
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):  # gone meanwhile
        return 0

workers = {}

def watch():  # the processes this one starts (analysis workers): their own peaks, polled
    while True:
        for path in glob.glob("/proc/self/task/*/children"):
            try:
                pids = open(path).read().split()
            except OSError:
                continue
            for pid in pids:
                workers[pid] = max(workers.get(pid, 0), hwm(pid))
        time.sleep(0.1)

threading.Thread(target=watch, daemon=True).start()
atexit.register(lambda: print(f"PEAK {hwm()} {max(workers.values(), default=0)} {len(workers)}", file=sys.stderr))
sys.argv = ["statbench", *sys.argv[1:]]
from statbench.commands.cli import main
main()
"""


def run_peak_rss(data_dir: Path, work: Path) -> dict:
    """A whole cold BM25 run on ``data_dir`` (a fresh cache): the main process's peak RSS,
    the largest peak of the processes it started (analysis workers: fresh interpreters,
    their own memory; polled, so a peak between two looks may be missed), wall seconds."""
    cache = work / "cache-peak"
    shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", RUN_PEAK, "run", "--task", "stard", "--model", "bm25", "--data-dir",
                          str(data_dir), "--no-progress", "--output", str(work / "run-peak")], check=True,
                         capture_output=True, text=True, env={**os.environ, "STATBENCH_CACHE": str(cache)})
    elapsed = time.perf_counter() - started
    shutil.rmtree(cache, ignore_errors=True)
    peak, workers, count = next(line.split()[1:] for line in out.stderr.splitlines() if line.startswith("PEAK "))
    return {"peak": int(peak), "workers": int(workers), "n_workers": int(count), "wall": elapsed}


def _compiled() -> str:
    """Whether every module of the statbench package has an up-to-date bytecode cache."""
    import importlib.util

    import statbench

    def fresh(source: Path) -> bool:
        cached = Path(importlib.util.cache_from_source(str(source)))
        return cached.is_file() and cached.stat().st_mtime >= source.stat().st_mtime

    sources = list(Path(statbench.__file__).parent.glob("*.py"))
    stale = [source for source in sources if not fresh(source)]
    return "yes" if not stale else f"no ({len(stale)} of {len(sources)} harness modules)"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _sibling(name: str):
    """A bench module beside this one (bench/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def analysis(work: Path, stard: Path, uk_eval: Path, repeat: int) -> dict:
    """1 vs 2 analysis processes on STARD and the simulated UK layout (bench/analysis_workers.py)."""
    return _sibling("analysis_workers").measure(work / "analysis", stard, uk_eval, repeat)


def leaderboard(work: Path, sizes=(100, 1000)) -> dict:
    """Builds of generated boards of each size, with page loads in Chromium (bench/leaderboard_scale.py)."""
    return _sibling("leaderboard_scale").measure(work / "leaderboard", sizes)


def memory_lines(x8: Path, uk_path: Path, work: Path) -> list[str]:
    """Peak RSS of loading each corpus (a multiple of its file, and bytes per article above
    the interpreter's own), and of a whole BM25 run on STARD x8."""
    lines = []
    for label, kind, where, corpus in (("STARD x8", "stard", x8, x8 / "corpus.jsonl"),
                                       ("UK real layout simulated", "uk", uk_path, uk_path)):
        count, peak, before = peak_rss(kind, where)
        size = corpus.stat().st_size
        lines.append(f"| peak RSS / corpus file, {label} ({count:,} articles) | {peak / size:.2f} | "
                     f"{peak / 2**20:.0f} MiB / {size / 2**20:.0f} MiB; {(peak - before) / count / 1024:.2f} KiB per "
                     f"article (file: {size / count / 1024:.2f} KiB) | <= 3 |")
    run = run_peak_rss(x8, work)
    size = (x8 / "corpus.jsonl").stat().st_size
    lines.append(f"| peak RSS / corpus file, whole cold BM25 run on STARD x8 | {run['peak'] / size:.2f} | "
                 f"{run['peak'] / 2**20:.0f} MiB (+ {run['n_workers']} worker(s), largest {run['workers'] / 2**20:.0f} MiB) / "
                 f"{size / 2**20:.0f} MiB; {run['wall']:.0f} s | (load only) |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stard", type=Path, required=True)
    parser.add_argument("--uk-eval", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/statbench-overheads"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()[0]
    lines = ["# Fixed costs (issue 15)", "", f"One run of `python bench/overheads.py` on {os.cpu_count()} CPUs, "
             f"commit {_commit()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; medians of {args.repeat} "
             f"(cold runs: each on a fresh cache). PYTHONDONTWRITEBYTECODE="
             f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}; statbench's modules byte-compiled: "
             f"{_compiled()} (when not, and that variable is set, every command compiles them again: see the "
             "README's set-up command).", ""]

    r = runs(args.stard, args.work, args.repeat)
    print(r, flush=True)
    (cold, cold_cpu), (cached, cached_cpu) = r["cold"], r["cached"]
    (ev, ev_cpu), (irm, irm_cpu) = r["evaluate"], r["ir_measures"]
    lines += ["| measure | ratio | times (wall; CPU) | acceptance |", "|---|---|---|---|",
              f"| cached / cold STARD BM25 run | {cached / cold:.3f} | {cached:.2f} s / {cold:.2f} s; CPU "
              f"{cached_cpu:.2f} s / {cold_cpu:.2f} s | cached < 2 s, cold < 10 s |",
              f"| statbench evaluate / ir_measures CLI ({3 * args.repeat} alternated pairs) | {ev / irm:.2f} (CPU {ev_cpu / irm_cpu:.2f}) | "
              f"{ev:.2f} s / {irm:.2f} s; CPU {ev_cpu:.2f} s / {irm_cpu:.2f} s; same figures: "
              f"{'yes' if r['same_figures'] else 'NO'} | <= 1.1 |"]

    figures = analysis(args.work, args.stard, args.uk_eval, args.repeat)
    for label, key in (("STARD (zh)", "stard"), ("UK simulated (en)", "uk")):
        a = figures[key]
        same = "identical ids" if a["identical"] else "IDS DIFFER"
        lines.append(f"| analysis, 1 / 2 processes, {label} | {a['ratio']:.2f}x (CPU estimate {a['cpu_ratio']:.2f}x) | "
                     f"{a['wall1']:.1f} s / {a['wall2']:.1f} s ({same}) | >= 1.6x on the UK corpus |")
    uk_path = uk_layout(args.uk_eval, args.work / "corpus_uklegislation.json")

    x8 = stard_x8(args.stard, args.work)
    lines += memory_lines(x8, uk_path, args.work)

    board = _sibling("leaderboard_scale")
    lines += ["", board.table(leaderboard(args.work))]
    lines += ["", f"Load average (1 min): {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. "
              "Cold runs, wall: " + ", ".join(f"{w:.2f} s" for w, _ in r["colds"]) + ". Analysis, UK, wall ratio per "
              "repeat: " + ", ".join(f"{row['ratio']:.2f}x" for row in figures["uk"]["repeats"]) + "."]
    lines += ["", f"run.trec sha256: cold {r['sha256']['cold'][:16]}, cached {r['sha256']['cached'][:16]} "
              "(reference f8ee76f17a7b75e4)", ""]
    text = "\n".join(lines)
    print(text)
    if args.output:
        args.output.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
