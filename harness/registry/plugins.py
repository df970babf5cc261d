"""Plugin discovery and the registry of tasks, retrievers, rerankers, measures and benchmarks.

Plugins are modules named by entry points in the ``statbench`` group; the built-in models
and tasks arrive the same way. Loading is defensive: anything a plugin raises while it is
imported or registers (``SystemExit`` included), or a class that breaks the contract
(:mod:`statbench.registry.checks`), marks that plugin failed with the reason; none of what it
registered is kept, and the rest keeps working. What a plugin prints while imported is
captured and logged, never mixed into a command's output.

Names registered twice are never resolved silently. Every provider is listed (``statbench
plugins`` and ``statbench list`` show the clash) and the plain name goes to **the built-in
(distribution ``statbench``) if it is one of them, else to the provider loaded first**
(entry points load in order of distribution name). ``DIST:NAME`` (e.g.
``statbench-plugin-x:bm25``) always selects exactly one provider.

A task name ``PREFIX:ARG`` whose prefix a plugin registered as a task resolver
(``register_task_resolvers``; the built-in ``beir`` makes ``beir:PATH`` a folder in BEIR's
layout, :mod:`statbench.loading.beir`) is the task class the resolver builds for ARG,
checked like any registered task; such a prefix wins over a distribution of that name.

A command that names its tasks and models (``statbench run``) may load only the built-ins it
names, with every other plugin (:func:`narrow_registry`); any lookup that registry cannot
answer exactly as the registry of every plugin would loads every plugin first.

``STATBENCH_LOAD_PLUGINS`` is the kill switch: when set, only the distributions it lists
(comma-separated) are loaded; set to the empty string, no plugin loads at all. Use
``STATBENCH_LOAD_PLUGINS=statbench`` to keep only the built-ins.

Tests register plugins in-process with ``pm.register(obj, name=...)`` and then
``reset_registry()``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import logging
import os
import re
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points

import pluggy

from statbench.contract.benchmark import Benchmark, BenchmarkError
from statbench.contract.model import Reranker, Retriever
from statbench.contract.task import Task
from statbench.errors import StatbenchError, UnknownNameError, one_line
from statbench.registry import hookspecs
from statbench.registry.benchmarks import check_benchmark_tasks
from statbench.registry.class_checks import (
    PluginError,
    check_measure_class,
    check_model_class,
    check_task_declaration,
)
from statbench.registry.measure_names import check_measure_names

ENTRY_POINT_GROUP = "statbench"
KILL_SWITCH = "STATBENCH_LOAD_PLUGINS"
KINDS = ("tasks", "retrievers", "rerankers", "measures", "benchmarks")
#: The distribution whose registrations win a name clash (see the module docstring).
BUILTIN_DISTRIBUTION = "statbench"
#: What ``PluginInfo.registered`` lists a plugin's task resolvers (``PREFIX:ARG``) under.
RESOLVERS = "task_resolvers"

pm = pluggy.PluginManager("statbench")
pm.add_hookspecs(hookspecs)
_log = logging.getLogger("statbench")


@dataclass
class PluginInfo:
    """One plugin as ``statbench plugins`` shows it."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    error: str | None = None
    registered: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})

    @property
    def qualifier(self) -> str:
        """What ``DIST:NAME`` names this plugin by: its distribution, else its plugin name."""
        return _normalise(self.distribution or self.name)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "error": self.error,
            "registered": {k: sorted(v) for k, v in self.registered.items() if v},
        }


@dataclass
class Registered:
    """A registered task or model class (a task resolver's function, a :class:`Benchmark`
    declaration) and the plugin it came from."""

    name: str
    cls: type
    plugin: PluginInfo

    @property
    def qualified(self) -> str:
        return f"{self.plugin.qualifier}:{self.name}"


@dataclass
class Registry:
    plugins: dict[str, PluginInfo] = field(default_factory=dict)
    tasks: dict[str, Registered] = field(default_factory=dict)
    retrievers: dict[str, Registered] = field(default_factory=dict)
    rerankers: dict[str, Registered] = field(default_factory=dict)
    #: custom measures (statbench.scoring.measures), used exactly like ir-measures names
    measures: dict[str, Registered] = field(default_factory=dict)
    #: (kind, name) -> every provider of a name registered more than once, the chosen first.
    clashes: dict[tuple[str, str], list[Registered]] = field(default_factory=dict)
    #: clashing names already warned about
    warned: set[tuple[str, str]] = field(default_factory=set)
    #: task name prefix -> its resolver: ``PREFIX:ARG`` names the task class it builds for ARG
    task_resolvers: dict[str, Registered] = field(default_factory=dict)
    #: declared benchmarks by id (``statutes-v1``); an entry's ``cls`` is the :class:`Benchmark` itself
    benchmarks: dict[str, Registered] = field(default_factory=dict)

    def get(self, kind: str, name: str) -> Registered:
        """The entry for a plain name (clashes resolved by the documented rule, with a
        warning) or a qualified ``DIST:NAME`` (exactly that provider). A task named
        ``PREFIX:ARG`` with a registered resolver prefix (``beir:PATH``) is the class that
        resolver builds; for tasks a resolver prefix wins over a distribution of that name."""
        table = getattr(self, kind)
        prefix, colon, arg = name.partition(":")
        if kind == "tasks" and colon and prefix in self.task_resolvers:
            return self.resolve_task(prefix, arg)
        if ":" in name:
            dist, _, plain = name.rpartition(":")
            for entry in self.providers(kind, plain):
                if entry.plugin.qualifier == _normalise(dist):
                    return entry
            raise UnknownNameError(kind.rstrip("s"), name, self.names(kind, qualified=True))
        if name not in table:
            raise UnknownNameError(kind.rstrip("s"), name, table)
        clash = self.clashes.get((kind, name))
        if clash and (kind, name) not in self.warned:  # said once per command, however often it is looked up
            self.warned.add((kind, name))
            others = ", ".join(e.qualified for e in clash[1:])
            _log.warning("%s %r is registered by several plugins; using %s (%s); the others: %s", kind.rstrip("s"),
                         name, clash[0].qualified, self.rule(clash), others)
        return table[name]

    def resolve_task(self, prefix: str, arg: str) -> Registered:
        """The task the resolver of ``prefix`` builds for ``arg``, checked as a registered
        task is; anything the resolver raises other than a :class:`StatbenchError` is one
        line naming it."""
        resolver = self.task_resolvers[prefix]
        cls = call_plugin(resolver, f"resolving the task {prefix}:{arg}", lambda: resolver.cls(arg))
        try:
            check_task_declaration(cls)
            declared = cls.task_info()
            check_measure_names(declared.name, declared.measures, self)
        except PluginError as exc:
            raise PluginError(f"task resolver {prefix!r} ({resolver.qualified}) built a task that breaks "
                              f"the contract: {exc}") from None
        plugin = dataclasses.replace(resolver.plugin, registered={**{k: [] for k in KINDS}, "tasks": [cls.name]})
        return Registered(name=cls.name, cls=cls, plugin=plugin)

    def providers(self, kind: str, name: str) -> list[Registered]:
        if (kind, name) in self.clashes:
            return list(self.clashes[(kind, name)])
        entry = getattr(self, kind).get(name)
        return [entry] if entry else []

    def names(self, kind: str, qualified: bool = False) -> list[str]:
        table = getattr(self, kind)
        if not qualified:
            return sorted(table)
        return sorted({e.qualified for n in table for e in self.providers(kind, n)} | set(table))

    @staticmethod
    def rule(clash: list[Registered]) -> str:
        if clash[0].plugin.distribution and _normalise(clash[0].plugin.distribution) == BUILTIN_DISTRIBUTION:
            return "the built-in wins"
        return "first loaded wins"

    @property
    def errors(self) -> list[PluginInfo]:
        return [p for p in self.plugins.values() if p.error]


def _allowed_distributions() -> set[str] | None:
    value = os.environ.get(KILL_SWITCH)
    if value is None:
        return None
    return {_normalise(part) for part in value.split(",") if part.strip()}


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _short_error(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({frame[0].filename}:{frame[0].lineno})" if frame else ""
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}) raised by the plugin{where}"
    return f"{one_line(exc)}{where}"


@contextlib.contextmanager
def _guarded(info: PluginInfo, action: str):
    """Run plugin code: anything it raises (SystemExit included, KeyboardInterrupt aside)
    marks the plugin failed; what it prints goes to the log, not to the command's output."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a plugin must never take the CLI down
        info.error = _short_error(exc)
    finally:
        printed = (out.getvalue() + err.getvalue()).strip()
        if printed:
            _log.info("plugin %s printed while %s: %s", info.name, action, printed[:500])


#: every allowed entry point's PluginInfo, in load order, once all of them are imported
_entry_point_infos: dict[str, PluginInfo] | None = None
#: the allowed entry points in load order: (entry point, distribution, version)
_found: list[tuple] | None = None
#: key -> PluginInfo of each entry point imported so far (all of them, or those a narrowed
#: registry needed: :func:`narrow_registry`)
_loaded: dict[str, PluginInfo] = {}


def _allowed_entry_points() -> list[tuple]:
    """The entry points of the group the kill switch allows, in load order (read once)."""
    global _found
    if _found is None:
        allowed = _allowed_distributions()
        read: dict[int, tuple[str, str]] = {}
        found = [(ep, *_name_and_version(ep.dist, read)) for ep in entry_points(group=ENTRY_POINT_GROUP)]
        _found = [item for item in sorted(found, key=_load_order)
                  if allowed is None or _normalise(item[1] or "") in allowed]
    return _found


def _key(found: tuple) -> str:
    ep, dist, _ = found
    return f"{dist}:{ep.name}"


def _load(found: tuple) -> PluginInfo:
    """Import one entry point's module and register it (once); a failure is recorded on its info."""
    key = _key(found)
    info = _loaded.get(key)
    if info is None:
        ep, dist, version = found
        info = _loaded[key] = PluginInfo(name=ep.name, module=ep.value, distribution=dist, version=version)
        if not pm.has_plugin(key):
            with _guarded(info, "imported"):
                module = importlib.import_module(ep.value)
                pm.register(module, name=key)
    return info


def load_entry_points() -> dict[str, PluginInfo]:
    """Import every allowed entry-point plugin once; failures are recorded, not raised."""
    global _entry_point_infos, _registry
    if _entry_point_infos is None:
        _entry_point_infos = {_key(found): _load(found) for found in _allowed_entry_points()}
        if isinstance(_registry, _Narrowed):  # every plugin is loaded now: the whole registry answers
            _registry = None
    return _entry_point_infos


def _name_and_version(dist, read: dict[int, tuple[str, str]]) -> tuple[str | None, str | None]:
    """A distribution's name and version, its metadata parsed once for all its entry points
    (``dist.name`` and ``dist.version`` each parse the whole METADATA file again)."""
    if dist is None:
        return None, None
    if id(dist) not in read:
        metadata = dist.metadata
        read[id(dist)] = (metadata["Name"], metadata["Version"])
    return read[id(dist)]


def _load_order(found: tuple) -> tuple:
    """The built-ins first, then other distributions by name: the order clashes are settled by."""
    ep, name, _ = found
    dist = _normalise(name) if name else ""
    return (dist != BUILTIN_DISTRIBUTION, dist, ep.name)


_registry: Registry | None = None


def get_registry() -> Registry:
    """Load plugins (once) and collect what they register."""
    global _registry
    if _registry is None:
        _registry = _build_registry()
    return _registry


#: The built-in entry point that registers the built-in custom measures (the only built-in
#: that registers measures: a test checks it), loaded by every narrowed registry.
BUILTIN_MEASURES = "measures"


def narrow_registry(names: Mapping[str, Iterable[str | None]], reserved) -> bool:
    """Load only what a command needs that names its tasks and models (``statbench run``):
    ``names`` maps a kind to the names it looks up (``{"tasks": [TASK], "retrievers":
    [MODEL]}``); ``reserved``: the core command names (see :func:`collect_commands`).

    Loaded: every plugin that is not a built-in (a third party may clash with any name, or
    fail), the built-in entry points named like a wanted name, and the built-in measures. Their
    ``register_commands`` hooks run, as before any command (a plugin failing there is failed
    for every command). The registry of these answers :meth:`Registry.get` for the wanted names
    when it is sure to answer as the registry of every plugin would: each wanted plain name is
    a built-in's (a built-in wins a clash; no two built-ins register one name: a test checks
    it), and no loaded plugin registers a benchmark (the only registration that names
    another plugin's tasks). Anything else (a qualified or resolver name, a name no such
    built-in gives, any other lookup) loads every plugin first, as without narrowing.

    Returns whether the registry is narrowed; when not, the caller runs every plugin's
    ``register_commands`` hook (:func:`collect_commands`) as for any other command."""
    global _registry
    if _registry is not None or _entry_point_infos is not None:
        return False  # the registry of every plugin is there already
    wanted = {kind: {name for name in kind_names if name} for kind, kind_names in names.items()}
    plain = set().union(*wanted.values())
    if any(":" in name for name in plain):
        return False
    chosen = [found for found in _allowed_entry_points()
              if _normalise(found[1] or "") != BUILTIN_DISTRIBUTION or found[0].name in plain | {BUILTIN_MEASURES}]
    for found in chosen:
        _load(found)
    infos = {_key(found): _loaded[_key(found)] for found in _allowed_entry_points() if _key(found) in _loaded}
    partial = _build_registry(infos)
    if not _answers_alike(partial, wanted):
        return False  # no register_commands hook has run: the caller runs every plugin's once
    failed = {key for key, info in infos.items() if info.error}
    collect_commands(reserved, infos)
    if any(info.error for key, info in infos.items() if key not in failed):  # failed there: dropped whole
        partial = _build_registry(infos)
        if not _answers_alike(partial, wanted):
            return False
    _registry = _Narrowed(partial, wanted, reserved)
    return True


def _answers_alike(partial: Registry, wanted: dict[str, set[str]]) -> bool:
    """Whether ``partial`` resolves every wanted name as the registry of every plugin would
    (see :func:`narrow_registry`)."""
    if any(impl.plugin_name in partial.plugins for impl in pm.hook.register_benchmarks.get_hookimpls()):
        return False
    for kind, kind_names in wanted.items():
        for name in kind_names:
            entry = getattr(partial, kind).get(name)
            if entry is None or entry.plugin.error or _normalise(entry.plugin.distribution or "") != BUILTIN_DISTRIBUTION:
                return False
    return True


class _Narrowed:
    """The registry while a narrowed command runs (:func:`narrow_registry`): ``get`` of a
    wanted name answers from the plugins loaded; everything else from the registry of every
    plugin, loaded (with every ``register_commands`` hook run) when first asked."""

    def __init__(self, partial: Registry, wanted: dict[str, set[str]], reserved):
        self._partial, self._wanted, self._reserved = partial, wanted, set(reserved)
        self._whole: Registry | None = None

    def get(self, kind: str, name: str) -> Registered:
        if name in self._wanted.get(kind, ()):
            return self._partial.get(kind, name)
        return self._everything().get(kind, name)

    def __getattr__(self, attribute: str):
        return getattr(self._everything(), attribute)

    def _everything(self) -> Registry:
        global _registry
        if self._whole is None:
            collect_commands(self._reserved)  # loads every entry point
            if _registry is self:
                _registry = None
            self._whole = get_registry()
        return self._whole


def reset_registry(entry_points: bool = False) -> None:
    """Forget collected registrations (after ``pm.register`` of an in-process plugin).

    With ``entry_points=True`` the entry-point plugins are unregistered too, so the next
    :func:`get_registry` discovers them afresh (tests that install fake distributions)."""
    global _registry, _entry_point_infos, _found
    _registry = None
    if entry_points:
        for key in _loaded:
            if pm.has_plugin(key):
                pm.unregister(name=key)
        _loaded.clear()
        _entry_point_infos = _found = None


def _build_registry(infos: dict[str, PluginInfo] | None = None) -> Registry:
    """The registry of the entry points ``infos`` (by default every one) and of the plugins
    registered in-process."""
    # fresh copies: registration errors and names belong to this build, not to the import cache
    infos = load_entry_points() if infos is None else infos
    registry = Registry(
        plugins={key: dataclasses.replace(info, registered={k: [] for k in KINDS}) for key, info in infos.items()}
    )
    order = list(registry.plugins)
    impls: dict[str, list] = {}
    for kind in (*KINDS, RESOLVERS):
        for impl in getattr(pm.hook, f"register_{kind}").get_hookimpls():
            impls.setdefault(impl.plugin_name, []).append((kind, impl))
            if impl.plugin_name not in registry.plugins:
                registry.plugins[impl.plugin_name] = PluginInfo(
                    name=impl.plugin_name, module=getattr(impl.plugin, "__name__", repr(impl.plugin)))
                order.append(impl.plugin_name)
    # Each plugin's hooks run on their own: what it registers is attributed to it, one that
    # fails does not stop the others, and a plugin is registered whole or not at all.
    # A task's measures may come from a plugin not registered yet: their names are checked
    # below, once every plugin has registered.
    registered: dict[str, list[tuple[str, Registered]]] = {}
    for plugin_name in order:
        info = registry.plugins[plugin_name]
        if info.error or plugin_name not in impls:
            continue
        pending: list[tuple[str, Registered]] = []
        for kind, impl in impls[plugin_name]:
            with _guarded(info, f"registering {kind.replace('_', ' ')}"):
                impl.function(register=_registrar(kind, info, pending))
            if info.error:
                break
        if not info.error:
            registered[plugin_name] = pending
    # The names of the tasks' measures, now that every plugin registered its measures:
    # each must name an ir-measures measure or a registered custom one; then the tasks
    # each benchmark names (registered, with the protocol, version and measure declared).
    # A task or benchmark that fails marks its plugin failed (whole, as at registration);
    # that plugin's measures and tasks are then withdrawn, so the checks run again until
    # nothing fails.
    failed = True
    while failed:
        known = Registry()
        for plugin_name, pending in registered.items():
            if not registry.plugins[plugin_name].error:
                for kind, entry in pending:
                    if kind not in ("measures", "tasks"):
                        continue
                    table = getattr(known, kind)
                    if entry.name in table:
                        known.clashes.setdefault((kind, entry.name), [table[entry.name]]).append(entry)
                    else:  # plugins in load order, built-ins first: the plain name's provider
                        table[entry.name] = entry
        failed = False
        for plugin_name, pending in registered.items():
            info = registry.plugins[plugin_name]
            for cls in dict.fromkeys(e.cls for kind, e in pending if kind == "tasks" and not info.error):
                with _guarded(info, "registering tasks"):
                    declared = cls.task_info()
                    check_measure_names(declared.name, declared.measures, known)
                failed = failed or bool(info.error)
        for plugin_name, pending in registered.items():
            info = registry.plugins[plugin_name]
            for entry in (e for kind, e in pending if kind == "benchmarks" and not info.error):
                with _guarded(info, "registering benchmarks"):
                    check_benchmark_tasks(entry.cls, lambda name, known=known: _task_info_of(known, name))
                failed = failed or bool(info.error)
    for plugin_name, pending in registered.items():
        if not registry.plugins[plugin_name].error:
            for kind, entry in pending:
                _add(registry, kind, entry)
    return registry


def _task_info_of(known: Registry, name: str):
    """The declaration of the task a plain name selects among ``known``, None if none."""
    entry = known.tasks.get(name)
    return entry.cls.task_info() if entry is not None else None


def _registrar(kind: str, info: PluginInfo, pending: list):
    if kind == RESOLVERS:
        return _resolver_registrar(info, pending)
    if kind == "benchmarks":
        return _benchmark_registrar(info, pending)

    def register(cls, *, aliases: tuple[str, ...] = ()) -> None:
        if kind == "tasks":
            check_task_declaration(cls)
        elif kind == "measures":
            check_measure_class(cls)
        else:
            check_model_class(cls, Retriever if kind == "retrievers" else Reranker)
        for name in (cls.name, *aliases):
            if any(k == kind and e.name == name for k, e in pending):
                raise StatbenchError(f"{kind[:-1]} {name!r} registered twice by the same plugin")
            pending.append((kind, Registered(name=name, cls=cls, plugin=info)))

    return register


def _benchmark_registrar(info: PluginInfo, pending: list):
    def register(benchmark) -> None:
        """``register(Benchmark(...))``: what it names is checked once every plugin has registered."""
        if not isinstance(benchmark, Benchmark):
            raise BenchmarkError(f"{benchmark!r} is not a statbench.api.Benchmark")
        if any(k == "benchmarks" and e.name == benchmark.id for k, e in pending):
            raise BenchmarkError(f"benchmark {benchmark.id!r} registered twice by the same plugin")
        pending.append(("benchmarks", Registered(name=benchmark.id, cls=benchmark, plugin=info)))

    return register


#: A task resolver's prefix: a plain lower-case name (``beir``).
_PREFIX = re.compile(r"^[a-z][a-z0-9-]*$")


def _resolver_registrar(info: PluginInfo, pending: list):
    def register(prefix: str, resolve) -> None:
        """``register("beir", resolve)``: ``--task beir:ARG`` is the task class ``resolve(ARG)`` returns."""
        if not isinstance(prefix, str) or not _PREFIX.match(prefix):
            raise StatbenchError(f"task resolver prefix {prefix!r} must be a lower-case name (letters, digits, '-')")
        if not callable(resolve):
            raise StatbenchError(f"task resolver {prefix!r}: {resolve!r} is not callable")
        if any(k == RESOLVERS and e.name == prefix for k, e in pending):
            raise StatbenchError(f"task resolver {prefix!r} registered twice by the same plugin")
        pending.append((RESOLVERS, Registered(name=prefix, cls=resolve, plugin=info)))

    return register


def _add(registry: Registry, kind: str, entry: Registered) -> None:
    if kind == RESOLVERS:  # a prefix has one resolver: the first loaded (built-ins first) keeps it
        entry.plugin.registered.setdefault(RESOLVERS, []).append(entry.name)
        kept = registry.task_resolvers.setdefault(entry.name, entry)
        if kept is not entry:
            _log.warning("task resolver %r is also registered by %s; %s keeps it", entry.name,
                         entry.plugin.qualifier, kept.plugin.qualifier)
        return
    table = getattr(registry, kind)
    entry.plugin.registered[kind].append(entry.name)
    if entry.name not in table:
        table[entry.name] = entry
        return
    clash = registry.clashes.setdefault((kind, entry.name), [table[entry.name]])
    clash.append(entry)
    # plugins are added in load order, built-ins first: the first provider keeps the name
    _log.info("%s %r is also registered by %s; %s keeps the plain name", kind[:-1], entry.name, entry.qualified,
              clash[0].qualified)


def call_plugin(entry: Registered, stage: str, fn):
    """Call plugin code. A :class:`StatbenchError` it raises is its own clear message;
    anything else (``SystemExit`` included) becomes one line naming the plugin."""
    try:
        return fn()
    except (StatbenchError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - a plugin must never take over the CLI
        logging.getLogger("statbench").debug("plugin traceback", exc_info=True)
        if not isinstance(entry.cls, type):  # a task resolver is a function
            kind = "task resolver"
        else:
            kind = "task" if issubclass(entry.cls, Task) else "model"
        raise PluginError(f"{kind} {entry.name!r} ({entry.qualified}) failed while {stage}: "
                          f"{one_line(exc)}") from exc


def collect_commands(reserved, infos: dict[str, PluginInfo] | None = None) -> list[dict]:
    """Call each plugin's ``register_commands(cli)`` hook, in load order (built-ins first),
    each with a click group of its own, and settle the names its commands take.

    A command is refused, never added, when its name is ``reserved`` (the core commands),
    was taken by an earlier plugin, or is not a plain name. A hook that raises (``SystemExit``
    included) marks its plugin failed; for an installed plugin the failure is kept on its
    :class:`PluginInfo`, so the registry drops whatever else it registers, as for any other
    hook. One record per plugin implementing the hook: ``{"key", "plugin" (PluginInfo),
    "commands": {name: command}, "refused": {name: (reason, owner PluginInfo | None)}}``.
    ``infos``: the entry points whose hooks run (by default every one, loaded first)."""
    import re

    import click

    name_ok = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    infos = load_entry_points() if infos is None else infos
    impls = {impl.plugin_name: impl for impl in pm.hook.register_commands.get_hookimpls()}
    order = [key for key in infos if key in impls] + [key for key in impls if key not in infos]
    owners: dict[str, PluginInfo] = {}
    records = []
    for key in order:
        impl = impls[key]
        info = infos.get(key) or PluginInfo(name=key, module=getattr(impl.plugin, "__name__", repr(impl.plugin)))
        record = {"key": key, "plugin": info, "commands": {}, "refused": {}}
        records.append(record)
        if info.error:
            continue
        staging = click.Group(name="statbench")
        with _guarded(info, "registering commands"):
            impl.function(cli=staging)
        if info.error:
            reset_registry()  # a registry built before this failure was known would still hold the plugin
            continue
        for name, command in staging.commands.items():
            if not isinstance(command, click.Command) or not isinstance(name, str) or not name_ok.match(name):
                record["refused"][str(name)] = ("not a click command with a plain name", None)
            elif name in reserved:
                record["refused"][name] = ("a built-in command of statbench has that name", None)
            elif name in owners:
                record["refused"][name] = ("another plugin registered a command of that name first", owners[name])
            else:
                owners[name] = info
                record["commands"][name] = command
    return records
