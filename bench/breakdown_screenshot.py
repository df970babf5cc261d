"""The screenshot of a board's breakdowns (docs/board-breakdowns.png): headless Chromium
(system ``chromium`` driven by Playwright, file://), the page's title, then the chosen
groups' tables and bar plots of the *Breakdowns* section, stacked into one image. Chinese
law names need a CJK font (Debian: ``apt-get install fonts-noto-cjk``).

    statbench leaderboard build --results bench/results/breakdowns --out SITE
    python bench/breakdown_screenshot.py SITE/task-stard.html docs/board-breakdowns.png --group law
"""

from __future__ import annotations

from pathlib import Path

from screenshots import offline_page, page_arguments, stack


def shoot(page_path: Path, out: Path, groups: list[str], width: int = 1400) -> None:
    with offline_page(page_path, width) as page:
        section = page.locator("section#breakdowns")
        shots = [page.locator("h1").screenshot(), section.locator("h2").screenshot(),
                 section.locator("p.note").first.screenshot()]
        for group in groups:
            table = section.locator(f'table[data-group="{group}"]')
            heading = section.locator("h3", has_text=f" by {group}")
            shots += [heading.screenshot(), table.screenshot()]
            figure = table.locator("xpath=ancestor::div[1]/following-sibling::figure[1]")
            shots.append(figure.screenshot())
    stack(shots, out)


def main() -> None:
    parser = page_arguments(__doc__)
    parser.add_argument("--group", action="append", default=None, help="breakdown group(s) to show (default: law)")
    args = parser.parse_args()
    shoot(args.page, args.out, args.group or ["law"], args.width)


if __name__ == "__main__":
    main()
