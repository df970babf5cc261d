"""A build of a results repository says nothing about the files the repository is meant to
hold (issue 38 §3): its marker, its folders other than ``results/``, and any file of a
submission folder but its results.json (model card, source record, reproduction verdicts);
a stray JSON file that is not results elsewhere is still noted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from statbench.leaderboard.collect.reading import collect, meant_for_repository
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_sample

NOT_RESULTS = "JSON file(s) that are not results skipped"


def _repository(root: Path) -> Path:
    """A results repository of the sample's seven submissions, each with what ``submit``
    and the checks write beside its results.json."""
    root.mkdir(parents=True)
    (root / "statbench-results.json").write_text('{"format": 1}\n')
    for results in write_sample(root / "staging"):
        folder = root / "results" / "toy" / results.parent.name / "default"
        folder.parent.mkdir(parents=True)
        shutil.move(results.parent, folder)
        (folder / "model_card.json").write_text(json.dumps({"model": {"name": "x"}, "task": "toy"}))
        (folder / "source.json").write_text(json.dumps({"kind": "wheel"}))
        (folder / "reproductions").mkdir()
        (folder / "reproductions" / "verdict-h100.json").write_text(json.dumps({"verdict": "reproduced"}))
    (root / "staging").rmdir()
    (root / "docs").mkdir()
    (root / "docs" / "schema.json").write_text(json.dumps({"type": "object"}))
    return root


def test_a_repositorys_build_says_nothing_of_its_own_files(tmp_path):
    repo = _repository(tmp_path / "repo")
    report = build_site(repo, tmp_path / "site")
    # the fake model cards and source records make no submission 'leaderboard check' accepts:
    # each row is left off in one line (tests/leaderboard/test_leaderboard_repository_submissions.py)
    assert report.rows == 0 and len(report.not_submissions) == 7
    said = report.notes + [line for line in report.problems if ": left off " not in line]
    assert not [line for line in said if NOT_RESULTS in line or "schema" in line], said


@pytest.mark.parametrize("below", ["results", "results/toy", "results/toy/bm25"])
def test_so_does_a_build_of_a_folder_inside_the_repository(tmp_path, below):
    repo = _repository(tmp_path / "repo")
    found = collect(repo / below)
    assert found.notes == [] and found.problems == [] and sum(map(len, found.boards.values())) >= 1


def test_only_the_repositorys_own_files_are_left_unread(tmp_path):
    repo = _repository(tmp_path / "repo")
    stray = repo / "results" / "toy" / "summary.json"  # not in a submission folder: not the layout's
    stray.write_text(json.dumps({"rows": 7}))
    found = sorted(str(p.relative_to(repo)) for p in meant_for_repository(repo, sorted(repo.rglob("*.json"))))
    assert "statbench-results.json" in found and "docs/schema.json" in found
    assert "results/toy/bm25/default/model_card.json" in found
    assert "results/toy/bm25/default/reproductions/verdict-h100.json" in found
    assert not any(name.endswith("/results.json") for name in found) and "results/toy/summary.json" not in found
    notes = collect(repo).notes
    assert notes == ["1 JSON file(s) that are not results skipped (results/toy/summary.json)"]


def test_outside_a_repository_a_non_results_file_is_still_noted(tmp_path):
    write_sample(tmp_path / "results")
    (tmp_path / "results" / "bm25" / "model_card.json").write_text(json.dumps({"model": {"name": "x"}}))
    assert meant_for_repository(tmp_path / "results", sorted((tmp_path / "results").rglob("*.json"))) == []
    assert collect(tmp_path / "results").notes == ["1 JSON file(s) that are not results skipped (bm25/model_card.json)"]
