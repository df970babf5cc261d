"""Parameters that do not apply (``Param(languages=..., when=...)``) are neither recorded as
choices nor accepted: the UK (English) BM25 row must not list ``segmenter: jieba-rs``, a
bm25s run no Lucene-only ``analyzer``, a Lucene run no bm25s ``method``."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re

import pytest

from statbench.api import Measure, Param, Query, Reranker, Retriever, Split, Task, TaskData, TaskInfo, hookimpl
from statbench.contract.params import ParamError, applicable_params, declare, inapplicable
from statbench.run.request import RunRequest, default_output_dir, equivalent_command
from statbench.run.runner import Run
from statbench.testing import invoke_cli, registered_plugin

from lexical_fixtures import EN_DOCS

# --- the declaration ------------------------------------------------------------------------------


def test_languages_are_kept_as_primary_subtags():
    assert Param("x", languages="zh").languages == ("zh",)
    assert Param("x", languages=("zh-Hans", "ZH_cn", "nb", "no")).languages == ("zh", "no")
    with pytest.raises(TypeError, match="Param.languages must be language tags"):
        Param("x", languages=("zh", 3))


def test_conditions_are_kept_in_one_form_that_replace_keeps():
    one = Param("x", when={"backend": "bm25s"})
    assert one.when == ((("backend", ("bm25s",)),),)
    either = Param("x", when=({"backend": ("bm25s", "native")}, {"analyzer": "statbench", "backend": "lucene"}))
    assert either.when == ((("backend", ("bm25s", "native")),), (("analyzer", ("statbench",)), ("backend", ("lucene",))))
    assert dataclasses.replace(either, default="y").when == either.when
    assert hash(either) == hash(dataclasses.replace(either))
    for bad in ("backend", {"backend": ()}, ({},), 3):
        with pytest.raises(TypeError, match="Param.when"):
            Param("x", when=bad)


def test_a_condition_must_name_another_declared_parameter_and_a_value_it_allows():
    with pytest.raises(ParamError, match="parameter method applies with engine=..., which is not another declared"):
        declare({"method": Param("a", when={"engine": "x"}), "backend": Param("x", choices=("x", "y"))})
    with pytest.raises(ParamError, match="parameter method applies with method=..."):
        declare({"method": Param("a", when={"method": "a"})})
    with pytest.raises(ParamError, match=re.escape("parameter backend='z' for the condition of parameter method: "
                                                   "not an allowed value")):
        declare({"method": Param("a", when={"backend": "z"}), "backend": Param("x", choices=("x", "y"))})


def test_a_plugin_whose_condition_names_nothing_is_refused_at_registration():
    from statbench.registry.class_checks import PluginError, check_model_class

    class Broken(Retriever):
        name = "broken-when"
        default_params = {"method": Param("a", when={"backend": "x"})}

    with pytest.raises(PluginError, match="Broken.default_params: .*which is not another declared parameter"):
        check_model_class(Broken, Retriever)


# --- which apply ----------------------------------------------------------------------------------


def bm25(**params):
    from statbench.models.lexical.bm25 import BM25

    return BM25(**params)


@pytest.mark.parametrize("language, params, dropped", [
    ("zh", {}, ["analyzer"]),
    ("zh-Hant", {}, ["analyzer"]),
    ("zh", {"backend": "lucene"}, ["method", "segmenter"]),  # Lucene's CJK bigrams segment nothing
    ("zh", {"backend": "lucene", "analyzer": "statbench"}, ["method"]),  # statbench's tokens: jieba's
    ("en-GB", {}, ["analyzer", "segmenter"]),
    ("en", {"backend": "lucene"}, ["method", "segmenter"]),
    ("fr", {"backend": "lucene", "analyzer": "statbench"}, ["method", "segmenter"]),
    (None, {}, ["analyzer"]),  # no language known: only the conditions on other parameters
])
def test_which_bm25_parameters_apply(language, params, dropped):
    model = bm25(**params)
    assert inapplicable(model.param_specs(), model.params, language) == dropped


@pytest.mark.parametrize("model, language, params, dropped", [
    ("ql", "zh", {}, ["analyzer"]),
    ("ql", "zh", {"backend": "lucene"}, ["segmenter"]),
    ("ql", "zh", {"backend": "lucene", "analyzer": "statbench"}, []),
    ("ql", "en", {}, ["analyzer", "segmenter"]),
    ("tfidf", "en", {}, ["segmenter"]),
    ("tfidf", "zh", {}, []),
    ("word2vec", "fr", {}, ["segmenter"]),
    ("fasttext", "zh", {}, []),
    ("doct5query", "fr", {}, ["analyzer", "segmenter"]),
    ("doct5query", "fr", {"backend": "lucene"}, ["method", "segmenter"]),
])
def test_which_parameters_of_the_other_lexical_models_apply(model, language, params, dropped):
    from statbench.registry.plugins import get_registry

    cls = get_registry().get("retrievers", model).cls
    assert inapplicable(cls.param_specs(), cls(**params).params, language) == dropped


def test_a_condition_on_a_parameter_that_does_not_apply_does_not_hold():
    declared = {"backend": Param("a", choices=("a", "b")), "mode": Param("x", choices=("x", "y"), when={"backend": "b"}),
                "depth": Param(1, when={"mode": "x"})}
    assert inapplicable(declared, {"backend": "a", "mode": "x", "depth": 1}, "en") == ["mode", "depth"]
    assert inapplicable(declared, {"backend": "b", "mode": "x", "depth": 1}, "en") == []


def test_a_given_parameter_that_does_not_apply_is_refused_in_one_line():
    model = bm25(segmenter="jieba")
    with pytest.raises(ParamError) as caught:
        applicable_params(model.params, model.param_specs(), "en-GB", "bm25", given={"segmenter": "jieba"},
                          task="ukstat")
    assert str(caught.value) == ("parameter segmenter='jieba' for bm25 does not apply to task ukstat (language en-GB): "
                                 "it applies to zh tasks only; drop it")
    model = bm25(backend="lucene", method="robertson")
    with pytest.raises(ParamError) as caught:
        applicable_params(model.params, model.param_specs(), "zh", "bm25", given=["backend", "method"], task="stard")
    assert str(caught.value) == ("parameter method='robertson' for bm25 does not apply with backend='lucene': "
                                 "it applies with backend='bm25s' only; drop it")
    model = bm25(backend="lucene", segmenter="jieba")
    with pytest.raises(ParamError, match=re.escape(
            "parameter segmenter='jieba' for bm25 does not apply with backend='lucene', analyzer='default': it "
            "applies with backend='bm25s', or with analyzer='statbench' only; drop it")):
        applicable_params(model.params, model.param_specs(), "zh", "bm25", given=["segmenter"], task="stard")
    # not given: left out, never refused
    assert "segmenter" not in applicable_params(bm25().params, bm25().param_specs(), "en", "bm25")


# --- a run ----------------------------------------------------------------------------------------


class TinyEn(Task):
    info = TaskInfo(name="tiny-applies-en", language="en-GB", measures=(Measure("R@3", "R@3"),), depth=10)

    def load(self, data_dir, log):
        queries = {"q1": Query("q1", "tenant rent"), "q2": Query("q2", "landlord deposit")}
        return TaskData(corpus={d.id: d for d in EN_DOCS}, queries=queries,
                        qrels={"q1": {"d1": 1}, "q2": {"d2": 1}}, splits=[Split("test", ("q1", "q2"))], files=[],
                        checksum=hashlib.sha256(b"tiny-applies-en").hexdigest())


class ZhOnlyReranker(Reranker):
    """A reranker with a Chinese-only parameter and one that applies with another's value."""

    name = "zh-only-reranker"
    default_params = {"mode": Param("keep", choices=("keep", "reverse")),
                      "script": Param("simplified", languages=("zh",)),
                      "strength": Param(1.0, when={"mode": "reverse"})}

    def rerank(self, queries, candidates, corpus, ctx):
        return {q.id: [(d, float(len(candidates[q.id]) - i)) for i, d in enumerate(candidates[q.id])]
                for q in queries}


class Plugin:
    @hookimpl
    def register_tasks(self, register):
        register(TinyEn)

    @hookimpl
    def register_rerankers(self, register):
        register(ZhOnlyReranker)


@pytest.fixture
def plugin():
    with registered_plugin(Plugin(), "applies"):
        yield


def run(*args):
    return invoke_cli(["run", *args, "--no-progress"])


def test_an_english_run_records_neither_the_segmenter_nor_the_lucene_analyzer(plugin, tmp_path):
    result = run("--task", "tiny-applies-en", "--model", "bm25", "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "out" / "results.json").read_text())
    assert record["model"]["params"] == {"b": 0.75, "backend": "bm25s", "k1": 1.2, "method": "lucene",
                                         "preset": "default", "with_headings": False}


def test_a_lucene_run_records_no_bm25s_method_and_keeps_what_applies(stard_dir, tmp_path):
    lucene = Run(RunRequest(task="stard", model="bm25", params={"backend": "lucene"}, output=tmp_path / "a"),
                 logging.getLogger("test"), None)
    assert set(lucene.retriever.params) == {"k1", "b", "preset", "backend", "analyzer", "with_headings"}
    tokens = Run(RunRequest(task="stard", model="bm25", params={"backend": "lucene", "analyzer": "statbench",
                                                                "segmenter": "jieba"}, output=tmp_path / "b"),
                 logging.getLogger("test"), None)
    assert tokens.retriever.params["segmenter"] == "jieba" and "method" not in tokens.retriever.params
    assert tokens.retriever.analyzer(_context("zh")).segmenter == "jieba"  # what is recorded is what is used
    bm25s = Run(RunRequest(task="stard", model="bm25", output=tmp_path / "c"), logging.getLogger("test"), None)
    assert set(bm25s.retriever.params) == {"k1", "b", "preset", "method", "backend", "segmenter", "with_headings"}
    assert bm25s.retriever.config()["params"] == {k: v for k, v in bm25s.retriever.params.items()
                                                  if k != "with_headings"}


def _context(language):
    from statbench.testing import make_context

    return make_context("/nonexistent", language)


@pytest.mark.parametrize("args, line", [
    (["--task", "tiny-applies-en", "--model", "bm25", "--param", "segmenter=jieba-rs"],
     "parameter segmenter='jieba-rs' for bm25 does not apply to task tiny-applies-en (language en-GB): it applies "
     "to zh tasks only; drop it"),
    (["--task", "tiny-applies-en", "--model", "tfidf", "--param", "segmenter=jieba"],
     "parameter segmenter='jieba' for tfidf does not apply to task tiny-applies-en (language en-GB): it applies "
     "to zh tasks only; drop it"),
    (["--task", "tiny-applies-en", "--model", "bm25", "--param", "analyzer=statbench"],
     "parameter analyzer='statbench' for bm25 does not apply with backend='bm25s': it applies with "
     "backend='lucene' only; drop it"),
    (["--task", "tiny-applies-en", "--model", "bm25", "--param", "backend=lucene", "--param", "method=bm25l"],
     "parameter method='bm25l' for bm25 does not apply with backend='lucene': it applies with backend='bm25s' "
     "only; drop it"),
    (["--task", "tiny-applies-en", "--model", "bm25", "--reranker", "zh-only-reranker", "--reranker-param",
      "script=traditional"],
     "parameter script='traditional' for zh-only-reranker does not apply to task tiny-applies-en (language "
     "en-GB): it applies to zh tasks only; drop it"),
    (["--task", "tiny-applies-en", "--model", "bm25", "--reranker", "zh-only-reranker", "--reranker-param",
      "strength=2"],
     "parameter strength=2.0 for zh-only-reranker does not apply with mode='keep': it applies with "
     "mode='reverse' only; drop it"),
])
def test_a_parameter_that_does_not_apply_stops_the_run_before_any_work(plugin, tmp_path, args, line):
    out = tmp_path / "out"
    result = run(*args, "--output", out)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"Error: {line}"
    assert not out.exists()


def test_a_reranker_records_only_what_applies(plugin, tmp_path):
    result = run("--task", "tiny-applies-en", "--model", "bm25", "--reranker", "zh-only-reranker",
                 "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "out" / "results.json").read_text())
    assert record["reranker"]["params"] == {"mode": "keep"}


def test_folders_and_commands_are_those_of_the_parameters_given(stard_dir, tmp_path):
    request = RunRequest(task="stard", model="bm25")
    assert default_output_dir(request).as_posix() == "statbench-output/stard/bm25"
    assert equivalent_command(request) == "statbench run --task stard --model bm25"
    request = RunRequest(task="stard", model="bm25", params={"segmenter": "jieba"})
    assert default_output_dir(request).as_posix() == "statbench-output/stard/bm25,segmenter=jieba"
