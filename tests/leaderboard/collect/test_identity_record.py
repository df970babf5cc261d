"""A row's identity, label and budget come from the result's own record (issue 38 §2): the
parameters it declares and the defaults the run recorded beside them, never from what the
building machine has installed; what a run records for that (``defaults``, ``needs_gpu``,
``tolerance``) and how a bad declaration stops."""

from __future__ import annotations

import json
import math
import re

import pytest

from statbench import hookimpl
from statbench.api import Retriever
from statbench.leaderboard.collect.identity import budget, identity
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.collect.rows import row_key
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.sample import make_results, write_result
from statbench.registry import plugins
from statbench.results.record import ModelRecord, Results, read_results, validation_errors
from statbench.testing import invoke_cli, registered_plugin

PLUGIN_DIST = "statbench-fake-rm3"
RM3 = """
from statbench import hookimpl
from statbench.api import Retriever

class Rm3(Retriever):
    name = "bm25-rm3"
    description = "BM25 with RM3 expansion (fake)"
    default_params = {DEFAULTS}
    def index(self, corpus, ctx): pass
    def search(self, queries, k, ctx): return {q.id: [] for q in queries}

@hookimpl
def register_retrievers(register):
    register(Rm3)
"""
DEFAULTS = {"b": 0.75, "fb_docs": 10, "fb_terms": 10, "k1": 1.2}


def _scores(value: float, n: int = 6) -> dict:
    return {f"q{i}": {m: value + (i % 3) / 100 for m in ("R@5", "R@10", "R@100", "nDCG@10")} for i in range(n)}


def _blob(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1))


def _rm3_result(params: dict, defaults: dict | None, created="2024-05-01T12:00:00+00:00") -> dict:
    results = make_results(_scores(0.4), model="bm25-rm3", params=params, created=created)
    results["model"]["plugin"] = {"name": "sbfake_rm3", "distribution": PLUGIN_DIST, "version": "1.2.3"}
    if defaults is not None:
        results["model"]["defaults"] = defaults
    return results


def _board(root, site) -> tuple[dict, dict]:
    """label -> row key, and the identities, of the one board built from ``root``."""
    build_site(root, site)
    rows = _blob((site / "task-toy.html").read_text("utf-8"))["rows"]
    labels = {r["label"]: key for key, r in rows.items()}
    idents = {row.key: row.identity for board in collect(root).boards.values() for row in board}
    return labels, idents


def test_a_plugins_result_has_one_identity_and_label_whether_installed_or_not(tmp_path, fake_distributions):
    root = tmp_path / "r"
    write_result(root / "tuned", _rm3_result({**DEFAULTS, "k1": 0.9}, DEFAULTS))
    write_result(root / "default", _rm3_result(dict(DEFAULTS), DEFAULTS))
    write_result(root / "bm25", make_results(_scores(0.3)))
    assert "bm25-rm3" not in plugins.get_registry().retrievers
    absent = _board(root, tmp_path / "site-absent")
    # installed here, and its defaults have moved since (a later version): the record decides
    fake_distributions(PLUGIN_DIST, "sbfake_rm3", RM3.replace("{DEFAULTS}", repr({**DEFAULTS, "fb_docs": 20})))
    plugins.reset_registry(entry_points=True)
    assert plugins.get_registry().retrievers["bm25-rm3"].plugin.distribution == PLUGIN_DIST
    installed = _board(root, tmp_path / "site-installed")
    assert installed == absent
    labels, idents = installed
    assert {"bm25-rm3", "bm25-rm3 (k1=0.9)"} <= set(labels)
    tuned = idents[labels["bm25-rm3 (k1=0.9)"]]
    assert tuned["params"] == {"k1": 0.9} and tuned["distribution"] == PLUGIN_DIST
    assert labels["bm25-rm3 (k1=0.9)"] == row_key(tuned)


def test_a_record_without_defaults_shows_every_parameter_on_any_machine(tmp_path, fake_distributions):
    """Written before ``defaults`` existed: nothing is assumed of a third party's defaults,
    installed or not; a built-in's are those statbench ships (the same on every machine)."""
    root = tmp_path / "r"
    write_result(root / "old", _rm3_result(dict(DEFAULTS), None))
    builtin = make_results(_scores(0.3), params={"k1": 1.2, "b": 0.75})
    builtin["model"]["plugin"] = {"name": "bm25", "distribution": "statbench", "version": "0.1.0"}
    write_result(root / "bm25", builtin)
    absent = _board(root, tmp_path / "a")
    fake_distributions(PLUGIN_DIST, "sbfake_rm3", RM3.replace("{DEFAULTS}", repr(DEFAULTS)))
    plugins.reset_registry(entry_points=True)
    assert "bm25-rm3" in plugins.get_registry().retrievers
    installed = _board(root, tmp_path / "b")
    assert installed == absent
    assert set(installed[0]) == {"bm25-rm3 (b=0.75, fb_docs=10, fb_terms=10, k1=1.2)", "bm25"}


def test_recorded_defaults_compare_canonically_and_a_parameter_without_one_counts():
    record = ModelRecord.from_json({
        "name": "m", "family": "lexical", "params": {"k1": 1, "w": [2, 0.5], "new": "x", "flag": True},
        "defaults": {"k1": 1.0, "w": [2.0, 0.5], "flag": 1, "unused": 3},
        "plugin": {"name": "m", "distribution": None, "version": None}})
    results = Results.from_json({**make_results(_scores(0.2)), "model": record.to_json()})
    # 1 == 1.0 (one setting); True is not 1; "new" has no recorded default: it always counts
    assert identity(results)["params"] == {"new": "x", "flag": True}
    assert "distribution" not in identity(results)


def test_a_builtins_record_cannot_restate_a_default_to_hide_a_setting():
    """statbench's own bm25 declares k1=1.2: a record saying its default was 0.9 still shows
    k1=0.9 (and is never the default bm25's row); another distribution's record is its own word."""
    defaults = plugins.get_registry().retrievers["bm25"].cls.defaults()
    honest = make_results(_scores(0.3), params=dict(defaults))
    honest["model"]["defaults"] = dict(defaults)
    spoofed = make_results(_scores(0.9), params={**defaults, "k1": 0.9}, created="2025-01-01T00:00:00+00:00")
    spoofed["model"]["defaults"] = {**defaults, "k1": 0.9}
    for results in (honest, spoofed):
        results["model"]["plugin"] = {"name": "bm25", "distribution": "statbench", "version": "0.1.0"}
    assert identity(honest)["params"] == {} and identity(spoofed)["params"] == {"k1": 0.9}
    spoofed["model"]["plugin"]["distribution"] = "other-bm25"
    assert identity(spoofed)["params"] == {}  # declared by its own distribution: shown as it says


def test_statbench_own_models_carry_no_distribution_and_another_one_does():
    own = make_results(_scores(0.2))
    own["model"]["plugin"] = {"name": "bm25", "distribution": "statbench", "version": "0.1.0"}
    other = make_results(_scores(0.2))
    other["model"]["plugin"] = {"name": "bm25", "distribution": "other-bm25", "version": "1"}
    assert "distribution" not in identity(own) and identity(other)["distribution"] == "other-bm25"
    assert row_key(identity(own)) != row_key(identity(other))


def test_budget_is_read_from_the_record_and_migrated_only_for_statbench_models(fake_distributions):
    def dsr(distribution: str, defaults: dict | None) -> dict:
        results = make_results(_scores(0.2), model="dsr", family="dense", params={"preset": "cpu-small"})
        results["model"]["plugin"] = {"name": "gdsr", "distribution": distribution, "version": "0.1.0"}
        if defaults is not None:
            results["model"]["defaults"] = defaults
        return results

    # older than the field, statbench's own: migrated from the built-in's declarations
    assert budget(dsr("statbench", None)) == "preset=cpu-small"
    # a record of a built-in cannot hide its budget by leaving the field out
    assert budget(dsr("statbench", {"preset": "cpu-small"})) == "preset=cpu-small"
    # another distribution's dsr: nothing read from what is installed here
    assert budget(dsr("other-dsr", None)) is None
    recorded = dsr("other-dsr", None)
    recorded["model"]["budget"] = "preset=tiny"
    assert budget(recorded) == "preset=tiny"


# --- what a run records --------------------------------------------------------------------------


class Declared(Retriever):
    """Ranks nothing; declares a GPU and a tolerance that depends on its parameters."""

    name = "declared-x"
    default_params = {"depth": 5, "precision": "fp16"}
    needs_gpu = True

    @property
    def tolerance(self):
        return 1e-4 if self.params["precision"] == "fp16" else None

    def index(self, corpus, ctx):
        self.ids = [d.id for d in corpus]

    def search(self, queries, k, ctx):
        return {q.id: [(d, 1.0 / (i + 1)) for i, d in enumerate(self.ids[:k])] for q in queries}


class _Plugin:
    def __init__(self, *classes):
        self.classes = classes

    @hookimpl
    def register_retrievers(self, register):
        for cls in self.classes:
            register(cls)


def _run(stard_dir, out, model: str, *extra):
    return invoke_cli(["run", "--task", "stard", "--model", model, "--data-dir", stard_dir, "--output", out,
                       "--no-progress", *extra])


def test_a_run_records_defaults_needs_gpu_and_tolerance(stard_dir, tmp_path):
    with registered_plugin(_Plugin(Declared), "declared-plugin"):
        result = _run(stard_dir, tmp_path / "fp16", "declared-x", "--param", "depth=7")
        assert result.exit_code == 0, result.output
        result = _run(stard_dir, tmp_path / "fp32", "declared-x", "--param", "precision=fp32")
        assert result.exit_code == 0, result.output
    model = read_results(tmp_path / "fp16" / "results.json")["model"]
    assert model["params"] == {"depth": 7, "precision": "fp16"}
    assert model["defaults"] == {"depth": 5, "precision": "fp16"}
    assert model["needs_gpu"] is True and model["tolerance"] == 1e-4
    fp32 = read_results(tmp_path / "fp32" / "results.json")["model"]
    assert "tolerance" not in fp32 and fp32["needs_gpu"] is True
    # the record alone names the configuration, the plugin gone
    assert identity(Results.read(tmp_path / "fp16" / "results.json"))["params"] == {"depth": 7}
    assert identity(Results.read(tmp_path / "fp32" / "results.json"))["params"] == {"precision": "fp32"}


def test_a_builtin_run_records_its_defaults_and_labels_itself_without_its_parameters(stard_dir, tmp_path):
    assert _run(stard_dir, tmp_path / "results" / "bm25", "bm25").exit_code == 0
    assert _run(stard_dir, tmp_path / "results" / "k1", "bm25", "--param", "k1=0.9").exit_code == 0
    model = read_results(tmp_path / "results" / "bm25" / "results.json")["model"]
    defaults = plugins.get_registry().retrievers["bm25"].cls.defaults()
    assert model["defaults"] == {k: defaults[k] for k in model["params"]}
    assert model["needs_gpu"] is False and "tolerance" not in model
    build_site(tmp_path / "results", tmp_path / "site")
    labels = {r["label"] for r in _blob((tmp_path / "site" / "task-stard.html").read_text("utf-8"))["rows"].values()}
    assert labels == {"bm25", "bm25 (k1=0.9)"}


@pytest.mark.parametrize("attribute, value, message", [
    ("tolerance", -0.1, "declares tolerance=-0.1: it must be None (deterministic) or a finite number >= 0"),
    ("tolerance", math.nan, "declares tolerance=nan"),
    ("tolerance", "1e-4", "declares tolerance='1e-4'"),
    ("tolerance", True, "declares tolerance=True"),
    ("needs_gpu", "yes", "declares needs_gpu='yes': it must be True or False"),
    ("needs_gpu", None, "declares needs_gpu=None"),
])
def test_a_bad_declaration_stops_the_run_with_one_line(stard_dir, tmp_path, attribute, value, message):
    bad = type("Bad", (Declared,), {"name": "bad-x", attribute: value})
    with registered_plugin(_Plugin(bad), "bad-plugin"):
        result = _run(stard_dir, tmp_path / "out", "bad-x")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and message in errors[0] and "'bad-x'" in errors[0]
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_declaration_that_raises_stops_with_one_line(stard_dir, tmp_path):
    class Raising(Declared):
        name = "raising-x"

        @property
        def needs_gpu(self):
            raise KeyError("device")

    with registered_plugin(_Plugin(Raising), "raising-plugin"):
        result = _run(stard_dir, tmp_path / "out", "raising-x")
    assert result.exit_code == 2
    assert "model 'raising-x': reading needs_gpu/tolerance raised KeyError: 'device'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("field, value, problem", [
    ("tolerance", -1, "model/tolerance"),
    ("tolerance", "0.1", "model/tolerance"),
    ("needs_gpu", "yes", "model/needs_gpu"),
    ("defaults", ["k1"], "model/defaults"),
])
def test_the_schema_holds_the_new_fields_to_their_types(field, value, problem):
    results = make_results(_scores(0.2))
    results["model"][field] = value
    assert any(e.startswith(problem) for e in validation_errors(results))
    # and an older record without any of them is valid
    assert validation_errors(make_results(_scores(0.2))) == []


@pytest.mark.parametrize("field", ["params", "defaults"])
def test_a_record_nested_too_deep_is_one_skipped_file_not_a_failed_build(tmp_path, field):
    """The parsers accept ~1,000 levels; the record and identity recurse too: such a file
    (hostile or broken) is refused on read, and the board is built from the others."""
    deep: object = 0
    for _ in range(600):
        deep = [deep]
    root = tmp_path / "r"
    write_result(root / "bm25", make_results(_scores(0.3)))
    hostile = make_results(_scores(0.5), model="deep")
    hostile["model"][field] = {"k": deep}
    folder = root / "deep"
    write_result(folder, make_results(_scores(0.5), model="deep"))
    text = json.dumps(hostile)  # the run file's checksum as write_result recorded it
    recorded = json.loads((folder / "results.json").read_text("utf-8"))["run_file"]
    (folder / "results.json").write_text(text.replace(json.dumps(hostile["run_file"]), json.dumps(recorded)),
                                         encoding="utf-8")
    with pytest.raises(Exception, match=rf"model/{field} is nested more than 32 levels deep"):
        read_results(folder / "results.json")
    report = build_site(root, tmp_path / "site")
    assert report.rows == 1
    assert any(f"model/{field} is nested more than 32 levels deep" in line for line in report.problems)
