"""Tables for a paper (issue 22 §4): `statbench leaderboard export` and `statbench compare
--format`: the board's rows and figures, best bold and second underlined, the board's own
significance markers, mean ± std for folds, published rows apart, escaping, LaTeX that
compiles, Markdown that is a table, CSV that reads back; rows of two boards refused."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.commands.table_formats import (
    FORMATS,
    Cell,
    PaperTable,
    Section,
    TableRow,
    latex_escape,
    markdown_escape,
    to_csv,
    to_latex,
    to_markdown,
)
from statbench.leaderboard.export.paper import FORMAT_CHOICES
from statbench.leaderboard.sample import make_results, write_result, write_sample

HOSTILE = "a_b%c&d#e$f{g}h~i^j\\k<l>m|n*o`p[q]"


def _export(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["leaderboard", "export", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def _md_rows(text: str) -> list[list[str]]:
    """The cells of every table line (split on unescaped pipes)."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in text.splitlines()
            if line.startswith("|")]


def _number(cell: str) -> float:
    return float(re.search(r"\d+\.\d+", cell).group())


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("export") / "res"
    write_sample(root)
    return root


def test_formats_offered_are_the_renderers():
    assert FORMAT_CHOICES == FORMATS


# --- escaping ---------------------------------------------------------------------------------


def test_latex_escapes_every_special_character():
    assert latex_escape("_ % & # $ { } ~ ^ \\") == (r"\_ \% \& \# \$ \{ \} \textasciitilde{} "
                                                    r"\textasciicircum{} \textbackslash{}")
    assert latex_escape("bm25 → monot5 <x>") == r"bm25 $\rightarrow$ monot5 \textless{}x\textgreater{}"
    assert latex_escape("a\nb") == r"a\textbackslash{}nb"  # a newline is shown, never a line break


def test_markdown_escapes_syntax_and_html():
    assert markdown_escape("<script>a|b*c_d</script>") == r"&lt;script&gt;a\|b\*c\_d&lt;/script&gt;"
    table = PaperTable("t", ("M",), (Section(None, (TableRow(HOSTILE, (Cell(0.5),)),)),))
    lines = _md_rows(to_markdown(table))
    assert all(len(line) == 2 for line in lines)  # the pipe in the label kept it one cell


# --- the renderer's ranking -----------------------------------------------------------------------


def _table(values, ranked_extra=None):
    rows = tuple(TableRow(f"s{i}", (Cell(v),)) for i, v in enumerate(values))
    sections = [Section(None, rows)]
    if ranked_extra is not None:
        sections.append(Section("Published", (TableRow("paper", (Cell(ranked_extra),)),), ranked=False))
    return PaperTable("t", ("M",), tuple(sections))


def test_ties_for_best_are_all_bold_and_compared_as_printed():
    # 0.50001 prints as 0.5000: tied with 0.5 as the reader sees them
    md = to_markdown(_table([0.5, 0.50001, 0.4, 0.3]))
    cells = [row[1] for row in _md_rows(md)[2:]]
    assert cells == ["**0.5000**", "**0.5000**", "<u>0.4000</u>", "0.3000"]


def test_no_second_of_two_and_published_figures_are_not_ranked():
    cells = [row[1] for row in _md_rows(to_markdown(_table([0.2, 0.1])))[2:]]
    assert cells == ["**0.2000**", "0.1000"]  # of two, the second is the last: not underlined
    body = _md_rows(to_markdown(_table([0.2, 0.1, 0.05], ranked_extra=0.9)))[2:]
    assert [row[1] for row in body[:3]] == ["**0.2000**", "<u>0.1000</u>", "0.0500"]
    assert body[3] == ["*Published*", ""] and body[4] == ["paper", "0.9000"]  # higher, but not ranked


def test_latex_blank_when_not_measured():
    table = PaperTable("t", ("A", "B"), (Section(None, (TableRow("x", (Cell(0.1), Cell(None))),)),))
    assert "x & \\textbf{0.1000} &  \\\\" in to_latex(table)
    assert to_csv(table).splitlines()[1] == ",x,0.1,"


# --- export of a board ----------------------------------------------------------------------------------


def _board_figures(root, measure):
    """label -> (mean, std) of every result under ``root``, as results.json records them."""
    out = {}
    for path in root.rglob("results.json"):
        data = json.loads(path.read_text("utf-8"))
        name = data["model"]["name"] + (f" → {data['reranker']['name']}" if data.get("reranker") else "")
        out[name] = (data["aggregate"][measure]["mean"], data["aggregate"][measure]["std"])
    return out


def test_markdown_export_bold_is_the_best_and_folds_show_std(sample):
    code, out, err = _export(sample, "--board", "toy", "--format", "markdown", "--measure", "R@10",
                             "--measure", "nDCG@10")
    assert code == 0, err
    lines = _md_rows(out)
    assert lines[0] == ["system", "R@10", "nDCG@10"] and set(lines[1][0]) <= set(":-")
    assert all(len(line) == 3 for line in lines)
    body = lines[2:]
    assert len(body) == 7
    for col, measure in ((1, "R@10"), (2, "nDCG@10")):
        figures = _board_figures(sample, measure)
        best = max(m for m, _ in figures.values())
        bold = [row for row in body if row[col].startswith("**")]
        assert [_number(row[col]) for row in bold] == [round(best, 4)]
        second = sorted({round(m, 4) for m, _ in figures.values()}, reverse=True)[1]
        assert [_number(row[col]) for row in body if row[col].startswith("<u>")] == [second]
        for row in body:  # mean ± std over the two folds, as recorded
            mean, std = figures[row[0].removesuffix(" (baseline)").replace("&lt;", "<").replace("&gt;", ">")]
            assert re.search(rf"{mean:.4f}\**(</u>)? ± {std:.4f}", row[col]), row
    assert "over the 2 splits (fold-1, fold-2)" in out and "Board toy" in out


def test_markers_and_p_values_are_the_boards_own(sample):
    from statbench.leaderboard.collect.reading import collect
    from statbench.leaderboard.ranking.holm_family import board_family
    from statbench.leaderboard.ranking.significance import compare_board

    rows = collect(sample).boards["toy"]
    base = next(r for r in rows if r.name == "bm25")
    code, out, err = _export(sample, "--board", "toy", "--format", "csv")
    assert code == 0, err
    read = list(csv.DictReader(io.StringIO(out)))
    code, md, _ = _export(sample, "--board", "toy", "--format", "markdown")
    body = {row[0]: row for row in _md_rows(md)[2:]}
    measures = ["R@5", "R@10", "R@100", "nDCG@10"]
    seen = set()
    # the board's marks: one Holm family over every (row, measure) test against the baseline
    raw = {}
    for measure in measures:
        systems = {r.key: r.results.query_scores(measure) for r in rows if r is not base}
        for c in compare_board(base.key, base.results.query_scores(measure), systems, measure):
            raw[(c.system, measure)] = (c.p_value, c.mean_diff)
    family = board_family(raw, measures)
    assert family.tests == len(raw) == 4 * (len(rows) - 1)
    for i, measure in enumerate(measures):
        comparisons = {key: mark for (key, m), mark in family.marks.items() if m == measure}
        for r in rows:
            label = r.name.replace("<", "&lt;").replace(">", "&gt;")
            line = next(x for x in read if x["system"].removesuffix(" (baseline)") == r.name)
            cell = body[label if r is not base else f"{label} (baseline)"][i + 1]
            if r is base:
                assert line[f"{measure} p"] == "" and not cell.endswith(("↑", "↓"))
                continue
            c = comparisons[r.key]
            assert float(line[f"{measure} p"]) == c.p_holm
            expected = {1: "↑", -1: "↓", 0: ""}[c.direction]
            assert cell.endswith(expected) if expected else not cell.endswith(("↑", "↓")), (cell, c)
            seen.add(c.direction)
    assert seen == {-1, 0, 1}  # the sample has all three
    assert "Wilcoxon signed-rank" in md and "Holm–Bonferroni" in md and "baseline bm25" in md
    assert f"Holm–Bonferroni correction over all {family.tests} tests of the board" in md


def test_csv_reads_back_as_the_recorded_numbers(sample):
    code, out, err = _export(sample, "--board", "toy", "--format", "csv", "--measure", "R@100")
    assert code == 0, err
    read = list(csv.DictReader(io.StringIO(out)))
    assert list(read[0]) == ["section", "system", "R@100", "R@100 std", "R@100 p"]
    figures = _board_figures(sample, "R@100")
    assert len(read) == len(figures)
    for line in read:
        mean, std = figures[line["system"].removesuffix(" (baseline)")]
        assert float(line["R@100"]) == mean and float(line["R@100 std"]) == std  # full precision, no markup
    assert "note: Board toy" in err  # the footnotes of a CSV go to stderr


def test_rows_asked_for_in_their_order_and_output_file(sample, tmp_path):
    target = tmp_path / "t.md"
    code, out, err = _export(sample, "--board", "toy", "--format", "markdown", "--rows", "ql", "--rows",
                             "bm25 → monot5", "--output", target)
    assert code == 0, err and out == ""
    labels = [row[0] for row in _md_rows(target.read_text("utf-8"))[2:]]
    assert labels == ["ql", "bm25 → monot5"]
    # the board's tests, Holm over all its systems: a row's p does not change with the rows exported
    full = {x["system"]: x for x in csv.DictReader(io.StringIO(_export(sample, "--board", "toy", "--format", "csv")[1]))}
    one = list(csv.DictReader(io.StringIO(_export(sample, "--board", "toy", "--format", "csv", "--rows", "ql")[1])))
    assert [x["system"] for x in one] == ["ql"] and one[0] == full["ql"]


def test_a_verified_export_shows_only_rows_the_verifier_lets_through(sample):
    from statbench.errors import StatbenchError
    from statbench.leaderboard.export.paper import build_export
    from statbench.leaderboard.verify.verify import Verifier

    # task "toy" is not installed here: every row is unverifiable
    table = build_export(sample, "toy", verify=Verifier(allow_unverified=True)).table
    labels = [row.label for row in table.sections[0].rows]
    # each row's level in words (issue 34): none could be re-scored here
    assert len(labels) == 7 and all(label.endswith(" (self-reported)") for label in labels)
    assert any("What was checked, in each row's label: 7 self-reported" in f for f in table.footnotes)
    with pytest.raises(StatbenchError, match="no board 'toy'"):
        build_export(sample, "toy", verify=Verifier())


def test_unknown_board_measure_row_or_baseline_is_one_line_exit_2(sample):
    for args, words in ((["--board", "nope"], "no board 'nope'"),
                        (["--board", "toy", "--measure", "P@3"], "--measure 'P@3' is not a measure of this board"),
                        (["--board", "toy", "--rows", "nope"], "no row 'nope' on board 'toy'"),
                        (["--board", "toy", "--baseline", "nope"], "no results of baseline 'nope'")):
        code, out, err = _export(sample, *args)
        assert code == 2 and out == "" and words in err and len(err.strip().splitlines()) == 1, err


def test_a_row_of_another_board_is_refused(tmp_path):
    per_query = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(8)}
    write_result(tmp_path / "r" / "bm25", make_results(per_query))
    other = make_results(per_query, model="dense")
    other["task"]["data_checksum"] = "1" * 64
    write_result(tmp_path / "r" / "dense", other)
    code, out, err = _export(tmp_path / "r", "--board", "toy", "--rows", "dense")
    assert code == 2 and out == ""
    assert "row 'dense' is on board 'toy @ other data', not on 'toy'" in err and "not set side by side" in err


def test_budget_rows_left_out_unless_asked_and_labelled(tmp_path):
    per_query = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(8)}
    write_result(tmp_path / "r" / "bm25", make_results(per_query))
    small = make_results(per_query, model="gdsr")
    small["model"]["budget"] = "preset=cpu-small"
    write_result(tmp_path / "r" / "gdsr", small)
    code, out, err = _export(tmp_path / "r", "--board", "toy", "--format", "markdown")
    assert code == 0 and "gdsr" not in out and "1 reduced-budget row(s) left out" in err
    code, out, err = _export(tmp_path / "r", "--board", "toy", "--rows", "gdsr")
    assert code == 2 and "ran a reduced budget (preset=cpu-small)" in err
    code, out, err = _export(tmp_path / "r", "--board", "toy", "--format", "markdown", "--include-budget")
    assert code == 0 and "gdsr (reduced budget: preset=cpu-small)" in out and "not the models' figures" in out


def _stard_result(root, corpus_size: int, name: str = "bm25", shift: float = 0.0):
    from statbench.tasks.stard import Stard

    labels = [m.label for m in Stard.measures]
    per_query = {f"q{i}": {m: 0.5 + shift + (i % 7) / 100 for m in labels} for i in range(1543)}
    qids = sorted(per_query)
    folds = {f"fold-{k + 1}": qids[k::5] for k in range(5)}
    results = make_results(per_query, task="stard", measures=labels, splits=folds, model=name)
    results["measures"] = [{"label": m.label, "ir_measure": m.ir_measure} for m in Stard.measures]
    results["task"]["corpus_size"] = corpus_size
    write_result(root / name, results)


@pytest.mark.parametrize("corpus_size, heading", [(55348, "Published figures (as the papers report them; same data)"),
                                                  (58279, "Published on other data: not comparable")])
def test_published_rows_are_a_section_of_their_own(tmp_path, corpus_size, heading):
    from statbench.tasks.stard import Stard

    _stard_result(tmp_path / "r", corpus_size)
    _stard_result(tmp_path / "r", corpus_size, "ql", shift=0.01)
    code, out, err = _export(tmp_path / "r", "--board", "stard", "--format", "markdown", "--measure", "R@100",
                             "--published")
    assert code == 0, err
    body = _md_rows(out)[2:]
    assert [row[0] for row in body[:2]] == ["ql", "bm25 (baseline)"]
    assert body[2] == [f"*{heading}*", ""]
    published = body[3:]
    assert len(published) == len(Stard.definition["published"])
    assert not any("**" in row[1] or "<u>" in row[1] for row in published)
    assert ["Dense\\-STARD (fine-tuned, 5-fold) (stard-2024 Table 3)", "0.9065"] in published \
        or ["Dense-STARD (fine-tuned, 5-fold) (stard-2024 Table 3)", "0.9065"] in published
    code, out, _ = _export(tmp_path / "r", "--board", "stard", "--format", "csv", "--measure", "R@100", "--published")
    read = list(csv.DictReader(io.StringIO(out)))
    assert {line["section"] for line in read[2:]} == {heading} and read[0]["section"] == ""


# --- LaTeX compiles --------------------------------------------------------------------------------


def test_latex_compiles_with_pdflatex(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    per_query = {f"q{i}": {m: 0.1 * (i % 4) + (0.05 if i < 8 else 0) for m in ("R@5", "R@10", "R@100", "nDCG@10")}
                 for i in range(16)}
    folds = {"fold-1": [f"q{i}" for i in range(0, 16, 2)], "fold-2": [f"q{i}" for i in range(1, 16, 2)]}
    write_result(tmp_path / "r" / "bm25", make_results(per_query, splits=folds))
    better = {q: {m: v + 0.2 for m, v in s.items()} for q, s in per_query.items()}
    write_result(tmp_path / "r" / "hostile", make_results(better, model=HOSTILE, splits=folds))
    write_result(tmp_path / "r" / "x", make_results(per_query, model="x → y é", splits=folds))
    code, out, err = _export(tmp_path / "r", "--board", "toy", "--format", "latex", "--output", tmp_path / "t.tex")
    assert code == 0, err
    tex = (tmp_path / "t.tex").read_text("utf-8")
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex and "$^{\\uparrow}$" in tex
    assert latex_escape(HOSTILE) in tex
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                      "\\input{t.tex}\n\\end{document}\n", encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0
    assert "Undefined control sequence" not in done.stdout and "Missing" not in done.stdout


# --- compare --format ---------------------------------------------------------------------------------


def test_compare_format_marks_b_with_the_printed_test(tmp_path):
    per_query = {f"q{i}": {m: 0.1 * (i % 4) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(30)}
    better = {q: {m: min(1.0, v + 0.1 + 0.01 * (i % 3)) for m, v in s.items()} for i, (q, s) in enumerate(per_query.items())}
    a = write_result(tmp_path / "a", make_results(per_query))
    b = write_result(tmp_path / "b", make_results(better, model="dense"))
    runner = CliRunner()
    tested = json.loads(runner.invoke(cli, ["compare", str(a), str(b), "--measure", "R@10", "--measure", "nDCG@10",
                                            "--json"]).stdout)
    result = runner.invoke(cli, ["compare", str(a), str(b), "--measure", "R@10", "--measure", "nDCG@10",
                                 "--format", "markdown"])
    assert result.exit_code == 0, result.stderr
    body = _md_rows(result.stdout)
    assert body[0] == ["system", "R@10", "nDCG@10"] and [row[0] for row in body[2:]] == ["bm25 (baseline)", "dense"]
    for i, comparison in enumerate(tested["comparisons"], 1):
        assert comparison["direction"] == 1
        assert body[3][i] == f"**{comparison['mean_system']:.4f}**↑" and body[2][i] == f"{comparison['mean_baseline']:.4f}"
    assert "Holm–Bonferroni correction over the 2 measures" in result.stdout
    read = list(csv.DictReader(io.StringIO(runner.invoke(cli, ["compare", str(a), str(b), "--measure", "R@10",
                                                               "--format", "csv"]).stdout)))
    assert float(read[1]["R@10 p"]) == tested["comparisons"][0]["p_value"]  # one measure: Holm leaves p as it is
    both = runner.invoke(cli, ["compare", str(a), str(b), "--format", "csv", "--json"])
    assert both.exit_code == 2 and "--json and --format are two outputs" in both.stderr


def test_export_command_verify_options(sample):
    # the sample's task is not installed here: with --verify every row is unverifiable, so none is
    # exported unless --allow-unverified, which marks each; the options need --verify
    code, out, err = _export(sample, "--board", "toy", "--format", "markdown", "--verify")
    assert code == 2 and "no board 'toy'" in err and out == ""
    code, out, err = _export(sample, "--board", "toy", "--format", "markdown", "--verify", "--allow-unverified")
    assert code == 0, err
    labels = [row[0] for row in _md_rows(out)[2:] if row[0] and not row[0].startswith("*")]
    assert labels and all(label.endswith("(self-reported)") for label in labels)
    code, out, err = _export(sample, "--board", "toy", "--allow-unverified")
    assert code == 2 and "go with --verify" in err
    code, out, err = _export(sample, "--board", "toy", "--verify", "--data-dir", "toy")
    assert code == 2 and "expected TASK=DIR" in err and len(err.strip().splitlines()) == 1
