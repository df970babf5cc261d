"""A COLIEE Task 3 folder in the organisers' format (the Civil Code text and one riteval XML file
a year), written by the tests of the COLIEE loader and of the loaders' bounds."""

from __future__ import annotations

import pytest


YEARS = [f"H{n}" for n in range(18, 31)] + [f"R0{n}" for n in range(1, 6)]


CODE = """\ufeffCivil Code (Part I, Part II and Part III)
Part I General Provisions
Chapter I Common Provisions
(Fundamental Principles)
Article 1  (1) Private rights must be congruent with the public welfare.
(2) The exercise of rights and performance of duties must be done in good faith.
Article 1-2  This Code must be construed so as to honor the dignity of individuals.
Chapter II Persons
Section 1 Capacity to Hold Rights
(Age of Majority)
Article 4  The age of majority is eighteen years of age.
Articles 5 to 7  Deleted
Section 2 Domicile
Subsection 1 General Rules
(Domicile)
Article 22  The principal place of a person's life is that person's domicile:
(i) for a minor, the domicile of the guardian;
(ii) otherwise, where the person lives.
(Residence Deleted Long Ago)
Article 23  Deleted
Part II Real Rights
Chapter I General Provisions
(Creation and Transfer of Real Rights)
Article 176  The creation and transfer of real rights take effect solely by the manifestations of intention of the parties.
Articles 177 and 178  Deleted
(Extinction by Merger)
Article 179  If ownership of a thing and another real right merge in the same person, the other real right is extinguished.
"""


def pair(pid: str, articles: list[str], statement: str, label: str = "Y") -> str:
    t1 = "\n".join(f"Article {a}{'(1)' if i % 2 else ' '} text of article {a}." for i, a in enumerate(articles))
    return f'<pair id="{pid}" label="{label}">\n<t1>\n{t1}\n</t1>\n<t2>\n{statement}\n</t2>\n</pair>\n'


def year_file(year: str, pairs: list[str]) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n<dataset>\n' + "\n".join(pairs) + "</dataset>\n"


def default_pairs(year: str) -> list[str]:
    if year == "R05":
        return [pair("R05-1-A", ["176"], "A real right is created by the intention of the parties alone."),
                pair("R05-2-I", ["4", "22"], "A minor who is eighteen years of age has a domicile.", "N"),
                pair("R05-3-U", ["179"], "A real right merges with ownership and is extinguished.")]
    if year == "R04":
        return [pair("R04-1-A", ["1"], "Rights must be exercised in good faith."),
                pair("R4-2-E", ["1-2"], "The Code is construed to honor the dignity of individuals.")]
    return [pair(f"{year}-1-A", ["22"], f"Where is the domicile of a minor ({year})?")]


@pytest.fixture
def coliee_dir(tmp_path):
    root = tmp_path / "coliee"
    (root / "text").mkdir(parents=True)
    (root / "train").mkdir()
    (root / "text" / "civil_code_en-1to724-2.txt").write_text(CODE, encoding="utf-8")
    for year in YEARS:
        # the organisers' layout (text/, train/) and a flat folder both work: R05 flat here
        where = root if year == "R05" else root / "train"
        (where / f"riteval_{year}_en.xml").write_text(year_file(year, default_pairs(year)), encoding="utf-8")
    return root


def write_year(root, year, text):
    path = root / ("" if year == "R05" else "train") / f"riteval_{year}_en.xml"
    path.write_text(text, encoding="utf-8")
    return path
