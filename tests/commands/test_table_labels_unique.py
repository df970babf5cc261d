"""Default LaTeX labels of paper tables (``leaderboard export``, ``compare --format latex``):
always a label LaTeX takes as it is (letters, digits, ``- : .``), and two different tables
never share one: not two (task, model) pairs of ``compare`` whose names join alike
(``coliee`` + ``nocaptions-x`` vs ``coliee-nocaptions`` + ``x``), not a board's published
float (``BOARD-published``) and another board's table, not a cleaned name and a name spelt
like its cleaned form with the digest."""

from __future__ import annotations

import re

from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.commands.table_formats import label_for
from statbench.leaderboard.sample import make_results, write_result

_LABEL = re.compile(r"\\label\{([^}]*)\}")


def _compare_label(tmp_path, task: str, model_b: str) -> str:
    per_query = {f"q{i}": {"R@10": 0.1 * (i % 5), "MRR@10": 0.05 * i} for i in range(8)}
    better = {q: {m: v + 0.05 for m, v in s.items()} for q, s in per_query.items()}
    root = tmp_path / f"{len(list(tmp_path.iterdir()))}"
    a = write_result(root / "a", make_results(per_query, task=task, model="bm25", measures=("R@10", "MRR@10")))
    b = write_result(root / "b", make_results(better, task=task, model=model_b, measures=("R@10", "MRR@10")))
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--format", "latex"])
    assert result.exit_code == 0, result.output
    (label,) = _LABEL.findall(result.stdout)
    return label


def test_compare_labels_of_pairs_that_join_alike_differ(tmp_path):
    one = _compare_label(tmp_path, "coliee", "nocaptions-x")
    two = _compare_label(tmp_path, "coliee-nocaptions", "x")
    assert one != two
    assert _compare_label(tmp_path, "toy", "dense") == "tab:statbench-compare-toy-dense"  # plain names stay plain


def test_compare_label_of_a_task_name_with_other_characters_is_a_latex_label(tmp_path):
    for task in ("uk_stat", "toy+x"):
        label = _compare_label(tmp_path, task, "dense")
        assert re.fullmatch(r"[A-Za-z0-9:.-]+", label), label


def test_published_float_label_is_never_another_boards_label():
    # board "x" exported with --published has a second float "LABEL-published"
    assert label_for("tab:statbench", "x") + "-published" != label_for("tab:statbench", "x-published")


def test_a_name_spelt_like_a_cleaned_name_with_its_digest_has_another_label():
    cleaned = label_for("tab:statbench", "stard @ other data")  # tab:statbench-stard-other-data-b7b5e2
    spelt = cleaned.removeprefix("tab:statbench-")
    assert label_for("tab:statbench", spelt) != cleaned
    # a name of no allowed character at all: the digest alone; a name that is that digest differs
    alone = label_for("tab:statbench", "法律")
    assert label_for("tab:statbench", alone.removeprefix("tab:statbench-")) != alone


def test_labels_stay_as_documented():
    assert label_for("tab:statbench", "stard") == "tab:statbench-stard"
    assert label_for("tab:statbench", "stard @ other data") == "tab:statbench-stard-other-data-b7b5e2"
