"""Listwise LLM rerankers (RankGPT-style): the reranker (:mod:`.listwise`), its sliding
window (:mod:`.window`), prompts (:mod:`.prompt`) and backends (:mod:`.backends`).
"""
