"""Typed JSON records: frozen dataclasses that read and write their JSON form, and whose
JSON Schema is generated from them, so a field cannot exist in the type without existing
in the schema (no hand-written schema to keep in sync).

How a field is written and declared:

- a field without a default is required (``required(doc)`` adds its description); so is a
  ``filled(default, doc)`` field, which the builder fills when not given;
- a ``nullable(doc)`` field is always written, null when None (the schema admits null);
- an ``optional(doc)`` field is left out when None.

Constraints the schema states beyond the JSON type ride on the type hint:
``Annotated[int, Schema(minimum=0)]``; ``Annotated[..., Define("scores")]`` names a shared
``$defs`` entry; a record class whose ``schema_name`` is set is one ``$defs`` entry too;
``Literal[...]`` is a ``const`` or an ``enum``. Only the standard library is used."""

from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, field, fields
from typing import Any, ClassVar

_MODE = "json_mode"
_DOC = "json_doc"
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SCALARS = frozenset({str, int, float, bool, type(None)})


def required(doc: str | None = None):
    """A field the file must hold, with no default."""
    return field(metadata={_DOC: doc})


def filled(default, doc: str | None = None):
    """A field the file must hold, which the builder fills with ``default`` when not given."""
    return field(default=default, metadata={_MODE: "required", _DOC: doc})


def nullable(doc: str | None = None):
    """A field written as null when None (the schema admits null)."""
    return field(default=None, metadata={_MODE: "nullable", _DOC: doc})


def optional(doc: str | None = None):
    """A field left out of the file when None."""
    return field(default=None, metadata={_MODE: "optional", _DOC: doc})


class Schema:
    """JSON Schema keywords a type hint adds: ``Annotated[int, Schema(minimum=0)]``."""

    def __init__(self, **keywords):
        self.keywords = keywords

    def __repr__(self):
        return f"Schema({self.keywords!r})"


class Define:
    """``Annotated[T, Define("name")]``: T's schema is the shared entry ``$defs/name``."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"Define({self.name!r})"


def mode(f) -> str:
    """'required', 'nullable' or 'optional': how field ``f`` is written (see the module)."""
    declared = f.metadata.get(_MODE)
    if declared is not None:
        return declared
    return "required" if f.default is MISSING and f.default_factory is MISSING else "optional"


class JsonRecord:
    """to_json/from_json for a dataclass, driven by its type hints."""

    #: the ``$defs`` entry of this record in a generated schema (None: written inline)
    schema_name: ClassVar[str | None] = None

    def to_json(self) -> dict:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and mode(f) == "optional":
                continue
            out[f.name] = _plain(value)
        return out

    @classmethod
    def from_json(cls, obj: Mapping, _where: str = ""):
        """The record of a JSON object the schema accepted; a key the type does not know,
        or a required one missing, is refused (``ValueError``), never dropped or invented."""
        return cls._read(obj, _where or cls.__name__)

    @classmethod
    def _read(cls, obj: Mapping, where: str):
        if not isinstance(obj, Mapping):
            raise TypeError(f"{where}: expected an object, got {type(obj).__name__}")
        known, required_names, readers = _plan(cls)
        if not known.issuperset(obj):
            unknown = sorted(set(obj) - known)
            raise ValueError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))} (not in the results type)")
        missing = [name for name in required_names if name not in obj]
        if missing:
            raise ValueError(f"{where}: missing field(s) {', '.join(map(repr, missing))}")
        return cls(**{name: readers[name](value, f"{where}/{name}") for name, value in obj.items()})


@functools.cache
def _plan(cls) -> tuple[frozenset, list[str], dict]:
    """What reading a record of ``cls`` needs, worked out once per class: its field names,
    the required ones (in field order) and each field's reader."""
    hints = _hints(cls)
    known = {f.name: f for f in fields(cls)}
    required_names = [name for name, f in known.items() if mode(f) == "required"]
    return frozenset(known), required_names, {name: _reader(hints[name]) for name in known}


@functools.cache
def _hints(cls) -> dict:
    return typing.get_type_hints(cls)  # Annotated stripped: reading needs the plain types


def _plain(value):
    """``value`` as JSON data: records converted, containers copied (never shared)."""
    if type(value) is dict or (not isinstance(value, JsonRecord) and isinstance(value, Mapping)):
        if set(map(type, value.values())) <= _SCALARS:  # a map of scalars (a query's scores): copied at once
            return dict(value)
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@functools.cache
def _reader(hint):
    """A function (value, where) -> the typed value of ``hint``, built once per hint."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        read = _reader(inner)
        return lambda value, where: None if value is None else read(value, where)
    if isinstance(hint, type) and issubclass(hint, JsonRecord):
        return hint.from_json
    if origin is list:
        read = _reader(typing.get_args(hint)[0])
        if read is _same:
            return _list_copy
        return lambda value, where: [read(v, f"{where}/{i}") for i, v in enumerate(value)]
    if origin is dict:
        read = _reader(typing.get_args(hint)[1])
        if read is _same:
            return _dict_copy
        if read is _dict_copy:  # a map of maps of scalars (per-query scores): copied in C, no path per item
            return lambda value, where: dict(zip(value, map(dict, value.values())))
        return lambda value, where: {k: read(v, f"{where}/{k}") for k, v in value.items()}
    return _same if hint in _JSON_TYPES or origin is typing.Literal else _copy


def _list_copy(value, where):
    """A list of JSON scalars, copied."""
    return list(value)


def _dict_copy(value, where):
    """A map of JSON scalars, copied."""
    return dict(value)


def _same(value, where):
    """A JSON scalar: immutable, taken as it is (an integer score stays an integer)."""
    return value


def _copy(value, where):
    return _plain(value)


# --- the schema, generated from the type ---------------------------------------------------------


def json_schema(cls, **top) -> dict:
    """The JSON Schema (draft 2020-12) of record class ``cls``; ``top`` (``$schema``,
    ``$id``, ``title``, ``description``) comes first."""
    defs: dict = {}
    root = _record_node(cls, defs)
    schema = {**top, **root}
    if defs:
        schema["$defs"] = defs
    return schema


def _record_node(cls, defs: dict) -> dict:
    hints = typing.get_type_hints(cls, include_extras=True)
    properties = {}
    for f in fields(cls):
        node = _node(hints[f.name], defs, nullable=mode(f) == "nullable")
        if f.metadata.get(_DOC):
            node = {**node, "description": f.metadata[_DOC]}
        properties[f.name] = node
    node: dict = {"type": "object"}
    required_names = [f.name for f in fields(cls) if mode(f) == "required"]
    if required_names:
        node["required"] = required_names
    node["additionalProperties"] = False
    node["properties"] = properties
    return node


def _node(hint, defs: dict, nullable: bool = False) -> dict:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return _node(inner, defs, nullable)
    if nullable:
        node = _node(hint, defs)
        if isinstance(node.get("type"), str):
            return {**node, "type": [node["type"], "null"]}
        return {"oneOf": [{"type": "null"}, node]}
    if origin is typing.Annotated:
        base, *extras = typing.get_args(hint)
        node = _node(base, defs)
        for extra in extras:
            if isinstance(extra, Schema):
                node = {**node, **extra.keywords}
        for extra in extras:
            if isinstance(extra, Define):
                defs.setdefault(extra.name, node)
                node = {"$ref": f"#/$defs/{extra.name}"}
        return node
    if isinstance(hint, type) and issubclass(hint, JsonRecord):
        if hint.schema_name is None:
            return _record_node(hint, defs)
        if hint.schema_name not in defs:
            defs[hint.schema_name] = None  # reserved first: the order of $defs is the order met
            defs[hint.schema_name] = _record_node(hint, defs)
        return {"$ref": f"#/$defs/{hint.schema_name}"}
    if origin is list:
        return {"type": "array", "items": _node(typing.get_args(hint)[0], defs)}
    if origin is dict:
        value = typing.get_args(hint)[1]
        return {"type": "object"} if value is Any else {"type": "object", "additionalProperties": _node(value, defs)}
    if origin is typing.Literal:
        values = list(typing.get_args(hint))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    if hint is Any:
        return {}
    raise TypeError(f"the type {hint!r} has no JSON form")


# --- how another schema differs from the generated one ---------------------------------------------


def schema_differences(cls, schema: dict) -> list[str]:
    """Where ``schema`` (say, the committed copy of the generated schema, or a hand-edited
    one) says something else than the schema generated from ``cls``, in the type's words:
    a field missing on either side, required or nullable in one and not the other, another
    JSON type or other constraints. Empty when they agree (descriptions aside)."""
    generated = json_schema(cls)
    problems: list[str] = []
    _diff(cls, (generated, generated), (schema, schema), "(root)", problems)
    return problems


def _resolve(node: dict, root: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _nullable(node: dict, root: dict) -> tuple[bool, dict]:
    """(whether null is allowed, the node for the non-null values)."""
    node = _resolve(node, root)
    options = node.get("oneOf") or node.get("anyOf")
    if options:
        others = [o for o in options if _resolve(o, root).get("type") != "null"]
        if len(others) == 1:
            return len(others) < len(options), _resolve(others[0], root)
    kind = node.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [k for k in kind if k != "null"]
        return True, {**node, "type": rest[0] if len(rest) == 1 else rest}
    return False, node


def _bare(hint):
    """``hint`` without ``| None`` and ``Annotated``."""
    while True:
        origin = typing.get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        elif origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
        else:
            return hint


def _kind(node: dict) -> str:
    if "type" in node:
        return str(node["type"])
    if "const" in node:
        return f"the constant {node['const']!r}"
    if "enum" in node:
        return f"one of {node['enum']!r}"
    return "untyped"


def _diff(hint, generated: tuple[dict, dict], given: tuple[dict, dict], where: str, problems: list[str]) -> None:
    (g_node, g_root), (s_node, s_root) = generated, given
    g_null, g_node = _nullable(g_node, g_root)
    s_null, s_node = _nullable(s_node, s_root)
    if g_null != s_null:
        problems.append(f"{where}: null is {'allowed' if s_null else 'not allowed'} by the schema "
                        f"but the type {'does not write it' if s_null else 'writes it'}")
    hint = _bare(hint)
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and issubclass(hint, JsonRecord):
        if s_node.get("type") != "object" or s_node.get("additionalProperties") is not False:
            problems.append(f"{where}: the type {hint.__name__} is a closed object, the schema says otherwise")
            return
        s_props, g_props = s_node.get("properties", {}), g_node["properties"]
        known = {f.name: f for f in fields(hint)}
        for name in sorted(set(known) - set(s_props)):
            problems.append(f"{where}/{name}: a field of {hint.__name__} missing from the schema")
        for name in sorted(set(s_props) - set(known)):
            problems.append(f"{where}/{name}: in the schema, not a field of {hint.__name__}")
        s_required = set(s_node.get("required", []))
        hints = typing.get_type_hints(hint, include_extras=True)
        for name, f in known.items():
            if name not in s_props:
                continue
            if (mode(f) == "required") != (name in s_required):
                problems.append(f"{where}/{name}: {'required' if name in s_required else 'optional'} in the schema, "
                                f"{mode(f)} in {hint.__name__}")
            _diff(hints[name], (g_props[name], g_root), (s_props[name], s_root), f"{where}/{name}", problems)
        return
    if origin in (list, dict):
        expected = "array" if origin is list else "object"
        if s_node.get("type") != expected:
            problems.append(f"{where}: a {'list' if origin is list else 'mapping'} in the type, "
                            f"{s_node.get('type') or 'untyped'} in the schema")
            return
        rest = {k: v for k, v in s_node.items() if k not in ("items", "additionalProperties", "description")}
        if rest != {k: v for k, v in g_node.items() if k not in ("items", "additionalProperties", "description")}:
            problems.append(f"{where}: {_text(g_node)} in the type, {_text(s_node)} in the schema")
        part = "items" if origin is list else "additionalProperties"
        if part in g_node:
            if not isinstance(s_node.get(part), dict):
                what = "array's items" if origin is list else "mapping's values"
                problems.append(f"{where}: the schema does not say what the {what} are")
            else:
                _diff(typing.get_args(hint)[-1], (g_node[part], g_root), (s_node[part], s_root), f"{where}/*", problems)
        return
    g_leaf = {k: v for k, v in g_node.items() if k != "description"}
    s_leaf = {k: v for k, v in s_node.items() if k != "description"}
    if g_leaf != s_leaf:
        if _kind(g_leaf) != _kind(s_leaf):
            problems.append(f"{where}: {_kind(g_leaf)} in the type, {_kind(s_leaf)} in the schema")
        else:
            problems.append(f"{where}: {_text(g_leaf)} in the type, {_text(s_leaf)} in the schema")


def _text(node: dict) -> str:
    return json.dumps({k: v for k, v in node.items() if k not in ("items", "properties", "description")},
                      sort_keys=True)
