"""The screenshot of a board's per-query explorer (docs/explorer-stard.png): headless
Chromium (system ``chromium`` driven by Playwright, file://, network blocked), the page's
head and filters with the largest wins and losses of one system against another listed,
then the first query that only one system answers, opened, stacked into one image.

    statbench leaderboard build --results bench/results/lexical --out SITE --data-dir stard=DATA
    python bench/explorer_screenshot.py SITE/explorer/stard.html docs/explorer-stard.png --a bm25 --b fasttext
"""

from __future__ import annotations

from pathlib import Path

from screenshots import offline_page, page_arguments, stack


def shoot(page_path: Path, out: Path, a: str, b: str, width: int = 1400, listed: int = 8) -> None:
    with offline_page(page_path, width) as page:
        keys = dict(page.evaluate("window.statbenchExplorer.systems.map(s => [s.label, s.key])"))
        page.select_option("#ex-view", "pair")
        page.select_option("#ex-a", keys[a])
        page.select_option("#ex-b", keys[b])
        # the first wins and the first losses only: the image stays readable
        page.evaluate("""(n) => { const rows = [...document.querySelectorAll('#ex-results tbody tr')];
            const wins = rows.filter(r => r.className === 'win'), losses = rows.filter(r => r.className === 'loss');
            [...wins.slice(n), ...losses.slice(n)].forEach(r => r.remove()); }""", listed // 2)
        shots = [page.locator("h1").screenshot(), page.locator("section.ex-controls").screenshot(),
                 page.locator("#ex-results").screenshot()]
        page.select_option("#ex-view", "one")
        first = page.locator("#ex-results a.ex-open").first
        first.click()
        page.wait_for_load_state()
        shots.append(page.locator("section.query:target").screenshot())
    stack(shots, out)


def main() -> None:
    parser = page_arguments(__doc__)
    parser.add_argument("--a", default="bm25", help="system A (its label)")
    parser.add_argument("--b", default="fasttext", help="system B (its label)")
    args = parser.parse_args()
    shoot(args.page, args.out, args.a, args.b, args.width)


if __name__ == "__main__":
    main()
