"""The built-in models' hub module with the network blocked (only 127.0.0.1 answers), and its
endpoint pointed at a local address: for the tests of offline use and network bounds."""

from __future__ import annotations

import socket

import pytest

@pytest.fixture
def hub(monkeypatch):
    """The hub module with no probe cached, HF_HUB_OFFLINE unset, and the network blocked:
    only 127.0.0.1 can be reached."""
    from huggingface_hub import constants

    from statbench.models.shared import hub as hub_module
    from statbench.storage import hub as hub_reach

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_reach, "_probes", {})  # the probe is the core's (statbench.storage.hub)
    real = socket.getaddrinfo

    def local_only(host, *args, **kwargs):
        if host not in ("127.0.0.1", "localhost"):
            raise socket.gaierror(socket.EAI_NONAME, "network blocked by the test")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    return hub_module


def _point_hub_at(monkeypatch, endpoint: str) -> None:
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
