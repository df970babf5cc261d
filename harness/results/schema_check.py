"""A small exact JSON Schema (draft 2020-12) check for the keywords the results schema uses.

Writing a run's results checks the record against the schema; importing jsonschema and
building its validator costs a cached run more than everything else it writes. This check
decides the same verdict as ``jsonschema.Draft202012Validator`` (no format checking) for
the keywords it knows: ``type``, ``properties``, ``required``, ``additionalProperties``,
``items``, ``minItems``, ``minimum``, ``pattern``, ``const`` and ``enum`` of plain values,
``oneOf``, local ``$ref`` (``#/$defs/NAME``), and the annotations (``description``, ...).
Anything else in the schema or the value (another keyword, a value of a type JSON does not
have) makes it answer ``None``: not known here, and the caller asks jsonschema, which also
gives the messages of a record that is invalid.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: keywords that assert nothing (draft 2020-12 without format checking)
ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default", "format",
                         "deprecated", "readOnly", "writeOnly"})
#: the values a JSON document can hold, as Python's json module reads them
_PLAIN = (dict, list, str, int, float, bool, type(None))


def schema_verdict(schema: dict, instance) -> bool | None:
    """Whether ``instance`` is valid against ``schema`` (True/False, as jsonschema decides),
    or ``None`` when the schema or the value holds something this check does not know. To
    check many instances against one schema, :func:`compiled_verdict` once."""
    return compiled_verdict(schema)(instance)


class _Unknown(Exception):
    """The schema or value holds what this check does not know: jsonschema decides."""


def _is_type(name: str, instance) -> bool:
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "null":
        return instance is None
    if name == "number":
        return isinstance(instance, (int, float)) and not isinstance(instance, bool)
    if name == "integer":
        if isinstance(instance, bool):
            return False
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    raise _Unknown


@lru_cache(maxsize=64)
def _compiled(pattern: str):
    return re.compile(pattern)


def _scalar_equal(one, two) -> bool:
    """jsonschema's ``equal`` where at most one side is an array or object (a boolean
    equals only a boolean; 1 equals 1.0; a container never equals a plain value)."""
    containers = isinstance(one, (dict, list)) + isinstance(two, (dict, list))
    if containers == 2:
        raise _Unknown
    if containers == 1:
        return False
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return one == two


# --- the check: the schema's walk worked out once, then run on each instance ---------------------


def compiled_verdict(schema: dict):
    """A function ``instance -> True/False/None`` (:func:`schema_verdict`'s verdict) with the
    schema turned into nested checks once: each node's keywords looked up, its sub-schemas and
    patterns resolved, instead of at every value of every record (a cold leaderboard build
    checks 10,000). Every keyword of every node reached is evaluated (no early exit), so what
    it does not know is said (None) wherever it is. ``schema`` must not change afterwards."""
    node = _Compiler(schema).node(schema)

    def verdict(instance) -> bool | None:
        try:
            return node(instance)
        except _Unknown:
            return None

    return verdict


def _yes(instance) -> bool:
    return True


def _no(instance) -> bool:
    return False


def _unknown(instance) -> bool:
    raise _Unknown


class _Compiler:
    def __init__(self, root: dict):
        self.root = root
        self.refs: dict[str, object] = {}

    def node(self, schema):
        """The check of one (sub-)schema: true/false for an instance, ``_Unknown`` raised where
        a keyword, or a value of one, is not known here (when that node is reached)."""
        if schema is True:
            return _yes
        if schema is False:
            return _no
        if not isinstance(schema, dict):
            return _unknown
        checks = []
        for keyword, value in schema.items():
            if keyword in ANNOTATIONS or keyword == "$defs":
                continue
            make = _MAKERS.get(keyword)
            check = None if make is None else make(self, value, schema)
            if check is None:  # a keyword, or a value of it, not known here: reaching this node says so
                return _unknown
            checks.append(check)

        def valid(instance) -> bool:
            if not isinstance(instance, _PLAIN):
                raise _Unknown
            return all([check(instance) for check in checks])  # each evaluated: an unknown one later on still says so

        return valid

    def ref(self, target):
        if not isinstance(target, str) or not target.startswith("#/$defs/"):
            return None

        def check(instance) -> bool:  # resolved when first reached (a definition may refer to itself)
            found = self.refs.get(target)
            if found is None:
                try:
                    sub = self.root["$defs"][target[len("#/$defs/"):]]
                except (KeyError, TypeError):
                    raise _Unknown from None
                found = self.refs[target] = self.node(sub)
            return found(instance)

        return check


def _make_type(compiler: _Compiler, value, schema):
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(n, str) for n in names):
        return None
    if any(name not in _TYPE_NAMES for name in names):
        return None
    if len(names) == 1:
        name = names[0]
        return lambda instance: _is_type(name, instance)
    return lambda instance: any([_is_type(name, instance) for name in names])


_TYPE_NAMES = frozenset({"object", "array", "string", "boolean", "null", "number", "integer"})


def _make_properties(compiler: _Compiler, value, schema):
    if not isinstance(value, dict):
        return None
    subs = [(name, compiler.node(sub)) for name, sub in value.items()]

    def check(instance) -> bool:
        if not isinstance(instance, dict):
            return True
        return all([sub(instance[name]) for name, sub in subs if name in instance])

    return check


def _make_required(compiler: _Compiler, value, schema):
    if not isinstance(value, list):
        return None
    names = list(value)
    return lambda instance: not isinstance(instance, dict) or all(name in instance for name in names)


def _make_additional(compiler: _Compiler, value, schema):
    if "patternProperties" in schema:
        return None
    known = schema.get("properties", {})
    if value is False:
        return lambda instance: not isinstance(instance, dict) or all(name in known for name in instance)
    sub = compiler.node(value)

    def check(instance) -> bool:
        if not isinstance(instance, dict):
            return True
        return all([sub(instance[name]) for name in instance if name not in known])

    return check


def _make_items(compiler: _Compiler, value, schema):
    if "prefixItems" in schema:
        return None
    sub = compiler.node(value)
    return lambda instance: not isinstance(instance, list) or all([sub(item) for item in instance])


def _make_min_items(compiler: _Compiler, value, schema):
    if type(value) is not int:
        return None
    return lambda instance: not isinstance(instance, list) or len(instance) >= value


def _make_minimum(compiler: _Compiler, value, schema):
    if type(value) not in (int, float):
        return None
    return lambda instance: not _is_type("number", instance) or not instance < value


def _make_pattern(compiler: _Compiler, value, schema):
    if not isinstance(value, str):
        return None
    search = _compiled(value).search
    return lambda instance: not isinstance(instance, str) or search(instance) is not None


def _make_const(compiler: _Compiler, value, schema):
    return lambda instance: _scalar_equal(value, instance)


def _make_enum(compiler: _Compiler, value, schema):
    if not isinstance(value, list):
        return None
    items = list(value)
    return lambda instance: any([_scalar_equal(item, instance) for item in items])


def _make_one_of(compiler: _Compiler, value, schema):
    if not isinstance(value, list) or not value:
        return None
    subs = [compiler.node(sub) for sub in value]
    return lambda instance: sum([sub(instance) for sub in subs]) == 1


def _make_ref(compiler: _Compiler, value, schema):
    return compiler.ref(value)


_MAKERS = {
    "type": _make_type,
    "properties": _make_properties,
    "required": _make_required,
    "additionalProperties": _make_additional,
    "items": _make_items,
    "minItems": _make_min_items,
    "minimum": _make_minimum,
    "pattern": _make_pattern,
    "const": _make_const,
    "enum": _make_enum,
    "oneOf": _make_one_of,
    "$ref": _make_ref,
}
