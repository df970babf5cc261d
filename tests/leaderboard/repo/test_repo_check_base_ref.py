"""``leaderboard check --base`` and ``leaderboard reproduce --since`` name a git ref; one that
starts with ``-`` would reach git as an option (``git diff --output=FILE`` writes a file
wherever it says): it is refused in one line before git runs."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.mark.parametrize("command", ["check", "reproduce"])
@pytest.mark.parametrize("ref", ["--output=written-by-git", "-p", "main\n--output=x"])
def test_a_ref_that_git_would_read_as_an_option_is_refused(tmp_path, monkeypatch, command, ref):
    repo = tmp_path / "r"
    made = CliRunner().invoke(cli, ["leaderboard", "init-repo", str(repo)])
    assert made.exit_code == 0, made.output
    monkeypatch.chdir(tmp_path)
    option = "--base" if command == "check" else "--since"
    result = CliRunner().invoke(cli, ["leaderboard", command, str(repo), f"{option}={ref}"])
    assert result.exit_code == 2, result.output
    assert f"{ref!r}: not a git ref to compare with (a branch, tag or commit, e.g. origin/main)" in result.output
    assert not list(tmp_path.rglob("written-by-git*"))
