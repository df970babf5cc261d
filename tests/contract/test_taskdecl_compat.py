"""One task declaration (TaskInfo): the built-in definitions declare which splits run
together once (``protocols``), older split fields are read only to be checked against it,
and a task written the older way (class attributes only) still registers and runs."""

from __future__ import annotations

import json
import logging

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Document, Measure, Query, Split, Task, TaskData
from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.loading.taskdef import load_definition, older_split_declarations_problem
from statbench.registry.plugins import get_registry
from statbench.testing import registered_plugin
from repo_paths import REPO_ROOT

TASKS = REPO_ROOT / "tasks"


@pytest.mark.parametrize("name", ["bsard", "stard", "ukstat"])
def test_built_in_definitions_declare_their_protocols_once(name):
    definition = json.loads((TASKS / f"{name}.json").read_text("utf-8"))
    assert not {"kind", "default", "optional"} & set(definition["splits"])
    assert not {"split", "description"} & set(definition["splits"].get("official", {}))
    assert definition["protocols"] and older_split_declarations_problem(definition) == ""


def test_stards_official_split_is_named_by_its_protocol():
    info = get_registry().get("tasks", "stard").cls.task_info()
    assert info.protocol("official").splits == ("dev",)


BASE = {"protocols": {"5-fold": {"splits": ["fold-1", "fold-2"]}, "official": {"splits": ["dev"]}},
        "default_protocol": "5-fold"}


@pytest.mark.parametrize("splits, problem", [
    ({"kind": "kfold", "default": ["fold-1", "fold-2"], "optional": ["dev"],
      "official": {"split": "dev", "train_file": "t", "dev_file": "d", "description": "x"}}, ""),
    ({"default": ["fold-1"]}, "splits/default ['fold-1'] is not the splits of the default protocol '5-fold' "
                              "(['fold-1', 'fold-2']): declare the splits once, in protocols"),
    ({"optional": ["test"]}, "splits/optional names 'test', a split of no protocol (dev, fold-1, fold-2)"),
    ({"official": {"split": "valid", "train_file": "t", "dev_file": "d"}},
     "splits/official needs a protocol 'official' of exactly one split ('valid')"),
])
def test_older_split_fields_must_agree_with_protocols(splits, problem):
    assert older_split_declarations_problem({**BASE, "splits": splits}) == problem


def test_a_contradicting_definition_is_refused_with_one_line(tmp_path, monkeypatch):
    package = tmp_path / "olddef"
    package.mkdir()
    (package / "__init__.py").write_text("")
    definition = json.loads((TASKS / "ukstat.json").read_text("utf-8"))
    definition["splits"]["default"] = ["dev"]
    (package / "old.json").write_text(json.dumps(definition), "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(StatbenchError) as caught:
        load_definition("olddef", "old.json")
    assert str(caught.value) == ("task definition olddef/old.json: splits/default ['dev'] is not the splits of the "
                                 "default protocol 'test' (['test']): declare the splits once, in protocols")


# --- a task written the older way: class attributes, no TaskInfo ---------------------------


class OldStyle(Task):
    name = "old-style"
    language = "en"
    description = "declared through class attributes, as before TaskInfo"
    measures = (Measure("R@1", "R@1"), Measure("MRR@10", "RR@10"))
    depth = 10
    version = "2"

    def load(self, data_dir, log):
        corpus = {f"a{i}": Document(f"a{i}", f"article {i} on subject{i}") for i in range(5)}
        queries = {f"q{i}": Query(f"q{i}", f"subject{i}") for i in range(5)}
        return TaskData(corpus=corpus, queries=queries, qrels={f"q{i}": {f"a{i}": 1} for i in range(5)},
                        splits=[Split("test", tuple(queries))], files=[], checksum="1" * 64)


class OldPlugin:
    @hookimpl
    def register_tasks(self, register):
        register(OldStyle)


def test_an_old_style_task_class_still_registers_and_runs(tmp_path):
    with registered_plugin(OldPlugin(), "old-style-plugin"):
        info = get_registry().get("tasks", "old-style").cls.task_info()
        assert (info.name, info.version, info.depth, [m.label for m in info.measures]) == ("old-style", "2", 10,
                                                                                         ["R@1", "MRR@10"])
        result = CliRunner().invoke(cli, ["run", "--task", "old-style", "--model", "bm25", "--output",
                                          str(tmp_path / "out"), "--no-progress"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["task"]["name"] == "old-style" and results["aggregate"]["R@1"]["mean"] == 1.0
        assert [s["name"] for s in results["splits"]] == ["test"]

