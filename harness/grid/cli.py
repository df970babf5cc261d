"""``statbench grid EXPERIMENT.yaml``: a whole experiment (tasks x models x parameter
grids x rerankers) as ordinary ``statbench run`` cells, on this machine, a Ray cluster or
Slurm (see docs/grid.md). A built-in plugin: registered through ``register_commands``."""

from __future__ import annotations

from pathlib import Path

import click

from statbench.errors import StatbenchError
from statbench.registry.hookspecs import hookimpl

EXECUTORS = ("local", "sequential", "ray", "slurm", "slurm-local")


@click.command()
@click.argument("experiment", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--task", "tasks", multiple=True, help="Without a file: a task to run (repeatable).")
@click.option("--model", "models", multiple=True, help="Without a file: a model to run (repeatable).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Without a file: the task's folder.")
@click.option("--protocol", help="Without a file: the tasks' protocol.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path),
              help="The grid's output root [default: the file's 'output', else statbench-output/grid/NAME].")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="Where cells run (slurm-local: submitit's local executor, for trying a Slurm setup).")
@click.option("--workers", type=click.IntRange(min=1),
              help="Local worker slots, or the CPUs of a Ray cluster started here [default: the machine's cores].")
@click.option("--ray-address", help="A running Ray cluster: HOST:PORT of its head (`ray start --head --port PORT`), "
              "'auto' (the one started on this machine) or ray://HOST:10001 [default: $RAY_ADDRESS, else start one "
              "here].")
@click.option("--slurm-partition", help="Slurm partition [default: the file's slurm.partition].")
@click.option("--slurm-array-parallelism", type=click.IntRange(min=1),
              help="At most this many cells of an array run at once [default: the file's slurm.array_parallelism].")
@click.option("--retry", type=click.IntRange(min=0), default=0, show_default=True,
              help="Run a failed cell up to N more times.")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path),
              help="The statbench cache the cells use (STATBENCH_CACHE) [default: the current one].")
@click.option("--check", "check", is_flag=True, help="Compare the cells with the file's expected figures (OK/FAIL).")
@click.option("--live/--no-live", default=None, help="A live table of the cells [default: on a terminal, local runs].")
@click.option("--dry-run", is_flag=True, help="List the cells (and whether each is done) without running any.")
def grid(experiment, tasks, models, data_dir, protocol, output, executor, workers, ray_address, slurm_partition,
         slurm_array_parallelism, retry, cache, check, live, dry_run):
    """Run a whole experiment: every cell an ordinary `statbench run` with its own output
    folder and results.json. Cells already done for the same configuration and data are
    skipped; failed cells are reported without stopping the others (exit code 2)."""
    # the command body's own: `statbench --help` imports this module, not the grid machinery
    from statbench.grid.board import Board
    from statbench.grid.cells import expand
    from statbench.grid.check import print_check, print_expected
    from statbench.grid.executors import make_executor
    from statbench.grid.experiment import GridRunner, build_leaderboard, print_summary, write_summary
    from statbench.grid.spec import read_grid, shortcut_spec
    from statbench.terminal.console import make_console

    if experiment is not None and (tasks or models or data_dir or protocol):
        raise StatbenchError("give an experiment file or --task/--model, not both")
    spec = read_grid(experiment) if experiment is not None else shortcut_spec(tasks, models, data_dir, protocol,
                                                                               output)
    root = Path(output or spec.output).resolve()
    cells = expand(spec, root)
    console = make_console()
    if check and not spec.expected:
        raise StatbenchError(f"--check: {spec.path} lists no expected figures")
    runner_executor = make_executor(
        executor, root=root, workers=workers, ray_address=ray_address,
        slurm_partition=slurm_partition or spec.slurm_partition,
        slurm_array_parallelism=slurm_array_parallelism or spec.slurm_array_parallelism,
        slurm_additional=spec.slurm_additional)
    show_live = (console.is_terminal and executor in ("local", "sequential")) if live is None else live
    board = Board(console, [c.id for c in cells], show_live)
    runner = GridRunner(spec, runner_executor, root=root, retry=retry, cache=cache, board=board)
    runner.check_splits()
    if dry_run:
        for cell in cells:
            state = "done" if runner.is_done(cell) else "to run"
            console.print(f"{state:7} {cell.id}\n        {cell.command}", markup=False, highlight=False, soft_wrap=True)
        if check:
            print_expected(console, spec.expected)
        return
    with board.showing():
        report = runner.run(cells)
    if check:
        runner.check()
    summary = write_summary(report, spec, executor)
    print_summary(console, report)
    if check:
        print_check(console, report.check)
    if spec.leaderboard is not None and not report.failed:
        build_leaderboard(report, spec.leaderboard.resolve(), spec.path if spec.path.is_file() else None)
    for leak in report.leaks:
        console.print(f"tune: {leak}", markup=False, highlight=False, soft_wrap=True)
    ran = len(report.worked)
    console.print(f"{len(report.statuses)} cells: {ran} run now, "
                  f"{sum(1 for s in report.statuses.values() if s.status == 'skipped')} already done; "
                  f"{report.seconds:.1f} s; summary: {summary}", markup=False, highlight=False, soft_wrap=True)
    if report.failed:
        first = report.failed[0]
        raise StatbenchError(f"{len(report.failed)} of {len(report.statuses)} cells failed (first: {first.cell.id}: "
                             f"{first.error}); see {summary} and {root / 'logs'}")
    failing = [r for r in report.check if r.counts]
    other = [r for r in report.check if r.status == "FAIL" and not r.counts]
    if other:
        console.print(f"--check: {len(other)} FAIL on other data than the paper's (not counted: not a "
                      "comparison)", markup=False, highlight=False, soft_wrap=True)
    if failing:
        first = failing[0]
        raise StatbenchError(f"--check: {len(failing)} of {len(report.check)} expected figures FAIL (first: "
                             f"{first.row} {first.measure}" + (f": {first.reason}" if first.reason else "") + ")")


@hookimpl
def register_commands(cli):
    cli.add_command(grid)
