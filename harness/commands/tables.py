"""Rich tables for the terminal: scores, the registry, the plugins.

Every text a plugin, a task or a user gave (names, descriptions, parameter values, error
messages, paths) is escaped before rich reads it: a description holding ``[/bold]`` is
text, not markup (unescaped, rich stopped ``statbench list`` with a MarkupError)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from statbench.commands.benchmark_table import print_benchmarks
from statbench.errors import UnknownNameError
from statbench.loading.loadcache import loaded_sizes
from statbench.results.record import as_scores


def _esc(text) -> str:
    return escape(str(text))


def _add_row(table, *cells) -> None:
    """A row of plain texts (escaped)."""
    table.add_row(*(_esc(cell) for cell in cells))


def print_scores(console, results) -> None:
    """Measures as rows; mean ± std over splits, the pooled mean, then each split.
    ``results``: a :class:`~statbench.results.record.RunScores` (a ``Results`` is one), or the
    JSON dict ``statbench evaluate`` gives."""
    scores = as_scores(results)
    splits = scores.splits
    many = len(splits) > 1
    # a foreign run with ties was put in one declared order: say which, under the table
    caption = f"ties scored in one order: {_esc(scores.tie_order)}" if scores.tie_order else None
    table = Table(title=f"scores ({scores.n_queries} queries)", caption=caption)
    table.add_column("measure")
    if many:
        table.add_column("mean ± std", justify="right")
    table.add_column("all queries", justify="right")
    if many:
        for split in splits:
            table.add_column(_esc(f"{split.name} ({split.n_queries})"), justify="right")
    for label in scores.labels:
        row = [_esc(label)]
        if many:
            agg = scores.aggregate[label]
            row.append(f"[bold]{agg.mean:.4f}[/] ± {agg.std:.4f}")
        row.append(f"{scores.all_queries[label]:.4f}")
        if many:
            row.extend(f"{split.scores[label]:.4f}" for split in splits)
        table.add_row(*row)
    console.print(table)


#: the kinds ``statbench list`` shows, and the registry table of each
LIST_KINDS = {"tasks": ("tasks",), "models": ("retrievers", "rerankers"), "measures": ("measures",)}


def print_registry(console, registry, what: str, verbose: bool = False, name: str | None = None) -> None:
    """``statbench list``: one line per task, model, custom measure and benchmark; every detail (the
    protocols with their splits' sizes, all measures, every parameter) with ``verbose``,
    or for the one ``name`` (looked up as ``--task``/``--model`` would: ``DIST:NAME`` too).
    A task's corpus shows its declared size and, when a run has loaded it here, the loaded
    one."""
    if what == "benchmarks":
        print_benchmarks(console, registry, verbose=verbose, name=name)
        report_plugin_errors(console, registry)
        return
    kinds = list(LIST_KINDS) if what == "all" else [what]
    only = None
    if name is not None:
        only = _find(registry, kinds, name)
        kinds = [only[0]]
    for kind in kinds:
        entries = _entries(registry, kind, only)
        if not entries:
            continue
        if verbose or only is not None:
            _DETAILED[kind](console, entries)
        else:
            _compact(console, kind, entries)
    if what == "all" and only is None:
        print_benchmarks(console, registry, verbose=verbose)
    if not verbose and only is None:
        console.print("[dim]one line each: `statbench list -v` shows every detail, `statbench list tasks NAME` "
                      "(or models NAME) one of them[/]")
    report_plugin_errors(console, registry)


def _find(registry, kinds: list[str], name: str):
    """(list kind, registry table, entry) of ``name`` among ``kinds``; unknown: refused
    with the choices."""
    choices = []
    for kind in kinds:
        for table in LIST_KINDS[kind]:
            try:
                return kind, table, registry.get(table, name)
            except UnknownNameError as exc:
                choices.extend(exc.choices)
    raise UnknownNameError({"tasks": "task", "models": "model", "measures": "custom measure"}[kinds[0]]
                           if len(kinds) == 1 else "task, model or measure", name, set(choices))


def _entries(registry, kind: str, only) -> list[tuple[str, str, object]]:
    """(registry table, name, entry) of a list kind, sorted; just ``only`` when given."""
    if only is not None:
        _, table, entry = only
        return [(table, entry.name, entry)]
    return [(table, name, entry) for table in LIST_KINDS[kind]
            for name, entry in sorted(getattr(registry, table).items())]


def _compact(console, kind: str, entries) -> None:
    table = Table(title=f"{kind} ({len(entries)})", title_justify="left", box=None, pad_edge=False)
    columns = {"tasks": ("name", "lang", "protocols (* default)", "primary", "corpus", "plugin"),
               "models": ("name", "kind", "family", "description", "plugin"),
               "measures": ("name", "description", "plugin")}[kind]
    for column in columns:
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=72 if column == "description" else None)
    for registry_table, name, entry in entries:
        cls = entry.cls
        if kind == "tasks":
            info = cls.task_info()
            default = info.protocol()
            protocols = ", ".join(f"{p.name}{'*' if p is default else ''}" for p in info.protocols)
            _add_row(table, name, info.language, protocols or "(the loader's splits)", info.primary,
                     _corpus_sizes(info) or "-", entry.plugin.name)
        elif kind == "models":
            _add_row(table, name, registry_table[:-1], cls.family, cls.description, entry.plugin.name)
        else:
            _add_row(table, name, cls.description, entry.plugin.name)
    console.print(table)


def _corpus_sizes(info) -> str:
    """``55,348`` as declared, plus what the last run here loaded when it differs (never
    loads anything: :func:`statbench.loading.loadcache.loaded_sizes`)."""
    declared = info.sizes.get("corpus")
    loaded = (loaded_sizes(info.name) or {}).get("corpus")
    text = f"{declared:,}" if declared else ""
    if loaded is not None and loaded != declared:
        text += f" (loaded {loaded:,})" if declared else f"{loaded:,} loaded (none declared)"
    return text


def _tasks_table(console, entries) -> None:
    table = Table(title="tasks", caption="* the default protocol; another runs with --protocol NAME")
    for column in ("name", "language", "description", "protocols: splits (queries)", "measures", "plugin"):
        table.add_column(column)
    for _, name, entry in entries:
        info = entry.cls.task_info()
        measures = ", ".join(f"{m.label}{' (primary)' if m.label == info.primary else ''}" for m in info.measures)
        _add_row(table, name, info.language, info.description, _declared_protocols(info), measures, entry.plugin.name)
    console.print(table)


def _models_table(console, entries) -> None:
    table = Table(title="models")
    for column in ("name", "kind", "family", "description", "parameters", "plugin"):
        table.add_column(column)
    for registry_table, name, entry in entries:
        cls = entry.cls
        params = ", ".join(f"{k}={v}" for k, v in cls.defaults().items())
        _add_row(table, name, registry_table[:-1], cls.family, cls.description, params, entry.plugin.name)
    console.print(table)


def _measures_table(console, entries) -> None:
    table = Table(title="custom measures (use like ir-measures names, e.g. F2@10)")
    for column in ("name", "description", "parameters", "plugin"):
        table.add_column(column)
    for _, name, entry in entries:
        params = ", ".join(f"{k}={spec.default}" for k, spec in entry.cls.param_specs().items())
        _add_row(table, name, entry.cls.description, params, entry.plugin.name)
    console.print(table)


_DETAILED = {"tasks": _tasks_table, "models": _models_table, "measures": _measures_table}


def _declared_protocols(info) -> str:
    """Protocols and split sizes as the task declares them (nothing is loaded): the default
    protocol first (marked ``*``), training sets, the corpus size (and the loaded one, when
    a run here loaded another) and the pools."""
    sizes = dict(info.sizes)
    default = info.protocol()
    lines = []
    for protocol in sorted(info.protocols, key=lambda p: p is not default):
        splits = ", ".join(f"{s} ({sizes[s]})" if s in sizes else s for s in protocol.splits)
        lines.append(f"{protocol.name}{'*' if protocol is default else ''}: {splits}")
    in_protocols = {s for p in info.protocols for s in p.splits}
    training = [f"{s} ({n})" for s, n in sizes.items() if s not in in_protocols and s != "corpus"]
    if training:
        lines.append("training only: " + ", ".join(training))
    if _corpus_sizes(info):
        lines.append(f"corpus {_corpus_sizes(info)}")
    if info.pools:
        lines.append("pools " + ", ".join(p.name for p in info.pools))
    return "\n".join(lines)


def print_plugins(console, registry) -> None:
    table = Table(title="plugins")
    for column in ("plugin", "distribution", "version", "registers", "status"):
        table.add_column(column)
    for key, info in sorted(registry.plugins.items()):
        registers = "; ".join(f"{kind}: {', '.join(sorted(names))}" for kind, names in info.registered.items() if names)
        status = f"[red]failed: {_esc(info.error)}" if info.error else "[green]ok"
        table.add_row(_esc(info.name), _esc(info.distribution or "(in-process)"), _esc(info.version or ""),
                      _esc(registers), status)
    console.print(table)
    report_plugin_errors(console, registry)


def report_plugin_errors(console, registry) -> None:
    for info in registry.errors:
        console.print("[yellow]warning:[/] " + _esc(f"plugin {info.name!r} ({info.distribution or 'in-process'}) "
                                                    f"failed to load and was skipped: {info.error}"))
    for (kind, name), providers in sorted(registry.clashes.items()):
        console.print("[yellow]warning:[/] " + _esc(
            f"{kind[:-1]} {name!r} is registered by {len(providers)} plugins: "
            f"{', '.join(e.qualified for e in providers)}; the plain name selects "
            f"{providers[0].qualified} ({registry.rule(providers)}), a qualified name selects any"))
