"""The screenshot of a board with its efficiency and cost columns shown and its Pareto plot
(docs/board-efficiency.png): headless Chromium (system ``chromium`` driven by Playwright,
file://), the table scrolled to its efficiency columns (the model column stays), then the
*Quality against cost* section, stacked into one image.

    statbench leaderboard build --results RESULTS --out SITE --verify
    python bench/board_screenshot.py SITE/task-ukstat.html docs/board-efficiency.png
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
        page.check("#show-efficiency")
        # the efficiency columns are the last before Details: scroll the table to them
        page.eval_on_selector(".table-wrap", "w => { w.scrollLeft = w.scrollWidth; }")
        shots = [page.locator("h1").screenshot(), page.locator("section.controls").screenshot(),
                 page.locator(".table-wrap").first.screenshot(), page.locator("section#efficiency").screenshot()]
        browser.close()
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
