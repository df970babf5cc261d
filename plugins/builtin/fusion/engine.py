"""The fusion engine: ranx (``ranx.fuse`` on ``ranx.Run``), the field's reference
implementation, never a hand-written one.

What statbench adds around it:

- **inputs in one declared order.** Every component ranking reaches ranx in the order its
  run is scored in (a statbench run: its rank column; a foreign run with ties: trec_eval's
  order, :func:`statbench.data.runfile.order_as_trec_eval`), with scores strictly decreasing
  at float32, so ranx's own sort (which breaks ties its own way) sees exactly that order and
  rank-based methods (RRF) use the ranks the components were scored with;
- **its output checked** before anything is written: only the asked queries, only
  documents some component ranked for that query, finite scores;
- **the fused run in the harness's order**: score descending, then doc id ascending, cut
  to the task's depth, tied scores lowered to be strictly decreasing at float32
  (:func:`statbench.data.runfile.order_ranking`, as every statbench run is written).

Every method offered gives the same fused run from the same inputs, process after process
(no random state; ranx's per-query loops run in parallel but each query alone, its sums in
input order): ``condorcet`` is refused (:data:`REFUSED`), its order depending on Python's
per-process string hashing, and so is ``borda`` normalisation before a rank-based method
(ranx's borda normalisation hands on each ranking in that same set order). Only unsupervised
methods are offered: ranx's supervised ones (probfuse, segfuse, slidefuse, bayesfuse,
posfuse, mapfuse) learn from judgements, and here the only judgements at hand are the test
queries'. Weights (``wsum``, ``wmnz``) are given, or tuned on a dev split by ``statbench
grid`` (``tune:``), never on the queries scored."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from statbench.api import Ranking, StatbenchError
from statbench.data.runfile import order_ranking
from statbench.models.fusion.sources import check_distinct, rankings_digest

#: statbench's method name -> ranx's, and whether it reads ranks (no normalisation needed)
#: or scores (normalised first, min-max by default)
METHODS: dict[str, tuple[str, str]] = {
    "rrf": ("rrf", "rank"),
    "isr": ("isr", "rank"),
    "log_isr": ("log_isr", "rank"),
    "logn_isr": ("logn_isr", "rank"),
    "bordafuse": ("bordafuse", "rank"),
    "combsum": ("sum", "score"),
    "combmnz": ("mnz", "score"),
    "combmax": ("max", "score"),
    "combmin": ("min", "score"),
    "combmed": ("med", "score"),
    "combanz": ("anz", "score"),
    "wsum": ("wsum", "score"),
    "wmnz": ("wmnz", "score"),
}
#: ranx methods not offered, and why: each would publish a figure that changes from run to run
REFUSED: dict[str, str] = {
    "condorcet": ("ranx's condorcet orders documents by a pairwise vote that can tie or cycle, sorted from "
                  "a Python set whose order changes with every process (string hashing): the same inputs "
                  "give another fused run each time, so it is not offered"),
}
#: methods that take one weight per component
WEIGHTED = frozenset({"wsum", "wmnz"})
#: statbench's normalisation name -> ranx's (``none``: scores as ranked)
NORMS: dict[str, str | None] = {
    "none": None, "min-max": "min-max", "max": "max", "sum": "sum", "z": "zmuv", "zmuv": "zmuv",
    "rank": "rank", "borda": "borda",
}
#: ``auto``: min-max for methods that read scores, none for those that read ranks
AUTO = "auto"
DEFAULT_K = 60


class FusionError(StatbenchError):
    """Fusion settings that cannot be used, or a fused run that fails its checks."""


@dataclass(frozen=True)
class FusionSettings:
    """One fusion: the method, the normalisation, the weights (weighted methods only) and
    RRF's ``k``."""

    method: str = "rrf"
    norm: str = AUTO
    weights: tuple[float, ...] = ()
    k: int = DEFAULT_K

    def checked(self, n_components: int) -> FusionSettings:
        """These settings for ``n_components`` runs, or one line saying what is wrong."""
        if self.method in REFUSED:
            raise FusionError(f"fusion method {self.method}: {REFUSED[self.method]}")
        if self.method not in METHODS:
            raise FusionError(f"fusion method {self.method!r}: expected one of {', '.join(METHODS)}")
        if self.norm != AUTO and self.norm not in NORMS:
            raise FusionError(f"fusion normalisation {self.norm!r}: expected one of {AUTO}, {', '.join(NORMS)}")
        if self.norm == "borda" and METHODS[self.method][1] == "rank":
            raise FusionError(f"normalisation borda with the rank-based method {self.method}: ranx's borda "
                              "normalisation hands on each ranking's documents in an order that changes with every "
                              "process (not by score), which a rank-based method reads as ranks; use --norm auto")
        if n_components < 2:
            raise FusionError(f"fusion needs at least two runs, got {n_components}")
        if self.method in WEIGHTED:
            if len(self.weights) != n_components:
                raise FusionError(f"method {self.method} needs one weight per run: {n_components} runs, "
                                  f"{len(self.weights)} weight(s) given (--weights / weights=W1,W2,...)")
        elif self.weights:
            raise FusionError(f"weights are only read by {', '.join(sorted(WEIGHTED))}, not by {self.method}")
        if any(not math.isfinite(w) or w < 0 for w in self.weights):
            raise FusionError(f"weights {list(self.weights)}: each must be a finite number >= 0")
        if self.weights and not any(self.weights):
            raise FusionError("weights are all 0: the fused run would rank nothing")
        if self.k < 1:
            raise FusionError(f"k={self.k}: RRF's k must be >= 1")
        return self

    @property
    def ranx_norm(self) -> str | None:
        if self.norm == AUTO:
            return "min-max" if METHODS[self.method][1] == "score" else None
        return NORMS[self.norm]

    @property
    def ranx_method(self) -> str:
        return METHODS[self.method][0]

    @property
    def ranx_params(self) -> dict:
        if self.method == "rrf":
            return {"k": self.k}
        if self.method in WEIGHTED:
            return {"weights": list(self.weights)}
        return {}

    def describe(self) -> str:
        """e.g. ``rrf (k=60)``, ``wsum (min-max; weights 0.3, 0.7)``."""
        parts = [self.ranx_norm or "no normalisation"] if METHODS[self.method][1] == "score" or self.norm != AUTO else []
        if self.method == "rrf":
            parts.append(f"k={self.k}")
        if self.weights:
            parts.append("weights " + ", ".join(f"{w:g}" for w in self.weights))
        return self.method + (f" ({'; '.join(parts)})" if parts else "")


def parse_weights(text: str) -> tuple[float, ...]:
    """``"0.3,0.7"`` -> ``(0.3, 0.7)``; ``""`` -> ``()``; anything else is one line."""
    if not text.strip():
        return ()
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise FusionError(f"weights {text!r}: expected numbers separated by commas, e.g. 0.3,0.7") from None


def fuse_rankings(components: Sequence[Mapping[str, Ranking]], query_ids: Sequence[str],
                  settings: FusionSettings, depth: int | None, labels: Sequence[str] = ()) -> dict[str, Ranking]:
    """``query_ids``' rankings fused from ``components`` (each query id -> ranking in its
    declared order, strictly decreasing at float32; a query a component did not rank counts
    as an empty ranking), by ranx, checked, in the harness's order, cut to ``depth``.
    A query no component ranked gets an empty ranking. Two components that rank these
    queries identically are one run fused with itself: refused, named by ``labels``."""
    settings = settings.checked(len(components))
    _check_distinct(components, query_ids, labels)
    asked = [q for q in query_ids if any(component.get(q) for component in components)]
    fused: dict[str, Ranking] = {q: [] for q in query_ids}
    if not asked:
        return fused
    scores = _ranx_fuse([{q: dict(component.get(q, ())) for q in asked} for component in components], settings)
    unknown = sorted(set(scores) - set(asked))
    if unknown:
        raise FusionError(f"ranx's {settings.method} returned query {unknown[0]!r}, which was not asked")
    for qid in asked:
        ranked = scores.get(qid, {})
        known = set().union(*(dict(component.get(qid, ())) for component in components))
        for doc_id, score in ranked.items():
            if doc_id not in known:
                raise FusionError(f"ranx's {settings.method} returned document {doc_id!r} for query {qid!r}, "
                                  "which no component ranked")
            if not math.isfinite(score):
                raise FusionError(f"ranx's {settings.describe()} gave document {doc_id!r} of query {qid!r} the "
                                  f"score {score!r} (not finite); try another normalisation (--norm)")
        fused[qid] = order_ranking(ranked.items(), depth)
    return fused


def _check_distinct(components: Sequence[Mapping[str, Ranking]], query_ids: Sequence[str],
                    labels: Sequence[str]) -> None:
    """Components ranking ``query_ids`` alike (documents, order and scores) are refused."""
    names = list(labels) or [f"input {i + 1}" for i in range(len(components))]
    ranked = [(name, {q: list(c.get(q, ())) for q in query_ids}) for name, c in zip(names, components)]
    ranked = [(name, r) for name, r in ranked if any(r.values())]  # ranking nothing here is not a run to compare
    check_distinct([name for name, _ in ranked], [rankings_digest(r) for _, r in ranked])


def _ranx_fuse(runs: list[dict[str, dict[str, float]]], settings: FusionSettings) -> dict[str, dict[str, float]]:
    """ranx itself: the runs as ``ranx.Run`` (each query's documents sorted by score by
    ranx), fused, back as plain dicts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety notes on ranx's own code
        from ranx import fuse

        ranx_runs = [_ranx_run(run, f"run{i}") for i, run in enumerate(runs)]
        fused = fuse(ranx_runs, norm=settings.ranx_norm, method=settings.ranx_method, params=settings.ranx_params)
    return {qid: {str(doc): float(score) for doc, score in docs.items()} for qid, docs in fused.to_dict().items()}


def _ranx_run(run: dict[str, dict[str, float]], name: str):
    """A ``ranx.Run`` holding every asked query (ranx requires the same queries in every
    run), an empty one where this run ranked nothing."""
    from ranx import Run

    filled = {q: docs for q, docs in run.items() if docs}
    ranx_run = Run.from_dict(filled, name=name) if filled else Run(name=name)
    from ranx.fusion.common import create_empty_results_dict

    for qid in run:
        if qid not in filled:
            ranx_run.run[qid] = create_empty_results_dict()
    return ranx_run
