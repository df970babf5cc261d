"""The overview (the site's first page) in headless Chromium, from file:// with the network off:
sorting a column (a missing task cell always last), the language, family and training
filters, and the ranks a language shows (issue 36 §1)."""

from __future__ import annotations

import pytest
from overview_fixtures import mini_benchmark, overview_site, write_mini

TABLE = "#ov-mini-v1"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """One site for the module's tests (each opens it in a fresh browser)."""
    root = tmp_path_factory.mktemp("overview")
    write_mini(root / "results")
    with pytest.MonkeyPatch.context() as patch, mini_benchmark():
        patch.setenv("STATBENCH_CACHE", str(root / "cache"))  # built before the per-test cache is set
        return overview_site(root / "results", root / "site")


@pytest.fixture
def overview(index, page):
    page.goto(index.as_uri())
    page.wait_for_selector("html[data-overview-ready]")
    return page


#: the columns by position: configuration, family, training, stard, ukstat, bsard, tasks run, Borda, mean rank
COLUMNS = ["label", "family", "training", "stard", "ukstat", "bsard", "run", "borda", "mean"]


def _cells(page, col: str) -> list[str]:
    """The texts of a column's cells in the visible rows, in their order."""
    return page.eval_on_selector_all(f"{TABLE} tbody tr:not([hidden])",
                                     "(trs, i) => trs.map(tr => tr.cells[i].textContent.trim())", COLUMNS.index(col))


def _labels(page) -> list[str]:
    return _cells(page, "label")


def _sort(page, col: str) -> None:
    page.click(f"{TABLE} thead th:nth-child({COLUMNS.index(col) + 1})")


def _choose(page, which: str, value: str) -> None:
    page.select_option(f".overview-filters[data-table=ov-mini-v1] select[data-filter={which}]", value)


def test_sorting_a_task_column_puts_a_missing_cell_last_both_ways(overview):
    assert _labels(overview) == ["model-a", "model-b", "model-c"]  # by Borda rank
    _sort(overview, "ukstat")  # best first
    assert _labels(overview) == ["model-b", "model-c", "model-a"]
    assert _cells(overview, "ukstat") == ["0.7000", "0.5000", ""]
    assert overview.get_attribute(f"{TABLE} thead th:nth-child(5)", "aria-sort") == "descending"
    _sort(overview, "ukstat")
    assert _labels(overview) == ["model-c", "model-b", "model-a"]  # a missing task is never a low score
    _sort(overview, "mean")  # mean rank: smallest first
    assert _cells(overview, "mean") == ["1.00 (1.00–1.00)", "1.50 (1.50–1.50)", "2.50 (2.50–2.50)"]
    assert not overview.errors and not overview.requests


def test_the_family_and_training_filters_hide_rows_and_keep_the_ranks(overview):
    _choose(overview, "family", "dense")
    assert _labels(overview) == ["model-b", "model-c"]
    assert _cells(overview, "borda") == ["1 (1–1)", "3 (3–3)"]  # ranks among all configurations
    _choose(overview, "training", "trained")
    assert _labels(overview) == ["model-b"]
    assert overview.text_content(".overview-filters[data-table=ov-mini-v1] .overview-count") == "1 of 3 configurations"
    _choose(overview, "family", "")
    _choose(overview, "training", "")
    assert _labels(overview) == ["model-a", "model-b", "model-c"]


def test_a_language_shows_its_tasks_and_the_ranks_over_them(overview):
    _choose(overview, "language", "en")
    assert _labels(overview) == ["model-b", "model-c"]  # model-a ran no English task
    visible = overview.eval_on_selector_all(f"{TABLE} thead th", "ths => ths.map(th => !th.hidden)")
    assert [c for c, shown in zip(COLUMNS, visible) if shown] == ["label", "family", "training", "ukstat", "run",
                                                                   "borda", "mean"]
    assert overview.eval_on_selector(f"{TABLE} tbody tr:not([hidden])", "tr => tr.cells[3].hidden")  # stard's cell
    assert _cells(overview, "run") == ["1/1", "1/1"]
    assert _cells(overview, "borda") == ["1 (1–1)", "2 (2–2)"]
    _choose(overview, "language", "zh")
    assert _cells(overview, "borda") == ["1 (1–1)", "2 (2–2)", "3 (3–3)"]
    _choose(overview, "language", "all")
    assert _cells(overview, "borda") == ["1 (1–1)", "1 (1–1)", "3 (3–3)"]
    assert not overview.errors


def test_a_task_link_opens_its_board(overview):
    overview.click(f"{TABLE} thead a[href='task-stard.html']")
    overview.wait_for_load_state()
    assert overview.url.endswith("/task-stard.html")
