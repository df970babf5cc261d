"""Bi-encoders (:mod:`.biencoder`) with their fine-tuning (:mod:`.training`), passage
chunking (:mod:`.chunking`) and the cache of encoded corpora (:mod:`.encoding_cache`).
"""
