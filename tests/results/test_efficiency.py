"""results.json's ``efficiency``: measured in the process that wrote it, absent where not
measured (never 0), the run file unchanged by the measuring, and a paid reranker's cost
computed from the units it reported at the recorded price."""

from __future__ import annotations

import json

import api_servers
import pytest
import tiny_models
from api_servers import KEY
from fixture_data import write_uk_pool

from statbench.errors import DataFormatError
from statbench.results.record import (
    ApiUsage,
    EfficiencyRecord,
    HardwareRecord,
    QueryLatency,
    Results,
    read_results,
    write_results,
)
from statbench.run import efficiency

FULL = {
    "index_seconds": 1.5, "search_seconds": 0.25,
    "query_latency": {"median_ms": 0.4, "p95_ms": 1.2, "batch_size": 1, "queries": 4},
    "throughput_qps": 16.0, "peak_memory_mb": 312.5, "index_bytes": 1234,
    "hardware": {"cpu_model": "Some CPU", "cpu_cores": 2, "gpu": None},
    "api": {"documents_sent": 6, "tokens_sent": None, "cost_usd": 0.004, "price": "USD 2 per 1,000 search units"},
}


def _run(stard_dir, output, **kwargs):
    outcome, _ = tiny_models.run(stard_dir, model="bm25", splits=None, output=stard_dir.parent / output, **kwargs)
    return outcome


def test_the_record_round_trips_through_a_results_file(stard_dir, tmp_path):
    record = EfficiencyRecord.from_json(FULL)
    assert record.to_json() == FULL
    assert record.query_latency == QueryLatency(median_ms=0.4, p95_ms=1.2, batch_size=1, queries=4)
    results = _run(stard_dir, "out").record
    with_full = Results.from_json({**results.to_json(), "efficiency": FULL})
    write_results(tmp_path / "results.json", with_full)
    assert read_results(tmp_path / "results.json")["efficiency"] == FULL
    assert Results.read(tmp_path / "results.json").efficiency == record


def test_absent_is_not_measured_and_zero_is_measured(stard_dir, tmp_path):
    only_machine = EfficiencyRecord(hardware=HardwareRecord(cpu_model="x", cpu_cores=1, gpu=None))
    assert only_machine.to_json() == {"hardware": {"cpu_model": "x", "cpu_cores": 1, "gpu": None}}
    assert EfficiencyRecord(index_seconds=0.0).to_json() == {"index_seconds": 0.0}
    # nothing measured here (no computed split): the machine only, never zeros
    assert efficiency.Measured().record({}, None).to_json().keys() == {"hardware"}
    # a file may not write null (or a negative figure) for "not measured": absent is the only way
    results = _run(stard_dir, "out").record.to_json()
    for bad, said in ((dict(FULL, index_seconds=None), "index_seconds"),
                      (dict(FULL, peak_memory_mb=-1.0), "peak_memory_mb"),
                      (dict(FULL, query_latency={"median_ms": 1.0, "p95_ms": 2.0}), "batch_size")):
        (tmp_path / "results.json").write_text(json.dumps({**results, "efficiency": bad}), "utf-8")
        with pytest.raises(DataFormatError, match=said):
            read_results(tmp_path / "results.json")


def test_latency_percentiles_are_nearest_rank_over_the_queries():
    latency = efficiency.query_latency([0.001] * 90 + [0.010] * 9 + [0.100], batch_size=1)
    assert (latency.median_ms, latency.p95_ms, latency.queries) == (1.0, 10.0, 100)
    # a query's latency is its batch's seconds over the queries in it
    assert efficiency.nearest_rank([3, 1, 2], 0.5) == 2
    assert efficiency.query_latency([], batch_size=4) is None
    assert [list(b) for b in efficiency.batches([1, 2, 3, 4, 5], 2)] == [[1, 2], [3, 4], [5]]
    assert [list(b) for b in efficiency.batches([1, 2], None)] == [[1, 2]]


def test_peak_memory_is_the_runs_or_absent():
    from statbench.run.efficiency import peak_mark, peak_memory_mb

    now = peak_mark()
    assert peak_memory_mb((0, 0)) == round(max(now) / 1024, 1)
    # the process peaked higher before the mark than since: the run's own peak is unknown
    assert peak_memory_mb((now[0] + 10**9, now[1] + 10**9)) is None
    # only the children grew, but below the process's earlier peak: unknown too
    assert peak_memory_mb((now[0] + 10**9, 0)) is None
    # grew past every earlier mark: the new high-water mark is the run's
    assert peak_memory_mb((1, 0)) == round(max(now) / 1024, 1)


def test_a_run_measures_and_a_cached_rerun_leaves_the_figures_absent(stard_dir, monkeypatch):
    from statbench.run import runner

    # as in a fresh process (pytest's may have peaked higher in an earlier test: then absent)
    monkeypatch.setattr(runner, "peak_mark", lambda: (0, 0))
    first = _run(stard_dir, "first").record
    eff, n_queries = first.efficiency, first.n_queries
    assert first.cache and set(first.cache.values()) == {"miss"}
    assert eff.index_seconds == first.timings["index"] and eff.search_seconds == first.timings["search"]
    assert eff.query_latency.batch_size == 1 and eff.query_latency.queries == n_queries
    assert eff.query_latency.median_ms <= eff.query_latency.p95_ms
    # from the unrounded seconds (results.json rounds timings to 0.1 ms)
    assert eff.throughput_qps == pytest.approx(n_queries / first.timings["search"], rel=0.1)
    assert eff.peak_memory_mb > 0 and eff.index_bytes > 0  # bm25s keeps its index in its cache folder
    assert eff.hardware.cpu_cores >= 1 and eff.hardware.gpu is None  # torch never loaded: no GPU
    assert eff.api is None  # no paid reranker
    again = _run(stard_dir, "again").record
    assert set(again.cache.values()) == {"hit"}
    assert again.efficiency.to_json().keys() == {"hardware"}  # no index, search, latency, memory: not 0


def test_timing_each_query_leaves_the_run_file_unchanged(stard_dir, monkeypatch):
    from statbench.models.lexical.bm25 import BM25

    batched = _run(stard_dir, "batched").run_path.read_bytes()
    monkeypatch.setenv("STATBENCH_CACHE", str(stard_dir.parent / "other-cache"))
    monkeypatch.setattr(BM25, "query_batch", None)
    whole = _run(stard_dir, "whole")
    assert whole.run_path.read_bytes() == batched
    assert whole.record.efficiency.query_latency is None  # one call for all queries: no per-query latency
    assert whole.record.efficiency.search_seconds is not None


@pytest.mark.parametrize("bad", [0, -1, True, "4", 2.0])
def test_a_wrong_query_batch_is_one_line_naming_the_model(stard_dir, monkeypatch, bad):
    from statbench.errors import StatbenchError
    from statbench.models.lexical.bm25 import BM25

    monkeypatch.setattr(BM25, "query_batch", bad)
    with pytest.raises(StatbenchError, match=rf"model 'bm25' .* declares query_batch={bad!r}: expected None or an int"):
        _run(stard_dir, "bad")


FAKE_PAID = """
    from statbench import hookimpl
    from statbench.api import Reranker

    class Paid(Reranker):
        name = "fake-paid"
        def rerank(self, queries, candidates, corpus, ctx):
            # documents sent over the run: the runner reranks split by split
            self.sent = getattr(self, "sent", 0) + sum(len(candidates[q.id]) for q in queries)
            return {q.id: [(d, 1.0 / (i + 1)) for i, d in enumerate(candidates[q.id])] for q in queries}
        def api_usage(self):
            return {"documents_sent": self.sent, "tokens_sent": 7 * self.sent,
                    "cost_usd": 7 * self.sent * 0.05 / 1e6, "price": "USD 0.05 per 1,000,000 tokens"}

    @hookimpl
    def register_rerankers(register):
        register(Paid)
"""


def test_a_reranker_reporting_usage_is_recorded_exactly(stard_dir, fake_distributions):
    fake_distributions("statbench-fake-paid", "sbfake_paid", FAKE_PAID)
    outcome = _run(stard_dir, "paid", reranker="fake-paid", rerank_depth=3)
    sent = sum(1 for _ in outcome.run_path.read_text().splitlines())  # every candidate is returned
    assert outcome.record.efficiency.api == ApiUsage(documents_sent=sent, tokens_sent=7 * sent,
                                                     cost_usd=7 * sent * 0.05 / 1e6,
                                                     price="USD 0.05 per 1,000,000 tokens")
    assert outcome.record.efficiency.query_latency is None  # a reranked run: latency not measured
    assert json.loads(outcome.results_path.read_text())["efficiency"]["api"]["documents_sent"] == sent


PASSAGES = {"p-a": "A person who contravenes a direction commits an offence.",
            "p-b": "A local authority may give a direction to close premises.",
            "p-c": "These Regulations come into force on the day after they are made."}
QUERIES = {"Q1": "What if a person contravenes a direction?", "Q2": "When do these Regulations come into force?"}
POOL = {"Q1": ["p-c", "p-b", "p-a"], "Q2": ["p-a", "p-b", "p-c"]}


@pytest.fixture
def uk_pool(tmp_path):
    return write_uk_pool(tmp_path / "uk", PASSAGES, QUERIES, "Q1\t0\tp-a\t3\nQ2\t0\tp-c\t3\n", "".join(
        f"{q} Q0 {d} {i + 1} {10 - i} hand\n" for q, docs in POOL.items() for i, d in enumerate(docs)))


@pytest.mark.parametrize("name", ["cohere-rerank", "voyage-rerank"])
def test_an_api_rerankers_cost_is_its_billed_units_at_the_recorded_price(uk_pool, monkeypatch, name):
    from statbench.models.api_rerankers.prices import PRICES

    answer, suffix, env = {"cohere-rerank": (api_servers.cohere_answer, "", "CO_API_KEY"),
                           "voyage-rerank": (api_servers.voyage_answer, "/v1", "VOYAGE_API_KEY")}[name]
    server = api_servers.ApiServer(answer)
    monkeypatch.setenv(env, KEY)
    try:
        def run(output):
            return tiny_models.run(uk_pool, task="ukstat", pool="hand", reranker=name, splits=None,
                                   reranker_params={"base_url": server.url + suffix},
                                   output=uk_pool.parent / output)[0].record.efficiency

        api = run("first").api
        if name == "cohere-rerank":  # one search unit per query (the server bills 1 per request)
            price, units, tokens = PRICES[("Cohere", "rerank-v3.5")], 2, None
        else:  # the tokens the server reported: its count of the words sent
            price = PRICES[("Voyage", "rerank-2.5")]
            units = tokens = sum(len(api_servers.words(QUERIES[q])) + len(api_servers.words(PASSAGES[d]))
                                 for q, docs in POOL.items() for d in docs)
        assert api == ApiUsage(documents_sent=6, tokens_sent=tokens, cost_usd=units * price.usd / price.per,
                               price=price.text())
        assert "as of" in api.price and "https://" in api.price
        assert run("again").api is None  # the split's run came from the cache: nothing reranked here
        # the split cache gone, every answer from the response cache: nothing sent, nothing spent
        import shutil

        from statbench.storage.paths import cache_root

        for folder in cache_root().iterdir():
            if folder.name != "api-responses":
                shutil.rmtree(folder)
        cached = run("cached").api
        assert (cached.documents_sent, cached.cost_usd) == (0, 0.0)
        assert len(server.requests) == 2
    finally:
        server.close()
