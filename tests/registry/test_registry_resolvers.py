"""Task name resolvers (``--task PREFIX:ARG``): registered through a hook like any plugin,
so the registry knows no task family by name (``beir:`` included), and the registry sits
below scoring and loading (it imports neither)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Document, Measure, Query, Split, Task, TaskData, TaskInfo
from statbench.commands.cli import cli
from statbench.registry.checks import PluginError
from statbench.registry.plugins import get_registry
from statbench.testing import registered_plugin
from repo_paths import REPO_ROOT

HARNESS = REPO_ROOT / "harness"


def _imports(path: Path) -> set[str]:
    """Every statbench module a file imports, at any depth (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {name for name in found if name.startswith("statbench")}


@pytest.mark.parametrize("module", sorted(p.name for p in (HARNESS / "registry").glob("*.py")))
def test_the_registry_imports_nothing_above_it(module):
    above = ("statbench.loading", "statbench.scoring", "statbench.run", "statbench.commands", "statbench.grid",
             "statbench.results", "statbench.models", "statbench.tasks", "statbench.leaderboard", "statbench.api",
             "statbench.testing")
    imported = _imports(HARNESS / "registry" / module)
    assert not [name for name in imported if name.startswith(above)], imported


def test_no_task_family_is_named_in_the_registrys_code():
    tree = ast.parse((HARNESS / "registry" / "plugins.py").read_text("utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    words = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and id(n) not in docstrings]
    words += [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    words += [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    assert not [w for w in words if "beir" in w.lower()]


def test_beir_is_a_resolver_registered_like_any_plugin():
    registry = get_registry()
    entry = registry.task_resolvers["beir"]
    assert (entry.plugin.name, entry.plugin.distribution, entry.plugin.module) == ("beir", "statbench",
                                                                                  "statbench.loading.beir")
    assert registry.plugins["statbench:beir"].as_dict()["registered"] == {"task_resolvers": ["beir"]}


# --- a third-party resolver --------------------------------------------------------------


def toy_task(size: str) -> type[Task]:
    """``toy:N``: N documents, one query per document, each judging its own document."""
    n = int(size)
    info = TaskInfo(name=f"toy-{n}", language="en", measures=(Measure("R@1", "R@1"),), depth=10)

    def load(self, data_dir, log):
        corpus = {f"d{i}": Document(f"d{i}", f"article number {i} about topic{i}") for i in range(n)}
        queries = {f"q{i}": Query(f"q{i}", f"topic{i}") for i in range(n)}
        return TaskData(corpus=corpus, queries=queries, qrels={f"q{i}": {f"d{i}": 1} for i in range(n)},
                        splits=[Split("test", tuple(queries))], files=[], checksum="0" * 64)

    return type(f"Toy{n}", (Task,), {"info": info, "load": load})


class ToyResolver:
    @hookimpl
    def register_task_resolvers(self, register):
        register("toy", toy_task)


class RaisingResolver:
    @hookimpl
    def register_task_resolvers(self, register):
        register("boom", lambda arg: {}[arg])


class NotATask:
    @hookimpl
    def register_task_resolvers(self, register):
        register("nota", lambda arg: dict)


class BadPrefix:
    @hookimpl
    def register_task_resolvers(self, register):
        register("Bad:Prefix", toy_task)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_a_plugin_resolver_gives_a_task_that_runs(tmp_path):
    with registered_plugin(ToyResolver(), "toy-resolver"):
        entry = get_registry().get("tasks", "toy:3")
        assert entry.name == "toy-3" and entry.plugin.name == "toy-resolver"
        result = invoke("run", "--task", "toy:4", "--model", "bm25", "--output", tmp_path / "out", "--no-progress")
        assert result.exit_code == 0, result.output
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["task"]["name"] == "toy-4" and results["aggregate"]["R@1"]["mean"] == 1.0


def test_a_resolver_prefix_wins_over_a_distribution_of_that_name():
    with registered_plugin(ToyResolver(), "toy-resolver"):
        assert get_registry().get("tasks", "toy:2").cls.task_info().name == "toy-2"


@pytest.mark.parametrize("plugin, name, message", [
    (RaisingResolver(), "boom:x", "task resolver 'boom' (raising:boom) failed while resolving the task boom:x: KeyError: 'x'"),
    (NotATask(), "nota:x", "task resolver 'nota' (not-a-task:nota) built a task that breaks the contract: <class 'dict'> "
                           "must subclass statbench.api.Task"),
])
def test_a_broken_resolver_is_one_line(plugin, name, message, tmp_path):
    key = message.split("(")[1].split(":")[0]
    with registered_plugin(plugin, key):
        with pytest.raises(PluginError) as caught:
            get_registry().get("tasks", name)
        assert str(caught.value) == message
        result = invoke("run", "--task", name, "--model", "bm25", "--output", tmp_path / "out", "--no-progress")
        assert result.exit_code == 2 and result.output.strip().splitlines() == [f"Error: {message}"]


def test_a_resolver_prefix_must_be_a_plain_name():
    with registered_plugin(BadPrefix(), "bad-prefix"):
        registry = get_registry()
        assert "task resolver prefix 'Bad:Prefix' must be a lower-case name" in registry.plugins["bad-prefix"].error
        assert "Bad:Prefix" not in registry.task_resolvers
