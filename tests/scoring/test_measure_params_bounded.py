"""A task's ir-measures measure whose parameters trec_eval cannot hold (a cut-off of 0, or
beyond a C long; a relevance level of 0 or beyond a C int; a fractional gain): pytrec_eval
aborts the whole process on ``P@0`` (a C assertion, no Python error at all) and raises
assorted errors on the others. statbench refuses such a measure with one line naming it,
exit 2, and any other error ir-measures raises while scoring is one line too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.scoring.measures import MeasureError, parse_measure
from beir_fixtures import write_beir

REFUSED = [
    ("P@0", "cut-off 0"), ("R@0", "cut-off 0"), ("nDCG@0", "cut-off 0"), ("AP@0", "cut-off 0"),
    ("Success@0", "cut-off 0"), ("Judged@0", "cut-off 0"), ("ERR@0", "cut-off 0"),
    ("R@100000000000000000000", "cut-off 100000000000000000000"),
    ("P(rel=0)@10", "rel=0"), ("R(rel=0)@10", "rel=0"), ("AP(rel=0)", "rel=0"),
    ("P(rel=100000000000000000000)@10", "rel=100000000000000000000"),
    ("nDCG(gains={1:1.5})@10", "gains"), ("nDCG(gains={1:2147483648})@10", "gains"),
]


@pytest.mark.parametrize("text, said", REFUSED)
def test_measures_trec_eval_cannot_compute_are_refused_naming_the_parameter(text, said):
    with pytest.raises(MeasureError) as caught:
        parse_measure(text)
    assert text in str(caught.value) and said in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("text", ["P@1", "R@100", "nDCG@10", "AP", "RR@10", "P(rel=2)@5",
                                  "nDCG(gains={0:0,1:1,2:3})@10", "R@2147483647", "Rprec", "Judged@10"])
def test_ordinary_measures_still_parse(text):
    assert str(parse_measure(text))


def _beir_run(tmp_path: Path, measure: str) -> tuple[Path, Path]:
    root = write_beir(tmp_path / "lawqa", settings={"language": "en", "measures": ["R@10", measure]})
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d3 1 1.0 t\n")
    return root, run


def test_evaluate_of_a_task_declaring_p_at_0_is_one_line_not_an_abort(tmp_path):
    root, run = _beir_run(tmp_path, "P@0")
    env = dict(os.environ, STATBENCH_CACHE=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "statbench.commands.cli", "evaluate", str(run), "--task",
                           f"beir:{root}"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "'P@0'" in errors[0] and "cut-off 0" in errors[0], done.stderr
    assert "Assertion" not in done.stderr and "Traceback" not in done.stderr


def test_evaluate_of_a_task_declaring_rel_0_is_one_line(tmp_path):
    root, run = _beir_run(tmp_path, "R(rel=0)@10")
    result = CliRunner().invoke(cli, ["evaluate", str(run), "--task", f"beir:{root}"])
    assert result.exit_code == 2, result.output
    assert "R(rel=0)@10" in result.output and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1].startswith("Error")


def test_an_error_ir_measures_raises_while_scoring_is_one_line(tmp_path):
    # RBP(p=1.0) parses, and no provider computes it (ir-measures 0.4: "Unsupported measures")
    root, run = _beir_run(tmp_path, "RBP(p=1.0)")
    result = CliRunner().invoke(cli, ["evaluate", str(run), "--task", f"beir:{root}"])
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("Error: ir-measures cannot compute 'RBP(p=1.0)': ") and "Traceback" not in result.output
