"""Fault injection on the run path: cache entries that lie, plugins that misbehave, runs
that die, outputs that must survive. Each case asserts the exact outcome: exit code,
message, figures equal to a clean run, files left behind."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

from statbench import hookimpl
from statbench.registry import plugins
from statbench.api import Reranker, Retriever
from statbench.commands.cli import cli
from statbench.tasks.stard import Stard
from statbench.testing import registered_plugin


def run_cli(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def bm25_args(stard_dir, out):
    return ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir), "--output", str(out),
            "--no-progress"]


def split_entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "runs" / "stard").iterdir() if p.is_dir() and not p.name.startswith("."))


def scores(out: Path) -> dict:
    results = json.loads((out / "results.json").read_text())
    return {"aggregate": results["aggregate"], "per_query": results["per_query"]}


@pytest.fixture
def clean_run(stard_dir, tmp_path):
    out = tmp_path / "clean"
    assert run_cli(*bm25_args(stard_dir, out)).exit_code == 0
    return out


# --- cache entries prove themselves ----------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate-at-line", "flip-byte", "delete-manifest", "extra-file", "delete-run"])
def test_damaged_split_run_is_detected_recorded_and_recomputed(stard_dir, tmp_path, clean_run, isolated_cache, damage):
    entry = split_entries(isolated_cache)[0]
    run_file = entry / "run.trec"
    if damage == "truncate-at-line":  # a killed write or a full disk, cut at a line boundary
        lines = run_file.read_text().splitlines(keepends=True)
        run_file.write_text("".join(lines[: len(lines) // 2]))
    elif damage == "flip-byte":
        data = bytearray(run_file.read_bytes())
        data[len(data) // 2] ^= 0x01
        run_file.write_bytes(bytes(data))
    elif damage == "delete-manifest":
        (entry / "manifest.json").unlink()
    elif damage == "extra-file":
        (entry / "planted.trec").write_text("q1 Q0 d1 1 1.0 x\n")
    else:
        run_file.unlink()
    out = tmp_path / "again"
    result = run_cli(*bm25_args(stard_dir, out))
    assert result.exit_code == 0, result.output
    assert scores(out) == scores(clean_run)
    assert (out / "run.trec").read_bytes() == (clean_run / "run.trec").read_bytes()
    results = json.loads((out / "results.json").read_text())
    assert [e["entry"] for e in results["cache_invalid"]] == [str(entry)]
    assert list(results["cache"].values()).count("miss") == 1
    # the rebuilt entry is sound: a third run reuses everything and records nothing invalid
    third = tmp_path / "third"
    assert run_cli(*bm25_args(stard_dir, third)).exit_code == 0
    again = json.loads((third / "results.json").read_text())
    assert set(again["cache"].values()) == {"hit"} and "cache_invalid" not in again


def test_stale_staging_folders_are_removed(stard_dir, tmp_path, clean_run, isolated_cache):
    entry = split_entries(isolated_cache)[0]
    stale = entry.with_name(f".{entry.name}.staging-deadbeef0000")
    stale.mkdir()
    (stale / "run.trec").write_text("half a run")
    entry_manifest = entry / "manifest.json"
    entry_manifest.unlink()  # forces a rebuild of this entry, under its lock
    assert run_cli(*bm25_args(stard_dir, tmp_path / "again")).exit_code == 0
    assert not stale.exists()
    assert not [p for p in entry.parent.iterdir() if ".staging-" in p.name]


# --- the cache key covers the task's identity -----------------------------------------


class CaptionedStard(Stard):
    """A task plugin whose loader changes article text (title prepended) without any data
    file changing: only its version tells the cache."""

    text_prefix = ""

    def load(self, data_dir, log):
        data = super().load(data_dir, log)
        from statbench.api import Document

        data.corpus = {i: Document(id=i, text=self.text_prefix + d.text, title=d.title) for i, d in data.corpus.items()}
        return data


class CaptionedPlugin:
    @hookimpl
    def register_tasks(self, register):
        register(type("StardCaptioned", (CaptionedStard,), {"name": "stard-captioned", "text_prefix": CaptionedStard.text_prefix,
                                                            "language": CaptionedStard.language}))


def test_changed_loader_text_or_language_is_never_served_from_cache(stard_dir, tmp_path):
    def run(tag, *more):
        with registered_plugin(CaptionedPlugin(), "captioned"):
            out = tmp_path / tag
            result = run_cli("run", "--task", "stard-captioned", "--model", "bm25", "--data-dir", str(stard_dir),
                             "--output", str(out), "--no-progress", *more)
            assert result.exit_code == 0, result.output
            return json.loads((out / "results.json").read_text())

    first = run("a")
    assert set(first["cache"].values()) == {"miss"}
    assert set(run("b")["cache"].values()) == {"hit"}
    CaptionedStard.text_prefix = "婚姻 婚姻 婚姻 "  # same files, other text: a corpus checksum change
    try:
        changed = run("c")
    finally:
        CaptionedStard.text_prefix = ""
    assert set(changed["cache"].values()) == {"miss"}
    assert changed["task"]["corpus_checksum"] != first["task"]["corpus_checksum"]
    assert changed["task"]["data_checksum"] == first["task"]["data_checksum"]
    original_language = CaptionedStard.language
    CaptionedStard.language = "fr"
    try:
        other = run("d", "--allow-empty")  # French analysis of Chinese text matches nothing
    finally:
        CaptionedStard.language = original_language
    assert set(other["cache"].values()) == {"miss"}


# --- plugin output is checked before anything is cached or written --------------------


class Misbehaving(Retriever):
    name = "misbehaving"
    default_params = {"fault": "none"}

    def index(self, corpus, ctx):
        self.ids = [d.id for d in corpus]

    def search(self, queries, k, ctx):
        fault = self.params["fault"]
        out = {q.id: [(d, float(len(self.ids) - i)) for i, d in enumerate(self.ids)] for q in queries}
        q = queries[0].id
        if fault == "unknown-doc":
            out[q] = [("no-such-article", 1.0)] + out[q]
        elif fault == "duplicate-doc":
            out[q] = out[q] + [out[q][0]]
        elif fault == "extra-query":
            out["q-nobody-asked"] = out[q]
        elif fault == "whitespace-id":
            out[q] = [("民法典 第五十四条", 9.0)]
        elif fault == "nan-score":
            out[q] = [(self.ids[0], math.nan)]
        elif fault == "inf-score":
            out[q] = [(self.ids[0], -math.inf)]
        elif fault == "int-doc-id":
            out[q] = [(3, 1.0)]
        elif fault == "not-a-dict":
            return [out[q]]
        elif fault == "string-score":
            out[q] = [(self.ids[0], "1.0")]
        elif fault == "system-exit":
            raise SystemExit(3)
        return out


class MisbehavingPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Misbehaving)


@pytest.mark.parametrize("fault, message", [
    ("unknown-doc", "doc id 'no-such-article' is not in the corpus"),
    ("duplicate-doc", "is ranked twice"),
    ("extra-query", "returned a ranking for query id 'q-nobody-asked', which was not asked for"),
    ("whitespace-id", "doc id '民法典 第五十四条' is empty or contains whitespace"),
    ("nan-score", "score nan is not finite"),
    ("inf-score", "score -inf is not finite"),
    ("int-doc-id", "doc id 3 is a int, not a str"),
    ("not-a-dict", "returned list, not a dict query id -> ranking"),
    ("string-score", "score '1.0' is not a real number"),
    ("system-exit", "failed while searching fold-1: SystemExit: 3"),
])
def test_bad_plugin_output_stops_before_cache_or_output(stard_dir, tmp_path, isolated_cache, fault, message):
    out = tmp_path / "out"
    with registered_plugin(MisbehavingPlugin(), "misbehaving-plugin"):
        result = run_cli("run", "--task", "stard", "--model", "misbehaving", "--param", f"fault={fault}",
                         "--data-dir", str(stard_dir), "--output", str(out), "--no-progress")
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
        assert message in lines[0]
        assert "misbehaving" in lines[0]  # names the model and its plugin
        assert "Traceback" not in result.output
        assert not out.exists()
        runs = isolated_cache / "runs" / "stard"
        assert not runs.exists() or not [p for p in runs.iterdir() if not p.name.startswith(".")]
        # nothing was poisoned: the same command with a well-behaved model now works
        fixed = run_cli("run", "--task", "stard", "--model", "misbehaving", "--data-dir", str(stard_dir),
                        "--output", str(out), "--no-progress")
        assert fixed.exit_code == 0, fixed.output


def test_query_and_doc_are_named_in_the_message(stard_dir, tmp_path):
    with registered_plugin(MisbehavingPlugin(), "misbehaving-plugin"):
        result = run_cli("run", "--task", "stard", "--model", "misbehaving", "--param", "fault=unknown-doc",
                         "--data-dir", str(stard_dir), "--output", str(tmp_path / "o"), "--no-progress")
    assert result.output.strip() == ("Error: model 'misbehaving' (misbehaving-plugin:misbehaving), query '1': doc id "
                                     "'no-such-article' is not in the corpus")


class WrongCandidates(Reranker):
    name = "wrong-candidates"

    def rerank(self, queries, candidates, corpus, ctx):
        # a corpus article that was not among this query's candidates
        return {q.id: [(d, 1.0) for d in corpus if d not in candidates[q.id]][:1] for q in queries}


class WrongCandidatesPlugin:
    @hookimpl
    def register_rerankers(self, register):
        register(WrongCandidates)


def test_reranker_may_only_return_its_candidates(stard_dir, tmp_path):
    with registered_plugin(WrongCandidatesPlugin(), "wrong-plugin"):
        result = run_cli("run", "--task", "stard", "--model", "bm25", "--reranker", "wrong-candidates",
                         "--rerank-depth", "2", "--data-dir", str(stard_dir), "--output", str(tmp_path / "o"),
                         "--no-progress")
    assert result.exit_code == 2
    assert "is not among the candidates it was given" in result.output
    assert "reranker 'wrong-candidates' (wrong-plugin:wrong-candidates), query" in result.output


def test_more_than_k_untied_documents_is_refused():
    from statbench.registry.checks import PluginError, check_rankings

    ranking = {"q": [("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 1.0)]}
    # ties with the k-th are the harness's to break: allowed
    assert check_rankings({"q": ranking["q"][:3]}, owner="m", query_ids={"q"}, corpus={"a", "b", "c", "d"}, k=2)
    with pytest.raises(PluginError, match=r"m, query 'q': returned 4 documents for k=2 \(1 of them scored below"):
        check_rankings(ranking, owner="m", query_ids={"q"}, corpus={"a", "b", "c", "d"}, k=2)


# --- the output set is replaced as a unit ---------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_failed_run_leaves_previous_outputs_exactly_and_nothing_stray(stard_dir, tmp_path):
    out = tmp_path / "out"
    assert run_cli(*bm25_args(stard_dir, out)).exit_code == 0
    before = snapshot(out)
    with registered_plugin(MisbehavingPlugin(), "misbehaving-plugin"):
        result = run_cli("run", "--task", "stard", "--model", "misbehaving", "--param", "fault=nan-score",
                         "--data-dir", str(stard_dir), "--output", str(out), "--no-progress")
    assert result.exit_code == 2
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "stard"]


@pytest.mark.parametrize("case", ["parent-is-file", "output-is-file", "foreign-files", "symlink"])
def test_unusable_output_is_refused_before_any_work(stard_dir, tmp_path, case):
    Counting.searches = 0
    if case == "parent-is-file":
        (tmp_path / "blocker").write_text("")
        out = tmp_path / "blocker" / "out"
        expected = "blocker is not a folder"  # the nearest existing folder above --output
    elif case == "output-is-file":
        out = tmp_path / "out"
        out.write_text("")
        expected = "is a file"  # click refuses it while parsing, in one line too
    elif case == "foreign-files":
        out = tmp_path / "out"
        out.mkdir()
        (out / "thesis.tex").write_text("precious")
        expected = "holds files a run does not write (e.g. 'thesis.tex')"
    else:
        (tmp_path / "real").mkdir()
        out = tmp_path / "out"
        out.symlink_to(tmp_path / "real")
        expected = "is a symbolic link"
    with registered_plugin(CountingPlugin(), "counting-plugin"):
        result = run_cli("run", "--task", "stard", "--model", "counting", "--data-dir", str(stard_dir),
                         "--output", str(out), "--no-progress")
    assert result.exit_code == 2
    assert expected in result.output and len(result.output.strip().splitlines()) == 1
    assert Counting.searches == 0  # refused before any work
    if case == "foreign-files":
        assert (out / "thesis.tex").read_text() == "precious"


class Counting(Retriever):
    name = "counting"
    searches = 0

    def index(self, corpus, ctx):
        self.ids = [d.id for d in corpus]

    def search(self, queries, k, ctx):
        Counting.searches += 1
        return {q.id: [(d, 1.0 / (i + 1)) for i, d in enumerate(self.ids)] for q in queries}


class CountingPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Counting)


def test_overlapping_splits_are_refused(stard_dir, tmp_path):
    result = CliRunner().invoke(cli, [*bm25_args(stard_dir, tmp_path / "o"), "--split", "fold-1", "--split", "fold-1"])
    assert result.exit_code == 2 and "'fold-1' is named twice" in result.output


# --- kills at every stage, then the same command --------------------------------------

KILL_SCRIPT = """
import os, signal, sys
# Ctrl-C as in a terminal: a test run started in the background inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
stage = os.environ["KILL_AT"]
def die(*a, **k):
    os.kill(os.getpid(), getattr(signal, os.environ["KILL_WITH"]))
import statbench.storage.cache as cache, statbench.run.outputs as outputs, statbench.data.runfile as runfile, statbench.run.runner as runner
if stage == "cache-seal":          # a split run written to staging, not yet sealed
    cache.CacheEntry._seal = die
elif stage == "cache-publish":     # sealed, not yet renamed into place
    real = cache.os.replace
    cache.os.replace = lambda a, b: die() if ".staging-" in str(a) else real(a, b)
elif stage == "second-split":      # one split cached, killed in the next search
    import statbench.models.lexical.bm25 as bm25
    calls = []
    real_search = bm25.BM25.search
    def search(self, *a, **k):
        calls.append(1)
        if len(calls) == 2:
            die()
        return real_search(self, *a, **k)
    bm25.BM25.search = search
elif stage == "output-staged":     # every output file written, before the swap
    outputs.OutputSet._swap_in = die
elif stage == "output-half":       # half of the output set written
    real_write = runfile.write_qrels
    runner.write_qrels = die
from statbench.commands.cli import main
sys.argv = ["statbench"] + sys.argv[1:]
main()
"""


@pytest.fixture(scope="module")
def killed_run_world(tmp_path_factory):
    """A miniature STARD, the reference output set of bm25 on it and a previous good output set
    of the same run: built once, every stage and signal is compared with them."""
    root = tmp_path_factory.mktemp("kill")
    data = root / "stard"
    write_jsonl(data / "corpus.jsonl", STARD_CORPUS)
    (data / "queries.json").write_text(json.dumps(STARD_QUERIES, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "STATBENCH_CACHE": str(root / "ref-cache")}
    args = ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(data), "--no-progress"]
    for name in ("reference", "previous"):
        subprocess.run([sys.executable, "-m", "statbench.commands.cli", *args, "--output", str(root / name)], env=env,
                       check=True, capture_output=True)
    return args, root / "reference", root / "previous"


@pytest.mark.parametrize("signal_name, exit_code", [("SIGKILL", -9), ("SIGINT", 130)])
@pytest.mark.parametrize("stage", ["cache-seal", "cache-publish", "second-split", "output-half", "output-staged"])
def test_kill_at_each_stage_then_rerun_gives_identical_outputs(killed_run_world, tmp_path, isolated_cache, stage,
                                                               signal_name, exit_code):
    args, reference, previous = killed_run_world
    out = tmp_path / "out"
    shutil.copytree(previous, out)  # a previous good output set that the killed run must leave alone
    before = snapshot(out)
    env = {**os.environ, "STATBENCH_CACHE": str(isolated_cache), "KILL_AT": stage, "KILL_WITH": signal_name}
    killed = subprocess.run([sys.executable, "-c", KILL_SCRIPT, *args, "--output", str(out)], env=env,
                            capture_output=True, text=True)
    assert killed.returncode == exit_code, killed.stderr
    if signal_name == "SIGINT":  # Ctrl-C: one line, no traceback
        assert killed.stderr.strip().splitlines()[-1].startswith("Error: interrupted")
        assert "Traceback" not in killed.stderr
    assert snapshot(out) == before
    env.pop("KILL_AT")
    again = subprocess.run([sys.executable, "-m", "statbench.commands.cli", *args, "--output", str(out)], env=env,
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (out / "run.trec").read_bytes() == (reference / "run.trec").read_bytes()
    assert scores(out) == scores(reference)
    assert sorted(p.name for p in out.iterdir()) == ["qrels.trec", "results.json", "run.log", "run.trec"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    leftovers = [p for p in isolated_cache.rglob("*") if ".staging-" in p.name]
    assert not leftovers


def test_two_identical_runs_started_together_both_succeed(stard_dir, tmp_path, isolated_cache):
    args = ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir), "--no-progress"]
    env = {**os.environ, "STATBENCH_CACHE": str(isolated_cache)}
    procs = [subprocess.Popen([sys.executable, "-m", "statbench.commands.cli", *args, "--output", str(tmp_path / f"o{i}")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outcomes = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    assert [rc for _, _, rc in outcomes] == [0, 0], outcomes
    assert (tmp_path / "o0" / "run.trec").read_bytes() == (tmp_path / "o1" / "run.trec").read_bytes()
    assert scores(tmp_path / "o0") == scores(tmp_path / "o1")
    assert not [p for p in isolated_cache.rglob("*") if ".staging-" in p.name or p.name.endswith(".tmp")]


def test_two_runs_into_the_same_output_both_succeed(stard_dir, tmp_path, isolated_cache, clean_run):
    out = tmp_path / "shared"
    env = {**os.environ, "STATBENCH_CACHE": str(isolated_cache)}
    args = ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir), "--no-progress",
            "--output", str(out)]
    procs = [subprocess.Popen([sys.executable, "-m", "statbench.commands.cli", *args], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    assert (out / "run.trec").read_bytes() == (clean_run / "run.trec").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


# --- plugins can never take over the CLI ----------------------------------------------


def test_plugin_raising_system_exit_at_import_is_marked_failed(fake_distributions, stard_dir, tmp_path):
    fake_distributions("statbench-hostile-exit", "sbhostile_exit", """
        import argparse
        argparse.ArgumentParser().parse_args(["--nonsense"])   # exits 2 at import
    """)
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.output[result.output.index("["):])
    failed = [p for p in payload if p["distribution"] == "statbench-hostile-exit"]
    assert failed[0]["error"].startswith("SystemExit(2) raised by the plugin")
    run = CliRunner().invoke(cli, bm25_args(stard_dir, tmp_path / "o"))
    assert run.exit_code == 0, run.output


def test_plugin_printing_at_import_does_not_corrupt_json_output(fake_distributions):
    fake_distributions("statbench-hostile-print", "sbhostile_print", "print('hello from a plugin')\n")
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0
    json.loads(result.output)  # nothing but the JSON on stdout


def test_third_party_bm25_never_silently_replaces_the_builtin(fake_distributions, stard_dir, tmp_path):
    fake_distributions("statbench-hostile-bm25", "sbhostile_bm25", """
        from statbench import hookimpl
        from statbench.api import Retriever
        class Fake(Retriever):
            name = "bm25"
            def index(self, corpus, ctx): self.ids = [d.id for d in corpus]
            def search(self, queries, k, ctx): return {q.id: [(self.ids[0], 1.0)] for q in queries}
        @hookimpl
        def register_retrievers(register):
            register(Fake)
    """)
    registry = plugins.get_registry()
    assert registry.retrievers["bm25"].plugin.distribution == "statbench"
    assert [e.qualified for e in registry.providers("retrievers", "bm25")] == [
        "statbench:bm25", "statbench-hostile-bm25:bm25"]
    result = CliRunner().invoke(cli, bm25_args(stard_dir, tmp_path / "builtin"))
    assert result.exit_code == 0
    assert result.output.count("registered by several plugins; using statbench:bm25 (the built-in wins)") == 1
    builtin = json.loads((tmp_path / "builtin" / "results.json").read_text())
    assert builtin["model"]["plugin"]["distribution"] == "statbench"
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "statbench-hostile-bm25:bm25",
                                      "--data-dir", str(stard_dir), "--output", str(tmp_path / "fake"), "--no-progress"])
    assert result.exit_code == 0, result.output
    fake = json.loads((tmp_path / "fake" / "results.json").read_text())
    assert fake["model"]["plugin"]["distribution"] == "statbench-hostile-bm25"
    assert fake["aggregate"]["R@100"]["mean"] < builtin["aggregate"]["R@100"]["mean"]


def test_task_class_missing_language_fails_its_plugin_only(fake_distributions):
    fake_distributions("statbench-hostile-task", "sbhostile_task", """
        from statbench import hookimpl
        from statbench.api import Measure, Task
        class NoLanguage(Task):
            name = "nolang"
            measures = (Measure("R@10", "R@10"),)
            def load(self, data_dir, log): raise NotImplementedError
        @hookimpl
        def register_tasks(register):
            register(NoLanguage)
    """)
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    failed = [p for p in json.loads(result.output) if p["distribution"] == "statbench-hostile-task"]
    assert failed[0]["error"].startswith("PluginError: task class NoLanguage has no 'language' attribute")
    listing = CliRunner().invoke(cli, ["list", "tasks"])
    assert listing.exit_code == 0 and "stard" in listing.output and "nolang" not in listing.output.split("warning")[0]


@pytest.mark.parametrize("measure, expected", [
    ("R@ten", "ir-measures cannot parse 'R@ten'"),
])
def test_task_with_unparseable_measure_is_refused_at_registration(measure, expected):
    from statbench.api import Measure, Task
    from statbench.registry.checks import PluginError, check_task_class

    cls = type("Bad", (Task,), {"name": "bad", "language": "en", "measures": (Measure("R@10", measure),),
                                "load": lambda self, d, log: None})
    with pytest.raises(PluginError, match=expected):
        check_task_class(cls)


def test_task_data_with_train_test_overlap_is_refused(stard_dir, tmp_path):
    from statbench.api import Split

    class Leaky(Stard):
        name = "stard-leaky"

        def load(self, data_dir, log):
            data = super().load(data_dir, log)
            data.splits[0] = Split(name="fold-1", test=data.splits[0].test, train=data.splits[0].test)
            return data

    class LeakyPlugin:
        @hookimpl
        def register_tasks(self, register):
            register(Leaky)

    with registered_plugin(LeakyPlugin(), "leaky"):
        result = CliRunner().invoke(cli, ["run", "--task", "stard-leaky", "--model", "bm25", "--data-dir",
                                          str(stard_dir), "--output", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "split 'fold-1': 1 test query id(s) are also in its train set" in result.output


# --- holes a red-team pass found, kept closed ---------------------------------------------


def test_built_pool_that_lost_its_sidecar_is_refused(stard_dir, tmp_path, isolated_cache):
    assert run_cli("pool", "build", "--task", "stard", "--retriever", "bm25", "--depth", "3", "--data-dir",
                   str(stard_dir), "--no-progress").exit_code == 0
    (isolated_cache / "pools" / "stard" / "bm25.json").unlink()
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--pool", "bm25", "--data-dir", str(stard_dir),
                                      "--output", str(tmp_path / "o"), "--no-progress"])
    assert result.exit_code == 2 and "has lost its sidecar bm25.json" in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("files", [{"run.trec": 5}, {}, "none"])
def test_manifest_of_another_shape_is_rebuilt_not_fatal(stard_dir, tmp_path, clean_run, isolated_cache, files):
    entry = split_entries(isolated_cache)[0]
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"] = files
    (entry / "manifest.json").write_text(json.dumps(manifest))
    if files == {}:
        (entry / "run.trec").unlink()
    out = tmp_path / "again"
    result = run_cli(*bm25_args(stard_dir, out))
    assert result.exit_code == 0, result.output
    assert (out / "run.trec").read_bytes() == (clean_run / "run.trec").read_bytes()
    assert [e["entry"] for e in json.loads((out / "results.json").read_text())["cache_invalid"]] == [str(entry)]


def test_unjudged_test_query_is_refused(stard_dir, tmp_path):
    from statbench.api import Split

    class Unjudged(Stard):
        name = "stard-unjudged"

        def load(self, data_dir, log):
            data = super().load(data_dir, log)
            first = data.splits[0].test[0]
            del data.qrels[first]
            return data

    class UnjudgedPlugin:
        @hookimpl
        def register_tasks(self, register):
            register(Unjudged)

    assert Split  # the split keeps its test query; only its judgements are gone
    with registered_plugin(UnjudgedPlugin(), "unjudged"):
        result = CliRunner().invoke(cli, ["run", "--task", "stard-unjudged", "--model", "bm25", "--data-dir",
                                          str(stard_dir), "--output", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "split 'fold-1': 1 test query(ies) have no relevant judgement" in result.output


@pytest.mark.parametrize("value", ["1_5", "１.５", "1e-400", "٣"])
def test_parameters_take_ascii_numbers_only(stard_dir, tmp_path, value):
    result = CliRunner().invoke(cli, [*bm25_args(stard_dir, tmp_path / "o"), "--param", f"k1={value}"])
    assert result.exit_code == 2 and f"parameter k1={value!r} for bm25" in result.output
    assert not (tmp_path / "o").exists()


def test_negative_zero_is_zero(stard_dir, tmp_path):
    assert run_cli(*bm25_args(stard_dir, tmp_path / "o"), "--param", "b=-0").exit_code == 0
    assert json.loads((tmp_path / "o" / "results.json").read_text())["model"]["params"]["b"] == 0.0


@pytest.mark.parametrize("score, message", [("١", "score '١' is not a number"), ("1_0", "score '1_0' is not a number"),
                                            ("1.0\u00a0x", "white space '\\xa0' inside a column")])
def test_run_scores_are_read_as_trec_eval_reads_them(stard_dir, tmp_path, clean_run, score, message):
    lines = (clean_run / "run.trec").read_text().splitlines()
    parts = lines[0].split(" ")
    parts[4] = score
    lines[0] = " ".join(parts)
    (tmp_path / "bad.trec").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "bad.trec"), "--task", "stard", "--data-dir",
                                      str(stard_dir)])
    assert result.exit_code == 2 and message in result.output and ", line 1" in result.output


def test_outputs_are_readable_and_the_current_folder_is_never_replaced(stard_dir, tmp_path, monkeypatch, clean_run):
    assert oct((clean_run / "results.json").stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    monkeypatch.chdir(clean_run)
    result = CliRunner().invoke(cli, bm25_args(stard_dir, "."))
    assert result.exit_code == 2 and "is the current folder or one of its parents" in result.output
    assert sorted(p.name for p in clean_run.iterdir()) == ["qrels.trec", "results.json", "run.log", "run.trec"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_overflowing_plugin_score_is_one_line(stard_dir, tmp_path):
    from statbench.registry.checks import PluginError, check_rankings

    with pytest.raises(PluginError, match=r"m, query 'q', doc 'a': score .* cannot be a float"):
        check_rankings({"q": [("a", 10 ** 400)]}, owner="m", query_ids={"q"}, corpus={"a"})
