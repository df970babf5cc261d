"""Where the code of the third-party distributions a run used can be installed from, found
by ``statbench submit`` on the machine that made the run (:mod:`.source` is the record).

For each distribution (task, model, reranker plugins; statbench's own need nothing), the
installed version must be the one the run recorded. Then, from how it was installed
(pip's ``direct_url.json``, PEP 610):

- from the package index (no ``direct_url.json``) and the index lists that version, and
  the installed files are as installed (RECORD's hashes): ``index``;
- from a git URL (``vcs_info``): ``git`` at the installed commit;
- editable from a folder: ``git`` when the folder is a clean git work tree whose commit a
  remote holds, else a ``wheel`` built from the folder;
- anything else (a local wheel or folder, an index that did not answer or does not list
  it): a ``wheel`` rebuilt from the installed files when every one still hashes to RECORD
  and lies in site-packages, else ``none`` with the reason.

The index is asked once per distribution (a bounded request); no answer means "not known
to be on the index", said in a note, never a guess."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from statbench.data.checksum import file_sha256
from statbench.errors import StatbenchError
from statbench.leaderboard.repo.source import (
    DIST_NAME,
    DistSource,
    SourceRecord,
    canonical_name,
    git_url_problem,
    normal_version,
    subdirectory_problem,
    used_distributions,
    wheel_metadata_problem,
    wheel_name_problem,
)

DEFAULT_INDEX = "https://pypi.org/simple"
#: seconds one index request may take
INDEX_TIMEOUT = 5.0
#: seconds ``pip wheel`` may take to build a plugin's wheel
BUILD_TIMEOUT = 600
#: a fixed time for the entries of a rebuilt wheel: the same files give the same bytes
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class SourceError(StatbenchError):
    """The run's plugins cannot be matched to what is installed here; one line."""


@dataclass
class FoundSources:
    """The record, the wheels to store beside the run (file name -> built file) and one
    note per distribution saying where its source is."""

    record: SourceRecord
    wheels: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def default_index_url() -> str:
    return os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX


class SourceFinder:
    """Finds sources for one ``submit``: each distribution looked at once (one index
    request, one wheel build), wheels built under ``work_dir``."""

    def __init__(self, work_dir: Path, index_url: str | None = None, timeout: float = INDEX_TIMEOUT):
        self.work_dir = Path(work_dir)
        self.index_url = (index_url or default_index_url()).rstrip("/")
        self.shown_index = _without_credentials(self.index_url)
        self.timeout = timeout
        self._found: dict[str, tuple[DistSource, Path | None, str]] = {}

    def sources_of(self, results) -> FoundSources:
        """The :class:`FoundSources` of one run (:class:`SourceError` when a plugin it used
        is not installed here at the recorded version)."""
        dists, wheels, notes = [], {}, []
        for name, version in used_distributions(results):
            key = canonical_name(name)
            if key not in self._found:
                self._found[key] = self._find(name, version)
            dist, wheel, note = self._found[key]
            dists.append(dist)
            notes.append(note)
            if wheel is not None:
                wheels[dist.file] = wheel
        return FoundSources(SourceRecord(statbench=results.statbench_version, distributions=tuple(dists)),
                            wheels, notes)

    # --- one distribution ----------------------------------------------------------------------

    def _find(self, name: str, version: str | None) -> tuple[DistSource, Path | None, str]:
        if version is None:
            reason = "registered in-process by the run, not by an installed distribution"
            return _none(name, "", reason)
        if not version:
            raise SourceError(f"the run recorded no version of {name}: what it ran cannot be matched to what is "
                              "installed here")
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise SourceError(f"the run used {name} {version}, which is not installed here: submit from the "
                              "environment that made the run") from None
        if normal_version(dist.version or "") != normal_version(version) or normal_version(version) is None:
            raise SourceError(f"the run used {name} {version} but {dist.version} is installed here: the run was made "
                              "by another version than the one whose source would be recorded; re-run it or "
                              f"install {name}=={version}")
        name = dist.metadata["Name"] or name
        if not DIST_NAME.fullmatch(name):
            raise SourceError(f"{name!r}: the installed distribution's name is not a distribution name")
        direct = _direct_url(dist)
        if direct is None:
            return self._from_index_or_files(dist, name, version)
        url = direct.get("url")
        if isinstance(direct.get("vcs_info"), dict):
            return self._from_vcs(dist, name, version, url, direct)
        if isinstance(direct.get("dir_info"), dict) and direct["dir_info"].get("editable") is True:
            return self._from_folder(name, version, _file_path(url))
        if isinstance(direct.get("archive_info"), dict):
            kept = self._installed_wheel(url, direct["archive_info"], name, version)
            if kept is not None and not _changed_files(dist):
                return self._stored(name, version, kept, "the wheel it was installed from")
        how = "from a local folder" if isinstance(direct.get("dir_info"), dict) else f"from {url}"
        return self._from_installed_files(dist, name, version, f"installed {how}")

    def _installed_wheel(self, url, archive: dict, name: str, version: str) -> Path | None:
        """A copy of the local wheel file the distribution was installed from, when it is
        still there with the hash pip recorded at install time; else None."""
        import shutil

        path = _file_path(url)
        hashes = archive.get("hashes") if isinstance(archive.get("hashes"), dict) else {}
        recorded = hashes.get("sha256") or (archive.get("hash") or "").removeprefix("sha256=") or None
        if path is None or not path.name.endswith(".whl") or not isinstance(recorded, str) or not path.is_file() \
                or wheel_name_problem(path.name, name, version):
            return None
        copy = self._fresh_dir(name) / path.name
        try:
            shutil.copyfile(path, copy)
        except OSError:
            return None
        return copy if file_sha256(copy) == recorded.lower() else None

    def _from_index_or_files(self, dist, name: str, version: str):
        if _dist_info_dir(dist) is None:  # an *.egg-info: ``setup.py develop`` or ``install``
            folder = Path(getattr(dist, "_path", "")).parent
            if any((folder / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
                return self._from_folder(name, version, folder)
            return _none(name, version, "not installed by a wheel installer (no *.dist-info): what ran is unknown")
        changed = _changed_files(dist)
        if changed:
            return _none(name, version, f"installed files differ from what was installed ({changed})")
        listed, why = self._index_lists(name, version)
        if listed:
            return (DistSource(name, version, "index"), None,
                    f"{name} {version}: on the index {self.shown_index} (pip install {name}=={version})")
        return self._from_installed_files(dist, name, version, why)

    def _from_vcs(self, dist, name, version, url, direct):
        vcs = direct["vcs_info"]
        commit, sub = vcs.get("commit_id"), direct.get("subdirectory")
        clean_url = _public_git_url(url or "")
        if vcs.get("vcs") == "git" and clean_url and isinstance(commit, str) and len(commit) == 40 \
                and (sub is None or not subdirectory_problem(sub)) and not _changed_files(dist):
            return (DistSource(name, version, "git", url=clean_url, commit=commit.lower(), subdirectory=sub), None,
                    f"{name} {version}: git {clean_url} at {commit[:12]}")
        shown = _without_credentials(url[4:] if isinstance(url, str) and url.startswith("git+") else str(url))
        return self._from_installed_files(dist, name, version, f"installed from {vcs.get('vcs')} {shown}, "
                                          "not a public git URL and full commit")

    def _from_folder(self, name: str, version: str, folder: Path | None):
        """An editable install: the folder's git commit, else a wheel built from it."""
        if folder is None or not folder.is_dir():
            return _none(name, version, "installed editable from a folder that is no longer there")
        git, why = _git_source(folder)
        if git is not None:
            url, commit, sub = git
            return (DistSource(name, version, "git", url=url, commit=commit, subdirectory=sub), None,
                    f"{name} {version}: git {url} at {commit[:12]}" + (f" ({sub})" if sub else ""))
        built, problem = self._build_wheel(folder, name, version)
        if built is None:
            return _none(name, version, f"installed editable from {folder} ({why}); no wheel could be built: {problem}")
        return self._stored(name, version, built, f"built from {folder} ({why})")

    def _from_installed_files(self, dist, name: str, version: str, why: str):
        changed = _changed_files(dist)
        if changed:
            return _none(name, version, f"{why}; installed files differ from what was installed ({changed})")
        built, problem = self._rebuild_wheel(dist, name, version)
        if built is None:
            return _none(name, version, f"{why}; no wheel could be rebuilt from the installed files: {problem}")
        return self._stored(name, version, built, f"rebuilt from the installed files ({why})")

    def _stored(self, name: str, version: str, wheel: Path, how: str):
        problem = wheel_name_problem(wheel.name, name, version) or wheel_metadata_problem(wheel, name, version)
        if problem:
            return _none(name, version, f"the wheel {how} is not one of {name} {version}: {problem}")
        digest = file_sha256(wheel)
        return (DistSource(name, version, "wheel", file=wheel.name, sha256=digest), wheel,
                f"{name} {version}: wheel {wheel.name} {how}, stored beside the run")

    # --- the index -----------------------------------------------------------------------------

    def _index_lists(self, name: str, version: str) -> tuple[bool, str]:
        """Whether the index's simple page of ``name`` lists a file of ``version`` (one
        bounded request), and why not."""
        import urllib.error
        import urllib.request

        page = f"{self.index_url}/{canonical_name(name)}/"
        request = urllib.request.Request(page, headers={
            "Accept": "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
                      "text/html;q=0.1"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                kind = response.headers.get("Content-Type", "")
                body = response.read(32 << 20)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return False, f"not on the index {self.shown_index}"
            return False, f"the index {self.shown_index} answered {exc.code}: not known to be on it"
        except (OSError, ValueError) as exc:
            return False, f"no answer from the index {self.shown_index} ({_short(exc)}): not known to be on it"
        files = _index_files(body, kind)
        if files is None:
            return False, f"the index {self.shown_index} answered a page statbench cannot read: not known to be on it"
        wanted = normal_version(version)
        if any(_file_version(f, name) == wanted for f in files):
            return True, ""
        return False, f"{version} is not on the index {self.shown_index}"

    # --- wheels --------------------------------------------------------------------------------

    def _build_wheel(self, folder: Path, name: str, version: str) -> tuple[Path | None, str]:
        """``pip wheel`` of a copy of ``folder`` (a build writes into the tree it builds: the
        submitter's folder is left as it is; no dependencies, this environment's build tools)."""
        import shutil

        out = self._fresh_dir(name)
        copy = self._fresh_dir(name) / "src"
        try:
            shutil.copytree(folder, copy, symlinks=True, ignore=lambda where, names: _not_source(
                names, top=Path(where) == Path(folder)))
        except (OSError, shutil.Error) as exc:
            return None, f"its folder could not be copied to build from ({_short(exc)})"
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                   "--disable-pip-version-check", "-q", "-w", str(out), str(copy)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                                  env={**os.environ, "PIP_NO_INPUT": "1"})
        except subprocess.TimeoutExpired:
            return None, f"pip wheel ran over {BUILD_TIMEOUT} s"
        if done.returncode != 0:
            lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
            return None, f"pip wheel failed: {lines[-1].strip() if lines else 'exit ' + str(done.returncode)}"
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            return None, f"pip wheel made {len(wheels)} wheels, not one"
        return wheels[0], ""

    def _rebuild_wheel(self, dist, name: str, version: str) -> tuple[Path | None, str]:
        """A wheel of exactly the installed files: only when RECORD lists them all with
        hashes that still match, they lie in site-packages (console scripts, which an
        installer writes from entry_points.txt, aside) and WHEEL names the tags."""
        info = _dist_info_dir(dist)
        if info is None:
            return None, "no *.dist-info folder (not installed by a wheel installer)"
        record_text, wheel_text = dist.read_text("RECORD"), dist.read_text("WHEEL")
        if not record_text or not wheel_text:
            return None, f"{info.name} has no RECORD or WHEEL"
        tag = _wheel_tag(wheel_text)
        if tag is None:
            return None, f"{info.name}/WHEEL names no tags statbench can put in a file name"
        root = info.parent
        scripts = _script_names(dist)
        skip = {f"{info.name}/{n}" for n in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")}
        members: dict[str, bytes] = {}
        for row in csv.reader(io.StringIO(record_text)):
            if not row:
                continue
            path, digest = row[0], row[1] if len(row) > 1 else ""
            if path in skip or path.endswith(".pyc") or "__pycache__/" in path:
                continue
            pure = PurePosixPath(path)
            if pure.is_absolute() or ".." in pure.parts:
                if pure.name in scripts or pure.stem in scripts:
                    continue  # a console script the installer generated from entry_points.txt
                return None, f"{path} is installed outside site-packages (a script or data file)"
            data = _read(root / path)
            if data is None:
                return None, f"{path} is listed in RECORD but not there"
            if not digest.startswith("sha256="):
                return None, f"RECORD holds no sha256 of {path}"
            if _record_hash(data) != digest:
                return None, f"{path} differs from what was installed (its RECORD hash)"
            members[path] = data
        if f"{info.name}/METADATA" not in members:
            return None, f"{info.name}/METADATA is not in RECORD"
        filename = f"{_escape(name)}-{_escape_version(version)}-{tag}.whl"
        target = self._fresh_dir(name) / filename
        _write_wheel(target, members, info.name)
        return target, ""

    def _fresh_dir(self, name: str) -> Path:
        folder = self.work_dir / f"{canonical_name(name)}-{len(list(self.work_dir.glob('*')))}"
        folder.mkdir(parents=True)
        return folder


# --- helpers ------------------------------------------------------------------------------------------

def _none(name: str, version: str, reason: str):
    return (DistSource(name, version, "none", reason=reason), None,
            f"{name} {version}: source not published ({reason})".replace(" :", ":"))


def _not_source(names: list[str], top: bool) -> set[str]:
    """What a copy to build from leaves out: version control, caches, virtual
    environments and (at the top) earlier build outputs."""
    skip = {".git", ".hg", "__pycache__", ".venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache"}
    skip |= {"build", "dist", "venv"} if top else set()
    return {n for n in names if n in skip or n.endswith(".egg-info")}


def _direct_url(dist) -> dict | None:
    text = dist.read_text("direct_url.json")
    if text is None:
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return {"url": None}
    return obj if isinstance(obj, dict) else {"url": None}


def _file_path(url) -> Path | None:
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


def _public_git_url(url: str) -> str | None:
    """A git URL with pip's ``git+`` taken off, or None when it is not one a stranger can
    fetch (credentials, a local path)."""
    url = url[4:] if url.startswith("git+") else url
    if git_url_problem(url) or urlsplit(url).scheme == "file":
        return None
    return url


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _git_source(folder: Path) -> tuple[tuple[str, str, str | None] | None, str]:
    """(url, commit, subdirectory) of a clean git work tree whose commit a remote-tracking
    branch holds, else None and why not."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        return None, "not a git work tree"
    status = _git(folder, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    if status is None or status:
        return None, "its folder has uncommitted changes"
    if not _git(folder, "ls-files", "--", "pyproject.toml", "setup.py"):
        return None, "its project file (pyproject.toml or setup.py) is not committed"
    ignored = [line[3:] for line in (_git(folder, "status", "--porcelain", "--ignored", "--", ".") or "").splitlines()
               if line.startswith("!! ") and not _not_source([PurePosixPath(line[3:].rstrip("/")).name], top=True)
               and not line.endswith(".pyc")]
    if ignored:
        return None, f"its folder holds files git ignores ({ignored[0]}), which a checkout of the commit lacks"
    commit = _git(folder, "rev-parse", "HEAD")
    if commit is None or len(commit) != 40:
        return None, "its git work tree has no commit"
    remotes = _git(folder, "branch", "-r", "--contains", commit)
    if not remotes:
        return None, f"commit {commit[:12]} is on no remote branch (not pushed)"
    remote = remotes.splitlines()[0].strip().split("/", 1)[0]
    raw = _git(folder, "remote", "get-url", remote) or ""
    url = _public_git_url(_scp_to_ssh(raw))
    if url is None:
        return None, f"its remote {remote!r} has no URL a stranger can fetch"
    sub = Path(folder).resolve().relative_to(Path(top).resolve()).as_posix()
    sub = None if sub == "." else sub
    if sub is not None and subdirectory_problem(sub):
        return None, f"its folder {sub!r} in the repository cannot be named in a pip requirement"
    return (url, commit.lower(), sub), ""


def _scp_to_ssh(url: str) -> str:
    """``git@host:path`` (git's scp form) as ``ssh://git@host/path``."""
    if "://" not in url and ":" in url and "@" in url.split(":", 1)[0]:
        user_host, path = url.split(":", 1)
        return f"ssh://{user_host}/{path.lstrip('/')}"
    return url


def _changed_files(dist) -> str | None:
    """The first installed file that no longer hashes to RECORD, or a file added to one of
    its packages since (None: all as installed, or no RECORD to tell)."""
    info = _dist_info_dir(dist)
    text = dist.read_text("RECORD")
    if info is None or not text:
        return None
    listed = set()
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        listed.add(row[0])
        if len(row) < 2 or not row[1].startswith("sha256="):
            continue
        pure = PurePosixPath(row[0])
        if pure.is_absolute() or ".." in pure.parts:
            continue
        data = _read(info.parent / row[0])
        if data is None:
            return f"{row[0]} is missing"
        if _record_hash(data) != row[1]:
            return f"{row[0]} was edited"
    # the packages it installed (a folder with its __init__.py in RECORD) hold nothing else
    for package in sorted({PurePosixPath(p).parent for p in listed if PurePosixPath(p).name == "__init__.py"
                           and ".." not in PurePosixPath(p).parts}):
        for path in sorted((info.parent / package).rglob("*")):
            relative = path.relative_to(info.parent).as_posix()
            if path.is_file() and relative not in listed and "__pycache__" not in path.parts \
                    and path.suffix != ".pyc":
                return f"{relative} was added"
    return None


def _dist_info_dir(dist) -> Path | None:
    path = getattr(dist, "_path", None)
    if path is None or not str(path).endswith(".dist-info"):
        return None
    return Path(path)


def _script_names(dist) -> set[str]:
    return {ep.name for ep in dist.entry_points if ep.group in ("console_scripts", "gui_scripts")}


def _wheel_tag(text: str) -> str | None:
    """The compressed tag set of a WHEEL file (``py2.py3-none-any``), when its tags are a
    full product of their parts."""
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.lower().startswith("tag:")]
    parts = [t.split("-") for t in tags]
    if not parts or any(len(p) != 3 or not all(p) for p in parts):
        return None
    columns = [sorted({p[i] for p in parts}) for i in range(3)]
    if len(columns[0]) * len(columns[1]) * len(columns[2]) != len(set(tags)):
        return None
    return "-".join(".".join(c) for c in columns)


def _escape(name: str) -> str:
    return canonical_name(name).replace("-", "_")


def _escape_version(version: str) -> str:
    return (normal_version(version) or version).replace("-", "_")


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def _write_wheel(target: Path, members: dict[str, bytes], info_name: str) -> None:
    """A wheel of ``members`` plus a fresh RECORD, entries sorted with a fixed time."""
    rows = [(path, _record_hash(data), str(len(data))) for path, data in sorted(members.items())]
    record_path = f"{info_name}/RECORD"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows + [(record_path, "", "")])
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(members):
            entry = zipfile.ZipInfo(path, _ZIP_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, members[path])
        entry = zipfile.ZipInfo(record_path, _ZIP_TIME)
        entry.external_attr = 0o644 << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(entry, buffer.getvalue())


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None




def _index_files(body: bytes, content_type: str) -> list[str] | None:
    """The file names a PEP 691 JSON or PEP 503 HTML simple page lists, or None."""
    if "json" in content_type:
        try:
            obj = json.loads(body)
            return [f["filename"] for f in obj["files"] if isinstance(f.get("filename"), str)]
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
    from html.parser import HTMLParser

    names: list[str] = []

    class Anchors(HTMLParser):
        def __init__(self):
            super().__init__()
            self.href = None

        def handle_starttag(self, tag, attrs):
            if tag == "a":
                self.href = dict(attrs).get("href")

        def handle_data(self, data):
            if self.href is not None and data.strip():
                names.append(data.strip())

        def handle_endtag(self, tag):
            if tag == "a" and self.href is not None:
                path = urlsplit(self.href).path
                if path:
                    names.append(unquote(path.rsplit("/", 1)[-1]))
                self.href = None

    try:
        Anchors().feed(body.decode("utf-8"))
    except (UnicodeDecodeError, AssertionError):
        return None
    return names


def _file_version(filename: str, name: str) -> str | None:
    """The normal version of a distribution file of ``name`` (wheel or sdist), or None."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) in (5, 6) and canonical_name(parts[0]) == canonical_name(name):
            return normal_version(parts[1])
        return None
    for suffix in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            prefix, _, version = stem.rpartition("-")
            if prefix and canonical_name(prefix) == canonical_name(name):
                return normal_version(version)
    return None


def _without_credentials(url: str) -> str:
    """``url`` as shown in a note: without a user name or password."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return parts._replace(netloc=(parts.hostname or "") + (f":{parts.port}" if parts.port else "")).geturl()


def _short(exc: BaseException) -> str:
    text = str(getattr(exc, "reason", exc)).strip().splitlines()
    return text[0][:120] if text else type(exc).__name__
