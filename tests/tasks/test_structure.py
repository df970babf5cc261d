"""Legislative structure in Document.fields: STARD's structure.jsonl (strict reader, the data
checksum untouched) and the legislative graph built from it (legal_graph)."""

from __future__ import annotations

import logging

import pytest
from click.testing import CliRunner

from fixture_data import STARD_CORPUS
from statbench.api import Document
from statbench.errors import DataFormatError, StatbenchError
from statbench.models.gdsr.legal_graph import build_graph, cached_graph, structure_digest
from statbench.tasks.stard import Stard
from structure_fixtures import HEADINGS, structure_lines, write_structure

LOG = logging.getLogger("test")


def test_structure_reaches_document_fields_and_leaves_the_checksum_alone(stard_dir):
    without = Stard().load(stard_dir, LOG)
    assert all(not d.fields for d in without.corpus.values())
    write_structure(stard_dir, structure_lines())
    data = Stard().load(stard_dir, LOG)
    assert data.checksum == without.checksum
    assert data.corpus["民法典第五十四条"].fields == {
        "code": "民法典", "category": "民法典", "description": "第一编 总则 › 第二章 自然人 › 第四节 个体工商户",
        "heading_path": "民法典 › 第一编 总则 › 第二章 自然人 › 第四节 个体工商户",
        "book": "第一编 总则", "chapter": "第二章 自然人", "section": "第四节 个体工商户"}
    assert data.corpus["婚姻法第二条"].fields["heading_path"] == "婚姻法"
    assert [d.text for d in data.corpus.values()] == [d.text for d in without.corpus.values()]
    # articles under the same headings share one (read-only) mapping: memory for the headings, once
    assert data.corpus["民法典第五十六条"].fields is data.corpus["民法典第五十四条"].fields
    assert data.corpus["建筑法第一条"].fields is not data.corpus["刑法第一条"].fields


@pytest.mark.parametrize("lines, message", [
    (structure_lines() + [{"id": "无此法第一条", "law": "无此法", "category": "x", "headings": []}],
     "line 7, field 'id': article '无此法第一条' is not in the corpus"),
    (structure_lines() + [structure_lines()[0]], "line 7, field 'id': article '建筑法第一条' listed twice (first on line 1)"),
    (structure_lines()[:-1], "1 corpus article(s) have no line (e.g. 婚姻法第二条)"),
    (structure_lines()[:2] + ['{"id": "刑法第一条", "law": '] + structure_lines()[2:], "line 3"),
    ([{**structure_lines()[0], "headings": "第一章 总则"}] + structure_lines()[1:],
     "line 1, field 'headings': expected a list of headings, found a string"),
    ([{k: v for k, v in structure_lines()[0].items() if k != "law"}] + structure_lines()[1:], "line 1"),
    ([{**structure_lines()[0], "headings": ["第一章 › 总则"]}] + structure_lines()[1:], "contains '›'"),
])
def test_structure_reader_is_strict(stard_dir, lines, message):
    write_structure(stard_dir, lines)
    with pytest.raises(DataFormatError) as raised:
        Stard().load(stard_dir, LOG)
    assert "structure.jsonl" in str(raised.value)
    assert message in str(raised.value)


def test_a_bad_structure_file_is_one_line_and_exit_2(stard_dir, isolated_cache):
    from statbench.commands.cli import cli

    write_structure(stard_dir, structure_lines()[:-1])
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                      "--no-progress"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "have no line" in lines[0]


def test_an_empty_heading_is_left_out_and_reported(stard_dir):
    lines = structure_lines()
    lines[4] = {**lines[4], "headings": [""]}
    write_structure(stard_dir, lines)
    data = Stard().load(stard_dir, LOG)
    assert data.corpus["刑法第一条"].fields["heading_path"] == "刑法"
    assert data.dropped == ["structure.jsonl line 5: article 刑法第一条 lists an empty heading (left out)"]


# -- the legislative graph ---------------------------------------------------------------------

def _docs(paths: dict[str, str]) -> list[Document]:
    return [Document(i, f"text {i}", fields={"heading_path": p} if p else {}) for i, p in paths.items()]


def test_graph_matches_a_hand_built_tree():
    docs = _docs({"a1": "Civil › Book 1 › Title 1", "a2": "Civil › Book 1 › Title 1", "a3": "Civil › Book 1",
                  "a4": "Penal", "a5": "", "a6": "Civil › Book 2 › Title 1"})
    graph = build_graph(docs)
    # sections: Civil, Civil›Book 1, Civil›Book 1›Title 1, Penal, Civil›Book 2, Civil›Book 2›Title 1
    assert graph.sections == [("Civil",), ("Civil", "Book 1"), ("Civil", "Book 1", "Title 1"), ("Penal",),
                              ("Civil", "Book 2"), ("Civil", "Book 2", "Title 1")]
    assert graph.n_articles == 6 and graph.n_nodes == 12
    node = {path: 6 + j for j, path in enumerate(graph.sections)}
    assert graph.parent[:6] == [node[("Civil", "Book 1", "Title 1")], node[("Civil", "Book 1", "Title 1")],
                                node[("Civil", "Book 1")], node[("Penal",)], -1, node[("Civil", "Book 2", "Title 1")]]
    assert graph.parent[6:] == [-1, node[("Civil",)], node[("Civil", "Book 1")], -1, node[("Civil",)],
                                node[("Civil", "Book 2")]]
    # 5 article edges + 4 section edges, each in both directions; the same title under two books is two nodes
    edges = {tuple(e) for e in graph.edge_index.T.tolist()}
    assert graph.edge_index.shape == (2, 18) and len(edges) == 18
    assert (0, node[("Civil", "Book 1", "Title 1")]) in edges and (node[("Civil", "Book 1", "Title 1")], 0) in edges
    assert not any(4 in e for e in edges)  # a5 has no structure: isolated
    assert graph.section_titles() == ["Civil", "Book 1", "Title 1", "Penal", "Book 2", "Title 1"]


def test_graph_of_the_stard_fixture_has_one_section_per_heading_prefix(stard_dir):
    write_structure(stard_dir, structure_lines())
    corpus = list(Stard().load(stard_dir, LOG).corpus.values())
    graph = build_graph(corpus)
    prefixes = {(law, *heads[:i]) for law, heads in HEADINGS.values() for i in range(len(heads) + 1)}
    assert set(graph.sections) == prefixes and len(graph.sections) == 9
    assert graph.n_articles == len(STARD_CORPUS)
    penal = graph.sections.index(("刑法", "第一编 总则")) + graph.n_articles
    assert graph.parent[[d.id for d in corpus].index("刑法第一条")] == penal


def test_a_corpus_without_structure_has_no_graph():
    with pytest.raises(StatbenchError, match="declares no legislative structure"):
        build_graph(_docs({"a": "", "b": ""}))


def test_graph_is_cached_and_reused(tmp_path):
    from lexical_fixtures import context

    docs = _docs({"a1": "Civil › Book 1", "a2": "Civil"})
    first = cached_graph(docs, context(tmp_path))
    again = cached_graph(docs, context(tmp_path))
    assert (first.reused, again.reused) == (False, True)
    assert again.sections == first.sections and again.parent == first.parent
    assert (again.edge_index == first.edge_index).all()
    moved = _docs({"a1": "Civil › Book 2", "a2": "Civil"})
    assert structure_digest(moved) != structure_digest(docs)
    assert cached_graph(moved, context(tmp_path)).reused is False


def test_a_changed_structure_file_is_not_served_from_the_cached_task_load(stard_dir, isolated_cache, tmp_path):
    """A fully cached run skips the corpus parse through a cached summary of the task load,
    keyed by the declared files: the structure file is one of them, so a changed structure
    rebuilds the runs of a model that reads it (and never serves the old ones)."""
    from statbench.run.runner import execute
    from statbench.run.request import RunRequest

    def run(name):
        outcome = execute(RunRequest(task="stard", model="bm25", params={"with_headings": True}, data_dir=stard_dir,
                                     output=tmp_path / name), LOG, lambda *a, **k: (lambda n=1: None))
        return outcome.results

    write_structure(stard_dir, structure_lines())
    assert set(run("cold")["cache"].values()) == {"miss"}
    assert set(run("warm")["cache"].values()) == {"hit"}
    changed = {**HEADINGS, "刑法第一条": ("刑法", ["第二编 分则"])}
    write_structure(stard_dir, structure_lines(changed))
    assert set(run("changed")["cache"].values()) == {"miss"}
    assert set(run("changed-warm")["cache"].values()) == {"hit"}
