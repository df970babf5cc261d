"""word2vec and fastText mean pooling (gensim): cosine between mean word vectors.

Vectors come from ``--param vectors=PATH`` (word2vec text ``.txt``/``.vec``[.gz] or binary
``.bin``; fastText's ``.bin`` keeps its sub-word n-grams, so unseen words still get a
vector; gensim ``.kv`` files also load), or, when no path is given, are trained on the
task's corpus (documents only: test queries are never trained on). Training is
deterministic: one worker thread, a fixed seed, and a hash function for the initial
vectors that does not depend on ``PYTHONHASHSEED``.

Texts are tokenised by statbench's analyzers *without stemming* (pretrained vectors are
of surface forms, and embeddings already tie inflections together) but with lower-casing,
elision removal (fr), jieba segmentation (zh) and stop words removed (they would dominate
the mean)."""

from __future__ import annotations

import shutil
import zlib
from pathlib import Path
from typing import Sequence

from statbench import hookimpl
from statbench.api import Document, Query, Ranking, Retriever, RunContext
from statbench.errors import DataFormatError, StatbenchError

from .analysis import SEGMENTER_PARAM, Analyzer, tokenize_corpus


def stable_hash(text: str) -> int:
    """gensim seeds each word's initial vector with ``hashfxn(seed + word)``; the default
    ``hash`` changes with every interpreter, which would make training irreproducible."""
    return zlib.crc32(text.encode("utf-8"))


class MeanPooling(Retriever):
    family = "static"
    kind = "word2vec"
    default_params = {
        "vectors": "", "dim": 100, "window": 5, "min_count": 2, "epochs": 5, "sg": False, "seed": 42,
        "workers": 1, **SEGMENTER_PARAM,
    }

    def __init__(self, **params):
        super().__init__(**params)
        self._doc_ids: list[str] = []

    def analyzer(self, ctx: RunContext) -> Analyzer:
        return Analyzer(ctx.language, stopwords=ctx.stopwords, stem=False, segmenter=self.params["segmenter"])

    # --- vectors ---------------------------------------------------------------------

    def load_vectors(self, path: Path):
        from gensim.models import KeyedVectors

        if not path.is_file():
            raise StatbenchError(f"{self.name}: vectors file {path} not found (--param vectors=PATH)")
        name = path.name.lower()
        try:
            if name.endswith(".kv"):
                return KeyedVectors.load(str(path))
            if self.kind == "fasttext" and name.endswith(".bin"):
                from gensim.models.fasttext import load_facebook_vectors

                return load_facebook_vectors(str(path))
            return KeyedVectors.load_word2vec_format(str(path), binary=name.endswith((".bin", ".bin.gz")),
                                                     unicode_errors="replace")
        except (ValueError, EOFError, UnicodeDecodeError, NotImplementedError, AssertionError) as exc:
            raise DataFormatError(path, f"cannot read {self.kind} vectors: {type(exc).__name__}: {exc}") from None

    def train_vectors(self, sentences: list[list[str]], ctx: RunContext):
        from gensim.models import KeyedVectors

        path = ctx.cache_dir / "vectors" / "vectors.kv"
        if path.is_file():
            ctx.log.info("%s: reusing vectors trained on the corpus %s", self.name, path)
            return KeyedVectors.load(str(path))
        ctx.log.info("%s: training %d-d vectors on %d documents", self.name, self.params["dim"], len(sentences))
        model = self.build_model(sentences)
        tmp = path.parent.with_name("vectors.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        model.wv.save(str(tmp / path.name))
        shutil.rmtree(path.parent, ignore_errors=True)
        tmp.replace(path.parent)
        return model.wv

    def model_kwargs(self) -> dict:
        p = self.params
        return dict(vector_size=int(p["dim"]), window=int(p["window"]), min_count=int(p["min_count"]),
                    epochs=int(p["epochs"]), sg=int(bool(p["sg"])), seed=int(p["seed"]),
                    workers=int(p["workers"]), hashfxn=stable_hash)

    def build_model(self, sentences):
        from gensim.models import Word2Vec

        return Word2Vec(sentences=sentences, **self.model_kwargs())

    # --- pooling and search ------------------------------------------------------------

    def embed(self, tokens: list[str]):
        """Mean of the vectors of the known tokens, L2-normalised (zeros when none is known)."""
        import numpy as np

        known = [t for t in tokens if self._has(t)]
        if not known:
            return np.zeros(self._wv.vector_size, dtype=np.float32)
        mean = np.mean([self._wv[t] for t in known], axis=0).astype(np.float32)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm > 0 else mean

    def _has(self, token: str) -> bool:
        # fastText vectors answer for any word through its character n-grams
        return token in self._wv.key_to_index or (self.kind == "fasttext" and token in self._wv)

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        import numpy as np

        self._doc_ids = [d.id for d in corpus]
        tokens = tokenize_corpus(self.analyzer(ctx), self._doc_ids, [d.text for d in corpus], ctx.cache_root,
                                 ctx.data_checksum, ctx.progress)
        vectors = self.params["vectors"]
        self._wv = self.load_vectors(Path(vectors).expanduser()) if vectors else self.train_vectors(tokens, ctx)
        advance = ctx.progress(f"{self.name} pooling", len(tokens))
        rows = []
        for doc_tokens in tokens:
            rows.append(self.embed(doc_tokens))
            advance()
        self._docs = np.vstack(rows) if rows else np.zeros((0, self._wv.vector_size), dtype=np.float32)

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        import numpy as np

        analyzer = self.analyzer(ctx)
        k = min(k, len(self._doc_ids))
        out: dict[str, Ranking] = {}
        for query in queries:
            q = self.embed(analyzer(query.text))
            out[query.id] = []
            if k and np.any(q):
                scores = self._docs @ q
                top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
                # keep every document tied with the k-th, so the harness breaks ties by doc id
                top = np.flatnonzero(scores >= scores[top].min())
                out[query.id] = [(self._doc_ids[i], float(scores[i])) for i in top]
        return out


class Word2VecRetriever(MeanPooling):
    name = "word2vec"
    kind = "word2vec"
    description = "word2vec mean pooling, cosine (pretrained vectors=PATH, or trained on the corpus)"


class FastTextRetriever(MeanPooling):
    name = "fasttext"
    kind = "fasttext"
    description = "fastText mean pooling, cosine (pretrained .bin/.vec, or trained on the corpus)"
    #: min_n/max_n 0 = by language: character 1-2-grams for Chinese words, 3-6-grams otherwise
    default_params = {**MeanPooling.default_params, "min_n": 0, "max_n": 0, "bucket": 200_000}

    def build_model(self, sentences):
        from gensim.models import FastText

        p = self.params
        min_n, max_n = int(p["min_n"]), int(p["max_n"])
        if not min_n or not max_n:
            min_n, max_n = (1, 2) if self._language == "zh" else (3, 6)
        return FastText(sentences=sentences, min_n=min_n, max_n=max_n, bucket=int(p["bucket"]), **self.model_kwargs())

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        self._language = ctx.language
        super().index(corpus, ctx)


@hookimpl
def register_retrievers(register):
    register(Word2VecRetriever)
    register(FastTextRetriever)
