"""Plugin discovery: entry points, failures reported not raised, kill switch, in-process plugins."""


import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.registry import plugins
from statbench.api import Retriever
from statbench.commands.cli import cli
from statbench.errors import UnknownNameError
from statbench.testing import registered_plugin


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


def test_duplicate_name_keeps_the_builtin_and_is_reported(caplog):
    with registered_plugin(DuplicatePlugin(), "dupe"):
        registry = plugins.get_registry()
        # the plain name stays the built-in's; the clash is recorded with both providers
        assert registry.retrievers["bm25"].cls is not Duplicate
        assert registry.retrievers["bm25"].plugin.distribution == "statbench"
        assert [e.qualified for e in registry.clashes[("retrievers", "bm25")]] == ["statbench:bm25", "dupe:bm25"]
        assert registry.plugins["dupe"].error is None
        # a qualified name selects exactly one provider
        assert registry.get("retrievers", "dupe:bm25").cls is Duplicate
        assert registry.get("retrievers", "statbench:bm25").cls is registry.retrievers["bm25"].cls
        with caplog.at_level("WARNING", logger="statbench"):
            registry.get("retrievers", "bm25")
        assert "'bm25' is registered by several plugins; using statbench:bm25 (the built-in wins)" in caplog.text
        with pytest.raises(UnknownNameError, match="unknown retriever 'nobody:bm25'"):
            registry.get("retrievers", "nobody:bm25")


def test_unknown_name_lists_choices():
    with pytest.raises(UnknownNameError) as err:
        plugins.get_registry().get("retrievers", "bm52")
    assert "unknown retriever 'bm52'; valid choices:" in str(err.value)
    assert "bm25" in str(err.value) and "ql" in str(err.value)
