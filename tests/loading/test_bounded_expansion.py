"""One line of a data file can never make a loader allocate without bound (issue 33 §8):
every range, repeat or nesting a reader expands is bounded by the data it describes, and
anything else is one line naming the file and the line.

The hostile cases that used to allocate without bound run in a child process under an
address-space limit (``RLIMIT_AS``), so a regression fails the test instead of taking the
machine down."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import time

import pytest

from statbench.errors import DataFormatError
from statbench.loading.splits import kfold_assignment, kfold_splits
from statbench.tasks.belgian import split_description
from statbench.tasks.coliee import Coliee
from coliee_fixtures import CODE, coliee_dir, pair, write_year, year_file  # noqa: F401 - the fixture

LOG = logging.getLogger("test")
#: the child's address space: far above what a load of these fixtures needs, far below the
#: gigabytes an expanded range takes
LIMIT_BYTES = 1 << 30


def run_limited(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter whose address space is capped at :data:`LIMIT_BYTES`."""
    prelude = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({LIMIT_BYTES}, {LIMIT_BYTES}))\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)


def code_file(coliee_dir, extra: str):
    path = coliee_dir / "text" / "civil_code_en-1to724-2.txt"
    path.write_text(CODE + extra, encoding="utf-8")
    return path


# --- COLIEE: "Articles A to B  Deleted" ---------------------------------------------------


def test_a_deleted_range_of_a_billion_articles_is_refused_under_a_memory_cap(coliee_dir):
    code_file(coliee_dir, "Articles 180 to 999999999  Deleted\n")
    child = run_limited(f"""
        import logging
        from statbench.errors import DataFormatError
        from statbench.tasks.coliee import Coliee
        try:
            Coliee().load({str(coliee_dir)!r}, logging.getLogger("test"))
        except DataFormatError as exc:
            print("refused:", exc)
    """)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.startswith("refused: "), child.stdout
    assert ("civil_code_en-1to724-2.txt, line 28: the deleted range 180 to 999999999 follows the last article and "
            "names 999999820 articles, more than the 6 articles of the file") in child.stdout


@pytest.mark.parametrize("extra, message", [
    # a range that runs over the next article: that article is a duplicate of a deleted one
    ("Articles 180 to 999999999  Deleted\nArticle 181  Text.\n",
     r"line 29: duplicate article 181 \(first on line 28\)"),
    # ... or is followed by an article numbered below it, or by one no range can hold
    ("Articles 180 to 999999999  Deleted\nArticle 12  Text.\n",
     r"line 29: the deleted range 180 to 999999999 \(line 28\) is not below the next article, 12"),
    ("Articles 180 to 999999999  Deleted\nArticle 99999999999  Text.\n",
     r"line 29: the deleted range 180 to 999999999 \(line 28\) is not below the next article, 99999999999"),
    # a range that starts below what was read already
    ("Articles 170 to 999999999  Deleted\n", r"line 28: article 176 is deleted here but already read on line 24"),
    ("Articles 1 to 3  Deleted\n", r"line 28: article 1 is deleted here but already read on line 5"),
    ("Articles 2 to 999999999  Deleted\n", r"line 28: article 4 is deleted here but already read on line 11"),
    ("Articles 100 to 150  Deleted\n",
     r"line 28: the deleted range 100 to 150 does not follow the articles before it \(article 179 on line 27\)"),
    # numbers no article has; int() of more than 4,300 digits would even raise ValueError
    ("Articles 180 to " + "9" * 5000 + "  Deleted\n",
     r"line 28: cannot read the deleted range 180 to 999999999999\.\.\. \(5000 digits\) \(more than 9 digits\)"),
    ("Articles 180 to 1000000000  Deleted\n",
     r"line 28: cannot read the deleted range 180 to 1000000000 \(more than 9"),
    ("Articles 180 to 0190  Deleted\n", r"line 28: cannot read the deleted range 180 to 0190"),
])
def test_a_deleted_range_is_bounded_by_the_articles_around_it(coliee_dir, extra, message):
    code_file(coliee_dir, extra)
    with pytest.raises(DataFormatError, match=message) as caught:
        Coliee().load(coliee_dir, LOG)
    assert "\n" not in str(caught.value)


def test_a_range_within_its_bounds_is_read_and_never_expanded(coliee_dir):
    code_file(coliee_dir, "Articles 180 to 185  Deleted\nArticle 186  Text of article 186.\n"
                          "Articles 187 through 192  Deleted\n")
    data = Coliee().load(coliee_dir, LOG)
    assert "civil_code_en-1to724-2.txt line 28: Articles 180 to 185 (6 articles) deleted: not in the corpus" \
        in data.dropped
    assert "civil_code_en-1to724-2.txt line 30: Articles 187 through 192 (6 articles) deleted: not in the corpus" \
        in data.dropped
    assert "186" in data.corpus and "180" not in data.corpus
    # a statement quoting a deleted article names the line that deleted it
    write_year(coliee_dir, "R05", year_file("R05", [pair("R05-1-A", ["183"], "A deleted article.")]))
    with pytest.raises(DataFormatError, match=r"relevant article 183 is deleted \(line 28 of civil_code"):
        Coliee().load(coliee_dir, LOG)
    write_year(coliee_dir, "R05", year_file("R05", [pair("R05-1-A", ["192"], "A deleted article.")]))
    with pytest.raises(DataFormatError, match=r"relevant article 192 is deleted \(line 30 of civil_code"):
        Coliee().load(coliee_dir, LOG)


def test_deletions_are_looked_up_without_expanding_the_ranges():
    from statbench.tasks.coliee import Deletions

    deleted = Deletions()
    deleted.single["208"] = 3
    deleted.ranges += [(38, 84, 10), (300, 999999999, 40)]
    assert deleted["38"] == 10 and deleted["84"] == 10 and deleted["208"] == 3 and deleted["5000000"] == 40
    for absent in ("37", "85", "299", "1000000000", "038", "38-2", "٣٨", "9" * 5000):
        assert absent not in deleted
    assert len(deleted) == 1 + 47 + 999999700


# --- k-fold splits: the number of folds ---------------------------------------------------


def test_more_folds_than_queries_costs_the_queries_only_under_a_memory_cap():
    child = run_limited("""
        from statbench.loading.splits import kfold_assignment
        print(sorted(kfold_assignment(["3", "1", "2"], 10 ** 12, 7).items()))
    """)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.strip() == str(sorted(kfold_assignment(["3", "1", "2"], 3, 7).items()))


def test_more_folds_than_queries_gives_the_same_non_empty_folds():
    ids = [str(i) for i in range(7)]
    assert kfold_assignment(ids, 10, 42) == {name: fold for name, fold in kfold_assignment(ids, 10, 42).items()}
    assert all(kfold_assignment(ids, 10, 42).values()) and len(kfold_assignment(ids, 10, 42)) == 7
    assert [s.test for s in kfold_splits(kfold_assignment(ids, 10, 42))] == \
        [tuple(f) for f in kfold_assignment(ids, 10, 42).values()]
    assert kfold_assignment(ids, 3, 42) == {
        name: fold for name, fold in kfold_assignment(ids, 3, 42).items() if fold}
    with pytest.raises(ValueError, match="k must be a whole number >= 1"):
        kfold_assignment(ids, 0, 1)


# --- JSON nesting, and a quadratic split of BSARD/LLeQA headings ----------------------------


def test_deeply_nested_json_is_one_line_for_every_json_reader(tmp_path):
    from statbench.data.dataio import read_json, read_json_list, read_jsonl

    deep = "[" * 200_000 + "]" * 200_000
    jsonl, whole, listed = tmp_path / "a.jsonl", tmp_path / "a.json", tmp_path / "l.json"
    jsonl.write_text('{"_id": "1", "text": "t"}\n{"x": ' + deep + "}\n", encoding="utf-8")
    whole.write_text(deep, encoding="utf-8")
    listed.write_text('[{"id": 1},\n' + deep + "]\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"a\.jsonl, line 2: JSON nested too deeply"):
        list(read_jsonl(jsonl))
    with pytest.raises(DataFormatError, match=r"a\.json: JSON nested too deeply"):
        read_json(whole)
    with pytest.raises(DataFormatError, match=r"l\.json, line 2: JSON nested too deeply"):
        list(read_json_list(listed))


def test_a_heading_string_of_a_million_spaces_splits_in_linear_time():
    # the old pattern (\s* before the separator) was tried from every space: 20,000 spaces
    # took 4 s, a million would take hours; here the whole case takes milliseconds
    start = time.process_time()
    assert split_description("Livre 1" + " " * 1_000_000 + "x") == ["Livre 1" + " " * 1_000_000 + "x"]
    assert split_description(", " * 200_000 + "Titre 2") == [", " * 199_998 + ",", "Titre 2"]
    assert time.process_time() - start < 60  # a bound against hanging, not a benchmark
    assert split_description("Livre 1, Titre 2 , chapitre 3;Section 4 | paragraphe 5 › Sous-section 6") == [
        "Livre 1", "Titre 2", "chapitre 3", "Section 4", "paragraphe 5", "Sous-section 6"]
    assert split_description("Titre I, des personnes, Chapitre II") == ["Titre I, des personnes", "Chapitre II"]


def test_bsard_questions_listing_an_article_range_are_not_expanded(tmp_path):
    """BSARD's article_ids is a comma-separated list of ids, never a range: "1-99999999" is
    one id (not in the corpus: the judgement is dropped and said), never 99,999,999 ids."""
    from statbench.tasks.bsard import read_questions

    path = tmp_path / "questions_fr_test.csv"
    path.write_text("id,question,category,subcategory,extra_description,article_ids\n"
                    "1,Une question ?,c,s,e,\"1-99999999,2\"\n", encoding="utf-8")
    queries, qrels, categories, dropped = {}, {}, {}, []
    assert read_questions(path, queries, qrels, categories, dropped) == ["1"]
    assert qrels == {"1": {"1-99999999": 1, "2": 1}}
    json.dumps(qrels)  # plain data
