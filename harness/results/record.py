"""Results: the typed record of one scored run (:class:`Results`, built by
:meth:`Results.build`), and its JSON file: validated against the schema shipped in the
package (validator compiled once), written atomically, read strictly: no NaN/Infinity, no
number that overflows, no duplicate key, no unpaired surrogate. The runner, the leaderboard
and ``compare`` all go through here; the schema is checked against the record types
(:func:`schema_mismatches`)."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from statbench import __version__
from statbench.errors import DataFormatError
from statbench.storage.atomic import write_json

#: Schema violations shown in one error line.
SHOWN_PROBLEMS = 5

@cache
def results_schema() -> dict:
    return json.loads(resources.files("statbench").joinpath("schemas/results.schema.json").read_text("utf-8"))


class _Rejected(ValueError):
    """A JSON text that the standard parser accepts but results must not contain."""

    def __init__(self, message: str, field: str | None = None, constant: bool = False):
        super().__init__(message)
        self.field, self.constant = field, constant


def _reject_constant(token: str):
    raise _Rejected(f"{token} is not a number (NaN, Infinity and -Infinity are not JSON)", constant=True)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Rejected(f"the number {text[:40]} is too large (it overflows to infinity)")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 300:
        raise _Rejected(f"the number {text[:20]}… is too large ({len(text)} digits)")
    return int(text)


def _unique_keys(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Rejected(f"duplicate key {duplicate!r} in an object", duplicate)
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_CONSTANT_OUTSIDE_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.){0,200})"\s*:\s*\[?\s*$')


def _unpaired_surrogate(obj) -> str | None:
    """A string (or key) holding a lone UTF-16 surrogate: not text, cannot be written as UTF-8."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
    return None


def parse_strict(text: str):
    """``json.loads`` that refuses what results must not hold: NaN/Infinity tokens, numbers
    that overflow to infinity, duplicate keys, unpaired surrogates (raises ``ValueError``;
    ``json.JSONDecodeError`` for text that is not JSON at all)."""
    obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int,
                     object_pairs_hook=_unique_keys)
    if _SURROGATE_ESCAPE.search(text):
        bad = _unpaired_surrogate(obj)
        if bad is not None:
            raise _Rejected(f"the string {ascii(bad[:40])} holds an unpaired UTF-16 surrogate (not text)")
    return obj


def _locate_constant(text: str) -> tuple[int | None, str | None]:
    """(line, key) of the first NaN/Infinity token outside a string, to point at it."""
    for match in _CONSTANT_OUTSIDE_STRINGS.finditer(text):
        if match.group(1):
            before = text[: match.start()]
            key = _KEY_BEFORE.search(before[-400:])
            return before.count("\n") + 1, key.group(1) if key else None
    return None, None


@functools.cache
def _validator():
    """The results schema's validator, compiled once per process."""
    import jsonschema

    return jsonschema.Draft202012Validator(results_schema())


#: the top-level fields holding one scores map (``$defs/scores``) per query / per group value
_SCORE_TABLES = {"per_query": 1, "breakdown": 2}


def _is_scores(value) -> bool:
    """``$defs/scores`` of the schema: an object whose values are all numbers (not booleans)."""
    return isinstance(value, dict) and all(type(v) in (int, float) for v in value.values())


def _tables_valid(obj: dict) -> bool:
    """Whether the large tables of scores (per query, per breakdown group) are what the
    schema says: each a map of ``$defs/scores`` (``breakdown``: of maps of them). A plain
    loop, without building a validator node per score."""
    for name, depth in _SCORE_TABLES.items():
        if name not in obj:
            continue
        table = obj[name]
        if not isinstance(table, dict):
            return False
        rows = table.values()
        if depth == 2:
            if not all(isinstance(group, dict) for group in rows):
                return False
            rows = [row for group in rows for row in group.values()]
        if not all(_is_scores(row) for row in rows):
            return False
    return True


def schema_errors(obj) -> list[str]:
    """Every schema violation, as 'path: message' strings (empty when valid).

    The compiled validator checks the record with its large tables of scores emptied,
    and a plain loop checks those tables against their (simple) schema; only when that
    loop finds a problem does the validator walk the whole record, for the exact messages.
    Same verdict as validating everything at once, in milliseconds instead of ~0.5 s."""
    if isinstance(obj, dict) and _tables_valid(obj):
        light = {k: ({} if k in _SCORE_TABLES else v) for k, v in obj.items()}
        errors = list(_validator().iter_errors(light))
        if not errors:
            return []
    errors = sorted(_validator().iter_errors(obj), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def read_results(path) -> dict:
    """Read a results file strictly and check it against the schema; a ``DataFormatError``
    names the file (and line or field where known) otherwise."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFormatError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    try:
        obj = parse_strict(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
    except _Rejected as exc:
        line, key = _locate_constant(text) if exc.constant else (None, exc.field)
        raise DataFormatError(path, f"not valid JSON: {exc}", line, key) from None
    except RecursionError:
        raise DataFormatError(path, "not valid JSON: nested too deeply") from None
    errors = schema_errors(obj)
    if errors:
        raise DataFormatError(path, "does not match the results schema: " + "; ".join(errors[:SHOWN_PROBLEMS]))
    return obj



def validation_errors(obj) -> list[str]:
    """Every schema violation, as 'path: message' strings (empty when valid)."""
    return schema_errors(obj)


def write_results(path, results) -> None:
    """Validate (once, with the compiled validator), then write atomically; invalid results
    are never written. ``results`` is a :class:`Results` or its JSON dict."""
    obj = results.to_json() if isinstance(results, Results) else results
    errors = schema_errors(obj)
    if errors:
        raise ValueError("results do not match the schema: " + "; ".join(errors[:SHOWN_PROBLEMS]))
    write_json(path, obj)


def load_results(path) -> dict:
    """Read a results file strictly (:func:`read_results`) and check it against the schema."""
    return read_results(path)


# --- the results record as a type ------------------------------------------------------------
#
# One scored run as typed records, in the spirit of MTEB's ``TaskResult``. The file format is
# the schema's (schema_version 1) and stays byte-compatible: ``Results.from_json(obj).to_json()``
# gives ``obj`` back for every file ``statbench run`` writes. How a field is written:
#
# - a field without a default is required (so are ``schema_version`` and
#   ``statbench_version``, which the builder fills: ``_FILLED``);
# - a ``_NULLABLE`` field (the schema admits null) is always written, null when None, as
#   the runner always did (``reranker``, ``pool``, a plugin's ``distribution``/``version``);
# - an ``_OPTIONAL`` field is left out when None (``breakdown``, ``cache_invalid``...).
#
# ``from_json`` expects a dict that :func:`read_results` (or the schema) already accepted; it
# still refuses a key it does not know, so nothing in a file is ever silently dropped. The
# schema is checked against these classes by :func:`schema_mismatches` (tests/test_results_type.py).

SCHEMA_VERSION = 1
_MODE = "results_json"
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SCALARS = frozenset({str, int, float, bool, type(None)})


#: field metadata: left out of the file when None
_OPTIONAL = {_MODE: "optional"}
#: field metadata: written as null when None (the schema admits null)
_NULLABLE = {_MODE: "nullable"}
#: field metadata: required in the file, though the builder fills it when not given
_FILLED = {_MODE: "required"}


def _mode(f) -> str:
    mode = f.metadata.get(_MODE)
    if mode is not None:
        return mode
    return "required" if f.default is MISSING and f.default_factory is MISSING else "optional"


class _Record:
    """to_json/from_json for the dataclasses below, driven by their type hints."""

    def to_json(self) -> dict:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and _mode(f) == "optional":
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
        hints = _hints(cls)
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(obj) - set(known))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))} (not in the results type)")
        missing = [name for name, f in known.items() if _mode(f) == "required" and name not in obj]
        if missing:
            raise ValueError(f"{where}: missing field(s) {', '.join(map(repr, missing))}")
        return cls(**{name: _from_json(value, hints[name], f"{where}/{name}") for name, value in obj.items()})


@functools.cache
def _hints(cls) -> dict:
    return typing.get_type_hints(cls)


def _plain(value):
    """``value`` as JSON data: records converted, containers copied (never shared)."""
    if isinstance(value, _Record):
        return value.to_json()
    if isinstance(value, Mapping):
        if all(type(v) in _SCALARS for v in value.values()):
            return dict(value)
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _from_json(value, hint, where: str):
    return _reader(hint)(value, where)


@functools.cache
def _reader(hint):
    """A function (value, where) -> the typed value of ``hint``, built once per hint."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        read = _reader(inner)
        return lambda value, where: None if value is None else read(value, where)
    if isinstance(hint, type) and issubclass(hint, _Record):
        return hint.from_json
    if origin is list:
        read = _reader(typing.get_args(hint)[0])
        if read is _same:
            return lambda value, where: list(value)
        return lambda value, where: [read(v, f"{where}/{i}") for i, v in enumerate(value)]
    if origin is dict:
        read = _reader(typing.get_args(hint)[1])
        if read is _same:
            return lambda value, where: dict(value)
        return lambda value, where: {k: read(v, f"{where}/{k}") for k, v in value.items()}
    return _same if hint in _JSON_TYPES else _copy


def _same(value, where):
    """A JSON scalar: immutable, taken as it is (an integer score stays an integer)."""
    return value


def _copy(value, where):
    return _plain(value)


@dataclass(frozen=True, kw_only=True)
class PluginRecord(_Record):
    """The plugin (distribution) that registered a task or model."""

    name: str
    distribution: str | None = field(default=None, metadata=_NULLABLE)
    version: str | None = field(default=None, metadata=_NULLABLE)


@dataclass(frozen=True, kw_only=True)
class TaskRecord(_Record):
    """The task and the exact data the run was scored on."""

    name: str
    language: str
    data_checksum: str
    files: list[str]
    #: the protocol whose splits were run ('' for a hand-picked set of splits)
    protocol: str | None = field(default=None, metadata=_OPTIONAL)
    #: items the loader could not use, each with the reason
    dropped: list[str] | None = field(default=None, metadata=_OPTIONAL)
    #: the task's loader version (cache keys cover it)
    version: str | None = field(default=None, metadata=_OPTIONAL)
    #: sha256 over the corpus as loaded
    corpus_checksum: str | None = field(default=None, metadata=_OPTIONAL)
    plugin: PluginRecord | None = field(default=None, metadata=_OPTIONAL)
    #: documents in the corpus as loaded (a board names its data by it)
    corpus_size: int | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class ModelRecord(_Record):
    """A first stage (a retriever, or a frozen pool) or a reranker, with its parameters."""

    name: str
    family: str
    params: dict[str, Any]
    plugin: PluginRecord
    description: str | None = field(default=None, metadata=_OPTIONAL)
    version: str | None = field(default=None, metadata=_OPTIONAL)
    #: True if the model learned from the task's training queries
    trained: bool | None = field(default=None, metadata=_OPTIONAL)
    #: the parameters that make this a reduced-budget run (e.g. 'preset=cpu-small'), not
    #: the protocol's settings; absent when the model ran its declared defaults/paper preset
    budget: str | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class RunFile(_Record):
    path: str  #: relative to the results file
    sha256: str


@dataclass(frozen=True, kw_only=True)
class MeasureRecord(_Record):
    label: str
    ir_measure: str


@dataclass(frozen=True, kw_only=True)
class SplitScores(_Record):
    """Mean scores over one split's evaluated queries."""

    name: str
    n_queries: int
    scores: dict[str, float]
    queries_without_results: int | None = field(default=None, metadata=_OPTIONAL)
    query_ids: list[str] | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class MeanStd(_Record):
    """Mean and sample standard deviation of a measure over the splits."""

    mean: float
    std: float


@dataclass(frozen=True, kw_only=True)
class CacheInvalid(_Record):
    """A cache entry found invalid (truncated, corrupted, foreign) and rebuilt."""

    entry: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class RunScores(_Record):
    """What scoring gives (``evaluation.score_splits``, ``statbench evaluate``): per-query
    scores, their means per split, mean ± std over splits, pooled means, breakdowns. The
    scores part of :class:`Results` (which is a ``RunScores``)."""

    measures: list[MeasureRecord]
    splits: list[SplitScores]
    aggregate: dict[str, MeanStd]
    per_query: dict[str, dict[str, float]]
    #: means over every evaluated query pooled, as ir_measures on the run file gives
    all_queries: dict[str, float] | None = field(default=None, metadata=_OPTIONAL)
    #: group name (e.g. 'category') -> group value -> measure -> mean
    breakdown: dict[str, dict[str, dict[str, float]]] | None = field(default=None, metadata=_OPTIONAL)
    #: the order every measure saw each ranking in (runfile.TIE_ORDER for a foreign run
    #: with ties; statbench's own runs hold no tie at 32-bit precision)
    tie_order: str | None = field(default=None, metadata=_OPTIONAL)

    @classmethod
    def part_of(cls, obj: Mapping) -> RunScores:
        """The scores part of a results dict or of ``evaluate_run_file``'s output: their
        other top-level keys (provenance, ``run_file``) are left aside; what is read is read
        strictly. (``from_json`` refuses any key that is not a score field.)"""
        names = {f.name for f in fields(RunScores)}
        return RunScores.from_json({k: v for k, v in obj.items() if k in names})

    @property
    def labels(self) -> list[str]:
        """The measure labels, in the task's order."""
        return [m.label for m in self.measures]

    @property
    def n_queries(self) -> int:
        return sum(s.n_queries for s in self.splits)

    def query_scores(self, label: str) -> dict[str, float]:
        """query id -> score on measure ``label`` (queries without that score left out)."""
        return {qid: scores[label] for qid, scores in self.per_query.items() if label in scores}


@dataclass(frozen=True, kw_only=True)
class Results(RunScores):
    """One scored run of one model (optionally a first stage plus a reranker) on one task:
    the record ``statbench run`` writes as ``results.json``."""

    task: TaskRecord
    model: ModelRecord
    #: the exact command that reproduces these results
    command: str
    run_file: RunFile
    #: seconds per phase (load, index, train, search, rerank, evaluate, total)
    timings: dict[str, float]
    #: UTC ISO-8601 time the results were written
    created: str
    reranker: ModelRecord | None = field(default=None, metadata=_NULLABLE)
    #: name of the frozen candidate pool reranked, if any
    pool: str | None = field(default=None, metadata=_NULLABLE)
    #: sha256 of that pool's file: two pools of one name built differently are two systems
    pool_sha256: str | None = field(default=None, metadata=_OPTIONAL)
    schema_version: int = field(default=SCHEMA_VERSION, metadata=_FILLED)
    statbench_version: str = field(default=__version__, metadata=_FILLED)
    #: split -> 'hit' or 'miss': whether its ranked run came from the cache
    cache: dict[str, str] | None = field(default=None, metadata=_OPTIONAL)
    cache_invalid: list[CacheInvalid] | None = field(default=None, metadata=_OPTIONAL)
    #: numbers a model reported (e.g. passages encoded per second)
    throughput: dict[str, float] | None = field(default=None, metadata=_OPTIONAL)
    environment: dict[str, str] | None = field(default=None, metadata=_OPTIONAL)
    extra: dict[str, Any] | None = field(default=None, metadata=_OPTIONAL)

    @classmethod
    def read(cls, path) -> Results:
        """:func:`read_results` (strict, schema-checked), as a record."""
        return cls.from_json(read_results(path))

    @classmethod
    def build(cls, scores: RunScores, *, task: TaskRecord, model: ModelRecord, command: str, run_file: RunFile,
              timings: Mapping[str, float], reranker: ModelRecord | None = None, pool: str | None = None,
              pool_sha256: str | None = None, created: str | None = None, statbench_version: str | None = None,
              environment: Mapping[str, str] | None = None, cache: Mapping[str, str] | None = None,
              cache_invalid=(), throughput: Mapping[str, float] | None = None,
              extra: Mapping | None = None) -> Results:
        """The one builder of results (the runner, the sample generator): the scores plus
        the provenance. ``created`` defaults to now (UTC, whole seconds); an empty
        ``cache_invalid`` or ``throughput`` is left out of the file."""
        return cls(
            **{f.name: getattr(scores, f.name) for f in fields(RunScores)},
            schema_version=SCHEMA_VERSION,
            statbench_version=statbench_version or __version__,
            created=created or _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
            task=task, model=model, reranker=reranker, pool=pool, pool_sha256=pool_sha256, command=command,
            run_file=run_file,
            timings=dict(timings),
            cache=None if cache is None else dict(cache),
            cache_invalid=[e if isinstance(e, CacheInvalid) else CacheInvalid.from_json(e) for e in cache_invalid] or None,
            throughput=dict(throughput) if throughput else None,
            environment=None if environment is None else dict(environment),
            extra=None if extra is None else dict(extra),
        )


def as_scores(obj) -> RunScores:
    """A :class:`RunScores` (a :class:`Results` is one) from a record or from a dict as
    ``statbench evaluate``/``score_splits`` give or a results file holds."""
    if isinstance(obj, RunScores):
        return obj
    return RunScores.part_of(obj)


def as_results(obj) -> Results:
    """A :class:`Results` from a record or a schema-valid results dict."""
    return obj if isinstance(obj, Results) else Results.from_json(obj)


# --- the schema checked against the type -----------------------------------------------------


def schema_mismatches(cls=Results, schema: dict | None = None) -> list[str]:
    """Where the results schema and the record types disagree: a field missing on either
    side, required in one and not the other, nullable in one and not the other, or of
    another JSON type. Empty when they agree (tests/test_results_type.py)."""
    schema = results_schema() if schema is None else schema
    problems: list[str] = []
    _check_node(cls, schema, schema, "(root)", problems, nullable=False)
    return problems


def _resolve(node: dict, root: dict) -> dict:
    while "$ref" in node:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _schema_nullable(node: dict, root: dict) -> tuple[bool, dict]:
    """(whether null is allowed, the node for the non-null values)."""
    node = _resolve(node, root)
    if "oneOf" in node or "anyOf" in node:
        options = node.get("oneOf") or node.get("anyOf")
        others = [o for o in options if _resolve(o, root).get("type") != "null"]
        if len(others) == 1:
            return len(others) < len(options), _resolve(others[0], root)
    kind = node.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [k for k in kind if k != "null"]
        return True, {**node, "type": rest[0] if len(rest) == 1 else rest}
    return False, node


def _check_node(hint, node: dict, root: dict, where: str, problems: list[str], nullable: bool) -> None:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
        origin = typing.get_origin(hint)
    allows_null, node = _schema_nullable(node, root)
    if allows_null != nullable:
        problems.append(f"{where}: null is {'allowed' if allows_null else 'not allowed'} by the schema "
                        f"but the type {'does not write it' if allows_null else 'writes it'}")
    kind = node.get("type")
    if isinstance(hint, type) and issubclass(hint, _Record):
        if kind != "object" or node.get("additionalProperties") is not False:
            problems.append(f"{where}: the type {hint.__name__} is a closed object, the schema says otherwise")
            return
        props = node.get("properties", {})
        known = {f.name: f for f in fields(hint)}
        for name in sorted(set(known) - set(props)):
            problems.append(f"{where}/{name}: a field of {hint.__name__} missing from the schema")
        for name in sorted(set(props) - set(known)):
            problems.append(f"{where}/{name}: in the schema, not a field of {hint.__name__}")
        required = set(node.get("required", []))
        hints = _hints(hint)
        for name, f in known.items():
            if name not in props:
                continue
            if (_mode(f) == "required") != (name in required):
                problems.append(f"{where}/{name}: {'required' if name in required else 'optional'} in the schema, "
                                f"{_mode(f)} in {hint.__name__}")
            _check_node(hints[name], props[name], root, f"{where}/{name}", problems, _mode(f) == "nullable")
    elif origin is list:
        if kind != "array":
            problems.append(f"{where}: a list in the type, {kind or 'untyped'} in the schema")
            return
        (item,) = typing.get_args(hint)
        _check_node(item, node.get("items", {}), root, f"{where}/*", problems, False)
    elif origin is dict:
        if kind != "object":
            problems.append(f"{where}: a mapping in the type, {kind or 'untyped'} in the schema")
            return
        _, item = typing.get_args(hint)
        extra = node.get("additionalProperties", True)
        if item is not Any:
            if not isinstance(extra, dict):
                problems.append(f"{where}: the schema does not say what the mapping's values are")
            else:
                _check_node(item, extra, root, f"{where}/*", problems, False)
    elif hint in _JSON_TYPES:
        expected = _JSON_TYPES[hint]
        if "const" in node:
            ok = isinstance(node["const"], hint) and not (hint is int and isinstance(node["const"], bool))
        elif "enum" in node:
            ok = all(isinstance(v, hint) for v in node["enum"])
        else:
            ok = kind == expected or (hint is float and kind == "number")
        if not ok:
            problems.append(f"{where}: {expected} in the type, {kind or node} in the schema")
    elif hint is not Any:
        problems.append(f"{where}: the type {hint!r} has no JSON form")
