"""One parameter encoder: a typed value is written as text by ``param_text`` only and read
back by ``Param.coerce`` to the same value; a run request is written as ``statbench run``'s
arguments by ``request_to_argv`` and read back by ``request_from_argv`` to an equal request
(and a command line in that form comes back unchanged); grid cells hold their request and
run the arguments written from it; ``statbench evaluate --measure`` is checked before any
run is read."""

from __future__ import annotations

import json
import random
import shlex
import string
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.api import Param, Reranker, Retriever, hookimpl
from statbench.commands.cli import cli, request_from_argv
from statbench.contract.params import ParamError, param_items, param_text, parse_params
from statbench.run.request import RunRequest, equivalent_command, request_to_argv
from statbench.testing import registered_plugin

#: values whose text is easy to get wrong: shortest float text, exponents, -0.0, huge ints,
#: the characters the command line and folder names use as separators
EDGES = [True, False, 0, -3, 10**30, 1.0, 0.1, 1e-7, -2.5, 1e300, 5e-324, 123456789.125, 1e16,
         "", "a=b", "a,b", "x y", "k=v,w=x y", "über", "'quoted'", '"', "a\\b", "@at", "line\nbreak"]


def _random_value(rng: random.Random, kind: type):
    if kind is bool:
        return rng.random() < 0.5
    if kind is int:
        return rng.choice([rng.randint(-10, 10), rng.randint(-10**12, 10**12)])
    if kind is float:
        return rng.choice([rng.uniform(-1, 1), rng.uniform(0, 1) * 10 ** rng.randint(-12, 12),
                           float(rng.randint(-5, 5)), rng.choice([1e-7, 1.0, 0.5, 2.0**-40])])
    alphabet = string.ascii_letters + string.digits + " =,@+-_./'\"\\:;é中"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))).strip()


@pytest.mark.parametrize("value", EDGES, ids=repr)
def test_param_text_reads_back_as_the_same_value(value):
    back = Param(value).coerce(param_text(value), "k", "model")
    assert back == value and type(back) is type(value)


def test_param_text_round_trips_random_values_of_every_type():
    rng = random.Random(25)
    for _ in range(2000):
        kind = rng.choice([bool, int, float, str])
        value = _random_value(rng, kind)
        back = Param(value).coerce(param_text(value), "k", "model")
        assert back == value and type(back) is type(value), (value, param_text(value))
        # through --param KEY=VALUE, as the command line reads it
        assert parse_params(param_items({"k": value}), {"k": Param(value)}, "model") == {"k": value}


def test_bool_and_float_texts_are_the_command_line_spellings():
    assert [param_text(v) for v in (True, False, 1.0, 1e-7, 0.9, 3)] == ["true", "false", "1.0", "1e-07", "0.9", "3"]


@pytest.mark.parametrize("value", [" leading", "trailing ", "\tboth\n", "nul\0char"], ids=repr)
def test_a_string_the_command_line_cannot_carry_is_refused(value):
    """``--param`` strips white space at either end, and no command line holds a NUL: such
    a value from Python would run one configuration and record a command for another."""
    with pytest.raises(ParamError, match=r"parameter name=.* for model: white space at either end or a NUL"):
        Param("x").coerce(value, "name", "model")


# --- RunRequest <-> argv --------------------------------------------------------------------------


class Typed(Retriever):
    name = "rt-typed"
    family = "lexical"
    default_params = {"flag": False, "n": 3, "alpha": Param(0.5), "name": "base", "ratio": Param(1.0, min=0.0)}

    def index(self, corpus, ctx):
        pass

    def search(self, queries, k, ctx):
        return {}


class TypedReranker(Reranker):
    name = "rt-rerank"
    default_params = {"batch": 8, "prompt": "query", "temperature": 0.0, "greedy": True}

    def rerank(self, queries, candidates, corpus, ctx):
        return {}


class TypedPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Typed)

    @hookimpl
    def register_rerankers(self, register):
        register(TypedReranker)


@pytest.fixture
def typed_models():
    with registered_plugin(TypedPlugin(), "rt-typed-models"):
        yield


def _random_request(rng: random.Random) -> RunRequest:
    def some(cls) -> dict:
        declared = {k: v if isinstance(v, Param) else Param(v) for k, v in cls.default_params.items()}
        keys = rng.sample(sorted(declared), rng.randint(0, len(declared)))
        values = {k: _random_value(rng, declared[k].kind) for k in keys}
        if "ratio" in values:
            values["ratio"] = abs(values["ratio"])
        return values

    reranked = rng.random() < 0.5
    pooled = reranked and rng.random() < 0.3
    return RunRequest(
        task="stard", model=None if pooled else "rt-typed", params={} if pooled else some(Typed),
        reranker="rt-rerank" if reranked else None, reranker_params=some(TypedReranker) if reranked else {},
        pool="bm25" if pooled else None, rerank_depth=rng.choice([100, 1, 37, 1000]) if reranked else 100,
        splits=rng.choice([None, ["test"], ["fold-1", "fold 2"]]), protocol=rng.choice([None, "official"]),
        data_dir=rng.choice([None, Path("/data/stard"), Path("rel dir/with,comma=eq")]),
        output=rng.choice([None, Path("out/bm25,k1=0.9@x")]), allow_empty=rng.random() < 0.2,
    )


def test_request_to_argv_and_back_is_the_identity(typed_models):
    rng = random.Random(2025)
    for _ in range(300):
        request = _random_request(rng)
        argv = request_to_argv(request)
        back = request_from_argv(argv)
        assert back == replace(request, command=equivalent_command(request)), argv
        assert request_to_argv(back) == argv  # a command line in canonical form comes back unchanged
        assert shlex.split(equivalent_command(request)) == ["statbench", *argv]


def test_a_canonical_command_line_reads_back_unchanged(typed_models):
    argv = ["run", "--task", "stard", "--model", "rt-typed", "--param", "alpha=1e-07", "--param", "flag=true",
            "--param", "name=a=b, c", "--param", "n=-4", "--param", "ratio=1.0", "--reranker", "rt-rerank",
            "--reranker-param", "prompt=x@y", "--reranker-param", "greedy=false", "--rerank-depth", "20",
            "--split", "fold-1", "--split", "fold-2", "--protocol", "official", "--data-dir", "/d a/b",
            "--output", "o", "--allow-empty"]
    request = request_from_argv(argv)
    assert request.params == {"alpha": 1e-7, "flag": True, "name": "a=b, c", "n": -4, "ratio": 1.0}
    assert request.reranker_params == {"prompt": "x@y", "greedy": False} and request.rerank_depth == 20
    assert request_to_argv(request) == argv


def test_request_from_argv_refuses_what_statbench_run_refuses(typed_models):
    from statbench.errors import StatbenchError

    with pytest.raises(StatbenchError, match="no --reranker to hand the candidates to"):
        request_from_argv(["run", "--task", "stard", "--model", "rt-typed", "--rerank-depth", "5"])
    with pytest.raises(StatbenchError, match="parameter n='x' for rt-typed"):
        request_from_argv(["run", "--task", "stard", "--model", "rt-typed", "--param", "n=x"])
    with pytest.raises(StatbenchError, match="not a statbench run command line"):
        request_from_argv(["evaluate", "run.trec"])


# --- grid cells hold a RunRequest -----------------------------------------------------------------


def test_grid_cells_hold_their_request_and_run_the_arguments_written_from_it(typed_models, tmp_path):
    from statbench.grid.cells import expand
    from statbench.grid.spec import read_grid

    path = tmp_path / "exp.yaml"
    path.write_text(f"output: {tmp_path / 'out'}\ntasks: [{{name: stard, data_dir: {tmp_path}}}]\nmodels:\n"
                    "  - label: t\n    model: rt-typed\n"
                    "    params: {alpha: [1, 1.0e-7], name: ['a b=c,d', x], flag: true}\n", "utf-8")
    cells = expand(read_grid(path), tmp_path / "out")
    assert len(cells) == 4
    for cell in cells:
        assert isinstance(cell.request, RunRequest)
        assert type(cell.request.params["alpha"]) is float and cell.request.params["flag"] is True
        assert cell.params is cell.request.params
        run_args = cell.argv[cell.argv.index("statbench.commands.cli") + 1:]
        assert run_args == [*request_to_argv(cell.request), "--no-progress"]
        assert cell.command == shlex.join(["statbench", *run_args])
        assert request_from_argv(run_args) == replace(cell.request, command=cell.command)
    assert [c.request.params["alpha"] for c in cells] == [1.0, 1.0, 1e-7, 1e-7]
    assert "--param alpha=1.0 --param 'name=a b=c,d' --param flag=true" in cells[0].command


# --- statbench evaluate --measure -----------------------------------------------------------------


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def stard_run(stard_dir, tmp_path) -> Path:
    out = tmp_path / "run"
    result = _invoke("run", "--task", "stard", "--model", "bm25", "--data-dir", stard_dir, "--output", out,
                     "--no-progress")
    assert result.exit_code == 0, result.output
    return out / "run.trec"


def test_evaluate_measure_keeps_exactly_the_chosen_measures_with_the_task_scores(stard_run, stard_dir):
    full = json.loads(_invoke("evaluate", stard_run, "--task", "stard", "--data-dir", stard_dir, "--json").output)
    # a label, and a measure string that one of the task's measures spells (MRR@10 is RR@10)
    ir = {m["label"]: m["ir_measure"] for m in full["measures"]}
    assert ir["MRR@10"] == "RR@10"
    result = _invoke("evaluate", stard_run, "--task", "stard", "--data-dir", stard_dir, "--json",
                     "--measure", "R@100", "--measure", "RR@10", "--measure", "R@100")
    assert result.exit_code == 0, result.output
    chosen = json.loads(result.output)
    labels = ["R@100", "MRR@10"]
    assert [m["label"] for m in chosen["measures"]] == labels
    assert chosen["aggregate"] == {label: full["aggregate"][label] for label in labels}
    assert chosen["all_queries"] == {label: full["all_queries"][label] for label in labels}
    assert chosen["per_query"] == {q: {label: s[label] for label in labels} for q, s in full["per_query"].items()}
    for split, whole in zip(chosen["splits"], full["splits"]):
        assert split["scores"] == {label: whole["scores"][label] for label in labels}
    others = set(ir) - set(labels)
    assert others and not others & set(json.dumps(chosen["aggregate"]).split('"'))
    table = _invoke("evaluate", stard_run, "--task", "stard", "--data-dir", stard_dir, "--measure", "R@5")
    assert table.exit_code == 0 and "R@5" in table.output and "R@100" not in table.output, table.output


def test_evaluate_refuses_an_unknown_measure_before_reading_the_run(stard_dir, tmp_path):
    """Checked against the task's declaration first: the run file does not even exist."""
    result = _invoke("evaluate", tmp_path / "missing.trec", "--task", "stard", "--data-dir", stard_dir,
                     "--measure", "R@10", "--measure", "P@7")
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert "unknown measure of this task 'P@7'" in result.output and "missing.trec" not in result.output
