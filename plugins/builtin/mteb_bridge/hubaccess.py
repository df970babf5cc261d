"""MTEB's models and datasets come from the Hugging Face hub: here, what to do when the hub
is out of reach (the load runs in the hub libraries' offline mode, served by their cache
only, and a miss is one line saying what to fetch and where to put it)."""

from __future__ import annotations

import contextlib
import sys

from statbench.models.shared import hub


@contextlib.contextmanager
def offline_if_unreachable():
    """Run the body in offline mode when the hub will not answer (:func:`statbench.models.shared.hub.offline_reason`);
    yields the reason (``None``: the hub answers and is used as usual)."""
    reason = hub.offline_reason()
    if reason is None:
        yield None
        return
    datasets_config = sys.modules.get("datasets.config")
    saved = getattr(datasets_config, "HF_HUB_OFFLINE", None) if datasets_config is not None else None
    with hub.offline_mode():
        if datasets_config is not None:  # datasets reads the flag once, at import
            datasets_config.HF_HUB_OFFLINE = True
        try:
            yield reason
        finally:
            if datasets_config is not None:
                datasets_config.HF_HUB_OFFLINE = saved


def dataset_fetch_hint(path: str, revision: str | None) -> str:
    """Where an MTEB dataset comes from and where a copy must be for an offline load."""
    rev = f" --revision {revision}" if revision else ""
    return (f"on a machine with internet run `huggingface-cli download {path} --repo-type dataset{rev}` (or load "
            f"the task once with mteb) and copy the hub cache it fills to {hub.hub_cache_dir()} here (HF_HOME / "
            "HF_HUB_CACHE set where it is)")
