"""The screenshot of the site's first page, the benchmark overview (docs/screenshots/overview.png):
headless Chromium (system ``chromium`` driven by Playwright, file://), the page's title and
each benchmark's section (filters, table, the words on missing tasks), stacked into one image.

    statbench leaderboard build --results bench/results/lexical --out SITE
    python bench/overview_screenshot.py SITE/index.html docs/screenshots/overview.png
"""

from __future__ import annotations

from pathlib import Path

from screenshots import offline_page, page_arguments, stack


def shoot(page_path: Path, out: Path, width: int = 1400) -> None:
    with offline_page(page_path, width) as page:
        page.wait_for_selector("html[data-overview-ready]")
        shots = [page.locator("h1").screenshot()] + [s.screenshot() for s in page.locator("section.overview").all()]
    stack(shots, out)


def main() -> None:
    parser = page_arguments(__doc__)
    args = parser.parse_args()
    shoot(args.page, args.out, args.width)


if __name__ == "__main__":
    main()
