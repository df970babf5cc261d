"""`statbench submit`: real output sets of `statbench run` into a results repository, each
refusal (nothing written for any output set), the layout, reproducible gzip bytes, the
model card (flags, --card, prompts) and the strict reader `read_submission`."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_data import edit_results, empty_results_repository, run_stard_outputs

from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.leaderboard.repo.submission import (
    REPOSITORY_MARKER,
    SUBMISSION_FILES,
    Submission,
    card_errors,
    read_submission,
    write_repository_marker,
)

CARD_FLAGS = ["--local", "--training-data", "none", "--no-test-queries-seen", "--hardware", "2 CPU cores",
              "--licence", "MIT", "--author", "Ada Lab", "--author", "Bo Lab"]
DEFAULT, TUNED = "bm25", "bm25,k1=0.9"
#: gdsr learns from the task's training queries (as_gdsr records it so): its card cannot say "none"
GDSR_CARD_FLAGS = ["the task's training split" if flag == "none" else flag for flag in CARD_FLAGS]


@pytest.fixture(scope="module")
def built_outputs(tmp_path_factory) -> Path:
    """Two finished output sets made once by `statbench run` on the miniature STARD (the
    defaults and k1=0.9), in `statbench run`'s default layout."""
    root = run_stard_outputs(tmp_path_factory.mktemp("outputs"), ([], ["--param", "k1=0.9"]))
    return root / "statbench-output" / "stard"


@pytest.fixture
def outputs(built_outputs, tmp_path) -> Path:
    """A private copy of the output sets (tests tamper with them)."""
    return Path(shutil.copytree(built_outputs, tmp_path / "outputs"))


@pytest.fixture
def repo(tmp_path) -> Path:
    return empty_results_repository(tmp_path)


def submit(*args, input=None):
    return CliRunner().invoke(cli, ["submit", *map(str, args)], input=input)


def repo_files(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in repo.rglob("*"))


# --- submitting ---------------------------------------------------------------------------------

def test_submit_writes_one_folder_per_configuration_read_back_strictly(outputs, repo):
    result = submit(outputs / DEFAULT, outputs / TUNED, "--to", repo, *CARD_FLAGS, "--n-parameters", "0",
                    "--paper", "https://example.org/paper")
    assert result.exit_code == 0, result.output
    assert "added: results/stard/bm25/bm25 " in result.output and "2 submission(s) added" in result.output
    for config in (DEFAULT, TUNED):
        folder = repo / "results" / "stard" / "bm25" / config
        assert sorted(p.name for p in folder.iterdir()) == sorted([*SUBMISSION_FILES, "source.json"])
        # a built-in-only run: its source is statbench itself, no third-party distribution
        assert json.loads((folder / "source.json").read_text("utf-8")) == {"format": 1, "statbench": "0.1.0",
                                                                           "distributions": []}
        # results.json is a byte copy; the gzip holds the run file exactly
        assert (folder / "results.json").read_bytes() == (outputs / config / "results.json").read_bytes()
        assert gzip.decompress((folder / "run.trec.gz").read_bytes()) == (outputs / config / "run.trec").read_bytes()
        submission = read_submission(folder)
        assert isinstance(submission, Submission)
        assert submission.run_path == folder / "run.trec.gz"
        card = submission.model_card
        assert card_errors(card) == []
        assert card["source"] == "local" and card["authors"] == ["Ada Lab", "Bo Lab"]
        assert card["model"] == {"name": "bm25", "version": "1"}  # the label, and the version results.json records
        assert card["parameters"]["model"] == submission.results.model.params
        assert card["test_queries_seen"] is False and card["n_parameters"] == 0
        assert "budget" not in card
    assert read_submission(repo / "results/stard/bm25" / TUNED).results.model.params["k1"] == 0.9
    # nothing but the submissions (no staging folder left)
    assert [p for p in repo_files(repo) if "staging" in p] == []


def test_run_file_gzip_bytes_are_reproducible(outputs, tmp_path):
    copies = []
    for name in ("one", "two"):
        root = tmp_path / name
        root.mkdir()
        write_repository_marker(root)
        assert submit(outputs / DEFAULT, "--to", root, *CARD_FLAGS).exit_code == 0
        copies.append((root / "results/stard/bm25/bm25/run.trec.gz").read_bytes())
    assert copies[0] == copies[1]
    assert copies[0][4:8] == b"\0\0\0\0"  # mtime 0
    assert copies[0][3] & 0x08 == 0  # no file name in the header


def test_resubmitting_is_a_no_op_and_another_submission_of_the_folder_is_refused(outputs, repo):
    assert submit(outputs / DEFAULT, "--to", repo, *CARD_FLAGS).exit_code == 0
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    again = submit(outputs / DEFAULT, "--to", repo, *CARD_FLAGS)
    assert again.exit_code == 0 and "unchanged: results/stard/bm25/bm25" in again.output
    assert "0 submission(s) added" in again.output
    other = submit(outputs / DEFAULT, outputs / TUNED, "--to", repo, *CARD_FLAGS[:-2])  # another card
    assert other.exit_code == 2
    assert "already holds another submission of this configuration" in other.output
    assert len(other.output.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before  # TUNED not written either


@pytest.mark.parametrize("tamper, message", [
    (lambda d: (d / "run.trec").unlink(), "the run file results.json names is missing"),
    (lambda d: (d / "run.trec").write_text((d / "run.trec").read_text().replace(" 1 ", " 2 ", 1)),
     "not the run these results were scored from"),
    (lambda d: edit_results(d, lambda o: o["aggregate"]["R@5"].update(mean=o["aggregate"]["R@5"]["mean"] - 1e-6)),
     "is not the mean over the splits"),
    (lambda d: edit_results(d, lambda o: o.update(timings="fast")), "does not match the results schema"),
    (lambda d: (d / "results.json").write_text('{"aggregate": NaN}'), "NaN"),
    (lambda d: edit_results(d, lambda o: o.update(command=o["command"].replace("k1=0.9", "k1=1.5"))),
     "does not describe this result: parameter k1=1.5, recorded as 0.9"),
], ids=["run-missing", "run-changed", "aggregate-edited", "schema", "not-strict-json", "command-lies"])
def test_each_refusal_is_one_line_exit_2_and_writes_nothing(outputs, repo, tamper, message):
    tamper(outputs / TUNED)
    result = submit(outputs / DEFAULT, outputs / TUNED, "--to", repo, *CARD_FLAGS)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert repo_files(repo) == [REPOSITORY_MARKER]  # the honest DEFAULT set is not written either


def as_gdsr(obj, budget: str | None) -> None:
    """The record and its command rewritten together as a run of gdsr, at its reduced budget
    (``preset=cpu-small``) when ``budget``: a reduced-budget result whose record and command
    agree (the figures are bm25's; only the claims are looked at here)."""
    from statbench.registry.plugins import get_registry

    cls = get_registry().retrievers["gdsr"].cls  # what gdsr makes of its preset (cpu-small sets others too)
    model = cls(preset="cpu-small" if budget else "paper")
    # what gdsr is (family, training, what a reproduction needs): the claims submit checks too
    declared = model.reproducibility()
    obj["model"].update(name="gdsr", family=model.family, version=cls.version, params=dict(model.params),
                        trained=bool(getattr(model, "trainable", False)), needs_gpu=declared["needs_gpu"])
    obj["model"].pop("tolerance", None)
    if declared["tolerance"] is not None:
        obj["model"]["tolerance"] = declared["tolerance"]
    obj["model"].pop("budget", None)
    if budget:
        obj["model"]["budget"] = budget
    if "defaults" in obj["model"]:
        obj["model"]["defaults"] = {k: v for k, v in cls.defaults().items() if isinstance(v, (str, int, float, bool))}
    command = obj["command"].replace("--model bm25", "--model gdsr").replace(" --param k1=0.9", "")
    obj["command"] = command + (" --param preset=cpu-small" if budget else "")


GDSR_SMALL = "results/stard/gdsr/gdsr,preset=cpu-small"


def test_an_unsaid_reduced_budget_is_one_line_exit_2_and_writes_nothing(outputs, repo):
    edit_results(outputs / DEFAULT, lambda o: as_gdsr(o, None))
    edit_results(outputs / TUNED, lambda o: as_gdsr(o, "preset=cpu-small"))
    result = submit(outputs / DEFAULT, outputs / TUNED, "--to", repo, *CARD_FLAGS)
    assert result.exit_code == 2, result.output
    assert "ran a reduced budget, not the protocol's settings; say so with --budget-ok" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert repo_files(repo) == [REPOSITORY_MARKER]  # the full-budget set is not written either


def test_a_reduced_budget_is_submitted_when_said_and_carried_by_the_card(outputs, repo):
    edit_results(outputs / TUNED, lambda o: as_gdsr(o, "preset=cpu-small"))
    result = submit(outputs / TUNED, "--to", repo, *GDSR_CARD_FLAGS, "--budget-ok")
    assert result.exit_code == 0, result.output
    folder = repo / GDSR_SMALL
    assert read_submission(folder).model_card["budget"] == "preset=cpu-small"
    # a card that hides the budget is refused by the reader
    card = json.loads((folder / "model_card.json").read_text())
    del card["budget"]
    (folder / "model_card.json").write_text(json.dumps(card))
    with pytest.raises(StatbenchError, match=r"budget: the result ran a reduced budget \(preset=cpu-small\)"):
        read_submission(folder)


def test_the_budget_can_be_said_in_the_card_file(outputs, repo, tmp_path):
    edit_results(outputs / TUNED, lambda o: as_gdsr(o, "preset=cpu-small"))
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"budget": "preset=cpu-small", "licence": "Apache-2.0"}))
    result = submit(outputs / TUNED, "--to", repo, *GDSR_CARD_FLAGS[:6], "--author", "X", "--card", card)
    assert result.exit_code == 0, result.output
    written = read_submission(repo / GDSR_SMALL).model_card
    assert written["budget"] == "preset=cpu-small" and written["licence"] == "Apache-2.0"


def test_missing_card_fields_off_a_terminal_are_one_line_naming_the_flags(outputs, repo):
    result = submit(outputs / DEFAULT, "--to", repo, "--local", "--no-interactive")
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    for flag in ("--training-data", "--test-queries-seen/--no-test-queries-seen", "--licence", "--author"):
        assert flag in result.output
    assert repo_files(repo) == [REPOSITORY_MARKER]


def test_an_invalid_card_file_is_refused_by_the_schema(outputs, repo, tmp_path):
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"test_queries_seen": "no", "colour": "blue"}))
    result = submit(outputs / DEFAULT, "--to", repo, *CARD_FLAGS[:3], *CARD_FLAGS[4:], "--card", card)
    assert result.exit_code == 2
    assert "test_queries_seen: 'no' is not of type 'boolean'" in result.output
    assert repo_files(repo) == [REPOSITORY_MARKER]


def test_prompts_ask_for_the_missing_fields(outputs, repo):
    answers = "\n".join(["My BM25", "", "org/bm25-weights", "abc123", "none", "no", "a laptop", "MIT",
                         "Ada, Bo", "https://example.org/p"]) + "\n"
    result = submit(outputs / DEFAULT, "--to", repo, "--interactive", input=answers)
    assert result.exit_code == 0, result.output
    card = read_submission(repo / "results/stard/bm25/bm25").model_card
    assert card["model"] == {"name": "My BM25", "version": "1"}  # empty answer: the recorded version
    assert card["source"] == {"hub_id": "org/bm25-weights", "revision": "abc123"}
    assert card["test_queries_seen"] is False and card["authors"] == ["Ada", "Bo"]
    assert card["hardware"] == "a laptop" and card["paper"] == "https://example.org/p"


def test_submissions_of_several_models_in_one_call_are_refused(outputs, repo):
    edit_results(outputs / TUNED, lambda o: o["model"].update(name="ql"))
    result = submit(outputs / DEFAULT, outputs / TUNED, "--to", repo, *CARD_FLAGS)
    assert result.exit_code == 2
    assert repo_files(repo) == [REPOSITORY_MARKER]


def test_a_folder_that_is_not_a_results_repository_is_refused(outputs, tmp_path):
    result = submit(outputs / DEFAULT, "--to", tmp_path, *CARD_FLAGS)
    assert result.exit_code == 2 and "not a statbench results repository" in result.output
    assert "init-repo" in result.output and not (tmp_path / "results").exists()


# --- the strict reader ----------------------------------------------------------------------------

@pytest.fixture
def submitted(outputs, repo) -> Path:
    assert submit(outputs / DEFAULT, "--to", repo, *CARD_FLAGS).exit_code == 0
    return repo / "results/stard/bm25/bm25"


def _rewrite_card(folder: Path, change) -> None:
    card = json.loads((folder / "model_card.json").read_text())
    change(card)
    (folder / "model_card.json").write_text(json.dumps(card))


@pytest.mark.parametrize("tamper, message", [
    (lambda f: (f / "notes.txt").write_text("x"), "unexpected 'notes.txt'"),
    (lambda f: (f / "model_card.json").unlink(), "missing model_card.json"),
    (lambda f: (f / "run.trec.gz").write_bytes(gzip.compress(gzip.decompress((f / "run.trec.gz").read_bytes())
                                                             .replace(b" 1 ", b" 2 ", 1))), "its content hashes to"),
    (lambda f: (f / "run.trec.gz").write_bytes((f / "run.trec.gz").read_bytes()[:-20]), "not a complete gzip file"),
    (lambda f: _rewrite_card(f, lambda c: c.update(test_queries_seen=None)), "test_queries_seen"),
    (lambda f: _rewrite_card(f, lambda c: c["parameters"]["model"].update(k1=2.0)),
     "parameters: not the parameters results.json records"),
    (lambda f: edit_results(f, lambda o: o["per_query"]["0"].update({"R@5": o["per_query"]["0"]["R@5"] - 1e-6})),
     "disagrees with the splits"),
], ids=["extra-file", "missing-file", "run-changed", "run-truncated", "card-schema", "card-parameters",
        "per-query-nudged"])
def test_read_submission_refuses_a_damaged_folder(submitted, tamper, message):
    tamper(submitted)
    with pytest.raises(StatbenchError, match=message.replace("(", r"\(")):
        read_submission(submitted)


def test_read_submission_refuses_a_folder_that_is_not_where_its_result_goes(submitted, repo):
    moved = repo / "results/stard/bm25/bm25,k1=0.9"
    submitted.rename(moved)
    with pytest.raises(StatbenchError, match=r"the folder is stard/bm25/bm25,k1=0.9 but this result's is "
                                             r"stard/bm25/bm25"):
        read_submission(moved)


def test_a_result_whose_model_is_not_installed_here_is_read_by_its_label(submitted, repo):
    """A repository's CI may lack a lab's model plugin: the configuration folder cannot be
    derived there, so its task and label are checked (never a folder of another label)."""
    edit_results(submitted, lambda o: o.update(command=o["command"].replace("--model bm25", "--model lab:bm25")))
    assert read_submission(submitted).results.model.name == "bm25"
    moved = repo / "results/stard/ql/bm25"
    moved.parent.mkdir()
    submitted.rename(moved)
    with pytest.raises(StatbenchError, match="the folder is stard/ql/bm25 but this result is task 'stard', "
                                             "label 'bm25'"):
        read_submission(moved)


def test_a_result_not_made_by_statbench_run_cannot_be_placed(submitted):
    edit_results(submitted, lambda o: o.update(command="python my_script.py"))
    with pytest.raises(StatbenchError, match="is not a 'statbench run' command line"):
        read_submission(submitted)
