"""``distilled-modernbert``: the paper's Distilled-Voyage-ModernBERT family, a cross-encoder
student trained with ``statbench distill``. No trained student is published, so there is no
hub default: ``--reranker-param model=DIR`` names a distillation's output folder (or its
``model/`` subfolder); without one the error says how to produce it."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from statbench.api import Reranker, StatbenchError
from statbench.models.cross_encoders.cross_encoder import CE_PARAMS, CrossEncoderReranker
from statbench.models.shared.specs import with_defaults

HOW = ("train one with `statbench distill --task ukstat --teacher voyage-rerank --queries FILE "
       "--student nomic-ai/modernbert-embed-base --output DIR`, then pass --reranker-param model=DIR")


def student_folder(value: str) -> str:
    """The student checkpoint of a distillation folder ``value`` (or ``value`` itself when
    it is the checkpoint); a one-line error saying how to make one when there is none."""
    if not value:
        raise StatbenchError(f"distilled-modernbert: no distilled student given; {HOW}")
    path = Path(value).expanduser()
    for folder in (path / "model", path):
        if (folder / "config.json").is_file():
            return str(folder)
    raise StatbenchError(f"distilled-modernbert: {path} holds no distilled student (no config.json in it or in "
                         f"its model/ folder); {HOW}")


class DistilledStudentReranker(CrossEncoderReranker):
    name = "distilled-modernbert"
    description = ("Distilled ModernBERT cross-encoder student (ukstat-2025's Distilled-Voyage-ModernBERT), "
                   "trained with `statbench distill` (model=DISTILL_OUTPUT)")
    default_params: ClassVar[dict] = with_defaults(CE_PARAMS, max_length=2048, batch_size=4)

    def __init__(self, **params):
        Reranker.__init__(self, **params)  # not _PairScorer's: its preset check would word the error otherwise
        self.params["model"] = student_folder(self.params["model"])
        self.stats = {}
        self._model = None
