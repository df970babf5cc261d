"""What the overview keeps between builds (.overview_cache): a rebuild with the record cache
reuses each row's column and the ranks, a changed result is read again, and a damaged cache
file is rebuilt, never trusted: the overview is the same each time."""

from overview_fixtures import mini_benchmark, write_mini, write_run

from statbench.leaderboard.caches.records import RecordCache
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.render import overview_cache
from statbench.leaderboard.render.overview_page import benchmark_overviews
from statbench.storage.paths import cache_root


def _figures(root):
    collected = collect(root, records=RecordCache.default())
    with mini_benchmark():
        (o,) = [o for o in benchmark_overviews(collected.boards, collected.keys) if o.benchmark.id == "mini-v1"]
    return {r.label: (r.cells, r.marks, r.ranks["all"].borda_rank, r.ranks["all"].mean_rank) for r in o.rows}


def test_a_rebuild_reuses_the_columns_and_ranks_and_gives_the_same_overview(tmp_path, monkeypatch):
    root = write_mini(tmp_path / "results")
    first = _figures(root)
    kept = sorted(p.name for p in (cache_root() / "leaderboard-overview").iterdir())
    assert len(kept) == 4  # the stard and ukstat boards' columns; the ranks of mini-v1 and of statutes-v1 (ukstat)

    def no_resample(*args, **kwargs):
        raise AssertionError("the ranks of unchanged columns are drawn again")

    monkeypatch.setattr("statbench.leaderboard.render.overview_data.aggregate_ranks", no_resample)
    assert _figures(root) == first


def test_a_changed_result_is_read_again(tmp_path):
    root = write_mini(tmp_path / "results")
    assert _figures(root)["model-c"][0][0] == 0.4
    write_run(root, "stard", "model-c", 0.9, family="dense")  # the same file, other figures
    after = _figures(root)
    assert after["model-c"][0][0] == 0.9 and after["model-c"][2] == 1


def test_a_damaged_cache_file_is_rebuilt(tmp_path):
    root = write_mini(tmp_path / "results")
    first = _figures(root)
    for path in (cache_root() / "leaderboard-overview").iterdir():
        path.write_bytes(path.read_bytes()[:-7] + b"garbage")
    assert _figures(root) == first
    assert overview_cache.ColumnCache("stard", "R@100").old  # written again, and it verifies
