"""BM25 speed: bm25s (embedded) vs Lucene (pyserini/Anserini) vs rank-bm25, on one corpus.

Each backend runs in its own subprocess (so peak memory is its own, and the JVM starts
cold), timing: start-up (imports, JVM), analysis (statbench's analyzer for the embedded
backends; Lucene analyses inside indexing), indexing, and searching every query (top 100).
rank-bm25 scores documents in a Python loop, so it searches a sample of queries and its
full search time is extrapolated (marked ~). Results go to a markdown table with ratios.

    python bench/lexical_speed.py --task stard --data-dir ../shared/data/stard \\
        --repeat 3 --output bench/results/lexical_speed.md
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BACKENDS = ("bm25s", "bm25s-pyjieba", "lucene", "lucene-pretokenized", "rank-bm25")
K = 100


def worker(backend: str, task_name: str, data_dir: str, sample: int) -> dict:
    t0 = time.perf_counter()
    from statbench.registry.plugins import get_registry

    task = get_registry().get("tasks", task_name).cls()
    data = task.load(Path(data_dir), logging.getLogger("bench"))
    corpus = list(data.corpus.values())
    queries = list(data.queries.values())
    times = {"load_data": time.perf_counter() - t0}
    runner = {"bm25s": _bm25s, "bm25s-pyjieba": _bm25s_pyjieba, "lucene": _lucene,
              "lucene-pretokenized": _lucene_pretokenized, "rank-bm25": _rank_bm25}[backend]
    t1 = time.perf_counter()
    searched = runner(task, data, corpus, queries, times, sample)
    times["end_to_end"] = time.perf_counter() - t1  # everything but loading the task data
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"backend": backend, "times": times, "peak_rss_mib": peak_kib / 1024, "documents": len(corpus),
            "queries": len(queries), "queries_searched": searched}


def _analyse(task, data, corpus, queries, times, segmenter="jieba-rs"):
    from statbench.models.lexical.analysis import Analyzer, analyse_texts

    t = time.perf_counter()
    analyzer = Analyzer(task.language, stopwords=data.stopwords, segmenter=segmenter)
    doc_tokens = analyse_texts(analyzer, [d.text for d in corpus])  # as `statbench run` does
    query_tokens = [analyzer(q.text) for q in queries]
    times["analysis"] = time.perf_counter() - t
    return doc_tokens, query_tokens


def _bm25s(task, data, corpus, queries, times, sample, segmenter="jieba-rs"):
    t = time.perf_counter()
    import bm25s
    import numpy as np

    times["startup"] = time.perf_counter() - t
    doc_tokens, query_tokens = _analyse(task, data, corpus, queries, times, segmenter)
    t = time.perf_counter()
    model = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    model.index(doc_tokens, show_progress=False)
    times["index"] = time.perf_counter() - t
    t = time.perf_counter()
    vocab = model.vocab_dict
    for terms in query_tokens:
        terms = [w for w in terms if w in vocab]
        if terms:
            scores = model.get_scores(terms)
            np.argpartition(-scores, min(K, len(scores) - 1))[:K]
    times["search"] = time.perf_counter() - t
    return len(queries)


def _bm25s_pyjieba(*args):
    return _bm25s(*args, segmenter="jieba")


def _lucene(task, data, corpus, queries, times, sample, pretokenized: bool = False):
    t = time.perf_counter()
    from statbench.models.lexical.lucene import LuceneIndex, start_jvm

    start_jvm()
    times["startup"] = time.perf_counter() - t
    doc_tokens, texts = None, None
    if pretokenized:  # statbench's analysis, Lucene's whitespace analyzer
        doc_tokens, query_tokens = _analyse(task, data, corpus, queries, times)
        texts = [" ".join(tokens) for tokens in query_tokens]
    else:
        times["analysis"] = 0.0  # inside indexing
    with tempfile.TemporaryDirectory() as tmp:
        index = LuceneIndex(Path(tmp), task.language)
        t = time.perf_counter()
        index.build(corpus, pretokenized=doc_tokens)
        times["index"] = time.perf_counter() - t
        t = time.perf_counter()
        searcher = index.searcher("bm25", k1=0.9, b=0.4)
        index.search(searcher, queries, K, texts)
        times["search"] = time.perf_counter() - t
    return len(queries)


def _lucene_pretokenized(*args):
    return _lucene(*args, pretokenized=True)


def _rank_bm25(task, data, corpus, queries, times, sample):
    t = time.perf_counter()
    import numpy as np
    from rank_bm25 import BM25Okapi

    times["startup"] = time.perf_counter() - t
    doc_tokens, query_tokens = _analyse(task, data, corpus, queries, times)
    t = time.perf_counter()
    model = BM25Okapi(doc_tokens, k1=0.9, b=0.4)
    times["index"] = time.perf_counter() - t
    subset = query_tokens[:sample]
    t = time.perf_counter()
    for terms in subset:
        scores = model.get_scores(terms)
        np.argpartition(-scores, min(K, len(scores) - 1))[:K]
    measured = time.perf_counter() - t
    times["search"] = measured * len(query_tokens) / max(len(subset), 1)  # extrapolated
    times["end_to_end_extrapolated"] = True
    return len(subset)


def run_backend(backend: str, args) -> dict:
    cmd = [sys.executable, __file__, "--worker", backend, "--task", args.task, "--data-dir", str(args.data_dir),
           "--sample", str(args.sample)]
    wall = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    if done.returncode != 0:
        raise SystemExit(f"{backend} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_wall"] = wall
    if backend == "rank-bm25":  # the search time is extrapolated: extrapolate the total too
        times = result["times"]
        result["process_wall"] += times["search"] - times["search"] * result["queries_searched"] / result["queries"]
        times["end_to_end"] = times["startup"] + times["analysis"] + times["index"] + times["search"]
    return result


def median_run(runs: list[dict]) -> dict:
    """The run with the median end-to-end time (the lower one of an even count), with the
    end-to-end times of every run attached."""
    ordered = sorted(runs, key=lambda r: r["times"]["end_to_end"])
    return {**ordered[(len(ordered) - 1) // 2], "all_end_to_end": [r["times"]["end_to_end"] for r in ordered]}


def table(results: list[dict], args) -> str:
    from statbench.api import usable_cpus
    from statbench.models.lexical.analysis import analysis_workers

    base = next(r for r in results if r["backend"] == "bm25s")
    first = results[0]
    lines = [
        f"# BM25 speed: bm25s vs Lucene vs rank-bm25 ({args.task})",
        "",
        f"Corpus: {first['documents']:,} documents, {first['queries']:,} queries, top {K}; k1=0.9 b=0.4. "
        f"Machine: {platform.processor() or platform.machine()}, {usable_cpus()} CPU(s), Python {platform.python_version()}. "
        f"Each backend ran {len(first['all_end_to_end'])} times, round-robin, each time in its own process; "
        "every row is the run with the median end-to-end time (seconds, peak RSS of that process).",
        "",
        "| backend | start-up | analysis | index | search | end to end | range of end to end | process wall "
        "| peak RSS (MiB) | end to end / bm25s | index+search / bm25s | memory / bm25s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        t = r["times"]
        mark = "~" if t.get("end_to_end_extrapolated") else ""
        lines.append(
            f"| {r['backend']} | {t['startup']:.2f} | {t['analysis']:.2f} | {t['index']:.2f} | {mark}{t['search']:.2f} | "
            f"{mark}{t['end_to_end']:.2f} | {mark}{min(r['all_end_to_end']):.2f}–{max(r['all_end_to_end']):.2f} | "
            f"{mark}{r['process_wall']:.2f} | {r['peak_rss_mib']:.0f} | "
            f"{mark}{t['end_to_end'] / base['times']['end_to_end']:.2f}× | "
            f"{mark}{(t['index'] + t['search']) / (base['times']['index'] + base['times']['search']):.2f}× | "
            f"{r['peak_rss_mib'] / base['peak_rss_mib']:.2f}× |"
        )
    lines += [
        "",
        "- *analysis*: statbench's analyzer over the corpus and queries (for Chinese: jieba segmentation and the "
        "task's stop words; jieba-rs through rjieba, the default, or the Python jieba in *bm25s-pyjieba*, "
        "`--param segmenter=jieba`); Lucene analyses inside *index* (its own CJK bigram / language analyzer).",
        "- *end to end*: start-up + analysis + index + search (task loading excluded); *process wall* adds "
        "interpreter start and task loading.",
        f"- Lucene indexes and searches with 2 threads (as the statbench backend runs); statbench's analysis "
        f"splits a large corpus between {analysis_workers(first['documents'])} processes (`STATBENCH_WORKERS`), "
        "indexing and searching in bm25s and rank-bm25 use one thread.",
        "- *lucene-pretokenized*: statbench's analysis, then Lucene over the tokens (whitespace analyzer), i.e. "
        "`--param backend=lucene --param analyzer=statbench`: the like-for-like comparison with bm25s.",
        "- Ratios > 1 mean slower (or larger) than bm25s. In `statbench run` the analysed corpus is cached "
        "and shared by bm25s, QL and TF-IDF, so after the first run the embedded backend costs only index + search.",
    ]
    rank = next((r for r in results if r["backend"] == "rank-bm25"), None)
    if rank:
        lines.append(f"- ~ rank-bm25 searched {rank['queries_searched']} of {rank['queries']} queries; its search time "
                     "is extrapolated linearly.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="stard")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--sample", type=int, default=100, help="queries rank-bm25 searches (extrapolated)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per backend; the table shows the median")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        logging.disable(logging.WARNING)
        print(json.dumps(worker(args.worker, args.task, str(args.data_dir), args.sample)))
        return
    backends = args.backends.split(",")
    runs: dict[str, list[dict]] = {backend: [] for backend in backends}
    load_before = os.getloadavg()[0]
    for round_ in range(1, args.repeat + 1):  # round-robin, so drifting load hits every backend alike
        for backend in backends:
            print(f"round {round_}/{args.repeat}: {backend} ...", file=sys.stderr)
            runs[backend].append(run_backend(backend, args))
    text = table([median_run(runs[backend]) for backend in backends], args)
    text += (f"- 1-minute load average {load_before:.2f} before and {os.getloadavg()[0]:.2f} after the runs "
             f"(other work on the machine inflates every figure; compare the ratios).\n")
    print(text)
    if args.output:
        from statbench.data.atomic import write_text

        write_text(args.output, text)


if __name__ == "__main__":
    main()
