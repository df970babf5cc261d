"""The screenshot of a board's breakdowns (docs/board-breakdowns.png): headless Chromium
(system ``chromium`` driven by Playwright, file://), the page's title, then the chosen
groups' tables and bar plots of the *Breakdowns* section, stacked into one image. Chinese
law names need a CJK font (Debian: ``apt-get install fonts-noto-cjk``).

    statbench leaderboard build --results bench/results/breakdowns --out SITE
    python bench/breakdown_screenshot.py SITE/task-stard.html docs/board-breakdowns.png --group law
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from screenshots import stack

CHROMIUM = os.environ.get("STATBENCH_CHROMIUM", "/usr/bin/chromium")


def shoot(page_path: Path, out: Path, groups: list[str], width: int = 1400) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
        page.goto(Path(page_path).resolve().as_uri())
        section = page.locator("section#breakdowns")
        shots = [page.locator("h1").screenshot(), section.locator("h2").screenshot(),
                 section.locator("p.note").first.screenshot()]
        for group in groups:
            table = section.locator(f'table[data-group="{group}"]')
            heading = section.locator("h3", has_text=f" by {group}")
            shots += [heading.screenshot(), table.screenshot()]
            figure = table.locator("xpath=ancestor::div[1]/following-sibling::figure[1]")
            shots.append(figure.screenshot())
        browser.close()
    stack(shots, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--group", action="append", default=None, help="breakdown group(s) to show (default: law)")
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    shoot(args.page, args.out, args.group or ["law"], args.width)


if __name__ == "__main__":
    main()
