"""Text analysis per language, shared by the lexical models.

- zh: jieba word segmentation, stop words (the task's own list when it ships one);
  ``segmenter="jieba-rs"`` (the default) runs jieba's algorithm and dictionary in Rust
  (rjieba, ~20x faster; identical words on 58,273 of the 58,279 STARD articles, the rest
  differ only in how "0-4" or "7.n" are split), ``segmenter="jieba"`` the Python original;
- fr: lower-casing, elision removal (l', d', qu' ...), stop words, Snowball French stemming;
- en: lower-casing, stop words, Snowball English (Porter2) stemming.

- da, de, es, it, nl, no, pt, ru, sv, tr: lower-casing, the language's stop words (bm25s's
  lists), its Snowball stemmer.

A task's language tag is reduced to its BCP 47 primary subtag (``en-GB`` is ``en``,
``zh-Hans`` / ``zh-CN`` are ``zh``, ``nb``/``nn`` are ``no``: :func:`primary_language`); any
other language is refused in one line (:func:`analysis_language`), never analysed without
its stemming or stop words.

Every text is NFKC-normalised first. A large corpus is analysed by this process and
worker processes together (analysis_worker.py); the result is a :class:`TokenizedCorpus`
(term ids), exactly what one process gives. Tokenised corpora are cached on disk (a
verified cache entry, see artefacts.py), keyed by corpus checksum and analyzer config, so
BM25, QL and TF-IDF on the same task tokenise the corpus once.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

from statbench.contract.params import Param
from statbench.data.checksum import text_sha256
from statbench.errors import StatbenchError, UnknownNameError
from statbench.models.lexical.tokenized import TokenizedCorpus
from statbench.models.shared.artefacts import ids_digest, load_or_build
from statbench.storage.cache import CacheEntry

ANALYZER_VERSION = "1"
_WORD = re.compile(r"\w+", re.UNICODE)
_ELISION = re.compile(r"\b(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|quoiqu)['’]", re.IGNORECASE)
_ASCII = bytes(range(0x80))
_ASCII_NON_WORD_TO_SPACE = bytes(b if b >= 0x80 or _WORD.fullmatch(chr(b)) else 0x20 for b in range(256))
#: Snowball stemmer per language; each also has a stop-word list (default_stopwords)
_STEMMERS = {"fr": "french", "en": "english", "da": "danish", "de": "german", "es": "spanish", "it": "italian",
             "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ru": "russian", "sv": "swedish",
             "tr": "turkish"}
#: bm25s's stop-word list per language (the name of its constant)
_STOPWORDS = {"zh": "STOPWORDS_CHINESE", "fr": "STOPWORDS_FRENCH", "en": "STOPWORDS_EN", "da": "STOPWORDS_DANISH",
              "de": "STOPWORDS_GERMAN", "es": "STOPWORDS_SPANISH", "it": "STOPWORDS_ITALIAN", "nl": "STOPWORDS_DUTCH",
              "no": "STOPWORDS_NORWEGIAN", "pt": "STOPWORDS_PORTUGUESE", "ru": "STOPWORDS_RUSSIAN",
              "sv": "STOPWORDS_SWEDISH", "tr": "STOPWORDS_TURKISH"}
#: The languages statbench's analysis knows in full (segmentation or stemming, and stop words).
LANGUAGES = ("en", "fr", "zh", *sorted(set(_STEMMERS) - {"en", "fr"}))
#: primary subtags that are another code for a language above (Norwegian Bokmål / Nynorsk)
_ALIASES = {"nb": "no", "nn": "no"}
SEGMENTERS = ("jieba-rs", "jieba")
TOKENS_FILE = "tokens.pkl"
#: The tokens entry's layout (a TokenizedCorpus; entries of token lists were another layout).
TOKENS_LAYOUT = "ids"
#: The parameter every model built on these analyzers takes (it matters for Chinese only).
SEGMENTER_PARAM = {"segmenter": Param(SEGMENTERS[0], "Chinese word segmenter: jieba-rs (jieba in Rust, ~20x faster) "
                                      "or jieba (the Python original)", choices=SEGMENTERS)}


def primary_language(tag: str) -> str:
    """The BCP 47 primary language subtag, lower case: ``en-GB`` -> ``en``, ``zh-Hans`` and
    ``zh_CN`` -> ``zh``. Region and script subtags never change how statbench analyses a
    text (Traditional and Simplified Chinese both go through jieba), so they must not turn
    stemming, stop words or segmentation off."""
    primary = str(tag).strip().replace("_", "-").split("-", 1)[0].lower()
    return _ALIASES.get(primary, primary)


def analysis_language(tag: str) -> str:
    """The language statbench analyses a ``tag`` text as (:func:`primary_language`); a
    language it cannot analyse properly (no stemmer, stop words or segmenter of its own)
    is refused in one line rather than analysed with less than it needs."""
    language = primary_language(tag)
    if language not in LANGUAGES:
        raise StatbenchError(
            f"task language {tag!r}: statbench's lexical analysis knows {', '.join(LANGUAGES)} only (it would index "
            f"{language!r} text without its stemming and stop words); use a model that does its own analysis "
            "(a dense model, a reranker) for this task")
    return language


class Analyzer:
    """Turns text into index terms for one language.

    A text is normalised (NFKC, lower case) and cut into segments: jieba's words for
    Chinese, otherwise the UTF-8 bytes of each ``\\w+`` word (French elisions removed
    first). Each distinct segment's term is worked out once (stripped, stop words and
    punctuation dropped, stemmed) and memoised as a term id: a corpus has millions of
    segments but only tens of thousands of distinct ones."""

    def __init__(self, language: str, stopwords: Iterable[str] | None = None, stem: bool = True,
                 segmenter: str = "jieba-rs"):
        if segmenter not in SEGMENTERS:
            raise UnknownNameError("segmenter", segmenter, SEGMENTERS)
        language = analysis_language(language)
        self.language = language
        self.segmenter = segmenter
        self.stopwords = frozenset(stopwords) if stopwords is not None else default_stopwords(language)
        self.stem = stem and language in _STEMMERS
        self._stemmer = None
        self._cut = None
        self._vocabulary: _Vocabulary | None = None  # this analyzer's own, for __call__

    def key(self) -> str:
        digest = text_sha256("\n".join(sorted(self.stopwords)))[:12]
        language = f"zh-{self.segmenter}" if self.language == "zh" else self.language
        return f"{language}-stem{int(self.stem)}-sw{digest}-v{ANALYZER_VERSION}"

    def __call__(self, text: str) -> list[str]:
        if self._vocabulary is None:
            self._vocabulary = self.vocabulary()
        vocabulary = self._vocabulary
        terms = vocabulary.terms
        return [terms[i] for i in map(vocabulary.__getitem__, self.segments(text)) if i >= 0]

    def __getstate__(self) -> dict:  # sent to analysis workers: the configuration only
        return {**self.__dict__, "_stemmer": None, "_cut": None, "_vocabulary": None}

    def load(self) -> None:
        """Import the segmenter and the stemmer, build the NFKC table, now (forked workers
        then inherit them)."""
        self.segments("")
        _compat()
        if self.stem and self._stemmer is None:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(_STEMMERS[self.language])

    def vocabulary(self) -> "_Vocabulary":
        """A fresh memo from segments to term ids (see :func:`analyse_texts`)."""
        return _Vocabulary(self._term)

    def segments(self, text: str) -> list:
        """The text's segments (str for Chinese, UTF-8 bytes of one word otherwise)."""
        text = _nfkc(text).lower()
        if self.language == "zh":
            if self._cut is None:
                self._cut = _segmenter(self.segmenter)
            return self._cut(text)
        if self.language == "fr":
            text = _ELISION.sub(" ", text)
        data = text.encode("utf-8", "surrogatepass")
        non_ascii = data.translate(None, _ASCII)  # whole UTF-8 sequences: ASCII bytes never occur in one
        if non_ascii:
            # a non-ASCII character that is not a word character separates words as a space does
            for char in set(non_ascii.decode("utf-8", "surrogatepass")):
                if not _WORD.match(char):
                    data = data.replace(char.encode("utf-8", "surrogatepass"), b" ")
        # ASCII non-word bytes become spaces; what the split leaves are exactly _WORD's matches
        return data.translate(_ASCII_NON_WORD_TO_SPACE).split()

    def _term(self, segment) -> str | None:
        """The index term of a segment, None when it is dropped (punctuation, stop word)."""
        if self.language == "zh":
            term = segment.strip()
            return term if _WORD.search(term) and term not in self.stopwords else None
        word = segment.decode("utf-8", "surrogatepass")
        if word in self.stopwords:
            return None
        if not self.stem:
            return word
        if self._stemmer is None:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(_STEMMERS[self.language])
        return self._stemmer.stemWord(word)


class _Vocabulary(dict):
    """segment -> term id (-1: dropped), filled on first sight; ``terms`` lists the terms
    by id, in order of first occurrence."""

    __slots__ = ("terms", "ids", "term_of")

    def __init__(self, term_of):
        super().__init__()
        self.terms: list[str] = []
        self.ids: dict[str, int] = {}
        self.term_of = term_of

    def __missing__(self, segment) -> int:
        term = self.term_of(segment)
        if term is None:
            value = -1
        else:
            value = self.ids.get(term)
            if value is None:
                value = self.ids[term] = len(self.terms)
                self.terms.append(term)
        self[segment] = value
        return value


def _segmenter(name: str):
    if name == "jieba-rs":
        import rjieba

        return rjieba.cut
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut


_COMPAT: tuple | None = None


def _compat() -> tuple:
    """(a pattern matching the BMP characters NFKC changes, their NFKC forms), built once."""
    global _COMPAT
    if _COMPAT is None:
        forms = {}
        for code in range(0x10000):
            if not 0xD800 <= code < 0xE000:
                form = unicodedata.normalize("NFKC", chr(code))
                if form != chr(code):
                    forms[chr(code)] = form
        _COMPAT = (re.compile("[" + "".join(map(re.escape, forms)) + "]"), forms)
    return _COMPAT


def _nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, faster for the usual case: each character
    whose NFKC form differs (full-width punctuation, in Chinese text) is replaced by that
    form, and the result is taken only if it is NFKC-normalised (else normalised in full).
    Exact: replacing characters by compatibility-equivalent strings leaves the NFKD form,
    hence the NFKC form, unchanged, and a normalised string is its own NFKC form."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    pattern, forms = _compat()
    for char in set(pattern.findall(text)):
        text = text.replace(char, forms[char])
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def default_stopwords(language: str) -> frozenset[str]:
    import bm25s.stopwords as sw

    name = _STOPWORDS.get(language)
    return frozenset(getattr(sw, name)) if name else frozenset()


def analysis_workers(n_texts: int) -> int:
    """Processes for analysing a corpus: ``STATBENCH_WORKERS``, else every CPU this process
    may use, but one for corpora under 20,000 texts (where a worker that cannot be forked,
    ~0.7 s of CPU to start, would gain little)."""
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


def analyse_texts(analyzer: Analyzer, texts: Sequence[str], advance=lambda n=1: None,
                  compact: bool = False) -> list[list[str]] | TokenizedCorpus:
    """Analyse texts in order: each text's terms, or with ``compact`` the whole as a
    :class:`TokenizedCorpus`. Many texts are shared between this process and worker
    processes (segmentation holds the GIL, so threads would not help); every process
    takes blocks of texts until none is left, and the result is exactly one process's.

    Workers are forked, or fresh interpreters when forking is unsafe (see analysis_worker),
    and send back arrays, not token lists."""
    from statbench.models.lexical.analysis_worker import analyse_blocks, block_size

    processes = analysis_workers(len(texts))
    block = block_size(len(texts), processes)
    if processes == 1 or len(texts) <= block:
        corpus = _merge(len(texts), block, [analyse_blocks(analyzer, lambda a, b: texts[a:b], len(texts), block,
                                                           None, advance)])
    else:
        corpus = _analyse_in_processes(analyzer, texts, block, processes, advance)
    return corpus if compact else corpus.lists()


def _analyse_in_processes(analyzer: Analyzer, texts: Sequence[str], block: int, processes: int,
                          advance) -> TokenizedCorpus:
    import gc
    import tempfile

    from statbench.models.lexical.analysis_worker import (
        CLAIMS,
        Forked,
        Part,
        Spawned,
        analyse_blocks,
        can_fork,
        write_input,
    )

    def block_texts(number: int) -> int:
        return min(len(texts), (number + 1) * block) - number * block

    with tempfile.TemporaryDirectory(prefix="statbench-analysis-") as name:
        folder = Path(name)
        (folder / CLAIMS).mkdir()
        workers = []
        try:
            try:
                if can_fork():
                    analyzer.load()  # the segmenter, stemmer and NFKC table, inherited by the workers
                    gc.freeze()  # (a child's collections then leave the inherited objects' pages shared)
                    try:
                        for number in range(processes - 1):
                            workers.append(Forked(analyzer, texts, block, folder, number))
                    finally:
                        gc.unfreeze()
                else:
                    for number in range(processes - 1):
                        workers.append(Spawned(folder, number))
                    write_input(folder, analyzer, texts, block)
                    for worker in workers:
                        worker.go()
            except OSError as exc:
                raise StatbenchError(f"could not start an analysis worker ({exc}); STATBENCH_WORKERS=1 analyses in "
                                     "this process") from None
            parts = [analyse_blocks(analyzer, lambda a, b: texts[a:b], len(texts), block, folder, advance)]
            for number, worker in enumerate(workers):
                code = worker.wait()
                if code != 0:
                    err = worker.err.read_bytes().decode(errors="replace") if worker.err.exists() else ""
                    raise StatbenchError(f"an analysis worker failed (exit {code}; STATBENCH_WORKERS=1 "
                                         f"analyses in this process):\n{err[-2000:]}")
                path = folder / f"part-{number}.pkl"
                if path.exists():  # (a worker that exits without writing never claimed a block; a lost one is refused)
                    parts.append(Part.load(path, block_texts))
                    advance(sum(block_texts(n) for n, _ in parts[-1].claims))
            return _merge(len(texts), block, parts)
        finally:
            for worker in workers:
                worker.kill()


def _merge(n_texts: int, block: int, parts: list) -> TokenizedCorpus:
    """One corpus from the processes' parts: blocks in corpus order, each process's new
    terms numbered in the order they first occur in the corpus (the order of analysing
    everything in one process)."""
    import numpy as np

    owner = {number: (p, j, size) for p, part in enumerate(parts) for j, (number, size) in enumerate(part.claims)}
    n_blocks = -(-n_texts // block)
    if len(owner) != n_blocks or any(number not in owner for number in range(n_blocks)):
        raise StatbenchError(f"text analysis lost {n_blocks - len(owner)} of {n_blocks} blocks (STATBENCH_WORKERS=1 "
                             "analyses in this process)")
    if sum(1 for part in parts if part.claims) <= 1:
        (part,) = [part for part in parts if part.claims] or parts[:1]
        terms = part.terms
        offsets = _offsets(n_texts, part.lengths)
        flat = np.concatenate(part.ids).astype(np.int32, copy=False) if part.ids else np.zeros(0, dtype=np.int32)
        return TokenizedCorpus(terms, flat, offsets)
    terms, index, order = [], {}, []
    remaps = [np.zeros(len(part.terms), dtype=np.int32) for part in parts]
    seen = [0] * len(parts)
    for number in range(n_blocks):  # the vocabularies first: only each block's new terms
        p, j, size = owner[number]
        local, remap = parts[p].terms, remaps[p]
        for i in range(seen[p], size):
            term = local[i]
            g = index.get(term)
            if g is None:
                g = index[term] = len(terms)
                terms.append(term)
            remap[i] = g
        seen[p] = size
        order.append((p, j, size))
    offsets = _offsets(n_texts, [parts[p].lengths[j] for p, j, _ in order])
    # then every block's ids, translated straight into the corpus array (no per-block copies);
    # a remap entry never changes once set, so translating after the loop gives the same ids
    flat = np.empty(int(offsets[-1]), dtype=np.int32)
    at = 0
    for p, j, size in order:
        block_ids = parts[p].ids[j]
        if block_ids.size and (block_ids.min() < 0 or block_ids.max() >= size):
            raise StatbenchError("text analysis: a worker returned a term id outside its vocabulary "
                                 "(STATBENCH_WORKERS=1 analyses in this process)")
        np.take(remaps[p], block_ids, out=flat[at:at + block_ids.size])
        at += block_ids.size
    if at != flat.size:  # (np.empty: never hand on unwritten ids)
        raise StatbenchError("text analysis: the workers' term ids and terms-per-text counts disagree "
                             "(STATBENCH_WORKERS=1 analyses in this process)")
    return TokenizedCorpus(terms, flat, offsets)


def _offsets(n_texts: int, lengths: list):
    """Text start offsets (n_texts + 1) from the blocks' terms-per-text arrays, in order."""
    import numpy as np

    offsets = np.zeros(n_texts + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
    return offsets


def tokenize_corpus(analyzer: Analyzer, doc_ids: Sequence[str], texts: Sequence[str], cache_root: Path,
                    data_checksum: str, progress=None) -> TokenizedCorpus:
    """Tokenise every document once per (corpus, analyzer); later calls read the cache.

    The entry ``tokens/DATA-IDS-ANALYZER-ids/tokens.pkl`` (kind ``tokens``) holds the
    compact corpus and is keyed by the data checksum, the document ids in order and the
    analyzer's configuration."""
    ids = ids_digest(doc_ids)
    key = {"data": data_checksum, "ids": ids, "analyzer": analyzer.key(), "layout": TOKENS_LAYOUT}
    entry = CacheEntry(cache_root / "tokens" / f"{data_checksum[:16]}-{ids[:12]}-{analyzer.key()}-{TOKENS_LAYOUT}",
                       "tokens", key)

    def build(staging: Path) -> TokenizedCorpus:
        advance = progress("tokenising corpus", len(texts)) if progress else (lambda n=1: None)
        tokens = analyse_texts(analyzer, texts, advance, compact=True)
        tokens.save(staging / TOKENS_FILE)
        return tokens

    tokens, _ = load_or_build(entry, build, lambda folder: TokenizedCorpus.load(folder / TOKENS_FILE))
    return tokens
