"""The bridge to MTEB (the ``mteb`` package): any MTEB model as the ``mteb`` retriever,
MTEB's legal retrieval tasks as ``--task mteb:NAME``, and the names both sides give one
measure (docs/models-mteb.md). ``mteb`` is imported only inside the functions that use it."""
