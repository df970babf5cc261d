"""Text analysis with 1 vs 2 processes (issue 15: "two analysis workers >= 1.6x faster
than one on the UK corpus"), on STARD (zh, jieba-rs) and on the simulated UK real layout
(en, 124,796 passages built by bench/overheads.py's ``uk_layout``).

What is timed is what an uncached run does: ``analyse_texts(..., compact=True)`` (the
tokens cache entry's term ids); token lists (``compact=False``, one more pass in the
calling process) are timed too, once per repeat. Per repeat the 1- and 2-process runs
follow each other, so their ratio is taken under the same load; the table gives medians
of 3 repeats, wall and CPU time (this process and its workers), the load average, and
checks that every run gave the same terms, ids and offsets (sha256).

    nice -n 5 python bench/analysis_workers.py --work /tmp/analysis-workers \\
        --output bench/results/analysis_workers.md

``measure(work)`` returns the figures as a dict (for bench/overheads.py or the lead)."""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import logging
import os
import resource
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
STARD = DATA / "stard"
UK_EVAL = DATA / "uk_statuterank" / "eval_statutory_100queries_approved.jsonl"


def _overheads():
    spec = importlib.util.spec_from_file_location("overheads", Path(__file__).with_name("overheads.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def texts_of(corpus: str, work: Path, stard: Path = STARD, uk_eval: Path = UK_EVAL) -> tuple[list[str], str]:
    """The corpus's texts and its language."""
    if corpus == "stard":
        from statbench.tasks.stard import Stard

        data = Stard().load(stard, logging.getLogger("bench"))
        return [d.text for d in data.corpus.values()], "zh"
    from statbench.tasks.ukstat import read_real_corpus

    path = _overheads().uk_layout(uk_eval, work / "corpus_uklegislation.json")
    return [d.text for d in read_real_corpus(path).values()], "en"


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its finished children (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def timed(language: str, texts: list[str], workers: int, compact: bool = True) -> tuple[float, float, float, object]:
    """(wall s, CPU s of all processes, CPU s of the busiest process, result) of analysing
    ``texts`` with ``workers`` processes (for 2: this process, or the worker)."""
    from statbench.models.lexical.analysis import Analyzer, analyse_texts

    previous = os.environ.get("STATBENCH_WORKERS")
    os.environ["STATBENCH_WORKERS"] = str(workers)
    gc.collect()
    try:
        wall, (own, children) = time.perf_counter(), _cpu()
        result = analyse_texts(Analyzer(language), texts, compact=compact)
        wall, (own_after, children_after) = time.perf_counter() - wall, _cpu()
        own, children = own_after - own, children_after - children
        return wall, own + children, max(own, children), result
    finally:
        if previous is None:
            os.environ.pop("STATBENCH_WORKERS")
        else:
            os.environ["STATBENCH_WORKERS"] = previous


def checksum(corpus) -> str:
    """sha256 of the terms, ids and offsets of a TokenizedCorpus."""
    digest = hashlib.sha256("\n".join(corpus.terms).encode("utf-8", "surrogatepass"))
    digest.update(corpus.ids.tobytes())
    digest.update(corpus.offsets.tobytes())
    return digest.hexdigest()


def measure_corpus(language: str, texts: list[str], repeat: int = 3) -> dict:
    timed(language, texts[:50], 1)  # imports and tables a run pays once, before either timing
    rows = []
    for _ in range(repeat):
        load_before = os.getloadavg()[0]
        one = timed(language, texts, 1)
        two = timed(language, texts, 2)
        lists_one = timed(language, texts, 1, compact=False)[:2]
        lists_two = timed(language, texts, 2, compact=False)[:2]
        rows.append({"wall1": one[0], "cpu1": one[1], "wall2": two[0], "cpu2": two[1], "busiest2": two[2],
                     "ratio": one[0] / two[0], "cpu_ratio": one[1] / two[2],
                     "lists_wall1": lists_one[0], "lists_wall2": lists_two[0],
                     "lists_ratio": lists_one[0] / lists_two[0], "sha1": checksum(one[3]), "sha2": checksum(two[3]),
                     "tokens": len(one[3].ids), "terms": len(one[3].terms),
                     "load": (load_before, os.getloadavg()[0])})
        del one, two
    median = {key: statistics.median(row[key] for row in rows)
              for key in ("wall1", "cpu1", "wall2", "cpu2", "busiest2", "ratio", "cpu_ratio", "lists_wall1",
                          "lists_wall2", "lists_ratio")}
    shas = {row["sha1"] for row in rows} | {row["sha2"] for row in rows}
    return {**median, "texts": len(texts), "tokens": rows[0]["tokens"], "terms": rows[0]["terms"],
            "identical": len(shas) == 1, "sha256": sorted(shas)[0] if len(shas) == 1 else sorted(shas),
            "repeats": rows}


def measure(work: Path, stard: Path = STARD, uk_eval: Path = UK_EVAL, repeat: int = 3) -> dict:
    """Both corpora: {"stard": {...}, "uk": {...}, "cpus": ..., "load": ...}; each corpus
    has medians (wall1, wall2, cpu1, cpu2, ratio = wall1 / wall2, and the same for token
    lists), ``identical`` (every run's terms, ids and offsets the same) and its repeats."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    out = {"cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
           "load_start": os.getloadavg()}
    for name in ("stard", "uk"):
        texts, language = texts_of(name, work, stard, uk_eval)
        out[name] = {"language": language, **measure_corpus(language, texts, repeat)}
        del texts
        print(name, {k: v for k, v in out[name].items() if k != "repeats"}, flush=True)
    out["load_end"] = os.getloadavg()
    return out


def report(result: dict) -> str:
    lines = ["# Text analysis, 1 vs 2 processes (issue 15)", "",
             f"`python bench/analysis_workers.py`: {result['cpus']} usable CPUs, medians of "
             f"{len(result['stard']['repeats'])} repeats; 1- and 2-process runs back to back in each repeat. "
             f"Load average (1 min) {result['load_start'][0]:.1f} at the start, {result['load_end'][0]:.1f} at the end "
             "(on a machine shared with other jobs the wall ratio shows the CPU share the processes got as much as "
             "the code; the CPU-bound estimate does not).", "",
             "| corpus | texts | tokens | 1 process: wall / CPU | 2 processes: wall / CPU (busiest process) "
             "| ratio, wall 1 / 2 | CPU-bound estimate: CPU 1 / busiest of 2 | token lists: wall 1 / 2, ratio "
             "| same terms, ids, offsets |", "|---|---|---|---|---|---|---|---|---|"]
    for name, label in (("stard", "STARD (zh, jieba-rs)"), ("uk", "UK simulated real layout (en)")):
        r = result[name]
        lines.append(f"| {label} | {r['texts']:,} | {r['tokens']:,} | {r['wall1']:.2f} s / {r['cpu1']:.2f} s "
                     f"| {r['wall2']:.2f} s / {r['cpu2']:.2f} s ({r['busiest2']:.2f} s) | **{r['ratio']:.2f}x** "
                     f"| {r['cpu_ratio']:.2f}x | {r['lists_wall1']:.2f} s / {r['lists_wall2']:.2f} s, "
                     f"{r['lists_ratio']:.2f}x | {'yes' if r['identical'] else 'NO'} (`{str(r['sha256'])[:16]}`) |")
    lines += ["", "The CPU-bound estimate is what the wall ratio would be with a free core per process: the "
              "1-process CPU time over the CPU time of the busier of the two processes (this one: its blocks, "
              "writing the workers' input, merging; the worker: start-up, its blocks).", "",
              "Per repeat (wall 1 / wall 2 = ratio; load average before and after):", ""]
    for name in ("stard", "uk"):
        for i, row in enumerate(result[name]["repeats"]):
            lines.append(f"- {name} #{i + 1}: {row['wall1']:.2f} s / {row['wall2']:.2f} s = {row['ratio']:.2f}x "
                         f"(CPU {row['cpu1']:.2f} s / {row['cpu2']:.2f} s, busiest {row['busiest2']:.2f} s: "
                         f"{row['cpu_ratio']:.2f}x; lists {row['lists_ratio']:.2f}x; "
                         f"load {row['load'][0]:.1f} -> {row['load'][1]:.1f})")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/statbench-analysis-workers"))
    parser.add_argument("--stard", type=Path, default=STARD)
    parser.add_argument("--uk-eval", type=Path, default=UK_EVAL)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    text = report(measure(args.work, args.stard, args.uk_eval, args.repeat))
    print(text)
    if args.output:
        args.output.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
