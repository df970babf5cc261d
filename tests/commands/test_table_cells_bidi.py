"""A label holding a bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE, U+2067 RIGHT-TO-LEFT
ISOLATE, U+200F RIGHT-TO-LEFT MARK...) reorders what follows it on the line when the table's
text is shown: ``| bm25\u202e | 0.1234 | 0.5678 |`` reads as other figures in an editor,
a terminal or a diff. Like every other control character, it is written as an escape
(``\\u202e``) in the LaTeX, Markdown and CSV tables, so a label is text and never moves a
figure. Letters and joiners that scripts need (ZWNJ, ZWJ) stay as they are."""

from __future__ import annotations

import csv
import io

import pytest

from statbench.commands.table_formats import (
    Cell,
    PaperTable,
    Section,
    TableRow,
    one_line,
    to_csv,
    to_latex,
    to_markdown,
)

BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f",
        "\u061c"]


def _table(label: str) -> PaperTable:
    return PaperTable("caption", ("R@10", "nDCG@10"), (Section(None, (TableRow(label, (Cell(0.1234), Cell(0.5678))),
                                                                         TableRow("b", (Cell(0.2), Cell(0.3))))),))


@pytest.mark.parametrize("control", BIDI)
def test_a_bidirectional_control_in_a_label_is_an_escape_in_every_format(control):
    label = f"bm25{control}x"
    escape = ascii(control)[1:-1]
    assert one_line(label) == f"bm25{escape}x"
    for text in (to_latex(_table(label)), to_markdown(_table(label))):
        assert control not in text
        assert "0.1234" in text and "0.5678" in text
    rows = list(csv.reader(io.StringIO(to_csv(_table(label)))))
    assert rows[1][1] == f"bm25{escape}x" and control not in to_csv(_table(label))


def test_a_bidirectional_control_before_a_formula_leaves_no_formula():
    rows = list(csv.reader(io.StringIO(to_csv(_table("\u202e=1+1")))))
    assert rows[1][1] == "\\u202e=1+1"


@pytest.mark.parametrize("text", ["می\u200cخواهم", "क्\u200dष", "民法典", "café"])
def test_joiners_and_letters_stay(text):
    assert one_line(text) == text
