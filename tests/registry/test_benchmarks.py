"""Declared benchmarks: the register_benchmarks hook, what the registry refuses (unknown
task, protocol, version or measure; not a Benchmark), a broken plugin reported not fatal,
clashes settled as for other kinds, and their listing."""

import json
import re
import types

import pytest
from click.testing import CliRunner
from rich.console import Console

from statbench import hookimpl
from statbench.api import Benchmark, BenchmarkError, BenchmarkTask, Measure, Task
from statbench.commands.benchmark_table import print_benchmarks
from statbench.commands.cli import cli
from statbench.errors import UnknownNameError
from statbench.registry import plugins
from statbench.testing import invoke_cli, registered_plugin


def _plugin(*benchmarks, tasks=(), name="bench_plugin"):
    """An in-process plugin module registering ``benchmarks`` (and task classes)."""
    module = types.ModuleType(name)

    @hookimpl
    def register_benchmarks(register):
        for bench in benchmarks:
            register(bench)

    module.register_benchmarks = register_benchmarks
    if tasks:
        @hookimpl
        def register_tasks(register):
            for cls in tasks:
                register(cls)

        module.register_tasks = register_tasks
    return module


def _registered(module, name="bench_plugin"):
    with registered_plugin(module, name):
        registry = plugins.get_registry()
        return registry, registry.plugins[name]


def _bench(*tasks, name="mine", version="1"):
    return Benchmark(name=name, version=version, tasks=tasks, description="a test benchmark")


class TinyTask(Task):
    name = "tiny-law"
    language = "en"
    measures = (Measure("R@10", "R@10"), Measure("MRR@10", "RR@10"))

    def load(self, data_dir, log):  # pragma: no cover - never loaded here
        raise NotImplementedError


class BadMeasureTask(TinyTask):
    name = "tiny-bad"
    measures = (Measure("X@1", "NoSuchMeasure@1"),)


def test_a_plugin_declares_a_benchmark_over_builtin_and_own_tasks():
    bench = _bench(BenchmarkTask("stard", "MRR@10", protocol="official"), BenchmarkTask("tiny-law", "R@10"))
    registry, info = _registered(_plugin(bench, tasks=(TinyTask,)))
    assert info.error is None
    entry = registry.benchmarks["mine-v1"]
    assert entry.cls is bench and entry.plugin is info
    assert info.registered["benchmarks"] == ["mine-v1"]
    assert "statutes-v1" in registry.benchmarks  # the built-in is still there


def test_plugins_json_lists_what_a_plugin_declares():
    bench = _bench(BenchmarkTask("ukstat", "nDCG@10"))
    with registered_plugin(_plugin(bench), "bench_plugin"):
        result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["bench_plugin"]["registered"] == {"benchmarks": ["mine-v1"]}
    assert rows["statutes_v1"]["registered"] == {"benchmarks": ["statutes-v1"]}


@pytest.mark.parametrize("task, message", [
    (BenchmarkTask("no-such-task", "R@100"), "benchmark 'mine-v1' names task 'no-such-task', which no plugin registers"),
    (BenchmarkTask("stard", "nDCG@10"), "benchmark 'mine-v1': task 'stard' does not score 'nDCG@10' (its measures: R@5,"),
    (BenchmarkTask("stard", "R@100", protocol="10-fold"),
     "benchmark 'mine-v1': task 'stard' has no protocol '10-fold' (its protocols: 5-fold, official)"),
    (BenchmarkTask("stard", "R@100", version="2"),
     "benchmark 'mine-v1' declares task 'stard' version 2, but the installed task is version 1"),
])
def test_a_benchmark_naming_what_is_not_there_fails_its_plugin_in_one_line(task, message):
    registry, info = _registered(_plugin(_bench(task)))
    assert info.error.startswith(f"BenchmarkError: {message}")
    assert "\n" not in info.error
    assert "mine-v1" not in registry.benchmarks
    assert info.registered["benchmarks"] == []
    assert "stard" in registry.tasks and "statutes-v1" in registry.benchmarks  # the rest keeps working


def test_a_plugin_is_registered_whole_or_not_at_all():
    """Its tasks are withdrawn with its broken benchmark, as with a task of unknown measures."""
    registry, info = _registered(_plugin(_bench(BenchmarkTask("tiny-law", "nDCG@10")), tasks=(TinyTask,)))
    assert "does not score 'nDCG@10'" in info.error
    assert "tiny-law" not in registry.tasks


def test_a_benchmark_over_a_task_whose_plugin_failed_is_refused():
    """The task's plugin fails on its measures; the benchmark naming that task then names
    an unregistered task: refused too, not kept pointing at nothing."""
    with registered_plugin(_plugin(tasks=(BadMeasureTask,), name="bad_tasks"), "bad_tasks"):
        module = _plugin(_bench(BenchmarkTask("tiny-bad", "X@1")))
        with registered_plugin(module, "bench_plugin"):
            registry = plugins.get_registry()
            assert registry.plugins["bad_tasks"].error
            assert "names task 'tiny-bad', which no plugin registers" in registry.plugins["bench_plugin"].error
            assert "mine-v1" not in registry.benchmarks


def test_register_refuses_what_is_not_a_benchmark():
    _, info = _registered(_plugin({"name": "mine", "tasks": ["stard"]}))
    assert info.error.startswith("BenchmarkError: {'name': 'mine', 'tasks': ['stard']} is not a statbench.api.Benchmark")


def test_the_same_benchmark_twice_from_one_plugin_is_refused():
    bench = _bench(BenchmarkTask("stard", "R@100"))
    _, info = _registered(_plugin(bench, bench))
    assert "benchmark 'mine-v1' registered twice by the same plugin" in info.error


def test_a_raising_hook_is_reported_and_the_cli_keeps_working():
    module = types.ModuleType("raising")

    @hookimpl
    def register_benchmarks(register):
        raise RuntimeError("boom in benchmarks")

    module.register_benchmarks = register_benchmarks
    with registered_plugin(module, "raising"):
        result = CliRunner().invoke(cli, ["list", "tasks"])
        registry = plugins.get_registry()
    assert result.exit_code == 0, result.output
    assert "stard" in result.output
    assert "plugin 'raising' (in-process) failed to load and was skipped: RuntimeError: boom in benchmarks" in result.output
    assert registry.plugins["raising"].error.startswith("RuntimeError: boom in benchmarks")


def test_a_clash_keeps_the_builtin_and_a_qualified_name_selects_the_other():
    other = Benchmark(name="statutes", version="1", tasks=(BenchmarkTask("stard", "R@5"),))
    with registered_plugin(_plugin(other), "bench_plugin"):
        registry = plugins.get_registry()
        assert registry.get("benchmarks", "statutes-v1").plugin.distribution == "statbench"
        assert [e.plugin.name for e in registry.providers("benchmarks", "statutes-v1")] == ["statutes_v1", "bench_plugin"]
        assert registry.get("benchmarks", "bench_plugin:statutes-v1").cls is other


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "Statutes", "version": "1", "tasks": (BenchmarkTask("stard", "R@100"),)},
     "benchmark name 'Statutes' must be lower-case"),
    ({"name": "s", "version": "", "tasks": (BenchmarkTask("stard", "R@100"),)}, "benchmark 's': version '' must be"),
    ({"name": "s", "version": "1", "tasks": ()}, "benchmark 's' declares no task"),
    ({"name": "s", "version": "1", "tasks": ("stard",)}, "benchmark 's': 'stard' is not a statbench.api.BenchmarkTask"),
    ({"name": "s", "version": "1", "tasks": (BenchmarkTask("stard", "R@100"), BenchmarkTask("stard", "R@5"))},
     "benchmark 's' declares task 'stard' twice"),
])
def test_a_malformed_declaration_is_refused_when_built(kwargs, message):
    with pytest.raises(BenchmarkError) as caught:
        Benchmark(**kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("kwargs, message", [
    ({"task": "", "measure": "R@100"}, "a benchmark task's task must be a non-empty str"),
    ({"task": "stard", "measure": None}, "a benchmark task's measure must be a non-empty str"),
    ({"task": "stard", "measure": "R@100", "data": "abc"}, "benchmark task 'stard': data 'abc' is not a sha256"),
    ({"task": "stard", "measure": "R@100", "protocol": 5}, "benchmark task 'stard': protocol must be a str"),
])
def test_a_malformed_task_entry_is_refused_when_built(kwargs, message):
    with pytest.raises(BenchmarkError) as caught:
        BenchmarkTask(**kwargs)
    assert str(caught.value).startswith(message)


def test_a_list_of_tasks_is_kept_as_a_tuple():
    bench = Benchmark(name="s", version="2", tasks=[BenchmarkTask("stard", "R@100")])
    assert bench.tasks == (BenchmarkTask("stard", "R@100"),) and bench.id == "s-v2"


def _printed(**kwargs) -> str:
    console = Console(width=200, record=True, color_system=None)
    print_benchmarks(console, plugins.get_registry(), **kwargs)
    return console.export_text()


def test_the_listing_shows_each_benchmark_and_its_tasks():
    text = _printed()
    assert "benchmarks (1)" in text
    assert "statutes-v1" in text
    assert "stard (R@100), ukstat (nDCG@10), coliee (F2@1), bsard (R@100), lleqa (R@100)" in text


def test_the_detailed_listing_shows_protocol_splits_version_and_measure():
    text = _printed(name="statutes-v1")
    line = next(line for line in text.splitlines() if "stard" in line and "fold-1" in line)
    cells = [cell.strip() for cell in line.strip("│ ").split("│")]
    assert cells == ["stard", "5-fold: fold-1, fold-2, fold-3, fold-4, fold-5", "1", "R@100",
                     "any (the board with the most rows)"]


def test_the_listing_escapes_markup_a_plugin_gave():
    bench = Benchmark(name="m", version="1", description="[bold]not markup[/bold]", tasks=(BenchmarkTask("stard", "R@5"),))
    with registered_plugin(_plugin(bench), "bench_plugin"):
        assert "[bold]not markup[/bold]" in _printed(verbose=True)


def test_an_unknown_benchmark_name_is_refused_with_the_choices():
    with pytest.raises(UnknownNameError) as caught:
        _printed(name="statutes-v9")
    assert str(caught.value) == "unknown benchmark 'statutes-v9'; valid choices: statutes-v1"


def test_statbench_list_shows_the_benchmarks_after_the_other_kinds():
    from statbench.testing import invoke_cli

    result = invoke_cli(["list"])
    assert result.exit_code == 0, result.output
    assert "benchmarks (1)" in result.output and "statutes-v1" in result.output
    assert result.output.index("tasks (") < result.output.index("benchmarks (1)")


def test_statbench_list_benchmarks_and_one_in_detail():
    result = invoke_cli(["list", "benchmarks"])
    assert result.exit_code == 0, result.output
    assert "benchmarks (1)" in result.output and not re.search(r"^tasks \(\d+\)", result.output, re.M)
    result = invoke_cli(["list", "benchmarks", "statutes-v1"])
    assert result.exit_code == 0 and "5-fold: fold-1, fold-2, fold-3, fold-4, fold-5" in result.output
    result = invoke_cli(["list", "benchmarks", "statutes-v9"])
    assert result.exit_code == 2
    assert "unknown benchmark 'statutes-v9'; valid choices: statutes-v1" in result.output
