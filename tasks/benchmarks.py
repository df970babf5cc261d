"""The built-in benchmark ``statutes-v1``: statute retrieval in four languages, each task
scored by the primary measure its definition declares (tasks/*.json ``primary_measure``)
on its default protocol.

A new task version, protocol or measure is a new benchmark version (``statutes-v2``):
results of ``statutes-v1`` stay comparable with each other.
"""

from __future__ import annotations

from statbench.api import Benchmark, BenchmarkTask, hookimpl

STATUTES_V1 = Benchmark(
    name="statutes",
    version="1",
    description="Statutory article retrieval: Chinese (STARD), English (UK statutes, COLIEE), French (BSARD, LLeQA)",
    tasks=(
        BenchmarkTask(task="stard", measure="R@100", protocol="5-fold", version="1"),
        BenchmarkTask(task="ukstat", measure="nDCG@10", protocol="test", version="1"),
        BenchmarkTask(task="coliee", measure="F2@1", protocol="R05", version="1"),
        BenchmarkTask(task="bsard", measure="R@100", protocol="test", version="1"),
        BenchmarkTask(task="lleqa", measure="R@100", protocol="test", version="1"),
    ),
)


@hookimpl
def register_benchmarks(register):
    register(STATUTES_V1)
