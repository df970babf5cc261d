"""The screenshot of the site's first page, the benchmark overview (docs/screenshots/overview.png):
headless Chromium (system ``chromium`` driven by Playwright, file://), the page's title and
each benchmark's section (filters, table, the words on missing tasks), stacked into one image.

    statbench leaderboard build --results bench/results/lexical --out SITE
    python bench/overview_screenshot.py SITE/index.html docs/screenshots/overview.png
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from screenshots import stack

CHROMIUM = os.environ.get("STATBENCH_CHROMIUM", "/usr/bin/chromium")


def shoot(page_path: Path, out: Path, width: int = 1400) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
        page.goto(Path(page_path).resolve().as_uri())
        page.wait_for_selector("html[data-overview-ready]")
        shots = [page.locator("h1").screenshot()] + [s.screenshot() for s in page.locator("section.overview").all()]
        browser.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    stack(shots, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    shoot(args.page, args.out, args.width)


if __name__ == "__main__":
    main()
