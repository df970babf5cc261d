"""Incremental builds of the site: a board whose inputs did not change since the last build
is not rendered again, nor tested, nor its run files copied: its files are hard-linked
from the previous site into the new one (which is still built beside it and swapped in as
a unit), after checking each against the sha256 the previous build recorded.

The manifest is kept in the site's marker file (``.statbench-site``: its first line says
what the folder is, the rest is this JSON), one entry per board: the digest of everything
that determines the board's files (statbench's version and the site's own code, the build
options, the board's name and slug, every board's name and slug for the navigation, the
installed task's declaration, and per row the results file's path and content (its sha256,
found again by its stat only where that provably identifies it:
:mod:`statbench.storage.filedigests`), the same of its run file and any reproduction file, its
verification), the files it wrote with their sha256, and what the build said about
it (problems, notes, the index line). The state of those files as the build left them is kept
beside, in the cache (:func:`read_states`).
A manifest that does not read, or of another code version, is ignored: a full build."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import stat as stat_module
from pathlib import Path

import statbench
import statbench.leaderboard
from statbench import __version__
from statbench.data.checksum import file_sha256
from statbench.leaderboard.caches.records import code_files
from statbench.registry.plugins import get_registry
from statbench.scoring.reproduction import PREFIX, SUFFIX
from statbench.storage.cache_files import read_framed, write_framed
from statbench.storage.filedigests import file_digests
from statbench.storage.paths import cache_root

MARKER = ".statbench-site"  #: the file that marks a built site (and holds the manifest)
MARKER_TEXT = "built by statbench leaderboard build; this folder is replaced on each build\n"
FORMAT = 1
_STATES_MAGIC = b"statbench-site-states 1\n"


@functools.cache
def code_digest() -> str:
    """sha256 over statbench's version, every file of its core and of the leaderboard
    (code, templates, static files, schemas: by name and content), and the versions of the
    libraries that render and test the boards: other code renders anew."""

    digest = hashlib.sha256(__version__.encode())
    for package in (statbench, statbench.leaderboard):
        for root in map(Path, package.__path__):
            for path in code_files(root):
                digest.update(f"{package.__name__}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    import jinja2
    import numpy

    digest.update(f"jinja2 {jinja2.__version__}\0numpy {numpy.__version__}\0".encode())
    # scipy (the boards' tests) is not imported here: its version file, found without importing it
    spec = importlib.util.find_spec("scipy")
    version = Path(spec.origin).parent / "version.py" if spec is not None and spec.origin else None
    digest.update(b"scipy\0" + (version.read_bytes() if version is not None and version.is_file() else b"-"))
    return digest.hexdigest()

def task_declaration(task: str) -> str:
    """The installed task's declaration as text ("": no such task installed)."""
    entry = get_registry().tasks.get(task)
    if entry is None:
        return ""
    cls = entry.cls
    return repr((cls.__module__, cls.__qualname__, cls.task_info(), getattr(cls, "measures", None)))

def _reproductions(folder: str, prefix: str, suffix: str) -> list[str]:
    """The files ``PREFIX*SUFFIX`` in a folder, sorted (what ``folder.glob`` gives, from one
    ``scandir``: pathlib's glob was most of a digest of 10,000 rows)."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries
                     if e.name.startswith(prefix) and e.name.endswith(suffix) and len(e.name) >= len(prefix) + len(suffix)]
    except OSError:
        return []
    return [os.path.join(folder, name) for name in sorted(names)]

def _row_signature(row, results_root: Path, content) -> list:
    """What a row's files are made of; ``content``: a file's sha256 (None: no such file), never
    its size and times, which a same-size rewrite that sets them back keeps."""

    # strings and os.path, not pathlib: this runs for every row of every board at each build
    path, root = os.fspath(row.path), os.fspath(results_root).rstrip(os.sep)
    if path.startswith(root + os.sep):
        rel = path[len(root) + 1:]
    else:
        try:
            rel = str(row.path.relative_to(results_root))
        except ValueError:
            rel = path
    folder = os.path.dirname(path)
    run = os.path.join(folder, row.run_path) if row.run_path else None
    reproductions = _reproductions(folder, PREFIX, SUFFIX)
    verification = getattr(row, "verification", None)
    return [
        rel, row.key, content(path), None if run is None else [run, content(run)],
        [[os.path.basename(p), content(p)] for p in reproductions],
        None if verification is None else [verification.status, verification.reason, verification.verified_on,
                                           verification.statbench_version],
        list(row.problems), list(row.notes),
        # what the build read beside the results file (its model card, its source.json) and made of it (its level)
        repr(getattr(row, "card", None)), repr(getattr(row, "level", None)), repr(getattr(row, "source", None)),
    ]

def board_digest(name: str, slug: str, rows, options: dict, nav: list[dict], results_root: Path) -> str:
    """The digest of everything a board's files are made from (see the module's note)."""
    import orjson  # sorted JSON, a tenth of the standard library's time over 3,000 rows

    content = file_digests("leaderboard").sha256

    text = orjson.dumps({
        "code": code_digest(), "options": options, "name": name, "slug": slug, "nav": nav,
        "task": task_declaration(rows[0].task),
        "rows": [_row_signature(row, Path(results_root), content) for row in rows],
    }, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return hashlib.sha256(text).hexdigest()

def read_manifest(out_dir: Path) -> dict:
    """The previous build's boards (name -> entry), {} when there is none that can be used."""
    try:
        text = (Path(out_dir) / MARKER).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    if not text.startswith(MARKER_TEXT):
        return {}
    try:
        manifest = json.loads(text[len(MARKER_TEXT):] or "{}")
    except ValueError:
        return {}
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("code") != code_digest():
        return {}
    boards = manifest.get("boards")
    return boards if isinstance(boards, dict) else {}

def marker_text(boards: dict) -> str:
    return MARKER_TEXT + json.dumps({"format": FORMAT, "code": code_digest(), "boards": boards}, sort_keys=True,
                                    ensure_ascii=False, separators=(",", ":")) + "\n"

def reuse(entry: dict | None, digest: str, old_site: Path, new_site: Path, known: dict | None = None) -> bool:
    """Hard-link (or copy, across file systems) a board's files from the previous site into
    the new one when its digest is the same and every file still has the sha256 recorded;
    False (nothing left behind) otherwise."""
    if not entry or entry.get("digest") != digest or not isinstance(entry.get("files"), dict):
        return False
    files = entry["files"]
    known = known or {}
    for rel, sha in files.items():
        source = old_site / rel
        try:
            st = os.lstat(source)
        except (OSError, ValueError):
            return False
        if not stat_module.S_ISREG(st.st_mode):
            return False
        # a file in the state the previous build recorded after writing it is the file it
        # hashed (the record cache's rule: see read_states); any other is hashed again
        if known.get(rel) != [*_file_state(st), sha] and file_sha256(source) != sha:
            return False
    made = []
    try:
        for rel in sorted(files):
            target = new_site / rel
            if target.exists():  # a file two boards share (a reproduction named by its checksum)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(old_site / rel, target)
            except OSError:
                import shutil

                shutil.copy2(old_site / rel, target)
            made.append(target)
    except OSError:
        for target in made:
            target.unlink(missing_ok=True)
        return False
    return True

def _file_state(st) -> list:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]

def _states_file(site: Path) -> Path:
    name = hashlib.sha256(os.path.abspath(site).encode()).hexdigest()
    return cache_root() / "leaderboard-sites" / f"{name}.json"

def read_states(site: Path) -> dict[str, list]:
    """rel -> [size, modification and change times, inode, device, sha256] of the files of the
    site at ``site`` as its last build left them (kept under ``$STATBENCH_CACHE``, not in the
    site, whose files are the same whichever way it was built): a file still in that state is
    the file that was hashed, and is not hashed again when its board is reused. The record
    verifies on read (its sha256); {} when there is none that can be used."""

    found = read_framed(_STATES_MAGIC, _states_file(site))
    if found is None:
        return {}
    try:
        states = json.loads(found[1])
    except ValueError:
        return {}
    return states if isinstance(states, dict) else {}

def write_states(site: Path, boards: dict) -> None:
    """Record the state of every board's files as the build left them (taken after the site
    was swapped in: linking and unlinking a file changes its change time)."""

    states = {}
    for entry in boards.values():
        for rel, sha in entry["files"].items():
            try:
                states[rel] = [*_file_state(os.lstat(site / rel)), sha]
            except OSError:
                continue
    payload = json.dumps(states, sort_keys=True, separators=(",", ":")).encode()
    write_framed(_states_file(site), _STATES_MAGIC, payload)

def files_of(site: Path, rels) -> dict[str, str]:
    """rel -> sha256 of the files a board wrote."""
    return {rel: file_sha256(site / rel) for rel in sorted(set(rels))}
