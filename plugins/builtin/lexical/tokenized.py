"""A tokenised corpus in compact form: every document's term ids in one int32 array.

``terms`` lists the index terms by id in order of first occurrence in the corpus (the
order in which QL and TF-IDF number their vocabularies, so they use the ids as they
are); ``offsets[i]:offsets[i + 1]`` are document i's positions in ``ids``. This is what
analysis workers send back and what the ``tokens`` cache entry holds: a few arrays
instead of millions of small string objects to pickle, send and rebuild (numpy is
imported where used: the plugins load without it)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, eq=False)
class TokenizedCorpus:
    terms: list[str]
    ids: np.ndarray  # int32, concatenated term ids of every document
    offsets: np.ndarray  # int64, len(documents) + 1

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        """Terms per document (int64)."""
        import numpy as np

        return np.diff(self.offsets)

    def doc_of_token(self) -> np.ndarray:
        """The document index of each position of ``ids`` (int32)."""
        import numpy as np

        return np.repeat(np.arange(len(self), dtype=np.int32), self.lengths())

    def lists(self) -> list[list[str]]:
        """Every document's terms as a list of strings (the terms' own string objects)."""
        import numpy as np

        if not len(self.ids):
            return [[] for _ in range(len(self))]
        flat = np.array(self.terms, dtype=object)[self.ids].tolist()
        bounds = self.offsets.tolist()
        return [flat[start:end] for start, end in zip(bounds, bounds[1:])]

    def save(self, path: Path) -> None:
        with open(path, "wb") as handle:
            pickle.dump((self.terms, self.ids, self.offsets), handle, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls, path: Path) -> "TokenizedCorpus":
        with open(path, "rb") as handle:
            terms, ids, offsets = pickle.load(handle)
        corpus = cls(terms, ids, offsets)
        corpus.check()
        return corpus

    def check(self) -> None:
        """Refuse arrays that do not describe a corpus (a bug, never silently used)."""
        import numpy as np

        ok = (self.ids.dtype == np.int32 and self.offsets.dtype == np.int64 and len(self.offsets) >= 1
              and self.offsets[0] == 0 and self.offsets[-1] == len(self.ids)
              and bool(np.all(np.diff(self.offsets) >= 0))
              and (not len(self.ids) or (int(self.ids.min()) >= 0 and int(self.ids.max()) < len(self.terms))))
        if not ok:
            raise ValueError("a tokenised corpus whose ids, offsets and terms disagree")
