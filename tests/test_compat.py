"""Import paths kept for compatibility (issue 25 grouped the core into subpackages).

The list below is the promise: each old path imports, as the very module that now owns the
code, so a third-party plugin written against the docs before the move still installs and
runs. A path leaves this list only with a release note.
"""

from __future__ import annotations

import importlib
import json

import pytest

import statbench.api
from statbench import compat

#: old import path -> the module that owns its code now (docs/api.md, "Kept import paths").
KEPT_FOR_COMPATIBILITY = {
    "statbench.taskinfo": "statbench.contract.taskinfo",
    "statbench.params": "statbench.contract.params",
    "statbench.measures": "statbench.scoring.measures",
    "statbench.taskdef": "statbench.loading.taskdef",
    "statbench.splits": "statbench.loading.splits",
    "statbench.beir": "statbench.loading.beir",
    "statbench.irds": "statbench.loading.irds",
    "statbench.dataio": "statbench.data.dataio",
    "statbench.runfile": "statbench.data.runfile",
    "statbench.checksum": "statbench.data.checksum",
    "statbench.validation": "statbench.data.validation",
    "statbench.cache": "statbench.storage.cache",
    "statbench.checks": "statbench.registry.checks",
    "statbench.hookspecs": "statbench.registry.hookspecs",
    "statbench.plugins": "statbench.registry.plugins",
    "statbench.cli": "statbench.commands.cli",
}


def test_the_kept_paths_are_exactly_these():
    assert compat.KEPT == KEPT_FOR_COMPATIBILITY


@pytest.mark.parametrize("old, new", sorted(KEPT_FOR_COMPATIBILITY.items()))
def test_an_old_path_is_the_moved_module(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_a_kept_package_maps_its_submodules():
    assert importlib.import_module("statbench.measures.fbeta") is importlib.import_module("statbench.scoring.measures.fbeta")


def test_names_imported_the_old_way_are_the_api_s():
    from statbench import hookimpl
    from statbench.cache import CacheEntry
    from statbench.checksum import files_sha256
    from statbench.dataio import read_jsonl
    from statbench.measures import CustomMeasure
    from statbench.params import Param
    from statbench.runfile import read_qrels
    from statbench.taskdef import DefinedTask
    from statbench.taskinfo import TaskInfo

    assert TaskInfo is statbench.api.TaskInfo
    assert (DefinedTask, Param, CustomMeasure, CacheEntry) == (
        statbench.api.DefinedTask, statbench.api.Param, statbench.api.CustomMeasure, statbench.api.CacheEntry)
    assert (read_jsonl, read_qrels, files_sha256, hookimpl) == (
        statbench.api.read_jsonl, statbench.api.read_qrels, statbench.api.files_sha256, statbench.api.hookimpl)


def test_a_path_never_kept_is_not_invented():
    assert compat.current_name("statbench.runner") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("statbench.runner")


# --- a third-party task plugin written against the docs before the move ------------------------

OLD_STYLE_PLUGIN = '''
"""A task and a measure as the pre-move docs taught: old import paths, and the task declared
by class attributes (no TaskInfo)."""
from statbench import hookimpl
from statbench.api import Document, Measure, Query, Split, Task, TaskData
from statbench.checksum import files_sha256
from statbench.dataio import query_text, read_jsonl, record_id, text_value
from statbench.errors import DataFormatError
from statbench.measures import CustomMeasure
from statbench.params import Param
from statbench.runfile import read_qrels
from statbench.splits import kfold_assignment, kfold_splits
from statbench.taskdef import DefinedTask
from statbench.taskinfo import Protocol, TaskInfo
from statbench.validation import check_qrels_against_corpus


class Hits(CustomMeasure):
    name = "Hits"
    description = "relevant documents in the top k"
    default_params = {"cutoff": Param(None, type=int, min=1)}
    bounds = None

    def per_query(self, ranking, qrels, cutoff=None):
        return float(sum(1 for doc, _ in ranking[:cutoff] if qrels.get(doc, 0) > 0))


def read(folder, dropped):
    corpus, queries = {}, {}
    for line, obj in read_jsonl(folder / "corpus.jsonl", required=("id", "text")):
        doc = record_id(folder / "corpus.jsonl", obj["id"], line, "id", "document")
        corpus[doc] = Document(id=doc, text=text_value(folder / "corpus.jsonl", obj["text"], line, "text"))
    for line, obj in read_jsonl(folder / "queries.jsonl", required=("id", "text")):
        qid = record_id(folder / "queries.jsonl", obj["id"], line, "id", "query")
        text = query_text(folder / "queries.jsonl", obj["text"], line, "text", qid, dropped)
        if text is not None:
            queries[qid] = Query(id=qid, text=text)
    qrels = read_qrels(folder / "qrels.trec")
    check_qrels_against_corpus(qrels, corpus, queries, "qrels.trec", dropped)
    if not corpus:
        raise DataFormatError(folder / "corpus.jsonl", "no documents")
    return corpus, {q: queries[q] for q in qrels}, qrels


class OldCode(Task):
    name = "oldcode"
    language = "en"
    description = "a task declared by class attributes"
    measures = (Measure("R@3", "R@3"), Measure("Hits@1", "Hits@1"))
    version = "1"

    def load(self, data_dir, log):
        dropped = []
        corpus, queries, qrels = read(data_dir, dropped)
        splits = kfold_splits(kfold_assignment(sorted(queries), 2, seed=1))
        files = [data_dir / name for name in ("corpus.jsonl", "queries.jsonl", "qrels.trec")]
        return TaskData(corpus=corpus, queries=queries, qrels=qrels, splits=splits, files=files,
                        checksum=files_sha256(files), dropped=dropped)


class NewerCode(OldCode):
    info = TaskInfo(name="newercode", language="en", measures=(Measure("R@3", "R@3"),),
                    protocols=(Protocol("folds", ("fold-1", "fold-2")),))


assert issubclass(DefinedTask, Task) and Split


@hookimpl
def register_tasks(register):
    register(OldCode)
    register(NewerCode)


@hookimpl
def register_measures(register):
    register(Hits)
'''

CORPUS = [{"id": "art-1", "text": "the lessee may not sublet the leased thing"},
          {"id": "art-2", "text": "a minor may rescind a contract made without consent"},
          {"id": "art-3", "text": "possession of a movable acquired in good faith"},
          {"id": "art-4", "text": "the seller warrants against hidden defects"}]
QUERIES = [{"id": "q1", "text": "can the lessee sublet"}, {"id": "q2", "text": "minor rescind contract"},
           {"id": "q3", "text": "movable acquired in good faith"}, {"id": "q4", "text": "seller hidden defects"},
           {"id": "q5", "text": "   "}]
QRELS = "q1 0 art-1 1\nq2 0 art-2 1\nq3 0 art-3 1\nq4 0 art-4 1\n"


@pytest.fixture
def old_data(tmp_path):
    folder = tmp_path / "oldcode-data"
    folder.mkdir()
    for name, rows in (("corpus.jsonl", CORPUS), ("queries.jsonl", QUERIES)):
        (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (folder / "qrels.trec").write_text(QRELS, encoding="utf-8")
    return folder


def test_an_old_style_plugin_registers_loads_and_runs(fake_distributions, old_data, tmp_path):
    from statbench.registry import plugins
    from statbench.testing import check_task, invoke_cli

    fake_distributions("statbench-task-oldcode", "sb_oldcode", OLD_STYLE_PLUGIN)
    registry = plugins.get_registry()
    assert not registry.errors, [p.error for p in registry.errors]
    old, newer = registry.tasks["oldcode"].cls, registry.tasks["newercode"].cls
    assert old.task_info().measure_labels == ["R@3", "Hits@1"]
    assert newer.task_info().protocol().splits == ("fold-1", "fold-2")
    check_task(old, old_data)
    check_task(newer, old_data)

    out = tmp_path / "out"
    result = invoke_cli(["run", "--task", "oldcode", "--model", "bm25", "--data-dir", old_data,
                         "--output", out, "--no-progress"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text("utf-8"))
    assert results["all_queries"] == {"R@3": 1.0, "Hits@1": 1.0}
    assert any("q5" in line for line in results["task"]["dropped"])
