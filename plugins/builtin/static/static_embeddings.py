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

import zlib
from pathlib import Path
from typing import Sequence

from statbench.api import (
    CacheEntry,
    DataFormatError,
    Document,
    Param,
    ParamError,
    Query,
    Ranking,
    RunContext,
    StatbenchError,
    hookimpl,
    primary_language,
)
from statbench.models.lexical.analysis import SEGMENTER_PARAM
from statbench.models.lexical.base import LexicalRetriever
from statbench.models.shared.artefacts import load_or_build
from statbench.models.shared.specs import SEED
from statbench.models.shared.topk import top_k

VECTORS_FILE = "vectors.kv"


def stable_hash(text: str) -> int:
    """gensim seeds each word's initial vector with ``hashfxn(seed + word)``; the default
    ``hash`` changes with every interpreter, which would make training irreproducible."""
    return zlib.crc32(text.encode("utf-8"))


class MeanPooling(LexicalRetriever):
    family = "static"
    kind = "word2vec"
    stem = False  # pretrained vectors are of surface forms
    default_params = {
        "vectors": Param("", "pretrained vectors file (word2vec .txt/.vec[.gz]/.bin, fastText .bin, gensim .kv); "
                         "empty: train on the corpus"),
        "dim": Param(100, "dimension of trained vectors", min=1),
        "window": Param(5, "context window of training (words each side)", min=1),
        "min_count": Param(2, "training ignores words rarer than this", min=0),
        "epochs": Param(5, "training passes over the corpus", min=1),
        "sg": Param(False, "skip-gram (true) or CBOW (false) training"),
        "seed": SEED,
        "workers": Param(1, "training threads (more than 1 is not reproducible)", min=1),
        **SEGMENTER_PARAM,
    }

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

    def train_vectors(self, sentences: list[list[str]], ctx: RunContext, source: dict | None = None):
        """Vectors trained on the corpus, cached as the entry ``cache_dir/vectors`` (kind
        ``word-vectors``) keyed by the training settings and ``source`` (the tokens' key)."""
        from gensim.models import KeyedVectors

        key = {"kind": self.kind, "training": self.training_key(ctx), "source": source or {}}
        entry = CacheEntry(ctx.cache_dir / "vectors", "word-vectors", key)

        def build(staging: Path):
            ctx.log.info("%s: training %d-d vectors on %d documents", self.name, self.params["dim"], len(sentences))
            model = self.build_model(sentences, ctx)
            model.wv.save(str(staging / VECTORS_FILE))
            return model.wv

        wv, reused = load_or_build(entry, build, lambda folder: KeyedVectors.load(str(folder / VECTORS_FILE)))
        if reused:
            ctx.log.info("%s: reusing vectors trained on the corpus %s", self.name, entry.path)
        return wv

    def training_key(self, ctx: RunContext) -> dict:
        """Everything the trained vectors depend on besides the sentences."""
        return {k: v for k, v in self.model_kwargs().items() if k != "hashfxn"}

    def model_kwargs(self) -> dict:
        p = self.params
        return dict(vector_size=int(p["dim"]), window=int(p["window"]), min_count=int(p["min_count"]),
                    epochs=int(p["epochs"]), sg=int(bool(p["sg"])), seed=int(p["seed"]),
                    workers=int(p["workers"]), hashfxn=stable_hash)

    def build_model(self, sentences, ctx: RunContext):
        from gensim.models import Word2Vec

        return Word2Vec(sentences=sentences, **self.model_kwargs())

    # --- pooling and search ------------------------------------------------------------

    def embed(self, tokens: list[str]):
        """Mean of the vectors of the known tokens, L2-normalised (zeros when none is known)."""
        import numpy as np

        known = [t for t in tokens if t in self._known]
        if not known:
            return np.zeros(self._wv.vector_size, dtype=np.float32)
        mean = np.mean([self._wv[t] for t in known], axis=0).astype(np.float32)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm > 0 else mean

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        import numpy as np

        self._doc_ids = [d.id for d in corpus]
        tokens = self.tokens(corpus, ctx)
        vectors = self.params["vectors"]
        if vectors:
            self._wv = self.load_vectors(Path(vectors).expanduser())
        else:
            self._wv = self.train_vectors(tokens, ctx, self.corpus_key(corpus, ctx))
        self._known = Known(self._wv, subwords=self.kind == "fasttext")
        advance = ctx.progress(f"{self.name} pooling", len(tokens))
        rows = []
        for doc_tokens in tokens:
            rows.append(self.embed(doc_tokens))
            advance()
        self._docs = np.vstack(rows) if rows else np.zeros((0, self._wv.vector_size), dtype=np.float32)

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        import numpy as np

        def rank(terms: list[str], k: int) -> Ranking:
            q = self.embed(terms)
            # cosines may be negative: every document tied with the k-th is kept
            return top_k(self._docs @ q, self._doc_ids, k, positive=False) if k and np.any(q) else []

        return self.search_terms(queries, k, ctx, self._known, rank)


class Known:
    """The words a set of vectors has a vector for: fastText's answer for any word through
    its character n-grams (``subwords``)."""

    def __init__(self, wv, subwords: bool):
        self.wv, self.subwords = wv, subwords

    def __contains__(self, token: str) -> bool:
        return token in self.wv.key_to_index or (self.subwords and token in self.wv)


class Word2VecRetriever(MeanPooling):
    name = "word2vec"
    kind = "word2vec"
    description = "word2vec mean pooling, cosine (pretrained vectors=PATH, or trained on the corpus)"


class FastTextRetriever(MeanPooling):
    name = "fasttext"
    kind = "fasttext"
    description = "fastText mean pooling, cosine (pretrained .bin/.vec, or trained on the corpus)"
    #: min_n/max_n 0 = by language: character 1-2-grams for Chinese words, 3-6-grams otherwise
    default_params = {
        **MeanPooling.default_params,
        "min_n": Param(0, "shortest character n-gram (0: by language, 1 for Chinese, 3 otherwise)", min=0),
        "max_n": Param(0, "longest character n-gram (0: by language, 2 for Chinese, 6 otherwise)", min=0),
        "bucket": Param(200_000, "hash buckets for character n-grams", min=1),
    }

    def __init__(self, **params):
        super().__init__(**params)
        min_n, max_n = self.params["min_n"], self.params["max_n"]
        if min_n and max_n and min_n > max_n:
            raise ParamError(f"parameters min_n={min_n}, max_n={max_n} for {self.name}: min_n must not exceed max_n")

    def ngrams(self, language: str) -> tuple[int, int]:
        min_n, max_n = int(self.params["min_n"]), int(self.params["max_n"])
        if not min_n or not max_n:
            min_n, max_n = (1, 2) if primary_language(language) == "zh" else (3, 6)  # zh-Hans too
        return min_n, max_n

    def training_key(self, ctx: RunContext) -> dict:
        min_n, max_n = self.ngrams(ctx.language)
        return {**super().training_key(ctx), "min_n": min_n, "max_n": max_n, "bucket": int(self.params["bucket"])}

    def build_model(self, sentences, ctx: RunContext):
        from gensim.models import FastText

        min_n, max_n = self.ngrams(ctx.language)
        return FastText(sentences=sentences, min_n=min_n, max_n=max_n, bucket=int(self.params["bucket"]),
                        **self.model_kwargs())


@hookimpl
def register_retrievers(register):
    register(Word2VecRetriever)
    register(FastTextRetriever)
