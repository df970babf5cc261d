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
    """Build the static leaderboard site; check and set up a results repository."""


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
@click.option("--verify", is_flag=True,
              help="Re-score each row's run file against the task's judgements on the same data version and "
                   "publish only rows whose every figure agrees (badged verified).")
@click.option("--allow-unverified", is_flag=True,
              help="With --verify: also show rows that cannot be verified here (no run file, no local data of "
                   "that version), badged unverifiable.")
@click.option("--data-dir", "data_dirs", multiple=True, metavar="TASK=DIR",
              help="The local data of a task (repeat per task): the per-query explorer's text, and with --verify "
                   "the judgements [default with --verify: the task's data folder].")
@click.option("--strict", is_flag=True, help="With --verify: exit code 2 when any row was refused.")
def build(results_dir, out_dir, baseline, measure, run_files, verify, allow_unverified, data_dirs, strict):
    """Write an index and one page per task; invalid results files are reported and skipped."""
    from statbench.leaderboard.explorer import TaskTexts
    from statbench.leaderboard.site import build_site
    from statbench.leaderboard.verify import verifier_from_options

    if (allow_unverified or strict) and not verify:
        raise click.UsageError("--allow-unverified and --strict go with --verify")
    parsed = verifier_from_options(data_dirs, allow_unverified, ahead=results_dir)
    verifier = parsed if verify else None
    report = build_site(results_dir, out_dir, baseline=baseline, measure=measure, copy_runs=run_files,
                        verify=verifier, explorer=TaskTexts(data_dirs=parsed.data_dirs, default_folders=verify))
    for note in report.notes:
        click.echo(f"note: {one_line(note)}", err=True)
    if verifier is not None:
        for line in verifier.lines("unverifiable"):
            click.echo(f"{'note' if allow_unverified else 'not shown'}: unverifiable: {one_line(line)}", err=True)
        for line in verifier.lines("refused"):
            click.echo(f"refused: {one_line(line)}", err=True)
    for problem in report.problems:
        click.echo(f"warning: {one_line(problem)}", err=True)
    if verifier is not None:
        click.echo(verifier.summary())
    click.echo(f"{report.rows} result(s) on {report.boards} task page(s) written to {out_dir}")
    click.echo(f"open {(out_dir / 'index.html').resolve().as_uri()}")
    if strict and verifier.count("refused"):
        click.echo(f"error: {verifier.count('refused')} row(s) refused (--strict)", err=True)
        raise SystemExit(2)


@leaderboard.command()
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@click.option("--base", help="The ref to compare with [default: the merge base with origin/main, else main].")
@click.option("--allow-unverified", is_flag=True,
              help="Let submissions that cannot be verified here (no local data of that version) pass, noted.")
@click.option("--data-dir", "data_dirs", multiple=True, metavar="TASK=DIR",
              help="The local data of a task (repeat per task) [default: the task's data folder].")
def check(repo, base, allow_unverified, data_dirs):
    """Check a results repository's changes since BASE (its CI runs this on each pull request):
    only added submission folders, each read strictly and verified. One line per problem, exit 2."""
    from statbench.leaderboard.repo import check_repo
    from statbench.leaderboard.verify import verifier_from_options

    verifier = verifier_from_options(data_dirs, allow_unverified)
    report = check_repo(repo, base, verifier)
    for note in report.notes:
        click.echo(f"note: {one_line(note)}", err=True)
    for problem in report.problems:
        click.echo(one_line(problem), err=True)
    click.echo(f"{len(report.folders)} submission folder(s) added since {report.base}: {report.verified} verified, "
               f"{len(report.problems)} problem(s)")
    if report.problems:
        raise SystemExit(2)


@leaderboard.command("init-repo")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init_repo(directory):
    """Make DIRECTORY a results repository: the marker, a README and the CI workflow that checks
    each pull request (.github/workflows/check.yml)."""
    from statbench.leaderboard.repo import init_repo as write_repo

    written, same = write_repo(directory)
    for path in written:
        click.echo(f"wrote {path}")
    if same:
        click.echo(f"{len(same)} file(s) already there with this content: left as they are")


@hookimpl
def register_commands(cli):
    from statbench.leaderboard.export import export  # `leaderboard export`: tables for a paper

    leaderboard.add_command(export)
    cli.add_command(leaderboard)
