"""Verification of a board's rows: each row's run file re-scored against the task's
judgements on the same data version, every figure it claims compared with the re-scored one.

A row is **verified** when its run file hashes to what its results record, the local task
data is the version it was scored on (data checksum, loader version, pool checksum, the
measures' definitions) and every figure it claims (aggregate mean and std, each split's
scores and size, the pooled means, each query's scores, each breakdown) equals the
re-scored one to 1e-9, and every other claim it makes that can be checked holds (its data
facts, its run within the corpus and the pool it claims, its recorded command, its
efficiency figures against the splits: :mod:`.claims`); what cannot be checked is listed as
declared (:attr:`Verification.declared`). It is **unverifiable** when that cannot be done
here (no run file; no local data, or data of another version) and **refused** when a figure
differs, another claim is false or the run file is not the run the results name: one line
names the file, the measure, the split or query, the claimed and the re-scored figure (or
the claim, and what the data, the run or the command say).

Re-scoring is ``statbench evaluate``'s own code (:func:`~statbench.scoring.evaluate_file.
evaluate_rankings`, what ``evaluate_run_file`` scores with), against each task loaded once
per build: its data files are hashed once (their checksums key the cached summary that
gives the data checksum), its judgements and document ids read once, on the first row that
must be re-scored. The re-scored figures are cached (:func:`~statbench.storage.keys.
verification_entry`: run sha256, data checksum, measures, splits, evaluation code version),
never the verdict: claims are compared again on every build, so a rebuild re-scores only
new or changed run files (a build whose every row is cached reads no corpus and parses no
run), and an edited results file is still caught.

A build names the folder it verifies (``ahead``): on the first row that must be re-scored,
the other rows of that folder are re-scored into the cache ahead, by worker processes on
every core (:func:`_rescore_ahead_in_worker`); each row is then verified as before, from
the cache. A row the workers could not re-score (any error) is re-scored in the build's
own process, which says why."""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Literal

from statbench import __version__
from statbench.data.checksum import file_sha256
from statbench.data.gunzip import gunzip
from statbench.data.runfile import read_run
from statbench.errors import StatbenchError
from statbench.leaderboard.verify import claims
from statbench.leaderboard.verify.claims import FACTS_FILE, RunFacts
from statbench.loading.load import load_task, start_task
from statbench.loading.pools import pool_files
from statbench.registry.plugins import get_registry
from statbench.results.record import EvaluatedRun, parse_strict
from statbench.run.processes import usable_cpus
from statbench.scoring import evaluate_file
from statbench.scoring.evaluate_file import ScoringTask, evaluate_rankings
from statbench.storage.cache import cached
from statbench.storage.keys import code_version, verification_entry

VerificationStatus = Literal["verified", "unverifiable", "refused"]

#: figures equal to this (absolute and relative): float summation order only
TOLERANCE = 1e-9
#: the file holding the re-scored figures in a verification cache entry
SCORES_FILE = "scores.json"
#: the fewest rows to re-score ahead that are worth starting worker processes for
AHEAD_MIN_ROWS = 32


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
    #: what a verified row's badge covers, checked against the data, the run and the
    #: command (words of :mod:`.claims`: "figures", "data facts", "run within corpus", ...)
    checked: tuple[str, ...] = ()
    #: what the row shows that was only read from the submitter ("efficiency", "cost",
    #: "hardware", "timings", ...): to be shown as declared
    declared: tuple[str, ...] = ()

    def covers(self) -> str:
        """What a verified row's badge covers, in words for its tooltip: ``checked: figures,
        data facts, ...; declared (not re-measured): efficiency, hardware, ...`` ('' for a row
        that is not verified: it covers nothing)."""
        if self.status != "verified":
            return ""
        parts = [f"checked: {', '.join(self.checked)}"] if self.checked else []
        if self.declared:
            parts.append(f"declared (not re-measured): {', '.join(self.declared)}")
        return "; ".join(parts)

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
    #: the task's load (the cached summary, or the full load that left one)
    loaded: object | None = None
    #: what re-scoring needs (judgements, splits, document ids), read on the first cache miss
    scoring: object | None = None

    def scoring_task(self, log: logging.Logger):
        """The :class:`~statbench.scoring.evaluate_file.ScoringTask` of this load, made once."""
        if self.scoring is None:
            self.loaded.say_notes(log)
            self.scoring = ScoringTask.of(self.loaded)
        return self.scoring

    def key(self, evaluation: str) -> _DataKey:
        return _DataKey(self.name, self.version, self.checksum, self.measures, evaluation)

@dataclass(frozen=True)
class _DataKey:
    """The verification cache key of a task's local data (a run's sha256 and splits aside)."""

    task: str
    version: str
    checksum: str
    measures: tuple
    evaluation: str

    def entry(self, run_sha256: str, splits: list[str]):
        """The verification cache entry of a run's figures re-scored on these data."""

        return verification_entry(self.task, self.version, run_sha256, self.checksum, self.measures, splits,
                                  evaluation_version=self.evaluation, required=(SCORES_FILE, FACTS_FILE))

@dataclass
class Verifier:
    """Verifies rows (:meth:`verify`) against the local task data: ``data_dirs`` maps a task
    name to its data folder (a task not named uses its default folder). Counts what it did
    (``rescored``, ``cache_hits``) and keeps every outcome (``outcomes``) for the report.
    ``allow_unverified``: whether unverifiable rows are shown (badged) or left off."""

    data_dirs: Mapping[str, Path] = field(default_factory=dict)
    allow_unverified: bool = False
    today: str = field(default_factory=lambda: _dt.date.today().isoformat())
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("statbench.leaderboard.verify.verify"))
    rescored: int = 0
    cache_hits: int = 0
    outcomes: list[tuple[Path, Verification]] = field(default_factory=list)
    #: the folder of results files this verifier is asked about (``build --verify``): on the
    #: first row that must be re-scored, the others are re-scored ahead in worker processes
    ahead: Path | None = None
    #: worker processes for re-scoring ahead (``None``: one per core this process may use)
    workers: int | None = None
    _tasks: dict[str, _LocalTask] = field(default_factory=dict)
    _evaluation_version: str | None = None
    _ahead_started: bool = False
    #: cache entries re-scored ahead (their folder) -> what scoring them logged
    _built_ahead: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

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

        try:
            run = _RunFile.read(Path(run_path))
        except (OSError, StatbenchError) as exc:
            return self._refused(f"{where}: its run file cannot be read: {_first_line(exc)}")
        if run.sha256 != results.run_file.sha256:
            return self._refused(f"{where}: run file {run_path} does not hash to run_file.sha256 (claimed "
                                 f"{results.run_file.sha256[:12]}…, the file {run.sha256[:12]}…): it is not the run "
                                 "these figures were scored from")
        try:
            rescored, facts = self._rescored(results, local, run, Path(results_path))
        except StatbenchError as exc:  # e.g. a run of another task, a split these data lack
            return self._refused(f"{where}: its run file could not be re-scored: {_first_line(exc)}")
        differences = compare_figures(results, rescored)
        if differences:
            more = f" (and {len(differences) - 1} more figure(s) differ)" if len(differences) > 1 else ""
            return self._refused(f"{where}: {differences[0]}{more}")
        try:
            problems, checked, declared = self._claims(results, local, run, facts, Path(results_path))
        except StatbenchError as exc:  # e.g. a pool file that cannot be read
            return self._refused(f"{where}: its claims could not be checked: {_first_line(exc)}")
        if problems:
            more = f" (and {len(problems) - 1} more claim(s) disagree)" if len(problems) > 1 else ""
            return self._refused(f"{where}: {problems[0]}{more}")

        return Verification("verified", None, self.today, __version__, checked=tuple(checked),
                            declared=tuple(declared))

    def _claims(self, results, local: _LocalTask, run: _RunFile, facts: RunFacts,
                results_path: Path) -> tuple[list[str], list[str], list[str]]:
        """Every claim of a row whose figures agree, beyond them (:mod:`.claims`): the
        problems (one line each), the claims checked, those only declared."""
        loaded, info = local.loaded, local.loaded.info
        checked, declared = [claims.FIGURES, claims.DATA_FACTS, claims.RUN_IN_CORPUS], []
        if results.efficiency is not None:
            checked.append(claims.EFFICIENCY_AGREES)
        problems = claims.data_fact_problems(results, loaded)
        request = claims.command_request(results)
        depth = request.rerank_depth if request is not None and results.reranker is not None else None
        problems += claims.run_problems(facts, results, info, depth)
        if results.pool is not None:
            if results.pool_sha256 is None:  # the pool reranked cannot be told from another of its name
                declared.append(claims.POOL)
            else:
                checked.append(claims.RUN_IN_POOL)
                problem = self._pool_problem(results, local, run, depth)
                if problem:
                    problems.append(problem)
        if request is not None:
            checked.append(claims.COMMAND)
            problem = claims.command_problem(request, results)
            if problem:
                problems.append(problem)
        else:
            declared.append(claims.COMMAND)
        problems += claims.efficiency_data_problems(results, loaded)
        has_card = (results_path.parent / "model_card.json").is_file()
        return problems, checked, claims.declared_claims(results, has_card) + declared

    def _pool_problem(self, results, local: _LocalTask, run: _RunFile, depth: int | None) -> str | None:
        """Whether the run lies within the frozen pool it claims (the pool file's sha256 is
        the one claimed: :func:`_other_version`), from the cache when this run was checked
        against this pool at this rerank depth (``None``: not reranked, the whole pool)."""

        path = pool_files(results.task.name, local.data_folder)[results.pool]
        entry = claims.pool_entry(results.task.name, run.sha256, results.pool_sha256, depth)

        def build(staging: Path) -> None:
            with run.plain() as plain:
                rankings = run.rankings(plain)
            problem = claims.pool_problem(rankings, read_run(path), results.pool, depth)
            (staging / claims.POOL_FILE).write_text(json.dumps({"problem": problem}, ensure_ascii=False), "utf-8")

        cached(entry, build)
        return json.loads(entry.read_bytes(claims.POOL_FILE).decode("utf-8"))["problem"]

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
                # the data files hashed once: their cached summary gives the checksum (no corpus read)
                loaded = load_task(entry, local.data_dir, self.log, task=task, summary=True)
                local.loaded, local.checksum = loaded, loaded.checksum
                local.data_folder = task.data_folder(local.data_dir)
            except StatbenchError as exc:
                if given is not None:
                    raise
                local.problem = f"no local data of task {task_name} (give --data-dir {task_name}=DIR): {_first_line(exc)}"
        self._tasks[task_name] = local
        return local

    def _evaluation(self) -> str:
        if self._evaluation_version is None:
            self._evaluation_version = evaluation_version()
        return self._evaluation_version

    def _rescored(self, results, local: _LocalTask, run: _RunFile, results_path: Path):
        """The run's figures re-scored on the local data, from the verification cache when
        this run was scored on these data, measures and splits by this evaluation code."""

        split_names = [s.name for s in results.splits]
        entry = local.key(self._evaluation()).entry(run.sha256, split_names)

        def first_miss() -> None:  # under this entry's lock: the workers leave this row alone
            self._rescore_ahead(results_path)

        built = _fill(entry, lambda: local.scoring_task(self.log), run, split_names, self.log,
                      before=None if self._ahead_started else first_miss)
        ahead = self._built_ahead.pop(str(entry.path), None)
        if built or ahead is not None:
            for level, message in ahead or ():
                self.log.log(level, "%s", message)
            self.rescored += 1
        else:
            self.cache_hits += 1
        return (EvaluatedRun.from_json(parse_strict(entry.read_bytes(SCORES_FILE).decode("utf-8"))),
                RunFacts.read(entry.read_bytes(FACTS_FILE).decode("utf-8")))

    def _rescore_ahead(self, current: Path) -> None:
        """Re-score into the cache, in worker processes, every other row of ``ahead`` not yet
        verified whose run file and local data are at hand (its claims are not trusted: the
        run is hashed and scored as it is; each row is verified afterwards, from the cache)."""
        self._ahead_started = True
        workers = self.workers if self.workers is not None else usable_cpus()
        if self.ahead is None or workers < 2:
            return
        done = {current.resolve(), *(path.resolve() for path, _ in self.outcomes)}
        jobs, tasks = [], {}
        for path in sorted(Path(self.ahead).rglob("results.json")):
            if any(part.startswith(".") for part in path.relative_to(self.ahead).parts) or path.resolve() in done:
                continue
            job = self._ahead_job(path)
            if job is not None:
                jobs.append(job)
                tasks.setdefault(job[0], None)
        if len(jobs) < AHEAD_MIN_ROWS:
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        evaluation = self._evaluation()
        shared = {name: _AheadTask(self._tasks[name].key(evaluation), self._tasks[name].scoring_task(self.log))
                  for name in tasks}
        try:
            with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("spawn"),
                                     initializer=_start_worker, initargs=(shared,)) as pool:
                for found in pool.map(_rescore_ahead_in_worker, jobs, chunksize=max(1, min(16, len(jobs) // (4 * workers)))):
                    if found is not None:
                        self._built_ahead[found[0]] = found[1]
        except Exception as exc:  # noqa: BLE001 - the rows are re-scored here instead, one by one
            self.log.debug("re-scoring ahead in worker processes failed (%s); re-scoring row by row", exc)

    def _ahead_job(self, path: Path) -> tuple[str, str, list[str]] | None:
        """(task, run file, splits) of a results file to re-score ahead, or ``None`` (not
        readable as results, no run file, no local data of its version: verified row by row)."""
        try:
            obj = json.loads(path.read_text("utf-8"))
            task, run_file = obj["task"], obj["run_file"]
            name, checksum, run_name = task["name"], task["data_checksum"], run_file["path"]
            splits = [split["name"] for split in obj["splits"]]
            if not all(isinstance(x, str) for x in (name, checksum, run_name, *splits)):
                return None
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None
        run_path = find_run_file(path, run_name)
        if run_path is None:
            return None
        try:
            local = self._local(name)
        except StatbenchError:
            return None
        if local.problem is not None or local.checksum != checksum:
            return None
        return name, str(run_path), splits

def verifier_from_options(data_dirs, allow_unverified: bool, ahead: Path | None = None) -> Verifier:
    """The :class:`Verifier` of the ``--data-dir TASK=DIR`` and ``--allow-unverified`` options
    (``leaderboard build --verify``, ``leaderboard check``, ``leaderboard export --verify``);
    ``ahead``: the results folder the build verifies (its rows re-scored ahead in parallel)."""
    dirs: dict[str, Path] = {}
    for text in data_dirs:
        task, eq, folder = text.partition("=")
        if not eq or not task or not folder:
            raise StatbenchError(f"--data-dir {text!r}: expected TASK=DIR (e.g. stard=../data/stard)")
        if task in dirs:
            raise StatbenchError(f"--data-dir: task {task!r} is given twice")
        dirs[task] = Path(folder)
    return Verifier(data_dirs=dirs, allow_unverified=allow_unverified, ahead=ahead)

def _fill(entry, scoring, run: _RunFile, split_names: list[str], log, before=None) -> bool:
    """The run's figures re-scored into ``entry`` when it is missing or invalid (``scoring``
    gives the :class:`~statbench.scoring.evaluate_file.ScoringTask`; ``before`` is called
    first, under the entry's lock); whether they were scored here."""

    built = []

    def build(staging: Path) -> None:
        if before is not None:
            before()
        task = scoring()
        with run.plain() as plain:
            rankings = run.rankings(plain)
            facts = RunFacts.of(rankings, task.data.query_ids, task.corpus)  # before scoring puts them in order
            scores = evaluate_rankings(plain, rankings, task, split_names, log, run_sha256=run.sha256)
        (staging / SCORES_FILE).write_text(json.dumps(scores.to_json(), ensure_ascii=False), encoding="utf-8")
        (staging / FACTS_FILE).write_text(json.dumps(facts.to_json(), ensure_ascii=False), encoding="utf-8")
        built.append(True)

    cached(entry, build)
    return bool(built)


@dataclass(frozen=True)
class _AheadTask:
    """What a worker needs of a task to re-score its rows into the verification cache."""

    key: _DataKey
    scoring: object

#: the tasks a worker process re-scores rows of (set once, by :func:`_start_worker`)
_WORKER_TASKS: dict[str, _AheadTask] = {}


def _start_worker(tasks: dict[str, _AheadTask]) -> None:
    _WORKER_TASKS.update(tasks)

class _Kept(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.levelno, record.getMessage()))

def _rescore_ahead_in_worker(job: tuple[str, str, list[str]]) -> tuple[str, list[tuple[int, str]]] | None:
    """In a worker process: one row's run file re-scored into the verification cache; the
    entry's folder and what scoring logged (said again when the row is verified), or
    ``None`` when it was cached already or anything failed (the build re-scores it)."""
    name, run_path, splits = job
    log = logging.getLogger(f"statbench.leaderboard.verify.verify.ahead.{name}")
    log.propagate = False
    kept = _Kept()
    log.addHandler(kept)
    try:
        task = _WORKER_TASKS[name]
        run = _RunFile.read(Path(run_path))
        entry = task.key.entry(run.sha256, splits)
        if not _fill(entry, lambda: task.scoring, run, splits, log):
            return None
        return str(entry.path), kept.records
    except Exception:  # noqa: BLE001 - the build's own process re-scores the row and says why
        return None
    finally:
        log.removeHandler(kept)

def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__

def evaluation_version() -> str:
    """The version of the code that re-scores a run: statbench's evaluation code (every
    module ``statbench evaluate``'s scoring imports, by source), ir-measures and the format
    of the run's facts cached beside its figures."""
    import ir_measures

    return f"{code_version(evaluate_file)}+ir_measures-{ir_measures.__version__}+run-facts-{claims.FACTS_FORMAT}"

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

@dataclass(frozen=True)
class _RunFile:
    """A row's run file, hashed (the sha256 of its uncompressed bytes, what ``run_file.sha256``
    records); a gzipped one is held decompressed, and written out only to be re-scored."""

    path: Path
    sha256: str
    #: the uncompressed bytes of a gzipped run (``None``: the file is plain)
    unzipped: bytes | None = None

    @classmethod
    def read(cls, path: Path) -> _RunFile:
        with open(path, "rb") as handle:
            gzipped = handle.read(2) == b"\x1f\x8b"
        if not gzipped:
            return cls(path, file_sha256(path))

        unzipped = gunzip(Path(path).read_bytes(), path)  # damaged or over-large: one DataFormatError line
        return cls(path, hashlib.sha256(unzipped).hexdigest(), unzipped)

    @contextlib.contextmanager
    def plain(self):
        """The run as a plain file (a gzipped one decompressed into a temporary folder)."""
        if self.unzipped is None:
            yield self.path
            return
        with tempfile.TemporaryDirectory(prefix="statbench-verify-") as tmp:
            plain = Path(tmp) / "run.trec"
            plain.write_bytes(self.unzipped)
            yield plain

    def rankings(self, plain: Path) -> dict:
        """The run read strictly (``statbench evaluate``'s reader), from its plain file; the
        bytes read must be those hashed (a file replaced meanwhile is not scored)."""

        rankings = read_run(plain)
        if self.unzipped is None:
            if file_sha256(plain) != self.sha256:
                raise StatbenchError(f"{plain}: the run file changed while it was verified")
        return rankings

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
    return a == b or math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)

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
    for group, formed in (claimed.breakdown_groups or {}).items():  # the board shows its query counts
        again = (rescored.breakdown_groups or {}).get(group)
        if again != formed:
            out.append(f"breakdown {group}: claimed values, query counts or rule "
                       f"{'not re-scored' if again is None else 'differ from the re-scored ones'}")
    return out

def _differ(claimed: Mapping[str, float], rescored: Mapping[str, float], labels, where: str) -> list[str]:
    differing = [label for label, value in claimed.items()
                 if (again := rescored.get(label)) is None or not _same(value, again)]
    if not differing:
        return []
    order: dict[str, int] = {}
    for i, label in enumerate(labels):
        order.setdefault(label, i)
    return [f"{label} on {where}: claimed {_fmt(claimed[label])}, re-scored {_fmt(rescored.get(label))}"
            for label in sorted(differing, key=lambda m: (order.get(m, len(labels)), m))]
