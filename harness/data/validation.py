"""Cross-file checks shared by task loaders. Nothing is dropped silently: every removal
is appended to ``dropped`` (which ends up in the run log and the results)."""

from __future__ import annotations

from pathlib import Path

from statbench.contract.records import Document, Qrels, Query
from statbench.errors import DataFormatError

EXAMPLES = 3


def check_qrels_against_corpus(
    qrels: Qrels, corpus: dict[str, Document], queries: dict[str, Query], source: Path, dropped: list[str]
) -> None:
    """Remove judgements of unknown documents, then queries left with nothing relevant.

    If no query is left, nothing can be scored: that is an error naming ``source``, not a
    run of all-zero (or empty) scores."""
    n_queries, n_judged = len(queries), sum(len(docs) for docs in qrels.values())
    unknown = [(qid, doc) for qid, docs in qrels.items() for doc in docs if doc not in corpus]
    if unknown:
        shown = ", ".join(f"{q}->{d}" for q, d in unknown[:EXAMPLES])
        dropped.append(
            f"{source.name}: {len(unknown)} judgement(s) point to documents not in the corpus (e.g. {shown})"
        )
        for qid, doc in unknown:
            del qrels[qid][doc]
    orphans = sorted(q for q in queries if not any(g > 0 for g in qrels.get(q, {}).values()))
    if orphans:
        dropped.append(
            f"{source.name}: {len(orphans)} query(ies) without any relevant document in the corpus "
            f"(e.g. {', '.join(orphans[:EXAMPLES])})"
        )
        for qid in orphans:
            queries.pop(qid, None)
            qrels.pop(qid, None)
    for qid in [q for q in qrels if q not in queries]:
        del qrels[qid]
    if not queries and not n_queries:
        example = f" (e.g. {dropped[0]})" if dropped else ""
        raise DataFormatError(source, f"no queries left to score: every query was dropped{example}")
    if not queries:
        raise DataFormatError(
            source, f"no judgements left to score: none of the {n_queries} query(ies) has a relevant document in the "
            f"corpus ({len(unknown)} of {n_judged} judgement(s) point to documents not in the corpus; is this the "
            "right corpus?)"
        )


def check_file_qrels(
    ids, qrels: Qrels, corpus: dict[str, Document], queries: dict[str, Query], source: Path, dropped: list[str]
) -> None:
    """:func:`check_qrels_against_corpus` on the queries of one file among several (``ids``,
    those it holds), so that what is dropped names that file; queries the check drops are
    removed from ``queries`` and ``qrels`` as it removes them."""
    file_queries = {q: queries[q] for q in ids if q in queries}
    check_qrels_against_corpus({q: qrels[q] for q in file_queries}, corpus, file_queries, source, dropped)
    for qid in [q for q in ids if q in queries and q not in file_queries]:
        del queries[qid], qrels[qid]
