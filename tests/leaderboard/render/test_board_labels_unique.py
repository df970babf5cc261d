"""Two rows of one board are two configurations, so they never read alike: rows whose labels
would be the same text (a parameter recorded as the text "1" by one result and the number 1
by another; two pools of one name built differently) and whose distribution is the same were
given the same label, so a board or an export showed one configuration twice and ``--rows``
named both. They are told apart by a short digest of the row's key (the same on every machine)."""

from __future__ import annotations

from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.export.paper import _board_labels
from statbench.leaderboard.sample import make_results, write_result

MEASURES = ("R@5", "R@10", "R@100", "nDCG@10")


def _write(root, name: str, params: dict, figure: float) -> None:
    per_query = {f"q{i}": {m: figure + i / 100 for m in MEASURES} for i in range(4)}
    write_result(root / name, make_results(per_query, model="ext", params=params))


def test_rows_that_would_read_alike_get_distinct_labels(tmp_path):
    _write(tmp_path, "text", {"k": "1"}, 0.5)
    _write(tmp_path, "number", {"k": 1}, 0.6)
    _write(tmp_path, "other", {"k": 2}, 0.4)
    (rows,) = collect(tmp_path).boards.values()
    assert len(rows) == 3
    labels = _board_labels(rows)
    assert len(set(labels.values())) == 3, labels
    assert labels == _board_labels(list(reversed(rows)))  # not the order the files were read in
    assert sorted(labels.values())[0].startswith("ext (k=1)") and "ext (k=2)" in labels.values()
    result = CliRunner().invoke(cli, ["leaderboard", "export", str(tmp_path), "--board", "toy", "--format", "csv"])
    assert result.exit_code == 0, result.output
    names = [line.split(",")[1] for line in result.stdout.splitlines()[1:]]
    assert len(names) == 3 and len(set(names)) == 3
