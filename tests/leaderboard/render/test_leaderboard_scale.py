"""The leaderboard at scale (issue 15): a board of 200 results is written as pages of 50
rows that together hold every row exactly once (each complete without JavaScript, one
JSON of all rows for the script), the comparisons on a page of their own, capped charts;
the board-wide significance tests give the figures of the one-system-at-a-time code."""

from __future__ import annotations

import json
import os
import random
import re

import numpy as np
import pytest
from forkspy import record_forks

from statbench.leaderboard.ranking import significance
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.task_page import CHART_SERIES, PAGE_SIZE
from statbench.leaderboard.sample import write_many, write_sample
from statbench.scoring.significance import bootstrap_ci, compare_to_baseline, wilcoxon_p

N = 200
FILES = ["task-toy.html", "task-toy.p2.html", "task-toy.p3.html", "task-toy.p4.html"]


def _blob(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))


def _data(site, slug: str = "toy") -> dict:
    """The JSON of a board of several pages: one script beside them."""
    text = (site / "data" / f"task-{slug}.js").read_text("utf-8")
    prefix = "window.statbenchLeaderboard = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def _bodies(html: str) -> dict[str, str]:
    """key -> the row's ``<tbody>`` markup, in page order."""
    return {m.group(1): m.group(0) for m in re.finditer(r'<tbody class="row[^"]*" data-key="([^"]+)".*?</tbody>', html, re.S)}


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    write_many(root / "results", N)
    report = build_site(root / "results", root / "site")
    return root, report


def test_pages_hold_every_row_exactly_once(big):
    root, report = big
    site = root / "site"
    assert PAGE_SIZE == 50 and report.rows == N and report.boards == 1 and report.problems == []
    assert [p.name for p in report.pages] == ["index.html", *FILES, "task-toy.significance.html"]
    pages = [(site / name).read_text("utf-8") for name in FILES]
    blob = _data(site)  # one JSON of every row, beside the pages
    for html in pages:
        assert 'id="lb-data"' not in html and html.count('<script src="data/task-toy.js"></script>') == 1
    keys = [list(_bodies(html)) for html in pages]
    assert [len(k) for k in keys] == [50, 50, 50, 50]
    flat = [k for page in keys for k in page]
    assert len(set(flat)) == N and flat == blob["order"] and set(blob["rows"]) == set(flat)
    assert blob["pages"] == FILES and blob["page_size"] == 50
    for i, page in enumerate(keys):
        assert {blob["rows"][k]["page"] for k in page} == {i}
    # the default order across the pages: the tested measure (nDCG@10), best first
    means = [blob["rows"][k]["values"]["nDCG@10"] for k in flat]
    assert means == sorted(means, reverse=True)
    # every row's details (its command, its results file) are on exactly one page
    text = "".join(pages)
    for i in range(1, N):
        # the reproduce line and the recorded command (no source recorded: nothing to pip install)
        assert text.count(f">statbench run --task toy --model m{i:03d}</code>") == 2
        assert text.count(f"<dd><code>r{i:04d}/results.json</code></dd>") == 1


def test_the_json_holds_the_cells_as_the_pages_print_them(big):
    root, _ = big
    pages = [(root / "site" / name).read_text("utf-8") for name in FILES]
    blob = _data(root / "site")
    assert blob["splits"] == [["fold-1", 6], ["fold-2", 6]] and blob["measures"] == ["R@5", "R@10", "R@100", "nDCG@10"]
    checked = 0
    for html in pages:
        for key, body in _bodies(html).items():
            cells = blob["rows"][key]["cells"]
            summaries = re.findall(r'<summary>([^<]+)<span class="std"> ± ([^<]+)</span></summary>', body)
            assert summaries == [(c[0], c[1]) for c in cells]
            folds = re.findall(r"<tr><td>(fold-\d)</td><td>([^<]+)</td><td class=\"n\">n=6</td></tr>", body)
            assert folds == [(f"fold-{j + 1}", v) for c in cells for j, v in enumerate(c[2])]
            markers = re.findall(r'<a class="sig (up|down)" href="task-toy.significance.html#sig-' + key, body)
            assert markers == [c[3] for c in cells if c[3]]
            checked += 1
    assert checked == N
    # and the figures are the results file's: bm25's R@10, mean ± std over the folds
    bm25 = json.loads((root / "results" / "r0000" / "results.json").read_text("utf-8"))
    row = next(r for r in blob["rows"].values() if r["base"])
    agg = bm25["aggregate"]["R@10"]
    assert row["cells"][1][:3] == [f"{agg['mean']:.4f}", f"{agg['std']:.4f}",
                                   [f"{s['scores']['R@10']:.4f}" for s in bm25["splits"]]]


def test_pagers_link_the_pages_without_javascript(big):
    root, _ = big
    html = (root / "site" / "task-toy.p2.html").read_text("utf-8")
    pager = re.search(r'<nav class="lb-pager".*?</nav>', html, re.S).group(0)
    assert html.count('<nav class="lb-pager"') == 2  # above and below the table
    assert "Rows 51–100 of 200" in pager and '<strong aria-current="page">2</strong>' in pager
    assert '<a href="task-toy.html" rel="prev">‹ previous</a>' in pager and '<a href="task-toy.p3.html" rel="next">' in pager
    assert re.findall(r'<a href="(task-toy[.a-z0-9]*\.html)">\d</a>', pager) == ["task-toy.html", "task-toy.p3.html",
                                                                                "task-toy.p4.html"]
    assert 'data-page="1"' in html  # the script starts on this page
    first = (root / "site" / "task-toy.html").read_text("utf-8")
    assert 'rel="prev"' not in first and "Rows 1–50 of 200" in first
    index = (root / "site" / "index.html").read_text("utf-8")
    assert '<a href="task-toy.html">toy</a>' in index and '<td class="num">200</td>' in index


def test_comparisons_are_on_their_own_page(big):
    root, _ = big
    site = root / "site"
    sig = (site / "task-toy.significance.html").read_text("utf-8")
    blob = _data(site)
    ids = re.findall(r'<tr id="sig-([0-9a-f]{12})">', sig)
    baseline = next(k for k, r in blob["rows"].items() if r["base"])
    assert len(ids) == N - 1 and set(ids) == set(blob["rows"]) - {baseline}
    assert "Holm–Bonferroni\nover the 796 tests of this board (the 199 comparisons here and the tests of the same results on " \
        "the other measures: one family)" in sig and '<a href="task-toy.html">' in sig
    for name in FILES:
        html = (site / name).read_text("utf-8")
        assert '<tr id="sig-' not in html and "Holm–Bonferroni over the 796 tests of this board: 199 results" in html
        assert '<a href="task-toy.significance.html">The 199 comparisons</a>' in html
    # every marker of the tested column points at a line of that page saying the same
    tested = blob["measures"].index(blob["tested"])
    for key, row in blob["rows"].items():
        for cell in row["cells"][tested:tested + 1]:
            if cell[3]:
                line = re.search(rf'<tr id="sig-{key}">.*?</tr>', sig, re.S).group(0)
                assert ("▲ better" if cell[3] == "up" else "▼ worse") in line


def test_significance_lines_are_the_one_by_one_figures(big):
    """Five rows tested one at a time by the core's compare_to_baseline: the lines of the
    comparisons page show their figures (Holm's p depends on all 199: left out here)."""
    root, _ = big
    from statbench.leaderboard.render.templating import fmt
    from statbench.scoring.significance import format_p

    def scores(i):
        data = json.loads((root / "results" / f"r{i:04d}" / "results.json").read_text("utf-8"))
        return {q: v["nDCG@10"] for q, v in data["per_query"].items()}, data

    base, _ = scores(0)
    sig = (root / "site" / "task-toy.significance.html").read_text("utf-8")
    blob = _data(root / "site")
    for i in (1, 2, 7, 50, 199):
        system, data = scores(i)
        (c,) = compare_to_baseline("bm25", base, {"m": system}, "nDCG@10")
        key = next(k for k, r in blob["rows"].items() if r["name"] == f"m{i:03d}")
        line = re.search(rf'<tr id="sig-{key}">(.*?)</tr>', sig, re.S).group(1)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", line)
        assert cells[1:9] == [str(c.n), fmt(c.mean_baseline), fmt(c.mean_system), f"{c.mean_diff:+.4f}",
                              f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]", "—" if c.cohens_d is None else f"{c.cohens_d:+.4f}",
                              f"{c.wins} / {c.ties} / {c.losses}", format_p(c.p_value).replace("<", "&lt;")]


def test_charts_draw_the_best_rows_and_details_keep_each_breakdown(big):
    root, _ = big
    # the plots are on the first page only (each draws the whole board); the others link there
    later = (root / "site" / "task-toy.p3.html").read_text("utf-8")
    assert "<svg" not in later and '<a href="task-toy.html#plots">its first page</a>' in later
    html = (root / "site" / "task-toy.html").read_text("utf-8")
    assert '<div id="plots">' in html
    curves = re.search(r"<svg[^>]*>.*?Recall@k.*?</svg>", html, re.S).group(0)
    drawn = curves.count("<polyline ")
    assert drawn in (CHART_SERIES, CHART_SERIES + 1)  # the 12 best, and the baseline when it is not among them
    assert f"The {drawn} series drawn are the best results by nDCG@10 and the baseline, of\n200" in html
    bars = re.search(r"<svg[^>]*>(?:(?!</svg>).)*nDCG@10 by category.*?</svg>", html, re.S).group(0)
    assert bars.count("<rect ") == drawn * 2
    # every row's per-category figure is in its details, whether drawn or not
    results = json.loads((root / "results" / "r0123" / "results.json").read_text("utf-8"))
    by_category = results["breakdown"]["category"]
    line = (f"<dt>nDCG@10 by category</dt><dd>housing {by_category['housing']['nDCG@10']:.4f}, "
            f"work {by_category['work']['nDCG@10']:.4f}</dd>")
    text = "".join((root / "site" / name).read_text("utf-8") for name in FILES)
    assert text.count(line) >= 1 and text.count("<dt>nDCG@10 by category</dt>") == N


def test_a_board_that_fits_one_page_is_one_page(tmp_path):
    write_many(tmp_path / "results", 30)
    # --measure: a family of the 29 tests on nDCG@10 (with every measure's 116, no marker survives Holm)
    report = build_site(tmp_path / "results", tmp_path / "site", measure="nDCG@10")
    assert [p.name for p in report.pages] == ["index.html", "task-toy.html"]
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "lb-pager" not in html and html.count('<tr id="sig-') == 29 and 'href="#sig-' in html
    assert _blob(html)["pages"] == ["task-toy.html"] and _blob(html)["sig_href"] == ""
    report = build_site(tmp_path / "results", tmp_path / "small-pages", page_size=7)
    assert [p.name for p in report.pages][-1] == "task-toy.significance.html" and len(report.pages) == 7


# --- the board-wide tests against the figures of the one-system code --------------------

LEVELS = (0.0, 0.25, 1 / 3, 0.5, 1.0)


def _board(n_queries: int, n_systems: int, seed: int, continuous: bool = False):
    """Per-query scores of a baseline and systems that change a share of its queries."""
    rng = random.Random(seed)
    draw = (lambda: round(rng.random(), 6)) if continuous else (lambda: rng.choice(LEVELS))
    qids = [f"q{i:03d}" for i in range(n_queries)]
    base = {q: draw() for q in qids}
    systems = {}
    for j in range(n_systems):
        change = (0.9, 0.5, 0.2, 0.04)[j % 4]
        systems[f"s{j}"] = {q: (draw() if rng.random() < change else base[q]) for q in qids}
    return base, systems


FIELDS = ("system", "n", "mean_diff", "ci_low", "ci_high", "cohens_d", "wins", "ties", "losses", "statistic",
          "p_value", "p_holm")
#: statbench.scoring.significance.compare_to_baseline's figures on these boards, computed before the
#: board-wide code existed (scipy 1.17, numpy 2.4). Between brackets: the non-zero
#: differences, which decide scipy's method (> 50: normal approximation; <= 50 tied: normal
#: approximation above 13, a permutation test at most 13; untied: the exact distribution).
PREVIOUS = {
    (300, 5, 1, False): [
        ("s0", 300, 0.0011111111111111072, -0.05138888888888888, 0.05361111111111111, 0.002399798264903381, 107, 82,
         111, 11909.5, 0.9776822010622197, 1.0),  # 218
        ("s1", 300, -0.008611111111111116, -0.04584027777777772, 0.028618055555555456, -0.026294119376659132, 52,
         192, 56, 2790.0, 0.6382130905817424, 1.0),  # 108
        ("s2", 300, 0.00666666666666667, -0.018611111111111106, 0.031673611111111014, 0.029986902395067537, 20, 253,
         27, 522.0, 0.6558908637706875, 1.0),  # 47, tied
        ("s3", 300, 0.0002777777777777775, -0.01138888888888889, 0.0125, 0.0026672114638223937, 4, 290, 6, 27.5,
         1.0, 1.0),  # 10, tied: permutation
        ("s4", 300, -0.001388888888888887, -0.05305555555555556, 0.050277777777777775, -0.003072692531513968, 99, 85,
         116, 11374.5, 0.79590926540826, 1.0),  # 215
    ],
    (20, 3, 2, True): [
        ("s0", 20, 0.028929699999999992, -0.19347223999999993, 0.23577746749999995, 0.056858211940728105, 11, 2, 7,
         78.0, 0.7660293579101562, 0.7660293579101562),  # 18, untied: exact
        ("s1", 20, 0.057718250000000006, -0.0092857, 0.14052688499999996, 0.32730368943338983, 5, 13, 2, 5.0,
         0.15625, 0.46875),  # 7, untied: exact
        ("s2", 20, -0.07487605, -0.1667407012499998, 0.008162212499999997, -0.36016017585465854, 2, 11, 7, 11.0,
         0.203125, 0.46875),  # 9, untied: exact
    ],
    (40, 4, 3, False): [
        ("s0", 40, -0.06666666666666668, -0.2020833333333333, 0.06666666666666665, -0.14965862086666729, 11, 14, 15,
         142.5, 0.39889711784175064, 1.0),  # 26, tied
        ("s1", 40, -0.10208333333333335, -0.2104166666666667, 0.006249999999999994, -0.2897742509943399, 7, 20, 13,
         59.0, 0.08428460227346099, 0.33713840909384396),  # 20, tied
        ("s2", 40, 0.0, -0.10416666666666667, 0.10416666666666666, 0.0, 5, 31, 4, 20.5, 0.82421875, 1.0),  # 9: permutation
        ("s3", 40, -0.01875, -0.0875, 0.04375, -0.08731440537861052, 1, 37, 2, 2.0, 0.75, 1.0),  # 3: permutation
    ],
}


def _same(actual: dict, expected: tuple) -> None:
    for name, value in zip(FIELDS, expected):
        if name in ("ci_low", "ci_high"):  # summed in another order: equal to ~1e-16
            assert actual[name] == pytest.approx(value, abs=1e-12), name
        elif isinstance(value, float):
            assert actual[name] == pytest.approx(value, rel=1e-12, abs=0), name
        else:
            assert actual[name] == value, name


@pytest.mark.parametrize("args", list(PREVIOUS))
def test_board_tests_give_the_previous_figures(args):
    base, systems = _board(*args)
    result = significance.compare_board("base", base, systems, "R@10")
    assert [c.system for c in result] == [e[0] for e in PREVIOUS[args]]
    for comparison, expected in zip(result, PREVIOUS[args]):
        _same(comparison.as_dict(), expected)
        assert comparison.baseline == "base" and comparison.measure == "R@10"


def test_board_tests_equal_the_one_by_one_tests_now():
    """Against the core's code as it is (not only as it was): everything but the
    bootstrap bounds is the same float; those agree to 1e-12."""
    base, systems = _board(300, 5, 1)
    small_base, small = _board(40, 4, 3)
    for b, s in ((base, systems), (small_base, small)):
        for new, old in zip(significance.compare_board("b", b, s, "m"), compare_to_baseline("b", b, s, "m")):
            new, old = new.as_dict(), old.as_dict()
            for name in old:
                if name in ("ci_low", "ci_high"):
                    assert new[name] == pytest.approx(old[name], abs=1e-12)
                else:
                    assert new[name] == old[name], name


def test_hand_computed_comparison():
    """Differences 1, 0.5, 0, -0.5: the zero is dropped; |d| ranks 3, 1.5, 1.5; W+ = 4.5,
    W- = 1.5; with tied magnitudes and 3 differences scipy takes the permutation test over
    the 8 sign flips, whose W+ are 0, 1.5, 1.5, 3, 3, 4.5, 4.5, 6: P(W+ >= 4.5) = 3/8,
    p = 2 * 3/8 = 0.75. Cohen's d = 0.25 / sqrt(1.25 / 3)."""
    base = {"a": 0.0, "b": 0.25, "c": 0.5, "d": 0.5}
    system = {"a": 1.0, "b": 0.75, "c": 0.5, "d": 0.0}
    (c,) = significance.compare_board("base", base, {"sys": system}, "R@5")
    assert (c.n, c.wins, c.ties, c.losses) == (4, 2, 1, 1)
    assert c.mean_diff == 0.25 and c.statistic == 1.5 and c.p_value == 0.75 and c.p_holm == 0.75
    assert c.cohens_d == pytest.approx(0.25 / (1.25 / 3) ** 0.5, rel=1e-12)
    assert -0.5 <= c.ci_low <= c.mean_diff <= c.ci_high <= 1.0
    assert significance.sign_flip_p(np.array([1.0, 0.5, -0.5])) == (1.5, 0.75) == wilcoxon_p(np.array([1.0, 0.5, -0.5]))
    assert significance.compare_board("base", base, {}, "R@5") == []


def test_sign_flips_give_scipys_permutation_test():
    rng = np.random.default_rng(3)
    for k in (2, 5, 9, 13):
        diffs = np.concatenate([[0.5, -0.5], rng.choice([-1.0, -0.5, -0.25, 0.25, 0.5, 1.0], size=k - 2)])
        assert len(np.unique(np.abs(diffs))) < k  # tied: scipy takes its permutation test
        assert significance.sign_flip_p(diffs) == wilcoxon_p(diffs)


def test_bootstrap_intervals_are_bootstrap_ci_per_row(monkeypatch):
    monkeypatch.setattr(significance, "BLOCK", 2)  # three blocks of systems, each drawing the same indices
    rng = np.random.default_rng(5)
    for n in (7, 300, 1543):  # 1543 queries: the indices are drawn in 8 chunks
        diffs = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.25, 1.0], size=(5, n))
        lows, highs = significance.bootstrap_intervals(diffs, resamples=2000)
        for row, low, high in zip(diffs, lows, highs):
            expected = bootstrap_ci(row, resamples=2000)
            assert (low, high) == pytest.approx(expected, abs=1e-12)


def test_a_system_on_other_queries_is_refused():
    from statbench.errors import StatbenchError

    with pytest.raises(StatbenchError, match="'s' cannot be tested against 'b' on R@5: different query sets"):
        significance.compare_board("b", {"a": 0.5, "b": 0.5}, {"s": {"a": 0.5}}, "R@5")


def test_text_from_results_is_escaped_in_the_pages_and_their_script(tmp_path):
    from statbench.leaderboard.sample import make_results, write_result

    xss = "<script>alert(1)</script>"
    write_many(tmp_path / "results", 20)
    per_query = json.loads((tmp_path / "results" / "r0001" / "results.json").read_text("utf-8"))["per_query"]
    write_result(tmp_path / "results" / "xss", make_results(per_query, model=xss, params={"p": "</script>&"},
                                                            splits={"fold-1": [f"q{i:03d}" for i in range(6)],
                                                                    "fold-2": [f"q{i:03d}" for i in range(6, 12)]}))
    build_site(tmp_path / "results", tmp_path / "site", page_size=5)
    site = tmp_path / "site"
    for path in [*site.glob("*.html"), site / "data" / "task-toy.js"]:
        text = path.read_text("utf-8")
        assert xss not in text and "</script>&" not in text, path.name
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in (site / "data" / "task-toy.js").read_text("utf-8")
    assert xss in [row["name"] for row in _data(site)["rows"].values()]


def test_a_systems_figures_do_not_depend_on_the_others_tested_with_it():
    """What lets a board re-test only its new rows (.sigcache): each system's figures, bit
    for bit, whichever subset of the board is computed together (blocks of one shape)."""
    for args in ((300, 9, 1, False), (40, 6, 3, False), (20, 5, 2, True)):
        base, systems = _board(*args)
        together = significance.pair_figures(base, systems)
        for name in systems:
            assert significance.pair_figures(base, {name: systems[name]})[name] == together[name]
        half = {name: systems[name] for name in sorted(systems)[::2]}
        assert significance.pair_figures(base, half) == {name: together[name] for name in half}


def test_counts_drawn_once_give_the_figures_drawn_per_block(monkeypatch):
    """The resample counts are drawn once per board when they fit, not again per block of
    systems: the same figures, bit for bit, as one block per system."""
    monkeypatch.setattr(significance, "BLOCK", 2)
    rng = np.random.default_rng(9)
    for n in (7, 1543):
        diffs = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.25, 1.0], size=(5, n))
        lows, highs = significance.bootstrap_intervals(diffs, resamples=3000)
        for i, row in enumerate(diffs):
            (low,), (high,) = significance.bootstrap_intervals(row[None, :], resamples=3000)
            assert (lows[i], highs[i]) == (low, high)


def _tree(site) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_a_build_split_with_a_fork_equals_one_process(tmp_path, monkeypatch):
    """Rows and pages made half in a forked child (.forkmap) give the site one process
    gives, byte for byte: from records in hand, and again from row heads after a result was
    added (records loaded in the child), with the tests run meanwhile."""
    from statbench.leaderboard import forkmap

    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    forks = record_forks(monkeypatch)
    results = tmp_path / "results"
    write_many(results, 60)
    write_sample(results / "sample")  # a second board (other splits), unchanged below
    first = build_site(results, tmp_path / "forked", page_size=10)
    assert len(first.rendered) == 2 and len(forks) >= 2  # the rows and the pages of the boards
    write_many(tmp_path / "more", 61)  # one more configuration of the same board
    (results / "r0060").mkdir()
    for file in (tmp_path / "more" / "r0060").iterdir():
        (results / "r0060" / file.name).write_bytes(file.read_bytes())
    forks.clear()
    report = build_site(results, tmp_path / "forked", page_size=10)
    # one board rendered, the other's files linked by a fork meanwhile
    assert len(report.rendered) == 1 and report.boards == 2 and len(forks) >= 2
    monkeypatch.setenv("STATBENCH_BUILD_PROCESSES", "1")
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "fresh-cache"))
    forks.clear()
    build_site(results, tmp_path / "one", page_size=10)
    assert not forks
    forked, one = _tree(tmp_path / "forked"), _tree(tmp_path / "one")
    assert len([name for name in one if re.fullmatch(r"task-toy[^.]*(\.p\d+)?\.html", name)]) == 7 + 1  # 61 rows, 10 a page; 7
    assert forked == one


def test_tests_split_in_two_halves_give_the_figures_of_one_call(tmp_path, monkeypatch):
    """A large board's pairs are tested in two halves, one in a fork: every comparison (and
    Holm's adjustment over all of them) equals the one call's, exactly."""
    from statbench.leaderboard import forkmap
    from statbench.leaderboard.collect.reading import collect
    from statbench.leaderboard.render import task_page

    write_many(tmp_path / "results", 40)
    rows = collect(tmp_path / "results").boards["toy"]
    base = task_page.pick_baseline(rows, "bm25")
    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    forks = record_forks(monkeypatch)
    monkeypatch.setattr(task_page, "SPLIT_TESTS", 4)
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "split"))
    split, untested = task_page.board_significance(rows, "nDCG@10", base)
    assert forks and not untested and len(split) == 39
    monkeypatch.setattr(task_page, "SPLIT_TESTS", 10**9)
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "whole"))
    whole, _ = task_page.board_significance(rows, "nDCG@10", base)
    assert split == whole


def test_a_build_that_fails_waits_for_its_forks_and_leaves_the_old_site(tmp_path, monkeypatch):
    """The changed board fails while a fork links the unchanged one and another tests it:
    the forks are waited for, the half-built folder is removed, the previous site stays."""
    from statbench.errors import StatbenchError
    from statbench.leaderboard import forkmap
    from statbench.leaderboard.render import build

    monkeypatch.setattr(forkmap, "usable_cpus", lambda: 2)
    results = tmp_path / "results"
    write_many(results, 30)
    write_sample(results / "sample")
    build_site(results, tmp_path / "site")
    before = _tree(tmp_path / "site")
    write_many(tmp_path / "more", 31)
    (results / "r0030").mkdir()
    for file in (tmp_path / "more" / "r0030").iterdir():
        (results / "r0030" / file.name).write_bytes(file.read_bytes())
    children = record_forks(monkeypatch)

    def fails(*args, **kwargs):
        raise StatbenchError("the changed board could not be rendered")

    monkeypatch.setattr(build, "render_board", fails)
    with pytest.raises(StatbenchError, match="could not be rendered"):
        build_site(results, tmp_path / "site")
    assert len(children) == 3  # the overview, the tests and the linking
    for pid in children:
        with pytest.raises(ChildProcessError):  # reaped
            os.waitpid(pid, os.WNOHANG)
    assert not list(tmp_path.glob(".site.*.tmp")) and _tree(tmp_path / "site") == before
