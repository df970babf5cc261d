"""``statbench grid --task A --model X ...`` (no file): the experiment the options give, typed as
a file's is (:func:`statbench.grid.spec.shortcut_spec`), and refused with one line where the
options cannot be one experiment."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.grid.spec import shortcut_spec


def test_the_options_become_one_typed_experiment(tmp_path):
    spec = shortcut_spec(("stard",), ("bm25", "tfidf"), tmp_path / "data", "5fold", tmp_path / "out")
    assert [(t.name, t.data_dir, t.protocol) for t in spec.tasks] == [("stard", tmp_path / "data", "5fold")]
    assert [m.model for m in spec.models] == ["bm25", "tfidf"]
    assert spec.output == tmp_path / "out" and spec.path == Path("(command line)")


def test_several_tasks_without_a_data_folder_each_keep_their_own(tmp_path):
    spec = shortcut_spec(("stard", "bsard"), ("bm25",), None, None, None)
    assert [(t.name, t.data_dir, t.protocol) for t in spec.tasks] == [("stard", None, None), ("bsard", None, None)]


@pytest.mark.parametrize(("tasks", "models", "data_dir", "message"), [
    ((), ("bm25",), None, "give an experiment file, or at least one --task and one --model"),
    (("stard",), (), None, "give an experiment file, or at least one --task and one --model"),
    (("stard", "bsard"), ("bm25",), Path("data"), "--data-dir names one task's folder: give it with a single --task"),
])
def test_options_that_are_no_experiment_are_refused(tasks, models, data_dir, message):
    with pytest.raises(StatbenchError, match=message.replace("-", r"\-")):
        shortcut_spec(tasks, models, data_dir, None, None)


def test_the_command_refuses_them_in_one_line_with_exit_2(tmp_path):
    result = CliRunner().invoke(cli, ["grid", "--task", "stard", "--task", "bsard", "--model", "bm25",
                                      "--data-dir", str(tmp_path), "--dry-run"])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: --data-dir names one task's folder: give it with a single --task, "
                                     "or use a file")
