"""Corpus encodings (and their exact FAISS index) cached on disk.

The key covers everything that changes the vectors: the encoder's identity (hub id or
local files, or a fine-tuned checkpoint), a checksum of the corpus text, and the
chunking and pooling settings. A second run with the same key loads the vectors and the
index instead of encoding again. Entries live under ``$STATBENCH_CACHE/encodings/KEY``
so that every model configuration sharing an encoder shares its encodings."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Sequence

from statbench.api import Document
from statbench.atomic import write_json
from statbench.checksum import config_key


def corpus_checksum(corpus: Sequence[Document], with_title: bool = False) -> str:
    """sha256 over the ids and the text the encoder sees, in corpus order."""
    digest = hashlib.sha256()
    for doc in corpus:
        digest.update(doc.id.encode())
        digest.update(b"\0")
        if with_title:
            digest.update(doc.title.encode())
            digest.update(b"\0")
        digest.update(doc.text.encode())
        digest.update(b"\1")
    return digest.hexdigest()


class EncodingCache:
    """One cache entry: ``ids.json``, ``embeddings.npy``, optional ``index.faiss``, ``meta.json``."""

    def __init__(self, root: Path, settings: dict):
        self.settings = settings
        self.key = config_key(settings)
        self.dir = Path(root) / "encodings" / self.key

    def exists(self) -> bool:
        return (self.dir / "meta.json").is_file()

    def load(self):
        """``(ids, embeddings, extra arrays dict, meta)`` of a complete entry."""
        import numpy as np

        meta = json.loads((self.dir / "meta.json").read_text("utf-8"))
        ids = json.loads((self.dir / "ids.json").read_text("utf-8"))
        embeddings = np.load(self.dir / "embeddings.npy", mmap_mode=None)
        extra = {name: np.load(self.dir / f"{name}.npy") for name in meta.get("extra", [])}
        return ids, embeddings, extra, meta

    def save(self, ids: list[str], embeddings, meta: dict, extra: dict | None = None) -> None:
        """Write into a temporary folder, then rename: a crash never leaves half an entry."""
        import numpy as np

        extra = extra or {}
        tmp = self.dir.with_name(self.dir.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        (tmp / "ids.json").write_text(json.dumps(ids, ensure_ascii=False), "utf-8")
        np.save(tmp / "embeddings.npy", embeddings)
        for name, array in extra.items():
            np.save(tmp / f"{name}.npy", array)
        write_json(tmp / "meta.json", {**meta, "settings": self.settings, "extra": sorted(extra)})
        shutil.rmtree(self.dir, ignore_errors=True)
        tmp.replace(self.dir)

    def flat_index(self, embeddings):
        """The exact inner-product FAISS index of ``embeddings``, read from disk when saved."""
        import faiss

        path = self.dir / "index.faiss"
        if path.is_file():
            index = faiss.read_index(str(path))
            if index.ntotal == len(embeddings):
                return index
        index = flat_ip(embeddings)
        if self.dir.is_dir():
            tmp = path.with_name(".index.faiss.tmp")
            faiss.write_index(index, str(tmp))
            tmp.replace(path)
        return index


def flat_ip(embeddings):
    """``faiss.IndexFlatIP`` over float32 vectors (exact maximum inner product search)."""
    import faiss
    import numpy as np

    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index
