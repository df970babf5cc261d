"""Committing a run file beside its results: gzipped with no name or time in its header (the
same run gives the same bytes), once its sha256 is the one results.json records, so that
``statbench leaderboard build --verify`` re-scores the committed row (it reads ``run.trec.gz``
where results.json names ``run.trec``)."""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path


def keep_gzipped(plain: Path, results: Path, target: Path) -> None:
    """``plain`` gzipped to ``target``; exits with one line if it is not the run ``results``
    was scored from."""
    data = plain.read_bytes()
    recorded = json.loads(results.read_text("utf-8"))["run_file"]["sha256"]
    if hashlib.sha256(data).hexdigest() != recorded:
        sys.exit(f"{plain}: sha256 differs from its results.json's run_file.sha256")
    with open(target, "wb") as handle, \
            gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=9) as gz:
        gz.write(data)
