"""One rule for what every loader keeps, drops and refuses (statbench.data.dataio, issue 27 and
issue 21 §5): the same bad input given to STARD, both UK layouts, BSARD and a BEIR folder.

- a query whose text is white space only is dropped and said, naming the file and the line
  (or the item of a JSON list), never scored as a zero;
- an id (document, query, or one a judgement names) holding white space is refused with one
  line naming the file, the line (or item) and the id;
- a relevance grade beyond int64 is a data error naming the file and line."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from loader_fixtures import DOCS, LOADERS, QRELS, QUERIES, _beir, _uk_substitute


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("blank", [" ", "\t \u3000", ""])
def test_a_query_without_text_is_dropped_and_said_by_every_loader(tmp_path, loader, blank):
    write, query_file, where = LOADERS[loader]
    queries = [*QUERIES[:2], ("q3", blank)]
    data = write(tmp_path / loader, DOCS, queries, QRELS)()
    assert "q3" not in data.queries and "q3" not in data.qrels
    assert all("q3" not in split.test for split in data.all_splits())
    assert f"{query_file} {where}: query q3 has no text (empty or white space only): dropped" in data.dropped
    assert {"q1", "q2"} <= set(data.queries)


@pytest.mark.parametrize("loader, corpus_file, where", [
    ("uk-substitute", "corpus.jsonl", "line 2, field 'id'"),
    ("uk-real", "corpus_uklegislation.json", "item 1"),
    ("bsard", "articles_fr.csv", "line 3, field 'id'"),
    ("beir", "corpus.jsonl", "line 2, field '_id'"),
])
def test_a_document_id_with_white_space_names_file_line_and_id(tmp_path, loader, corpus_file, where):
    write = LOADERS[loader][0]
    docs = [DOCS[0], ("a b", DOCS[1][1]), DOCS[2]]
    with pytest.raises(DataFormatError) as err:
        write(tmp_path / loader, docs, QUERIES, [QRELS[0], ("q2", "a b", 1), QRELS[2]])()
    message = str(err.value)
    assert message.startswith(str(tmp_path / loader)) and corpus_file in message and where in message, message
    assert "id 'a b' holds white space" in message


@pytest.mark.parametrize("loader", LOADERS)
def test_a_query_id_with_white_space_names_file_line_and_id(tmp_path, loader):
    write, query_file, where = LOADERS[loader]
    queries = [QUERIES[0], QUERIES[1], ("q 3", QUERIES[2][1])]
    with pytest.raises(DataFormatError) as err:
        write(tmp_path / loader, DOCS, queries, [*QRELS[:2], ("q 3", "d3", 1)])()
    message = str(err.value)
    assert query_file in message and where in message and "id 'q 3' holds white space" in message, message


@pytest.mark.parametrize("loader, field", [("uk-real", "answers.chunk_id"), ("bsard", "article_ids"),
                                          ("beir", "corpus-id")])
def test_a_judged_id_with_white_space_is_refused(tmp_path, loader, field):
    write = LOADERS[loader][0]
    with pytest.raises(DataFormatError) as err:
        write(tmp_path / loader, DOCS, QUERIES, [*QRELS[:2], ("q3", "d 3", 1)])()
    assert f"field {field!r}" in str(err.value) and "id 'd 3' holds white space" in str(err.value)


@pytest.mark.parametrize("grade", ["9223372036854775808", "-9223372036854775809", "1" * 5000])
def test_a_beir_grade_beyond_int64_is_a_data_error(tmp_path, grade):
    load = _beir(tmp_path / "b", DOCS, QUERIES, [*QRELS[:2], ("q3", "d3", grade)])
    with pytest.raises(DataFormatError) as err:
        load()
    assert "test.tsv, line 4, field 'score'" in str(err.value) and "outside the 64-bit integer range" in str(err.value)
    assert len(str(err.value)) < 300


def test_the_largest_int64_grade_is_read(tmp_path):
    data = _beir(tmp_path / "b", DOCS, QUERIES, [*QRELS[:2], ("q3", "d3", 2 ** 63 - 1)])()
    assert data.qrels["q3"] == {"d3": 2 ** 63 - 1}


# --- through the CLI: one line, exit code 2, or a result that says what was dropped ---------------------------------

def test_uk_corpus_id_with_a_space_is_one_line_naming_file_line_and_id(tmp_path):
    root = tmp_path / "uk"
    _uk_substitute(root, [DOCS[0], ("a b", DOCS[1][1]), DOCS[2]], QUERIES, QRELS)
    result = CliRunner().invoke(cli, ["run", "--task", "ukstat", "--model", "bm25", "--data-dir", str(root),
                                      "--output", str(tmp_path / "o"), "--no-progress"])
    assert result.exit_code == 2, result.output
    error = result.output.strip().splitlines()[-1]
    assert error == (f"Error: {root / 'substitute' / 'corpus.jsonl'}, line 2, field 'id': passage id 'a b' holds "
                     "white space, which TREC files cannot hold")
    assert not (tmp_path / "o").exists()


def test_beir_whitespace_query_is_dropped_not_scored_as_zero(tmp_path):
    root = tmp_path / "b"
    _beir(root, DOCS, [*QUERIES[:2], ("q3", "   ")], QRELS)
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["run", "--task", f"beir:{root}", "--model", "bm25", "--output", str(out),
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert set(results["per_query"]) == {"q1", "q2"}
    assert "queries.jsonl line 3: query q3 has no text (empty or white space only): dropped" in \
        results["task"]["dropped"]
