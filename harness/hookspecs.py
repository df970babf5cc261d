"""The hooks a plugin implements. Each hands the plugin a ``register`` callable.

A plugin module looks like this (see docs/plugins.md)::

    from statbench import hookimpl

    @hookimpl
    def register_retrievers(register):
        register(MyRetriever)
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("statbench")
hookimpl = pluggy.HookimplMarker("statbench")


@hookspec
def register_retrievers(register):
    """Register first-stage retrievers: ``register(RetrieverSubclass)``."""


@hookspec
def register_rerankers(register):
    """Register rerankers: ``register(RerankerSubclass)``."""


@hookspec
def register_tasks(register):
    """Register tasks: ``register(TaskSubclass)``."""
