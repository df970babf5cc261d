"""colbert-ai's C++ extensions, compiled in the background when a parallel test run starts.

colbert-ai compiles four extensions with torch on first use (about 2 minutes of one CPU on a
fresh machine; then cached in torch's extension folder). Every test that loads a ColBERT
checkpoint or searches a PLAID index needs them, and torch lets one process build while the
others wait on its lock: on pytest-xdist, one worker would compile while another sat idle.
So one worker starts the build in a process of its own as soon as it has collected a test
about ColBERT, and the tests run meanwhile; the build goes through colbert-ai's own loaders,
so it is exactly the build those tests would have made (a later load finds it up to date).
A build that fails is not hidden: the first test that loads the extension builds again and
fails there with the compiler's message."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

#: colbert-ai's own loaders for the CPU (the ones its checkpoint, index storage and strided
#: tensors call), in a process of their own: importing colbert-ai changes the importing
#: process (multiprocessing start method, environment), which the tests check statbench undoes.
BUILD = """
import warnings
warnings.simplefilter("ignore")
from colbert.modeling.colbert import ColBERT
from colbert.search.index_storage import IndexScorer
from colbert.search.strided_tensor import StridedTensor
for owner in (ColBERT, StridedTensor, IndexScorer):
    owner.try_load_torch_extensions(use_gpu=False)
"""


def wanted(nodeids) -> bool:
    """Whether colbert-ai is installed and one of the collected tests is about ColBERT."""
    return any("colbert" in nodeid.lower() for nodeid in nodeids) and importlib.util.find_spec("colbert") is not None


def start_build() -> subprocess.Popen:
    """The build, started in the background (wait for it before the session ends: killed
    half-way, it would leave torch's lock behind and the next load would wait forever)."""
    return subprocess.Popen([sys.executable, "-c", BUILD], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
