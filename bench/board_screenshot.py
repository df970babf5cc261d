"""The screenshot of a board with its efficiency and cost columns shown and its Pareto plot
(docs/board-efficiency.png): headless Chromium (system ``chromium`` driven by Playwright,
file://), the table scrolled to its efficiency columns (the model column stays), then the
*Quality against cost* section, stacked into one image.

    statbench leaderboard build --results RESULTS --out SITE --verify
    python bench/board_screenshot.py SITE/task-ukstat.html docs/board-efficiency.png
"""

from __future__ import annotations

from pathlib import Path

from screenshots import offline_page, page_arguments, stack


def shoot(page_path: Path, out: Path, width: int = 1400) -> None:
    with offline_page(page_path, width) as page:
        page.check("#show-efficiency")
        # the efficiency columns are the last before Details: scroll the table to them
        page.eval_on_selector(".table-wrap", "w => { w.scrollLeft = w.scrollWidth; }")
        shots = [page.locator("h1").screenshot(), page.locator("section.controls").screenshot(),
                 page.locator(".table-wrap").first.screenshot(), page.locator("section#efficiency").screenshot()]
    stack(shots, out)


def main() -> None:
    parser = page_arguments(__doc__)
    args = parser.parse_args()
    shoot(args.page, args.out, args.width)


if __name__ == "__main__":
    main()
