"""statbench: a benchmark harness for statutory article retrieval.

The core (this package) knows nothing about particular models or tasks: those arrive
as plugins through the ``statbench`` entry-point group (see :mod:`statbench.hookspecs`).
"""

__version__ = "0.1.0"

from .hookspecs import hookimpl  # noqa: E402  (re-exported for plugin authors)

__all__ = ["__version__", "hookimpl"]
