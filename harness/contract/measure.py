"""The base class of a custom measure plugin: a per-query function of the ranking and the
qrels, named and parameterised like an ir-measures measure (see :mod:`statbench.scoring.measures`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from statbench.contract.params import Param, declare

#: The cut-off (``@k``) is the parameter of this name (ir-measures' ``AT_PARAM``).
CUTOFF = "cutoff"


class CustomMeasure:
    """Base class of custom measures: a per-query function of the ranking and the qrels.

    ``default_params`` declares each parameter (a :class:`~statbench.contract.params.Param`, or a
    plain default); a parameter named ``cutoff`` is the one ``@k`` sets (declare it with
    ``Param(None, type=int, min=1)`` for "the whole ranking unless a cut-off is given").
    Values in a measure string are coerced and checked against these declarations before
    any query is scored."""

    #: What users write: ``F`` in ``F2@10``.
    name: ClassVar[str]
    description: ClassVar[str] = ""
    default_params: ClassVar[Mapping[str, Any]] = {}
    #: The parameter a number right after the name sets (``F2`` is ``F(beta=2)``), or None.
    shorthand: ClassVar[str | None] = None
    #: (low, high): every value lies in this range (checked for each query; the leaderboard
    #: checks values of measures bounded in [0, 1]); None when unbounded.
    bounds: ClassVar[tuple[float, float] | None] = None
    #: Bump when a change alters the values.
    version: ClassVar[str] = "1"

    @classmethod
    def param_specs(cls) -> dict[str, Param]:
        return declare(cls.default_params)

    def per_query(self, ranking: list[tuple[str, float]], qrels: dict[str, int], **params) -> float:
        """The query's value. ``ranking``: (doc id, score) pairs, best first, in the order
        every measure of the run sees (scores strictly decreasing at float32: the harness's
        order, doc id ascending on ties, or for ``evaluate`` of a foreign run with ties
        runfile.TIE_ORDER, doc id descending; never empty); ``qrels``:
        doc id -> grade of every judged document of the query (grade 0 included; a document
        not in it is unjudged); ``params``: every declared parameter, defaults filled in
        (``cutoff`` is None without ``@k``)."""
        raise NotImplementedError
