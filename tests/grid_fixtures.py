"""Shared by the grid tests: a miniature STARD with an official dev split, a third-party
model plugin the cells' subprocesses can load (a dist-info folder on PYTHONPATH), and
helpers to run ``statbench grid`` as users do (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

#: official split of the miniature STARD: dev queries 2, 3, 4 (train 0, 1)
DEV, TRAIN = ("2", "3", "4"), ("0", "1")

#: ``rotate``: every query gets the corpus ids in sorted order, rotated left by ``offset``;
#: ``fail`` makes its search raise (a cell that fails at run time); ``delay`` seconds of
#: sleep before searching (a cell slow enough to be interrupted); ``preset=small`` is a
#: declared reduced budget. With ``SBGRID_GATE=DIR`` set, indexing writes
#: ``DIR/OFFSET.indexed`` and then waits while ``DIR/OFFSET.hold`` exists (a test holds a
#: cell after it loaded its data).
ROTATE = """
import os
import time
from pathlib import Path

from statbench import hookimpl
from statbench.api import Retriever
from statbench.contract.params import Param


class Rotate(Retriever):
    name = "rotate"
    description = "sorted corpus ids rotated by offset (tests)"
    default_params = {"offset": Param(0, min=0), "fail": False, "delay": Param(0.0, min=0.0),
                      "preset": Param("full", choices=("full", "small"), budget=("small",))}

    def index(self, corpus, ctx):
        self.ids = sorted(d.id for d in corpus)
        gate = os.environ.get("SBGRID_GATE")
        if gate:
            offset = self.params["offset"]
            Path(gate, f"{offset}.indexed").touch()
            while Path(gate, f"{offset}.hold").exists():
                time.sleep(0.05)

    def search(self, queries, k, ctx):
        time.sleep(self.params["delay"])
        if self.params["fail"]:
            raise RuntimeError("rotate was asked to fail")
        n = len(self.ids)
        o = self.params["offset"] % n
        order = self.ids[o:] + self.ids[:o]
        return {q.id: [(d, float(n - i)) for i, d in enumerate(order[:k])] for q in queries}


@hookimpl
def register_retrievers(register):
    register(Rotate)
"""


def write_stard(root: Path) -> Path:
    write_jsonl(root / "corpus.jsonl", STARD_CORPUS)
    (root / "queries.json").write_text(json.dumps(STARD_QUERIES, ensure_ascii=False), encoding="utf-8")
    text = {str(q["query_id"]): q["问题"] for q in STARD_QUERIES}
    (root / "train.query.txt").write_text("".join(f"{q}\t{text[q]}\n" for q in TRAIN), encoding="utf-8")
    (root / "dev.query.txt").write_text("".join(f"{q}\t{text[q]}\n" for q in DEV), encoding="utf-8")
    return root


def install_rotate(site: Path) -> Path:
    """The ``rotate`` plugin as an installed distribution in ``site`` (put it on PYTHONPATH)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "sbgrid_rotate.py").write_text(textwrap.dedent(ROTATE))
    info = site / "sbgrid_rotate-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sbgrid-rotate\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[statbench]\nrotate = sbgrid_rotate\n")
    return site


def relevant() -> dict[str, set[str]]:
    return {str(q["query_id"]): {"".join(n.split()) for n in q["match_name"]} for q in STARD_QUERIES}


def rotated(offset: int) -> list[str]:
    ids = sorted("".join(d["name"].split()) for d in STARD_CORPUS)
    o = offset % len(ids)
    return ids[o:] + ids[:o]


def reciprocal_rank(order: list[str], wanted: set[str], cutoff: int) -> float:
    for rank, doc in enumerate(order[:cutoff], start=1):
        if doc in wanted:
            return 1.0 / rank
    return 0.0


def mrr(offset: int, queries, cutoff: int = 3) -> float:
    """MRR@cutoff of ``rotate`` with ``offset`` over ``queries``, computed by hand."""
    rel = relevant()
    return sum(reciprocal_rank(rotated(offset), rel[q], cutoff) for q in queries) / len(queries)


def grid(*args, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    """``statbench grid ARGS`` in a subprocess (the cells are subprocesses of it)."""
    return subprocess.run([sys.executable, "-m", "statbench.commands.cli", "grid", *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd)


def cell_outputs(root: Path) -> dict[str, tuple[bytes, dict]]:
    """cell folder -> (run.trec bytes, the figures of results.json)."""
    found = {}
    for results in sorted(Path(root).glob("*/*/results.json")):
        obj = json.loads(results.read_text())
        found[str(results.parent.relative_to(root))] = (
            (results.parent / "run.trec").read_bytes(), {k: obj[k] for k in ("aggregate", "per_query", "splits")})
    return found


def world(root: Path) -> tuple[Path, dict]:
    """(a miniature STARD data folder, the environment under which subprocesses see the rotate plugin)."""
    data = write_stard(root / "stard")
    site = install_rotate(root / "site")
    return data, {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
