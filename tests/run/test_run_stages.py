"""A run's stages return values (load -> rank -> score -> record -> write): execute() hands
each stage's value to the next and leaves the Run as it was built; the stages called one by
one with those values write what execute() writes."""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest

from statbench.results.record import RunScores
from statbench.run.request import RunRequest
from statbench.run.runner import Loaded, Ranked, Run
from statbench.run.splitruns import SplitRuns

LOG = logging.getLogger("statbench.test-stages")


def no_progress(description, total):
    return lambda n=1: None


def _request(stard_dir, out, **more):
    return RunRequest(task="stard", model="bm25", data_dir=stard_dir, output=out, **more)


def _state(run: Run) -> dict:
    return {name: value for name, value in vars(run).items()}


@pytest.mark.parametrize("cached", [False, True])
def test_execute_threads_values_and_changes_nothing_on_the_run(stard_dir, tmp_path, cached):
    if cached:  # every split cached: the load's summary stands in for the load
        Run(_request(stard_dir, tmp_path / "warm"), LOG, no_progress).execute()
    run = Run(_request(stard_dir, tmp_path / "out"), LOG, no_progress)
    before = _state(run)
    outcome = run.execute()
    after = _state(run)
    assert after.keys() == before.keys()
    assert all(after[name] is before[name] for name in before)
    assert run._last == {}  # nothing remembered for the one-by-one form
    assert set(outcome.record.cache.values()) == {"hit" if cached else "miss"}
    with pytest.raises(Exception, match=r"Run.load\(\) has not run yet"):
        run.splits


def test_stages_called_with_values_write_what_execute_writes(stard_dir, tmp_path):
    whole = Run(_request(stard_dir, tmp_path / "whole"), LOG, no_progress).execute()
    run = Run(_request(stard_dir, tmp_path / "parts"), LOG, no_progress)
    loaded = run.load()
    assert isinstance(loaded, Loaded) and [s.name for s in loaded.splits] == [f"fold-{i}" for i in range(1, 6)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.splits = []
    ranked = run.rank(loaded)
    assert isinstance(ranked, Ranked) and isinstance(ranked, SplitRuns)
    assert ranked.cache_hits == {f"fold-{i}": "hit" for i in range(1, 6)}  # the whole run cached them
    scores = run.score(ranked, loaded)
    assert isinstance(scores, RunScores)
    record = run.record(scores, whole.record.run_file, loaded, ranked)
    assert record.per_query == whole.record.per_query and record.task == whole.record.task
    outcome = run.write(ranked, scores, loaded=loaded)
    for name in ("run.trec", "qrels.trec"):
        assert (tmp_path / "parts" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    parts, full = (json.loads(p.read_text()) for p in (outcome.results_path, whole.results_path))
    # the output folder is in the command; timings and efficiency are measured per process (a cached run measures none)
    varying = ("timings", "cache", "command", "created", "efficiency")
    assert {k: v for k, v in parts.items() if k not in varying} == {k: v for k, v in full.items() if k not in varying}
    assert parts["cache"] == full["cache"] | {f"fold-{i}": "hit" for i in range(1, 6)}


def test_a_stage_before_its_predecessor_says_so(stard_dir, tmp_path):
    run = Run(_request(stard_dir, tmp_path / "o"), LOG, no_progress)
    with pytest.raises(Exception, match=r"Run.load\(\) has not run yet: call the stages in order"):
        run.rank()
