"""Kept for plugins that import it: the progress bars live in :mod:`statbench.console`."""

from __future__ import annotations

from .console import progress_bars

__all__ = ["progress_bars"]
