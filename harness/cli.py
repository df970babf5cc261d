"""The ``statbench`` command line. Imports stay light here: models import their heavy
dependencies only when they run, so ``statbench --help`` is fast."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from pathlib import Path

import click

from . import __version__
from .errors import StatbenchError, one_line

log = logging.getLogger("statbench")


def _console(stderr: bool = False):
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:  # logs and CI: wide enough for a 5-fold score table
        console.width = max(console.width, 140)
    return console


class _Group(click.Group):
    """Every failure ends as one line on stderr and exit code 2: a :class:`StatbenchError`
    says what is wrong with the input; an OS error names the path; anything else (a bug)
    names its type, with the traceback in the log (``-v`` shows it)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # one line, like every other refusal
            where = exc.ctx.command_path if exc.ctx else "statbench"
            _fail(ctx, f"{exc.format_message()} (see '{where} --help')", exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except StatbenchError as exc:
            _fail(ctx, str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail(ctx, "interrupted; outputs and cache are as they were before the interrupted step", 130)
        except OSError as exc:
            log.debug("traceback", exc_info=True)
            where = f"{exc.filename}: " if exc.filename else ""
            _fail(ctx, f"{where}{exc.strerror or exc}", 2)
        except Exception as exc:  # noqa: BLE001 - never a raw traceback
            log.debug("traceback", exc_info=True)
            _fail(ctx, f"unexpected {one_line(exc)} (a statbench bug: please report it with the output of -v)", 2)


def _fail(ctx, message: str, code: int):
    lines = message.splitlines() or [""]
    # one line, unless the message is a list of what to fetch (download errors)
    click.echo(f"Error: {lines[0]}" + "".join(f"\n{line}" for line in lines[1:]), err=True)
    ctx.exit(code)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="statbench")
@click.option("-v", "--verbose", is_flag=True, help="Log every step (cache hits, downloads, dropped items).")
def cli(verbose: bool):
    """Benchmark harness for statutory article retrieval."""
    from rich.logging import RichHandler

    if not log.handlers:
        log.addHandler(RichHandler(console=_console(stderr=True), show_time=False, show_path=False))
    for handler in log.handlers:  # the console shows warnings unless -v; run.log gets every step
        handler.setLevel(logging.INFO if verbose else logging.WARNING)
    log.setLevel(logging.INFO)


@cli.command()
@click.option("--task", required=True, help="Task name (see `statbench list tasks`).")
@click.option("--model", help="First-stage retriever (see `statbench list models`).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", help="Retriever parameter; repeatable.")
@click.option("--reranker", help="Reranker applied to the first stage or the pool.")
@click.option("--reranker-param", "reranker_params", multiple=True, metavar="KEY=VALUE", help="Reranker parameter.")
@click.option("--pool", help="Rerank this frozen candidate pool of the task instead of running --model.")
@click.option("--rerank-depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="Candidates per query handed to the reranker.")
@click.option("--split", "splits", multiple=True, help="Only these splits/folds (default: all).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path),
              help="Where run.trec and results.json go [default: statbench-output/TASK/MODEL].")
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
def run(task, model, params, reranker, reranker_params, pool, rerank_depth, splits, data_dir, output, progress):
    """Run a model on a task, write a TREC run and a results JSON, print the scores."""
    from .progress import progress_bars
    from .runner import RunRequest, execute
    from .tables import print_scores

    request = RunRequest(
        task=task, model=model, params=list(params), reranker=reranker, reranker_params=list(reranker_params),
        pool=pool, splits=list(splits) or None, data_dir=data_dir, output=output,
        command=shlex.join(["statbench", *sys.argv[1:]]), rerank_depth=rerank_depth,
    )
    console = _console()
    with progress_bars(console, enabled=progress and console.is_terminal) as bars:
        outcome = execute(request, log, bars)
    print_scores(console, outcome.results)
    console.print(f"run: {outcome.run_path}\nresults: {outcome.results_path}")


@cli.command()
@click.argument("run_file", type=click.Path(path_type=Path))
@click.option("--task", required=True, help="Task whose qrels and measures score the run.")
@click.option("--split", "splits", multiple=True, help="Only these splits/folds (default: all).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def evaluate(run_file, task, splits, data_dir, as_json):
    """Score an existing TREC run file with the task's measures."""
    from .runner import evaluate_run_file
    from .tables import print_scores

    scores = evaluate_run_file(run_file, task, data_dir, list(splits) or None, log)
    if as_json:
        click.echo(json.dumps(scores, indent=2, ensure_ascii=False))
    else:
        print_scores(_console(), scores)


@cli.command(name="list")
@click.argument("what", type=click.Choice(["tasks", "models", "all"]), default="all")
def list_(what):
    """List registered tasks and models."""
    from .plugins import get_registry
    from .tables import print_registry

    print_registry(_console(), get_registry(), what)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def plugins(as_json):
    """List installed plugins, what each registers, and any that failed to load."""
    from .plugins import get_registry
    from .tables import print_plugins

    registry = get_registry()
    if as_json:
        click.echo(json.dumps([p.as_dict() for p in registry.plugins.values()], indent=2))
    else:
        print_plugins(_console(), registry)


# --- commands defined in their own modules (one line each; those modules import lightly) ---
from .pool_cli import pool as _pool  # noqa: E402
cli.add_command(_pool)
from .compare_cli import compare as _compare  # noqa: E402
cli.add_command(_compare)
from .leaderboard.cli import leaderboard as _leaderboard  # noqa: E402
cli.add_command(_leaderboard)
# (end of contributed commands)


def main():
    cli(prog_name="statbench")


if __name__ == "__main__":
    main()
