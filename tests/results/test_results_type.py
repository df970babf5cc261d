"""The results record as a type: the schema agrees with it field for field, every results
file round-trips through it unchanged, one builder makes it (runner and sample), and the
runner's parts and its typed parameters."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import logging

import pytest
from statbench.errors import StatbenchError
from statbench.leaderboard.sample import make_results, reranker_record, sample_results, write_sample
from statbench.results.record import (
    ModelRecord,
    Results,
    RunScores,
    SplitScores,
    read_results,
    results_schema,
    schema_mismatches,
    validation_errors,
    write_results,
)
from results_fixtures import minimal_results
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
# bench/unverified: committed rows kept off the boards (no run file to verify them); bench/results-stard-subset:
# rows on a subsample of STARD (other data, verified apart)
COMMITTED = sorted(p for folder in ("results", "results-stard-subset", "unverified") for p in (REPO / "bench" / folder).rglob("results.json"))
LOG = logging.getLogger("test")


def NO_PROGRESS(description, total=None):
    return lambda n=1: None


# --- the schema is checked against the type --------------------------------------------------


def test_schema_and_type_agree():
    assert schema_mismatches() == []


def test_a_schema_property_missing_from_the_type_is_named():
    schema = copy.deepcopy(results_schema())
    schema["properties"]["gpu_hours"] = {"type": "number"}
    schema["$defs"]["model"]["properties"]["license"] = {"type": "string"}
    problems = schema_mismatches(schema=schema)
    assert "(root)/gpu_hours: in the schema, not a field of Results" in problems
    assert "(root)/model/license: in the schema, not a field of ModelRecord" in problems
    assert "(root)/reranker/license: in the schema, not a field of ModelRecord" in problems


def test_a_type_field_missing_from_the_schema_is_named():
    schema = copy.deepcopy(results_schema())
    del schema["properties"]["throughput"]
    del schema["properties"]["splits"]["items"]["properties"]["query_ids"]
    problems = schema_mismatches(schema=schema)
    assert "(root)/throughput: a field of Results missing from the schema" in problems
    assert "(root)/splits/*/query_ids: a field of SplitScores missing from the schema" in problems

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Extended(Results):
        gpu_hours: float | None = None

    assert "(root)/gpu_hours: a field of Extended missing from the schema" in schema_mismatches(Extended)


def test_required_nullable_and_json_types_must_agree():
    schema = copy.deepcopy(results_schema())
    schema["required"].remove("timings")  # optional in the schema, required in the type
    schema["required"].append("cache")  # the other way round
    schema["properties"]["pool"] = {"type": "string"}  # the type writes null for no pool
    schema["$defs"]["plugin"]["properties"]["version"] = {"type": "string"}
    schema["properties"]["splits"]["items"]["properties"]["n_queries"] = {"type": "string"}
    problems = schema_mismatches(schema=schema)
    assert "(root)/timings: optional in the schema, required in Results" in problems
    assert "(root)/cache: required in the schema, optional in Results" in problems
    assert "(root)/pool: null is not allowed by the schema but the type writes it" in problems
    assert "(root)/model/plugin/version: null is not allowed by the schema but the type writes it" in problems
    assert "(root)/splits/*/n_queries: integer in the type, string in the schema" in problems


# --- the file format is unchanged ----------------------------------------------------------------


def test_committed_results_round_trip_unchanged():
    assert len(COMMITTED) >= 15
    for path in COMMITTED:
        obj = read_results(path)
        record = Results.read(path)
        assert record.to_json() == obj, path
        # and the JSON text as written is the same, byte for byte
        assert json.dumps(record.to_json(), sort_keys=True) == json.dumps(obj, sort_keys=True)


def test_sample_results_round_trip_and_keep_every_key(tmp_path):
    for path in write_sample(tmp_path):
        obj = read_results(path)
        assert Results.from_json(obj).to_json() == obj
    pooled = make_results({"q1": {"R@5": 1, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.5}}, pool="p",
                          reranker=reranker_record("monot5"))
    assert Results.from_json(pooled).to_json() == pooled
    assert isinstance(Results.from_json(pooled).per_query["q1"]["R@5"], int)  # numbers kept as they are


def test_absent_nullable_fields_are_written_as_null():
    """``reranker``, ``pool`` and a plugin's distribution/version may be left out of a file
    by hand; the runner always wrote them (null when none), and so does the type."""
    obj = minimal_results()
    again = Results.from_json(obj).to_json()
    assert again == {**obj, "reranker": None, "pool": None,
                     "model": {**obj["model"], "plugin": {"name": "bm25", "distribution": None, "version": None}}}
    assert validation_errors(again) == []


def test_fields_read_as_records():
    record = Results.from_json(make_results({"q1": {"R@5": 1.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.5},
                                             "q2": {"R@5": 0.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.0}},
                                            splits={"a": ["q1"], "b": ["q2"]}, reranker=reranker_record("monot5")))
    assert record.labels == ["R@5", "R@10", "R@100", "nDCG@10"]
    assert record.splits[1] == SplitScores(name="b", n_queries=1, queries_without_results=0,
                                           scores={"R@5": 0.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.0})
    assert (record.aggregate["R@5"].mean, record.aggregate["R@5"].std) == (0.5, 0.7071067811865476)
    assert record.n_queries == 2 and record.query_scores("nDCG@10") == {"q1": 0.5, "q2": 0.0}
    assert isinstance(record.reranker, ModelRecord) and record.reranker.plugin.distribution == "statbench-sample"
    assert record.task.data_checksum == "0" * 64 and record.run_file.path == "run.trec"
    assert record.pool is None and record.cache is None and record.breakdown is None


def test_reading_never_drops_or_invents_a_field():
    obj = minimal_results()
    obj["splits"][0]["extra_field"] = 1
    with pytest.raises(ValueError, match=r"Results/splits/0: unknown field\(s\) 'extra_field'"):
        Results.from_json(obj)
    obj = minimal_results()
    del obj["created"]
    with pytest.raises(ValueError, match=r"Results: missing field\(s\) 'created'"):
        Results.from_json(obj)
    obj = minimal_results()
    with pytest.raises(ValueError, match=r"RunScores: unknown field\(s\) 'command'"):
        RunScores.from_json({k: obj[k] for k in ("measures", "splits", "aggregate", "per_query", "command")})
    # the scores part of a results dict, or of `statbench evaluate`'s output, on purpose
    part = RunScores.part_of({**obj, "run_file": {"path": "x.trec", "sha256": "0" * 64}})
    assert part.per_query == {"q1": {"R@5": 0.5}} and not isinstance(part, Results)


def test_records_do_not_share_the_dicts_they_were_read_from():
    obj = minimal_results()
    record = Results.from_json(obj)
    obj["per_query"]["q1"]["R@5"] = 7.5
    obj["model"]["params"]["k1"] = 9
    assert record.per_query["q1"]["R@5"] == 0.5 and record.model.params == {}
    out = record.to_json()
    out["aggregate"]["R@5"]["mean"] = 7.5
    assert record.aggregate["R@5"].mean == 0.5


# --- one builder ---------------------------------------------------------------------------------


def test_the_builder_fills_the_version_and_time_and_leaves_out_empty_sections():
    sample = sample_results({"q1": {"R@5": 1.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 1.0}})
    built = Results.build(sample, task=sample.task, model=sample.model, command="c", run_file=sample.run_file,
                          timings={"total": 1.0}, cache_invalid=[], throughput={}, cache={"test": "hit"})
    assert built.schema_version == 1 and built.statbench_version
    assert built.created.endswith("+00:00") and "." not in built.created
    obj = built.to_json()
    assert "cache_invalid" not in obj and "throughput" not in obj and obj["cache"] == {"test": "hit"}
    assert obj["reranker"] is None and obj["pool"] is None
    assert validation_errors(obj) == []


def test_write_results_takes_the_record_and_validates_it(tmp_path):
    record = Results.from_json(minimal_results())
    write_results(tmp_path / "a.json", record)
    write_results(tmp_path / "b.json", record.to_json())
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    bad = dataclasses.replace(record, timings={"total": -1.0})
    with pytest.raises(ValueError, match="timings/total"):
        write_results(tmp_path / "c.json", bad)
    assert not (tmp_path / "c.json").exists()


# --- the runner ----------------------------------------------------------------------------------


def test_a_run_returns_the_record_it_wrote(stard_dir, tmp_path):
    from statbench.run.runner import execute
    from statbench.run.request import RunRequest

    outcome = execute(RunRequest(task="stard", model="bm25", data_dir=stard_dir, output=tmp_path / "out"),
                      LOG, NO_PROGRESS)
    assert isinstance(outcome.record, Results)
    assert Results.read(outcome.results_path) == outcome.record
    assert outcome.results == json.loads(outcome.results_path.read_text(encoding="utf-8"))
    record = outcome.record
    assert record.model.name == "bm25" and record.model.trained is False and record.reranker is None
    assert record.task.name == "stard" and record.run_file.path == "run.trec"
    assert set(record.cache.values()) == {"miss"} and record.cache_invalid is None
    assert {"load", "index", "search", "evaluate", "total"} <= set(record.timings)
    assert record.environment["python"]


def test_run_in_parts(stard_dir, tmp_path):
    from statbench.run.runner import Run
    from statbench.run.request import RunRequest

    run = Run(RunRequest(task="stard", model="bm25", splits=["fold-1"], data_dir=stard_dir, output=tmp_path / "o"),
              LOG, NO_PROGRESS)
    run.load()
    assert [s.name for s in run.splits] == ["fold-1"]
    rankings = run.rank()
    assert set(rankings) == set(run.splits[0].test) and run.cache_hits == {"fold-1": "miss"}
    scores = run.score(rankings)
    assert isinstance(scores, RunScores) and scores.splits[0].name == "fold-1"
    outcome = run.write(rankings, scores)
    assert outcome.record.per_query == scores.per_query
    assert Results.read(outcome.results_path) == outcome.record


def test_params_reach_the_core_typed(stard_dir, tmp_path):
    from statbench.run.runner import Run, execute
    from statbench.run.request import RunRequest, equivalent_command, parse_model_params, request_from_cli

    assert parse_model_params("retrievers", "bm25", ["k1=0.9", "b=0.4"]) == {"k1": 0.9, "b": 0.4}
    assert parse_model_params("rerankers", None, []) == {}
    with pytest.raises(StatbenchError, match="--param 'k1=0.9': no --model to take it"):
        parse_model_params("retrievers", None, ["k1=0.9"])
    with pytest.raises(StatbenchError, match="parameter k1='-1' for bm25: below the minimum"):
        request_from_cli(task="stard", model="bm25", params=["k1=-1"])
    request = request_from_cli(task="stard", model="bm25", params=("k1=0.9", "b=0.4"), splits=("fold-1",),
                               data_dir=stard_dir, output=tmp_path / "o")
    assert request.params == {"k1": 0.9, "b": 0.4} and request.reranker_params == {}
    assert request.splits == ["fold-1"]
    assert equivalent_command(request).startswith("statbench run --task stard --model bm25 --param k1=0.9 --param b=0.4")
    with pytest.raises(TypeError, match="RunRequest.params must be a dict of typed values"):
        Run(RunRequest(task="stard", model="bm25", params=["k1=0.9"], data_dir=stard_dir), LOG, NO_PROGRESS)
    # execute() still takes string lists from callers not yet moved to request_from_cli
    legacy = execute(RunRequest(task="stard", model="bm25", params=["k1=0.9", "b=0.4"], splits=["fold-1"],
                                data_dir=stard_dir, output=tmp_path / "legacy"), LOG, NO_PROGRESS)
    typed = execute(request, LOG, NO_PROGRESS)
    assert legacy.record.model.params == typed.record.model.params
    assert (tmp_path / "legacy" / "run.trec").read_bytes() == (tmp_path / "o" / "run.trec").read_bytes()


def test_build_pool_reads_the_record(stard_dir, tmp_path):
    from statbench.run.pool_build import build_pool

    path, meta = build_pool("stard", "bm25", ["k1=0.9"], "small", 5, stard_dir, LOG, NO_PROGRESS)
    assert meta["retriever"]["name"] == "bm25" and meta["retriever"]["params"]["k1"] == 0.9
    assert meta["first_stage_scores"]["R@5"] >= 0 and len(meta["data_checksum"]) == 64
    assert path.is_file()


# --- consumers read fields -----------------------------------------------------------------------


def test_score_table_from_the_record_or_the_evaluate_dict():
    from rich.console import Console
    from statbench.commands.tables import print_scores

    obj = make_results({"q1": {"R@5": 1.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.5},
                        "q2": {"R@5": 0.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.0}},
                       splits={"a": ["q1"], "b": ["q2"]})
    outputs = []
    for given in (obj, Results.from_json(obj), {k: obj[k] for k in ("measures", "splits", "aggregate",
                                                                     "all_queries", "per_query", "run_file")}):
        console = Console(file=io.StringIO(), width=140, color_system=None)
        print_scores(console, given)
        outputs.append(console.file.getvalue())
    assert outputs[0] == outputs[1] == outputs[2]
    assert "scores (2 queries)" in outputs[0] and "0.5000 ± 0.7071" in outputs[0]


def test_per_query_measure_reads_the_record():
    from statbench.scoring.significance import per_query_measure

    record = sample_results({"q1": {"R@5": 1.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.5}})
    assert per_query_measure(record, "nDCG@10") == {"q1": 0.5}
    with pytest.raises(StatbenchError, match="x.json: no measure 'MAP'"):
        per_query_measure(record, "MAP", "x.json")
