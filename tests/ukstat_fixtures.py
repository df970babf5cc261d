"""A tiny UK statutes folder in the substitute layout (corpus, queries, graded qrels), for the
tests of the ukstat loader and of frozen pools."""

from __future__ import annotations

import pytest

from fixture_data import write_jsonl

PASSAGES = {
    "p-a": "A person who contravenes a direction given by a local authority commits an offence.",
    "p-b": "A local authority may give a direction to close premises in a public outdoor place.",
    "p-c": "These Regulations come into force on the day after the day on which they are made.",
    "p-d": "The Landfill Regulations are amended as follows: in regulation 2 insert a definition.",
    "p-e": "In regulation 2 of the Landfill Regulations, the definition of waste is substituted.",
    "p-f": "Fees payable for a licence under the Licensing Act are set out in the Schedule.",
    "p-x": "The Secretary of State may make regulations about fishing vessels.",
}


QUERIES = [
    {"qid": "Q1", "query": "What are the consequences for contravening a direction given by a local authority?",
     "legislation_type": "Scottish Statutory Instruments"},
    {"qid": "Q2", "query": "How are the Landfill Regulations amended?", "legislation_type": "Northern Ireland Statutory Rules"},
]


QRELS = "Q1 0 p-a 3\nQ1 0 p-b 2\nQ1 0 p-c 1\nQ2 0 p-d 3\nQ2 0 p-e 2\nQ2 0 p-f 1\n"


@pytest.fixture
def uk_dir(tmp_path):
    root = tmp_path / "uk"
    write_jsonl(root / "substitute" / "corpus.jsonl", [{"id": k, "content": v, "year": 2020} for k, v in PASSAGES.items()])
    write_jsonl(root / "substitute" / "queries.jsonl", QUERIES)
    (root / "substitute" / "qrels.tsv").write_text(QRELS.replace(" ", "\t"))
    # the query's anchoring instrument: must never be read
    (root / "substitute" / "query_instrument.tsv").write_text("Q1\tinstrument-with-the-answer\n")
    return root
