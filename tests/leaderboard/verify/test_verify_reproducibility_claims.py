"""What a results file says a reproduction needs (``model.needs_gpu``, ``model.tolerance``)
is a claim ``--verify`` checks against the installed model: a bm25 recorded as needing a GPU
would never be re-run by ``leaderboard reproduce`` (not attempted, which fails no pull
request), and one recorded with a tolerance would be reproduced by any run within it. Both
were verified before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import edit_results, run_stard_outputs

from statbench.commands.cli import cli


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return run_stard_outputs(tmp_path_factory.mktemp("reproducibility"), ([],))


def _build(made: Path, results: Path, out: Path):
    return CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(results), "--out", str(out), "--verify",
                                    "--strict", "--data-dir", f"stard={made / 'stard'}"])


@pytest.mark.parametrize("field, value, said", [
    ("needs_gpu", True, "needs_gpu=true recorded, but bm25 declares needs_gpu=false"),
    ("tolerance", 1.0, "tolerance 1.0 recorded, but bm25 declares none (deterministic)"),
])
def test_a_false_reproducibility_claim_is_refused(made, tmp_path, field, value, said):
    folder = tmp_path / "results" / "bm25"
    shutil.copytree(made / "statbench-output" / "stard" / "bm25", folder)
    edit_results(folder, lambda obj: obj["model"].__setitem__(field, value))
    result = _build(made, tmp_path / "results", tmp_path / "site")
    assert result.exit_code == 2, result.output
    assert f"does not describe this result: {said}" in result.output
    assert "0 verified, 0 unverifiable, 1 refused" in result.output


def test_the_honest_record_verifies(made, tmp_path):
    shutil.copytree(made / "statbench-output" / "stard" / "bm25", tmp_path / "results" / "bm25")
    result = _build(made, tmp_path / "results", tmp_path / "site")
    assert result.exit_code == 0 and "1 verified, 0 unverifiable, 0 refused" in result.output, result.output


def test_a_record_older_than_the_fields_says_nothing_of_them(made, tmp_path):
    folder = tmp_path / "results" / "bm25"
    shutil.copytree(made / "statbench-output" / "stard" / "bm25", folder)
    edit_results(folder, lambda obj: obj["model"].pop("needs_gpu"))
    result = _build(made, tmp_path / "results", tmp_path / "site")
    assert result.exit_code == 0 and "1 verified" in result.output, result.output
