"""Custom measures: a plugin adds a per-query measure, used exactly like an ir-measures name.

A measure is a :class:`CustomMeasure` subclass, registered through the
``register_measures`` hook (the built-in F-beta, :mod:`statbench.scoring.measures.fbeta`, and
the F-beta of the means of precision and recall, :mod:`statbench.scoring.measures.fbeta_of_means`,
arrive the same way, from :mod:`statbench.scoring.measures.builtin`)::

    from statbench import hookimpl
    from statbench.scoring.measures import CustomMeasure
    from statbench.contract.params import Param

    class Hits(CustomMeasure):
        name = "Hits"
        description = "number of relevant documents in the top k"
        default_params = {"rel": Param(1, min=1), "cutoff": Param(None, type=int, min=1)}
        bounds = (0.0, math.inf)

        def per_query(self, ranking, qrels, *, rel, cutoff):
            top = ranking if cutoff is None else ranking[:cutoff]
            return float(sum(1 for doc, _ in top if qrels.get(doc, 0) >= rel))

    @hookimpl
    def register_measures(register):
        register(Hits)

Its name is then written like any ir-measures measure, on the command line, in task
definitions and in results: ``Hits@10``, ``Hits(rel=2)@10``. The grammar is ir-measures'
own (``NAME``, ``NAME(key=value, ...)``, then optionally ``@CUTOFF``, values as Python
literals), plus two things: a number right after the name sets the measure's
``shorthand`` parameter (``F2@10`` is ``F(beta=2)@10``), and ``DIST:NAME...`` selects the
measure of one distribution when two plugins register the same name.

:func:`parse_measure` is the one place a measure string is read: it returns an
ir-measures measure, or a :class:`ParsedCustomMeasure`, or raises :class:`MeasureError`
with one clear line. Task classes, ``statbench evaluate``, ``statbench compare`` and the
leaderboard all go through it. The grammar and the checks live below the registry
(:mod:`statbench.registry.measure_names`, :mod:`statbench.registry.class_checks`), which
uses them while plugins register; this module reads names with the built registry.
"""

from __future__ import annotations

from statbench.contract.measure import CustomMeasure
from statbench.errors import StatbenchError
from statbench.registry.class_checks import check_measure_class
from statbench.registry.measure_names import (
    MeasureError,
    ParsedCustomMeasure,
    check_ir_measure_params,
    is_custom,
)
from statbench.registry.measure_names import parse_measure as parse_with
from statbench.registry.plugins import get_registry

__all__ = ["CustomMeasure", "MeasureError", "ParsedCustomMeasure", "check_measure_class", "custom_bounds",
           "is_custom", "parse_measure"]


def parse_measure(text: str):
    """The measure a string names, custom names resolved with the plugin registry
    (:func:`statbench.registry.measure_names.parse_measure`)."""
    if not isinstance(text, str):  # said before any plugin loads
        raise MeasureError(f"a measure must be a str such as 'nDCG@10', found {type(text).__name__} {text!r}")
    parsed = parse_with(text, get_registry)  # the registry is built only for a name ir-measures lacks
    if not is_custom(parsed):
        check_ir_measure_params(parsed, text)
    return parsed


#: the largest cut-off, relevance level and gain trec_eval holds (a C ``int`` relevance
#: level; cut-offs beyond a C ``long`` are silently clamped and then not found)
def custom_bounds(text: str) -> tuple[float, float] | None:
    """The declared bounds of the custom measure ``text`` names; None when it declares none,
    or is not a custom measure a registered plugin provides (never raises)."""
    try:
        parsed = parse_measure(text)
    except StatbenchError:
        return None
    return parsed.bounds if is_custom(parsed) else None
