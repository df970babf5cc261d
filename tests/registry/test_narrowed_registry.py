"""`statbench run` loads only the plugins it names (registry.plugins.narrow_registry), and
answers every lookup exactly as the registry of every plugin would: a built-in keeps its
name, a broken or failing third-party plugin is failed alike, anything else loads all."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.registry import plugins

ECHO = """
from statbench import hookimpl
from statbench.api import Retriever

class Echo(Retriever):
    name = "{name}"
    description = "returns nothing"
    def index(self, corpus, ctx): pass
    def search(self, queries, k, ctx): return {{q.id: [] for q in queries}}

@hookimpl
def register_retrievers(register):
    register(Echo)
"""

FAILING_COMMANDS = ECHO + """
@hookimpl
def register_commands(cli):
    raise RuntimeError("boom in commands")
"""

BENCHMARK = ECHO + """
from statbench.api import Benchmark, BenchmarkTask

@hookimpl
def register_benchmarks(register):
    register(Benchmark(name="fakebench", version="1",
                       tasks=(BenchmarkTask(task="stard", measure="R@100", protocol="5-fold", version="1"),)))
"""


@pytest.fixture(autouse=True)
def nothing_loaded():
    """Narrowing happens in a process that has loaded no plugin yet, as `statbench run` is."""
    plugins.reset_registry(entry_points=True)
    yield
    plugins.reset_registry(entry_points=True)


def run(stard_dir, tmp_path, *extra, model="bm25"):
    return CliRunner().invoke(cli, ["run", "--task", "stard", "--model", model, "--data-dir", str(stard_dir),
                                    "--output", str(tmp_path / "out"), "--no-progress", *extra])


def loaded_builtins() -> set[str]:
    return {key.split(":", 1)[1] for key in plugins._loaded if key.startswith("statbench:")}


def test_a_run_loads_only_the_builtins_it_names_and_every_third_party_plugin(fake_distributions, stard_dir,
                                                                            tmp_path):
    fake_distributions("statbench-fake-other", "sbfake_other", ECHO.format(name="other-echo"))
    result = run(stard_dir, tmp_path)
    assert result.exit_code == 0, result.output
    assert loaded_builtins() == {"stard", "bm25", plugins.BUILTIN_MEASURES}
    assert "statbench-fake-other:sbfake_other" in plugins._loaded
    assert isinstance(plugins._registry, plugins._Narrowed)
    recorded = json.loads((tmp_path / "out" / "results.json").read_text())
    assert recorded["model"]["plugin"] == {"name": "bm25", "distribution": "statbench",
                                           "version": plugins._loaded["statbench:bm25"].version}


def test_the_narrowed_answer_is_the_whole_registrys(fake_distributions):
    fake_distributions("statbench-fake-dupe", "sbfake_dupe", ECHO.format(name="bm25"))
    assert plugins.narrow_registry({"tasks": ["stard"], "retrievers": ["bm25"]}, {"run"})
    narrowed = plugins.get_registry()
    task, model = narrowed.get("tasks", "stard"), narrowed.get("retrievers", "bm25")
    plugins.reset_registry()
    whole = plugins.get_registry()
    assert not isinstance(whole, plugins._Narrowed)
    for kind, entry in (("tasks", task), ("retrievers", model)):
        assert entry.cls is whole.get(kind, entry.name).cls
        assert entry.plugin.as_dict() == whole.get(kind, entry.name).plugin.as_dict()
    # the clash with the third party is seen by both, and the built-in keeps the name
    assert [e.qualified for e in whole.clashes[("retrievers", "bm25")]] == ["statbench:bm25",
                                                                           "statbench-fake-dupe:bm25"]


def test_a_builtin_name_a_third_party_also_registers_stays_the_builtins_with_the_warning(fake_distributions,
                                                                                       stard_dir, tmp_path):
    fake_distributions("statbench-fake-dupe", "sbfake_dupe", ECHO.format(name="bm25"))
    result = run(stard_dir, tmp_path)
    assert result.exit_code == 0, result.output  # the echo retriever would rank nothing
    assert "'bm25' is registered by several plugins; using statbench:bm25 (the built-in wins)" in " ".join(
        result.output.split())
    assert isinstance(plugins._registry, plugins._Narrowed)


def test_a_plugin_failing_in_register_commands_is_failed_for_run_too(fake_distributions, stard_dir, tmp_path):
    fake_distributions("statbench-fake-cmdfail", "sbfake_cmdfail", FAILING_COMMANDS.format(name="echo-cmd"))
    result = run(stard_dir, tmp_path, model="echo-cmd")
    assert result.exit_code == 2
    assert "unknown retriever 'echo-cmd'" in result.output
    assert run(stard_dir, tmp_path).exit_code == 0  # the built-ins keep working


def test_a_plugin_broken_at_import_does_not_stop_a_run_and_is_reported(fake_distributions, stard_dir, tmp_path):
    fake_distributions("statbench-fake-broken", "sbfake_broken", "raise RuntimeError('boom at import')\n")
    result = run(stard_dir, tmp_path)
    assert result.exit_code == 0, result.output
    assert plugins._loaded["statbench-fake-broken:sbfake_broken"].error.startswith("RuntimeError: boom at import")
    rows = json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).output)
    (broken,) = [row for row in rows if row["distribution"] == "statbench-fake-broken"]
    assert broken["error"].startswith("RuntimeError: boom at import")


def test_a_third_party_model_is_found_by_the_whole_registry(fake_distributions, stard_dir, tmp_path):
    fake_distributions("statbench-fake-echo", "sbfake_echo", ECHO.format(name="echo"))
    result = run(stard_dir, tmp_path, model="echo")
    # found and run: it ranks nothing, which stops the run with the model named
    assert result.exit_code == 2
    assert "model 'echo' ranked nothing for any of the" in " ".join(result.output.split())
    assert plugins._entry_point_infos is not None  # every plugin was loaded to find it


@pytest.mark.parametrize("names", [
    {"tasks": ["stard"], "retrievers": ["statbench:bm25"]},  # a qualified name
    {"tasks": ["beir:/nowhere"], "retrievers": ["bm25"]},  # a task resolver's name
    {"tasks": ["stard"], "retrievers": ["no-such-model"]},  # no built-in gives it
])
def test_names_not_plainly_a_builtins_are_not_narrowed(names):
    assert not plugins.narrow_registry(names, {"run"})
    assert plugins._registry is None


def test_a_loaded_plugin_with_a_benchmark_is_not_narrowed(fake_distributions):
    # a benchmark names other plugins' tasks: whether it holds depends on every plugin
    fake_distributions("statbench-fake-bench", "sbfake_bench", BENCHMARK.format(name="bench-echo"))
    assert not plugins.narrow_registry({"tasks": ["stard"], "retrievers": ["bm25"]}, {"run"})


def test_any_other_lookup_of_a_narrowed_registry_loads_every_plugin():
    assert plugins.narrow_registry({"tasks": ["stard"], "retrievers": ["bm25"]}, {"run"})
    narrowed = plugins.get_registry()
    assert plugins._entry_point_infos is None
    assert narrowed.get("retrievers", "ql").name == "ql"  # not named when narrowed
    assert plugins._entry_point_infos is not None
    assert "bsard" in narrowed.tasks and "statutes-v1" in narrowed.benchmarks
    assert not isinstance(plugins.get_registry(), plugins._Narrowed)


def test_the_builtins_keep_what_narrowing_relies_on():
    """No two built-in entry points register one name of a kind (the first loaded would keep
    it, which a narrowed registry cannot see), and only BUILTIN_MEASURES registers measures
    (every narrowed registry loads it)."""
    registry = plugins.get_registry()
    builtin = [key for key, info in registry.plugins.items() if info.distribution == plugins.BUILTIN_DISTRIBUTION]
    assert not [info.name for key, info in registry.plugins.items() if key in builtin and info.error]
    clashes = {(kind, name): [e.qualified for e in entries] for (kind, name), entries in registry.clashes.items()
               if sum(e.plugin.distribution == plugins.BUILTIN_DISTRIBUTION for e in entries) > 1}
    assert clashes == {}
    measures = {e.plugin.name for e in registry.measures.values() if e.plugin.distribution == "statbench"}
    assert measures == {plugins.BUILTIN_MEASURES}
    named_alike = [{kind: [info.name]} for info in (registry.plugins[key] for key in builtin)
                   for kind in ("tasks", "retrievers") if info.name in info.registered[kind]
                   and not info.registered["benchmarks"]]
    assert {"retrievers": ["bm25"]} in named_alike and {"tasks": ["stard"]} in named_alike
    for names in named_alike:  # a run naming one of them narrows
        plugins.reset_registry(entry_points=True)
        assert plugins.narrow_registry(names, {"run"}), names


def test_a_clashing_plugin_failing_in_register_commands_is_dropped_from_the_narrowed_registry(fake_distributions,
                                                                                            stard_dir, tmp_path):
    fake_distributions("statbench-fake-cmdfail", "sbfake_cmdfail", FAILING_COMMANDS.format(name="bm25"))
    result = run(stard_dir, tmp_path)
    assert result.exit_code == 0, result.output
    assert "registered by several plugins" not in result.output  # dropped whole: no clash left
    narrowed = plugins.get_registry()
    assert isinstance(narrowed, plugins._Narrowed)
    assert narrowed.get("retrievers", "bm25").plugin.distribution == "statbench"
    assert plugins._loaded["statbench-fake-cmdfail:sbfake_cmdfail"].error.startswith("RuntimeError: boom in commands")


def test_narrowing_that_fails_unexpectedly_leaves_the_whole_registry_to_answer(monkeypatch, stard_dir, tmp_path):
    from statbench.commands import cli as cli_module

    def broken(names, reserved):
        plugins._registry = "half-built"  # whatever it left must not answer
        raise AssertionError("a bug while narrowing")

    monkeypatch.setattr(cli_module, "narrow_registry", broken)
    result = run(stard_dir, tmp_path)
    assert result.exit_code == 0, result.output
    assert isinstance(plugins._registry, plugins.Registry)


def test_a_name_not_given_is_not_looked_up():
    # `--pool` runs give no model, most runs no reranker
    assert plugins.narrow_registry({"tasks": ["stard"], "retrievers": [None], "rerankers": [None]}, {"run"})
    assert loaded_builtins() == {"stard", plugins.BUILTIN_MEASURES}
    assert plugins.get_registry().get("tasks", "stard").plugin.distribution == "statbench"
