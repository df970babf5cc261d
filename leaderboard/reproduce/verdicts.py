"""The verdicts of ``statbench leaderboard reproduce``, kept in the results repository.

One file per submission and environment: ``reproductions/<submission digest>/<environment
digest>.json``. The submission's digest is the sha256 of its folder's manifest (each file's
sha256 and name, names sorted: :func:`submission_digest`), so a changed submission has no
verdict; the environment's is the sha256 of where it was re-run (:func:`this_environment`:
Python, platform, machine, statbench's version and code, whether a GPU was offered), so a
submission is re-run only in an environment it was not yet re-run in.

Verdict files are read strictly (:func:`read_verdict`): exact keys and types, a file name
that is its own digests, and a ``digest`` over the rest of the record (a hand edit that did
not recompute it, or a damaged file, is ignored with one line, never trusted). A pull request
may not touch ``reproductions/`` at all (``leaderboard check`` refuses it): verdicts are
written by the repository's own reproduce job (see ``templates/repo/publish.yml``).

The site reads a row's verdict with :func:`reproduction_of`."""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import importlib.util
import json
import logging
import os
import platform
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from statbench import __version__
from statbench.data.atomic import write_json
from statbench.data.checksum import file_sha256
from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.repo.submission import read_json_strict, repository_holding, submission_folders

#: the repository folder holding the verdicts
VERDICTS_DIR = "reproductions"
VERDICT_FORMAT = 1

Outcome = Literal["reproduced", "not reproduced", "not attempted"]
OUTCOMES: tuple[Outcome, ...] = ("reproduced", "not reproduced", "not attempted")
#: outcomes that say something about the submission (re-used, never re-run, in the same environment)
DECISIVE: tuple[Outcome, ...] = ("reproduced", "not reproduced")

_HEX64 = re.compile(r"[0-9a-f]{64}")
_log = logging.getLogger("statbench.leaderboard.reproduce.verdicts")


# --- the record -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Environment:
    """Where a submission was re-run (its digest keys the verdict)."""

    python: str  #: e.g. ``3.11.7``
    implementation: str  #: e.g. ``CPython``
    system: str  #: e.g. ``Linux``
    machine: str  #: e.g. ``x86_64``
    statbench: str  #: statbench's version
    code: str  #: sha256 over statbench's code (:func:`statbench_code_digest`)
    gpu: bool  #: whether the re-run was allowed a GPU (``reproduce --gpu``)

    def digest(self) -> str:
        return _canonical_sha256(asdict(self))

    def text(self) -> str:
        """``Python 3.11.7 (CPython), Linux x86_64, statbench 0.1.0`` (+ ``, GPU``)."""
        return (f"Python {self.python} ({self.implementation}), {self.system} {self.machine}, "
                f"statbench {self.statbench}" + (", GPU" if self.gpu else ""))


@dataclass(frozen=True)
class Difference:
    """The first figure of a re-run that differs from the submission's, and how many queries differ."""

    query: str | None  #: the query (``None``: the run files differ but no per-query figure does)
    measure: str | None
    claimed: float | None  #: the submission's figure (``None``: the query is not in the submission)
    rerun: float | None  #: the re-run's figure (``None``: the query is not in the re-run)
    queries: int  #: how many queries differ in any figure (0 when only the run file differs)


@dataclass(frozen=True)
class Verdict:
    """What ``leaderboard reproduce`` found for one submission in one environment.

    ``outcome``: ``reproduced`` (re-run from its declared source on the same data: the run
    file byte-identical, or every per-query figure within the tolerance the model declares),
    ``not reproduced`` (``reason`` and ``difference`` say what differs) or ``not attempted``
    (``reason`` says why: needs a GPU, over the CPU budget, source not installable, other
    data...)."""

    outcome: Outcome
    #: one line: what differs, or why it was not attempted (``None`` when reproduced)
    reason: str | None
    #: the submission folder, relative to the repository (``results/TASK/LABEL/CONFIG``)
    submission: str
    submission_digest: str
    environment: Environment
    environment_digest: str
    #: UTC ISO-8601 time the verdict was reached
    recorded: str
    #: how the re-run was compared: ``run file byte-identical`` or ``per-query figures within T``
    compared: str | None = None
    difference: Difference | None = None

    @property
    def decisive(self) -> bool:
        return self.outcome in DECISIVE

    @property
    def status(self) -> Outcome:
        """The outcome (the name :func:`statbench.leaderboard.verify.levels.level_of` reads)."""
        return self.outcome

    @property
    def title(self) -> str:
        """One line for a badge's tooltip: when, where, and what was found (``re-run on
        2026-11-28 in Python 3.11.7 (CPython), Linux x86_64, statbench 0.1.0: run file
        byte-identical`` / ``...: query 17, R@5 claimed 0.5, re-run 0.25; 3 queries differ``
        / ``not attempted on ...: needs a GPU (...)``)."""
        where = f"on {self.recorded[:10]} in {self.environment.text()}"
        if self.outcome == "not attempted":
            return f"not attempted {where}: {self.reason}"
        return f"re-run {where}: {self.compared if self.outcome == 'reproduced' else self.reason}"

    def line(self) -> str:
        """``reproduced`` / ``not reproduced: ...`` / ``not attempted: ...``: one line."""
        return self.outcome if self.reason is None else f"{self.outcome}: {self.reason}"

    def to_json(self) -> dict:
        obj = {"format": VERDICT_FORMAT, **asdict(self)}
        obj["digest"] = _canonical_sha256(obj)
        return obj


def _canonical_sha256(obj) -> str:
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def as_line(text: str | None) -> str | None:
    """``text`` as one line: control characters (a newline from a plugin's version or an
    error) written as escapes, so a verdict's reason always reads back as a line."""
    return None if text is None else _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


# --- digests ----------------------------------------------------------------------------------

def submission_digest(folder: Path, digests=None) -> str:
    """sha256 of the folder's manifest: a line ``SHA256  NAME`` per file, names sorted (what
    ``sha256sum *`` prints). Anything in the folder that is not a regular file (a link, a
    folder) is refused: a submission holds only regular files. ``digests``: an object whose
    ``sha256(path)`` gives a file's sha256 (None when it cannot), else each file is hashed."""
    folder = Path(folder)
    lines = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.is_symlink() or not entry.is_file():
            raise DataFormatError(entry, "not a regular file (a submission holds only regular files)")
        sha = digests.sha256(entry) if digests is not None else None
        lines.append(f"{sha or file_sha256(entry)}  {entry.name}\n")
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()




#: statbench's packages, whose files make the code digest: found by name, not imported (the
#: leaderboard sits above the core and the tasks and never imports the built-in models)
CODE_PACKAGES = ("statbench", "statbench.models", "statbench.tasks", "statbench.leaderboard")


def package_folders(name: str) -> list[Path]:
    """The folders of installed package ``name`` (its ``__path__``), read from its import spec."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise StatbenchError(f"{name} is not installed as a package: statbench's code digest needs it (reinstall statbench)")
    return [Path(p).resolve() for p in spec.submodule_search_locations]


@functools.cache
def statbench_code_digest() -> str:
    """sha256 over every file of statbench's packages (its core, built-in models, tasks and
    leaderboard; ``__pycache__`` left out), by package-relative name: a re-run by other code
    is another environment."""
    roots = {name: package_folders(name) for name in CODE_PACKAGES}
    every_root = {root for paths in roots.values() for root in paths}
    digest = hashlib.sha256()
    for name in sorted(roots):
        for root in roots[name]:
            for path in sorted(_files_under(root, every_root - {root})):
                digest.update(f"{name}/{path.relative_to(root).as_posix()}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def _files_under(root: Path, other_roots: set[Path]) -> list[Path]:
    out = []
    for path in root.iterdir():
        if path.name == "__pycache__" or path.name.startswith("."):
            continue
        if path.is_dir():
            if path.resolve() not in other_roots:
                out.extend(_files_under(path, other_roots))
        elif path.is_file():
            out.append(path)
    return out


def this_environment(gpu: bool = False) -> Environment:
    """The environment this process re-runs submissions in."""
    return Environment(python=platform.python_version(), implementation=platform.python_implementation(),
                       system=platform.system(), machine=platform.machine(), statbench=__version__,
                       code=statbench_code_digest(), gpu=bool(gpu))


# --- the files --------------------------------------------------------------------------------

def verdict_path(root: Path, submission_digest_: str, environment_digest: str) -> Path:
    return Path(root) / VERDICTS_DIR / submission_digest_ / f"{environment_digest}.json"


def write_verdict(root: Path, verdict: Verdict) -> Path:
    """Record ``verdict`` in the repository at ``root`` (replacing that environment's earlier one)."""
    path = verdict_path(root, verdict.submission_digest, verdict.environment_digest)
    write_json(path, verdict.to_json())
    return path


_KEYS = {"format", "outcome", "reason", "submission", "submission_digest", "environment", "environment_digest",
         "recorded", "compared", "difference", "digest"}
_ENV_KEYS = {"python": str, "implementation": str, "system": str, "machine": str, "statbench": str, "code": str,
             "gpu": bool}
_DIFF_KEYS = {"query", "measure", "claimed", "rerun", "queries"}


def read_verdict(path: Path) -> Verdict:
    """A verdict file, read strictly; anything off is one :class:`DataFormatError` line."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        raise DataFormatError(path, "not a regular file")
    obj = read_json_strict(path)
    if not isinstance(obj, dict) or set(obj) != _KEYS:
        found = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise DataFormatError(path, f"not a verdict record (keys {found})")
    if obj["format"] != VERDICT_FORMAT:
        raise DataFormatError(path, f"verdict format {obj['format']!r}, not {VERDICT_FORMAT}")
    claimed = obj.pop("digest")
    if claimed != _canonical_sha256(obj):
        raise DataFormatError(path, "its digest does not match its content: edited or damaged, not trusted")
    outcome, reason = obj["outcome"], obj["reason"]
    if outcome not in OUTCOMES:
        raise DataFormatError(path, f"outcome {outcome!r} is none of {', '.join(OUTCOMES)}")
    if outcome == "reproduced" and reason is not None or outcome != "reproduced" and not _line(reason):
        raise DataFormatError(path, "a verdict other than reproduced needs a one-line reason (and only those)")
    for key in ("submission", "recorded"):
        if not _line(obj[key]):
            raise DataFormatError(path, f"{key}: not a line of text")
    if obj["compared"] is not None and not _line(obj["compared"]):
        raise DataFormatError(path, "compared: not a line of text")
    for key in ("submission_digest", "environment_digest"):
        if not isinstance(obj[key], str) or not _HEX64.fullmatch(obj[key]):
            raise DataFormatError(path, f"{key}: not a sha256")
    environment = _environment(path, obj["environment"])
    if environment.digest() != obj["environment_digest"]:
        raise DataFormatError(path, "environment_digest is not the digest of its environment")
    if path.stem != obj["environment_digest"] or path.parent.name != obj["submission_digest"]:
        raise DataFormatError(path, "its file name is not its submission and environment digests")
    difference = _difference(path, obj["difference"])
    if difference is not None and outcome != "not reproduced":
        raise DataFormatError(path, "a difference on a verdict other than not reproduced")
    return Verdict(outcome=outcome, reason=reason, submission=obj["submission"],
                   submission_digest=obj["submission_digest"], environment=environment,
                   environment_digest=obj["environment_digest"], recorded=obj["recorded"],
                   compared=obj["compared"], difference=difference)


def _line(value) -> bool:
    return isinstance(value, str) and bool(value) and "\n" not in value and "\r" not in value


def _environment(path: Path, obj) -> Environment:
    if not isinstance(obj, dict) or set(obj) != set(_ENV_KEYS):
        raise DataFormatError(path, "environment: not an environment record")
    for key, kind in _ENV_KEYS.items():
        if not isinstance(obj[key], kind) or (kind is str and not _line(obj[key])):
            raise DataFormatError(path, f"environment/{key}: not a {kind.__name__}")
    return Environment(**obj)


def _difference(path: Path, obj) -> Difference | None:
    if obj is None:
        return None
    if not isinstance(obj, dict) or set(obj) != _DIFF_KEYS:
        raise DataFormatError(path, "difference: not a difference record")
    for key in ("query", "measure"):
        if obj[key] is not None and not isinstance(obj[key], str):
            raise DataFormatError(path, f"difference/{key}: not text")
    for key in ("claimed", "rerun"):
        value = obj[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DataFormatError(path, f"difference/{key}: not a number")
    if isinstance(obj["queries"], bool) or not isinstance(obj["queries"], int) or obj["queries"] < 0:
        raise DataFormatError(path, "difference/queries: not a count")
    return Difference(**obj)


# --- what the site reads ------------------------------------------------------------------------

class VerdictReader:
    """Reads the verdicts of many rows (one site build): each repository's verdict files are
    listed once, and a submission folder is hashed only when some verdict file may be its
    (one names it, or cannot be read well enough to tell). ``notes``: where the one line per
    ignored verdict file goes (else a logged warning); ``digests``: an object whose
    ``sha256(path)`` gives a file's sha256 (e.g. :func:`statbench.storage.filedigests.
    file_digests`, which finds unchanged files by their stat), else every file is hashed."""

    def __init__(self, notes: list[str] | None = None, digests=None):
        self.notes = notes
        self.digests = digests
        self._roots: dict[str, Path | None] = {}
        self._real_parents: dict[str, str] = {}  #: a folder -> its real path (:meth:`_resolved`)
        self._index: dict[Path, tuple[dict[str, set[str]], set[str]]] = {}

    def all_of(self, results_path: Path) -> tuple[Verdict, ...]:
        """Every verdict recorded for the submission holding ``results_path`` (its folder's
        current files: a submission changed since has none), the most telling first:
        decisive ones (reproduced, not reproduced) before not attempted, newest first. A
        verdict file that does not read strictly is left out with one line."""
        real = self._real_folder(results_path)
        root = self._root(real)
        if root is None:
            return ()
        folder = Path(results_path).parent
        here = Path(real).relative_to(root).as_posix()
        named, unattributed = self._verdict_index(root)
        candidates = named.get(here, set()) | unattributed
        if not candidates:
            return ()
        try:
            digest = submission_digest(folder, self.digests)
        except (OSError, DataFormatError):
            return ()
        if digest not in candidates:
            return ()
        found = []
        for path in sorted((root / VERDICTS_DIR / digest).iterdir()):
            if path.name.startswith(".") or path.suffix != ".json":
                continue
            try:
                verdict = read_verdict(path)
            except (OSError, DataFormatError) as exc:
                self._say(f"ignored verdict {path.relative_to(root)}: {exc}")
                continue
            if verdict.submission != here:
                self._say(f"ignored verdict {path.relative_to(root)}: it is the verdict of {verdict.submission}, "
                          f"not of {here}")
                continue
            found.append(verdict)
        found.sort(key=lambda v: (v.decisive, v.recorded, v.environment_digest), reverse=True)
        return tuple(found)

    def of(self, results_path: Path) -> Verdict | None:
        """The verdict the site shows for the submission holding ``results_path``: the
        newest decisive one (reproduced / not reproduced), else the newest not attempted,
        else None (never reproduced, not in a results repository, or changed since)."""
        found = self.all_of(results_path)
        return found[0] if found else None

    def _real_folder(self, results_path) -> str:
        """``Path(results_path).parent.resolve()`` as a string. A ``..`` in the path is resolved
        after the link before it, as pathlib does (``os.path.abspath`` would drop ``link/..``
        without following the link)."""
        parent = os.path.dirname(os.fspath(results_path))
        if os.pardir in Path(parent).parts:
            return os.path.realpath(parent)
        return self._resolved(os.path.abspath(parent))

    def _resolved(self, path: str) -> str:
        """``Path(path).resolve()`` of an absolute ``path``, as a string: a folder that is no link
        is its parent's real path and its name, each parent resolved once (every row of a build
        is in a folder of its own)."""
        parent, name = os.path.split(path)
        if not name or name in (".", "..") or os.path.islink(path):
            return os.path.realpath(path)
        real = self._real_parents.get(parent)
        if real is None:
            real = self._real_parents[parent] = os.path.realpath(parent)
        return os.path.join(real, name)

    def _root(self, real: str) -> Path | None:
        """The repository holding the (resolved) folder ``real``; a folder's siblings share the answer."""
        key = os.path.dirname(real)
        if key not in self._roots:
            self._roots[key] = repository_holding(real)
        return self._roots[key]

    def _verdict_index(self, root: Path) -> tuple[dict[str, set[str]], set[str]]:
        """(submission folder -> the digest folders holding a verdict naming it, the digest
        folders holding a file that names none), from a loose read of every verdict file."""
        if root not in self._index:
            named: dict[str, set[str]] = {}
            unattributed: set[str] = set()
            for path in sorted((root / VERDICTS_DIR).glob("*/*.json")):
                if path.name.startswith(".") or path.parent.name.startswith("."):
                    continue
                try:
                    submission = json.loads(path.read_bytes()).get("submission")
                except (OSError, ValueError, AttributeError, RecursionError):
                    submission = None
                if isinstance(submission, str):
                    named.setdefault(submission, set()).add(path.parent.name)
                else:
                    unattributed.add(path.parent.name)
            self._index[root] = (named, unattributed)
        return self._index[root]

    def _say(self, line: str) -> None:
        if self.notes is None:
            _log.warning("%s", line)
        else:
            self.notes.append(line)


def reproductions_of(results_path: Path, notes: list[str] | None = None) -> tuple[Verdict, ...]:
    """:meth:`VerdictReader.all_of` for one row."""
    return VerdictReader(notes).all_of(results_path)


def reproduction_of(results_path: Path, notes: list[str] | None = None) -> Verdict | None:
    """:meth:`VerdictReader.of` for one row (a build reading many rows keeps one
    :class:`VerdictReader`: each repository's verdicts are then listed once)."""
    return VerdictReader(notes).of(results_path)


# --- verdicts made elsewhere ----------------------------------------------------------------------

def take_verdicts(root: Path, source: Path) -> tuple[list[Path], list[str]]:
    """Record in the repository ``root`` the verdict files found in ``source`` (laid out as
    ``reproductions/``: ``DIGEST/ENV.json``), as another job's ``reproduce`` wrote them: each
    read strictly and kept only when it is the verdict of a submission of ``root`` as its
    files are now. Returns (recorded, notes: one line per file left out)."""
    root, source = Path(root), Path(source)
    current = {}
    for folder in submission_folders(root):
        try:
            current[submission_digest(folder)] = folder.resolve().relative_to(root.resolve()).as_posix()
        except (OSError, DataFormatError):
            continue
    taken, notes = [], []
    files = sorted(source.glob("*/*.json")) if source.is_dir() else []
    for path in files:
        if path.parent.name.startswith(".") or path.name.startswith("."):
            continue
        where = path.relative_to(source)
        try:
            verdict = read_verdict(path)
        except (OSError, DataFormatError) as exc:
            notes.append(f"not recorded: {where}: {exc}")
            continue
        if current.get(verdict.submission_digest) != verdict.submission:
            notes.append(f"not recorded: {where}: not the verdict of a submission of {root} as its files are now")
            continue
        target = verdict_path(root, verdict.submission_digest, verdict.environment_digest)
        write_json(target, verdict.to_json())
        taken.append(target)
    return taken, notes
