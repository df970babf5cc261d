"""What names a row's kept overview column (.overview_cache.ColumnCache): its record's state AND
its key, since the label reads the row's identity (for a result that recorded no defaults,
the installed plugin's): the same file under another identity is not given the old label."""

from __future__ import annotations

from types import SimpleNamespace

from statbench.leaderboard.render.overview_cache import ColumnCache


class _Row:
    def __init__(self, key: str, mean: float):
        self.key, self.entry_name = key, "entry-of-the-same-file-state"
        self.results = SimpleNamespace(aggregate={"R@100": SimpleNamespace(mean=mean)})
        self.reads = 0

    def query_table(self):  # no per-query table: the scores are read as a dict
        return None

    def query_scores(self, label):
        self.reads += 1
        return {"q1": 0.5, "q2": 1.0}


def test_the_same_record_under_another_identity_is_not_given_the_old_label():
    first = ColumnCache("board", "R@100")
    row = _Row("key-a", 0.75)
    assert first.column(row, lambda r: "bm25 (k1=0.9)")[::3] == (0.75, "bm25 (k1=0.9)")
    first.save()
    kept = ColumnCache("board", "R@100")
    again = _Row("key-a", 0.75)
    assert kept.column(again, lambda r: "never asked")[3] == "bm25 (k1=0.9)" and again.reads == 0
    other = _Row("key-b", 0.75)  # the plugin's defaults changed: another identity, another key
    assert ColumnCache("board", "R@100").column(other, lambda r: "bm25")[3] == "bm25" and other.reads == 1
