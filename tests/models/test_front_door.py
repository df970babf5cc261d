"""One front door: the built-in model families take statbench's names from ``statbench.api``
only, as a third-party plugin does; the import paths kept from before the core was grouped
into subpackages (``statbench.compat``) are gone.

The walk reads plugins/builtin/** with ``ast`` (nothing is imported): every ``import`` and
``from ... import`` statement, at module level or inside a function, and every
``importlib.import_module("a.literal")``. Imports between the built-ins
(``statbench.models.*``) are theirs. ``ALLOWED`` lists what is left, each with its reason; it
may only shrink (a stale entry fails too).
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
import tomllib

import pytest

import statbench.api

from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
BUILTIN = ROOT / "plugins" / "builtin"

_RUNS_MODELS = ("runs registered models through the core's run cache and scores or records what they return: "
                "the core's run machinery (registry, run cache, output set, scoring, results record), "
                "which no model plugin needs")
_FUSION = "fusion: " + _RUNS_MODELS
_DISTILL = "distillation: " + _RUNS_MODELS

#: (file under plugins/builtin, core module) -> why that built-in still imports it
ALLOWED: dict[tuple[str, str], str] = {
    ("fusion/cli.py", "statbench.terminal.console"): _FUSION + "; `statbench fuse` prints with the core's console",
    ("fusion/components.py", "statbench.contract.params"): _FUSION + "; param_items writes a component's params",
    ("fusion/components.py", "statbench.run.request"): _FUSION + "; parses each component's params as `run` does",
    ("fusion/engine.py", "statbench.data.runfile"): _FUSION + "; order_ranking: the run files' tie order",
    ("fusion/fuse.py", "statbench.data.atomic"): _FUSION,
    ("fusion/fuse.py", "statbench.data.runfile"): _FUSION + "; writes the fused run and qrels files",
    ("fusion/fuse.py", "statbench.loading.splits"): _FUSION,
    ("fusion/fuse.py", "statbench.registry.checks"): _FUSION,
    ("fusion/fuse.py", "statbench.registry.plugins"): _FUSION,
    ("fusion/fuse.py", "statbench.results.record"): _FUSION,
    ("fusion/fuse.py", "statbench.run.outputs"): _FUSION,
    ("fusion/fuse.py", "statbench.scoring.evaluate_file"): _FUSION,
    ("fusion/fuse.py", "statbench.scoring.evaluation"): _FUSION,
    ("fusion/inputs.py", "statbench.data.runfile"): _FUSION + "; checks input run files as `evaluate` does",
    ("fusion/inputs.py", "statbench.scoring.publishable"): _FUSION,
    ("fusion/retriever.py", "statbench.contract.params"): _FUSION,
    ("fusion/retriever.py", "statbench.data.runfile"): _FUSION,
    ("fusion/retriever.py", "statbench.registry.checks"): _FUSION,
    ("fusion/retriever.py", "statbench.registry.plugins"): _FUSION,
    ("fusion/retriever.py", "statbench.run.runcache"): _FUSION,
    ("fusion/retriever.py", "statbench.run.splitruns"): _FUSION,
    ("fusion/retriever.py", "statbench.storage.keys"): _FUSION + "; model_identity: a component's run-cache key",
    ("distillation/cli.py", "statbench.run.request"): _DISTILL,
    ("distillation/cli.py", "statbench.terminal.console"): _DISTILL + "; `statbench distill` prints with its console",
    ("distillation/data.py", "statbench.registry.checks"): _DISTILL + "; checks the teacher's rankings",
    ("distillation/distill.py", "statbench.loading.load"): _DISTILL,
    ("distillation/distill.py", "statbench.registry.plugins"): _DISTILL,
    ("distillation/distill.py", "statbench.run.outputs"): _DISTILL,
    ("distillation/distill.py", "statbench.storage.paths"): _DISTILL,
}


def core_imports(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """``(line, module)`` for each import of a statbench module other than ``statbench.api``
    and the built-ins (``statbench.models.*``), anywhere in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "statbench":
            # ``from statbench import api`` is the api; ``from statbench import hookimpl`` is not
            modules = [f"statbench.{alias.name}" if alias.name in ("api", "models") else "statbench"
                       for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] if node.level == 0 else []  # relative: within the built-in
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            modules = [node.args[0].value]
        else:
            continue
        for module in modules:
            if module != "statbench" and not module.startswith("statbench."):
                continue
            if module == "statbench.api" or module == "statbench.models" or module.startswith("statbench.models."):
                continue
            found.append((node.lineno, module))
    return found


def builtin_core_imports() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(BUILTIN.rglob("*.py")):
        rel = path.relative_to(BUILTIN).as_posix()
        for line, module in core_imports(path.read_text("utf-8"), str(path)):
            found.setdefault((rel, module), []).append(line)
    return found


def test_the_built_ins_import_statbench_only_through_the_api():
    offenders = [f"plugins/builtin/{rel}:{lines[0]}: {module}"
                 for (rel, module), lines in sorted(builtin_core_imports().items()) if (rel, module) not in ALLOWED]
    assert not offenders, "built-in models import statbench modules other than statbench.api: " + "; ".join(offenders)


def test_the_allow_list_holds_only_what_is_still_imported():
    stale = sorted(set(ALLOWED) - set(builtin_core_imports()))
    assert not stale, f"no longer imported, drop from ALLOWED: {stale}"


def test_the_walk_catches_every_form_of_a_core_import():
    source = '''
from statbench.api import Param
from statbench.models.shared import hub
from . import sibling
import statbench.data.checksum
from statbench import hookimpl
from statbench.storage.cache import CacheEntry
from statbench import api, models
import statbench.api as front


def later():
    from statbench.errors import StatbenchError
    import importlib
    importlib.import_module("statbench.run.runner")
    importlib.import_module("statbench.models.lexical.bm25")
'''
    assert sorted(core_imports(source)) == sorted([(5, "statbench.data.checksum"), (6, "statbench"),
                                           (7, "statbench.storage.cache"), (13, "statbench.errors"),
                                           (15, "statbench.run.runner")])


def test_what_the_built_ins_take_from_the_api_is_the_core_s_own():
    from statbench.data import checksum, deadline
    from statbench.loading import mteb_names
    from statbench.storage import cache, hub, keys, weights
    from statbench.terminal import progress

    pairs = {"keyed_entry": keys, "ids_digest": keys, "corpus_checksum": keys, "MANIFEST": cache,
             "config_key": checksum, "json_sha256": checksum, "text_sha256": checksum, "bytes_sha256": checksum,
             "resolve": weights, "local_copy_dir": weights, "fingerprint": weights, "call_within": deadline,
             "DeadlinePassed": deadline, "bound_from_env": deadline, "warn_if_long": progress,
             "offline_reason": hub, "offline_mode": hub, "offline_if_unreachable": hub, "in_hub_cache": hub,
             "hub_cache_dir": hub, "fetch_timeout": hub, "fetch_within_bound": hub, "FetchStalled": hub,
             "dataset_fetch_hint": hub, "mteb_language": mteb_names, "mteb_metadata": mteb_names,
             "registered_meta": mteb_names}
    assert {name: getattr(statbench.api, name) is getattr(module, name) for name, module in pairs.items()} == {
        name: True for name in pairs}
    assert set(pairs) <= set(statbench.api.__all__)


def test_fetch_advice_names_the_routes_of_a_known_model_only():
    from statbench.storage import model_recipes

    recipe = model_recipes.get("minilm")
    routes, steps = statbench.api.fetch_advice(recipe.hub_id)
    assert routes == model_recipes.routes(recipe) and any("statbench models fetch minilm" in r for r in routes)
    assert steps == model_recipes.manual_steps(recipe) and steps
    assert statbench.api.fetch_advice("nobody/unknown-model") is None


# --- no kept import paths ---------------------------------------------------------------------

OLD_PATHS = ["statbench.taskinfo", "statbench.params", "statbench.measures", "statbench.taskdef", "statbench.splits",
             "statbench.beir", "statbench.irds", "statbench.dataio", "statbench.runfile", "statbench.checksum",
             "statbench.validation", "statbench.cache", "statbench.checks", "statbench.hookspecs",
             "statbench.plugins", "statbench.cli", "statbench.measures.fbeta", "statbench.compat"]


@pytest.mark.parametrize("old", OLD_PATHS)
def test_an_old_import_path_no_longer_imports(old):
    sys.modules.pop(old, None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_every_entry_point_of_pyproject_resolves():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    targets = [*project["scripts"].values(), *(t for group in project["entry-points"].values() for t in group.values())]
    unresolved = []
    for target in targets:
        module, _, attribute = target.partition(":")
        try:
            loaded = importlib.import_module(module)
            if attribute:
                getattr(loaded, attribute)
        except (ImportError, AttributeError) as exc:
            unresolved.append(f"{target}: {exc}")
    assert targets and not unresolved, unresolved


def test_no_import_hook_is_installed():
    assert not [finder for finder in sys.meta_path if type(finder).__module__.startswith("statbench")]


def test_the_old_names_inside_the_built_ins_are_gone():
    from statbench.commands import cli
    from statbench.models.lexical import analysis

    assert not hasattr(cli, "_console")
    assert not {"ANALYZER_VERSION", "LANGUAGES", "SEGMENTERS", "_nfkc", "analysis_language",
                "default_stopwords"} & set(vars(analysis))


# --- a task declared by class attributes, written against statbench.api, still runs ----------

CLASS_ATTRIBUTE_PLUGIN = '''
"""A task and a measure written against statbench.api only, the task declared by class
attributes (no TaskInfo)."""
from statbench.api import (CustomMeasure, DataFormatError, DefinedTask, Document, Measure, Param, Protocol, Query,
                           Split, Task, TaskData, TaskInfo, check_qrels_against_corpus, files_sha256, hookimpl,
                           kfold_assignment, kfold_splits, query_text, read_jsonl, read_qrels, record_id, text_value)


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


class ClassCode(Task):
    name = "classcode"
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


class InfoCode(ClassCode):
    info = TaskInfo(name="infocode", language="en", measures=(Measure("R@3", "R@3"),),
                    protocols=(Protocol("folds", ("fold-1", "fold-2")),))


assert issubclass(DefinedTask, Task) and Split


@hookimpl
def register_tasks(register):
    register(ClassCode)
    register(InfoCode)


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
def class_data(tmp_path):
    folder = tmp_path / "classcode-data"
    folder.mkdir()
    for name, rows in (("corpus.jsonl", CORPUS), ("queries.jsonl", QUERIES)):
        (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (folder / "qrels.trec").write_text(QRELS, encoding="utf-8")
    return folder


def test_a_plugin_written_against_the_api_registers_loads_and_runs(fake_distributions, class_data, tmp_path):
    from statbench.registry import plugins
    from statbench.testing import check_task, invoke_cli

    fake_distributions("statbench-task-classcode", "sb_classcode", CLASS_ATTRIBUTE_PLUGIN)
    registry = plugins.get_registry()
    assert not registry.errors, [p.error for p in registry.errors]
    plain, with_info = registry.tasks["classcode"].cls, registry.tasks["infocode"].cls
    assert plain.task_info().measure_labels == ["R@3", "Hits@1"]
    assert with_info.task_info().protocol().splits == ("fold-1", "fold-2")
    check_task(plain, class_data)
    check_task(with_info, class_data)

    out = tmp_path / "out"
    result = invoke_cli(["run", "--task", "classcode", "--model", "bm25", "--data-dir", class_data,
                         "--output", out, "--no-progress"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text("utf-8"))
    assert results["all_queries"] == {"R@3": 1.0, "Hits@1": 1.0}
    assert any("q5" in line for line in results["task"]["dropped"])
