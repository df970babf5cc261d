"""The text statbench's JSON files hold (``json.dumps(obj, indent=2, sort_keys=True,
ensure_ascii=False, allow_nan=False)``, :func:`statbench.data.jsontext.json_text`) written by
orjson, byte for byte, when every value in ``obj`` is one both write alike; ``None`` when not
sure (the caller then writes it with ``json_text``, which also raises what ``json.dumps`` raises).

orjson (C, ~15x faster here) writes the same text for dicts with ``str`` keys, lists, strings,
``bool``, ``None``, integers of 64 bits (beyond, it raises) and floats in ``[1e-4, 1e16)`` or 0.
It writes other floats in another form (``1e-5`` where ``json`` writes ``1e-05``), NaN and
infinities as ``null`` (``json`` refuses them), and types ``json`` refuses (dataclasses, dates):
so every value is checked first, the containers of plain values (a results file's tens of
thousands of scores) with set operations over their types.
"""

from __future__ import annotations

import math
from itertools import chain

import orjson

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})
#: the floats both write alike: 0, and magnitudes in [SMALLEST, LARGEST)
SMALLEST, LARGEST = 1e-4, 1e16


def indented_json(obj) -> bytes | None:
    """``obj``'s JSON text as ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False,
    allow_nan=False)`` writes it, UTF-8 encoded; ``None`` when orjson might write another."""
    floats = _plain_floats(obj)
    if floats is None or not _alike(floats):
        return None
    try:
        return orjson.dumps(obj, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):  # an integer beyond 64 bits, a lone surrogate
        return None


def _plain_floats(obj) -> list | None:
    """The floats in ``obj`` when it holds only dicts with ``str`` keys, lists and plain
    scalars (exact types: a subclass may write otherwise), else None."""
    floats: list = []
    stack = [obj]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not set(map(type, item)) <= {str}:
                return None
            values = item.values()
        elif kind is list:
            values = item
        else:
            return None
        types = set(map(type, values))
        if types <= _SCALARS:
            if float in types:
                floats.append(values)
            continue
        if not types <= _SCALARS | _CONTAINERS:
            return None
        if types == {dict} and _flat_dicts(values, floats):  # e.g. per_query: a scores map per query
            continue
        stack.extend(value for value in values if type(value) in _CONTAINERS)
        if float in types:
            floats.append([value for value in values if type(value) is float])
    return [value for value in chain.from_iterable(floats) if type(value) is float]


def _flat_dicts(dicts, floats: list) -> bool:
    """Whether ``dicts`` (all of type dict) hold only ``str`` keys and plain scalars, checked
    at once (their values are then added to ``floats``)."""
    if not set(map(type, chain.from_iterable(dicts))) <= {str}:
        return False
    if not set(map(type, chain.from_iterable(map(dict.values, dicts)))) <= _SCALARS:
        return False
    floats.extend(map(dict.values, dicts))
    return True


def _alike(floats: list[float]) -> bool:
    """Whether orjson writes each of ``floats`` as ``json`` does: finite, 0 or in range."""
    if not all(map(math.isfinite, floats)):
        return False
    magnitudes = list(filter(None, map(abs, floats)))
    return not magnitudes or (min(magnitudes) >= SMALLEST and max(magnitudes) < LARGEST)
