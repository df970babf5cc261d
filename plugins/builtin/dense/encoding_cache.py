"""Corpus encodings and their exact FAISS index, cached on disk as one verified entry.

The key covers everything that changes the vectors: the encoder's identity (hub id or
local files, or a fine-tuned checkpoint), a checksum of the corpus text, and the
chunking and pooling settings. A second run with the same key loads the vectors and the
index instead of encoding again. Entries live under ``$STATBENCH_CACHE/encodings/KEY``
so that every model configuration sharing an encoder shares its encodings.

An entry (kind ``encodings``, see :mod:`statbench.storage.cache`) holds ``ids.json``,
``embeddings.npy``, one ``NAME.npy`` per extra array, ``index.faiss`` (the flat
inner-product index over the embeddings, built with them) and ``meta.json``; it is
sealed with a manifest and re-hashed on every read, and built once under a lock."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import statbench.api as api
from statbench.api import CacheEntry, Document, keyed_entry
from statbench.models.shared.artefacts import load_or_build

INDEX_FILE = "index.faiss"


def corpus_checksum(corpus: Sequence[Document], with_title: bool = False) -> str:
    """The corpus's checksum (:func:`statbench.api.corpus_checksum`: ids, titles,
    texts, fields, in order), marked when the encoder reads the title too."""
    checksum = api.corpus_checksum(corpus)
    return f"{checksum}+title" if with_title else checksum


@dataclass
class Encodings:
    """What an entry holds, in memory. ``index`` is the flat inner-product FAISS index."""

    ids: list[str]
    embeddings: Any
    meta: dict
    extra: dict = field(default_factory=dict)
    index: Any = None
    reused: bool = False


class EncodingCache:
    """The entry ``encodings/KEY`` of one encoder configuration over one corpus."""

    def __init__(self, root: Path, settings: dict):
        self.settings = settings
        self.entry = keyed_entry(Path(root) / "encodings", "encodings", settings, check=self._check)
        self.dir = self.entry.path
        self.key = self.dir.name

    def exists(self) -> bool:
        """Whether a complete, intact entry is there (it is re-hashed)."""
        return self.entry.valid()

    def get(self, encode: Callable[[], tuple[list[str], Any, dict, dict]]) -> Encodings:
        """The entry's encodings, verified; when missing or invalid, ``encode()`` returns
        ``(ids, embeddings, meta, extra arrays)``, written and sealed under the entry's
        lock (a second process waits, then reads them)."""

        def build(staging: Path) -> Encodings:
            ids, embeddings, meta, extra = encode()
            index = self._write(staging, ids, embeddings, meta, extra or {})
            return Encodings(list(ids), embeddings, {**meta, "settings": self.settings, "extra": sorted(extra or {})},
                             dict(extra or {}), index, reused=False)

        encodings, _ = load_or_build(self.entry, build, self._read)
        return encodings

    def _write(self, staging: Path, ids, embeddings, meta: dict, extra: dict):
        import faiss
        import numpy as np

        (staging / "ids.json").write_text(json.dumps(list(ids), ensure_ascii=False), "utf-8")
        np.save(staging / "embeddings.npy", embeddings)
        for name, array in extra.items():
            np.save(staging / f"{name}.npy", array)
        index = flat_ip(embeddings)
        faiss.write_index(index, str(staging / INDEX_FILE))
        (staging / "meta.json").write_text(
            json.dumps({**meta, "settings": self.settings, "extra": sorted(extra)}, ensure_ascii=False, indent=1,
                       sort_keys=True), "utf-8")
        return index

    def _check(self, entry: CacheEntry) -> str | None:
        """Whether the entry's files agree with each other and with the key (``None``): one
        vector and one index row per id, ids unique, ``meta.json`` of these settings. A
        manifest re-sealed over an edited file would otherwise map results to other ids."""
        import struct

        import numpy as np

        try:
            ids = json.loads(entry.file("ids.json").read_text("utf-8"))
            meta = json.loads(entry.file("meta.json").read_text("utf-8"))
            shape = np.load(entry.file("embeddings.npy"), mmap_mode="r", allow_pickle=False).shape
            with open(entry.file(INDEX_FILE), "rb") as handle:
                head = handle.read(16)
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            return f"unreadable encodings ({type(exc).__name__})"
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(set(ids)) != len(ids):
            return "ids.json is not a list of distinct ids"
        if not isinstance(meta, dict) or meta.get("settings") != json.loads(
                json.dumps(self.settings, sort_keys=True, ensure_ascii=False, default=str)):
            return "meta.json of another configuration"
        if len(shape) != 2 or shape[0] != len(ids):
            return f"embeddings.npy holds {shape[0] if shape else 0} vectors for {len(ids)} ids"
        if len(head) < 16 or head[:4] != b"IxFI" or struct.unpack("<i", head[4:8])[0] != shape[1] \
                or struct.unpack("<q", head[8:16])[0] != len(ids):
            return f"{INDEX_FILE} is not the flat index of the {len(ids)} vectors"
        return None

    @staticmethod
    def _read(folder: Path) -> Encodings:
        import faiss
        import numpy as np

        meta = json.loads((folder / "meta.json").read_text("utf-8"))
        ids = json.loads((folder / "ids.json").read_text("utf-8"))
        embeddings = np.load(folder / "embeddings.npy")
        extra = {name: np.load(folder / f"{name}.npy") for name in meta.get("extra", [])}
        index = faiss.read_index(str(folder / INDEX_FILE))
        return Encodings(ids, embeddings, meta, extra, index, reused=True)


def flat_ip(embeddings):
    """``faiss.IndexFlatIP`` over float32 vectors (exact maximum inner product search)."""
    import faiss
    import numpy as np

    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index
