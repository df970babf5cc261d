"""Cross-file checks shared by task loaders. Nothing is dropped silently: every removal
is appended to ``dropped`` (which ends up in the run log and the results)."""

from __future__ import annotations

from pathlib import Path

from .api import Document, Qrels, Query, TaskData
from .errors import StatbenchError

EXAMPLES = 3


def check_qrels_against_corpus(
    qrels: Qrels, corpus: dict[str, Document], queries: dict[str, Query], source: Path, dropped: list[str]
) -> None:
    """Remove judgements of unknown documents, then queries left with nothing relevant."""
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


def check_ids(task_name: str, data: TaskData) -> None:
    """Ids end up as TREC columns, so they must be non-empty and free of whitespace."""
    for kind, ids in (("document", data.corpus), ("query", data.queries)):
        bad = [i for i in ids if not i or any(c.isspace() for c in i)]
        if bad:
            raise StatbenchError(
                f"task {task_name!r}: {len(bad)} {kind} id(s) are empty or contain whitespace, which TREC "
                f"files cannot hold (e.g. {bad[0]!r}); the task loader must normalise them"
            )
