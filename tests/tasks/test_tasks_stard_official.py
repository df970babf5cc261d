"""STARD's second protocol (the official train/dev split) beside the unchanged 5 folds."""

import json
import logging

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError, UnknownNameError
from statbench.run.runner import execute
from statbench.run.request import RunRequest
from statbench.tasks.stard import Stard
from fixture_data import add_official

LOG = logging.getLogger("test")
NO_PROGRESS = lambda description, total=None: (lambda n=1: None)  # noqa: E731


def test_official_split_is_extra_and_leaves_the_folds_untouched(stard_dir):
    before = Stard().load(stard_dir, LOG)
    add_official(stard_dir)
    after = Stard().load(stard_dir, LOG)
    assert after.splits == before.splits and after.checksum == before.checksum
    assert [p.name for p in after.files] == [p.name for p in before.files]
    assert before.extra_splits == []
    (dev,) = after.extra_splits
    assert (dev.name, dev.test, dev.train) == ("dev", ("3", "4"), ("0", "1", "2"))


def test_default_run_is_five_fold_and_dev_runs_when_named(stard_dir, tmp_path):
    add_official(stard_dir)
    default = execute(RunRequest(task="stard", model="bm25", data_dir=stard_dir, output=tmp_path / "a"), LOG, NO_PROGRESS)
    assert [s["name"] for s in default.results["splits"]] == [f"fold-{i}" for i in range(1, 6)]
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--split", "dev", "--data-dir",
                                      str(stard_dir), "--output", str(tmp_path / "b"), "--no-progress"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert [(s["name"], s["n_queries"]) for s in results["splits"]] == [("dev", 2)]
    # the dev queries' rankings are the same as in the folds (a zero-shot model sees no training data)
    for qid in ("3", "4"):
        assert results["per_query"][qid] == default.results["per_query"][qid]


def test_without_the_official_files_dev_is_unknown(stard_dir, tmp_path):
    with pytest.raises(UnknownNameError, match="unknown split of task stard 'dev'; valid choices: fold-1"):
        execute(RunRequest(task="stard", model="bm25", splits=["dev"], data_dir=stard_dir, output=tmp_path / "out"),
                LOG, NO_PROGRESS)


def test_unknown_and_overlapping_ids_in_the_official_files(stard_dir):
    add_official(stard_dir, train=("0", "1", "2", "77"), dev=("3", "4"))
    data = Stard().load(stard_dir, LOG)
    assert data.dropped == ["train.query.txt: 1 query id(s) not among the loaded queries left out of the official "
                            "split (e.g. 77)"]
    assert data.extra_splits[0].train == ("0", "1", "2")
    add_official(stard_dir, train=("0", "1", "2", "3"), dev=("3", "4"))
    with pytest.raises(DataFormatError, match=r"dev\.query\.txt, field 'id': 1 query id\(s\) are also in train"):
        Stard().load(stard_dir, LOG)
    (stard_dir / "data/example/dev.query.txt").write_text("3 no tab here\n")
    with pytest.raises(DataFormatError, match=r"dev\.query\.txt, line 1, field 'id': expected 'id<TAB>question'"):
        Stard().load(stard_dir, LOG)
