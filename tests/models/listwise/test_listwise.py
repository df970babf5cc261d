"""Listwise LLM rerankers: rank-llm's sliding window on hand-built permutations, answer
repair as rank-llm does it, an OpenAI-compatible endpoint served by the test and a tiny
random causal LM built here, both on a frozen ukstat pool."""

from __future__ import annotations

import re
import shutil

import pytest
from click.testing import CliRunner

import api_servers
import tiny_models
from api_servers import KEY, Scripted, overlap_score
from fixture_data import write_uk_pool
from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.models.listwise.prompt import SYSTEM
from statbench.models.listwise.window import clean_response, parse_permutation, sliding_rerank, windows
from statbench.storage.paths import cache_root

PASSAGES = {
    "p-a": "A person who contravenes a direction commits an offence.",
    "p-b": "A local authority may give a direction to close premises.",
    "p-c": "These Regulations come into force on the day after they are made.",
    "p-d": "An offence under this regulation is punishable on summary conviction.",
    "p-e": "A direction may be revoked by a further direction.",
}
QUERIES = {"Q1": "What if a person contravenes a direction?", "Q2": "When do these Regulations come into force?"}
POOL = {"Q1": ["p-c", "p-d", "p-e", "p-b", "p-a"], "Q2": ["p-a", "p-e", "p-d", "p-c", "p-b"]}


# --- the window logic, by hand ------------------------------------------------------------

def test_windows_walk_from_the_bottom_as_rank_llm_does():
    assert windows(100, 20, 10) == [(80, 100), (70, 90), (60, 80), (50, 70), (40, 60), (30, 50), (20, 40),
                                    (10, 30), (0, 20)]
    assert windows(5, 3, 2) == [(2, 5), (0, 3)]
    assert windows(25, 20, 10) == [(5, 25), (0, 15)]  # the last window is shorter
    assert windows(15, 20, 10) == [(0, 15)]  # fewer candidates than a window: one window
    assert windows(20, 20, 10) == [(0, 20)]  # no window that would repeat the top 10
    assert windows(0, 20, 10) == []


def test_a_reversing_model_on_a_hand_built_list():
    order = sliding_rerank(list("abcde"), 3, 2, lambda items, s, e: " > ".join(f"[{i}]" for i in range(e - s, 0, -1)))
    # windows (2,5) then (0,3): abcde -> ab|edc -> eba|dc
    assert order == list("ebadc")


def test_a_perfect_ranker_brings_the_true_top_ten_to_the_top():
    value = {f"d{i}": (i * 37) % 101 for i in range(60)}

    def oracle(items, start, end):
        window = items[start:end]
        ranked = sorted(range(len(window)), key=lambda i: -value[window[i]])
        return " > ".join(f"[{i + 1}]" for i in ranked)

    order = sliding_rerank(sorted(value), 20, 10, oracle)
    assert order[:10] == sorted(value, key=lambda d: -value[d])[:10]
    assert sorted(order) == sorted(value)


@pytest.mark.parametrize("answer, expected", [
    ("[2] > [3] > [1]", [1, 2, 0]),
    ("[2] > [2] > [1]", [1, 0, 2]),  # duplicate dropped, missing appended in order
    ("[3] > [9] > [1]", [2, 0, 1]),  # unknown id dropped
    ("[2]", [1, 0, 2]),  # short answer completed
    ("I cannot rank these.", [0, 1, 2]),  # no digits: the window is left as it was
    ("<think>[1] > [2]</think> [3] > [2] > [1]", [2, 1, 0]),  # only the text after </think>
    ("［３］ > ［１］ > ［２］", [2, 0, 1]),  # full-width digits count as digits
])
def test_malformed_answers_are_repaired_as_rank_llm_does(answer, expected):
    assert parse_permutation(answer, 3) == expected


def test_clean_response_keeps_digits_only():
    assert clean_response("[12] > [3]").split() == ["12", "3"]


# --- an OpenAI-compatible endpoint ----------------------------------------------------------

def _oracle_reply(messages):
    """Rank the window's passages by word overlap with the query (the test's ground truth)."""
    text = messages[-1]["content"]
    query = re.search(r"Search Query: (.*)\.\n", text).group(1)
    passages = re.findall(r"^\[(\d+)\] (.*)$", text, flags=re.M)
    ranked = sorted(passages, key=lambda p: -overlap_score(query, p[1]))
    return " > ".join(f"[{i}]" for i, _ in ranked)


@pytest.fixture
def uk_pool(tmp_path):
    return write_uk_pool(tmp_path / "uk", PASSAGES, QUERIES, "Q1\t0\tp-a\t3\nQ1\t0\tp-b\t1\nQ2\t0\tp-c\t3\n", "".join(
        f"{q} Q0 {d} {i + 1} {10 - i} hand\n" for q, docs in POOL.items() for i, d in enumerate(docs)))


@pytest.fixture
def endpoint(monkeypatch):
    server = api_servers.ApiServer(api_servers.chat_answer(_oracle_reply))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    yield server
    server.close()


def _run(uk_pool, name, params, output="out"):
    return tiny_models.run(uk_pool, task="ukstat", pool="hand", reranker=name, reranker_params=params, splits=None,
                           output=uk_pool.parent / output)


def _order(outcome, qid):
    rows = [line.split() for line in outcome.run_path.read_text().splitlines()]
    return [r[2] for r in rows if r[0] == qid]


def test_endpoint_reranking_follows_the_sliding_window(uk_pool, endpoint):
    params = {"model": "rank-zephyr", "base_url": endpoint.url + "/v1", "window": 3, "stride": 2}
    outcome, log = _run(uk_pool, "listwise-llm", params)
    for qid, docs in POOL.items():
        def rank(items, start, end, q=QUERIES[qid]):
            window = items[start:end]
            ranked = sorted(range(len(window)), key=lambda i: -overlap_score(q, PASSAGES[window[i]]))
            return " > ".join(f"[{i + 1}]" for i in ranked)

        assert _order(outcome, qid) == sliding_rerank(docs, 3, 2, rank)
    assert len(endpoint.requests) == 2 * len(windows(5, 3, 2))
    path, headers, body = endpoint.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "rank-zephyr" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"] and body["messages"][0]["content"] == SYSTEM
    user = body["messages"][1]["content"]
    assert user.startswith("I will provide you with 3 passages") and f"[1] {PASSAGES['p-e']}" in user  # bottom window
    assert any("about to send" in line and "4 requests, 12 documents" in line for line in log)
    scores = [float(line.split()[4]) for line in outcome.run_path.read_text().splitlines()[:5]]
    assert scores == [5.0, 4.0, 3.0, 2.0, 1.0]
    assert outcome.results["throughput"]["listwise_windows"] == 4

    shutil.rmtree(cache_root() / "runs")
    again, log = _run(uk_pool, "listwise-llm", params, output="again")
    assert len(endpoint.requests) == 4  # every window answered by the response cache
    assert again.run_path.read_text() .splitlines()[0].split()[2] == outcome.run_path.read_text().splitlines()[0].split()[2]
    assert any("all 4 requests answered by the response cache" in line for line in log)


def test_repaired_answers_are_counted_and_applied(uk_pool, monkeypatch):
    server = api_servers.ApiServer(api_servers.chat_answer(lambda messages: "[2] > [2] > [9]"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    try:
        outcome, _ = _run(uk_pool, "listwise-llm", {"model": "m", "base_url": server.url + "/v1", "window": 5, "stride": 2})
    finally:
        server.close()
    # one window of five: [2] first, then the rest in their pool order
    docs = POOL["Q1"]
    assert _order(outcome, "Q1") == [docs[1], docs[0], *docs[2:]]
    assert outcome.results["throughput"]["listwise_repaired_answers"] == 2


def test_endpoint_rules_key_spend_retries(uk_pool, endpoint, monkeypatch):
    from statbench.models.api_rerankers import retry as api_retry

    params = {"model": "m", "base_url": endpoint.url + "/v1", "window": 3, "stride": 2}
    monkeypatch.delenv("OPENAI_API_KEY")
    result = CliRunner().invoke(cli, ["run", "--task", "ukstat", "--pool", "hand", "--reranker", "listwise-llm",
                                      *[a for k, v in params.items() for a in ("--reranker-param", f"{k}={v}")],
                                      "--data-dir", str(uk_pool), "--output", str(uk_pool.parent / "o"),
                                      "--no-progress"])
    assert result.exit_code == 2 and "listwise-llm: set the API key in the environment variable OPENAI_API_KEY" \
        in result.output
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("STATBENCH_ALLOW_SPEND", raising=False)
    with pytest.raises(StatbenchError, match=r"would send 4 requests, 12 documents.*confirm_above=10 documents"):
        _run(uk_pool, "listwise-llm", {**params, "confirm_above": 10})
    assert endpoint.requests == []
    waits: list[float] = []
    monkeypatch.setattr(api_retry, "sleep", waits.append)
    endpoint.script(Scripted(429, {"error": {"message": "slow"}}, {"Retry-After": "5"}),
                    Scripted(500, {"error": {"message": "oops"}}))
    outcome, _ = _run(uk_pool, "listwise-llm", params)
    assert waits == [5.0, 2.0] and len(endpoint.requests) == 6
    endpoint.script(Scripted(200, b"not json at all"))
    shutil.rmtree(cache_root() / "api-responses")
    shutil.rmtree(cache_root() / "runs")
    with pytest.raises(StatbenchError, match=r"^listwise-llm: malformed response from "):
        _run(uk_pool, "listwise-llm", params, output="bad")


def test_stride_above_window_is_refused():
    from statbench.models.listwise.listwise import ListwiseLLM

    with pytest.raises(StatbenchError, match=r"stride=30 .* above window=20"):
        ListwiseLLM(model="m", stride=30)
    with pytest.raises(StatbenchError, match=r"give the model with --reranker-param model="):
        ListwiseLLM()


# --- a tiny random causal LM, locally -------------------------------------------------------

CHAT_TEMPLATE = ("{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<assistant> {% endif %}")


def tiny_causal_lm(folder, texts):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = tiny_models._tokenizer(folder, texts + ["[1] > [2] > [3] 0 1 2 3 4 5 6 7 8 9 < > system user assistant"])
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(str(folder))
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=1024,
                        pad_token_id=0, bos_token_id=2, eos_token_id=3)
    GPT2LMHeadModel(config).save_pretrained(str(folder))
    return folder


def test_rankzephyr_with_a_tiny_local_model(uk_pool, tmp_path):
    from statbench.models.listwise.prompt import PREFIX, SUFFIX

    folder = tiny_causal_lm(tmp_path / "lm", list(PASSAGES.values()) + list(QUERIES.values()) + [SYSTEM, PREFIX, SUFFIX])
    params = {"model": str(folder), "window": 3, "stride": 2, "context_size": 900, "device": "cpu"}
    outcome, _ = _run(uk_pool, "rankzephyr", params)
    for qid, docs in POOL.items():
        assert sorted(_order(outcome, qid)) == sorted(docs)
    stats = outcome.results["throughput"]
    assert stats["listwise_windows"] == 4 and stats["llm_generated_answers"] == 4
    answers = sorted((cache_root() / "api-responses" / "listwise").rglob("response.json"))
    assert len(answers) == 4
    # the order is the model's (cached) answers applied window by window, as rank-llm would
    import json

    from statbench.models.listwise.window import apply_permutation

    answered = {}
    for path in answers:
        key = json.loads((path.parent / "manifest.json").read_text())["key"]
        answered[key["messages"][1]["content"]] = json.loads(path.read_text())["text"]
    for qid, docs in POOL.items():
        current = list(docs)
        for start, end in windows(len(docs), 3, 2):
            body = "".join(f"[{i + 1}] {PASSAGES[d]}\n" for i, d in enumerate(current[start:end]))
            text = next(t for prompt, t in answered.items() if body in prompt and QUERIES[qid] in prompt)
            current = apply_permutation(current, start, end, text)
        assert _order(outcome, qid) == current
    record = outcome.results["reranker"]
    assert record["name"] == "rankzephyr" and "backend transformers" in record["description"]

    shutil.rmtree(cache_root() / "runs")
    again, _ = _run(uk_pool, "rankzephyr", params, output="again")
    assert again.results["throughput"]["llm_generated_answers"] == 0
    assert again.results["throughput"]["llm_cached_answers"] == 4
    assert again.run_path.read_text().splitlines()[0].split()[:5] == outcome.run_path.read_text().splitlines()[0].split()[:5]


def test_a_window_that_cannot_fit_the_context_is_one_line(uk_pool, tmp_path):
    folder = tiny_causal_lm(tmp_path / "lm", list(PASSAGES.values()))
    with pytest.raises(StatbenchError, match=r"does not fit context_size=64 tokens"):
        _run(uk_pool, "rankzephyr", {"model": str(folder), "window": 5, "stride": 5, "context_size": 64, "device": "cpu"})


# --- a misbehaving endpoint (issue 27): one line naming the reranker, or a correct ranking -------------------------

def _chat(content):
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


@pytest.fixture
def one_window(uk_pool, endpoint, monkeypatch):
    """Run the reranker with one window of five (each query: one request), sleeps recorded."""
    from statbench.models.api_rerankers import retry as api_retry

    waits: list[float] = []
    monkeypatch.setattr(api_retry, "sleep", waits.append)
    params = {"model": "m", "base_url": endpoint.url + "/v1", "window": 5, "stride": 5, "max_retries": 1}
    return lambda **extra: _run(uk_pool, "listwise-llm", {**params, **extra}), waits


@pytest.mark.parametrize("body, message", [
    (b"not json at all", "malformed response from"),
    (b'{"choices": [{"message": {"content": "[1] > [2]"', "malformed response from"),  # truncated JSON
    ({"id": "c", "object": "chat.completion"}, "malformed response from"),  # no choices
    ({**_chat("x"), "choices": []}, "malformed response from"),
    (_chat(None), "the answer has no text"),
    (_chat(["[1] > [2]"]), "the answer has no text"),
])
def test_a_malformed_answer_is_one_line_naming_the_reranker(one_window, endpoint, body, message):
    run, _ = one_window
    endpoint.script(Scripted(200, body))
    with pytest.raises(StatbenchError) as err:
        run()
    assert str(err.value).startswith("listwise-llm: ") and message in str(err.value)
    assert "\n" not in str(err.value)
    assert not list((cache_root() / "api-responses").rglob("response.json"))  # nothing bad was cached


@pytest.mark.parametrize("answer, order, repaired", [
    ("[3] > [1", [2, 0, 1, 3, 4], 1),  # truncated: the missing passages follow in their previous order
    ("[5] > [5] > [4] > [4]", [4, 3, 0, 1, 2], 1),  # duplicated ids counted once
    ("[9] > [0] > [2] > [77]", [1, 0, 2, 3, 4], 1),  # ids outside the window ignored
    ("I cannot rank these passages.", [0, 1, 2, 3, 4], 1),  # no ids at all: the window unchanged
    ("[" + "9" * 5000 + "] > [2]", [0, 1, 2, 3, 4], 1),  # an absurd number: unreadable, the window unchanged
    ("<think>[5] > [4]</think> [2] > [1] > [3] > [4] > [5]", [1, 0, 2, 3, 4], 0),
])
def test_an_imperfect_permutation_still_gives_every_candidate_once(one_window, endpoint, answer, order, repaired):
    run, _ = one_window
    endpoint.script(Scripted(200, _chat(answer)), Scripted(200, _chat("[1] > [2] > [3] > [4] > [5]")))
    outcome, _ = run()
    assert _order(outcome, "Q1") == [POOL["Q1"][i] for i in order]
    assert _order(outcome, "Q2") == POOL["Q2"]
    scores = [float(line.split()[4]) for line in outcome.run_path.read_text().splitlines()]
    assert scores == [5.0, 4.0, 3.0, 2.0, 1.0] * 2
    assert outcome.results["throughput"]["listwise_repaired_answers"] == repaired


def test_server_errors_and_rate_limits_through_the_endpoint(one_window, endpoint):
    run, waits = one_window
    endpoint.script(Scripted(500, {"error": {"message": "boom"}}), Scripted(503, {"error": {"message": "down"}}))
    with pytest.raises(StatbenchError, match=r"^listwise-llm: http://127\.0\.0\.1:\d+/v1/chat/completions answered "
                                             r"HTTP 503 after 2 attempts"):
        run()
    assert waits == [1.0]
    waits.clear()
    endpoint.script(Scripted(429, {"error": {"message": "slow"}}, {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}))
    with pytest.raises(StatbenchError, match=r"^listwise-llm: .* answered HTTP 429 and asks to wait [\d,]+ days"):
        run()
    assert waits == []
    endpoint.script(Scripted(400, {"error": {"message": "context too long"}}))
    with pytest.raises(StatbenchError, match=r"^listwise-llm: .* answered HTTP 400: .*context too long"):
        run()


def test_a_slow_endpoint_is_one_line_after_the_timeout(one_window, endpoint):
    run, waits = one_window
    endpoint.script(Scripted(200, _chat("[1]"), delay=3), Scripted(200, _chat("[1]"), delay=3))
    with pytest.raises(StatbenchError, match=r"^listwise-llm: .* answered connection error after 2 attempts"):
        run(timeout=0.3)
    assert waits == [1.0]

