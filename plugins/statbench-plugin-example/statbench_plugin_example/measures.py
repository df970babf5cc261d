"""A custom measure: ``Jaccard@k``, the overlap of the top k with the relevant set.

    Jaccard@k = |top k ∩ relevant| / |top k ∪ relevant|

The top k is the ranking's first k documents in the harness's order (score descending,
ties by doc id); without ``@k`` it is the whole ranking. A document is relevant when its
grade is >= ``rel``. 1.0 only when the top k is exactly the relevant set, so unlike
recall it also penalises every wrong article retrieved.
"""

from __future__ import annotations

from statbench.api import CustomMeasure, Param


class Jaccard(CustomMeasure):
    name = "Jaccard"  # what users write: Jaccard@3, Jaccard(rel=2)@5
    description = "|top k ∩ relevant| / |top k ∪ relevant| (example plugin)"
    default_params = {
        "rel": Param(1, min=1, description="minimum grade of a relevant document"),
        "cutoff": Param(None, type=int, min=1, description="k: the top k documents (whole ranking if unset)"),
    }
    bounds = (0.0, 1.0)
    version = "1"

    def per_query(self, ranking, qrels, *, rel: int, cutoff: int | None) -> float:
        top = {doc for doc, _ in (ranking if cutoff is None else ranking[:cutoff])}
        relevant = {doc for doc, grade in qrels.items() if grade >= rel}
        union = top | relevant
        return len(top & relevant) / len(union) if union else 0.0
