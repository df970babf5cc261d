"""`statbench leaderboard reproduce` for real: runs of the built-in bm25 on a tiny STARD are
submitted to a results repository (init-repo, git), then re-run from their declared source
in a fresh virtual environment. The honest one is reproduced; a run made with b=0 whose
results.json and recorded command were rewritten consistently to b=1 (figures untouched:
`leaderboard check` verifies it) is not reproduced, with its first differing query; a model
declared to need a GPU is not attempted. Verdicts are recorded in the repository, read back
strictly by the site's reader, and not re-run for nothing.

Slow (about 30 s on 2 shared cores): three runs, their check, one virtual environment made,
two re-runs and a probe in it; one module fixture does them all for every test here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

from statbench.commands.cli import cli
from statbench.leaderboard.reproduce.verdicts import Difference, reproduction_of, reproductions_of

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

CARD_FLAGS = ["--local", "--training-data", "none", "--no-test-queries-seen", "--hardware", "2 CPU cores",
              "--licence", "MIT", "--author", "Ada Lab"]
#: a long article that says "债务" three times, and a short one that says it once: with b=0 the
#: long one (relevant to query 5) ranks first, with b=1 its length sends it second
FILLER = "婚姻自由男女平等保护妇女儿童老人合法权益实行制度。" * 6
CORPUS = STARD_CORPUS + [
    {"id": 7, "name": "合同法第一条",
     "content": "合同的债务应当履行。合同的债务不得转让。合同的债务可以抵销。" + FILLER},
    {"id": 8, "name": "合同法第二条", "content": "合同的债务。"},
]
QUERIES = STARD_QUERIES + [
    {"query_id": 5, "问题": "合同的债务", "match_id": [7], "match_name": ["合同法第一条"]}]
HONEST, RELABELLED, GPU = "results/stard/bm25/bm25", "results/stard/bm25/bm25,b=1.0", "results/stard/bm25/bm25,b=0.5"


def invoke(*args):
    return CliRunner().invoke(cli, [*map(str, args)])


def write_data(folder: Path, corpus=CORPUS, queries=QUERIES) -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    (folder / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    return folder


def run_bm25(root: Path, data: Path, params: list[str]) -> Path:
    """``statbench run --model bm25 [--param ...]`` as a shell would run it (results.json
    records sys.argv); returns its output folder."""
    args = ["run", "--task", "stard", "--model", "bm25", *params, "--data-dir", str(data), "--no-progress"]
    outputs = root / "statbench-output" / "stard"
    before = set(outputs.iterdir()) if outputs.is_dir() else set()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["statbench", *args])
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [made] = set(outputs.iterdir()) - before
    return made


def relabel(output: Path, target: Path, old: str, new: str, value) -> Path:
    """A copy of ``output`` whose results.json and recorded command say ``--param new``
    instead of ``--param old`` (the parameter set to ``value``); figures and run untouched."""
    shutil.copytree(output, target)
    path = target / "results.json"
    obj = json.loads(path.read_text("utf-8"))
    assert f"--param {old}" in obj["command"]
    obj["command"] = obj["command"].replace(f"--param {old}", f"--param {new}")
    key = new.partition("=")[0]
    obj["model"]["params"][key] = value
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")
    return target


def declare_gpu(output: Path) -> None:
    path = output / "results.json"
    obj = json.loads(path.read_text("utf-8"))
    obj["model"]["needs_gpu"] = True
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Runs, a results repository on branch `pr` adding the three submissions, its check
    and one `reproduce` of all of them (one shared cache: the isolated environment is made once)."""
    from statbench.registry import plugins

    root = tmp_path_factory.mktemp("reproduce")
    data = write_data(root / "stard")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATBENCH_CACHE", str(root / "cache"))
        mp.setenv("STATBENCH_DATA", str(root / "data-root"))
        mp.chdir(root)
        plugins.reset_registry()
        honest = run_bm25(root, data, [])
        zero = run_bm25(root, data, ["--param", "b=0"])
        half = run_bm25(root, data, ["--param", "b=0.5"])
        relabelled = relabel(zero, root / "relabelled" / "bm25,b=1", "b=0", "b=1", 1.0)
        repo = root / "repo"
        init = invoke("leaderboard", "init-repo", repo)
        assert init.exit_code == 0 and "initialised git" in init.output, init.output
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "pr"], check=True)
        for output in (honest, relabelled, half):
            result = invoke("submit", output, "--to", repo, *CARD_FLAGS)
            assert result.exit_code == 0, result.output
        declare_gpu(repo / GPU)  # in the repository: submit refuses the claim (bm25 declares no GPU)
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=CI", "-c", "user.email=ci@example.invalid",
                        "-c", "commit.gpgsign=false", "commit", "-q", "-m", "three submissions"], check=True)
        check = invoke("leaderboard", "check", repo, "--data-dir", f"stard={data}")
        first = invoke("leaderboard", "reproduce", repo, "--data-dir", f"stard={data}")
        recorded = {p: p.read_bytes() for p in sorted((repo / "reproductions").rglob("*.json"))}
        second = invoke("leaderboard", "reproduce", repo, "--data-dir", f"stard={data}")
        other = write_data(root / "other-stard", STARD_CORPUS, STARD_QUERIES)
        other_data = invoke("leaderboard", "reproduce", repo, HONEST, "--data-dir", f"stard={other}", "--again",
                            "--no-record")
        plugins.reset_registry()
    return SimpleNamespace(root=root, repo=repo, data=data, check=check, first=first, second=second,
                           recorded=recorded, other_data=other_data)


def line_of(output: str, folder: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith(f"{folder}: ")]
    assert len(lines) == 1, output
    return lines[0]


def test_check_verifies_the_relabelled_one_and_refuses_a_false_gpu_claim(world):
    """The relabelled row's figures are those of its run file: re-scoring cannot tell. The
    bm25 whose results.json was edited to say it needs a GPU makes a claim the installed bm25
    does not (it would never be re-run): refused (tests/leaderboard/test_verify_reproducibility_claims.py)."""
    assert world.check.exit_code == 2, world.check.output
    assert ": 2 verified, 1 problem(s)" in world.check.output
    assert (f"{GPU}/results.json: the recorded command" in world.check.output
            and "needs_gpu=true recorded, but bm25 declares needs_gpu=false" in world.check.output)


def test_honest_submission_is_reproduced(world):
    assert line_of(world.first.output, HONEST) == f"{HONEST}: reproduced"
    verdict = reproduction_of(world.repo / HONEST / "results.json")
    assert verdict is not None and verdict.outcome == verdict.status == "reproduced"
    assert verdict.compared == "run file byte-identical" and verdict.reason is None
    assert verdict.submission == HONEST
    assert verdict.title.startswith("re-run on ") and verdict.title.endswith(": run file byte-identical")


def test_relabelled_configuration_is_not_reproduced_with_its_first_differing_query(world):
    line = line_of(world.first.output, RELABELLED)
    assert line == f"{RELABELLED}: not reproduced: query 5, MRR@3 claimed 1.0, re-run 0.5; 1 query differs", line
    verdict = reproduction_of(world.repo / RELABELLED / "results.json")
    assert verdict.outcome == "not reproduced"
    assert verdict.difference == Difference(query="5", measure="MRR@3", claimed=1.0, rerun=0.5, queries=1)
    assert verdict.compared == "run file byte-identical"


def test_model_declared_to_need_a_gpu_is_not_attempted(world):
    assert line_of(world.first.output, GPU) == (f"{GPU}: not attempted: needs a GPU (bm25 declares it; --gpu on a "
                                                "machine with one)")
    assert reproduction_of(world.repo / GPU / "results.json").outcome == "not attempted"


def test_one_not_reproduced_exits_2_with_a_summary(world):
    assert world.first.exit_code == 2, world.first.output
    assert "3 submission(s): 1 reproduced, 1 not reproduced, 1 not attempted" in world.first.output


def test_decisive_verdicts_are_not_re_run(world):
    """The second reproduce re-uses both decisive verdicts (said, files unchanged) and tries
    the not-attempted one again."""
    assert line_of(world.second.output, HONEST).startswith(f"{HONEST}: reproduced (recorded 20")
    assert "(recorded " in line_of(world.second.output, RELABELLED)
    assert "(recorded " not in line_of(world.second.output, GPU)
    files = sorted((world.repo / "reproductions").rglob("*.json"))
    assert {path: path.read_bytes() for path in files} == world.recorded  # the same findings: nothing rewritten
    assert world.second.exit_code == 2


def test_other_data_is_not_attempted(world):
    line = line_of(world.other_data.output, HONEST)
    assert line.startswith(f"{HONEST}: not attempted: other data: the local data of stard has checksum "), line
    assert world.other_data.exit_code == 0, world.other_data.output


def test_a_changed_submission_has_no_verdict(world, tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(world.repo, copy, symlinks=True)
    card = copy / HONEST / "model_card.json"
    assert reproduction_of(copy / HONEST / "results.json") is not None
    card.write_text(card.read_text("utf-8").replace("Ada Lab", "Ada  Lab"), encoding="utf-8")
    assert reproduction_of(copy / HONEST / "results.json") is None


def test_an_edited_verdict_is_ignored_with_one_line(world, tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(world.repo, copy, symlinks=True)
    results = copy / RELABELLED / "results.json"
    [path] = [p for p in (copy / "reproductions").rglob("*.json")
              if json.loads(p.read_text("utf-8"))["submission"] == RELABELLED]
    obj = json.loads(path.read_text("utf-8"))
    obj.update(outcome="reproduced", reason=None, difference=None)
    path.write_text(json.dumps(obj), encoding="utf-8")
    notes: list[str] = []
    assert reproduction_of(results, notes) is None
    assert len(notes) == 1 and "its digest does not match its content: edited or damaged, not trusted" in notes[0]
    assert reproductions_of(results, []) == ()
