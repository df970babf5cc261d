"""The overview on the site's first page (issue 36 §1): a section per benchmark with results,
each task's primary figure linking to its board, blank missing cells, a task nobody ran said
"not run", the ranks with their intervals, the words on missing tasks, and every board's best
row still below."""

import json
import re
from html.parser import HTMLParser

from overview_fixtures import mini_benchmark, overview_site, write_mini, write_run


class _Table(HTMLParser):
    """The cells (text and attributes) of each row of ``table#ID``."""

    def __init__(self, table_id: str):
        super().__init__()
        self.table_id, self.inside, self.rows, self.cell = table_id, False, [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id") == self.table_id:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = {"text": "", **attrs}
            self.rows[-1].append(self.cell)
        elif tag == "br" and self.cell is not None:
            self.cell["text"] += " "

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data


def _table(html: str, table_id: str) -> list[list[dict]]:
    parser = _Table(table_id)
    parser.feed(html)
    return parser.rows


def _site(tmp_path) -> str:
    write_mini(tmp_path / "results")
    with mini_benchmark():
        return overview_site(tmp_path / "results", tmp_path / "site").read_text("utf-8")


def _section(html: str, bench: str) -> str:
    start = html.index(f'id="benchmark-{bench}"')
    return html[start:html.index("</section>", start)]


def _shown(row: list[dict]) -> list[str]:
    """The cells' texts (the ranks over all tasks: what the page shows before a language is chosen)."""
    return [c["text"].strip() for c in row]


def test_the_overview_is_the_first_section_and_the_boards_stay_below(tmp_path):
    html = _site(tmp_path)
    assert html.index('id="benchmark-mini-v1"') < html.index('id="boards"') < html.index('<table class="index">')
    assert 'id="benchmark-statutes-v1"' in html  # ukstat's results are on statutes-v1 too
    assert '<script src="static/overview.js"></script>' in html


def test_rows_cells_and_ranks_as_computed_by_hand(tmp_path):
    rows = _table(_site(tmp_path), "ov-mini-v1")
    header = [re.sub(r"\s+", " ", c["text"]).strip() for c in rows[0]]
    assert header == ["Configuration", "Family", "Training", "stard R@100", "ukstat nDCG@10", "bsard R@100 not run",
                      "Tasks run", "Borda rank (95%)", "Mean rank (95%)"]
    assert [_shown(r) for r in rows[1:]] == [
        ["model-a", "lexical", "zero-shot", "0.8000", "", "", "1/3", "1 (1–1)", "1.00 (1.00–1.00)"],
        ["model-b", "dense", "trained", "0.6000", "0.7000", "", "2/3", "1 (1–1)", "1.50 (1.50–1.50)"],
        ["model-c", "dense", "zero-shot", "0.4000", "0.5000", "", "2/3", "3 (3–3)", "2.50 (2.50–2.50)"],
    ]
    assert rows[1][4]["text"] == "" and rows[1][4]["class"] == "missing"  # model-a's ukstat: blank, never 0
    assert rows[1][7]["title"] == "2 Borda points over 1 task(s)"


def test_a_figure_links_to_its_board_and_a_task_nobody_ran_has_no_link(tmp_path):
    html = _site(tmp_path)
    section = _section(html, "mini-v1")
    assert '<a href="task-stard.html">0.8000</a>' in section and '<a href="task-stard.html">stard</a>' in section
    assert 'href="task-bsard' not in section and '<span class="not-run">not run</span>' in section


def test_the_page_says_how_missing_tasks_are_handled(tmp_path):
    html = _site(tmp_path)
    note = re.sub(r"\s+", " ", _section(html, "mini-v1"))
    assert "A missing task is never counted as a score of 0" in note
    assert "over the tasks a configuration ran" in note
    assert "bsard: not run by any configuration" in note
    assert "95% intervals from 1,000 bootstrap resamples" in note


def test_language_ranks_are_on_the_page_hidden_until_chosen(tmp_path):
    html = _site(tmp_path)
    sets = [json.loads(s) for s in re.findall(r"data-sets='([^']*)'", _section(html, "mini-v1"))]
    assert sets == [{"zh": ["1/1", "1 (1–1)", "1.00 (1.00–1.00)"]},  # model-a ran no English task
                    {"en": ["1/1", "1 (1–1)", "1.00 (1.00–1.00)"], "zh": ["1/1", "2 (2–2)", "2.00 (2.00–2.00)"]},
                    {"en": ["1/1", "2 (2–2)", "2.00 (2.00–2.00)"], "zh": ["1/1", "3 (3–3)", "3.00 (3.00–3.00)"]}]


def test_the_filters_offer_the_rows_languages_families_and_training(tmp_path):
    html = _site(tmp_path)
    section = _section(html, "mini-v1")
    assert re.findall(r'<option value="([^"]*)">', section) == ["all", "zh", "en", "", "dense", "lexical", "",
                                                                "zero-shot", "trained"]


def test_a_label_is_escaped(tmp_path):
    write_mini(tmp_path / "results")
    write_run(tmp_path / "results", "stard", "<script>alert(1)</script>", 0.1, folder="xss")
    with mini_benchmark():
        html = overview_site(tmp_path / "results", tmp_path / "site").read_text("utf-8")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_site_without_a_benchmarks_task_shows_no_overview(tmp_path):
    from statbench.leaderboard.sample import write_sample

    write_sample(tmp_path / "results")
    html = overview_site(tmp_path / "results", tmp_path / "site").read_text("utf-8")
    assert 'class="overview"' not in html and 'id="boards"' not in html and "overview.js" not in html
