"""Text analysis in blocks, shared by :func:`statbench.models.lexical.analysis.analyse_texts` and
its worker processes, and the workers themselves.

The corpus is cut into blocks of consecutive texts. Every process (the caller and each
worker) takes the next block nobody has claimed yet (claiming = creating the block's
file exclusively) until none is left, so a worker that starts late or shares a busier
CPU just does fewer blocks. A process numbers terms in a vocabulary of its own and
returns arrays (term ids, terms per text), not token lists; the caller merges the
vocabularies block by block in corpus order, which gives exactly the ids and terms of
analysing everything in one process.

Workers are forked (they start at once, with the texts, the segmenter's dictionary and
the stemmer already in memory) unless a module that runs native threads or a virtual
machine is loaded (a JVM, torch's thread pools: a forked child could find their locks
held). Then they are fresh interpreters, not multiprocessing children (spawning re-imports
the caller's main module): ``python -m statbench.models.lexical.analysis_worker FOLDER NUMBER``
waits for ``go`` on stdin (the caller writes the texts to FOLDER meanwhile; anything
else, e.g. the end of input of a caller that gave up, ends it), analyses, and writes its
part to FOLDER/part-NUMBER.pkl as a forked worker does."""

from __future__ import annotations

import mmap
import os
import pickle
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from statbench.api import ForkedChild

TEXTS, OFFSETS, SETUP, CLAIMS = "texts.bin", "offsets.npy", "setup.pkl", "claims"


@dataclass
class Part:
    """What one process analysed: its vocabulary, then per claimed block (in the order
    claimed, which is corpus order) the block's number, the vocabulary's size after it,
    the block's term ids and the number of terms of each of its texts."""

    terms: list[str]
    claims: list[tuple[int, int]] = field(default_factory=list)
    ids: list[np.ndarray] = field(default_factory=list)
    lengths: list[np.ndarray] = field(default_factory=list)

    def save(self, path: Path) -> None:
        empty = np.zeros(0, dtype=np.int32)
        with open(f"{path}.part", "wb") as handle:
            pickle.dump((self.terms, self.claims, np.concatenate(self.ids or [empty]),
                         np.concatenate(self.lengths or [empty.astype(np.int64)])), handle, pickle.HIGHEST_PROTOCOL)
        os.replace(f"{path}.part", path)

    @classmethod
    def load(cls, path: Path, block_texts: Callable[[int], int]) -> "Part":
        with open(path, "rb") as handle:
            terms, claims, ids, lengths = pickle.load(handle)
        part = cls(terms, claims)
        text_at = token_at = 0
        for number, _ in claims:
            count = block_texts(number)
            part.lengths.append(lengths[text_at:text_at + count])
            tokens = int(part.lengths[-1].sum())
            part.ids.append(ids[token_at:token_at + tokens])
            text_at, token_at = text_at + count, token_at + tokens
        return part


def block_size(n_texts: int, processes: int) -> int:
    """Texts per block: about 64 blocks per process, at most 256 texts each."""
    return min(256, max(1, -(-n_texts // (processes * 64))))


def claimed(folder: Path | None, n_blocks: int):
    """The blocks this process claims, in order (all of them when it works alone)."""
    for number in range(n_blocks):
        if folder is not None:
            try:
                os.close(os.open(folder / CLAIMS / str(number), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
        yield number


def analyse_blocks(analyzer, texts: Callable[[int, int], Sequence[str]], n_texts: int, block: int,
                   folder: Path | None, advance=lambda n=1: None) -> Part:
    """Analyse the blocks this process claims; ``texts(start, end)`` gives a block's texts."""
    vocabulary = analyzer.vocabulary()
    term_id, segments = vocabulary.__getitem__, analyzer.segments
    part = Part(vocabulary.terms)
    for number in claimed(folder, -(-n_texts // block)):
        chunk = texts(number * block, min(n_texts, (number + 1) * block))
        flat: list[int] = []
        ends = []
        for text in chunk:
            flat.extend(map(term_id, segments(text)))
            ends.append(len(flat))
        raw = np.array(flat, dtype=np.int32)
        kept = raw >= 0  # -1: a dropped segment (punctuation, stop word)
        ends_kept = np.concatenate(([0], np.cumsum(kept)))[ends]
        part.ids.append(raw[kept])
        part.lengths.append(np.diff(ends_kept, prepend=0))
        part.claims.append((number, len(vocabulary.terms)))
        advance(len(chunk))
    return part


def write_input(folder: Path, analyzer, texts: Sequence[str], block: int) -> None:
    """The texts as UTF-8 in one file with their byte offsets, and what the workers need."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    with open(folder / TEXTS, "wb") as handle:
        for start in range(0, len(texts), 4096):
            encoded = [text.encode("utf-8", "surrogatepass") for text in texts[start:start + 4096]]
            offsets[start + 1:start + 1 + len(encoded)] = [len(e) for e in encoded]
            handle.write(b"".join(encoded))
    np.save(folder / OFFSETS, np.cumsum(offsets))
    with open(folder / SETUP, "wb") as handle:
        pickle.dump((analyzer, len(texts), block), handle, pickle.HIGHEST_PROTOCOL)


class _Texts:
    """The texts of an input folder, decoded block by block from a memory map."""

    def __init__(self, folder: Path):
        self.offsets = np.load(folder / OFFSETS).tolist()
        with open(folder / TEXTS, "rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if self.offsets[-1] else b""

    def __call__(self, start: int, end: int) -> list[str]:
        data, offsets = self.data, self.offsets
        return [data[offsets[i]:offsets[i + 1]].decode("utf-8", "surrogatepass") for i in range(start, end)]


class Forked(ForkedChild):
    """A worker forked from this process: it analyses ``texts`` from memory."""

    def __init__(self, analyzer, texts: Sequence[str], block: int, folder: Path, number: int):
        self.err = folder / f"err-{number}"
        with warnings.catch_warnings():
            # Python >= 3.12 warns of any thread; numpy's BLAS pool is fork-safe (pthread_atfork)
            # and the modules whose threads are not make can_fork() false
            warnings.simplefilter("ignore", DeprecationWarning)
            self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            code = 1
            try:
                part = analyse_blocks(analyzer, lambda a, b: texts[a:b], len(texts), block, folder)
                part.save(folder / f"part-{number}.pkl")
                code = 0
            except BaseException:  # noqa: BLE001 - reported by the caller, from the file
                with open(self.err, "w", encoding="utf-8") as handle:
                    traceback.print_exc(file=handle)
            finally:
                os._exit(code)

    def go(self) -> None:
        pass


class Spawned:
    """A worker in a fresh interpreter: it reads the texts :func:`write_input` wrote."""

    def __init__(self, folder: Path, number: int):
        self.err = folder / f"err-{number}"
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "statbench.models.lexical.analysis_worker", str(folder),
                                          str(number)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)

    def go(self) -> None:
        try:
            self.proc.stdin.write(b"go")
            self.proc.stdin.close()
        except OSError:  # a worker that already died: its exit status tells
            pass

    def wait(self) -> int:
        return self.proc.wait()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def main() -> None:
    folder, number = Path(sys.argv[1]), sys.argv[2]
    if sys.stdin.buffer.read() != b"go":
        return
    with open(folder / SETUP, "rb") as handle:
        analyzer, n_texts, block = pickle.load(handle)
    part = analyse_blocks(analyzer, _Texts(folder), n_texts, block, folder)
    part.save(folder / f"part-{number}.pkl")


if __name__ == "__main__":
    main()
