"""``example-civil``: a complete task, declared in JSON, loaded by a small class.

The declaration (name, language, protocols, measures, files...) is
``example_civil.json`` next to this module; :class:`~statbench.api.DefinedTask`
validates it against statbench's task schema and turns it into a
:class:`~statbench.api.TaskInfo` when the class is defined. This module only
turns the files into :class:`~statbench.api.TaskData`:

- ``articles.jsonl``: one article per line, ``{"id", "number", "title", "headings": [book,
  chapter, section], "text"}``; the heading path goes into ``Document.fields``;
- ``queries/R01.jsonl``, ``R02.jsonl``, ...: one yearly query set per file, ``{"id",
  "text"}`` per line; each file is a split named after it, trained on the earlier years;
- ``qrels.trec``: binary TREC qrels of every year.

Every file is read through ``statbench.api``'s strict readers (``read_jsonl``, ``read_qrels``:
they name the file, line and field at fault), and anything the loader refuses is a
:class:`~statbench.api.DataFormatError`, never a silent drop.
"""

from __future__ import annotations

import logging
from pathlib import Path

from statbench.api import (
    DataFormatError,
    DefinedTask,
    Document,
    Query,
    Split,
    TaskData,
    files_sha256,
    id_value,
    read_jsonl,
    read_qrels,
    text_value,
)

#: The code every article belongs to (a field of each document, the root of its heading path).
CODE = "Civil Code of Freedonia"
#: Separator of the heading path (the one BSARD's ``heading_path`` uses).
PATH_SEPARATOR = " › "
#: The heading levels of an article, outermost first.
LEVELS = ("book", "chapter", "section")

#: The fixture shipped with the package: used when no ``--data-dir`` is given.
SHIPPED_DATA = Path(__file__).resolve().parent / "data"


class ExampleCivil(DefinedTask):
    definition_file = "example_civil.json"

    def data_folder(self, data_dir: Path | None) -> Path:
        """``--data-dir`` when given, else the fixture shipped in the package (a task whose
        data must be fetched keeps DefinedTask's default: ``$STATBENCH_DATA/<task>``)."""
        return Path(data_dir) if data_dir is not None else SHIPPED_DATA

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self.locate_files(data_dir, log)  # name -> path, for "locations" entries
        years = self.locate_file_sets(data_dir)["queries"]  # sorted paths, for the "glob" entry
        corpus = _read_articles(files["articles.jsonl"])
        queries: dict[str, Query] = {}
        by_year: dict[str, list[str]] = {}
        for path in years:
            by_year[path.stem] = _read_queries(path, queries)
        qrels = read_qrels(files["qrels.trec"])
        _check_qrels(files["qrels.trec"], qrels, corpus, queries)
        splits = []
        earlier: list[str] = []
        for year, ids in by_year.items():  # R01, R02, R03: sorted by file name
            splits.append(Split(name=year, test=tuple(ids), train=tuple(earlier)))
            earlier += ids
        all_files = [files["articles.jsonl"], *years, files["qrels.trec"]]
        return TaskData(
            corpus=corpus,
            queries=queries,
            qrels=qrels,
            splits=splits,
            files=all_files,
            checksum=files_sha256(all_files),  # name + content of every file the data came from
            groups={"year": {qid: year for year, ids in by_year.items() for qid in ids}},
        )


def _read_articles(path: Path) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    for line, obj in read_jsonl(path, required=("id", "number", "title", "headings", "text")):
        doc_id = id_value(path, obj["id"], line, "id")
        if not doc_id or any(c.isspace() for c in doc_id):
            raise DataFormatError(path, f"article id {doc_id!r} is empty or contains whitespace", line, "id")
        if doc_id in corpus:
            raise DataFormatError(path, f"article id {doc_id!r} appears twice", line, "id")
        headings = obj["headings"]
        if not isinstance(headings, list) or len(headings) != len(LEVELS):
            raise DataFormatError(path, f"expected a list of {len(LEVELS)} headings ({', '.join(LEVELS)})",
                                  line, "headings")
        levels = {level: text_value(path, heading, line, "headings").strip()
                  for level, heading in zip(LEVELS, headings)}
        text = text_value(path, obj["text"], line, "text").strip()
        if not text:
            raise DataFormatError(path, "empty article text", line, "text")
        corpus[doc_id] = Document(
            id=doc_id,
            text=text,
            title=text_value(path, obj["title"], line, "title"),
            fields={
                "code": CODE,
                "article_no": id_value(path, obj["number"], line, "number"),
                **levels,
                "heading_path": PATH_SEPARATOR.join([CODE, *levels.values()]),
            },
        )
    if not corpus:
        raise DataFormatError(path, "no articles (the file is empty or holds only blank lines)")
    return corpus


def _read_queries(path: Path, queries: dict[str, Query]) -> list[str]:
    """Add one year's queries to ``queries``; return their ids in file order."""
    ids = []
    for line, obj in read_jsonl(path, required=("id", "text")):
        qid = id_value(path, obj["id"], line, "id")
        if not qid or any(c.isspace() for c in qid):
            raise DataFormatError(path, f"query id {qid!r} is empty or contains whitespace", line, "id")
        if qid in queries:
            raise DataFormatError(path, f"query id {qid!r} appears twice (in this or an earlier year)", line, "id")
        text = text_value(path, obj["text"], line, "text").strip()
        if not text:
            raise DataFormatError(path, "empty query text", line, "text")
        queries[qid] = Query(id=qid, text=text)
        ids.append(qid)
    if not ids:
        raise DataFormatError(path, "no queries (the file is empty or holds only blank lines)")
    return ids


def _check_qrels(path: Path, qrels, corpus, queries) -> None:
    """A shipped fixture is exact: a judgement of an unknown query or article, a grade
    other than 0/1 or a query without a relevant article is an error, not a drop."""
    for qid, docs in qrels.items():
        if qid not in queries:
            raise DataFormatError(path, f"judges query {qid!r}, which no query file holds", field="qid")
        for doc_id, grade in docs.items():
            if doc_id not in corpus:
                raise DataFormatError(path, f"query {qid!r} judges article {doc_id!r}, which is not in the corpus",
                                      field="docid")
            if grade not in (0, 1):
                raise DataFormatError(path, f"query {qid!r}, article {doc_id!r}: grade {grade} is not 0 or 1 "
                                      "(judgements are binary)", field="relevance")
    unjudged = sorted(q for q in queries if not any(qrels.get(q, {}).values()))
    if unjudged:
        raise DataFormatError(path, f"{len(unjudged)} query(ies) have no relevant article (e.g. {unjudged[0]!r})")
