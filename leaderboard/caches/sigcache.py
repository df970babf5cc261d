"""The figures of each significance comparison kept between builds, so that a board that gains
or changes a row re-tests only that row against the baseline (testing a whole board of 3,333
STARD rows took ~10 s of CPU, most of it the bootstrap).

A comparison's figures (:func:`statbench.leaderboard.ranking.significance.pair_figures`) depend only on the
baseline's and the system's per-query scores, the measure and the test's settings; its
Holm-adjusted p depends on the whole family and is always computed anew. So one file per
(baseline's per-query scores, measure, resamples, seed, code of the tests) holds, per
system's per-query scores (the sha256 the record cache names them by), either the figures or
why the pair cannot be tested. The file holds the sha256 of its payload and is verified on
read (one that does not verify is ignored and replaced); it is rewritten, atomically, only
when the build tested a new pair, keeping only the pairs that build used. Files live under
``$STATBENCH_CACHE/leaderboard-significance/``."""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path

from statbench.leaderboard.ranking import significance as board_tests
from statbench.scoring import significance
from statbench.storage.cache_files import read_pickled_dict, write_framed
from statbench.storage.paths import cache_root

_MAGIC = b"statbench-significance 1\n"


@functools.cache
def _code_version() -> str:
    digest = hashlib.sha256()
    for module in (board_tests, significance):
        digest.update(Path(module.__file__).read_bytes())
    import numpy
    import scipy

    digest.update(f"numpy {numpy.__version__} scipy {scipy.__version__}".encode())
    return digest.hexdigest()

class PairCache:
    """The kept comparisons against one baseline on one measure (see the module)."""

    def __init__(self, root: Path | None, baseline_sha256: str, measure: str, resamples: int, seed: int):
        self.file = None
        if root is not None:
            key = "\0".join(map(str, (baseline_sha256, measure, resamples, seed, _code_version())))
            name = hashlib.sha256(key.encode()).hexdigest()
            self.file = Path(root) / name[:2] / f"{name}.pickle"
        self.kept: dict[str, tuple] = read_pickled_dict(_MAGIC, self.file)
        self.used: dict[str, tuple] = {}
        self.added = False

    @classmethod
    def default(cls, baseline_sha256: str, measure: str, resamples: int, seed: int) -> PairCache:
        return cls(cache_root() / "leaderboard-significance", baseline_sha256, measure, resamples, seed)

    def get(self, system_sha256: str) -> tuple | None:
        """("figures", dict) or ("untested", why), or None when this pair was not kept."""
        found = self.kept.get(system_sha256)
        if found is not None:
            self.used[system_sha256] = found
        return found

    def put(self, system_sha256: str, outcome: tuple) -> None:
        self.used[system_sha256] = outcome
        self.added = True

    def save(self) -> None:
        """Keep the pairs this build used, when it tested any anew (a cache that cannot be
        written is no error)."""
        if self.file is None or not self.added:
            return
        payload = pickle.dumps(dict(sorted(self.used.items())), protocol=pickle.HIGHEST_PROTOCOL)
        write_framed(self.file, _MAGIC, payload)
