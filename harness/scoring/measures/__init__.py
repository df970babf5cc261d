"""Custom measures: a plugin adds a per-query measure, used exactly like an ir-measures name.

A measure is a :class:`CustomMeasure` subclass, registered through the
``register_measures`` hook (the built-in F-beta, :mod:`statbench.scoring.measures.fbeta`, arrives
the same way, from :mod:`statbench.scoring.measures.builtin`)::

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
leaderboard all go through it.
"""

from __future__ import annotations

import ast
import contextlib
import math
import numbers
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Mapping

from statbench.contract.params import Param, ParamError, declare
from statbench.errors import StatbenchError

__all__ = ["CustomMeasure", "MeasureError", "ParsedCustomMeasure", "check_measure_class", "custom_bounds",
           "is_custom", "parse_measure"]

#: The cut-off (``@k``) is the parameter of this name.
CUTOFF = "cutoff"
#: Custom measure names: letters, digits and '_', starting with a letter and not ending with
#: a digit (a number after the name is the shorthand parameter: ``F2``).
_NAME = re.compile(r"[A-Za-z](?:[A-Za-z0-9_]*[A-Za-z_])?")
#: The leading name of a measure string (after an optional ``DIST:``).
_HEAD = re.compile(r"\s*([^\W\d]\w*)")
_DIST = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*:")
_SHORTHAND = re.compile(r"(.+?)([0-9]+)")
_GRAMMAR = "expected NAME, NAME@CUTOFF or NAME(key=value, ...)@CUTOFF, e.g. F(beta=2)@10"


class MeasureError(StatbenchError):
    """A measure string that names no known measure or does not parse."""


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


@dataclass(frozen=True)
class ParsedCustomMeasure:
    """A custom measure with its parameters, as a measure string names it."""

    cls: type
    #: ``DIST:NAME`` of the plugin that provides it
    qualified: str
    #: every declared parameter (``cutoff`` included), in declaration order
    params: tuple[tuple[str, Any], ...]
    #: the string as written
    text: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def bounds(self) -> tuple[float, float] | None:
        return self.cls.bounds

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    def __str__(self) -> str:
        """Canonical spelling: only the parameters that differ from their defaults."""
        specs = self.cls.param_specs()
        shown = [f"{k}={v!r}" for k, v in self.params if k != CUTOFF and v != specs[k].default]
        cutoff = self.kwargs.get(CUTOFF)
        return self.name + (f"({','.join(shown)})" if shown else "") + (f"@{cutoff}" if cutoff is not None else "")

    @cached_property
    def _implementation(self):
        return self.cls()

    def score(self, ranking, qrels: Mapping[str, int], qid: str = "?") -> float:
        """The value for one query, checked: a real, finite number within the declared
        bounds. Anything else, or anything the measure raises, is a :class:`PluginError`
        naming the measure and the query."""
        from statbench.errors import one_line
        from statbench.registry.checks import PluginError

        who = f"measure {self.text or str(self)!r} ({self.qualified})"
        try:
            value = self._implementation.per_query(list(ranking), dict(qrels), **self.kwargs)
        except (StatbenchError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - a plugin must never take over the CLI
            raise PluginError(f"{who} failed on query {qid!r}: {one_line(exc)}") from exc
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise PluginError(f"{who} returned {_shown(value)} for query {qid!r}, not a number")
        try:
            value = float(value)  # an int beyond the float range, or a Real whose __float__ fails
        except BaseException as exc:  # noqa: BLE001 - as above
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise PluginError(f"{who} returned {_shown(value)} for query {qid!r}, not a finite number "
                              f"({one_line(exc)})") from exc
        if not math.isfinite(value):
            raise PluginError(f"{who} returned {value!r} for query {qid!r}, not a finite number")
        low, high = self.bounds or (-math.inf, math.inf)
        if not low <= value <= high:
            raise PluginError(f"{who} returned {value!r} for query {qid!r}, outside its bounds [{low:g}, {high:g}]")
        return value


def _shown(value) -> str:
    """A returned value for a message: its repr, cut short (and never failing)."""
    try:
        text = repr(value) if not isinstance(value, int) or value.bit_length() < 128 else f"an int of {value.bit_length()} bits"
    except BaseException:  # noqa: BLE001 - a plugin's object with a broken __repr__
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


def is_custom(measure) -> bool:
    return isinstance(measure, ParsedCustomMeasure)


# --- the registry the parser reads --------------------------------------------------------

_DEFER = object()
#: None: the plugin registry; _DEFER: plugins are registering (custom names unknown yet);
#: a Registry: the one being built (statbench.registry.plugins checks the tasks' measures with it).
_source: ContextVar[object] = ContextVar("statbench_measure_registry", default=None)


@contextlib.contextmanager
def deferred_checks():
    """While plugins register: task measures are checked later (:func:`checks_deferred`)."""
    token = _source.set(_DEFER)
    try:
        yield
    finally:
        _source.reset(token)


@contextlib.contextmanager
def resolving_with(registry):
    """Resolve custom measure names with ``registry`` (one still being built)."""
    token = _source.set(registry)
    try:
        yield
    finally:
        _source.reset(token)


def checks_deferred() -> bool:
    return _source.get() is _DEFER


def _registry():
    source = _source.get()
    if source is _DEFER:
        raise MeasureError("custom measures are not known while plugins are registering")
    if source is None:
        from statbench.registry.plugins import get_registry

        return get_registry()
    return source


# --- the parser ---------------------------------------------------------------------------


def parse_measure(text: str):
    """The measure a string names: an ir-measures measure, or a :class:`ParsedCustomMeasure`.

    Names ir-measures knows go to ir-measures (``R@100``, ``nDCG(gains={0:0,1:1})@10``);
    any other is looked up among the custom measures plugins registered, with its
    parameters coerced and checked. Raises :class:`MeasureError` (one line) otherwise."""
    import ir_measures

    if not isinstance(text, str):
        raise MeasureError(f"a measure must be a str such as 'nDCG@10', found {type(text).__name__} {text!r}")
    dist, rest = None, text
    prefix = _DIST.match(text)
    if prefix:
        dist, rest = prefix.group(1), text[prefix.end():]
    head = _HEAD.match(rest)
    if dist is None and head and head.group(1) in ir_measures.measures.registry:
        try:
            return ir_measures.parse_measure(text)
        except Exception as exc:  # ir-measures raises assorted types for a bad string
            raise MeasureError(f"ir-measures cannot parse {text!r} ({exc})") from None
    if head is None:
        raise MeasureError(f"cannot parse measure {text!r}: {_GRAMMAR}")
    entry, shorthand = _resolve(head.group(1), dist, text)
    name, given, cutoff = _parse_call(rest, text, entry.cls.shorthand or "value")
    if name != head.group(1):  # cannot happen: the head is the call's name
        raise MeasureError(f"cannot parse measure {text!r}: {_GRAMMAR}")
    return _bind(entry, text, shorthand, given, cutoff)


def _resolve(head: str, dist: str | None, text: str):
    """(registry entry, shorthand value or None) for the name ``head``."""
    registry = _registry()
    table = registry.measures
    selector = f"{dist}:" if dist else ""
    candidates = [(head, None)]
    split = _SHORTHAND.fullmatch(head)
    if split:
        candidates.append((split.group(1), split.group(2)))
    for name, number in candidates:
        if dist is not None:
            found = [e for e in registry.providers("measures", name)
                     if e.plugin.qualifier == dist.strip().lower().replace("_", "-")]
            if not found:
                continue
            entry = found[0]
        elif name in table:
            entry = registry.get("measures", name)
        else:
            continue
        if number is not None and not entry.cls.shorthand:
            raise MeasureError(f"measure {text!r}: {name} takes no number after its name (write {name}(...))")
        return entry, number
    known = registry.names("measures", qualified=dist is not None)
    raise MeasureError(f"unknown measure {selector + head!r} in {text!r}: not an ir-measures measure nor a custom "
                       f"measure a plugin registered (custom measures: {', '.join(known) or 'none'})")


def _parse_call(rest: str, text: str, shorthand: str) -> tuple[str, dict[str, Any], Any]:
    """ir-measures' grammar: (name, keyword values, the value after ``@`` or None)."""
    def fail(reason: str):
        return MeasureError(f"cannot parse measure {text!r}: {reason}; {_GRAMMAR}")

    try:
        body = ast.parse(rest.strip(), mode="eval").body
    except SyntaxError as exc:
        decimal = re.match(r"\s*([^\W\d]\w*?)([0-9]+\.[0-9]+)", rest)
        if decimal:  # F0.5: a number after the name is an integer
            raise MeasureError(f"cannot parse measure {text!r}: the number after a name must be an integer; "
                               f"give the parameter by name: {decimal.group(1)}({shorthand}={decimal.group(2)})") from None
        raise fail(exc.msg) from None
    cutoff = None
    if isinstance(body, ast.BinOp) and isinstance(body.op, ast.MatMult):
        cutoff = _literal(body.right, fail, "the cut-off", "an integer")
        body = body.left
    given: dict[str, Any] = {}
    if isinstance(body, ast.Call):
        if body.args or any(k.arg is None for k in body.keywords):
            raise fail("parameters must be named")
        for keyword in body.keywords:
            given[keyword.arg] = _literal(keyword.value, fail, f"parameter {keyword.arg}",
                                          "a number, a quoted string, True or False")
        body = body.func
    if not isinstance(body, ast.Name):
        raise fail("unexpected expression")
    return body.id, given, cutoff


def _literal(node, fail, what: str, expected: str):
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        value = None
    if not isinstance(value, (bool, int, float, str)):
        raise fail(f"{what} {ast.unparse(node)!r} must be {expected}")
    return value


def _bind(entry, text: str, shorthand: str | None, given: dict[str, Any], cutoff) -> ParsedCustomMeasure:
    cls = entry.cls
    specs = cls.param_specs()
    owner = f"measure {text!r}"
    values: dict[str, Any] = {}
    if shorthand is not None:
        values[cls.shorthand] = shorthand
    for key, value in given.items():
        if key in values:
            raise MeasureError(f"{owner}: {key} is given twice (by the number after the name and as {key}=)")
        values[key] = value
    if cutoff is not None:
        if CUTOFF not in specs:
            raise MeasureError(f"{owner}: {cls.name} takes no cut-off (@)")
        if CUTOFF in values:
            raise MeasureError(f"{owner}: the cut-off is given twice (@ and cutoff=)")
        values[CUTOFF] = cutoff
    unknown = sorted(set(values) - set(specs))
    if unknown:
        allowed = [k for k in specs if k != CUTOFF] + (["@cutoff"] if CUTOFF in specs else [])
        raise MeasureError(f"{owner}: {cls.name} has no parameter {unknown[0]!r} "
                           f"(its parameters: {', '.join(allowed) or 'none'})")
    bound = []
    for key, spec in specs.items():
        if key in values:
            try:
                value = spec.coerce(values[key], key, f"measure {cls.name}")
            except ParamError as exc:
                raise MeasureError(f"{owner}: {exc}") from None
        else:
            value = spec.default
        bound.append((key, value))
    return ParsedCustomMeasure(cls=cls, qualified=entry.qualified, params=tuple(bound), text=text)


def custom_bounds(text: str) -> tuple[float, float] | None:
    """The declared bounds of the custom measure ``text`` names; None when it declares none,
    or is not a custom measure a registered plugin provides (never raises)."""
    try:
        parsed = parse_measure(text)
    except StatbenchError:
        return None
    return parsed.bounds if is_custom(parsed) else None


# --- registration -------------------------------------------------------------------------


def check_measure_class(cls) -> None:
    """A measure class: the base, a usable name no ir-measures measure has, sound
    parameter declarations, a shorthand and bounds that make sense, a ``per_query``."""
    import ir_measures
    from statbench.registry.checks import PluginError

    if not (isinstance(cls, type) and issubclass(cls, CustomMeasure)):
        raise PluginError(f"{cls!r} must subclass statbench.scoring.measures.CustomMeasure")
    label = cls.__name__
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PluginError(f"{label}.name {name!r} must be letters, digits and '_', starting with a letter "
                          "and not ending with a digit")
    if name in ir_measures.measures.registry:
        raise PluginError(f"{label}.name {name!r} is an ir-measures measure; a custom measure needs its own name")
    for attr in ("description", "version"):
        if not isinstance(getattr(cls, attr, None), str):
            raise PluginError(f"{label}.{attr} must be a str")
    if not isinstance(cls.default_params, Mapping):
        raise PluginError(f"{label}.default_params must be a dict")
    specs = cls.param_specs()
    for key, spec in specs.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise PluginError(f"{label}.default_params: parameter name {key!r} must be a Python identifier")
        if spec.kind not in (bool, int, float, str):
            raise PluginError(f"{label}.default_params: parameter {key} must be a bool, int, float or str")
        if spec.default is None:
            if key != CUTOFF:
                raise PluginError(f"{label}.default_params: parameter {key} needs a default (only the cut-off "
                                  "may default to None)")
            continue
        try:
            spec.coerce(spec.default, key, name)
        except StatbenchError as exc:
            raise PluginError(f"{label}.default_params: the default {exc}") from None
    if CUTOFF in specs and specs[CUTOFF].kind is not int:
        raise PluginError(f"{label}.default_params: the cut-off must be an int parameter")
    if cls.shorthand is not None and (cls.shorthand not in specs or cls.shorthand == CUTOFF
                                      or specs[cls.shorthand].kind not in (int, float)):
        raise PluginError(f"{label}.shorthand {cls.shorthand!r} must name one of its int or float parameters "
                          "other than the cut-off")
    bounds = cls.bounds
    if bounds is not None:
        ok = (isinstance(bounds, tuple) and len(bounds) == 2
              and all(isinstance(b, numbers.Real) and not isinstance(b, bool) and not math.isnan(b) for b in bounds)
              and bounds[0] < bounds[1])
        if not ok:
            raise PluginError(f"{label}.bounds {bounds!r} must be None or a (low, high) pair with low < high")
    if not callable(getattr(cls, "per_query", None)) or cls.per_query is CustomMeasure.per_query:
        raise PluginError(f"{label}: implements no per_query()")
