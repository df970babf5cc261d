"""The ``runs=`` of the ``fusion`` retriever: configured statbench models, e.g.
``bm25,minilm`` or ``bm25[k1=0.9;b=0.4],biencoder[model=DIR]`` (a component's parameters in
brackets, separated by ``;``, spelled as ``--param`` spells them), each parsed and checked
as ``statbench run --model NAME --param ...`` would be, before any work."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from statbench.api import StatbenchError
from statbench.contract.params import param_items
from statbench.run.request import parse_model_params

_COMPONENT = re.compile(r"\s*([^\[\],;]+?)\s*(?:\[([^\[\]]*)\])?\s*")


@dataclass(frozen=True)
class Component:
    """One model to run and fuse: its registered name and its typed, checked parameters."""

    name: str
    params: dict[str, Any]

    @property
    def label(self) -> str:
        """``NAME`` or ``NAME[k=v;...]`` (its non-default values, as given)."""
        return self.name + (f"[{';'.join(param_items(self.params))}]" if self.params else "")


def parse_components(text: str) -> list[Component]:
    """``runs=`` -> components (names looked up, parameters typed and checked); one line
    for anything wrong."""
    parts = _split_top_level(text)
    if len(parts) < 2 or any(not part.strip() for part in parts):
        raise StatbenchError(f"fusion: runs={text!r}: give two or more models separated by commas, e.g. "
                             "runs=bm25,minilm (a model's parameters in brackets: bm25[k1=0.9;b=0.4])")
    components = []
    for part in parts:
        match = _COMPONENT.fullmatch(part)
        if match is None:
            raise StatbenchError(f"fusion: runs component {part.strip()!r}: expected NAME or NAME[KEY=VALUE;...]")
        name, inner = match.group(1), match.group(2) or ""
        if name == "fusion" or name.endswith(":fusion"):
            raise StatbenchError("fusion: a component cannot itself be a fusion (list its models instead)")
        items = [item for item in inner.split(";") if item.strip()]
        components.append(Component(name, parse_model_params("retrievers", name, items)))
    labels = [c.label for c in components]
    repeated = next((label for label in labels if labels.count(label) > 1), None)
    if repeated:
        raise StatbenchError(f"fusion: runs lists {repeated!r} twice (fusing a run with itself only reweights it)")
    return components


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts
