"""What a board says was checked of each row (issue 34): the three levels in words, the model
card shown as declared, rows whose card declares seen test queries out of the ranking, and
``build --verify --strict`` failing on what ``leaderboard check`` fails."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from fixture_data import run_stard_outputs, submitted_repository

from statbench.commands.cli import cli
from statbench.leaderboard.render.provenance import reproduce_command, reproduce_line, source_words
from statbench.leaderboard.repo.source import DistSource, SourceRecord
from statbench.leaderboard.sample import make_results
from statbench.leaderboard.verify.levels import REPRODUCED, RESCORED, SELF_REPORTED, level_of
from statbench.results.record import Results


def verification(status, reason=None):
    return SimpleNamespace(status=status, reason=reason, verified_on="2026-11-28", statbench_version="0.1.0",
                           checked=("figures", "data facts"))


def verdict(status, title):
    return SimpleNamespace(status=status, title=title)


@pytest.mark.parametrize("found, reproduction, level", [
    (None, None, SELF_REPORTED),
    (None, verdict("reproduced", "re-run: the same run file"), SELF_REPORTED),  # nothing re-scored by this build
    (verification("unverifiable", "no run file"), verdict("reproduced", "x"), SELF_REPORTED),
    (verification("verified"), None, RESCORED),
    (verification("verified"), verdict("not reproduced", "query 3: R@5 1.0 vs 0.5"), RESCORED),
    (verification("verified"), verdict("not attempted", "needs a GPU"), RESCORED),
    (verification("verified"), verdict("reproduced", "re-run: the same run file"), REPRODUCED),
])
def test_a_row_is_never_shown_above_what_was_done(found, reproduction, level):
    assert level_of(found, reproduction).name == level


def test_each_level_says_what_it_rests_on():
    assert level_of(verification("unverifiable", "no run file"), None).title == "not re-scored: no run file"
    rescored = level_of(verification("verified"), verdict("not reproduced", "query 3 differs")).title
    assert rescored.startswith("re-scored from its run file on 2026-11-28 by statbench 0.1.0: every figure agrees "
                               "(figures, data facts)")
    assert rescored.endswith("; not reproduced: query 3 differs")
    assert level_of(None, None).title.startswith("this site was built without --verify")


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return run_stard_outputs(tmp_path_factory.mktemp("levels"), ([], ["--param", "k1=0.9"]))


@pytest.fixture
def repo(made, tmp_path) -> Path:
    """A results repository: bm25 at its defaults (no test query seen) and bm25 k1=0.9,
    whose card declares that test queries were seen."""
    return submitted_repository(tmp_path / "repo", made)


def build(repo: Path, made: Path, out: Path, *extra):
    return CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(repo / "results"), "--out", str(out),
                                    *extra, "--data-dir", f"stard={made / 'stard'}"])


def page_data(site: Path) -> dict:
    html = (site / "task-stard.html").read_text("utf-8")
    blob = re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(blob)


def test_the_board_shows_levels_cards_and_keeps_seen_test_queries_out_of_the_ranking(repo, made, tmp_path):
    site = tmp_path / "site"
    result = build(repo, made, site, "--verify")
    assert result.exit_code == 0, result.output
    html = (site / "task-stard.html").read_text("utf-8")
    data = page_data(site)
    rows = {row["params"]: row for row in data["rows"].values()}
    assert rows[""]["lvl"][0] == RESCORED and rows["k1=0.9"]["lvl"][0] == RESCORED
    assert rows["k1=0.9"]["seen"] is True and rows[""]["seen"] is False
    assert rows["k1=0.9"]["trained"] == "test queries seen" and rows[""]["trained"] == "zero-shot"
    # the ranked row first whatever the figures; the seen one after it
    assert [data["rows"][key]["params"] for key in data["order"]] == ["", "k1=0.9"]
    # the card, every field, as declared
    assert "declared by the submitter, not checked" in html
    for shown in ("<dt>authors</dt><dd>Ada Lab</dd>", "<dt>licence</dt><dd>MIT</dd>",
                  "<dt>training data</dt><dd>none</dd>", "<dt>weights</dt><dd>local (not on a hub)</dd>",
                  "<dt>test queries seen</dt><dd>yes</dd>", "<dt>test queries seen</dt><dd>no</dd>"):
        assert shown in html
    # the legend says what each level checked, and what none did
    assert "re-run by `statbench leaderboard reproduce`" in html and "nothing re-computed" in html
    assert "shown as declared, not checked" in html
    assert 'name="seen"' in html  # the switch that shows them
    index = (site / "index.html").read_text("utf-8")
    best = re.search(r'<td>bm25[^<]*: <span class="num">', index)
    assert best is not None and "k1=0.9" not in best.group(0)


def test_without_verify_every_row_is_self_reported(repo, made, tmp_path):
    result = build(repo, made, tmp_path / "site")
    assert result.exit_code == 0, result.output
    assert {row["lvl"][0] for row in page_data(tmp_path / "site")["rows"].values()} == {SELF_REPORTED}


def test_a_card_that_does_not_read_leaves_its_row_off(repo, made, tmp_path):
    """Its declared training (test queries seen or not) is unknown: the row is not ranked as
    zero-shot (tests/leaderboard/test_leaderboard_repository_submissions.py for the class)."""
    card = next(repo.rglob("model_card.json"))
    card.write_text(card.read_text("utf-8").replace('"MIT"', '""'), encoding="utf-8")
    result = build(repo, made, tmp_path / "site", "--verify", "--allow-unverified")
    assert f"left off {card.parent / 'results.json'}: not a submission 'leaderboard check' accepts: {card}: " \
           "licence: '' should be non-empty" in result.output
    assert len(page_data(tmp_path / "site")["rows"]) == 1


def test_strict_fails_on_a_results_file_skipped_as_inconsistent(made, tmp_path):
    results = Path(shutil.copytree(made / "statbench-output", tmp_path / "results"))
    path = results / "stard" / "bm25,k1=0.9" / "results.json"
    obj = json.loads(path.read_text("utf-8"))
    label = next(iter(obj["aggregate"]))
    obj["aggregate"][label]["mean"] = 0.0 if obj["aggregate"][label]["mean"] else 0.5  # not the mean of its splits
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    args = ["leaderboard", "build", "--results", str(results), "--out", str(tmp_path / "site"), "--verify",
            "--data-dir", f"stard={made / 'stard'}"]
    plain = CliRunner().invoke(cli, args)
    assert plain.exit_code == 0, plain.output
    assert f"skipped {path}" in plain.output
    strict = CliRunner().invoke(cli, [*args, "--strict"])
    assert strict.exit_code == 2
    assert "error: 1 results file(s) skipped as broken or inconsistent (--strict)" in strict.output


def test_the_reproduce_line_follows_the_recorded_source():
    scores = {f"q{i}": {"R@5": 0.5, "R@10": 0.5, "R@100": 0.5, "nDCG@10": 0.5} for i in range(4)}
    results = Results.from_json(make_results(scores, command="statbench run --task toy --model bm25 --data-dir d"))
    third = results.model.plugin.distribution
    command = reproduce_command(results)
    index = SourceRecord("0.1.0", (DistSource(third, "1.0", "index"),))
    assert reproduce_line(results, index) == f"pip install {third}==1.0 && {command}"
    assert source_words(results, index) == ""
    wheel = SourceRecord("0.1.0", (DistSource(third, "1.0", "wheel", file=f"{third}-1.0-py3-none-any.whl",
                                              sha256="0" * 64),))
    assert reproduce_line(results, wheel) == f"pip install ./{third}-1.0-py3-none-any.whl && {command}"
    assert source_words(results, wheel) == f"the wheel {third}-1.0-py3-none-any.whl stored in its submission folder"
    git = SourceRecord("0.1.0", (DistSource(third, "1.0", "git", url="https://example.org/x.git", commit="a" * 40),))
    assert reproduce_line(results, git) == f"pip install git+https://example.org/x.git@{'a' * 40} && {command}"
    none = SourceRecord("0.1.0", (DistSource(third, "1.0", "none", reason="a local folder with uncommitted changes"),))
    assert reproduce_line(results, none) == command  # nothing a stranger could install
    assert source_words(results, none) == f"source not published: {third} 1.0: a local folder with uncommitted changes"


def test_an_export_leaves_off_a_repository_row_check_refuses(repo, made, tmp_path):
    from statbench.leaderboard.export.paper import build_export

    card = next(p for p in repo.rglob("model_card.json") if "k1" in str(p))
    card.unlink()  # the row that declared seen test queries, now without its card
    export = build_export(repo / "results", "stard")
    labels = [row.label for section in export.table.sections for row in section.rows]
    assert len(labels) == 1 and "k1" not in labels[0]
    assert any(note.startswith("left off ") and "not a submission 'leaderboard check' accepts" in note
               for note in export.notes)
