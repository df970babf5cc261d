"""Tables for a paper (issue 36 §4): two exported boards compile in one LaTeX document with no
warning (distinct labels, every table inside a one-column article's 345 pt); --label and
--caption; published figures only with --published, in LaTeX a table of their own; which
mean each figure is (the mean of the split means vs the mean over all queries pooled) named
in compare, its tables and the exports."""

from __future__ import annotations

import csv
import io
import re
import shutil
import statistics
import subprocess

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.commands.table_formats import (
    COLUMN_PT,
    Cell,
    PaperTable,
    Section,
    TableRow,
    check_label,
    label_for,
    latex_width,
    to_latex,
)
from statbench.errors import StatbenchError
from statbench.leaderboard.sample import make_results, write_many, write_result, write_sample

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="pdflatex is not installed (texlive-latex-base texlive-latex-recommended)")


def _invoke(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def _export(*args):
    return _invoke("leaderboard", "export", *args)


def _stard_result(root, name: str, shift: float, corpus_size: int = 55348) -> None:
    from statbench.tasks.stard import Stard

    labels = [m.label for m in Stard.measures]
    per_query = {f"q{i}": {m: 0.4 + shift + (i % 7) / 100 for m in labels} for i in range(100)}  # (fewer: faster)
    qids = sorted(per_query)
    folds = {f"fold-{k + 1}": qids[k::5] for k in range(5)}
    results = make_results(per_query, task="stard", measures=labels, splits=folds, model=name)
    results["measures"] = [{"label": m.label, "ir_measure": m.ir_measure} for m in Stard.measures]
    results["task"]["corpus_size"] = corpus_size
    write_result(root / name, results)


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """One results folder with two boards: ``toy`` (the sample: 4 measures, 2 folds, a label
    ``<script>...``) and ``stard`` (10 measures, 5 folds, published figures)."""
    root = tmp_path_factory.mktemp("paper") / "res"
    write_sample(root / "toy")
    for name, shift in (("bm25", 0.0), ("ql", 0.01), ("dense", 0.05)):
        _stard_result(root / "stard", name, shift)
    return root


def _compile(folder, *tables: str) -> str:
    """The log of one article (10pt, one column) holding ``tables``, each referred to by its
    label, compiled twice (the second pass resolves the references)."""
    for i, text in enumerate(tables):
        (folder / f"t{i}.tex").write_text(text, encoding="utf-8")
    body = "".join(f"\\input{{t{i}.tex}}\nSee Table~\\ref{{{label}}}.\n"
                   for i, label in enumerate(re.search(r"\\label\{([^}]*)\}", t).group(1) for t in tables))
    (folder / "doc.tex").write_text("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
                                    "\\begin{document}\n" + body + "\\end{document}\n", encoding="utf-8")
    for _ in range(2):
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                              cwd=folder, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]
    return (folder / "doc.log").read_text("latin-1")


# --- two boards in one paper ------------------------------------------------------------------------


@needs_pdflatex
def test_two_boards_compile_in_one_document_with_no_warning(boards, tmp_path):
    tables = []
    for board, extra in (("toy", ()), ("stard", ()), ("stard", ("--published", "--label", "tab:stard-all"))):
        code, out, err = _export(boards, "--board", board, *extra)
        assert code == 0, err
        tables.append(out)
    labels = [re.findall(r"\\label\{([^}]*)\}", t) for t in tables]
    assert labels == [["tab:statbench-toy"], ["tab:statbench-stard"], ["tab:stard-all", "tab:stard-all-published"]]
    log = _compile(tmp_path, *tables)
    assert "Warning" not in log and "Overfull" not in log and "Underfull" not in log, \
        [line for line in log.splitlines() if re.search("Warning|Overfull|Underfull", line)]
    assert "multiply defined" not in log


@needs_pdflatex
def test_the_width_estimate_is_pdflatexs(tmp_path):
    """latex_width, on which the columns are chosen, agrees with the width pdflatex sets
    (measured here in a 50 pt text: the overfull box is the table's width less 50 pt)."""
    hostile = "a_b%c&d#e$f{g}h~i^j\\k<l>m|n*o`p[q] é"
    rows = (TableRow("bm25 → monot5 (baseline)", (Cell(0.4365, 0.0123, "up"), Cell(0.9, None, "down"))),
            TableRow(hostile, (Cell(0.1, 0.2), Cell(None))))
    tables = [PaperTable("c", ("R@10", "MRR@10"), (Section(None, rows),), label="tab:a"),
              PaperTable("c", ("nDCG@10",), (Section(None, tuple(TableRow(r.label, r.cells[:1]) for r in rows)),),
                         label="tab:b")]
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
        "\\setlength{\\textwidth}{50pt}\n\\begin{document}\n" + "".join(map(to_latex, tables)) + "\\end{document}\n",
        encoding="utf-8")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-no-shell-escape", "doc.tex"], cwd=tmp_path,
                   capture_output=True, timeout=120)
    log = (tmp_path / "doc.log").read_text("latin-1")
    widths = [float(w) + 50 for w in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\) in paragraph", log)]
    assert len(widths) == 2, log[-2000:]
    for table, width in zip(tables, widths):
        assert width <= latex_width(table) <= width * 1.03, (width, latex_width(table))


def test_default_latex_keeps_the_tested_measure_and_says_what_it_left_out(boards):
    code, out, err = _export(boards, "--board", "stard")
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("system &"))
    columns = [c.strip() for c in header.removesuffix(r"\\").split("&")[1:]]
    assert "R@100" in columns and 1 <= len(columns) < 10  # STARD's tested measure
    left = [m for m in ("R@5", "R@10", "R@20", "R@30", "R@50", "R@100", "R@200", "MRR@3", "MRR@5", "MRR@10")
            if m not in columns]
    assert f"{len(left)} measure(s) left out so that the table fits a one-column article (345 pt): " \
           f"{', '.join(left)}" in err
    assert "Published" not in out and "stard-2024" not in out  # published figures only with --published
    code, md, _ = _export(boards, "--board", "stard", "--format", "markdown")
    assert "| system | R@5 | R@10 | R@20 |" in md and "stard-2024" not in md  # Markdown: every measure


def test_measures_asked_for_that_do_not_fit_are_kept_and_said(boards):
    measures = [a for m in ("R@5", "R@10", "R@20", "R@30", "R@50") for a in ("--measure", m)]
    code, out, err = _export(boards, "--board", "stard", *measures)
    assert code == 0, err
    assert out.count("& R@") == 5 and "left out" not in err
    width = float(re.search(r"the table is about (\d+) pt wide, wider than a one-column article's text", err).group(1))
    assert width > COLUMN_PT


@pytest.mark.parametrize("n, said", [(30, False), (45, True)])
def test_more_rows_than_a_page_holds_are_said(tmp_path, n, said):
    write_many(tmp_path / "r", n)
    code, out, err = _export(tmp_path / "r", "--board", "toy")
    assert code == 0, err
    assert out.count(r"\\") - 1 == n  # every row kept (and the header)
    assert ("taller than a one-column article's page (550 pt): LaTeX will say 'Float too large for page'; "
            "--rows picks the rows" in err) is said


def test_published_figures_are_a_second_latex_table(boards):
    code, out, err = _export(boards, "--board", "stard", "--published", "--measure", "R@100")
    assert code == 0, err
    first, second = out.split(r"\end{table}")[:2]
    assert "stard-2024" not in first and r"\label{tab:statbench-stard}" in first
    assert "Dense-STARD (fine-tuned, 5-fold) (stard-2024 Table 3) & 0.9065" in second
    assert r"\label{tab:statbench-stard-published}" in second and r"\textbf" not in second  # never ranked
    code, out, _ = _export(boards, "--board", "stard", "--published", "--no-published", "--measure", "R@100")
    assert "stard-2024" not in out


# --- --label and --caption ----------------------------------------------------------------------------


def test_default_labels_are_one_per_board():
    assert label_for("tab:statbench", "stard") == "tab:statbench-stard"
    assert label_for("tab:statbench", "stard @ other data") == "tab:statbench-stard-other-data-b7b5e2"  # as documented
    # names that clean to the same text keep distinct labels
    assert len({label_for("tab:statbench", n) for n in ("a b", "a-b", "a_b", "a  b", "法律", "法规")}) == 6
    assert all(re.fullmatch(r"[A-Za-z0-9:.-]+", label_for("tab:statbench", n)) for n in ("}x{", "a\\b", "法律"))


def test_label_and_caption_options(boards):
    code, out, err = _export(boards, "--board", "toy", "--label", "tab:toy.v2", "--caption", "50% & more_{x} → y")
    assert code == 0, err
    assert r"\label{tab:toy.v2}" in out and r"\caption{50\% \& more\_\{x\} $\rightarrow$ y}" in out
    code, out, err = _export(boards, "--board", "toy", "--format", "markdown", "--caption", "a*b")
    assert code == 0 and out.startswith("**a\\*b**\n")
    code, out, err = _export(boards, "--board", "toy", "--format", "csv", "--caption", "=cmd")
    assert code == 0 and "note: caption: =cmd" in err and "cmd" not in out


@pytest.mark.parametrize("args, words", [
    (("--label", "tab:a b"), "a LaTeX label is letters, digits, '-', ':' and '.' only"),
    (("--label", "tab:}\\x"), "a LaTeX label is letters, digits"),
    (("--label", ""), "a LaTeX label is letters, digits"),
    (("--caption", "  "), "--caption is empty"),
    (("--label", "tab:x", "--format", "markdown"), "--label is LaTeX's"),
    (("--caption", "x", "--format", "mteb", "--output", "o"), "--caption is a table's"),
])
def test_bad_label_or_caption_is_one_line_exit_2(boards, args, words):
    code, out, err = _export(boards, "--board", "toy", *args)
    assert code == 2 and out == "" and words in err, err
    assert len([line for line in err.strip().splitlines() if words in line]) == 1


def test_check_label_refuses_what_latex_cannot_use():
    assert check_label("tab:a-b.c") == "tab:a-b.c"
    for bad in ("tab:a_b", "tab:a\nb", "tab:é", "tab:a%b"):
        with pytest.raises(StatbenchError, match="a LaTeX label is"):
            check_label(bad)


# --- which mean ----------------------------------------------------------------------------------------


@pytest.fixture
def uneven(tmp_path):
    """Two results on two folds of unequal size (2 and 6 queries): the mean of the split means
    and the mean over all queries pooled differ."""
    qids = [f"q{i}" for i in range(8)]
    folds = {"fold-1": qids[:2], "fold-2": qids[2:]}
    a = {q: {m: (0.9 if i < 2 else 0.1) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i, q in enumerate(qids)}
    b = {q: {m: (1.0 if i < 2 else 0.3 + 0.01 * i) for m in ("R@5", "R@10", "R@100", "nDCG@10")}
         for i, q in enumerate(qids)}
    paths = (write_result(tmp_path / "r" / "bm25", make_results(a, splits=folds)),
             write_result(tmp_path / "r" / "dense", make_results(b, model="dense", splits=folds)))
    means = {}
    for name, scores in (("A", a), ("B", b)):
        pooled = statistics.fmean(s["R@10"] for s in scores.values())
        split = statistics.fmean(statistics.fmean(scores[q]["R@10"] for q in f) for f in folds.values())
        means[name] = (pooled, split)
    assert all(f"{p:.4f}" != f"{s:.4f}" for p, s in means.values())
    return tmp_path / "r", paths, means


def test_compare_names_the_pooled_mean_and_the_mean_over_splits(uneven):
    _, (a, b), means = uneven
    code, out, err = _invoke("compare", a, b, "--measure", "R@10")
    assert code == 0, err
    for side, path in (("A", a), ("B", b)):
        pooled, split = means[side]
        line = next(x for x in out.splitlines() if x.startswith(f"  {side} {path}:"))
        assert f"mean over all 8 queries (pooled) {pooled:.4f}" in line
        assert f"mean over the 2 splits {split:.4f} ± " in line
    code, md, err = _invoke("compare", a, b, "--measure", "R@10", "--format", "markdown")
    assert code == 0, err
    cells = [line.split("|")[2].strip() for line in md.splitlines() if line.startswith("| bm25") or
             line.startswith("| dense")]
    assert cells[0].startswith(f"{means['A'][1]:.4f}") and means["B"][1] > means["A"][1]
    assert f"{means['B'][1]:.4f}" in cells[1]  # the table: the mean over splits, as the board
    assert ("the mean over the 2 splits (fold-1, fold-2) of each split's mean, not the mean over all queries "
            "pooled") in md
    assert "its means are over all queries pooled" in md


def test_compare_label_and_caption(uneven):
    _, (a, b), _ = uneven
    code, out, err = _invoke("compare", a, b, "--format", "latex")
    assert code == 0 and r"\label{tab:statbench-compare-toy-dense}" in out
    code, out, err = _invoke("compare", a, b, "--format", "latex", "--label", "tab:cmp", "--caption", "A & B")
    assert code == 0 and r"\label{tab:cmp}" in out and r"\caption{A \& B}" in out
    for args, words in ((("--label", "tab:x"), "--label is LaTeX's"),
                        (("--format", "latex", "--label", "x y"), "a LaTeX label is"),
                        (("--caption", "x"), "--caption is the --format table's")):
        code, out, err = _invoke("compare", a, b, *args)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_export_footnote_says_the_figures_are_means_of_split_means(uneven):
    root, _, means = uneven
    code, out, err = _export(root, "--board", "toy", "--format", "csv", "--measure", "R@10")
    assert code == 0, err
    read = {row["system"]: row for row in csv.DictReader(io.StringIO(out))}
    assert f"{float(read['bm25 (baseline)']['R@10']):.4f}" == f"{means['A'][1]:.4f}"
    assert "the mean over the 2 splits (fold-1, fold-2) of each split's mean, not the mean over all queries pooled" \
        in err


def test_one_split_footnote_says_mean_over_its_queries(tmp_path):
    scores = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(8)}
    write_result(tmp_path / "r" / "bm25", make_results(scores))
    code, out, err = _export(tmp_path / "r", "--board", "toy", "--format", "markdown")
    assert code == 0, err
    assert "Each figure: the mean over the 8 queries of split test." in out and "±" not in out.split("\n\n")[1]
