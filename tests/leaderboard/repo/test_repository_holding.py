"""repository_holding with its memo (a build asks it for every row) and the verdict reader's
resolved folders: the same answers as asking each folder afresh, each marker looked at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from statbench.leaderboard.repo import submission
from statbench.leaderboard.repo.submission import REPOSITORY_MARKER, repository_holding
from statbench.leaderboard.reproduce.verdicts import VerdictReader


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    inner = repo / "results" / "task" / "label"
    outside = tmp_path / "loose" / "board"
    nested = inner / "nested-repo"
    for folder in (inner / "a", inner / "b", outside / "c", outside / "d", nested / "e"):
        folder.mkdir(parents=True)
    (repo / REPOSITORY_MARKER).write_text("{}")
    (nested / REPOSITORY_MARKER).write_text("{}")
    return {"repo": repo, "inner": inner, "outside": outside, "nested": nested, "root": tmp_path}


def test_memo_gives_the_answers_of_fresh_calls(tree):
    folders = [tree["inner"] / "a", tree["inner"] / "b", tree["outside"] / "c", tree["outside"] / "d",
               tree["nested"] / "e", tree["nested"], tree["repo"], tree["root"]]
    known: dict = {}
    for folder in folders + folders:
        assert repository_holding(folder, known) == repository_holding(folder)
    assert repository_holding(tree["inner"] / "a", known) == tree["repo"]
    assert repository_holding(tree["nested"] / "e", known) == tree["nested"]
    assert repository_holding(tree["outside"] / "c", known) is None
    # the markers' answers stay what they were (folder -> holds the marker)
    assert known[os.fspath(tree["repo"])] is True
    assert known[os.fspath(tree["inner"])] is False


def test_each_folder_is_looked_at_once(tree, monkeypatch):
    looked: list[str] = []
    real = submission._is_file

    def counting(path: str) -> bool:
        looked.append(path)
        return real(path)

    monkeypatch.setattr(submission, "_is_file", counting)
    known: dict = {}
    for name in ("a", "b"):
        assert repository_holding(tree["inner"] / name, known) == tree["repo"]
    for name in ("c", "d"):
        assert repository_holding(tree["outside"] / name, known) is None
    assert len(looked) == len(set(looked))
    # the second row of a folder's siblings looks at its own folder only
    assert [p for p in looked if os.path.dirname(os.path.dirname(p)) == os.fspath(tree["inner"])] == [
        os.path.join(tree["inner"], n, REPOSITORY_MARKER) for n in ("a", "b")]


def test_a_marker_that_is_a_folder_is_no_marker(tmp_path):
    (tmp_path / "x" / REPOSITORY_MARKER).mkdir(parents=True)
    assert repository_holding(tmp_path / "x" / "y", {}) is None
    assert repository_holding(tmp_path / "x" / "y") is None


def test_relative_folders_are_made_absolute(tree, monkeypatch):
    monkeypatch.chdir(tree["inner"])
    known: dict = {}
    assert repository_holding("a", known) == tree["repo"]
    assert repository_holding(Path("b") / ".." / "a", known) == tree["repo"]


def test_verdict_reader_resolves_folders_as_pathlib_does(tree):
    root = tree["root"]
    (root / "link-to-inner").symlink_to(tree["inner"], target_is_directory=True)
    (tree["outside"] / "link-to-a").symlink_to(tree["inner"] / "a", target_is_directory=True)
    reader = VerdictReader(notes=[])
    for folder in (tree["inner"] / "a", root / "link-to-inner" / "b", tree["outside"] / "link-to-a",
                   tree["outside"] / "missing", root / "link-to-inner" / "missing", Path("/")):
        for _ in range(2):  # the second time from the parents' memo
            assert reader._resolved(os.path.abspath(folder)) == os.fspath(folder.resolve())


def test_verdicts_follow_a_linked_submission_folder_to_its_repository(tree):
    """A results file reached through a link to a folder of a repository is that repository's
    (its verdicts are looked for there), a file elsewhere has none."""
    (tree["root"] / "elsewhere").mkdir()
    (tree["root"] / "elsewhere" / "sub").symlink_to(tree["inner"] / "a", target_is_directory=True)
    reader = VerdictReader(notes=[])
    real = reader._resolved(os.path.abspath(tree["root"] / "elsewhere" / "sub"))
    assert reader._root(real) == tree["repo"]
    assert reader._root(reader._resolved(os.fspath(tree["outside"] / "c"))) is None
    assert reader.all_of(tree["outside"] / "c" / "results.json") == ()


def test_verdict_reader_follows_a_link_before_a_parent_step_as_pathlib_does(tree, monkeypatch):
    """``link/..`` is the parent of the link's target, not the folder holding the link."""
    root = tree["root"]
    (root / "link-to-inner").symlink_to(tree["inner"], target_is_directory=True)
    reader = VerdictReader(notes=[])
    monkeypatch.chdir(root)
    for results in (root / "link-to-inner" / ".." / "label" / "a" / "results.json",
                    Path("link-to-inner") / ".." / "label" / "b" / "results.json",
                    root / "link-to-inner" / "a" / "results.json", Path("repo") / "results.json"):
        assert reader._real_folder(results) == os.fspath(results.parent.resolve())
    assert reader._real_folder(root / "link-to-inner" / ".." / "label" / "a" / "results.json") == os.fspath(
        tree["inner"] / "a")
