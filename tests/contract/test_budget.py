"""A reduced-budget run is recorded as such: Param(budget=...) -> model.budget -> results.json."""

from __future__ import annotations

from statbench.api import Retriever
from statbench.contract.params import Param, budget_of, declare
from statbench.results.record import ModelRecord, PluginRecord


class _Budgeted(Retriever):
    name = "budgeted"
    default_params = {
        "preset": Param("paper", "named budget", choices=("paper", "cpu-small", "tiny"), budget=("cpu-small", "tiny")),
        "epochs": Param(15, "epochs", min=1),
    }


def test_budget_values_are_named_with_their_parameter():
    declared = declare(_Budgeted.default_params)
    assert budget_of({"preset": "paper", "epochs": 15}, declared) is None
    assert budget_of({"preset": "cpu-small", "epochs": 1}, declared) == "preset=cpu-small"
    assert budget_of({}, declared) is None


def test_a_model_reports_its_budget_from_its_declared_parameters():
    assert _Budgeted().budget is None
    assert _Budgeted(preset="tiny").budget == "preset=tiny"
    # a parameter without declared budget values never makes a budget run
    assert _Budgeted(epochs=1).budget is None


def test_gdsr_cpu_small_is_a_declared_budget():
    from statbench.models.gdsr.gdsr import DSR_PARAMS

    assert budget_of({"preset": "cpu-small"}, declare(DSR_PARAMS)) == "preset=cpu-small"
    assert budget_of({"preset": "paper"}, declare(DSR_PARAMS)) is None


def test_the_budget_is_written_in_results_and_read_back():
    record = ModelRecord(name="gdsr", family="graph", params={"preset": "cpu-small"},
                         plugin=PluginRecord(name="statbench"), budget="preset=cpu-small")
    assert record.to_json()["budget"] == "preset=cpu-small"
    assert ModelRecord.from_json(record.to_json()) == record
    plain = ModelRecord(name="bm25", family="lexical", params={}, plugin=PluginRecord(name="statbench"))
    assert "budget" not in plain.to_json()
