"""Shared fixtures: an isolated cache per test and tiny task data written by the tests; and how
the suite is shared out to pytest-xdist's workers (groups, order, colbert-ai's compile)."""

from __future__ import annotations

import json
from pathlib import Path

import colbert_extensions
import pytest
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl  # noqa: F401 (re-exported for fixtures)

from statbench.registry import plugins

try:  # pytest >= 9.2: structured node ids (see keep_group_in_node_id)
    from _pytest.nodeid import NodeId
except ImportError:
    NodeId = None

#: the background compile of colbert-ai's extensions started by this worker, if any
COLBERT_BUILD = pytest.StashKey()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """The suite runs on pytest-xdist workers (``-n`` in pyproject's addopts, ``--dist loadgroup``).
    A module whose tests share a module- or class-scoped fixture runs on one worker (an
    ``xdist_group`` named by the module), so that fixture is built once; a module that
    names its own group (a real Ray cluster, Slurm) keeps it. xdist hands out the groups first
    (most tests first), then single tests in this order: on a worker, ``slow`` tests come first,
    so that no long test starts last while the other worker idles."""
    for item in items:
        if not any(item.iter_markers("xdist_group")) and shares_fixture_across_tests(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        if getattr(config.option, "loadgroup", False):
            keep_group_in_node_id(item)
    if hasattr(config, "workerinput"):  # the same order on every worker (xdist checks)
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: order kept otherwise


def pytest_collection_finish(session):
    """On the first xdist worker: colbert-ai's extensions compiled in the background (see
    colbert_extensions), so that no worker waits on another's compile."""
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput and workerinput.get("workerid") == "gw0" and colbert_extensions.wanted(
            item.nodeid for item in session.items):
        session.config.stash[COLBERT_BUILD] = colbert_extensions.start_build()


def pytest_sessionfinish(session):
    build = session.config.stash.get(COLBERT_BUILD, None)
    if build is not None:
        build.wait()


def keep_group_in_node_id(item) -> None:
    """xdist sends a group to one worker by the ``@GROUP`` it appends to each test's node id.
    pytest 9.2 keeps node ids structured, and pytest-xdist 3.8's suffix is lost: the groups
    would be silently ignored (pytest-xdist#1386). The suffix is appended here the way xdist
    appends it (names sorted, joined by ``_``); where pytest has no structured id, xdist does it."""
    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})
    grouped = item.nodeid.rfind("@") > item.nodeid.rfind("]")  # how xdist reads it back
    if names and NodeId is not None and hasattr(item, "_id") and not grouped:
        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


def shares_fixture_across_tests(item) -> bool:
    """Whether ``item`` uses a fixture built once for its module or class."""
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return any(d.scope in ("module", "class") for defs in definitions.values() for d in defs)


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
