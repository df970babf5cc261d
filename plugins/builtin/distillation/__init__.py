"""``statbench distill``: a cross-encoder student distilled from a teacher's scores
(:mod:`.distill`, the command in :mod:`.cli`), its training data (:mod:`.data`), held-out
queries (:mod:`.holdout`), the student (:mod:`.student`) and training (:mod:`.train`).
"""
