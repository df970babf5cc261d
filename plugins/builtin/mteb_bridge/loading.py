"""An MTEB model, loaded as ``mteb.get_model`` loads it, from wherever its weights are here.

- A name in MTEB's model registry (``intfloat/multilingual-e5-small``) keeps MTEB's
  ``ModelMeta``: its loader, its prompts and settings, its pinned revision (``revision``
  may only repeat it, as ``mteb.get_model`` requires). Its weights come from a local copy
  statbench finds for the hub id (``$STATBENCH_CACHE/hf/ORG--NAME``, ``statbench models
  fetch``, a package: :func:`statbench.storage.weights.resolve`), else through
  ``mteb.get_model`` itself (the hub, or the hub's cache when the hub is out of reach).
- Any other hub id goes through ``mteb.get_model`` (MTEB builds a ModelMeta from the hub).
- ``name=PATH`` (a folder) is loaded as MTEB loads an unregistered sentence-transformers
  model (``SentenceTransformerEncoderWrapper``): no registered prompts.

Offline with no copy anywhere, one line says what to fetch and where to put it."""

from __future__ import annotations

from pathlib import Path

from statbench.api import (
    FetchStalled,
    StatbenchError,
    fetch_within_bound,
    hub_cache_dir,
    in_hub_cache,
    local_copy_dir,
    offline_if_unreachable,
    offline_reason,
    registered_meta,
    resolve,
)
from statbench.models.shared import hub


def mteb_version() -> str:
    from importlib.metadata import version

    return version("mteb")


def pinned_revision(name: str, revision: str) -> str:
    """The revision a run uses: the one given, else the one MTEB's registry pins (empty for a
    folder or an unregistered model without one). A revision other than the registry's is
    refused, as ``mteb.get_model`` refuses it."""
    if Path(name).expanduser().is_dir():
        if revision:
            raise StatbenchError(f"mteb model {name}: a local folder has no revision (drop --param revision)")
        return ""
    meta = registered_meta(name)
    if meta is not None and meta.revision:
        if revision and revision != meta.revision:
            raise StatbenchError(f"mteb model {name!r}: MTEB's registry pins revision {meta.revision}, not {revision} "
                                 "(mteb.get_model refuses another; drop --param revision or give that one)")
        return meta.revision
    return revision


def missing_hint(name: str, revision: str) -> str:
    """What to fetch and where a copy is looked for."""
    rev = f" --revision {revision}" if revision else ""
    return (f"download it on a machine with internet (`huggingface-cli download {name}{rev} --local-dir DIR`) and put "
            f"the files in {local_copy_dir(name)} (keeps MTEB's registered prompts and settings for {name}), or copy "
            f"the hub cache to {hub_cache_dir()}; --param name=DIR loads a folder as a plain sentence-transformers "
            "model, without MTEB's registered settings")


def check_available(name: str, revision: str) -> None:
    """Refuse now, before any work, a model only an unreachable hub could give."""
    if Path(resolve(name)).exists() or in_hub_cache(name):
        return
    reason = offline_reason()
    if reason is not None:
        raise StatbenchError(f"mteb model {name!r} is not available offline ({reason}) and no local copy was found: "
                             f"{missing_hint(name, revision)}")


def load_model(name: str, revision: str, device: str):
    """The MTEB model object (an ``EncoderProtocol``) of ``name``."""
    import mteb

    folder = Path(name).expanduser()
    local = resolve(name)
    try:
        if folder.is_dir():
            from mteb.models import SentenceTransformerEncoderWrapper

            return SentenceTransformerEncoderWrapper(str(folder), device=device)
        meta = registered_meta(name)
        if meta is not None and Path(local).is_dir():
            # mteb.get_model's own steps (ModelMeta.load_model), with the weights from the local copy
            meta._check_requirements()
            model = meta.loader(local, revision=None, **{**meta.loader_kwargs, "device": device})
            model.mteb_model_meta = meta.model_copy(deep=True)
            return model
        with offline_if_unreachable() as offline:
            try:
                if offline is not None:
                    return mteb.get_model(name, revision or None, device=device)
                return fetch_within_bound(lambda: mteb.get_model(name, revision or None, device=device),
                                          f"mteb model {name!r}")
            except FetchStalled as stalled:
                raise StatbenchError(f"{stalled}: {missing_hint(name, revision)}") from None
            except (OSError, ValueError, KeyError):
                if offline is not None:
                    raise StatbenchError(f"mteb model {name!r} is not available offline ({offline}): "
                                         f"{missing_hint(name, revision)}") from None
                raise
    except StatbenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - a model's loader may raise anything; said in one line
        raise StatbenchError(f"mteb could not load model {name!r}: {hub._short(exc)}; {missing_hint(name, revision)}") \
            from None
