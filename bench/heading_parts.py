"""Which part of STARD's heading path gives `with_headings` its gain (docs/models-lexical.md).

Runs BM25 (defaults) with only one part of each article's heading path put before its text:
``law`` (the law's name, the first level) or ``sections`` (编/章/节 headings without the law's
name). Not an option of the model: the prefix is patched for this measurement only, so each
variant must run in a cache of its own (the option's cache keys do not know the variant).

    STATBENCH_CACHE=$(mktemp -d) python bench/heading_parts.py law OUT_DIR --data-dir ../shared/data/stard
"""

from __future__ import annotations

import dataclasses
import sys

SEPARATOR = " › "


def main(variant: str, output: str, *rest: str) -> None:
    from statbench.commands.cli import cli
    from statbench.models.lexical import base

    def part(path: str) -> str:
        levels = path.split(SEPARATOR)
        return levels[0] if variant == "law" else SEPARATOR.join(levels[1:])

    def prefixed(corpus):
        return [dataclasses.replace(d, text=f"{part(d.fields[base.HEADING_FIELD])}\n{d.text}")
                if d.fields.get(base.HEADING_FIELD) else d for d in corpus]

    if variant not in ("law", "sections"):
        raise SystemExit("variant: law or sections")
    base.with_headings = prefixed
    cli(["run", "--task", "stard", "--model", "bm25", "--param", "with_headings=true", "--output", output,
         "--no-progress", *rest])


if __name__ == "__main__":
    main(*sys.argv[1:])
