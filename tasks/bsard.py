"""BSARD loader: ``articles_fr.csv`` + ``questions_fr_{train,test}.csv`` (Hugging Face
``maastrichtlawtech/bsard``).

Each article keeps its legislative structure in ``Document.fields``: the code, the raw
``description`` (the concatenated headings) and the heading path parsed from it
(``heading_path`` = code › book › title › chapter › section, plus one field per level found;
:mod:`statbench.tasks.belgian`, shared with LLeQA).
The dev split is carved out of the training questions with a fixed seed (see
:func:`statbench.loading.splits.carve_dev`), because the G-DSR paper did not publish its ids."""

from __future__ import annotations

import logging
from pathlib import Path

from statbench import hookimpl
from statbench.api import Document, Query, Split, TaskData
from statbench.data.checksum import files_sha256
from statbench.data.dataio import query_text, read_csv, record_id
from statbench.data.validation import check_file_qrels
from statbench.errors import DataFormatError
from statbench.loading.splits import carve_dev
from statbench.loading.taskdef import DefinedTask
from statbench.tasks.belgian import PATH_SEPARATOR, article_title, heading_fields  # noqa: F401 (re-exported)

ARTICLE_COLUMNS = ("id", "article", "code", "article_no", "description", "law_type")
QUESTION_COLUMNS = ("id", "question", "category", "subcategory", "extra_description", "article_ids")


class Bsard(DefinedTask):
    definition_file = "bsard.json"

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self.locate_files(data_dir, log)
        dropped: list[str] = []
        corpus = read_articles(files["articles_fr.csv"])
        queries: dict[str, Query] = {}
        qrels: dict[str, dict[str, int]] = {}
        categories: dict[str, str] = {}
        by_file: dict[str, list[str]] = {}
        seen: dict[str, str] = {}  # every question id read, dropped ones included: an id is one question
        for name in ("questions_fr_train.csv", "questions_fr_test.csv"):
            by_file[name] = read_questions(files[name], queries, qrels, categories, dropped, seen)
        for name, ids in by_file.items():  # judgements checked file by file, so reports name the file
            check_file_qrels(ids, qrels, corpus, queries, files[name], dropped)
        spec = self.definition["splits"]
        # carved from every training id in the file, so that dropping a question elsewhere
        # never moves the others between train and dev
        train_all, dev_all = carve_dev(by_file["questions_fr_train.csv"], spec["dev"]["size"], spec["dev"]["of"], spec["seed"])
        kept = lambda ids: tuple(q for q in ids if q in queries)  # noqa: E731
        train, dev, test = kept(train_all), kept(dev_all), kept(by_file["questions_fr_test.csv"])
        return TaskData(
            corpus=corpus,
            queries=queries,
            qrels=qrels,
            splits=[Split(name="test", test=test, train=train, dev=dev)],
            extra_splits=[Split(name="dev", test=dev, train=train)],
            files=list(files.values()),
            checksum=files_sha256(files.values()),
            dropped=dropped,
            groups={"category": {q: c for q, c in categories.items() if q in queries}},
        )


def read_articles(path: Path) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    first_line: dict[str, int] = {}
    for lineno, row in read_csv(path, required=ARTICLE_COLUMNS):
        doc_id = record_id(path, row["id"] or "", lineno, "id", "article")
        if doc_id in corpus:
            raise DataFormatError(
                path, f"duplicate article id {doc_id!r} (first on line {first_line[doc_id]})", lineno, "id"
            )
        code, number = (row["code"] or "").strip(), (row["article_no"] or "").strip()
        description = (row["description"] or "").strip()
        fields = {
            "code": code,
            "article_no": number,
            "law_type": (row["law_type"] or "").strip(),
            "description": description,
            **heading_fields(code, description),
        }
        corpus[doc_id] = Document(id=doc_id, text=(row["article"] or "").strip(), title=article_title(code, number),
                                  fields=fields)
        first_line[doc_id] = lineno
    if not corpus:
        raise DataFormatError(path, "no documents (the file holds no article row)")
    return corpus


def read_questions(path: Path, queries, qrels, categories, dropped: list[str],
                   seen: dict[str, str] | None = None) -> list[str]:
    """Add one file's questions; returns its question ids in file order (empty ones included).
    ``seen`` (id -> where it was read) is shared by the files of one task, so that an id
    dropped in one file (no text) and kept in the other is refused too: it would be a
    training question and a test question at once."""
    ids: list[str] = []
    seen = {} if seen is None else seen
    for lineno, row in read_csv(path, required=QUESTION_COLUMNS):
        qid = record_id(path, row["id"] or "", lineno, "id", "question")
        if qid in queries or qid in seen:
            first = f" (first in {seen[qid]})" if qid in seen else ""
            raise DataFormatError(path, f"duplicate question id {qid!r}{first}", lineno, "id")
        seen[qid] = f"{path.name} line {lineno}"
        ids.append(qid)
        text = query_text(path, row["question"] or "", lineno, "question", qid, dropped)
        if text is None:
            continue
        fields = {k: (row[k] or "").strip() for k in ("category", "subcategory", "extra_description")}
        queries[qid] = Query(id=qid, text=text, fields=fields)
        # an article listed twice is one judgement
        qrels[qid] = {record_id(path, a, lineno, "article_ids", "article"): 1
                      for a in (row["article_ids"] or "").split(",") if a.strip()}
        categories[qid] = fields["category"] or "(none)"
    if not ids:
        raise DataFormatError(path, "no questions (the file holds no question row)")
    return ids


@hookimpl
def register_tasks(register):
    register(Bsard)
