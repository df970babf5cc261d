"""Training the student (ukstat-2025 §4.1.4): a sentence-transformers CrossEncoder with a
one-logit regression head, fitted to the teacher's scores with sentence-transformers'
``losses.MSELoss``.

Resumable: statbench's epoch loop (:func:`training.fit_epochs`) seals a checkpoint after
every epoch (weights, optimiser, schedule, step, every RNG state, the loss history) in a
verified cache entry keyed by the student, the data and every hyperparameter; a later run
resumes from the newest valid one, and a finished training is loaded, not repeated."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from statbench.api import RunContext, StatbenchError
from statbench.models.dense.training import Checkpoints, fit_epochs, seed_everything
from statbench.models.distillation.data import ScoredPair
from statbench.models.shared import hub

log = logging.getLogger("statbench")

#: The student the paper initialises from, and the default (ModernBERT-base itself).
PAPER_STUDENT = "nomic-ai/modernbert-embed-base"
DEFAULT_STUDENT = "answerdotai/ModernBERT-base"


@dataclass(frozen=True)
class TrainSettings:
    """Paper defaults: max length 2,048, batch 4, lr 2e-5, three epochs (fp32 here, the paper
    used mixed precision); 10% linear warm-up (the paper does not say)."""

    epochs: int = 3
    batch_size: int = 4
    lr: float = 2e-5
    max_length: int = 2048
    warmup_ratio: float = 0.1
    seed: int = 42
    device: str = "auto"

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def load_student(name: str, max_length: int, device: str, flag: str = "--student"):
    """A CrossEncoder with one output (a fresh regression head on an encoder checkpoint,
    or a cross-encoder checkpoint's own head), through the hub loader."""
    from sentence_transformers import CrossEncoder

    return hub.load(name, lambda path: CrossEncoder(path, num_labels=1, max_length=max_length,
                                                    device=hub.device(device)), flag)


def _dataset(pairs: Sequence[ScoredPair]):
    from datasets import Dataset

    return Dataset.from_dict({"query": [p.query for p in pairs], "passage": [p.passage for p in pairs],
                              "label": [float(p.score) for p in pairs]})


def train_student(student: str, train: Sequence[ScoredPair], val: Sequence[ScoredPair], settings: TrainSettings,
                  checkpoints: Checkpoints, ctx: RunContext):
    """The trained CrossEncoder and its loss history ``[{"epoch", "step", "train_loss"|"val_loss"}]``.

    The loss is sentence-transformers' ``losses.MSELoss`` on the CrossEncoder's raw output;
    the epochs run in statbench's resumable loop (:func:`training.fit_epochs`). Why not
    ``CrossEncoderTrainer``: it needs ``accelerate`` (the ``sentence-transformers[train]``
    extra), which is not a dependency here. The validation MSE is measured at the end of
    every epoch, when the epoch's checkpoint is written, and kept in the checkpoint."""
    import torch
    from sentence_transformers.cross_encoder import losses

    if not train:
        raise StatbenchError("no training pairs left after the validation share was held out")
    model = load_student(student, settings.max_length, settings.device)
    if model.config.num_labels != 1:
        raise StatbenchError(f"student {student}: a regression student needs one output, the checkpoint has "
                             f"{model.config.num_labels} labels")
    loss_fn = losses.MSELoss(model, activation_fn=torch.nn.Identity())
    history: list[dict] = []
    state = {"epoch": 0, "step": 0}
    per_epoch = max(1, math.ceil(len(train) / settings.batch_size))

    def batch_loss(batch: list[ScoredPair]):
        loss = loss_fn([[p.query for p in batch], [p.passage for p in batch]],
                       torch.tensor([p.score for p in batch], device=model.device))
        state["step"] += 1
        history.append({"epoch": round(state["step"] / per_epoch, 4), "step": state["step"],
                        "train_loss": float(loss.detach())})
        return loss

    def save_model(staging: Path) -> None:
        model.eval()
        if val:
            scores = predict(model, val, settings.batch_size)
            mse = sum((a - p.score) ** 2 for a, p in zip(scores, val)) / len(val)
            history.append({"epoch": float(round(state["step"] / per_epoch)), "step": state["step"],
                            "val_loss": float(mse)})
        model.train()
        model.save(str(staging / "student"))
        (staging / "loss_history.json").write_text(json.dumps(history), "utf-8")

    def restore_model(folder: Path) -> None:
        from safetensors.torch import load_file

        weights = load_file(str(folder / "student" / "model.safetensors"))
        model.model.load_state_dict(weights)
        history[:] = json.loads((folder / "loss_history.json").read_text("utf-8"))
        state["step"] = history[-1]["step"] if history else 0

    params = {"epochs": settings.epochs, "train_batch_size": settings.batch_size, "lr": settings.lr,
              "warmup_steps": int(settings.warmup_ratio * per_epoch * settings.epochs), "weight_decay": 0.01,
              "max_steps": 0, "seed": settings.seed}
    seed_everything(settings.seed)
    fit_epochs(label="distill", modules=[model], examples=list(train), batch_loss=batch_loss, params=params,
               checkpoints=checkpoints, save_model=save_model, restore_model=restore_model, ctx=ctx,
               progress="distill: training the student", record={"pairs": len(train)})
    return model, history


def predict(model, pairs: Sequence[ScoredPair], batch_size: int) -> list[float]:
    import torch

    if not pairs:
        return []
    scores = model.predict([(p.query, p.passage) for p in pairs], batch_size=batch_size, show_progress_bar=False,
                           activation_fn=torch.nn.Identity(), convert_to_numpy=True)
    return [float(s) for s in (scores if scores.ndim == 1 else scores[:, -1])]


def agreement(teacher: Sequence[float], student: Sequence[float]) -> dict:
    """Pearson and Spearman correlation and MSE between teacher and student scores
    (``None`` where undefined: fewer than two pairs, or constant scores)."""
    import numpy as np
    from scipy import stats

    out = {"pairs": len(teacher), "mse": None, "pearson": None, "spearman": None}
    if not teacher:
        return out
    t, s = np.asarray(teacher, float), np.asarray(student, float)
    out["mse"] = float(np.mean((t - s) ** 2))
    if len(t) >= 2 and np.ptp(t) > 0 and np.ptp(s) > 0:
        out["pearson"] = float(stats.pearsonr(t, s)[0])
        out["spearman"] = float(stats.spearmanr(t, s)[0])
    return out
