"""Options given twice: click keeps the last value of a single-valued option and drops the
others without a word (``--measure MRR@10 --measure R@10`` tested R@10 only). Every
command of the CLI, core or plugin, nested groups included, refuses that with one line
instead; an option meant to repeat is declared ``multiple=True`` (or ``count=True``) and
accumulates.

The check sits in each command's parser (:func:`refuse_repeated_options` wraps
``make_parser``), which records every option in the order given, repeats included; a
group wraps each command it resolves, so commands a plugin registers are covered too."""

from __future__ import annotations

import click

_WRAPPED = "_statbench_refuses_repeats"


def refuse_repeated_options(command: click.Command | None) -> click.Command | None:
    """``command`` (and, for a group, every command it resolves) refusing a single-valued
    option given twice with a :class:`click.UsageError` (one line, exit code 2). Idempotent."""
    if command is None or getattr(command, _WRAPPED, False):
        return command
    setattr(command, _WRAPPED, True)
    make_parser = command.make_parser

    def strict_make_parser(ctx: click.Context):
        parser = make_parser(ctx)
        parse = parser.parse_args

        def parse_args(args):
            opts, rest, order = parse(args)
            refuse_repeats(ctx, order)
            return opts, rest, order

        parser.parse_args = parse_args
        return parser

    command.make_parser = strict_make_parser
    if isinstance(command, click.Group):
        get_command = command.get_command
        command.get_command = lambda ctx, name: refuse_repeated_options(get_command(ctx, name))
    return command


def single_valued(param: click.Parameter) -> bool:
    """An option whose second occurrence would replace its first (``--help``/``--version``,
    which act at once, excepted)."""
    return (isinstance(param, click.Option) and not param.multiple and not param.count
            and not (param.is_eager and not param.expose_value))


def refuse_repeats(ctx: click.Context, order) -> None:
    seen: set[int] = set()
    for param in order:
        if not single_valued(param):
            continue
        if id(param) in seen:
            spelling = "/".join(param.opts + param.secondary_opts)
            raise click.UsageError(f"option {spelling} given twice; it is not repeatable (the second would "
                                   "silently replace the first): give it once", ctx)
        seen.add(id(param))
