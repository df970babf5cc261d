"""Every lexical and static-embedding model on STARD and the UK set, next to the published figures.

Runs go through the normal harness (``statbench.run.runner.execute``), so their outputs and
caches are the ones ``statbench run`` writes. A model that cannot run here (docT5query
without its weights, a task that is not registered) is listed with the reason.

    python bench/lexical_quality.py --output bench/results/lexical_quality.md
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from pathlib import Path

#: (row label, model, params); the published figure is found by the model's name.
MODELS = [
    ("BM25 (bm25s)", "bm25", {}),
    ("BM25 (Lucene)", "bm25", {"backend": "lucene"}),
    ("QL Dirichlet (native)", "ql", {}),
    ("QL Dirichlet (Lucene)", "ql", {"backend": "lucene"}),
    ("TF-IDF", "tfidf", {}),
    ("word2vec (trained on corpus)", "word2vec", {}),
    ("fastText (trained on corpus)", "fasttext", {}),
    ("docT5query (BM25)", "doct5query", {}),
]
#: published-label prefixes per model name
PUBLISHED_PREFIX = {"bm25": "bm25", "ql": "ql", "tfidf": "tfidf", "word2vec": "word2vec", "fasttext": "fasttext",
                    "doct5query": "doct5query"}
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # ../shared/data beside the checkout
TASKS = {"stard": SHARED_DATA / "stard", "ukstat": SHARED_DATA / "uk_statuterank"}
TASK_NOTES = {
    "stard": "Corpus: the rebuilt 58,279-article corpus (the paper's 55,348-article corpus.jsonl is not "
             "obtainable); queries and relevance are the real ones.",
    "ukstat": "Corpus: the 1,842-passage substitute (the paper's 124,796 passages are not obtainable), so "
              "published figures (BM25 top-100 pool of the original corpus) are not comparable: Δ is shown "
              "for reference only.",
}
PREFERRED = ("R@10", "R@100", "R@200", "R@500", "MRR@10", "MRR@100", "nDCG@10", "MAP@100", "mAP")


def published_for(task, model: str) -> tuple[str, dict] | None:
    prefix = PUBLISHED_PREFIX[model]
    for label, scores in task.published.items():
        if re.sub(r"[^a-z0-9]", "", label.lower()).startswith(prefix):
            return label, scores
    return None


def measures_of(task) -> list[str]:
    labels = [m.label for m in task.measures]
    chosen = [m for m in labels if m in PREFERRED]
    return chosen or labels[:4]


def run_task(task_name: str, data_dir: Path, out_root: Path, log) -> str:
    from statbench.errors import StatbenchError
    from statbench.registry.plugins import get_registry
    from statbench.run.runner import execute
    from statbench.run.request import RunRequest

    registry = get_registry()
    if task_name not in registry.tasks:
        return f"## {task_name}\n\nNot run: task {task_name!r} is not registered in this checkout.\n"
    task = registry.get("tasks", task_name).cls()
    measures = measures_of(task)
    key_measure = "R@100" if "R@100" in measures else measures[0]
    header = "| model | params | " + " | ".join(measures) + f" | published (label) | Δ {key_measure} | time (s) |"
    lines = [f"## {task_name} ({task.description})", "", header, "|---|---|" + "---:|" * len(measures) + "---|---:|---:|"]
    notes = []
    for label, model, params in MODELS:
        ref = published_for(task, model)
        shown = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        request = RunRequest(task=task_name, model=model, params=dict(params), data_dir=data_dir,
                             output=out_root / task_name / f"{model}-{'-'.join(map(str, params.values())) or 'default'}")
        print(f"[{task_name}] {label} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            outcome = execute(request, log, lambda description, total=None: (lambda n=1: None))
        except StatbenchError as exc:
            lines.append(f"| {label} | {shown} | " + " | ".join("—" for _ in measures) + f" | {ref[0] if ref else '—'} | — | — |")
            notes.append(f"- {label}: not run: {exc}")
            continue
        elapsed = time.perf_counter() - t0
        ours = outcome.results["aggregate"] if "aggregate" in outcome.results else outcome.results["all_queries"]
        cells = []
        for m in measures:
            value = _mean(ours.get(m))
            pub = ref[1].get(m) if ref else None
            cells.append(f"{value:.4f}" + (f" ({pub:.4f})" if pub is not None else ""))
        delta = "—"
        if ref and key_measure in ref[1]:
            delta = f"{_mean(ours.get(key_measure)) - ref[1][key_measure]:+.4f}"
        lines.append(f"| {label} | {shown} | " + " | ".join(cells) + f" | {ref[0] if ref else '—'} | {delta} | {elapsed:.0f} |")
    lines += ["", "Cells: ours (published). Ours is the mean over the task's splits; Δ = ours − published "
              f"on {key_measure}. Time: wall seconds of this run (cached tokenisation/indexes reused when present)."]
    if task_name in TASK_NOTES:
        lines += ["", TASK_NOTES[task_name]]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def _mean(value) -> float:
    if isinstance(value, dict):
        return float(value.get("mean", float("nan")))
    return float(value) if value is not None else float("nan")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated NAME or NAME=DATA_DIR")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--runs", type=Path, default=Path("statbench-output/bench-lexical"))
    args = parser.parse_args(argv)
    # docT5query's hub model cannot be fetched offline; fail at once instead of retrying the network
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING)
    log = logging.getLogger("bench")
    parts = ["# Lexical and static-embedding models vs the published figures", ""]
    for item in args.tasks.split(","):
        name, _, data_dir = item.partition("=")  # NAME or NAME=DATA_DIR
        # relative to the working directory, so that results record a command others can re-run
        parts.append(run_task(name, Path(os.path.relpath(data_dir or TASKS[name])), args.runs, log))
    text = "\n".join(parts)
    print(text)
    if args.output:
        from statbench.data.atomic import write_text

        write_text(args.output, text)


if __name__ == "__main__":
    main()
