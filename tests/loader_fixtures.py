"""The same tiny documents, queries and judgements written in the layout of every loader (STARD,
both UK layouts, BSARD, a BEIR folder), for the tests of the one rule all loaders follow."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

from fixture_data import write_jsonl
from statbench.loading.beir import find_folder, load_beir
from statbench.tasks.bsard import Bsard
from statbench.tasks.stard import Stard
from statbench.tasks.ukstat import UkStatutes

LOG = logging.getLogger("test")


DOCS = [("d1", "rent is due on the first day"), ("d2", "wages are paid monthly"), ("d3", "marriage is free")]


QUERIES = [("q1", "when is rent due"), ("q2", "how are wages paid"), ("q3", "is marriage free")]


QRELS = [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 1)]


def _stard(root: Path, docs, queries, qrels):
    write_jsonl(root / "corpus.jsonl", [{"name": d, "content": t} for d, t in docs])
    items = [{"query_id": q, "问题": t, "match_name": [d for qq, d, _ in qrels if qq == q]} for q, t in queries]
    (root / "queries.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return lambda: Stard().load(root, LOG)


def _uk_substitute(root: Path, docs, queries, qrels):
    sub = root / "substitute"
    write_jsonl(sub / "corpus.jsonl", [{"id": d, "content": t} for d, t in docs])
    write_jsonl(sub / "queries.jsonl", [{"qid": q, "query": t} for q, t in queries])
    (sub / "qrels.tsv").write_text("".join(f"{q}\t0\t{d}\t{3 if g == 1 else g}\n" for q, d, g in qrels))
    return lambda: UkStatutes().load(root, LOG)


def _uk_real(root: Path, docs, queries, qrels):
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus_uklegislation.json").write_text(json.dumps(
        [{"content": t, "metadata": {"chunk_id": d}} for d, t in docs], indent=1))
    write_jsonl(root / "eval_statutory_100queries_approved.jsonl", [
        {"qid": q, "query": t, "answers": [{"chunk_id": d, "rel": 3 if g == 1 else g} for qq, d, g in qrels if qq == q]}
        for q, t in queries])
    return lambda: UkStatutes().load(root, LOG)


def _bsard(root: Path, docs, queries, qrels):
    root.mkdir(parents=True, exist_ok=True)

    def write(name, header, rows):
        with open(root / name, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)

    write("articles_fr.csv", ["id", "article", "code", "article_no", "description", "law_type"],
          [[d, t, "Code", "1", "", "national"] for d, t in docs])
    rows = [[q, t, "c", "", "", ",".join(d for qq, d, _ in qrels if qq == q)] for q, t in queries]
    header = ["id", "question", "category", "subcategory", "extra_description", "article_ids"]
    write("questions_fr_train.csv", header, [["t1", "rent due date", "c", "", "", docs[0][0]]])
    write("questions_fr_test.csv", header, rows)
    return lambda: Bsard().load(root, LOG)


def _beir(root: Path, docs, queries, qrels):
    (root / "qrels").mkdir(parents=True)
    write_jsonl(root / "corpus.jsonl", [{"_id": d, "text": t} for d, t in docs])
    write_jsonl(root / "queries.jsonl", [{"_id": q, "text": t} for q, t in queries])
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, d, g in qrels))

    def load():
        found = find_folder(root)
        return load_beir(found.corpus, found.queries, found.qrels, log=LOG)
    return load


#: loader -> (writer, the file queries are read from, how a query's place is named)
LOADERS = {
    "stard": (_stard, "queries.json", "item 2"),
    "uk-substitute": (_uk_substitute, "queries.jsonl", "line 3"),
    "uk-real": (_uk_real, "eval_statutory_100queries_approved.jsonl", "line 3"),
    "bsard": (_bsard, "questions_fr_test.csv", "line 4"),
    "beir": (_beir, "queries.jsonl", "line 3"),
}
