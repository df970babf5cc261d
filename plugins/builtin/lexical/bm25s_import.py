"""bm25s, imported without the optional libraries it tries at import time.

``import bm25s`` tries numba (its ``backend="numba"`` and JIT top-k) and scipy (its
``csc_backend="scipy"``) and keeps whichever it finds. statbench uses neither: the index is
built from the cached term ids (bm25_index.py), queries are scored from the index's arrays
(``BM25._rank``), and bm25s's defaults are the numpy backends. Importing numba (and the LLVM
it loads) and scipy would cost a cold run ~0.3 s and ~75 MiB for nothing, so while bm25s is
imported both read as not installed, unless something in this process imported them already
(then bm25s sees them as before). Scores are the same either way: bm25s's numpy code paths,
which statbench calls, do not depend on what it found.
"""

from __future__ import annotations

import sys

#: the optional imports bm25s tries at import (``try: import ...; except ImportError``)
SKIPPED = ("numba", "scipy")


def import_bm25s():
    """The ``bm25s`` module (imported once; see the module docstring)."""
    if "bm25s" in sys.modules:
        return sys.modules["bm25s"]
    hidden = [name for name in SKIPPED if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # `import name` raises ImportError while this is here
    try:
        import bm25s
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
    return bm25s
