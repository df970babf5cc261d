"""The distillation family's plugin (entry point ``distill``): the ``statbench distill``
command and the distilled student reranker it trains, registered as a third party's are."""

from __future__ import annotations

from statbench.api import hookimpl
from statbench.models.distillation.cli import distill
from statbench.models.distillation.student import DistilledStudentReranker


@hookimpl
def register_commands(cli):
    cli.add_command(distill)


@hookimpl
def register_rerankers(register):
    register(DistilledStudentReranker)
