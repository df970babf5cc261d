"""The example task end to end: conformance, every lexical model on every protocol,
the custom F2 and Jaccard measures in results.json, one leaderboard board per protocol."""

from __future__ import annotations

from example_fixtures import example_plugin, isolated_cache  # noqa: F401  (fixtures; first: it finds the package)

import json
import logging

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.testing import check_task
from statbench_plugin_example import ExampleCivil
from statbench_plugin_example.civil import SHIPPED_DATA

#: The lexical built-ins that need no download (docs/models-lexical.md), and the plugin's own.
LEXICAL = ["bm25", "ql", "tfidf", "charngram"]
PROTOCOLS = {"per-year": ["R01", "R02", "R03"], "latest": ["R03"]}
log = logging.getLogger("test")


def run(*args: str):
    result = CliRunner().invoke(cli, ["run", *args, "--no-progress"])
    assert result.exit_code == 0, result.output
    return result


def test_task_conforms(example_plugin):
    check_task(ExampleCivil, SHIPPED_DATA)


def test_declaration():
    info = ExampleCivil.task_info()
    assert info.name == "example-civil" and info.language == "en"
    assert {p.name: list(p.splits) for p in info.protocols} == PROTOCOLS
    assert info.protocol().name == "per-year"  # the default
    assert info.primary == "F2@3"
    assert {m.label: m.ir_measure for m in info.measures}["MAP@10"] == "AP@10"
    assert info.relevance == {1: "the article decides whether the statement is true"}


def test_loaded_data_matches_the_declared_sizes():
    info = ExampleCivil.task_info()
    data = ExampleCivil().load(None, log)  # no --data-dir: the fixture shipped in the package
    assert len(data.corpus) == info.sizes["corpus"] == 30
    assert {s.name: len(s.test) for s in data.splits} == {k: v for k, v in info.sizes.items() if k != "corpus"}
    r03 = next(s for s in data.splits if s.name == "R03")
    assert set(r03.train) == {q for s in data.splits if s.name != "R03" for q in s.test}  # earlier years
    assert all(g == 1 for docs in data.qrels.values() for g in docs.values())  # binary
    assert [p.name for p in data.files] == ["articles.jsonl", "R01.jsonl", "R02.jsonl", "R03.jsonl", "qrels.trec"]
    assert len(data.checksum) == 64


def test_articles_keep_their_heading_path():
    doc = ExampleCivil().load(None, log).corpus["art-27"]
    assert doc.title == "Sublease"
    assert doc.fields["code"] == "Civil Code of Freedonia"
    assert doc.fields["book"] == "Book III Obligations"
    assert doc.fields["section"] == "Section 3 Lease"
    assert doc.fields["heading_path"] == (
        "Civil Code of Freedonia › Book III Obligations › Chapter 1 Contracts › Section 3 Lease")


def test_the_loader_refuses_a_judgement_of_an_unknown_article(tmp_path):
    for path in SHIPPED_DATA.rglob("*"):
        if path.is_file():
            target = tmp_path / path.relative_to(SHIPPED_DATA)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    with open(tmp_path / "qrels.trec", "a") as handle:
        handle.write("R01-1 0 art-99 1\n")
    with pytest.raises(DataFormatError, match="art-99"):
        ExampleCivil().load(tmp_path, log)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("model", LEXICAL)
def test_every_lexical_model_runs_on_every_protocol(example_plugin, tmp_path, model, protocol):
    out = tmp_path / "out"
    run("--task", "example-civil", "--model", model, "--protocol", protocol, "--output", str(out))
    results = json.loads((out / "results.json").read_text())
    assert results["task"]["protocol"] == protocol
    assert [s["name"] for s in results["splits"]] == PROTOCOLS[protocol]
    for split in results["splits"]:
        assert 0.0 <= split["scores"]["F2@3"] <= 1.0
        assert 0.0 <= split["scores"]["Jaccard@3"] <= 1.0
    assert {"F2@3", "F2@5", "Jaccard@3"} <= set(results["all_queries"])
    assert {"F2@3", "Jaccard@3"} <= set(next(iter(results["per_query"].values())))


def test_bm25_reproduces_the_published_reference(example_plugin, tmp_path):
    out = tmp_path / "out"
    run("--task", "example-civil", "--model", "bm25", "--output", str(out))  # default protocol: per-year
    aggregate = json.loads((out / "results.json").read_text())["aggregate"]
    published = next(p for p in ExampleCivil.task_info().published if p.label == "BM25 (statbench defaults)")
    assert published.protocol == "per-year"
    for label, value in published.scores.items():
        assert aggregate[label]["mean"] == pytest.approx(value, abs=5e-5), label


def test_f2_is_the_set_based_f_beta_of_the_top_k(example_plugin, tmp_path):
    """F2@3 per query, recomputed by hand from the run and the qrels."""
    out = tmp_path / "out"
    run("--task", "example-civil", "--model", "bm25", "--protocol", "latest", "--output", str(out))
    results = json.loads((out / "results.json").read_text())
    ranked: dict[str, list[str]] = {}
    for line in (out / "run.trec").read_text().splitlines():
        qid, _, doc, rank, _, _ = line.split()
        ranked.setdefault(qid, []).append(doc)
    data = ExampleCivil().load(None, log)
    for qid, scores in results["per_query"].items():
        relevant = {d for d, g in data.qrels[qid].items() if g > 0}
        hits = len(set(ranked[qid][:3]) & relevant)
        p, r = hits / 3, hits / len(relevant)
        expected = 5 * p * r / (4 * p + r) if hits else 0.0
        assert scores["F2@3"] == pytest.approx(expected), qid


def test_one_leaderboard_board_per_protocol(example_plugin, tmp_path):
    results = tmp_path / "results"
    for protocol in PROTOCOLS:
        for model in ("bm25", "tfidf"):
            run("--task", "example-civil", "--model", model, "--protocol", protocol,
                "--output", str(results / protocol / model))
    from statbench.leaderboard.collect.reading import collect

    boards, problems = collect(results)
    assert problems == []
    assert sorted(boards) == ["example-civil", "example-civil @ splits R03"]
    assert all(len(rows) == 2 for rows in boards.values())
    site = tmp_path / "site"
    built = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(results), "--out", str(site)])
    assert built.exit_code == 0, built.output
    pages = sorted(p.name for p in site.glob("task-*.html"))
    assert len(pages) == 2 and "task-example-civil.html" in pages


def test_list_shows_protocols_and_counts(example_plugin):
    result = CliRunner().invoke(cli, ["list", "-v", "tasks"])
    assert result.exit_code == 0, result.output
    assert "example-civil" in result.output
    assert "per-year*: R01 (5), R02 (5)" in result.output
    assert "latest: R03 (6)" in result.output
