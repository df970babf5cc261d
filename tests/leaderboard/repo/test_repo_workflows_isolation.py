"""The results repository's workflows keep the submitted code away from what a later job
trusts: every job that re-runs submissions (``leaderboard reproduce`` without ``--take``)
has read-only contents, keeps no token in ``.git`` and saves no cache; the one cache saved
is the pages job's (it runs no submitted code), and every job restores only that one.
Before, the reproduce job saved the cache the pages job's ``build --verify`` restored: a
plugin's code could write a forged verification-cache entry (or other task data) there, and
the published board would show a tampered row as re-scored."""

from __future__ import annotations

import yaml
from click.testing import CliRunner

from statbench.commands.cli import cli


def _workflows(tmp_path) -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["leaderboard", "init-repo", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "r" / ".github" / "workflows"
    return {name: yaml.safe_load((folder / f"{name}.yml").read_text("utf-8")) for name in ("check", "publish")}


def _jobs(workflows):
    for name, workflow in workflows.items():
        for job, spec in workflow["jobs"].items():
            yield f"{name}/{job}", spec


def _runs_submitted_code(spec) -> bool:
    runs = " ".join(step.get("run", "") for step in spec["steps"])
    return "statbench leaderboard reproduce ." in runs and "--take" not in runs


def test_a_job_that_runs_submitted_code_can_write_nothing_a_later_job_trusts(tmp_path):
    untrusted = {name: spec for name, spec in _jobs(_workflows(tmp_path)) if _runs_submitted_code(spec)}
    assert sorted(untrusted) == ["check/check", "publish/reproduce"]
    for name, spec in untrusted.items():
        assert spec["permissions"] == {"contents": "read"}, name
        uses = [step.get("uses", "") for step in spec["steps"]]
        assert not any(u.startswith("actions/cache@") or u.startswith("actions/cache/save@") for u in uses), name
        checkout = next(step for step in spec["steps"] if step.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"]["persist-credentials"] is False, name


def test_only_the_pages_cache_is_saved_and_every_job_restores_only_it(tmp_path):
    saved, restored = {}, {}
    for name, spec in _jobs(_workflows(tmp_path)):
        for step in spec["steps"]:
            uses = step.get("uses", "")
            if uses.startswith("actions/cache"):
                keys = [step["with"]["key"], *str(step["with"].get("restore-keys", "")).splitlines()]
                prefixes = {key.partition("${{ vars.")[0] for key in keys}
                (saved if uses.startswith("actions/cache@") else restored)[name] = prefixes
    assert saved == {"publish/pages": {"statbench-pages-"}}
    assert restored == {"check/check": {"statbench-pages-"}, "publish/reproduce": {"statbench-pages-"}}


def test_the_pages_job_provides_its_own_task_data(tmp_path):
    pages = _workflows(tmp_path)["publish"]["jobs"]["pages"]
    names = [step.get("name") for step in pages["steps"]]
    assert names.index("Provide task data") < names.index("Build the leaderboard")
