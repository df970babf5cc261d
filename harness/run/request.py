"""A run request: what ``statbench run`` asks for (a task, a model and its typed
parameters, a reranker, a pool, splits or a protocol), the folder it writes by default,
its run tag, and the command line that repeats it.

A request and its command line are one thing written two ways: :func:`request_to_argv`
writes a request as ``statbench run``'s arguments (parameter values by the one encoder,
:func:`statbench.contract.params.param_text`), and ``statbench run`` reads them back
(``statbench.commands.cli.request_from_argv``) into an equal request. Grid cells hold a
request and run the arguments written from it."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from statbench.contract.params import param_items, parse_params
from statbench.errors import StatbenchError
from statbench.loading.splits import canonical_selection
from statbench.registry.plugins import get_registry
from statbench.run.outputs import config_folder_name

DEFAULT_RERANK_DEPTH = 100


@dataclass
class RunRequest:
    task: str
    model: str | None = None
    #: typed parameter values (``--param KEY=VALUE`` strings are parsed before a request is
    #: made: :func:`request_from_cli`, :func:`parse_model_params`)
    params: dict[str, Any] = field(default_factory=dict)
    reranker: str | None = None
    reranker_params: dict[str, Any] = field(default_factory=dict)
    pool: str | None = None
    splits: list[str] | None = None
    #: a protocol of the task (its default when neither this nor ``splits`` is given)
    protocol: str | None = None
    data_dir: Path | None = None
    output: Path | None = None
    command: str = ""
    rerank_depth: int = DEFAULT_RERANK_DEPTH
    #: keep (score, write) a run whose model ranks nothing for any test query (every figure
    #: 0) instead of stopping: ``--allow-empty``
    allow_empty: bool = False



def parse_model_params(kind: str, name: str | None, items: Iterable[str]) -> dict[str, Any]:
    """``--param KEY=VALUE`` strings for the registered model ``name`` of ``kind``
    (``"retrievers"`` or ``"rerankers"``) -> typed, checked values, before any work. Strings
    with no model to take them are refused (they would be ignored)."""
    items = list(items)
    if name is None:
        if items:
            flag, owner = ("--param", "--model") if kind == "retrievers" else ("--reranker-param", "--reranker")
            raise StatbenchError(f"{flag} {items[0]!r}: no {owner} to take it")
        return {}
    entry = get_registry().get(kind, name)
    return parse_params(items, entry.cls.default_params, entry.name)



def request_from_cli(*, task: str, model: str | None = None, params: Iterable[str] = (), reranker: str | None = None,
                     reranker_params: Iterable[str] = (), pool: str | None = None, splits: Iterable[str] = (),
                     protocol: str | None = None, data_dir: Path | None = None, output: Path | None = None,
                     command: str = "", rerank_depth: int = DEFAULT_RERANK_DEPTH,
                     allow_empty: bool = False) -> RunRequest:
    """The request of ``statbench run``: its ``--param``/``--reranker-param`` strings parsed
    into typed values (the core only ever sees those). Names are looked up first, in the
    order the runner checks them: the task, the model, the reranker."""
    registry = get_registry()
    registry.get("tasks", task)
    for kind, name in (("retrievers", model), ("rerankers", reranker)):
        if name is not None:
            registry.get(kind, name)
    return RunRequest(
        task=task, model=model, params=parse_model_params("retrievers", model, params),
        reranker=reranker, reranker_params=parse_model_params("rerankers", reranker, reranker_params),
        pool=pool, splits=list(splits) or None, protocol=protocol, data_dir=data_dir, output=output,
        command=command, rerank_depth=rerank_depth, allow_empty=allow_empty,
    )



def default_output_dir(request: RunRequest) -> Path:
    """``statbench-output/TASK/CONFIG``: a folder per configuration, so that a run never
    replaces another configuration's outputs (only ``--output`` names a folder explicitly).

    CONFIG is :func:`~statbench.run.outputs.config_folder_name` of ``MODEL[+RERANKER]`` (or
    ``pool-NAME[+RERANKER]``), ``@PROTOCOL`` (or ``@SPLIT,...``) when the run is not the
    task's default protocol, and every parameter that differs from its default
    (``k1=0.9``; reranker ones as ``reranker.KEY=VALUE``; ``rerank_depth=N``), as grid
    cells name theirs: ``stard/bm25`` for the defaults, ``stard/bm25,k1=0.9``,
    ``stard/bm25@official``. A parameter given at its default value, and ``--split dev``
    for the protocol whose split is ``dev``, name the same folder as leaving them out."""
    registry = get_registry()
    task_entry = registry.get("tasks", request.task)
    label = request.model or f"pool-{request.pool}"
    if request.reranker:
        label += f"+{request.reranker}"
    info = task_entry.cls.task_info()
    protocol, splits = canonical_selection(info, request.protocol, request.splits)
    where = protocol or (",".join(sorted(splits)) if splits else None)  # the same splits in any order: one folder
    settings = _non_default("retrievers", request.model, request.params)
    if request.reranker:
        settings.update({f"reranker.{k}": v for k, v in
                         _non_default("rerankers", request.reranker, request.reranker_params).items()})
        if request.rerank_depth != DEFAULT_RERANK_DEPTH:
            settings["rerank_depth"] = request.rerank_depth
    # the label and WHERE alone can read alike for two configurations: a model named 'a+b'
    # and model 'a' reranked by 'b'; a model named 'pool-x' and --pool x; --split X and a
    # protocol X of other splits; a retriever parameter named 'rerank_depth': then the
    # parts themselves are hashed into the name (config_folder_name)
    names = [request.model or "", request.reranker or "", request.pool or ""]
    split_names = {s for p in info.protocols for s in p.splits} | set(info.sizes)
    ambiguous = (any("+" in n for n in names) or names[0].startswith("pool-")
                 or (protocol is not None and protocol in split_names
                     and tuple(getattr(info.protocol(protocol), "splits", ())) != (protocol,))
                 or (not protocol and splits and where in {p.name for p in info.protocols})
                 or any("," in s for s in splits)
                 or (request.reranker and any(k == "rerank_depth" or k.startswith("reranker.")
                                              for k in _non_default("retrievers", request.model, request.params))))
    identity = ({"model": request.model, "pool": request.pool, "reranker": request.reranker,
                 "protocol": protocol, "splits": sorted(splits)} if ambiguous else None)
    # the task's registered name (beir:PATH gives beir-NAME, never the folder's path), with
    # what the task declares tells it apart from another resolved to the same name
    task_folder = config_folder_name(task_entry.name, identity=task_entry.cls.folder_identity)
    return Path("statbench-output") / task_folder / config_folder_name(label, where, settings, identity=identity)



def _non_default(kind: str, name: str | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """The typed ``params`` whose value differs from the model's default, sorted by name."""
    if name is None or not isinstance(params, Mapping):
        return {}
    defaults = get_registry().get(kind, name).cls.defaults()
    return {key: params[key] for key in sorted(params) if key not in defaults or params[key] != defaults[key]}



def _typed_params(request: RunRequest) -> RunRequest:
    """``request`` with ``KEY=VALUE`` string lists (as callers made them before
    :func:`request_from_cli`) parsed into typed values; typed dicts pass unchanged."""
    if isinstance(request.params, Mapping) and isinstance(request.reranker_params, Mapping):
        return request
    typed = request_from_cli(
        task=request.task, model=request.model, reranker=request.reranker,
        params=() if isinstance(request.params, Mapping) else request.params,
        reranker_params=() if isinstance(request.reranker_params, Mapping) else request.reranker_params,
    )
    return dataclasses.replace(
        request,
        params=request.params if isinstance(request.params, Mapping) else typed.params,
        reranker_params=request.reranker_params if isinstance(request.reranker_params, Mapping)
        else typed.reranker_params,
    )



def output_tag(request: RunRequest) -> str:
    """The run file's tag: the first stage, and the reranker if any (they key every split's
    cache entry, whose lines carry this tag)."""
    first = request.model or f"pool-{request.pool}"
    return f"statbench-{first}" + (f"+{request.reranker}" if request.reranker else "")



def request_to_argv(request: RunRequest) -> list[str]:
    """``statbench run``'s arguments for ``request``, from ``run`` on (the program name
    left out): ``--param KEY=VALUE`` in the request's order, values as
    :func:`~statbench.contract.params.param_text` spells them, options at their defaults
    left out. Read back by ``statbench run`` they give an equal request; a command line in
    this form is given back unchanged."""
    args = ["run", "--task", request.task]
    if request.model:
        args += ["--model", request.model]
    args += [a for p in _param_items(request.params) for a in ("--param", p)]
    if request.pool:
        args += ["--pool", request.pool]
    if request.reranker:
        args += ["--reranker", request.reranker]
        args += [a for p in _param_items(request.reranker_params) for a in ("--reranker-param", p)]
        if request.rerank_depth != DEFAULT_RERANK_DEPTH:
            args += ["--rerank-depth", str(request.rerank_depth)]
    args += [a for s in request.splits or () for a in ("--split", s)]
    if request.protocol:
        args += ["--protocol", request.protocol]
    if request.data_dir is not None:
        args += ["--data-dir", str(request.data_dir)]
    if request.output is not None:
        args += ["--output", str(request.output)]
    if request.allow_empty:
        args += ["--allow-empty"]
    return args


def equivalent_command(request: RunRequest) -> str:
    """The ``statbench run`` command line that repeats ``request`` (for runs started from
    Python): :func:`request_to_argv` as one shell line."""
    return shlex.join(["statbench", *request_to_argv(request)])


def _param_items(params) -> list[str]:
    """Typed values as ``KEY=VALUE``; a list of such strings (a request made before
    :func:`request_from_cli` parsed them) as given."""
    return param_items(params) if isinstance(params, Mapping) else list(params)
