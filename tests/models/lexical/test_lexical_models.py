"""BM25 (bm25s), QL and TF-IDF against hand-computed scores; French and Chinese rankings."""

from __future__ import annotations

import math
import re
import sys

import pytest
from lexical_fixtures import BM25_EXPECTED, EN_DOCS, FR_DOCS, FR_QUERIES, QUERY, context, top

from statbench.api import Document, Query
from statbench.contract.params import ParamError
from statbench.errors import StatbenchError, UnknownNameError
from statbench.models.lexical.analysis import Analyzer, analyse_texts
from statbench.models.lexical.bm25 import BM25
from statbench.models.lexical.ql import QueryLikelihood
from statbench.models.lexical.tfidf import TfIdf


def test_analyzers():
    assert Analyzer("en")("The tenants pays deposits") == ["tenant", "pay", "deposit"]
    assert Analyzer("fr")("L'employeur doit payer les salaires") == ["employeur", "doit", "pai", "salair"]
    assert Analyzer("fr", stem=False)("Qu'il paie l'entretien") == ["paie", "entretien"]
    assert Analyzer("zh")("个体工商户的债务") == ["个体", "工商户", "债务"]


def test_chinese_segmenters_agree_and_cache_apart():
    text = "个体工商户可以起字号。劳动者依法享有平等就业和自主择业的权利，工资应当以货币形式按月支付。"
    rust, python = Analyzer("zh", stopwords=()), Analyzer("zh", stopwords=(), segmenter="jieba")
    assert rust(text) == python(text)
    assert rust(text)[:4] == ["个体", "工商户", "可以", "起"]
    assert rust.key() != python.key()  # tokenised corpora are cached per segmenter
    assert Analyzer("en").key() == Analyzer("en", segmenter="jieba").key()  # no segmenter outside zh


def test_worker_processes_analyse_like_this_process(monkeypatch):
    texts = [d.text for d in FR_DOCS] * 3 + ["个体工商户的债务", ""]
    analyzer = Analyzer("fr")
    serial = [analyzer(text) for text in texts]
    monkeypatch.setenv("STATBENCH_WORKERS", "3")
    advanced = []
    assert analyse_texts(Analyzer("fr"), texts, lambda n=1: advanced.append(n)) == serial
    assert sum(advanced) == len(texts)
    assert analyse_texts(Analyzer("fr"), []) == []
    from statbench.models.lexical import analysis

    monkeypatch.setattr(analysis, "can_fork", lambda: False)  # fresh interpreters...
    monkeypatch.setattr(sys, "executable", "/bin/false")  # ...that die
    with pytest.raises(StatbenchError, match=r"an analysis worker failed \(exit 1; STATBENCH_WORKERS=1"):
        analyse_texts(Analyzer("fr"), texts)
    monkeypatch.setenv("STATBENCH_WORKERS", "two")
    with pytest.raises(StatbenchError, match="STATBENCH_WORKERS='two': expected a whole number"):
        analyse_texts(Analyzer("fr"), texts)


def test_unknown_segmenter_is_refused_at_construction():
    with pytest.raises(ParamError, match=re.escape(
            "parameter segmenter='icu' for bm25: not an allowed value; expected one of 'jieba-rs', 'jieba'")):
        BM25(segmenter="icu")
    with pytest.raises(UnknownNameError, match=re.escape("unknown segmenter 'icu'; valid choices: jieba, jieba-rs")):
        Analyzer("zh", segmenter="icu")


def test_bm25s_matches_hand_computed_scores(tmp_path):
    model = BM25()
    model.index(EN_DOCS, context(tmp_path))
    ranking = model.search(QUERY, 10, context(tmp_path))["q"]
    assert top(ranking) == ["d1", "d3", "d2"]
    assert dict(ranking) == pytest.approx(BM25_EXPECTED, rel=1e-5)


def test_bm25_presets_and_bad_values():
    assert BM25(preset="gdsr").params["k1"] == 2.5 and BM25(preset="gdsr").params["b"] == 0.2
    assert BM25(preset="bsard", b=0.5).params == {**BM25.defaults(), "k1": 1.0, "b": 0.5, "preset": "bsard"}
    with pytest.raises(ParamError, match=re.escape(
            "parameter backend='solr' for bm25: not an allowed value; expected one of 'bm25s', 'lucene'")):
        BM25(backend="solr")
    with pytest.raises(ParamError, match=re.escape(
            "parameter preset='okapi' for bm25: not an allowed value; expected one of 'default', 'bsard', 'gdsr', "
            "'pyserini'")):
        BM25(preset="okapi")
    with pytest.raises(UnknownNameError):
        TfIdf(k1=1.0)


def test_ql_matches_hand_computed_dirichlet(tmp_path):
    # mu=2, |C|=9, p(rent)=2/9, p(deposit)=4/9, two query terms:
    #   d1: ln(1 + 2/(2*2/9)) + 2 ln(2/5); d2: ln(1 + 1/(2*4/9)) + 2 ln(2/4); d3: ln(1 + 3/(2*4/9)) + 2 ln(2/6)
    model = QueryLikelihood(mu=2.0)
    model.index(EN_DOCS, context(tmp_path))
    ranking = model.search(QUERY, 10, context(tmp_path))["q"]
    assert top(ranking) == ["d1", "d2", "d3"]
    expected = {"d1": math.log(5.5) + 2 * math.log(0.4), "d2": math.log(2.125) + 2 * math.log(0.5),
                "d3": math.log(4.375) + 2 * math.log(1 / 3)}
    assert dict(ranking) == pytest.approx(expected, rel=1e-9)
    assert expected["d1"] == pytest.approx(-0.1278333715)
    # the index is cached: a new instance reads it back and scores the same
    again = QueryLikelihood(mu=2.0)
    again.index(EN_DOCS, context(tmp_path))
    assert dict(again.search(QUERY, 10, context(tmp_path))["q"]) == pytest.approx(expected)


def test_tfidf_cosine_matches_hand_computed(tmp_path):
    # idf = ln((1+3)/(1+df)) + 1; query "tenant deposit" has both terms at idf ln(4/3)+1, so
    # d3 = (1 + 3)/sqrt(2 * 10) exactly; d1 and d2 share one term each.
    model = TfIdf()
    model.index(EN_DOCS, context(tmp_path))
    ranking = model.search([Query("q", "tenant deposit")], 10, context(tmp_path))["q"]
    assert top(ranking) == ["d3", "d2", "d1"]
    assert dict(ranking) == pytest.approx({"d3": 4 / math.sqrt(20), "d2": 0.4280460351, "d1": 0.2513287083}, rel=1e-8)
    assert model.search([Query("none", "unknown words")], 10, context(tmp_path))["none"] == []


@pytest.mark.parametrize("model", [BM25(), QueryLikelihood(), TfIdf()], ids=["bm25", "ql", "tfidf"])
def test_french_rankings(tmp_path, model):
    ctx = context(tmp_path, "fr")
    model.index(FR_DOCS, ctx)
    results = model.search(FR_QUERIES, 10, ctx)
    for query in FR_QUERIES:
        assert top(results[query.id])[0] == query.id.removeprefix("q-"), (query.text, results[query.id])


@pytest.mark.parametrize("name", ["bm25", "ql", "tfidf"])
def test_end_to_end_on_stard_fixture(stard_dir, tmp_path, name):
    import logging

    from statbench.run.request import RunRequest
    from statbench.run.runner import execute

    outcome = execute(RunRequest(task="stard", model=name, data_dir=stard_dir, output=tmp_path / "out"),
                      logging.getLogger("t"), lambda d, total=None: (lambda n=1: None))
    assert outcome.results["all_queries"]["R@5"] == 1.0
    assert outcome.results["all_queries"]["MRR@3"] >= 0.8


# -- with_headings: the heading path indexed with the text -------------------------------------

HEADED_DOCS = [
    Document("d1", "The tenant rent rent.", fields={"heading_path": "Housing code › Lease"}),
    Document("d2", "A landlord deposit.", fields={"heading_path": "Housing code › Deposit"}),
    Document("d3", "Tenant deposit, deposit and deposit."),  # no structure: its text alone
]


def test_with_headings_prepends_the_heading_path_to_the_tokens(tmp_path):
    plain, headed = BM25(), BM25(with_headings=True)
    assert plain.tokens(HEADED_DOCS, context(tmp_path)) == [["tenant", "rent", "rent"], ["landlord", "deposit"],
                                                           ["tenant", "deposit", "deposit", "deposit"]]
    assert headed.tokens(HEADED_DOCS, context(tmp_path)) == [
        ["hous", "code", "leas", "tenant", "rent", "rent"], ["hous", "code", "deposit", "landlord", "deposit"],
        ["tenant", "deposit", "deposit", "deposit"]]
    # a heading word now finds its articles
    headed.index(HEADED_DOCS, context(tmp_path, name="headed"))
    assert top(headed.search([Query("q", "lease")], 10, context(tmp_path, name="headed"))["q"]) == ["d1"]


def test_with_headings_is_part_of_every_cache_key(tmp_path):
    plain, headed = BM25(), BM25(with_headings=True)
    ctx = context(tmp_path)
    assert plain.corpus_key(HEADED_DOCS, ctx) != headed.corpus_key(HEADED_DOCS, ctx)
    plain.tokens(HEADED_DOCS, ctx)
    headed.tokens(HEADED_DOCS, ctx)
    # two tokenised corpora, neither read for the other
    assert len([p for p in (tmp_path / "tokens").iterdir() if not p.name.startswith(".")]) == 2
    # configurations from before the option keep their identity; the option shows when set
    assert "with_headings" not in plain.config()["params"]
    assert headed.config()["params"]["with_headings"] is True
    assert all("with_headings" in cls.default_params for cls in (BM25, QueryLikelihood, TfIdf))


def test_with_headings_needs_a_task_with_structure(tmp_path):
    with pytest.raises(StatbenchError, match="declares no legislative structure"):
        BM25(with_headings=True).index(EN_DOCS, context(tmp_path))


# --- language tags (issue 27): a region or script subtag never switches analysis off --------------------------------

@pytest.mark.parametrize("tag, primary, text", [
    ("en-GB", "en", "The tenants pays deposits"),
    ("EN-us", "en", "The tenants pays deposits"),
    ("fr-BE", "fr", "L'employeur doit payer les salaires"),
    ("zh-Hans", "zh", "个体工商户的债务由谁承担"),
    ("zh-CN", "zh", "个体工商户的债务由谁承担"),
    ("zh-TW", "zh", "个体工商户的债务由谁承担"),
])
def test_language_tags_analyse_as_their_primary_language(tag, primary, text):
    tagged, plain = Analyzer(tag), Analyzer(primary)
    assert tagged(text) == plain(text) and tagged.key() == plain.key()
    assert tagged.stem == plain.stem and tagged.stopwords == plain.stopwords


@pytest.mark.parametrize("tag", ["ja", "ar-EG", "x-klingon", "english"])
def test_a_language_statbench_cannot_analyse_is_refused_in_one_line(tag):
    with pytest.raises(StatbenchError) as err:
        Analyzer(tag)
    message = str(err.value)
    assert "\n" not in message and f"task language {tag!r}" in message and "knows en, fr, zh, da, de" in message


@pytest.mark.parametrize("tag, words, terms", [
    ("de-AT", "Die Arbeitgeber zahlen den Lohn", ["arbeitgeb", "zahl", "lohn"]),
    ("es", "Los trabajadores tienen derechos", ["trabaj", "derech"]),
    ("nb", "Arbeidsgiveren skal betale lønnen", ["arbeidsgiver", "betal", "lønn"]),
])
def test_other_snowball_languages_are_stemmed_without_their_stop_words(tag, words, terms):
    analyzer = Analyzer(tag)
    assert analyzer.stem and analyzer.stopwords
    assert analyzer(words) == terms


def test_a_beir_folder_in_en_gb_scores_as_en_and_japanese_stops(tmp_path):
    import json

    from beir_fixtures import write_beir
    from click.testing import CliRunner

    from statbench.commands.cli import cli

    scores = {}
    for tag in ("en", "en-GB"):
        folder = write_beir(tmp_path / tag, settings={"language": tag, "name": "lawqa"})
        result = CliRunner().invoke(cli, ["run", "--task", f"beir:{folder}", "--model", "bm25", "--output",
                                          str(tmp_path / f"out-{tag}"), "--no-progress"])
        assert result.exit_code == 0, result.output
        scores[tag] = json.loads((tmp_path / f"out-{tag}" / "results.json").read_text())["per_query"]
    assert scores["en-GB"] == scores["en"]
    folder = write_beir(tmp_path / "ja", settings={"language": "ja"})
    result = CliRunner().invoke(cli, ["run", "--task", f"beir:{folder}", "--model", "bm25", "--output",
                                      str(tmp_path / "out-ja"), "--no-progress"])
    assert result.exit_code == 2 and "task language 'ja'" in result.output.strip().splitlines()[-1], result.output
    assert not (tmp_path / "out-ja").exists()
