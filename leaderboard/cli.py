"""``statbench leaderboard build``: the static site from a folder of results JSON files.
Only click is imported here; the builder loads when the command runs. A built-in plugin:
registered through the ``register_commands`` hook like a third party's command."""

from __future__ import annotations

import re
from pathlib import Path

import click

from statbench import hookimpl
from statbench.leaderboard.export.paper import export

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
@click.option("--measure", help="Measure label to test, alone: its comparisons' table, and ▲/▼ on its column only "
                                "(Holm over its tests) [default: each task's primary measure, with ▲/▼ on every "
                                "measure, Holm over all of a board's tests].")
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
@click.option("--strict", is_flag=True,
              help="With --verify: exit code 2 when any row was refused, any results file was skipped as broken or "
                   "inconsistent, or (without --allow-unverified) any row could not be verified: the verdicts of "
                   "'leaderboard check'.")
def build(results_dir, out_dir, baseline, measure, run_files, verify, allow_unverified, data_dirs, strict):
    """Write an index and one page per task; invalid results files are reported and skipped."""
    from statbench.leaderboard.render.build import build_site
    from statbench.leaderboard.render.explorer import TaskTexts
    from statbench.leaderboard.verify.verify import verifier_from_options

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
    if strict:
        failures = strict_failures(verifier, report, allow_unverified)
        if failures:
            click.echo(f"error: {'; '.join(failures)} (--strict)", err=True)
            raise SystemExit(2)

def strict_failures(verifier, report, allow_unverified: bool) -> list[str]:
    """What fails ``build --verify --strict``, as ``leaderboard check`` would fail it: refused
    rows, results files skipped as broken or inconsistent (never hidden behind a warning), a
    results repository's rows that are not submissions its check accepts, and rows that could
    not be verified unless they are allowed."""
    failures = []
    if verifier.count("refused"):
        failures.append(f"{verifier.count('refused')} row(s) refused")
    if report.skipped:
        failures.append(f"{len(report.skipped)} results file(s) skipped as broken or inconsistent")
    if report.not_submissions:
        failures.append(f"{len(report.not_submissions)} row(s) of a results repository left off: not a submission "
                        "'leaderboard check' accepts")
    if not allow_unverified and verifier.count("unverifiable"):
        failures.append(f"{verifier.count('unverifiable')} row(s) could not be verified (--allow-unverified "
                        "shows them)")
    return failures

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
    from statbench.leaderboard.repo.repository import check_repo
    from statbench.leaderboard.verify.verify import verifier_from_options

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
    """Make DIRECTORY a results repository: the marker, a README and the CI workflows
    (.github/workflows/check.yml checks and reproduces each pull request; publish.yml reproduces,
    records and publishes the board from the main branch), committed to git on branch main."""
    from statbench.leaderboard.repo.repository import init_git
    from statbench.leaderboard.repo.repository import init_repo as write_repo

    written, same = write_repo(directory)
    for path in written:
        click.echo(f"wrote {path}")
    if same:
        click.echo(f"{len(same)} file(s) already there with this content: left as they are")
    said = init_git(directory, wrote=bool(written))
    if said:
        click.echo(one_line(said))

@leaderboard.command()
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@click.argument("submissions", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option("--data-dir", "data_dirs", multiple=True, metavar="TASK=DIR",
              help="The local data of a task (repeat per task) [default: the task's data folder].")
@click.option("--since", metavar="REF", help="Only the submissions added since this git ref (a pull request's).")
@click.option("--max-cpu-minutes", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="CPU budget of one re-run; over it, the submission is not attempted.")
@click.option("--gpu", is_flag=True, help="This machine has a GPU: re-run the models that declare they need one.")
@click.option("--again", is_flag=True, help="Re-run submissions already reproduced (or not) in this environment.")
@click.option("--record/--no-record", default=True, show_default=True,
              help="Write the verdicts into the repository (reproductions/).")
@click.option("--take", type=click.Path(file_okay=False, exists=True, path_type=Path), metavar="DIR",
              help="Re-run nothing: record the verdict files another reproduce wrote in DIR (each read strictly, "
                   "kept only for a submission of REPO as it is now).")
def reproduce(repo, submissions, data_dirs, since, max_cpu_minutes, gpu, again, record, take):
    """Re-run submissions of a results repository from their declared source, in a fresh
    virtual environment, on the same data, and compare: reproduced, not reproduced (the first
    differing query and figure) or not attempted (why). One line per submission; exit 2 when
    any is not reproduced. SUBMISSIONS: folders results/TASK/LABEL/CONFIG [default: all]."""
    from statbench.leaderboard.reproduce.submissions import ReproduceOptions, reproduce_repo
    from statbench.leaderboard.verify.verify import verifier_from_options

    if since is not None and submissions:
        raise click.UsageError("give SUBMISSIONS or --since, not both")
    if take is not None:
        if submissions or since is not None:
            raise click.UsageError("--take records verdicts made elsewhere: give no SUBMISSIONS nor --since")
        from statbench.leaderboard.repo.submission import check_repository
        from statbench.leaderboard.reproduce.verdicts import take_verdicts

        taken, notes = take_verdicts(check_repository(repo), take)
        for note in notes:
            click.echo(f"note: {one_line(note)}", err=True)
        click.echo(f"{len(taken)} verdict(s) recorded in {Path(repo) / 'reproductions'}")
        return
    options = ReproduceOptions(data_dirs=dict(verifier_from_options(data_dirs, False).data_dirs),
                               max_cpu_minutes=max_cpu_minutes, gpu=gpu, again=again, record=record)
    report = reproduce_repo(repo, list(submissions), options, since=since)
    for note in report.notes:
        click.echo(f"note: {one_line(note)}", err=True)
    for reproduction in report.reproductions:
        click.echo(one_line(reproduction.line()))
    for problem in report.problems:
        click.echo(one_line(problem), err=True)
    click.echo(report.summary() + (f"; verdicts recorded in {Path(repo) / 'reproductions'}" if record else ""))
    if report.failed:
        raise SystemExit(2)

@hookimpl
def register_commands(cli):
    leaderboard.add_command(export)
    cli.add_command(leaderboard)
