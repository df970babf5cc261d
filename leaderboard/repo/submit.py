"""``statbench submit OUTPUT_DIR... --to RESULTS_REPO``: finished runs into a results
repository (:mod:`statbench.leaderboard.repo.submission` has the layout), each as
``results/TASK/LABEL/CONFIG/`` with results.json (a byte copy), run.trec.gz, a model
card and source.json (where the third-party plugins' code can be installed from,
:mod:`statbench.leaderboard.repo.source`; a wheel it names is stored beside it). Every output
set is checked before anything is written: one refused, none written. Each folder is
staged beside its target and renamed into place under the target's lock; what a killed
submit left there is reclaimed by the next one. Only click is imported here; the work
(:mod:`.submit_runs`) loads when the command runs. A built-in plugin (entry point
``submit``), registered through the ``register_commands`` hook."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from statbench import hookimpl


@click.command()
@click.argument("output_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--to", "repo", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The results repository (made by 'statbench leaderboard init-repo').")
@click.option("--card", "card_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A model card JSON file (all or some fields; flags override it).")
@click.option("--model-name", help="The model's name as its authors give it [default: the run's model label].")
@click.option("--model-version", help="The model's version [default: the version results.json records].")
@click.option("--hub-id", help="The weights' hub id (e.g. sentence-transformers/all-MiniLM-L6-v2); with --revision.")
@click.option("--revision", help="The hub revision (commit or tag) of the weights.")
@click.option("--local", "local", is_flag=True, default=None, help="The weights are not on a hub.")
@click.option("--n-parameters", type=click.IntRange(min=0), help="Number of trained weights.")
@click.option("--training-data", help="What the model was trained or tuned on ('none' for BM25 and the like).")
@click.option("--test-queries-seen/--no-test-queries-seen", default=None,
              help="Whether any test query of the task was seen in training or tuning (must be said).")
@click.option("--hardware", help="What it ran on [default: the hardware results.json records, if any].")
@click.option("--licence", "--license", "licence", help="The model's licence (SPDX id where there is one).")
@click.option("--author", "authors", multiple=True, help="An author (repeat for several).")
@click.option("--paper", help="A link to the paper.")
@click.option("--budget-ok", is_flag=True, help="Submit results that ran a reduced budget (e.g. preset=cpu-small), "
                                                "badged as such.")
@click.option("--interactive/--no-interactive", default=None,
              help="Ask for missing card fields [default: when the input is a terminal].")
@click.option("--index-url", metavar="URL",
              help="The package index (PEP 503 simple API) asked whether a plugin's installed version is "
                   "published there [default: $PIP_INDEX_URL, else https://pypi.org/simple].")
def submit(output_dirs, repo, card_file, model_name, model_version, hub_id, revision, local, n_parameters,
           training_data, test_queries_seen, hardware, licence, authors, paper, budget_ok, interactive, index_url):
    """Add finished runs (statbench run output folders) to a results repository, each with
    its gzipped run file, a model card and the source of the plugins it used (the index
    version, a git commit, or a wheel stored beside it; else "source not published");
    refuses, writing nothing, if any one is refused."""
    from statbench.leaderboard.repo.submit_runs import submit_outputs

    flags = {"model_name": model_name, "model_version": model_version, "hub_id": hub_id, "revision": revision,
             "local": local, "n_parameters": n_parameters, "training_data": training_data,
             "test_queries_seen": test_queries_seen, "hardware": hardware, "licence": licence,
             "authors": list(authors) or None, "paper": paper}
    ask = sys.stdin.isatty() if interactive is None else interactive
    for line in submit_outputs(list(output_dirs), repo, card_file=card_file, flags=flags, budget_ok=budget_ok,
                               ask=ask, index_url=index_url, on_wait=lambda line: click.echo(line, err=True)):
        click.echo(line)


@hookimpl
def register_commands(cli):
    cli.add_command(submit)
