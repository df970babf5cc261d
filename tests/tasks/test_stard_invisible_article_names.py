"""STARD keys its documents by article name (white space removed), read without the id
rule every other loader applies (dataio.record_id): a name holding an invisible character
(U+200B ZERO WIDTH SPACE, U+FEFF, a control character) became a document id that prints as
another article and never matches it, in the corpus or in a query's ``match_name``. Such a
name is refused with one line naming the file, the line or item, the field and the
character. (The real data holds U+200B in article *texts* only, which stay as they are.)"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl


def _stard(tmp_path, corpus=STARD_CORPUS, queries=STARD_QUERIES):
    root = tmp_path / "stard"
    write_jsonl(root / "corpus.jsonl", corpus)
    (root / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("0 Q0 民法典第五十四条 1 2.0 t\n1 Q0 民法典第五十六条 1 1.0 t\n", encoding="utf-8")
    return root, run


def _evaluate(root, run):
    return CliRunner().invoke(cli, ["evaluate", str(run), "--task", "stard", "--data-dir", str(root)])


@pytest.mark.parametrize("hidden", ["\u200b", "\ufeff", "\u2060", "\x1b"])
def test_an_article_name_with_an_invisible_character_is_refused(tmp_path, hidden):
    corpus = [dict(row) for row in STARD_CORPUS]
    corpus[3]["name"] = "民法典第五十六条" + hidden
    result = _evaluate(*_stard(tmp_path, corpus=corpus))
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("Error: ") and "corpus.jsonl, line 4, field 'name'" in last
    assert f"U+{ord(hidden):04X}" in last and "Traceback" not in result.output


def test_a_match_name_with_an_invisible_character_is_refused(tmp_path):
    queries = [dict(q) for q in STARD_QUERIES]
    queries[1]["match_name"] = ["民法典第五十六条\u200b"]
    result = _evaluate(*_stard(tmp_path, queries=queries))
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert "queries.json" in last and "item 1" in last and "match_name" in last and "U+200B" in last


def test_an_invisible_character_in_an_article_text_is_kept(tmp_path):
    corpus = [dict(row) for row in STARD_CORPUS]
    corpus[3]["content"] += "\n\n\u200b\n"
    result = _evaluate(*_stard(tmp_path, corpus=corpus))
    assert result.exit_code == 0, result.output
