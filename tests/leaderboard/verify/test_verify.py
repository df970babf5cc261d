"""`leaderboard build --verify`: each row's run file re-scored against the task's judgements
on the same data version; verified / unverifiable / refused rows; the verification cache
(a rebuild re-scores only new or changed run files)."""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, edit_results, edit_run, write_jsonl
from fixture_data import rows_by_folder as rows

from statbench import __version__
from statbench.commands.cli import cli
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.verify.verify import Verifier, compare_figures
from statbench.registry import plugins


def write_stard(root: Path, queries=STARD_QUERIES) -> Path:
    write_jsonl(root / "corpus.jsonl", STARD_CORPUS)
    (root / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Output sets of `statbench run` on the miniature STARD (bm25 and tfidf), made once."""
    root = tmp_path_factory.mktemp("verify")
    data = write_stard(root / "stard")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATBENCH_CACHE", str(root / "cache"))
        mp.chdir(root)
        plugins.reset_registry()
        for model in ("bm25", "tfidf"):
            args = ["run", "--task", "stard", "--model", model, "--data-dir", str(data), "--no-progress"]
            mp.setattr(sys, "argv", ["statbench", *args])
            result = CliRunner().invoke(cli, args, catch_exceptions=False)
            assert result.exit_code == 0, result.output
        plugins.reset_registry()
    return root


@pytest.fixture
def outputs(built, tmp_path) -> Path:
    """A private copy of the output sets (tests tamper with them)."""
    return Path(shutil.copytree(built / "statbench-output" / "stard", tmp_path / "outputs"))


@pytest.fixture
def data(built) -> Path:
    return built / "stard"


def test_honest_rows_are_verified_with_date_and_version(outputs, data):
    verifier = Verifier({"stard": data})
    found = rows(collect(outputs, verify=verifier))
    assert sorted(found) == ["bm25", "tfidf"]
    for row in found.values():
        assert row.verification.status == "verified"
        assert row.verification.reason is None
        assert row.verification.verified_on == _dt.date.today().isoformat()
        assert row.verification.statbench_version == __version__
    assert (verifier.rescored, verifier.cache_hits) == (2, 0)
    assert verifier.summary().startswith("verification: 2 verified, 0 unverifiable, 0 refused")


def test_without_verify_rows_carry_no_verification(outputs):
    assert all(row.verification is None for row in rows(collect(outputs)).values())


def test_rebuild_rescores_only_new_or_changed_run_files(outputs, data):
    first = Verifier({"stard": data})
    collect(outputs, verify=first)
    assert (first.rescored, first.cache_hits) == (2, 0)
    again = Verifier({"stard": data})
    collect(outputs, verify=again)
    assert (again.rescored, again.cache_hits) == (0, 2)
    # one run file changed (and recorded): only that one is re-scored
    edit_run(outputs / "tfidf", " statbench-tfidf\n", " statbench-tfidf-2\n", record=True)
    changed = Verifier({"stard": data})
    found = rows(collect(outputs, verify=changed))
    assert (changed.rescored, changed.cache_hits) == (1, 1)
    assert {name: row.verification.status for name, row in found.items()} == {"bm25": "verified", "tfidf": "verified"}


def test_cached_figures_are_compared_again_so_an_edited_results_file_is_refused(outputs, data):
    collect(outputs, verify=Verifier({"stard": data}))
    edit_results(outputs / "bm25", lambda obj: obj["all_queries"].__setitem__("R@5", 0.9))
    verifier = Verifier({"stard": data})
    found = rows(collect(outputs, verify=verifier))
    assert verifier.cache_hits == 2 and verifier.rescored == 0
    assert sorted(found) == ["tfidf"]  # a refused row is not published
    [line] = verifier.lines("refused")
    assert line == f"{outputs / 'bm25' / 'results.json'}: R@5 on all queries (pooled): claimed 0.9, re-scored 1.0"


def test_figures_edited_consistently_are_refused_naming_the_measure_and_query(outputs, data):
    """Every R@5 figure lowered to 0.5 together (per query, splits, pooled, aggregate): the
    strict reader's agreement checks pass; only re-scoring shows the run does not give them."""
    def lower(obj):
        for scores in [*obj["per_query"].values(), *(s["scores"] for s in obj["splits"]), obj["all_queries"]]:
            scores["R@5"] = 0.5
        obj["aggregate"]["R@5"] = {"mean": 0.5, "std": 0.0}

    edit_results(outputs / "bm25", lower)
    verifier = Verifier({"stard": data})
    found = rows(collect(outputs, verify=verifier))
    assert sorted(found) == ["tfidf"]
    [line] = verifier.lines("refused")
    first_query = next(iter(json.loads((outputs / "bm25" / "results.json").read_text())["per_query"]))
    assert line.startswith(f"{outputs / 'bm25' / 'results.json'}: R@5 on query {first_query}: claimed 0.5, "
                           "re-scored 1.0 (and ")
    assert "more figure(s) differ" in line


def test_a_run_file_line_changed_is_refused(outputs, data):
    # not recorded: the file is not the run the figures came from
    edit_run(outputs / "bm25", "0 Q0 民法典第五十四条 1", "0 Q0 no-such-article 1", record=False)
    # recorded too: the figures are not the run's
    edit_run(outputs / "tfidf", "0 Q0 民法典第五十四条 1", "0 Q0 no-such-article 1", record=True)
    verifier = Verifier({"stard": data})
    assert rows(collect(outputs, verify=verifier)) == {}
    bm25, tfidf = verifier.lines("refused")
    assert "bm25/results.json: run file" in bm25 and "does not hash to run_file.sha256" in bm25
    assert tfidf.startswith(f"{outputs / 'tfidf' / 'results.json'}: R@5 on query 0: claimed 1.0, re-scored 0.0")


def test_a_gzipped_run_file_beside_the_results_is_verified(outputs, data):
    run = outputs / "bm25" / "run.trec"
    with open(run, "rb") as src, gzip.GzipFile(outputs / "bm25" / "run.trec.gz", "wb", mtime=0) as gz:
        shutil.copyfileobj(src, gz)
    run.unlink()
    verifier = Verifier({"stard": data})
    assert rows(collect(outputs, verify=verifier))["bm25"].verification.status == "verified"


def test_unverifiable_rows_are_left_off_unless_allowed(outputs, data, tmp_path):
    (outputs / "bm25" / "run.trec").unlink()
    other = write_stard(tmp_path / "other", STARD_QUERIES[:4])  # other data: another checksum
    verifier = Verifier({"stard": data})
    assert sorted(rows(collect(outputs, verify=verifier))) == ["tfidf"]
    [line] = verifier.lines("unverifiable")
    assert "bm25/results.json: no run file" in line
    allowed = Verifier({"stard": other}, allow_unverified=True)
    found = rows(collect(outputs, verify=allowed))
    assert {name: row.verification.status for name, row in found.items()} == {"bm25": "unverifiable",
                                                                             "tfidf": "unverifiable"}
    assert "scored on other data of task stard" in found["tfidf"].verification.reason
    assert allowed.rescored == 0


def test_unverifiable_without_local_data(outputs, monkeypatch):
    from statbench.data import download
    from statbench.errors import DownloadError

    def offline(url, dest, sha256, timeout=30):
        raise DownloadError(f"could not download {url}: offline")

    monkeypatch.setattr(download, "fetch", offline)
    verifier = Verifier(allow_unverified=True)
    found = rows(collect(outputs, verify=verifier))
    assert {row.verification.status for row in found.values()} == {"unverifiable"}
    assert all("no local data of task stard (give --data-dir stard=DIR)" in row.verification.reason
               for row in found.values())


def test_compare_figures_tolerance(outputs):
    from statbench.results.record import Results

    record = Results.read(outputs / "bm25" / "results.json")
    assert compare_figures(record, record) == []
    nudged = json.loads((outputs / "bm25" / "results.json").read_text())
    qid = next(iter(nudged["per_query"]))
    nudged["per_query"][qid]["MRR@10"] -= 1e-6
    assert compare_figures(Results.from_json(nudged), record) == [
        f"MRR@10 on query {qid}: claimed {1 - 1e-6!r}, re-scored 1.0"]
    nudged["per_query"][qid]["MRR@10"] = 1 - 1e-12  # float summation order: equal
    assert compare_figures(Results.from_json(nudged), record) == []


def test_build_verify_command(outputs, data, tmp_path):
    edit_results(outputs / "bm25", lambda obj: obj["all_queries"].__setitem__("R@5", 0.9))
    args = ["leaderboard", "build", "--results", str(outputs), "--out", str(tmp_path / "site"), "--verify",
            "--data-dir", f"stard={data}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert f"refused: {outputs / 'bm25' / 'results.json'}: R@5 on all queries (pooled): claimed 0.9" in result.output
    assert "verification: 1 verified, 0 unverifiable, 1 refused (not published)" in result.output
    assert "1 result(s) on 1 task page(s)" in result.output
    strict = CliRunner().invoke(cli, [*args, "--strict"])
    assert strict.exit_code == 2
    assert "error: 1 row(s) refused (--strict)" in strict.output


@pytest.mark.parametrize("args, message", [
    (["--data-dir", "stard"], "--data-dir 'stard': expected TASK=DIR"),
    (["--data-dir", "stard=a", "--data-dir", "stard=b"], "--data-dir: task 'stard' is given twice"),
])
def test_build_verify_refuses_bad_data_dirs(outputs, tmp_path, args, message):
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(outputs), "--out",
                                      str(tmp_path / "site"), "--verify", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "site").exists()


def test_verify_options_need_verify(outputs, tmp_path):
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(outputs), "--out",
                                      str(tmp_path / "site"), "--allow-unverified"])
    assert result.exit_code == 2
    assert "go with --verify" in result.output


# --- the task loaded once per build; rows re-scored ahead in worker processes -----------------


def many_rows(outputs: Path, copies: int) -> list[Path]:
    """``copies`` more rows of each output set, each with a run file of its own (the run tag
    changed, its sha256 recorded: the same figures, another run to re-score). Each is told
    apart by a parameter ``copy`` its command gives too (a command this statbench cannot
    read, so only declared: a parameter only in the record would be refused)."""
    made = []
    for name in ("bm25", "tfidf"):
        for i in range(copies):
            folder = Path(shutil.copytree(outputs / name, outputs / f"{name}-{i}"))
            edit_run(folder, f" statbench-{name}\n", f" statbench-{name}-copy{i}\n", record=True)

            def copy(obj, i=i):
                obj["model"]["params"]["copy"] = i
                obj["command"] += f" --param copy={i}"

            edit_results(folder, copy)
            made.append(folder)
    return made


class Calls:
    """Counts the calls of module functions (wrapped, still called)."""

    def __init__(self, monkeypatch, *targets):
        self.counts = {}
        for module, name in targets:
            original = getattr(module, name)
            self.counts[name] = 0

            def wrapper(*args, _original=original, _name=name, **kwargs):
                self.counts[_name] += 1
                return _original(*args, **kwargs)

            monkeypatch.setattr(module, name, wrapper)


def test_the_task_is_loaded_once_for_all_rows_and_not_read_at_all_when_all_are_cached(outputs, data, monkeypatch):
    from statbench.loading import load, loadcache
    from statbench.scoring import evaluate_file

    many_rows(outputs, 3)  # 8 rows, 8 run files
    from statbench.leaderboard.verify import verify

    # where the verifier calls them (it imports the core's functions by name)
    calls = Calls(monkeypatch, (verify, "load_task"), (load, "summary_entry"), (loadcache, "read_doc_ids"),
                  (verify, "evaluate_rankings"), (evaluate_file, "evaluate_run_file"))
    verifier = Verifier({"stard": data})
    found = rows(collect(outputs, verify=verifier))
    assert len(found) == 8 and {row.verification.status for row in found.values()} == {"verified"}
    assert (verifier.rescored, verifier.cache_hits) == (8, 0)
    # the data files hashed once, the judgements and document ids read once, for 8 rows
    assert calls.counts["load_task"] == 1 and calls.counts["summary_entry"] == 1
    assert calls.counts["read_doc_ids"] <= 1
    assert calls.counts["evaluate_rankings"] == 8 and calls.counts["evaluate_run_file"] == 0
    # warm: the data files hashed once more (the checksum proven), no corpus read, no run scored
    calls.counts.update(dict.fromkeys(calls.counts, 0))
    warm = Verifier({"stard": data})
    collect(outputs, verify=warm)
    assert (warm.rescored, warm.cache_hits) == (0, 8)
    assert calls.counts == {"load_task": 1, "summary_entry": 1, "read_doc_ids": 0, "evaluate_rankings": 0,
                            "evaluate_run_file": 0}


def test_figures_rescored_against_the_loaded_task_are_statbench_evaluates(outputs, data):
    """The verifier's figures (the task loaded once) equal ``evaluate_run_file``'s, which loads
    the task for the one run (``statbench evaluate``)."""
    import logging

    from statbench.data.runfile import read_run
    from statbench.results.record import Results
    from statbench.scoring.evaluate_file import evaluate_rankings, evaluate_run_file, load_scoring_task

    log = logging.getLogger("test")
    many_rows(outputs, 1)
    scoring = load_scoring_task("stard", data, log)
    for folder in sorted(p for p in outputs.iterdir() if p.is_dir()):
        run = folder / "run.trec"
        record = Results.read(folder / "results.json")
        splits = [s.name for s in record.splits]
        alone = evaluate_run_file(run, "stard", data, splits, log)
        loaded = evaluate_rankings(run, read_run(run), scoring, splits, log, run_sha256=alone.run_file.sha256)
        assert loaded.to_json() == alone.to_json()
        assert compare_figures(record, loaded) == []


def test_refusals_of_evaluate_rankings_are_evaluate_run_files(outputs, data, tmp_path):
    """A run of another task is refused with the same line by both paths."""
    import logging

    from statbench.data.runfile import read_run
    from statbench.errors import StatbenchError
    from statbench.scoring.evaluate_file import evaluate_rankings, evaluate_run_file, load_scoring_task

    log = logging.getLogger("test")
    other = tmp_path / "other.trec"
    other.write_text("q-x Q0 d1 1 2.0 t\nq-x Q0 d2 2 1.0 t\n", encoding="utf-8")
    with pytest.raises(StatbenchError) as alone:
        evaluate_run_file(other, "stard", data, None, log)
    with pytest.raises(StatbenchError) as loaded:
        evaluate_rankings(other, read_run(other), load_scoring_task("stard", data, log), None, log, run_sha256="0" * 64)
    assert str(loaded.value) == str(alone.value)
    assert "the run ranks none of the" in str(alone.value)


def test_rows_rescored_ahead_in_worker_processes_get_the_same_verdicts(outputs, data, monkeypatch, tmp_path):
    """``ahead`` (what ``build --verify`` gives): on the first miss the other rows are
    re-scored by worker processes; verdicts, reasons and counts are those of row by row, a
    tampered row among them is refused with the same line, and the build's own process
    scores only the row that missed first."""
    from statbench.leaderboard.verify import verify

    many_rows(outputs, 2)  # 6 rows
    edit_results(outputs / "tfidf-1", lambda obj: obj["all_queries"].__setitem__("R@5", 0.25))
    monkeypatch.setattr(verify, "AHEAD_MIN_ROWS", 2)
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "row-by-row"))
    alone = Verifier({"stard": data})
    expected = {name: row.verification for name, row in rows(collect(outputs, verify=alone)).items()}
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "ahead"))
    calls = Calls(monkeypatch, (verify, "evaluate_rankings"))
    ahead = Verifier({"stard": data}, ahead=outputs, workers=2)
    found = {name: row.verification for name, row in rows(collect(outputs, verify=ahead)).items()}
    assert found == expected and len(found) == 5
    assert ahead.lines("refused") == alone.lines("refused")
    assert "tfidf-1/results.json: R@5 on all queries (pooled): claimed 0.25" in ahead.lines("refused")[0]
    assert (ahead.rescored, ahead.cache_hits) == (alone.rescored, alone.cache_hits) == (6, 0)
    assert calls.counts["evaluate_rankings"] == 1  # the first row; the 5 others in the workers
    assert ahead._built_ahead == {}  # every row re-scored ahead was verified


def test_rows_are_not_rescored_ahead_below_the_threshold_or_on_one_core(outputs, data, monkeypatch):
    from statbench.leaderboard.verify import verify

    many_rows(outputs, 1)
    calls = Calls(monkeypatch, (verify, "evaluate_rankings"))
    one_core = Verifier({"stard": data}, ahead=outputs, workers=1)
    collect(outputs, verify=one_core)
    assert calls.counts["evaluate_rankings"] == 4 and one_core.rescored == 4
