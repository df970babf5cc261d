"""ColBERTv2's PLAID index, built and searched by colbert-ai (``Indexer``/``Searcher``), cached
as one verified entry.

The entry ``$STATBENCH_CACHE/colbert-plaid/KEY`` (kind ``colbert-plaid``) is keyed by the
checkpoint's fingerprint, the corpus checksum, colbert-ai's version and the indexing settings
(``doc_maxlen``, ``nbits``, ``kmeans_niters``). It holds colbert-ai's index folder ``plaid/``
exactly as ``Indexer.index`` writes it, ``ids.json`` (the statbench id of each colbert-ai
passage id, i.e. corpus position) and ``meta.json``. As every cache entry it is built in a
staging folder and renamed into place, sealed with a manifest and re-hashed on every read,
so a damaged or tampered index is rebuilt, never searched.

colbert-ai answers with passage positions (pids); :meth:`PlaidIndex.doc_id` maps them back
and stops on one outside the index."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Callable, Sequence

from statbench.api import Document, StatbenchError, cached, keyed_entry, one_line
from statbench.models.late_interaction import colbert_ai

KIND = "colbert-plaid"
INDEX_NAME = "plaid"


class PlaidIndex:
    """The entry ``colbert-plaid/KEY`` of one checkpoint and indexing configuration over one corpus."""

    def __init__(self, root: Path, settings: dict):
        self.settings = settings
        self.entry = keyed_entry(Path(root) / KIND, KIND, settings,
                                 required=("ids.json", "meta.json", f"{INDEX_NAME}/metadata.json"))
        self.dir = self.entry.path
        self.ids: list[str] = []
        self.meta: dict = {}
        self.reused = False

    @property
    def path(self) -> Path:
        """colbert-ai's index folder."""
        return self.dir / INDEX_NAME

    def build_or_reuse(self, corpus: Sequence[Document], checkpoint: str, indexing: dict, log) -> None:
        """Verify the entry, or build it with colbert-ai's ``Indexer`` (``indexing``: the
        ``ColBERTConfig`` settings), then read and check ``ids.json`` against the corpus."""
        built: list[bool] = []

        def build(staging: Path) -> None:
            built.append(True)
            self._build(staging, corpus, checkpoint, indexing, log)

        cached(self.entry, build)
        self.reused = not built
        self.ids = json.loads(self.entry.read_bytes("ids.json"))
        self.meta = json.loads(self.entry.read_bytes("meta.json"))
        self._check([d.id for d in corpus])

    def _build(self, staging: Path, corpus: Sequence[Document], checkpoint: str, indexing: dict, log) -> None:
        if not corpus:
            raise StatbenchError("colbertv2: the corpus is empty, there is nothing to index")
        texts = [d.text for d in corpus]
        log.info("colbertv2: building the PLAID index of %d passages with colbert-ai (on a machine's first use it "
                 "also compiles its C++ extensions: a few minutes)", len(texts))
        config = colbert_ai.config(checkpoint, index_path=str(staging / INDEX_NAME), **indexing)
        started = time.perf_counter()
        with colbert_ai.session(log, staging / "run"):
            from colbert import Indexer

            try:
                Indexer(checkpoint=checkpoint, config=config, verbose=0).index(name=INDEX_NAME, collection=texts)
            except StatbenchError:
                raise
            except Exception as exc:  # colbert-ai asserts and faiss errors: one line, with the likely cause
                raise StatbenchError(_build_error(exc, len(texts))) from exc
        seconds = time.perf_counter() - started
        shutil.rmtree(staging / "run", ignore_errors=True)  # colbert-ai's run root: nothing of the index
        plaid = json.loads((staging / INDEX_NAME / "metadata.json").read_text("utf-8"))
        (staging / "ids.json").write_text(json.dumps([d.id for d in corpus], ensure_ascii=False), "utf-8")
        meta = {"passages": len(texts), "tokens": int(plaid["num_embeddings"]),
                "partitions": int(plaid["num_partitions"]), "index_seconds": round(seconds, 3),
                "passages_per_s": round(len(texts) / max(seconds, 1e-9), 3), "colbert_ai": colbert_ai.version(),
                "settings": self.settings}
        (staging / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False), "utf-8")

    def _check(self, corpus_ids: list[str]) -> None:
        """The entry describes this corpus: one id per colbert-ai passage, in corpus order."""
        doclens: list[int] = []
        plaid = json.loads(self.entry.read_bytes(f"{INDEX_NAME}/metadata.json"))
        for chunk in range(int(plaid.get("num_chunks", 0))):
            doclens += json.loads(self.entry.read_bytes(f"{INDEX_NAME}/doclens.{chunk}.json"))
        problem = None
        if self.ids != corpus_ids:
            problem = f"its ids.json lists {len(self.ids)} passages that are not the corpus's {len(corpus_ids)}"
        elif len(doclens) != len(self.ids) or sum(doclens) != plaid.get("num_embeddings"):
            problem = (f"colbert-ai's files hold {len(doclens)} passages ({sum(doclens)} token vectors, metadata says "
                       f"{plaid.get('num_embeddings')}) for {len(self.ids)} ids")
        if problem:
            raise StatbenchError(f"colbertv2: cached PLAID index {self.dir} does not match: {problem}; "
                                 "delete that folder and run again")

    def doc_id(self, pid) -> str:
        """The statbench id of colbert-ai's passage ``pid``."""
        if isinstance(pid, bool) or not isinstance(pid, int) or not 0 <= pid < len(self.ids):
            raise StatbenchError(f"colbertv2: colbert-ai returned passage id {pid!r}, not one of the "
                                 f"{len(self.ids)} passages (0..{len(self.ids) - 1}) of index {self.dir}")
        return self.ids[pid]

    def searcher(self, checkpoint: str, texts: list[str], log, **settings):
        """colbert-ai's ``Searcher`` over this index (``settings``: ``ColBERTConfig`` values
        such as ``query_maxlen``)."""
        config = colbert_ai.config(checkpoint, **settings)
        with colbert_ai.session(log, self.dir.parent):
            from colbert import Searcher

            return Searcher(index=INDEX_NAME, index_root=str(self.dir), checkpoint=checkpoint, collection=texts,
                            config=config, verbose=0)

    def search(self, searcher, texts: list[str], k: int, knobs: dict, log,
               advance: Callable[..., None] = lambda n=1: None) -> list[list[tuple[str, float]]]:
        """Top ``k`` (doc id, colbert-ai score) per query text, as ``Searcher.dense_search``
        ranks them; ``knobs``: ``ncells``, ``centroid_score_threshold``, ``ndocs`` (None:
        colbert-ai's choice for ``k``)."""
        if not texts:
            return []
        with colbert_ai.session(log, self.dir.parent):
            queries = searcher.encode(texts)
        out = []
        for i in range(len(texts)):
            with colbert_ai.session(log, self.dir.parent):  # one query at a time: the progress bar lives outside
                searcher.configure(**knobs)  # None again, so colbert-ai chooses for this k
                pids, _, scores = searcher.dense_search(queries[i : i + 1], k)
            out.append([(self.doc_id(int(pid)), float(score)) for pid, score in zip(pids, scores)])
            advance()
        return out


def _build_error(exc: BaseException, passages: int) -> str:
    message = one_line(exc)
    if "Number of training points" in message or "should be at least as large as number of clusters" in message:
        return (f"colbertv2: the corpus ({passages} passages) has too few token vectors for colbert-ai's PLAID "
                f"k-means ({message}); PLAID needs a larger corpus")
    return f"colbertv2: colbert-ai could not build the PLAID index: {message}"
