"""A breakdown of several results on one data set as a Markdown table (bench/results/breakdowns/):
one row per value of the group (laws: most queries first), one column per result, the
measure's mean over the queries of that value, and each value's query count.

    python bench/breakdown_table.py --group law --measure R@100 --min-queries 10 \\
        bench/results/breakdowns/stard/*/results.json > bench/results/breakdowns/stard_law.md

Refuses (exit 2) results of other data or other queries (like with like), and results that
lack the group (written before breakdowns by law existed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path


def _name(record) -> str:
    """The model and the parameters its command set (``--param``), as the command spells them."""
    words = record.command.split()
    params = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--param"]
    return record.model.name + (f" ({', '.join(params)})" if params else "")


def table(paths: list[Path], group: str, measure: str, min_queries: int) -> str:
    from statbench.errors import StatbenchError
    from statbench.results.record import Results

    records = [Results.read(p) for p in paths]
    first = records[0]
    for path, record in zip(paths, records):
        if record.task.data_checksum != first.task.data_checksum or set(record.per_query) != set(first.per_query):
            raise StatbenchError(f"{path}: other data or other queries than {paths[0]}: not set side by side")
        if group not in (record.breakdown_groups or {}):
            raise StatbenchError(f"{path}: no {group} breakdown (results written before it existed: run it again)")
        if record.breakdown_groups[group] != first.breakdown_groups[group]:
            raise StatbenchError(f"{path}: its {group} values cover other queries than {paths[0]}'s")
    formed = first.breakdown_groups[group]
    shown = [v for v in formed.values if formed.n_queries[v] >= min_queries]
    names = [_name(r) for r in records]
    lines = [f"| {group} | queries | " + " | ".join(names) + " |",
             "|---|---:|" + "---:|" * len(records)]
    means = [r.aggregate[measure].mean for r in records]
    lines.append(f"| all queries (mean over splits) | {first.n_queries} | "
                 + " | ".join(f"**{m:.3f}**" if m == max(means) else f"{m:.3f}" for m in means) + " |")
    for value in shown:
        cells = [r.breakdown[group][value][measure] for r in records]
        best = max(cells)
        lines.append(f"| {value} | {formed.n_queries[value]} | "
                     + " | ".join(f"**{c:.3f}**" if c == best else f"{c:.3f}" for c in cells) + " |")
    rest = [v for v in formed.values if formed.n_queries[v] < min_queries]
    head = (f"{measure} by {group} on {first.task.name} ({first.n_queries} queries, data sha256 "
            f"{first.task.data_checksum[:12]}…; {first.task.protocol or 'splits'} pooled over splits). "
            f"Value of a query: {formed.rule}. The {len(shown)} values with at least {min_queries} queries, of "
            f"{len(formed.values)}; the {len(rest)} others ({sum(formed.n_queries[v] for v in rest)} query-value pairs) "
            "are in each results.json. Best per row in bold.")
    hardest = sorted(shown, key=lambda v: statistics.fmean(r.breakdown[group][v][measure] for r in records))[:5]
    tail = ("Hardest (lowest mean over the results above): "
            + "; ".join(f"{v} ({statistics.fmean(r.breakdown[group][v][measure] for r in records):.3f}, "
                        f"n={formed.n_queries[v]})" for v in hardest) + ".")
    commands = "\n".join(f"- {name}: `{r.command}`" for name, r in zip(names, records))
    return f"{head}\n\n" + "\n".join(lines) + f"\n\n{tail}\n\nCommands:\n\n{commands}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--group", default="law")
    parser.add_argument("--measure", default="R@100")
    parser.add_argument("--min-queries", type=int, default=10)
    args = parser.parse_args()
    from statbench.errors import StatbenchError

    try:
        sys.stdout.write(table(args.results, args.group, args.measure, args.min_queries))
    except StatbenchError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
