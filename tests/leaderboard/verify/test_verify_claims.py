"""A verified badge only over checked claims (issue 33 §1): under ``--verify`` a row's data
facts, its run against the corpus and the frozen pool it claims, its efficiency figures
and its recorded command are checked, or shown as declared; a row whose figures re-score
exactly but whose other claims are false is refused with one line."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import edit_results, edit_run, run_stard_outputs, write_uk_pool
from fixture_data import rows_by_folder as rows

from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.repo.submission import SubmissionError, location_of
from statbench.leaderboard.verify import claims
from statbench.leaderboard.verify.verify import Verifier
from statbench.registry import plugins
from statbench.results.record import Results
from statbench.scoring.publishable import check_results, read_publishable


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """``statbench run --model bm25`` on the miniature STARD, made once."""
    return run_stard_outputs(tmp_path_factory.mktemp("claims"), ([],))


@pytest.fixture
def outputs(built, tmp_path) -> Path:
    """A private copy of the output set (tests tamper with it)."""
    return Path(shutil.copytree(built / "statbench-output" / "stard", tmp_path / "outputs"))


@pytest.fixture
def data(built) -> Path:
    return built / "stard"


def verdict(outputs: Path, data: Path, name: str = "bm25"):
    verifier = Verifier({"stard": data})
    collect(outputs, verify=verifier)
    return {path.parent.name: v for path, v in verifier.outcomes}[name]


def refused_line(outputs: Path, data: Path, name: str = "bm25") -> str:
    found = verdict(outputs, data, name)
    assert found.status == "refused", found
    assert "\n" not in found.reason
    return found.reason


def judged(folder: Path) -> set[tuple[str, str]]:
    return {tuple(line.split()[0:3:2]) for line in (folder / "qrels.trec").read_text("utf-8").splitlines()}


def unjudged_line(folder: Path) -> str:
    """A line of the run that ranks a document not relevant to its query (changing its
    document leaves every figure as it is)."""
    relevant = judged(folder)
    for line in (folder / "run.trec").read_text("utf-8").splitlines():
        qid, _, doc = line.split()[:3]
        if (qid, doc) not in relevant:
            return line
    raise AssertionError("every ranked document is relevant")


# --- what a verified badge covers -------------------------------------------------------------


def test_a_verified_row_says_what_was_checked_and_what_is_only_declared(outputs, data):
    found = verdict(outputs, data)
    assert found.status == "verified"
    assert found.checked == ("figures", "data facts", "run within corpus", "efficiency consistency", "command")
    assert "efficiency" in found.declared and "hardware" in found.declared and "timings" in found.declared
    assert "cost" not in found.declared and "model card" not in found.declared
    assert found.covers() == ("checked: figures, data facts, run within corpus, efficiency consistency, command; "
                              f"declared (not re-measured): {', '.join(found.declared)}")
    # a refused or unverifiable row covers nothing
    edit_results(outputs / "bm25", lambda obj: obj["task"].__setitem__("corpus_size", 1))
    refused = verdict(outputs, data)
    assert refused.checked == () and refused.covers() == ""


def test_a_command_that_is_not_statbench_run_is_declared_not_checked(outputs, data):
    edit_results(outputs / "bm25", lambda obj: obj.__setitem__("command", "python bench/my_script.py --fast"))
    found = verdict(outputs, data)
    assert found.status == "verified"
    assert "command" not in found.checked and "command" in found.declared


# --- data facts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, said", [
    ("corpus_size", 99999, "task.corpus_size: claimed 99,999 documents, the data hold "),
    ("language", "en", "task.language: claimed 'en', task stard here is 'zh'"),
    ("dropped", ["q-1: an empty question"], "task.dropped: claimed 1 item(s) dropped, the loader drops 0"),
    ("files", ["corpus.jsonl"], "task.files: claimed corpus.jsonl, the data files are "),
    ("corpus_checksum", "0" * 64, "task.corpus_checksum: claimed 000000000000…, the corpus as loaded here is "),
    ("protocol", "", "task.protocol: claimed '', but its splits are protocol "),
])
def test_a_data_fact_edited_with_the_figures_untouched_is_refused(outputs, data, field, value, said):
    edit_results(outputs / "bm25", lambda obj: obj["task"].__setitem__(field, value))
    line = refused_line(outputs, data)
    assert line.startswith(f"{outputs / 'bm25' / 'results.json'}: {said}")


def test_the_corpus_size_published_figures_are_matched_by_is_the_datas_on_a_verified_row(outputs, data):
    """The corpus size decides whether a task's published figures are ranked beside the
    rows: a verified row's is the local data's."""
    from fixture_data import STARD_CORPUS

    found = rows(collect(outputs, verify=Verifier({"stard": data})))
    assert {row.corpus_size for row in found.values()} == {len(STARD_CORPUS)}


def test_a_split_query_count_edited_is_refused(outputs, data):
    def edit(obj):
        obj["splits"][0]["n_queries"] += 1

    edit_results(outputs / "bm25", edit)
    assert "claimed" in refused_line(outputs, data) and "queries" in refused_line(outputs, data)


# --- the run against the corpus -----------------------------------------------------------------


def test_a_run_ranking_a_document_the_corpus_lacks_is_refused_though_its_figures_rescore(outputs, data):
    folder = outputs / "bm25"
    line = unjudged_line(folder)
    qid, q0, doc, *rest = line.split()
    edit_run(folder, line + "\n", " ".join([qid, q0, "no-such-article", *rest]) + "\n", record=True)
    assert refused_line(outputs, data) == (
        f"{folder / 'results.json'}: its run ranks 1 document id(s) that are not documents of the corpus of task "
        "stard (e.g. 'no-such-article'): it cannot come from these data")


def test_a_run_ranking_a_query_the_task_lacks_is_refused(outputs, data):
    folder = outputs / "bm25"
    line = unjudged_line(folder)
    qid, rest = line.split(" ", 1)
    edit_run(folder, line + "\n", f"{line}\nno-such-query {rest}\n", record=True)
    assert refused_line(outputs, data).endswith(
        "its run ranks 1 query id(s) that are not queries of task stard (e.g. 'no-such-query')")


def test_run_facts_are_cached_with_the_figures(outputs, data):
    folder = outputs / "bm25"
    line = unjudged_line(folder)
    qid, q0, doc, *rest = line.split()
    edit_run(folder, line + "\n", " ".join([qid, q0, "no-such-article", *rest]) + "\n", record=True)
    first = Verifier({"stard": data})
    collect(outputs, verify=first)
    again = Verifier({"stard": data})
    collect(outputs, verify=again)
    assert again.rescored == 0 and again.count("refused") == 1
    assert "no-such-article" in again.lines("refused")[0]


# --- the run against its frozen pool -----------------------------------------------------------


PASSAGES = {"p-a": "A person who contravenes a direction commits an offence.",
            "p-b": "A local authority may give a direction to close premises.",
            "p-c": "These Regulations come into force on the day after they are made.",
            "p-d": "The Secretary of State may by regulations make transitional provision."}
QUERIES = {"Q1": "What if a person contravenes a direction?", "Q2": "When do these Regulations come into force?"}
POOL = {"Q1": ["p-a", "p-b"], "Q2": ["p-c", "p-a"]}


def run_on_pool(tmp_path, monkeypatch, pool: dict, *options: str):
    """A ``statbench run --task ukstat --pool hand OPTIONS`` output on the hand-made pool
    ``pool`` (query -> passages, best first), and its data folder."""
    data = write_uk_pool(tmp_path / "uk", PASSAGES, QUERIES, "Q1\t0\tp-a\t3\nQ2\t0\tp-c\t3\n", "".join(
        f"{q} Q0 {d} {i + 1} {10 - i} hand\n" for q, docs in pool.items() for i, d in enumerate(docs)))
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    args = ["run", "--task", "ukstat", "--pool", "hand", *options, "--data-dir", str(data), "--no-progress"]
    monkeypatch.setattr(sys, "argv", ["statbench", *args])
    plugins.reset_registry()
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [folder] = (tmp_path / "statbench-output" / "ukstat").iterdir()
    return folder, data


@pytest.fixture
def pooled(tmp_path, monkeypatch):
    """A run of the pool itself: 2 of the 4 passages per query."""
    return run_on_pool(tmp_path, monkeypatch, POOL)


def test_a_reranking_ranks_only_the_pools_top_rerank_depth(tmp_path, monkeypatch):
    # Q1's top candidate p-b is not relevant, nor is p-d, its second
    folder, data = run_on_pool(tmp_path, monkeypatch, {"Q1": ["p-b", "p-d"], "Q2": ["p-c", "p-a"]},
                               "--reranker", "length-prior", "--rerank-depth", "1")
    verifier = Verifier({"ukstat": data})
    assert collect(folder.parent, verify=verifier).problems == []
    [(_, found)] = verifier.outcomes
    assert found.status == "verified", found.reason
    assert "run within pool" in found.checked and "command" in found.checked
    # the second candidate, never handed to the reranker
    edit_run(folder, "Q1 Q0 p-b ", "Q1 Q0 p-d ", record=True)
    verifier = Verifier({"ukstat": data})
    collect(folder.parent, verify=verifier)
    [line] = verifier.lines("refused")
    assert "its run ranks 1 document(s) that pool 'hand' does not hold for their query (e.g. 'p-d' for query 'Q1'; " \
           "a reranking of the pool ranks only its top 1 candidates)" in line
    # more documents for a query than the reranker was handed
    text = (folder / "run.trec").read_text("utf-8")
    first = text.splitlines()[0].split()
    edit_run(folder, text, text + " ".join([first[0], "Q0", "p-b", "2", "-1000", first[5]]) + "\n", record=True)
    verifier = Verifier({"ukstat": data})
    collect(folder.parent, verify=verifier)
    [line] = verifier.lines("refused")
    assert "its run ranks up to 2 documents for a query, but the reranker was handed 1 candidates per query" in line


def test_a_pool_run_within_its_pool_is_verified_with_the_pool_checked(pooled):
    folder, data = pooled
    verifier = Verifier({"ukstat": data})
    [(_, found)] = [(p, v) for p, v in (collect(folder.parent, verify=verifier) and verifier.outcomes)]
    assert found.status == "verified", found.reason
    assert "run within pool" in found.checked


def test_a_pool_run_ranking_a_document_outside_its_pool_is_refused(pooled):
    folder, data = pooled
    # p-d is a passage of the corpus, not relevant to Q1, not among Q1's candidates
    edit_run(folder, "Q1 Q0 p-b ", "Q1 Q0 p-d ", record=True)
    verifier = Verifier({"ukstat": data})
    collect(folder.parent, verify=verifier)
    [line] = verifier.lines("refused")
    assert line == (f"{folder / 'results.json'}: its run ranks 1 document(s) that pool 'hand' does not hold for "
                    "their query (e.g. 'p-d' for query 'Q1'; a reranking of the pool ranks only its candidates): it "
                    "is not a reranking of that pool")


def test_a_pool_row_without_the_pools_sha256_declares_its_pool(pooled):
    folder, data = pooled
    edit_results(folder, lambda obj: obj.pop("pool_sha256"))
    verifier = Verifier({"ukstat": data})
    collect(folder.parent, verify=verifier)
    [(_, found)] = verifier.outcomes
    assert found.status == "verified" and "pool" in found.declared and "run within pool" not in found.checked


def test_a_run_lies_within_a_pool_when_each_query_ranks_only_its_candidates():
    found = claims.pool_problem({"Q1": [("p-a", 2.0)]}, {"Q1": [("p-a", 3.0), ("p-b", 2.0)]}, "hand", None)
    assert found is None
    # reranked: only the pool's top rerank-depth candidates (the harness's order)
    line = claims.pool_problem({"Q1": [("p-b", 2.0)]}, {"Q1": [("p-a", 3.0), ("p-b", 2.0)]}, "hand", 1)
    assert line.startswith("its run ranks 1 document(s) that pool 'hand' does not hold for their query (e.g. 'p-b' "
                           "for query 'Q1'; a reranking of the pool ranks only its top 1 candidates)")
    assert claims.pool_problem({"Q9": [("p-a", 2.0)]}, {"Q1": [("p-a", 3.0)]}, "hand", None) is not None


# --- efficiency and cost --------------------------------------------------------------------------


def _with_efficiency(folder: Path, **changes) -> dict:
    obj = json.loads((folder / "results.json").read_text("utf-8"))
    efficiency = obj["efficiency"]
    for key, value in changes.items():
        if "/" in key:
            outer, inner = key.split("/")
            efficiency.setdefault(outer, {})[inner] = value
        else:
            efficiency[key] = value
    return obj


def test_the_runs_own_efficiency_figures_agree(outputs):
    obj = json.loads((outputs / "bm25" / "results.json").read_text("utf-8"))
    assert obj["efficiency"]["throughput_qps"] and check_results(Results.from_json(obj)) == []


@pytest.mark.parametrize("changes, said", [
    ({"throughput_qps": 1e6}, "efficiency/throughput_qps: 1000000.0 q/s over "),
    ({"query_latency/queries": 999}, "not the 999 the latency was measured over"),
    ({"query_latency/median_ms": 50.0, "query_latency/p95_ms": 40.0}, "median 50.0 ms is above the p95 40.0 ms"),
    ({"query_latency/median_ms": 1e6, "query_latency/p95_ms": 1e6}, "more than search_seconds"),
    ({"index_seconds": 1234.5}, "efficiency/index_seconds: 1234.5, but timings/index is "),
    ({"search_seconds": 1234.5}, "efficiency/search_seconds: 1234.5, but timings/search + rerank is "),
    ({"hardware/gpu": "NVIDIA H100"}, None),
    ({"api": {"documents_sent": 10, "tokens_sent": None, "cost_usd": 0.5, "price": None}},
     "efficiency/api: API usage recorded, but the run has no reranker"),
])
def test_efficiency_figures_that_contradict_each_other_or_the_run_are_not_publishable(outputs, tmp_path, changes, said):
    obj = _with_efficiency(outputs / "bm25", **changes)
    if said is None:  # the GPU named is not the environment's accelerator (none: no GPU used)
        obj.setdefault("environment", {})["accelerator"] = "NVIDIA A100"
        said = "efficiency/hardware/gpu: 'NVIDIA H100', but the environment's accelerator is 'NVIDIA A100'"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(obj), "utf-8")
    with pytest.raises(DataFormatError, match="efficiency") as caught:
        read_publishable(path)
    assert said in str(caught.value)
    # and a board leaves the row off, saying why
    folder = tmp_path / "board" / "x"
    folder.mkdir(parents=True)
    path.replace(folder / "results.json")
    found = collect(tmp_path / "board")
    assert not found.boards and any(said in line for line in found.problems)


def _paid(**api) -> dict:
    return {"efficiency": {"api": api}, "reranker": {"name": "r"}, "timings": {}}


@pytest.mark.parametrize("api, said", [
    ({"documents_sent": 0, "tokens_sent": None, "cost_usd": 0.5, "price": "USD 2 per 1,000 search units"},
     "a cost recorded, but no document was sent"),
    ({"documents_sent": 6, "tokens_sent": None, "cost_usd": 0.5, "price": None}, "without a price"),
    ({"documents_sent": 6, "tokens_sent": None, "cost_usd": 0.0031, "price": "USD 2 per 1,000 search units (x)"},
     "is 1.55 search units at"),
    ({"documents_sent": 6, "tokens_sent": 1000, "cost_usd": 0.001, "price": "USD 0.05 per 1,000,000 tokens (x)"},
     "is 20000 tokens at the price, but tokens_sent is 1000"),
    ({"documents_sent": 6, "tokens_sent": None, "cost_usd": 0.0, "price": "USD 2 per 1,000 search units"},
     "not whole billed units"),
])
def test_a_cost_that_is_not_units_at_the_price_is_refused(api, said):
    from statbench.scoring.efficiency_checks import efficiency_problems

    [line] = efficiency_problems(_paid(**api))
    assert said in line


@pytest.mark.parametrize("api", [
    {"documents_sent": 6, "tokens_sent": None, "cost_usd": 0.004, "price": "USD 2 per 1,000 search units (c, as of d)"},
    {"documents_sent": 6, "tokens_sent": 70, "cost_usd": 70 * 0.05 / 1e6, "price": "USD 0.05 per 1,000,000 tokens"},
    {"documents_sent": 6, "tokens_sent": None, "cost_usd": None, "price": None},  # no price known: no cost
    {"documents_sent": 0, "tokens_sent": 0, "cost_usd": 0.0, "price": None},  # all from the response cache
    {"documents_sent": 6, "tokens_sent": None, "cost_usd": 0.0123, "price": "$2.00 per 1,000 searches"},  # declared
])
def test_costs_as_the_rerankers_record_them_pass(api):
    from statbench.scoring.efficiency_checks import efficiency_problems

    assert efficiency_problems(_paid(**api)) == []


def test_phases_longer_than_the_whole_run_are_refused():
    from statbench.scoring.efficiency_checks import efficiency_problems

    assert efficiency_problems({"timings": {"load": 1.0, "index": 2.0, "total": 3.5}}) == []
    [line] = efficiency_problems({"timings": {"load": 1.0, "index": 2.0, "total": 1.5}})
    assert line == "timings/index: 2.0 s, longer than the whole run (total 1.5 s)"
    [line] = efficiency_problems({"timings": {"load": 1.0, "index": 1.0, "total": 1.5}})
    assert line.startswith("timings: the phases add up to 2.0000 s, more than the whole run (total 1.5 s)")


def test_efficiency_counting_more_queries_than_the_splits_hold_is_refused_by_verify(outputs, data):
    """Consistent with itself (publishable), but more queries measured than the run's splits
    hold: only the data can tell."""
    def edit(obj):
        eff = obj["efficiency"]
        eff["query_latency"]["queries"] = 1000
        eff["throughput_qps"] = round(1000 / eff["search_seconds"], 4)
        eff["query_latency"]["median_ms"] = eff["query_latency"]["p95_ms"] = 0.0

    edit_results(outputs / "bm25", edit)
    assert check_results(Results.read(outputs / "bm25" / "results.json")) == []
    assert "efficiency/query_latency: 1,000 queries measured, but the run's splits hold " in refused_line(outputs, data)


def test_a_throughput_of_fewer_queries_than_a_run_that_computed_every_split_is_refused_by_verify(outputs, data):
    """A whole number of queries (publishable), but not the test queries of splits all
    computed in that run (``cache``: every split a miss)."""
    def edit(obj):
        eff = obj["efficiency"]
        del eff["query_latency"]
        eff["throughput_qps"] = round(1 / eff["search_seconds"], 4)

    edit_results(outputs / "bm25", edit)
    obj = json.loads((outputs / "bm25" / "results.json").read_text("utf-8"))
    assert set(obj["cache"].values()) == {"miss"} and check_results(Results.from_json(obj)) == []
    assert "test queries, every split computed in that run" in refused_line(outputs, data)


# --- the record against its recorded command ---------------------------------------------------


def test_a_parameter_only_in_the_record_is_refused_by_verify_and_by_placing(outputs, data):
    edit_results(outputs / "bm25", lambda obj: obj["model"]["params"].__setitem__("k1", 0.9))
    line = refused_line(outputs, data)
    assert line.endswith("does not describe this result: parameter k1=0.9 recorded, but the command does not give it "
                         "and its default is 1.2")
    with pytest.raises(SubmissionError, match="parameter k1=0.9 recorded, but the command does not give it"):
        location_of(Results.read(outputs / "bm25" / "results.json"))


@pytest.mark.parametrize("field, value, said", [
    ("trained", True, "trained=true recorded, but bm25 with these parameters does not learn from the task's training "
                      "queries"),
    ("family", "dense", "family 'dense' recorded, but bm25 is of family 'lexical'"),
])
def test_what_the_model_is_is_the_installed_models(outputs, data, field, value, said):
    """The board filters rows by family and by trained / zero-shot: on a verified row they
    are the model's (of the version recorded)."""
    edit_results(outputs / "bm25", lambda obj: obj["model"].__setitem__(field, value))
    assert refused_line(outputs, data).endswith(f"does not describe this result: {said}")


def test_a_parameter_the_model_does_not_declare_is_refused(outputs):
    edit_results(outputs / "bm25", lambda obj: obj["model"]["params"].__setitem__("turbo", True))
    with pytest.raises(SubmissionError, match="parameter turbo=True recorded, but bm25 has no such parameter"):
        location_of(Results.read(outputs / "bm25" / "results.json"))


def test_a_parameter_the_command_spells_at_its_default_agrees(outputs, data):
    edit_results(outputs / "bm25", lambda obj: obj.__setitem__("command", obj["command"] + " --param k1=1.2"))
    assert verdict(outputs, data).status == "verified"


def test_splits_the_command_does_not_select_are_refused(outputs, data):
    edit_results(outputs / "bm25", lambda obj: obj.__setitem__("command", obj["command"] + " --split fold-1"))
    assert "does not describe this result: splits fold-1, not fold-1, fold-2" in refused_line(outputs, data)


def _as_gdsr(obj, budget, preset: str):
    """The record of a gdsr run with ``preset`` (what gdsr makes of it: cpu-small sets other
    parameters too), saying ``budget``; its command gives the preset unless it is the default."""
    from statbench.registry.plugins import get_registry

    cls = get_registry().retrievers["gdsr"].cls
    defaults = cls.defaults()
    obj["model"].update(name="gdsr", family="dense", trained=True, params=dict(cls(preset=preset).params),
                        version=cls.version)
    obj["model"].pop("budget", None)
    if budget:
        obj["model"]["budget"] = budget
    if "defaults" in obj["model"]:
        obj["model"]["defaults"] = {k: v for k, v in defaults.items() if isinstance(v, (str, int, float, bool))}
    obj["command"] = obj["command"].replace("--model bm25", "--model gdsr") + (
        " --param preset=cpu-small" if preset == "cpu-small" else "")


def test_a_budget_only_in_the_command_is_refused(outputs):
    edit_results(outputs / "bm25", lambda obj: _as_gdsr(obj, None, "cpu-small"))
    with pytest.raises(SubmissionError, match=r"budget: the command's parameters make 'preset=cpu-small', the record "
                                              "says None"):
        location_of(Results.read(outputs / "bm25" / "results.json"))
    edit_results(outputs / "bm25", lambda obj: obj["model"].__setitem__("budget", "preset=cpu-small"))
    assert location_of(Results.read(outputs / "bm25" / "results.json")).config is not None


def test_a_preset_sets_parameters_the_command_does_not_spell(outputs):
    """gdsr's preset=cpu-small sets epochs=1 (and more): recorded, not given, yet what the command makes."""
    edit_results(outputs / "bm25", lambda obj: _as_gdsr(obj, "preset=cpu-small", "cpu-small"))
    assert Results.read(outputs / "bm25" / "results.json").model.params["epochs"] == 1
    assert location_of(Results.read(outputs / "bm25" / "results.json")).config is not None
    edit_results(outputs / "bm25", lambda obj: obj["model"]["params"].__setitem__("epochs", 3))
    with pytest.raises(SubmissionError, match="parameter epochs=3 recorded, but the command does not give it and the "
                                              "command makes it 1"):
        location_of(Results.read(outputs / "bm25" / "results.json"))


def test_a_budget_only_in_the_record_is_refused(outputs):
    edit_results(outputs / "bm25", lambda obj: _as_gdsr(obj, "preset=cpu-small", "paper"))
    with pytest.raises(SubmissionError, match=r"budget: the record says 'preset=cpu-small', but the command runs the "
                                              "protocol's settings"):
        location_of(Results.read(outputs / "bm25" / "results.json"))


# --- the model card against the record --------------------------------------------------------


def test_a_card_saying_no_training_data_for_a_trained_model_is_refused(outputs):
    from statbench.leaderboard.repo.submission import card_parameters, card_problems

    results = Results.read(outputs / "bm25" / "results.json")
    card = {"card_version": 1, "model": {"name": "BM25", "version": "1"}, "source": "local",
            "parameters": card_parameters(results), "training_data": "None ", "test_queries_seen": False,
            "hardware": "2 CPU cores", "licence": "MIT", "authors": ["A"]}
    assert card_problems(card, results) == []  # bm25 learns nothing from the task
    edit_results(outputs / "bm25", lambda obj: obj["model"].__setitem__("trained", True))
    trained = Results.read(outputs / "bm25" / "results.json")
    assert card_problems(card, trained) == ["training_data: 'none', but results.json records a model trained on the "
                                            "task's training queries (model.trained)"]
    assert card_problems({**card, "training_data": "the task's training folds"}, trained) == []
