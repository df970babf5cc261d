"""The legislative graph of a corpus (gdsr-2023 section 3.2): a tree of *section* nodes,
one per distinct heading-path prefix (the code/law/instrument at the root), and *article*
nodes hanging under their innermost heading; edges along the hierarchy, both directions.

Structure comes from the task contract only: ``Document.fields["heading_path"]``, the
headings outermost first joined by `` › `` (see docs/task-authors.md). An article without
one is an isolated node. Node order: the articles in corpus order (node i = article i),
then the sections in order of first appearance (a section before its sub-sections). The graph is a verified cache entry
(kind ``legal-graph``) keyed by the ids and heading paths, so a second run reads it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from statbench.api import Document, RunContext, StatbenchError, keyed_entry, records_digest
from statbench.models.shared.artefacts import load_or_build

HEADING_FIELD = "heading_path"
SEPARATOR = "›"
GRAPH_VERSION = "1"


@dataclass
class LegalGraph:
    """``sections[j]`` is the heading path of node ``len(article_ids) + j``; ``parent[n]``
    the parent node of node ``n`` (-1 for a root or an isolated article); ``edge_index``
    a (2, E) int64 array holding each tree edge in both directions."""

    article_ids: list[str]
    sections: list[tuple[str, ...]]
    parent: list[int]
    edge_index: object
    reused: bool = False

    @property
    def n_articles(self) -> int:
        return len(self.article_ids)

    @property
    def n_nodes(self) -> int:
        return len(self.article_ids) + len(self.sections)

    def section_titles(self) -> list[str]:
        """The text of each section node: its own heading (the law's name at the root)."""
        return [path[-1] for path in self.sections]


def heading_path(doc: Document) -> tuple[str, ...]:
    """An article's heading path as a tuple, outermost first (empty without structure)."""
    value = doc.fields.get(HEADING_FIELD, "") if doc.fields else ""
    return tuple(p.strip() for p in str(value).split(SEPARATOR) if p.strip())


def build_graph(corpus: Sequence[Document]) -> LegalGraph:
    """The tree of ``corpus`` (see the module docstring). A corpus without any structure is
    refused: a graph of isolated articles would silently make G-DSR a worse DSR."""
    import numpy as np

    paths = [heading_path(d) for d in corpus]
    if not any(paths):
        raise StatbenchError(f"the task declares no legislative structure (no document has "
                             f"Document.fields[{HEADING_FIELD!r}]); G-DSR needs one (see docs/task-authors.md)")
    n = len(corpus)
    node_of: dict[tuple[str, ...], int] = {}
    sections: list[tuple[str, ...]] = []
    parent = [-1] * n

    def section(path: tuple[str, ...]) -> int:
        if path not in node_of:  # the parent first: sections are numbered outermost first
            up = section(path[:-1]) if len(path) > 1 else -1
            node_of[path] = n + len(sections)
            sections.append(path)
            parent.append(up)
        return node_of[path]

    for i, path in enumerate(paths):
        if path:
            parent[i] = section(path)
    child = [c for c, p in enumerate(parent) if p >= 0]
    par = [parent[c] for c in child]
    edges = np.array([child + par, par + child], dtype=np.int64).reshape(2, -1)
    return LegalGraph([d.id for d in corpus], sections, parent, edges)


def structure_digest(corpus: Sequence[Document]) -> str:
    """sha256 over the ids and heading paths, in corpus order (the graph's cache key)."""
    return records_digest((doc.id, SEPARATOR.join(heading_path(doc))) for doc in corpus)


def cached_graph(corpus: Sequence[Document], ctx: RunContext) -> LegalGraph:
    """:func:`build_graph`, cached under ``$STATBENCH_CACHE/legal-graph/DIGEST``."""
    import numpy as np

    entry = keyed_entry(Path(ctx.cache_root) / "legal-graph", "legal-graph",
                        {"structure": structure_digest(corpus), "version": GRAPH_VERSION})

    def build(staging: Path) -> LegalGraph:
        graph = build_graph(corpus)
        (staging / "graph.json").write_text(json.dumps(
            {"article_ids": graph.article_ids, "sections": [list(s) for s in graph.sections], "parent": graph.parent},
            ensure_ascii=False), "utf-8")
        np.save(staging / "edge_index.npy", graph.edge_index)
        return graph

    def load(folder: Path) -> LegalGraph:
        data = json.loads((folder / "graph.json").read_text("utf-8"))
        return LegalGraph(data["article_ids"], [tuple(s) for s in data["sections"]], data["parent"],
                          np.load(folder / "edge_index.npy"), reused=True)

    graph, reused = load_or_build(entry, build, load)
    if graph.article_ids != [d.id for d in corpus]:  # the key covers the ids; this guards the reader
        raise StatbenchError(f"legislative graph {entry.path} does not match the corpus; delete it")
    ctx.log.info("legal graph: %s %d article nodes, %d section nodes, %d edges (%s)",
                 "reusing" if reused else "built", graph.n_articles, len(graph.sections),
                 graph.edge_index.shape[1], entry.path)
    return graph
