"""Rerankers behind paid APIs (Cohere, Voyage; :mod:`.rerankers`), with what every API
model shares: a response cache (:mod:`.cache`), retries (:mod:`.retry`), spend
accounting (:mod:`.spend`) and the prices a reranking is costed at (:mod:`.prices`).
"""
