"""The parts of `statbench leaderboard reproduce`, each on its own (fast; the real round trips
are tests/leaderboard/test_reproduce_roundtrip.py and tests/leaderboard/test_reproduce_wheel.py): the recorded
command's words, the CPU budget, the comparison, the isolation and data checks, the source's
reasons for not attempting, and the verdict files read strictly by the site's reader."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from statbench import __version__
from statbench.commands.cli import cli
from statbench.errors import DataFormatError
from statbench.leaderboard.repo.source import parse_source
from statbench.leaderboard.repo.submission import REPOSITORY_MARKER
from statbench.leaderboard.reproduce import env as reproduce_env
from statbench.leaderboard.reproduce import run as reproduce_run
from statbench.leaderboard.reproduce.compare import compare_rerun, difference_text, first_difference
from statbench.leaderboard.reproduce.env import BASE_PTH, COMPLETE, ensure_env
from statbench.leaderboard.reproduce.run import NotAttempted, rerun_words, run_command
from statbench.leaderboard.reproduce.submissions import (
    ReproduceOptions,
    _attempt,
    check_data,
    check_isolation,
    source_requirements,
)
from statbench.leaderboard.reproduce.verdicts import (
    Difference,
    Environment,
    Verdict,
    VerdictReader,
    read_verdict,
    reproduction_of,
    submission_digest,
    take_verdicts,
    verdict_path,
    write_verdict,
)
from statbench.results.record import Results

SHA = "a" * 64


# --- the recorded command -------------------------------------------------------------------------

def test_rerun_words_drop_what_a_reproduction_replaces_and_keep_every_value():
    command = ("statbench run --task stard --model bm25 --param k1=0.9 --data-dir /home/ada/data --output=/tmp/o "
               "--yes --progress --split --output --param 'q=a b'")
    assert rerun_words(command) == ["run", "--task", "stard", "--model", "bm25", "--param", "k1=0.9",
                                    "--split", "--output", "--param", "q=a b"]
    assert rerun_words("statbench run --task stard --data-dir=/x --model bm25") == ["run", "--task", "stard",
                                                                                   "--model", "bm25"]


@pytest.mark.parametrize("command", ["statbench evaluate run.trec --task stard", "python -c 'print(1)'", "",
                                     "statbench run --task 'unclosed"])
def test_a_command_that_is_not_statbench_run_gives_no_words(command):
    assert rerun_words(command) is None


# --- the CPU budget and a failing re-run ----------------------------------------------------------------

def _run_with(monkeypatch, tmp_path, code: str, budget: int = 1):
    monkeypatch.setattr(reproduce_run, "CLI", code)
    env = SimpleNamespace(python=Path(sys.executable))
    return run_command(env, tmp_path, {"PATH": "/usr/bin:/bin"}, ["run"], None, tmp_path / "out", budget)


def test_a_run_over_its_cpu_budget_is_stopped_and_not_attempted(monkeypatch, tmp_path):
    monkeypatch.setattr(reproduce_run, "WALL_FACTOR", 100)  # the CPU limit stops it, however busy the machine
    outcome = _run_with(monkeypatch, tmp_path, "while True: pass")
    assert outcome == ("not attempted", "over the CPU budget (1 s)", None, None)


def test_a_run_that_waits_past_the_clock_limit_is_stopped(monkeypatch, tmp_path):
    monkeypatch.setattr(reproduce_run, "WALL_FACTOR", 1)
    outcome = _run_with(monkeypatch, tmp_path, "import time; time.sleep(60)")
    assert outcome == ("not attempted", "over the CPU budget (1 s): still running after 1 s on the clock", None,
                       None)


def test_a_failing_rerun_is_not_reproduced_with_its_error_line(monkeypatch, tmp_path):
    outcome = _run_with(monkeypatch, tmp_path, "import sys; print('Error: no such model', file=sys.stderr); "
                                               "sys.exit(2)", budget=30)
    assert outcome == ("not reproduced", "the recorded command failed here: no such model", None, None)


def test_a_finished_run_gives_no_verdict_yet(monkeypatch, tmp_path):
    assert _run_with(monkeypatch, tmp_path, "pass", budget=30) is None


# --- the comparison ------------------------------------------------------------------------------------

CLAIMED = {"q1": {"R@5": 1.0, "MRR@10": 1.0}, "q2": {"R@5": 0.5, "MRR@10": 0.25}, "q3": {"R@5": 0.0, "MRR@10": 0.0}}


def test_first_difference_in_the_submissions_order_and_measure_order():
    rerun = {"q1": {"R@5": 1.0, "MRR@10": 1.0}, "q2": {"R@5": 0.5, "MRR@10": 0.5}, "q3": {"R@5": 1.0, "MRR@10": 0.0}}
    found = first_difference(CLAIMED, rerun, ["R@5", "MRR@10"], 0.0)
    assert found == Difference("q2", "MRR@10", 0.25, 0.5, 2)
    assert difference_text(found) == "query q2, MRR@10 claimed 0.25, re-run 0.5; 2 queries differ"


def test_a_query_on_one_side_only_differs():
    rerun = {"q1": CLAIMED["q1"], "q2": CLAIMED["q2"]}
    found = first_difference(CLAIMED, rerun, ["R@5", "MRR@10"], 0.0)
    assert found == Difference("q3", "R@5", 0.0, None, 1)
    assert difference_text(found) == "query q3, R@5 claimed 0.0, re-run absent; 1 query differs"
    extra = {**CLAIMED, "q4": {"R@5": 1.0}}
    assert first_difference(CLAIMED, extra, ["R@5"], 0.0) == Difference("q4", "R@5", None, 1.0, 1)


def test_tolerance_is_absolute_per_figure():
    rerun = {q: {m: v + 0.001 for m, v in s.items()} for q, s in CLAIMED.items()}
    assert first_difference(CLAIMED, rerun, ["R@5", "MRR@10"], 0.01) is None
    assert first_difference(CLAIMED, rerun, ["R@5", "MRR@10"], 0.0001).queries == 3


def _compare(monkeypatch, tmp_path, submitted: str, rerun_text: str, rerun_scores: dict, tolerance=None,
             rerun_tolerance="same"):
    """``rerun_tolerance``: what the re-run's model declares (default: what the submission records)."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.trec").write_text(rerun_text, encoding="utf-8")
    (tmp_path / "out" / "results.json").write_text("{}", encoding="utf-8")
    gz = tmp_path / "run.trec.gz"
    gz.write_bytes(gzip.compress(submitted.encode(), mtime=0))
    model = SimpleNamespace(tolerance=tolerance)
    claimed = SimpleNamespace(task=SimpleNamespace(data_checksum=SHA), labels=["R@5", "MRR@10"], per_query=CLAIMED,
                              run_file=SimpleNamespace(sha256=hashlib.sha256(submitted.encode()).hexdigest()),
                              model=model, reranker=None)
    rerun_model = SimpleNamespace(tolerance=tolerance if rerun_tolerance == "same" else rerun_tolerance)
    rerun = SimpleNamespace(task=SimpleNamespace(data_checksum=SHA), run_file=SimpleNamespace(path="run.trec"),
                            per_query=rerun_scores, model=rerun_model, reranker=None)
    monkeypatch.setattr(Results, "read", classmethod(lambda cls, path: rerun))
    return compare_rerun(SimpleNamespace(results=claimed, run_path=gz), tmp_path / "out")


RUN = "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d3 1 1.0 x\n"


def test_a_byte_identical_run_file_is_reproduced(monkeypatch, tmp_path):
    assert _compare(monkeypatch, tmp_path, RUN, RUN, CLAIMED) == ("reproduced", None, "run file byte-identical", None)


def test_a_run_file_that_differs_is_not_reproduced_even_when_no_figure_does(monkeypatch, tmp_path):
    other = RUN.replace("1.0 x\nq2", "1.5 x\nq2")
    outcome, reason, compared, difference = _compare(monkeypatch, tmp_path, RUN, other, CLAIMED)
    assert (outcome, compared) == ("not reproduced", "run file byte-identical")
    assert reason == "the re-run's run file differs from the submitted one from line 2 on (no per-query figure differs)"
    assert difference == Difference(None, None, None, None, 0)


def test_a_declared_tolerance_reproduces_figures_within_it(monkeypatch, tmp_path):
    close = {q: {m: v + 1e-4 for m, v in s.items()} for q, s in CLAIMED.items()}
    outcome = _compare(monkeypatch, tmp_path, RUN, RUN + "q3 Q0 d1 1 1.0 x\n", close, tolerance=1e-3)
    assert outcome == ("reproduced", None, "per-query figures within 0.001", None)


def test_a_figure_beyond_the_declared_tolerance_is_not_reproduced(monkeypatch, tmp_path):
    far = {**CLAIMED, "q3": {"R@5": 0.1, "MRR@10": 0.0}}
    outcome = _compare(monkeypatch, tmp_path, RUN, RUN + "q3 Q0 d1 1 1.0 x\n", far, tolerance=1e-3)
    assert outcome == ("not reproduced", "query q3, R@5 claimed 0.0, re-run 0.1; 1 query differs",
                       "per-query figures within 0.001", Difference("q3", "R@5", 0.0, 0.1, 1))


# --- isolation, data, source -------------------------------------------------------------------------

ENV_SITE = "/cache/reproduce/env-1/lib/python3.11/site-packages"
BASE = "/cache/reproduce/base-1"


def _plugin(dist, version="1.0", error=None, name="p", location=ENV_SITE):
    return {"plugin": name, "distribution": dist, "version": version, "error": error, "location": location}


@pytest.mark.parametrize("location", [BASE, "/home/ada/project", None])
def test_an_environment_that_sees_a_plugin_from_outside_is_not_isolated(location):
    probe = {"statbench": __version__, "plugins": [_plugin("statbench", __version__, location=BASE),
                                                   _plugin("statbench-plugin-example", location=location)]}
    with pytest.raises(NotAttempted, match="not isolated: it also sees the plugins of statbench-plugin-example"):
        check_isolation(probe, Path("/cache/reproduce/env-1"), {})


def test_a_plugin_the_source_depends_on_may_be_installed_beside_it():
    probe = {"statbench": __version__, "plugins": [_plugin("statbench", __version__, location=BASE),
                                                   _plugin("x-plugin"), _plugin("x-common", "2.0")]}
    check_isolation(probe, Path("/cache/reproduce/env-1"), {"x-plugin": ("x-plugin", "1.0")})


@pytest.mark.parametrize("plugins, reason", [
    ([], "source not installable: x-plugin installed but registers no statbench plugin"),
    ([_plugin("x_plugin", "1.1")], "source not installable: x-plugin 1.1 installed, the run used 1.0"),
    ([_plugin("x-plugin", "1.0", error="ImportError: torch")],
     "source not installable: plugin p of x-plugin does not load: ImportError: torch"),
])
def test_the_source_must_be_there_at_its_version_and_load(plugins, reason):
    probe = {"statbench": __version__, "plugins": [_plugin("statbench", __version__, location=BASE), *plugins]}
    with pytest.raises(NotAttempted) as raised:
        check_isolation(probe, Path("/cache/reproduce/env-1"), {"x-plugin": ("x-plugin", "1.0")})
    assert raised.value.reason == reason


def _results(**task):
    return SimpleNamespace(task=SimpleNamespace(name="stard", data_checksum=SHA, version="1", **task), pool=None,
                           pool_sha256=None)


@pytest.mark.parametrize("data, reason", [
    ({"problem": "stard: no corpus.jsonl in /x", "checksum": None, "version": None, "pool_sha256": None},
     "data not here: stard: no corpus.jsonl in /x (give --data-dir stard=DIR)"),
    ({"problem": None, "checksum": "b" * 64, "version": "1", "pool_sha256": None},
     "other data: the local data of stard has checksum bbbbbbbbbbbb…, the submission's aaaaaaaaaaaa…"),
    ({"problem": None, "checksum": SHA, "version": "2", "pool_sha256": None},
     "other data: the stard loader here is version 2, the submission's 1"),
])
def test_other_or_missing_data_is_not_attempted(data, reason):
    with pytest.raises(NotAttempted) as raised:
        check_data(data, _results())
    assert raised.value.reason == reason


def test_another_pool_is_other_data():
    results = _results()
    results.pool, results.pool_sha256 = "bm25", "c" * 64
    with pytest.raises(NotAttempted, match="other data: pool bm25 is not here, the submission's is cccccccccccc…"):
        check_data({"problem": None, "checksum": SHA, "version": "1", "pool_sha256": None}, results)


def _submission(tmp_path, source=None, distribution="x-plugin", version="1.0"):
    plugin = SimpleNamespace(name="x", distribution=distribution, version=version)
    results = SimpleNamespace(task=SimpleNamespace(plugin=SimpleNamespace(name="stard", distribution="statbench",
                                                                          version=__version__)),
                              model=SimpleNamespace(plugin=plugin), reranker=None, statbench_version=__version__)
    record = parse_source(source, tmp_path / "source.json") if source is not None else None
    return SimpleNamespace(results=results, source=record, folder=tmp_path)


def _source(*dists):
    return {"format": 1, "statbench": __version__, "distributions": list(dists)}


@pytest.mark.parametrize("source, distribution, version, reason", [
    (None, "x-plugin", "1.0", "source not recorded for x-plugin (submitted before statbench recorded sources)"),
    (_source({"name": "x-plugin", "version": "1.0", "kind": "none", "reason": "installed from a folder with "
                                                                               "uncommitted changes"}),
     "x-plugin", "1.0", "source not published (x-plugin 1.0: installed from a folder with uncommitted changes)"),
    (None, None, None, "source not published (x: registered in-process by the run, by no distribution)"),
    (_source(), "x-plugin", "1.0", "source not recorded for x-plugin (source.json names no source for it)"),
    (_source({"name": "x-plugin", "version": "1.1", "kind": "index"}), "x-plugin", "1.0",
     "source not installable: source.json declares x-plugin 1.1, the run used 1.0"),
])
def test_a_source_that_cannot_be_installed_is_not_attempted(tmp_path, source, distribution, version, reason):
    with pytest.raises(NotAttempted) as raised:
        source_requirements(_submission(tmp_path, source, distribution, version))
    assert raised.value.reason == reason


def test_a_published_source_gives_pip_its_requirements(tmp_path):
    key, requirements, used = source_requirements(_submission(tmp_path, _source(
        {"name": "x_plugin", "version": "1.0", "kind": "index"})))
    assert requirements == ["x_plugin==1.0"]
    assert used == {"x-plugin": ("x-plugin", "1.0")}
    assert key == {"distributions": [{"name": "x_plugin", "version": "1.0", "kind": "index", "file": None,
                                      "sha256": None, "url": None, "commit": None, "subdirectory": None}]}
    assert source_requirements(_submission(tmp_path, None, "statbench", __version__))[:2] == (
        {"distributions": []}, [])


def test_other_statbench_version_and_gpu_are_not_attempted_before_anything_runs():
    model = SimpleNamespace(name="dense", needs_gpu=True)
    results = SimpleNamespace(statbench_version="0.0.9", model=model, reranker=None, command="statbench run")
    with pytest.raises(NotAttempted, match=r"recorded by statbench 0\.0\.9; this is statbench "):
        _attempt(SimpleNamespace(results=results), ReproduceOptions())
    results.statbench_version = __version__
    with pytest.raises(NotAttempted) as raised:
        _attempt(SimpleNamespace(results=results), ReproduceOptions())
    assert raised.value.reason == "needs a GPU (dense declares it; --gpu on a machine with one)"


# --- verdict files -------------------------------------------------------------------------------------

ENV = Environment(python="3.11.7", implementation="CPython", system="Linux", machine="x86_64", statbench="0.1.0",
                  code="c" * 64, gpu=False)
FOLDER = "results/stard/bm25/bm25"


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    folder = root / FOLDER
    folder.mkdir(parents=True)
    (root / REPOSITORY_MARKER).write_text('{"format": 1}', encoding="utf-8")
    for name, text in (("results.json", "{}"), ("run.trec.gz", "run"), ("model_card.json", "{}")):
        (folder / name).write_text(text, encoding="utf-8")
    return root


def verdict(root: Path, outcome="reproduced", env=ENV, recorded="2026-11-28T01:00:00+00:00", **extra) -> Verdict:
    reason = None if outcome == "reproduced" else extra.pop("reason", "needs a GPU (x declares it)")
    return Verdict(outcome=outcome, reason=reason, submission=FOLDER,
                   submission_digest=submission_digest(root / FOLDER),
                   environment=env, environment_digest=env.digest(), recorded=recorded,
                   compared=extra.pop("compared", "run file byte-identical" if outcome == "reproduced" else None),
                   **extra)


def test_a_verdict_reads_back_as_written(repo):
    written = verdict(repo, "not reproduced", reason="query 5, R@5 claimed 1.0, re-run 0.5; 1 query differs",
                      difference=Difference("5", "R@5", 1.0, 0.5, 1))
    path = write_verdict(repo, written)
    assert path == verdict_path(repo, written.submission_digest, written.environment_digest)
    assert path.parent.parent.name == "reproductions"
    assert read_verdict(path) == written
    assert reproduction_of(repo / FOLDER / "results.json") == written


def test_manifest_digest_is_sha256sum_of_the_files(repo):
    lines = "".join(f"{hashlib.sha256((repo / FOLDER / n).read_bytes()).hexdigest()}  {n}\n"
                    for n in sorted(["results.json", "run.trec.gz", "model_card.json"]))
    assert submission_digest(repo / FOLDER) == hashlib.sha256(lines.encode()).hexdigest()
    (repo / FOLDER / "link").symlink_to(repo / FOLDER / "results.json")
    with pytest.raises(DataFormatError, match="not a regular file"):
        submission_digest(repo / FOLDER)


def _tamper_outcome(obj):
    obj.update(outcome="reproduced", reason=None)


TAMPERINGS = {
    "outcome edited": (_tamper_outcome, "its digest does not match its content: edited or damaged, not trusted"),
    "a key added": (lambda obj: obj.__setitem__("trusted", True), "not a verdict record"),
    "environment edited": (lambda obj: obj["environment"].__setitem__("gpu", True), "its digest does not match"),
    "format": (lambda obj: obj.__setitem__("format", 2), "verdict format 2, not 1"),
}


@pytest.mark.parametrize("how", list(TAMPERINGS))
def test_an_edited_verdict_is_not_trusted(repo, how):
    path = write_verdict(repo, verdict(repo, "not attempted"))
    obj = json.loads(path.read_text("utf-8"))
    change, message = TAMPERINGS[how]
    change(obj)
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(DataFormatError, match=message):
        read_verdict(path)
    notes: list[str] = []
    assert reproduction_of(repo / FOLDER / "results.json", notes) is None
    assert len(notes) == 1 and notes[0].startswith(f"ignored verdict reproductions/{path.parent.name}/")


def test_a_verdict_under_another_submissions_name_is_not_its(repo):
    path = write_verdict(repo, verdict(repo))
    moved = path.parent.parent / ("0" * 64) / path.name
    moved.parent.mkdir()
    path.rename(moved)
    with pytest.raises(DataFormatError, match="its file name is not its submission and environment digests"):
        read_verdict(moved)


@pytest.mark.parametrize("text", ["", "{", '{"format": NaN}', "[]", '{"format": 1, "format": 1}'])
def test_a_damaged_verdict_file_is_ignored(repo, text):
    path = write_verdict(repo, verdict(repo))
    path.write_text(text, encoding="utf-8")
    notes: list[str] = []
    assert reproduction_of(repo / FOLDER / "results.json", notes) is None
    assert len(notes) == 1


def test_the_site_shows_the_newest_decisive_verdict(repo):
    other = replace(ENV, python="3.12.1")
    third = replace(ENV, machine="aarch64")
    write_verdict(repo, verdict(repo, "not attempted", recorded="2026-11-28T03:00:00+00:00"))
    assert reproduction_of(repo / FOLDER / "results.json").outcome == "not attempted"
    write_verdict(repo, verdict(repo, "reproduced", env=other, recorded="2026-11-28T01:00:00+00:00"))
    write_verdict(repo, verdict(repo, "not reproduced", env=third, recorded="2026-11-28T02:00:00+00:00",
                                reason="query 1, R@5 claimed 1.0, re-run 0.0; 1 query differs"))
    shown = reproduction_of(repo / FOLDER / "results.json")
    assert (shown.outcome, shown.environment) == ("not reproduced", third)
    assert shown.title == ("re-run on 2026-11-28 in Python 3.11.7 (CPython), Linux aarch64, statbench 0.1.0: "
                           "query 1, R@5 claimed 1.0, re-run 0.0; 1 query differs")


def test_no_verdict_outside_a_results_repository(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    assert reproduction_of(tmp_path / "results.json") is None


def test_verdicts_made_elsewhere_are_taken_only_when_they_read_and_match(repo, tmp_path):
    elsewhere = tmp_path / "artefact"
    good = verdict(repo)
    write_verdict(elsewhere, good)  # laid out as reproductions/DIGEST/ENV.json under the artefact folder
    write_verdict(elsewhere, replace(good, submission_digest="d" * 64))  # of files that are not in the repository
    newer = replace(ENV, python="3.13.0")
    edited = write_verdict(elsewhere, verdict(repo, "not attempted", env=newer))
    edited.write_text(edited.read_text("utf-8").replace('"not attempted"', '"reproduced"'), encoding="utf-8")
    taken, notes = take_verdicts(repo, elsewhere / "reproductions")
    assert taken == [verdict_path(repo, good.submission_digest, good.environment_digest)]
    assert reproduction_of(repo / FOLDER / "results.json") == good
    assert len(notes) == 2
    assert any("not the verdict of a submission of" in note for note in notes)
    assert any("its digest does not match its content" in note for note in notes)


# --- the command line ---------------------------------------------------------------------------------

def test_reproduce_refuses_a_folder_outside_the_repository_and_mixed_options(repo, tmp_path):
    result = CliRunner().invoke(cli, ["leaderboard", "reproduce", str(repo), str(tmp_path)])
    assert result.exit_code == 2 and "not a folder of the results repository" in result.output
    result = CliRunner().invoke(cli, ["leaderboard", "reproduce", str(repo), "--take", str(tmp_path),
                                      "--since", "main"])
    assert result.exit_code == 2 and "--take records verdicts made elsewhere" in result.output


def test_an_unreadable_submission_is_one_line_and_exit_2(repo):
    result = CliRunner().invoke(cli, ["leaderboard", "reproduce", str(repo)])
    assert result.exit_code == 2
    assert f"{FOLDER}: not a valid submission: " in result.output
    assert "1 submission(s): 0 reproduced, 0 not reproduced, 0 not attempted, 1 unreadable" in result.output


def test_an_identical_run_file_with_figures_it_does_not_score_is_not_reproduced(monkeypatch, tmp_path):
    rescored = {**CLAIMED, "q2": {"R@5": 0.5, "MRR@10": 0.5}}
    outcome, reason, compared, difference = _compare(monkeypatch, tmp_path, RUN, RUN, rescored)
    assert (outcome, compared, difference) == ("not reproduced", "run file byte-identical",
                                               Difference("q2", "MRR@10", 0.25, 0.5, 1))
    assert reason == ("the run file is byte-identical, but the submission's figures are not the ones it scores: "
                      "query q2, MRR@10 claimed 0.25, re-run 0.5; 1 query differs")


def test_a_build_hashes_only_the_folders_a_verdict_may_be_of(repo):
    """One reader per build: a row no verdict file names is not hashed at all."""
    other = repo / "results" / "stard" / "bm25" / "bm25,k1=0.9"
    other.mkdir()
    (other / "results.json").write_text("{}")
    written = write_verdict(repo, verdict(repo))

    class Spy:
        def __init__(self):
            self.asked = []

        def sha256(self, path):
            self.asked.append(Path(path).parent.name)
            return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    spy = Spy()
    reader = VerdictReader(notes=[], digests=spy)
    assert reader.of(other / "results.json") is None
    assert spy.asked == []
    assert reader.of(repo / FOLDER / "results.json") == read_verdict(written)
    assert set(spy.asked) == {"bm25"} and len(spy.asked) == 3


@pytest.mark.parametrize("code, reason", [
    ("import sys; open(sys.argv[1], 'w').write('{')", "gave no answer that reads"),
    ("import sys; open(sys.argv[1], 'w').write('{\"statbench\": 1}')", "gave an answer of another shape"),
    ("import sys; sys.exit(3)", "statbench does not start in the isolated environment: exit code 3"),
])
def test_a_probe_that_gives_no_proper_answer_is_not_attempted(monkeypatch, tmp_path, code, reason):
    monkeypatch.setattr(reproduce_run, "PROBE", code)
    with pytest.raises(NotAttempted, match=reason):
        reproduce_run.probe(SimpleNamespace(python=Path(sys.executable)), tmp_path, {"PATH": "/usr/bin:/bin"},
                            "stard", None, None)


def test_a_rerun_whose_results_do_not_read_is_not_reproduced(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.json").write_text('{"schema_version": 1, "x": NaN}', encoding="utf-8")
    outcome = compare_rerun(SimpleNamespace(results=None, run_path=None), tmp_path / "out")
    assert outcome[0] == "not reproduced" and outcome[1].startswith("the re-run's results.json does not read: ")


# --- the isolated environment's base ------------------------------------------------------------------

def _dist(site: Path, name: str, files: list[str], plugin: bool) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if plugin:
        (info / "entry_points.txt").write_text(f"[statbench]\n{name} = {name.replace('-', '_')}\n")
    record = [*files, f"{info.name}/METADATA", f"{info.name}/RECORD", "../../../bin/tool"]
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in record))
    for f in files:
        (site / f).parent.mkdir(parents=True, exist_ok=True)
        (site / f).write_text("")


def test_the_base_links_everything_but_third_party_plugins(monkeypatch, tmp_path):
    site = tmp_path / "site-packages"
    site.mkdir()
    _dist(site, "statbench", ["statbench/__init__.py", "__editable__.statbench-1.0.pth"], plugin=True)
    _dist(site, "numpy", ["numpy/__init__.py", "shared_ns/a.py"], plugin=False)
    _dist(site, "statbench-plugin-x", ["statbench_plugin_x/__init__.py", "__editable__.statbench_plugin_x-1.0.pth",
                                       "shared_ns/b.py"], plugin=True)
    (site / "loose.py").write_text("")
    monkeypatch.setattr(reproduce_env, "_site_folders", lambda: [site])
    monkeypatch.setattr(reproduce_env, "base_entries", reproduce_env.base_entries.__wrapped__)  # not the cached one
    assert sorted(reproduce_env.base_entries()) == [
        "__editable__.statbench-1.0.pth", "loose.py", "numpy", "numpy-1.0.dist-info", "shared_ns", "statbench",
        "statbench-1.0.dist-info"]


def test_a_half_made_environment_is_made_again(tmp_path):
    first = ensure_env(tmp_path, {"distributions": []}, [])
    (first.root / COMPLETE).unlink()
    (first.root / "leftover").write_text("")
    again = ensure_env(tmp_path, {"distributions": []}, [])
    assert again.root == first.root and not (again.root / "leftover").exists()
    assert (again.root / COMPLETE).is_file() and again.python.exists()
    [pth] = again.root.rglob(BASE_PTH)
    assert pth.read_text().startswith("import site; site.addsitedir(")


def test_a_probe_over_the_cpu_budget_is_not_attempted(monkeypatch, tmp_path):
    monkeypatch.setattr(reproduce_run, "PROBE", "while True: pass")
    monkeypatch.setattr(reproduce_run, "WALL_FACTOR", 100)
    with pytest.raises(NotAttempted, match=r"over the CPU budget \(1 s\) before the run"):
        reproduce_run.probe(SimpleNamespace(python=Path(sys.executable)), tmp_path, {"PATH": "/usr/bin:/bin"},
                            "stard", None, None, budget=1)


def test_take_records_another_jobs_verdicts_from_the_command_line(repo, tmp_path):
    elsewhere = tmp_path / "artefact"
    good = verdict(repo)
    write_verdict(elsewhere, good)
    result = CliRunner().invoke(cli, ["leaderboard", "reproduce", str(repo), "--take",
                                      str(elsewhere / "reproductions")])
    assert result.exit_code == 0, result.output
    assert f"1 verdict(s) recorded in {repo / 'reproductions'}" in result.output
    assert reproduction_of(repo / FOLDER / "results.json") == good


def test_an_environment_under_a_relative_cache_names_its_base_absolutely(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = ensure_env(Path("relative-cache"), {"distributions": []}, [])
    [pth] = env.root.rglob(BASE_PTH)
    assert f"site.addsitedir('{tmp_path.resolve() / 'relative-cache'}/base-" in pth.read_text()
    done = subprocess.run([str(env.python), "-I", "-c", "import statbench.leaderboard.reproduce.probe"], cwd="/",
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("recorded, declared, why", [
    (1.0, None, "results.json records a tolerance of 1, but the re-run's models declare none (deterministic)"),
    (0.5, 1e-3, "results.json records a tolerance of 0.5, but the re-run's models declare 0.001"),
    (None, 1e-3, "results.json records no tolerance, but the re-run's models declare 0.001"),
])
def test_the_tolerance_is_the_rerun_models_never_the_submitters(monkeypatch, tmp_path, recorded, declared, why):
    """A tolerance written into results.json by hand (a deterministic bm25 "within 1.0") would
    reproduce any run: the tolerance compared with is the one the re-run's installed models
    declare, and a record that says otherwise is not reproduced."""
    close = {q: {m: v + 1e-4 for m, v in s.items()} for q, s in CLAIMED.items()}
    outcome, reason, _, _ = _compare(monkeypatch, tmp_path, RUN, RUN + "q3 Q0 d1 1 1.0 x\n", close,
                                     tolerance=recorded, rerun_tolerance=declared)
    assert outcome == "not reproduced"
    assert reason == f"{why}, and the run files differ"
