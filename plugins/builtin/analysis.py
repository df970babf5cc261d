"""Text analysis per language, shared by the lexical models.

- zh: jieba word segmentation, stop words (the task's own list when it ships one);
  ``segmenter="jieba-rs"`` (the default) runs jieba's algorithm and dictionary in Rust
  (rjieba, ~20x faster; identical words on 58,273 of the 58,279 STARD articles, the rest
  differ only in how "0-4" or "7.n" are split), ``segmenter="jieba"`` the Python original;
- fr: lower-casing, elision removal (l', d', qu' ...), stop words, Snowball French stemming;
- en: lower-casing, stop words, Snowball English (Porter2) stemming.

Tokenised corpora are cached on disk (a verified cache entry, see artefacts.py), keyed by
corpus checksum and analyzer config, so BM25, QL and TF-IDF on the same task tokenise the
corpus once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

from statbench.cache import CacheEntry
from statbench.errors import StatbenchError, UnknownNameError
from statbench.params import Param

from .artefacts import ids_digest, load_or_build

ANALYZER_VERSION = "1"
_WORD = re.compile(r"\w+", re.UNICODE)
_ELISION = re.compile(r"\b(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|quoiqu)['’]", re.IGNORECASE)
_STEMMERS = {"fr": "french", "en": "english"}
SEGMENTERS = ("jieba-rs", "jieba")
TOKENS_FILE = "tokens.pkl"
#: The parameter every model built on these analyzers takes (it matters for Chinese only).
SEGMENTER_PARAM = {"segmenter": Param(SEGMENTERS[0], "Chinese word segmenter: jieba-rs (jieba in Rust, ~20x faster) "
                                      "or jieba (the Python original)", choices=SEGMENTERS)}


class Analyzer:
    """Turns text into index terms for one language."""

    def __init__(self, language: str, stopwords: Iterable[str] | None = None, stem: bool = True,
                 segmenter: str = "jieba-rs"):
        if segmenter not in SEGMENTERS:
            raise UnknownNameError("segmenter", segmenter, SEGMENTERS)
        self.language = language
        self.segmenter = segmenter
        self.stopwords = frozenset(stopwords) if stopwords is not None else default_stopwords(language)
        self.stem = stem and language in _STEMMERS
        self._stemmer = None
        self._terms: dict[str, str] = {}  # segment -> index term ("" = dropped), see _term

    def key(self) -> str:
        digest = hashlib.sha256("\n".join(sorted(self.stopwords)).encode()).hexdigest()[:12]
        language = f"zh-{self.segmenter}" if self.language == "zh" else self.language
        return f"{language}-stem{int(self.stem)}-sw{digest}-v{ANALYZER_VERSION}"

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text).lower()
        if self.language == "zh":
            return [term for term in map(self._term, self._segment(text)) if term]
        if self.language == "fr":
            text = _ELISION.sub(" ", text)
        words = [w for w in _WORD.findall(text) if w not in self.stopwords]
        if self.stem:
            if self._stemmer is None:
                import Stemmer

                self._stemmer = Stemmer.Stemmer(_STEMMERS[self.language])
            words = self._stemmer.stemWords(words)
        return words

    def __getstate__(self) -> dict:  # sent to analysis workers without the stemmer or memo
        return {**self.__dict__, "_stemmer": None, "_terms": {}}

    def _term(self, segment: str) -> str:
        """Strip a segment, drop it if it is punctuation or a stop word; memoised, because a
        corpus has millions of segments but only tens of thousands of distinct ones."""
        term = self._terms.get(segment)
        if term is None:
            term = segment.strip()
            if not _WORD.search(term) or term in self.stopwords:
                term = ""
            self._terms[segment] = term
        return term

    def _segment(self, text: str) -> list[str]:
        if self.segmenter == "jieba-rs":
            import rjieba

            return rjieba.cut(text)
        import jieba

        jieba.setLogLevel(logging.WARNING)
        return jieba.lcut(text)


def default_stopwords(language: str) -> frozenset[str]:
    import bm25s.stopwords as sw

    table = {"zh": sw.STOPWORDS_CHINESE, "fr": sw.STOPWORDS_FRENCH, "en": sw.STOPWORDS_EN}
    return frozenset(table.get(language, ()))


def analysis_workers(n_texts: int) -> int:
    """Processes for analysing a corpus: ``STATBENCH_WORKERS``, else every CPU this process
    may use, but one for small corpora (a worker costs ~0.2 s to start)."""
    configured = os.environ.get("STATBENCH_WORKERS", "").strip()
    if configured:
        try:
            workers = int(configured)
        except ValueError:
            raise StatbenchError(f"STATBENCH_WORKERS={configured!r}: expected a whole number") from None
    elif n_texts < 20_000:
        workers = 1
    else:
        workers = usable_cpus()
    return max(1, min(workers, n_texts))


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def analyse_texts(analyzer: Analyzer, texts: Sequence[str], advance=lambda n=1: None) -> list[list[str]]:
    """Analyse texts in order; many are split between this process and worker processes
    (segmentation holds the GIL, so threads would not help). Workers are fresh interpreters
    running analysis_worker, not multiprocessing children: forking a process that started
    a JVM or torch threads is unsafe, and spawning re-imports the caller's main module.

    Each worker gets its whole input in a file before this process starts on its own part,
    and writes its tokens to a file: nothing is fed through a pipe by a thread that this
    process's own (GIL-holding) analysis would starve, so the processes really overlap."""
    import tempfile

    size = max(1, -(-len(texts) // analysis_workers(len(texts))))
    parts = [texts[start:start + size] for start in range(0, len(texts), size)]
    if len(parts) <= 1:
        tokens = []
        for text in parts[0] if parts else ():
            tokens.append(analyzer(text))
            advance()
        return tokens
    with tempfile.TemporaryDirectory(prefix="statbench-analysis-") as folder:
        procs = []
        try:
            for number, part in enumerate(parts[1:]):
                given, taken = Path(folder) / f"in-{number}.pkl", Path(folder) / f"out-{number}.pkl"
                with open(given, "wb") as handle:
                    pickle.dump((analyzer, list(part)), handle, pickle.HIGHEST_PROTOCOL)
                procs.append((subprocess.Popen([sys.executable, "-m", "statbench.models.analysis_worker", str(given),
                                                str(taken)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.PIPE), taken))
            tokens = []
            for text in parts[0]:
                tokens.append(analyzer(text))
                advance()
            for proc, taken in procs:
                _, err = proc.communicate()
                if proc.returncode != 0:
                    raise StatbenchError(f"an analysis worker failed (exit {proc.returncode}; STATBENCH_WORKERS=1 "
                                         f"analyses in this process):\n{err.decode(errors='replace')[-2000:]}")
                with open(taken, "rb") as handle:
                    part_tokens = pickle.load(handle)
                tokens.extend(part_tokens)
                advance(len(part_tokens))
            return tokens
        finally:
            for proc, _ in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


def tokenize_corpus(analyzer: Analyzer, doc_ids: Sequence[str], texts: Sequence[str], cache_root: Path,
                    data_checksum: str, progress=None) -> list[list[str]]:
    """Tokenise every document once per (corpus, analyzer); later calls read the cache.

    The entry ``tokens/DATA-IDS-ANALYZER/tokens.pkl`` (kind ``tokens``) is keyed by the
    data checksum, the document ids in order and the analyzer's configuration."""
    ids = ids_digest(doc_ids)
    key = {"data": data_checksum, "ids": ids, "analyzer": analyzer.key()}
    entry = CacheEntry(cache_root / "tokens" / f"{data_checksum[:16]}-{ids[:12]}-{analyzer.key()}", "tokens", key)

    def build(staging: Path) -> list[list[str]]:
        advance = progress("tokenising corpus", len(texts)) if progress else (lambda n=1: None)
        tokens = analyse_texts(analyzer, texts, advance)
        with open(staging / TOKENS_FILE, "wb") as handle:
            pickle.dump(tokens, handle, protocol=pickle.HIGHEST_PROTOCOL)
        return tokens

    def load(folder: Path) -> list[list[str]]:
        with open(folder / TOKENS_FILE, "rb") as handle:
            return pickle.load(handle)

    tokens, _ = load_or_build(entry, build, load)
    return tokens
