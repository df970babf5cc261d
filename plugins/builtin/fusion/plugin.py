"""The fusion family's plugin (entry point ``fusion``): the ``fusion`` retriever and the
``statbench fuse`` command, registered as a third party's are."""

from __future__ import annotations

from statbench.api import hookimpl
from statbench.models.fusion.cli import fuse


@hookimpl
def register_commands(cli):
    cli.add_command(fuse)


@hookimpl
def register_retrievers(register):
    # inside: the retriever brings the run machinery (run cache, split runs), which `statbench --help`
    # (it loads every plugin) does not need
    from statbench.models.fusion.retriever import FusionRetriever

    register(FusionRetriever)
