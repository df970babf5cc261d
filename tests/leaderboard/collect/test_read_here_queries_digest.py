"""A results file validated in the build's own process (few files, or one process) keeps the
sha256 its record-cache entry gave its per-query scores: its row and its head carry it (not
taken again from a table made anew), and it is the sha256 of the scores' table as any other
path names it (a worker's entry, ``queries_digest`` of the record)."""

from __future__ import annotations

from pathlib import Path

from statbench.leaderboard.caches.records import RecordCache
from statbench.leaderboard.collect import rows as collect_rows
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.collect.rows import queries_digest
from statbench.leaderboard.sample import make_results, write_result


def _write(root: Path) -> None:
    for i, model in enumerate(("bm25", "ql", "dense")):
        scores = {f"q{j}": {"R@5": min(1.0, 0.2 + i / 10 + j / 50), "nDCG@10": (i + j) % 3 / 2} for j in range(7)}
        scores["q0"] = dict(reversed(list(scores["q0"].items())))  # the first query in another order
        write_result(root / "toy" / model, make_results(scores, task="toy", model=model, measures=("R@5", "nDCG@10")),
                     f"q0 Q0 d0 1 1.0 {model}\n")


def test_rows_validated_here_carry_their_entrys_digest(tmp_path, monkeypatch):
    _write(tmp_path / "results")
    taken = []
    real = collect_rows.queries_digest
    monkeypatch.setattr(collect_rows, "queries_digest", lambda record: taken.append(record) or real(record))
    rows = collect(tmp_path / "results", records=RecordCache(tmp_path / "records")).boards["toy"]
    assert len(rows) == 3 and not taken  # neither the heads nor the rows took it again
    for row in rows:
        assert isinstance(row.results.per_query, dict) and not hasattr(row.results.per_query, "sha256")
        assert row.queries_sha256 == queries_digest(row.results)
        assert row.entry_name is not None


def test_the_next_build_places_the_same_rows_from_their_heads(tmp_path):
    _write(tmp_path / "results")
    first = collect(tmp_path / "results", records=RecordCache(tmp_path / "records")).boards["toy"]
    again = collect(tmp_path / "results", records=RecordCache(tmp_path / "records")).boards["toy"]
    assert [r.queries_sha256 for r in again] == [r.queries_sha256 for r in first]
    assert [r.key for r in again] == [r.key for r in first]


def test_without_a_record_cache_the_digest_is_taken_from_the_record(tmp_path):
    _write(tmp_path / "results")
    rows = collect(tmp_path / "results").boards["toy"]
    assert [r.queries_sha256 for r in rows] == [queries_digest(r.results) for r in rows]
