"""The browser tests' fixture: headless Chromium (Debian's ``chromium`` package, or
``$STATBENCH_CHROMIUM``) driven by Playwright, with a fresh profile and the network
blocked (file:// only). A test that asks for ``page`` is skipped, saying why, when the
browser or the playwright package is missing; Playwright's own browser download is never
used."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("STATBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


@pytest.fixture
def chromium() -> dict:
    """Playwright's launch arguments for the system Chromium; skips when it or the
    playwright package is missing."""
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.skip(f"headless browser test needs Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="browser test needs the playwright package")
    return {"executable_path": CHROMIUM, "headless": True, "args": FLAGS}


@pytest.fixture
def page(tmp_path, chromium):
    """A page of a fresh persistent context; ``page.dialogs``, ``page.errors`` and
    ``page.requests`` (attempts to leave file://) collect what the test must not see."""
    from playwright import sync_api

    with sync_api.sync_playwright() as pw:
        # a persistent context is how Playwright takes a fresh --user-data-dir
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), **chromium, viewport={"width": 1400, "height": 900},
        )
        context.set_default_timeout(15_000)
        requests: list[str] = []

        def no_network(route):
            if not route.request.url.startswith("file://"):
                requests.append(route.request.url)
                return route.abort()
            return route.continue_()

        context.route("**/*", no_network)
        page = context.new_page()
        page.dialogs, page.errors, page.requests = [], [], requests
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        try:
            yield page
        finally:
            context.close()
