"""A paper table's caption in Markdown is ``**caption**``: a caption with white space at either
end (``--caption " Results "``) gave ``** Results **``, which GitHub shows as literal
asterisks, not bold. The caption is set without that white space (in every format)."""

from __future__ import annotations

from statbench.commands.table_formats import Cell, PaperTable, Section, TableRow, to_latex, to_markdown


def _table(caption: str) -> PaperTable:
    return PaperTable(caption, ("R@10",), (Section(None, (TableRow("bm25", (Cell(0.5),)),)),), label="tab:t")


def test_a_caption_with_white_space_at_its_ends_is_still_bold_in_markdown():
    assert to_markdown(_table("  Results on STARD \t")).splitlines()[0] == "**Results on STARD**"


def test_a_caption_with_white_space_at_its_ends_is_set_without_it_in_latex():
    assert r"\caption{Results on STARD}" in to_latex(_table(" Results on STARD  "))
