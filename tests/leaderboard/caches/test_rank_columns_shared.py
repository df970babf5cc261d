"""The rank columns' file (leaderboard/caches/rankcolumns.py) holds one tuple of query ids for the
rows of one query order, and each tuple is checked once when read: an entry whose ids are not
all text is still read again from its row, whichever rows share the file."""

from __future__ import annotations

import pickle

import numpy as np

from statbench.leaderboard.caches import rankcolumns
from statbench.leaderboard.caches.rankcolumns import RankColumns
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
