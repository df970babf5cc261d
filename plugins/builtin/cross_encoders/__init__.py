"""Cross-encoder and monoT5 rerankers (:mod:`.cross_encoder`): a (query, passage) pair in,
a relevance score out.
"""
