"""Issue 15, text analysis and lexical indexes: the fast paths give exactly what the plain
ones give. Tokens against a plain re-statement of the analysis (NFKC, lower case, ``\\w+``
or jieba, stop words, Snowball), worker processes against one process, the bm25s index
built from term ids against bm25s's own, the sparse query loops against dense scoring."""

from __future__ import annotations

import os
import random
import re
import unicodedata

import numpy as np
import pytest

from lexical_fixtures import context
from statbench.api import Document, Query
from statbench.data.analysis import _nfkc
from statbench.errors import StatbenchError
from statbench.models.lexical import analysis, analysis_worker
from statbench.models.lexical.analysis import Analyzer, _merge, analyse_texts, tokenize_corpus
from statbench.models.lexical.analysis_worker import CLAIMS, Part
from statbench.models.lexical.bm25 import BM25
from statbench.models.lexical.bm25_index import index_bm25s
from statbench.models.lexical.tfidf import TfIdf
from statbench.models.lexical.tokenized import TokenizedCorpus
from statbench.models.shared.topk import distinct, top_k

ELISION = re.compile(r"\b(?:l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu|quoiqu)['’]", re.IGNORECASE)

# ASCII, punctuation, accented and full-width forms, ligatures, combining marks, Hangul
# jamo, other scripts' digits, non-BMP letters, spaces of all kinds, Chinese words
ALPHABET = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ \t\n")
            + list(".,;:'’\"-–—()[]/\\")
            + list("éèàçÉÀœŒßẞİıﬁﬂ½²³ⅫⅣ①％，。；：（）！？　ＡＢｃｄ０１２３ǅÅÅﬀ𝐀𝟏٣ʼ")
            + list("个体工商户的债务劳动者婚姻中华人民共和国条第一二")
            + ["\u0301", "\u0308", "\u00a0", "\u2009", "\u200b", "\ufeff", "\u1100", "\u1161", "\u11a8", "\uac00",
               "l'", "qu'", "d’", "L'", "J’", " the ", " de ", "的"])


def random_texts(seed: int, n: int, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest))) for _ in range(n)]


def plain_analysis(analyzer: Analyzer, text: str) -> list[str]:
    """The analysis as the module docstring states it, one step after another."""
    text = unicodedata.normalize("NFKC", text).lower()
    if analyzer.language == "zh":
        import rjieba

        segments = [s.strip() for s in rjieba.cut(text)]
        return [s for s in segments if re.search(r"\w", s) and s not in analyzer.stopwords]
    if analyzer.language == "fr":
        text = ELISION.sub(" ", text)
    words = [w for w in re.findall(r"\w+", text) if w not in analyzer.stopwords]
    if not analyzer.stem:
        return words
    import Stemmer

    return Stemmer.Stemmer({"en": "english", "fr": "french"}[analyzer.language]).stemWords(words)


@pytest.mark.parametrize("language", ["en", "fr", "zh"])
@pytest.mark.parametrize("stem", [True, False])
def test_the_analyzer_gives_the_plain_analysis(language, stem):
    analyzer = Analyzer(language, stem=stem)
    for text in random_texts(len(language) + stem, 3000):
        assert analyzer(text) == plain_analysis(analyzer, text), repr(text)
    # ’ and — are not word characters: they split words as spaces do
    assert Analyzer("en")("Tenant’s deposits—rent…") == ["tenant", "s", "deposit", "rent"]
    assert Analyzer("en")("naïve café") == ["naïv", "café"]


def test_nfkc_is_unicodedata_nfkc():
    for text in random_texts(11, 3000) + ["ﬁ\u0301", "e\u0301\u0308", "\u1100\u1161\u11a8", "Ａ\u0301", "𝐀\u0301"]:
        assert _nfkc(text) == unicodedata.normalize("NFKC", text), repr(text)


def test_compact_analysis_numbers_terms_in_order_of_first_occurrence(monkeypatch):
    monkeypatch.setenv("STATBENCH_WORKERS", "1")
    texts = ["The tenant pays rent.", "", "Rent and deposit; the TENANT.", "deposit"]
    corpus = analyse_texts(Analyzer("en"), texts, compact=True)
    assert corpus.terms == ["tenant", "pay", "rent", "deposit"]
    assert corpus.ids.tolist() == [0, 1, 2, 2, 3, 0, 3] and corpus.offsets.tolist() == [0, 3, 3, 6, 7]
    assert corpus.lists() == [["tenant", "pay", "rent"], [], ["rent", "deposit", "tenant"], ["deposit"]]
    assert analyse_texts(Analyzer("en"), texts) == corpus.lists()
    # an analyzer that analysed other text before numbers the corpus as a fresh one
    used = Analyzer("en")
    used("zebra crossing")
    assert analyse_texts(used, texts, compact=True).terms == corpus.terms


def odd_blocks_here(monkeypatch):
    """This process claims only odd blocks, so the workers must analyse every even one
    (a forked worker inherits the patch: it claims as usual)."""
    here, claimed = os.getpid(), analysis_worker.claimed

    def odd_blocks_only(folder, n_blocks):
        if os.getpid() != here:
            yield from claimed(folder, n_blocks)
            return
        for number in range(1, n_blocks, 2):
            try:
                os.close(os.open(folder / CLAIMS / str(number), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
            yield number

    monkeypatch.setattr(analysis_worker, "claimed", odd_blocks_only)


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "spawned"])
@pytest.mark.parametrize("language,workers", [("en", "2"), ("fr", "3"), ("zh", "2")])
def test_worker_processes_give_the_tokens_and_ids_of_one_process(monkeypatch, language, workers, fork):
    texts = random_texts(7, 600, longest=60)
    monkeypatch.setenv("STATBENCH_WORKERS", "1")
    one = analyse_texts(Analyzer(language), texts, compact=True)
    assert one.lists() == [plain_analysis(Analyzer(language), text) for text in texts]
    monkeypatch.setenv("STATBENCH_WORKERS", workers)
    monkeypatch.setattr(analysis, "can_fork", lambda: fork)
    odd_blocks_here(monkeypatch)
    advanced = []
    many = analyse_texts(Analyzer(language), texts, lambda n=1: advanced.append(n), compact=True)
    assert sum(advanced) == len(texts)
    assert many.terms == one.terms
    assert many.ids.dtype == np.int32 and many.ids.tolist() == one.ids.tolist()
    assert many.offsets.tolist() == one.offsets.tolist()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_worker_that_fails_is_reported_with_its_traceback(monkeypatch):
    def disk_full(self, path):
        raise OSError("No space left on device")

    monkeypatch.setenv("STATBENCH_WORKERS", "2")
    monkeypatch.setattr(analysis, "can_fork", lambda: True)  # even when earlier tests loaded torch
    monkeypatch.setattr(analysis_worker.Part, "save", disk_full)  # only workers save a part
    with pytest.raises(StatbenchError, match=r"(?s)an analysis worker failed \(exit 1; STATBENCH_WORKERS=1 analyses "
                       r"in this process\):\nTraceback.*OSError: No space left on device"):
        analyse_texts(Analyzer("en"), random_texts(3, 200))


def test_a_lost_block_is_an_error_not_a_shorter_corpus():
    part = Part(["a"], claims=[(0, 1)], ids=[np.zeros(2, dtype=np.int32)], lengths=[np.array([1, 1])])
    with pytest.raises(StatbenchError, match=r"text analysis lost 1 of 2 blocks \(STATBENCH_WORKERS=1"):
        _merge(4, 2, [part])


def test_merged_parts_take_each_block_in_corpus_order_with_first_occurrence_ids():
    # blocks 0 and 2 analysed by one process, block 1 by the other (two texts per block)
    first = Part(["x", "y", "z"], claims=[(0, 2), (2, 3)],
                 ids=[np.array([0, 1, 0], dtype=np.int32), np.array([2, 1], dtype=np.int32)],
                 lengths=[np.array([2, 1]), np.array([1, 1])])
    second = Part(["w", "y"], claims=[(1, 2)], ids=[np.array([1, 0, 0], dtype=np.int32)],
                  lengths=[np.array([1, 2])])
    corpus = _merge(6, 2, [first, second])
    assert corpus.terms == ["x", "y", "w", "z"]  # w first seen in block 1, z in block 2
    assert corpus.ids.tolist() == [0, 1, 0, 1, 2, 2, 3, 1]
    assert corpus.offsets.tolist() == [0, 2, 3, 4, 6, 7, 8]


@pytest.mark.parametrize("bad", [2, -1])
def test_a_term_id_outside_its_vocabulary_is_an_error_not_a_wrong_term(bad):
    # the first process knew 2 terms after its block 0: id 2 (or -1) names no term of it
    first = Part(["x", "y", "z"], claims=[(0, 2), (2, 3)],
                 ids=[np.array([0, bad], dtype=np.int32), np.array([2], dtype=np.int32)],
                 lengths=[np.array([1, 1]), np.array([1, 0])])
    second = Part(["w"], claims=[(1, 1)], ids=[np.array([0], dtype=np.int32)], lengths=[np.array([1, 0])])
    with pytest.raises(StatbenchError, match="outside its vocabulary"):
        _merge(6, 2, [first, second])


def test_the_tokens_entry_holds_the_compact_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("STATBENCH_WORKERS", "1")
    texts = ["Tenant rent", "deposit"]
    built = tokenize_corpus(Analyzer("en"), ["a", "b"], texts, tmp_path, "sum")
    (entry,) = [p for p in (tmp_path / "tokens").iterdir() if not p.name.startswith(".")]
    assert entry.name.endswith("-ids")
    read = tokenize_corpus(Analyzer("en"), ["a", "b"], texts, tmp_path, "sum")
    assert read.lists() == built.lists() == [["tenant", "rent"], ["deposit"]]
    with pytest.raises(ValueError, match="disagree"):
        TokenizedCorpus(["a"], np.array([1], dtype=np.int32), np.array([0, 1])).check()


# --- indexes and query loops ------------------------------------------------------------------


def random_corpus(seed: int, n_docs: int = 300, n_terms: int = 60) -> TokenizedCorpus:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n_terms)]
    docs = [[words[min(int(rng.zipf(1.3)) - 1, n_terms - 1)] for _ in range(int(rng.integers(0, 30)))]
            for _ in range(n_docs)]
    terms, ids, offsets = [], [], [0]
    index = {}
    for doc in docs:
        for word in doc:
            ids.append(index.setdefault(word, len(index)))
            if len(index) > len(terms):
                terms.append(word)
        offsets.append(len(ids))
    return TokenizedCorpus(terms, np.array(ids, dtype=np.int32), np.array(offsets, dtype=np.int64))


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (2.5, 0.2), (0.9, 0.4)])
def test_the_bm25s_index_from_ids_is_bm25s_own_bit_for_bit(method, k1, b):
    import bm25s

    corpus = random_corpus(int(k1 * 10))
    own = bm25s.BM25(k1=k1, b=b, method=method)
    own.index(corpus.lists(), show_progress=False)
    fast = bm25s.BM25(k1=k1, b=b, method=method)
    index_bm25s(fast, corpus)
    assert set(fast.vocab_dict) == set(own.vocab_dict) and fast.vocab_dict[""] == len(corpus.terms)
    for name in ("data", "indices", "indptr"):
        assert fast.scores[name].dtype == own.scores[name].dtype
    a, b_ = own.scores, fast.scores
    for term in corpus.terms:
        i, j = own.vocab_dict[term], fast.vocab_dict[term]
        mine, theirs = slice(b_["indptr"][j], b_["indptr"][j + 1]), slice(a["indptr"][i], a["indptr"][i + 1])
        assert b_["indices"][mine].tolist() == a["indices"][theirs].tolist()
        assert b_["data"][mine].tobytes() == a["data"][theirs].tobytes()
    if own.nonoccurrence_array is None:
        assert fast.nonoccurrence_array is None
    else:
        order = [own.vocab_dict[t] for t in corpus.terms]
        assert fast.nonoccurrence_array.tobytes() == own.nonoccurrence_array[order].tobytes()
    rng = random.Random(3)
    for _ in range(50):
        query = rng.choices(corpus.terms, k=rng.randint(1, 6))
        assert fast.get_scores(query).tobytes() == own.get_scores(query).tobytes()


def _count_sparse(monkeypatch, module) -> list:
    """Calls of the sparse path (the matched documents' union) in ``module``."""
    calls = []

    def counted(values):
        calls.append(1)
        return distinct(values)

    monkeypatch.setattr(module, "distinct", counted)
    return calls


def test_bm25_ranks_sparse_queries_as_dense_scoring_does(tmp_path, monkeypatch):
    from statbench.models.lexical import bm25

    monkeypatch.setenv("STATBENCH_WORKERS", "1")
    sparse = _count_sparse(monkeypatch, bm25)
    rng = random.Random(5)
    words = [f"word{i}" for i in range(80)]
    docs = [Document(f"d{i}", " ".join(rng.choices(words[: 5 + i % 75], k=rng.randint(0, 25)))) for i in range(400)]
    for method in ("lucene", "bm25+"):
        model = BM25(method=method)
        model.index(docs, context(tmp_path, name=method))
        for _ in range(60):
            terms = [t for t in rng.choices(words, k=rng.randint(1, 4)) if t in model._model.vocab_dict]
            if not terms:  # (search_terms gives such a query an empty ranking without scoring)
                continue
            # words late in the list are rare: few postings, the sparse path
            dense = top_k(model._model.get_scores(terms), model._doc_ids, 10)
            assert model._rank(terms, 10) == dense
    assert 5 < len(sparse) < 60  # both paths taken (bm25+ scores every document: never sparse)


def test_tfidf_scores_from_postings_as_the_sparse_product(tmp_path, monkeypatch):
    from statbench.models.lexical import tfidf

    monkeypatch.setenv("STATBENCH_WORKERS", "1")
    sparse = _count_sparse(monkeypatch, tfidf)
    rng = random.Random(9)
    words = [f"word{i}" for i in range(80)]  # words late in the list are rare: the sparse path
    docs = [Document(f"d{i}", " ".join(rng.choices(words[: 5 + i % 75], k=rng.randint(0, 30)))) for i in range(300)]
    queries = [Query(f"q{i}", " ".join(rng.choices(words, k=rng.randint(1, 6)))) for i in range(80)]
    for sublinear in (False, True):
        model = TfIdf(sublinear_tf=sublinear)
        model.index(docs, context(tmp_path, name=str(sublinear)))
        assert model._postings is not None
        fast = model.search(queries, 20, context(tmp_path))
        model._postings = None  # the plain product docs @ q.T
        assert model.search(queries, 20, context(tmp_path)) == fast
    assert 10 < len(sparse) < 150  # both paths taken


def test_distinct_is_np_unique():
    rng = np.random.default_rng(1)
    for n in (0, 1, 5, 1000):
        values = rng.integers(0, 50, size=n).astype(np.int32)
        assert distinct(values).tolist() == np.unique(values).tolist()
