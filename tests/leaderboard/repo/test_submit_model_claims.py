"""``submit`` refuses a record whose models say what the installed ones do not (their
family, their training, what a reproduction needs: ``needs_gpu``, ``tolerance``), as
``leaderboard check`` and ``build --verify`` refuse it, before a pull request is made of it.
Before, submit wrote the folder and only the repository's check refused it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import edit_results, run_stard_outputs

from statbench.commands.cli import cli
from statbench.leaderboard.repo.submission import write_repository_marker

CARD = ["--local", "--training-data", "none", "--hardware", "2 CPU cores", "--licence", "MIT",
        "--author", "Ada Lab", "--no-test-queries-seen"]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return run_stard_outputs(tmp_path_factory.mktemp("submit-claims"), ([],))


@pytest.mark.parametrize("field, value, said", [
    ("needs_gpu", True, "needs_gpu=true recorded, but bm25 declares needs_gpu=false"),
    ("tolerance", 0.5, "tolerance 0.5 recorded, but bm25 declares none (deterministic)"),
    ("family", "dense", "family 'dense' recorded, but bm25 is of family 'lexical'"),
])
def test_submit_refuses_a_model_claim_the_installed_model_does_not_make(made, tmp_path, field, value, said):
    output = tmp_path / "bm25"
    shutil.copytree(made / "statbench-output" / "stard" / "bm25", output)
    edit_results(output, lambda obj: obj["model"].__setitem__(field, value))
    repo = tmp_path / "repo"
    repo.mkdir()
    write_repository_marker(repo)
    result = CliRunner().invoke(cli, ["submit", str(output), "--to", str(repo), *CARD])
    assert result.exit_code == 2, result.output
    assert f"{output / 'results.json'}: {said}" in result.output
    assert not (repo / "results").exists()
