"""Efficiency and cost as measured while a run computes (results.json's ``efficiency``).

Measured, never estimated: what this process did not measure is left out of the record
(a split answered by the cache has no index or search time), never written as 0.

- Per-query latency: the runner hands a retriever that declares ``query_batch`` (a
  query's ranking does not depend on the other queries of the call, so the run file is
  unchanged) that many test queries per ``search`` call and times each call; a query's
  latency is its call's seconds divided by the queries in it. Median and p95 (nearest
  rank) over the queries measured, with the batch size. A run whose retriever declares
  no batch, or that reranks, records no latency (its search time and throughput stay).
- Peak memory: ``ru_maxrss`` of this process and of its finished children (worker
  processes), the larger of the two: the peak resident set of the largest single process,
  not a sum; in MiB. Both are high-water marks over the process's life, so they are read
  before the run too (:func:`peak_mark`): a peak reached during the run is recorded; where
  the process peaked higher before the run (several runs in one process), the run's own
  peak is unknown and left out.
- Index size: bytes on disk under the model's cache folder for this configuration once
  it has indexed (the largest, for per-split indexes); absent when the model keeps
  nothing there.
- Hardware: the CPU model (``/proc/cpuinfo``, else :func:`platform.processor`), the cores
  this process may use (``sched_getaffinity``), and the CUDA device when torch is already
  loaded and initialised CUDA (torch is never imported for this; none: ``gpu`` null).
"""

from __future__ import annotations

import math
import os
import platform
import resource
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from statbench.results.record import ApiUsage, EfficiencyRecord, HardwareRecord, QueryLatency


def batches(items: Sequence, size: int | None) -> list[Sequence]:
    """``items`` in consecutive slices of ``size`` (``None``: one slice of everything)."""
    if not size or size >= len(items):
        return [items]
    return [items[i:i + size] for i in range(0, len(items), size)]


def nearest_rank(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with at least ``fraction`` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(math.ceil(fraction * len(ordered)), 1) - 1]


def query_latency(per_query_seconds: Sequence[float], batch_size: int) -> QueryLatency | None:
    """Median and p95 of the per-query latencies measured (``None`` when none were)."""
    if not per_query_seconds:
        return None
    return QueryLatency(median_ms=round(nearest_rank(per_query_seconds, 0.5) * 1000, 4),
                        p95_ms=round(nearest_rank(per_query_seconds, 0.95) * 1000, 4),
                        batch_size=batch_size, queries=len(per_query_seconds))


def peak_mark() -> tuple[int, int]:
    """The high-water marks so far: (this process, its largest finished child), as ``ru_maxrss``."""
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def peak_memory_mb(since: tuple[int, int] = (0, 0)) -> float | None:
    """The largest peak resident set of this process or one of its finished children since
    the mark ``since`` (:func:`peak_mark`), in MiB; ``None`` when it cannot be known (the
    process peaked higher before the mark than after)."""
    now = peak_mark()
    grew = [value for value, before in zip(now, since) if value > before]
    earlier = max((before for value, before in zip(now, since) if value <= before), default=0)
    if not grew or max(grew) < earlier:
        return None
    # Linux reports KiB, macOS bytes
    return round(max(grew) / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def folder_bytes(path: Path) -> int | None:
    """Bytes of the files under ``path`` (links not followed); ``None`` when it holds none."""
    if not path.is_dir():
        return None
    total, files = 0, 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
                files += 1
            except OSError:  # removed while walking (another run replacing an entry)
                continue
    return total if files else None


def hardware() -> HardwareRecord:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return HardwareRecord(cpu_model=_cpu_model(), cpu_cores=cores or None, gpu=_gpu())


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or None


def _gpu() -> str | None:
    torch = sys.modules.get("torch")  # never imported here: a run that did not load it used no GPU
    if torch is None or not torch.cuda.is_initialized():
        return None
    return torch.cuda.get_device_name(torch.cuda.current_device())


class SharedProgress:
    """A run context's ``progress`` for a model called once per batch: one bar per
    description for the whole split, not one per call (a bar asked for with the batch's
    size gets the split's)."""

    def __init__(self, progress: Callable, total: int):
        self._progress, self._total = progress, total
        self._bars: dict[str, Callable] = {}
        self.batch = 0

    def __call__(self, description: str, total: int | None = None):
        if description not in self._bars:
            self._bars[description] = self._progress(description, self._total if total == self.batch else total)
        return self._bars[description]


class Measured:
    """What the rank stage measured in this process, over the splits it computed."""

    def __init__(self):
        #: seconds per query, from the timed batches (final stage = the retriever, no reranker)
        self.latencies: list[float] = []
        self.batch_size: int | None = None
        #: test queries of the computed splits (searched, and reranked when there is a reranker)
        self.queries = 0
        self.index_bytes: int | None = None

    def add_index(self, cache_dir: Path) -> None:
        size = folder_bytes(cache_dir)
        if size is not None:
            self.index_bytes = max(size, self.index_bytes or 0)

    def record(self, timings: Mapping[str, float], api: ApiUsage | None,
               memory_since: tuple[int, int] = (0, 0)) -> EfficiencyRecord:
        """The efficiency record: hardware always; the rest only where it was measured."""
        if not self.queries:  # every split from the cache: nothing but the machine was measured here
            return EfficiencyRecord(hardware=hardware())
        timed = [timings[step] for step in ("search", "rerank") if step in timings]
        search = sum(timed)
        return EfficiencyRecord(
            index_seconds=round(timings["index"], 4) if "index" in timings else None,
            search_seconds=round(search, 4) if timed else None,
            query_latency=query_latency(self.latencies, self.batch_size) if self.batch_size else None,
            throughput_qps=round(self.queries / search, 4) if search > 0 else None,
            peak_memory_mb=peak_memory_mb(memory_since),
            index_bytes=self.index_bytes,
            hardware=hardware(),
            api=api,
        )
