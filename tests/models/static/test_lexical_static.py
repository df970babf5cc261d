"""word2vec / fastText mean pooling: pretrained vectors from files, vectors trained on the corpus."""

from __future__ import annotations

import random

import numpy as np
import pytest

from statbench.api import Document, Query
from statbench.errors import DataFormatError, StatbenchError
from statbench.models.static.static_embeddings import FastTextRetriever, Word2VecRetriever
from lexical_fixtures import context, top

HOUSING = ["loyer", "bail", "locataire", "bailleur", "logement", "appartement", "caution", "préavis"]
WORK = ["salaire", "employeur", "travailleur", "contrat", "licenciement", "congé", "emploi", "patron"]


def topical_corpus(n: int = 120, seed: int = 7) -> list[Document]:
    """Documents drawing six words from one of two topics; word2vec must learn which words co-occur."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        topic = HOUSING if i % 2 == 0 else WORK
        docs.append(Document(f"{'h' if topic is HOUSING else 'w'}{i:03d}", " ".join(rng.choices(topic, k=6))))
    return docs


TRAIN = {"dim": 16, "epochs": 100, "min_count": 1, "window": 5}


@pytest.mark.parametrize("cls", [Word2VecRetriever, FastTextRetriever], ids=["word2vec", "fasttext"])
def test_trained_vectors_rank_by_topic(tmp_path, cls):
    corpus = topical_corpus()
    model = cls(**TRAIN)
    model.index(corpus, context(tmp_path, "fr"))
    ranking = top(model.search([Query("q", "loyer")], 1000, context(tmp_path, "fr"))["q"])
    assert len(ranking) == len(corpus)
    # not only the documents sharing the word: every housing document outranks every work document
    without_word = {d.id for d in corpus if d.id.startswith("h") and "loyer" not in d.text}
    assert without_word
    assert all(doc.startswith("h") for doc in ranking[:60]), ranking[:60]
    # training is deterministic (one worker, fixed seed, stable hashing): same vectors again
    again = cls(**TRAIN)
    again.index(corpus, context(tmp_path, "fr", name="again"))
    np.testing.assert_array_equal(model._docs, again._docs)


def test_fasttext_embeds_unseen_words(tmp_path):
    model = FastTextRetriever(**TRAIN)
    model.index(topical_corpus(), context(tmp_path, "fr"))
    ranking = top(model.search([Query("q", "loyers salariés")], 5, context(tmp_path, "fr"))["q"])
    assert len(ranking) == 5  # neither word is in the vocabulary: their n-grams are
    word2vec = Word2VecRetriever(**TRAIN)
    word2vec.index(topical_corpus(), context(tmp_path, "fr", name="w2v"))
    assert word2vec.search([Query("q", "loyers salariés")], 5, context(tmp_path, "fr"))["q"] == []


def test_pretrained_word2vec_text_file(tmp_path):
    vectors = tmp_path / "vectors.vec"
    vectors.write_text("3 2\nrent 1 0\ndeposit 0 1\nlandlord 1 1\n", encoding="utf-8")
    docs = [Document("a", "rent"), Document("b", "deposit deposit"), Document("c", "rent landlord")]
    model = Word2VecRetriever(vectors=str(vectors))
    model.index(docs, context(tmp_path))
    ranking = model.search([Query("q", "rent")], 10, context(tmp_path))["q"]
    # c = mean((1,0),(1,1)) = (1, 0.5) -> cosine with (1,0) = 1/sqrt(1.25)
    assert dict(ranking) == pytest.approx({"a": 1.0, "c": 1 / np.sqrt(1.25), "b": 0.0}, abs=1e-6)
    assert top(ranking) == ["a", "c", "b"]


def test_pretrained_binary_formats(tmp_path):
    from gensim.models import FastText, KeyedVectors
    from gensim.models.fasttext import save_facebook_model

    corpus = topical_corpus(40)
    sentences = [d.text.split() for d in corpus]
    fasttext = FastText(sentences=sentences, vector_size=8, min_count=1, epochs=2, workers=1, bucket=1000)
    save_facebook_model(fasttext, str(tmp_path / "ft.bin"))
    model = FastTextRetriever(vectors=str(tmp_path / "ft.bin"))
    model.index(corpus, context(tmp_path, "fr"))
    assert model._wv.vector_size == 8 and "loyers" in model._wv  # sub-words came along
    fasttext.wv.save_word2vec_format(str(tmp_path / "w2v.bin"), binary=True)
    model = Word2VecRetriever(vectors=str(tmp_path / "w2v.bin"))
    model.index(corpus, context(tmp_path, "fr", name="w2v"))
    assert isinstance(model._wv, KeyedVectors) and len(model._wv) == len(HOUSING) + len(WORK)


def test_bad_vector_files(tmp_path):
    with pytest.raises(StatbenchError, match="vectors file .*missing.vec not found"):
        Word2VecRetriever(vectors=str(tmp_path / "missing.vec")).index([Document("a", "x")], context(tmp_path))
    bad = tmp_path / "bad.vec"
    bad.write_text("not a header\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="bad.vec: cannot read word2vec vectors"):
        Word2VecRetriever(vectors=str(bad)).index([Document("a", "x")], context(tmp_path))
