"""The static leaderboard: rows, invalid files, escaping, determinism, provenance, plots."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.plots import Series, category_bars, recall_curves
from statbench.leaderboard.render.templating import json_for_html, slug
from statbench.leaderboard.sample import (
    SAMPLE_MEASURES,
    make_results,
    reranker_record,
    write_result,
    write_sample,
)

XSS = "<script>alert(1)</script>"


@pytest.fixture
def sample(tmp_path) -> Path:
    write_sample(tmp_path / "results")
    return tmp_path / "results"


def _blob(html: str) -> dict:
    text = re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(text)


def _scores(value: float, n: int = 6) -> dict:
    return {f"q{i}": {m: value for m in SAMPLE_MEASURES} for i in range(n)}


def test_builds_index_and_task_page(sample, tmp_path):
    report = build_site(sample, tmp_path / "site")
    site = tmp_path / "site"
    assert report.rows == 7
    assert report.problems == []
    assert sorted(p.name for p in site.iterdir()) == [".statbench-site", "index.html", "runs", "static", "task-toy.html"]
    html = (site / "task-toy.html").read_text("utf-8")
    blob = _blob(html)
    # default order: the tested measure (nDCG@10 for an unknown task), best first
    order = re.findall(r'<tbody class="row[^"]*" data-key="([0-9a-f]+|ref-\d+)"', html)
    means = [blob["rows"][k]["values"]["nDCG@10"] for k in order]
    assert means == sorted(means, reverse=True)
    assert blob["rows"][order[0]]["label"] == "dense-ft"
    # families and the training filter
    assert 'data-family="late-interaction"' in html and 'data-trained="trained"' in html
    assert 'value="classifier" checked> classifier <span class="count">(0)' in html
    # the reranker row counts as a reranker and is labelled first stage → reranker
    assert blob["rows"][[k for k in order if "monot5" in blob["rows"][k]["label"]][0]]["family"] == "reranker"
    index = (site / "index.html").read_text("utf-8")
    assert '<a href="task-toy.html">toy</a>' in index and "dense-ft: <span class=\"num\">" in index


def test_provenance_names_the_hardware_a_run_took_its_time_on(tmp_path):
    gpu = make_results(_scores(0.5), model="dense", family="dense")
    gpu["environment"] = {"python": "3.12.3", "platform": "Linux-x86_64", "accelerator": "NVIDIA H100 80GB HBM3"}
    write_result(tmp_path / "results" / "gpu", gpu)
    write_result(tmp_path / "results" / "cpu", make_results(_scores(0.4)))
    build_site(tmp_path / "results", tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "<dd>1.5 s on NVIDIA H100 80GB HBM3, Linux-x86_64, Python 3.12.3</dd>" in html
    assert "<dd>1.5 s on CPU</dd>" in html  # a result that records no environment


def test_significance_markers_against_bm25(sample, tmp_path):
    build_site(sample, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "the baseline <strong>bm25</strong>" in html
    assert html.count('<span class="badge base">baseline</span>') == 1
    # dense-ft and colbert are clearly better, the script-named model clearly worse; bm25 → monot5
    # (better with 6 tests in the family) is not once Holm counts the 24 tests of the board
    assert html.count('class="sig up" href="#sig-') == 2
    assert html.count('class="sig down" href="#sig-') == 1
    assert html.count('<span class="sig up">▲ better</span>') == 2
    assert "Holm–Bonferroni over the 24 tests of this board: 6 results tested on 4 measures" in html
    # the other three measures' columns are marked too (a span: the comparisons' table is nDCG@10's)
    assert html.count('<span class="sig up" title="significantly better than bm25 on R@') == 6
    assert html.count('<span class="sig down" title="significantly worse than bm25 on R@') == 3
    assert 'zero_method="wilcox"' in html


def test_baseline_absent_or_chosen(sample, tmp_path):
    report = build_site(sample, tmp_path / "a", baseline="nonesuch")
    assert "toy: no results of baseline 'nonesuch': no significance tests" in report.notes
    assert 'class="sig up"' not in (tmp_path / "a" / "task-toy.html").read_text("utf-8")
    build_site(sample, tmp_path / "b", baseline="dense-ft", measure="R@5")
    html = (tmp_path / "b" / "task-toy.html").read_text("utf-8")
    assert "the baseline <strong>dense-ft</strong>" in html and "per-query <strong>R@5</strong>" in html
    assert 'class="sig up" href' not in html  # nothing beats the fine-tuned model


def test_script_model_name_is_escaped_everywhere(sample, tmp_path):
    build_site(sample, tmp_path / "site")
    for page in (tmp_path / "site").glob("*.html"):
        assert XSS not in page.read_text("utf-8"), page
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert '<span class="name">&lt;script&gt;alert(1)&lt;/script&gt;</span>' in html
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html  # inside the JSON blob
    assert XSS in [row["label"] for row in _blob(html)["rows"].values()]  # and it decodes back
    assert "&lt;script&gt;alert(1)&lt;/script&gt;</text>" in html  # SVG legend


def test_json_for_html():
    text = json_for_html({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_invalid_files_are_reported_and_skipped(sample, tmp_path):
    broken = json.loads((sample / "ql" / "results.json").read_text("utf-8"))
    del broken["per_query"]
    broken["model"]["name"] = "broken-model"
    (sample / "bad").mkdir()
    (sample / "bad" / "results.json").write_text(json.dumps(broken), encoding="utf-8")
    (sample / "bad" / "notjson.json").write_text("{oops", encoding="utf-8")
    half = json.loads((sample / "ql" / "results.json").read_text("utf-8"))
    half["model"]["name"] = "half-model"
    del half["aggregate"]["R@5"]
    (sample / "half.json").write_text(json.dumps(half), encoding="utf-8")

    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(sample), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert f"warning: skipped {sample / 'bad' / 'results.json'}: does not match the results schema: " \
           "(root): 'per_query' is a required property" in result.stderr
    assert f"warning: skipped {sample / 'bad' / 'notjson.json'}, line 1: not valid JSON" in result.stderr
    assert f"warning: skipped {sample / 'half.json'}: aggregate: no value for R@5" in result.stderr
    assert "7 result(s) on 1 task page(s)" in result.stdout
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "broken-model" not in html and "half-model" not in html


def test_deterministic_build(sample, tmp_path):
    build_site(sample, tmp_path / "one")
    build_site(sample, tmp_path / "two")
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert len(files) == 12  # marker, index, task page, css, js, 7 run files
    for rel in files:
        assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes(), rel


def test_rebuild_replaces_the_site_but_never_a_foreign_folder(sample, tmp_path):
    build_site(sample, tmp_path / "site")
    (tmp_path / "site" / "stale.html").write_text("old", encoding="utf-8")
    build_site(sample, tmp_path / "site")
    assert not (tmp_path / "site" / "stale.html").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(StatbenchError, match="refusing to replace it"):
        build_site(sample, foreign)
    assert (foreign / "notes.txt").read_text("utf-8") == "keep"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_folds_show_mean_std_and_per_fold_values(sample, tmp_path):
    build_site(sample, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    bm25 = json.loads((sample / "bm25" / "results.json").read_text("utf-8"))
    agg, folds = bm25["aggregate"]["R@10"], {s["name"]: s["scores"]["R@10"] for s in bm25["splits"]}
    expected = (f'<details class="folds"><summary>{agg["mean"]:.4f}<span class="std"> ± {agg["std"]:.4f}</span></summary>\n'
                f'          <table class="fold-table"><tr><td>fold-1</td><td>{folds["fold-1"]:.4f}</td><td class="n">n=20</td></tr>'
                f'<tr><td>fold-2</td><td>{folds["fold-2"]:.4f}</td><td class="n">n=20</td></tr></table>')
    assert expected in html


def test_provenance_and_run_file_copy(sample, tmp_path):
    build_site(sample, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    bm25 = json.loads((sample / "bm25" / "results.json").read_text("utf-8"))
    key = re.search(r'data-key="([0-9a-f]{12})"[^>]*>\s*<tr class="main">\s*<td class="model">\s*<span class="name">bm25</span>'
                    r' <span class="badge base">', html).group(1)
    # what a stranger types: no source was recorded (not a submission), so no `pip install` of a
    # distribution no index may hold; the details say so instead
    assert f'<code id="cmd-{key}">statbench run --task toy --model bm25</code> ' \
           f'<button type="button" class="copy" data-copy="cmd-{key}">copy</button>' in html
    assert "source not recorded: statbench-sample 0.0.1 (installed where it ran" in html
    href = f"runs/toy/{key}.trec.gz"
    assert f'<a href="{href}" download>run.trec.gz</a>' in html
    assert bm25["run_file"]["sha256"] in html and bm25["task"]["data_checksum"] in html
    assert "bm25 (statbench-sample 0.0.1), model version 1" in html and "2024-05-01T12:00:00+00:00" in html
    with gzip.open(tmp_path / "site" / href, "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == bm25["run_file"]["sha256"]
    # the site keeps working when moved: only relative links
    assert not re.search(r'(href|src)="(/|file:|https?:)', html)


def test_run_file_changed_or_missing_is_not_linked(sample, tmp_path):
    (sample / "ql" / "run.trec").write_text("edited\n", encoding="utf-8")
    (sample / "colbert" / "run.trec").unlink()
    report = build_site(sample, tmp_path / "site")
    assert any("ql: run file" in p and "does not match the checksum" in p for p in report.problems)
    # a run file simply absent (results published without it) is a note, not a warning
    assert not any("colbert" in p for p in report.problems)
    assert "1 result(s) without their run file (not linked; their figures are shown)" in report.notes
    assert len(list((tmp_path / "site" / "runs" / "toy").iterdir())) == 5
    build_site(sample, tmp_path / "bare", copy_runs=False)
    assert not (tmp_path / "bare" / "runs").exists()


def test_rows_by_identity_pools_and_superseded(tmp_path):
    root = tmp_path / "results"
    rr = reranker_record("monot5")
    for pool, value in (("bm25-pool", 0.4), ("dense-pool", 0.6)):
        write_result(root / pool, make_results(_scores(value), model=f"pool:{pool}", family="pool", pool=pool, reranker=rr))
    write_result(root / "old", make_results(_scores(0.1), params={"k1": 0.9}, created="2024-01-01T00:00:00+00:00"))
    write_result(root / "new", make_results(_scores(0.2), params={"k1": 0.9}, created="2024-02-01T00:00:00+00:00"))
    write_result(root / "default", make_results(_scores(0.3)))
    report = build_site(root, tmp_path / "site")
    assert report.rows == 4
    assert f"skipped {root / 'old' / 'results.json'}: superseded by {root / 'new' / 'results.json'} " \
           "(same configuration, newer)" in report.notes
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    labels = sorted(r["label"] for r in _blob(html)["rows"].values())
    assert labels == ["bm25", "bm25 (k1=0.9)", "pool:bm25-pool → monot5", "pool:dense-pool → monot5"]
    assert "the baseline <strong>bm25</strong> on that measure (" in html  # of the two bm25 rows, the one with default parameters
    assert '<th data-col="pool" data-type="text"' in html and '<td class="pool">dense-pool</td>' in html
    k1 = [r for r in _blob(html)["rows"].values() if r["label"] == "bm25 (k1=0.9)"][0]
    assert k1["values"]["R@5"] == pytest.approx(0.2)  # the newer file's figures


def test_published_reference_rows_for_a_registered_task(tmp_path):
    from statbench.tasks.stard import Stard

    labels = [m.label for m in Stard.measures]
    per_query = {f"q{i}": {m: 0.5 for m in labels} for i in range(5)}
    folds = {f"fold-{i + 1}": [f"q{i}"] for i in range(5)}  # the 5-fold protocol the figures belong to
    write_result(tmp_path / "r" / "bm25", make_results(per_query, task="stard", measures=labels, splits=folds))
    # the same task on a set of splits that is no protocol: its board shows no published figure
    two = {q: per_query[q] for q in ("q0", "q1")}
    write_result(tmp_path / "r" / "bm25-dev", make_results(two, task="stard", measures=labels,
                                                           splits={"fold-1": ["q0"], "fold-2": ["q1"]}))
    build_site(tmp_path / "r", tmp_path / "site")
    html = (tmp_path / "site" / "task-stard.html").read_text("utf-8")
    # 5 queries on a corpus of unrecorded size: not the paper's data, so the published
    # figures are in their own block, never ranked (tests/leaderboard/test_boards_comparable.py: the same data)
    assert html.count('<tbody class="row ref"') == 0
    assert ("<h3>Reported on the paper&#39;s corpus: 55,348 articles, 1,543 queries (upstream STARD corpus.jsonl "
            "(oneal2000/STARD)); this board: corpus size not recorded, 5 queries</h3>") in html
    other = [p for p in (tmp_path / "site").glob("task-stard*.html") if p.name != "task-stard.html"]
    assert len(other) == 1 and other[0].read_text("utf-8").count('<tbody class="row ref"') == 0
    assert "published-apart" not in other[0].read_text("utf-8")
    assert ('<tr><td class="model"><span class="name">BM25 (Pyserini)</span> <span class="source">stard-2024 Table 3</span>'
            '</td><td class="family">lexical</td>') in html
    assert "STARD: Chinese statute retrieval for layperson questions" in html
    assert "per-query <strong>R@100</strong>" in html  # STARD's tested measure
    assert '<th data-col="m:MRR@10"' in html


def test_plots_recall_curves_and_category_bars(sample, tmp_path):
    build_site(sample, tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert html.count("<svg ") == 2
    assert html.count("<polyline ") == 7 and "Recall@k (mean over splits)" in html
    assert "nDCG@10 by category" in html and html.count("<rect ") == 7 * 3
    svg = recall_curves([Series("a<b", {5: 0.5, 10: 1.0}), Series("ref", {5: 0.25, 10: 0.75}, reference=True)])
    assert svg == recall_curves([Series("a<b", {5: 0.5, 10: 1.0}), Series("ref", {5: 0.25, 10: 0.75}, reference=True)])
    # k=5 at the left edge, k=10 at the right (log scale); y: 1.0 at the top (28), 0 at the bottom (260)
    assert 'points="48,144 544,28"' in svg and 'stroke-dasharray="5 3" points="48,202 544,86"' in svg
    assert "a&lt;b" in svg and "a<b" not in svg
    assert recall_curves([Series("x", {5: 0.5})]) == ""  # one cutoff: no curve
    bars = category_bars(["housing", "work"], [Series("m", {"housing": 0.5, "work": 1.0})], "R@5", "category")
    # bar widths: the plot spans 190..500 for 0..1
    assert 'width="155"' in bars and 'width="310"' in bars


def test_slug():
    assert slug("stard") == "stard"
    assert slug("Uk Stat/../x").startswith("uk-stat-x-") and "/" not in slug("../..")


def test_missing_results_folder(tmp_path):
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(tmp_path / "nope"), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "results folder" in result.output and "does not exist" in result.output


def test_results_on_other_data_get_their_own_board(tmp_path):
    root = tmp_path / "results"
    write_result(root / "a", make_results(_scores(0.3)))
    write_result(root / "b", make_results(_scores(0.4), model="ql"))
    other = make_results(_scores(0.9))  # the same configuration, scored on a different corpus
    other["task"]["data_checksum"] = "f" * 64
    write_result(root / "c", other)
    report = build_site(root, tmp_path / "site")
    assert report.rows == 3
    assert not any("superseded" in p for p in report.problems + report.notes)
    main = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert sorted(r["label"] for r in _blob(main)["rows"].values()) == ["bm25", "ql"]
    side = [p for p in (tmp_path / "site").glob("task-*.html") if p.name != "task-toy.html"]
    assert len(side) == 1
    html = side[0].read_text("utf-8")
    assert "toy @ other data" in html and "ffffffff" not in html.split("<h1>")[1].split("</h1>")[0] and [r["label"] for r in _blob(html)["rows"].values()] == ["bm25"]


def test_a_run_kept_gzipped_beside_its_results_is_linked_as_verify_reads_it(sample, tmp_path):
    # a results repository keeps run.trec.gz beside results.json (whose sha256 is of the plain run):
    # the site links it as --verify reads it; a gzip of another run is a warning, not a link
    plain = (sample / "bm25" / "run.trec").read_bytes()
    (sample / "bm25" / "run.trec").unlink()
    (sample / "bm25" / "run.trec.gz").write_bytes(gzip.compress(plain, mtime=0))
    (sample / "ql" / "run.trec").unlink()
    (sample / "ql" / "run.trec.gz").write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 x\n", mtime=0))
    report = build_site(sample, tmp_path / "site")
    bm25 = json.loads((sample / "bm25" / "results.json").read_text("utf-8"))
    copies = list((tmp_path / "site" / "runs" / "toy").glob("*.trec.gz"))
    assert any(hashlib.sha256(gzip.decompress(c.read_bytes())).hexdigest() == bm25["run_file"]["sha256"] for c in copies)
    assert not any("bm25: run file" in p for p in report.problems) and \
        not any("without their run file" in n and n.startswith("2 ") for n in report.notes)
    assert any("ql: run file" in p and "does not match the checksum" in p for p in report.problems)
