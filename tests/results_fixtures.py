"""The smallest valid results record, for the tests that change one field of it."""

from __future__ import annotations


def minimal_results() -> dict:
    scores = {"R@5": 0.5}
    return {
        "schema_version": 1, "statbench_version": "0.1.0", "created": "2026-11-23T00:00:00+00:00",
        "task": {"name": "stard", "language": "zh", "data_checksum": "a" * 64, "files": ["queries.json"]},
        "model": {"name": "bm25", "family": "lexical", "params": {}, "plugin": {"name": "bm25"}},
        "command": "statbench run --task stard --model bm25",
        "run_file": {"path": "run.trec", "sha256": "b" * 64},
        "measures": [{"label": "R@5", "ir_measure": "R@5"}],
        "splits": [{"name": "fold-1", "n_queries": 1, "scores": scores}],
        "aggregate": {"R@5": {"mean": 0.5, "std": 0.0}},
        "per_query": {"q1": scores},
        "timings": {"total": 1.0},
    }
