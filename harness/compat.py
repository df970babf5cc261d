"""Import paths from before the core was grouped into subpackages (issue 25), kept so that
plugins written against the older docs keep working.

Each old path is an alias of the module that now owns the code: ``import statbench.taskinfo``
gives the very module object of :mod:`statbench.contract.taskinfo`, so classes are the same
classes and a monkeypatch through either name patches both. New code imports from
:mod:`statbench.api` (plugins) or from the owning module (the core).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: old module path -> the module that owns its code now. A package entry also maps its
#: submodules (``statbench.measures.fbeta`` -> ``statbench.scoring.measures.fbeta``).
KEPT: dict[str, str] = {
    "statbench.taskinfo": "statbench.contract.taskinfo",
    "statbench.params": "statbench.contract.params",
    "statbench.measures": "statbench.scoring.measures",
    "statbench.taskdef": "statbench.loading.taskdef",
    "statbench.splits": "statbench.loading.splits",
    "statbench.beir": "statbench.loading.beir",
    "statbench.irds": "statbench.loading.irds",
    "statbench.dataio": "statbench.data.dataio",
    "statbench.runfile": "statbench.data.runfile",
    "statbench.checksum": "statbench.data.checksum",
    "statbench.validation": "statbench.data.validation",
    "statbench.cache": "statbench.storage.cache",
    "statbench.checks": "statbench.registry.checks",
    "statbench.hookspecs": "statbench.registry.hookspecs",
    "statbench.plugins": "statbench.registry.plugins",
    "statbench.cli": "statbench.commands.cli",
}


def current_name(old: str) -> str | None:
    """The module an old path stands for, or ``None`` when it is not a kept path."""
    for prefix, new in KEPT.items():
        if old == prefix or old.startswith(prefix + "."):
            return new + old[len(prefix):]
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has set __spec__ to the alias's: the module keeps its own
        module.__spec__ = self.own_spec


class _OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = current_name(fullname) if fullname.startswith("statbench.") else None
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())  # before the path finder, which would load a second copy
