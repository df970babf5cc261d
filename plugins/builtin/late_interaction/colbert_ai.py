"""colbert-ai 0.2.22, called the way statbench needs it: quietly, and leaving the process as it was.

colbert-ai is written for a research workspace. Importing it switches multiprocessing to
'spawn' and sets ``TOKENIZERS_PARALLELISM``; indexing reseeds ``random``/numpy/torch and sets
``CUDA_VISIBLE_DEVICES``; it prints its configuration, progress bars, transformers'
warnings and faiss's k-means log (from C); its default run root is ``./experiments``. :func:`session`
wraps every call: it captures that output into the debug log, runs colbert-ai under a
``RunConfig`` whose root is a folder we choose (``nranks=1, avoid_fork_if_possible=True``: one
process, no launcher), and restores environment variables, the multiprocessing start
method and the random generators afterwards.

Its C++ extensions (segmented MaxSim and lookup, residual decompression, pid filtering) are
compiled by torch on first use (minutes; then cached in torch's extension folder,
``~/.cache/torch_extensions``)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from statbench.api import StatbenchError

_imported = False


def version() -> str:
    from importlib.metadata import version as dist_version

    return dist_version("colbert-ai")


def _import() -> None:
    """Import colbert-ai once, undoing what its import changes in the process."""
    global _imported
    if _imported:
        return
    import multiprocessing
    import warnings

    method = multiprocessing.get_start_method(allow_none=True)
    environ = dict(os.environ)
    try:
        with warnings.catch_warnings():  # its deprecated torch calls at import time
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            import colbert  # noqa: F401  (imports the indexer's launcher, which forces 'spawn')
    except ImportError as exc:
        raise StatbenchError(f"colbertv2 needs colbert-ai ({exc}); install statbench[neural]") from None
    finally:
        multiprocessing.set_start_method(method, force=True)
        _restore_environ(environ)
    _imported = True


def _restore_environ(saved: dict) -> None:
    for key in [k for k in os.environ if k not in saved]:
        del os.environ[key]
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def _rng_state():
    import random

    import numpy as np
    import torch

    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return random.getstate(), np.random.get_state(), torch.get_rng_state(), cuda


def _set_rng_state(state) -> None:
    import random

    import numpy as np
    import torch

    random.setstate(state[0])
    np.random.set_state(state[1])
    torch.set_rng_state(state[2])
    if state[3] is not None:
        torch.cuda.set_rng_state_all(state[3])


@contextlib.contextmanager
def _captured(log) -> Iterator[None]:
    """colbert-ai's prints and tqdm bars (``sys.stdout``/``sys.stderr``), what reaches file
    descriptors 1 and 2 (transformers' warnings through handlers bound earlier, faiss's
    k-means log from C) and Python warnings go to the debug log, not the terminal."""
    import io
    import warnings

    _flush_python()
    _flush_c()  # what C code buffered before belongs to the terminal
    sink = tempfile.TemporaryFile()
    saved: dict[int, int] = {}
    for fd in (1, 2):
        try:
            saved[fd] = os.dup(fd)
        except OSError:  # not open: nothing to protect
            continue
        os.dup2(sink.fileno(), fd)
    caught: list = []
    buffer = io.StringIO()
    try:
        with warnings.catch_warnings(record=True) as recorded, \
                contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            warnings.simplefilter("always")
            caught = recorded
            yield
    finally:
        _flush_python()
        _flush_c()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        sink.seek(0)
        text = buffer.getvalue() + sink.read().decode("utf-8", "replace")
        sink.close()
        text += "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)
        for line in text.splitlines():
            if line.strip() and "\x1b[" not in line:  # a terminal progress display's redraws, not colbert-ai's
                log.debug("colbert-ai: %s", line.rstrip())


def _flush_python() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _flush_c() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


@contextlib.contextmanager
def session(log, root: Path) -> Iterator[None]:
    """Run colbert-ai calls with ``root`` as its run root (``experiments``, ``indexes``),
    its output in the debug log, and the process state restored afterwards."""
    _import()
    from colbert.infra import Run, RunConfig

    environ, rng = dict(os.environ), _rng_state()
    try:
        with _captured(log), Run().context(RunConfig(nranks=1, avoid_fork_if_possible=True, root=str(root),
                                                     experiment="statbench", name="statbench")):
            yield
    finally:
        _restore_environ(environ)
        _set_rng_state(rng)


def checkpoint_dim(path: str) -> int:
    """Rows of the checkpoint's ``linear.weight`` (the dimension of its token vectors)."""
    folder = Path(path)
    if (folder / "model.safetensors").is_file():
        from safetensors import safe_open

        with safe_open(str(folder / "model.safetensors"), "pt") as handle:
            if "linear.weight" in handle.keys():
                return int(handle.get_slice("linear.weight").get_shape()[0])
    elif (folder / "pytorch_model.bin").is_file():
        import torch

        try:
            state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError:  # a pre-zip torch file cannot be memory-mapped
            state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
        if "linear.weight" in state:
            return int(state["linear.weight"].shape[0])
    else:
        raise StatbenchError(f"{path}: no model.safetensors or pytorch_model.bin (not a ColBERT checkpoint folder)")
    raise StatbenchError(f"{path}: not a ColBERT checkpoint (no linear.weight, the projection to token vectors)")


def config(path: str, **settings):
    """colbert-ai's ``ColBERTConfig`` for the checkpoint at ``path`` (its ``dim`` read from
    the weights, so a checkpoint without ``artifact.metadata`` loads too)."""
    _import()
    from colbert.infra import ColBERTConfig

    return ColBERTConfig(checkpoint=path, dim=checkpoint_dim(path), **settings)


def load_checkpoint(path: str, log, root: Path, **settings):
    """colbert-ai's ``Checkpoint`` (its query and passage encoders) for the folder ``path``
    (``root``: colbert-ai's run root, see :func:`session`)."""
    colbert_config = config(path, **settings)
    from colbert.modeling.checkpoint import Checkpoint

    with session(log, root):
        return Checkpoint(path, colbert_config=colbert_config, verbose=0)
