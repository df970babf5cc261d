"""The third-party example distribution runs through `statbench run` like any built-in."""

import importlib
import json
import sys

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.registry.plugins import get_registry
from statbench.testing import registered_plugin
from repo_paths import REPO_ROOT

EXAMPLE_DIR = REPO_ROOT / "plugins" / "statbench-plugin-example"


@pytest.fixture
def example_plugin(monkeypatch):
    """Use the installed distribution when CI installed it, else load it in-process."""
    entry = get_registry().retrievers.get("charngram")
    if entry is not None:
        assert entry.plugin.distribution == "statbench-plugin-example"
        yield "entry point"
        return
    monkeypatch.syspath_prepend(str(EXAMPLE_DIR))
    module = importlib.import_module("statbench_plugin_example")
    with registered_plugin(module, "charngram"):
        yield "in-process"
    sys.modules.pop("statbench_plugin_example", None)


def test_example_plugin_retriever_and_reranker_run(example_plugin, stard_dir, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "charngram", "--reranker", "length-prior",
                                      "--data-dir", str(stard_dir), "--output", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["model"]["name"] == "charngram"
    assert results["reranker"]["name"] == "length-prior"
    assert results["model"]["params"] == {"n": 3}
    # character trigrams find each fixture query's article at rank 1 except where articles share wording
    assert results["all_queries"]["R@5"] == 1.0
