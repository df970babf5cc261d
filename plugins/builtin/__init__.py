"""Built-in models, one subpackage per model family. Each model module is its own plugin,
named by an entry point in the ``statbench`` group of statbench's pyproject, exactly as a
third-party plugin is, and takes statbench's names from :mod:`statbench.api`.

- lexical models: :mod:`.lexical` (BM25, query likelihood, TF-IDF, docT5query);
- static word embeddings: :mod:`.static`;
- dense bi-encoders: :mod:`.dense`, and the dense statute retriever with its graph:
  :mod:`.gdsr`; the LSI classifier: :mod:`.lsi`;
- late interaction (ColBERTv2): :mod:`.late_interaction`;
- rerankers: cross-encoders and monoT5 (:mod:`.cross_encoders`), listwise LLMs
  (:mod:`.listwise`), paid APIs (:mod:`.api_rerankers`), and a student distilled from a
  teacher with ``statbench distill`` (:mod:`.distillation`);
- runs fused by ranx, as a retriever and as ``statbench fuse``: :mod:`.fusion`;
- the bridge to MTEB (its models as a retriever, its tasks as ``mteb:NAME``): :mod:`.mteb_bridge`;
- what several families share (hub access, model specs, artefacts, top-k): :mod:`.shared`.
"""
