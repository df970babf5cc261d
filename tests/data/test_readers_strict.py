"""Every input reader is strict and agrees with the others: malformed input (BOM, conflicting
duplicates, nulls, empty files, bad bytes, unreadable paths, non-finite scores, non-integer
grades) either reads correctly or stops with one DataFormatError naming file, line and field."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.data.dataio import (
    read_csv,
    read_json,
    read_json_list,
    read_jsonl,
    read_lines,
    read_nonblank_lines,
    read_text,
)
from statbench.errors import DataFormatError
from statbench.data.runfile import read_qrels, read_run
from statbench.tasks.bsard import read_articles, read_questions
from statbench.tasks.stard import Stard, _read_query_ids, _read_stopwords
from statbench.tasks.ukstat import (
    UkStatutes,
    read_eval_set,
    read_queries,
    read_real_corpus,
    read_substitute_corpus,
)
from statbench.data.validation import check_qrels_against_corpus

from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

LOG = logging.getLogger("test")
BOM = "\ufeff".encode()
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def located(excinfo, path, line=None, field=None, text=None) -> str:
    """The error is exactly a DataFormatError, on one line, naming file, line and field."""
    err = excinfo.value
    assert type(err) is DataFormatError
    message = str(err)
    assert "\n" not in message
    assert err.path == Path(path) and message.startswith(str(path))
    assert err.line == line, message
    assert err.field == field, message
    if line is not None:
        assert f"line {line}" in message
    if field is not None:
        assert f"field {field!r}" in message
    if text is not None:
        assert text in message, message
    return message


# --- the readers, each as "read this path" ----------------------------------------------------------------------

def _stard_corpus(path):
    return Stard._read_corpus(path, [])


def _stard_queries(path):
    return Stard._read_queries(path, [])


def _split_ids(path):
    return _read_query_ids(path, {"1": None, "2": None}, [])


def _bsard_questions(path):
    return read_questions(path, {}, {}, {}, [])


def _uk_queries(path):
    return read_queries(path, [])


def _uk_eval(path):
    return read_eval_set(path, [])


def _uk_qrels(path):
    return UkStatutes()._read_qrels(path, {"Q1": None}, [])


ARTICLE_HEADER = "id,article,code,article_no,description,law_type\n"
QUESTION_HEADER = "id,question,category,subcategory,extra_description,article_ids\n"

#: name -> (reader, a valid file's content, what an empty file is refused as)
READERS = {
    "run": (read_run, "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\n", "no run lines"),
    "qrels": (read_qrels, "q1 0 d1 1\nq1 0 d2 0\n", "no judgements"),
    "stard corpus": (_stard_corpus, '{"name": "刑法第一条", "content": "为了惩罚犯罪"}\n', "no documents"),
    "stard queries": (_stard_queries, '[{"query_id": 1, "问题": "为什么？", "match_name": ["刑法第一条"]}]',
                      "file is empty"),
    "stard stopwords": (_read_stopwords, "的\n了\n", "no stop words"),
    "stard split file": (_split_ids, "1\tquestion one\n2\tquestion two\n", "no query ids"),
    "bsard articles": (read_articles, ARTICLE_HEADER + "1,Le texte.,Code civil,1,Livre Ier,national\n", "no documents"),
    "bsard questions": (_bsard_questions, QUESTION_HEADER + "1,Une question ?,Famille,,,1\n", "no questions"),
    "uk corpus": (read_substitute_corpus, '{"id": "p1", "content": "A passage."}\n', "no documents"),
    "uk queries": (_uk_queries, '{"qid": "Q1", "query": "A question?"}\n', "no queries"),
    "uk eval set": (_uk_eval, '{"qid": "Q1", "query": "A question?", "answers": [{"chunk_id": "c1", "rel": 3}]}\n',
                    "no queries"),
    "uk real corpus": (read_real_corpus, '[{"content": "A passage.", "metadata": {"chunk_id": "c1"}}]',
                       "file is empty"),
    "uk qrels": (_uk_qrels, "Q1 0 p1 3\n", "no judgements"),
}


def write(tmp_path, name, data) -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# --- unreadable paths: one error per reader and kind, never a traceback ------------------------------------------

def _unreadable(kind: str, tmp_path: Path) -> tuple[Path, str]:
    if kind == "missing":
        return tmp_path / "absent.txt", "cannot read: file not found"
    if kind == "directory":
        path = tmp_path / "folder.txt"
        path.mkdir()
        return path, "cannot read: is a directory"
    if kind == "dangling symlink":
        path = tmp_path / "dangling.txt"
        path.symlink_to(tmp_path / "nowhere")
        return path, "cannot read: broken symbolic link"
    if kind == "symlink loop":
        (tmp_path / "a.txt").symlink_to(tmp_path / "b.txt")
        (tmp_path / "b.txt").symlink_to(tmp_path / "a.txt")
        return tmp_path / "a.txt", "cannot read: too many levels of symbolic links"
    if kind == "name too long":
        return tmp_path / ("x" * 300), "cannot read: file name too long"
    if kind == "not a directory":
        (tmp_path / "plain").write_text("x")
        return tmp_path / "plain" / "child.txt", "cannot read: a component of the path is not a directory"
    if kind == "fifo":
        path = tmp_path / "pipe.txt"
        os.mkfifo(path)
        return path, "cannot read: not a regular file"
    if kind == "permission denied":
        if IS_ROOT:
            pytest.skip("running as root: file permissions are not enforced")
        path = tmp_path / "secret.txt"
        path.write_text("q1 0 d1 1\n")
        path.chmod(0)
        return path, "cannot read: permission denied"
    raise AssertionError(kind)


UNREADABLE = ["missing", "directory", "dangling symlink", "symlink loop", "name too long", "not a directory", "fifo",
              "permission denied"]
GENERIC = {
    "read_lines": lambda p: list(read_lines(p)),
    "read_text": read_text,
    "read_jsonl": lambda p: list(read_jsonl(p)),
    "read_json": read_json,
    "read_json_list": lambda p: list(read_json_list(p)),
    "read_csv": lambda p: list(read_csv(p)),
}


@pytest.mark.parametrize("kind", UNREADABLE)
@pytest.mark.parametrize("reader", [*READERS, *GENERIC])
def test_unreadable_path_is_one_error_naming_it(tmp_path, reader, kind):
    read = READERS[reader][0] if reader in READERS else GENERIC[reader]
    path, reason = _unreadable(kind, tmp_path)
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, text=reason)


# --- empty and blank-only files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("content", ["", "\n  \n\t\r\n"], ids=["empty", "blank-only"])
@pytest.mark.parametrize("reader", list(READERS))
def test_empty_or_blank_file_is_refused_naming_it(tmp_path, reader, content):
    read, _, what = READERS[reader]
    path = write(tmp_path, "data.txt", content)
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, text=what)


@pytest.mark.parametrize("reader", ["bsard articles", "bsard questions"])
def test_csv_with_header_only_is_empty(tmp_path, reader):
    read, valid, what = READERS[reader]
    path = write(tmp_path, "data.csv", valid.splitlines(keepends=True)[0] + "\n")
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, text=what)


@pytest.mark.parametrize("reader", ["stard queries", "uk real corpus"])
def test_empty_json_list_is_refused(tmp_path, reader):
    path = write(tmp_path, "data.json", " [ ]\n")
    with pytest.raises(DataFormatError) as err:
        READERS[reader][0](path)
    located(err, path, text="the list is empty")


def test_generic_line_readers_leave_emptiness_to_the_caller(tmp_path):
    path = write(tmp_path, "blank.txt", "\n \n")
    assert list(read_jsonl(path)) == [] and list(read_csv(path)) == [] and list(read_nonblank_lines(path)) == []
    assert [n for n, _ in read_lines(path)] == [1, 2]
    with pytest.raises(DataFormatError) as err:
        read_json(path)
    located(err, path, text="file is empty (no JSON value)")


# --- BOM: dropped at the start, the same in every reader; an error anywhere else ---------------------------------

@pytest.mark.parametrize("reader", list(READERS))
def test_leading_bom_is_not_data(tmp_path, reader):
    read, valid, _ = READERS[reader]
    plain = read(write(tmp_path, "plain.txt", valid))
    assert read(write(tmp_path, "bom.txt", BOM + valid.encode())) == plain


def test_bom_in_qrels_and_run_keeps_the_first_judgement(tmp_path):
    qrels = read_qrels(write(tmp_path, "qrels.tsv", BOM + b"q1 0 d1 1\nq2 0 d2 1\n"))
    assert qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}}
    run = read_run(write(tmp_path, "run.trec", BOM + b"q1 Q0 d1 1 1.0 t\n"))
    assert run == {"q1": [("d1", 1.0)]}


@pytest.mark.parametrize("reader", ["run", "qrels", "stard corpus", "stard stopwords", "stard split file",
                                    "bsard articles", "uk corpus", "uk queries", "uk qrels"])
def test_bom_on_a_later_line_is_an_error(tmp_path, reader):
    read, valid, _ = READERS[reader]
    lines = valid.encode().splitlines(keepends=True)
    path = write(tmp_path, "joined.txt", lines[0] + BOM + lines[-1])
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, line=2, text="byte order mark (U+FEFF)")


def test_bom_inside_a_json_file_is_an_error(tmp_path):
    path = write(tmp_path, "q.json", BOM + b'[\n{"a": 1},\n' + BOM + b'{"a": 2}]')
    with pytest.raises(DataFormatError) as err:
        read_json(path)
    located(err, path, line=3, text="byte order mark")


# --- invalid UTF-8: the line of the bad byte, in every reader ----------------------------------------------------

@pytest.mark.parametrize("reader", list(READERS))
def test_invalid_utf8_names_the_line(tmp_path, reader):
    read, valid, _ = READERS[reader]
    data = valid.encode()
    if data.count(b"\n") >= 1 and not data.endswith(b"]"):
        lines = data.splitlines(keepends=True)
        data = lines[0] + (b"x\xff" + lines[-1] if len(lines) > 1 else b"\xe9\n")
        bad_line = 2
    else:  # a one-line JSON list
        data = data.replace(b"[", b"[\n\n", 1).replace(b"1", b"\xe9", 1)
        bad_line = 3
    path = write(tmp_path, "bad.txt", data)
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, line=bad_line, text="not valid UTF-8")


def test_utf16_file_says_so(tmp_path):
    path = write(tmp_path, "qrels.tsv", "q1 0 d1 1\n".encode("utf-16"))
    with pytest.raises(DataFormatError) as err:
        read_qrels(path)
    located(err, path, line=1, text="looks like UTF-16")


@pytest.mark.parametrize("reader", [read_qrels, read_json])
def test_utf16_without_bom_is_caught_by_its_nul_bytes(tmp_path, reader):
    path = write(tmp_path, "data.txt", '\n{"q1": 1}\n'.encode("utf-16-le"))
    with pytest.raises(DataFormatError) as err:
        reader(path)
    # "\n" is b"\n\x00" in UTF-16-LE: line 2 starts with the NUL
    located(err, path, line=2, text="NUL byte at character 0 of the line: a binary or UTF-16 file?")


def test_invalid_utf8_in_a_json_file_names_line_and_byte(tmp_path):
    path = write(tmp_path, "side.json", b'{\n  "a": "ok",\n  "b": "\xc3("\n}\n')
    with pytest.raises(DataFormatError) as err:
        read_json(path)
    located(err, path, line=3, text="at byte 8 of the line")


# --- runs: scores, ranks, duplicates ------------------------------------------------------------------------------

@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
def test_non_finite_score_is_refused(tmp_path, score):
    path = write(tmp_path, "run.trec", f"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 {score} t\n")
    with pytest.raises(DataFormatError) as err:
        read_run(path)
    located(err, path, line=2, field="score", text=f"score {score!r} is not a finite number")


@pytest.mark.parametrize("rank", ["1.0", "one", "1e0", "", "\u0661"])
def test_rank_must_be_an_integer(tmp_path, rank):
    if not rank:
        pytest.skip("an empty column is a column-count error")
    path = write(tmp_path, "run.trec", f"q1 Q0 d1 {rank} 2.0 t\n")
    with pytest.raises(DataFormatError) as err:
        read_run(path)
    located(err, path, line=1, field="rank", text=f"rank {rank!r} is not an integer")


@pytest.mark.parametrize("second_score", ["2.0", "1.0"], ids=["same score", "other score"])
def test_duplicate_run_line_names_both_lines(tmp_path, second_score):
    path = write(tmp_path, "run.trec", f"q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 2.0 t\nq1 Q0 d1 2 {second_score} t\n")
    with pytest.raises(DataFormatError) as err:
        read_run(path)
    located(err, path, line=3, field="docid", text="query 'q1' lists document 'd1' twice (lines 1 and 3)")


def test_empty_run_can_be_allowed_explicitly(tmp_path):
    path = write(tmp_path, "run.trec", "\n")
    assert read_run(path, allow_empty=True) == {}
    with pytest.raises(DataFormatError):
        read_run(path, allow_empty=False)


def test_harness_cached_split_runs_may_be_empty(isolated_cache):
    # a model that found nothing for any query of a split leaves an empty cached run; the
    # runner reads its own verified split runs with allow_empty=True, every other reader refuses
    path = isolated_cache / "runs" / "stard" / "key" / "run.trec"
    path.parent.mkdir(parents=True)
    path.write_text("")
    assert read_run(path, allow_empty=True) == {}
    with pytest.raises(DataFormatError, match="no run lines"):
        read_run(path)


# --- qrels: grades and duplicates ---------------------------------------------------------------------------------

@pytest.mark.parametrize("grade", ["1.0", "x", "1e0", "\u0663", "1_0", "true"])
def test_grade_must_be_an_integer(tmp_path, grade):
    path = write(tmp_path, "qrels.tsv", f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(DataFormatError) as err:
        read_qrels(path)
    located(err, path, line=2, field="relevance", text=f"relevance {grade!r} is not an integer")


def test_negative_and_signed_grades_are_integers(tmp_path):
    assert read_qrels(write(tmp_path, "qrels.tsv", "q1 0 d1 -1\nq1 0 d2 +2\n")) == {"q1": {"d1": -1, "d2": 2}}


def test_conflicting_judgements_name_both_lines(tmp_path):
    path = write(tmp_path, "qrels.tsv", "q1 0 d1 1\nq1 0 d2 1\nq2 0 d1 1\nq1 0 d1 2\n")
    with pytest.raises(DataFormatError) as err:
        read_qrels(path)
    located(err, path, line=4, field="relevance",
            text="query 'q1', document 'd1' is judged twice with different grades: 1 on line 1, 2 on line 4")


def test_identical_repeated_judgement_is_counted_once_and_noted(tmp_path):
    path = write(tmp_path, "qrels.tsv", "q1 0 d1 1\nq1 0 d2 2\nq1 0 d1 1\nq1 1 d2 2\n")
    notes: list[str] = []
    assert read_qrels(path, notes=notes) == {"q1": {"d1": 1, "d2": 2}}
    assert notes == ["qrels.tsv: 2 line(s) repeat an earlier judgement exactly and were counted once "
                     "(e.g. line 3 = line 1, line 4 = line 2)"]
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 2}}  # no list given: numerically harmless, accepted


def test_uk_substitute_qrels_conflict_and_repeat(tmp_path):
    root = tmp_path / "uk"
    write_jsonl(root / "corpus.jsonl", [{"id": "p1", "content": "alpha"}, {"id": "p2", "content": "beta"}])
    write_jsonl(root / "queries.jsonl", [{"qid": "Q1", "query": "alpha?"}])
    (root / "qrels.tsv").write_text("Q1\t0\tp1\t3\nQ1\t0\tp2\t1\nQ1\t0\tp1\t3\n")
    data = UkStatutes().load(root, LOG)
    assert data.qrels == {"Q1": {"p1": 3, "p2": 1}}
    assert data.dropped == ["qrels.tsv: 1 line(s) repeat an earlier judgement exactly and were counted once "
                            "(e.g. line 3 = line 1)"]
    (root / "qrels.tsv").write_text("Q1\t0\tp1\t3\nQ1\t0\tp2\t1\nQ1\t0\tp1\t2\n")
    with pytest.raises(DataFormatError) as err:
        UkStatutes().load(root, LOG)
    located(err, root / "qrels.tsv", line=3, field="relevance", text="3 on line 1, 2 on line 3")


# --- the UK evaluation set ----------------------------------------------------------------------------------------

def _eval_line(answers, **extra):
    return json.dumps({"qid": "Q1", "query": "A question?", "answers": answers, **extra}) + "\n"


def test_uk_eval_set_conflicting_answers_are_refused(tmp_path):
    answers = [{"chunk_id": "c1", "rel": 3}, {"chunk_id": "c2", "rel": 2}, {"chunk_id": "c1", "rel": 1}]
    first = _eval_line([{"chunk_id": "c9", "rel": 1}]).replace("Q1", "Q0")
    path = write(tmp_path, "eval.jsonl", first + _eval_line(answers))
    with pytest.raises(DataFormatError) as err:
        read_eval_set(path, [])
    located(err, path, line=2, field="answers.rel",
            text="passage 'c1' is judged twice with different grades: rel 3 in answers[0], rel 1 in answers[2]")


def test_uk_eval_set_identical_answers_are_counted_once_and_noted(tmp_path):
    answers = [{"chunk_id": "c1", "rel": 3}, {"chunk_id": "c1", "rel": 3}, {"chunk_id": 7, "rel": 1}]
    path = write(tmp_path, "eval.jsonl", _eval_line(answers))
    dropped: list[str] = []
    _, qrels, _ = read_eval_set(path, dropped)
    assert qrels == {"Q1": {"c1": 3, "7": 1}}  # a numeric id is fine
    assert dropped == ["eval.jsonl: 1 answer(s) repeat an earlier judgement of the same query exactly and were "
                       "counted once (e.g. line 1 answers[1] = answers[0])"]


@pytest.mark.parametrize("answer, field, text", [
    ({"chunk_id": None, "rel": 3}, "answers.chunk_id", "answers[0]: expected a string or number id, found null"),
    ({"chunk_id": True, "rel": 3}, "answers.chunk_id", "found a boolean"),
    ({"chunk_id": ["c1"], "rel": 3}, "answers.chunk_id", "found a list"),
    ({"chunk_id": "c1", "rel": True}, "answers.rel", "grade True is not 1, 2 or 3"),
    ({"chunk_id": "c1", "rel": 3.0}, "answers.rel", "grade 3.0 is not 1, 2 or 3"),
    ({"chunk_id": "c1", "rel": "3"}, "answers.rel", "grade '3' is not 1, 2 or 3"),
    ({"chunk_id": "c1", "rel": None}, "answers.rel", "grade None is not 1, 2 or 3"),
])
def test_uk_eval_set_bad_answer_values(tmp_path, answer, field, text):
    path = write(tmp_path, "eval.jsonl", "\n" + _eval_line([answer]))
    with pytest.raises(DataFormatError) as err:
        read_eval_set(path, [])
    located(err, path, line=2, field=field, text=text)


# --- nulls and wrong types where text or ids are required ----------------------------------------------------------

@pytest.mark.parametrize("reader, line, field, text", [
    ("stard corpus", '{"name": "刑法第一条", "content": null}', "content", "expected a string, found null"),
    ("stard corpus", '{"name": null, "content": "x"}', "name", "expected a string or number id, found null"),
    ("stard corpus", '{"name": ["a"], "content": "x"}', "name", "found a list"),
    ("stard corpus", '{"name": "a", "content": 5}', "content", "expected a string, found a number"),
    ("uk corpus", '{"id": null, "content": "x"}', "id", "expected a string or number id, found null"),
    ("uk corpus", '{"id": false, "content": "x"}', "id", "found a boolean"),
    ("uk corpus", '{"id": {"a": 1}, "content": "x"}', "id", "found an object"),
    ("uk corpus", '{"id": NaN, "content": "x"}', "id", "found a non-finite number"),
    ("uk corpus", '{"id": "p9", "content": null}', "content", "expected a string, found null"),
    ("uk queries", '{"qid": null, "query": "x"}', "qid", "found null"),
    ("uk queries", '{"qid": "Q9", "query": null}', "query", "expected a string, found null"),
    ("uk queries", '{"qid": "Q9", "query": "x", "legislation_type": ["a"]}', "legislation_type", "found a list"),
    ("uk eval set", '{"qid": "Q9", "query": null, "answers": []}', "query", "found null"),
    ("uk eval set", '{"qid": "Q9", "query": "x", "answers": null}', "answers", "answers must be a list, found null"),
])
def test_null_or_wrong_type_in_jsonl_is_refused(tmp_path, reader, line, field, text):
    read, valid, _ = READERS[reader]
    path = write(tmp_path, "data.jsonl", valid + line + "\n")
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, line=valid.count("\n") + 1, field=field, text=text)


def test_numeric_ids_are_converted(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"id": 0, "content": "zero"}\n{"id": 12, "content": "x"}\n')
    corpus = read_substitute_corpus(path)
    assert list(corpus) == ["0", "12"]
    queries, _ = read_queries(write(tmp_path, "q.jsonl", '{"qid": 3, "query": "x"}\n'), [])
    assert list(queries) == ["3"]


@pytest.mark.parametrize("item, field, text", [
    ({"query_id": None, "问题": "x", "match_name": ["刑法第一条"]}, "query_id", "found null"),
    ({"query_id": 1, "问题": None, "match_name": ["刑法第一条"]}, "问题", "expected a string, found null"),
    ({"query_id": 1, "问题": "x", "match_name": None}, "match_name",
     "article name: expected a string or number id, found null"),
    ({"query_id": 1, "问题": "x", "match_name": ["刑法第一条", None]}, "match_name", "found null"),
    ({"query_id": 1, "问题": "x", "match_name": [{"a": 1}]}, "match_name", "found an object"),
    ({"query_id": True, "问题": "x", "match_name": []}, "query_id", "found a boolean"),
    (["not", "an", "object"], None, "expected a JSON object, found a list"),
])
def test_stard_queries_nulls_name_item_line_and_field(tmp_path, item, field, text):
    good = {"query_id": 0, "问题": "为什么？", "match_name": ["刑法第一条"]}
    path = write(tmp_path, "queries.json", "[\n" + json.dumps(good, ensure_ascii=False) + ",\n\n"
                 + json.dumps(item, ensure_ascii=False) + "\n]\n")
    with pytest.raises(DataFormatError) as err:
        Stard._read_queries(path, [])
    located(err, path, line=4, field=field, text="item 1: ")
    assert text in str(err.value) and "(the item starts on line 4)" in str(err.value)


@pytest.mark.parametrize("item, field, text", [
    ({"content": None, "metadata": {"chunk_id": "c2"}}, "content", "expected a string, found null"),
    ({"content": "x", "metadata": {"chunk_id": None}}, "metadata.chunk_id", "found null"),
    ({"content": "x", "metadata": None}, "metadata.chunk_id", "missing field"),
    ("just text", None, "expected a JSON object, found a string"),
])
def test_uk_real_corpus_nulls_name_item_line_and_field(tmp_path, item, field, text):
    first = '{"content": "a", "metadata": {"chunk_id": "c1"}}'
    path = write(tmp_path, "corpus.json", "[" + first + ",\n" + json.dumps(item) + "]")
    with pytest.raises(DataFormatError) as err:
        read_real_corpus(path)
    located(err, path, line=2, field=field, text=text)


def test_content_null_never_becomes_the_text_none(stard_dir, tmp_path):
    rows = [dict(r) for r in STARD_CORPUS]
    rows[3]["content"] = None
    write_jsonl(stard_dir / "corpus.jsonl", rows)
    with pytest.raises(DataFormatError) as err:
        Stard().load(stard_dir, LOG)
    located(err, stard_dir / "corpus.jsonl", line=4, field="content", text="expected a string, found null")


# --- JSON structure -------------------------------------------------------------------------------------------------

def test_duplicate_json_key_is_refused(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"id": "p1", "content": "x"}\n{"id": "p2", "content": "y", "content": null}\n')
    with pytest.raises(DataFormatError) as err:
        read_substitute_corpus(path)
    located(err, path, line=2, field="content", text="key 'content' appears twice in one JSON object")
    path = write(tmp_path, "q.json", '[\n{"query_id": 1, "问题": "a", "match_name": [], "问题": "b"}\n]')
    with pytest.raises(DataFormatError) as err:
        Stard._read_queries(path, [])
    located(err, path, line=2, field="问题", text="appears twice")


@pytest.mark.parametrize("content, expected", [
    ('{"a": 1}', "expected a JSON list of queries, found an object"),
    ('"text"', "expected a JSON list of queries, found a string"),
    ("null", "expected a JSON list of queries, found null"),
])
def test_json_top_level_type_is_checked(tmp_path, content, expected):
    path = write(tmp_path, "queries.json", content)
    with pytest.raises(DataFormatError) as err:
        Stard._read_queries(path, [])
    located(err, path, line=1, text=expected)
    with pytest.raises(DataFormatError) as err:
        read_json(path, expect=list)
    located(err, path, line=1, text="expected a list at the top level")


@pytest.mark.parametrize("content, line, text", [
    ('[{"query_id": 1},\n{"query_id": 2}', 2, "the list is not closed"),
    ('[{"query_id": 1}\n{"query_id": 2}]', 2, "expected ',' or ']'"),
    ('[{"query_id": 1}]\n[]', 2, "extra data after the value"),
    ('[\n{"query_id": 1,}]', 2, "invalid JSON"),
])
def test_broken_json_list_names_the_line(tmp_path, content, line, text):
    path = write(tmp_path, "queries.json", content)
    with pytest.raises(DataFormatError) as err:
        list(read_json_list(path))
    located(err, path, line=line, text=text)


@pytest.mark.parametrize("line, text", [
    ("[1, 2]", "expected a JSON object, found list"),
    ('{"id": "p2", "content": "y"} {"x": 1}', "extra data after the value"),
    ('{"id": "p2", "content": "y"', "invalid JSON"),
])
def test_jsonl_line_that_is_not_one_object(tmp_path, line, text):
    path = write(tmp_path, "c.jsonl", '{"id": "p1", "content": "x"}\n' + line + "\n")
    with pytest.raises(DataFormatError) as err:
        read_substitute_corpus(path)
    located(err, path, line=2, text=text)


# --- CSV -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("row, found", [("2,Texte,Code civil,2,Livre Ier\n", 5),
                                        ("2,Texte,Code,2,Livre,national,x\n", 7)])
def test_csv_row_with_wrong_field_count_is_refused(tmp_path, row, found):
    read, valid, _ = READERS["bsard articles"]
    path = write(tmp_path, "articles_fr.csv", valid + "\n" + row)
    with pytest.raises(DataFormatError) as err:
        read(path)
    located(err, path, line=4, text=f"expected 6 fields as in the header, found {found}")


def test_csv_duplicate_header_and_quoted_newlines(tmp_path):
    path = write(tmp_path, "a.csv", "id,article,id\n1,x,2\n")
    with pytest.raises(DataFormatError) as err:
        list(read_csv(path))
    located(err, path, line=1, text="column(s) id appear twice in the header")
    path = write(tmp_path, "b.csv", BOM + ("\n" + ARTICLE_HEADER + '1,"deux\n\nlignes",Code,1,,national\n').encode())
    rows = list(read_csv(path, required=("id", "article")))
    assert rows == [(5, {"id": "1", "article": "deux\n\nlignes", "code": "Code", "article_no": "1",
                         "description": "", "law_type": "national"})]


def test_bsard_article_listed_twice_is_one_judgement(tmp_path):
    queries, qrels = {}, {}
    read_questions(write(tmp_path, "q.csv", QUESTION_HEADER + '1,Q ?,Famille,,,"4, 4,5"\n'), queries, qrels, {}, [])
    assert qrels == {"1": {"4": 1, "5": 1}}


# --- STARD sources ------------------------------------------------------------------------------------------------

def test_stard_article_listed_twice_is_one_judgement(tmp_path):
    names = ["民法典第五十四条", "民法典 第五十四条"]  # the same article (whitespace is insignificant)
    queries = [{"query_id": 0, "问题": "谁？", "match_name": names}]
    path = write(tmp_path, "queries.json", json.dumps(queries, ensure_ascii=False))
    dropped: list[str] = []
    _, qrels = Stard._read_queries(path, dropped)
    assert qrels == {"0": {"民法典第五十四条": 1}} and dropped == []


def test_stard_duplicate_query_id_names_both_items(tmp_path):
    queries = [{"query_id": 0, "问题": "a", "match_name": []}, {"query_id": "0", "问题": "b", "match_name": []}]
    path = write(tmp_path, "queries.json", "[\n" + ",\n".join(json.dumps(q) for q in queries) + "\n]")
    with pytest.raises(DataFormatError) as err:
        Stard._read_queries(path, [])
    located(err, path, line=3, field="query_id", text="item 1: duplicate query_id '0' (first in item 0)")


def test_stard_empty_article_name_is_reported(tmp_path):
    queries = [{"query_id": 0, "问题": "谁？", "match_name": ["民法典第五十四条", " "]}]
    path = write(tmp_path, "queries.json", json.dumps(queries, ensure_ascii=False))
    dropped: list[str] = []
    _, qrels = Stard._read_queries(path, dropped)
    assert qrels == {"0": {"民法典第五十四条": 1}}
    assert dropped == ["queries.json item 0: query 0 lists an empty article name (ignored)"]


def test_official_split_file_listing_a_query_twice_is_refused(tmp_path):
    path = write(tmp_path, "dev.query.txt", "1\tone\n2\ttwo\n1\tone again\n")
    with pytest.raises(DataFormatError) as err:
        _split_ids(path)
    located(err, path, line=3, field="id", text="query id '1' listed twice (first on line 1)")


def test_stopwords_are_read_like_every_other_file(stard_dir, tmp_path):
    (stard_dir / "cn_stopwords.txt").write_bytes(BOM + "的\n\n  了 \r\n".encode())
    assert Stard().load(stard_dir, LOG).stopwords == frozenset({"的", "了"})
    (stard_dir / "cn_stopwords.txt").write_bytes(b"\xff\n")
    with pytest.raises(DataFormatError) as err:
        Stard().load(stard_dir, LOG)
    located(err, stard_dir / "cn_stopwords.txt", line=1, text="not valid UTF-8")


def test_stard_loader_with_bom_everywhere_gives_the_same_data(stard_dir):
    before = Stard().load(stard_dir, LOG)
    for name in ("corpus.jsonl", "queries.json"):
        path = stard_dir / name
        path.write_bytes(BOM + path.read_bytes())
    after = Stard().load(stard_dir, LOG)
    assert (after.corpus, after.queries, after.qrels) == (before.corpus, before.queries, before.qrels)


# --- nothing left to score ------------------------------------------------------------------------------------------

def test_no_query_left_with_a_relevant_document_is_an_error(tmp_path):
    qrels = {"q1": {"x": 1}, "q2": {"y": 1, "z": 0}}
    with pytest.raises(DataFormatError) as err:
        check_qrels_against_corpus(qrels, {"a": None}, {"q1": None, "q2": None}, tmp_path / "qrels.tsv", [])
    located(err, tmp_path / "qrels.tsv", text="none of the 2 query(ies) has a relevant document in the corpus "
                                               "(3 of 3 judgement(s) point to documents not in the corpus")


def test_every_query_dropped_is_an_error(stard_dir):
    (stard_dir / "queries.json").write_text(json.dumps([{"query_id": 1, "问题": " ", "match_name": ["刑法第一条"]}]))
    with pytest.raises(DataFormatError) as err:
        Stard().load(stard_dir, LOG)
    located(err, stard_dir / "queries.json", text="no queries left to score: every query was dropped (e.g. "
                                                   "queries.json item 0: query 1 has no text (empty or white space only): dropped)")


def test_stard_with_the_wrong_corpus_stops(stard_dir):
    write_jsonl(stard_dir / "corpus.jsonl", [{"name": "别的法第一条", "content": "无关"}])
    with pytest.raises(DataFormatError) as err:
        Stard().load(stard_dir, LOG)
    located(err, stard_dir / "queries.json", text="is this the right corpus?")


# --- end to end: exit code 2, one line on stderr, no traceback, no output ----------------------------------------

GOOD_RUN = "0 Q0 民法典第五十四条 1 2.0 x\n0 Q0 刑法第一条 2 1.0 x\n1 Q0 民法典第五十六条 1 1.0 x\n"


def cli_fails(args, *expected):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def evaluate(run: Path, stard_dir: Path, *extra):
    return ["evaluate", str(run), "--task", "stard", "--data-dir", str(stard_dir), "--json", *extra]


def test_evaluate_reads_a_bom_run_exactly_like_a_plain_one(stard_dir, tmp_path):
    plain = write(tmp_path, "plain.trec", GOOD_RUN)
    bom = write(tmp_path, "bom.trec", BOM + GOOD_RUN.encode())
    scores = []
    for path in (plain, bom):
        result = CliRunner().invoke(cli, evaluate(path, stard_dir), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        scores.append(json.loads(result.stdout)["per_query"])
    assert scores[0] == scores[1] and scores[0]["0"]["MRR@10"] == 1.0


@pytest.mark.parametrize("content, expected", [
    ("0 Q0 民法典第五十四条 1 nan x\n", ["run.trec, line 1, field 'score'", "not a finite number"]),
    ("0 Q0 民法典第五十四条 1 inf x\n", ["line 1, field 'score'"]),
    ("0 Q0 刑法第一条 1 2.0 x\n0 Q0 刑法第一条 2 1.0 x\n", ["line 2, field 'docid'", "(lines 1 and 2)"]),
    ("0 Q0 刑法第一条 1.5 2.0 x\n", ["line 1, field 'rank'"]),
    ("", ["run.trec: no run lines"]),
    ("\n\n", ["run.trec: no run lines"]),
    (b"0 Q0 \xe5\x88 1 2.0 x\n", ["line 1: not valid UTF-8"]),
])
def test_evaluate_refuses_a_malformed_run(stard_dir, tmp_path, content, expected):
    run = write(tmp_path, "run.trec", content)
    cli_fails(evaluate(run, stard_dir), str(run), *expected)


def test_evaluate_refuses_a_pipe(stard_dir, tmp_path):
    run = tmp_path / "run.trec"
    os.mkfifo(run)
    cli_fails(evaluate(run, stard_dir), f"{run}: cannot read: not a regular file")


@pytest.mark.parametrize("damage, expected", [
    (lambda d: write_jsonl(d / "corpus.jsonl", [*STARD_CORPUS[:2], {"name": "刑法第二条", "content": None}]),
     "corpus.jsonl, line 3, field 'content': expected a string, found null"),
    (lambda d: (d / "corpus.jsonl").write_text(""), "corpus.jsonl: no documents"),
    (lambda d: (d / "corpus.jsonl").write_text("\n \n"), "corpus.jsonl: no documents"),
    (lambda d: (d / "queries.json").write_text("[]"), "queries.json: no queries"),
    (lambda d: (d / "queries.json").write_bytes(b"[\n" + json.dumps(STARD_QUERIES[0]).encode() + b",\n\xff]"),
     "queries.json, line 3: not valid UTF-8"),
    (lambda d: (d / "cn_stopwords.txt").write_text("\n"), "cn_stopwords.txt: no stop words"),
])
def test_run_stops_on_malformed_data_without_output(stard_dir, tmp_path, damage, expected):
    damage(stard_dir)
    out = tmp_path / "out"
    cli_fails(["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir), "--output", str(out),
               "--no-progress"], expected)
    assert not out.exists()


def test_run_with_a_bom_in_every_file_scores_like_without(stard_dir, tmp_path):
    plain = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                     "--output", str(tmp_path / "a"), "--no-progress"], catch_exceptions=False)
    for name in ("corpus.jsonl", "queries.json"):
        (stard_dir / name).write_bytes(BOM + (stard_dir / name).read_bytes())
    bom = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                   "--output", str(tmp_path / "b"), "--no-progress"], catch_exceptions=False)
    assert plain.exit_code == bom.exit_code == 0, bom.output
    assert (tmp_path / "a" / "run.trec").read_text() == (tmp_path / "b" / "run.trec").read_text()


def test_subprocess_evaluate_prints_one_line_and_exits_2(stard_dir, tmp_path):
    run = write(tmp_path, "run.trec", "0 Q0 刑法第一条 1 NaN x\n")
    code = "import sys; from statbench.commands.cli import cli; sys.argv[0] = 'statbench'; cli()"
    proc = subprocess.run([sys.executable, "-c", code, *evaluate(run, stard_dir)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"Error: {run}, line 1, field 'score': score 'NaN' is not a finite number"]
    assert proc.stdout == ""


def test_block_decoding_gives_what_decoding_line_by_line_gives(tmp_path, monkeypatch):
    """read_lines and read_jsonl decode a block of lines at once; on every input, in blocks of
    any size, they give exactly the lines, objects and first error (its line) that decoding
    and parsing one line at a time gives."""
    import random

    import statbench.data.dataio as dataio

    def lines_one_by_one(path):
        with open(path, "rb") as handle:
            for lineno, raw in enumerate(handle, start=1):
                yield lineno, dataio._decode_line(Path(path), raw, lineno)

    def jsonl_one_by_one(path):
        for lineno, line in lines_one_by_one(path):
            if line.strip():
                obj = dataio._loads(Path(path), line.rstrip("\r\n"), line=lineno)
                if not isinstance(obj, dict):
                    raise DataFormatError(path, f"expected a JSON object, found {type(obj).__name__}", lineno)
                dataio.require_fields(Path(path), lineno, obj, ("a",))
                yield lineno, obj

    def outcome(reader, path):
        try:
            return list(reader(path))
        except DataFormatError as exc:
            return str(exc), exc.line, exc.field

    pieces = [b'{"a": 1}', '{"a": "中文—"}'.encode(), b"\n", b"\r\n", b" ", BOM, b"\x00", b"\xff", b"\xe4\xb8",
              b'{"a":1,"a":2}', b"[1]", b'{"b":1}', b"\t", b'{"a": NaN}', b'  {"a": 2}  ', b'{"a":1} x', b'{"a"',
              "\u2028".encode(), "\u3000".encode()]
    rng = random.Random(15)
    path = tmp_path / "data.jsonl"
    for trial in range(600):
        path.write_bytes(b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))))
        monkeypatch.setattr(dataio, "_LINE_CHUNK", rng.choice([1, 2, 5, 64, 1 << 20]))
        assert outcome(read_lines, path) == outcome(lines_one_by_one, path)
        assert outcome(lambda p: read_jsonl(p, required=("a",)), path) == outcome(jsonl_one_by_one, path)
