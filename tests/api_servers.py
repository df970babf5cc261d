"""Local HTTP servers (127.0.0.1, a free port) speaking the real JSON shapes of the APIs
statbench calls: Cohere ``POST /v2/rerank``, Voyage ``POST /v1/rerank`` and an
OpenAI-compatible ``POST /v1/chat/completions``. Tests script failures (429 with
Retry-After, 5xx, malformed bodies, slow answers) by queueing them; every request is recorded.

The rerank servers score a document by word overlap with the query
(:func:`overlap_score`), so a test can compute the expected scores by hand."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

KEY = "test-key-123"


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def overlap_score(query: str, document: str) -> float:
    """|query words ∩ document words| / |query words|."""
    q = words(query)
    return len(q & words(document)) / max(len(q), 1)


@dataclass
class Scripted:
    """One scripted answer: HTTP status, JSON-able body (or raw bytes), headers."""

    status: int
    body: object
    headers: dict = field(default_factory=dict)
    #: seconds to wait before answering (a slow server)
    delay: float = 0.0


class ApiServer:
    """Serve ``answer(path, body) -> (status, body)`` until :meth:`close`; queued
    :class:`Scripted` answers are sent first, one per request."""

    def __init__(self, answer: Callable[[str, dict], tuple[int, object]]):
        self.requests: list[tuple[str, dict, dict]] = []
        self.queue: deque[Scripted] = deque()
        self._answer = answer
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                server.requests.append((self.path, dict(self.headers), body))
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._send(401, {"message": "invalid api token", "detail": "invalid api token"}, {})
                if server.queue:
                    item = server.queue.popleft()
                    if item.delay:
                        time.sleep(item.delay)
                    try:
                        return self._send(item.status, item.body, item.headers)
                    except OSError:  # the client gave up waiting
                        return None
                status, answer = server._answer(self.path, body)
                self._send(status, answer, {})

            def _send(self, status, body, headers):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *items: Scripted) -> None:
        self.queue.extend(items)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _ranked(query: str, documents: list[str]) -> list[dict]:
    scored = [{"index": i, "relevance_score": overlap_score(query, d)} for i, d in enumerate(documents)]
    return sorted(scored, key=lambda r: -r["relevance_score"])


def cohere_answer(path: str, body: dict) -> tuple[int, object]:
    """Cohere v2 rerank: {model, query, documents[str], top_n?, max_tokens_per_doc?} ->
    {id, results[{index, relevance_score}], meta{api_version{version}, billed_units{search_units}}}."""
    if path != "/v2/rerank":
        return 404, {"message": f"no route {path}"}
    if not isinstance(body.get("documents"), list) or not body.get("query") or not body.get("model"):
        return 400, {"message": "invalid request: model, query and documents are required"}
    results = _ranked(body["query"], body["documents"])[: body.get("top_n") or None]
    return 200, {"id": "rr-1", "results": results,
                 "meta": {"api_version": {"version": "2", "is_experimental": False},
                          "billed_units": {"search_units": 1}}}


def voyage_answer(path: str, body: dict) -> tuple[int, object]:
    """Voyage rerank: {query, documents[str], model, top_k?, truncation?} ->
    {object: list, data[{index, relevance_score}], model, usage{total_tokens}}."""
    if path != "/v1/rerank":
        return 404, {"detail": f"no route {path}"}
    if not isinstance(body.get("documents"), list) or not body.get("query") or not body.get("model"):
        return 400, {"detail": "query, documents and model are required"}
    data = _ranked(body["query"], body["documents"])[: body.get("top_k") or None]
    tokens = sum(len(words(body["query"])) + len(words(d)) for d in body["documents"])
    return 200, {"object": "list", "data": data, "model": body["model"], "usage": {"total_tokens": tokens}}


def chat_answer(reply: Callable[[list[dict]], str]) -> Callable[[str, dict], tuple[int, object]]:
    """OpenAI chat completions: {model, messages, ...} -> {id, object, created, model,
    choices[{index, message{role, content}, finish_reason}], usage{...}}."""

    def answer(path: str, body: dict) -> tuple[int, object]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
        text = reply(body["messages"])
        return 200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                  "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    return answer
