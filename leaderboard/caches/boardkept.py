"""What one board's build keeps for the next (:mod:`.rowviews`, :mod:`.fragments`, the
overview's cells): one file per board (named by the board's slug and results folder) under
``$STATBENCH_CACHE``, framed with the sha256 of its payload and verified on read (a damaged or
edited file is not used); entries keyed by the sha256 of all they are made of and the site's
code digest; a build keeps only the entries it used."""

from __future__ import annotations

import hashlib
import io
import pickle
from pathlib import Path

import orjson

from statbench.storage.cache_files import read_framed, write_framed
from statbench.storage.paths import cache_root


def canonical_pickle(value) -> bytes:
    """``value`` pickled without the memo: equal values (of the same types, dicts in the same
    order) give the same bytes however their objects are shared. With the memo, a view made
    fresh (its strings shared through interning) and the same view read back from a cache
    pickled differently, and a rebuild rendered again every row it had not changed."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo: a shared object is written again, never referenced
    pickler.dump(value)
    return buffer.getvalue()


class KeptPerBoard:
    """The kept entries of one board: ``known`` as read, ``used`` by this build (saved)."""

    folder: str  #: under $STATBENCH_CACHE
    suffix: str  #: of the board's file
    magic: bytes  #: the file's first line

    def __init__(self, board: str, code: str, root: Path | None = None):
        name = hashlib.sha256(board.encode()).hexdigest()[:32]
        self.file = (cache_root() / self.folder if root is None else Path(root)) / f"{name}{self.suffix}"
        self.code = code
        self.known: dict = self.read()
        self.used: dict = {}

    def digest(self, *parts) -> str:
        """The key of what ``parts`` make. Pickled (:func:`canonical_pickle`): a faithful encoding
        (two different values never give the same bytes) and 20 times faster than sorted JSON,
        which was a tenth of a rebuild."""
        return hashlib.sha256(self.code.encode() + b"\0" + canonical_pickle(parts)).hexdigest()

    def read(self) -> dict:
        """The entries kept in the board's file, {} when it is absent or does not verify."""
        raise NotImplementedError

    def payload(self) -> bytes:
        """``used``, as the board's file holds it."""
        raise NotImplementedError

    def save(self) -> None:
        """Keep the entries this build used (only if they are not what is kept already)."""
        if self.used != self.known:
            write_framed(self.file, self.magic, self.payload())


class KeptMarkup(KeptPerBoard):
    """Kept markup (key -> HTML), as JSON: reading a cache file runs no code."""

    def read(self) -> dict:
        found = read_framed(self.magic, self.file)
        try:
            known = orjson.loads(found[1]) if found is not None else {}
        except orjson.JSONDecodeError:
            known = {}
        return known if isinstance(known, dict) else {}

    def payload(self) -> bytes:
        return orjson.dumps(self.used, option=orjson.OPT_SORT_KEYS)
