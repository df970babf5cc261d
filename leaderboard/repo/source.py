"""A submission's code source: ``source.json``, which says where each third-party
distribution a run used can be installed from, so that ``reproduce`` installs that code
and a stranger's reproduce line works.

::

    {"format": 1, "statbench": "0.1.0",
     "distributions": [
        {"name": "x", "version": "1.2.0", "kind": "index"},
        {"name": "y", "version": "0.3", "kind": "wheel", "file": "y-0.3-py3-none-any.whl", "sha256": "<64 hex>"},
        {"name": "z", "version": "2.0", "kind": "git", "url": "https://…", "commit": "<40 hex>",
         "subdirectory": null},
        {"name": "w", "version": "1.0", "kind": "none", "reason": "…"}]}

``index``: ``pip install NAME==VERSION`` from the package index; ``wheel``: a wheel stored
in the submission folder beside the run; ``git``: a commit of a git repository; ``none``:
no source statbench could record (the submission is accepted, marked "source not
published"). statbench's own built-ins need no entry. This module reads and writes the
file strictly and turns it into pip arguments; finding a source for an installed
distribution is :mod:`statbench.leaderboard.repo.source_finder`'s job."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from statbench.errors import DataFormatError, StatbenchError
from statbench.results.record import parse_strict

SOURCE_FILE = "source.json"
SOURCE_FORMAT = 1
KINDS = ("index", "wheel", "git", "none")
#: what a board shows for a submission whose code cannot be installed
NOT_PUBLISHED = "source not published"
#: the fields each kind holds besides name, version and kind (all of them, no others)
_FIELDS = {"index": (), "wheel": ("file", "sha256"), "git": ("url", "commit", "subdirectory"), "none": ("reason",)}


@dataclass(frozen=True)
class DistSource:
    """Where one distribution's code comes from (the fields of its ``kind``; others None)."""

    name: str
    version: str
    kind: str
    file: str | None = None
    sha256: str | None = None
    url: str | None = None
    commit: str | None = None
    subdirectory: str | None = None
    reason: str | None = None

    def to_json(self) -> dict:
        obj = {"name": self.name, "version": self.version, "kind": self.kind}
        obj.update({key: getattr(self, key) for key in _FIELDS[self.kind]})
        return obj

@dataclass(frozen=True)
class SourceRecord:
    """What ``source.json`` holds: the statbench version the run recorded and one entry
    per third-party distribution the run used."""

    statbench: str
    distributions: tuple[DistSource, ...] = ()

    def to_json(self) -> dict:
        return {"format": SOURCE_FORMAT, "statbench": self.statbench,
                "distributions": [d.to_json() for d in self.distributions]}

    def wheel_files(self) -> list[str]:
        """The file names of the wheels stored beside the run."""
        return [d.file for d in self.distributions if d.kind == "wheel"]

class SourceNotPublished(StatbenchError):
    """The submission has a distribution with no recorded source: nothing to install."""

def source_text(record: SourceRecord) -> str:
    """``source.json`` as written (sorted keys: the same record, the same bytes)."""
    return json.dumps(record.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"

def read_source(folder: Path) -> SourceRecord:
    """``folder/source.json`` read strictly; a wheel it names must be in ``folder``, a
    regular file hashing to its sha256, with a wheel file name (and metadata) of that
    distribution and version. Anything off is one ``DataFormatError`` line."""

    path = Path(folder) / SOURCE_FILE
    if path.is_symlink() or not path.is_file():
        raise DataFormatError(path, "missing or not a regular file")
    try:
        obj = parse_strict(path.read_bytes())
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    except (ValueError, RecursionError) as exc:
        raise DataFormatError(path, f"not valid JSON: {exc}") from None
    record = parse_source(obj, path)
    for dist in record.distributions:
        if dist.kind == "wheel":
            _check_stored_wheel(Path(folder) / dist.file, dist, path)
    return record

def parse_source(obj, path: Path) -> SourceRecord:
    """A :class:`SourceRecord` from ``source.json``'s parsed JSON (the stored wheels not
    looked at); ``path`` names the file in the one-line error."""
    if not isinstance(obj, dict) or set(obj) != {"format", "statbench", "distributions"}:
        found = _keys(obj) if isinstance(obj, dict) else f"a JSON {type(obj).__name__}"
        raise DataFormatError(path, f"expected an object with exactly format, statbench, distributions; found {found}")
    if type(obj["format"]) is not int or obj["format"] != SOURCE_FORMAT:
        raise DataFormatError(path, f"format {obj['format']!r}: this statbench reads source format {SOURCE_FORMAT}",
                              field="format")
    if not _is_text(obj["statbench"]) or not obj["statbench"]:
        raise DataFormatError(path, "not a version (a non-empty one-line string)", field="statbench")
    if not isinstance(obj["distributions"], list):
        raise DataFormatError(path, "not a list", field="distributions")
    dists, seen = [], {}
    for i, entry in enumerate(obj["distributions"]):
        dist = _parse_dist(entry, path, f"distributions[{i}]")
        key = canonical_name(dist.name)
        if key in seen:
            raise DataFormatError(path, f"{dist.name!r} is listed twice (also distributions[{seen[key]}])",
                                  field=f"distributions[{i}].name")
        seen[key] = i
        dists.append(dist)
    files = [d.file for d in dists if d.kind == "wheel"]
    if len(set(files)) != len(files):
        raise DataFormatError(path, "two distributions name one wheel file", field="distributions")
    return SourceRecord(statbench=obj["statbench"], distributions=tuple(dists))

def _parse_dist(entry, path: Path, where: str) -> DistSource:
    if not isinstance(entry, dict):
        raise DataFormatError(path, "not an object", field=where)
    kind = entry.get("kind")
    if kind not in KINDS:
        raise DataFormatError(path, f"kind {kind!r}: one of {', '.join(KINDS)}", field=f"{where}.kind")
    wanted = {"name", "version", "kind", *_FIELDS[kind]}
    if set(entry) != wanted:
        raise DataFormatError(path, f"an entry of kind {kind!r} holds exactly {', '.join(sorted(wanted))}; found "
                                    f"{_keys(entry)}", field=where)

    def bad(key: str, why: str):
        return DataFormatError(path, f"{entry[key]!r}: {why}", field=f"{where}.{key}")

    name, version = entry["name"], entry["version"]
    if not _is_text(name) or not DIST_NAME.fullmatch(name):
        raise bad("name", "not a distribution name")
    if canonical_name(name) == BUILTIN:
        raise bad("name", "statbench itself is not a plugin distribution (its built-ins need no entry)")
    if kind == "none":
        if not _is_text(version):
            raise bad("version", "not a version (a one-line string; empty when unknown)")
    elif not _is_text(version) or normal_version(version) is None:
        raise bad("version", "not a PEP 440 version")
    if kind == "wheel":
        if not _is_text(entry["file"]) or wheel_name_problem(entry["file"], name, version):
            raise bad("file", wheel_name_problem(entry["file"], name, version) if _is_text(entry["file"])
                      else "not a file name")
        if not isinstance(entry["sha256"], str) or not SHA256.fullmatch(entry["sha256"]):
            raise bad("sha256", "not a sha256 (64 lowercase hex digits)")
    elif kind == "git":
        problem = git_url_problem(entry["url"]) if isinstance(entry["url"], str) else "not a URL"
        if problem:
            raise bad("url", problem)
        if not isinstance(entry["commit"], str) or not COMMIT.fullmatch(entry["commit"]):
            raise bad("commit", "not a full commit id (40 lowercase hex digits)")
        sub = entry["subdirectory"]
        if sub is not None and (not isinstance(sub, str) or subdirectory_problem(sub)):
            raise bad("subdirectory", subdirectory_problem(sub) if isinstance(sub, str) else "not a path or null")
    elif kind == "none":
        if not _is_text(entry["reason"]) or not entry["reason"].strip():
            raise bad("reason", "not a reason (a non-empty one-line string)")
    return DistSource(**{key: entry.get(key) for key in ("name", "version", "kind", "file", "sha256", "url", "commit",
                                                         "subdirectory", "reason")})

def _check_stored_wheel(wheel: Path, dist: DistSource, source_path: Path) -> None:
    """The stored wheel exists, is a regular file, hashes to the recorded sha256 and is
    a wheel whose metadata names this distribution and version."""
    import hashlib

    if wheel.is_symlink() or not wheel.is_file():
        raise DataFormatError(source_path, f"names the wheel {dist.file!r}, which is not a regular file beside it",
                              field="distributions")
    digest = hashlib.sha256()
    with open(wheel, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != dist.sha256:
        raise DataFormatError(wheel, f"hashes to {digest.hexdigest()[:12]}…, not to the {dist.sha256[:12]}… "
                                     f"{SOURCE_FILE} records")
    problem = wheel_metadata_problem(wheel, dist.name, dist.version)
    if problem:
        raise DataFormatError(wheel, problem)

def used_distributions(results) -> list[tuple[str, str | None]]:
    """(distribution, recorded version) of every third-party plugin the run used (task,
    model, reranker; each once, in that order); a plugin registered in-process, by no
    distribution, as (:func:`in_process_name`, None); a distribution whose version the run
    did not record with version ""."""
    out: dict[str, tuple[str, str | None]] = {}
    for part in (results.task, results.model, results.reranker):
        plugin = getattr(part, "plugin", None) if part is not None else None
        if plugin is None:
            continue
        if plugin.distribution is None:
            name = in_process_name(plugin.name)
            out.setdefault(canonical_name(name), (name, None))
        elif canonical_name(plugin.distribution) != BUILTIN:
            out.setdefault(canonical_name(plugin.distribution), (plugin.distribution, plugin.version or ""))
    return list(out.values())

def in_process_name(plugin_name: str) -> str:
    """The entry name of a plugin registered in-process (no distribution to name it by)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", plugin_name).strip("-._") or "plugin"

def source_problems(record: SourceRecord, results) -> list[str]:
    """How ``record`` disagrees with the run ``results`` records: the statbench version,
    and one entry per third-party distribution the run used, at its recorded version."""
    problems = []
    if record.statbench != results.statbench_version:
        problems.append(f"statbench {record.statbench!r}, but the run recorded {results.statbench_version!r}")
    listed = {canonical_name(d.name): d for d in record.distributions}
    used = {canonical_name(name): (name, version) for name, version in used_distributions(results)}
    for key, (name, version) in used.items():
        dist = listed.get(key)
        if dist is None:
            problems.append(f"no entry for {name} {version or '(in-process)'}, which the run used")
        elif version is None and dist.kind != "none":
            problems.append(f"{name}: registered in-process by the run, so it has no source to publish")
        elif version is not None and normal_version(dist.version) != normal_version(version):
            problems.append(f"{dist.name} {dist.version}, but the run recorded version {version}")
    problems += [f"{d.name}: the run used no plugin of this distribution" for key, d in listed.items()
                 if key not in used]
    return problems

def published(record: SourceRecord) -> bool:
    """Whether every distribution has a source to install from (none of kind "none")."""
    return all(d.kind != "none" for d in record.distributions)

def unpublished_reasons(record: SourceRecord) -> list[str]:
    """``NAME VERSION: reason`` of each distribution without a source."""
    return [f"{d.name} {d.version}".strip() + f": {d.reason}" for d in record.distributions if d.kind == "none"]

def pip_requirements(record: SourceRecord, folder: Path) -> list[str]:
    """The ``pip install`` arguments that install the distributions (a stored wheel by its
    absolute path in ``folder``); :class:`SourceNotPublished` when one has no source."""
    if not published(record):
        raise SourceNotPublished(f"{NOT_PUBLISHED}: {'; '.join(unpublished_reasons(record))}")
    out = []
    for dist in record.distributions:
        if dist.kind == "index":
            out.append(f"{dist.name}=={dist.version}")
        elif dist.kind == "wheel":
            out.append(str((Path(folder) / dist.file).absolute()))
        else:
            out.append(git_requirement(dist))
    return out

def install_line(record: SourceRecord, note: bool = True) -> str | None:
    """The ``pip install …`` a stranger types before the recorded command, or None when the
    source is not published ("" when the run used only statbench's own plugins). ``note``:
    say after it that stored wheels are beside the run (text, not shell: off where the line
    is followed by ``&& statbench run …``)."""
    if not published(record):
        return None
    if not record.distributions:
        return ""
    words = []
    for dist in record.distributions:
        if dist.kind == "index":
            words.append(shlex.quote(f"{dist.name}=={dist.version}"))
        elif dist.kind == "wheel":
            words.append(shlex.quote(f"./{dist.file}"))
        else:
            words.append(shlex.quote(git_requirement(dist)))
    stored = " (stored beside the run)" if note and record.wheel_files() else ""
    return f"pip install {' '.join(words)}{stored}"

def git_requirement(dist: DistSource) -> str:
    """``git+URL@COMMIT[#subdirectory=…]``: what pip installs a git source from."""
    text = f"git+{dist.url}@{dist.commit}"
    return text + (f"#subdirectory={dist.subdirectory}" if dist.subdirectory else "")

# --- names, versions, URLs ----------------------------------------------------------------------------

BUILTIN = "statbench"
#: PEP 508 distribution names
DIST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
SHA256 = re.compile(r"[0-9a-f]{64}")
COMMIT = re.compile(r"[0-9a-f]{40}")
#: PEP 440 (the pattern the ``packaging`` library publishes)
_VERSION = re.compile(r"""
    v?(?:(?P<epoch>[0-9]+)!)?(?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?""", re.VERBOSE | re.IGNORECASE)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}
#: schemes a stranger can fetch from (never ``file``: a path on the submitter's machine)
_GIT_SCHEMES = ("https", "http", "ssh", "git")


def canonical_name(name: str) -> str:
    """PEP 503's normal form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()

def normal_version(version: str) -> str | None:
    """PEP 440's normal form of ``version`` (what wheel file names and indexes carry), or
    None when it is not a PEP 440 version."""
    match = _VERSION.fullmatch(version.strip()) if "\n" not in version else None
    if match is None:
        return None
    g = match.groupdict()
    text = f"{int(g['epoch'])}!" if g["epoch"] and int(g["epoch"]) else ""
    text += ".".join(str(int(part)) for part in g["release"].split("."))
    if g["pre_l"]:
        text += _PRE[g["pre_l"].lower()] + str(int(g["pre_n"] or 0))
    if g["post"]:
        text += f".post{int(g['post_n1'] or g['post_n2'] or 0)}"
    if g["dev"]:
        text += f".dev{int(g['dev_n'] or 0)}"
    if g["local"]:
        text += "+" + ".".join(part.lower() for part in re.split(r"[-_.]", g["local"]))
    return text

def wheel_name_problem(file: str, name: str, version: str) -> str | None:
    """Why ``file`` is not the file name of a wheel of ``name`` ``version`` (or None)."""
    if "/" in file or "\\" in file or file.startswith(".") or not _is_text(file):
        return "not a plain file name"
    if not file.endswith(".whl"):
        return "not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)"
    parts = file[:-4].split("-")
    if len(parts) not in (5, 6) or not all(parts) or (len(parts) == 6 and not parts[2][:1].isdigit()) \
            or not all(re.fullmatch(r"[A-Za-z0-9_.]+", part) for part in parts[2:]):
        return "not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)"
    if canonical_name(parts[0]) != canonical_name(name):
        return f"a wheel of {parts[0]!r}, not of {name!r}"
    if normal_version(parts[1]) is None or normal_version(parts[1]) != normal_version(version):
        return f"a wheel of version {parts[1]!r}, not {version!r}"
    return None

def wheel_metadata_problem(wheel: Path, name: str, version: str) -> str | None:
    """Why the wheel at ``wheel`` is not a wheel of ``name`` ``version`` by its own
    metadata (one ``*.dist-info/METADATA`` naming them), or None."""
    import zipfile
    from email.parser import HeaderParser

    try:
        with zipfile.ZipFile(wheel) as archive:
            metas = [n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
            if len(metas) != 1:
                return f"not a wheel: {len(metas)} *.dist-info/METADATA files (a wheel has one)"
            headers = HeaderParser().parsestr(archive.read(metas[0]).decode("utf-8"))
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, ValueError) as exc:
        return f"not a readable wheel ({exc})"
    found_name, found_version = headers.get("Name") or "", headers.get("Version") or ""
    if canonical_name(found_name) != canonical_name(name) or normal_version(found_version) != normal_version(version):
        return f"its metadata names {found_name} {found_version}, not {name} {version}"
    return None

def git_url_problem(url: str) -> str | None:
    """Why ``url`` is not a git URL pip can install from and a stranger can fetch (no
    credentials, nothing pip would read as a revision or fragment), or None."""
    from urllib.parse import urlsplit

    if not _is_text(url) or any(c.isspace() for c in url):
        return "not a URL (it holds spaces or line breaks)"
    parts = urlsplit(url)
    if parts.scheme not in _GIT_SCHEMES:
        return f"scheme {parts.scheme or '(none)'!r}: one of {', '.join(_GIT_SCHEMES)}"
    if not parts.hostname:
        return "no host"
    # over ssh a user name is who logs in (git@host); over http(s) and git:// it can only be a
    # credential (https://TOKEN@github.com/...: the way a token is put in a remote)
    if parts.password is not None or (parts.username is not None and parts.scheme != "ssh"):
        return "holds a password or token (a published source names no credentials)"
    if parts.query or parts.fragment or "#" in url or "@" in parts.path:
        return "holds a query, a fragment or an '@' in its path (pip would read them as a revision or option)"
    return None

def subdirectory_problem(sub: str) -> str | None:
    """Why ``sub`` is not a relative folder inside a repository, or None."""
    from pathlib import PurePosixPath

    if not _is_text(sub) or not sub or sub.startswith("/") or "\\" in sub or any(c in sub for c in "#&?@ "):
        return "not a relative folder path"
    if any(part in ("", ".", "..") for part in sub.split("/")) or PurePosixPath(sub).is_absolute():
        return "not a relative folder path inside the repository"
    return None

def _keys(obj: dict) -> str:
    """An object's keys for a one-line message (at most 8, odd ones by their repr)."""
    keys = sorted(obj)
    shown = ", ".join(k if _is_text(k) and len(k) <= 40 else repr(k[:40]) for k in keys[:8])
    return (shown or "(none)") + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")

def _is_text(value) -> bool:
    """A one-line string (no control characters)."""
    return isinstance(value, str) and not any(ord(c) < 32 or ord(c) == 127 for c in value)
