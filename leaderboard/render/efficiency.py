"""What a row cost to produce, as the board shows it: the ``efficiency`` record of a result
(index time, query latency, throughput, memory, index size, hardware, what a paid reranker
was sent and what it cost) turned into columns, and the Pareto frontier of quality against
latency or cost.

Measured, never estimated: a figure the result does not record is ``None`` here and a blank
cell on the board, never 0. Every figure is the submitter's measurement: its column says it
is declared (:data:`DECLARED`). The record is read by key, whether the results type holds it as
a typed record or as a plain mapping."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def field_of(record, name: str):
    """``record.name`` (a typed record) or ``record[name]`` (a mapping); None when absent."""
    if record is None:
        return None
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


def efficiency_of(results):
    """The result's efficiency record, None when it records none."""
    return field_of(results, "efficiency")


def number(value: float) -> str:
    """A measured figure with the digits that matter: ``1,234``, ``123``, ``12.3``, ``1.23``,
    ``0.0123`` (the same value always reads the same: no locale, no time)."""
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def size_text(n_bytes: int) -> str:
    value, unit = float(n_bytes), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{n_bytes} B" if unit == "B" else f"{number(value)} {unit}"


def hardware_text(hardware) -> str | None:
    """``Intel Xeon (16 cores), NVIDIA H100`` from the recorded hardware; None if not recorded."""
    if hardware is None:
        return None
    cpu, cores, gpu = field_of(hardware, "cpu_model"), field_of(hardware, "cpu_cores"), field_of(hardware, "gpu")
    parts = []
    if cpu or cores is not None:
        parts.append(f"{cpu or 'CPU'}{f' ({cores} cores)' if cores is not None else ''}")
    if gpu:
        parts.append(str(gpu))
    return ", ".join(parts) or None


#: what every efficiency figure is on a board: the submitter's measurement, shown as declared
#: (``--verify`` checks only that the figures agree with each other and with the run's
#: splits: :mod:`statbench.scoring.efficiency_checks`, :mod:`~statbench.leaderboard.verify.claims`)
DECLARED = "declared: as the run that wrote the results measured it, not re-measured"


@dataclass(frozen=True)
class Column:
    key: str  #: sort key in the page's JSON (``e:KEY``)
    header: str
    what: str  #: what the figure is

    @property
    def title(self) -> str:
        """The header's tooltip: what the figure is, and that it is declared."""
        return f"{self.what} ({DECLARED})"


#: the efficiency columns of every board, in order
COLUMNS = (
    Column("index_seconds", "Index time", "seconds to build the index (all splits)"),
    Column("latency_median", "Latency p50", "median query latency in milliseconds (per query, at the batch size shown)"),
    Column("latency_p95", "Latency p95", "95th percentile query latency in milliseconds"),
    Column("batch_size", "Batch", "queries per batch when the latency was measured"),
    Column("throughput", "Throughput", "queries per second"),
    Column("peak_memory", "Peak memory", "peak resident memory of the run"),
    Column("index_size", "Index size", "size of the index on disk"),
    Column("hardware", "Hardware", "CPU model and cores, GPU"),
    Column("api_documents", "Docs sent", "documents sent to a paid reranking API"),
    Column("api_tokens", "Tokens sent", "tokens sent to a paid reranking API"),
    Column("cost", "Cost (USD)", "what the API calls cost at the recorded price"),
)


def efficiency_cells(results) -> list[dict]:
    """One cell per :data:`COLUMNS` entry: ``text`` (blank when not measured), ``value``
    (the number it sorts by, None when not measured) and ``title`` (a tooltip, may be '')."""
    record = efficiency_of(results)
    latency = field_of(record, "query_latency")
    api = field_of(record, "api")
    hardware = hardware_text(field_of(record, "hardware"))
    price = field_of(api, "price")
    raw = {
        "index_seconds": field_of(record, "index_seconds"),
        "latency_median": field_of(latency, "median_ms"),
        "latency_p95": field_of(latency, "p95_ms"),
        "batch_size": field_of(latency, "batch_size"),
        "throughput": field_of(record, "throughput_qps"),
        "peak_memory": field_of(record, "peak_memory_mb"),
        "index_size": field_of(record, "index_bytes"),
        "api_documents": field_of(api, "documents_sent"),
        "api_tokens": field_of(api, "tokens_sent"),
        "cost": field_of(api, "cost_usd"),
    }
    text = {
        "index_seconds": lambda v: f"{number(v)} s",
        "latency_median": lambda v: f"{number(v)} ms",
        "latency_p95": lambda v: f"{number(v)} ms",
        "batch_size": lambda v: f"{v:,}",
        "throughput": lambda v: f"{number(v)} q/s",
        "peak_memory": lambda v: f"{number(v)} MB",
        "index_size": size_text,
        "api_documents": lambda v: f"{v:,}",
        "api_tokens": lambda v: f"{v:,}",
        "cost": lambda v: f"${v:,.4f}" if v < 1 else f"${v:,.2f}",
    }
    queries = field_of(latency, "queries")
    cells = []
    for column in COLUMNS:
        if column.key == "hardware":
            cells.append({"key": column.key, "text": hardware or "", "value": hardware, "title": ""})
            continue
        value = raw[column.key]
        title = ""
        if column.key in ("latency_median", "latency_p95") and value is not None and queries is not None:
            title = f"over {queries:,} queries"
        if column.key == "cost" and value is not None and price:
            title = f"at {price}"
        cells.append({"key": column.key, "text": "" if value is None else text[column.key](value),
                      "value": value, "title": title})
    return cells


def has_efficiency(results) -> bool:
    return efficiency_of(results) is not None


# --- the Pareto frontier -------------------------------------------------------------------


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the non-dominated points, by ascending cost: ``(cost, quality)`` pairs where
    less cost and more quality are better. A point is dominated when another costs no more
    and scores no less, and is strictly better in one; equal points are all kept. O(n log n)."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1], i))
    front: list[int] = []
    best = None  #: the best quality among strictly cheaper points
    i = 0
    while i < len(order):
        x = points[order[i]][0]
        group = []
        while i < len(order) and points[order[i]][0] == x:
            group.append(order[i])
            i += 1
        top = points[group[0]][1]  # the group is sorted by quality, best first
        if best is None or top > best:
            front.extend(j for j in group if points[j][1] == top)
            best = top
    return front
