"""``leaderboard export --format mteb`` into an output whose existing entries block a file
to write: a file where a folder of the layout goes, a folder where a result or
``model_meta.json`` goes, a dangling link. The export is refused with one line naming the
entry, exit 2, before anything is written: no row exported and the others not (issue 33:
a refused export leaves no file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.leaderboard.sample import make_results, write_result

pytest.importorskip("mteb")

PER_QUERY = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(8)}
BM25 = Path("results/statbench__bm25/no_revision_available")
MTEB = Path("results/org__model/abc")


def _results(root: Path) -> Path:
    write_result(root / "bm25", make_results(PER_QUERY))
    write_result(root / "m", make_results(PER_QUERY, model="mteb", family="dense",
                                          params={"name": "org/model", "revision": "abc"}))
    return root


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _export(results: Path, out: Path):
    result = CliRunner().invoke(cli, ["leaderboard", "export", str(results), "--board", "toy", "--format", "mteb",
                                      "--output", str(out)])
    return result.exit_code, result.stdout, result.stderr


BLOCKERS = [
    # (what to make under the output, the entry the line names, what it says)
    (lambda out: (out / "results").mkdir() or (out / "results" / "org__model").write_text("x"),
     "results/org__model", "is not a folder"),
    (lambda out: (out / MTEB / "toy.json").mkdir(parents=True), f"{MTEB}/toy.json", "is a folder"),
    (lambda out: (out / MTEB / "model_meta.json").mkdir(parents=True), f"{MTEB}/model_meta.json", "is a folder"),
    (lambda out: (out / "results").mkdir() or (out / "results" / "org__model").symlink_to(out / "gone"),
     "results/org__model", "is not a folder"),
]


@pytest.mark.parametrize("block, entry, said", BLOCKERS)
def test_an_entry_blocking_a_file_refuses_the_export_before_anything_is_written(tmp_path, block, entry, said):
    results = _results(tmp_path / "runs")
    out = tmp_path / "out"
    out.mkdir()
    block(out)
    before = _tree(out)
    code, stdout, stderr = _export(results, out)
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    assert f"{out / entry} {said}" in lines[0] and "nothing exported" in lines[0], lines[0]
    assert ".mteb-export-" not in lines[0]
    assert stdout == ""
    assert _tree(out) == before  # the bm25 row (written first) is not written either


def test_an_output_below_a_file_is_one_line_and_nothing_is_made(tmp_path):
    results = _results(tmp_path / "runs")
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    code, _, stderr = _export(results, blocker / "out")
    assert code == 2 and len(stderr.strip().splitlines()) == 1, stderr
    assert f"{blocker} is not a folder" in stderr
    assert blocker.read_text() == "x"
