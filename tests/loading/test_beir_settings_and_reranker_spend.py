"""Red-team round 2 (R6): BEIR folders' task settings, API/listwise rerankers' spend and cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import api_servers
from api_servers import KEY
from statbench.loading.beir import default_name, find_folder, task_class
from statbench.storage.cache import CacheEntry
from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.storage.paths import cache_root
from beir_fixtures import write_beir


def run(*args):
    return CliRunner().invoke(cli, [*args], catch_exceptions=False)


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


# --- statbench.json ----------------------------------------------------------------------------

@pytest.mark.parametrize("settings, said", [
    ({"protocols": {"x": {"splits": [["test"]]}}}, "split ['test'] is not a split name"),
    ({"protocols": {"x": {"splits": ["test", "test"]}}}, "names split 'test' twice"),
    ({"protocols": {"": {"splits": ["test"]}}}, "protocol name ''"),
    ({"protocols": {"a/b c": {"splits": ["test"]}}}, "protocol name 'a/b c'"),
    ({"protocols": {"x": {"splits": ["test"], "description": 5}}}, "protocol 'x': expected"),
    ({"measures": [{"label": "", "ir_measure": "P@1"}]}, "label and name are non-empty"),
    ({"measures": [{"label": "P\t1", "ir_measure": "P@1"}]}, "label and name are non-empty"),
    ({"measures": [" P@1"]}, "without leading or trailing spaces"),
    ({"relevance": {"1": "a", "+1": "b"}}, "are the same grade 1"),
    ({"relevance": {}}, "expected {grade: meaning}"),
    ({"description": "two\nlines"}, "line break"),
    ({"primary_measure": ""}, "non-empty string"),
    ({"default_protocol": ""}, "non-empty string"),
    ({"name": "a" * 300}, "at most 100 characters"),
    ({"version": "v 2/3"}, "a version is letters"),
])
def test_settings_that_cannot_mean_one_thing_are_one_line(tmp_path, settings, said):
    folder = write_beir(tmp_path / "lawqa", settings={"language": "en", **settings})
    with pytest.raises(DataFormatError, match=r"statbench\.json") as caught:
        find_folder(folder)
    assert said in str(caught.value) and "\n" not in str(caught.value)
    outcome = run("list", "tasks", f"beir:{folder}")
    assert outcome.exit_code == 2 and said in last_line(outcome.output)
    assert "unexpected" not in outcome.output and "Traceback" not in outcome.output


def _info(folder: Path, settings: dict):
    (folder / "statbench.json").write_text(json.dumps(settings))
    return task_class(find_folder(folder)).task_info()


def test_settings_that_change_the_figures_change_the_task_version(tmp_path):
    folder = write_beir(tmp_path / "lawqa")
    plain = _info(folder, {"language": "en"}).version
    assert plain == _info(folder, {"language": "en", "title": "prepend", "depth": 1000}).version == "beir-1"
    assert _info(folder, {"language": "en-GB"}).version == "beir-1"  # analysed as en: the same figures
    assert _info(folder, {"language": "zh-Hans"}).version == _info(folder, {"language": "zh-CN"}).version
    versions = {plain}
    for settings in ({"title": "separate"}, {"depth": 10}, {"language": "fr"}, {"depth": 10, "version": "2"}):
        versions.add(_info(folder, {"language": "en", **settings}).version)
    assert len(versions) == 5
    assert _info(folder, {"language": "en", "title": "separate", "depth": 10}).version == \
        "beir-1+title=separate+depth=10"


def test_compare_refuses_runs_of_one_folder_under_another_title_mode(tmp_path, monkeypatch):
    """The same files, read with titles kept apart: other documents, same data checksum."""
    monkeypatch.chdir(tmp_path)
    folder = write_beir(tmp_path / "lawqa", settings={"language": "en"}, train=None, dev=None,
                        test="q1\td1\t1\nq2\td3\t1\nq3\td4\t2\nq4\td2\t1\nq5\td6\t1\nq8\td7\t1\n")
    assert run("run", "--task", f"beir:{folder}", "--model", "bm25", "--no-progress", "--output", "pre").exit_code == 0
    (folder / "statbench.json").write_text(json.dumps({"language": "en", "title": "separate"}))
    assert run("run", "--task", f"beir:{folder}", "--model", "bm25", "--no-progress", "--output", "sep").exit_code == 0
    pre, sep = (json.loads(Path(f"{name}/results.json").read_text()) for name in ("pre", "sep"))
    assert pre["aggregate"] != sep["aggregate"]  # the title mode changes the figures
    assert pre["task"]["data_checksum"] == sep["task"]["data_checksum"]
    assert (pre["task"]["version"], sep["task"]["version"]) == ("beir-1", "beir-1+title=separate")
    outcome = run("compare", "pre/results.json", "sep/results.json")
    assert outcome.exit_code == 2 and "not comparable" in last_line(outcome.output)


def test_a_long_folder_name_gives_a_bounded_task_name(tmp_path):
    long = tmp_path / ("x" * 250)
    long.mkdir()
    other = tmp_path / ("x" * 249 + "y")
    other.mkdir()
    name = default_name(long)
    assert name.startswith("beir-xxx") and len(name) <= 100 and name != default_name(other)
    assert default_name(tmp_path / "scifact") == "beir-scifact"


# --- API rerankers: the spend threshold holds for a whole run ------------------------------


@pytest.fixture
def two_split_folder(tmp_path):
    """A BEIR folder whose default protocol runs two splits (4 + 1 test queries)."""
    return write_beir(tmp_path / "lawqa", settings={"language": "en",
                                                    "protocols": {"both": {"splits": ["test", "dev"]}}})


@pytest.fixture
def cohere(monkeypatch):
    server = api_servers.ApiServer(api_servers.cohere_answer)
    monkeypatch.setenv("CO_API_KEY", KEY)
    monkeypatch.delenv("STATBENCH_ALLOW_SPEND", raising=False)
    yield server
    server.close()


def _rerun(folder, reranker, params, output):
    args = ["run", "--task", f"beir:{folder}", "--model", "bm25", "--reranker", reranker, "--rerank-depth", "3",
            "--no-progress", "--output", str(folder.parent / output)]
    for key, value in params.items():
        args += ["--reranker-param", f"{key}={value}"]
    return run(*args)


def _documents(server) -> int:
    return sum(len(body.get("documents", [])) for _, _, body in server.requests)


def test_api_spend_threshold_counts_every_split_of_the_run(two_split_folder, cohere):
    # each split alone stays under the threshold (test: 7 candidates, dev: 1), the run does not
    outcome = _rerun(two_split_folder, "cohere-rerank", {"base_url": cohere.url, "confirm_above": 7}, "out")
    assert outcome.exit_code == 2, outcome.output
    said = last_line(outcome.output)
    assert "after 7 documents already sent in this run" in said and "confirm_above=7" in said and "--yes" in said
    assert _documents(cohere) == 7
    os.environ["STATBENCH_ALLOW_SPEND"] = "1"
    try:
        outcome = _rerun(two_split_folder, "cohere-rerank", {"base_url": cohere.url, "confirm_above": 7}, "out")
    finally:
        del os.environ["STATBENCH_ALLOW_SPEND"]
    assert outcome.exit_code == 0, outcome.output
    # a threshold above the whole run asks nothing
    outcome = _rerun(two_split_folder, "cohere-rerank", {"base_url": cohere.url, "confirm_above": 8,
                                                         "model": "another"}, "out2")
    assert outcome.exit_code == 0, outcome.output


def test_listwise_spend_threshold_counts_every_split_of_the_run(two_split_folder, monkeypatch):
    server = api_servers.ApiServer(api_servers.chat_answer(lambda messages: "[1] > [2] > [3]"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("STATBENCH_ALLOW_SPEND", raising=False)
    try:
        outcome = _rerun(two_split_folder, "listwise-llm", {"base_url": server.url + "/v1", "model": "m",
                                                            "window": 3, "stride": 2, "confirm_above": 7}, "out")
        assert outcome.exit_code == 2, outcome.output
        assert "already sent in this run" in last_line(outcome.output)
        assert "after 7 documents" in last_line(outcome.output) and len(server.requests) == 4
    finally:
        server.close()


# --- API cache entries that verify but do not hold an answer ------------------------------------


@pytest.mark.parametrize("payload", [{}, {"scores": 5}, {"scores": [[0]]}, {"scores": [0.5, 0.2, 0.1]},
                                     {"usage": [1]}])
def test_a_sealed_cache_entry_without_scores_is_one_line(two_split_folder, cohere, payload):
    params = {"base_url": cohere.url, "confirm_above": 100}
    assert _rerun(two_split_folder, "cohere-rerank", params, "out").exit_code == 0
    for response in sorted((cache_root() / "api-responses").rglob("response.json")):
        manifest = json.loads((response.parent / "manifest.json").read_text())
        entry = CacheEntry(response.parent, manifest["kind"], manifest["key"], required=("response.json",))
        written = {**json.loads(response.read_text()), **payload} if "usage" in payload else payload
        with entry.lock(), entry.build() as staging:
            (staging / "response.json").write_text(json.dumps(written))
        assert entry.valid()
    import shutil

    shutil.rmtree(cache_root() / "runs")
    outcome = _rerun(two_split_folder, "cohere-rerank", params, "again")
    if "usage" in payload:  # well-formed scores: the odd usage is ignored (it is only counted when sent)
        assert outcome.exit_code == 0, outcome.output
    else:
        assert outcome.exit_code == 2, outcome.output
        said = last_line(outcome.output)
        assert "malformed response from the cache entry of query" in said and "unexpected" not in said
