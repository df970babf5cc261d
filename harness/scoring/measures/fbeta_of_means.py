"""Set-based precision and recall, and the F-beta *of their means*: the other way COLIEE
Task 3 figures are computed.

COLIEE's official F2 (coliee.org/evaluation; macro-averaged since COLIEE 2024) is the
mean over queries of each query's F2: the custom measure ``F2@k``
(:mod:`statbench.scoring.measures.fbeta`). Some participants' scripts instead average
precision and recall over the queries first and take F2 of the two means::

    F_beta-of-means = (1 + beta²) P̄ R̄ / (beta² P̄ + R̄)

That figure is *not* a mean of per-query values, and every figure statbench records is
one (split means, pooled means and breakdowns are recomputed from ``per_query``, paired
tests compare per-query values, the leaderboard checks the means against them). So it is
not a measure here: its two parts are (``SetPrec`` and ``SetRecall``, ordinary per-query
measures over the same returned set as ``F``/``SetFbeta``), and :func:`fbeta_of_means` /
:func:`fbeta_of_means_from_results` combine their recorded means under their own name,
never in place of the official figure.

The returned set is :func:`returned_set`: the top ``k`` (``@k``) and/or the documents scored
at least ``min_score`` (a score threshold, which COLIEE runs often declare instead of a
cut). ``SetFbeta`` is ``F`` over such a set (``SetFbeta(beta=2,min_score=12.5)@10``); ``F2@k`` and
``SetFbeta2@k`` are the same figure. An empty set has precision, recall and F 0.
"""

from __future__ import annotations

import sys
from typing import Mapping

from statbench.contract.params import Param
from statbench.errors import StatbenchError
from statbench.scoring.measures import CustomMeasure
from statbench.scoring.measures.fbeta import FBeta

#: ``min_score``'s default: the lowest finite float, so every finite score passes (a
#: parameter's default must be a finite number; scores are checked finite before scoring).
NO_THRESHOLD = -sys.float_info.max

#: What this variant is called wherever it is shown, never "F2".
VARIANT_NAME = "F{beta:g} of mean P and R"

_SET_PARAMS = {
    "rel": Param(1, min=1, description="minimum grade of a relevant document"),
    "cutoff": Param(None, type=int, min=1, description="k: the returned set is the top k (whole ranking if unset)"),
    "min_score": Param(NO_THRESHOLD, type=float, description="score threshold: only documents scored at least this are "
                       "returned (default: the lowest float, no threshold)"),
}


def returned_set(ranking, cutoff: int | None, min_score: float = NO_THRESHOLD) -> list[tuple[str, float]]:
    """What a run returns for one query: its top ``cutoff`` (all without one) scored at
    least ``min_score`` (all without one), in ranking order."""
    top = ranking if cutoff is None else ranking[:cutoff]
    return top if min_score == NO_THRESHOLD else [(doc, score) for doc, score in top if score >= min_score]


def _hits(ranking, qrels, rel: int, cutoff: int | None, min_score: float) -> tuple[int, int, int]:
    returned = [doc for doc, _ in returned_set(ranking, cutoff, min_score)]
    relevant = {doc for doc, grade in qrels.items() if grade >= rel}
    return sum(1 for doc in returned if doc in relevant), len(returned), len(relevant)


class SetPrecision(CustomMeasure):
    name = "SetPrec"
    description = ("set-based precision: |returned ∩ relevant| / |returned| (0 when nothing is returned); "
                   "unlike P@k it divides by the documents actually returned")
    default_params = _SET_PARAMS
    bounds = (0.0, 1.0)
    version = "1"

    def per_query(self, ranking, qrels, *, rel: int, cutoff: int | None, min_score: float) -> float:
        hits, returned, _ = _hits(ranking, qrels, rel, cutoff, min_score)
        return hits / returned if returned else 0.0


class SetRecall(CustomMeasure):
    name = "SetRecall"
    description = ("set-based recall: |returned ∩ relevant| / |relevant| (R@k for a top-k set; "
                   "also takes a score threshold)")
    default_params = _SET_PARAMS
    bounds = (0.0, 1.0)
    version = "1"

    def per_query(self, ranking, qrels, *, rel: int, cutoff: int | None, min_score: float) -> float:
        hits, _, relevant = _hits(ranking, qrels, rel, cutoff, min_score)
        return hits / relevant if relevant else 0.0


class SetFBeta(CustomMeasure):
    name = "SetFbeta"
    description = ("set-based F-beta (as F) of the returned set: the top k and/or the documents scored at least "
                   "min_score; SetFbeta(beta=2,min_score=12.5)@10")
    default_params = {"beta": FBeta.default_params["beta"], **_SET_PARAMS}
    shorthand = "beta"
    bounds = (0.0, 1.0)
    version = "1"

    def per_query(self, ranking, qrels, *, beta: float, rel: int, cutoff: int | None, min_score: float) -> float:
        return FBeta().per_query(returned_set(ranking, cutoff, min_score), qrels, beta=beta, rel=rel, cutoff=None)


def fbeta_of_means(mean_precision: float, mean_recall: float, beta: float = 2.0) -> float:
    """F-beta of a mean precision and a mean recall (0 when both are 0)."""
    for what, value in (("mean precision", mean_precision), ("mean recall", mean_recall)):
        if not 0.0 <= value <= 1.0:
            raise StatbenchError(f"{VARIANT_NAME.format(beta=beta)}: {what} {value!r} is not in [0, 1]")
    if beta <= 0:
        raise StatbenchError(f"F-beta of means: beta must be > 0, found {beta!r}")
    b2 = beta * beta
    if mean_precision == 0.0 and mean_recall == 0.0:
        return 0.0
    return (1 + b2) * mean_precision * mean_recall / (b2 * mean_precision + mean_recall)


def fbeta_of_means_from_results(scores: Mapping[str, float], precision_label: str, recall_label: str,
                                beta: float = 2.0) -> float:
    """The variant from one row of recorded means (a split's ``scores``, ``all_queries``...),
    given the labels of a precision and a recall over the same returned set (COLIEE's
    task: ``SetPrec@k`` and ``R@k``). A label that is not there is one clear error."""
    missing = [label for label in (precision_label, recall_label) if label not in scores]
    if missing:
        raise StatbenchError(f"{VARIANT_NAME.format(beta=beta)}: no recorded mean for {', '.join(map(repr, missing))} "
                             f"(recorded: {', '.join(sorted(scores))})")
    return fbeta_of_means(scores[precision_label], scores[recall_label], beta)
