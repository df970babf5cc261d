"""Shared by the source tests: a plugin distribution installed as a wheel installer does
(its files, a dist-info with RECORD hashes and, when given, direct_url.json) into a
site-packages folder on sys.path, and a PEP 503/691 simple index on 127.0.0.1."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

NAME, VERSION = "sb-fake-plug", "1.0"
MODULE = "sb_fake_plug_code"


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    """A site-packages folder first on sys.path."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    return root


def install(site: Path, name: str = NAME, version: str = VERSION, direct_url: dict | None = None,
            extra_record: list[tuple[str, bytes]] = (), tags=("py3-none-any",)) -> Path:
    """Install a distribution as a wheel installer does: its files, a dist-info with
    METADATA, WHEEL, INSTALLER, RECORD (hashes) and, when given, direct_url.json."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    files = {f"{MODULE}/__init__.py": b"SCORE = 1\n", f"{MODULE}/data.json": b"{}\n",
             f"{info.name}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{info.name}/WHEEL": ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                    + "".join(f"Tag: {t}\n" for t in tags)).encode(),
             f"{info.name}/INSTALLER": b"pip\n",
             f"{info.name}/entry_points.txt": f"[statbench]\nfake = {MODULE}\n".encode()}
    for path, data in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    rows = [(path, record_hash(data), str(len(data))) for path, data in files.items()] + list(extra_record)
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
        rows.append((f"{info.name}/direct_url.json", "", ""))
    rows.append((f"{info.name}/RECORD", "", ""))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    (info / "RECORD").write_text(buffer.getvalue())
    importlib.invalidate_caches()
    return info


class _Index:
    """A PEP 503 (or 691 JSON) simple index on 127.0.0.1: ``files`` per project, ``mode``
    one of html, json, 500, hang; ``requests`` lists the paths asked for."""

    def __init__(self):
        self.files: dict[str, list[str]] = {}
        self.mode = "html"
        self.requests: list[str] = []
        self.release = threading.Event()
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                index.requests.append(self.path)
                if index.mode == "hang":
                    index.release.wait(30)
                    return
                project = self.path.strip("/").split("/")[-1]
                if index.mode == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                if project not in index.files:
                    self.send_response(404)
                    self.end_headers()
                    return
                if index.mode == "json":
                    body = json.dumps({"meta": {"api-version": "1.0"}, "name": project,
                                       "files": [{"filename": f, "url": f"../../f/{f}", "hashes": {}}
                                                 for f in index.files[project]]}).encode()
                    kind = "application/vnd.pypi.simple.v1+json"
                else:
                    body = ("<!DOCTYPE html><html><body>" + "".join(
                        f'<a href="../../packages/{f}#sha256=00">{f}</a><br/>' for f in index.files[project])
                        + "</body></html>").encode()
                    kind = "text/html"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def index():
    server = _Index()
    yield server
    server.close()
