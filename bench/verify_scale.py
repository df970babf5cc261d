"""Issue 22 §5: ``statbench leaderboard build --verify`` over 1,000 results on real task data,
from a cold and from a warm verification cache, each in a fresh process.

The results are honest ones on the real UK statutes task (``/work/shared/data/uk_statuterank``,
100 graded queries, 17 measures): each run is the committed BM25 run
(``bench/results/lexical/ukstat/bm25-default``) with some of each query's documents swapped
(deterministically, by the result's number), written with statbench's run writer, gzipped as a
results repository keeps it, and scored with ``statbench evaluate``'s scorer; its results.json
is the committed one with those figures, that run's checksum and a configuration of its own
(``seed``), so every row is a row of the board. A few are tampered (one in a hundred, three
ways: a pooled figure edited in results.json, a run-file line changed, a per-query score
nudged by 1e-6): the build must refuse exactly those.

Timed, as ``statbench leaderboard build --verify --data-dir ukstat=DIR`` in a fresh process:
cold (an empty cache: nothing verified, the task not even summarised) and warm (the same
build again); the build without ``--verify`` for scale; and, in this process, re-scoring a
run file as the verifier did before this change (``evaluate_run_file`` per row: the task's
files hashed and its summary and document ids read for every row) against what it does now
(``evaluate_rankings`` against the task loaded once).

    nice -n 5 python bench/verify_scale.py --work /tmp/verify-scale --n 1000 \\
        --output bench/results/verify_scale.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "bench" / "results" / "lexical" / "ukstat" / "bm25-default"
DATA = Path("/work/shared/data/uk_statuterank")
TASK = "ukstat"
#: one result in TAMPER_EVERY is tampered (kind by its number)
TAMPER_EVERY = 100
TAMPER_KINDS = ("pooled figure edited in results.json", "run-file line changed",
                "per-query score nudged by 1e-6 (every mean made to agree)")


def _perturbed(base: dict, i: int) -> dict:
    """The base rankings with a few documents of each query swapped (deterministic for ``i``);
    each position keeps its score, so the run is as strictly ordered as the base."""
    from statbench.data.runfile import order_ranking

    rng = random.Random(i)
    out = {}
    for qid, ranking in base.items():
        docs = [d for d, _ in ranking]
        scores = [s for _, s in ranking]
        for _ in range(rng.randint(0, 8)):
            a = int(rng.random() ** 2 * (len(docs) - 1))
            b = min(len(docs) - 1, a + rng.randint(1, 10))
            docs[a], docs[b] = docs[b], docs[a]
        out[qid] = order_ranking(zip(docs, scores))
    return out


def _gzip(plain: Path) -> None:
    with open(plain, "rb") as src, gzip.GzipFile(plain.with_suffix(".trec.gz"), "wb", mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    plain.unlink()


def _tamper(folder: Path, kind: int) -> None:
    results_path = folder / "results.json"
    obj = json.loads(results_path.read_text("utf-8"))
    if kind == 0:
        obj["all_queries"]["nDCG@10"] = round(obj["all_queries"]["nDCG@10"] + 0.01, 6)
    elif kind == 1:
        run = folder / "run.trec.gz"
        lines = gzip.decompress(run.read_bytes()).decode("utf-8").splitlines(keepends=True)
        parts = lines[0].split(" ")
        parts[2] = "no-such-provision"
        lines[0] = " ".join(parts)
        run.write_bytes(gzip.compress("".join(lines).encode("utf-8"), mtime=0))
    results_path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")


def _nudged(scores: dict, scoring, rankings: dict) -> dict:
    """``scores`` with one query's nDCG@10 lowered by 1e-6 and every mean (splits, pooled,
    aggregate, breakdowns) recomputed from the per-query scores, as the scorer computes them:
    the strict reader's agreement checks pass, only re-scoring the run shows it."""
    from statbench.loading.splits import select_splits
    from statbench.scoring.evaluation import score_splits

    per_query = {q: dict(v) for q, v in scores["per_query"].items()}
    per_query[sorted(per_query)[0]]["nDCG@10"] -= 1e-6
    splits = select_splits(scoring.info, scoring.data, ["test"], None)
    again = score_splits(scoring.info.measures, scoring.data, splits, per_query=per_query,
                         ranked={q for q in per_query if rankings.get(q)}).to_json()
    return {**scores, **again}


def generate(root: Path, n: int, data_dir: Path = DATA) -> dict:
    """``n`` results under ``root/ukstat/rNNNN`` (results.json + run.trec.gz), the tampered
    ones listed; each honest one scored by the real scorer against the real data."""
    import hashlib

    from statbench.data.runfile import read_run, write_run
    from statbench.registry.plugins import get_registry
    from statbench.results.record import RunScores
    from statbench.scoring.evaluate_file import evaluate_rankings, load_scoring_task

    get_registry()
    log = logging.getLogger("bench.verify_scale")
    template = json.loads((TEMPLATE / "results.json").read_text("utf-8"))
    base = read_run(_unzipped(TEMPLATE / "run.trec.gz", root / "base.trec"))
    scoring = load_scoring_task(TASK, data_dir, log)
    if scoring.data.checksum != template["task"]["data_checksum"]:
        raise SystemExit(f"{data_dir}: not the data {TEMPLATE} was scored on")
    score_fields = set(RunScores.__dataclass_fields__)
    tampered = {}
    started = time.perf_counter()
    for i in range(n):
        folder = root / TASK / f"r{i:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        rankings = _perturbed(base, i)
        run = folder / "run.trec"
        write_run(run, rankings, "bench-verify-scale")
        sha = hashlib.sha256(run.read_bytes()).hexdigest()
        scores = evaluate_rankings(run, read_run(run), scoring, ["test"], log, run_sha256=sha).to_json()
        tamper = (i // TAMPER_EVERY) % len(TAMPER_KINDS) if i % TAMPER_EVERY == TAMPER_EVERY // 2 else None
        if tamper == 2:
            scores = _nudged(scores, scoring, rankings)
        results = {k: v for k, v in template.items() if k not in score_fields}
        results.update({k: v for k, v in scores.items() if k in score_fields})
        results["model"] = {**template["model"], "params": {**template["model"]["params"], "seed": i}}
        results["run_file"] = {"path": "run.trec", "sha256": sha}
        results["command"] = f"{template['command']} --param seed={i}"
        results["created"] = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00"
        (folder / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
        _gzip(run)
        if tamper is not None:
            if tamper != 2:
                _tamper(folder, tamper)
            tampered[str(folder / "results.json")] = TAMPER_KINDS[tamper]
    (root / "base.trec").unlink()
    generated = {"n": n, "tampered": tampered, "seconds": time.perf_counter() - started}
    (root.parent / "generated.json").write_text(json.dumps(generated, indent=2), encoding="utf-8")
    return generated


def _unzipped(gz: Path, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.decompress(gz.read_bytes()))
    return out


def cli_build(results: Path, out: Path, cache: Path, verify: bool, data_dir: Path = DATA) -> dict:
    """Wall and CPU seconds of ``statbench leaderboard build`` in a fresh process (imports
    included), and the verification summary line it printed."""
    args = [sys.executable, "-m", "statbench.commands.cli", "leaderboard", "build", "--results", str(results),
            "--out", str(out)]
    if verify:
        args += ["--verify", "--data-dir", f"{TASK}={data_dir}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, env={**os.environ, "STATBENCH_CACHE": str(cache)}, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"build failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
    out_lines = (done.stdout + done.stderr).splitlines()
    return {"wall": wall, "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "summary": next((line for line in out_lines if line.startswith("verification:")), ""),
            "refused": [line for line in out_lines if line.startswith("refused:")],
            "skipped": [line for line in out_lines if line.startswith("warning: skipped")],
            "pages": next((line for line in out_lines if "task page(s) written" in line), "")}


def per_row_paths(root: Path, rows: int = 30, data_dir: Path = DATA) -> dict:
    """Seconds per row of re-scoring a run file as the verifier did before (``evaluate_run_file``:
    the task's files hashed, its summary and document ids read, every row) and as it does now
    (``evaluate_rankings`` against the task loaded once); the figures must be identical."""
    from statbench.data.checksum import file_sha256
    from statbench.data.runfile import read_run
    from statbench.scoring.evaluate_file import evaluate_rankings, evaluate_run_file, load_scoring_task

    log = logging.getLogger("bench.verify_scale")
    folders = sorted((root / TASK).iterdir())[:rows]
    runs = [_unzipped(f / "run.trec.gz", root / "plain" / f"{f.name}.trec") for f in folders]
    load_scoring_task(TASK, data_dir, log)  # the task's summary cached, as a build's first row leaves it
    started = time.perf_counter()
    old = [evaluate_run_file(run, TASK, data_dir, ["test"], log) for run in runs]
    old_seconds = (time.perf_counter() - started) / len(runs)
    started = time.perf_counter()
    scoring = load_scoring_task(TASK, data_dir, log)
    new = [evaluate_rankings(run, read_run(run), scoring, ["test"], log, run_sha256=file_sha256(run)) for run in runs]
    new_seconds = (time.perf_counter() - started) / len(runs)
    shutil.rmtree(root / "plain")
    same = [a.to_json() == b.to_json() for a, b in zip(old, new)]
    return {"rows": len(runs), "old": old_seconds, "new": new_seconds, "identical": all(same)}


def per_row_stard(work: Path, rows: int = 10) -> dict | None:
    """The same comparison on STARD (55k articles, 50 MB: where loading the task per row
    costs most), with the committed BM25 run scored ``rows`` times; ``None`` without its data."""
    from statbench.data.checksum import file_sha256
    from statbench.data.runfile import read_run
    from statbench.scoring.evaluate_file import evaluate_rankings, evaluate_run_file, load_scoring_task

    data_dir = DATA.parent / "stard"
    if not data_dir.is_dir():
        return None
    log = logging.getLogger("bench.verify_scale")
    run = _unzipped(REPO / "bench" / "results" / "lexical" / "stard" / "bm25-default" / "run.trec.gz",
                    work / "stard-bm25.trec")
    load_scoring_task("stard", data_dir, log)  # the summary cached
    started = time.perf_counter()
    old = [evaluate_run_file(run, "stard", data_dir, None, log) for _ in range(rows)]
    old_seconds = (time.perf_counter() - started) / rows
    started = time.perf_counter()
    scoring = load_scoring_task("stard", data_dir, log)
    new = [evaluate_rankings(run, read_run(run), scoring, None, log, run_sha256=file_sha256(run)) for _ in range(rows)]
    new_seconds = (time.perf_counter() - started) / rows
    run.unlink()
    return {"rows": rows, "old": old_seconds, "new": new_seconds,
            "identical": all(a.to_json() == b.to_json() for a, b in zip(old, new))}


def measure(work: Path, n: int, data_dir: Path = DATA, reuse: bool = False) -> dict:
    results = work / "results"
    known = work / "generated.json"
    if reuse and known.is_file() and json.loads(known.read_text("utf-8"))["n"] == n:
        generated = json.loads(known.read_text("utf-8"))
    else:
        shutil.rmtree(work, ignore_errors=True)
        generated = generate(results, n, data_dir)
    for old in ("cache-plain", "cache", "site-plain", "site"):
        shutil.rmtree(work / old, ignore_errors=True)
    size = sum(p.stat().st_size for p in results.rglob("*") if p.is_file())
    plain_cache = work / "cache-plain"
    plain = cli_build(results, work / "site-plain", plain_cache, verify=False)
    cache = work / "cache"
    cold = cli_build(results, work / "site", cache, verify=True)
    warm = [cli_build(results, work / "site", cache, verify=True) for _ in range(3)]
    per_row = per_row_paths(results, data_dir=data_dir)
    os.environ["STATBENCH_CACHE"] = str(work / "cache-stard")
    stard = per_row_stard(work)
    return {"n": n, "generated": generated, "input_bytes": size, "plain": plain, "cold": cold, "warm": warm,
            "per_row": per_row, "per_row_stard": stard, "load": os.getloadavg(), "cores": len(os.sched_getaffinity(0))}


def table(f: dict) -> str:
    warm = f["warm"]
    warm_wall = statistics.median(w["wall"] for w in warm)
    warm_cpu = statistics.median(w["cpu"] for w in warm)
    cold, plain, pr = f["cold"], f["plain"], f["per_row"]
    n = f["n"]
    tampered = f["generated"]["tampered"]
    refused, skipped = cold["refused"], cold["skipped"]
    caught = sum(any(path in line for line in refused) for path in tampered)
    unread = sum(any(path in line for line in skipped) for path in tampered)
    st = f.get("per_row_stard")
    lines = [
        f"| | N = {n:,} |",
        "|---|---|",
        f"| input (results.json + run.trec.gz) | {f['input_bytes'] / 2**20:.0f} MiB |",
        f"| `build` without `--verify` (empty cache), wall / CPU | {plain['wall']:.1f} s / {plain['cpu']:.1f} s |",
        f"| **`build --verify`, cold** (empty cache), wall / CPU | **{cold['wall']:.1f} s** / {cold['cpu']:.1f} s |",
        f"| — per result (wall) | {cold['wall'] / n * 1000:.1f} ms |",
        f"| — verification's share (cold − plain, wall) | {cold['wall'] - plain['wall']:.1f} s |",
        f"| **`build --verify`, warm** (median of {len(warm)}), wall / CPU | **{warm_wall:.1f} s** / {warm_cpu:.1f} s |",
        f"| warm / cold (wall) | {warm_wall / cold['wall']:.2f} |",
        f"| cold: {cold['summary'].split(';')[0]} | {cold['summary'].split(';')[1].strip() if ';' in cold['summary'] else ''} |",
        f"| warm: {warm[-1]['summary'].split(';')[0]} | "
        f"{warm[-1]['summary'].split(';')[1].strip() if ';' in warm[-1]['summary'] else ''} |",
        f"| tampered results refused by `--verify` (each with its reason) | {caught} of {len(tampered)} "
        f"({len(refused)} refused in all) |",
        f"| tampered results the strict reader already skipped (not results) | {unread} of {len(tampered)} "
        f"({len(skipped)} skipped in all) |",
        f"| re-scoring one run, before (task files hashed + summary and doc ids read per row) | "
        f"{pr['old'] * 1000:.1f} ms |",
        f"| re-scoring one run, now (task loaded once per build) | {pr['new'] * 1000:.1f} ms |",
        f"| before / now, per row ({pr['rows']} rows, figures identical: {'yes' if pr['identical'] else 'NO'}) | "
        f"{pr['old'] / pr['new']:.1f}× |",
    ]
    if st is not None:
        lines += [
            f"| STARD (55,000 articles): re-scoring its BM25 run, before / now | {st['old'] * 1000:.0f} ms / "
            f"{st['new'] * 1000:.0f} ms |",
            f"| STARD: before / now, per row ({st['rows']} rows, figures identical: "
            f"{'yes' if st['identical'] else 'NO'}) | {st['old'] / st['new']:.1f}× |",
        ]
    reasons = "\n".join(f"- `{line[:200]}…`" for line in [*refused[:3], *skipped[:1]])
    return "\n".join(lines) + f"\n\n{f['cores']} cores; load average after the runs: " \
        f"{', '.join(f'{x:.1f}' for x in f['load'])}.\n\nThe first lines the cold build printed about them:\n\n{reasons}\n"


_VERIFY_ONLY = """
import importlib.util, json, os, resource, sys, time
from pathlib import Path
if __name__ == "__main__":
    source, root, data_dir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    from statbench.results.record import Results
    if source:
        spec = importlib.util.spec_from_file_location("verify_before", source)
        module = importlib.util.module_from_spec(spec)
        sys.modules["verify_before"] = module
        spec.loader.exec_module(module)
        verifier = module.Verifier({"ukstat": data_dir})
    else:
        from statbench.leaderboard.verify.verify import Verifier
        verifier = Verifier({"ukstat": data_dir}, ahead=root)
    paths = sorted(root.rglob("results.json"))
    records = [Results.read(p) for p in paths]
    started = time.perf_counter()
    for record, path in zip(records, paths):
        verifier.verify(record, path)
    wall = time.perf_counter() - started
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall": wall, "summary": verifier.summary(), "cpu_all": own.ru_utime + own.ru_stime
                      + children.ru_utime + children.ru_stime}))
"""


def verify_only(work: Path, before_commit: str, data_dir: Path = DATA) -> dict:
    """Verification alone (the results read first, untimed; no site), cold, in a fresh process
    each: the verifier of ``before_commit`` (``git show COMMIT:leaderboard/verify.py``, which
    called ``evaluate_run_file`` per row) and this one."""
    script, before = work / "verify_only.py", work / "verify_before.py"
    script.write_text(_VERIFY_ONLY, encoding="utf-8")
    before.write_text(subprocess.run(["git", "show", f"{before_commit}:leaderboard/verify.py"], cwd=REPO, check=True,
                                     capture_output=True, text=True).stdout, encoding="utf-8")
    out = {}
    for name, source in (("before", str(before)), ("now", "")):
        cache = work / f"cache-verify-only-{name}"
        shutil.rmtree(cache, ignore_errors=True)
        done = subprocess.run([sys.executable, str(script), source, str(work / "results"), str(data_dir)],
                              env={**os.environ, "STATBENCH_CACHE": str(cache)}, capture_output=True, text=True,
                              check=True)
        out[name] = json.loads(done.stdout.strip().splitlines()[-1])
        shutil.rmtree(cache, ignore_errors=True)
    out["commit"], out["load"] = before_commit, os.getloadavg()
    return out


def verify_only_table(f: dict) -> str:
    b, n = f["before"], f["now"]
    return "\n".join([
        f"\n## Verification alone, cold: the verifier of {f['commit']} vs this one\n",
        "`python bench/verify_scale.py --work WORK --n 1000 --reuse --verify-only-before "
        f"{f['commit']}`: the same 1,000 results read first (untimed), then every row verified in a fresh "
        "process from an empty cache (no site built).\n",
        "| | before (task loaded per row, one process) | now (task loaded once, rows re-scored ahead) |",
        "|---|---|---|",
        f"| wall | {b['wall']:.1f} s | {n['wall']:.1f} s |",
        f"| CPU, worker processes included | {b['cpu_all']:.1f} s | {n['cpu_all']:.1f} s |",
        f"| before / now (wall) | {b['wall'] / n['wall']:.1f}× | |",
        f"| summary | {b['summary']} | {n['summary']} |",
        f"\nLoad average after: {', '.join(f'{x:.1f}' for x in f['load'])}.\n",
    ])


HEADER = """# `leaderboard build --verify` at scale (issue 22 §5)

`nice -n 5 python bench/verify_scale.py --work /tmp/verify-scale --n 1000 --output bench/results/verify_scale.md`
(the table below is its output). 1,000 honest results on the real UK statutes task (the
substitute layout in `/work/shared/data/uk_statuterank`: 1,842 passages, 100 graded queries, 17
measures): each run is the committed BM25 run with a few documents of each query swapped
(deterministically), written by statbench's run writer, gzipped as a results repository keeps
it, and scored by `statbench evaluate`'s scorer; one in a hundred is tampered (a pooled
figure edited in results.json; a run-file line changed; a per-query score nudged by 1e-6 with
every mean made to agree, so that only re-scoring shows it). Builds run in a fresh process
each (imports included); cold = an empty `STATBENCH_CACHE` (no verification, no task summary);
warm = the same build again. Targets: cold < 90 s, warm < 10 s.

How: the verifier loads each task once per build (its data files hashed once; their cached
summary gives the data checksum; judgements and document ids read on the first miss) and
re-scores every row against it (`evaluate_rankings`, what `statbench evaluate` scores with);
on the first row that misses the cache, the build's other rows are re-scored into the cache by
worker processes on every core; a warm build reads no corpus and parses no run (each run file
is still hashed: its sha256 is the cache key). "Before" below is `evaluate_run_file` per row,
which is what the verifier called for every row until this change. The machine is shared with
other sessions (load average below), so wall times are inflated.

"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("/tmp/verify-scale"))
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--reuse", action="store_true", help="keep the results generated by an earlier run")
    parser.add_argument("--verify-only-before", metavar="COMMIT",
                        help="only time verification alone, with COMMIT's verifier and this one (needs --reuse); "
                             "the table is appended to --output")
    args = parser.parse_args()
    if args.verify_only_before:
        text = verify_only_table(verify_only(args.work, args.verify_only_before, args.data_dir))
        print(text)
        if args.output:
            with open(args.output, "a", encoding="utf-8") as out:
                out.write(text)
        return
    figures = measure(args.work, args.n, args.data_dir, args.reuse)
    text = table(figures)
    (args.work / "figures.json").write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
    print(text)
    if args.output:
        args.output.write_text(HEADER + text, encoding="utf-8")


if __name__ == "__main__":
    main()
