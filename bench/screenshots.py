"""What the bench's screenshot scripts share: a page of the built site opened in headless
Chromium (the system ``chromium``, or ``STATBENCH_CHROMIUM``, driven by Playwright, file://,
every other request refused), the command line they all take, and element shots stacked into
one PNG."""

from __future__ import annotations

import argparse
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = os.environ.get("STATBENCH_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def offline_page(page_path: Path, width: int = 1400) -> Iterator:
    """The Playwright page of ``page_path`` (a file of the site), loaded with the network
    blocked; the browser is closed on leaving."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                       else route.abort())
            page.goto(Path(page_path).resolve().as_uri())
            yield page
        finally:
            browser.close()


def page_arguments(doc: str) -> argparse.ArgumentParser:
    """The arguments every screenshot script takes: the page, the image to write, the width."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1400)
    return parser


def stack(shots: list[bytes], out: Path, gap: int = 12) -> None:
    """Write the PNG ``shots`` one below the other (``gap`` white pixels apart) to ``out``."""
    from PIL import Image

    images = [Image.open(io.BytesIO(data)).convert("RGB") for data in shots]
    canvas = Image.new("RGB", (max(i.width for i in images), sum(i.height for i in images) + gap * len(images)), "white")
    y = 0
    for image in images:
        canvas.paste(image, (0, y))
        y += image.height + gap
    out.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(out, optimize=True)
