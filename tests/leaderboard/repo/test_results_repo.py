"""A results repository as its CI runs it: `leaderboard init-repo`, a git repository with one
honest result on main, a branch that adds one honest and one tampered result; `leaderboard
check` exits 2 naming only the tampered one, with its reason."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, run_stard_outputs, write_jsonl

from statbench.commands.cli import cli
from statbench.leaderboard.repo.repository import TEMPLATES
from statbench.leaderboard.repo.submission import REPOSITORY_MARKER

CARD_FLAGS = ["--local", "--training-data", "none", "--no-test-queries-seen", "--hardware", "2 CPU cores",
              "--licence", "MIT", "--author", "Ada Lab"]
#: three configurations: one on main, two added by the branch
HONEST_MAIN, HONEST_BRANCH, TAMPERED = "bm25", "bm25,k1=0.9", "bm25,k1=1.5"
PARAMS = {HONEST_MAIN: [], HONEST_BRANCH: ["--param", "k1=0.9"], TAMPERED: ["--param", "k1=1.5"]}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Three output sets of `statbench run` on the miniature STARD (two labs' worth), made once."""
    return run_stard_outputs(tmp_path_factory.mktemp("labs"), PARAMS.values())


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=CI", "-c", "user.email=ci@example.invalid",
                           "-c", "commit.gpgsign=false", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def invoke(*args):
    return CliRunner().invoke(cli, [*map(str, args)])


def submit(built: Path, repo: Path, config: str) -> Path:
    result = invoke("submit", built / "statbench-output" / "stard" / config, "--to", repo, *CARD_FLAGS)
    assert result.exit_code == 0, result.output
    return repo / "results" / "stard" / "bm25" / config


@pytest.fixture
def repo(built, tmp_path) -> Path:
    """A results repository (init-repo) in git: main holds one honest result."""
    root = tmp_path / "results-repo"
    result = invoke("leaderboard", "init-repo", root)
    assert result.exit_code == 0, result.output
    git(root, "init", "-q", "-b", "main")
    submit(built, root, HONEST_MAIN)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "an honest result")
    git(root, "checkout", "-q", "-b", "pull-request")
    return root


def check(repo: Path, built: Path, *extra):
    return invoke("leaderboard", "check", repo, "--data-dir", f"stard={built / 'stard'}", *extra)


def commit(repo: Path, message: str = "submissions") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def edit_json(path: Path, change) -> None:
    obj = json.loads(path.read_text("utf-8"))
    change(obj)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")


def change_run_line(folder: Path) -> None:
    run = folder / "run.trec.gz"
    text = gzip.decompress(run.read_bytes()).decode("utf-8")
    lines = text.splitlines(keepends=True)
    first = lines[0].split(" ")
    lines[0] = " ".join([first[0], first[1], "no-such-article", *first[3:]])
    run.write_bytes(gzip.compress("".join(lines).encode("utf-8"), mtime=0))


def nudge_query(folder: Path) -> None:
    def nudge(obj):
        qid = next(iter(obj["per_query"]))
        obj["per_query"][qid]["MRR@10"] -= 1e-6

    edit_json(folder / "results.json", nudge)


def edit_figure(folder: Path) -> None:
    edit_json(folder / "results.json", lambda obj: obj["all_queries"].__setitem__("R@5", 0.75))


TAMPERING = {
    # a figure edited in results.json: re-scoring gives another figure
    "figure": (edit_figure, "refused: results/stard/bm25/bm25,k1=1.5/results.json: R@5 on all queries (pooled): "
                            "claimed 0.75, re-scored 1.0"),
    # a run file line changed: the run file no longer hashes to what results.json records
    "run line": (change_run_line, "refused: results/stard/bm25/bm25,k1=1.5/results.json: run file "),
    # a per-query score nudged by 1e-6: the strict reader's agreement check refuses it
    "per-query nudge": (nudge_query, "results/stard/bm25/bm25,k1=1.5/results.json: per_query/*/MRR@10: the "
                                     "per-query mean"),
}


def test_init_repo_writes_the_marker_readme_and_workflows(tmp_path):
    root = tmp_path / "r"
    result = invoke("leaderboard", "init-repo", root)
    assert result.exit_code == 0, result.output
    assert json.loads((root / REPOSITORY_MARKER).read_text()) == {"format": 1}
    workflow = yaml.safe_load((root / ".github" / "workflows" / "check.yml").read_text())
    steps = {step.get("name"): step for step in workflow["jobs"]["check"]["steps"]}
    assert workflow["jobs"]["check"]["steps"][0]["with"]["fetch-depth"] == 0
    assert steps["Check the submissions this pull request adds"]["run"] == \
        'statbench leaderboard check . --base "origin/${{ github.base_ref }}"'
    assert steps["Reproduce the submissions this pull request adds"]["run"].startswith(
        'statbench leaderboard reproduce . --since "origin/${{ github.base_ref }}"')
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as true
    publish = yaml.safe_load((root / ".github" / "workflows" / "publish.yml").read_text())
    assert publish[True]["push"] == {"branches": ["main"]}
    assert publish["jobs"]["reproduce"]["permissions"] == {"contents": "read"}  # submitted code runs there
    runs = {job: " ".join(step.get("run", "") for step in spec["steps"]) for job, spec in publish["jobs"].items()}
    assert "statbench leaderboard reproduce ." in runs["reproduce"]
    assert "statbench leaderboard reproduce . --take new-reproductions" in runs["record"]
    assert "statbench leaderboard build --results results --out site --verify" in runs["pages"]
    assert "actions/deploy-pages@v4" in [step.get("uses") for step in publish["jobs"]["pages"]["steps"]]
    readme = (root / "README.md").read_text()
    assert "statbench leaderboard check" in readme and "statbench leaderboard reproduce" in readme
    again = invoke("leaderboard", "init-repo", root)
    assert again.exit_code == 0 and "4 file(s) already there with this content" in again.output
    (root / "README.md").write_text("ours\n")
    refused = invoke("leaderboard", "init-repo", root)
    assert refused.exit_code == 2
    assert "README.md already there with other content" in refused.output
    assert (root / "README.md").read_text() == "ours\n"
    assert set(TEMPLATES) == {"README.md", ".github/workflows/check.yml", ".github/workflows/publish.yml"}


def test_init_repo_makes_a_git_repository_that_check_works_in_at_once(tmp_path, built):
    """Issue 38 §3: the first `check` used to fail with `nogit: neither origin/main nor main...`."""
    root = tmp_path / "fresh"
    result = invoke("leaderboard", "init-repo", root)
    assert result.exit_code == 0, result.output
    assert "initialised git with a first commit on branch main: 'leaderboard check' works at once" in result.output
    assert git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(root, "status", "--porcelain") == ""  # everything init-repo wrote is committed
    assert sorted(git(root, "ls-files").split()) == sorted([".github/workflows/check.yml",
                                                            ".github/workflows/publish.yml", "README.md",
                                                            REPOSITORY_MARKER])
    checked = check(root, built)
    assert checked.exit_code == 0, checked.output
    assert "0 submission folder(s) added since " in checked.output


def test_init_repo_in_a_git_repository_commits_nothing_and_says_so(tmp_path):
    git(tmp_path, "init", "-q", "-b", "trunk")
    root = tmp_path / "board"
    result = invoke("leaderboard", "init-repo", root)
    assert result.exit_code == 0, result.output
    assert f"{root} is in the git repository {tmp_path}: commit the files written (git -C {root} add -- " \
           in result.output
    assert git(tmp_path, "log", "--oneline", "--all") == ""
    again = invoke("leaderboard", "init-repo", root)
    assert "is in the git repository" not in again.output  # nothing written: nothing to say


def test_init_repo_without_git_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    root = tmp_path / "board"
    result = invoke("leaderboard", "init-repo", root)
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last == (f"git is not installed: 'leaderboard check' needs the repository in git; run: git -C {root} init "
                    f"-b main && git -C {root} add -- {REPOSITORY_MARKER} README.md .github/workflows/check.yml "
                    f".github/workflows/publish.yml && git -C {root} commit -m 'A statbench results repository'")


def test_a_pull_request_may_not_add_or_change_verdicts(repo, built):
    verdict = repo / "reproductions" / ("a" * 64) / ("b" * 64 + ".json")
    verdict.parent.mkdir(parents=True)
    verdict.write_text('{"outcome": "reproduced"}\n')
    commit(repo)
    result = check(repo, built, "--base", "main")
    assert result.exit_code == 2
    assert (f"reproductions/{'a' * 64}/{'b' * 64}.json: a pull request may not add or change reproduction verdicts "
            "(reproductions/ is written by the repository's own reproduce job)") in result.output
    since = invoke("leaderboard", "reproduce", repo, "--since", "main")
    assert since.exit_code == 2 and "a pull request may not add or change reproduction verdicts" in since.output


def test_honest_branch_passes(repo, built):
    submit(built, repo, HONEST_BRANCH)
    commit(repo)
    result = check(repo, built, "--base", "main")
    assert result.exit_code == 0, result.output
    assert "1 submission folder(s) added since main: 1 verified, 0 problem(s)" in result.output
    default = check(repo, built)  # the merge base with main
    assert default.exit_code == 0, default.output


@pytest.mark.parametrize("how", list(TAMPERING))
def test_tampered_submission_is_named_with_its_reason(repo, built, how, monkeypatch):
    tamper, reason = TAMPERING[how]
    submit(built, repo, HONEST_BRANCH)
    tamper(submit(built, repo, TAMPERED))
    commit(repo)
    monkeypatch.chdir(repo)  # as CI runs it: `statbench leaderboard check .`
    result = invoke("leaderboard", "check", ".", "--base", "main", "--data-dir", f"stard={built / 'stard'}")
    assert result.exit_code == 2, result.output
    problems = [line for line in result.output.splitlines() if "problem(s)" not in line and line.strip()]
    assert len(problems) == 1, result.output
    assert reason in problems[0]
    assert f"/{HONEST_BRANCH}/" not in result.output and f"/bm25/{HONEST_MAIN}/" not in result.output
    assert "2 submission folder(s) added since main: 1 verified, 1 problem(s)" in result.output


def test_editing_an_existing_submission_or_adding_stray_files_fails(repo, built):
    card = repo / "results" / "stard" / "bm25" / HONEST_MAIN / "model_card.json"
    edit_json(card, lambda obj: obj.__setitem__("licence", "CC0-1.0"))
    (repo / "results" / "stard" / "notes.txt").write_text("hello\n")
    (repo / "docs.md").write_text("outside results: not checked\n")
    commit(repo)
    result = check(repo, built, "--base", "main")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert any(line.startswith("results/stard/bm25/bm25/model_card.json: the pull request edits a file of an "
                               "existing submission") for line in lines), result.output
    assert any(line.startswith("results/stard/notes.txt: not a submission file") for line in lines), result.output
    assert "note: docs.md: not a submission (outside results/): not checked" in result.output


def test_unverifiable_submission_fails_unless_allowed(repo, built, tmp_path):
    other = tmp_path / "other-stard"
    write_jsonl(other / "corpus.jsonl", STARD_CORPUS)
    (other / "queries.json").write_text(json.dumps(STARD_QUERIES[:4], ensure_ascii=False), encoding="utf-8")
    submit(built, repo, HONEST_BRANCH)
    commit(repo)
    result = invoke("leaderboard", "check", repo, "--base", "main", "--data-dir", f"stard={other}")
    assert result.exit_code == 2
    assert "unverifiable: " in result.output and "scored on other data of task stard" in result.output
    allowed = invoke("leaderboard", "check", repo, "--base", "main", "--data-dir", f"stard={other}",
                     "--allow-unverified")
    assert allowed.exit_code == 0, allowed.output


def test_check_needs_a_results_repository_and_a_base(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = invoke("leaderboard", "check", plain)
    assert result.exit_code == 2 and "not a statbench results repository" in result.output
    git(plain, "init", "-q", "-b", "trunk")  # a git repository already: init-repo leaves its branches alone
    invoke("leaderboard", "init-repo", plain)
    git(plain, "add", "-A")
    git(plain, "commit", "-q", "-m", "init")
    result = invoke("leaderboard", "check", plain)
    assert result.exit_code == 2
    assert "neither origin/main nor main is a branch here to compare with: give --base REF" in result.output


def test_reproduce_since_takes_the_folders_a_branch_adds(repo, built):
    from statbench.leaderboard.repo.repository import added_submissions

    folder = submit(built, repo, HONEST_BRANCH)
    (repo / "docs.md").write_text("outside results: not a submission\n")
    commit(repo)
    assert added_submissions(repo, "main") == [repo / "results" / "stard" / "bm25" / HONEST_BRANCH]
    assert folder.is_dir()
