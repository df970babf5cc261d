"""Efficiency and cost figures that contradict each other or the run's timings: what a
results file's ``efficiency`` (and ``timings``) must hold to be published.

What is checked is only what the figures say of each other, as ``statbench run`` writes
them (:mod:`statbench.run.efficiency`): every figure finite and non-negative; the latency's
median at most its p95 and measured over at least one query; the throughput is the queries
measured over the search seconds (both rounded to 0.1 ms / 1e-4 q/s, so some whole number
of queries lies within their rounding), the queries the latency counts; the latencies
cannot add up to more than the search seconds; the index and search seconds are the
timings' ``index`` and ``search`` + ``rerank``; no phase longer than the ``total``; the GPU
the hardware names is the environment's accelerator; API usage only with a reranker,
nothing spent without a document sent, a cost only with a price, and a cost that is whole
units at the price it names (tokens: the tokens sent). What a figure measured (the
seconds, the memory, the machine) cannot be checked afterwards: the board shows it as
declared."""

from __future__ import annotations

import math
import re

#: the rounding ``statbench run`` writes seconds and queries per second with (4 decimals)
ROUNDING = 5e-5
#: relative slack on top of the rounding (float arithmetic only)
SLACK = 1e-9
#: ``USD 0.05 per 1,000,000 tokens (source, as of date)``: :meth:`Price.text` of the API rerankers
_PRICE = re.compile(r"^USD\s+([0-9.eE+-]+)\s+per\s+([0-9,]+)\s+(.+?)s?(?:\s+\(|$)")


def _get(record, name: str):
    if record is None:
        return None
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def _numbers(efficiency) -> list[tuple[str, object]]:
    """(field, value) of every number of the record."""
    latency, api, hardware = (_get(efficiency, k) for k in ("query_latency", "api", "hardware"))
    pairs = [(name, _get(efficiency, name)) for name in ("index_seconds", "search_seconds", "throughput_qps",
                                                         "peak_memory_mb", "index_bytes")]
    pairs += [(f"query_latency/{name}", _get(latency, name))
              for name in ("median_ms", "p95_ms", "batch_size", "queries")]
    pairs += [(f"api/{name}", _get(api, name)) for name in ("documents_sent", "tokens_sent", "cost_usd")]
    pairs.append(("hardware/cpu_cores", _get(hardware, "cpu_cores")))
    return [(name, value) for name, value in pairs if value is not None]


def implied_queries(efficiency) -> tuple[float, float] | None:
    """The range of queries measured that ``throughput_qps`` x ``search_seconds`` allows
    (both rounded to 4 decimals), or None when either is absent."""
    seconds, qps = _get(efficiency, "search_seconds"), _get(efficiency, "throughput_qps")
    if seconds is None or qps is None:
        return None
    low = max(qps - ROUNDING, 0.0) * max(seconds - ROUNDING, 0.0)
    high = (qps + ROUNDING) * (seconds + ROUNDING)
    return low * (1 - SLACK), high * (1 + SLACK)


def _whole_in(low: float, high: float) -> bool:
    return math.floor(high) >= max(math.ceil(low), 1)


def efficiency_problems(results) -> list[str]:
    """Every contradiction of ``results``' efficiency and cost figures (a :class:`~statbench.
    results.record.Results`; a record without them has none), one line each naming the field.
    Figures so large that comparing them overflows a float (``1e308`` seconds) are one
    problem too, never an error."""
    try:
        return _problems(results)
    except OverflowError:
        return ["efficiency: its figures (or the timings) are too large to be checked against each other "
                "(a float overflows): no run measured them"]


def _problems(results) -> list[str]:
    efficiency = _get(results, "efficiency")
    problems = _timing_problems(_get(results, "timings") or {})
    if efficiency is None:
        return problems
    bad = [name for name, value in _numbers(efficiency)
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0]
    if bad:
        return problems + [f"efficiency/{name}: {_get_path(efficiency, name)!r} is not a non-negative number"
                           for name in bad]
    problems += _latency_problems(efficiency)
    problems += _timings_agree(efficiency, _get(results, "timings") or {})
    problems += _hardware_problems(efficiency, _get(results, "environment") or {})
    problems += _api_problems(_get(efficiency, "api"), _get(results, "reranker"))
    return problems


def _get_path(record, path: str):
    for part in path.split("/"):
        record = _get(record, part)
    return record


def _timing_problems(timings) -> list[str]:
    """No phase longer than the whole run (the phases run one after another)."""
    total = timings.get("total")
    if total is None:
        return []
    values = [v for v in timings.values() if isinstance(v, (int, float)) and math.isfinite(v)]
    if len(values) != len(timings):
        return []  # score_problems names a non-finite timing
    phases = {name: value for name, value in timings.items() if name != "total"}
    longest = max(phases.items(), key=lambda item: item[1], default=None)
    if longest is not None and longest[1] > total + ROUNDING * 2:
        return [f"timings/{longest[0]}: {longest[1]!r} s, longer than the whole run (total {total!r} s)"]
    summed = math.fsum(phases.values())
    if summed > total * (1 + SLACK) + ROUNDING * (len(phases) + 1):
        return [f"timings: the phases add up to {summed:.4f} s, more than the whole run (total {total!r} s): "
                "they run one after another"]
    return []


def _latency_problems(efficiency) -> list[str]:
    problems = []
    latency = _get(efficiency, "query_latency")
    queries = _get(latency, "queries")
    if latency is not None:
        median, p95 = _get(latency, "median_ms"), _get(latency, "p95_ms")
        if median > p95:
            problems.append(f"efficiency/query_latency: median {median!r} ms is above the p95 {p95!r} ms")
        if queries == 0:
            problems.append("efficiency/query_latency: a latency over 0 queries measured")
        seconds = _get(efficiency, "search_seconds")
        if seconds is not None and queries:
            # nearest rank: at least this many queries took the median or longer, and the p95 or longer
            least = max(median / 1000 * (queries - math.ceil(queries / 2) + 1),
                        p95 / 1000 * (queries - max(math.ceil(0.95 * queries), 1) + 1))
            if least > (seconds + ROUNDING) * (1 + SLACK) + 1e-7 * queries:
                problems.append(f"efficiency/query_latency: {queries} queries at median {median!r} ms / p95 {p95!r} ms "
                                f"take at least {least:.4f} s, more than search_seconds {seconds!r}")
    span = implied_queries(efficiency)
    if span is not None:
        low, high = span
        # (search_seconds rounded to 0.0 and a large throughput is a fast run, not a contradiction)
        if queries and not low <= queries <= high:
            problems.append(f"efficiency/throughput_qps: {_get(efficiency, 'throughput_qps')!r} q/s over "
                            f"{_get(efficiency, 'search_seconds')!r} s is {low:.2f}-{high:.2f} queries, not the "
                            f"{queries} the latency was measured over")
        elif not _whole_in(low, high):
            problems.append(f"efficiency/throughput_qps: {_get(efficiency, 'throughput_qps')!r} q/s over "
                            f"{_get(efficiency, 'search_seconds')!r} s is {low:.3f}-{high:.3f} queries: no whole "
                            "number of queries measured")
    return problems


def _timings_agree(efficiency, timings) -> list[str]:
    """``index_seconds`` is the timings' ``index``; ``search_seconds`` their ``search`` plus ``rerank``."""
    problems = []
    index = _get(efficiency, "index_seconds")
    if index is not None and "index" in timings and abs(index - timings["index"]) > 2 * ROUNDING:
        problems.append(f"efficiency/index_seconds: {index!r}, but timings/index is {timings['index']!r}")
    search = _get(efficiency, "search_seconds")
    timed = [timings[k] for k in ("search", "rerank") if k in timings]
    if search is not None and timed and abs(search - math.fsum(timed)) > 4 * ROUNDING:
        problems.append(f"efficiency/search_seconds: {search!r}, but timings/search + rerank is "
                        f"{math.fsum(timed):.4f}")
    return problems


def _hardware_problems(efficiency, environment) -> list[str]:
    """The GPU of ``hardware`` and the environment's ``accelerator`` are read at the same moment."""
    hardware = _get(efficiency, "hardware")
    if hardware is None or "accelerator" not in environment:
        return []
    gpu = _get(hardware, "gpu")
    if gpu != environment["accelerator"]:
        return [f"efficiency/hardware/gpu: {gpu!r}, but the environment's accelerator is "
                f"{environment['accelerator']!r}"]
    return []


def parse_price(text: str | None) -> tuple[float, int, str] | None:
    """(USD, per units, unit) of a price as the API rerankers record it (``USD 2 per 1,000
    search units (source, as of date)``); None for any other text (the cost is then declared)."""
    if not text:
        return None
    match = _PRICE.match(text)
    if match is None:
        return None
    try:
        usd, per = float(match.group(1)), int(match.group(2).replace(",", ""))
    except ValueError:
        return None
    if not math.isfinite(usd) or usd <= 0 or per <= 0:
        return None
    return usd, per, match.group(3).strip()


def _api_problems(api, reranker) -> list[str]:
    if api is None:
        return []
    if reranker is None:
        return ["efficiency/api: API usage recorded, but the run has no reranker (only a paid reranker records it)"]
    sent, tokens, cost, price = (_get(api, k) for k in ("documents_sent", "tokens_sent", "cost_usd", "price"))
    if sent == 0 and (cost or tokens):
        return [f"efficiency/api: {'a cost' if cost else 'tokens'} recorded, but no document was sent"]
    if cost and price is None:
        return [f"efficiency/api/cost_usd: {cost!r} without a price (a cost is units x the recorded price)"]
    parsed = parse_price(price)
    if cost is None or parsed is None or sent == 0:
        return []
    usd, per, unit = parsed
    try:
        units = cost * per / usd
    except OverflowError:  # a price of more units than a float holds
        units = math.inf
    if not math.isfinite(units):
        return [f"efficiency/api/cost_usd: {cost!r} at {price!r} is more {unit}s than can be counted"]
    if abs(units - round(units)) > 1e-6 * max(1.0, units) or round(units) < 1:
        return [f"efficiency/api/cost_usd: {cost!r} is {units:.6g} {unit}s at {price!r}: not whole billed units"]
    if unit.lower() == "token" and tokens is not None and round(units) != tokens:
        return [f"efficiency/api/cost_usd: {cost!r} is {round(units)} tokens at the price, but tokens_sent is {tokens}"]
    return []
