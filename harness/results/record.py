"""Results: the typed record of one scored run (:class:`Results`, built by
:meth:`Results.build`; its scores part :class:`RunScores` is what scoring returns), and its
JSON file: validated against the schema generated from these types (validator compiled
once), written atomically, read strictly: no NaN/Infinity, no number that overflows, no
duplicate key, no unpaired surrogate. The runner, ``evaluate``, ``compare`` and the
leaderboard all go through here.

The schema is generated from the types (:mod:`.jsonrecord`), so a field cannot be added to
the type without being in the schema; ``harness/schemas/results.schema.json`` is the
committed copy of it for readers outside Python (``python -m statbench.results`` rewrites
it; a test fails while it differs)."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Annotated, Any, Literal

from statbench import __version__
from statbench.data.atomic import atomic_open, write_json
from statbench.errors import DataFormatError
from statbench.results.fastjson import indented_json
from statbench.results.jsonrecord import (
    Define,
    JsonRecord,
    Schema,
    filled,
    json_schema,
    nullable,
    optional,
    required,
    schema_differences,
)
from statbench.results.schema_check import compiled_verdict

# --- the results record as a type ------------------------------------------------------------
#
# One scored run as typed records, in the spirit of MTEB's ``TaskResult``. The file format
# (schema_version 1) stays byte-compatible: ``Results.from_json(obj).to_json()`` gives ``obj``
# back for every file ``statbench run`` writes. ``reranker``, ``pool`` and a plugin's
# ``distribution``/``version`` are nullable: always written, null when None, as the runner
# always did. ``from_json`` expects a dict the schema already accepted; it still refuses a key
# it does not know, so nothing in a file is ever silently dropped.

SCHEMA_VERSION = 1

Sha256 = Annotated[str, Schema(pattern="^[0-9a-f]{64}$")]
Count = Annotated[int, Schema(minimum=0)]
NonNegative = Annotated[float, Schema(minimum=0)]
#: measure label -> score (the schema's ``$defs/scores``)
Scores = Annotated[dict[str, float], Define("scores")]


@dataclass(frozen=True, kw_only=True)
class PluginRecord(JsonRecord):
    """The plugin (distribution) that registered a task or model."""

    schema_name = "plugin"

    name: str
    distribution: str | None = nullable()
    version: str | None = nullable()


@dataclass(frozen=True, kw_only=True)
class TaskRecord(JsonRecord):
    """The task and the exact data the run was scored on."""

    name: str
    language: str
    #: the protocol whose splits were run ('' for a hand-picked set of splits)
    protocol: str | None = optional()
    data_checksum: Sha256
    files: list[str]
    dropped: list[str] | None = optional("items the loader could not use, each with the reason")
    version: str | None = optional("the task's loader version (cache keys cover it)")
    corpus_checksum: Sha256 | None = optional("sha256 over the corpus as loaded: ids, titles, texts, fields")
    corpus_size: Count | None = optional("documents in the corpus as loaded (boards name their data by it)")
    plugin: PluginRecord | None = optional()


@dataclass(frozen=True, kw_only=True)
class ModelRecord(JsonRecord):
    """A first stage (a retriever, or a frozen pool) or a reranker, with its parameters."""

    schema_name = "model"

    name: str
    family: str
    description: str | None = optional()
    version: str | None = optional()
    params: dict[str, Any]
    trained: bool | None = optional("true if the model learned from the task's training queries")
    budget: str | None = optional("the parameters that make this a reduced-budget run (e.g. 'preset=cpu-small'), "
                                  "not the protocol's settings")
    defaults: dict[str, Any] | None = optional(
        "the model's declared default of each parameter in params, recorded at run time: a row's identity and label "
        "show the parameters that differ from them (absent in older results: every parameter is shown)")
    needs_gpu: bool | None = optional("true if the model declared it cannot run in reasonable time without a GPU")
    tolerance: NonNegative | None = optional(
        "a model that declared itself non-deterministic: the absolute tolerance per per-query figure between two runs; "
        "absent: deterministic (a re-run's run file is byte-identical)")
    plugin: PluginRecord


@dataclass(frozen=True, kw_only=True)
class RunFile(JsonRecord):
    path: str = required("relative to this results file")
    sha256: Sha256


@dataclass(frozen=True, kw_only=True)
class MeasureRecord(JsonRecord):
    label: str
    ir_measure: str


@dataclass(frozen=True, kw_only=True)
class SplitScores(JsonRecord):
    """Mean scores over one split's evaluated queries."""

    name: str
    n_queries: Count
    queries_without_results: Count | None = optional()
    scores: Scores
    query_ids: list[str] | None = optional()


@dataclass(frozen=True, kw_only=True)
class MeanStd(JsonRecord):
    """Mean and sample standard deviation of a measure over the splits."""

    mean: float
    std: NonNegative


@dataclass(frozen=True, kw_only=True)
class CacheInvalid(JsonRecord):
    """A cache entry found invalid (truncated, corrupted, foreign) and rebuilt."""

    entry: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class BreakdownGroup(JsonRecord):
    """How one breakdown group was formed (``statbench.scoring.breakdowns``): its values in
    display order, the evaluated queries in each, and the rule that gives a query its value(s)."""

    values: list[str] = required("the group's values in display order (buckets in their order)")
    n_queries: dict[str, Count] = required("value -> evaluated queries counted in it")
    rule: str = required("how a query gets its value(s), e.g. that a query counts in each law of its "
                         "relevant articles")


@dataclass(frozen=True, kw_only=True)
class RunScores(JsonRecord):
    """What scoring gives (``evaluation.score_splits``): per-query scores, their means per
    split, mean ± std over splits, pooled means, breakdowns. The scores part of
    :class:`Results` (which is a ``RunScores``) and of :class:`EvaluatedRun`."""

    measures: Annotated[list[MeasureRecord], Schema(minItems=1)]
    splits: Annotated[list[SplitScores], Schema(minItems=1)]
    aggregate: dict[str, MeanStd] = required("mean and sample standard deviation over splits, per measure")
    all_queries: Scores | None = optional("means over every evaluated query pooled, as ir_measures on the run "
                                          "file gives")
    per_query: dict[str, Scores]
    breakdown: dict[str, dict[str, Scores]] | None = optional(
        "group name (e.g. 'category') -> group value -> measure -> mean")
    breakdown_groups: dict[str, BreakdownGroup] | None = optional(
        "group name -> how its values were formed (order, queries per value, rule); absent in older results")
    tie_order: str | None = optional("the order every measure saw each ranking in (a foreign run with ties: score "
                                     "desc at 32-bit precision, then doc id desc)")

    @classmethod
    def part_of(cls, obj: Mapping) -> RunScores:
        """The scores part of a results dict or of ``statbench evaluate``'s JSON: their
        other top-level keys (provenance, ``run_file``) are left aside; what is read is read
        strictly. (``from_json`` refuses any key that is not a score field.)"""
        names = {f.name for f in fields(RunScores)}
        return RunScores.from_json({k: v for k, v in obj.items() if k in names})

    def scores_fields(self) -> dict:
        """The :class:`RunScores` fields of this record, by name (to build a subclass from)."""
        return {f.name: getattr(self, f.name) for f in fields(RunScores)}

    @property
    def labels(self) -> list[str]:
        """The measure labels, in the task's order."""
        return [m.label for m in self.measures]

    @property
    def n_queries(self) -> int:
        return sum(s.n_queries for s in self.splits)

    def query_scores(self, label: str) -> dict[str, float]:
        """query id -> score on measure ``label`` (queries without that score left out)."""
        per_query = self.per_query
        try:  # the usual record: every query has the score (taken in one C-level pass)
            return dict(zip(per_query, map(itemgetter(label), per_query.values())))
        except KeyError:
            return {qid: scores[label] for qid, scores in per_query.items() if label in scores}


@dataclass(frozen=True, kw_only=True)
class EvaluatedRun(RunScores):
    """``statbench evaluate``'s output: the scores of a run file made anywhere, the data
    they were scored on (``compare`` refuses other data) and the file."""

    data_checksum: Sha256
    run_file: RunFile


# --- efficiency and cost: measured, never estimated (absent = not measured in this process) ---


@dataclass(frozen=True, kw_only=True)
class QueryLatency(JsonRecord):
    """Per-query latency of the final stage, timed one batch of ``batch_size`` queries at a
    time (a query's latency = its batch's seconds / the queries in it)."""

    median_ms: NonNegative
    p95_ms: NonNegative
    batch_size: Annotated[int, Schema(minimum=1)] = required("queries per timed call")
    queries: Count = required("queries whose latency was measured")


@dataclass(frozen=True, kw_only=True)
class HardwareRecord(JsonRecord):
    """The machine the figures were measured on."""

    cpu_model: str | None = optional()
    cpu_cores: Annotated[int, Schema(minimum=1)] | None = optional("CPU cores this process may run on")
    gpu: str | None = nullable("the CUDA device torch used; null: the run used no GPU")


@dataclass(frozen=True, kw_only=True)
class ApiUsage(JsonRecord):
    """What a paid reranker sent in this process (answers from the response cache are not
    counted and cost nothing) and what it cost at the recorded price."""

    documents_sent: Count
    tokens_sent: Count | None = nullable("tokens the provider reported billing; null: it reports none")
    cost_usd: NonNegative | None = nullable("measured units x the recorded price; null: no price for the model")
    price: str | None = nullable("the price applied, as text with its unit, date and source")


@dataclass(frozen=True, kw_only=True)
class EfficiencyRecord(JsonRecord):
    """Efficiency and cost, measured in the process that wrote the results: a key is absent
    when it was not measured there (a split answered by the cache has no index or search
    time), never 0 for unknown."""

    index_seconds: NonNegative | None = optional("seconds spent indexing (and training) in this process")
    search_seconds: NonNegative | None = optional("seconds the final stage spent on the queries (search, "
                                                  "plus rerank for a reranked run)")
    query_latency: QueryLatency | None = optional()
    throughput_qps: NonNegative | None = optional("queries measured / search_seconds")
    peak_memory_mb: NonNegative | None = optional("the largest peak resident set of one process of the run "
                                                  "(itself or a finished worker: ru_maxrss), in MiB")
    index_bytes: Count | None = optional("size on disk of the model's cache folder for this configuration after "
                                         "indexing (per-split indexes: the largest)")
    hardware: HardwareRecord | None = optional()
    api: ApiUsage | None = optional("paid rerankers only")


@dataclass(frozen=True, kw_only=True)
class FusedRun(JsonRecord):
    """One run fused into these results (``statbench fuse``): where it came from and what it was."""

    schema_name = "fused_run"

    source: str = required("the input as given: a TREC run file or a statbench output folder")
    run_sha256: Sha256 = required("sha256 of the run file fused (decompressed)")
    command: str | None = nullable("the command that produced it (from its results.json); null for a bare run file")
    model: str | None = nullable("its model (and reranker) as its results name them; null for a bare run file")


@dataclass(frozen=True, kw_only=True)
class Results(RunScores):
    """One scored run of one model (optionally a first stage plus a reranker) on one task."""

    schema_version: Literal[1] = filled(SCHEMA_VERSION)
    statbench_version: str = filled(__version__)
    created: str = required("UTC ISO-8601 time the results were written")
    task: TaskRecord
    model: ModelRecord
    reranker: ModelRecord | None = nullable()
    pool: str | None = nullable("name of the frozen candidate pool reranked, if any")
    pool_sha256: Sha256 | None = optional("sha256 of that pool's file: two pools of one name built differently "
                                          "are two systems")
    command: str = required("the exact command that reproduces these results")
    run_file: RunFile
    timings: dict[str, NonNegative] = required("seconds per phase (load, index, train, search, rerank, evaluate, "
                                               "total)")
    cache: dict[str, Literal["hit", "miss"]] | None = optional("split -> whether its ranked run came from the cache")
    cache_invalid: list[CacheInvalid] | None = optional("cache entries found invalid (truncated, corrupted, "
                                                        "foreign) and rebuilt during this run")
    #: numbers a model reported (e.g. passages encoded per second)
    throughput: dict[str, NonNegative] | None = optional()
    environment: dict[str, str] | None = optional()
    extra: dict[str, Any] | None = optional()
    components: list[FusedRun] | None = optional("the runs fused into this one (statbench fuse), in fusion order")
    efficiency: EfficiencyRecord | None = optional("efficiency and cost measured in this process (absent keys: "
                                                   "not measured)")

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
              extra: Mapping | None = None, efficiency: EfficiencyRecord | None = None,
              components: list[FusedRun] | None = None) -> Results:
        """The one builder of results (the runner, the sample generator): the scores plus
        the provenance. ``created`` defaults to now (UTC, whole seconds); an empty
        ``cache_invalid`` or ``throughput`` is left out of the file."""
        return cls(
            **RunScores.scores_fields(scores),
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
            efficiency=efficiency,
            components=list(components) if components else None,
        )


def as_scores(obj) -> RunScores:
    """A :class:`RunScores` (a :class:`Results` or :class:`EvaluatedRun` is one) from a record
    or from a dict as ``statbench evaluate --json`` prints or a results file holds."""
    if isinstance(obj, RunScores):
        return obj
    return RunScores.part_of(obj)


def as_results(obj) -> Results:
    """A :class:`Results` from a record or a schema-valid results dict."""
    return obj if isinstance(obj, Results) else Results.from_json(obj)


# --- the schema: generated from the type ----------------------------------------------------------

#: where the committed copy of the generated schema lives, in the package
SCHEMA_RESOURCE = "schemas/results.schema.json"


@cache
def results_schema() -> dict:
    """The results schema, generated from :class:`Results` (what every file is validated against)."""
    return json_schema(
        Results,
        **{"$schema": "https://json-schema.org/draft/2020-12/schema",
           "$id": "https://statbench.invalid/schemas/results.schema.json",
           "title": "statbench results",
           "description": "One scored run of one model (optionally a first stage plus a reranker) on one task."})


def schema_text() -> str:
    """The generated schema as the committed file holds it."""
    return json.dumps(results_schema(), indent=2, ensure_ascii=False) + "\n"


def committed_schema() -> dict:
    """The committed copy of the schema (``harness/schemas/results.schema.json``)."""
    return json.loads(resources.files("statbench").joinpath(SCHEMA_RESOURCE).read_text("utf-8"))


def schema_mismatches(cls=Results, schema: dict | None = None) -> list[str]:
    """How ``schema`` (by default the committed copy) differs from the schema generated
    from ``cls``, in the type's words (empty when they agree): says what to regenerate
    (``python -m statbench.results``) when the type changed."""
    return schema_differences(cls, committed_schema() if schema is None else schema)


# --- the file: strict reading, validation, writing ----------------------------------------------------

#: Schema violations shown in one error line.
SHOWN_PROBLEMS = 5

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


#: the escapes of ``:`` (a decoded string may hold a colon its text does not show)
_COLON_ESCAPES = (b"\\u003a", b"\\u003A")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
#: 19 digits in a row: an integer the fast parser may not read as the standard one does
#: (orjson reads an integer beyond 64 bits as a float)
_LONG_DIGIT_RUN = b"0" * 19
_DIGIT_RUN = re.compile(rb"0+")
_UNSURE = object()


def _long_integer_digits(data: bytes) -> bool:
    """Whether ``data`` holds 19 digits in a row other than a fraction's (after a ``.``: a
    score such as 0.0025252525252525255 is read alike by both parsers)."""
    digits = data.translate(_DIGITS_AS_ZERO)
    start = digits.find(_LONG_DIGIT_RUN)
    while start != -1:
        if start == 0 or digits[start - 1] != 0x2E:  # not after "."
            return True
        start = digits.find(_LONG_DIGIT_RUN, _DIGIT_RUN.match(digits, start).end())
    return False


def _parse_fast(data: bytes):
    """The value of ``data`` when orjson's parse is certainly the one :func:`_parse_checked`
    would return, else ``_UNSURE`` (the careful parse then decides, with its exact message).

    orjson (C, ~6x faster than ``json`` with hooks) already refuses NaN/Infinity, numbers
    that overflow to infinity, unpaired surrogates, invalid UTF-8 and a BOM; what it does not
    refuse is settled here: a duplicate key (orjson keeps the last) drops at least one key,
    so the compact re-encoding holds fewer colons than the text (every colon of the text is
    a key's or inside a string; re-encoding keeps both, unless a string spells a colon as an
    escape: then unsure); an integer too large for 64 bits (read as a float) needs 19 digits
    in a row, not after a decimal point (then unsure). A cold leaderboard build reads 10,000 results files."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        return _UNSURE
    # no backslash at all (the usual file): no escape anywhere, no colon spelt as one
    if (b"\\" in data and any(escape in data for escape in _COLON_ESCAPES)) or _long_integer_digits(data):
        return _UNSURE
    try:
        obj = orjson.loads(data)
        encoded = orjson.dumps(obj)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _UNSURE
    return obj if encoded.count(b":") == data.count(b":") else _UNSURE


def parse_strict(text: str | bytes):
    """``json.loads`` that refuses what results must not hold: NaN/Infinity tokens, numbers
    that overflow to infinity, duplicate keys, unpaired surrogates (raises ``ValueError``;
    ``json.JSONDecodeError`` for text that is not JSON at all). ``bytes`` are UTF-8 text
    (``UnicodeDecodeError`` otherwise). Same verdict and value as the careful parse
    (:func:`_parse_checked`) on every input; a fast parse answers when it is sure."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    obj = _parse_fast(data)
    if obj is not _UNSURE:
        return obj
    return _parse_checked(text if isinstance(text, str) else text.decode("utf-8"))


def _parse_checked(text: str):
    """The careful parse: ``json.loads`` with a hook at every number, constant and object."""
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
def _results_verdict():
    """:func:`schema_verdict` against the results schema, the schema's walk worked out once."""
    return compiled_verdict(results_schema())


@functools.cache
def _validator():
    """The results schema's validator, compiled once per process."""
    import jsonschema

    return jsonschema.Draft202012Validator(results_schema())


#: the top-level fields holding one scores map (``$defs/scores``) per query / per group value
_SCORE_TABLES = {"per_query": 1, "breakdown": 2}


def _all_scores(maps: list) -> bool:
    """Whether every item is ``$defs/scores``: an object whose values are all numbers (not
    booleans), checked with set operations over the values rather than a validator node per
    score."""
    return set(map(type, maps)) <= {dict} and set(map(type, chain.from_iterable(map(dict.values, maps)))) <= {int, float}


def _without_scores(obj: dict) -> dict | None:
    """The record with its maps of scores emptied (per query, per breakdown group, pooled,
    per split), when every one of them is what the schema says; None otherwise (the
    validator then walks the whole record, for the exact messages)."""
    light = dict(obj)
    for name, depth in _SCORE_TABLES.items():
        if name not in obj:
            continue
        table = obj[name]
        if not isinstance(table, dict):
            return None
        rows = list(table.values())
        if depth == 2:
            if not set(map(type, rows)) <= {dict}:
                return None
            rows = list(chain.from_iterable(map(dict.values, rows)))
        if not _all_scores(rows):
            return None
        light[name] = {}
    if "all_queries" in obj:
        if not _all_scores([obj["all_queries"]]):
            return None
        light["all_queries"] = {}
    splits = obj.get("splits")
    if isinstance(splits, list) and all(isinstance(s, dict) and "scores" in s for s in splits):
        if not _all_scores([s["scores"] for s in splits]):
            return None
        light["splits"] = [{**s, "scores": {}} for s in splits]
    return light


def schema_errors(obj) -> list[str]:
    """Every schema violation, as 'path: message' strings (empty when valid).

    The record with its maps of scores emptied is checked by :func:`schema_verdict` (the
    keywords the schema uses, decided as jsonschema decides them, without importing it),
    and a plain loop checks those maps against their (simple) schema; only when either
    finds a problem (or meets what it does not know) does jsonschema's validator walk the
    whole record, for the exact messages. Same verdict as validating everything at once."""
    light = _without_scores(obj) if isinstance(obj, dict) else None
    if light is not None and _results_verdict()(light) is True:
        return []
    errors = sorted(_validator().iter_errors(obj), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def read_results(path, data: bytes | None = None) -> dict:
    """Read a results file strictly and check it against the schema; a ``DataFormatError``
    names the file (and line or field where known) otherwise. ``data``: the file's bytes
    when the caller already read them (a leaderboard worker hashes and parses one read)."""
    path = Path(path)
    try:
        raw = path.read_bytes() if data is None else data
    except OSError as exc:
        raise DataFormatError(path, f"cannot be read: {exc.strerror or exc}") from None
    obj = _parse_fast(raw)
    if obj is _UNSURE:
        obj = _read_checked(path, raw)
    errors = schema_errors(obj)
    if errors:
        raise DataFormatError(path, "does not match the results schema: " + "; ".join(errors[:SHOWN_PROBLEMS]))
    deep = _too_deep(obj)
    if deep:
        raise DataFormatError(path, f"{deep} is nested more than {MAX_FREE_DEPTH} levels deep "
                                    "(no record needs that; the readers would overflow)")
    return obj


#: how deep a value of a free-form field (parameters, their defaults, ``extra``) may nest: the
#: JSON parsers accept ~1,000 levels, but every reader after them (the record, identity,
#: labels) recurses too, and one such file must not stop a whole leaderboard build
MAX_FREE_DEPTH = 32


def _too_deep(obj: dict) -> str | None:
    """The first free-form field of a schema-valid results dict nested deeper than
    :data:`MAX_FREE_DEPTH` (its path), or None. The typed fields' depth is the schema's."""
    free = [("extra", obj.get("extra"))]
    for stage in ("model", "reranker"):
        record = obj.get(stage)
        if isinstance(record, dict):
            free += [(f"{stage}/{key}", record.get(key)) for key in ("params", "defaults")]
    for where, value in free:
        stack = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, dict | list):
                if depth >= MAX_FREE_DEPTH:
                    return where
                stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return None


def _read_checked(path: Path, raw: bytes):
    """The careful parse of a file's bytes, its refusals as a ``DataFormatError`` that points
    at the line or key."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    try:
        return _parse_checked(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
    except _Rejected as exc:
        line, key = _locate_constant(text) if exc.constant else (None, exc.field)
        raise DataFormatError(path, f"not valid JSON: {exc}", line, key) from None
    except RecursionError:
        raise DataFormatError(path, "not valid JSON: nested too deeply") from None



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
    deep = _too_deep(obj)
    if deep:
        raise ValueError(f"results' {deep} is nested more than {MAX_FREE_DEPTH} levels deep")
    text = indented_json(obj)
    if text is None:  # a value orjson may write otherwise: the standard form, as every JSON file
        write_json(path, obj)
        return
    with atomic_open(path, "wb") as handle:
        handle.write(text)
        handle.write(b"\n")


def load_results(path) -> dict:
    """Read a results file strictly (:func:`read_results`) and check it against the schema."""
    return read_results(path)
