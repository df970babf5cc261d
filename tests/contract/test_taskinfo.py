"""The typed task contract: TaskInfo declared in Python or filled from JSON, protocols,
pools for every task, file sets by glob; the core reads nothing else about a task."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.loading import irds
from statbench.api import Document, Measure, Query, Split, Task, TaskData
from statbench.registry.checks import PluginError, check_task_class
from statbench.data.checksum import files_sha256
from statbench.commands.cli import cli
from statbench.registry.plugins import get_registry
from statbench.contract.taskinfo import PoolInfo, Protocol, TaskInfo, check_info
from statbench.testing import registered_plugin
from repo_paths import REPO_ROOT

ARTICLES = {f"a{i}": f"article {i} about {'rent' if i % 2 else 'marriage'} and term{i}" for i in range(1, 9)}
YEARS = {"R01": {"q1": ("rent term1", "a1"), "q2": ("marriage term2", "a2")},
         "R02": {"q3": ("rent term3", "a3"), "q4": ("marriage term4", "a4")},
         "R03": {"q5": ("rent term5", "a5")}}


class YearlyCode(Task):
    """A plain Python task: yearly query sets, two protocols, structure in fields."""

    info = TaskInfo(
        name="yearly-code", language="en", description="a made-up code, yearly query sets",
        measures=(Measure("R@5", "R@5"), Measure("MRR@10", "RR@10")), primary_measure="MRR@10",
        protocols=(Protocol("per-year", ("R01", "R02", "R03"), "each year a split"),
                   Protocol("latest", ("R03",), "the latest year only")),
        default_protocol="per-year", depth=10, pools=(PoolInfo("bm25", "BM25 top 5", depth=5),),
        sizes={"R01": 2, "R02": 2, "R03": 1, "corpus": 8},
    )

    def load(self, data_dir, log):
        corpus = {i: Document(i, t, fields={"headings": ["Book I", f"Chapter {i[-1]}"]}) for i, t in ARTICLES.items()}
        queries = {q: Query(q, text) for year in YEARS.values() for q, (text, _) in year.items()}
        qrels = {q: {doc: 1} for year in YEARS.values() for q, (_, doc) in year.items()}
        splits = [Split(year, test=tuple(qs), train=tuple(q for y, other in YEARS.items() if y != year for q in other))
                  for year, qs in YEARS.items()]
        path = Path(data_dir) / "marker.txt"
        return TaskData(corpus=corpus, queries=queries, qrels=qrels, splits=splits, files=[path],
                        checksum=files_sha256([path]))


class YearlyPlugin:
    @hookimpl
    def register_tasks(self, register):
        register(YearlyCode)


@pytest.fixture
def yearly(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "marker.txt").write_text("v1")
    with registered_plugin(YearlyPlugin(), "yearly"):
        yield tmp_path / "data"


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_plain_python_task_lists_protocols_and_sizes(yearly):
    result = CliRunner().invoke(cli, ["list", "tasks", "-v"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    for text in ("per-year*: R01 (2), R02 (2), R03 (1)", "latest: R03 (1)", "MRR@10 (primary)", "pools bm25"):
        assert text in result.output, text


def test_default_protocol_runs_its_splits_and_is_recorded(yearly, tmp_path):
    assert run("run", "--task", "yearly-code", "--model", "bm25", "--data-dir", str(yearly), "--output",
               str(tmp_path / "a"), "--no-progress").exit_code == 0
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    assert [s["name"] for s in results["splits"]] == ["R01", "R02", "R03"]
    assert results["task"]["protocol"] == "per-year"
    assert run("run", "--task", "yearly-code", "--model", "bm25", "--protocol", "latest", "--data-dir", str(yearly),
               "--output", str(tmp_path / "b"), "--no-progress").exit_code == 0
    latest = json.loads((tmp_path / "b" / "results.json").read_text())
    assert [s["name"] for s in latest["splits"]] == ["R03"] and latest["task"]["protocol"] == "latest"
    # the same split scored alone gives the same figures as within its protocol
    assert latest["splits"][0]["scores"] == results["splits"][2]["scores"]
    # a hand-picked set of splits is not a protocol
    assert run("run", "--task", "yearly-code", "--model", "bm25", "--split", "R01", "--split", "R02", "--data-dir",
               str(yearly), "--output", str(tmp_path / "c"), "--no-progress").exit_code == 0
    assert json.loads((tmp_path / "c" / "results.json").read_text())["task"]["protocol"] == ""


def test_unknown_protocol_and_protocol_with_split_are_refused(yearly, tmp_path):
    result = CliRunner().invoke(cli, ["run", "--task", "yearly-code", "--model", "bm25", "--protocol", "nope",
                                      "--data-dir", str(yearly), "--output", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "unknown protocol of task yearly-code 'nope'; valid choices: latest, per-year" in result.output
    result = CliRunner().invoke(cli, ["run", "--task", "yearly-code", "--model", "bm25", "--protocol", "latest",
                                      "--split", "R03", "--data-dir", str(yearly), "--output", str(tmp_path / "o")])
    assert result.exit_code == 2 and "give --split or --protocol, not both" in result.output


def test_pools_work_for_any_task(yearly, tmp_path):
    built = run("pool", "build", "--task", "yearly-code", "--retriever", "bm25", "--depth", "5",
                "--data-dir", str(yearly), "--no-progress")
    assert built.exit_code == 0, built.output
    reranked = run("run", "--task", "yearly-code", "--pool", "bm25", "--data-dir", str(yearly), "--output",
                   str(tmp_path / "pool"), "--no-progress")
    assert reranked.exit_code == 0, reranked.output
    first = run("run", "--task", "yearly-code", "--model", "bm25", "--data-dir", str(yearly), "--output",
                str(tmp_path / "first"), "--no-progress")
    assert first.exit_code == 0
    pool_results = json.loads((tmp_path / "pool" / "results.json").read_text())
    first_results = json.loads((tmp_path / "first" / "results.json").read_text())
    assert pool_results["aggregate"]["R@5"] == first_results["aggregate"]["R@5"]


def test_pool_build_then_run_pool_on_stard(stard_dir, tmp_path):
    assert run("pool", "build", "--task", "stard", "--retriever", "bm25", "--depth", "3", "--data-dir",
               str(stard_dir), "--no-progress").exit_code == 0
    result = run("run", "--task", "stard", "--pool", "bm25", "--data-dir", str(stard_dir), "--output",
                 str(tmp_path / "o"), "--no-progress")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["pool"] == "bm25" and results["all_queries"]["MRR@10"] == 1.0


def test_ir_datasets_registration_of_a_plain_task(yearly):
    import ir_datasets

    irds.register({"yearly-code": yearly})
    names = irds.dataset_names(YearlyCode)
    assert "statbench/yearly-code/R03" in names and "statbench/yearly-code/bm25-pool" in names
    dataset = ir_datasets.load("statbench/yearly-code/R03")
    assert [q.query_id for q in dataset.queries_iter()] == ["q5"]
    assert dataset.qrels_defs() == {1: "relevant"}


@pytest.mark.parametrize("change, problem", [
    ({"primary_measure": "nDCG@10"}, "primary measure 'nDCG@10' is not one of its measures"),
    ({"default_protocol": "all"}, "default protocol 'all' is not one of its protocols"),
    ({"protocols": (Protocol("p", ()),)}, "protocol 'p' names no split"),
    ({"language": "English"}, "language 'English' must be an ISO 639 code"),
    ({"depth": 0}, "depth must be an int >= 1"),
])
def test_unsound_declarations_are_refused_at_registration(change, problem):
    import dataclasses

    cls = type("Broken", (YearlyCode,), {"info": dataclasses.replace(YearlyCode.info, **change)})
    assert any(problem in p for p in check_info(cls.task_info()))
    with pytest.raises(PluginError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        check_task_class(cls)


def test_builtin_tasks_declare_protocols_and_primary_measures():
    registry = get_registry()
    stard = registry.tasks["stard"].cls.task_info()
    assert [(p.name, p.splits) for p in stard.protocols] == [
        ("5-fold", ("fold-1", "fold-2", "fold-3", "fold-4", "fold-5")), ("official", ("dev",))]
    assert stard.protocol().name == "5-fold" and stard.primary == "R@100"
    assert registry.tasks["ukstat"].cls.task_info().primary == "nDCG@10"
    assert [p.name for p in registry.tasks["ukstat"].cls.task_info().pools] == ["bm25", "dense"]
    bsard = registry.tasks["bsard"].cls.task_info()
    assert [p.name for p in bsard.protocols] == ["test", "dev"] and bsard.relevance[1].startswith("the article")


def test_file_sets_by_glob(tmp_path, monkeypatch):
    package = tmp_path / "pkg" / "sbglobtask"
    package.mkdir(parents=True)
    definition = {
        "name": "globtask", "title": "yearly files", "language": "en", "paper": "", "licence": "",
        "protocol": "one split per year file",
        "protocols": {"all": {"splits": ["R01", "R02"]}},
        "files": [{"name": "corpus.jsonl", "locations": ["corpus.jsonl"]},
                  {"name": "years", "glob": "queries/R*.jsonl"}],
        "relevance": {"1": "relevant"}, "measures": [{"label": "R@5", "ir_measure": "R@5"}], "depth": 5,
    }
    (package / "globtask.json").write_text(json.dumps(definition))
    (package / "__init__.py").write_text(textwrap.dedent('''
        from statbench.loading.taskdef import DefinedTask

        class GlobTask(DefinedTask):
            definition_file = "globtask.json"

            def load(self, data_dir, log):
                raise NotImplementedError
    '''))
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    module = importlib.import_module("sbglobtask")
    try:
        data = tmp_path / "data"
        (data / "queries").mkdir(parents=True)
        (data / "corpus.jsonl").write_text("{}\n")
        for year in ("R02", "R01"):
            (data / "queries" / f"{year}.jsonl").write_text("{}\n")
        task = module.GlobTask()
        sets = task.locate_file_sets(data)
        assert [p.name for p in sets["years"]] == ["R01.jsonl", "R02.jsonl"]
        assert set(task.locate_files(data, None)) == {"corpus.jsonl"}
        (data / "queries" / "R03.jsonl").mkdir()  # a directory where a file is expected: one line
        with pytest.raises(Exception, match="R03.jsonl.*is a directory"):
            task.locate_file_sets(data)
        empty = tmp_path / "empty"
        empty.mkdir()
        with pytest.raises(Exception, match=r"years: .*/queries/R\*.jsonl \(one or more files\)"):
            task.locate_file_sets(empty)
        assert module.GlobTask.task_info().protocols[0].splits == ("R01", "R02")
    finally:
        sys.modules.pop("sbglobtask", None)


def test_no_task_name_in_harness_code():
    root = REPO_ROOT / "harness"
    offenders = []
    for path in root.rglob("*.py"):
        for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            code = line.split("#", 1)[0]
            if any(name in code for name in ('"stard"', '"bsard"', '"ukstat"', "'stard'", "'bsard'", "'ukstat'")):
                offenders.append(f"{path.name}:{lineno}")
    assert offenders == []
