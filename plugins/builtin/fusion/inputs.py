"""The inputs of ``statbench fuse``: a TREC run file, or a statbench output folder (its
``results.json`` read as strictly as a board reads one, and its run file, ``run.trec`` or
the committed ``run.trec.gz``, checked against the sha256 the results recorded, and read
only from inside that folder: :func:`.sources.run_file_inside`).

Each input's rankings come out in the one order it is scored in: a statbench run's rank
column (no ties), a foreign run's ties put in trec_eval's order (``TIE_ORDER``), so that
ranx fuses exactly the rankings the components were scored with."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from statbench.api import DataFormatError, Ranking, StatbenchError, bytes_sha256, file_sha256, gunzip, read_run
from statbench.data.runfile import order_as_trec_eval, strictly_decreasing_at_float32
from statbench.models.fusion.sources import rankings_digest, run_file_inside
from statbench.scoring.publishable import read_publishable


@dataclass
class ComponentRun:
    """One input: its rankings (declared order), its run file's sha256 and, for an output
    folder, its strictly read results."""

    source: Path
    rankings: dict[str, Ranking]
    run_sha256: str
    results: object | None = None  # statbench.results.record.Results

    @property
    def digest(self) -> str:
        """What fusion reads of it (:func:`.sources.rankings_digest`): its identity."""
        return rankings_digest(self.rankings)

    @property
    def label(self) -> str:
        """The model (``+reranker``) as the results name it, else the file's name."""
        if self.results is None:
            return str(self.source)
        model, reranker = self.results.model, self.results.reranker
        return model.name + (f"+{reranker.name}" if reranker is not None else "")

    @property
    def budget(self) -> str | None:
        """The reduced budget its results record (first stage and reranker), ``None``: full."""
        if self.results is None:
            return None
        parts = [r.budget for r in (self.results.model, self.results.reranker) if r is not None and r.budget]
        return "; ".join(parts) or None


def read_component(source: Path) -> ComponentRun:
    """A run file or an output folder (see the module); one line for anything wrong."""
    source = Path(source)
    if source.is_dir():
        return _read_output(source)
    if not source.exists():
        raise StatbenchError(f"{source}: no such run file or output folder")
    return _read_run_file(source, source)


def _read_output(folder: Path) -> ComponentRun:
    results_path = folder / "results.json"
    if not results_path.is_file():
        raise StatbenchError(f"{folder}: not a statbench output folder (no results.json); give its run file instead")
    if not results_path.resolve().is_relative_to(folder.resolve()):
        raise StatbenchError(f"{folder}: its results.json is a link to {results_path.resolve()} outside that folder: "
                             "not read")
    results = read_publishable(results_path)
    run_path = run_file_inside(folder, results.run_file.path)
    gz_path = run_path.with_name(run_path.name + ".gz")
    if run_path.is_file():
        sha = file_sha256(run_path)
        component = _read_run_file(run_path, folder, sha)
    elif gz_path.is_file():
        component = _read_gzipped(gz_path, folder)
        sha = component.run_sha256
    else:
        raise StatbenchError(f"{folder}: its run file {results.run_file.path} (or {gz_path.name}) is missing")
    if sha != results.run_file.sha256:
        raise StatbenchError(f"{folder}: the run file's sha256 {sha[:12]} is not the one its results.json recorded "
                             f"({results.run_file.sha256[:12]}): the run and its results do not belong together")
    component.results = results
    return component


def _read_gzipped(path: Path, source: Path) -> ComponentRun:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFormatError(path, f"cannot be read ({exc.strerror or exc})") from None
    data = gunzip(raw, path)  # bounded, and a damaged file is one line
    with tempfile.TemporaryDirectory(prefix="statbench-fuse-") as tmp:
        plain = Path(tmp) / path.stem
        plain.write_bytes(data)
        return _read_run_file(plain, source, bytes_sha256(data), shown=path)


def _read_run_file(path: Path, source: Path, sha256: str | None = None, shown: Path | None = None) -> ComponentRun:
    try:
        rankings = read_run(path)
    except DataFormatError as exc:
        if shown is None:
            raise
        raise DataFormatError(shown, exc.message, exc.line, exc.field) from None
    for qid, ranking in rankings.items():
        if not strictly_decreasing_at_float32(ranking):
            rankings[qid] = order_as_trec_eval(ranking)
    return ComponentRun(source=source, rankings=rankings, run_sha256=sha256 or file_sha256(path))
