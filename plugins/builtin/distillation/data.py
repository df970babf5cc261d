"""The distillation data set (ukstat-2025 §4.1.1–4.1.3): training queries, their
first-stage candidates over the training corpus, the teacher's score of every
(query, candidate) pair, de-duplicated, split into training and validation queries.

- Queries come from a file or are generated with doc2query from training passages
  (:func:`generate_queries`; each generated query is anchored in its passage).
- Candidates: a registered first-stage retriever (BM25 by default) indexing the training
  corpus only (evaluation passages removed: see :mod:`distill_holdout`).
- Teacher scores: any registered reranker through the plugin registry; its output is
  checked (``check_rankings``) and cached per query (a verified cache entry keyed by the
  teacher's configuration, the query text and the candidates' text checksums), so a rerun
  sends nothing to the teacher, and an interrupted scoring resumes."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from statbench.api import (
    CacheEntry,
    Document,
    Query,
    RunContext,
    StatbenchError,
    cached,
    config_key,
    fingerprint,
    ids_digest,
    keyed_entry,
    records_digest,
    text_sha256,
)
from statbench.models.distillation.holdout import Holdout, TrainingQuery, check_anchor, normalise_query
from statbench.models.lexical import doct5query
from statbench.models.shared.artefacts import load_or_build
from statbench.registry.checks import check_rankings

#: queries sent to the teacher per call (each query's scores are cached as soon as its chunk returns)
TEACHER_CHUNK = 16


@dataclass(frozen=True)
class ScoredPair:
    query_id: str
    query: str
    doc_id: str
    passage: str
    score: float

    def as_json(self) -> dict:
        return {"qid": self.query_id, "query": self.query, "doc_id": self.doc_id, "score": self.score}


#: a passage's sha256 (its name in the teacher's and the training's keys)
text_digest = text_sha256


# --- queries generated with doc2query -----------------------------------------------------

def generate_queries(n: int, model: str, corpus: Mapping[str, Document], holdout: Holdout, seed: int,
                     ctx: RunContext, device: str = "cpu") -> list[TrainingQuery]:
    """One doc2query query for each of ``n`` training passages drawn with ``seed``; cached
    (model, passages, seed). Each query is anchored in the passage it was generated from."""
    ids = sorted(corpus)
    if n > len(ids):
        raise StatbenchError(f"--generate {n}: the training corpus has only {len(ids)} passages")
    chosen = random.Random(seed).sample(ids, n)
    key = {"model": fingerprint(model), "passages": ids_digest(chosen), "seed": seed}
    entry = keyed_entry(ctx.cache_root / "distill" / "generated", "distill-generated-queries", key)

    def build(staging: Path) -> list[dict]:
        tokenizer, seq2seq = doct5query.load_model(model, device)
        import torch

        rows = []
        advance = ctx.progress("distill: generating queries", len(chosen))
        for doc_id in chosen:
            torch.manual_seed(doct5query.seed_for(doc_id, seed))
            enc = tokenizer([corpus[doc_id].text], max_length=512, truncation=True, return_tensors="pt")
            with torch.inference_mode():
                out = seq2seq.generate(input_ids=enc["input_ids"].to(seq2seq.device),
                                       attention_mask=enc["attention_mask"].to(seq2seq.device), max_new_tokens=64,
                                       do_sample=True, top_k=10)
            rows.append({"doc_id": doc_id, "query": tokenizer.decode(out[0], skip_special_tokens=True).strip()})
            advance()
        (staging / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                               "utf-8")
        return rows

    def load(folder: Path) -> list[dict]:
        return [json.loads(line) for line in (folder / "queries.jsonl").read_text("utf-8").splitlines()]

    rows, reused = load_or_build(entry, build, load)
    ctx.log.info("distill: %d doc2query queries %s", len(rows), "read from the cache" if reused else "generated")
    out = []
    for number, row in enumerate(rows):
        if not row["query"]:
            continue  # an empty generation is not a query
        query = TrainingQuery(id=f"gen-{number:05d}", text=row["query"], passages=(row["doc_id"],))
        check_anchor(query, holdout, corpus, "generated queries")
        out.append(query)
    return out


# --- candidates and teacher scores --------------------------------------------------------

def first_stage(retriever, queries: Sequence[Query], corpus: Mapping[str, Document], depth: int,
                ctx: RunContext, owner: str) -> dict[str, list[str]]:
    """Each query's top ``depth`` training passages (checked like any run's output)."""
    retriever.index(list(corpus.values()), ctx)
    found = retriever.search(list(queries), depth, ctx)
    checked = check_rankings(found, owner=owner, query_ids={q.id for q in queries}, corpus=corpus, k=depth)
    return {q.id: [doc for doc, _ in sorted(checked.get(q.id, []), key=lambda x: (-x[1], x[0]))[:depth]]
            for q in queries}


def teacher_identity(entry, teacher) -> dict:
    """What a teacher's scores depend on: its plugin, configuration and, for a local
    checkpoint, the checkpoint's files."""
    identity = {"plugin": entry.qualified, "config": teacher.config()}
    model = teacher.params.get("model")
    if isinstance(model, str) and model:
        try:
            identity["weights"] = fingerprint(model)
        except StatbenchError:
            pass
    return identity


def teacher_scores(entry, teacher, queries: Sequence[Query], candidates: Mapping[str, Sequence[str]],
                   corpus: Mapping[str, Document], ctx: RunContext, owner: str) -> tuple[dict[str, dict[str, float]], int]:
    """``({qid: {doc: score}}, queries sent to the teacher)``; cached per query."""
    identity = teacher_identity(entry, teacher)
    root = ctx.cache_root / "distill" / "teacher" / config_key(identity)

    def entry_of(query: Query) -> CacheEntry:
        docs = list(candidates.get(query.id, []))
        key = {"teacher": identity, "query": query.text,
               "candidates": [[d, text_digest(corpus[d].text)] for d in docs]}
        return keyed_entry(root, "distill-teacher-scores", key, required=("scores.json",))

    scores: dict[str, dict[str, float]] = {}
    todo: list[Query] = []
    for query in queries:
        cache = entry_of(query)
        if cache.valid():
            scores[query.id] = json.loads(cache.file("scores.json").read_text("utf-8"))
        else:
            todo.append(query)
    advance = ctx.progress("distill: teacher scoring", len(todo))
    for start in range(0, len(todo), TEACHER_CHUNK):
        chunk = todo[start:start + TEACHER_CHUNK]
        asked = {q.id: list(candidates.get(q.id, [])) for q in chunk}
        ranked = teacher.rerank(chunk, asked, corpus, ctx)
        checked = check_rankings(ranked, owner=owner, query_ids=set(asked), candidates=asked)
        for query in chunk:
            got = dict(checked.get(query.id, []))
            missing = [d for d in asked[query.id] if d not in got]
            if missing:
                raise StatbenchError(f"{owner} returned no score for {len(missing)} candidate(s) of training query "
                                     f"{query.id!r} (e.g. {missing[0]}); a teacher must score every candidate")
            cache = entry_of(query)

            def build(staging: Path, got=got) -> None:
                (staging / "scores.json").write_text(json.dumps(got, sort_keys=True), "utf-8")

            cached(cache, build)
            scores[query.id] = got
        advance(len(chunk))
    return scores, len(todo)


def scored_pairs(queries: Sequence[Query], scores: Mapping[str, Mapping[str, float]],
                 corpus: Mapping[str, Document]) -> tuple[list[ScoredPair], int]:
    """Every (query, passage, teacher score), one per (query text, passage): a query text
    met twice, or a passage met twice for one query, is kept once. Returns the pairs and
    the number of duplicates dropped."""
    seen: set[tuple[str, str]] = set()
    pairs: list[ScoredPair] = []
    dropped = 0
    for query in queries:
        for doc_id, score in sorted(scores.get(query.id, {}).items()):
            key = (normalise_query(query.text), doc_id)
            if key in seen:
                dropped += 1
                continue
            seen.add(key)
            pairs.append(ScoredPair(query.id, query.text, doc_id, corpus[doc_id].text, float(score)))
    return pairs, dropped


def split_by_query(pairs: Sequence[ScoredPair], share: float, seed: int) -> tuple[list[ScoredPair], list[ScoredPair]]:
    """Training and validation pairs; whole queries go to one side, so validation measures
    agreement on queries the student never saw. ``share`` of the distinct query texts (at
    least one when ``share`` > 0 and there are two or more) are held out."""
    texts = sorted({normalise_query(p.query) for p in pairs})
    n_val = 0
    if share > 0 and len(texts) > 1:
        n_val = min(len(texts) - 1, max(1, round(share * len(texts))))
    held = set(random.Random(seed).sample(texts, n_val))
    train = [p for p in pairs if normalise_query(p.query) not in held]
    val = [p for p in pairs if normalise_query(p.query) in held]
    return train, val


def pairs_digest(pairs: Sequence[ScoredPair]) -> str:
    return records_digest((p.query, p.doc_id, text_digest(p.passage), repr(p.score)) for p in pairs)
