"""``leaderboard export --format mteb`` writes ``results/<model>/<revision>/<task>.json`` from
names that results files give (issue 33 §7): a hostile model name, revision or task name is
one line and exit 2, and nothing is written anywhere (not outside ``--output``, not inside
it); a link in ``--output`` leading out is refused the same way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.leaderboard.sample import make_results, write_result

pytest.importorskip("mteb")

PER_QUERY = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(8)}


def _export(results: Path, out: Path, *extra):
    result = CliRunner().invoke(cli, ["leaderboard", "export", str(results), "--board", "toy", "--format", "mteb",
                                      "--output", str(out), *extra])
    return result.exit_code, result.stdout, result.stderr


def _tree(root: Path) -> set[str]:
    """Every path under ``root`` (links not followed)."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _mteb_row(root: Path, folder: str, name: str, revision: str) -> None:
    write_result(root / folder, make_results(PER_QUERY, model="mteb", family="dense",
                                             params={"name": name, "revision": revision}))


HOSTILE = [
    # (model name, revision, what the line says)
    ("org/model", "../../../escaped", "revision '../../../escaped' holds '/'"),
    ("org/model", "..", "revision '..' names a folder"),
    ("org/model", "a\\..\\..\\..\\escaped", "holds '\\\\'"),
    ("org/model", "C:escaped", "holds ':'"),
    ("org/model", "rev\x00x", "holds a control or invisible character"),
    ("org/model", "rev\nx", "holds a control or invisible character"),
    ("org/model", "\u202erev", "holds a control or invisible character"),
    ("org/model", "x" * 201, "is longer than 200 bytes"),
    ("org/model", "NUL.txt", "is a Windows device name"),
    ("org/model", "rev ", "starts or ends with a space"),
    ("org/model", ".git", "starts with '.'"),
    ("org/model", "", "revision '' is empty"),  # an empty revision is MTEB's no_revision_available
    ("org/..", "abc", "model name 'org__..'"),
    ("org\\..\\..\\x", "abc", "holds '\\\\'"),
    ("a:b/model", "abc", "holds ':'"),
]


def test_hostile_names_are_one_line_and_nothing_is_written_anywhere(tmp_path):
    results = tmp_path / "results"
    write_result(results / "bm25", make_results(PER_QUERY))
    for i, (name, revision, message) in enumerate(HOSTILE):
        case = results.parent / f"case{i}"
        (case / "bm25").parent.mkdir()
        os.symlink(results / "bm25", case / "bm25")
        _mteb_row(case, "m", name, revision)
        before = _tree(tmp_path)
        out = tmp_path / "nested" / "out"
        code, stdout, stderr = _export(case, out)
        if revision == "":  # not hostile: written as no_revision_available
            assert code == 0, stderr
            assert (out / "results" / "org__model" / "no_revision_available" / "toy.json").is_file()
            import shutil

            shutil.rmtree(tmp_path / "nested")
            continue
        assert code == 2, (name, revision, stderr)
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and "nothing exported" in lines[0], stderr
        assert message in lines[0], lines[0]
        assert stdout == ""
        assert _tree(tmp_path) == before, (name, revision)  # nothing outside --output, and no --output at all
        assert not (tmp_path / "nested").exists()


def test_a_refused_export_leaves_an_existing_output_as_it_was(tmp_path):
    results = tmp_path / "results"
    write_result(results / "bm25", make_results(PER_QUERY))
    _mteb_row(results, "m", "org/model", "../../x")
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    (out / "results" / "keep.json").write_text("{}")
    code, _, stderr = _export(results, out)
    assert code == 2 and "holds '/'" in stderr
    assert _tree(out) == {"results", "results/keep.json"}


def test_a_link_in_the_output_leading_out_is_refused_before_anything_is_written(tmp_path):
    results = tmp_path / "results"
    write_result(results / "bm25", make_results(PER_QUERY))
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "results").symlink_to(elsewhere, target_is_directory=True)
    code, stdout, stderr = _export(results, out)
    assert code == 2 and len(stderr.strip().splitlines()) == 1, stderr
    assert "outside it (a link in the folder leads out)" in stderr and str(elsewhere) in stderr
    assert _tree(elsewhere) == set() and _tree(out) == {"results"}
    # a link to a folder inside the output is followed
    (out / "results").unlink()
    (out / "real").mkdir()
    (out / "results").symlink_to(out / "real", target_is_directory=True)
    code, stdout, stderr = _export(results, out)
    assert code == 0, stderr
    assert (out / "real" / "statbench__bm25" / "no_revision_available" / "toy.json").is_file()


def test_two_rows_one_file_on_a_case_blind_file_system_are_refused(tmp_path):
    results = tmp_path / "results"
    write_result(results / "bm25", make_results(PER_QUERY))
    _mteb_row(results, "m1", "Org/Model", "abc")
    _mteb_row(results, "m2", "org/model", "abc")
    code, _, stderr = _export(results, tmp_path / "out")
    assert code == 2 and "names compared case-blind" in stderr and len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, ok", [("org__model", True), ("0123abcd", True), ("no_revision_available", True),
                                      ("a.b-c=d+e", True), ("..", False), (".", False), ("a/b", False),
                                      ("a\\b", False), ("c:", False), ("com1", False), ("Lpt9.json", False),
                                      ("a\u200bb", False), ("a\u2028b", False), ("é" * 100, True), ("é" * 101, False),
                                      ("x.", False), (" x", False)])
def test_path_component(text, ok):
    from statbench.errors import StatbenchError
    from statbench.leaderboard.export.mteb import path_component

    if ok:
        assert path_component(text, "revision", "row") == text
    else:
        with pytest.raises(StatbenchError, match="^row: its revision .*: not a file name under --output"):
            path_component(text, "revision", "row")


@pytest.mark.parametrize("task, message", [("../../escaped", "holds '/'"), ("CON", "is a Windows device name"),
                                           ("..", "names a folder")])
def test_a_hostile_task_name_is_refused(tmp_path, task, message):
    results = tmp_path / "results"
    write_result(results / "bm25", make_results(PER_QUERY, task=task))
    before = _tree(tmp_path)
    result = CliRunner().invoke(cli, ["leaderboard", "export", str(results), "--board", task, "--format", "mteb",
                                      "--output", str(tmp_path / "out")])
    assert result.exit_code == 2 and f"bm25: its task name {task!r} {message}" in result.stderr
    assert _tree(tmp_path) == before
