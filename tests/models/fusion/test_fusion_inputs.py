"""Fusion's inputs (issue 33 §4): identified by content (one run named twice, however spelled,
copied or configured, is refused naming both), confined (an output folder's run file is read
only from inside it) and never overwritten (``--output`` apart from every input, checked
before anything is read or written). Both ``statbench fuse`` and the ``fusion`` retriever."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from pathlib import Path

import grid_fixtures
import pytest
from click.testing import CliRunner
from grid_fixtures import ROTATE

from statbench.commands.cli import cli
from statbench.registry import plugins

pytest.importorskip("ranx")

# the fusion tests run on one xdist worker: numba compiles ranx's fusion code once per process
# (seconds per method), which a second worker would pay again
pytestmark = pytest.mark.xdist_group("ranx")


def invoke(args):
    plugins.reset_registry()
    return CliRunner().invoke(cli, list(map(str, args)))


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (links not followed) and its bytes."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<link>")
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def world(fake_distributions, tmp_path):
    """The miniature STARD and two output folders of the ``rotate`` model (offsets 0 and 1)."""
    import textwrap

    fake_distributions("sbgrid-rotate", "sbgrid_rotate", textwrap.dedent(ROTATE), entry_name="rotate")
    stard = grid_fixtures.write_stard(tmp_path / "stard")
    outs = {}
    for offset in (0, 1):
        out = tmp_path / f"r{offset}"
        result = invoke(["run", "--task", "stard", "--model", "rotate", "--param", f"offset={offset}",
                         "--data-dir", stard, "--output", out, "--no-progress"])
        assert result.exit_code == 0, result.output
        outs[offset] = out
    return stard, outs[0], outs[1]


def fuse_args(*inputs, stard: Path, output: Path, method: str = "rrf"):
    return ["fuse", *inputs, "--task", "stard", "--method", method, "--data-dir", stard, "--output", output]


# --- one run is one input ------------------------------------------------------------------------

def test_the_same_run_however_named_is_refused_naming_both(world, tmp_path):
    stard, r0, r1 = world
    out = tmp_path / "fused"
    (tmp_path / "link").symlink_to(r0, target_is_directory=True)
    copy = tmp_path / "copy"
    shutil.copytree(r0, copy)
    gz = tmp_path / "gz"
    shutil.copytree(r0, gz)
    (gz / "run.trec.gz").write_bytes(gzip.compress((gz / "run.trec").read_bytes()))
    (gz / "run.trec").unlink()  # a results repository's gzipped copy
    retagged = tmp_path / "retagged.trec"  # a bare run file: the same rankings under another tag and spacing
    retagged.write_text("".join("  ".join([*line.split()[:5], "other-tag"]) + "\n"
                                for line in (r0 / "run.trec").read_text().splitlines()))
    for twin in (r0, r0.parent / "." / r0.name, tmp_path / "r1" / ".." / "r0", tmp_path / "link", copy, gz,
                 r0 / "run.trec", retagged):
        line = one_line_error(invoke(fuse_args(r0, twin, stard=stard, output=out)),
                              f"{r0} and {twin} are the same run", "fusing a run with itself")
        assert "sha256" in line
        assert not out.exists()
    # three inputs, the twins apart: still named
    one_line_error(invoke(fuse_args(copy, r1, r0, stard=stard, output=out)), f"{copy} and {r0} are the same run")
    assert not out.exists()


def test_a_parameter_spelled_at_its_default_is_the_same_run(world, tmp_path):
    stard, r0, r1 = world
    spelled = tmp_path / "spelled"
    result = invoke(["run", "--task", "stard", "--model", "rotate", "--param", "offset=0", "--param", "preset=full",
                     "--data-dir", stard, "--output", spelled, "--no-progress"])
    assert result.exit_code == 0, result.output
    one_line_error(invoke(fuse_args(r0, spelled, stard=stard, output=tmp_path / "fused")),
                   f"{r0} and {spelled} are the same run")


@pytest.mark.parametrize("runs", ["rotate,rotate[offset=0]", "rotate[preset=full],rotate",
                                  "rotate[offset=1],rotate,rotate[offset=1;delay=0]"])
def test_the_fusion_retriever_refuses_one_configuration_spelled_twice(world, tmp_path, runs):
    stard, _, _ = world
    out = tmp_path / "fz"
    result = invoke(["run", "--task", "stard", "--model", "fusion", "--param", f"runs={runs}",
                     "--data-dir", stard, "--output", out, "--no-progress"])
    one_line_error(result, "are one configuration", "defaults included")
    assert not out.exists()


def test_the_fusion_retriever_refuses_distinct_configurations_that_rank_alike(world, tmp_path):
    """``offset`` counts modulo the corpus size: offset=N is offset=0's run, though configured
    otherwise; the runs' content says so, on the first split fused."""
    stard, _, _ = world
    n = sum(1 for line in (stard / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
    out = tmp_path / "fz"
    result = invoke(["run", "--task", "stard", "--model", "fusion", "--param", f"runs=rotate,rotate[offset={n}]",
                     "--data-dir", stard, "--output", out, "--no-progress"])
    one_line_error(result, f"rotate and rotate[offset={n}] are the same run")
    assert not out.exists()


def test_engine_refuses_identical_rankings_but_not_inputs_that_rank_nothing_here():
    from statbench.api import StatbenchError
    from statbench.models.fusion.engine import FusionSettings, fuse_rankings

    a = {"q1": [("d1", 2.0), ("d2", 1.0)]}
    b = {"q1": [("d2", 2.0), ("d1", 1.0)], "q2": [("d1", 1.0)]}
    with pytest.raises(StatbenchError, match="fusion: A and C are the same run"):
        fuse_rankings([a, b, dict(a)], ["q1"], FusionSettings(), None, labels=["A", "B", "C"])
    # the same on the queries fused is the same run, whatever else either ranks
    with pytest.raises(StatbenchError, match="input 1 and input 2 are the same run"):
        fuse_rankings([{"q1": b["q1"]}, b], ["q1"], FusionSettings(), None)
    # two inputs that rank none of these queries are not compared (nothing of them is fused)
    fused = fuse_rankings([{"q9": [("d1", 1.0)]}, {"q8": [("d1", 1.0)]}, a], ["q1"], FusionSettings(), None)
    assert [d for d, _ in fused["q1"]] == ["d1", "d2"]


# --- the output is never an input ------------------------------------------------------------------

def test_an_output_that_is_holds_or_lies_inside_an_input_is_refused_before_anything(world, tmp_path):
    stard, r0, r1 = world
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(r1 / "run.trec", bare / "run.trec")  # a bare run file named as a run's own
    (tmp_path / "outlink").symlink_to(r0, target_is_directory=True)
    before = {p: snapshot(p) for p in (r0, r1, bare)}
    cases = [
        ((r0, r1), r0, f"is or holds the input {r0}"),
        ((r0, r1), r1 / ".." / "r0", f"is or holds the input {r0}"),
        ((r0, r1), tmp_path / "outlink", f"is or holds the input {r0}"),
        ((r0, bare / "run.trec"), bare, f"is or holds the input {bare / 'run.trec'}"),
        ((r0, bare / "run.trec"), bare / "run.trec", f"is or holds the input {bare / 'run.trec'}"),
        ((r0, r1), tmp_path, f"is or holds the input {r0}"),
        ((r0, r1), r1 / "fused", f"lies inside the input folder {r1}"),
    ]
    for inputs, output, message in cases:
        one_line_error(invoke(fuse_args(*inputs, stard=stard, output=output)), f"--output {output}", message)
        assert {p: snapshot(p) for p in (r0, r1, bare)} == before  # nothing written, replaced or removed
    assert not (r1 / "fused").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging left


# --- an input's run file is read from inside its folder only -------------------------------------

def _rewrite_run_path(folder: Path, path: str, sha256: str | None = None) -> None:
    results = json.loads((folder / "results.json").read_text())
    results["run_file"]["path"] = path
    if sha256:
        results["run_file"]["sha256"] = sha256
    (folder / "results.json").write_text(json.dumps(results))


@pytest.mark.parametrize("how", ["absolute", "dotdot", "link", "gz-link", "results-link", "backslash"])
def test_a_run_file_outside_its_folder_is_not_read(world, tmp_path, how):
    stard, r0, r1 = world
    victim = tmp_path / "victim"
    shutil.copytree(r1, victim)
    outside = tmp_path / "outside"
    shutil.copytree(r0, outside)  # offset 1 in folder victim would fuse offset 0's run from outside
    sha = json.loads((outside / "results.json").read_text())["run_file"]["sha256"]
    if how == "absolute":
        _rewrite_run_path(victim, str(outside / "run.trec"), sha)
    elif how == "dotdot":
        _rewrite_run_path(victim, "../outside/run.trec", sha)
    elif how == "backslash":
        _rewrite_run_path(victim, "..\\outside\\run.trec", sha)
    elif how == "link":
        (victim / "run.trec").unlink()
        (victim / "run.trec").symlink_to(outside / "run.trec")
        _rewrite_run_path(victim, "run.trec", sha)
    elif how == "gz-link":
        (victim / "run.trec").unlink()
        (outside / "run.trec.gz").write_bytes(gzip.compress((outside / "run.trec").read_bytes()))
        (victim / "run.trec.gz").symlink_to(outside / "run.trec.gz")
        _rewrite_run_path(victim, "run.trec", sha)
    else:  # results.json itself a link out of the folder
        (victim / "results.json").unlink()
        (victim / "results.json").symlink_to(outside / "results.json")
    out = tmp_path / "fused"
    line = one_line_error(invoke(fuse_args(r1 if how != "results-link" else r0, victim, stard=stard, output=out)),
                          f"{victim}: its results.json")
    assert "outside that folder" in line or "not a path inside that folder" in line
    assert not out.exists()


def test_a_run_file_in_a_subfolder_of_its_output_is_read(world, tmp_path):
    stard, r0, r1 = world
    moved = tmp_path / "moved"
    shutil.copytree(r1, moved)
    (moved / "runs").mkdir()
    (moved / "run.trec").rename(moved / "runs" / "run.trec")
    _rewrite_run_path(moved, "runs/run.trec")
    result = invoke(fuse_args(r0, moved, stard=stard, output=tmp_path / "fused"))
    assert result.exit_code == 0, result.output
    direct = invoke(fuse_args(r0, r1, stard=stard, output=tmp_path / "direct"))
    assert direct.exit_code == 0, direct.output
    assert (tmp_path / "fused" / "run.trec").read_bytes() == (tmp_path / "direct" / "run.trec").read_bytes()


def test_run_file_inside_refuses_every_escape(tmp_path):
    from statbench.api import StatbenchError
    from statbench.models.fusion.sources import run_file_inside

    folder = tmp_path / "out"
    folder.mkdir()
    for name in ("", "/etc/passwd", "../x", "a/../../x", "a\\..\\..\\x", "C:run.trec", "C:\\run.trec",
                 "\\\\server\\share\\run.trec", "run\x00.trec"):
        with pytest.raises(StatbenchError, match="not a path inside that folder"):
            run_file_inside(folder, name)
    assert run_file_inside(folder, "run.trec") == folder / "run.trec"
    assert run_file_inside(folder, "sub/run.trec") == folder / "sub" / "run.trec"
    if sys.platform != "win32":
        (folder / "run.trec").symlink_to(tmp_path / "elsewhere.trec")  # dangling, leading out
        with pytest.raises(StatbenchError, match="outside that folder"):
            run_file_inside(folder, "run.trec")
        os.unlink(folder / "run.trec")
        (folder / "real.trec").write_text("")
        (folder / "run.trec").symlink_to("real.trec")  # a link inside the folder is fine
        assert run_file_inside(folder, "run.trec") == folder / "run.trec"


def test_a_component_parameter_that_does_not_apply_to_the_task_is_refused(tmp_path):
    """bm25's segmenter applies to Chinese tasks only: on an English one it is refused, as
    `statbench run --model bm25 --param segmenter=...` refuses it, never silently carried."""
    from statbench.api import StatbenchError
    from statbench.models.fusion.retriever import FusionRetriever
    from statbench.testing import make_context

    model = FusionRetriever(runs="bm25[segmenter=jieba],tfidf")
    with pytest.raises(StatbenchError, match=r"parameter segmenter='jieba' for bm25 does not apply to .*drop it"):
        model.index([], make_context(tmp_path, "en"))
    kept = FusionRetriever(runs="bm25[segmenter=jieba],tfidf")
    kept.index([], make_context(tmp_path, "zh"))
    assert kept.models[0][2].params["segmenter"] == "jieba"


def test_a_damaged_gzipped_input_run_is_one_line(tmp_path):
    """A fusion input whose run.trec.gz is cut short: one line naming it, never zlib's traceback."""
    import gzip as gz_module

    from statbench.api import DataFormatError
    from statbench.models.fusion.inputs import _read_gzipped

    path = tmp_path / "run.trec.gz"
    whole = gz_module.compress(b"q1 Q0 d1 1 1.0 t\n" * 50)
    path.write_bytes(whole[: len(whole) // 2] + b"garbage")
    with pytest.raises(DataFormatError, match=r"run\.trec\.gz.*not a complete gzip file"):
        _read_gzipped(path, tmp_path)
