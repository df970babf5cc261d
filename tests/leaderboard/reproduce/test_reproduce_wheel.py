"""A third-party plugin submitted as a stored wheel is reproduced in a fresh virtual
environment: a tiny plugin distribution is built and installed (`pip install --target`, a
local-folder install as a lab's would be), run, submitted (`submit` stores a wheel built from
its folder), then `leaderboard reproduce` makes a real venv, `pip install`s the stored wheel
there and re-runs the command. That environment sees statbench's built-ins and the plugin,
and not the example plugin installed beside statbench here. The same submission declaring
the plugin as a release on the package index, with no index to reach, is "not attempted:
source not installable" with pip's line.

Slow (about 20-30 s on 2 shared cores): two wheels built by pip, a venv made, pip run in it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

from statbench.commands.cli import cli
from statbench.leaderboard.reproduce.verdicts import reproduction_of

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

DIST, VERSION, MODEL = "statbench-plugin-tiny", "0.1.0", "tiny-overlap"
CARD_FLAGS = ["--local", "--training-data", "none", "--no-test-queries-seen", "--hardware", "2 CPU cores",
              "--licence", "MIT", "--author", "Ada Lab", "--index-url", "http://127.0.0.1:9/simple"]
PLUGIN = '''
from statbench.api import Retriever, hookimpl


class TinyOverlap(Retriever):
    """Ranks articles by the characters they share with the query."""

    name = "tiny-overlap"
    family = "lexical"
    default_params = {"weight": 1.0}

    def index(self, corpus, ctx):
        self._docs = [(d.id, set(d.text)) for d in corpus]

    def search(self, queries, k, ctx):
        out = {}
        for query in queries:
            chars = set(query.text)
            scored = [(doc, float(self.params["weight"]) * len(chars & text)) for doc, text in self._docs]
            out[query.id] = sorted([p for p in scored if p[1] > 0], key=lambda p: (-p[1], p[0]))[:k]
        return out


@hookimpl
def register_retrievers(register):
    register(TinyOverlap)
'''
PYPROJECT = f'''
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "{DIST}"
version = "{VERSION}"
requires-python = ">=3.11"
dependencies = ["statbench"]

[project.entry-points.statbench]
tiny = "statbench_plugin_tiny"

[tool.setuptools]
py-modules = ["statbench_plugin_tiny"]
'''


def invoke(*args):
    return CliRunner().invoke(cli, [*map(str, args)])


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from statbench.registry import plugins

    root = tmp_path_factory.mktemp("wheel")
    project = root / "plugin"
    project.mkdir()
    (project / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT), encoding="utf-8")
    (project / "statbench_plugin_tiny.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    site = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(project)], check=True, capture_output=True)
    data = root / "stard"
    write_jsonl(data / "corpus.jsonl", STARD_CORPUS)
    (data / "queries.json").write_text(json.dumps(STARD_QUERIES, ensure_ascii=False), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATBENCH_CACHE", str(root / "cache"))
        mp.setenv("STATBENCH_DATA", str(root / "data-root"))
        mp.setenv("PIP_NO_INDEX", "1")  # nothing here may come from the network
        mp.chdir(root)
        mp.syspath_prepend(str(site))
        plugins.reset_registry(entry_points=True)
        args = ["run", "--task", "stard", "--model", MODEL, "--data-dir", str(data), "--no-progress"]
        mp.setattr(sys, "argv", ["statbench", *args])
        ran = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert ran.exit_code == 0, ran.output
        repo = root / "repo"
        assert invoke("leaderboard", "init-repo", repo).exit_code == 0
        submitted = invoke("submit", root / "statbench-output" / "stard" / MODEL, "--to", repo, *CARD_FLAGS)
        assert submitted.exit_code == 0, submitted.output
        folder = repo / "results" / "stard" / MODEL / MODEL
        mp.setattr(sys, "path", [p for p in sys.path if p != str(site)])
        plugins.reset_registry(entry_points=True)
        reproduced = invoke("leaderboard", "reproduce", repo, "--data-dir", f"stard={data}")
        env = next(p for p in (root / "cache" / "reproduce").glob("env-*") if p.is_dir())  # the one made
        statbench = "import sys; sys.argv[0] = 'statbench'; from statbench.commands.cli import main; main()"
        listed = subprocess.run([str(env / "bin" / "python"), "-I", "-c", statbench, "plugins"], check=False,
                                capture_output=True, text=True, cwd=root,
                                env={**os.environ, "COLUMNS": "200", "STATBENCH_CACHE": str(root / "cache")})
        index_copy = _declared_on_the_index(folder, root / "repo2")
        not_installable = invoke("leaderboard", "reproduce", root / "repo2", "--data-dir", f"stard={data}")
        plugins.reset_registry(entry_points=True)
    return SimpleNamespace(folder=folder, submitted=submitted, reproduced=reproduced, listed=listed,
                           not_installable=not_installable, index_copy=index_copy)


def _declared_on_the_index(folder: Path, repo2: Path) -> Path:
    """A copy of the repository whose submission declares the plugin as a release on the index."""
    shutil.copytree(folder.parents[3], repo2, symlinks=True)
    copy = repo2 / folder.relative_to(folder.parents[3])
    source = json.loads((copy / "source.json").read_text("utf-8"))
    [entry] = source["distributions"]
    (copy / entry["file"]).unlink()
    source["distributions"] = [{"name": DIST, "version": VERSION, "kind": "index"}]
    (copy / "source.json").write_text(json.dumps(source, indent=2), encoding="utf-8")
    shutil.rmtree(repo2 / "reproductions", ignore_errors=True)
    return copy


def test_submit_stored_a_wheel(world):
    source = json.loads((world.folder / "source.json").read_text("utf-8"))
    [entry] = source["distributions"]
    assert (entry["name"], entry["version"], entry["kind"]) == (DIST, VERSION, "wheel"), world.submitted.output
    assert (world.folder / entry["file"]).is_file()


def test_stored_wheel_is_reproduced_in_a_fresh_venv(world):
    folder = "results/stard/tiny-overlap/tiny-overlap"
    assert f"{folder}: reproduced" in world.reproduced.output.splitlines(), world.reproduced.output
    assert world.reproduced.exit_code == 0
    verdict = reproduction_of(world.folder / "results.json")
    assert verdict.outcome == "reproduced" and verdict.compared == "run file byte-identical"


def test_the_venv_sees_only_statbench_and_the_source(world):
    assert world.listed.returncode == 0, world.listed.stderr
    distributions = {line.split("│")[2].strip() for line in world.listed.stdout.splitlines()
                     if line.startswith("│") and line.split("│")[2].strip()}
    assert distributions == {"statbench", DIST}, world.listed.stdout


def test_a_source_pip_cannot_install_is_not_attempted(world):
    line = next(line for line in world.not_installable.output.splitlines() if line.startswith("results/"))
    assert line == ("results/stard/tiny-overlap/tiny-overlap: not attempted: source not installable: ERROR: No "
                    f"matching distribution found for {DIST}=={VERSION}"), world.not_installable.output
    assert world.not_installable.exit_code == 0
