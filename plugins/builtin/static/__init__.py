"""Static word embeddings (word2vec, fastText) averaged into vectors (:mod:`.static_embeddings`).
"""
