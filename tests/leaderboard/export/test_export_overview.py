"""``leaderboard export --board overview`` (issue 36 §4): a benchmark's overview as a paper
table — the ranks computed by hand, blank cells for tasks not run, its own label, options
that only a task board takes refused, and a task board and the overview compiling in one
LaTeX document with no warning."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from overview_fixtures import mini_benchmark, write_mini, write_run

from statbench.commands.cli import cli
from statbench.leaderboard.sample import make_results, write_result

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="pdflatex is not installed (texlive-latex-base texlive-latex-recommended)")


def _export(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["leaderboard", "export", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def results(tmp_path):
    return write_mini(tmp_path / "results")


def _mini(results, *args):
    with mini_benchmark():
        return _export(results, "--board", "overview", "--benchmark", "mini-v1", *args)


def test_markdown_rows_figures_and_ranks_as_computed_by_hand(results):
    code, out, err = _mini(results, "--format", "markdown")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("| ")]
    assert lines[0] == ("| configuration | stard (R@100) | ukstat (nDCG@10) | bsard (R@100) | tasks of 3 | "
                        "Borda rank (95%) | mean rank (95%) |")
    assert lines[1:] == ["| model-a | 0.8000 |  |  | 1 | 1 (1–1) | 1.00 (1.00–1.00) |",
                         "| model-b | 0.6000 | 0.7000 |  | 2 | 1 (1–1) | 1.50 (1.50–1.50) |",
                         "| model-c | 0.4000 | 0.5000 |  | 2 | 3 (3–3) | 2.50 (2.50–2.50) |"]
    assert "a blank cell: not run, never counted as 0" in out
    assert "note: bsard: not run" in err


def test_csv_has_full_precision_and_blank_cells(results):
    code, out, err = _mini(results, "--format", "csv")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["configuration", "stard R@100", "ukstat nDCG@10", "bsard R@100", "tasks run", "Borda points",
                       "Borda rank (95%)", "mean rank (95%)"]
    assert rows[1] == ["model-a", "0.8", "", "", "1", "2.0", "1 (1–1)", "1.00 (1.00–1.00)"]
    assert "note: caption: Benchmark mini-v1: configurations across its tasks" in err


def test_latex_label_leaves_out_columns_nobody_ran(results):
    code, out, err = _mini(results)
    assert code == 0, err
    assert re.findall(r"\\label\{([^}]*)\}", out) == ["tab:statbench-overview-mini-v1"]  # two benchmarks declared
    header = next(line for line in out.splitlines() if line.startswith("configuration &"))
    assert header == r"configuration & stard & ukstat & tasks & Borda rank & mean rank \\"
    assert "Not run by any configuration (no column): bsard." in out
    assert "model-a & 0.8000 &  & 1 & 1 (1--1) & 1.00 (1.00--1.00)" in out


def test_the_only_benchmark_is_the_default_with_the_plain_label(tmp_path):
    write_run(tmp_path, "ukstat", "bm25", 0.5)
    code, out, err = _export(tmp_path, "--board", "overview", "--label", "tab:over", "--caption", "Across tasks")
    assert code == 0, err
    assert r"\label{tab:over}" in out and r"\caption{Across tasks}" in out
    code, out, err = _export(tmp_path, "--board", "overview")
    assert re.findall(r"\\label\{([^}]*)\}", out) == ["tab:statbench-overview"]
    assert "stard: not run" in err and "coliee: not run" in err


@pytest.mark.parametrize("args, message", [
    (("--rows", "model-a"), "--rows: for a task board's export, not --board overview's"),
    (("--measure", "R@100", "--published"), "--measure, --published: for a task board's export"),
    (("--format", "mteb"), "--format mteb exports a task board's rows; --board overview is a table"),
    (("--benchmark", "statutes-v9"), "unknown benchmark 'statutes-v9'; valid choices: mini-v1, statutes-v1"),
])
def test_what_the_overview_does_not_take_is_refused_in_one_line(results, args, message):
    with mini_benchmark():
        code, out, err = _export(results, "--board", "overview", *args)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_several_benchmarks_need_benchmark(results):
    with mini_benchmark():
        code, _, err = _export(results, "--board", "overview")
    assert code == 2 and "2 benchmarks are declared (mini-v1, statutes-v1): --benchmark NAME picks one" in err


def test_benchmark_goes_with_the_overview_only(results):
    code, _, err = _export(results, "--board", "stard", "--benchmark", "statutes-v1")
    assert code == 2 and "--benchmark goes with --board overview" in err


def test_no_result_on_a_benchmarks_task_is_refused(tmp_path):
    write_run(tmp_path, "stard", "bm25", 0.5)  # official protocol: not statutes-v1's 5 folds
    code, _, err = _export(tmp_path, "--board", "overview")
    assert code == 2 and "no result on a task of benchmark statutes-v1" in err


def test_a_task_board_named_overview_is_not_taken_for_the_overview(results):
    per_query = {f"q{i}": {"R@5": 0.5} for i in range(3)}
    write_result(results / "overview-task", make_results(per_query, task="overview", measures=["R@5"]))
    with mini_benchmark():
        code, _, err = _export(results, "--board", "overview", "--benchmark", "mini-v1")
    assert code == 2 and "a task board is named 'overview'" in err


@needs_pdflatex
def test_a_task_board_and_the_overview_compile_in_one_document_with_no_warning(results, tmp_path):
    """With a label long enough to wrap, holding words wider than its column."""
    write_run(results, "stard", "model-long", 0.3, params={"lge_batch_size": 64, "train_passage_encoder": False,
                                                            "max_doc_length": 256, "a_very_long_parameter_name": "x" * 40})
    tables = []
    for args in (("--board", "stard"), ("--board", "overview", "--benchmark", "mini-v1")):
        with mini_benchmark():
            code, out, err = _export(results, *args)
        assert code == 0, err
        tables.append(out)
    labels = [re.findall(r"\\label\{([^}]*)\}", t) for t in tables]
    assert labels == [["tab:statbench-stard"], ["tab:statbench-overview-mini-v1"]]
    folder = tmp_path / "tex"
    folder.mkdir()
    for i, table in enumerate(tables):
        (folder / f"t{i}.tex").write_text(table, encoding="utf-8")
    body = "".join(f"\\input{{t{i}.tex}}\nSee Table~\\ref{{{label[0]}}}.\n" for i, label in enumerate(labels))
    (folder / "doc.tex").write_text("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
                                    "\\begin{document}\n" + body + "\\end{document}\n", encoding="utf-8")
    for _ in range(2):
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                              cwd=folder, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout[-2000:]
    log = (folder / "doc.log").read_text("latin-1")
    assert not re.search("Warning|Overfull|Underfull|multiply defined", log), \
        [line for line in log.splitlines() if re.search("Warning|Overfull|Underfull", line)]
