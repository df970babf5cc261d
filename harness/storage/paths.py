"""Where statbench keeps things; every location can be overridden by an env var."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "STATBENCH_CACHE"
DATA_ENV = "STATBENCH_DATA"


def cache_root() -> Path:
    """``$STATBENCH_CACHE`` or ``~/.cache/statbench``: indexes, cached runs, downloads."""
    value = os.environ.get(CACHE_ENV)
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "statbench"


def data_root() -> Path:
    """``$STATBENCH_DATA`` or the cache's ``data/`` folder; one sub-folder per task."""
    value = os.environ.get(DATA_ENV)
    return Path(value).expanduser() if value else cache_root() / "data"
