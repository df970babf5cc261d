"""``statbench distill``: train a student cross-encoder on a teacher reranker's scores
(see :mod:`statbench.models.distillation.distill` and docs/distill.md).

Registered by :mod:`.plugin`, through the ``register_commands`` hook like a third party's command."""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

import click

from statbench.models.shared.specs import DEVICE
from statbench.terminal.console import make_console, progress_bars

log = logging.getLogger("statbench")


@click.command()
@click.option("--task", required=True, help="Task whose corpus is used (its evaluation material is excluded).")
@click.option("--teacher", required=True, help="Teacher: any registered reranker (see `statbench list models`).")
@click.option("--teacher-param", "teacher_params", multiple=True, metavar="KEY=VALUE", help="Teacher parameter; repeatable.")
@click.option("--queries", type=click.Path(dir_okay=False, path_type=Path),
              help="Training queries, JSON lines {qid, query, instrument?, passages?}; each names its anchor.")
@click.option("--generate", type=click.IntRange(min=0), default=0, show_default=True,
              help="Generate this many training queries with doc2query from training passages.")
@click.option("--generator", default=None, help="doc2query model for --generate [default: doc2query/msmarco-t5-base-v1].")
@click.option("--retriever", default="bm25", show_default=True, help="First stage giving each training query its candidates.")
@click.option("--retriever-param", "retriever_params", multiple=True, metavar="KEY=VALUE", help="First-stage parameter.")
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Candidates scored per query.")
@click.option("--student", default=None,
              help="Student checkpoint: hub id or folder [default: answerdotai/ModernBERT-base; the paper's: "
                   "nomic-ai/modernbert-embed-base].")
@click.option("--epochs", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=2e-5, show_default=True)
@click.option("--max-length", type=click.IntRange(min=8), default=2048, show_default=True,
              help="Tokens of a (query, passage) pair the student reads.")
@click.option("--val-share", type=click.FloatRange(0, 0.9), default=0.1, show_default=True,
              help="Share of training queries held out for validation.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=42, show_default=True)
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda, cuda:N or mps.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Folder holding the task's files.")
@click.option("--output", required=True, type=click.Path(path_type=Path), help="Folder written (replaced as a unit).")
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
def distill(task, teacher, teacher_params, queries, generate, generator, retriever, retriever_params, depth, student,
            epochs, batch_size, lr, max_length, val_share, seed, device, data_dir, output, progress):
    """Distil TEACHER's scores into a student cross-encoder (ukstat-2025, section 4.1)."""
    # the command body's own: `statbench --help` imports this module, not the machinery behind the command
    from statbench.models.distillation.distill import DEFAULT_GENERATOR, DistillRequest
    from statbench.models.distillation.distill import distill as run_distill
    from statbench.models.distillation.train import DEFAULT_STUDENT, TrainSettings
    from statbench.run.request import parse_model_params

    request = DistillRequest(
        task=task, teacher=teacher, output=output,
        teacher_params=parse_model_params("rerankers", teacher, teacher_params),
        queries=queries, generate=generate, generator=generator or DEFAULT_GENERATOR,
        retriever=retriever, retriever_params=parse_model_params("retrievers", retriever, retriever_params),
        depth=depth, student=student or DEFAULT_STUDENT, val_share=val_share, data_dir=data_dir,
        settings=TrainSettings(epochs=epochs, batch_size=batch_size, lr=lr, max_length=max_length, seed=seed,
                               device=DEVICE.coerce(device, "device", "--device")),
        command=shlex.join(["statbench", *sys.argv[1:]]) if sys.argv[1:2] == ["distill"] else "",
    )
    console = make_console()
    with progress_bars(console, enabled=progress and console.is_terminal) as bars:
        report = run_distill(request, log, bars)
    pairs, val = report["pairs"], report["agreement"]["val"]
    console.print(f"distilled {report['teacher']['name']} into {output / 'model'}: {pairs['train']} training and "
                  f"{pairs['val']} validation pairs ({pairs['duplicates_dropped']} duplicates dropped)")
    shown = ", ".join(f"{name} {val[name]:.4f}" for name in ("pearson", "spearman", "mse") if val[name] is not None)
    console.print(f"teacher-student agreement on validation: {shown or 'undefined (too few or constant scores)'}")
    console.print(f"use it: --reranker cross-encoder --reranker-param model={output / 'model'}")

