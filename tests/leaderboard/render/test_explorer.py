"""The per-query explorer (issue 23 §2): its text comes only from the task data loaded for
the build, of the board's data version; its ranks from the rows' run files (and agree with
the per-query figures the results record); without data it shows ids only and says so."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

from statbench.commands.cli import cli
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.explorer import TaskTexts
from statbench.leaderboard.sample import make_results, write_result
from statbench.registry import plugins

HOSTILE = "婚姻制度<script>alert(1)</script>的基本原则是什么？"


def write_stard(root: Path, queries) -> Path:
    write_jsonl(root / "corpus.jsonl", STARD_CORPUS)
    (root / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    return root


def _queries(text_of_3: str = HOSTILE):
    return [dict(q, **({"问题": text_of_3} if q["query_id"] == 3 else {})) for q in STARD_QUERIES]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """`statbench run` of bm25, tfidf and ql on the miniature STARD (one query's text hostile)."""
    root = tmp_path_factory.mktemp("explorer")
    data = write_stard(root / "stard", _queries())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATBENCH_CACHE", str(root / "cache"))
        mp.chdir(root)
        plugins.reset_registry()
        for model in ("bm25", "tfidf", "ql"):
            args = ["run", "--task", "stard", "--model", model, "--data-dir", str(data), "--no-progress"]
            mp.setattr(sys, "argv", ["statbench", *args])
            result = CliRunner().invoke(cli, args, catch_exceptions=False)
            assert result.exit_code == 0, result.output
        plugins.reset_registry()
    return root


@pytest.fixture
def outputs(built, tmp_path) -> Path:
    return Path(shutil.copytree(built / "statbench-output" / "stard", tmp_path / "outputs"))


def _blob(site: Path, slug: str = "stard") -> dict:
    text = (site / "explorer" / "data" / f"{slug}.js").read_text("utf-8")
    return json.loads(text[text.index("=") + 1:].strip().rstrip(";"))


def _explorer_text(site: Path) -> str:
    return "".join(p.read_text("utf-8") for p in sorted((site / "explorer").rglob("*")) if p.is_file())


def _results(outputs: Path) -> dict[str, dict]:
    return {json.loads(p.read_text("utf-8"))["model"]["name"]: json.loads(p.read_text("utf-8"))
            for p in outputs.rglob("results.json")}


def test_text_relevant_articles_and_ranks_from_the_task_and_the_runs(outputs, built, tmp_path):
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": built / "stard"}))
    blob = _blob(site)
    page = (site / "explorer" / "stard.html").read_text("utf-8")
    assert blob["queries"] == ["0", "1", "2", "3", "4"] and blob["answered_by"] == "ranks"
    assert "谁可以成为个体工商户？" in page and "为什么要惩罚犯罪？" in page
    # relevant articles: id, first characters of the text (the miniature has no structure file)
    assert "<code>建筑法第一条</code>" in page and "为了加强对建筑活动的监督管理" in page
    assert "Heading path" not in page
    results = _results(outputs)
    # every rank agrees with the per-query figures the results record: R@k from the ranks
    qrels = {str(q["query_id"]): q["match_name"] for q in STARD_QUERIES}
    labels = {s["label"]: i for i, s in enumerate(blob["systems"])}
    sections = re.findall(r'<section class="query" id="q-(\d+)" data-qid="([^"]+)">(.*?)</section>', page, re.S)
    assert [s[1] for s in sections] == blob["queries"]
    checked = 0
    for _, qid, body in sections:
        for name, res in results.items():
            tag = next(x["tag"] for x in blob["systems"] if x["label"] == name)
            row = re.search(rf"<tr[^>]*><td>{tag} {name}</td><td class=\"tested\">([0-9.]+)</td>(.*?)</tr>", body)
            assert row is not None, (qid, name)
            cells = re.findall(r'<td>([^<]+)</td>', row.group(2))
            ranks = [int(c) if c.isdigit() else None for c in cells]
            assert len(ranks) == len(qrels[qid]) and all(c.isdigit() or c.startswith("not in top") for c in cells)
            for k in (5, 10, 100):
                recall = sum(1 for r in ranks if r is not None and r <= k) / len(ranks)
                assert recall == pytest.approx(res["per_query"][qid][f"R@{k}"], abs=1e-12), (qid, name, k)
            assert float(row.group(1)) == pytest.approx(res["per_query"][qid][blob["tested"]], abs=5e-5)
            i = labels[name]
            assert blob["best"][i][int(qid)] == min((r for r in ranks if r is not None), default=None)
            checked += 1
    assert checked == 15
    # the filters' facts: who answers each query in the top 100, from the same ranks
    for n, answering in enumerate(blob["answers"]):
        assert answering == [i for i, best in enumerate(blob["best"]) if best[n] is not None and best[n] <= 100]


def test_task_text_is_escaped_in_the_pages_and_in_the_script(outputs, built, tmp_path):
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": built / "stard"}))
    text = _explorer_text(site)
    assert "<script>alert(1)" not in text
    assert "婚姻制度&lt;script&gt;alert(1)&lt;/script&gt;的基本原则是什么？" in text
    assert "\\u003cscript\\u003e" in (site / "explorer" / "data" / "stard.js").read_text("utf-8")
    assert HOSTILE[:20] in _blob(site)["snippets"][3]


def test_without_task_data_ids_and_figures_only_and_it_says_so(outputs, tmp_path):
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts())
    text = _explorer_text(site)
    assert "Ids and figures only: no task data given (leaderboard build --data-dir stard=DIR shows the text)" in text
    for q in STARD_QUERIES:
        assert q["问题"][:6] not in text
    for doc in STARD_CORPUS:
        assert doc["content"][:10] not in text
    blob = _blob(site)
    assert blob["snippets"] == [""] * 5 and blob["best"] == [None, None, None]
    # no judgements: "answers in the top 100" is the per-query R@100, said on the page
    assert blob["answered_by"] == "R@100" and 'a per-query R@100 above 0' in text


def test_data_of_another_version_is_not_shown(outputs, tmp_path):
    other = write_stard(tmp_path / "other", _queries("婚姻自由的原则是什么？"))
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": other}))
    text = _explorer_text(site)
    assert "the task data given is another version" in text
    assert "婚姻自由的原则是什么？" not in text and "谁可以成为个体工商户？" not in text
    assert _blob(site)["best"] == [None, None, None]


def test_a_run_file_that_does_not_match_its_results_gives_no_ranks(outputs, built, tmp_path):
    run = next((outputs / "bm25").rglob("run.trec"))
    lines = run.read_text("utf-8").splitlines(keepends=True)
    run.write_text("".join(lines[1:] + lines[:1]), encoding="utf-8")  # same lines, another file
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": built / "stard"}))
    blob = _blob(site)
    bm25 = next(i for i, s in enumerate(blob["systems"]) if s["label"] == "bm25")
    assert blob["best"][bm25] is None and blob["systems"][bm25]["ranks"] is False
    assert all(blob["best"][i] is not None for i in range(3) if i != bm25)
    assert "No ranks for bm25: its run file does not match run_file.sha256." in _explorer_text(site)


def test_the_board_links_its_explorer_and_each_row_its_worst_queries(outputs, tmp_path):
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts())
    board = (site / "task-stard.html").read_text("utf-8")
    blob = _blob(site)
    assert '<a href="explorer/stard.html">Per-query explorer</a>' in board
    for s in blob["systems"]:
        assert f'href="explorer/stard.html#view=system&amp;s={s["key"]}"' in board


def test_a_rebuild_with_task_data_renders_the_explorer_again(outputs, built, tmp_path):
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts())
    assert "谁可以成为个体工商户？" not in _explorer_text(site)
    report = build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": built / "stard"}))
    assert report.rendered == ["stard"] and "谁可以成为个体工商户？" in _explorer_text(site)
    again = build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": built / "stard"}))
    assert again.rendered == [] and "谁可以成为个体工商户？" in _explorer_text(site)


def test_cli_data_dir_without_verify_feeds_the_explorer(outputs, built, tmp_path):
    runner = CliRunner()
    site = tmp_path / "site"
    result = runner.invoke(cli, ["leaderboard", "build", "--results", str(outputs), "--out", str(site),
                                 "--data-dir", f"stard={built / 'stard'}"])
    assert result.exit_code == 0, result.output
    assert "谁可以成为个体工商户？" in (site / "explorer" / "stard.html").read_text("utf-8")
    bad = runner.invoke(cli, ["leaderboard", "build", "--results", str(outputs), "--out", str(tmp_path / "x"),
                              "--data-dir", f"stard={tmp_path / 'missing'}"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
    strict = runner.invoke(cli, ["leaderboard", "build", "--results", str(outputs), "--out", str(tmp_path / "y"),
                                 "--strict"])
    assert strict.exit_code == 2 and "go with --verify" in strict.output


def test_queries_paged_fifty_to_a_page_and_at_most_24_systems(tmp_path):
    root = tmp_path / "results"
    qids = [f"q{i:03d}" for i in range(120)]
    for j in range(30):
        scores = {q: {m: ((i * 7 + j) % 11) / 10 for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i, q in enumerate(qids)}
        write_result(root / f"m{j}", make_results(scores, model="bm25" if j == 0 else f"m{j:02d}"))
    build_site(root, tmp_path / "site", explorer=TaskTexts())
    blob = _blob(tmp_path / "site", "toy")
    assert blob["pages"] == ["toy.html", "toy.p2.html", "toy.p3.html"] and len(blob["queries"]) == 120
    assert len(blob["systems"]) == 24 and any(s["baseline"] for s in blob["systems"])
    page3 = (tmp_path / "site" / "explorer" / "toy.p3.html").read_text("utf-8")
    assert page3.count('<section class="query"') == 20 and 'id="q-100"' in page3
    assert "24 systems of the board's 30: the best by" in page3


def test_task_data_rewritten_keeping_size_and_times_is_read_again(outputs, built, tmp_path, monkeypatch):
    """The explorer's task data are identified by content (issue 33 §2): a same-size edit
    with its times set back renders the explorer anew, as a full build does (the board's
    data version no longer matches: its text is not shown)."""
    import os

    data = Path(shutil.copytree(built / "stard", tmp_path / "stard"))
    site = tmp_path / "site"
    build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": data}))
    assert "为什么要惩罚犯罪？" in _explorer_text(site)
    queries = data / "queries.json"
    before = queries.stat()
    text = queries.read_bytes()
    with open(queries, "r+b") as handle:  # in place, the same size
        handle.write(text.replace("犯罪？".encode(), "刑罚？".encode()))
    os.utime(queries, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (queries.stat().st_size, queries.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    report = build_site(outputs, site, explorer=TaskTexts(data_dirs={"stard": data}))
    assert report.rendered == ["stard"] and "为什么要惩罚犯罪？" not in _explorer_text(site)
    with monkeypatch.context() as m:  # a full build: a new cache, a new folder
        m.setenv("STATBENCH_CACHE", str(tmp_path / "fresh-cache"))
        build_site(outputs, tmp_path / "full", explorer=TaskTexts(data_dirs={"stard": data}))
    assert _explorer_text(site) == _explorer_text(tmp_path / "full")
    def tree(root):
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    assert tree(site) == tree(tmp_path / "full")
