"""Tables for a paper: one typed table rendered as LaTeX (booktabs), GitHub Markdown or CSV.

The builders (``statbench leaderboard export``, ``statbench compare --format``) say what is
in the table; this module only says how it is written, the same way for each:

- figures printed with :data:`DIGITS` decimals (as the board prints them); a figure that was
  not measured is a blank cell, never 0;
- per measure column, the best figure of the ranked sections is bold and the second best
  underlined, judged on the figures *as printed* (two figures that print alike are tied,
  and every tied best is bold, every tied second underlined: dense ranking); a second is
  marked only when at least three figures are ranked (of two, the second is the last);
- ``mean ± std`` where a row has a std (folds); the CSV has a ``M std`` column instead;
- a significance marker after a figure (↑ better / ↓ worse than the baseline), explained by
  the footnotes the builder gives; the CSV has the adjusted p-value as a number instead;
- sections after the first are set apart by a rule and their heading;
- every label is escaped for the format (LaTeX's special characters, Markdown's punctuation
  and HTML), and control characters and bidirectional controls (U+202E...: they would show
  the figures after them reversed) are shown as escapes: a label is text, never markup;
- in the CSV every text cell (labels, headings, measure names) goes through
  :func:`csv_text`: one that a spreadsheet would run as a formula (its first character,
  after any leading whitespace, ``=``, ``+``, ``-``, ``@``, a tab or CR, or a full-width or
  small form of one) is prefixed with ``'`` (OWASP's rule); a text that is a plain number
  stays as written, and the figures are numbers, never prefixed.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

FORMATS = ("latex", "markdown", "csv")
TableFormat = Literal["latex", "markdown", "csv"]
#: decimals printed (the board's precision)
DIGITS = 4
#: marker -> (Markdown, LaTeX): plain LaTeX math, no package beyond booktabs
MARKERS = {"up": ("↑", r"$^{\uparrow}$"), "down": ("↓", r"$^{\downarrow}$")}


@dataclass(frozen=True)
class Cell:
    """One figure: its mean (None: not measured), its std over folds (None: one split),
    a significance marker (``"up"``, ``"down"`` or ``""``) and the adjusted p-value the
    marker comes from (None: not tested)."""

    value: float | None
    std: float | None = None
    marker: str = ""
    p: float | None = None


@dataclass(frozen=True)
class TableRow:
    label: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Section:
    """Rows under one heading (None: no heading, the first section). Only ``ranked``
    sections take part in bold / underline."""

    heading: str | None
    rows: tuple[TableRow, ...]
    ranked: bool = True


@dataclass(frozen=True)
class PaperTable:
    caption: str
    measures: tuple[str, ...]
    sections: tuple[Section, ...]
    footnotes: tuple[str, ...] = ()
    row_header: str = "system"
    #: whether the CSV has p-value columns (a baseline was tested against)
    tested: bool = False
    digits: int = DIGITS
    label: str = field(default="tab:statbench")


def printed(value: float, digits: int = DIGITS) -> str:
    return f"{value:.{digits}f}"


def ranks(table: PaperTable) -> dict[tuple[int, int, int], int]:
    """(section, row, column) -> 1 (best) or 2 (second best) over the ranked sections'
    figures as printed, higher is better (every measure statbench reports is)."""
    out: dict[tuple[int, int, int], int] = {}
    for col in range(len(table.measures)):
        figures = {}
        for s, section in enumerate(table.sections):
            if not section.ranked:
                continue
            for r, row in enumerate(section.rows):
                value = row.cells[col].value
                if value is not None:
                    figures[(s, r, col)] = float(printed(value, table.digits))
        distinct = sorted(set(figures.values()), reverse=True)
        wanted = distinct[:2] if len(figures) >= 3 else distinct[:1]
        for where, value in figures.items():
            if value in wanted:
                out[where] = wanted.index(value) + 1
    return out


#: control characters, line and paragraph separators, and bidirectional controls (marks,
#: embeddings, overrides, isolates: a label ``bm25\u202e`` would show the figures after it
#: on its line reversed)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """Control characters (a newline in a model name) and bidirectional controls as escapes
    (``\\n``, ``\\u202e``)."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], str(text))


# --- LaTeX ------------------------------------------------------------------------------------

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
          # braced: a cell opening with [ or * after \\ or \midrule would be read as their
          # optional argument or star (a label "[5pt]x" silently lost)
          "[": "{[}", "]": "{]}", "*": "{*}",
          "→": r"$\rightarrow$", "±": r"$\pm$", "↑": r"$\uparrow$", "↓": r"$\downarrow$",
          "α": r"$\alpha$", "–": "--", "—": "---", "×": r"$\times$", "·": r"$\cdot$", "…": r"\dots{}"}


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text: every special character (``\\ & % $ # _ { } ~ ^ < > |``)
    spelled as a command, ``[ ] *`` braced (a cell opening with one would be read as the
    argument of the ``\\\\`` or ``\\midrule`` before it), and the few symbols statbench
    writes (→ ± ↑ ↓ α) spelled as commands. Other non-ASCII text is left as UTF-8 (accented
    Latin letters compile with pdflatex; a script it has no font for, such as Chinese, needs
    xelatex or the CJK package)."""
    return "".join(_LATEX.get(ch, ch) for ch in one_line(text))


@dataclass(frozen=True)
class _CellStyle:
    """How a format spells a figure's marks: best, second, ± std, significance marker."""

    best: str
    second: str
    plus_minus: str
    marker: int  #: index into each :data:`MARKERS` pair


_LATEX_CELL = _CellStyle(r"\textbf{%s}", r"\underline{%s}", r" $\pm$ ", 1)
_MARKDOWN_CELL = _CellStyle("**%s**", "<u>%s</u>", " ± ", 0)


def _styled_cell(cell: Cell, rank: int | None, digits: int, style: _CellStyle) -> str:
    """One figure as a format spells it (blank when not measured, never 0)."""
    if cell.value is None:
        return ""
    text = printed(cell.value, digits)
    if rank in (1, 2):
        text = (style.best if rank == 1 else style.second) % text
    if cell.std is not None:
        text += style.plus_minus + printed(cell.std, digits)
    if cell.marker:
        text += MARKERS[cell.marker][style.marker]
    return text


def to_latex(table: PaperTable) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), the
    footnotes under it, then the caption."""
    n = len(table.measures) + 1
    rank = ranks(table)
    lines = [r"% statbench table: needs \usepackage{booktabs}",
             r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "r" * len(table.measures) + "}", r"\toprule",
             " & ".join([latex_escape(table.row_header)] + [latex_escape(m) for m in table.measures]) + r" \\",
             r"\midrule"]
    for s, section in enumerate(table.sections):
        if s > 0:
            lines.append(r"\midrule")
        if section.heading:
            lines.append(rf"\multicolumn{{{n}}}{{l}}{{\textit{{{latex_escape(section.heading)}}}}} \\")
        for r, row in enumerate(section.rows):
            cells = [_styled_cell(c, rank.get((s, r, col)), table.digits, _LATEX_CELL) for col, c in enumerate(row.cells)]
            lines.append(" & ".join([latex_escape(row.label)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.footnotes:
        lines.append(r"\par\smallskip")
        lines.append(r"\parbox{\linewidth}{\footnotesize\raggedright")
        lines += [latex_escape(note) + r"\par" for note in table.footnotes]
        lines.append("}")
    lines += [rf"\caption{{{latex_escape(table.caption)}}}", rf"\label{{{table.label}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


# --- Markdown ---------------------------------------------------------------------------------

#: what is syntax inside a GitHub table cell ($: math)
_MARKDOWN_PUNCTUATION = set("\\`*_[]|~$")


def markdown_escape(text: str) -> str:
    """``text`` as GitHub Markdown text inside a table cell: ASCII punctuation that is syntax
    escaped with a backslash (``\\|`` keeps a cell one cell), ``< > &`` as HTML entities (a
    model named ``<script>`` is shown, not run)."""
    out = []
    for ch in one_line(text):
        if ch in _MARKDOWN_PUNCTUATION:
            out.append("\\" + ch)
        elif ch in "<>&":
            out.append({"<": "&lt;", ">": "&gt;", "&": "&amp;"}[ch])
        else:
            out.append(ch)
    return "".join(out)




def to_markdown(table: PaperTable) -> str:
    """A GitHub-flavoured table (the caption above in bold, the footnotes below); a section
    after the first opens with a row holding its heading in italics."""
    rank = ranks(table)
    width = len(table.measures) + 1
    lines = [f"**{markdown_escape(table.caption)}**", "",
             "| " + " | ".join([markdown_escape(table.row_header)] + [markdown_escape(m) for m in table.measures]) + " |",
             "|" + ":---|" + "---:|" * len(table.measures)]
    for s, section in enumerate(table.sections):
        if section.heading:
            lines.append("| " + " | ".join([f"*{markdown_escape(section.heading)}*"] + [""] * (width - 1)) + " |")
        for r, row in enumerate(section.rows):
            cells = [_styled_cell(c, rank.get((s, r, col)), table.digits, _MARKDOWN_CELL) for col, c in enumerate(row.cells)]
            lines.append("| " + " | ".join([markdown_escape(row.label)] + cells) + " |")
    if table.footnotes:
        lines.append("")
        lines += [markdown_escape(note) + "  " for note in table.footnotes]
        lines[-1] = lines[-1].rstrip()
    return "\n".join(lines) + "\n"


# --- CSV ----------------------------------------------------------------------------------------


def csv_header(table: PaperTable) -> list[str]:
    """``section, system``, then per measure ``M``, ``M std`` (when any row has one) and
    ``M p`` (the adjusted p-value, when a baseline was tested against)."""
    with_std = any(c.std is not None for s in table.sections for r in s.rows for c in r.cells)
    header = ["section", table.row_header]
    for m in table.measures:
        header.append(m)
        if with_std:
            header.append(f"{m} std")
        if table.tested:
            header.append(f"{m} p")
    return header


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


#: what starts a formula in a spreadsheet cell (OWASP, CSV injection), once the first
#: character is NFKC-normalised (``＝`` is ``=``); U+2212 (minus sign) too
_FORMULA_START = frozenset("=+-@\t\r\n\u2212")
#: a text that is a plain decimal number (``-0.0123``, ``1e-5``) is a number, not a formula
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_text(text: str) -> str:
    """A text cell of a CSV statbench writes: control characters as escapes
    (:func:`one_line`), then prefixed with ``'`` when a spreadsheet would run it as a
    formula: its first character that is not whitespace or an invisible format character
    (a zero-width space, a BOM) is ``= + - @``, tab or CR, or a full-width or small form of
    one (``＝ ＋ － ＠ ﹦ ﹢ ﹣ ﹫``, U+2212). A plain number (``-0.0123``) is left as it is."""
    text = one_line(text)
    if _PLAIN_NUMBER.fullmatch(text):
        return text
    for ch in text:  # (a tab or CR is already an escape here, from one_line: inert)
        if ch.isspace() or unicodedata.category(ch) == "Cf":
            continue
        return "'" + text if unicodedata.normalize("NFKC", ch)[:1] in _FORMULA_START else text
    return text


def to_csv(table: PaperTable) -> str:
    """Plain numbers at full precision (no markup, no rounding), blank where not measured;
    the first column names the section of each row ("" for the first). Every text cell
    is :func:`csv_text` (never a formula)."""
    header = [csv_text(h) for h in csv_header(table)]
    with_std = any(h.endswith(" std") for h in header)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for section in table.sections:
        for row in section.rows:
            line = [csv_text(section.heading or ""), csv_text(row.label)]
            for cell in row.cells:
                line.append(_number(cell.value))
                if with_std:
                    line.append(_number(cell.std))
                if table.tested:
                    line.append(_number(cell.p))
            writer.writerow(line)
    return out.getvalue()


def render(table: PaperTable, fmt: str) -> str:
    from statbench.errors import StatbenchError

    if fmt not in FORMATS:
        raise StatbenchError(f"unknown table format {fmt!r} (formats: {', '.join(FORMATS)})")
    return {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}[fmt](table)


def write_table(text: str, output) -> None:
    """Print ``text``, or write it to ``output`` as a unit (atomic replace)."""
    if output is None:
        import sys

        sys.stdout.write(text)
        return
    from statbench.data.atomic import write_text

    write_text(output, text)
