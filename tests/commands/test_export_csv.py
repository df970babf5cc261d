"""Every CSV statbench writes (``leaderboard export --format csv``, ``compare --format csv``: one
writer, :func:`statbench.commands.table_formats.to_csv`) holds no cell a spreadsheet would run
(issue 33 §6): a text cell opening a formula is prefixed with ``'``, a figure stays a number.
And the other table formats keep a hostile label text: LaTeX cells opening with ``[`` or
``*`` (read as the optional argument of the ``\\\\`` or ``\\midrule`` before them), Markdown
pipes and newlines."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.commands.table_formats import (
    Cell,
    PaperTable,
    Section,
    TableRow,
    csv_text,
    to_csv,
    to_latex,
    to_markdown,
)
from statbench.leaderboard.sample import make_results, write_result

PER_QUERY = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(8)}
#: what a spreadsheet runs: formulas, DDE, full-width and small forms, behind whitespace or invisibles
FORMULAS = ["=1+1", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "=HYPERLINK(\"http://x\",\"y\")",
            "  =1+1", "\u3000=1", "＝1+1", "＋1", "－1+1", "＠SUM(A1)", "﹦1", "﹢1", "﹣1", "﹫x",
            "\u200b=1", "\ufeff=1", "\u22121+1", "-", "+", "=", "@"]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_is_prefixed_with_a_quote(text):
    assert csv_text(text) == "'" + text


@pytest.mark.parametrize("text", ["bm25", "bm25 → monot5", "a=b", "x-1", "", " ", "-0.0123", "+1", "12", "1e-5",
                                  "-1.5E+3", ".5", "'quoted", "(k1=0.9)"])
def test_a_plain_text_or_a_plain_number_is_left_as_it_is(text):
    assert csv_text(text) == text


def test_control_characters_are_escapes_so_a_tab_or_cr_never_opens_a_cell():
    assert csv_text("\t=1") == "\\t=1" and csv_text("\r=1") == "\\r=1" and csv_text("a\nb") == "a\\nb"


def test_to_csv_neutralises_labels_headings_and_measure_names_and_keeps_figures_numbers():
    table = PaperTable("t", ("=M", "R@10"), (
        Section(None, (TableRow("=cmd()", (Cell(-0.0123, std=0.5, p=0.01), Cell(0.25))),
                       TableRow("-1", (Cell(0.5), Cell(None))))),
        Section("@heading", (TableRow("+x", (Cell(1e-7), Cell(0.0))),), ranked=False),
    ), tested=True)
    rows = list(csv.reader(io.StringIO(to_csv(table))))
    assert rows[0] == ["section", "system", "'=M", "'=M std", "'=M p", "R@10", "R@10 std", "R@10 p"]
    assert rows[1] == ["", "'=cmd()", "-0.0123", "0.5", "0.01", "0.25", "", ""]
    assert rows[2][:3] == ["", "-1", "0.5"] and rows[2][5] == ""  # a plain number label stays; blank not measured
    assert rows[3][:3] == ["'@heading", "'+x", "1e-07"]
    assert float(rows[1][2]) == -0.0123 and float(rows[3][2]) == 1e-7  # figures read back as numbers


def _formula_cells(rows) -> list[str]:
    """Cells a spreadsheet would run (after whitespace and invisibles, NFKC-normalised)."""
    import unicodedata

    out = []
    for row in rows:
        for cell in row:
            stripped = "".join(ch for ch in cell if not (ch.isspace() or unicodedata.category(ch) == "Cf"))
            first = unicodedata.normalize("NFKC", stripped[:1])
            try:
                float(cell)
                continue
            except ValueError:
                pass
            if first in ("=", "+", "-", "@"):
                out.append(cell)
    return out


def test_leaderboard_export_csv_with_hostile_model_names_and_params(tmp_path):
    write_result(tmp_path / "r" / "bm25", make_results(PER_QUERY))
    hostile = ["=cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "＝HYPERLINK(\"http://evil\")", "\t=1+1",
               "+evil"]
    for i, name in enumerate(hostile):
        better = {q: {m: v + 0.01 * (i + 1) for m, v in s.items()} for q, s in PER_QUERY.items()}
        write_result(tmp_path / "r" / f"m{i}", make_results(better, model=name, params={"k": "=1+1"}))
    result = CliRunner().invoke(cli, ["leaderboard", "export", str(tmp_path / "r"), "--board", "toy", "--format",
                                      "csv", "--no-published"])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert len(rows) == 1 + 1 + len(hostile)
    assert _formula_cells(rows) == []
    labels = [row[1] for row in rows[1:]]
    assert sum(label.startswith("'") for label in labels) == len(hostile) - 1
    assert "\\t=1+1 (k==1+1)" in labels  # a tab is shown as an escape: the cell opens with a backslash, inert
    assert any(label.startswith("'=cmd|") for label in labels)
    figures = [float(cell) for row in rows[1:] for cell in row[2:] if cell]
    assert figures  # figures are numbers


def test_compare_csv_with_hostile_model_names(tmp_path):
    a = write_result(tmp_path / "a", make_results(PER_QUERY, model="-1+cmd"))
    better = {q: {m: v + 0.1 for m, v in s.items()} for q, s in PER_QUERY.items()}
    b = write_result(tmp_path / "b", make_results(better, model="@SUM(A1)"))
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--measure", "R@10", "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert _formula_cells(rows) == []
    assert [row[1] for row in rows[1:]] == ["'-1+cmd (baseline)", "'@SUM(A1)"]


# --- LaTeX and Markdown: a label stays text ----------------------------------------------------------

LATEX_OPENERS = ["[5pt]bm25", "*starred", "]x", "[", "*"]


def test_latex_cells_opening_with_a_bracket_or_star_are_braced():
    from statbench.commands.table_formats import latex_escape

    assert latex_escape("[5pt]bm25") == "{[}5pt{]}bm25" and latex_escape("*x") == "{*}x"
    table = PaperTable("t", ("M",), (Section(None, tuple(TableRow(label, (Cell(0.1 * i),))
                                                         for i, label in enumerate(LATEX_OPENERS))),
                                     Section("[h]", (TableRow("[1pt]y", (Cell(0.5),)),))))
    tex = to_latex(table)
    assert "\\\\\n[" not in tex and "\\midrule\n[" not in tex and "\\\\\n*" not in tex


def test_latex_labels_opening_with_a_bracket_or_star_survive_pdflatex(tmp_path):
    """Unbraced, pdflatex compiled without a word and printed "second" and "third": the
    "[5pt]" and "*" were taken as the optional argument and star of the "\\\\" before."""
    import re

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    table = PaperTable("t", ("M",), (Section(None, (TableRow("first", (Cell(0.9),)),
                                                    TableRow("[5pt]second", (Cell(0.5),)),
                                                    TableRow("*third", (Cell(0.4),)))),))
    (tmp_path / "doc.tex").write_text("\\pdfcompresslevel=0\\pdfobjcompresslevel=0\n\\documentclass{article}\n"
                                      "\\usepackage{booktabs}\n\\begin{document}\n" + to_latex(table)
                                      + "\\end{document}\n", encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    shown = re.findall(r"\((.*?)\)", " ".join(re.findall(r"\[(.*?)\]\s*TJ",
                                                         (tmp_path / "doc.pdf").read_bytes().decode("latin-1"))))
    assert "[5pt]second" in shown and "*third" in shown, shown


def test_markdown_cells_with_pipes_and_newlines_stay_one_row_of_cells():
    import re

    table = PaperTable("t", ("M|N",), (Section(None, (TableRow("a|b\n| c | d |\r\nx", (Cell(0.5),)),
                                                     TableRow("`x`|*y*\u2028z", (Cell(0.25),)))),))
    lines = [line for line in to_markdown(table).splitlines() if line.startswith("|")]
    assert len(lines) == 4
    assert all(len(re.split(r"(?<!\\)\|", line)) == 4 for line in lines)  # two cells each
