"""Plugin discovery: entry points, failures reported not raised, kill switch, in-process plugins."""

import sys
import textwrap

import pytest
from click.testing import CliRunner

from statbench import hookimpl, plugins
from statbench.api import Retriever
from statbench.cli import cli
from statbench.errors import UnknownNameError
from statbench.testing import registered_plugin


@pytest.fixture
def fake_distributions(tmp_path, monkeypatch):
    """Install distributions by writing dist-info folders onto sys.path (no pip needed)."""

    def install(dist: str, module: str, source: str, entry_name: str | None = None):
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{dist.replace('-', '_')}-1.2.3.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
        (info / "entry_points.txt").write_text(f"[statbench]\n{entry_name or module} = {module}\n")

    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.reset_registry(entry_points=True)
    yield install
    plugins.reset_registry(entry_points=True)
    for name in [m for m in sys.modules if m.startswith("sbfake_")]:
        del sys.modules[name]


GOOD = """
from statbench import hookimpl
from statbench.api import Retriever

class Echo(Retriever):
    name = "echo"
    description = "returns nothing"
    def index(self, corpus, ctx): pass
    def search(self, queries, k, ctx): return {q.id: [] for q in queries}

@hookimpl
def register_retrievers(register):
    register(Echo)
"""


def test_builtins_register_through_entry_points():
    registry = plugins.get_registry()
    assert registry.retrievers["bm25"].plugin.distribution == "statbench"
    assert registry.tasks["stard"].plugin.name == "stard"


def test_third_party_distribution_is_discovered_and_attributed(fake_distributions):
    fake_distributions("statbench-fake-good", "sbfake_good", GOOD)
    entry = plugins.get_registry().retrievers["echo"]
    assert (entry.plugin.distribution, entry.plugin.version) == ("statbench-fake-good", "1.2.3")
    assert entry.plugin.registered["retrievers"] == ["echo"]


def test_broken_plugin_is_reported_and_cli_keeps_working(fake_distributions):
    fake_distributions("statbench-fake-broken", "sbfake_broken", "raise RuntimeError('boom at import')\n")
    fake_distributions("statbench-fake-good", "sbfake_good", GOOD)
    result = CliRunner().invoke(cli, ["list", "models"])
    assert result.exit_code == 0, result.output
    assert "bm25" in result.output and "echo" in result.output
    assert "failed to load and was skipped: RuntimeError: boom at import" in result.output
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    broken = [p for p in __import__("json").loads(result.output) if p["distribution"] == "statbench-fake-broken"]
    assert broken[0]["error"].startswith("RuntimeError: boom at import")


def test_plugin_raising_during_registration_is_isolated(fake_distributions):
    fake_distributions("statbench-fake-raises", "sbfake_raises", """
        from statbench import hookimpl
        @hookimpl
        def register_retrievers(register):
            raise ValueError("bad registration")
    """)
    registry = plugins.get_registry()
    assert "bm25" in registry.retrievers
    assert [p.error for p in registry.errors] == [registry.plugins["statbench-fake-raises:sbfake_raises"].error]
    assert registry.errors[0].error.startswith("ValueError: bad registration")


def test_kill_switch_allow_list(fake_distributions, monkeypatch):
    fake_distributions("statbench-fake-good", "sbfake_good", GOOD)
    monkeypatch.setenv("STATBENCH_LOAD_PLUGINS", "statbench")
    plugins.reset_registry(entry_points=True)
    registry = plugins.get_registry()
    assert "bm25" in registry.retrievers and "echo" not in registry.retrievers
    monkeypatch.setenv("STATBENCH_LOAD_PLUGINS", "")
    plugins.reset_registry(entry_points=True)
    assert plugins.get_registry().retrievers == {}
    monkeypatch.setenv("STATBENCH_LOAD_PLUGINS", "statbench_fake_good")
    plugins.reset_registry(entry_points=True)
    assert set(plugins.get_registry().retrievers) == {"echo"}


class Duplicate(Retriever):
    name = "bm25"


class DuplicatePlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Duplicate)


def test_duplicate_name_is_refused_and_reported():
    with registered_plugin(DuplicatePlugin(), "dupe"):
        registry = plugins.get_registry()
        assert registry.retrievers["bm25"].cls is not Duplicate
        assert "already registered by plugin 'bm25'" in registry.plugins["dupe"].error


def test_unknown_name_lists_choices():
    with pytest.raises(UnknownNameError) as err:
        plugins.get_registry().get("retrievers", "bm52")
    assert "unknown retriever 'bm52'; valid choices:" in str(err.value)
    assert "bm25" in str(err.value) and "ql" in str(err.value)
