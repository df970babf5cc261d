"""Lexical models: BM25 (:mod:`.bm25`), query likelihood (:mod:`.ql`), TF-IDF (:mod:`.tfidf`),
the Lucene backend (:mod:`.lucene`) and docT5query (:mod:`.doct5query`), on one text
analysis (``statbench.api.Analyzer``, public so that plugins share it; a corpus analysed in
worker processes and cached by :mod:`.analysis` and :mod:`.analysis_worker`) and one
tokenised corpus (:mod:`.tokenized`).
"""
