"""Rows placed from the heads of records validated by earlier builds (leaderboard/collect/rowheads.py):
a rebuild never loads the records of a board whose inputs did not change, the site is the one
a full build writes, and a head is never trusted beyond the file state it was made from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from statbench.errors import StatbenchError
from statbench.leaderboard.caches.records import RecordCache
from statbench.leaderboard.collect import rowheads
from statbench.leaderboard.collect import rows as collect_rows
from statbench.leaderboard.collect.identity import budget, identity
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.collect.rows import HeadRow, Row, row_head
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import make_results, reranker_record, write_result
from statbench.results.record import Results, read_results


def _scores(value: float, n: int = 6) -> dict:
    return {f"q{i}": {m: min(1.0, value + i / 100) for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(n)}


def _result(root: Path, folder: str, value: float, task: str = "toy", **options) -> Path:
    results = make_results(_scores(value), task=task, model=options.pop("model", folder), **options)
    return write_result(root / task / folder, results, f"q0 Q0 d0 1 1.0 {folder}\n")


def _boards(root: Path) -> None:
    for i, task in enumerate(("toy", "other")):
        _result(root, "bm25", 0.3 + i / 10, task=task)
        _result(root, "ql", 0.4 + i / 10, task=task)
        _result(root, "dense", 0.2 + i / 10, task=task, reranker=reranker_record("cross-encoder"))


def _tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _count_loads(monkeypatch) -> list[Path]:
    loaded: list[Path] = []
    real = rowheads.load_record  # called by a head row, where it is imported
    monkeypatch.setattr(collect_rows, "load_record", lambda entry: loaded.append(entry.path) or real(entry))
    return loaded


def test_a_rebuild_loads_only_the_records_of_the_changed_board(tmp_path, monkeypatch):
    root = tmp_path / "results"
    _boards(root)
    build_site(root, tmp_path / "site")
    loaded = _count_loads(monkeypatch)
    assert build_site(root, tmp_path / "site").rendered == [] and loaded == []  # nothing changed: nothing loaded
    _result(root, "colbert", 0.7, task="toy")
    report = build_site(root, tmp_path / "site")
    assert report.rendered == ["toy"]
    assert loaded and all(path.parts[-3] == "toy" for path in loaded)  # other's rows: placed, never loaded
    assert sorted({path.parts[-2] for path in loaded}) == ["bm25", "dense", "ql"]  # colbert was read, not loaded
    monkeypatch.undo()
    full = build_site(root, tmp_path / "full")
    assert _tree(tmp_path / "site") == _tree(tmp_path / "full")
    assert (report.problems, report.notes, report.rows) == (full.problems, full.notes, full.rows)


def test_rows_from_heads_are_the_rows_from_records(tmp_path):
    root = tmp_path / "results"
    _boards(root)
    _result(root, "tiny", 0.5, task="toy", model="dsr", params={"preset": "cpu-small"})
    first = collect(root, records=RecordCache(tmp_path / "records"))
    again = collect(root, records=RecordCache(tmp_path / "records"))
    assert list(again.boards) == list(first.boards) and again.keys == first.keys
    for name, rows in again.boards.items():
        for row, before in zip(rows, first.boards[name], strict=True):
            assert isinstance(row, HeadRow) and type(before) is Row
            assert (row.key, row.identity, row.path, row.board, row.task, row.corpus_size, row.run_path, row.created) \
                == (before.key, before.identity, before.path, before.board, before.task, before.corpus_size,
                    before.run_path, before.created)
            assert row.results == before.results  # loaded when asked for: the same record
            assert Row.board.fget(row) == row.board  # the head's board is the record's
    dsr = next(r for r in again.boards["toy"] if r.model.name == "dsr")
    head = row_head(dsr.results)
    assert identity(head) == identity(dsr.results) and budget(head) == budget(dsr.results)


def test_a_head_file_that_does_not_verify_is_not_used(tmp_path, monkeypatch):
    root = tmp_path / "results"
    _boards(root)
    collect(root, records=RecordCache(tmp_path / "records"))
    (heads_file,) = (tmp_path / "records" / "heads").glob("*.pickle")
    raw = bytearray(heads_file.read_bytes())
    raw[-4] ^= 0xFF
    heads_file.write_bytes(bytes(raw))
    again = collect(root, records=RecordCache(tmp_path / "records"))
    assert not any(isinstance(r, HeadRow) for rows in again.boards.values() for r in rows)
    third = collect(root, records=RecordCache(tmp_path / "records"))  # the heads file was written anew
    assert all(isinstance(r, HeadRow) for rows in third.boards.values() for r in rows)


def test_a_changed_file_is_read_again_never_placed_from_an_old_head(tmp_path):
    root = tmp_path / "results"
    _boards(root)
    collect(root, records=RecordCache(tmp_path / "records"))
    path = root / "toy" / "ql" / "results.json"
    data = json.loads(path.read_text("utf-8"))
    data["created"] = "2031-01-01T00:00:00+00:00"
    path.write_text(json.dumps(data), encoding="utf-8")
    rows = collect(root, records=RecordCache(tmp_path / "records")).boards["toy"]
    ql = next(r for r in rows if r.path == path)
    assert type(ql) is Row and ql.created == "2031-01-01T00:00:00+00:00"


def test_a_record_entry_gone_is_validated_again_from_its_unchanged_file(tmp_path):
    root = tmp_path / "results"
    _boards(root)
    first = collect(root, records=RecordCache(tmp_path / "records"))
    rows = collect(root, records=RecordCache(tmp_path / "records")).boards["toy"]
    for entry in (tmp_path / "records").glob("??/*.pickle"):
        entry.unlink()
    expected = Results.from_json(read_results(rows[0].path))
    assert rows[0].results == expected == first.boards["toy"][0].results


def test_a_file_changed_after_its_row_was_placed_stops_the_build(tmp_path):
    root = tmp_path / "results"
    _boards(root)
    collect(root, records=RecordCache(tmp_path / "records"))
    rows = collect(root, records=RecordCache(tmp_path / "records")).boards["toy"]
    for entry in (tmp_path / "records").glob("??/*.pickle"):
        entry.unlink()
    data = rows[0].path.read_bytes()
    stat = rows[0].path.stat()
    changed = data.replace(b'"created": "2024-', b'"created": "2025-', 1)  # same size, other bytes
    assert changed != data and len(changed) == len(data)
    rows[0].path.write_bytes(changed)
    os.utime(rows[0].path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # its size and times as they were
    with pytest.raises(StatbenchError, match=r"results\.json changed while the leaderboard was being built"):
        rows[0].results


def test_a_few_new_heads_go_beside_the_big_file_which_is_not_written_again(tmp_path):
    from types import SimpleNamespace

    from statbench.leaderboard.collect.rowheads import Heads

    records = RecordCache(tmp_path / "records")
    cache = SimpleNamespace(hits=0)

    def entry(i):
        return SimpleNamespace(name=f"e{i:05d}", cache=cache)

    heads = Heads(records, tmp_path / "results")
    for i in range(2000):
        heads.learn(entry(i), f"head {i}")
    heads.save()
    big = heads.file.stat()
    assert not heads.added_file.exists()
    # 10 more files: the small file only
    heads = Heads(records, tmp_path / "results")
    for i in range(2010):
        assert heads.get(entry(i)) == (f"head {i}" if i < 2000 else None)
        heads.learn(entry(i), f"head {i}")
    heads.save()
    assert heads.added_file.exists() and (heads.file.stat().st_ino, heads.file.stat().st_mtime_ns) == \
        (big.st_ino, big.st_mtime_ns)
    # both are read; 10 files gone: nothing to write (their heads are harmless: never used again)
    heads = Heads(records, tmp_path / "results")
    assert all(heads.get(entry(i)) == f"head {i}" for i in range(10, 2010))
    heads.save()
    assert heads.file.stat().st_mtime_ns == big.st_mtime_ns
    # many new ones: the big file written anew with this build's heads, the small one gone
    heads = Heads(records, tmp_path / "results")
    for i in range(3000):
        heads.learn(entry(i), f"head {i}")
    heads.save()
    assert not heads.added_file.exists()
    again = Heads(records, tmp_path / "results")
    assert len(again.known) == 3000 and again.known["e02999"] == "head 2999"
