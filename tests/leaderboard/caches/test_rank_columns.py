"""Rows' scores on a board's ranked measure kept between builds (leaderboard/caches/rankcolumns.py):
a rebuild reads the scores of the rows it has not ranked before only, gives the ranks a
build from nothing gives, and a damaged or ill-shaped kept entry is read again; rows of one query
order share one tuple of query ids in the file, checked once when read."""

from __future__ import annotations

import pickle
import re

import numpy as np

from statbench.leaderboard.caches import rankcolumns
from statbench.leaderboard.caches.rankcolumns import RankColumns
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import write_many
from statbench.storage.cache_files import read_pickled_dict, write_framed


class _Row:
    def __init__(self, key, digest, scores):
        self.key, self.queries_sha256, self._scores = key, digest, scores
        self.reads = 0

    def query_table(self):
        return None

    def query_scores(self, label):
        self.reads += 1
        return dict(self._scores)


def test_a_row_is_read_once_then_kept_by_its_scores_digest(tmp_path):
    row = _Row("a", "d1", {"q2": 0.5, "q1": 0.25})
    first = RankColumns("board", "R@10")
    qids, values = first.scored(row)
    assert qids == ("q2", "q1") and list(values) == [0.5, 0.25] and first.read == 1
    first.save()
    reads = row.reads
    again = RankColumns("board", "R@10")
    found = again.scored(row)
    assert row.reads == reads and again.read == 0
    assert found[0] == ("q2", "q1") and list(found[1]) == [0.5, 0.25]
    # other scores are another digest: read, never the kept ones
    changed = _Row("a", "d2", {"q1": 0.0, "q2": 1.0})
    assert list(again.scored(changed)[1]) == [0.0, 1.0] and again.read == 1


def test_no_scores_is_kept_as_none(tmp_path):
    row = _Row("a", "d1", {})
    kept = RankColumns("board", "R@10")
    assert kept.scored(row) is None
    kept.save()
    assert RankColumns("board", "R@10").scored(row) is None and row.reads == 1


def test_an_ill_shaped_kept_entry_is_read_again():
    row = _Row("a", "d1", {"q1": 0.5, "q2": 0.25})
    kept = RankColumns("board", "R@10")
    # a file that verifies but holds entries of the wrong shape (three scores for two queries, ints)
    write_framed(kept.file, rankcolumns._MAGIC, pickle.dumps({"d1": (("q1", "q2"), np.array([1.0, 1.0, 1.0]))}))
    again = RankColumns("board", "R@10")
    assert list(again.scored(row)[1]) == [0.5, 0.25] and again.read == 1
    write_framed(kept.file, rankcolumns._MAGIC, pickle.dumps({"d1": (("q1", "q2"), np.array([1, 1]))}))
    assert list(RankColumns("board", "R@10").scored(row)[1]) == [0.5, 0.25]


def _ranks(site):
    html = (site / "task-toy.html").read_text("utf-8")
    return re.findall(r'<tbody class="row[^"]*" data-key="([^"]+)".*?<td class="rank">(.*?)</td>', html, re.DOTALL)


def test_a_rebuild_reads_only_new_rows_and_ranks_as_from_nothing(tmp_path, monkeypatch):
    results = tmp_path / "results"
    write_many(results, 20)
    build_site(results, tmp_path / "site", page_size=50)
    write_many(tmp_path / "more", 21)
    (results / "r0020").mkdir()
    for file in (tmp_path / "more" / "r0020").iterdir():
        (results / "r0020" / file.name).write_bytes(file.read_bytes())
    log = tmp_path / "reads"  # the ranks are computed in a fork: each read noted in a file
    real = rankcolumns.scored_queries

    def noted(row, measure, tables=None):
        with log.open("a") as out:
            out.write(row.key + "\n")
        return real(row, measure, tables)

    monkeypatch.setattr(rankcolumns, "scored_queries", noted)
    build_site(results, tmp_path / "site", page_size=50)
    assert len(log.read_text().split()) == 1  # the new row's scores, the 20 others' kept
    log.unlink()
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh"))
    build_site(results, tmp_path / "fresh-site", page_size=50)
    assert len(log.read_text().split()) == 21
    assert _ranks(tmp_path / "site") == _ranks(tmp_path / "fresh-site") and len(_ranks(tmp_path / "site")) == 21


def test_rows_of_one_order_share_one_tuple_in_the_file():
    rows = [_Row(k, f"d{k}", {"q1": 0.1 * i, "q2": 0.2}) for i, k in enumerate("abc")]
    kept = RankColumns("board", "R@10")
    for row in rows:
        kept.scored(row)
    kept.save()
    back = read_pickled_dict(rankcolumns._MAGIC, kept.file)
    assert back["da"][0] is back["db"][0] is back["dc"][0] == ("q1", "q2")
    again = RankColumns("board", "R@10")
    assert [list(again.scored(r)[1]) for r in rows] == [[0.0, 0.2], [0.1, 0.2], [0.2, 0.2]] and again.read == 0


def test_an_entry_with_ids_that_are_not_text_is_read_again_after_a_good_one():
    good, bad = _Row("a", "d1", {"q1": 0.5, "q2": 0.25}), _Row("b", "d2", {"q1": 0.75, "q2": 1.0})
    kept = RankColumns("board", "R@10")
    shared = ("q1", "q2")
    write_framed(kept.file, rankcolumns._MAGIC, pickle.dumps({
        "d1": (shared, np.array([0.5, 0.25])), "d2": (("q1", 2), np.array([9.0, 9.0]))}))
    again = RankColumns("board", "R@10")
    assert list(again.scored(good)[1]) == [0.5, 0.25] and good.reads == 0
    qids, values = again.scored(bad)
    assert qids == ("q1", "q2") and list(values) == [0.75, 1.0] and bad.reads == 1 and again.read == 1
    assert again.scored(good)[0] is qids  # the ids read again share the kept tuple of that order
