"""The ``statbench`` command line. Imports stay light here: models import their heavy
dependencies only when they run, so ``statbench --help`` is fast.

The core commands are defined here (``run``, ``evaluate``, ``list``, ``plugins``,
``task``); every other command arrives through the ``register_commands(cli)`` hook, the
built-in ones (``pool``, ``compare``, ``leaderboard``) exactly like a third party's: as
plugins named in the ``statbench`` entry-point group. Plugin commands are collected when
the command line is parsed (:func:`statbench.registry.plugins.collect_commands`): a plugin may add
commands, never replace a core command or another plugin's command. ``run`` collects them in
its body instead, loading only the plugins it names where it can
(:func:`statbench.registry.plugins.narrow_registry`)."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import click

from statbench import __version__
from statbench.commands.compare import measure_label
from statbench.commands.repeated_options import refuse_repeated_options
from statbench.errors import StatbenchError, UnknownNameError, one_line
from statbench.registry.plugins import collect_commands, get_registry, narrow_registry, reset_registry
from statbench.terminal.console import ConsoleFilter, make_console, progress_bars

if TYPE_CHECKING:  # imported when needed: statbench --help stays fast
    from statbench.run.request import RunRequest

log = logging.getLogger("statbench")

#: key of the plugin command records in the root click context's ``meta``
_PLUGIN_COMMANDS = "statbench.plugin_commands"
#: core commands that load only the plugins they name (``_Group.load_plugins_for``)
_NARROWED = frozenset({"run"})


class _Group(click.Group):
    """Every failure ends as one line on stderr and exit code 2: a :class:`StatbenchError`
    says what is wrong with the input; an OS error names the path; anything else (a bug)
    names its type, with the traceback in the log (``-v`` shows it).

    Commands are the core ones (``self.commands``) plus those plugins register, collected
    once per invocation so that ``--help`` lists them and plugins installed since the last
    invocation count."""

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
            owner = self.plugin_owner(ctx, ctx.invoked_subcommand)
            if owner is not None:
                _fail(ctx, f"command {ctx.invoked_subcommand!r} of plugin {owner.name!r} "
                      f"({owner.distribution or 'in-process'}) failed: {one_line(exc)}", 2)
            _fail(ctx, f"unexpected {one_line(exc)} (a statbench bug: please report it with the output of -v)", 2)

    def parse_args(self, ctx, args):
        """The group's own options: a usage error is one line too (it is raised before invoke)."""
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _fail(ctx, f"{exc.format_message()} (see 'statbench --help')", exc.exit_code)

    def plugin_command_records(self, ctx) -> list[dict]:
        """What each plugin's ``register_commands`` hook gave (collected once per invocation)."""
        root = ctx.find_root()
        if _PLUGIN_COMMANDS not in root.meta:
            try:
                root.meta[_PLUGIN_COMMANDS] = collect_commands(set(self.commands))
            except Exception:  # noqa: BLE001 - the core commands must keep working whatever happens
                log.debug("collecting plugin commands failed", exc_info=True)
                root.meta[_PLUGIN_COMMANDS] = []
        return root.meta[_PLUGIN_COMMANDS]

    def _plugin_commands(self, ctx) -> dict[str, click.Command]:
        return {name: cmd for record in self.plugin_command_records(ctx) for name, cmd in record["commands"].items()}

    def plugin_owner(self, ctx, name: str | None):
        """The PluginInfo of the plugin that registered command ``name`` (None for a core one)."""
        if name is None or name in self.commands:
            return None
        return next((r["plugin"] for r in self.plugin_command_records(ctx) if name in r["commands"]), None)

    def list_commands(self, ctx):
        return sorted({*self.commands, *self._plugin_commands(ctx)})

    def get_command(self, ctx, name):
        if name in _NARROWED:  # its body loads the plugins it names (or all, as here)
            return self.commands[name]
        # collected even for a core command: a plugin whose hook fails is then failed for
        # every command alike (its tasks and models are dropped too)
        plugin_commands = self._plugin_commands(ctx)
        return self.commands.get(name) or plugin_commands.get(name)

    def load_plugins_for(self, ctx, names: dict[str, list[str | None]]) -> None:
        """Before a narrowed command's work: only the plugins ``names`` needs
        (:func:`~statbench.registry.plugins.narrow_registry`), else every plugin's commands
        collected, as :meth:`get_command` does for any other command."""
        try:
            narrowed = narrow_registry(names, set(self.commands))
        except Exception:  # noqa: BLE001 - as for collecting commands: the whole registry then answers
            log.debug("loading only the plugins the command names failed", exc_info=True)
            reset_registry()
            narrowed = False
        if not narrowed:
            self.plugin_command_records(ctx)


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
        log.addHandler(RichHandler(console=make_console(stderr=True), show_time=False, show_path=False))
    for handler in log.handlers:  # the console shows warnings unless -v; run.log gets every step
        handler.setLevel(logging.INFO if verbose else logging.WARNING)
        if not any(isinstance(f, ConsoleFilter) for f in handler.filters):  # what the runner keeps for run.log
            handler.addFilter(ConsoleFilter())
    log.setLevel(logging.INFO)


@cli.command()
@click.option("--task", required=True,
              help="Task name (see `statbench list tasks`), or beir:PATH for a folder in BEIR's layout.")
@click.option("--model", help="First-stage retriever (see `statbench list models`).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", help="Retriever parameter; repeatable.")
@click.option("--reranker", help="Reranker applied to the first stage or the pool.")
@click.option("--reranker-param", "reranker_params", multiple=True, metavar="KEY=VALUE", help="Reranker parameter.")
@click.option("--pool", help="Rerank this frozen candidate pool of the task instead of running --model.")
@click.option("--rerank-depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="Candidates per query handed to the reranker.")
@click.option("--split", "splits", multiple=True, help="Only these splits/folds (default: the protocol's).")
@click.option("--protocol", help="A protocol of the task (see `statbench list tasks`) [default: the task's default].")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path),
              help="Where run.trec and results.json go [default: statbench-output/TASK/CONFIG, a folder per "
                   "configuration: e.g. stard/bm25 for the defaults, stard/bm25,k1=0.9, stard/bm25@official].")
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
@click.option("--yes", is_flag=True,
              help="Let paid API/LLM rerankers send past their confirm_above threshold (as STATBENCH_ALLOW_SPEND=1).")
@click.option("--allow-empty", is_flag=True,
              help="Keep a run whose model ranks nothing for any test query (every figure 0) instead of stopping.")
def run(task, model, params, reranker, reranker_params, pool, rerank_depth, splits, protocol, data_dir, output, progress,
        yes, allow_empty):
    """Run a model on a task, write a TREC run and a results JSON, print the scores."""
    ctx = click.get_current_context()
    cli.load_plugins_for(ctx.find_root(), {"tasks": [task], "retrievers": [model], "rerankers": [reranker]})
    request = _request_of(ctx, command=shlex.join(["statbench", *sys.argv[1:]]))
    if yes:
        os.environ["STATBENCH_ALLOW_SPEND"] = "1"
    from statbench.commands.tables import print_scores
    from statbench.run.runner import execute

    console = make_console()
    with progress_bars(console, enabled=progress and console.is_terminal) as bars:
        outcome = execute(request, log, bars)
    print_scores(console, outcome.results)
    # paths as text: an --output holding '[/x]' must not stop a finished run with a markup error
    console.print(f"run: {outcome.run_path}\nresults: {outcome.results_path}", markup=False)


def _request_of(ctx: click.Context, command: str = ""):
    """The :class:`~statbench.run.request.RunRequest` of ``statbench run``'s options in
    ``ctx``: ``--param`` strings become typed values here (the core never sees strings)."""
    from statbench.run.request import request_from_cli

    options = ctx.params
    if options["reranker"] is None and ctx.get_parameter_source("rerank_depth") == click.core.ParameterSource.COMMANDLINE:
        # it would be ignored without a word, as --reranker-param without --reranker is refused
        raise click.UsageError(f"--rerank-depth {options['rerank_depth']}: no --reranker to hand the candidates to",
                               ctx)
    return request_from_cli(
        task=options["task"], model=options["model"], params=options["params"], reranker=options["reranker"],
        reranker_params=options["reranker_params"], pool=options["pool"], splits=options["splits"],
        protocol=options["protocol"], data_dir=options["data_dir"], output=options["output"], command=command,
        rerank_depth=options["rerank_depth"], allow_empty=options["allow_empty"],
    )


def request_from_argv(argv: Sequence[str]) -> RunRequest:
    """The request ``statbench ARGV`` makes, ``argv`` from ``run`` on (as
    :func:`statbench.run.request.request_to_argv` writes it): read by ``statbench run``'s
    own options, so the two are inverses (``request_to_argv(request_from_argv(a)) == a``
    for an ``a`` in that form). Options that change no request (``--no-progress``,
    ``--yes``) are read and dropped. A bad command line is one :class:`StatbenchError`."""
    args = list(argv)
    if args[:1] != ["run"]:
        raise StatbenchError(f"not a statbench run command line: {shlex.join(args)}")
    try:
        with refuse_repeated_options(run).make_context("run", args[1:]) as ctx:
            return _request_of(ctx, command=shlex.join(["statbench", *args]))
    except click.UsageError as exc:
        raise StatbenchError(f"{shlex.join(args)}: {exc.format_message()}") from None


@cli.command()
@click.argument("run_file", type=click.Path(path_type=Path))
@click.option("--task", required=True, help="Task whose qrels and measures score the run.")
@click.option("--split", "splits", multiple=True, help="Only these splits/folds (default: the protocol's).")
@click.option("--protocol", help="A protocol of the task [default: the task's default].")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--measure", "measures", multiple=True,
              help="Only this measure of the task (label or measure string, e.g. R@10); repeatable [default: all].")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def evaluate(run_file, task, splits, protocol, data_dir, measures, as_json):
    """Score an existing TREC run file with the task's measures."""
    from statbench.commands.tables import print_scores
    from statbench.scoring.evaluate_file import evaluate_run_file

    labels = _measure_labels(task, measures)  # before any work: an unknown measure costs no scoring
    scores = evaluate_run_file(run_file, task, data_dir, list(splits) or None, log, protocol=protocol).to_json()
    if labels:
        scores = _only_measures(scores, labels)
    if as_json:
        click.echo(json.dumps(scores, indent=2, ensure_ascii=False))
    else:
        print_scores(make_console(), scores)


def _measure_labels(task: str, wanted) -> list[str]:
    """The task's labels ``--measure`` names, in the order given, each resolved as
    ``compare --measure`` resolves it (a label, or a measure string one of the task's
    measures spells or means); a name the task does not score is refused with its
    measures. Checked against the task's declaration, before any run is read."""
    if not wanted:
        return []
    declared = get_registry().get("tasks", task).cls.task_info().measures
    known = [m.label for m in declared]
    labels = []
    for name in wanted:
        label = measure_label(declared, name)
        if label not in known:
            raise UnknownNameError("measure of this task", name, known)
        if label not in labels:
            labels.append(label)
    return labels


def _only_measures(scores: dict, labels: list[str]) -> dict:
    """``statbench evaluate``'s scores keeping only the measures ``labels`` (from
    :func:`_measure_labels`), in that order."""

    def only(table: dict) -> dict:
        return {label: table[label] for label in labels if label in table}

    out = dict(scores)
    out["measures"] = [next(m for m in scores["measures"] if m["label"] == label) for label in labels]
    out["aggregate"] = only(scores["aggregate"])
    out["per_query"] = {qid: only(table) for qid, table in scores["per_query"].items()}
    out["splits"] = [{**split, "scores": only(split["scores"])} for split in scores["splits"]]
    if scores.get("all_queries") is not None:
        out["all_queries"] = only(scores["all_queries"])
    if scores.get("breakdown"):
        out["breakdown"] = {group: {value: only(table) for value, table in values.items()}
                            for group, values in scores["breakdown"].items()}
    return out


@cli.command(name="list")
@click.argument("what", type=click.Choice(["tasks", "models", "measures", "benchmarks", "all"]), default="all")
@click.argument("name", required=False)
@click.option("-v", "--verbose", is_flag=True,
              help="Every detail: protocols and split sizes, all measures, every parameter's default.")
def list_(what, name, verbose):
    """List registered tasks, models, custom measures and benchmarks, one line each; NAME
    (e.g. `statbench list models bm25`, `statbench list benchmarks statutes-v1`) or -v shows
    every detail."""
    from statbench.commands.tables import print_registry

    print_registry(make_console(), get_registry(), what, verbose=verbose, name=name)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def plugins(ctx, as_json):
    """List installed plugins, what each registers, and any that failed to load."""
    from statbench.commands.tables import print_plugins

    records = cli.plugin_command_records(ctx)
    registry = get_registry()
    for record in records:  # commands are shown with the rest of what a plugin registers
        info = registry.plugins.setdefault(record["key"], record["plugin"])
        if record["commands"]:
            info.registered["commands"] = sorted(record["commands"])
        if record["plugin"].error and not info.error:
            info.error = record["plugin"].error
    refused = {record["key"]: {name: f"{reason} ({_who(owner)})" if owner else reason
                               for name, (reason, owner) in sorted(record["refused"].items())}
               for record in records if record["refused"]}
    if as_json:
        rows = []
        for key, info in registry.plugins.items():
            rows.append({**info.as_dict(), **({"refused_commands": refused[key]} if key in refused else {})})
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.markup import escape

    console = make_console()
    print_plugins(console, registry)
    for key, names in refused.items():
        for name, reason in names.items():
            console.print("[yellow]warning:[/] " + escape(f"command {name!r} of {_who(registry.plugins[key])} was "
                                                          f"refused: {reason}"))


def _who(info) -> str:
    return f"plugin {info.name!r} ({info.distribution or 'in-process'})"


@cli.group()
def task():
    """Create task plugins (see docs/beir.md)."""


@task.command(name="new")
@click.argument("name")
@click.option("--from-beir", "beir_path", required=True, type=click.Path(path_type=Path),
              help="A folder in BEIR's layout (corpus.jsonl, queries.jsonl, qrels/*.tsv).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Folder the distribution folder statbench-task-NAME is written into.")
def task_new(name, beir_path, out_dir):
    """Write an installable task plugin NAME (pyproject, JSON definition, loader, README,
    test) for the BEIR-format folder BEIR_PATH; `pip install -e` it to use --task NAME."""
    from statbench.commands.scaffold import scaffold_from_beir

    folder = scaffold_from_beir(name, beir_path, out_dir, log)
    click.echo(f"wrote {folder}")
    click.echo(f"next: pip install -e {folder} && statbench run --task {name} --model bm25 --data-dir {beir_path}")


refuse_repeated_options(cli)  # every command, core, plugin or nested: an option given twice is refused


def main():
    cli(prog_name="statbench")


if __name__ == "__main__":
    main()
