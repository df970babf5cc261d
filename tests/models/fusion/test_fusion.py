"""Fusion (issue 23): ranx is the engine (statbench's fused run equals ranx's, rank for rank,
ties in the project's declared order), ``statbench fuse`` on output folders and run files
(values checked by hand for one query; refusals are one line and exit 2), the ``fusion``
retriever in ``statbench run`` and in a grid, and wsum weights tuned on a dev split only."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import grid_fixtures
import pytest
from click.testing import CliRunner
from grid_fixtures import DEV, ROTATE, mrr, rotated

from statbench.commands.cli import cli
from statbench.registry import plugins

ranx = pytest.importorskip("ranx")

# the fusion tests run on one xdist worker: numba compiles ranx's fusion code once per process
# (seconds per method), which a second worker would pay again
pytestmark = pytest.mark.xdist_group("ranx")

K = 60


def invoke(args, monkeypatch=None):
    if monkeypatch is not None:
        monkeypatch.setattr(sys, "argv", ["statbench", *map(str, args)])
    plugins.reset_registry()
    return CliRunner().invoke(cli, list(map(str, args)))


@pytest.fixture
def rotate(fake_distributions):
    """The grid tests' ``rotate`` model (sorted corpus ids rotated by ``offset``), installed."""
    fake_distributions("sbgrid-rotate", "sbgrid_rotate", textwrap.dedent(ROTATE), entry_name="rotate")
    return "rotate"


@pytest.fixture
def stard(tmp_path) -> Path:
    return grid_fixtures.write_stard(tmp_path / "stard")


def run_model(stard: Path, out: Path, model: str, *params: str, protocol: str | None = None) -> Path:
    args = ["run", "--task", "stard", "--model", model, *[a for p in params for a in ("--param", p)],
            "--data-dir", stard, "--output", out, "--no-progress"]
    if protocol:
        args += ["--protocol", protocol]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    return out


def rrf_by_hand(orders: list[list[str]], k: int = K) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for order in orders:
        for rank, doc in enumerate(order, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


# --- the engine is ranx ---------------------------------------------------------------------------

A = {"q1": [("d1", 3.0), ("d2", 2.0), ("d3", 1.0), ("d4", 0.5)], "q2": [("d5", 2.0), ("d1", 1.0)]}
B = {"q1": [("d3", 0.9), ("d1", 0.8), ("d5", 0.2)], "q2": [("d1", 0.7), ("d5", 0.1), ("d2", 0.05)]}


@pytest.mark.parametrize("method,norm,weights", [
    ("rrf", "auto", ()), ("combsum", "auto", ()), ("combmnz", "auto", ()), ("combsum", "z", ()),
    ("wsum", "min-max", (0.3, 0.7)), ("isr", "auto", ()), ("bordafuse", "auto", ()),
])
def test_the_fused_run_is_ranx_rank_for_rank_with_ties_in_the_declared_order(method, norm, weights):
    from statbench.data.runfile import order_ranking
    from statbench.models.fusion.engine import METHODS, NORMS, FusionSettings, fuse_rankings

    settings = FusionSettings(method=method, norm=norm, weights=weights)
    ours = fuse_rankings([A, B], ["q1", "q2", "q3"], settings, depth=100)
    ranx_norm = NORMS[norm] if norm != "auto" else ("min-max" if METHODS[method][1] == "score" else None)
    params = {"k": K} if method == "rrf" else {"weights": list(weights)} if weights else {}
    theirs = ranx.fuse([ranx.Run.from_dict({q: dict(r) for q, r in run.items()}) for run in (A, B)],
                       norm=ranx_norm, method=METHODS[method][0], params=params).to_dict()
    assert ours["q3"] == []  # asked, ranked by no input
    for qid in ("q1", "q2"):
        expected = sorted(theirs[qid].items(), key=lambda pair: (-pair[1], pair[0]))  # declared: score desc, id asc
        assert [doc for doc, _ in ours[qid]] == [doc for doc, _ in expected]
        assert ours[qid] == order_ranking(theirs[qid].items())  # ranx's scores, written as every run is
    if method == "rrf":  # and RRF computed by hand gives the same order
        assert [doc for doc, _ in ours["q1"]] == [doc for doc, _ in rrf_by_hand([[d for d, _ in A["q1"]],
                                                                                 [d for d, _ in B["q1"]]])]


def test_input_ties_reach_ranx_in_trec_eval_order_and_output_ties_in_doc_id_order():
    """A foreign run with tied scores is fused in the order it is scored in (trec_eval's:
    doc id descending among ties), and RRF's own ties come out by doc id ascending."""
    from statbench.data.runfile import order_as_trec_eval
    from statbench.models.fusion.engine import FusionSettings, fuse_rankings

    tied = {"q": order_as_trec_eval([("a", 1.0), ("b", 1.0), ("c", 1.0)])}  # scored as c, b, a
    assert [d for d, _ in tied["q"]] == ["c", "b", "a"]
    mirror = {"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]}
    fused = fuse_rankings([tied, mirror], ["q"], FusionSettings(), depth=None)["q"]
    by_hand = rrf_by_hand([["c", "b", "a"], ["a", "b", "c"]])  # a and c tie exactly, b too
    assert [d for d, _ in fused] == ["a", "c", "b"] == [d for d, _ in by_hand]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 63) and fused[1][1] < fused[0][1]  # tie lowered, not reordered


def test_settings_are_refused_with_one_line():
    from statbench.models.fusion.engine import FusionError, FusionSettings

    with pytest.raises(FusionError, match="needs one weight per run: 2 runs, 1 weight"):
        FusionSettings(method="wsum", weights=(1.0,)).checked(2)
    with pytest.raises(FusionError, match="only read by wmnz, wsum, not by rrf"):
        FusionSettings(weights=(1.0, 1.0)).checked(2)
    with pytest.raises(FusionError, match="at least two runs"):
        FusionSettings().checked(1)


# --- statbench fuse ----------------------------------------------------------------------------------

def test_fuse_writes_an_ordinary_output_set_with_hand_checked_rrf(rotate, stard, tmp_path, monkeypatch):
    first = run_model(stard, tmp_path / "r0", "rotate", "offset=0")
    second = run_model(stard, tmp_path / "r1", "rotate", "offset=1")
    out = tmp_path / "fused"
    args = ["fuse", first, second / "run.trec", "--task", "stard", "--method", "rrf", "--data-dir", stard,
            "--output", out]
    result = invoke(args, monkeypatch)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["qrels.trec", "results.json", "run.log", "run.trec"]
    lines = [line.split() for line in (out / "run.trec").read_text().splitlines()]
    q0 = [(cols[2], float(cols[4])) for cols in lines if cols[0] == "0"]
    by_hand = rrf_by_hand([rotated(0), rotated(1)])  # B, C, A, D, E, F
    assert [d for d, _ in q0] == [d for d, _ in by_hand] == [rotated(0)[i] for i in (1, 2, 0, 3, 4, 5)]
    assert [s for _, s in q0] == pytest.approx([s for _, s in by_hand], rel=1e-6)
    results = json.loads((out / "results.json").read_text())
    assert results["model"]["family"] == "fusion" and results["model"]["name"] == "fusion"
    # an output folder is named by its model, a bare run file by its path
    assert results["model"]["description"] == f"rrf (k=60) of rotate, {second / 'run.trec'}"
    components = results["components"]
    first_results = json.loads((first / "results.json").read_text())
    assert components[0] == {"source": str(first), "run_sha256": first_results["run_file"]["sha256"],
                             "command": first_results["command"], "model": "rotate"}
    assert components[1]["command"] is None and components[1]["model"] is None  # a bare run file
    assert [s["name"] for s in results["splits"]] == [s["name"] for s in first_results["splits"]]  # fold by fold
    assert results["command"].startswith("statbench fuse ")
    # scored as any run: evaluate the written run and get the same figures
    evaluated = invoke(["evaluate", out / "run.trec", "--task", "stard", "--data-dir", stard, "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.output)["aggregate"] == results["aggregate"]
    # on the board: a row of family fusion, its inputs listed with their run sha256
    site = tmp_path / "site"
    built = invoke(["leaderboard", "build", "--results", tmp_path, "--out", site])
    assert built.exit_code == 0, built.output
    page = next(site.glob("task-stard*.html")).read_text("utf-8")
    assert page.count('data-family="fusion"') == 1 and '<td class="family">fusion</td>' in page
    assert "fused runs" in page and first_results["run_file"]["sha256"][:12] in page


def test_fuse_refuses_mixed_data_a_missing_input_and_another_task(rotate, stard, tmp_path):
    first = run_model(stard, tmp_path / "r0", "rotate", "offset=0")
    other = grid_fixtures.write_stard(tmp_path / "stard-edited")
    corpus = (other / "corpus.jsonl").read_text(encoding="utf-8").replace("建筑活动", "建筑工程活动", 1)
    (other / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    second = run_model(other, tmp_path / "r1", "rotate", "offset=1")
    base = ["--task", "stard", "--data-dir", stard, "--output", tmp_path / "fused"]

    mixed = invoke(["fuse", first, second, *base])
    assert mixed.exit_code == 2
    assert len(mixed.output.strip().splitlines()) == 1
    assert f"Error: {second}: scored on other data of task stard" in mixed.output
    missing = invoke(["fuse", first, tmp_path / "nowhere", *base])
    assert missing.exit_code == 2 and missing.output.strip() == f"Error: {tmp_path / 'nowhere'}: no such run file or output folder"
    wrong = invoke(["fuse", first, second, "--task", "bsard", "--output", tmp_path / "fused"])
    assert wrong.exit_code == 2 and wrong.output.strip() == f"Error: {first}: results of task 'stard', not 'bsard'"
    assert not (tmp_path / "fused").exists()


def test_fuse_refuses_a_run_whose_results_do_not_match_and_another_protocol(rotate, stard, tmp_path):
    first = run_model(stard, tmp_path / "r0", "rotate", "offset=0")
    dev = run_model(stard, tmp_path / "dev", "rotate", "offset=1", protocol="official")
    base = ["--task", "stard", "--data-dir", stard, "--output", tmp_path / "fused"]
    result = invoke(["fuse", first, dev, *base])
    assert result.exit_code == 2 and "a run of protocol 'official', not '5-fold'" in result.output
    tampered = run_model(stard, tmp_path / "r2", "rotate", "offset=2")
    (tampered / "run.trec").write_text((first / "run.trec").read_text())
    result = invoke(["fuse", first, tampered, *base])
    assert result.exit_code == 2 and "the run and its results do not belong together" in result.output
    assert len(result.output.strip().splitlines()) == 1


# --- the fusion retriever ------------------------------------------------------------------------------

def test_fusion_retriever_in_run_fuses_fold_by_fold_reusing_component_runs(rotate, stard, tmp_path, monkeypatch):
    first = run_model(stard, tmp_path / "r0", "rotate", "offset=0")
    second = run_model(stard, tmp_path / "r1", "rotate", "offset=1")
    fused = run_model(stard, tmp_path / "fz", "fusion", "runs=rotate,rotate[offset=1]", "method=rrf")
    results = json.loads((fused / "results.json").read_text())
    assert results["model"]["family"] == "fusion"
    assert results["model"]["description"] == "rrf (k=60) of rotate, rotate[offset=1]"
    assert len(results["splits"]) == 5
    log = (fused / "run.log").read_text()
    assert log.count("reusing cached run") == 10  # each component's five folds, as `statbench run` cached them
    by_fuse = invoke(["fuse", first, second, "--task", "stard", "--data-dir", stard, "--output", tmp_path / "f2"],
                     monkeypatch)
    assert by_fuse.exit_code == 0, by_fuse.output
    # the retriever and the command give the same run, byte for byte, and the same figures
    assert (fused / "run.trec").read_bytes() == (tmp_path / "f2" / "run.trec").read_bytes()
    assert json.loads((tmp_path / "f2" / "results.json").read_text())["aggregate"] == results["aggregate"]


def test_fusion_retriever_refuses_bad_runs_before_any_work(stard, tmp_path):
    for runs, message in (("bm25", "give two or more models"), ("bm25,nosuch", "nosuch"),
                          ("bm25,bm25", "lists 'bm25' twice"), ("bm25[k1=nan],tfidf", "not a finite number")):
        result = invoke(["run", "--task", "stard", "--model", "fusion", "--param", f"runs={runs}",
                         "--data-dir", stard, "--output", tmp_path / "x", "--no-progress"])
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1 and message in result.output
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_wsum_weights_are_tuned_by_the_grid_on_dev_only(tmp_path):
    data, env = grid_fixtures.world(tmp_path)
    candidates = ["0,1", "1,0"]  # min-max wsum: only offset 1's order, only offset 0's order
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(f"""
        tasks: [{{name: stard, data_dir: {data}}}]
        models:
          - label: fz
            model: fusion
            params: {{runs: "rotate,rotate[offset=1]", method: wsum, weights: {json.dumps(candidates)}}}
            tune: {{on: official, measure: MRR@3}}
    """))
    result = grid_fixtures.grid(path, "--output", tmp_path / "out", "--workers", 1, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    record = json.loads((tmp_path / "out" / "tuning" / "stard--fz.json").read_text())
    scores = [c["score"] for c in record["candidates"]]
    assert scores == pytest.approx([mrr(1, DEV), mrr(0, DEV)])  # each candidate scored on the dev queries only
    assert record["best"]["params"]["weights"] == "1,0"
    for candidate in record["candidates"]:
        searched = json.loads((Path(candidate["output"]) / "results.json").read_text())
        assert [s["name"] for s in searched["splits"]] == ["dev"]
    tuned = json.loads((Path(record["tuned_cell"]["output"]) / "results.json").read_text())
    assert "--param weights=1,0" in tuned["command"] and len(tuned["splits"]) == 5
    assert tuned["model"]["family"] == "fusion"


LEARNER = """
from statbench import hookimpl
from statbench.api import Param, Retriever


class Learner(Retriever):
    name = "learner"
    description = "ranks the documents relevant to its training queries first (tests)"
    trainable = True
    default_params = {"boost": Param(1.0, min=0.0, description="score added per training judgement")}

    def train(self, queries, qrels, corpus, ctx):
        self.counts = {}
        for judged in qrels.values():
            for doc in judged:
                self.counts[doc] = self.counts.get(doc, 0) + 1

    def index(self, corpus, ctx):
        self.ids = sorted(d.id for d in corpus)

    def search(self, queries, k, ctx):
        return {q.id: [(d, self.params["boost"] * self.counts.get(d, 0) - i / 100) for i, d in enumerate(self.ids)]
                for q in queries}


@hookimpl
def register_retrievers(register):
    register(Learner)
"""


def test_a_learning_component_is_trained_per_fold_as_its_own_run_trains_it(fake_distributions, stard, tmp_path,
                                                                             monkeypatch):
    fake_distributions("sbgrid-rotate", "sbgrid_rotate", textwrap.dedent(ROTATE), entry_name="rotate")
    fake_distributions("sb-learner", "sb_learner", textwrap.dedent(LEARNER), entry_name="learner")
    fused = run_model(stard, tmp_path / "fz", "fusion", "runs=learner,rotate[offset=1]")
    results = json.loads((fused / "results.json").read_text())
    assert results["model"]["trained"] is True  # it learns, as its learning component does
    # each fold's learner run is the one `statbench run --model learner` reads back from the cache
    learner = run_model(stard, tmp_path / "learner", "learner")
    assert json.loads((learner / "results.json").read_text())["cache"] == {f"fold-{i}": "hit" for i in range(1, 6)}
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh-cache"))  # and what an ordinary run computes
    fresh = run_model(stard, tmp_path / "learner-fresh", "learner")
    assert json.loads((fresh / "results.json").read_text())["cache"] == {f"fold-{i}": "miss" for i in range(1, 6)}
    assert (fresh / "run.trec").read_bytes() == (learner / "run.trec").read_bytes()
    rotate = run_model(stard, tmp_path / "r1", "rotate", "offset=1")
    by_fuse = invoke(["fuse", learner, rotate, "--task", "stard", "--data-dir", stard, "--output", tmp_path / "f2"],
                     monkeypatch)
    assert by_fuse.exit_code == 0, by_fuse.output
    assert (fused / "run.trec").read_bytes() == (tmp_path / "f2" / "run.trec").read_bytes()
