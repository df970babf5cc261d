"""TREC run and qrels files.

A run line is ``qid Q0 docid rank score tag``. Evaluation tools do not agree on how to
order documents with equal scores (within ir-measures itself, the providers behind
``RR`` and ``P`` break ties in opposite directions), so the harness never writes a tie:
rankings are ordered by score, then doc id ascending, and a tied score is lowered to
the next representable float below its predecessor. Every evaluator then sees exactly
the order of the rank column, and re-scoring the file reproduces the harness's figures.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Mapping

from .api import Qrels, Ranking
from .atomic import atomic_open
from .errors import DataFormatError


def order_ranking(ranking: Iterable[tuple[str, float]], depth: int | None = None) -> Ranking:
    """Sort by score (desc) then doc id (asc), cut to ``depth``, make scores strictly decreasing."""
    ordered = sorted(((str(d), float(s)) for d, s in ranking), key=lambda pair: (-pair[1], pair[0]))
    if depth is not None:
        ordered = ordered[:depth]
    strict: Ranking = []
    previous = math.inf
    for doc_id, score in ordered:
        if not math.isfinite(score):
            raise ValueError(f"non-finite score {score!r} for document {doc_id!r}")
        if score >= previous:
            score = math.nextafter(previous, -math.inf)
        strict.append((doc_id, score))
        previous = score
    return strict


def format_run(rankings: Mapping[str, Ranking], tag: str) -> Iterable[str]:
    tag = tag.replace(" ", "_") or "statbench"
    for qid in sorted(rankings):
        for rank, (doc_id, score) in enumerate(rankings[qid], start=1):
            yield f"{qid} Q0 {doc_id} {rank} {score!r} {tag}\n"


def write_run(path, rankings: Mapping[str, Ranking], tag: str) -> None:
    """Write an ordered run atomically (rankings must come from :func:`order_ranking`)."""
    with atomic_open(path) as handle:
        handle.writelines(format_run(rankings, tag))


def read_run(path) -> dict[str, Ranking]:
    """Read a TREC run (6 whitespace-separated columns); errors name the file and line."""
    path = Path(path)
    rankings: dict[str, Ranking] = {}
    for lineno, parts in _columns(path, 6, "qid Q0 docid rank score tag"):
        qid, _, doc_id, _, score, _ = parts
        try:
            value = float(score)
        except ValueError:
            raise DataFormatError(path, f"score {score!r} is not a number", lineno, "score") from None
        rankings.setdefault(qid, []).append((doc_id, value))
    return rankings


def read_qrels(path) -> Qrels:
    """Read TREC qrels (``qid iter docid grade``); errors name the file and line."""
    path = Path(path)
    qrels: Qrels = {}
    for lineno, parts in _columns(path, 4, "qid iteration docid relevance"):
        qid, _, doc_id, grade = parts
        try:
            value = int(grade)
        except ValueError:
            raise DataFormatError(path, f"relevance {grade!r} is not an integer", lineno, "relevance") from None
        qrels.setdefault(qid, {})[doc_id] = value
    return qrels


def format_qrels(qrels: Qrels) -> Iterable[str]:
    for qid in sorted(qrels):
        for doc_id in sorted(qrels[qid]):
            yield f"{qid} 0 {doc_id} {qrels[qid][doc_id]}\n"


def write_qrels(path, qrels: Qrels) -> None:
    with atomic_open(path) as handle:
        handle.writelines(format_qrels(qrels))


def _columns(path: Path, expected: int, layout: str):
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise DataFormatError(path, "file not found") from None
    with handle:
        try:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                parts = line.split()
                if len(parts) != expected:
                    raise DataFormatError(
                        path, f"expected {expected} columns ({layout}), found {len(parts)}", lineno
                    )
                yield lineno, parts
        except UnicodeDecodeError as exc:
            raise DataFormatError(path, f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
