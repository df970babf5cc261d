"""``leaderboard export`` of a board with a row whose model card declares that test queries
were seen in training or tuning: the board leaves such a row out of the ranking (badged, after
the others), but the export ranked it with the runs (first, in bold as the best). It is now
in a section of its own after the runs, never bold or underlined, in the runs' float (LaTeX:
not the published figures' float)."""

from __future__ import annotations

import re

from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.leaderboard.repo.submission import card_parameters, card_text
from statbench.leaderboard.sample import write_sample
from statbench.results.record import Results, read_results


def _export(results, *args) -> str:
    result = CliRunner().invoke(cli, ["leaderboard", "export", str(results), "--board", "toy", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _declare_seen(folder) -> None:
    record = Results.from_json(read_results(folder / "results.json"))
    card = {"card_version": 1, "model": {"name": record.model.name, "version": "1"}, "source": "local",
            "parameters": card_parameters(record), "training_data": "the test queries", "test_queries_seen": True,
            "hardware": "machine-A", "licence": "MIT", "authors": ["someone"]}
    (folder / "model_card.json").write_text(card_text(card), encoding="utf-8")


def _rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| system")]


def test_a_row_that_saw_test_queries_is_not_ranked_in_an_export(tmp_path):
    results = tmp_path / "results"
    write_sample(results)
    before = _rows(_export(results, "--format", "markdown"))
    best = before[0].split("|")[1].strip()
    assert "**" in before[0]  # the best of the board, bold
    folder = next(p.parent for p in results.rglob("results.json")
                  if Results.from_json(read_results(p)).model.name == best.split(" ")[0])
    _declare_seen(folder)
    after = _rows(_export(results, "--format", "markdown"))
    seen = [line for line in after if "test queries seen" in line and "*" not in line.split("|")[1]]
    (row,) = [line for line in seen if line.split("|")[1].strip().startswith(best.split(" ")[0])]
    assert "**" not in row and "<u>" not in row  # never best or second
    heading = next(i for i, line in enumerate(after) if line.startswith("| *"))
    assert after.index(row) > heading  # after the runs, under a heading of its own
    assert "**" in after[0] and best.split(" ")[0] not in after[0].split("|")[1]  # the best of the others is bold
    latex = _export(results, "--format", "latex", "--measure", "R@10")
    assert "-published}" not in latex and len(re.findall(r"\\begin\{table\}", latex)) == 1
