"""Plugin discovery and the registry of tasks, retrievers and rerankers.

Plugins are modules named by entry points in the ``statbench`` group; the built-in models
and tasks arrive the same way. Loading is defensive: a plugin whose import or
registration raises is recorded with its error and skipped, and the rest keeps working.

``STATBENCH_LOAD_PLUGINS`` is the kill switch: when set, only the distributions it lists
(comma-separated) are loaded; set to the empty string, no plugin loads at all. Use
``STATBENCH_LOAD_PLUGINS=statbench`` to keep only the built-ins.

Tests register plugins in-process with ``pm.register(obj, name=...)`` and then
``reset_registry()``.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import traceback
from dataclasses import dataclass, field
from importlib.metadata import entry_points

import pluggy

from . import hookspecs
from .errors import UnknownNameError

ENTRY_POINT_GROUP = "statbench"
KILL_SWITCH = "STATBENCH_LOAD_PLUGINS"
KINDS = ("tasks", "retrievers", "rerankers")

pm = pluggy.PluginManager("statbench")
pm.add_hookspecs(hookspecs)


@dataclass
class PluginInfo:
    """One plugin as ``statbench plugins`` shows it."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    error: str | None = None
    registered: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})

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
    """A registered task or model class and the plugin it came from."""

    name: str
    cls: type
    plugin: PluginInfo


@dataclass
class Registry:
    plugins: dict[str, PluginInfo] = field(default_factory=dict)
    tasks: dict[str, Registered] = field(default_factory=dict)
    retrievers: dict[str, Registered] = field(default_factory=dict)
    rerankers: dict[str, Registered] = field(default_factory=dict)

    def get(self, kind: str, name: str) -> Registered:
        table = getattr(self, kind)
        if name not in table:
            raise UnknownNameError(kind.rstrip("s"), name, table)
        return table[name]

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
    return f"{type(exc).__name__}: {exc}{where}"


_entry_point_infos: dict[str, PluginInfo] | None = None


def load_entry_points() -> dict[str, PluginInfo]:
    """Import every allowed entry-point plugin once; failures are recorded, not raised."""
    global _entry_point_infos
    if _entry_point_infos is not None:
        return _entry_point_infos
    allowed = _allowed_distributions()
    infos: dict[str, PluginInfo] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.dist.name if e.dist else "", e.name)):
        dist = ep.dist.name if ep.dist else None
        if allowed is not None and _normalise(dist or "") not in allowed:
            continue
        info = PluginInfo(name=ep.name, module=ep.value, distribution=dist, version=ep.dist.version if ep.dist else None)
        key = f"{dist}:{ep.name}"
        infos[key] = info
        if pm.has_plugin(key):
            continue
        try:
            module = importlib.import_module(ep.value)
            pm.register(module, name=key)
        except Exception as exc:  # a broken plugin must never break the CLI
            info.error = _short_error(exc)
    _entry_point_infos = infos
    return infos


_registry: Registry | None = None


def get_registry() -> Registry:
    """Load plugins (once) and collect what they register."""
    global _registry
    if _registry is None:
        _registry = _build_registry()
    return _registry


def reset_registry(entry_points: bool = False) -> None:
    """Forget collected registrations (after ``pm.register`` of an in-process plugin).

    With ``entry_points=True`` the entry-point plugins are unregistered too, so the next
    :func:`get_registry` discovers them afresh (tests that install fake distributions)."""
    global _registry, _entry_point_infos
    _registry = None
    if entry_points and _entry_point_infos is not None:
        for key in _entry_point_infos:
            if pm.has_plugin(key):
                pm.unregister(name=key)
        _entry_point_infos = None


def _build_registry() -> Registry:
    # fresh copies: registration errors and names belong to this build, not to the import cache
    registry = Registry(
        plugins={key: dataclasses.replace(info, registered={k: [] for k in KINDS}) for key, info in load_entry_points().items()}
    )
    for kind in KINDS:
        caller = getattr(pm.hook, f"register_{kind}")
        # Each implementation is called on its own so that what it registers can be
        # attributed to its plugin, and so that one raising does not stop the others.
        for impl in caller.get_hookimpls():
            info = registry.plugins.get(impl.plugin_name)
            if info is None:
                info = PluginInfo(name=impl.plugin_name, module=getattr(impl.plugin, "__name__", repr(impl.plugin)))
                registry.plugins[impl.plugin_name] = info
            if info.error:
                continue
            try:
                impl.function(register=_registrar(registry, kind, info))
            except Exception as exc:
                info.error = _short_error(exc)
    return registry


def _registrar(registry: Registry, kind: str, info: PluginInfo):
    table = getattr(registry, kind)

    def register(cls, *, aliases: tuple[str, ...] = ()) -> None:
        for name in (cls.name, *aliases):
            if name in table:
                other = table[name].plugin
                raise ValueError(f"{kind[:-1]} {name!r} is already registered by plugin {other.name!r}")
            table[name] = Registered(name=name, cls=cls, plugin=info)
            info.registered[kind].append(name)

    return register
