"""Verification of a board's rows: each row's run file re-scored against the task's
judgements on the same data version, every figure it claims compared with the re-scored one.

A row is **verified** when its run file hashes to what its results record, the local task
data is the version it was scored on (data checksum, loader version, pool checksum, the
measures' definitions) and every figure it claims (aggregate mean and std, each split's
scores and size, the pooled means, each query's scores, each breakdown) equals the
re-scored one to 1e-9. It is **unverifiable** when that cannot be done here (no run file;
no local data, or data of another version) and **refused** when a figure differs or the run
file is not the run the results name: one line names the file, the measure, the split or
query, the claimed and the re-scored figure.

Re-scoring is ``statbench evaluate``'s own code (:func:`~statbench.scoring.evaluate_file.
evaluate_run_file`). The re-scored figures are cached (:func:`~statbench.storage.keys.
verification_entry`: run sha256, data checksum, measures, splits, evaluation code version),
never the verdict: claims are compared again on every build, so a rebuild re-scores only
new or changed run files, and an edited results file is still caught."""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import json
import logging
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Literal

from statbench.errors import StatbenchError

VerificationStatus = Literal["verified", "unverifiable", "refused"]

#: figures equal to this (absolute and relative): float summation order only
TOLERANCE = 1e-9
#: the file holding the re-scored figures in a verification cache entry
SCORES_FILE = "scores.json"


@dataclass(frozen=True)
class Verification:
    """What ``leaderboard build --verify`` found for one row."""

    status: VerificationStatus
    #: one line: why a row is unverifiable or refused (``None`` when verified)
    reason: str | None = None
    #: ISO date the row was verified on
    verified_on: str | None = None
    #: the statbench version that verified it
    statbench_version: str | None = None


@dataclass
class _LocalTask:
    """What verification needs of a task's local data (loaded once per build)."""

    name: str
    data_dir: Path | None
    checksum: str | None = None
    version: str = "1"
    measures: tuple = ()
    data_folder: Path | None = None
    #: why the task cannot verify anything here (not installed, no data)
    problem: str | None = None


@dataclass
class Verifier:
    """Verifies rows (:meth:`verify`) against the local task data: ``data_dirs`` maps a task
    name to its data folder (a task not named uses its default folder). Counts what it did
    (``rescored``, ``cache_hits``) and keeps every outcome (``outcomes``) for the report.
    ``allow_unverified``: whether unverifiable rows are shown (badged) or left off."""

    data_dirs: Mapping[str, Path] = field(default_factory=dict)
    allow_unverified: bool = False
    today: str = field(default_factory=lambda: _dt.date.today().isoformat())
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("statbench.leaderboard.verify"))
    rescored: int = 0
    cache_hits: int = 0
    outcomes: list[tuple[Path, Verification]] = field(default_factory=list)
    _tasks: dict[str, _LocalTask] = field(default_factory=dict)

    # --- the report --------------------------------------------------------------------

    def count(self, status: VerificationStatus) -> int:
        return sum(v.status == status for _, v in self.outcomes)

    def lines(self, status: VerificationStatus) -> list[str]:
        """The reason of every row with ``status``, one line each."""
        return [v.reason or str(path) for path, v in self.outcomes if v.status == status]

    def summary(self) -> str:
        unverifiable = self.count("unverifiable")
        shown = "shown, badged" if self.allow_unverified else "not shown: --allow-unverified shows them"
        return (f"verification: {self.count('verified')} verified, {unverifiable} unverifiable"
                f"{f' ({shown})' if unverifiable else ''}, {self.count('refused')} refused (not published); "
                f"{self.rescored} re-scored, {self.cache_hits} from the verification cache")

    # --- one row -----------------------------------------------------------------------

    def verify(self, results, results_path: Path, run_path: Path | None = None) -> Verification:
        """The verdict on ``results`` (a :class:`~statbench.results.record.Results` read from
        ``results_path``); ``run_path``: its run file (plain or gzipped), else the one its
        ``run_file.path`` names beside it (or that name plus ``.gz``)."""
        verdict = self._verify(results, Path(results_path), run_path)
        self.outcomes.append((Path(results_path), verdict))
        return verdict

    def _verify(self, results, results_path: Path, run_path: Path | None) -> Verification:
        where = str(results_path)
        run_path = run_path if run_path is not None else find_run_file(results_path, results.run_file.path)
        if run_path is None or not Path(run_path).is_file():
            return self._unverifiable(f"{where}: no run file (run_file.path {results.run_file.path!r} not found "
                                      "beside it), so its figures cannot be re-scored")
        local = self._local(results.task.name)
        if local.problem is not None:
            return self._unverifiable(f"{where}: {local.problem}")
        other = _other_version(results, local)
        if other is not None:
            return self._unverifiable(f"{where}: {other}")
        from statbench.errors import StatbenchError

        with tempfile.TemporaryDirectory(prefix="statbench-verify-") as tmp:
            try:
                plain, sha = _plain_run(Path(run_path), Path(tmp))
            except (OSError, StatbenchError) as exc:
                return self._refused(f"{where}: its run file cannot be read: {_first_line(exc)}")
            if sha != results.run_file.sha256:
                return self._refused(f"{where}: run file {run_path} does not hash to run_file.sha256 (claimed "
                                     f"{results.run_file.sha256[:12]}…, the file {sha[:12]}…): it is not the run "
                                     "these figures were scored from")
            try:
                rescored = self._rescored(results, local, plain, sha)
            except StatbenchError as exc:  # e.g. a run of another task, a split these data lack
                return self._refused(f"{where}: its run file could not be re-scored: {_first_line(exc)}")
        differences = compare_figures(results, rescored)
        if differences:
            more = f" (and {len(differences) - 1} more figure(s) differ)" if len(differences) > 1 else ""
            return self._refused(f"{where}: {differences[0]}{more}")
        from statbench import __version__

        return Verification("verified", None, self.today, __version__)

    def _unverifiable(self, reason: str) -> Verification:
        return Verification("unverifiable", reason)

    def _refused(self, reason: str) -> Verification:
        return Verification("refused", reason)

    # --- the local data and the re-scoring -----------------------------------------------

    def _local(self, task_name: str) -> _LocalTask:
        """The task's local data (its checksum, loader version, measures), loaded once. A
        task not installed, or whose default data folder has no data, verifies nothing; a
        data folder named with ``--data-dir`` that fails to load stops the build."""
        if task_name in self._tasks:
            return self._tasks[task_name]
        from statbench.errors import StatbenchError
        from statbench.loading.load import load_task, start_task
        from statbench.registry.plugins import get_registry

        given = self.data_dirs.get(task_name)
        local = _LocalTask(task_name, Path(given) if given is not None else None)
        entry = get_registry().tasks.get(task_name)
        if entry is None:
            local.problem = f"task {task_name!r} is not installed here, so its judgements are not at hand"
        else:
            info = entry.cls.task_info()
            local.version, local.measures = info.version or "1", tuple(info.measures)
            try:
                task = start_task(entry)
                loaded = load_task(entry, local.data_dir, self.log, task=task, summary=True)
                local.checksum = loaded.checksum
                local.data_folder = task.data_folder(local.data_dir)
            except StatbenchError as exc:
                if given is not None:
                    raise
                local.problem = f"no local data of task {task_name} (give --data-dir {task_name}=DIR): {_first_line(exc)}"
        self._tasks[task_name] = local
        return local

    def _rescored(self, results, local: _LocalTask, plain_run: Path, sha: str):
        """The run's figures re-scored on the local data, from the verification cache when
        this run was scored on these data, measures and splits by this evaluation code."""
        from statbench.results.record import EvaluatedRun, parse_strict
        from statbench.storage.cache import cached
        from statbench.storage.keys import verification_entry

        split_names = [s.name for s in results.splits]
        entry = verification_entry(local.name, local.version, sha, local.checksum, local.measures, split_names,
                                   evaluation_version=evaluation_version(), required=(SCORES_FILE,))
        built = []

        def build(staging: Path) -> None:
            from statbench.scoring.evaluate_file import evaluate_run_file

            scores = evaluate_run_file(plain_run, local.name, local.data_dir, split_names, self.log)
            (staging / SCORES_FILE).write_text(json.dumps(scores.to_json(), ensure_ascii=False), encoding="utf-8")
            built.append(True)

        cached(entry, build)
        if built:
            self.rescored += 1
        else:
            self.cache_hits += 1
        return EvaluatedRun.from_json(parse_strict(entry.read_bytes(SCORES_FILE).decode("utf-8")))


def verifier_from_options(data_dirs, allow_unverified: bool) -> Verifier:
    """The :class:`Verifier` of the ``--data-dir TASK=DIR`` and ``--allow-unverified`` options
    (``leaderboard build --verify``, ``leaderboard check``, ``leaderboard export --verify``)."""
    dirs: dict[str, Path] = {}
    for text in data_dirs:
        task, eq, folder = text.partition("=")
        if not eq or not task or not folder:
            raise StatbenchError(f"--data-dir {text!r}: expected TASK=DIR (e.g. stard=../data/stard)")
        if task in dirs:
            raise StatbenchError(f"--data-dir: task {task!r} is given twice")
        dirs[task] = Path(folder)
    return Verifier(data_dirs=dirs, allow_unverified=allow_unverified)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def evaluation_version() -> str:
    """The version of the code that re-scores a run: statbench's evaluation code (every
    module ``statbench evaluate``'s scoring imports, by source) and ir-measures."""
    import ir_measures

    from statbench.scoring import evaluate_file
    from statbench.storage.keys import code_version

    return f"{code_version(evaluate_file)}+ir_measures-{ir_measures.__version__}"


def find_run_file(results_path: Path, name: str) -> Path | None:
    """The run file a results file names (``run_file.path``, relative to it), or that name
    plus ``.gz`` (a results repository keeps it gzipped); only a regular file inside the
    results file's folder (no absolute path, no ``..``, no link out of it)."""
    if not name or "\x00" in name or PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute() \
            or PureWindowsPath(name).drive or name.startswith(("/", "\\")):
        return None
    folder = Path(results_path).parent.resolve()
    for candidate in (folder / name, folder / f"{name}.gz"):
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if resolved.is_relative_to(folder) and resolved.is_file():
            return resolved
    return None


def _plain_run(path: Path, tmp: Path) -> tuple[Path, str]:
    """The run as a plain file (a gzipped one is decompressed into ``tmp``) and the sha256 of
    its uncompressed bytes (what ``run_file.sha256`` records)."""
    from statbench.data.checksum import file_sha256
    from statbench.errors import DataFormatError

    with open(path, "rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    if not gzipped:
        return path, file_sha256(path)
    plain = tmp / "run.trec"
    digest = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                dst.write(chunk)
    except (OSError, EOFError) as exc:
        raise DataFormatError(path, f"not a readable gzip file ({exc})") from None
    return plain, digest.hexdigest()


def _other_version(results, local: _LocalTask) -> str | None:
    """Why the local data is not the version ``results`` were scored on (None when it is)."""
    task = results.task
    if task.data_checksum != local.checksum:
        return (f"scored on other data of task {task.name} (data checksum {task.data_checksum[:12]}…, the local "
                f"data's {str(local.checksum)[:12]}…): no local data of that version")
    if (task.version or "1") != local.version:
        return f"scored by version {task.version} of the {task.name} loader; this statbench has version {local.version}"
    defined = {m.label: m.ir_measure for m in local.measures}
    for m in results.measures:
        if m.label not in defined:
            return f"measure {m.label!r} is not a measure of task {task.name} here"
        if defined[m.label] != m.ir_measure:
            return f"measure {m.label!r} is {m.ir_measure} in the results but {defined[m.label]} here"
    if results.pool is not None and results.pool_sha256 is not None:
        from statbench.data.checksum import file_sha256
        from statbench.loading.pools import pool_files

        path = pool_files(task.name, local.data_folder).get(results.pool)
        if path is None:
            return (f"pool {results.pool!r} of task {task.name} is not here (statbench pool build, or the data "
                    "folder's pools/), so it cannot be told to be the pool reranked")
        if file_sha256(path) != results.pool_sha256:
            return (f"pool {results.pool!r} here ({path}) is another version (sha256 {results.pool_sha256[:12]}… in "
                    "the results)")
    return None


# --- the comparison --------------------------------------------------------------------------


def _same(a, b) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _fmt(value) -> str:
    return "absent" if value is None else repr(value)


def compare_figures(claimed, rescored) -> list[str]:
    """Every figure of ``claimed`` (a results record) that differs from ``rescored`` (an
    :class:`~statbench.results.record.EvaluatedRun` of its run file), one line each, most
    specific first: the splits' queries, each query's scores, each split's scores, the
    pooled means, the aggregate, the breakdowns."""
    out: list[str] = []
    labels = claimed.labels
    mine = {s.name: s for s in rescored.splits}
    for split in claimed.splits:
        other = mine.get(split.name)
        if other is None:
            out.append(f"split {split.name}: not a split of the re-scored run")
            continue
        if split.n_queries != other.n_queries:
            out.append(f"split {split.name}: claimed {split.n_queries} queries, re-scored {other.n_queries}")
        if split.query_ids is not None and other.query_ids is not None and list(split.query_ids) != list(other.query_ids):
            out.append(f"split {split.name}: the query ids claimed are not the split's")
        if split.queries_without_results is not None and other.queries_without_results is not None \
                and split.queries_without_results != other.queries_without_results:
            out.append(f"split {split.name}: claimed {split.queries_without_results} queries without results, "
                       f"re-scored {other.queries_without_results}")
    extra = sorted(set(claimed.per_query) - set(rescored.per_query))
    if extra:
        out.append(f"query {extra[0]}: scored in the results but not an evaluated query of the run "
                   f"({len(extra)} such)")
    lacking = sorted(set(rescored.per_query) - set(claimed.per_query))
    if lacking and claimed.per_query:
        out.append(f"query {lacking[0]}: evaluated but without scores in the results ({len(lacking)} such)")
    for qid, scores in claimed.per_query.items():
        again = rescored.per_query.get(qid)
        if again is None:
            continue
        out.extend(_differ(scores, again, labels, f"query {qid}"))
    for split in claimed.splits:
        if split.name in mine:
            out.extend(_differ(split.scores, mine[split.name].scores, labels, f"split {split.name}"))
    if claimed.all_queries is not None:
        out.extend(_differ(claimed.all_queries, rescored.all_queries or {}, labels, "all queries (pooled)"))
    for label, agg in claimed.aggregate.items():
        again = rescored.aggregate.get(label)
        if again is None:
            out.append(f"{label} aggregate: claimed, but not re-scored")
            continue
        if not _same(agg.mean, again.mean):
            out.append(f"{label} mean over splits: claimed {agg.mean!r}, re-scored {again.mean!r}")
        if not _same(agg.std, again.std):
            out.append(f"{label} std over splits: claimed {agg.std!r}, re-scored {again.std!r}")
    mine_groups = rescored.breakdown or {}
    for group, values in (claimed.breakdown or {}).items():
        for value, scores in values.items():
            out.extend(_differ(scores, mine_groups.get(group, {}).get(value, {}), labels,
                               f"breakdown {group}={value}"))
    return out


def _differ(claimed: Mapping[str, float], rescored: Mapping[str, float], labels, where: str) -> list[str]:
    out = []
    for label in sorted(claimed, key=lambda m: (labels.index(m) if m in labels else len(labels), m)):
        value, again = claimed[label], rescored.get(label)
        if again is None or not _same(value, again):
            out.append(f"{label} on {where}: claimed {_fmt(value)}, re-scored {_fmt(again)}")
    return out

