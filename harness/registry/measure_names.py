"""Measure names: the one parser of a measure string, resolved against a registry.

A measure string is ir-measures' grammar (``NAME``, ``NAME(key=value, ...)``, then
optionally ``@CUTOFF``, values as Python literals) plus two things: a number right after
the name sets a custom measure's ``shorthand`` parameter (``F2@10`` is ``F(beta=2)@10``),
and ``DIST:NAME...`` selects the measure of one distribution when two plugins register
the same name. A name ir-measures knows is handed to ``ir_measures.parse_measure`` whole;
for a custom name (a :class:`~statbench.contract.measure.CustomMeasure` a plugin registered)
the string is read here, because ir-measures' parser looks names up in its own global
table, refuses negative values (``F(beta=-1)``, which must reach the parameter's own
check) and says only "problem parsing measure" where statbench names the part at fault.

The registry is passed in: the plugin registry builds itself with this module (a task's
measures are checked against the measures registered so far), and
:func:`statbench.scoring.measures.parse_measure` reads with the built registry.
"""

from __future__ import annotations

import ast
import math
import numbers
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

from statbench.contract.measure import CUTOFF
from statbench.contract.params import ParamError
from statbench.errors import StatbenchError, one_line
from statbench.registry.class_checks import PluginError

#: The leading name of a measure string (after an optional ``DIST:``).
_HEAD = re.compile(r"\s*([^\W\d]\w*)")
_DIST = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*:")
_SHORTHAND = re.compile(r"(.+?)([0-9]+)")
_GRAMMAR = "expected NAME, NAME@CUTOFF or NAME(key=value, ...)@CUTOFF, e.g. F(beta=2)@10"


class MeasureError(StatbenchError):
    """A measure string that names no known measure or does not parse."""


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



# --- the parser ---------------------------------------------------------------------------


def parse_measure(text: str, registry):
    """The measure a string names: an ir-measures measure, or a :class:`ParsedCustomMeasure`.

    Names ir-measures knows are parsed by ir-measures itself (``R@100``,
    ``nDCG(gains={0:0,1:1})@10``); any other is looked up among the custom measures of
    ``registry`` (a :class:`statbench.registry.plugins.Registry`, or one being built; or a
    function returning it, called only for a custom name), with its parameters coerced and
    checked. Raises :class:`MeasureError` (one line) otherwise."""
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
            parsed = ir_measures.parse_measure(text)
        except Exception as exc:  # ir-measures raises assorted types for a bad string
            raise MeasureError(f"ir-measures cannot parse {text!r} ({exc})") from None
        # P@0 aborts the process inside pytrec_eval: refused when a task declares it, not when scored
        check_ir_measure_params(parsed, text)
        return parsed
    if head is None:
        raise MeasureError(f"cannot parse measure {text!r}: {_GRAMMAR}")
    entry, shorthand = _resolve(registry, head.group(1), dist, text)
    name, given, cutoff = _parse_call(rest, text, entry.cls.shorthand or "value")
    if name != head.group(1):  # cannot happen: the head is the call's name
        raise MeasureError(f"cannot parse measure {text!r}: {_GRAMMAR}")
    return _bind(entry, text, shorthand, given, cutoff)


def _resolve(registry, head: str, dist: str | None, text: str):
    """(registry entry, shorthand value or None) for the name ``head``."""
    if callable(registry):
        registry = registry()
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


def check_measure_names(owner: str, measures, registry) -> None:
    """Each of a task's measures names an ir-measures measure or a custom measure of
    ``registry``, with parameters that parse and pass their checks."""
    for measure in measures:
        try:
            parse_measure(measure.ir_measure, registry)
        except StatbenchError as exc:
            raise PluginError(f"task {owner}: measure {measure.label!r}: {exc}") from None


_C_INT_MAX = 2 ** 31 - 1


def check_ir_measure_params(measure, text: str) -> None:
    """Refuse an ir-measures measure whose parameters trec_eval cannot compute, with one
    line: a cut-off below 1 (``P@0`` aborts the process inside pytrec_eval, a C assertion)
    or beyond a C int; a relevance level ``rel`` below 1 (pytrec_eval refuses it) or beyond
    a C int; ``gains`` that are not integers within a C int."""
    params = measure.params

    def whole(value, low: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= _C_INT_MAX

    cutoff = params.get("cutoff")
    if cutoff is not None and not whole(cutoff, 1):
        raise MeasureError(f"measure {text!r}: cut-off {cutoff!r} is not an integer from 1 to {_C_INT_MAX} "
                           "(the number of top documents it looks at)")
    rel = params.get("rel")
    if rel is not None and not whole(rel, 1):
        raise MeasureError(f"measure {text!r}: rel={rel!r} is not an integer from 1 to {_C_INT_MAX} (the lowest "
                           "grade that counts as relevant)")
    gains = params.get("gains")
    if gains is not None and not (isinstance(gains, dict) and all(
            whole(k, -_C_INT_MAX) and whole(v, -_C_INT_MAX) for k, v in gains.items())):
        raise MeasureError(f"measure {text!r}: gains {gains!r} are not integers within a C int "
                           "(trec_eval holds grades and gains as integers)")
