"""`statbench --help` imports every command plugin's module: the leaderboard's (its command group
and `statbench submit`) must not bring the site builder, the caches or numpy with them. Their
work sits in other modules, imported in the command's body (issue 35 §4: every other import of
the leaderboard is at the top of its module)."""

from __future__ import annotations

import json
import subprocess
import sys

#: what a command's module may not import: the work behind the commands, and heavy libraries
HEAVY = ("numpy", "scipy", "jinja2", "statbench.leaderboard.repo.submit_runs", "statbench.leaderboard.render.build",
         "statbench.leaderboard.collect.reading", "statbench.leaderboard.caches.records",
         "statbench.leaderboard.verify.verify")


def _imported_by(*modules: str) -> list[str]:
    program = ("import importlib, json, sys\n"
               f"for name in {list(modules)!r}:\n    importlib.import_module(name)\n"
               f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_command_modules_import_none_of_the_work():
    assert _imported_by("statbench.leaderboard.cli", "statbench.leaderboard.repo.submit") == []


def test_the_check_sees_a_heavy_import():
    assert "statbench.leaderboard.repo.submit_runs" in _imported_by("statbench.leaderboard.repo.submit_runs")
    assert "statbench.leaderboard.caches.records" in _imported_by("statbench.leaderboard.render.build")
