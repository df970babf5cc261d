"""A board built from a results repository shows only its submissions, as ``leaderboard
check`` reads them (the run file aside: the verifier hashes it): a row whose folder lacks its
model card, whose card does not read, that holds a file no submission holds, or whose results
file is not in a submission folder at all, is left off in one line, and ``build --verify
--strict`` fails on it as ``check`` does. Before, a submission whose card declared test
queries seen was ranked as zero-shot, silently, once its card was deleted."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import run_stard_outputs, submitted_repository

from statbench.commands.cli import cli
from statbench.leaderboard.reproduce.verdicts import Verdict, now, submission_digest, this_environment, write_verdict


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return run_stard_outputs(tmp_path_factory.mktemp("submissions"), ([], ["--param", "k1=0.9"]))


@pytest.fixture
def repo(made, tmp_path) -> Path:
    """bm25 at its defaults, and bm25 k1=0.9 whose card declares that test queries were seen."""
    return submitted_repository(tmp_path / "repo", made)


def build(repo: Path, made: Path, out: Path, *extra):
    return CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(repo / "results"), "--out", str(out),
                                    "--verify", *extra, "--data-dir", f"stard={made / 'stard'}"])


def rows(site: Path) -> dict:
    html = (site / "task-stard.html").read_text("utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))
    return {row["params"]: row for row in data["rows"].values()}


SEEN = "results/stard/bm25/bm25,k1=0.9"


def _delete_card(folder: Path) -> str:
    (folder / "model_card.json").unlink()
    return f"{folder}: missing model_card.json"


def _empty_licence(folder: Path) -> str:
    card = folder / "model_card.json"
    card.write_text(card.read_text("utf-8").replace('"MIT"', '""'), encoding="utf-8")
    return f"{card}: licence: '' should be non-empty"


def _card_of_other_parameters(folder: Path) -> str:
    card = folder / "model_card.json"
    obj = json.loads(card.read_text("utf-8"))
    obj["parameters"]["model"] = {}
    card.write_text(json.dumps(obj), encoding="utf-8")
    return f"{card}: parameters: not the parameters results.json records"


def _extra_file(folder: Path) -> str:
    (folder / "notes.txt").write_text("hello", encoding="utf-8")
    return f"{folder}: unexpected 'notes.txt'"


def _card_a_link(folder: Path) -> str:
    card = folder / "model_card.json"
    kept = folder.parent / "card-elsewhere.json"
    shutil.move(card, kept)
    card.symlink_to(kept)
    return f"{card}: not a regular file"


@pytest.mark.parametrize("damage", [_delete_card, _empty_licence, _card_of_other_parameters, _extra_file,
                                    _card_a_link])
def test_a_folder_that_is_not_a_submission_is_left_off_and_fails_strict(repo, made, tmp_path, damage):
    folder = repo / SEEN
    said = damage(folder)
    result = build(repo, made, tmp_path / "site", "--strict")
    assert result.exit_code == 2, result.output
    assert (f"warning: stard: left off {folder / 'results.json'}: not a submission 'leaderboard check' accepts: "
            f"{said}") in result.output
    assert "error: 1 row(s) of a results repository left off: not a submission 'leaderboard check' accepts " \
           "(--strict)" in result.output
    # never ranked as a zero-shot row: the row is not on the board at all
    assert set(rows(tmp_path / "site")) == {""}
    # without --strict the board is still written, and says the same line
    plain = build(repo, made, tmp_path / "plain")
    assert plain.exit_code == 0 and said in plain.output


def test_a_results_file_outside_a_submission_folder_is_left_off(repo, made, tmp_path):
    folder = repo / SEEN
    stray = repo / "results" / "stard" / "bm25"
    for name in ("results.json", "run.trec.gz"):
        shutil.copy(folder / name, stray / name)
    shutil.rmtree(folder)
    result = build(repo, made, tmp_path / "site", "--strict", "--allow-unverified")
    assert result.exit_code == 2, result.output
    assert (f"left off {stray / 'results.json'}: not a submission 'leaderboard check' accepts: {stray / 'results.json'}"
            f": not in a submission folder (results/TASK/LABEL/CONFIG/results.json)") in result.output
    assert set(rows(tmp_path / "site")) == {""}


def test_the_honest_repository_builds_strict(repo, made, tmp_path):
    result = build(repo, made, tmp_path / "site", "--strict")
    assert result.exit_code == 0, result.output
    assert "left off" not in result.output and set(rows(tmp_path / "site")) == {"", "k1=0.9"}


def test_a_verdict_counts_only_for_the_files_it_was_reached_on_across_rebuilds(repo, made, tmp_path):
    """A rebuild into the same site (boards linked when their inputs are unchanged) drops a row
    to re-scored when its verdict is removed or its submission's files change."""
    folder = repo / "results" / "stard" / "bm25" / "bm25"
    env = this_environment()

    def record() -> Path:
        return write_verdict(repo, Verdict("reproduced", None, "results/stard/bm25/bm25", submission_digest(folder),
                                           env, env.digest(), now(), "run file byte-identical"))

    site = tmp_path / "site"
    verdict = record()
    assert build(repo, made, site).exit_code == 0 and rows(site)[""]["lvl"][0] == "reproduced"
    verdict.unlink()
    assert build(repo, made, site).exit_code == 0 and rows(site)[""]["lvl"][0] == "re-scored"
    record()
    card = folder / "model_card.json"
    card.write_text(card.read_text("utf-8").replace('"MIT"', '"Apache-2.0"'), encoding="utf-8")  # still valid
    assert build(repo, made, site).exit_code == 0 and rows(site)[""]["lvl"][0] == "re-scored"


def test_a_row_whose_card_declares_seen_test_queries_is_off_the_pareto_frontier(repo, made, tmp_path):
    """It is out of the ranking: it is not drawn among the rows that trade quality for cost
    (here the only other row, so no plot is left to draw)."""
    def pareto(site: Path):
        html = (site / "task-stard.html").read_text("utf-8")
        found = re.search(r'<section class="charts pareto" id="efficiency">(.*?)</section>', html, re.S)
        return found.group(1) if found else ""

    assert build(repo, made, tmp_path / "site").exit_code == 0
    assert "k1=0.9" not in pareto(tmp_path / "site")
    card = repo / SEEN / "model_card.json"  # the same row, declared unseen: drawn
    card.write_text(card.read_text("utf-8").replace('"test_queries_seen": true', '"test_queries_seen": false'),
                    encoding="utf-8")
    assert build(repo, made, tmp_path / "again").exit_code == 0
    assert "k1=0.9" in pareto(tmp_path / "again")
