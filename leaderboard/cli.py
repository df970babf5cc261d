"""``statbench leaderboard build``: the static site from a folder of results JSON files.
Only click is imported here; the builder loads when the command runs. A built-in plugin:
registered through the ``register_commands`` hook like a third party's command."""

from __future__ import annotations

import re
from pathlib import Path

import click
from statbench import hookimpl

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` as one printable line: control characters from results (newlines, terminal
    escapes) are shown as escapes (``\\n``, ``\\x1b``), never passed to the terminal."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


@click.group()
def leaderboard():
    """Build the static leaderboard site."""


@leaderboard.command()
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("statbench-output"), show_default=True,
              help="Folder searched recursively for results JSON files.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("statbench-site"), show_default=True,
              help="Folder the site is written to (replaced as a whole on each build).")
@click.option("--baseline", default="bm25", show_default=True,
              help="Model every result is tested against (model name, or 'model → reranker').")
@click.option("--measure", help="Measure label to test [default: each task's primary measure].")
@click.option("--run-files/--no-run-files", default=True, show_default=True,
              help="Copy the run files (gzipped) into the site and link them.")
def build(results_dir, out_dir, baseline, measure, run_files):
    """Write an index and one page per task; invalid results files are reported and skipped."""
    from statbench.leaderboard.site import build_site

    report = build_site(results_dir, out_dir, baseline=baseline, measure=measure, copy_runs=run_files)
    for note in report.notes:
        click.echo(f"note: {one_line(note)}", err=True)
    for problem in report.problems:
        click.echo(f"warning: {one_line(problem)}", err=True)
    click.echo(f"{report.rows} result(s) on {report.boards} task page(s) written to {out_dir}")
    click.echo(f"open {(out_dir / 'index.html').resolve().as_uri()}")


@hookimpl
def register_commands(cli):
    cli.add_command(leaderboard)
