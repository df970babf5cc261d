"""Where a model's weights are found on this machine, and their identity in cache keys.

A model parameter naming weights (``model``, ``*_model``) holds a folder or a hub id ``org/name``.
A hub id is looked up, in order, as: an existing directory; a folder assembled by
``statbench models fetch`` (:mod:`statbench.storage.model_recipes`, verified once per process);
a copy under ``$STATBENCH_CACHE/hf/org--name``; a copy shipped by an installed Python
package (a ``folder`` recipe). The core fingerprints such a folder for its cache keys
(:func:`statbench.storage.keys.weights_identity`) without importing any model; the built-in
models load from it (:mod:`statbench.models.shared.hub`)."""

from __future__ import annotations

from pathlib import Path

from statbench.data.checksum import records_digest
from statbench.storage import model_recipes
from statbench.storage.filedigests import file_digests
from statbench.errors import StatbenchError
from statbench.storage.paths import cache_root


def local_copy_dir(hub_id: str) -> Path:
    """Where an offline copy of ``hub_id`` is looked for."""
    return cache_root() / "hf" / hub_id.replace("/", "--")


def _recipe_copy(hub_id: str) -> Path | None:
    """The folder ``statbench models fetch`` assembled for ``hub_id``, if any (a damaged
    one is an error naming the command that repairs it)."""
    recipe = model_recipes.for_hub_id(hub_id)
    return model_recipes.installed(recipe) if recipe is not None else None


def _packaged_copy(hub_id: str) -> Path | None:
    """The copy an installed package ships (a ``folder`` recipe of the registry), if any."""
    wanted = hub_id.lower()
    for recipe in model_recipes.recipes().values():
        if wanted in (recipe.hub_id.lower(), recipe.hub_id.lower().rsplit("/", 1)[-1]):
            return model_recipes.installed_package_copy(recipe)
    return None


def resolve(name: str) -> str:
    """A local directory for ``name`` if there is one, else ``name`` itself (a hub id).
    A name that can only be a path (``./x``, ``/x``, ``~/x``, ``a/b/c``) must exist."""
    if not name:
        raise StatbenchError("no model given: pass --param model=HUB_ID_OR_PATH")
    path = Path(name).expanduser()
    if path.exists():
        return str(path)
    if "/" in name and (name.startswith((".", "/", "~")) or name.count("/") > 1):
        raise StatbenchError(f"model directory {path} not found")
    for candidate in (_recipe_copy(name), local_copy_dir(name), _packaged_copy(name)):
        if candidate is not None and (candidate / "config.json").is_file():
            return str(candidate)
    return name


def fingerprint(name: str) -> str:
    """Identity of a model for cache keys: a local directory by its files (name and
    content: a weights file rewritten keeping its size and times is another model; its
    sha256 is found again by its stat only where that provably identifies it,
    :mod:`statbench.storage.filedigests`), ``dir:DIGEST``; a hub id by its name (hub
    snapshots are immutable per revision), ``hub:ID``."""
    resolved = resolve(name)
    path = Path(resolved)
    if not path.is_dir():
        return f"hub:{resolved}"
    files = sorted(p for p in path.rglob("*") if p.is_file())
    digests = file_digests("weights")
    found = records_digest((str(item.relative_to(path)), str(digests.sha256(item))) for item in files)[:16]
    digests.save()
    return "dir:" + found
