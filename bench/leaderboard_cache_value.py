"""What each of the leaderboard's caches saves at scale: the 10,000-result build of
``bench/leaderboard_scale.py`` rebuilt with one cache switched off at a time (issue 35 §1: a
cache that does not pay for itself is removed).

For each variant (``none``: every cache on; else the one cache named is off, as if it did not
exist: nothing read, nothing kept), in a fresh process per build: a build to settle the other
caches, a rebuild with nothing changed, then a rebuild after adding 10 results to one board
(the scale targets' case). Figures are wall and CPU seconds (user + system of the build and
every process it forks); CPU is the one to compare on a shared machine.

    STATBENCH_CACHE=$(mktemp -d) nice -n 5 python bench/leaderboard_cache_value.py --work /tmp/lb \
        --variants none sigcache rowviews fragments rowheads runcopies incremental

Uses the results ``leaderboard_scale.py --incremental 10000`` generated under ``--work`` (it
generates them when absent).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import leaderboard_scale  # noqa: E402 (beside this file)

#: the patches that switch one cache off, run in the build's process before the command
OFF = {
    "none": "",
    # the significance figures of each pair, by the two rows' per-query scores
    "sigcache": ("import statbench.leaderboard.caches.sigcache as m\n"
                 "m.read_pickled_dict = lambda *a: {}\n"
                 "m.PairCache.save = lambda self: None\n"),
    # each row's view (its record then not loaded)
    "rowviews": ("from statbench.leaderboard.caches.rowviews import RowViews\n"
                 "RowViews.read = lambda self: {}\n"
                 "RowViews.save = lambda self: None\n"),
    # each row's markup
    "fragments": ("from statbench.leaderboard.caches.fragments import Fragments\n"
                  "Fragments.read = lambda self: {}\n"
                  "Fragments.save = lambda self: None\n"),
    # the heads of the records (an unchanged board's records not loaded)
    "rowheads": ("import statbench.leaderboard.collect.rowheads as m\n"
                 "m.read_pickled_dict = lambda *a: {}\n"
                 "m.Heads.save = lambda self: None\n"),
    # gzipped run files kept by content, and the run files' sha256 by state
    "runcopies": ("import statbench.leaderboard.render.run_links as links\n"
                  "import statbench.leaderboard.caches.runcopies as m\n"
                  "from statbench.data.checksum import file_sha256\n"
                  "def write_gzipped(source, content_sha256, target, root=None, gzipped=False):\n"
                  "    target.write_bytes(m.gzip_bytes(m.plain_content(source, gzipped=gzipped)))\n"
                  "links.write_gzipped = write_gzipped\n"
                  "m.RunDigests.sha256 = lambda self, path: file_sha256(path)\n"
                  "m.RunDigests.learn = lambda self, found: None\n"
                  "m.RunDigests.save = lambda self: None\n"),
    # an unchanged board's files kept from the previous site
    "incremental": ("import statbench.leaderboard.render.build as m\n"
                    "m.read_manifest = lambda out_dir: {}\n"),
}


def build(results: Path, out: Path, variant: str, prelude: str = "") -> tuple[float, float]:
    """Wall and CPU seconds of ``leaderboard build`` in a fresh process, ``variant`` off
    (``prelude``: code run first, e.g. to switch off a part of the build being measured apart)."""
    program = (prelude + OFF[variant] + "import sys\nfrom statbench.commands.cli import cli\n"
               f"cli(['leaderboard', 'build', '--results', {str(results)!r}, '--out', {str(out)!r}])\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", program], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(wall, 2), round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2)


def measure(work: Path, n: int, variant: str, board: str = "bsard", added: int = 10, prelude: str = "") -> dict:
    results = leaderboard_scale._ensure_generated(work, n, 10)
    extra = results / "added"
    shutil.rmtree(extra, ignore_errors=True)
    site = work / f"site-{n}-{variant}"
    shutil.rmtree(site, ignore_errors=True)
    try:
        settle = build(results, site, variant, prelude)
        unchanged = build(results, site, variant, prelude)
        leaderboard_scale.generate(extra, added, run_depth=10, start=n, only=(board,))
        after = build(results, site, variant, prelude)
    finally:
        shutil.rmtree(extra, ignore_errors=True)
    figures = {"variant": variant, "settle": settle, "unchanged": unchanged, "after": after}
    print(json.dumps(figures), flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/statbench-lb-scale"))
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--variants", nargs="+", default=list(OFF), choices=list(OFF))
    parser.add_argument("--prelude", type=Path, help="a Python file run in each build's process first")
    args = parser.parse_args()
    prelude = args.prelude.read_text("utf-8") + "\n" if args.prelude else ""
    for variant in args.variants:
        measure(args.work, args.n, variant, prelude=prelude)


if __name__ == "__main__":
    main()
