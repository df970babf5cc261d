"""JSON text as statbench writes its JSON files (:func:`statbench.data.atomic.write_json`):
``json.dump(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)``, byte for
byte, in a fraction of the time.

With ``indent`` the standard library encodes in Python, one call per value; a results file
holds tens of thousands of scores. Here every object or array whose values are all plain
(no object or array inside) is encoded by the C encoder in one call, its separators carrying
the line break and indentation of its level; only the levels above are walked in Python. A
value this does not handle the same way for sure (a key that is not a string, a type JSON
has no form for, a reference cycle) sends the whole value to ``json.dumps`` itself, which
gives the same text or raises what it raises.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring

INDENT = "  "
_CONTAINERS = (dict, list, tuple)


class _NotPlain(Exception):
    """Something :func:`json_text` leaves to ``json.dumps``."""


def json_text(obj) -> str:
    """``json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)``."""
    try:
        return _encode(obj, 0)
    except (_NotPlain, RecursionError):
        return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _encode(obj, level: int) -> str:
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        if not all(type(key) is str for key in obj):
            raise _NotPlain
        items = sorted(obj.items())
        inner = "\n" + INDENT * (level + 1)
        if not any(isinstance(value, _CONTAINERS) for _, value in items):
            return "{" + inner + _flat(obj, inner)[1:-1] + "\n" + INDENT * level + "}"
        parts = [encode_basestring(key) + ": " + _encode(value, level + 1) for key, value in items]
        return "{" + inner + ("," + inner).join(parts) + "\n" + INDENT * level + "}"
    if isinstance(obj, (list, tuple)):
        if not obj:
            return "[]"
        inner = "\n" + INDENT * (level + 1)
        if not any(isinstance(value, _CONTAINERS) for value in obj):
            return "[" + inner + _flat(obj, inner)[1:-1] + "\n" + INDENT * level + "]"
        parts = [_encode(value, level + 1) for value in obj]
        return "[" + inner + ("," + inner).join(parts) + "\n" + INDENT * level + "]"
    return _flat(obj, "")


def _flat(obj, inner: str) -> str:
    """One object, array or plain value with no container inside, by the C encoder: items
    separated by ``,`` and ``inner`` (the line break and indentation of their level)."""
    if not isinstance(obj, (dict, list, tuple, str, int, float, type(None))):
        raise _NotPlain  # bool is an int; anything else is json.dumps's to refuse or encode
    return json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True,
                            separators=("," + inner, ": ")).encode(obj)
