"""bm25s is imported without numba and scipy (bm25s_import.py): a cold BM25 run does not pay
for libraries it never calls, and the process can still import them afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("bm25s")

CODE = """
import sys
{before}
from statbench.models.lexical.bm25s_import import import_bm25s
bm25s = import_bm25s()
print(bm25s.NUMBA_AVAILABLE, bm25s.SCIPY_AVAILABLE, "numba" in sys.modules, "scipy" in sys.modules)
import scipy.sparse  # the block is lifted: later imports work
print(scipy.sparse.__name__, import_bm25s() is bm25s)
"""


def _run(before: str = "") -> list[str]:
    done = subprocess.run([sys.executable, "-c", CODE.format(before=before)], capture_output=True, text=True,
                          check=True)
    return done.stdout.split("\n")


def test_bm25s_is_imported_without_numba_and_scipy():
    pytest.importorskip("scipy")
    first, second, _ = _run()
    assert first == "False False False False"
    assert second == "scipy.sparse True"


def test_scipy_already_imported_is_seen_by_bm25s():
    pytest.importorskip("scipy")
    first, _, _ = _run("import scipy.sparse")
    assert first.split() == ["False", "True", "False", "True"]
