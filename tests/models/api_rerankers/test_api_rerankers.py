"""cohere-rerank and voyage-rerank through their real SDKs against local servers that speak
each API's JSON (tests/api_servers.py): scores, response cache, spend confirmation,
missing keys, retries honouring Retry-After, malformed answers."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

import api_servers
import tiny_models
from api_servers import KEY, Scripted, overlap_score
from fixture_data import write_uk_pool
from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.storage.paths import cache_root

PASSAGES = {
    "p-a": "A person who contravenes a direction commits an offence.",
    "p-b": "A local authority may give a direction to close premises.",
    "p-c": "These Regulations come into force on the day after they are made.",
    "p-d": "An offence under this regulation is punishable on summary conviction.",
}
QUERIES = {"Q1": "What if a person contravenes a direction?", "Q2": "When do these Regulations come into force?"}
POOL = {"Q1": ["p-c", "p-b", "p-a"], "Q2": ["p-a", "p-d", "p-c"]}

PROVIDERS = {
    "cohere-rerank": (api_servers.cohere_answer, "", "CO_API_KEY", "/v2/rerank"),
    "voyage-rerank": (api_servers.voyage_answer, "/v1", "VOYAGE_API_KEY", "/v1/rerank"),
}


@pytest.fixture
def uk_pool(tmp_path):
    """A ukstat substitute-layout folder with a frozen pool 'hand'."""
    return write_uk_pool(tmp_path / "uk", PASSAGES, QUERIES, "Q1\t0\tp-a\t3\nQ1\t0\tp-b\t1\nQ2\t0\tp-c\t3\n", "".join(
        f"{q} Q0 {d} {i + 1} {10 - i} hand\n" for q, docs in POOL.items() for i, d in enumerate(docs)))


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request, monkeypatch):
    """(reranker name, server, reranker params) with the key set and sleeps recorded."""
    name = request.param
    answer, suffix, env, _ = PROVIDERS[name]
    server = api_servers.ApiServer(answer)
    monkeypatch.setenv(env, KEY)
    yield name, server, {"base_url": server.url + suffix}
    server.close()


@pytest.fixture
def waits(monkeypatch):
    from statbench.models.api_rerankers import retry as api_retry

    recorded: list[float] = []
    monkeypatch.setattr(api_retry, "sleep", recorded.append)
    return recorded


def _lines(outcome):
    return [line.split() for line in outcome.run_path.read_text().splitlines()]


def _run(uk_pool, name, params, output="out"):
    return tiny_models.run(uk_pool, task="ukstat", pool="hand", reranker=name, reranker_params=params, splits=None,
                           output=uk_pool.parent / output)


def test_scores_are_the_apis_and_a_rerun_sends_nothing(uk_pool, provider, waits):
    name, server, params = provider
    outcome, log = _run(uk_pool, name, params)
    lines = _lines(outcome)
    for qid, docs in POOL.items():
        mine = [(r[2], float(r[4])) for r in lines if r[0] == qid]
        expected = sorted(((d, overlap_score(QUERIES[qid], PASSAGES[d])) for d in docs), key=lambda x: -x[1])
        assert [s for _, s in mine] == pytest.approx([s for _, s in expected])
        assert mine[0][0] == expected[0][0]
    # the request as each API defines it: one per query, every candidate in pool order
    path = PROVIDERS[name][3]
    assert [p for p, _, _ in server.requests] == [path, path]
    body = server.requests[0][2]
    assert body["query"] == QUERIES["Q1"] and body["documents"] == [PASSAGES[d] for d in POOL["Q1"]]
    assert body["model"] == ("rerank-v3.5" if name == "cohere-rerank" else "rerank-2.5")
    assert any("about to send" in line and "2 requests, 6 documents" in line for line in log)
    record = outcome.results["reranker"]
    assert record["name"] == name and record["params"]["model"] == body["model"]
    provider_name, version = ("Cohere", "v2") if name == "cohere-rerank" else ("Voyage", "v1")
    assert record["description"].startswith(f"{provider_name} rerank API {version} (POST {server.url}")
    assert outcome.results["throughput"]["api_requests"] == 2

    # a new run (its run cache gone) is answered by the response cache: no request
    import shutil

    shutil.rmtree(cache_root() / "runs")
    again, log = _run(uk_pool, name, params, output="again")
    assert len(server.requests) == 2
    assert again.run_path.read_text().split("\n")[0].split()[:5] == outcome.run_path.read_text().split("\n")[0].split()[:5]
    assert any("all 2 requests answered by the response cache" in line for line in log)
    assert again.results["throughput"]["api_cached_requests"] == 2


def test_missing_key_is_one_line_naming_the_variable(uk_pool, provider, monkeypatch):
    name, server, params = provider
    env = PROVIDERS[name][2]
    monkeypatch.delenv(env)
    result = CliRunner().invoke(cli, ["run", "--task", "ukstat", "--pool", "hand", "--reranker", name,
                                      "--reranker-param", f"base_url={params['base_url']}", "--data-dir", str(uk_pool),
                                      "--output", str(uk_pool.parent / "o"), "--no-progress"])
    assert result.exit_code == 2
    assert f"{name}: set the API key in the environment variable {env}" in result.output
    assert "Traceback" not in result.output and not server.requests


def test_rate_limit_honours_retry_after_then_backs_off(uk_pool, provider, waits):
    name, server, params = provider
    detail = {"message": "slow down", "detail": "slow down"}
    server.script(Scripted(429, detail, {"Retry-After": "3"}), Scripted(503, detail), Scripted(502, detail))
    outcome, _ = _run(uk_pool, name, params)
    assert waits == [3.0, 2.0, 4.0]  # Retry-After, then exponential backoff (retries 2 and 3)
    assert len(server.requests) == 5 and outcome.results["throughput"]["api_retries"] == 3
    assert len(_lines(outcome)) == 6


def test_persistent_server_error_is_one_line_after_the_retries(uk_pool, provider, waits):
    name, server, params = provider
    server.script(*[Scripted(500, {"message": "boom", "detail": "boom"})] * 3)
    with pytest.raises(StatbenchError, match=rf"^{name}: {server.url}\S* answered HTTP 500 after 3 attempts"):
        _run(uk_pool, name, {**params, "max_retries": 2})
    assert waits == [1.0, 2.0]


def test_a_refused_request_is_not_retried(uk_pool, provider, waits, monkeypatch):
    name, server, params = provider
    monkeypatch.setenv(PROVIDERS[name][2], "wrong-key")
    with pytest.raises(StatbenchError, match=rf"^{name}: .* answered HTTP 401: invalid api token"):
        _run(uk_pool, name, params)
    assert waits == [] and len(server.requests) == 1


def _malformed(name):
    """Bodies each API's client accepts as a response, but that do not score each document once."""
    def rows(items):
        if name == "cohere-rerank":
            return {"id": "x", "results": items, "meta": {"api_version": {"version": "2"}}}
        return {"object": "list", "data": items, "model": "m", "usage": {"total_tokens": 1}}

    ok = lambda i: {"index": i, "relevance_score": 0.5}  # noqa: E731
    return {
        "duplicate index": rows([ok(0), ok(0), ok(1)]),
        "missing document": rows([ok(0), ok(1)]),
        "index out of range": rows([ok(0), ok(1), ok(7)]),
        "negative index": rows([ok(0), ok(1), ok(-1)]),
        "non-finite score": b'{"id": "x", "results": [{"index": 0, "relevance_score": NaN}, '
                            b'{"index": 1, "relevance_score": 0.1}, {"index": 2, "relevance_score": 0.2}], '
                            b'"meta": {}, "object": "list", "data": [{"index": 0, "relevance_score": NaN}, '
                            b'{"index": 1, "relevance_score": 0.1}, {"index": 2, "relevance_score": 0.2}], '
                            b'"usage": {"total_tokens": 1}, "model": "m"}',
        "not json": b"<html>oops</html>",
    }


REASONS = {
    "duplicate index": r"document 0 scored twice",
    "missing document": r"1 of 3 documents have no score \(first: 2\)",
    "index out of range": r"(index 7 is not one of the 3 documents sent|a result index is not one of the 3 documents)",
    "negative index": r"index -1 is not one of the 3 documents sent",
    "non-finite score": r"score nan of document 0 is not a finite number",
    "not json": r"(HTTP 200 with a body that is not a rerank response|APIError: HTTP code 200)",
}


@pytest.mark.parametrize("case", sorted(REASONS))
def test_a_malformed_answer_is_one_error_and_never_cached(uk_pool, provider, waits, case):
    name, server, params = provider
    server.script(Scripted(200, _malformed(name)[case]))
    with pytest.raises(StatbenchError, match=rf"^{name}: malformed response from http://127\.0\.0\.1:\d+/\S+: "
                                             rf"{REASONS[case]}"):
        _run(uk_pool, name, params)
    entries = list((cache_root() / "api-responses").rglob("response.json"))
    assert entries == []  # nothing was kept
    outcome, _ = _run(uk_pool, name, params, output="good")  # the next answer is a good one
    assert len(_lines(outcome)) == 6 and len(server.requests) == 3


def test_spending_past_the_threshold_needs_confirmation(uk_pool, provider, monkeypatch):
    name, server, params = provider
    monkeypatch.delenv("STATBENCH_ALLOW_SPEND", raising=False)
    with pytest.raises(StatbenchError, match=r"would send 2 requests, 6 documents, ~\d+ tokens .* above "
                                             r"confirm_above=5 documents; rerun with --yes \(or STATBENCH_ALLOW_SPEND=1\)"):
        _run(uk_pool, name, {**params, "confirm_above": 5})
    assert server.requests == []
    monkeypatch.setenv("STATBENCH_ALLOW_SPEND", "1")
    outcome, _ = _run(uk_pool, name, {**params, "confirm_above": 5})
    assert len(server.requests) == 2 and len(_lines(outcome)) == 6


def test_a_corrupted_cached_response_is_refetched(uk_pool, provider):
    name, server, params = provider
    _run(uk_pool, name, params)
    entry = sorted((cache_root() / "api-responses").rglob("response.json"))[0]
    entry.write_text(entry.read_text().replace("0.", "9."))
    import shutil

    shutil.rmtree(cache_root() / "runs")
    outcome, _ = _run(uk_pool, name, params, output="again")
    assert len(server.requests) == 3  # only the damaged entry was asked again
    assert all(math.isfinite(float(r[4])) and float(r[4]) <= 1 for r in _lines(outcome))


def test_both_are_listed_with_their_defaults():
    result = CliRunner().invoke(cli, ["list", "models"])
    assert result.exit_code == 0
    assert "cohere-rerank" in result.output and "voyage-rerank" in result.output
    from statbench.models.api_rerankers.rerankers import CohereRerank, VoyageRerank

    assert CohereRerank.defaults()["model"] == "rerank-v3.5" and VoyageRerank.defaults()["model"] == "rerank-2.5"


def test_retry_after_as_http_date_and_garbage():
    import email.utils
    import time

    from statbench.models.api_rerankers.retry import retry_after

    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"Retry-After": "100000"}) == 100000.0  # what the server asks (with_retries refuses it)
    assert retry_after({"Retry-After": "9" * 400}) >= 1e15  # "never", not an overflow
    assert retry_after({"Retry-After": "soon"}) is None and retry_after({}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after({"Retry-After": future}) <= 30
    # RFC 9110: delta-seconds are digits only; anything else that is no HTTP date is unreadable
    for garbage in ("-5", "1e3", "inf", "nan", "1_000", "2.5", "", "Wed, 32 Oct 2015 07:28:00 GMT",
                    "Wed, 21 Oct 99999 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 +9999"):
        assert retry_after({"Retry-After": garbage}) is None, garbage
    assert retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past: now
    assert retry_after({"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}) > 1e11


@pytest.mark.parametrize("header, waited", [
    ("Wed, 21 Oct 2015 07:28:00 GMT", [0.0]),  # a date in the past: retry now
    ("tomorrow-ish", [1.0]),  # unreadable: exponential backoff
    ("-3", [1.0]),
])
def test_retry_after_dates_through_a_real_server(uk_pool, provider, waits, header, waited):
    name, server, params = provider
    server.script(Scripted(429, {"message": "slow", "detail": "slow"}, {"Retry-After": header}))
    outcome, _ = _run(uk_pool, name, params)
    assert waits == waited and len(server.requests) == 3 and len(_lines(outcome)) == 6


@pytest.mark.parametrize("header, said", [("Fri, 31 Dec 9999 23:59:59 GMT", "days"), ("61", "61 s"),
                                          ("7200", "2.0 hours")])
def test_a_retry_after_beyond_a_minute_stops_at_once_in_one_line(uk_pool, provider, waits, header, said):
    name, server, params = provider
    server.script(Scripted(429, {"message": "slow", "detail": "slow"}, {"Retry-After": header}))
    with pytest.raises(StatbenchError) as err:
        _run(uk_pool, name, params)
    message = str(err.value)
    assert message.startswith(f"{name}: {server.url}") and "answered HTTP 429 and asks to wait" in message
    assert said in message and "\n" not in message
    assert waits == [] and len(server.requests) == 1


def test_run_yes_flag_is_the_confirmation(uk_pool, provider, monkeypatch):
    """`statbench run --yes` confirms the spending; without it the CLI stops with exit 2."""
    name, server, params = provider
    monkeypatch.delenv("STATBENCH_ALLOW_SPEND", raising=False)
    monkeypatch.setenv("STATBENCH_CACHE", str(uk_pool.parent / "cache"))
    args = ["run", "--task", "ukstat", "--pool", "hand", "--reranker", name, "--data-dir", str(uk_pool),
            "--reranker-param", f"base_url={params['base_url']}", "--reranker-param", "confirm_above=5",
            "--no-progress"]
    refused = CliRunner().invoke(cli, [*args, "--output", str(uk_pool.parent / "a")])
    assert refused.exit_code == 2 and "rerun with --yes" in refused.output and server.requests == []
    monkeypatch.setattr("os.environ", dict(__import__("os").environ))  # --yes sets the variable: undone after
    done = CliRunner().invoke(cli, [*args, "--yes", "--output", str(uk_pool.parent / "b")])
    assert done.exit_code == 0, done.output
    assert len(server.requests) == 2 and (uk_pool.parent / "b" / "run.trec").read_text().count("\n") == 6
