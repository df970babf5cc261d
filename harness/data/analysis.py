"""The text analysis of statbench's lexical models, per task language: what turns an
article or a question into index terms. Public (``statbench.api.Analyzer``) so that a
plugin's tokens are the built-in models' tokens, not a re-implementation of them.

- zh: jieba word segmentation, stop words (the task's own list when it ships one);
  ``segmenter="jieba-rs"`` (the default) runs jieba's algorithm and dictionary in Rust
  (rjieba, ~20x faster; identical words on 58,273 of the 58,279 STARD articles, the rest
  differ only in how "0-4" or "7.n" are split), ``segmenter="jieba"`` the Python original;
- fr: lower-casing, elision removal (l', d', qu' ...), stop words, Snowball French stemming;
- en: lower-casing, stop words, Snowball English (Porter2) stemming;
- da, de, es, it, nl, no, pt, ru, sv, tr: lower-casing, the language's stop words (bm25s's
  lists), its Snowball stemmer.

Every text is NFKC-normalised first. A task's language tag is reduced to its primary
subtag (``en-GB`` is ``en``, ``zh-Hans`` is ``zh``: :func:`primary_language`); any other
language is refused in one line (:func:`analysis_language`), never analysed without its
stemming or stop words. The built-in models analyse a whole corpus with this class in
several processes and cache the result (``statbench.models.lexical.analysis``): the same
terms as calling the analyzer on each text.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import TYPE_CHECKING, Iterable

from statbench.contract.language import primary_language
from statbench.contract.params import Param
from statbench.data.checksum import text_sha256
from statbench.errors import StatbenchError, UnknownNameError

if TYPE_CHECKING:
    from statbench.contract.model import RunContext

#: Part of every analyzer's key (cached tokenised corpora): bump when terms change.
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
#: The Chinese word segmenters, the default first.
SEGMENTERS = ("jieba-rs", "jieba")
#: The parameter a model offering the choice of segmenter declares (``{"segmenter":
#: SEGMENTER_PARAM}``): it applies to Chinese tasks only, so a run on another language
#: neither records it nor accepts it.
SEGMENTER_PARAM = Param(SEGMENTERS[0], "Chinese word segmenter: jieba-rs (jieba in Rust, ~20x faster) "
                        "or jieba (the Python original)", choices=SEGMENTERS, languages=("zh",))


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
    """Turns text into index terms for one language: ``Analyzer.for_task(ctx)(text)``.

    A text is normalised (NFKC, lower case) and cut into segments: jieba's words for
    Chinese, otherwise the UTF-8 bytes of each ``\\w+`` word (French elisions removed
    first). Each distinct segment's term is worked out once (stripped, stop words and
    punctuation dropped, stemmed) and memoised as a term id: a corpus has millions of
    segments but only tens of thousands of distinct ones."""

    def __init__(self, language: str, stopwords: Iterable[str] | None = None, stem: bool = True,
                 segmenter: str = SEGMENTERS[0]):
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

    @classmethod
    def for_task(cls, ctx: "RunContext", stem: bool = True, segmenter: str | None = None) -> "Analyzer":
        """The analyzer of the run's task, as bm25, ql and tfidf use it: its language, its own
        stop words when it ships them (``ctx.stopwords``), else the language's. ``stem=False``
        keeps surface forms (word2vec and fastText's tokens); ``segmenter`` (Chinese only;
        ``None``: the default) picks the segmenter."""
        return cls(ctx.language, stopwords=ctx.stopwords, stem=stem, segmenter=segmenter or SEGMENTERS[0])

    def key(self) -> str:
        """The analysis configuration in one string (language, segmenter, stemming, a digest
        of the stop words, the version): what a cache of analysed text is keyed by."""
        digest = text_sha256("\n".join(sorted(self.stopwords)))[:12]
        language = f"zh-{self.segmenter}" if self.language == "zh" else self.language
        return f"{language}-stem{int(self.stem)}-sw{digest}-v{ANALYZER_VERSION}"

    def __call__(self, text: str) -> list[str]:
        """The text's index terms, in order."""
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
        """A fresh memo from segments to term ids (-1: dropped); its ``terms`` list the
        terms by id in order of first sight."""
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
    """bm25s's stop words of ``language`` (a primary subtag; none for a language without a list)."""
    import bm25s.stopwords as sw

    name = _STOPWORDS.get(language)
    return frozenset(getattr(sw, name)) if name else frozenset()
