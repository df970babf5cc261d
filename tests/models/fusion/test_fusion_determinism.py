"""Fusion is deterministic (issue 33 §5): every method offered gives the same fused run, byte
for byte, fuse after fuse and process after process (Python's string hashing differs per
process); ranx's condorcet, and borda normalisation before a rank-based method, whose orders
follow that hashing, are refused in one line. No method offered draws random numbers (ranx's
fusion code holds no random state), so there is no seed to record."""

from __future__ import annotations

import json
import textwrap

import grid_fixtures
import pytest
from click.testing import CliRunner
from grid_fixtures import ROTATE

from statbench.commands.cli import cli
from statbench.registry import plugins

pytest.importorskip("ranx")

# the fusion tests run on one xdist worker: numba compiles ranx's fusion code once per process
# (seconds per method), which a second worker would pay again
pytestmark = pytest.mark.xdist_group("ranx")


def invoke(args):
    plugins.reset_registry()
    return CliRunner().invoke(cli, list(map(str, args)))


def test_every_method_offered_by_the_command_and_the_retriever_is_one_list():
    from statbench.models.fusion.cli import fuse
    from statbench.models.fusion.engine import AUTO, METHODS, NORMS, REFUSED
    from statbench.models.fusion.retriever import FusionRetriever

    options = {option.name: option for option in fuse.params}
    assert f"ranx fusion method: {', '.join(METHODS)} (condorcet" in options["method"].help
    assert tuple(options["norm"].type.choices) == (AUTO, *NORMS)
    assert FusionRetriever.default_params["method"].choices == tuple(METHODS)
    assert set(REFUSED) == {"condorcet"} and not set(REFUSED) & set(METHODS)


def test_condorcet_is_refused_in_one_line_by_the_engine_the_command_and_the_retriever(tmp_path):
    from statbench.models.fusion.engine import FusionError, FusionSettings

    with pytest.raises(FusionError, match="condorcet: .*changes with every process.*not offered"):
        FusionSettings(method="condorcet").checked(2)
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("q1 Q0 d1 1 2.0 a\n")
    b.write_text("q1 Q0 d2 1 2.0 b\n")
    result = invoke(["fuse", a, b, "--task", "stard", "--method", "condorcet", "--output", tmp_path / "out"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "Error: fusion method condorcet: " + __import__("statbench.models.fusion.engine", fromlist=["REFUSED"])
        .REFUSED["condorcet"]]
    result = invoke(["fuse", a, b, "--task", "stard", "--method", "nosuch", "--output", tmp_path / "out"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "fusion method 'nosuch': expected one of rrf, isr" in result.output
    stard = grid_fixtures.write_stard(tmp_path / "stard")
    result = invoke(["run", "--task", "stard", "--model", "fusion", "--param", "runs=bm25,tfidf",
                     "--param", "method=condorcet", "--data-dir", stard, "--output", tmp_path / "fz", "--no-progress"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "condorcet" in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "fz").exists()


def _inputs(prefix: str):
    """Two inputs full of what makes an order depend on the process: tied votes (opposite
    orders), documents only one input ranked, equal fused scores; every doc id prefixed."""
    docs = [f"{prefix}doc{i}" for i in range(12)]
    a = {"q1": [(d, 12.0 - i) for i, d in enumerate(docs[:9])], "q2": [(prefix + "x", 1.0), (prefix + "y", 0.5)]}
    b = {"q1": [(d, 12.0 - i) for i, d in enumerate(reversed(docs[3:]))],
         "q2": [(prefix + "y", 1.0), (prefix + "x", 0.5)]}
    return a, b


@pytest.mark.slow
def test_every_method_gives_the_same_fused_run_whatever_order_python_sets_iterate_in():
    """ranx builds some candidate lists from Python sets of doc ids, whose order follows the
    ids' string hashes (which differ per process). Renaming the documents (one prefix for
    all, which keeps their order) reshuffles those sets inside one process: the fused run,
    names restored, must not move. (Found so: borda normalisation before a rank-based
    method, now refused.) About 10 s on 2 CPUs: numba compiles ranx's kernel of each
    method once per process, which the other fusion tests then reuse."""
    from statbench.models.fusion.engine import METHODS, FusionError, FusionSettings, fuse_rankings

    for method, (_, reads) in METHODS.items():
        weights = (0.5, 0.5) if method in ("wsum", "wmnz") else ()
        for norm in ("auto", "borda"):
            settings = FusionSettings(method, norm, weights)
            if reads == "rank" and norm == "borda":
                with pytest.raises(FusionError, match="changes with every process"):
                    settings.checked(2)
                continue
            runs = []
            for prefix in ("", "a", "zq", "k7"):
                fused = fuse_rankings(list(_inputs(prefix)), ["q1", "q2", "q3"], settings, 100)
                runs.append({q: [(d[len(prefix):], s) for d, s in r] for q, r in fused.items()})
            assert runs[0]["q1"] and runs[0]["q3"] == []
            assert all(run == runs[0] for run in runs), (method, norm)


def test_the_same_fuse_twice_writes_the_same_run_file_for_every_method(fake_distributions, tmp_path):
    from statbench.models.fusion.engine import METHODS

    fake_distributions("sbgrid-rotate", "sbgrid_rotate", textwrap.dedent(ROTATE), entry_name="rotate")
    stard = grid_fixtures.write_stard(tmp_path / "stard")
    inputs = []
    for offset in (0, 3):
        out = tmp_path / f"r{offset}"
        result = invoke(["run", "--task", "stard", "--model", "rotate", "--param", f"offset={offset}",
                         "--data-dir", stard, "--output", out, "--no-progress"])
        assert result.exit_code == 0, result.output
        inputs.append(out)
    written = {}
    for method in METHODS:
        weights = ["--weights", "0.4,0.6"] if method in ("wsum", "wmnz") else []
        files = []
        for attempt in (1, 2):
            out = tmp_path / f"{method}-{attempt}"
            result = invoke(["fuse", *inputs, "--task", "stard", "--method", method, *weights, "--data-dir", stard,
                             "--output", out])
            assert result.exit_code == 0, result.output
            files.append((out / "run.trec").read_bytes())
            aggregate = json.loads((out / "results.json").read_text())["aggregate"]
            assert aggregate == written.setdefault(method, aggregate)  # the figures too
        assert files[0] == files[1] and files[0], method
