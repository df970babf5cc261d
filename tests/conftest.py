"""Shared fixtures: an isolated cache per test and tiny task data written by the tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statbench.registry import plugins

from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl  # noqa: F401 (re-exported for fixtures)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own cache and data roots, and a fresh plugin registry."""
    root = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("STATBENCH_CACHE", str(root))
    monkeypatch.setenv("STATBENCH_DATA", str(root / "data"))
    monkeypatch.setenv("IR_DATASETS_HOME", str(root / "ir_datasets"))
    plugins.reset_registry()
    yield root
    plugins.reset_registry()


@pytest.fixture
def stard_dir(tmp_path) -> Path:
    """A STARD data folder in the upstream layout (queries.json + corpus.jsonl)."""
    root = tmp_path / "stard"
    write_jsonl(root / "corpus.jsonl", STARD_CORPUS)
    (root / "queries.json").write_text(json.dumps(STARD_QUERIES, ensure_ascii=False), encoding="utf-8")
    return root


@pytest.fixture
def fake_distributions(tmp_path, monkeypatch):
    """Install distributions by writing dist-info folders onto sys.path (no pip needed):
    ``install(dist, module, source, entry_name=None)``; forgotten again after the test."""
    import sys
    import textwrap

    from statbench.registry import plugins as registry

    modules: list[str] = []

    def install(dist: str, module: str, source: str, entry_name: str | None = None):
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{dist.replace('-', '_')}-1.2.3.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
        (info / "entry_points.txt").write_text(f"[statbench]\n{entry_name or module} = {module}\n")
        modules.append(module)

    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reset_registry(entry_points=True)
    yield install
    registry.reset_registry(entry_points=True)
    for name in modules:
        sys.modules.pop(name, None)
