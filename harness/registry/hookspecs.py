"""The hooks a plugin implements. Each hands the plugin a ``register`` callable, except
``register_commands``, which hands it a click group.

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


@hookspec
def register_measures(register):
    """Register custom measures: ``register(MeasureSubclass)`` (see :mod:`statbench.scoring.measures`);
    their names are then used exactly like ir-measures names (``F2@10``)."""


@hookspec
def register_task_resolvers(register):
    """Register task name resolvers: ``register(PREFIX, resolve)`` makes ``--task PREFIX:ARG``
    the :class:`~statbench.contract.task.Task` subclass ``resolve(ARG)`` returns (checked as a
    registered task is). The built-in ``beir`` prefix is one: ``--task beir:PATH``."""


@hookspec
def register_benchmarks(register):
    """Register benchmarks: ``register(Benchmark(name, version, tasks=(BenchmarkTask(task, measure), ...)))``
    (see :mod:`statbench.contract.benchmark`). Each task it names must be registered (by any
    plugin) with the protocol, version and measure it names; the leaderboard's overview ranks
    configurations across its tasks."""


@hookspec
def register_commands(cli):
    """Add subcommands to ``statbench``: ``cli`` is a :class:`click.Group` to call
    ``cli.add_command(cmd)``, ``@cli.command()`` or ``@cli.group()`` on (as in datasette).
    A command may not take the name of a built-in command or of another plugin's command:
    such a command is refused and reported by ``statbench plugins``."""
