"""Reaching the Hugging Face hub, for every model and task loaded from it.

Offline, in seconds: before anything is loaded by hub id, :func:`offline_reason` says
whether the hub will be tried: not when ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is
set, nor when one short request to the endpoint (``HF_ENDPOINT``) gets no answer within
:data:`PROBE_TIMEOUT` (probed once per process; the probe, name lookup included, is bounded
the same way). Then a load runs in the libraries' offline mode (:func:`offline_mode`,
:func:`offline_if_unreachable`: only the hub's local cache can serve it, no retries).

A hub that answers the probe and then stalls: a whole fetch, every request and retry of the
libraries included, has one overall bound (:func:`fetch_within_bound`, :func:`fetch_timeout`:
``STATBENCH_HUB_TIMEOUT`` seconds, default :data:`FETCH_TIMEOUT`); past it,
:class:`FetchStalled`, whose message the caller ends with what to fetch and where to put it.

The hub libraries are imported only inside the functions that use them."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import TypeVar

from statbench.data.deadline import DeadlinePassed, bound_from_env, call_within
from statbench.errors import one_line

#: Seconds the hub endpoint has to answer the probe before it counts as unreachable.
PROBE_TIMEOUT = 3.0
#: Seconds a whole fetch from the hub (every request and retry, and building the model from
#: what it fetched) may take, unless ``STATBENCH_HUB_TIMEOUT`` says otherwise.
FETCH_TIMEOUT = 600.0
TIMEOUT_ENV = "STATBENCH_HUB_TIMEOUT"
T = TypeVar("T")
_TRUE = {"1", "ON", "YES", "TRUE"}
_probes: dict[str, str | None] = {}  # endpoint -> why it is unreachable (None: it answered)


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


def in_hub_cache(hub_id: str) -> bool:
    """Whether the hub libraries' own cache holds a snapshot of ``hub_id`` (usable offline)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(hub_id, "config.json"), str)
    except Exception:  # noqa: BLE001 - an id the hub library refuses is simply not cached
        return False



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


@contextlib.contextmanager
def offline_if_unreachable():
    """Run the body in offline mode when the hub will not answer (:func:`offline_reason`);
    yields the reason (``None``: the hub answers and is used as usual). The ``datasets``
    library's own flag (read once, at its import) is set and restored too."""
    reason = offline_reason()
    if reason is None:
        yield None
        return
    datasets_config = sys.modules.get("datasets.config")
    saved = getattr(datasets_config, "HF_HUB_OFFLINE", None) if datasets_config is not None else None
    with offline_mode():
        if datasets_config is not None:
            datasets_config.HF_HUB_OFFLINE = True
        try:
            yield reason
        finally:
            if datasets_config is not None:
                datasets_config.HF_HUB_OFFLINE = saved


def dataset_fetch_hint(path: str, revision: str | None) -> str:
    """Where a hub dataset comes from and where a copy must be for an offline load."""
    rev = f" --revision {revision}" if revision else ""
    return (f"on a machine with internet run `huggingface-cli download {path} --repo-type dataset{rev}` (or load "
            f"the task once with mteb) and copy the hub cache it fills to {hub_cache_dir()} here (HF_HOME / "
            "HF_HUB_CACHE set where it is)")
