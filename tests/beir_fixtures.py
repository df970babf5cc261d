"""A tiny folder in BEIR's layout (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), written by the
tests of `--task beir:PATH` and of everything that runs on one."""

from __future__ import annotations

import json
from pathlib import Path


DOCS = [
    ("d1", "Rent payment", "The tenant must pay the rent on the first day of each month."),
    ("d2", "Lease termination", "A landlord may terminate the lease after three months of unpaid rent."),
    ("d3", "Marriage", "Every person has the right to marry and to found a family."),
    ("d4", "Wages", "The employer shall pay wages at least once a month."),
    ("d5", "", "Criminal penalties apply to theft and fraud."),
    ("d6", "Deposit", "A security deposit may not exceed two months of rent."),
    ("d7", "Holidays", "Workers are entitled to paid annual holidays."),
]


QUERIES = [("q1", "when is the rent due"), ("q2", "right to marry"), ("q3", "how often are wages paid"),
           ("q4", "can the landlord end the lease"), ("q5", "maximum deposit"), ("q6", "theft punishment"),
           ("q7", "a query judged nowhere"), ("q8", "paid leave")]


HEADER = "query-id\tcorpus-id\tscore\n"


def write_beir(root: Path, test="q1\td1\t1\nq2\td3\t1\nq3\td4\t2\nq3\td1\t0\nq8\td7\t1\n",
               train="q4\td2\t1\nq5\td6\t1\n", dev="q6\td5\t1\n", settings: dict | None = None) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n"
                                               for i, t, x in DOCS))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t, "metadata": {}}) + "\n"
                                                for i, t in QUERIES))
    for split, rows in (("test", test), ("train", train), ("dev", dev)):
        if rows is not None:
            (root / "qrels" / f"{split}.tsv").write_text(HEADER + rows)
    if settings is not None:
        (root / "statbench.json").write_text(json.dumps(settings))
    return root
