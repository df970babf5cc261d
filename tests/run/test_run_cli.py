"""`statbench run` / `evaluate` end to end on a miniature STARD, caching and bad input."""

import json
import shlex
import subprocess
import sys

import ir_measures
import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Retriever
from statbench.commands.cli import cli
from statbench.results.record import load_results
from statbench.testing import registered_plugin


def run_cli(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_bm25_on_stard_fixture_writes_consistent_outputs(stard_dir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    args = ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir), "--output", str(out),
            "--no-progress"]
    # the command line the run records is sys.argv: the user's, not pytest's (nor an xdist worker's, which has none)
    monkeypatch.setattr(sys, "argv", ["statbench", *args])
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert "R@100" in result.output and "mean ± std" in result.output
    results = load_results(out / "results.json")  # validates against the schema
    assert results["model"]["plugin"]["distribution"] == "statbench"
    assert results["command"] == shlex.join(["statbench", *args])
    assert sum(s["n_queries"] for s in results["splits"]) == 5
    # every query's relevant article contains its key words, so BM25 puts one first
    assert results["all_queries"]["MRR@10"] == 1.0
    # re-scoring the files with plain ir_measures gives the same pooled figures
    qrels = list(ir_measures.read_trec_qrels(str(out / "qrels.trec")))
    run = list(ir_measures.read_trec_run(str(out / "run.trec")))
    plain = ir_measures.calc_aggregate([ir_measures.parse_measure(m["ir_measure"]) for m in results["measures"]], qrels, run)
    for m in results["measures"]:
        assert plain[ir_measures.parse_measure(m["ir_measure"])] == pytest.approx(results["all_queries"][m["label"]])
    first = (out / "run.trec").read_text().splitlines()[0].split()
    assert len(first) == 6 and first[3] == "1" and first[5] == "statbench-bm25"
    assert results["run_file"]["path"] == "run.trec"
    # run.log records every step even though the console (no -v) shows only warnings
    log_lines = (out / "run.log").read_text().splitlines()
    assert any(line.startswith("info: fold-1: ") for line in log_lines), log_lines
    assert not any(line[len("info: "):] in result.output for line in log_lines if line.startswith("info: "))


class Counting(Retriever):
    """Ranks every document by shared characters; counts searches; can fail on demand."""

    name = "counting"
    searches = 0
    fail_after = None  # raise on the search after this many succeeded

    def index(self, corpus, ctx):
        self.docs = corpus

    def search(self, queries, k, ctx):
        if Counting.fail_after is not None and Counting.searches >= Counting.fail_after:
            raise RuntimeError("interrupted")
        Counting.searches += 1
        self.stats = {"queries_per_search": len(queries)}  # reported as throughput
        return {q.id: [(d.id, float(len(set(q.text) & set(d.text)))) for d in self.docs] for q in queries}


class CountingPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Counting)


@pytest.fixture
def counting():
    Counting.searches, Counting.fail_after = 0, None
    with registered_plugin(CountingPlugin(), "counting-plugin"):
        yield Counting


def test_second_identical_run_does_no_retrieval_work(stard_dir, tmp_path, counting):
    args = ["run", "--task", "stard", "--model", "counting", "--data-dir", str(stard_dir), "--no-progress"]
    assert run_cli(*args, "--output", str(tmp_path / "a")).exit_code == 0
    n_splits = counting.searches
    assert n_splits == len(json.loads((tmp_path / "a" / "results.json").read_text())["splits"]) > 1
    assert run_cli(*args, "--output", str(tmp_path / "b")).exit_code == 0
    assert counting.searches == n_splits
    first, second = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("a", "b"))
    assert set(second["cache"].values()) == {"hit"}
    assert second["throughput"] == first["throughput"] == {"queries_per_search": 1.0}  # kept from the cache
    assert (tmp_path / "a" / "run.trec").read_text() == (tmp_path / "b" / "run.trec").read_text()


def test_interrupted_run_leaves_no_output_and_resumes_from_cache(stard_dir, tmp_path, counting):
    counting.fail_after = 2
    out = tmp_path / "out"
    args = ["run", "--task", "stard", "--model", "counting", "--data-dir", str(stard_dir), "--output", str(out),
            "--no-progress"]
    failed = run_cli(*args)  # a plugin's exception is one line naming it, exit 2
    assert failed.exit_code == 2
    assert failed.output.strip().splitlines() == [
        "Error: model 'counting' (counting-plugin:counting) failed while searching fold-3: RuntimeError: interrupted"]
    assert not out.exists()
    done_before = counting.searches
    assert done_before == 2
    counting.fail_after = None
    assert run_cli(*args).exit_code == 0
    cache = json.loads((out / "results.json").read_text())["cache"]
    assert list(cache.values()).count("hit") == done_before
    assert counting.searches == done_before + list(cache.values()).count("miss")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--task", "nope", "--model", "bm25"], "unknown task 'nope'; valid choices: "),
        (["--task", "stard", "--model", "bm52"], "unknown retriever 'bm52'; valid choices: "),
        (["--task", "stard", "--model", "bm25", "--param", "k3=1"], "unknown parameter of bm25 'k3'; valid choices: "),
        (["--task", "stard", "--model", "bm25", "--param", "k1=high"],
         "parameter k1='high' for bm25: expected a finite float"),
        (["--task", "stard", "--model", "bm25", "--param", "k1=nan"],
         "parameter k1='nan' for bm25: not a finite number; expected a finite float"),
        (["--task", "stard", "--model", "bm25", "--param", "k1=inf"],
         "parameter k1='inf' for bm25: not a finite number; expected a finite float"),
        (["--task", "stard", "--model", "bm25", "--split", "fold-9"], "unknown split of task stard 'fold-9'"),
    ],
)
def test_bad_names_exit_2_with_choices_and_no_output(stard_dir, tmp_path, args, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", *args, "--data-dir", str(stard_dir), "--output", str(out), "--no-progress"])
    assert result.exit_code == 2
    assert message in result.output
    assert not out.exists()


def test_truncated_jsonl_line_names_file_and_line(stard_dir, tmp_path):
    corpus = stard_dir / "corpus.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:25]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                      "--output", str(out)])
    assert result.exit_code == 2
    assert f"Error: {corpus}, line 3: invalid JSON" in result.output
    assert not out.exists()


def test_missing_files_say_what_to_fetch(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "queries.json: fetch https://raw.githubusercontent.com/oneal2000/STARD/main/data/queries.json" in result.output
    assert f"place it at {tmp_path / 'queries.json'}" in result.output


def test_evaluate_scores_a_run_and_rejects_malformed_lines(stard_dir, tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("0 Q0 民法典第五十四条 1 2.0 x\n0 Q0 刑法第一条 2 1.0 x\n1 Q0 刑法第一条 1 1.0 x\n")
    result = run_cli("evaluate", str(run), "--task", "stard", "--data-dir", str(stard_dir), "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["per_query"]["0"]["MRR@10"] == 1.0
    assert scores["per_query"]["1"]["MRR@10"] == 0.0
    assert scores["all_queries"]["R@5"] == pytest.approx(1 / 5)  # 1 of 5 queries fully found
    run.write_text("0 Q0 民法典第五十四条 1 2.0\n")
    result = CliRunner().invoke(cli, ["evaluate", str(run), "--task", "stard", "--data-dir", str(stard_dir)])
    assert result.exit_code == 2
    assert f"{run}, line 1: expected 6 columns" in result.output


def test_help_imports_no_heavy_modules():
    code = (
        "import sys; from click.testing import CliRunner; from statbench.commands.cli import cli; "
        "CliRunner().invoke(cli, ['--help']); "
        "print(sorted(m for m in ('torch','transformers','numpy','ir_measures','bm25s','jieba','jnius') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_runs_started_from_python_record_the_equivalent_command(stard_dir, tmp_path):
    import logging

    from statbench.run.runner import execute
    from statbench.run.request import RunRequest

    out = tmp_path / "out"
    request = RunRequest(task="stard", model="bm25", params={"k1": 0.9, "b": 0.4}, data_dir=stard_dir, output=out)
    outcome = execute(request, logging.getLogger("test"), lambda description, total=None: (lambda n=1: None))
    command = outcome.results["command"]
    assert command == f"statbench run --task stard --model bm25 --param k1=0.9 --param b=0.4 --data-dir {stard_dir} --output {out}"
    # and that command reproduces the run file byte for byte
    again = run_cli(*command.split()[1:-2], "--output", str(tmp_path / "again"), "--no-progress")
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "run.trec").read_text() == (out / "run.trec").read_text()


def test_results_name_the_gpu_only_when_torch_used_cuda(monkeypatch):
    from types import SimpleNamespace

    from statbench.run.runner import _accelerator

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert _accelerator() == {}  # torch never imported: no GPU was used
    cuda = SimpleNamespace(is_initialized=lambda: True, current_device=lambda: 0,
                           get_device_name=lambda index: f"NVIDIA H100 80GB HBM3 #{index}")
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(__version__="2.11.0+cu130", cuda=cuda))
    assert _accelerator() == {"torch": "2.11.0+cu130", "accelerator": "NVIDIA H100 80GB HBM3 #0"}
    cuda.is_initialized = lambda: False  # imported but only used on the CPU
    assert _accelerator() == {}
