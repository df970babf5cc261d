"""ColBERTv2 through colbert-ai: the model (:mod:`.colbert`), the library's set-up
(:mod:`.colbert_ai`) and its index (:mod:`.colbert_index`).
"""
