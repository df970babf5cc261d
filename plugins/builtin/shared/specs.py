"""Parameter declarations shared by the built-in models (see :mod:`statbench.contract.params`).

``with_defaults`` gives a preset or subclass other defaults while keeping each
parameter's constraints and description (a plain ``{**SPEC, "model": "x"}`` would replace
the declared parameter by an unconstrained one)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from statbench.api import Param

#: A torch device: ``auto`` (CUDA when available, else CPU), ``cpu``, ``mps``, ``cuda``, ``cuda:N``.
DEVICE = Param("auto", "torch device: auto (CUDA when available, else CPU), cpu, mps, cuda or cuda:N",
               pattern=r"auto|cpu|mps|cuda(?::\d+)?", pattern_text="one of 'auto', 'cpu', 'mps', 'cuda', 'cuda:N'")


def with_defaults(spec: Mapping[str, Any], **defaults) -> dict:
    """``spec`` with other default values, each parameter keeping its declaration."""
    out = dict(spec)
    for key, value in defaults.items():
        declared = out.get(key)
        out[key] = dataclasses.replace(declared, default=value) if isinstance(declared, Param) else value
    return out


#: Seeds go to ``random``, numpy and torch; numpy takes 0 .. 2**32 - 1.
SEED = Param(42, "random seed (initialisation, shuffling, sampling)", min=0, max=2**32 - 1)
BATCH_SIZE = Param(32, "texts encoded per batch", min=1)
