"""MTEB's retrieval tasks as statbench tasks (``--task mteb:NAME``, :mod:`statbench.tasks.mteb`):
what the bridge cannot run is one line; MTEB's legal tasks resolve with their own main score.
With a model through MTEB, end to end: tests/models/mteb_bridge/test_mteb_bridge.py."""

from __future__ import annotations

import pytest

pytest.importorskip("mteb")

from click.testing import CliRunner  # noqa: E402

from statbench.commands.cli import cli  # noqa: E402
from statbench.tasks.mteb import resolve  # noqa: E402


def run(args):
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("task, message", [("mteb:NoSuchTaskAtAll", "no such MTEB task"),
                                           ("mteb:Banking77Classification", "is a Classification task"),
                                           ("mteb:", "needs an MTEB task name")])
def test_tasks_the_bridge_cannot_run_are_one_line(task, message):
    result = run(["run", "--task", task, "--model", "bm25"])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_the_legal_tasks_resolve_with_their_own_main_score():
    info = resolve("AILAStatutes").task_info()
    assert info.name == "mteb-AILAStatutes" and info.language == "en" and info.primary_measure == "nDCG@10"
    assert info.default_protocol == "test" and info.depth == 1000
    bsard = resolve("BSARDRetrieval.v2").task_info()
    assert bsard.primary_measure == "R@100" and bsard.language == "fr"  # its main score is recall_at_100
    assert resolve("LeCaRDv2").task_info().language == "zh-Hans"
