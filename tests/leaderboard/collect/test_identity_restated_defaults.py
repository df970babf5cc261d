"""Two results of one third-party model whose records each ran a parameter at *their* recorded
default, but at different values (the plugin changed a default between versions: k=1, then
k=2), are one row by the identity rule (parameters count where they differ from the recorded
defaults). The older one was then skipped as "superseded (same configuration, newer)": a
claim statbench did not check, and a configuration gone from the board with nothing said.
It is now a warning naming the parameter and both values; results whose recorded parameters
agree are superseded as before (a note)."""

from __future__ import annotations

from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.sample import make_results, write_result

MEASURES = ("R@5", "R@10", "R@100", "nDCG@10")


def _write(root, name: str, k, created: str, version: str, figure: float = 0.5):
    per_query = {f"q{i}": {m: figure for m in MEASURES} for i in range(4)}
    results = make_results(per_query, model="ext", params={"k": k}, created=created)
    results["model"]["defaults"] = {"k": k}
    results["model"]["plugin"] = {"name": "ext", "distribution": "ext-plugin", "version": version}
    write_result(root / name, results)


def test_one_row_of_two_different_recorded_values_is_warned_about(tmp_path):
    _write(tmp_path, "old", 1, "2024-05-01T12:00:00+00:00", "1.0", 0.5)
    _write(tmp_path, "new", 2, "2024-06-01T12:00:00+00:00", "2.0", 0.6)
    collected = collect(tmp_path)
    (rows,) = collected.boards.values()
    assert len(rows) == 1 and rows[0].results.model.params == {"k": 2}
    said = [p for p in collected.problems if "old" in p]
    assert len(said) == 1, collected.problems
    assert "k=1" in said[0] and "k=2" in said[0] and "same configuration, newer" not in said[0]
    assert not any("same configuration, newer" in n for n in collected.notes)


def test_a_newer_result_of_the_same_recorded_values_is_superseded_as_before(tmp_path):
    _write(tmp_path, "old", 1, "2024-05-01T12:00:00+00:00", "1.0", 0.5)
    _write(tmp_path, "new", 1, "2024-06-01T12:00:00+00:00", "1.1", 0.6)
    collected = collect(tmp_path)
    assert not collected.problems
    assert any("superseded by" in n and "same configuration, newer" in n for n in collected.notes)
