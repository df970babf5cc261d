"""``statbench leaderboard reproduce``: each submission re-run from its declared source, in a
fresh isolated environment (:mod:`.env`), on the same data, and compared.

For one submission (:func:`reproduce_submission`), in this order, the first that applies
decides:

1. a decisive verdict already recorded for these files in this environment is the answer
   (never re-run for nothing; ``--again`` re-runs);
2. **not attempted** when it cannot be a fair re-run here: recorded by another statbench
   version; a model or reranker that declares ``needs_gpu`` (without ``--gpu``); a source
   not recorded or not published; a source pip cannot install; an environment that sees
   another plugin than statbench's and the source's (isolation broken); no local data, or
   data of another version (data checksum, loader version, pool sha256) than the
   submission's, checked before the run; over the CPU budget (``--max-cpu-minutes``,
   enforced by ``RLIMIT_CPU``, and three times as long on the clock);
3. the recorded command is run there (``statbench run`` with its own words, ``--data-dir``
   the given folder, ``--output`` a new folder, a new empty ``STATBENCH_CACHE``: a cached run
   would reproduce nothing; never ``--yes``: a reproduction spends no money), then
   **reproduced** when its run file is byte-identical to the submitted one, or, for a model
   that declares itself non-deterministic (``tolerance``), when every per-query figure is
   within that tolerance; else **not reproduced**, with the first differing query and
   figure and how many queries differ. A re-run that fails is not reproduced too (its
   error's line).

Verdicts are written to the repository (:mod:`.verdicts`)."""

from __future__ import annotations

import json
import logging
import math
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from statbench import __version__
from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.repo.repository import added_submissions
from statbench.leaderboard.repo.source import (
    canonical_name,
    normal_version,
    pip_requirements,
    published,
    unpublished_reasons,
    used_distributions,
)
from statbench.leaderboard.repo.submission import RESULTS_DIR, check_repository, read_submission, submission_folders
from statbench.leaderboard.reproduce.compare import compare_rerun
from statbench.leaderboard.reproduce.env import NotInstallable, ensure_env
from statbench.leaderboard.reproduce.run import NotAttempted, probe, rerun_words, run_command, run_environ, task_word
from statbench.leaderboard.reproduce.verdicts import (
    Environment,
    Verdict,
    as_line,
    now,
    read_verdict,
    submission_digest,
    this_environment,
    verdict_path,
    write_verdict,
)
from statbench.storage.paths import cache_root

#: the default CPU budget of one re-run (minutes)
DEFAULT_CPU_MINUTES = 30.0
_log = logging.getLogger("statbench.leaderboard.reproduce.submissions")


@dataclass
class ReproduceOptions:
    """What ``leaderboard reproduce`` was asked: the local data per task name (a task not
    named uses its default data folder), the CPU budget of a re-run, whether a GPU may be
    used, whether recorded verdicts are re-run, whether verdicts are written."""

    data_dirs: dict[str, Path] = field(default_factory=dict)
    max_cpu_minutes: float = DEFAULT_CPU_MINUTES
    gpu: bool = False
    again: bool = False
    record: bool = True
    #: where the isolated environments are kept (default: ``$STATBENCH_CACHE/reproduce``)
    env_cache: Path | None = None


@dataclass(frozen=True)
class Reproduction:
    """One submission's line of the report: its verdict, and whether it was recorded before."""

    folder: str  #: relative to the repository
    verdict: Verdict
    reused: bool

    def line(self) -> str:
        when = f" (recorded {self.verdict.recorded})" if self.reused else ""
        return f"{self.folder}: {self.verdict.line()}{when}"


@dataclass
class ReproduceReport:
    """What ``leaderboard reproduce`` found: a line per submission, problems, notes."""

    reproductions: list[Reproduction] = field(default_factory=list)
    #: submissions that could not be read or re-run for a reason of this machine (one line
    #: each): they fail the command as a submission not reproduced does
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(r.verdict.outcome == outcome for r in self.reproductions)

    @property
    def failed(self) -> bool:
        return bool(self.problems) or self.count("not reproduced") > 0

    def summary(self) -> str:
        return (f"{len(self.reproductions) + len(self.problems)} submission(s): {self.count('reproduced')} reproduced, "
                f"{self.count('not reproduced')} not reproduced, {self.count('not attempted')} not attempted"
                + (f", {len(self.problems)} unreadable" if self.problems else ""))


# --- the repository ----------------------------------------------------------------------------

def reproduce_repo(root: Path, folders: list[Path] | None, options: ReproduceOptions,
                   since: str | None = None) -> ReproduceReport:
    """Reproduce ``folders`` (submission folders of the repository ``root``; default: every
    one, or with ``since`` those added since that git ref) and record the verdicts."""
    root = Path(root)
    check_repository(root)
    if folders:
        chosen = [_submission_folder(root, Path(f)) for f in folders]
    elif since is not None:
        chosen = added_submissions(root, since)
    else:
        chosen = submission_folders(root)
    report = ReproduceReport()
    environment = this_environment(options.gpu)
    for folder in {folder.resolve(): folder for folder in chosen}.values():
        rel = folder.resolve().relative_to(root.resolve()).as_posix()
        try:
            report.reproductions.append(reproduce_submission(root, folder, options, environment, report.notes))
        except StatbenchError as exc:
            report.problems.append(f"{rel}: {_first_line(exc)}")
    return report


def _submission_folder(root: Path, given: Path) -> Path:
    """A submission folder named on the command line: as given, else relative to the repository;
    it must be a ``results/TASK/LABEL/CONFIG`` folder of ``root``."""
    folder = given if given.exists() or given.is_absolute() else root / given
    try:
        rel = folder.resolve().relative_to(root.resolve())
    except ValueError:
        raise StatbenchError(f"{given}: not a folder of the results repository {root}") from None
    if len(rel.parts) != 4 or rel.parts[0] != RESULTS_DIR or not folder.is_dir():
        raise StatbenchError(f"{given}: not a submission folder ({RESULTS_DIR}/TASK/LABEL/CONFIG) of {root}")
    return folder


# --- one submission ----------------------------------------------------------------------------

def reproduce_submission(root: Path, folder: Path, options: ReproduceOptions, environment: Environment | None = None,
                         notes: list[str] | None = None) -> Reproduction:
    """The verdict on one submission folder of the repository ``root`` (recorded there
    unless ``options.record`` is false). A folder the strict reader refuses raises."""
    environment = environment or this_environment(options.gpu)
    env_digest = environment.digest()
    rel = folder.resolve().relative_to(Path(root).resolve()).as_posix()
    try:
        digest = submission_digest(folder)
    except DataFormatError as exc:
        raise StatbenchError(f"not a valid submission: {_first_line(exc)}") from None
    path = verdict_path(root, digest, env_digest)
    earlier = None
    if path.exists():
        try:
            earlier = read_verdict(path)
        except StatbenchError as exc:
            if notes is not None:
                notes.append(f"ignored verdict {path.relative_to(root)}: {exc}")
    if earlier is not None and earlier.decisive and not options.again:
        return Reproduction(rel, earlier, reused=True)
    try:
        submission = read_submission(folder)
    except StatbenchError as exc:
        raise StatbenchError(f"not a valid submission: {_first_line(exc)}") from None
    outcome, reason, compared, difference = "not attempted", None, None, None
    try:
        outcome, reason, compared, difference = _attempt(submission, options)
    except NotAttempted as exc:
        reason = exc.reason
    verdict = Verdict(outcome=outcome, reason=as_line(reason), submission=rel, submission_digest=digest,
                      environment=environment, environment_digest=env_digest, recorded=now(),
                      compared=as_line(compared), difference=difference)
    if submission_digest(folder) != digest:
        raise StatbenchError("its files changed while it was reproduced: run reproduce again")
    if earlier is not None and (earlier.outcome, earlier.reason, earlier.compared, earlier.difference) == \
            (verdict.outcome, verdict.reason, verdict.compared, verdict.difference):
        return Reproduction(rel, earlier, reused=False)  # the same finding: its file (and date) left as it was
    if options.record:
        write_verdict(root, verdict)
    return Reproduction(rel, verdict, reused=False)


def _attempt(submission, options: ReproduceOptions):
    """(outcome, reason, compared, difference) of re-running ``submission``; raises
    :class:`NotAttempted` when it cannot be a fair re-run here."""
    results = submission.results
    if results.statbench_version != __version__:
        raise NotAttempted(f"recorded by statbench {results.statbench_version}; this is statbench {__version__} "
                            "(reproduce it with that version)")
    gpu = [r.name for r in (results.model, results.reranker) if r is not None and getattr(r, "needs_gpu", None)]
    if gpu and not options.gpu:
        raise NotAttempted(f"needs a GPU ({' and '.join(gpu)} declare{'s' if len(gpu) == 1 else ''} it; "
                            "--gpu on a machine with one)")
    words = rerun_words(results.command)
    if words is None:
        raise NotAttempted(f"the recorded command {results.command!r} is not a 'statbench run' command line")
    key, requirements, used = source_requirements(submission)
    cache = Path(options.env_cache) if options.env_cache is not None else _default_env_cache()
    try:
        env = ensure_env(cache, key, requirements, _log)
    except NotInstallable as exc:
        raise NotAttempted(f"source not installable: {exc}") from None
    data_dir = options.data_dirs.get(results.task.name)
    data_dir = Path(data_dir).resolve() if data_dir is not None else None
    with tempfile.TemporaryDirectory(prefix="statbench-reproduce-") as work:
        work = Path(work)
        variables = run_environ(work)
        budget = max(1, math.ceil(options.max_cpu_minutes * 60))
        found = probe(env, work, variables, task_word(words) or results.task.name, data_dir, results.pool, budget)
        check_isolation(found, env.root, used)
        check_data(found["data"], results)
        output = work / "output"
        done = run_command(env, work, variables, words, data_dir, output, budget)
        if done is not None:
            return done
        return compare_rerun(submission, output)


def _default_env_cache() -> Path:
    return cache_root() / "reproduce"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


# --- the source -------------------------------------------------------------------------------

def source_requirements(submission) -> tuple[dict, list[str], dict]:
    """(the environment's key, pip's arguments, the third-party distributions the run used:
    canonical name -> (name, version)) for a submission's declared source (``source.json``,
    read by :func:`~statbench.leaderboard.repo.submission.read_submission`); :class:`NotAttempted`
    when it has none that can be installed."""
    results, record = submission.results, submission.source
    used = {canonical_name(name): (name, version) for name, version in used_distributions(results)}
    in_process = [name for name, version in used.values() if version is None]
    if in_process:
        raise NotAttempted(f"source not published ({', '.join(in_process)}: registered in-process by the run, "
                            "by no distribution)")
    if record is None:
        if used:
            raise NotAttempted(f"source not recorded for {', '.join(n for n, _ in used.values())} (submitted before "
                                "statbench recorded sources)")
        return {"distributions": []}, [], used
    if not published(record):
        raise NotAttempted(f"source not published ({'; '.join(unpublished_reasons(record))})")
    declared = {canonical_name(d.name): d for d in record.distributions}
    for name, (shown, version) in sorted(used.items()):
        if name not in declared:
            raise NotAttempted(f"source not recorded for {shown} (source.json names no source for it)")
        if normal_version(declared[name].version) != normal_version(version):
            raise NotAttempted(f"source not installable: source.json declares {shown} {declared[name].version}, the "
                                f"run used {version}")
    key = {"distributions": sorted(({k: v for k, v in asdict(d).items() if k != "reason"}
                                    for d in record.distributions), key=lambda d: json.dumps(d, sort_keys=True))}
    return key, list(pip_requirements(record, submission.folder)), used


def check_isolation(probe: dict, env_root: Path, used: dict) -> None:
    """The isolated environment sees statbench's plugins and those pip installed into it
    (the source and any plugin it depends on), and nothing else (no plugin from the base, or
    from anywhere else outside it); each distribution the run used is there, at the recorded
    version, and loads."""
    root = Path(env_root).resolve()
    seen: dict[str, list[dict]] = {}
    for plugin in probe["plugins"]:
        seen.setdefault(canonical_name(plugin["distribution"] or ""), []).append(plugin)
    foreign = sorted(name for name, plugins in seen.items() if name != "statbench" and not all(
        p["location"] is not None and Path(p["location"]).resolve().is_relative_to(root) for p in plugins))
    if foreign:
        raise NotAttempted("the isolated environment is not isolated: it also sees the plugins of "
                            + ", ".join(seen[name][0]["distribution"] or "(no distribution)" for name in foreign))
    if probe["statbench"] != __version__:
        raise NotAttempted(f"the isolated environment runs statbench {probe['statbench']}, not {__version__}")
    for name, (shown, version) in sorted(used.items()):
        plugins = seen.get(name)
        if not plugins:
            raise NotAttempted(f"source not installable: {shown} installed but registers no statbench plugin")
        here = plugins[0]["version"]
        if normal_version(here or "") != normal_version(version):
            raise NotAttempted(f"source not installable: {shown} {here} installed, the run used {version}")
        broken = [p for p in plugins if p["error"]]
        if broken:
            raise NotAttempted(f"source not installable: plugin {broken[0]['plugin']} of {shown} does not load: "
                                f"{broken[0]['error']}")


def check_data(data: dict, results) -> None:
    """Data of the version the submission was scored on, before anything runs."""
    task = results.task
    if data["problem"]:
        raise NotAttempted(f"data not here: {data['problem']} (give --data-dir {task.name}=DIR)")
    if data["checksum"] != task.data_checksum:
        raise NotAttempted(f"other data: the local data of {task.name} has checksum {str(data['checksum'])[:12]}…, "
                            f"the submission's {task.data_checksum[:12]}…")
    if data["version"] != (task.version or "1"):
        raise NotAttempted(f"other data: the {task.name} loader here is version {data['version']}, the submission's "
                            f"{task.version or '1'}")
    if results.pool is not None and results.pool_sha256 is not None and data["pool_sha256"] != results.pool_sha256:
        here = "not here" if data["pool_sha256"] is None else f"sha256 {data['pool_sha256'][:12]}… here"
        raise NotAttempted(f"other data: pool {results.pool} is {here}, the submission's is "
                            f"{results.pool_sha256[:12]}…")


