"""``statbench distill`` and its student (registered by :mod:`.plugin`): a cross-encoder
student distilled from a teacher's scores (:mod:`.distill`, the command in :mod:`.cli`), its
training data (:mod:`.data`), what it must never train on (:mod:`.holdout`: the task's
evaluation material), the student reranker (:mod:`.student`) and its training (:mod:`.train`).
"""
