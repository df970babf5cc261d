"""--task beir:PATH (any folder in BEIR's layout, no code) and `statbench task new --from-beir`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.registry import plugins
from statbench.loading.beir import find_folder, load_beir
from statbench.commands.cli import cli
from statbench.errors import DataFormatError, StatbenchError
from beir_fixtures import HEADER, write_beir


@pytest.fixture
def beir_dir(tmp_path) -> Path:
    return write_beir(tmp_path / "lawqa")


def run(*args):
    return CliRunner().invoke(cli, [*args], catch_exceptions=False)


def assert_one_error_line(output: str) -> None:
    """The failure is one line, the last ("warning" log lines, e.g. about the language, may precede it)."""
    lines = output.strip().splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("Error:")]
    assert errors == [len(lines) - 1], output


# --- resolution and declaration ------------------------------------------------------------


def test_registry_resolves_beir_paths_with_defaults(beir_dir, caplog):
    entry = plugins.get_registry().get("tasks", f"beir:{beir_dir}")
    info = entry.cls.task_info()
    assert entry.name == info.name == "beir-lawqa"
    assert info.language == "en" and "no language declared" in caplog.text
    assert [(m.label, m.ir_measure) for m in info.measures] == [
        ("nDCG@10", "nDCG@10"), ("R@100", "R@100"), ("MAP@100", "AP@100"), ("RR@10", "RR@10")]
    assert info.primary == "nDCG@10" and info.depth == 1000
    assert [(p.name, p.splits) for p in info.protocols] == [("dev", ("dev",)), ("test", ("test",)),
                                                            ("train", ("train",))]
    assert info.protocol().name == "test"
    assert entry.plugin.distribution == "statbench"
    assert "beir-lawqa" not in plugins.get_registry().tasks  # nothing is registered by resolving


def test_statbench_json_declares_the_task(tmp_path):
    root = write_beir(tmp_path / "x", settings={
        "name": "housing-fr", "language": "fr", "description": "housing law", "primary_measure": "R@5",
        "measures": ["R@5", {"label": "MRR@10", "ir_measure": "RR@10"}], "protocols": ["test"], "depth": 50,
        "title": "separate"})
    info = plugins.get_registry().get("tasks", f"beir:{root}").cls.task_info()
    assert (info.name, info.language, info.description, info.primary, info.depth) == (
        "housing-fr", "fr", "housing law", "R@5", 50)
    assert [m.label for m in info.measures] == ["R@5", "MRR@10"]
    assert [p.name for p in info.protocols] == ["test"]


@pytest.mark.parametrize("settings, message", [
    ({"langauge": "fr"}, "field 'langauge': unknown key 'langauge'"),
    ({"protocols": ["validation"]}, "protocol 'validation' names split 'validation', which has no qrels/validation.tsv"),
    ({"measures": ["nDCG@10"], "primary_measure": "R@5"}, "primary measure 'R@5' is not one of its measures"),
    ({"measures": ["NotAMeasure@3"]}, "measure 'NotAMeasure@3'"),
    ({"title": "both"}, "field 'title': 'both' is not one of prepend, separate"),
])
def test_bad_statbench_json_is_one_line(tmp_path, settings, message):
    root = write_beir(tmp_path / "x", settings=settings)
    result = run("run", "--task", f"beir:{root}", "--model", "bm25", "--output", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert message in result.output
    assert_one_error_line(result.output)
    assert str(root / "statbench.json") in result.output


def test_missing_paths_are_one_line(tmp_path):
    for task, message in [(f"beir:{tmp_path / 'nope'}", "no such folder"), ("beir:", "needs the path of a folder")]:
        result = run("run", "--task", task, "--model", "bm25", "--output", str(tmp_path / "o"))
        assert result.exit_code == 2 and message in result.output, result.output
        assert_one_error_line(result.output)
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "corpus.jsonl").write_text("{}\n")
    result = run("run", "--task", f"beir:{tmp_path / 'half'}", "--model", "bm25")
    assert result.exit_code == 2 and "queries.jsonl: file not found (BEIR's layout" in result.output


# --- loading -----------------------------------------------------------------------------


def test_load_builds_splits_training_queries_and_prepends_titles(beir_dir):
    found = find_folder(beir_dir)
    data = load_beir(found.corpus, found.queries, found.qrels)
    assert data.corpus["d1"].text == "Rent payment The tenant must pay the rent on the first day of each month."
    assert data.corpus["d1"].title == "" and data.corpus["d1"].fields == {"title": "Rent payment"}
    assert data.corpus["d5"].text == "Criminal penalties apply to theft and fraud."
    splits = {s.name: s for s in data.splits}
    assert splits["test"].test == ("q1", "q2", "q3", "q8")
    assert (splits["test"].train, splits["test"].dev) == (("q4", "q5"), ("q6",))
    assert (splits["dev"].train, splits["dev"].dev) == (("q4", "q5"), ())
    assert (splits["train"].train, splits["train"].dev) == ((), ())
    assert "q7" not in data.queries and data.qrels["q3"] == {"d4": 2, "d1": 0}
    assert len(data.checksum) == 64 and [p.name for p in data.files] == [
        "corpus.jsonl", "queries.jsonl", "dev.tsv", "test.tsv", "train.tsv"]
    separate = load_beir(found.corpus, found.queries, found.qrels, title="separate")
    assert (separate.corpus["d1"].title, separate.corpus["d1"].text) == (
        "Rent payment", "The tenant must pay the rent on the first day of each month.")


@pytest.mark.parametrize("where, content, message", [
    ("qrels/test.tsv", "q1\td1\t1\n", "expected the header query-id<TAB>corpus-id<TAB>score"),
    ("qrels/test.tsv", HEADER + "q1 d1 1\n", "line 2: expected 3 tab-separated columns"),
    ("qrels/test.tsv", HEADER + "q1\td1\thigh\n", "line 2, field 'score': relevance 'high' is not an integer"),
    ("qrels/test.tsv", HEADER + "q1\td1\t1\nq1\td1\t2\n", "judged twice with different scores"),
    ("qrels/test.tsv", HEADER + "q9\td1\t1\n", "1 judged query id(s) are not in queries.jsonl (e.g. 'q9')"),
    ("qrels/test.tsv", HEADER, "no judgements (the file is empty or holds only its header)"),
    ("qrels/dev.tsv", HEADER + "q1\td2\t1\n", "query 'q1' is judged in both"),
    ("corpus.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n',
     "line 2, field '_id': duplicate document id 'd1' (first on line 1)"),
    ("corpus.jsonl", '{"_id": "d 1", "text": "a"}\n', "line 1, field '_id': document id 'd 1' holds white space"),
    ("corpus.jsonl", '{"_id": "d1", "title": null, "text": "a"}\n', "line 1, field 'title': expected a string"),
    ("corpus.jsonl", '{"_id": "d1", "title": "t"}\n', "line 1, field 'text': missing field"),
    ("corpus.jsonl", "", "no documents"),
    ("queries.jsonl", '\ufeff{"_id": "q1", "text": "a"}\n\ufeff{"_id": "q2", "text": "b"}\n', "byte order mark"),
])
def test_malformed_files_stop_with_one_line(beir_dir, tmp_path, where, content, message):
    (beir_dir / where).write_text(content, encoding="utf-8")
    result = run("run", "--task", f"beir:{beir_dir}", "--model", "bm25", "--output", str(tmp_path / "o"),
                 "--no-progress")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert_one_error_line(result.output)
    assert not (tmp_path / "o").exists()


def test_judgements_of_missing_documents_are_dropped_and_said(beir_dir, tmp_path):
    (beir_dir / "qrels" / "test.tsv").write_text(HEADER + "q1\td1\t1\nq2\td99\t1\nq3\td4\t1\n")
    out = tmp_path / "o"
    result = run("run", "--task", f"beir:{beir_dir}", "--model", "bm25", "--output", str(out), "--no-progress")
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["splits"][0]["n_queries"] == 2
    assert any("point to documents not in the corpus" in d for d in results["task"]["dropped"])


# --- through the CLI -----------------------------------------------------------------------


def test_run_evaluate_protocols_and_compare(beir_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = f"beir:{beir_dir}"
    result = run("run", "--task", task, "--model", "bm25", "--no-progress")
    assert result.exit_code == 0, result.output
    out = tmp_path / "statbench-output" / "beir-lawqa" / "bm25"  # named after the task, not the path
    results = json.loads((out / "results.json").read_text())
    assert results["task"]["name"] == "beir-lawqa" and results["task"]["protocol"] == "test"
    assert [m["label"] for m in results["measures"]] == ["nDCG@10", "R@100", "MAP@100", "RR@10"]
    assert set(results["per_query"]) == {"q1", "q2", "q3", "q8"}
    assert results["all_queries"]["R@100"] == 1.0
    evaluated = run("evaluate", str(out / "run.trec"), "--task", task, "--json")
    assert json.loads(evaluated.output)["all_queries"] == results["all_queries"]
    dev = run("run", "--task", task, "--model", "bm25", "--protocol", "dev", "--output", str(tmp_path / "dev"),
              "--no-progress")
    assert dev.exit_code == 0, dev.output
    assert set(json.loads((tmp_path / "dev" / "results.json").read_text())["per_query"]) == {"q6"}
    assert run("run", "--task", task, "--model", "tfidf", "--no-progress").exit_code == 0
    compared = run("compare", str(out / "run.trec"), str(out.parent / "tfidf" / "run.trec"), "--task", task)
    assert compared.exit_code == 0, compared.output
    assert "measure nDCG@10, 4 paired queries" in compared.output
    other = tmp_path / "elsewhere"
    other.mkdir()
    refused = run("run", "--task", task, "--model", "bm25", "--data-dir", str(other), "--output", str(tmp_path / "x"))
    assert refused.exit_code == 2 and "drop --data-dir" in refused.output


def test_trainable_models_see_train_and_dev_queries(beir_dir):
    entry = plugins.get_registry().get("tasks", f"beir:{beir_dir}")
    import logging

    from statbench.registry.checks import check_task_data

    data = entry.cls().load(None, logging.getLogger("t"))
    check_task_data(entry.name, data)
    test = next(s for s in data.splits if s.name == "test")
    assert set(test.train).isdisjoint(test.test) and set(test.dev).isdisjoint(test.test)


# --- statbench task new ----------------------------------------------------------------------


def install_generated(folder: Path, site: Path, monkeypatch) -> str:
    """What `pip install -e` would do, without pip: the package on sys.path and a dist-info
    with the generated entry point (as the fake_distributions fixture does)."""
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    dist_info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                        f"Version: {project['version']}\n")
    eps = project["entry-points"]["statbench"]
    (dist_info / "entry_points.txt").write_text("[statbench]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(folder))
    plugins.reset_registry(entry_points=True)
    return project["name"]


def test_task_new_scaffolds_a_plugin_that_scores_like_beir_path(beir_dir, tmp_path, monkeypatch):
    result = run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(tmp_path / "gen"))
    assert result.exit_code == 0, result.output
    folder = tmp_path / "gen" / "statbench-task-lawqa"
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert files == ["README.md", "pyproject.toml", "statbench_task_lawqa/__init__.py",
                     "statbench_task_lawqa/lawqa.json", "statbench_task_lawqa/loader.py",
                     "tests/data/corpus.jsonl", "tests/data/qrels/dev.tsv", "tests/data/qrels/test.tsv",
                     "tests/data/qrels/train.tsv", "tests/data/queries.jsonl", "tests/test_task.py"]
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["statbench"] == {"lawqa": "statbench_task_lawqa.loader"}
    try:
        dist = install_generated(folder, tmp_path / "site", monkeypatch)
        entry = plugins.get_registry().get("tasks", "lawqa")
        assert entry.plugin.distribution == dist and entry.cls.task_info().protocol().name == "test"
        listed = run("list", "tasks")
        assert "lawqa" in listed.output and "failed" not in listed.output
        scores = {}
        for task, data_dir in (("lawqa", ["--data-dir", str(beir_dir)]), (f"beir:{beir_dir}", [])):
            for protocol in ("test", "dev"):
                out = tmp_path / f"out-{task[:4]}-{protocol}"
                result = run("run", "--task", task, "--model", "bm25", *data_dir, "--protocol", protocol,
                             "--output", str(out), "--no-progress")
                assert result.exit_code == 0, result.output
                results = json.loads((out / "results.json").read_text())
                scores[(task[:4], protocol)] = (results["per_query"], results["all_queries"],
                                                results["task"]["data_checksum"], (out / "run.trec").read_text())
        for protocol in ("test", "dev"):
            ours, beir = scores[("lawq", protocol)], scores[("beir", protocol)]
            assert ours[:3] == beir[:3]
            assert [line.split()[:5] for line in ours[3].splitlines()] == [
                line.split()[:5] for line in beir[3].splitlines()]
        # the generated test passes (the sample it ships, checked with statbench.testing.check_task)
        env_path = f"{folder}{':' + str(tmp_path / 'site')}"
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "tests")],
                              check=False, capture_output=True, text=True, cwd=folder,
                              env={**os.environ, "PYTHONPATH": env_path})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 passed, 1 skipped" in proc.stdout
    finally:
        for name in [m for m in sys.modules if m.startswith("statbench_task_lawqa")]:
            sys.modules.pop(name)
        plugins.reset_registry(entry_points=True)


@pytest.mark.parametrize("name, message", [("Bad Name", "use lower-case letters"),
                                           ("stard", "already registered by plugin 'stard' (statbench)")])
def test_task_new_refuses_bad_names(beir_dir, tmp_path, name, message):
    result = run("task", "new", name, "--from-beir", str(beir_dir), "--out", str(tmp_path / "gen"))
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "gen").exists() or not any((tmp_path / "gen").iterdir())


def test_task_new_refuses_bad_data_and_existing_targets(beir_dir, tmp_path):
    (beir_dir / "qrels" / "test.tsv").write_text(HEADER + "q1\td1\tx\n")
    result = run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(tmp_path / "gen"))
    assert result.exit_code == 2 and "relevance 'x' is not an integer" in result.output
    assert not (tmp_path / "gen" / "statbench-task-lawqa").exists()
    (beir_dir / "qrels" / "test.tsv").write_text(HEADER + "q1\td1\t1\n")
    assert run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(tmp_path / "gen")).exit_code == 0
    again = run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(tmp_path / "gen"))
    assert again.exit_code == 2 and "already exists" in again.output
    assert [p.name for p in (tmp_path / "gen").iterdir()] == ["statbench-task-lawqa"]  # no staging left


def test_definition_loading_errors_name_the_definition(beir_dir, tmp_path, monkeypatch):
    """A generated definition edited into an invalid one marks the plugin failed, not the CLI."""
    run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(tmp_path / "gen"))
    folder = tmp_path / "gen" / "statbench-task-lawqa"
    definition = folder / "statbench_task_lawqa" / "lawqa.json"
    definition.write_text(definition.read_text().replace('"depth": 1000', '"depth": "all"'))
    try:
        install_generated(folder, tmp_path / "site", monkeypatch)
        result = run("list", "tasks")
        assert result.exit_code == 0
        assert "lawqa.json: depth: 'all' is not of type 'integer'" in " ".join(result.output.split())
    finally:
        for name in [m for m in sys.modules if m.startswith("statbench_task_lawqa")]:
            sys.modules.pop(name)
        plugins.reset_registry(entry_points=True)


def test_load_beir_rejects_an_unknown_title_mode(beir_dir):
    found = find_folder(beir_dir)
    with pytest.raises(StatbenchError, match="title mode 'x'"):
        load_beir(found.corpus, found.queries, found.qrels, title="x")
    with pytest.raises(DataFormatError, match="no such folder"):
        find_folder(beir_dir / "missing")


_KILLED_CHILD = """
import sys, time
from pathlib import Path
import statbench.commands.scaffold as scaffold

def stuck(found, data, folder):  # the plugin half written: signal, then hang until killed
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("{")
    Path(sys.argv[3]).write_text("writing")
    time.sleep(600)

scaffold.write_sample = stuck
scaffold.scaffold_from_beir("lawqa", sys.argv[1], sys.argv[2])
"""


def test_a_killed_task_new_leaves_no_staging_after_the_next_run(beir_dir, tmp_path):
    import signal
    import time

    out, signal_file = tmp_path / "gen", tmp_path / "writing"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(beir_dir), str(out), str(signal_file)])
    try:
        for _ in range(1200):  # the child imports statbench and reads the folder first
            if signal_file.exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert signal_file.exists(), "the child never reached the writing stage"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    left = [p.name for p in out.iterdir()]
    assert len(left) == 1 and left[0].startswith(f".statbench-task-staging-{child.pid}-")  # what a kill leaves
    # a staging folder of a process still running (this one) is never touched
    (out / f".statbench-task-staging-{os.getpid()}-busy").mkdir()
    result = run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [f".statbench-task-staging-{os.getpid()}-busy",
                                                     "statbench-task-lawqa"]


def test_task_new_racing_another_for_the_same_target_is_one_line(beir_dir, tmp_path, monkeypatch):
    import statbench.commands.scaffold as scaffold

    out = tmp_path / "gen"
    original = scaffold.write_sample

    def meanwhile(found, data, folder):  # another run finishes first
        original(found, data, folder)
        (out / "statbench-task-lawqa" / "pyproject.toml").parent.mkdir(parents=True)
        (out / "statbench-task-lawqa" / "pyproject.toml").write_text("theirs")

    monkeypatch.setattr(scaffold, "write_sample", meanwhile)
    result = run("task", "new", "lawqa", "--from-beir", str(beir_dir), "--out", str(out))
    assert result.exit_code == 2 and "it appeared while this plugin was being written" in result.output
    assert_one_error_line(result.output)
    assert [p.name for p in out.iterdir()] == ["statbench-task-lawqa"]
    assert (out / "statbench-task-lawqa" / "pyproject.toml").read_text() == "theirs"
