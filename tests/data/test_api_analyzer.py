"""The public analyzer (``statbench.api.Analyzer``): a plugin's tokens are the built-in
lexical models' tokens, and a plugin built on it reproduces the built-in BM25 exactly.

``RM3`` below is a third-party-style plugin written from docs/models-lexical.md alone: it
imports only ``statbench.api`` (and bm25s, the library the docs name), analyses with
``Analyzer.for_task`` and scores with bm25s. With its feedback switched off
(``fb_terms=0``) every per-query figure and every run-file line equal the built-in
``bm25``'s, on a Chinese task (segmentation), a French and an English one (elision, stop
words, stemming, NFKC)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

import statbench.api as api
from statbench.api import (
    SEGMENTER_PARAM,
    Analyzer,
    Document,
    Measure,
    Param,
    Query,
    Retriever,
    Split,
    Task,
    TaskData,
    TaskInfo,
    hookimpl,
)
from statbench.testing import invoke_cli, make_context, registered_plugin

from fixture_data import STARD_CORPUS

# --- the plugin, as its author would write it from the docs -----------------------------------


class RM3(Retriever):
    """BM25 (bm25s, Lucene's formula) with RM3 pseudo-relevance feedback on statbench's tokens."""

    name = "bm25-rm3-doc"
    family = "lexical"
    description = "BM25 + RM3 on statbench's analysis"
    default_params = {
        "k1": Param(1.2, "term-frequency saturation", min=0.0),
        "b": Param(0.75, "document-length normalisation", min=0.0, max=1.0),
        "fb_docs": Param(10, "feedback documents", min=1),
        "fb_terms": Param(10, "feedback terms (0: no feedback)", min=0),
        "original_query_weight": Param(0.5, "weight of the original query", min=0.0, max=1.0),
        "segmenter": SEGMENTER_PARAM,
    }

    def index(self, corpus, ctx):
        import bm25s

        # params.get: the segmenter is not in self.params on a task that is not Chinese
        self._analyze = Analyzer.for_task(ctx, segmenter=self.params.get("segmenter"))
        self._ids = [d.id for d in corpus]
        self._docs = [self._analyze(d.text) for d in corpus]
        self._bm25 = bm25s.BM25(k1=self.params["k1"], b=self.params["b"], method="lucene")
        self._bm25.index(self._docs, show_progress=False)

    def search(self, queries, k, ctx):
        vocab = self._bm25.vocab_dict
        out = {}
        for query in queries:
            terms = [t for t in self._analyze(query.text) if t in vocab]
            if not terms:
                out[query.id] = []
                continue
            scores = self._bm25.get_scores(terms)
            if self.params["fb_terms"]:
                scores = self._expanded(terms, scores)
            out[query.id] = self._top(scores, k)
        return out

    def _expanded(self, terms, scores):
        import numpy as np

        top = [int(d) for d in np.argsort(-scores, kind="stable")[:self.params["fb_docs"]] if scores[d] > 0]
        relevance = Counter()
        for d in top:
            for term, count in Counter(self._docs[d]).items():
                relevance[term] += float(scores[d]) * count / len(self._docs[d])
        chosen = sorted(relevance, key=lambda t: (-relevance[t], t))[:self.params["fb_terms"]]
        total = sum(relevance[t] for t in chosen) or 1.0
        alpha = self.params["original_query_weight"]
        weights = Counter({t: alpha * c / len(terms) for t, c in Counter(terms).items()})
        for term in chosen:
            weights[term] += (1 - alpha) * relevance[term] / total
        return sum(w * self._bm25.get_scores([t]) for t, w in sorted(weights.items()))

    def _top(self, scores, k):
        ranked = sorted(((self._ids[i], float(s)) for i, s in enumerate(scores) if s > 0), key=lambda p: (-p[1], p[0]))
        return ranked[:k]


# --- small tasks in English and French ----------------------------------------------------------

MEASURES = (Measure("R@3", "R@3"), Measure("MRR@10", "RR@10"), Measure("nDCG@10", "nDCG@10"))

EN_CORPUS = [
    Document("hra-8", "Everyone has the right to respect for his private and family life, his home and his "
                      "correspondence."),
    Document("hra-12", "Men and women of marriageable age have the right to marry and to found a family."),
    Document("lta-11", "In a lease of a dwelling-house the lessor's Repairing obligations include keeping in "
                       "repair the structure and exterior of the dwelling-house."),
    Document("lta-4", "Where a tenant has a right to occupy premises as a residence in consideration of a rent "
                      "payable weekly, the landlord shall provide a rent book."),
    Document("era-13", "An employer shall not make a deduction from wages of a worker employed by him unless "
                       "the deduction is required by statute."),
    Document("era-86", "The notice required to be given by an employer to terminate the contract of employment "
                       "of a person who has been continuously employed for one month or more."),
    Document("fw", "ＴＥＮＡＮＴＳ’ ﬁnancial duties: the Tenant pays the rent; the landlord repairs."),
]
EN_QUERIES = {
    "q1": ("Can my landlord refuse to give me a rent book if I pay weekly?", {"lta-4": 1}),
    "q2": ("Who must repair the structure of a rented house?", {"lta-11": 1}),
    "q3": ("Is my employer allowed to deduct money from my wages?", {"era-13": 1}),
    "q4": ("How much notice must my employer give me?", {"era-86": 1}),
    "q5": ("right to marry and found a family", {"hra-12": 1, "hra-8": 1}),
    "q6": ("tenant’s FINANCIAL duties", {"fw": 1}),
}
FR_CORPUS = [
    Document("salaire", "L'employeur doit payer le salaire des travailleurs à la fin de chaque mois."),
    Document("loyer", "Le locataire paie le loyer au bailleur et l'entretien du logement loué."),
    Document("autorite", "Les enfants mineurs restent sous l'autorité de leurs parents jusqu'à la majorité."),
    Document("divorce", "Le divorce peut être prononcé par consentement mutuel des époux."),
    Document("bail", "Le bail d’habitation est conclu pour une durée d’au moins trois ans ; qu’il soit écrit."),
    Document("preavis", "Le locataire qui donne congé respecte un préavis de trois mois, réduit à un mois en zone "
                        "tendue."),
]
FR_QUERIES = {
    "q-salaire": ("Quand mon employeur doit-il me payer mon salaire ?", {"salaire": 1}),
    "q-loyer": ("Qui paie les loyers du logement ?", {"loyer": 1}),
    "q-autorite": ("Jusqu'à quel âge les enfants sont-ils sous l'autorité des parents ?", {"autorite": 1}),
    "q-bail": ("Quelle est la durée minimale d’un bail d'habitation ?", {"bail": 1}),
    "q-preavis": ("Combien de mois de préavis pour quitter le logement ?", {"preavis": 1, "loyer": 1}),
}


def tiny_task(name: str, language: str, corpus, queries):
    class Tiny(Task):
        info = TaskInfo(name=name, language=language, measures=MEASURES, depth=10)

        def load(self, data_dir, log):
            return TaskData(corpus={d.id: d for d in corpus},
                            queries={q: Query(q, text) for q, (text, _) in queries.items()},
                            qrels={q: dict(judged) for q, (_, judged) in queries.items()},
                            splits=[Split("test", tuple(sorted(queries)))], files=[],
                            checksum=hashlib.sha256(name.encode()).hexdigest())

    return Tiny


TinyEn = tiny_task("tiny-law-en", "en-GB", EN_CORPUS, EN_QUERIES)
TinyFr = tiny_task("tiny-law-fr", "fr", FR_CORPUS, FR_QUERIES)


class Plugin:
    @hookimpl
    def register_tasks(self, register):
        register(TinyEn)
        register(TinyFr)

    @hookimpl
    def register_retrievers(self, register):
        register(RM3)


@pytest.fixture
def plugin():
    with registered_plugin(Plugin(), "rm3-from-the-docs"):
        yield


# --- tokens -------------------------------------------------------------------------------------

STARD_DOCS = [Document(str(row["id"]), row["content"]) for row in STARD_CORPUS]


def test_the_built_ins_analyse_through_the_public_analyzer():
    from statbench.models.lexical import analysis
    from statbench.models.lexical.bm25 import BM25

    assert analysis.Analyzer is api.Analyzer and analysis.SEGMENTER_PARAM["segmenter"] is api.SEGMENTER_PARAM
    ctx = make_context(Path("/nonexistent"), "zh-Hans")
    for params in ({}, {"segmenter": "jieba"}):
        built_in = BM25(**params).analyzer(ctx)
        assert isinstance(built_in, Analyzer)
        assert built_in.key() == Analyzer.for_task(ctx, segmenter=params.get("segmenter")).key()


@pytest.mark.parametrize("language, docs", [("zh", STARD_DOCS), ("fr", FR_CORPUS), ("en-GB", EN_CORPUS)])
@pytest.mark.parametrize("model", ["bm25", "tfidf", "word2vec"])
def test_a_plugins_tokens_are_the_built_in_models_tokens(tmp_path, language, docs, model):
    """The built-ins' cached corpus analysis (term ids merged from worker blocks) gives
    exactly ``Analyzer.for_task(ctx)`` on each text; word2vec's: without stemming."""
    from statbench.registry.plugins import get_registry

    built_in = get_registry().get("retrievers", model).cls()
    ctx = make_context(tmp_path, language)
    analyze = Analyzer.for_task(ctx, stem=built_in.stem)
    assert built_in.tokens(docs, ctx) == [analyze(d.text) for d in docs]
    assert built_in.stem is (model != "word2vec")


@pytest.mark.parametrize("language, docs", [("zh", STARD_DOCS), ("fr", FR_CORPUS), ("en", EN_CORPUS)])
def test_tokens_merged_from_worker_processes_are_the_analyzers_too(tmp_path, monkeypatch, language, docs):
    from statbench.models.lexical.bm25 import BM25

    monkeypatch.setenv("STATBENCH_WORKERS", "2")  # blocks of one text, shared with a forked worker
    ctx = make_context(tmp_path, language)
    assert BM25().tokens(docs, ctx) == [Analyzer.for_task(ctx)(d.text) for d in docs]


@pytest.mark.parametrize("language, text, terms", [
    # NFKC (full-width letters, the ﬁ ligature), lower case, stop words, Porter2 stemming
    ("en-GB", "The Tenants’ ＲＩＧＨＴＳ and the landlord's ﬁnancial duties",
     ["tenant", "right", "landlord", "s", "financi", "duti"]),
    # elision (l’ and qu’ with either apostrophe), stop words, Snowball French
    ("fr", "L’employeur doit payer le salaire jusqu'à la fin du mois ; qu’il ﬁnance",
     ["employeur", "doit", "pai", "salair", "fin", "mois", "financ"]),
    # jieba words, punctuation and stop words dropped, full-width digits made ASCII
    ("zh-Hans", "个体工商户的债务，个人经营的，以个人财产承担（第５６条）",
     ["个体", "工商户", "债务", "经营", "个人财产", "承担", "56", "条"]),
])
def test_the_analyzer_does_what_the_docs_say(tmp_path, language, text, terms):
    assert Analyzer.for_task(make_context(tmp_path, language))(text) == terms


def test_the_tasks_own_stop_words_replace_the_languages(tmp_path):
    import dataclasses

    ctx = dataclasses.replace(make_context(tmp_path, "en"), stopwords=frozenset({"tenants"}))
    assert Analyzer.for_task(ctx)("The Tenants’ rights") == ["the", "right"]


def test_a_language_the_analysis_does_not_know_is_refused_in_one_line(tmp_path):
    with pytest.raises(api.StatbenchError, match=r"^task language 'ja': statbench's lexical analysis knows en, fr, "):
        Analyzer.for_task(make_context(tmp_path, "ja"))


# --- the plugin reproduces bm25 -----------------------------------------------------------------


def run(out: Path, task: str, model: str, *args) -> tuple[dict, list[list[str]]]:
    result = invoke_cli(["run", "--task", task, "--model", model, *args, "--output", out, "--no-progress"])
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in (out / "run.trec").read_text("utf-8").splitlines()]
    return json.loads((out / "results.json").read_text("utf-8")), [parts[:5] for parts in lines]  # tag left out


@pytest.mark.parametrize("task", ["stard", "tiny-law-fr", "tiny-law-en"])
def test_the_plugin_without_feedback_gives_the_built_in_bm25s_figures_exactly(plugin, tmp_path, stard_dir, task):
    data = ["--data-dir", stard_dir] if task == "stard" else []
    bm25, bm25_lines = run(tmp_path / "bm25", task, "bm25", *data)
    rm3, rm3_lines = run(tmp_path / "rm3", task, "bm25-rm3-doc", "--param", "fb_terms=0", *data)
    assert rm3["per_query"] == bm25["per_query"] and rm3["aggregate"] == bm25["aggregate"]
    assert rm3_lines == bm25_lines and len(bm25_lines) > len(bm25["per_query"])  # every line, not just the figures
    assert any(v > 0 for scores in bm25["per_query"].values() for v in scores.values())
    # the segmenter is a choice on the Chinese task only: recorded there, not elsewhere
    assert ("segmenter" in rm3["model"]["params"]) == (task == "stard") == ("segmenter" in bm25["model"]["params"])
    # and the feedback switch is real: on, the run differs
    _, with_feedback = run(tmp_path / "rm3-fb", task, "bm25-rm3-doc", "--param", "fb_docs=2", *data)
    assert with_feedback != bm25_lines
