"""Synthetic, schema-valid results for previewing and testing the site without running
any model: :func:`make_results` builds one results dict from per-query scores (through
:meth:`statbench.results.record.Results.build`, like the runner),
:func:`write_sample` a small folder of them (deterministic, seeded)."""

from __future__ import annotations

import hashlib
import random
import statistics
from collections.abc import Mapping
from pathlib import Path

from statbench.data.atomic import write_json, write_text
from statbench.results.record import (
    MeanStd,
    MeasureRecord,
    ModelRecord,
    PluginRecord,
    Results,
    RunFile,
    RunScores,
    SplitScores,
    TaskRecord,
)

SAMPLE_TASK = "toy"
SAMPLE_MEASURES = ("R@5", "R@10", "R@100", "nDCG@10")
CHECKSUM = "0" * 64


def make_results(per_query: dict[str, dict[str, float]], **options) -> dict:
    """A results dict as ``statbench run`` writes it, from per-query scores: the JSON of
    :func:`sample_results` (same options)."""
    return sample_results(per_query, **options).to_json()


def sample_results(
    per_query: dict[str, dict[str, float]],
    *,
    task: str = SAMPLE_TASK,
    model: str = "bm25",
    family: str = "lexical",
    params: dict | None = None,
    trained: bool = False,
    reranker: dict | ModelRecord | None = None,
    pool: str | None = None,
    splits: dict[str, list[str]] | None = None,
    measures=SAMPLE_MEASURES,
    created: str = "2024-05-01T12:00:00+00:00",
    breakdown: dict | None = None,
    run_sha256: str = CHECKSUM,
    command: str | None = None,
) -> Results:
    """A :class:`Results` record built from per-query scores by :meth:`Results.build` (as the
    runner builds its own): split means, mean ± std over splits, pooled means."""
    splits = splits or {"test": sorted(per_query)}

    def means(qids):
        rows = [per_query[q] for q in qids]
        return {m: (sum(r[m] for r in rows) / len(rows) if rows else 0.0) for m in measures}

    split_rows = [SplitScores(name=n, n_queries=len(q), queries_without_results=0, scores=means(q))
                  for n, q in splits.items()]
    aggregate = {
        m: MeanStd(mean=statistics.fmean(s.scores[m] for s in split_rows),
                   std=statistics.stdev(s.scores[m] for s in split_rows) if len(split_rows) > 1 else 0.0)
        for m in measures
    }
    scores = RunScores(
        measures=[MeasureRecord(label=m, ir_measure=m) for m in measures],
        splits=split_rows,
        aggregate=aggregate,
        all_queries=means(sorted(per_query)),
        per_query=per_query,
        breakdown=breakdown,
    )
    if isinstance(reranker, Mapping):
        reranker = ModelRecord.from_json(reranker)
    return Results.build(
        scores,
        statbench_version="0.1.0",
        created=created,
        task=TaskRecord(name=task, language="en", protocol="synthetic sample", data_checksum=CHECKSUM,
                        files=["corpus.jsonl"], dropped=[]),
        model=ModelRecord(name=model, family=family, description=f"{model} (sample)", version="1",
                          params=params or {}, trained=trained,
                          plugin=PluginRecord(name=model, distribution="statbench-sample", version="0.0.1")),
        reranker=reranker,
        pool=pool,
        command=command or f"statbench run --task {task} --model {model}",
        run_file=RunFile(path="run.trec", sha256=run_sha256),
        timings={"total": 1.5},
    )


def reranker_record(name: str, family: str = "reranker", params: dict | None = None) -> dict:
    return {"name": name, "family": family, "params": params or {}, "version": "1",
            "plugin": {"name": name, "distribution": "statbench-sample", "version": "0.0.1"}}


def write_result(folder: Path, results: dict | Results, run_text: str | None = None) -> Path:
    """Write ``run.trec`` and ``results.json`` (with the run's real checksum) in ``folder``.
    ``results``: a :class:`Results` or a results dict, written as it is (tests write hostile ones)."""
    folder = Path(folder)
    if isinstance(results, Results):
        results = results.to_json()
    run_text = run_text if run_text is not None else f"q0 Q0 d0 1 1.0 {results['model']['name'][:20].split()[0] or 'x'}\n"
    write_text(folder / "run.trec", run_text)
    results = {**results, "run_file": {"path": "run.trec", "sha256": hashlib.sha256(run_text.encode()).hexdigest()}}
    write_json(folder / "results.json", results)
    return folder / "results.json"


def _scores(rng: random.Random, qids, skill: float) -> dict[str, dict[str, float]]:
    out = {}
    for q in qids:
        base = min(1.0, max(0.0, rng.random() * 0.6 + skill))
        out[q] = {
            "R@5": round(base * 0.7, 4),
            "R@10": round(base * 0.8, 4),
            "R@100": round(min(1.0, base * 1.1), 4),
            "nDCG@10": round(base * 0.75, 4),
        }
    return out


#: (folder, model, family, trained, skill, reranker)
SAMPLE_MODELS = (
    ("bm25", "bm25", "lexical", False, 0.2, None),
    ("ql", "ql", "lexical", False, 0.18, None),
    ("static", "model2vec", "static", False, 0.1, None),
    ("dense-ft", "dense-ft", "dense", True, 0.45, None),
    ("colbert", "colbert", "late-interaction", False, 0.3, None),
    ("bm25-monot5", "bm25", "lexical", False, 0.35, "monot5"),
    ("xss", "<script>alert(1)</script>", "static", False, 0.05, None),
)


def write_sample(root: Path, n_queries: int = 40, seed: int = 7) -> list[Path]:
    """A results tree for task ``toy``: two folds, seven configurations (one named
    ``<script>alert(1)</script>``), a per-category breakdown."""
    qids = [f"q{i:03d}" for i in range(n_queries)]
    folds = {"fold-1": qids[: n_queries // 2], "fold-2": qids[n_queries // 2:]}
    categories = {q: ("housing", "work", "family")[i % 3] for i, q in enumerate(qids)}
    paths = []
    for i, (folder, model, family, trained, skill, reranker) in enumerate(SAMPLE_MODELS):
        rng = random.Random(seed * 100 + i)
        per_query = _scores(rng, qids, skill)
        breakdown = {"category": {
            c: {m: statistics.fmean(per_query[q][m] for q in qids if categories[q] == c) for m in SAMPLE_MEASURES}
            for c in sorted(set(categories.values()))
        }}
        results = make_results(
            per_query, model=model, family=family, trained=trained, splits=folds, breakdown=breakdown,
            reranker=reranker_record(reranker) if reranker else None,
            command=f"statbench run --task toy --model {folder}" + (f" --reranker {reranker}" if reranker else ""),
        )
        run = "".join(f"{q} Q0 d{j} {j + 1} {1.0 - j / 10:.1f} sample\n" for q in qids[:3] for j in range(3))
        paths.append(write_result(Path(root) / folder, results, run))
    return paths


#: families dealt to the rows of :func:`write_many` (with a reranker on every fifth row)
MANY_FAMILIES = ("lexical", "dense", "static", "late-interaction", "dense")


def write_many(root: Path, n: int, n_queries: int = 12, seed: int = 15) -> list[Path]:
    """``n`` configurations of task ``toy`` (a large board: several pages of the table),
    quickly: two folds of ``n_queries`` queries, four measures, no fsync. Row 0 is the
    bm25 baseline; the others are ``m001``... of several families, a fifth of them
    reranked, a third trained; scores are quarters, so many queries tie; a breakdown by
    category (even / odd queries)."""
    import json

    rng = random.Random(seed)
    qids = [f"q{i:03d}" for i in range(n_queries)]
    folds = {"fold-1": qids[: n_queries // 2], "fold-2": qids[n_queries // 2:]}
    run = "".join(f"{q} Q0 d{j} {j + 1} {1.0 - j / 10:.1f} many\n" for q in qids[:2] for j in range(2))
    digest = hashlib.sha256(run.encode()).hexdigest()
    paths = []
    for i in range(n):
        skill = rng.random() * 0.6
        per_query = {}
        for q in qids:
            base = min(1.0, round((rng.random() * 0.5 + skill) * 4) / 4)
            per_query[q] = {"R@5": base * 0.5, "R@10": base * 0.75, "R@100": base, "nDCG@10": base * 0.5}
        breakdown = {"category": {c: {m: statistics.fmean(per_query[q][m] for q in qids[k::2]) for m in SAMPLE_MEASURES}
                                  for k, c in enumerate(("housing", "work"))}}
        family = "lexical" if i == 0 else MANY_FAMILIES[i % len(MANY_FAMILIES)]
        reranker = reranker_record("monot5") if i and i % 5 == 0 else None
        results = make_results(
            per_query, model="bm25" if i == 0 else f"m{i:03d}", family=family, trained=bool(i) and i % 3 == 0,
            splits=folds, reranker=reranker, breakdown=breakdown, created=f"2024-05-01T12:{i // 60 % 60:02d}:{i % 60:02d}+00:00",
            command=f"statbench run --task toy --model m{i:03d}", run_sha256=digest,
        )
        folder = Path(root) / f"r{i:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "run.trec").write_text(run, encoding="utf-8")
        (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
        paths.append(folder / "results.json")
    return paths
