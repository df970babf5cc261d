"""A board's quality-vs-latency and quality-vs-cost plots: every row with both figures
measured, the Pareto frontier drawn, and a caption that says what is not alike among the
rows drawn (hardware, batch size) and how many rows had nothing measured to draw."""

from __future__ import annotations

from statbench.leaderboard.render.efficiency import efficiency_of, field_of, hardware_text
from statbench.leaderboard.render.plots import Point, pareto_plot


def _caption(drawn: list, total: int, what: str, hardware: list[str | None], batches: list) -> str:
    words = [f"{len(drawn)} of {total} results have a measured {what} and are drawn"
             + ("; the others are not (not measured: never drawn as 0)." if len(drawn) < total else ".")]
    kinds = sorted({h or "not recorded" for h in hardware})
    if len(kinds) > 1:
        words.append(f"Mixed hardware ({len(kinds)} configurations: {'; '.join(kinds)}): "
                     f"the {what} of rows measured on other machines is not directly comparable.")
    elif kinds:
        words.append(f"All measured on {kinds[0]}.")
    sizes = sorted({b for b in batches if b is not None})
    if len(sizes) > 1 or (sizes and None in batches):
        words.append(f"Query batch sizes differ ({', '.join(map(str, sizes))}"
                     f"{', not recorded' if None in batches else ''}).")
    return " ".join(words)


def pareto_point(row, tested: str) -> tuple | None:
    """What a row gives the board's plots (None: nothing measured to draw): quality (the
    tested measure, mean over splits), hardware, median query latency and its batch size, API
    cost. Taken one row at a time, so that rows rendered apart (.forkmap) give theirs."""
    agg = row.results.aggregate.get(tested)
    record = efficiency_of(row.results)
    if agg is None or record is None:
        return None
    latency = field_of(record, "query_latency")
    return (agg.mean, hardware_text(field_of(record, "hardware")), field_of(latency, "median_ms"),
            field_of(latency, "batch_size"), field_of(field_of(record, "api"), "cost_usd"))


def pareto_charts(points: list[tuple[str, tuple | None]], tested: str, labels: dict[str, str]) -> list[dict]:
    """``{"svg", "caption"}`` per plot of the board, from each row's key and
    :func:`pareto_point`: quality against median query latency, and against API cost where
    any row has one."""
    charts = []
    latency, cost = [], []
    for key, point in points:
        if point is None:
            continue
        quality, hardware, median, batch, usd = point
        if median is not None:
            latency.append((Point(labels[key], median, quality), hardware, batch))
        if usd is not None:
            cost.append((Point(labels[key], usd, quality), hardware, None))
    for drawn, title, axis, what in (
        (latency, f"{tested} vs median query latency", "median query latency (ms)", "query latency"),
        (cost, f"{tested} vs API cost", "cost (USD, at the recorded price)", "cost"),
    ):
        svg = pareto_plot([p for p, _, _ in drawn], title, axis, tested)
        if svg:
            batches = [b for _, _, b in drawn] if what == "query latency" else []
            hardware = [h for _, h, _ in drawn] if what == "query latency" else []
            charts.append({"svg": svg, "caption": _caption(drawn, len(points), what, hardware, batches)})
    return charts
