"""The overview rows' cells markup kept between builds (render/overview_rows.py): the first page
is the same whether they are rendered or kept, a row whose figures changed is rendered again,
and a kept entry that is not a row's cells, or a file that does not verify, is never used."""

from __future__ import annotations

import orjson
import pytest
from overview_fixtures import mini_benchmark, write_mini, write_run

from statbench.leaderboard.caches.records import RecordCache
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.render import overview_rows
from statbench.leaderboard.render.index_page import overview_sections
from statbench.leaderboard.render.templating import jinja_environment
from statbench.storage.cache_files import read_framed, write_framed
from statbench.storage.paths import cache_root


@pytest.fixture
def rendered(monkeypatch):
    """The labels of the rows whose cells were rendered (not kept)."""
    labels: list[str] = []

    class Spy:
        def __init__(self, template):
            self.template = template

        def render(self, r):
            labels.append(r["label"])
            return self.template.render(r=r)

    original = overview_rows.with_cells

    def spying(env, benchmarks):
        class Env:
            def get_template(self, name):
                return Spy(env.get_template(name))

        return original(Env(), benchmarks)

    monkeypatch.setattr("statbench.leaderboard.render.index_page.with_cells", spying)
    return labels


def _sections(root) -> str:
    collected = collect(root, records=RecordCache.default())
    with mini_benchmark():
        html, _ = overview_sections(jinja_environment(), collected.boards, collected.keys,
                                    {name: name for name in collected.boards})
    return html


def _files():
    return sorted(p for p in (cache_root() / "leaderboard-overview-rows").iterdir() if p.is_file())


def test_kept_cells_give_the_same_page(tmp_path, rendered):
    root = write_mini(tmp_path / "results")
    first = _sections(root)
    assert rendered and '<td class="missing">' in first  # a task a configuration did not run
    count = len(rendered)
    rendered.clear()
    assert _sections(root) == first
    assert rendered == []
    assert len(_files()) == first.count('<section class="overview" id="benchmark-')  # one file per benchmark shown
    assert count == first.count("<tr data-family=")


def test_a_row_whose_figures_changed_is_rendered_again(tmp_path, rendered):
    root = write_mini(tmp_path / "results")
    _sections(root)
    rendered.clear()
    write_run(root, "stard", "model-c", 0.9, family="dense")
    after = _sections(root)
    assert rendered and all(label.startswith("model-c") for label in rendered)
    assert "0.9000" in after or "0.900" in after


@pytest.mark.parametrize("damage", ["not markup", "a number", "no cell end"])
def test_a_kept_entry_that_is_not_cells_is_rendered_again(tmp_path, rendered, damage):
    root = write_mini(tmp_path / "results")
    first = _sections(root)
    for file in _files():
        magic = overview_rows.OverviewCells.magic
        kept = orjson.loads(read_framed(magic, file)[1])
        bad = {"not markup": "<script>alert(1)</script>", "a number": 7, "no cell end": "<td>x"}[damage]
        write_framed(file, magic, orjson.dumps(dict.fromkeys(kept, bad)))
    rendered.clear()
    assert _sections(root) == first
    assert rendered  # rendered again, and kept again
    rendered.clear()
    assert _sections(root) == first and rendered == []


def test_a_kept_file_that_does_not_verify_is_not_used(tmp_path, rendered):
    root = write_mini(tmp_path / "results")
    first = _sections(root)
    for file in _files():
        data = file.read_bytes()
        file.write_bytes(data.replace(b"<td>", b"<td>EVIL", 1))
    rendered.clear()
    assert _sections(root) == first
    assert rendered
