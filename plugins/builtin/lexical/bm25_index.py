"""bm25s's index built from a :class:`TokenizedCorpus` in a few array operations.

``bm25s.BM25.index`` builds a vocabulary from token lists, maps every token to an id,
then counts each document's terms with a ``Counter`` and scores them document by
document in Python (most of an uncached STARD run's indexing time). Here the term
frequencies come from one sort of (term, document) pairs and every score from bm25s's
own idf and term-frequency functions applied to whole arrays, in the dtypes bm25s's
per-document arithmetic uses (numpy >= 2 promotion), so each stored score is the same
float32 bit for bit (tests/models/lexical/test_lexical_models.py compares the two indexes). Term ids
differ from bm25s's (it numbers terms in set order, which varies between processes);
scores and rankings do not depend on them."""

from __future__ import annotations

from statbench.models.lexical.tokenized import TokenizedCorpus


def index_bm25s(model, corpus: TokenizedCorpus) -> None:
    """Give ``model`` (a fresh ``bm25s.BM25``) the index ``model.index(corpus.lists())``
    would give it."""
    import numpy as np

    if int(np.__version__.split(".")[0]) < 2:  # other scalar promotion rules: bm25s's own loop
        model.index(corpus.lists(), show_progress=False)
        return
    from bm25s import scoring

    n_docs, n_vocab = len(corpus), len(corpus.terms)
    lengths = corpus.lengths()
    avg_doc_len = lengths.mean()  # bm25s: np.array([len(ids) for ids in corpus]).mean()
    pairs, tf = np.unique(corpus.ids.astype(np.int64) * max(n_docs, 1) + corpus.doc_of_token(), return_counts=True)
    term, doc = np.divmod(pairs, max(n_docs, 1))  # sorted by term, then document: the CSC order
    df = np.bincount(term, minlength=n_vocab)
    doc_frequencies = dict(enumerate(df.tolist()))
    idf_of = scoring._select_idf_scorer(model.idf_method)
    if model.method in model.methods_requiring_nonoccurrence:
        model.nonoccurrence_array = scoring._build_nonoccurrence_array(
            doc_frequencies=doc_frequencies, n_docs=n_docs, compute_idf_fn=idf_of,
            calculate_tfc_fn=scoring._select_tfc_scorer(model.method), l_d=avg_doc_len, l_avg=avg_doc_len,
            k1=model.k1, b=model.b, delta=model.delta, dtype=model.dtype)
    else:
        model.nonoccurrence_array = None
    idf = scoring._build_idf_array(doc_frequencies=doc_frequencies, n_docs=n_docs, compute_idf_fn=idf_of,
                                   dtype=model.dtype)
    # bm25s passes each document's length as a Python int and tf as float32: the same
    # float64 and float32 operands, here one array each
    tfc = scoring._select_tfc_scorer(model.method)(
        tf_array=tf.astype(model.dtype), l_d=lengths[doc].astype(np.float64), l_avg=avg_doc_len, k1=model.k1,
        b=model.b, delta=model.delta)
    scores = idf[term] * tfc
    if model.method in ("bm25l", "bm25+"):
        scores -= model.nonoccurrence_array[term]
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)  # the arrays' types of bm25s's default CSC builder
    np.cumsum(df, out=indptr[1:])
    model.scores = {"data": scores.astype(model.dtype), "indices": doc.astype(model.int_dtype), "indptr": indptr,
                    "num_docs": n_docs}
    vocab = {term: i for i, term in enumerate(corpus.terms)}
    if "" not in vocab:  # bm25s's create_empty_token
        vocab[""] = len(corpus.terms)
    model.vocab_dict = vocab
    model.unique_token_ids_set = set(vocab.values())
