"""Model parameters: each declared once (type, default, allowed range or choices, meaning)
and validated in one place, in the spirit of ir-measures' ``ParamInfo``.

A plugin declares its parameters in ``default_params``; a plain value is a parameter of
that value's type with no further constraint, a :class:`Param` adds choices, a range and
a description::

    default_params = {"k1": Param(1.2, min=0.0, description="term-frequency saturation"),
                      "backend": Param("bm25s", choices=("bm25s", "lucene")),
                      "stem": True}

Whatever the source (``--param KEY=VALUE`` strings or typed values from Python), a value
is coerced to the declared type and checked before any work: floats must be finite, and
a value outside its range or choices is refused with one line naming the model, the
parameter and what is allowed.

A parameter may apply only to some task languages (``languages=("zh",)``: a Chinese
word segmenter) or only with some values of the model's other parameters
(``when={"backend": "bm25s"}``: a setting of one backend). On a run where it does not
apply it is neither recorded nor part of the model's configuration, and giving it
explicitly is refused (:func:`applicable_params`): a choice that changed nothing must
not read as one that did, nor split one configuration into two.

A typed value is written as text in exactly one way, :func:`param_text` (``true``, ``0.9``,
``1e-07``), and read back by :meth:`Param.coerce`: the command line that repeats a run
(``statbench.run.request.request_to_argv``), a grid cell's command, output folder and
label, and a recorded budget all spell values with it. A string that text cannot carry
back (white space at either end, which ``--param`` strips; a NUL character, which no
command line holds) is refused, so a run started from Python is always one its recorded
command repeats.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from statbench.contract.language import primary_language
from statbench.errors import StatbenchError, UnknownNameError

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_TYPES = (bool, int, float, str)


class ParamError(StatbenchError):
    """A parameter value that is not of the declared type, range or choices."""


@dataclass(frozen=True)
class Param:
    r"""One declared parameter. ``min``/``max`` are inclusive bounds, ``above``/``below``
    exclusive ones (a Dirichlet mu must be > 0, a dropout rate < 1); ``choices`` lists the
    allowed values; ``pattern`` is a regular expression a string must match in full, shown
    to users as ``pattern_text`` (e.g. a torch device: ``auto|cpu|mps|cuda(?::\d+)?``)."""

    default: Any
    description: str = ""
    choices: tuple = ()
    min: float | None = None
    max: float | None = None
    above: float | None = None
    below: float | None = None
    pattern: str | None = None
    pattern_text: str = ""
    type: type | None = None
    #: values that are a reduced budget rather than the protocol's settings (e.g. a preset
    #: ``cpu-small`` that freezes an encoder and trains one epoch): results record them as
    #: ``model.budget``, boards badge such rows and ``grid --check`` never checks them
    budget: tuple = ()
    #: the task languages (primary subtags: ``zh`` covers ``zh-Hans``) the parameter applies
    #: to; empty: every language
    languages: tuple = ()
    #: the values of the model's other parameters it applies with: ``{"backend": "bm25s"}``
    #: (each named parameter has one of the values given), or a tuple of such mappings (any one
    #: of them holds); empty: with any values. Kept as ``((name, values), ...)`` per mapping.
    when: Any = ()

    def __post_init__(self):
        languages = (self.languages,) if isinstance(self.languages, str) else self.languages
        if not isinstance(languages, (tuple, list)) or not all(isinstance(t, str) and t.strip() for t in languages):
            raise TypeError(f"Param.languages must be language tags (str), not {self.languages!r}")
        object.__setattr__(self, "languages", tuple(dict.fromkeys(primary_language(t) for t in languages)))
        object.__setattr__(self, "when", _conditions(self.when))

    def applies(self, values: Mapping[str, Any], language: str | None, dropped: Iterable[str] = ()) -> bool:
        """Whether the parameter applies to a task in ``language`` (``None``: any) with the
        other parameters at ``values``; a parameter in ``dropped`` (one that does not apply
        itself) satisfies no condition."""
        if self.languages and language is not None and primary_language(language) not in self.languages:
            return False
        dropped = set(dropped)
        return not self.when or any(all(name not in dropped and name in values and values[name] in allowed
                                        for name, allowed in alternative) for alternative in self.when)

    def applies_text(self) -> str:
        """Where the parameter applies, in words (``""``: everywhere): ``to zh tasks;
        with backend='bm25s', or with analyzer='statbench'``."""
        parts = [f"to {', '.join(self.languages)} tasks"] if self.languages else []
        return "; ".join(parts + ([self._when_text()] if self.when else []))

    def _when_text(self) -> str:
        return ", or ".join("with " + " and ".join(f"{name}={'|'.join(_show(v) for v in allowed)}"
                                                   for name, allowed in alternative) for alternative in self.when)

    @property
    def kind(self) -> type:
        if self.type is not None:
            return self.type
        for candidate in _TYPES:  # bool before int: True is an int
            if isinstance(self.default, candidate):
                return candidate
        return str

    def allowed(self) -> str:
        """What is allowed, in words, for error messages and ``statbench list``."""
        if self.choices:
            return "one of " + ", ".join(_show(c) for c in self.choices)
        if self.pattern:
            return self.pattern_text or f"a str matching {self.pattern}"
        bounds = [f"{op} {_number(bound)}" for op, bound in
                  ((">", self.above), (">=", self.min), ("<=", self.max), ("<", self.below)) if bound is not None]
        article = "a finite " if self.kind is float else "an " if self.kind is int else "a "
        return article + self.kind.__name__ + (" " + " and ".join(bounds) if bounds else "")

    def coerce(self, value: Any, key: str, owner: str) -> Any:
        """``value`` (a string from the command line or a typed value) as the declared type,
        checked against the range and choices."""
        kind = self.kind
        try:
            typed = _from_string(value, kind) if isinstance(value, str) and kind is not str else _typed(value, kind)
        except (TypeError, ValueError):
            raise ParamError(f"parameter {key}={_show(value)} for {owner}: expected {self.allowed()}") from None
        problem = self._problem(typed)
        if problem:
            raise ParamError(f"parameter {key}={_show(value)} for {owner}: {problem}; expected {self.allowed()}")
        return typed

    def _problem(self, value) -> str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return "not a finite number"
        if isinstance(value, str) and (value != value.strip() or "\0" in value):
            return ("white space at either end or a NUL character (the command line that repeats the run "
                    "cannot carry it)")
        if self.choices and value not in self.choices:
            return "not an allowed value"
        if self.pattern and isinstance(value, str) and not re.fullmatch(self.pattern, value):
            return "not an allowed value"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.min is not None and value < self.min:
                return "below the minimum"
            if self.max is not None and value > self.max:
                return "above the maximum"
            if self.above is not None and value <= self.above:
                return "too small"
            if self.below is not None and value >= self.below:
                return "too large"
        return None


def _conditions(when) -> tuple:
    """``when`` as ``((name, allowed values), ...)`` per alternative (see :attr:`Param.when`)."""
    if not when:
        return ()
    alternatives = (when,) if isinstance(when, Mapping) else when
    if not isinstance(alternatives, (tuple, list)):
        raise TypeError(f"Param.when must be a mapping or a tuple of mappings, not {when!r}")
    out = []
    for alternative in alternatives:
        pairs = alternative.items() if isinstance(alternative, Mapping) else alternative
        try:
            normal = tuple((name, tuple(allowed) if isinstance(allowed, (tuple, list)) else (allowed,))
                           for name, allowed in pairs)
        except (TypeError, ValueError):
            raise TypeError(f"Param.when must be a mapping or a tuple of mappings, not {when!r}") from None
        if not normal or not all(isinstance(name, str) and allowed for name, allowed in normal):
            raise TypeError(f"Param.when: each condition names a parameter and at least one value, not {when!r}")
        out.append(normal)
    return tuple(out)


def param_text(value: Any) -> str:
    """A typed parameter value as ``--param KEY=VALUE`` spells it, the one text form of a
    value: ``true``/``false`` for a bool, Python's shortest exact text for a number
    (``0.9``, ``1.0``, ``1e-07``: :meth:`Param.coerce` reads back the same float), a
    string as it is."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def param_items(values: Mapping[str, Any]) -> list[str]:
    """``KEY=VALUE`` strings (``--param``) that :func:`parse_params` reads back to ``values``."""
    return [f"{key}={param_text(value)}" for key, value in values.items()]


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, str) else str(value)


def _from_string(text: str, kind: type):
    text = text.strip()
    if kind is bool:
        lowered = text.lower()
        if lowered not in _TRUE | _FALSE:
            raise ValueError(text)
        return lowered in _TRUE
    if kind is int:
        if not _INT.fullmatch(text):  # ASCII digits only: no '1_0', no other scripts' digits
            raise ValueError(text)
        return int(text, 10)
    if kind is float:
        if not _FLOAT.fullmatch(text):
            if text.strip("+-").lower() in ("nan", "inf", "infinity"):
                return float(text)  # refused as "not a finite number" by the range check
            raise ValueError(text)
        value = float(text)
        if value == 0.0 and re.search(r"[1-9]", text.lower().split("e")[0]):
            raise ValueError(text)  # underflows to zero: not the number given
        return value + 0.0  # -0.0 -> 0.0: one value, one cache key
    return text


def _typed(value, kind: type):
    """A typed value from Python: no silent conversions that lose information."""
    if kind is bool:
        if not isinstance(value, bool):
            raise TypeError(value)
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise TypeError(value)
        return int(value)
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(value)
        return float(value) + 0.0
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def declare(spec: Mapping[str, Any]) -> dict[str, Param]:
    """``default_params`` as declared (plain values or :class:`Param`) -> ``{name: Param}``.
    A ``when`` condition must name another declared parameter and values it allows."""
    declared = {key: value if isinstance(value, Param) else Param(value) for key, value in spec.items()}
    for key, param in list(declared.items()):
        typed = []
        for alternative in param.when:
            pairs = []
            for name, allowed in alternative:
                if name == key or name not in declared:
                    raise ParamError(f"parameter {key} applies with {name}=..., which is not another declared "
                                     "parameter")
                # compared as the values the other parameter takes ("1" for an int is 1)
                pairs.append((name, tuple(declared[name].coerce(value, name, f"the condition of parameter {key}")
                                          for value in allowed)))
            typed.append(tuple(pairs))
        if tuple(typed) != param.when:
            declared[key] = replace(param, when=tuple(typed))
    return declared


def inapplicable(declared: Mapping[str, Any], values: Mapping[str, Any], language: str | None) -> list[str]:
    """The declared parameters that do not apply to a task in ``language`` with the model's
    parameters at ``values`` (every one, defaults included), in declaration order. A
    parameter whose condition names one that does not apply does not apply either."""
    declared = declare(declared)
    dropped: set[str] = set()
    changed = True
    while changed:  # the dropped set only grows: at most one pass per parameter
        changed = False
        for key, param in declared.items():
            if key not in dropped and not param.applies(values, language, dropped):
                dropped.add(key)
                changed = True
    return [key for key in declared if key in dropped]


def applicable_params(values: Mapping[str, Any], declared: Mapping[str, Any], language: str | None, owner: str,
                      given: Iterable[str] = (), task: str = "") -> dict:
    """``values`` without the parameters that do not apply (:func:`inapplicable`). One of
    them among the explicitly ``given`` names is refused in one line: it would change
    nothing, while the run's command and output folder said it had been chosen."""
    dropped = inapplicable(declared, values, language)
    for key in given:
        if key in dropped:
            raise ParamError(f"parameter {key}={_show(values.get(key))} for {owner} "
                             f"{_not_applying(declare(declared)[key], values, language, task)}; drop it")
    return {key: value for key, value in values.items() if key not in dropped}


def _not_applying(param: Param, values: Mapping[str, Any], language: str | None, task: str) -> str:
    """Why ``param`` does not apply, in words: the task's language, else its conditions."""
    if param.languages and language is not None and primary_language(language) not in param.languages:
        where = f"task {task} (language {language})" if task else f"a task in {language}"
        return f"does not apply to {where}: it applies to {', '.join(param.languages)} tasks only"
    names = dict.fromkeys(name for alternative in param.when for name, _ in alternative)
    now = ", ".join(f"{name}={_show(values.get(name))}" for name in names)
    return f"does not apply with {now}: it applies {param._when_text()} only"


def budget_of(values: Mapping[str, Any], declared: Mapping[str, Param]) -> str | None:
    """``"key=value, ..."`` for each value declared as a reduced budget, else ``None``."""
    parts = [f"{key}={param_text(values[key])}" for key, spec in declared.items()
             if spec.budget and key in values and values[key] in spec.budget]
    return ", ".join(parts) or None


def check_params(values: Mapping[str, Any], declared: Mapping[str, Param], owner: str) -> dict:
    """Typed, checked values for the given keys (unknown keys refused with the valid ones)."""
    out = {}
    for key, value in values.items():
        if key not in declared:
            raise UnknownNameError(f"parameter of {owner}", key, declared)
        out[key] = declared[key].coerce(value, key, owner)
    return out


def parse_params(items: Iterable[str], declared: Mapping[str, Any], owner: str) -> dict:
    """``KEY=VALUE`` strings (``--param``) -> typed, checked values."""
    declared = declare(declared)
    raw: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParamError(f"--param {item!r}: expected KEY=VALUE")
        if key in raw and raw[key] != value.strip():
            raise ParamError(f"--param {key} given twice with different values ({raw[key]!r}, {value.strip()!r})")
        raw[key] = value.strip()
    return check_params(raw, declared, owner)
