"""Rich tables for the terminal: scores, the registry, the plugins."""

from __future__ import annotations


def print_scores(console, results) -> None:
    """Measures as rows; mean ± std over splits, the pooled mean, then each split.
    ``results``: a :class:`~statbench.results.RunScores` (a ``Results`` is one), or the
    JSON dict ``statbench evaluate`` gives."""
    from rich.table import Table

    from .results import as_scores

    scores = as_scores(results)
    splits = scores.splits
    many = len(splits) > 1
    table = Table(title=f"scores ({scores.n_queries} queries)")
    table.add_column("measure")
    if many:
        table.add_column("mean ± std", justify="right")
    table.add_column("all queries", justify="right")
    if many:
        for split in splits:
            table.add_column(f"{split.name} ({split.n_queries})", justify="right")
    for label in scores.labels:
        row = [label]
        if many:
            agg = scores.aggregate[label]
            row.append(f"[bold]{agg.mean:.4f}[/] ± {agg.std:.4f}")
        row.append(f"{scores.all_queries[label]:.4f}")
        if many:
            row.extend(f"{split.scores[label]:.4f}" for split in splits)
        table.add_row(*row)
    console.print(table)


def print_registry(console, registry, what: str) -> None:
    from rich.table import Table

    if what in ("tasks", "all"):
        table = Table(title="tasks", caption="* the default protocol; another runs with --protocol NAME")
        for column in ("name", "language", "description", "protocols: splits (queries)", "measures", "plugin"):
            table.add_column(column)
        for name, entry in sorted(registry.tasks.items()):
            info = entry.cls.task_info()
            measures = ", ".join(f"{m.label}{' (primary)' if m.label == info.primary else ''}" for m in info.measures)
            table.add_row(name, info.language, info.description, _declared_protocols(info), measures,
                          entry.plugin.name)
        console.print(table)
    if what in ("models", "all"):
        table = Table(title="models")
        for column in ("name", "kind", "family", "description", "parameters", "plugin"):
            table.add_column(column)
        for kind in ("retrievers", "rerankers"):
            for name, entry in sorted(getattr(registry, kind).items()):
                cls = entry.cls
                params = ", ".join(f"{k}={v}" for k, v in cls.defaults().items())
                table.add_row(name, kind[:-1], cls.family, cls.description, params, entry.plugin.name)
        console.print(table)
    if what in ("measures", "all") and registry.measures:
        table = Table(title="custom measures (use like ir-measures names, e.g. F2@10)")
        for column in ("name", "description", "parameters", "plugin"):
            table.add_column(column)
        for name, entry in sorted(registry.measures.items()):
            params = ", ".join(f"{k}={spec.default}" for k, spec in entry.cls.param_specs().items())
            table.add_row(name, entry.cls.description, params, entry.plugin.name)
        console.print(table)
    report_plugin_errors(console, registry)


def _declared_protocols(info) -> str:
    """Protocols and split sizes as the task declares them (nothing is loaded): the default
    protocol first (marked ``*``), training sets, the corpus size and the pools."""
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
    if sizes.get("corpus"):
        lines.append(f"corpus {sizes['corpus']:,}")
    if info.pools:
        lines.append("pools " + ", ".join(p.name for p in info.pools))
    return "\n".join(lines)


def print_plugins(console, registry) -> None:
    from rich.table import Table

    table = Table(title="plugins")
    for column in ("plugin", "distribution", "version", "registers", "status"):
        table.add_column(column)
    for key, info in sorted(registry.plugins.items()):
        registers = "; ".join(f"{kind}: {', '.join(sorted(names))}" for kind, names in info.registered.items() if names)
        status = f"[red]failed: {info.error}" if info.error else "[green]ok"
        table.add_row(info.name, info.distribution or "(in-process)", info.version or "", registers, status)
    console.print(table)
    report_plugin_errors(console, registry)


def report_plugin_errors(console, registry) -> None:
    for info in registry.errors:
        console.print(f"[yellow]warning:[/] plugin {info.name!r} ({info.distribution or 'in-process'}) "
                      f"failed to load and was skipped: {info.error}")
    for (kind, name), providers in sorted(registry.clashes.items()):
        console.print(f"[yellow]warning:[/] {kind[:-1]} {name!r} is registered by {len(providers)} plugins: "
                      f"{', '.join(e.qualified for e in providers)}; the plain name selects "
                      f"{providers[0].qualified} ({registry.rule(providers)}), a qualified name selects any")
