"""Lexical models: BM25 (:mod:`.bm25`), query likelihood (:mod:`.ql`), TF-IDF (:mod:`.tfidf`),
the Lucene backend (:mod:`.lucene`) and docT5query (:mod:`.doct5query`), on one text
analysis (:mod:`.analysis`, run in worker processes by :mod:`.analysis_worker`) and one
tokenised corpus (:mod:`.tokenized`).
"""
