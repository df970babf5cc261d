"""A results repository's own commands: ``leaderboard check`` (what its CI runs on each pull
request) and ``leaderboard init-repo`` (the marker, a README and the CI workflows, in git).

The check looks only at what changed since the base (``git diff BASE...HEAD``): a pull
request may only add submission folders (``results/TASK/LABEL/CONFIG/`` with exactly the
three files, and the source record with the wheels it names), never touch the reproduction
verdicts (``reproductions/``: the repository's own reproduce job writes them); each added
folder is read by the one strict reader
(:func:`~statbench.leaderboard.repo.submission.read_submission`) and verified
(:mod:`~statbench.leaderboard.verify.verify`): its run file re-scored against the task's judgements on the same data
version, every figure compared. Every problem is one line; any problem fails the check."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath

from statbench.data.atomic import write_text
from statbench.errors import StatbenchError
from statbench.leaderboard.repo.submission import (
    REPOSITORY_FORMAT,
    REPOSITORY_MARKER,
    RESULTS_DIR,
    SUBMISSION_FILES,
    check_repository,
    is_submission_file_name,
    read_submission,
    write_repository_marker,
)
from statbench.leaderboard.reproduce.verdicts import VERDICTS_DIR

#: the files init-repo writes (repository path -> template in templates/repo/)
TEMPLATES = {"README.md": "README.md", ".github/workflows/check.yml": "check.yml",
             ".github/workflows/publish.yml": "publish.yml"}
#: the branch init-repo makes and ``leaderboard check`` compares with by default
MAIN_BRANCH = "main"
#: the identity of init-repo's first commit where git has none configured
INIT_IDENTITY = ("statbench leaderboard init-repo", "init-repo@statbench.invalid")
#: bases tried, in order, when --base is not given (the merge base with HEAD)
DEFAULT_BASES = ("origin/main", "main")


@dataclass
class CheckReport:
    """What ``leaderboard check`` found: one line per problem, notes, what was verified."""

    base: str
    folders: list[Path] = field(default_factory=list)  #: the submission folders added, checked
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    verified: int = 0

# --- git ------------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise StatbenchError("git is not installed: 'leaderboard check' compares the repository with its base "
                             "through git") from None
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise StatbenchError(f"git {' '.join(args[:2])} in {root} failed: {message}")
    return done.stdout

def default_base(root: Path) -> str:
    """The merge base of HEAD with ``origin/main``, else with ``main``."""
    for ref in DEFAULT_BASES:
        try:
            return _git(root, "merge-base", "HEAD", ref).strip()
        except StatbenchError:
            continue
    raise StatbenchError(f"{root}: neither {' nor '.join(DEFAULT_BASES)} is a branch here to compare with: "
                         "give --base REF (on a pull request, origin/<the base branch>)")

def _ref(base: str) -> str:
    """``base`` when it can only be read as a git revision: one starting with ``-`` would be
    read as an option (``--output=FILE`` writes a file), one with a control character or
    empty is no ref."""
    if not base or base.startswith("-") or any(ord(c) < 32 or ord(c) == 127 for c in base):
        raise StatbenchError(f"{base!r}: not a git ref to compare with (a branch, tag or commit, e.g. origin/main)")
    return base

def changes(root: Path, base: str) -> list[tuple[str, str]]:
    """(status letter, path) of every file changed between ``base`` and HEAD (``git diff
    BASE...HEAD``: what the branch did since it left the base), renames as delete + add."""
    out = _git(root, "diff", "--name-status", "--no-renames", "-z", f"{_ref(base)}...HEAD", "--")
    fields = out.split("\0")
    return [(fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]

def _existed(root: Path, base: str, folder: str) -> bool:
    return bool(_git(root, "ls-tree", "--name-only", _ref(base), "--", f"{folder}/").strip())

# --- the check --------------------------------------------------------------------------------

def _added_folders(root: Path, base: str, problems: list[str], notes: list[str]) -> list[str]:
    """The submission folders (``results/TASK/LABEL/CONFIG``) a branch added since ``base``;
    what else it changed is a problem (an existing submission edited, a file that is not a
    submission's, a reproduction verdict) or a note (a file outside ``results/``)."""

    added: dict[str, None] = {}
    for status, path in changes(root, base):
        parts = PurePosixPath(path).parts
        if parts[0] == VERDICTS_DIR:
            problems.append(f"{path}: a pull request may not add or change reproduction verdicts ({VERDICTS_DIR}/ "
                            "is written by the repository's own reproduce job)")
            continue
        if parts[0] != RESULTS_DIR:
            notes.append(f"{path}: not a submission (outside {RESULTS_DIR}/): not checked")
            continue
        if len(parts) != 5 or any(p.startswith(".") for p in parts) or not is_submission_file_name(parts[-1]):
            problems.append(f"{path}: not a submission file (a submission is {RESULTS_DIR}/TASK/MODEL/CONFIG/ "
                            f"holding only {', '.join(SUBMISSION_FILES)}, and source.json with the wheels it names)")
            continue
        folder = "/".join(parts[:4])
        if status != "A":
            what = {"D": "deletes", "M": "edits", "T": "changes the type of"}.get(status, "changes")
            problems.append(f"{path}: the pull request {what} a file of an existing submission; a pull "
                            "request only adds submission folders")
            continue
        added.setdefault(folder, None)
    out = []
    for folder in added:
        if _existed(root, base, folder):
            problems.append(f"{folder}: adds files to a submission that already exists; a pull request only "
                            "adds submission folders")
            continue
        out.append(folder)
    return out

def added_submissions(root: Path, base: str) -> list[Path]:
    """The submission folders added since ``base`` (``leaderboard reproduce --since``); a
    change a pull request may not make stops it (one line: ``leaderboard check`` names them all)."""
    problems: list[str] = []
    folders = _added_folders(Path(root), base, problems, [])
    if problems:
        more = f" (and {len(problems) - 1} more: see 'statbench leaderboard check')" if len(problems) > 1 else ""
        raise StatbenchError(f"{problems[0]}{more}")
    return [Path(root) / folder for folder in folders]

def check_repo(root: Path, base: str | None, verifier) -> CheckReport:
    """Check what changed in the results repository ``root`` since ``base`` (default: the
    merge base with origin/main or main): layout, each added submission read strictly and
    verified by ``verifier`` (a :class:`~statbench.leaderboard.verify.verify.Verifier`)."""

    root = Path(root)
    check_repository(root)
    base = base or default_base(root)
    report = CheckReport(base=base)
    added = _added_folders(root, base, report.problems, report.notes)
    for folder in added:
        path = root / folder
        report.folders.append(path)
        try:
            submission = read_submission(path, check_run=False)  # the verifier hashes the run (and says so)
        except StatbenchError as exc:
            report.problems.append(str(exc))
            continue
        verdict = verifier.verify(submission.results, path / "results.json", submission.run_path)
        if verdict.status == "verified":
            report.verified += 1
        elif verdict.status == "unverifiable" and verifier.allow_unverified:
            report.notes.append(f"unverifiable (allowed): {verdict.reason}")
        else:
            report.problems.append(f"{verdict.status}: {verdict.reason}")
    return report

# --- init-repo --------------------------------------------------------------------------------


def template_text(name: str) -> str:
    return resources.files("statbench.leaderboard").joinpath("templates", "repo", name).read_text("utf-8")

def init_repo(root: Path) -> tuple[list[Path], list[Path]]:
    """Write the marker, the README and the CI workflows into ``root`` (created if need be):
    (written, already there with this content). A file already there with other content is
    refused before anything is written: init-repo never overwrites a repository's files."""

    root = Path(root)
    wanted = {rel: template_text(name) for rel, name in TEMPLATES.items()}
    conflicts, same = [], []
    marker = root / REPOSITORY_MARKER
    if marker.exists():
        try:
            check_repository(root)
            same.append(marker)
        except StatbenchError:
            conflicts.append(marker)
    for rel, text in wanted.items():
        path = root / rel
        if path.exists():
            try:
                (same if path.read_text("utf-8") == text else conflicts).append(path)
            except (OSError, UnicodeDecodeError):
                conflicts.append(path)
    if conflicts:
        raise StatbenchError(f"{root}: {', '.join(str(p.relative_to(root)) for p in conflicts)} already there with "
                             f"other content (not a results repository of format {REPOSITORY_FORMAT}, or edited); "
                             "nothing written")
    written = []
    if marker not in same:
        root.mkdir(parents=True, exist_ok=True)
        write_repository_marker(root)
        written.append(marker)
    for rel, text in wanted.items():
        path = root / rel
        if path not in same:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, text)
            written.append(path)
    return written, same

def init_git(root: Path, wrote: bool = True) -> str | None:
    """Make ``root`` a git repository whose first commit, on ``main`` (what ``leaderboard
    check`` compares pull requests with), holds the files init-repo writes, unless it is in
    one already: one line saying what was done, or exactly what to run when it could not be
    done (git missing, a commit refused); None when it is in git and nothing was written."""

    root = Path(root)
    files = [REPOSITORY_MARKER, *TEMPLATES]
    add = f"git -C {_quote(root)} add -- {' '.join(files)}"
    by_hand = (f"git -C {_quote(root)} init -b {MAIN_BRANCH} && {add} && "
               f"git -C {_quote(root)} commit -m 'A statbench results repository'")
    try:
        inside = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True,
                                text=True, check=False)
    except FileNotFoundError:
        return f"git is not installed: 'leaderboard check' needs the repository in git; run: {by_hand}"
    if inside.returncode == 0:
        top = inside.stdout.strip()
        return (f"{root} is in the git repository {top}: commit the files written ({add} && "
                f"git -C {_quote(root)} commit)") if wrote else None
    for args in (("init", "-q", "-b", MAIN_BRANCH), ("add", "--", *files)):
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"git {args[0]} failed ({_last(done)}); run: {by_hand}"
    identity = []
    for key, fallback in zip(("user.name", "user.email"), INIT_IDENTITY):
        configured = subprocess.run(["git", "-C", str(root), "config", key], capture_output=True, text=True,
                                    check=False).stdout.strip()
        if not configured:
            identity += ["-c", f"{key}={fallback}"]
    done = subprocess.run(["git", "-C", str(root), *identity, "commit", "-q", "-m", "A statbench results repository"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return (f"initialised git on branch {MAIN_BRANCH}, but the first commit failed ({_last(done)}); run: "
                f"git -C {_quote(root)} commit -m 'A statbench results repository'")
    return f"initialised git with a first commit on branch {MAIN_BRANCH}: 'leaderboard check' works at once"

def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))

def _last(done: subprocess.CompletedProcess) -> str:
    lines = (done.stderr or done.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"
