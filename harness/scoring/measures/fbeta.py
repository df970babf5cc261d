"""Set-based F-beta over the top k (COLIEE reports F2).

The retrieved set is the top ``k`` of the ranking (the whole ranking without ``@k``), in
the order it is given (the one order every measure of the run sees: see
``CustomMeasure.per_query``). With ``rel`` the
relevance threshold (a document is relevant when its grade is >= ``rel``; unjudged ones
are not)::

    P = |retrieved ∩ relevant| / |retrieved|
    R = |retrieved ∩ relevant| / |relevant|
    F_beta = (1 + beta²) P R / (beta² P + R),   0 when P = R = 0

``|retrieved|`` is the number of documents actually in the set (fewer than k when the
ranking is shorter: set-based precision, unlike ir-measures' ``P@k``, which divides by k).
A judged query without any relevant document scores 0, like a query the run does not rank.
The task's value is the mean over queries (COLIEE's macro F2).
"""

from __future__ import annotations

import math

from statbench.contract.params import Param
from statbench.scoring.measures import CustomMeasure


class FBeta(CustomMeasure):
    name = "F"
    description = "set-based F-beta of the top k: (1+β²)PR/(β²P+R); F2@10 is F(beta=2)@10"
    default_params = {
        "beta": Param(1.0, above=0.0, description="weight of recall: beta=2 counts recall twice as much"),
        "rel": Param(1, min=1, description="minimum grade of a relevant document"),
        "cutoff": Param(None, type=int, min=1, description="k: the retrieved set is the top k (whole ranking if unset)"),
    }
    shorthand = "beta"
    bounds = (0.0, 1.0)
    version = "1"

    def per_query(self, ranking, qrels, *, beta: float, rel: int, cutoff: int | None) -> float:
        retrieved = [doc for doc, _ in (ranking if cutoff is None else ranking[:cutoff])]
        relevant = {doc for doc, grade in qrels.items() if grade >= rel}
        hits = sum(1 for doc in retrieved if doc in relevant)
        if hits == 0:
            return 0.0
        precision, recall = hits / len(retrieved), hits / len(relevant)
        b2 = beta * beta
        if b2 == math.inf:  # beta above 1.3e154: the limit, recall (the formula would be inf/inf)
            return recall
        return (1 + b2) * precision * recall / (b2 * precision + recall)
