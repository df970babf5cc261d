"""Red team (R2): the run CLI and its outputs. Each test failed before its fix."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fixture_data import write_uk_pool
from statbench import hookimpl
from statbench.api import Reranker, Retriever
from statbench.commands.cli import cli
from statbench.run.outputs import config_folder_name
from statbench.run.request import default_output_dir, request_from_cli
from statbench.testing import registered_plugin
from run_model_fixtures import Sparse, newcomer_models  # noqa: F401 (fixture)


def run_cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.strip()]


def folder(**kw) -> Path:
    return default_output_dir(request_from_cli(**kw))


# --- two configurations never share a default output folder ---------------------------


@pytest.mark.parametrize("prefix", ["", "/w/"])
def test_a_value_holding_a_comma_is_not_two_parameters(prefix):
    one = folder(task="stard", model="biencoder", params=[f"model={prefix}a,pooling=mean"])
    two = folder(task="stard", model="biencoder", params=[f"model={prefix}a", "pooling=mean"])
    assert one != two
    assert folder(task="stard", model="biencoder", params=["model=a", "pooling=mean"]).name \
        == "biencoder,model=a,pooling=mean"  # plain names stay readable


class PlusModel(Sparse):
    name = "sparse+keep"


class PoolModel(Sparse):
    name = "pool-hand"


class Keep(Reranker):
    """Orders every candidate it is given (reads candidates[q.id] for every query)."""

    name = "keep"

    def rerank(self, queries, candidates, corpus, ctx):
        return {q.id: [(d, 1.0 / (i + 1)) for i, d in enumerate(candidates[q.id])] for q in queries}


class OddNames:
    @hookimpl
    def register_retrievers(self, register):
        register(Sparse)
        register(PlusModel)
        register(PoolModel)

    @hookimpl
    def register_rerankers(self, register):
        register(Keep)


@pytest.fixture
def odd_names():
    Sparse.answered = None
    with registered_plugin(OddNames(), "odd-names"):
        yield
    Sparse.answered = None


def test_a_model_whose_name_reads_like_a_model_and_a_reranker_has_its_own_folder(odd_names):
    assert folder(task="ukstat", model="sparse+keep") != folder(task="ukstat", model="sparse", reranker="keep")
    assert folder(task="ukstat", model="pool-hand") != folder(task="ukstat", pool="hand")
    assert folder(task="ukstat", model="sparse", reranker="keep").name == "sparse+keep"


def test_a_long_unicode_value_still_makes_a_folder_name(tmp_path):
    name = folder(task="stard", model="biencoder", params=["model=" + "法" * 150]).name
    assert len(name.encode("utf-8")) <= 120 and "~" in name
    (tmp_path / name).mkdir()  # not 'File name too long'
    assert config_folder_name("x" * 300) != config_folder_name("x" * 301)


# --- --model and --pool together ------------------------------------------------------


def _uk(tmp_path, pool="Q1 Q0 p-a 1 2.0 hand\nQ1 Q0 p-b 2 1.0 hand\nQ2 Q0 p-b 1 1.0 hand\n"):
    return write_uk_pool(tmp_path / "uk", {"p-a": "an offence", "p-b": "a direction"},
                         {"Q1": "offence", "Q2": "direction"}, "Q1\t0\tp-a\t3\nQ2\t0\tp-b\t2\n", pool)


def test_model_and_pool_together_are_refused(tmp_path):
    out = tmp_path / "out"
    result = run_cli("run", "--task", "ukstat", "--pool", "hand", "--model", "bm25", "--data-dir", _uk(tmp_path),
                     "--no-progress", "--output", out)
    assert result.exit_code == 2 and len(lines(result)) == 1, result.output
    assert "give --model or --pool, not both" in result.output
    assert not out.exists()  # results.json named pool 'hand' for a run of bm25


# --- a reranker after a first stage that ranked nothing for some queries ---------------


def test_a_reranker_gets_empty_candidates_for_queries_the_first_stage_left_out(stard_dir, tmp_path, odd_names):
    Sparse.answered = {"0", "1", "2"}
    out = tmp_path / "out"
    result = run_cli("run", "--task", "stard", "--model", "sparse", "--reranker", "keep", "--data-dir", stard_dir,
                     "--output", out, "--no-progress")
    assert result.exit_code == 0, result.output  # was: reranker 'keep' failed: KeyError
    text = " ".join(result.output.split())
    assert "reranker 'keep' (on the candidates of model 'sparse') ranked nothing for 2 of 5 test queries" in text
    results = json.loads((out / "results.json").read_text())
    assert sum(s["queries_without_results"] for s in results["splits"]) == 2
    again = run_cli("run", "--task", "stard", "--model", "sparse", "--reranker", "keep", "--data-dir", stard_dir,
                    "--output", out, "--no-progress")  # cached: says the same
    assert again.exit_code == 0 and "ranked nothing for 2 of 5 test queries" in " ".join(again.output.split())


# --- rich markup in what plugins, users and files say ----------------------------------


class Marked(Retriever):
    name = "marked"
    description = "ranks [/bold] and [red]things"
    default_params = {"x": "[/]"}

    def search(self, queries, k, ctx):
        return {}


class MarkedPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Marked)


class BrokenPlugin:
    @hookimpl
    def register_retrievers(self, register):
        raise RuntimeError("boom [/oops]")


@pytest.mark.parametrize("args", [("list",), ("list", "-v"), ("list", "models", "marked")])
def test_list_shows_a_description_holding_markup_as_text(args):
    with registered_plugin(MarkedPlugin(), "marked-plugin"):
        result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert "ranks [/bold] and" in " ".join(result.output.split())


@pytest.mark.parametrize("args", [("list",), ("list", "-v"), ("list", "tasks", "stard"), ("plugins",)])
def test_a_broken_plugin_whose_error_holds_markup_never_stops_list(args):
    with registered_plugin(BrokenPlugin(), "broken-plugin"):
        result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert "boom [/oops]" in result.output


def test_an_output_folder_holding_markup_is_printed_as_given(stard_dir, tmp_path):
    out = tmp_path / "out[/x]:fire:"
    result = run_cli("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output", out,
                     "--no-progress")
    assert result.exit_code == 0, result.output
    assert f"results: {out / 'results.json'}" in result.output


def test_pool_list_shows_a_hostile_sidecar_as_text(tmp_path):
    uk = _uk(tmp_path)
    (uk / "pools" / "hand.json").write_text(json.dumps({"retriever": "[/x]", "depth": "[/y]"}))
    result = run_cli("pool", "list", "--task", "ukstat", "--data-dir", uk)
    assert result.exit_code == 0, result.output
    assert "[/y]" in result.output


# --- a loaded-sizes record in the cache is a file anyone can damage -------------------


@pytest.mark.parametrize("content", [
    '{"checksum": "c", "sizes": {"corpus": Infinity}}', '{"checksum": "c", "sizes": {"corpus": 1e400}}',
    '{"checksum": "c", "sizes": {"corpus": 1.5}}', '{"checksum": "c", "sizes": {"corpus": true}}',
    '{"checksum": "c", "sizes": {"corpus": "7"}}', '{"checksum": "c", "sizes": {"corpus": -4}}',
    "[" * 100_000, '{"sizes": [1, 2]}', "\udcff",
])
def test_a_damaged_loaded_sizes_record_is_ignored(isolated_cache, content):
    sizes = isolated_cache / "loaded-sizes"
    sizes.mkdir(parents=True, exist_ok=True)
    (sizes / "stard.json").write_bytes(content.encode("utf-8", "surrogateescape"))
    for args in (("list",), ("list", "tasks", "stard")):
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
        assert "loaded" not in result.output.replace("(or models NAME)", ""), result.output
        assert "55,348" in result.output


# --- beir folders whose names had to change ---------------------------------------------


def test_beir_folders_whose_names_collapse_to_one_task_name_keep_their_own_outputs(tmp_path):
    from beir_fixtures import write_beir

    spaced, dashed = write_beir(tmp_path / "law qa"), write_beir(tmp_path / "law-qa")
    one = folder(task=f"beir:{spaced}", model="bm25")
    two = folder(task=f"beir:{dashed}", model="bm25")
    assert one != two and two == Path("statbench-output/beir-law-qa/bm25")


def test_a_split_named_like_a_protocol_of_other_splits_has_its_own_folder(tmp_path):
    from beir_fixtures import write_beir

    root = write_beir(tmp_path / "lawqa")
    (root / "statbench.json").write_text(json.dumps({"protocols": {
        "test": {"splits": ["test"]}, "dev": {"splits": ["test", "dev"]}}, "default_protocol": "test"}))
    assert folder(task=f"beir:{root}", model="bm25", protocol="dev") != \
        folder(task=f"beir:{root}", model="bm25", splits=["dev"])


def test_a_loaded_sizes_record_that_is_a_fifo_never_blocks_list(isolated_cache):
    import os

    sizes = isolated_cache / "loaded-sizes"
    sizes.mkdir(parents=True, exist_ok=True)
    os.mkfifo(sizes / "stard.json")  # reading it would wait for a writer forever
    result = run_cli("list", "tasks", "stard")
    assert result.exit_code == 0 and "55,348" in result.output


def test_rerank_depth_without_a_reranker_is_refused(stard_dir, tmp_path):
    out = tmp_path / "out"
    result = run_cli("run", "--task", "stard", "--model", "bm25", "--rerank-depth", "5", "--data-dir", stard_dir,
                     "--output", out, "--no-progress")
    assert result.exit_code == 2 and len(lines(result)) == 1, result.output
    assert "--rerank-depth 5: no --reranker" in result.output and not out.exists()
