"""A newcomer's `statbench run` (issue 26): no silent overwrite, no silently dropped
option, no silently empty run, and messages that point the right way."""

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fixture_data import STARD_QUERIES, write_uk_pool
from statbench.commands.cli import cli
from statbench.commands.repeated_options import single_valued
from statbench.run.request import default_output_dir, request_from_cli
from run_model_fixtures import Sparse, newcomer_models  # noqa: F401 - the fixture


def run_cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.strip()]


# --- the default output folder names the configuration --------------------------------


def test_a_parameter_run_never_replaces_the_default_run(stard_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--no-progress"]
    assert run_cli(*base).exit_code == 0
    default = tmp_path / "statbench-output" / "stard" / "bm25" / "results.json"
    before = default.read_bytes()
    result = run_cli(*base, "--param", "k1=0.9")
    assert result.exit_code == 0, result.output
    assert default.read_bytes() == before  # the default run is as it was
    tuned = json.loads((tmp_path / "statbench-output" / "stard" / "bm25,k1=0.9" / "results.json").read_text())
    assert tuned["model"]["params"]["k1"] == 0.9
    assert "stard/bm25,k1=0.9/results.json" in "".join(result.output.split())  # the console says where


def test_identity_ignores_defaults_given_explicitly_and_spells_a_protocol_once():
    def folder(**kw):
        return default_output_dir(request_from_cli(task="stard", model="bm25", **kw))

    assert folder(params=["k1=1.2"]) == folder() == Path("statbench-output/stard/bm25")
    assert folder(protocol="5-fold") == folder()
    assert folder(splits=["dev"]) == folder(protocol="official") == Path("statbench-output/stard/bm25@official")
    assert folder(splits=["fold-2", "fold-1"]) == folder(splits=["fold-1", "fold-2"])
    assert folder(params=["k1=0.9", "b=0.5"]) == Path("statbench-output/stard/bm25,b=0.5,k1=0.9")
    # values a file name cannot hold are replaced, and a hash keeps configurations apart
    one = default_output_dir(request_from_cli(task="ukstat", pool="bm25", reranker="cross-encoder",
                                              reranker_params=["model=/w/a/b"]))
    two = default_output_dir(request_from_cli(task="ukstat", pool="bm25", reranker="cross-encoder",
                                              reranker_params=["model=/w/a_b"]))
    assert one != two and one.name.startswith("pool-bm25+cross-encoder,reranker.model=_w_a")
    assert default_output_dir(request_from_cli(task="ukstat", pool="bm25", reranker="cross-encoder",
                                               reranker_params=["model=x"], rerank_depth=50)).name \
        == "pool-bm25+cross-encoder,reranker.model=x,rerank_depth=50"


# --- an option given twice is refused, everywhere -------------------------------------


def _commands(group: click.Group, ctx: click.Context, path=()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, click.Context(command, parent=ctx, info_name=name), (*path, name))


def _value(option: click.Option) -> list[str]:
    if option.is_flag:
        return []
    kind = option.type
    if isinstance(kind, click.Choice):
        one = str(kind.choices[0])
    elif isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        one = str(getattr(kind, "min", None) or 1)
    else:
        one = "x"
    return [one] * max(option.nargs, 1)


def test_every_single_valued_option_of_every_command_given_twice_is_refused():
    root = click.Context(cli, info_name="statbench")
    cases = [(path, option) for path, command in _commands(cli, root) for option in command.params
             if single_valued(option)]
    assert len(cases) > 40 and any(path == ("compare",) for path, _ in cases)  # plugin commands are covered
    for path, option in cases:
        flag = option.opts[0]
        result = CliRunner().invoke(cli, [*path, flag, *_value(option), flag, *_value(option)])
        assert result.exit_code == 2, (path, flag, result.output)
        assert len(lines(result)) == 1 and "given twice" in result.output, (path, flag, result.output)
    result = CliRunner().invoke(cli, ["-v", "-v", "list"])
    assert result.exit_code == 2 and len(lines(result)) == 1 and "--verbose given twice" in result.output


def test_evaluate_measure_accumulates(stard_dir, tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output", out,
                   "--no-progress").exit_code == 0
    result = run_cli("evaluate", out / "run.trec", "--task", "stard", "--data-dir", stard_dir,
                     "--measure", "MRR@10", "--measure", "R@10", "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert [m["label"] for m in scores["measures"]] == ["MRR@10", "R@10"]
    assert set(scores["aggregate"]) == {"MRR@10", "R@10"} and set(scores["splits"][0]["scores"]) == {"MRR@10", "R@10"}
    wrong = run_cli("evaluate", out / "run.trec", "--task", "stard", "--data-dir", stard_dir, "--measure", "P@7")
    assert wrong.exit_code == 2 and len(lines(wrong)) == 1 and "unknown measure of this task 'P@7'" in wrong.output


# --- a model that ranks nothing -------------------------------------------------------


def test_a_model_that_ranks_nothing_stops_unless_allowed(stard_dir, tmp_path, newcomer_models):
    Sparse.answered = set()
    out = tmp_path / "out"
    base = ["run", "--task", "stard", "--model", "sparse", "--data-dir", stard_dir, "--output", out, "--no-progress"]
    result = run_cli(*base)
    assert result.exit_code == 2 and len(lines(result)) == 1, result.output
    assert "model 'sparse' ranked nothing for any of the 5 test queries" in result.output
    assert not out.exists()
    kept = run_cli(*base, "--allow-empty")
    assert kept.exit_code == 0, kept.output
    assert "model 'sparse' ranked nothing for 5 of 5 test queries" in " ".join(kept.output.split())
    results = json.loads((out / "results.json").read_text())
    assert sum(s["queries_without_results"] for s in results["splits"]) == 5


def test_a_model_that_ranks_nothing_for_some_queries_says_so(stard_dir, tmp_path, newcomer_models):
    Sparse.answered = {"0", "1", "2"}
    out = tmp_path / "out"
    result = run_cli("run", "--task", "stard", "--model", "sparse", "--data-dir", stard_dir, "--output", out,
                     "--no-progress")
    assert result.exit_code == 0, result.output
    assert "model 'sparse' ranked nothing for 2 of 5 test queries" in " ".join(result.output.split())
    assert "ranked nothing for 2 of 5" in (out / "run.log").read_text()
    results = json.loads((out / "results.json").read_text())
    assert sum(s["queries_without_results"] for s in results["splits"]) == 2


@pytest.mark.parametrize("keep, message", [
    (1, "returned 1 of the 6 candidates it was given"),
    (0, "returned no ranking for query"),
])
def test_a_reranker_that_drops_candidates_is_refused(stard_dir, tmp_path, newcomer_models, keep, message):
    out = tmp_path / "out"
    result = run_cli("run", "--task", "stard", "--model", "sparse", "--reranker", "dropping", "--reranker-param",
                     f"keep={keep}", "--data-dir", stard_dir, "--output", out, "--no-progress")
    assert result.exit_code == 2 and len(lines(result)) == 1, result.output
    assert "reranker 'dropping'" in result.output and message in result.output
    assert not out.exists()


# --- messages that point the right way ------------------------------------------------


def test_unknown_pool_says_how_to_build_it(tmp_path):
    uk = write_uk_pool(tmp_path / "uk", {"p-a": "an offence", "p-b": "a direction"}, {"Q1": "offence"},
                       "Q1\t0\tp-a\t3\n", "Q1 Q0 p-a 1 2.0 hand\nQ1 Q0 p-b 2 1.0 hand\n")
    result = run_cli("run", "--task", "ukstat", "--pool", "dense", "--data-dir", uk, "--no-progress",
                     "--output", tmp_path / "out")
    assert result.exit_code == 2 and len(lines(result)) == 1, result.output
    text = " ".join(result.output.split())
    assert "unknown pool of task ukstat 'dense'; valid choices: hand" in text
    assert "build it with `statbench pool build --task ukstat --retriever DENSE_RETRIEVER --name dense --data-dir" \
           in text


def test_loader_warnings_reach_the_console_once_per_data_and_run_log_every_time(stard_dir, tmp_path):
    unknown = {"query_id": 9, "问题": "无关的问题", "match_id": [99], "match_name": ["不存在法第一条"]}
    (stard_dir / "queries.json").write_text(json.dumps([*STARD_QUERIES, unknown], ensure_ascii=False), "utf-8")
    outputs = []
    for tag in ("a", "b", "c"):  # a: loaded; b: cached; c: loaded again (other output, same data)
        result = run_cli("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output",
                         tmp_path / tag, "--no-progress", *(["--split", "fold-1"] if tag == "c" else []))
        assert result.exit_code == 0, result.output
        assert "dropped:" in (tmp_path / tag / "run.log").read_text()
        outputs.append(" ".join(result.output.split()))
    assert "dropped:" in outputs[0] and "said once for these data files" in outputs[0]
    assert "dropped:" not in outputs[1] and "dropped:" not in outputs[2]


def test_loaded_sizes_differing_from_the_declaration_are_on_the_console_and_in_list(stard_dir, tmp_path):
    result = run_cli("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output",
                     tmp_path / "out", "--no-progress")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "the loaded data differs from the task's declaration" in text and "corpus 6 (declared 55,348)" in text
    listed = run_cli("list", "tasks")
    assert "55,348 (loaded 6)" in listed.output
    assert "corpus 55,348 (loaded 6)" in " ".join(run_cli("list", "tasks", "stard").output.split())


def test_list_is_one_line_each_with_details_on_request():
    compact = run_cli("list")
    assert compact.exit_code == 0
    assert len(lines(compact)) < 80  # 399 lines before
    task_rows = [line for line in lines(compact) if line.split()[0] in ("bsard", "stard", "ukstat")]
    assert len(task_rows) == 3 and "R@100" in next(r for r in task_rows if r.startswith("stard"))
    one = run_cli("list", "models", "bm25")
    assert one.exit_code == 0 and "k1=1.2" in one.output and "ql" not in one.output.split()
    assert "5-fold*: fold-1 (309)" in " ".join(run_cli("list", "-v").output.split())
    unknown = run_cli("list", "models", "nope")
    assert unknown.exit_code == 2 and "unknown model 'nope'" in unknown.output
