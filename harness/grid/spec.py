"""An experiment file (YAML), read strictly into a typed :class:`GridSpec`.

The file is checked against ``grid.schema.json``; every error names the file, the key
(as a path such as ``models/2/params/k1``) and the line it is on. Duplicate keys, which
YAML parsers usually accept silently (the last one wins), are refused."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from statbench.contract.params import param_text
from statbench.contract.taskinfo import PublishedData
from statbench.errors import StatbenchError


class GridSpecError(StatbenchError):
    """An experiment file that cannot be run as written."""

    def __init__(self, path, message: str, line: int | None = None, key: str | None = None):
        where = str(path) + (f", line {line}" if line is not None else "") + (f", key {key!r}" if key else "")
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Resources:
    """What one cell needs: executors reserve it (local slots, Ray task options, Slurm)."""

    cpus: int = 1
    gpus: int = 0
    memory_gb: float | None = None
    time_min: int = 60


@dataclass(frozen=True)
class TaskEntry:
    name: str
    data_dir: Path | None = None
    protocol: str | None = None
    splits: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tune:
    """Search the parameter grid on ``on`` (a protocol or split), keep the best cell by
    ``measure``, and evaluate only it on the task's protocol."""

    on: str
    measure: str
    lower_is_better: bool = False


@dataclass(frozen=True)
class ModelEntry:
    label: str
    model: str | None = None
    pool: str | None = None
    #: name -> one value, or a list of values (an axis of the grid)
    params: dict[str, Any] = field(default_factory=dict)
    reranker: str | None = None
    reranker_params: dict[str, Any] = field(default_factory=dict)
    rerank_depth: int | None = None
    tasks: tuple[str, ...] = ()
    resources: Resources = Resources()
    tune: Tune | None = None


#: kinds of expected rows: a paper's figure, or statbench's own earlier figure (a regression check)
PAPER, REGRESSION = "paper", "regression"


@dataclass(frozen=True)
class Expected:
    """One row of a paper table: the figures a cell must reproduce, within ``tolerance``."""

    row: str
    task: str
    label: str
    scores: dict[str, float]
    tolerance: float
    source: str = ""
    note: str = ""
    kind: str = PAPER
    #: the data the figures were measured on (a ``PublishedData``; None: not declared here)
    data: object = None


@dataclass(frozen=True)
class GridSpec:
    path: Path
    name: str
    tasks: tuple[TaskEntry, ...]
    models: tuple[ModelEntry, ...]
    output: Path
    leaderboard: Path | None = None
    description: str = ""
    source: str = ""
    expected: tuple[Expected, ...] = ()
    slurm_partition: str | None = None
    slurm_array_parallelism: int | None = None
    slurm_additional: dict[str, Any] = field(default_factory=dict)
    #: key path (tuple) -> line in the file, for errors found after reading (cells, protocols)
    lines: dict = field(default_factory=dict, compare=False, repr=False)

    def error(self, message: str, *keys) -> GridSpecError:
        """An error about the value at ``keys`` (e.g. ``"models", 2, "params", "k1"``), with its line."""
        return GridSpecError(self.path, message, _line_of(self.lines, list(keys)), "/".join(map(str, keys)) or None)


@cache
def grid_schema() -> dict:
    return json.loads(resources.files("statbench").joinpath("schemas/grid.schema.json").read_text("utf-8"))


@cache
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(grid_schema())


def read_grid(path) -> GridSpec:
    """The experiment in ``path``, validated (one :class:`GridSpec` or a :class:`GridSpecError`)."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise GridSpecError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    except OSError as exc:
        raise GridSpecError(path, f"cannot be read: {exc.strerror or exc}") from None
    obj, lines = parse_yaml(path, text)
    errors = sorted(_validator().iter_errors(obj), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        error = _most_specific(errors[0])
        keys = list(error.absolute_path)
        if error.validator == "additionalProperties":  # point at the unknown key itself
            known = error.schema.get("properties", {})
            keys.append(next(k for k in error.instance if k not in known))
        raise GridSpecError(path, _message(error), _line_of(lines, keys), "/".join(map(str, keys)) or None)
    return _typed(path, obj, lines)


def shortcut_spec(tasks, models, data_dir, protocol, output) -> GridSpec:
    """The experiment of ``statbench grid --task A --model X ...`` (no file): each task with
    the models given, typed as a file's would be."""
    if not tasks or not models:
        raise StatbenchError("give an experiment file, or at least one --task and one --model")
    obj = {"tasks": [{"name": t, **({"data_dir": str(data_dir)} if data_dir and len(tasks) == 1 else {}),
                      **({"protocol": protocol} if protocol else {})} for t in tasks],
           "models": [{"model": m} for m in models]}
    if data_dir and len(tasks) > 1:
        raise StatbenchError("--data-dir names one task's folder: give it with a single --task, or use a file")
    if output:
        obj["output"] = str(output)
    return _typed(Path("(command line)"), obj, {})


def parse_yaml(path: Path, text: str) -> tuple[Any, dict[tuple, int]]:
    """(the document, key path -> 1-based line) of a YAML text; duplicate keys refused."""
    import yaml

    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise GridSpecError(path, "is empty")
        lines: dict[tuple, int] = {}
        _walk(path, node, (), lines, set(), [0])
        return loader.construct_document(node), lines
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise GridSpecError(path, f"not valid YAML: {problem}", mark.line + 1 if mark else None) from None
    finally:
        loader.dispose()


@cache
def _loader_class():
    """YAML's safe loader with YAML 1.2 booleans: only true/false are booleans, so
    ``tune: {on: dev}`` keeps its key ``on`` and a parameter value ``no`` stays a string."""
    import re

    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 list("tTfF"))
    return Loader


#: nodes an experiment file may expand to (aliases included): far above any real grid,
#: far below what a "billion laughs" file of nested aliases expands to
MAX_NODES = 100_000


def _walk(path: Path, node, keys: tuple, lines: dict, open_nodes: set, count: list) -> None:
    import yaml

    count[0] += 1
    if count[0] > MAX_NODES:
        raise GridSpecError(path, f"expands to more than {MAX_NODES:,} values (aliases repeated inside aliases?)",
                            node.start_mark.line + 1, "/".join(map(str, keys)) or None)
    if id(node) in open_nodes:
        raise GridSpecError(path, "a YAML alias refers to a node that contains it (a recursive alias)",
                            node.start_mark.line + 1, "/".join(map(str, keys)) or None)
    lines.setdefault(keys, node.start_mark.line + 1)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        open_nodes.add(id(node))
        try:
            _walk_children(path, node, keys, lines, open_nodes, count)
        finally:
            open_nodes.discard(id(node))


def _walk_children(path: Path, node, keys: tuple, lines: dict, open_nodes: set, count: list) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                raise GridSpecError(path, f"key {key!r} appears twice (first on line {seen[key]})",
                                    key_node.start_mark.line + 1, "/".join(map(str, (*keys, key))))
            seen[key] = key_node.start_mark.line + 1
            _walk(path, value_node, (*keys, key), lines, open_nodes, count)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(path, item, (*keys, i), lines, open_nodes, count)


def _most_specific(error):
    """For a oneOf/anyOf failure, the deepest reason (e.g. the wrong type of a param)."""
    while error.context:
        # a branch's non-type error says more ("should be non-empty") than "is not of type"
        candidates = [e for e in error.context if e.validator != "type"] or error.context
        error = max(candidates, key=lambda e: len(e.absolute_path))
    return error


def _message(error) -> str:
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        unknown = [k for k in error.instance if k not in known]
        return f"unknown key {unknown[0]!r} (known keys: {', '.join(known)})"
    if error.validator == "oneOf" and error.schema.get("oneOf") == [{"required": ["model"]}, {"required": ["pool"]}]:
        return "give exactly one of 'model' or 'pool'"
    if error.validator == "not":
        return "give 'protocol' or 'splits', not both"
    return error.message


def _line_of(lines: dict, keys: list) -> int | None:
    keys = tuple(keys)
    while keys not in lines and keys:
        keys = keys[:-1]
    return lines.get(keys)


def _resources(obj: dict | None, base: Resources = Resources()) -> Resources:
    obj = obj or {}
    return Resources(cpus=obj.get("cpus", base.cpus), gpus=obj.get("gpus", base.gpus),
                     memory_gb=obj.get("memory_gb", base.memory_gb), time_min=obj.get("time_min", base.time_min))


def default_label(model: str | None, pool: str | None, params: dict, reranker: str | None) -> str:
    """``bm25``, ``bm25-lucene`` (fixed parameter values joined), ``pool-bm25+monot5``."""
    label = model if model else f"pool-{pool}"
    fixed = [param_text(v) for v in params.values() if not isinstance(v, list)]
    if fixed:
        label += "-" + "-".join(fixed)
    if reranker:
        label += f"+{reranker}"
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in label)


def _typed(path: Path, obj: dict, lines: dict) -> GridSpec:
    base = _resources(obj.get("resources"))
    tasks = tuple(TaskEntry(name=t["name"], data_dir=Path(t["data_dir"]) if "data_dir" in t else None,
                            protocol=t.get("protocol"), splits=tuple(t.get("splits", ())))
                  for t in obj["tasks"])
    task_names = [t.name for t in tasks]
    for i, name in enumerate(task_names):
        if task_names.index(name) != i:
            raise GridSpecError(path, f"task {name!r} is listed twice", _line_of(lines, ["tasks", i]), f"tasks/{i}")
    models = []
    for i, m in enumerate(obj["models"]):
        params, rparams = dict(m.get("params", {})), dict(m.get("reranker_params", {}))
        tune = m.get("tune")
        label = m.get("label") or default_label(m.get("model"), m.get("pool"), params, m.get("reranker"))
        for name in m.get("tasks", ()):
            if name not in task_names:
                raise GridSpecError(path, f"task {name!r} is not one of the file's tasks ({', '.join(task_names)})",
                                    _line_of(lines, ["models", i, "tasks"]), f"models/{i}/tasks")
        if m.get("rerank_depth") is not None and not m.get("reranker"):
            # statbench run refuses --rerank-depth without --reranker; the grid would drop it
            raise GridSpecError(path, "rerank_depth without a reranker (it sets how many candidates the reranker "
                                "sees)", _line_of(lines, ["models", i, "rerank_depth"]), f"models/{i}/rerank_depth")
        if tune is not None and not any(isinstance(v, list) for v in [*params.values(), *rparams.values()]):
            raise GridSpecError(path, "tune needs a parameter grid to search (a list of values in params)",
                                _line_of(lines, ["models", i, "tune"]), f"models/{i}/tune")
        models.append(ModelEntry(
            label=label, model=m.get("model"), pool=m.get("pool"), params=params, reranker=m.get("reranker"),
            reranker_params=rparams, rerank_depth=m.get("rerank_depth"), tasks=tuple(m.get("tasks", ())),
            resources=_resources(m.get("resources"), base),
            tune=Tune(on=tune["on"], measure=tune["measure"], lower_is_better=tune.get("lower_is_better", False))
            if tune else None))
    for i, model in enumerate(models):
        # labels that differ only in case share a folder on case-insensitive file systems (macOS, Windows)
        clash = next((j for j in range(i) if models[j].label.lower() == model.label.lower()
                      and set(models[j].tasks or task_names) & set(model.tasks or task_names)), None)
        if clash is not None:
            raise GridSpecError(path, f"label {model.label!r} is also the label of models/{clash}"
                                + (f" ({models[clash].label!r}, in another case)" if models[clash].label != model.label
                                   else "") + "; give each a "
                                "distinct 'label'", _line_of(lines, ["models", i]), f"models/{i}")
    labels = {(t, m.label) for m in models for t in (m.tasks or task_names)}
    _refuse_non_finite(path, obj, lines)
    expected = []
    for i, e in enumerate(obj.get("expected", ())):
        if (e["task"], e["label"]) not in labels:
            raise GridSpecError(path, f"no model labelled {e['label']!r} runs on task {e['task']!r}",
                                _line_of(lines, ["expected", i]), f"expected/{i}")
        expected.append(Expected(row=e["row"], task=e["task"], label=e["label"], scores=dict(e["scores"]),
                                 tolerance=float(e["tolerance"]), source=e.get("source", ""), note=e.get("note", ""),
                                 kind=e.get("kind", PAPER), data=_paper_data(e.get("data"), e.get("note", ""))))
    slurm = obj.get("slurm", {})
    return GridSpec(
        path=path, name=obj.get("name") or path.stem, tasks=tasks, models=tuple(models),
        output=Path(obj.get("output") or Path("statbench-output") / "grid" / (obj.get("name") or path.stem)),
        leaderboard=Path(obj["leaderboard"]) if obj.get("leaderboard") else None,
        description=obj.get("description", ""), source=obj.get("source", ""), expected=tuple(expected),
        slurm_partition=slurm.get("partition"), slurm_array_parallelism=slurm.get("array_parallelism"),
        slurm_additional=dict(slurm.get("additional_parameters", {})), lines=dict(lines),
    )


def _paper_data(spec, note: str):
    """A row's ``data:`` as a ``PublishedData``: a mapping (sizes, checksum, description),
    or ``other`` (measured on data other than the task's, not described further)."""
    if spec is None:
        return None
    if spec == "other":
        return PublishedData(description=note or "other data")
    return PublishedData(corpus_size=spec.get("corpus_size"), queries=spec.get("queries"),
                         checksum=spec.get("checksum", ""), version=spec.get("version", ""),
                         description=spec.get("description", "the paper's data"))


def _refuse_non_finite(path: Path, obj, lines: dict, keys: tuple = ()) -> None:
    """NaN and infinities (YAML's .nan, .inf) anywhere: no figure, tolerance or parameter is one."""
    if isinstance(obj, float) and not math.isfinite(obj):
        raise GridSpecError(path, f"{obj} is not a finite number", _line_of(lines, list(keys)),
                            "/".join(map(str, keys)) or None)
    if isinstance(obj, dict):
        for key, value in obj.items():
            _refuse_non_finite(path, value, lines, (*keys, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            _refuse_non_finite(path, value, lines, (*keys, i))
