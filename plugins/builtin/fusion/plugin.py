"""The fusion family's plugin (entry point ``fusion``): the ``fusion`` retriever and the
``statbench fuse`` command, registered as a third party's are."""

from __future__ import annotations

from statbench.api import hookimpl


@hookimpl
def register_commands(cli):
    from statbench.models.fusion.cli import fuse

    cli.add_command(fuse)


@hookimpl
def register_retrievers(register):
    from statbench.models.fusion.retriever import FusionRetriever

    register(FusionRetriever)
