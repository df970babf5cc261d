"""Custom measures (statbench.scoring.measures): the built-in set-based F-beta against hand-computed
values, the one measure parser, registration checks, and a custom measure used end to end:
a task declaring it, `statbench run`, `evaluate`, `compare` and the leaderboard."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Document, Measure, Query, Retriever, Split, Task, TaskData
from statbench.registry.checks import PluginError, check_task_class
from statbench.commands.cli import cli
from statbench.scoring.evaluation import per_query_scores
from statbench.scoring.measures import (
    CustomMeasure,
    MeasureError,
    check_measure_class,
    is_custom,
    parse_measure,
)
from statbench.scoring.measures.fbeta import FBeta
from statbench.contract.params import Param
from statbench.contract.taskinfo import TaskInfo
from statbench.testing import registered_plugin

# --- a tiny graded task, and rankings with ties ---------------------------------------------

CORPUS = {f"d{i}": Document(f"d{i}", f"article {i}") for i in range(1, 7)}
QUERIES = {f"q{i}": Query(f"q{i}", f"question {i}") for i in range(1, 6)}
QRELS = {
    "q1": {"d1": 2, "d2": 1, "d5": 0},  # d5 judged non-relevant
    "q2": {"d3": 1},
    "q3": {"d4": 2, "d6": 2},
    "q4": {"d2": 1},  # the model ranks nothing for q4
    "q5": {"d3": 1, "d4": 1},
}
RANKINGS = {
    # d3 and d1 tie at 0.5: the harness puts d1 first (doc id ascending), so the top 2 is {d5, d1}
    "q1": [("d5", 0.9), ("d3", 0.5), ("d1", 0.5), ("d2", 0.2)],
    "q2": [("d1", 0.8), ("d2", 0.7)],  # no relevant document retrieved
    "q3": [("d6", 0.6), ("d4", 0.6), ("d1", 0.3)],
    "q5": [("d3", 1.0)],  # shorter than any cut-off: precision over the 1 document retrieved
}


def fb(p: float, r: float, beta: float) -> float:
    return 0.0 if p == r == 0 else (1 + beta ** 2) * p * r / (beta ** 2 * p + r)


#: per query, by hand: q1 top 3 = d5 d1 d3 (relevant d1, d2; with rel=2 only d1),
#: q3 top 3 = d4 d6 d1, q5 retrieves d3 only (relevant d3, d4; none of grade 2)
EXPECTED = {
    "F2@2": {"q1": 0.5, "q2": 0.0, "q3": 1.0, "q4": 0.0, "q5": 5 / 9},
    "F2@3": {"q1": 5 / 11, "q2": 0.0, "q3": 10 / 11, "q4": 0.0, "q5": 5 / 9},
    "F1@3": {"q1": 2 / 5, "q2": 0.0, "q3": 4 / 5, "q4": 0.0, "q5": 2 / 3},
    "F2 rel2 @3": {"q1": 5 / 7, "q2": 0.0, "q3": 10 / 11, "q4": 0.0, "q5": 0.0},
    "F2 top3": {"q1": 5 / 11, "q2": 0.0, "q3": 10 / 11, "q4": 0.0, "q5": 5 / 9},  # F2@3 under a second label
    "F": {"q1": fb(2 / 4, 2 / 2, 1), "q2": 0.0, "q3": fb(2 / 3, 1, 1), "q4": 0.0, "q5": fb(1, 1 / 2, 1)},
    "R@3": {"q1": 0.5, "q2": 0.0, "q3": 1.0, "q4": 0.0, "q5": 0.5},
    "Recall@3": {"q1": 0.5, "q2": 0.0, "q3": 1.0, "q4": 0.0, "q5": 0.5},  # R@3 under a second label
}
MEASURES = (
    Measure("F2@2", "F2@2"), Measure("F2@3", "F2@3"), Measure("F1@3", "F@3"),
    Measure("F2 rel2 @3", "F(beta=2, rel=2)@3"), Measure("F2 top3", "F(beta=2)@3"), Measure("F", "F"),
    Measure("R@3", "R@3"), Measure("Recall@3", "R@3"),
)


def harness_order(ranking):
    return sorted(ranking, key=lambda pair: (-pair[1], pair[0]))


def test_fbeta_hand_computed_values():
    scores = per_query_scores(QRELS, RANKINGS, MEASURES, list(QRELS))
    for label, by_query in EXPECTED.items():
        for qid, value in by_query.items():
            assert math.isclose(scores[qid][label], value, abs_tol=1e-12), (label, qid, scores[qid][label], value)


def test_fbeta_per_query_directly():
    f = FBeta()
    ranked = harness_order(RANKINGS["q1"])
    assert [d for d, _ in ranked] == ["d5", "d1", "d3", "d2"]
    assert f.per_query(ranked, QRELS["q1"], beta=2.0, rel=1, cutoff=2) == 0.5
    assert math.isclose(f.per_query(ranked, QRELS["q1"], beta=2.0, rel=1, cutoff=3), 5 / 11)
    assert math.isclose(f.per_query(ranked, QRELS["q1"], beta=1.0, rel=1, cutoff=None), 2 / 3)  # P=1/2, R=1
    assert math.isclose(f.per_query(ranked, QRELS["q1"], beta=0.5, rel=2, cutoff=1), 0.0)  # d5 is not relevant
    assert f.per_query(ranked, {"d9": 1}, beta=2.0, rel=1, cutoff=4) == 0.0
    assert f.per_query(ranked, {"d1": 0}, beta=2.0, rel=1, cutoff=4) == 0.0  # no relevant document at all


def test_tie_order_matters_for_the_top_k():
    # the same ranking read in the other tie order would give a top 2 of {d5, d3}: F = 0
    wrong = [("d5", 0.9), ("d3", 0.5), ("d1", 0.5)]
    assert FBeta().per_query(wrong, QRELS["q1"], beta=2.0, rel=1, cutoff=2) == 0.0
    assert per_query_scores(QRELS, {"q1": wrong}, [Measure("F2@2", "F2@2")], ["q1"])["q1"]["F2@2"] == 0.5


# --- the parser ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, params, canonical", [
    ("F2@10", {"beta": 2.0, "rel": 1, "cutoff": 10}, "F(beta=2.0)@10"),
    ("F(beta=2,rel=2)@5", {"beta": 2.0, "rel": 2, "cutoff": 5}, "F(beta=2.0,rel=2)@5"),
    ("F( beta = 0.5 ) @ 3", {"beta": 0.5, "rel": 1, "cutoff": 3}, "F(beta=0.5)@3"),
    ("F", {"beta": 1.0, "rel": 1, "cutoff": None}, "F"),
    ("F1@10", {"beta": 1.0, "rel": 1, "cutoff": 10}, "F@10"),
    ("F(cutoff=5)", {"beta": 1.0, "rel": 1, "cutoff": 5}, "F@5"),
    ("statbench:F2@10", {"beta": 2.0, "rel": 1, "cutoff": 10}, "F(beta=2.0)@10"),
])
def test_valid_custom_measure_strings(text, params, canonical):
    parsed = parse_measure(text)
    assert is_custom(parsed) and parsed.cls is FBeta and parsed.qualified == "statbench:F"
    assert parsed.kwargs == params and str(parsed) == canonical and parsed.text == text
    assert parse_measure(canonical) == parsed


def test_ir_measures_names_still_go_to_ir_measures():
    import ir_measures

    for text in ("R@100", "nDCG@10", "nDCG(gains={0:0,1:1,2:3})@10", "SetF(beta=2)", "AP"):
        parsed = parse_measure(text)
        assert not is_custom(parsed) and parsed == ir_measures.parse_measure(text)


@pytest.mark.parametrize("text, message", [
    ("Foo@10", "unknown measure 'Foo' in 'Foo@10': not an ir-measures measure nor a custom measure a plugin "
               "registered (custom measures: F"),
    ("other:F2@10", "unknown measure 'other:F2' in 'other:F2@10'"),
    ("R@ten", "ir-measures cannot parse 'R@ten' ("),
    ("F@ten", "cannot parse measure 'F@ten': the cut-off 'ten' must be an integer; expected NAME, NAME@CUTOFF or "
              "NAME(key=value, ...)@CUTOFF, e.g. F(beta=2)@10"),
    ("F@0", "measure 'F@0': parameter cutoff=0 for measure F: below the minimum; expected an int >= 1"),
    ("F@1.5", "measure 'F@1.5': parameter cutoff=1.5 for measure F: expected an int >= 1"),
    ("F(beta=0)@10", "measure 'F(beta=0)@10': parameter beta=0 for measure F: too small; expected a finite float > 0"),
    ("F(rel=1.5)", "measure 'F(rel=1.5)': parameter rel=1.5 for measure F: expected an int >= 1"),
    ("F(beta='x')", "measure \"F(beta='x')\": parameter beta='x' for measure F: expected a finite float > 0"),
    ("F(beta=x)", "cannot parse measure 'F(beta=x)': parameter beta 'x' must be a number, a quoted string, True "
                  "or False"),
    ("F(gamma=1)@10", "measure 'F(gamma=1)@10': F has no parameter 'gamma' (its parameters: beta, rel, @cutoff)"),
    ("F(2)@10", "cannot parse measure 'F(2)@10': parameters must be named"),
    ("F2(beta=3)@10", "measure 'F2(beta=3)@10': beta is given twice (by the number after the name and as beta=)"),
    ("F(cutoff=5)@5", "measure 'F(cutoff=5)@5': the cut-off is given twice (@ and cutoff=)"),
    ("F0.5@10", "cannot parse measure 'F0.5@10': the number after a name must be an integer; give the parameter "
                "by name: F(beta=0.5)"),
    ("F@10 extra", "cannot parse measure 'F@10 extra': invalid syntax"),
    ("", "cannot parse measure '': expected NAME"),
    ("@10", "cannot parse measure '@10': expected NAME"),
])
def test_invalid_measure_strings_are_refused_with_one_line(text, message):
    with pytest.raises(MeasureError) as caught:
        parse_measure(text)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_measure_must_be_a_string():
    with pytest.raises(MeasureError, match=r"^a measure must be a str such as 'nDCG@10', found int 3$"):
        parse_measure(3)


# --- a measure plugin, registration checks --------------------------------------------------


class Hits(CustomMeasure):
    """Relevant documents in the top k: unbounded above, so not checked against [0, 1]."""

    name = "Hits"
    description = "number of relevant documents in the top k"
    default_params = {"rel": Param(1, min=1), "cutoff": Param(None, type=int, min=1)}
    bounds = (0.0, math.inf)

    def per_query(self, ranking, qrels, *, rel, cutoff):
        top = ranking if cutoff is None else ranking[:cutoff]
        return float(sum(1 for doc, _ in top if qrels.get(doc, 0) >= rel))


def _measure(name="Good", **attrs):
    attrs.setdefault("per_query", lambda self, ranking, qrels, **params: 0.0)
    return type("M", (CustomMeasure,), {"name": name, **attrs})


@pytest.mark.parametrize("cls, message", [
    (int, "must subclass statbench.api.CustomMeasure"),
    (_measure("P"), "M.name 'P' is an ir-measures measure; a custom measure needs its own name"),
    (_measure("F2"), "M.name 'F2' must be letters, digits and '_', starting with a letter and not ending with a digit"),
    (_measure("my-measure"), "M.name 'my-measure' must be letters"),
    (_measure(shorthand="cutoff", default_params={"cutoff": Param(None, type=int)}),
     "M.shorthand 'cutoff' must name one of its int or float parameters other than the cut-off"),
    (_measure(shorthand="beta"), "M.shorthand 'beta' must name one of its int or float parameters"),
    (_measure(default_params={"cutoff": Param(None, type=float)}), "the cut-off must be an int parameter"),
    (_measure(default_params={"rel": Param(None, type=int)}), "parameter rel needs a default"),
    (_measure(default_params={"rel": Param(0, min=1)}), "M.default_params: the default parameter rel=0 for Good: "
                                                        "below the minimum"),
    (_measure(bounds=(1.0, 0.0)), "M.bounds (1.0, 0.0) must be None or a (low, high) pair with low < high"),
    (_measure(bounds=[0, 1]), "M.bounds [0, 1] must be None"),
    (type("M", (CustomMeasure,), {"name": "Lazy"}), "M: implements no per_query()"),
])
def test_broken_measure_classes_are_refused(cls, message):
    with pytest.raises(PluginError, match=re.escape(message)):
        check_measure_class(cls)
    check_measure_class(Hits)
    check_measure_class(FBeta)


class FixedRetriever(Retriever):
    """Returns RANKINGS (nothing for q4), scores and ties as given: the harness orders them."""

    name = "fixed"
    family = "lexical"
    default_params = {"shift": Param(0, description="rotate the rankings (a second, different system)")}

    def index(self, corpus, ctx):
        pass

    def search(self, queries, k, ctx):
        out = {}
        for q in queries:
            ranking = list(RANKINGS.get(q.id, []))
            if self.params["shift"] and ranking:
                ranking = [(d, s) for (d, _), (_, s) in zip(ranking[1:] + ranking[:1], ranking)]
            out[q.id] = ranking
        return out


TASK_MEASURES = MEASURES + (Measure("Hits@3", "Hits@3"),)


class TinyF(Task):
    info = TaskInfo(name="tiny-f", language="en", measures=TASK_MEASURES, primary_measure="F2@3", depth=10)

    def load(self, data_dir, log):
        return TaskData(corpus=dict(CORPUS), queries=dict(QUERIES), qrels={q: dict(j) for q, j in QRELS.items()},
                        splits=[Split("test", tuple(sorted(QUERIES)))], files=[], checksum="0" * 64)


class MeasurePlugin:
    """Registers a task *before* the measure it uses (the tasks hook runs first)."""

    @hookimpl
    def register_tasks(self, register):
        register(TinyF)

    @hookimpl
    def register_retrievers(self, register):
        register(FixedRetriever)

    @hookimpl
    def register_measures(self, register):
        register(Hits)


@pytest.fixture
def plugin():
    with registered_plugin(MeasurePlugin(), "tiny-measures"):
        yield


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def expected_with_hits() -> dict:
    hits = {"q1": 1.0, "q2": 0.0, "q3": 2.0, "q4": 0.0, "q5": 1.0}
    return {**EXPECTED, "Hits@3": hits}


def assert_scores(per_query: dict, expected: dict) -> None:
    assert set(per_query) == set(QRELS)
    for label, by_query in expected.items():
        for qid, value in by_query.items():
            assert math.isclose(per_query[qid][label], value, abs_tol=1e-12), (label, qid)


def run_fixed(out: Path, shift: int = 0) -> dict:
    result = invoke("run", "--task", "tiny-f", "--model", "fixed", "--param", f"shift={shift}", "--output", out,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text())


def test_run_reports_custom_measures_like_any_other(plugin, tmp_path):
    results = run_fixed(tmp_path / "run")
    assert {"label": "F2@3", "ir_measure": "F2@3"} in results["measures"]
    assert {"label": "F2 rel2 @3", "ir_measure": "F(beta=2, rel=2)@3"} in results["measures"]
    assert [m["label"] for m in results["measures"]] == [m.label for m in TASK_MEASURES]
    expected = expected_with_hits()
    assert_scores(results["per_query"], expected)
    for label, by_query in expected.items():
        mean = sum(by_query.values()) / len(by_query)
        assert math.isclose(results["aggregate"][label]["mean"], mean, abs_tol=1e-12)
        assert math.isclose(results["splits"][0]["scores"][label], mean, abs_tol=1e-12)
    # the run file holds the harness's order: d1 before d3 (tied), scores made strictly decreasing
    lines = [line.split() for line in (tmp_path / "run" / "run.trec").read_text().splitlines() if line.startswith("q1 ")]
    assert [parts[2] for parts in lines] == ["d5", "d1", "d3", "d2"]


def test_evaluate_a_hand_written_run_with_ties(plugin, tmp_path):
    """A foreign run's ties are put in trec_eval's order (doc id descending) for every
    measure, custom ones included: q1's tie d3/d1 at 0.5 puts d3 first, so its top 2 is
    {d5, d3}, F2@2 = 0, as pytrec_eval's P@2 on the very file sees it (no relevant document)."""
    import ir_measures

    from statbench.data.runfile import TIE_ORDER

    run = tmp_path / "hand.trec"
    run.write_text("".join(f"{qid} Q0 {doc} {rank} {score} hand\n" for qid, ranking in RANKINGS.items()
                           for rank, (doc, score) in enumerate(ranking, start=1)))
    result = invoke("evaluate", run, "--task", "tiny-f", "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    expected = expected_with_hits()
    expected["F2@2"] = {**expected["F2@2"], "q1": 0.0}  # q3's tie d6/d4 keeps the same top 2
    assert_scores(scores["per_query"], expected)
    assert scores["all_queries"]["F2@2"] == pytest.approx((0.0 + 1.0 + 5 / 9) / 5)
    assert scores["tie_order"] == TIE_ORDER
    p_at_2 = {m.query_id: m.value for m in ir_measures.iter_calc(
        [ir_measures.P @ 2], ir_measures.read_trec_qrels("\n".join(
            f"{q} 0 {d} {g}" for q, judged in QRELS.items() for d, g in judged.items())),
        ir_measures.read_trec_run(str(run)))}
    assert p_at_2["q1"] == 0.0 and p_at_2["q3"] == 1.0


def test_compare_on_a_custom_measure(plugin, tmp_path):
    a = run_fixed(tmp_path / "a")
    b = run_fixed(tmp_path / "b", shift=1)
    assert a["per_query"] != b["per_query"]
    for spelling in ("F2@3", "F(beta=2)@3", "F2 top3"):  # a label, or a measure string it reports
        result = invoke("compare", tmp_path / "a" / "results.json", tmp_path / "b" / "results.json",
                        "--measure", spelling, "--json")
        assert result.exit_code == 0, result.output
        test = json.loads(result.output)
        assert test["measure"] in ("F2@3", "F2 top3") and test["n"] == 5
        assert test["mean_baseline"] == pytest.approx(sum(EXPECTED["F2@3"].values()) / 5)
    # TREC runs, scored here with the task's measures
    result = invoke("compare", tmp_path / "a" / "run.trec", tmp_path / "b" / "run.trec", "--task", "tiny-f",
                    "--measure", "F2@2", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["mean_baseline"] == pytest.approx(sum(EXPECTED["F2@2"].values()) / 5)
    # the default is the task's primary measure, F2@3
    result = invoke("compare", tmp_path / "a" / "results.json", tmp_path / "b" / "results.json", "--json")
    assert json.loads(result.output)["measure"] == "F2@3"
    missing = invoke("compare", tmp_path / "a" / "results.json", tmp_path / "b" / "results.json", "--measure", "F3@3")
    assert missing.exit_code == 2 and "no measure 'F3@3'; it reports: F2@2, F2@3" in missing.output


def test_leaderboard_shows_custom_measure_columns(plugin, tmp_path):
    from statbench.scoring.publishable import is_bounded, score_problems
    from statbench.leaderboard.render.build import build_site

    run_fixed(tmp_path / "results" / "a")
    run_fixed(tmp_path / "results" / "b", shift=1)
    report = build_site(tmp_path / "results", tmp_path / "site", baseline="fixed")
    html = (tmp_path / "site" / "task-tiny-f.html").read_text("utf-8")
    blob = json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))
    assert "F2@3" in blob["measures"] and "Hits@3" in blob["measures"]
    values = [row["values"]["F2@3"] for row in blob["rows"].values()]
    assert len(values) == 2 and any(v == pytest.approx(sum(EXPECTED["F2@3"].values()) / 5) for v in values)
    assert report.rows == 2
    # F is bounded in [0, 1], Hits is not: an F above 1 is refused, a Hits of 2 is fine
    assert is_bounded("F2@3") and is_bounded("F(beta=2,rel=2)@3") and not is_bounded("Hits@3")
    results = json.loads((tmp_path / "results" / "a" / "results.json").read_text())
    assert score_problems(results) == []
    results["per_query"]["q1"]["F2@3"] = 1.5
    assert "per_query/q1/F2@3: 1.5 is outside [0, 1]" in score_problems(results)


def test_unknown_measure_fails_its_task_plugin_at_registration(plugin):
    class Typo(TinyF):
        info = TaskInfo(name="tiny-typo", language="en", measures=(Measure("G2@3", "G2@3"),))

    class TypoPlugin:
        @hookimpl
        def register_tasks(self, register):
            register(Typo)

        @hookimpl
        def register_measures(self, register):
            register(type("Other", (Hits,), {"name": "Other"}))

    with registered_plugin(TypoPlugin(), "typo-plugin"):
        result = invoke("plugins", "--json")
        failed = [p for p in json.loads(result.output) if p["name"] == "typo-plugin"]
        assert failed[0]["error"].startswith(
            "PluginError: task tiny-typo: measure 'G2@3': unknown measure 'G2' in 'G2@3': not an ir-measures "
            "measure nor a custom measure a plugin registered (custom measures: F, Hits")
        from statbench.registry.plugins import get_registry

        registry = get_registry()
        assert "tiny-typo" not in registry.tasks and "Other" not in registry.measures  # whole or nothing
        assert "tiny-f" in registry.tasks and "Hits" in registry.measures  # the others keep working
        assert invoke("run", "--task", "tiny-typo", "--model", "fixed").exit_code == 2


def test_a_task_using_the_measure_of_a_failed_plugin_fails_too():
    class Broken:  # registers a measure, then a task whose other measure is unknown: fails whole
        @hookimpl
        def register_measures(self, register):
            register(Hits)

        @hookimpl
        def register_tasks(self, register):
            register(type("B", (TinyF,), {"info": TaskInfo(name="b", language="en",
                                                           measures=(Measure("X@3", "Nope@3"),))}))

    class User:  # uses Hits, which only the broken plugin provided
        @hookimpl
        def register_tasks(self, register):
            register(type("U", (TinyF,), {"info": TaskInfo(name="u", language="en",
                                                           measures=(Measure("Hits@3", "Hits@3"),))}))

    with registered_plugin(Broken(), "broken"), registered_plugin(User(), "user"):
        from statbench.registry.plugins import get_registry

        registry = get_registry()
        assert "Nope" in registry.plugins["broken"].error
        assert "unknown measure 'Hits'" in registry.plugins["user"].error
        assert "u" not in registry.tasks and "Hits" not in registry.measures


def test_check_task_class_outside_registration_uses_the_registry(plugin):
    check_task_class(TinyF)
    bad = type("Bad", (TinyF,), {"info": TaskInfo(name="bad", language="en", measures=(Measure("F", "F(beta=-1)"),))})
    with pytest.raises(PluginError, match=re.escape("task bad: measure 'F': measure 'F(beta=-1)': parameter beta=-1 "
                                                    "for measure F: too small; expected a finite float > 0")):
        check_task_class(bad)


@pytest.mark.parametrize("returned, message", [
    (float("nan"), "returned nan for query 'q1', not a finite number"),
    ("0.5", "returned '0.5' for query 'q1', not a number"),
    (2.0, "returned 2.0 for query 'q1', outside its bounds [0, 1]"),
    (ZeroDivisionError("boom"), "failed on query 'q1': ZeroDivisionError: boom"),
])
def test_a_measure_that_misbehaves_stops_the_run_with_one_line(returned, message, tmp_path):
    def per_query(self, ranking, qrels, **params):
        if isinstance(returned, Exception):
            raise returned
        return returned

    Odd = type("Odd", (CustomMeasure,), {"name": "Odd", "bounds": (0.0, 1.0), "per_query": per_query})
    Uses = type("Uses", (TinyF,), {"info": TaskInfo(name="uses-odd", language="en", measures=(Measure("Odd", "Odd"),))})

    class OddPlugin:
        @hookimpl
        def register_measures(self, register):
            register(Odd)

        @hookimpl
        def register_tasks(self, register):
            register(Uses)

        @hookimpl
        def register_retrievers(self, register):
            register(FixedRetriever)

    with registered_plugin(OddPlugin(), "odd"):
        result = invoke("run", "--task", "uses-odd", "--model", "fixed", "--output", tmp_path / "o", "--no-progress")
    assert result.exit_code == 2
    assert f"measure 'Odd' (odd:Odd) {message}" in result.output
    assert not (tmp_path / "o" / "results.json").exists()


def test_builtin_measure_is_an_entry_point_plugin():
    from statbench.registry.plugins import get_registry

    entry = get_registry().get("measures", "F")
    assert entry.cls is FBeta and entry.qualified == "statbench:F" and entry.plugin.module == "statbench.scoring.measures.builtin"
