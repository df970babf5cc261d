"""A refused `statbench run` creates nothing: not its --output folder, nor any folder above it."""

from __future__ import annotations

import json

from click.testing import CliRunner
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

from statbench.commands.cli import cli


def test_a_refused_run_leaves_no_folder_above_its_output(tmp_path, monkeypatch):
    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "stard"
    write_jsonl(data / "corpus.jsonl", STARD_CORPUS)
    (data / "queries.json").write_text(json.dumps(STARD_QUERIES, ensure_ascii=False), encoding="utf-8")
    output = tmp_path / "new" / "deeper" / "out"
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--split", "no-such-split",
                                      "--data-dir", str(data), "--output", str(output), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "new").exists()
