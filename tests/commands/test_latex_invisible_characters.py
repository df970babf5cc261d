"""A paper table's LaTeX with invisible format characters in a label or caption (a zero-width
space, a soft hyphen, a BOM in a third-party model's parameter value): pdflatex stops on them
("Unicode character (U+200B) not set up for use with LaTeX"), and a reader could not see
them anyway. They are written as visible escapes (``\\u200b``), so the table compiles and
two labels that differ only by one do not read alike."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from statbench.commands.table_formats import Cell, PaperTable, Section, TableRow, latex_escape, to_latex

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

INVISIBLE = ("\u200b", "\u00ad", "\ufeff", "\u2060", "\u200d")


@pytest.mark.parametrize("ch", INVISIBLE)
def test_an_invisible_character_is_a_visible_escape(ch):
    out = latex_escape(f"bm25{ch}x")
    assert ch not in out and ascii(ch)[1:-1].replace("\\", r"\textbackslash{}") in out


@needs_pdflatex
def test_a_table_with_invisible_characters_compiles(tmp_path):
    table = PaperTable("Caption\u200b " + "".join(INVISIBLE), ("R@10",),
                       (Section(None, (TableRow("bm25 (q=a\u200bb\u00ad)", (Cell(0.5),)),
                                       TableRow("dense\ufeff", (Cell(0.4),)))),), label="tab:t")
    (tmp_path / "t.tex").write_text(to_latex(table), encoding="utf-8")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                      "\\input{t.tex}\n\\end{document}\n", encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-1500:]
