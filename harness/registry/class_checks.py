"""The checks a plugin's classes pass when they are registered: a model, task or measure
class has the shape the contract asks for.

These checks need no registry: the registry (:mod:`statbench.registry.plugins`) runs them
as each class is registered, and checks the names a task's measures use once every plugin
has registered (:func:`statbench.registry.measure_names.check_measure_names`). The checks
of what plugins *return*, and :func:`~statbench.registry.checks.check_task_class` for a
class outside registration, are in :mod:`statbench.registry.checks`.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from typing import Mapping

from statbench.contract.measure import CUTOFF, CustomMeasure
from statbench.contract.records import FAMILIES, Measure
from statbench.contract.task import Task
from statbench.contract.taskinfo import check_info
from statbench.errors import StatbenchError

#: Names become TREC tags, cache paths and ``DIST:NAME`` selectors.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
#: Custom measure names: letters, digits and '_', starting with a letter and not ending with
#: a digit (a number after the name is the shorthand parameter: ``F2``).
_MEASURE_NAME = re.compile(r"[A-Za-z](?:[A-Za-z0-9_]*[A-Za-z_])?")


class PluginError(StatbenchError):
    """A plugin broke the contract (bad class, bad output, or it raised)."""


def check_model_class(cls, base: type) -> None:
    """A retriever or reranker class: right base, a usable name, a family, parameters."""
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise PluginError(f"{cls!r} must subclass statbench.api.{base.__name__}")
    label = cls.__name__
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(f"{label}.name {name!r} must be a non-empty str of letters, digits, '.', '_', '+', '-'")
    if cls.family not in FAMILIES:
        raise PluginError(f"{label}.family {cls.family!r} must be one of {', '.join(FAMILIES)}")
    if not isinstance(cls.description, str):
        raise PluginError(f"{label}.description must be a str")
    if not isinstance(cls.version, str):
        raise PluginError(f"{label}.version must be a str")
    if not isinstance(cls.default_params, Mapping):
        raise PluginError(f"{label}.default_params must be a dict")
    try:
        specs = cls.param_specs()
        json.dumps(cls.defaults())
        for key, spec in specs.items():
            if spec.default is not None:
                spec.coerce(spec.default, key, cls.name)
    except (TypeError, ValueError) as exc:
        raise PluginError(f"{label}.default_params must be JSON-serialisable: {exc}") from None
    except StatbenchError as exc:
        raise PluginError(f"{label}.default_params: the default {exc}") from None


def check_task_declaration(cls) -> None:
    """A task class, all but the names of its measures: its declaration
    (:class:`~statbench.contract.taskinfo.TaskInfo`, or the class attributes of an older plain
    task) is sound, its measures are distinct :class:`Measure` records, it implements load()."""
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        raise PluginError(f"{cls!r} must subclass statbench.api.Task")
    label = cls.__name__
    if cls.info is None:  # declared through class attributes: each must be there, typed
        for attr, kind in (("name", str), ("language", str), ("description", str), ("version", str),
                           ("analyzer", str), ("depth", int), ("measures", tuple)):
            if not hasattr(cls, attr):
                raise PluginError(f"task class {label} has no {attr!r} attribute")
            value = getattr(cls, attr)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise PluginError(f"task class {label}: {attr} must be a {kind.__name__}, found {type(value).__name__}")
    info = cls.task_info()
    problems = check_info(info)
    if problems:
        raise PluginError(f"task {info.name!r} ({label}): {problems[0]}")
    check_measure_labels(info.name, info.measures)
    if not callable(getattr(cls, "load", None)) or cls.load is Task.load:
        raise PluginError(f"task {info.name}: implements no load()")


def check_measure_labels(owner: str, measures) -> None:
    """A task's measures are :class:`Measure` records with distinct labels."""
    labels = set()
    for measure in measures:
        if not isinstance(measure, Measure):
            raise PluginError(f"task {owner}: measures must be statbench.api.Measure, found {measure!r}")
        if measure.label in labels:
            raise PluginError(f"task {owner}: measure label {measure.label!r} declared twice")
        labels.add(measure.label)


def check_measure_class(cls) -> None:
    """A measure class: the base, a usable name no ir-measures measure has, sound
    parameter declarations, a shorthand and bounds that make sense, a ``per_query``."""
    import ir_measures

    if not (isinstance(cls, type) and issubclass(cls, CustomMeasure)):
        raise PluginError(f"{cls!r} must subclass statbench.api.CustomMeasure")
    label = cls.__name__
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _MEASURE_NAME.fullmatch(name):
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
