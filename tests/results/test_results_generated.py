"""The results record typed end to end: the schema is generated from the type (the
committed file is that schema), a record round-trips through its JSON, scoring returns the
type, publishability is checked on the type in the core, and the core imports nothing of
the leaderboard."""

from __future__ import annotations

import ast
import dataclasses
import json
from typing import Annotated

import pytest
from click.testing import CliRunner
from results_fixtures import minimal_results

from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.sample import make_results, reranker_record, sample_results, write_result
from statbench.results.jsonrecord import JsonRecord, Schema, json_schema, optional
from statbench.scoring.publishable import check_results, read_publishable
from statbench.results.record import (
    EvaluatedRun,
    Results,
    RunScores,
    committed_schema,
    results_schema,
    schema_text,
    validation_errors,
)
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
SCORES = {"q1": {"R@5": 1.0, "R@10": 1.0, "R@100": 1.0, "nDCG@10": 0.5},
          "q2": {"R@5": 0.0, "R@10": 0.5, "R@100": 1.0, "nDCG@10": 0.25}}


# --- the schema is generated from the type --------------------------------------------------


def test_the_committed_schema_is_the_generated_one():
    """harness/schemas/results.schema.json is rewritten by ``python -m statbench.results``."""
    committed = (REPO / "harness" / "schemas" / "results.schema.json").read_text("utf-8")
    assert committed == schema_text(), "regenerate it: python -m statbench.results"
    assert committed_schema() == results_schema()


def test_the_generated_schema_keeps_every_constraint():
    schema = results_schema()
    props = schema["properties"]
    assert schema["additionalProperties"] is False and props["schema_version"] == {"const": 1}
    assert props["task"]["properties"]["data_checksum"]["pattern"] == "^[0-9a-f]{64}$"
    assert props["measures"]["minItems"] == 1 and props["splits"]["minItems"] == 1
    assert props["splits"]["items"]["properties"]["n_queries"] == {"type": "integer", "minimum": 0}
    assert props["aggregate"]["additionalProperties"]["properties"]["std"] == {"type": "number", "minimum": 0}
    assert props["cache"]["additionalProperties"] == {"enum": ["hit", "miss"]}
    assert props["reranker"] == {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/model"}]}
    assert props["pool"]["type"] == ["string", "null"]
    assert props["per_query"]["additionalProperties"] == {"$ref": "#/$defs/scores"}
    assert schema["$defs"]["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert set(schema["required"]) == {"schema_version", "statbench_version", "created", "task", "model", "command",
                                       "run_file", "measures", "splits", "aggregate", "per_query", "timings"}


def test_a_field_added_to_the_type_is_in_its_schema_by_construction():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Extended(Results):
        gpu_hours: Annotated[float, Schema(minimum=0)] | None = optional("GPU time spent")

    schema = json_schema(Extended)
    assert schema["properties"]["gpu_hours"] == {"type": "number", "minimum": 0, "description": "GPU time spent"}
    assert "gpu_hours" not in schema["required"]

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class NoJsonForm(JsonRecord):
        when: complex

    with pytest.raises(TypeError, match="has no JSON form"):
        json_schema(NoJsonForm)


# --- the type round-trips through its JSON ----------------------------------------------------


def test_results_round_trip_type_json_type():
    records = [sample_results(SCORES), sample_results(SCORES, splits={"a": ["q1"], "b": ["q2"]},
                                                      reranker=reranker_record("monot5"), pool="p",
                                                      breakdown={"category": {"x": SCORES["q1"], "y": SCORES["q2"]}}),
               Results.from_json(minimal_results())]
    for record in records:
        obj = record.to_json()
        assert validation_errors(obj) == []
        again = Results.from_json(json.loads(json.dumps(obj)))
        assert again == record and again.to_json() == obj


def test_evaluate_output_round_trips_and_is_a_run_scores():
    scores = sample_results(SCORES)
    evaluated = EvaluatedRun(**scores.scores_fields(), data_checksum="a" * 64,
                             run_file={"path": "x.trec", "sha256": "b" * 64})
    obj = evaluated.to_json()
    assert list(obj)[:5] == ["measures", "splits", "aggregate", "all_queries", "per_query"]
    assert list(obj)[-2:] == ["data_checksum", "run_file"]
    assert isinstance(evaluated, RunScores) and not isinstance(evaluated, Results)
    assert RunScores.part_of(obj) == RunScores(**scores.scores_fields())


# --- scoring returns the type -------------------------------------------------------------------


def test_score_splits_and_evaluate_return_typed_records(stard_dir, tmp_path):
    import logging

    from statbench.contract.records import Measure, Split
    from statbench.scoring.evaluate_file import evaluate_run_file
    from statbench.scoring.evaluation import score_splits

    class Data:
        qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
        groups = {}

    scores = score_splits([Measure("R@5", "R@5")], Data, [Split("a", test=["q1"]), Split("b", test=["q2"])],
                          {"q1": [("d1", 2.0), ("d9", 1.0)], "q2": []})
    assert type(scores) is RunScores
    assert [(s.name, s.n_queries, s.queries_without_results, s.scores) for s in scores.splits] == \
        [("a", 1, 0, {"R@5": 1.0}), ("b", 1, 1, {"R@5": 0.0})]
    assert (scores.aggregate["R@5"].mean, scores.all_queries) == (0.5, {"R@5": 0.5}) and scores.breakdown is None

    run = tmp_path / "run.trec"
    run.write_text("0 Q0 民法典第五十四条 1 2.0 t\n1 Q0 民法典第五十六条 1 2.0 t\n", encoding="utf-8")
    evaluated = evaluate_run_file(run, "stard", stard_dir, None, logging.getLogger("test"))
    assert isinstance(evaluated, EvaluatedRun) and evaluated.run_file.path == str(run)
    assert len(evaluated.data_checksum) == 64 and evaluated.tie_order is None


# --- publishability: checks on the type, in the core ------------------------------------------------


def test_publishability_is_checked_on_the_record_and_the_dict_alike(tmp_path):
    obj = make_results(SCORES)
    assert check_results(obj) == check_results(Results.from_json(obj)) == []
    obj["per_query"]["q1"]["R@5"] = 7.5
    record = Results.from_json(obj)
    assert check_results(record) == check_results(obj)
    assert "per_query/q1/R@5: 7.5 is outside [0, 1]" in check_results(record)
    path = write_result(tmp_path / "bad", obj)
    with pytest.raises(DataFormatError, match=r"per_query/q1/R@5: 7.5 is outside \[0, 1\]"):
        read_publishable(path)


def test_compare_and_the_board_refuse_a_file_with_the_same_reason(tmp_path):
    good = write_result(tmp_path / "good", make_results(SCORES))
    obj = make_results(SCORES, model="ql")
    obj["aggregate"]["nDCG@10"]["mean"] = 0.9
    bad = write_result(tmp_path / "bad", obj)
    result = CliRunner().invoke(cli, ["compare", str(good), str(bad)])
    assert result.exit_code == 2
    reason = "aggregate/nDCG@10/mean: 0.9 is not the mean over the splits (0.375)"
    assert reason in result.output and len(result.output.strip().splitlines()) == 1
    boards = collect(tmp_path)
    assert any(reason in line and str(bad) in line for line in boards.problems)


def test_the_core_imports_nothing_of_the_leaderboard_models_or_tasks():
    """Layering runs one way: the site, the built-in models and tasks build on the core."""
    above = ("statbench.leaderboard", "statbench.models", "statbench.tasks")
    offenders = []
    for path in sorted((REPO / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            if any(name == top or name.startswith(top + ".") for name in names for top in above):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []
