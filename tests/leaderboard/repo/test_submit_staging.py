"""`statbench submit` writes each submission folder in one step under its lock (issue 33 §3):
a submit killed before its folder is in place leaves no half folder, and what it left
beside the folder is reclaimed by the next submit (a live submit's never); two submits of one
configuration at once end with one submission and one line from the one that waited."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import empty_results_repository, run_stard_outputs

from statbench.commands.cli import cli
from statbench.leaderboard.repo.submission import read_submission

CARD_FLAGS = ["--local", "--training-data", "none", "--no-test-queries-seen", "--hardware", "2 CPU cores",
              "--licence", "MIT", "--author", "Ada Lab"]
DEFAULT, TUNED = "bm25", "bm25,k1=0.9"


@pytest.fixture(scope="module")
def built_outputs(tmp_path_factory) -> Path:
    root = run_stard_outputs(tmp_path_factory.mktemp("outputs"), ([], ["--param", "k1=0.9"]))
    return root / "statbench-output" / "stard"


@pytest.fixture
def outputs(built_outputs, tmp_path) -> Path:
    return Path(shutil.copytree(built_outputs, tmp_path / "outputs"))


@pytest.fixture
def repo(tmp_path) -> Path:
    return empty_results_repository(tmp_path)


def label_dir(repo: Path) -> Path:
    return repo / "results" / "stard" / "bm25"


#: ``statbench submit`` whose rename of a complete staging folder into place waits while the
#: file ``argv[1]`` exists (created when it gets there): a test kills it there, or lets it go on
_PAUSED_SUBMIT = """
import os, sys, time
from pathlib import Path

signal, rename = Path(sys.argv[1]), os.rename

def paused(src, dst, *args, **kwargs):
    if ".staging-" in os.fspath(src):
        signal.touch()
        deadline = time.monotonic() + 120
        while signal.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return rename(src, dst, *args, **kwargs)

os.rename = paused
from statbench.commands.cli import main
sys.argv = ["statbench", *sys.argv[2:]]
main()
"""


def start_submit(args, tmp_path: Path, name: str, pause: Path | None = None) -> tuple[subprocess.Popen, Path, Path]:
    """``statbench submit ARGS`` in a child process (its stdout and stderr to files),
    pausing with its staging folder complete when ``pause`` is given."""
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    command = ([sys.executable, "-c", _PAUSED_SUBMIT, str(pause)] if pause is not None
               else [sys.executable, "-m", "statbench.commands.cli"])
    with open(out, "w") as stdout, open(err, "w") as stderr:
        child = subprocess.Popen([*command, "submit", *map(str, args)], stdout=stdout, stderr=stderr)
    return child, out, err


def wait_for(condition, child: subprocess.Popen, err: Path, what: str) -> None:
    """Poll ``condition`` until it holds (bounded; the child must still be running)."""
    deadline = time.monotonic() + 120
    while not condition():
        if child.poll() is not None:
            pytest.fail(f"the submit ended before {what}: {err.read_text()}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"no {what} within 120 s")
        time.sleep(0.02)


def test_a_killed_submit_leaves_no_folder_and_its_leftovers_are_reclaimed_by_the_next(outputs, repo, tmp_path):
    pause = tmp_path / "paused"
    child, _, err = start_submit([outputs / DEFAULT, "--to", repo, *CARD_FLAGS], tmp_path, "killed", pause)
    wait_for(pause.exists, child, err, "its staging folder was complete")
    staged = [p.name for p in label_dir(repo).iterdir()]
    assert len(staged) == 1 and staged[0].startswith(f".{DEFAULT}.staging-{child.pid}-")
    child.kill()
    child.wait()
    pause.unlink()
    assert [p.name for p in label_dir(repo).iterdir()] == staged  # no half folder at the target, the leftover
    result = CliRunner().invoke(cli, ["submit", str(outputs / DEFAULT), str(outputs / TUNED), "--to", str(repo),
                                      *CARD_FLAGS])
    assert result.exit_code == 0 and "2 submission(s) added" in result.output, result.output
    assert sorted(p.name for p in label_dir(repo).iterdir()) == [DEFAULT, TUNED]  # the leftover reclaimed
    read_submission(label_dir(repo) / DEFAULT)


def test_leftovers_beside_other_configurations_are_reclaimed_but_a_live_submits_are_not(outputs, repo, tmp_path):
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        label_dir(repo).mkdir(parents=True)
        dead = label_dir(repo) / f".{TUNED}.staging-{finished.pid}-0123456789ab"
        alive = label_dir(repo) / f".other.staging-{live.pid}-0123456789ab"
        for folder in (dead, alive):
            folder.mkdir()
            (folder / "results.json").write_text("{}")
        result = CliRunner().invoke(cli, ["submit", str(outputs / DEFAULT), "--to", str(repo), *CARD_FLAGS])
        assert result.exit_code == 0, result.output
        assert sorted(p.name for p in label_dir(repo).iterdir()) == sorted([DEFAULT, alive.name])
    finally:
        live.kill()
        live.wait()


@pytest.mark.parametrize("same", [True, False])
def test_two_submits_of_one_configuration_at_once_end_with_one_submission(outputs, repo, tmp_path, same):
    pause = tmp_path / "paused"
    first, first_out, first_err = start_submit([outputs / DEFAULT, "--to", repo, *CARD_FLAGS], tmp_path, "first",
                                               pause)
    wait_for(pause.exists, first, first_err, "its staging folder was complete")
    flags = CARD_FLAGS if same else [*CARD_FLAGS, "--author", "Bo Lab"]
    second, second_out, second_err = start_submit([outputs / DEFAULT, "--to", repo, *flags], tmp_path, "second")
    wait_for(lambda: "waiting" in second_err.read_text(), second, second_err, "it waited")
    pause.unlink()  # the first goes on
    assert first.wait(120) == 0, first_err.read_text()
    code = second.wait(120)
    assert "added: results/stard/bm25/bm25 " in first_out.read_text()
    waited = f"{label_dir(repo) / DEFAULT}: another submit is writing it; waiting up to 600 s for it to finish"
    if same:
        assert code == 0 and "unchanged: results/stard/bm25/bm25 " in second_out.read_text()
        assert second_err.read_text().splitlines() == [waited]
    else:
        assert code == 2 and second_out.read_text() == ""
        assert second_err.read_text().splitlines() == [
            waited, f"Error: {label_dir(repo) / DEFAULT}: already holds another submission of this configuration; a "
                    "submission adds a folder and never replaces one (remove it first if it is yours)"]
    assert [p.name for p in label_dir(repo).iterdir()] == [DEFAULT]
    assert read_submission(label_dir(repo) / DEFAULT).model_card["authors"] == ["Ada Lab"]


def test_a_folder_that_appears_while_a_submit_writes_is_never_replaced(outputs, repo, monkeypatch):
    """Another writer (not a submit: a git checkout) puts the folder there after the
    check: the rename refuses, nothing of it is replaced and no staging folder is left."""
    from statbench.data import atomic
    from statbench.leaderboard.repo import submit_runs

    real = atomic.staging_dir

    def staging_then_intruder(target):
        staging = real(target)
        Path(target).mkdir()
        (Path(target) / "results.json").write_text("theirs")
        return staging

    monkeypatch.setattr(submit_runs, "staging_dir", staging_then_intruder)  # where submit calls it
    result = CliRunner().invoke(cli, ["submit", str(outputs / DEFAULT), "--to", str(repo), *CARD_FLAGS])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"Error: {label_dir(repo) / DEFAULT}: appeared while this submission was written; nothing was replaced"]
    assert [p.name for p in label_dir(repo).iterdir()] == [DEFAULT]
    assert (label_dir(repo) / DEFAULT / "results.json").read_text() == "theirs"
