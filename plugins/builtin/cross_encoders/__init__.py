"""Cross-encoder and monoT5 rerankers.
"""
