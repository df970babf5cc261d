"""Lexical models: BM25 (:mod:`.bm25`), query likelihood (:mod:`.ql`), TF-IDF (:mod:`.tfidf`),
the Lucene backend (:mod:`.lucene`) and docT5query (:mod:`.doct5query`), with what they
share (:mod:`.base`: the analyzer a model's parameters select, the cached tokenised corpus),
on one text analysis (``statbench.api.Analyzer``, public so that plugins share it; a corpus
analysed in worker processes and cached by :mod:`.analysis` and :mod:`.analysis_worker`),
one tokenised corpus (:mod:`.tokenized`) and bm25s (imported by :mod:`.bm25s_import`, its
index built by :mod:`.bm25_index`).
"""
