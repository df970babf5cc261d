"""Rich tables for the terminal: scores, the registry, the plugins."""

from __future__ import annotations


def print_scores(console, results: dict) -> None:
    """Measures as rows; mean ± std over splits, the pooled mean, then each split."""
    from rich.table import Table

    splits = results["splits"]
    many = len(splits) > 1
    table = Table(title=f"scores ({sum(s['n_queries'] for s in splits)} queries)")
    table.add_column("measure")
    if many:
        table.add_column("mean ± std", justify="right")
    table.add_column("all queries", justify="right")
    if many:
        for split in splits:
            table.add_column(f"{split['name']} ({split['n_queries']})", justify="right")
    for m in results["measures"]:
        label = m["label"]
        row = [label]
        if many:
            agg = results["aggregate"][label]
            row.append(f"[bold]{agg['mean']:.4f}[/] ± {agg['std']:.4f}")
        row.append(f"{results['all_queries'][label]:.4f}")
        if many:
            row.extend(f"{split['scores'][label]:.4f}" for split in splits)
        table.add_row(*row)
    console.print(table)


def print_registry(console, registry, what: str) -> None:
    from rich.table import Table

    if what in ("tasks", "all"):
        table = Table(title="tasks", caption="* run only when named: --split NAME")
        for column in ("name", "language", "description", "splits (queries)", "measures", "plugin"):
            table.add_column(column)
        for name, entry in sorted(registry.tasks.items()):
            cls = entry.cls
            table.add_row(name, cls.language, cls.description, _declared_splits(cls),
                          ", ".join(m.label for m in cls.measures), entry.plugin.name)
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
    report_plugin_errors(console, registry)


def _declared_splits(cls) -> str:
    """Splits and sizes as the task definition declares them (nothing is loaded): default
    splits plain, ``--split``-only ones marked ``*``, then the corpus size and pools."""
    spec = getattr(cls, "definition", {}).get("splits", {})
    subsets, optional = spec.get("subsets", {}), set(spec.get("optional", []))
    default = spec.get("default", list(subsets))
    shown = [f"{s} ({subsets[s]})" for s in default if s in subsets]
    shown += [f"{s}* ({n})" for s, n in subsets.items() if s in optional]
    shown += [f"{s}: training only ({n})" for s, n in subsets.items() if s not in optional and s not in default]
    if spec.get("corpus_size"):
        shown.append(f"corpus {spec['corpus_size']:,}")
    pools = list(getattr(cls, "definition", {}).get("pools", {}))
    if pools:
        shown.append("pools " + ", ".join(pools))
    return "\n".join(shown)


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
