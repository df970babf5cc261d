"""An overall network bound larger than the platform can wait (``STATBENCH_DOWNLOAD_TIMEOUT``
or ``STATBENCH_HUB_TIMEOUT`` set to 1e12 s, "never stop"): waiting on the worker thread
raised ``OverflowError: timestamp out of range`` (a traceback, for a download that would
have worked). The wait is capped at the longest one the platform holds (``threading.TIMEOUT_MAX``,
about 292 years), so a huge bound means "wait", as it says."""

from __future__ import annotations

import hashlib
import http.server
import threading
import time

import pytest

from statbench.data.deadline import DeadlinePassed, call_within


@pytest.mark.parametrize("seconds", [1e10, 1e12, 1e300])
def test_a_bound_beyond_the_platform_s_longest_wait_waits_for_the_result(seconds):
    assert call_within(seconds, lambda: time.sleep(0.05) or 7) == 7
    with pytest.raises(KeyError):
        call_within(seconds, lambda: {}["missing"])


def test_a_short_bound_still_stops_waiting():
    release = threading.Event()
    with pytest.raises(DeadlinePassed):
        call_within(0.05, release.wait)
    release.set()


def test_a_download_with_a_huge_environment_bound_is_written(tmp_path, monkeypatch):
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
    monkeypatch.setenv("STATBENCH_DOWNLOAD_TIMEOUT", "1e12")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/c.jsonl"
        dest = fetch(url, tmp_path / "c.jsonl", hashlib.sha256(body).hexdigest())
        assert dest.read_bytes() == body
    finally:
        server.shutdown()
        server.server_close()
