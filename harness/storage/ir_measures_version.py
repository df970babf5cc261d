"""The version of ir-measures, the engine behind every figure, as cache keys and results
record it: read from its installed metadata, so that naming it imports nothing (the storage
layer, below scoring, never imports the engine). :func:`check_imported` stops a run that
scores with a module of another version than the metadata says (a copy on ``PYTHONPATH``
over the installed one), so scores are never cached under a version that did not compute
them."""

from __future__ import annotations

import functools
import importlib.metadata
from types import ModuleType

from statbench.errors import StatbenchError

DISTRIBUTION = "ir_measures"


@functools.cache
def ir_measures_version() -> str:
    """The installed ir-measures' version (its distribution's metadata)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise StatbenchError("ir-measures is not installed (`pip install ir-measures`): statbench scores "
                             "every run with it") from None


def check_imported(module: ModuleType) -> None:
    """Refuse to score with an imported ir_measures whose version is not the installed one."""
    imported = getattr(module, "__version__", None)
    if imported != ir_measures_version():
        raise StatbenchError(f"ir_measures imported from {getattr(module, '__file__', '?')} is version {imported}, "
                             f"but the installed distribution is {ir_measures_version()}: scores would be kept "
                             "under the wrong version; remove the other copy from the path or reinstall ir-measures")
