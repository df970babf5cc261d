"""Rerankers behind paid APIs (Cohere, Voyage; :mod:`.rerankers`), with what every API
model shares: a response cache (:mod:`.cache`), retries (:mod:`.retry`) and spend
accounting (:mod:`.spend`).
"""
