r"""Tables for a paper: one typed table rendered as LaTeX (booktabs), GitHub Markdown or CSV.

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
- sections after the first are set apart by a rule and their heading; in LaTeX the sections
  that are not ranked (published figures) are a second ``table`` float of their own (label
  ``LABEL-published``), so each float fits a one-column article;
- LaTeX is set to fit a one-column article (:data:`COLUMN_PT`, the article class at 10pt):
  ``\small``, a narrow ``\tabcolsep``, the std in ``\scriptsize``, and row labels wrapped in
  a ``p`` column when they would not fit on one line; :func:`latex_width` estimates the width
  (pdflatex's, checked by the tests) so that a builder can choose columns that fit;
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
import math
import re
import sys
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Literal

from statbench.data.atomic import write_text
from statbench.data.checksum import text_sha256
from statbench.errors import StatbenchError

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


#: the width of a one-column article's text (``article`` at 10pt: \textwidth = 345 pt)
COLUMN_PT = 345.0
#: the default ``\label`` of a table whose builder names none
DEFAULT_LABEL = "tab:statbench"
#: what a LaTeX label may hold (``\label`` and ``\ref`` take these in every package)
_LABEL_CHARACTERS = re.compile(r"[A-Za-z0-9:.\-]+")


def check_label(label: str) -> str:
    r"""``label`` if LaTeX can use it as it is (letters, digits, ``- : .``), else refused with
    one line: a ``\label`` is not escaped (``\ref`` must spell it the same)."""
    if not _LABEL_CHARACTERS.fullmatch(label or ""):
        raise StatbenchError(f"--label {one_line(label)!r}: a LaTeX label is letters, digits, '-', ':' and '.' only "
                             "(e.g. tab:stard-results)")
    return label


#: a label body ending like a digest or a published float's suffix: a name spelt so gets a
#: digest of its own, so that it never equals a cleaned name's label or ``LABEL-published``
_DIGEST_LIKE_END = re.compile(r"(?:^|-)(?:[0-9a-f]{6}|published)$")


def label_for(prefix: str, *names: str) -> str:
    """A LaTeX label for ``names`` (a board; a task and a model): ``PREFIX-name[-name]`` with
    every run of other characters than letters, digits, ``- : .`` made one ``-``. A short
    digest of the names follows whenever the label alone could stand for other names: a
    name changed by that cleaning (``stard @ other data``:
    ``tab:statbench-stard-other-data-b7b5e2``), two names one of which holds a ``-``
    (``coliee`` + ``nocaptions-x`` and ``coliee-nocaptions`` + ``x`` would join alike), or a
    label ending like a digest or like ``-published`` (the label of a table's published
    figures): two tables never share a label."""
    cleans = [re.sub(r"[^A-Za-z0-9:.-]+", "-", name).strip("-") for name in names]
    body = "-".join(c for c in cleans if c)
    plain = all(c == n for c, n in zip(cleans, names)) and (len(names) == 1 or not any("-" in n for n in names))
    if not plain or _DIGEST_LIKE_END.search(body):
        digest = text_sha256("\0".join(names))[:6]
        body = (body + "-" if body else "") + digest
    return f"{prefix}-{body}"


def split_means_note(splits) -> str:
    """The footnote that says which mean each figure is: the mean of the split means (what
    the board shows) over several splits, never the mean over all queries pooled (the two
    differ when the splits differ in size)."""
    if len(splits) > 1:
        return (f"Each figure: the mean over the {len(splits)} splits ({', '.join(s.name for s in splits)}) of each "
                "split's mean, not the mean over all queries pooled; ± the sample standard deviation over the splits.")
    (split,) = splits
    return f"Each figure: the mean over the {split.n_queries} queries of split {split.name}."


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
    #: footnotes of this section only (in LaTeX under the float that holds it)
    notes: tuple[str, ...] = ()
    #: a section that is not ranked but stays in the runs' LaTeX float (rows of runs left out
    #: of the ranking, such as those whose card declares test queries seen); else a section
    #: that is not ranked is a float of its own (published figures)
    with_runs: bool = False


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
    label: str = field(default=DEFAULT_LABEL)

    def __post_init__(self):
        # white space at the caption's ends: Markdown's "** x **" is no bold, only asterisks
        object.__setattr__(self, "caption", str(self.caption).strip())

    def only(self, measures) -> PaperTable:
        """The same table with only the columns ``measures`` (in that order)."""
        keep = [self.measures.index(m) for m in measures]
        sections = tuple(replace(s, rows=tuple(TableRow(r.label, tuple(r.cells[i] for i in keep)) for r in s.rows))
                         for s in self.sections)
        return replace(self, measures=tuple(measures), sections=sections)

    def notes(self) -> tuple[str, ...]:
        """Every footnote: the table's, then its sections'."""
        return self.footnotes + tuple(n for s in self.sections for n in s.notes)


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
    writes (→ ± ↑ ↓ α) spelled as commands; invisible format characters as escapes
    (:func:`visible`). Other non-ASCII text is left as UTF-8 (accented
    Latin letters compile with pdflatex; a script it has no font for, such as Chinese, needs
    xelatex or the CJK package)."""
    return "".join(_LATEX.get(ch, ch) for ch in visible(text))


def visible(text: str) -> str:
    """:func:`one_line`, and every other invisible format character (a zero-width space, a
    soft hyphen, a BOM: Unicode category Cf) as an escape too (``\\u200b``), as LaTeX writes
    a label: pdflatex stops on them, and a reader could not see them."""
    return "".join(ascii(ch)[1:-1] if unicodedata.category(ch) == "Cf" else ch for ch in one_line(text))


@dataclass(frozen=True)
class _CellStyle:
    """How a format spells a figure's marks: best, second, ± std, significance marker."""

    best: str
    second: str
    plus_minus: str
    marker: int  #: index into each :data:`MARKERS` pair
    std_end: str = ""  #: closes what ``plus_minus`` opened


_LATEX_CELL = _CellStyle(r"\textbf{%s}", r"\underline{%s}", r"\,{\scriptsize$\pm$", 1, "}")
_MARKDOWN_CELL = _CellStyle("**%s**", "<u>%s</u>", " ± ", 0)


def _styled_cell(cell: Cell, rank: int | None, digits: int, style: _CellStyle) -> str:
    """One figure as a format spells it (blank when not measured, never 0)."""
    if cell.value is None:
        return ""
    text = printed(cell.value, digits)
    if rank in (1, 2):
        text = (style.best if rank == 1 else style.second) % text
    if cell.std is not None:
        text += style.plus_minus + printed(cell.std, digits) + style.std_end
    if cell.marker:
        text += MARKERS[cell.marker][style.marker]
    return text


#: widths (pt) of the ASCII characters 32-126 in ``\small`` (cmr9, cmbx9, cmti9), as pdflatex
#: measured them; a character outside ASCII is counted as :data:`_WIDE` (wider than any
#: accented letter: the estimate errs on the wide side)
_WIDTHS = {
    "r": (3.08, 2.57, 4.62, 7.71, 4.62, 7.71, 7.19, 2.57, 3.60, 3.60, 4.62, 7.19, 2.57, 3.08, 2.57, 4.62, 4.62, 4.62,
          4.62, 4.62, 4.62, 4.62, 4.62, 4.62, 4.62, 4.62, 2.57, 2.57, 7.19, 7.19, 7.19, 4.37, 7.19, 6.94, 6.55, 6.68,
          7.07, 6.29, 6.04, 7.26, 6.94, 3.34, 4.75, 7.19, 5.78, 8.48, 6.94, 7.19, 6.29, 7.19, 6.81, 5.14, 6.68, 6.94,
          6.94, 9.51, 6.94, 6.94, 5.65, 2.57, 5.00, 2.57, 5.00, 5.00, 2.57, 4.62, 5.14, 4.11, 5.14, 4.11, 2.83, 4.62,
          5.14, 2.57, 2.83, 4.88, 2.57, 7.71, 5.14, 4.62, 5.14, 4.88, 3.62, 3.65, 3.60, 5.14, 4.88, 6.68, 4.88, 4.88,
          4.11, 5.00, 2.57, 5.00, 5.00),
    "b": (3.55, 3.24, 5.56, 8.87, 5.32, 8.87, 8.28, 2.96, 4.14, 4.14, 5.32, 8.28, 2.96, 3.55, 2.96, 5.32, 5.32, 5.32,
          5.32, 5.32, 5.32, 5.32, 5.32, 5.32, 5.32, 5.32, 2.96, 2.96, 8.28, 8.28, 8.28, 5.03, 8.28, 8.04, 7.57, 7.69,
          8.16, 6.99, 6.69, 8.37, 8.32, 4.02, 5.50, 8.33, 6.40, 10.09, 8.32, 8.00, 7.27, 8.00, 7.98, 5.92, 7.41, 8.18,
          8.04, 10.99, 8.04, 8.04, 6.51, 2.96, 5.32, 2.96, 5.32, 5.32, 2.96, 5.18, 5.92, 4.73, 5.92, 4.89, 3.25, 5.32,
          5.92, 2.96, 3.25, 5.62, 2.96, 8.87, 5.92, 5.32, 5.92, 5.62, 4.39, 4.20, 4.14, 5.92, 5.62, 7.69, 5.62, 5.62,
          4.73, 5.32, 2.96, 5.32, 5.32),
    "i": (3.31, 2.83, 4.75, 7.56, 4.72, 7.56, 7.08, 2.83, 3.78, 3.78, 4.72, 7.08, 2.83, 3.31, 2.83, 4.72, 4.72, 4.72,
          4.72, 4.72, 4.72, 4.72, 4.72, 4.72, 4.72, 4.72, 2.83, 2.83, 7.19, 7.08, 7.19, 4.72, 7.08, 6.87, 6.50, 6.61,
          6.98, 6.27, 6.03, 7.15, 6.87, 3.56, 4.85, 7.10, 5.79, 8.28, 6.87, 7.08, 6.27, 7.08, 6.74, 5.19, 6.61, 6.87,
          6.87, 9.23, 6.87, 6.87, 5.67, 2.83, 5.00, 2.83, 5.00, 5.00, 2.83, 4.72, 4.25, 4.25, 4.72, 4.25, 2.83, 4.25,
          4.72, 2.83, 2.83, 4.25, 2.36, 7.56, 5.19, 4.72, 4.72, 4.25, 3.90, 3.78, 3.07, 4.96, 4.25, 6.14, 4.26, 4.49,
          3.78, 5.00, 2.83, 5.00, 5.00),
}
_WIDE = 9.3
#: the symbols :func:`latex_escape` spells as commands, as pdflatex sets them
_SYMBOL_WIDTHS = {"→": 9.25, "±": 7.19, "↑": 4.63, "↓": 4.63, "α": 5.97, "–": 4.63, "—": 9.25, "×": 7.19,
                  "·": 2.57, "…": 8.33}
#: \tabcolsep of the LaTeX tables (pt; the article class's is 6)
TABCOLSEP = 4.0
#: the estimate is within 0.2% of pdflatex's widths: 1% more errs on the wide side
_MARGIN = 1.01
_SCRIPT_DIGIT, _SCRIPT_POINT, _SCRIPT_PM, _THIN, _ARROW = 3.99, 2.22, 6.25, 1.5, 4.34


def text_width(text: str, shape: str = "r") -> float:
    r"""The width in pt pdflatex gives ``text`` (before escaping) in ``\small`` type of
    ``shape`` (``r`` roman, ``b`` bold, ``i`` italic), within a few percent, wide side."""
    table = _WIDTHS[shape]

    def width(ch: str) -> float:
        if ch in _SYMBOL_WIDTHS:
            return _SYMBOL_WIDTHS[ch]
        base = unicodedata.normalize("NFD", ch)[0]  # é: e and an accent over it
        return table[ord(base) - 32] if 32 <= ord(base) < 127 else _WIDE

    return sum(width(ch) for ch in visible(text))


def _figure_width(cell: Cell, digits: int) -> float:
    if cell.value is None:
        return 0.0
    width = text_width(printed(cell.value, digits), "b")  # bold or not: the wider
    if cell.std is not None:
        std = printed(cell.std, digits)
        width += _THIN + _SCRIPT_PM + _SCRIPT_DIGIT * (len(std) - 1) + _SCRIPT_POINT
    return width + (_ARROW if cell.marker else 0.0)


def _part_widths(table: PaperTable, sections) -> tuple[float, list[float], float]:
    r"""(natural width of the row-label column, of each measure column, of the widest
    section heading) of the tabular holding ``sections``, in pt, without \tabcolsep."""
    label = max([text_width(table.row_header)] + [text_width(r.label) for s in sections for r in s.rows])
    columns = [max([text_width(m)] + [_figure_width(r.cells[i], table.digits) for s in sections for r in s.rows])
               for i, m in enumerate(table.measures)]
    heading = max([text_width(s.heading, "i") for s in sections if s.heading] or [0.0])
    return label, columns, heading


def _floats(table: PaperTable) -> list[tuple[str, str, tuple[Section, ...], tuple[str, ...]]]:
    """(caption, label, sections, footnotes) of each float: the ranked sections with the
    table's footnotes, then (if any) the others, apart, with their own notes."""
    ranked = tuple(s for s in table.sections if s.ranked or s.with_runs)
    apart = tuple(s for s in table.sections if not (s.ranked or s.with_runs))
    floats = []
    if ranked or not apart:
        floats.append((table.caption, table.label, ranked, table.footnotes + tuple(n for s in ranked for n in s.notes)))
    if apart:
        caption = (f"{table.caption}: figures published in papers (as reported; not re-computed, never ranked "
                   "or tested)")
        floats.append((caption, f"{table.label}-published", apart, tuple(n for s in apart for n in s.notes)))
    return floats


def _label_column_width(table: PaperTable, sections) -> float | None:
    """The width (pt) of a wrapping row-label column, when labels on one line would make the
    tabular wider than :data:`COLUMN_PT`; None: one line each (an ``l`` column)."""
    label, columns, _ = _part_widths(table, sections)
    rest = sum(columns) + 2 * TABCOLSEP * (len(columns) + 1)
    room = COLUMN_PT / _MARGIN - rest
    if label <= room:
        return None
    return max(room, min(label, 90.0))


def latex_width(table: PaperTable, wrap_labels: bool = True) -> float:
    """The width (pt) of the widest tabular :func:`to_latex` writes for ``table`` (within a
    few percent, wide side): more than :data:`COLUMN_PT` does not fit a one-column article.
    ``wrap_labels=False``: the width with every row label on one line."""
    widest = 0.0
    for _, _, sections, _ in _floats(table):
        label, columns, heading = _part_widths(table, sections)
        wrap = _label_column_width(table, sections) if wrap_labels else None
        width = (label if wrap is None else wrap) + sum(columns) + 2 * TABCOLSEP * (len(columns) + 1)
        widest = max(widest, width, heading + 2 * TABCOLSEP)
    return widest * _MARGIN


#: the height of a one-column article's text (``article`` at 10pt: \textheight = 550 pt)
PAGE_PT = 550.0
#: baselines (pt) of \small (the tabular's rows), \footnotesize (footnotes), the caption
_ROW, _NOTE_LINE, _CAPTION_LINE = 11.0, 9.5, 12.0


def latex_height(table: PaperTable) -> float:
    """The height (pt) of the tallest float :func:`to_latex` writes for ``table`` (an
    estimate, within a few lines): more than :data:`PAGE_PT` does not fit a page (LaTeX
    warns "Float too large for page")."""
    tallest = 0.0
    for caption, _, sections, footnotes in _floats(table):
        wrap = _label_column_width(table, sections)
        lines = 1 + sum(bool(s.heading) for s in sections)
        for section in sections:
            for row in section.rows:
                lines += 1 if wrap is None else max(1, math.ceil(text_width(row.label) / wrap))
        rules = 2 + 5 * len(sections) + 4  # booktabs: top, a mid per section, bottom
        notes = sum(math.ceil(text_width(n) * 8 / 9 / COLUMN_PT) for n in footnotes) * _NOTE_LINE
        words = math.ceil(text_width(caption) * 10 / 9 / COLUMN_PT) * _CAPTION_LINE
        tallest = max(tallest, lines * _ROW + rules + (3 + notes if footnotes else 0) + 10 + words)
    return tallest * _MARGIN


def fit_to_column(table: PaperTable, keep: str | None = None) -> tuple[PaperTable, list[str]]:
    """``table`` with the measure columns that fit a one-column article (:func:`latex_width`
    at most :data:`COLUMN_PT`): ``keep`` (the tested measure) and then the others in their
    order while the next one fits with the row labels of the runs on one line (the published
    figures' long labels may wrap); returns the table and the measures left out, in order."""
    chosen = [keep] if keep in table.measures else []
    for measure in table.measures:
        if measure in chosen:
            continue
        trial = [m for m in table.measures if m in chosen or m == measure]
        runs = replace(table.only(trial), sections=tuple(s for s in table.only(trial).sections if s.ranked))
        if chosen and (latex_width(table.only(trial)) > COLUMN_PT or latex_width(runs, False) > COLUMN_PT):
            break
        chosen = trial
    chosen = [m for m in table.measures if m in chosen]
    return table.only(chosen), [m for m in table.measures if m not in chosen]


def _wrapped_label(text: str, width: float) -> str:
    """A row label in a ``p`` column of ``width`` pt: ragged right, and a word wider than
    the column may break after any character (else it would stick out of the column)."""
    words = visible(text).split(" ")
    out = []
    for word in words:
        if text_width(word) > width:
            out.append(r"\allowbreak{}".join(latex_escape(ch) for ch in word))
        else:
            out.append(latex_escape(word))
    return r"\raggedright\hspace{0pt}" + " ".join(out)


def _latex_float(table: PaperTable, caption: str, label: str, sections, footnotes, rank) -> list[str]:
    n = len(table.measures) + 1
    wrap = _label_column_width(table, sections)
    first = "l" if wrap is None else f"p{{{wrap:.1f}pt}}"

    def row_label(text: str) -> str:
        return latex_escape(text) if wrap is None else _wrapped_label(text, wrap)

    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\setlength{{\tabcolsep}}{{{TABCOLSEP:g}pt}}",
             r"\begin{tabular}{" + first + "r" * len(table.measures) + "}", r"\toprule",
             " & ".join([row_label(table.row_header)] + [latex_escape(m) for m in table.measures]) + r" \\",
             r"\midrule"]
    for s, section in enumerate(table.sections):
        if not any(section is x for x in sections):
            continue
        if section is not sections[0]:
            lines.append(r"\midrule")
        if section.heading:
            lines.append(rf"\multicolumn{{{n}}}{{l}}{{\textit{{{latex_escape(section.heading)}}}}} \\")
        for r, row in enumerate(section.rows):
            cells = [_styled_cell(c, rank.get((s, r, col)), table.digits, _LATEX_CELL) for col, c in enumerate(row.cells)]
            lines.append(" & ".join([row_label(row.label)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if footnotes:
        lines.append(r"\par\smallskip")
        lines.append(r"\parbox{\linewidth}{\footnotesize\raggedright")
        lines += [latex_escape(note) + r"\par" for note in footnotes]
        lines.append("}")
    lines += [rf"\caption{{{latex_escape(caption)}}}", rf"\label{{{label}}}", r"\end{table}"]
    return lines


def to_latex(table: PaperTable) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), the
    footnotes under it, then the caption and ``\\label``; the sections that are not ranked
    (published figures) in a second float after it, labelled ``LABEL-published``."""
    rank = ranks(table)
    lines = [r"% statbench table: needs \usepackage{booktabs}"]
    for caption, label, sections, footnotes in _floats(table):
        lines += _latex_float(table, caption, label, sections, footnotes, rank)
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
    if table.notes():
        lines.append("")
        lines += [markdown_escape(note) + "  " for note in table.notes()]
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
    if fmt not in FORMATS:
        raise StatbenchError(f"unknown table format {fmt!r} (formats: {', '.join(FORMATS)})")
    return {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}[fmt](table)


def write_table(text: str, output) -> None:
    """Print ``text``, or write it to ``output`` as a unit (atomic replace)."""
    if output is None:
        sys.stdout.write(text)
        return
    write_text(output, text)
