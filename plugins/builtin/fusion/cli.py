"""``statbench fuse``: runs of one task fused by ranx into an ordinary output set
(:mod:`statbench.models.fusion.fuse`). Registered by :mod:`.plugin` through the
``register_commands`` hook, like a third party's command."""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

import click

from statbench.models.fusion.engine import AUTO, DEFAULT_K, METHODS, NORMS, FusionSettings, parse_weights
from statbench.terminal.console import make_console

log = logging.getLogger("statbench")


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--task", required=True, help="Task the runs belong to (its judgements score the fused run).")
@click.option("--method", default="rrf", show_default=True, metavar="METHOD",
              help=f"ranx fusion method: {', '.join(METHODS)} (condorcet is refused: not deterministic).")
@click.option("--norm", type=click.Choice((AUTO, *NORMS)), default=AUTO, show_default=True,
              help="Score normalisation before fusing (auto: min-max for score-based methods, none for rank-based; "
                   "borda only before a score-based method).")
@click.option("--weights", default="", help="wsum/wmnz: one weight per input, comma-separated (e.g. 0.3,0.7).")
@click.option("--k", "k", type=click.IntRange(min=1), default=DEFAULT_K, show_default=True, help="RRF's k.")
@click.option("--split", "splits", multiple=True, help="Fuse and score only these splits (repeatable).")
@click.option("--protocol", default=None, help="Protocol of the inputs [default: the one their results record].")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
@click.option("--output", required=True, type=click.Path(path_type=Path), help="Output folder (replaced as a unit).")
def fuse(inputs, task, method, norm, weights, k, splits, protocol, data_dir, output):
    """Fuse INPUTS (TREC run files or statbench output folders) of one task, split by split."""
    # the command body's own: `statbench --help` imports this module, not the machinery behind the command
    from statbench.models.fusion.fuse import FuseRequest
    from statbench.models.fusion.fuse import fuse as run_fuse

    settings = FusionSettings(method=method, norm=norm, weights=parse_weights(weights), k=k)
    request = FuseRequest(sources=list(inputs), task=task, settings=settings, output=output, data_dir=data_dir,
                          splits=list(splits), protocol=protocol,
                          command=shlex.join(["statbench", *sys.argv[1:]]) if sys.argv[1:2] == ["fuse"] else "")
    record = run_fuse(request, log)
    console = make_console()
    shown = "  ".join(f"{label} {stat.mean:.4f}" for label, stat in list(record.aggregate.items())[:6])
    console.print(f"{record.model.description}: {shown}")
    console.print(f"wrote {output}")
