"""Shared by the source tests: a plugin distribution installed as a wheel installer does
(its files, a dist-info with RECORD hashes and, when given, direct_url.json) into a
site-packages folder on sys.path, a PEP 503/691 simple index on 127.0.0.1, the plugin as a git
work tree or an editable install, and the finder run on a run of it."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib
import io
import json
import os
import subprocess
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from statbench.leaderboard.repo.source_finder import SourceFinder
from statbench.results.record import PluginRecord

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


class _Part:
    def __init__(self, plugin):
        self.plugin = plugin


class _Run:
    """What the finder reads of a Results: the plugins and the statbench version."""

    def __init__(self, *plugins):
        self.statbench_version = "0.1.0"
        self.task = _Part(PluginRecord(name="stard", distribution="statbench", version="0.1.0"))
        self.model = _Part(plugins[0])
        self.reranker = _Part(plugins[1]) if len(plugins) > 1 else None


def run_of(name=NAME, version=VERSION) -> _Run:
    return _Run(PluginRecord(name="fake", distribution=name, version=version))


def find(tmp_path, index, run=None, timeout=5.0):
    work = tmp_path / f"work-{time.monotonic_ns()}"
    work.mkdir()
    return SourceFinder(work, index_url=index.url, timeout=timeout).sources_of(run or run_of())


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


def plugin_project(root: Path, version: str = VERSION) -> Path:
    """A setuptools project of the fake plugin."""
    (root / MODULE).mkdir(parents=True)
    (root / MODULE / "__init__.py").write_text("SCORE = 1\n")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=69"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{NAME}"\nversion = "{version}"\n\n[tool.setuptools]\npackages = ["{MODULE}"]\n')
    return root


def git_repo(tmp_path: Path, sub: str | None = None, remote: str = "https://example.org/sb/plug.git",
             pushed: bool = True) -> tuple[Path, str]:
    """A git work tree holding the project (in ``sub``), committed; its commit on a
    remote-tracking branch when ``pushed``."""
    top = tmp_path / "repo"
    project = plugin_project(top / sub if sub else top)
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "plugin")
    git(top, "remote", "add", "origin", remote)
    commit = git(top, "rev-parse", "HEAD")
    if pushed:
        git(top, "update-ref", "refs/remotes/origin/main", commit)
    return project, commit


def editable(site: Path, folder: Path) -> None:
    install(site, direct_url={"url": folder.as_uri(), "dir_info": {"editable": True}})


def _wheel_of(folder: Path, version: str, files: dict[str, bytes]) -> Path:
    """A wheel of the fake plugin at ``version`` holding ``files``."""
    path = folder / f"sb_fake_plug-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"sb_fake_plug-{version}.dist-info/METADATA",
                         f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n")
    return path
