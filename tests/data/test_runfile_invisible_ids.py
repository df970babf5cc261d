"""Run and qrels files whose query or document ids hold an invisible character (U+200B ZERO
WIDTH SPACE, U+2060 WORD JOINER, a soft hyphen, a control character): "d1\u200b" prints as
"d1" and never matches it, so a run would score it as non-relevant while every message
showed the right id. The readers refuse such an id with one line naming the file, the line,
the field and the character, as every task loader does (dataio.record_id)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.data.runfile import read_qrels, read_run
from statbench.errors import DataFormatError

HIDDEN = ["\u200b", "\u2060", "\u00ad", "\u200e", "\x7f", "\x1b"]


@pytest.mark.parametrize("hidden", HIDDEN)
@pytest.mark.parametrize("column", [0, 2])
def test_a_run_id_with_an_invisible_character_is_refused_naming_line_field_and_character(tmp_path, hidden, column):
    lines = [["q1", "Q0", "d1", "1", "2.0", "t"], ["q1", "Q0", "d2", "2", "1.0", "t"]]
    lines[1][column] += hidden
    path = tmp_path / "run.trec"
    path.write_text("".join(" ".join(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_run(path)
    message = str(caught.value)
    assert f"line 2, field '{'qid' if column == 0 else 'docid'}'" in message
    assert f"U+{ord(hidden):04X}" in message and "invisible" in message and "\n" not in message


@pytest.mark.parametrize("column", [0, 2])
def test_a_qrels_id_with_an_invisible_character_is_refused(tmp_path, column):
    lines = [["q1", "0", "d1", "1"], ["q1", "0", "d2", "1"]]
    lines[1][column] = "d2\u200b" if column else "q1\u200b"
    path = tmp_path / "qrels.trec"
    path.write_text("".join(" ".join(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"line 2, field '(qid|docid)'.*U\+200B ZERO WIDTH SPACE"):
        read_qrels(path)


def test_visible_non_ascii_ids_and_an_invisible_tag_are_read(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("问题1 Q0 民法典第五十四条 1 2.0 t\u200b\nq1 Q0 café 1 1.0 t\n", encoding="utf-8")
    assert read_run(path) == {"问题1": [("民法典第五十四条", 2.0)], "q1": [("café", 1.0)]}


def test_evaluate_refuses_such_a_run_with_exit_2_and_one_line(stard_dir, tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("0 Q0 民法典第五十四条 1 2.0 t\n0 Q0 民法典第五十六条\u200b 2 1.0 t\n", encoding="utf-8")
    args = ["evaluate", str(path), "--task", "stard", "--data-dir", str(stard_dir)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "line 2, field 'docid'" in result.output and "U+200B" in result.output
    assert "Traceback" not in result.output
