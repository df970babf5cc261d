"""Text analysis per language, shared by the lexical models.

- zh: jieba word segmentation, stop words (the task's own list when it ships one);
- fr: lower-casing, elision removal (l', d', qu' ...), stop words, Snowball French stemming;
- en: lower-casing, stop words, Snowball English (Porter2) stemming.

Tokenised corpora are cached on disk, keyed by corpus checksum and analyzer config,
so BM25, QL and TF-IDF on the same task tokenise the corpus once.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import re
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

from statbench.atomic import atomic_open

ANALYZER_VERSION = "1"
_WORD = re.compile(r"\w+", re.UNICODE)
_ELISION = re.compile(r"\b(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|quoiqu)['’]", re.IGNORECASE)
_STEMMERS = {"fr": "french", "en": "english"}


class Analyzer:
    """Turns text into index terms for one language."""

    def __init__(self, language: str, stopwords: Iterable[str] | None = None, stem: bool = True):
        self.language = language
        self.stopwords = frozenset(stopwords) if stopwords is not None else default_stopwords(language)
        self.stem = stem and language in _STEMMERS
        self._stemmer = None

    def key(self) -> str:
        digest = hashlib.sha256("\n".join(sorted(self.stopwords)).encode()).hexdigest()[:12]
        return f"{self.language}-stem{int(self.stem)}-sw{digest}-v{ANALYZER_VERSION}"

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text).lower()
        if self.language == "zh":
            import jieba

            jieba.setLogLevel(logging.WARNING)
            words = [w.strip() for w in jieba.lcut(text)]
            return [w for w in words if w and _WORD.search(w) and w not in self.stopwords]
        if self.language == "fr":
            text = _ELISION.sub(" ", text)
        words = [w for w in _WORD.findall(text) if w not in self.stopwords]
        if self.stem:
            if self._stemmer is None:
                import Stemmer

                self._stemmer = Stemmer.Stemmer(_STEMMERS[self.language])
            words = self._stemmer.stemWords(words)
        return words

    def many(self, texts: Sequence[str]) -> list[list[str]]:
        return [self(t) for t in texts]


def default_stopwords(language: str) -> frozenset[str]:
    import bm25s.stopwords as sw

    table = {"zh": sw.STOPWORDS_CHINESE, "fr": sw.STOPWORDS_FRENCH, "en": sw.STOPWORDS_EN}
    return frozenset(table.get(language, ()))


def tokenize_corpus(analyzer: Analyzer, doc_ids: Sequence[str], texts: Sequence[str], cache_root: Path,
                    data_checksum: str, progress=None) -> list[list[str]]:
    """Tokenise every document once per (corpus, analyzer); later calls read the cache."""
    ids_digest = hashlib.sha256("\x00".join(doc_ids).encode()).hexdigest()[:12]
    path = cache_root / "tokens" / f"{data_checksum[:16]}-{ids_digest}-{analyzer.key()}.pkl"
    if path.is_file():
        with open(path, "rb") as handle:
            return pickle.load(handle)
    advance = progress("tokenising corpus", len(texts)) if progress else (lambda n=1: None)
    tokens = []
    for text in texts:
        tokens.append(analyzer(text))
        advance()
    with atomic_open(path, "wb") as handle:
        pickle.dump(tokens, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return tokens
