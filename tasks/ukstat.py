"""UK statutes loader (UK-STATUTECORPUS, graded 3/2/1), in one of two layouts:

- real: ``corpus_uklegislation.json`` (a JSON list of ``{content, metadata}``, id =
  ``metadata.chunk_id``) + ``eval_statutory_100queries_approved.jsonl`` (qid, query,
  answers[{chunk_id, rel}]);
- substitute: ``corpus.jsonl`` (``{id, content, ...}``) + ``queries.jsonl`` (qid, query) +
  ``qrels.tsv``.

Models see a passage's ``content`` and a query's text. In the real layout a passage also
carries its legislative structure in ``Document.fields``, named as BSARD's are:
``instrument`` (``metadata.doc_id``), ``code`` (the instrument's title, from
``metadata.file_name``), ``position`` (``metadata.chunk_position``), ``heading`` (the
passage's own heading line, when it starts with one) and ``heading_path`` (code › heading).
Every passage of the real corpus has these, judged or not, so they say nothing about
relevance; the type, year and URL are not exposed. The substitute corpus is ``{id,
content}`` only and loads with empty fields (its former metadata told judged passages from
distractors). The query's anchoring instrument (``doc_id`` in the evaluation set,
``query_instrument.tsv``) tells where the answer is, so it is never read.

The 471 MB real corpus is read item by item (:func:`statbench.data.dataio.read_json_list`
streams), so loading costs the passages, not the file's text as well."""

from __future__ import annotations

import logging
from pathlib import Path

from statbench import hookimpl
from statbench.api import Document, Query, Split, TaskData
from statbench.data.checksum import files_sha256
from statbench.data.dataio import (
    id_value,
    item_error,
    json_type,
    query_text,
    read_json_list,
    read_jsonl,
    record_id,
    text_value,
)
from statbench.data.runfile import read_qrels
from statbench.data.validation import check_qrels_against_corpus
from statbench.errors import DataFormatError, DownloadError
from statbench.loading.taskdef import DefinedTask


class UkStatutes(DefinedTask):
    definition_file = "ukstat.json"

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self._layout_files(data_dir, log)
        dropped: list[str] = []
        if "corpus_uklegislation.json" in files:
            corpus = read_real_corpus(files["corpus_uklegislation.json"])
            queries, qrels, types = read_eval_set(files["eval_statutory_100queries_approved.jsonl"], dropped)
            source = files["eval_statutory_100queries_approved.jsonl"]
        else:
            corpus = read_substitute_corpus(files["corpus.jsonl"])
            queries, types = read_queries(files["queries.jsonl"], dropped)
            qrels = self._read_qrels(files["qrels.tsv"], queries, dropped)
            source = files["qrels.tsv"]
        check_qrels_against_corpus(qrels, corpus, queries, source, dropped)
        data = TaskData(
            corpus=corpus,
            queries=queries,
            qrels=qrels,
            splits=[Split(name="test", test=tuple(queries))],
            files=list(files.values()),
            checksum=files_sha256(files.values()),
            dropped=dropped,
            groups={"legislation_type": {q: t for q, t in types.items() if q in queries}} if types else {},
        )
        return data

    def _layout_files(self, data_dir: Path | None, log: logging.Logger) -> dict[str, Path]:
        """The real layout when complete, else the substitute; downloads only if neither is there."""
        layouts = self.definition["splits"]["layouts"]
        for download in (False, True):
            found = self.locate_files(data_dir, log, download=download)
            for names in (layouts["real"], layouts["substitute"]):
                if all(n in found for n in names):
                    return {n: found[n] for n in names}
            if data_dir is not None:
                break
        root = self.data_folder(data_dir)
        real = self._missing_message(root, self.file_specs(layouts["real"]), data_dir is not None)
        substitute = self._missing_message(root, self.file_specs(layouts["substitute"]), data_dir is not None)
        raise DownloadError(
            f"{real}\n... or, for the substitute corpus, all of:\n" + "\n".join(substitute.splitlines()[1:])
        )

    def _read_qrels(self, path: Path, queries: dict[str, Query], dropped: list[str]) -> dict[str, dict[str, int]]:
        qrels = read_qrels(path, notes=dropped)
        grades = {int(g) for g in self.definition["relevance"]}
        for qid, docs in qrels.items():
            for doc, grade in docs.items():
                if grade not in grades:
                    raise DataFormatError(path, f"query {qid}, document {doc}: grade {grade} is not one of "
                                          f"{sorted(grades)}", field="relevance")
        unknown = sorted(q for q in qrels if q not in queries)
        if unknown:
            dropped.append(f"{path.name}: judgements of {len(unknown)} unknown or dropped query(ies) ignored "
                           f"(e.g. {', '.join(unknown[:3])})")
            for qid in unknown:
                del qrels[qid]
        return qrels


#: separator of ``heading_path`` levels (as BSARD's)
PATH_SEPARATOR = " › "
_HEADING_MAX = 120


def _add_doc(corpus: dict[str, Document], path: Path, doc_id, content, where: int, field: str, first: dict,
             metadata: dict | None = None) -> None:
    doc_id = record_id(path, doc_id, where, field, "passage")
    if doc_id in corpus:
        raise DataFormatError(path, f"duplicate passage id {doc_id!r} (first at {first[doc_id]})", where, field)
    text = text_value(path, content, where, "content")
    fields = structure_fields(path, metadata, text, where) if metadata is not None else {}
    corpus[doc_id] = Document(id=doc_id, text=text, fields=fields)
    first[doc_id] = where


def structure_fields(path: Path, metadata: dict, text: str, where: int) -> dict[str, str]:
    """A real-layout passage's place in its instrument (see the module docstring)."""
    fields: dict[str, str] = {}
    if metadata.get("doc_id") is not None:
        fields["instrument"] = id_value(path, metadata["doc_id"], where, "metadata.doc_id").strip()
    title = ""
    if metadata.get("file_name") is not None:
        title = text_value(path, metadata["file_name"], where, "metadata.file_name").strip().removesuffix(".txt")
    code = title or fields.get("instrument", "")
    if code:
        fields["code"] = code
    if metadata.get("chunk_position") is not None:
        fields["position"] = id_value(path, metadata["chunk_position"], where, "metadata.chunk_position").strip()
    heading = passage_heading(text)
    if heading:
        fields["heading"] = heading
    path_parts = [p for p in (code, heading) if p]
    if path_parts:
        fields["heading_path"] = PATH_SEPARATOR.join(path_parts)
    return fields


def passage_heading(text: str) -> str:
    """The passage's first line when it reads as a heading ("Offences and penalties"): short,
    not a numbered provision, not ending like a sentence or a list lead-in."""
    line = text.lstrip().split("\n", 1)[0].strip()
    if not line or len(line) > _HEADING_MAX or line[0].isdigit() or line[0] == "(" or line[-1] in ".,;:—-–":
        return ""
    return line


def read_substitute_corpus(path: Path) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    first: dict[str, int] = {}
    for lineno, obj in read_jsonl(path, required=("id", "content")):
        _add_doc(corpus, path, obj["id"], obj["content"], lineno, "id", first)
    if not corpus:
        raise DataFormatError(path, "no documents (the file is empty or holds only blank lines)")
    return corpus


def read_real_corpus(path: Path) -> dict[str, Document]:
    """The 471 MB JSON list; errors name the item (its index) and the line it starts on."""
    corpus: dict[str, Document] = {}
    first: dict[str, int] = {}
    for index, line, item in read_json_list(path, "passages"):
        if not isinstance(item, dict):
            raise item_error(path, index, line, f"expected a JSON object, found {json_type(item)}", None)
        if "content" not in item:
            raise item_error(path, index, line, "missing field", "content")
        metadata = item.get("metadata")
        if not isinstance(metadata, dict) or "chunk_id" not in metadata:
            raise item_error(path, index, line, "missing field", "metadata.chunk_id")
        try:
            _add_doc(corpus, path, metadata["chunk_id"], item["content"], index, "metadata.chunk_id", first, metadata)
        except DataFormatError as exc:  # say "item", not "line"
            raise item_error(path, index, line, exc.message, exc.field) from None
    if not corpus:
        raise DataFormatError(path, "no documents (the list is empty)")
    return corpus


def read_queries(path: Path, dropped: list[str]) -> tuple[dict[str, Query], dict[str, str]]:
    queries: dict[str, Query] = {}
    types: dict[str, str] = {}
    first: dict[str, int] = {}
    for lineno, obj in read_jsonl(path, required=("qid", "query")):
        _add_query(path, lineno, obj, queries, types, dropped, first)
    if not first:
        raise DataFormatError(path, "no queries (the file is empty or holds only blank lines)")
    return queries, types


def _add_query(path, lineno, obj, queries, types, dropped, first: dict[str, int]) -> str | None:
    qid = record_id(path, obj["qid"], lineno, "qid", "query")
    if qid in first:
        raise DataFormatError(path, f"duplicate query id {qid!r} (first on line {first[qid]})", lineno, "qid")
    first[qid] = lineno
    kind = obj.get("legislation_type")
    if kind is not None:
        kind = text_value(path, kind, lineno, "legislation_type").strip()
    text = query_text(path, obj["query"], lineno, "query", qid, dropped)
    if text is None:
        return None
    queries[qid] = Query(id=qid, text=text)
    if kind:
        types[qid] = kind
    return qid


def read_eval_set(path: Path, dropped: list[str]):
    """The real evaluation set; ``doc_id`` (the query's instrument) is deliberately not read.

    A passage judged twice for one query with different grades is an error; an exact
    repeat changes nothing and is counted once (said in ``dropped``)."""
    queries: dict[str, Query] = {}
    types: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    first: dict[str, int] = {}
    repeats: list[str] = []
    for lineno, obj in read_jsonl(path, required=("qid", "query", "answers")):
        qid = _add_query(path, lineno, obj, queries, types, dropped, first)
        if not isinstance(obj["answers"], list):
            raise DataFormatError(path, f"answers must be a list, found {json_type(obj['answers'])}", lineno, "answers")
        judged: dict[str, int] = {}
        position: dict[str, int] = {}
        for number, answer in enumerate(obj["answers"]):
            if not isinstance(answer, dict) or "chunk_id" not in answer or "rel" not in answer:
                raise DataFormatError(path, f"answers[{number}]: each answer needs chunk_id and rel", lineno, "answers")
            chunk = record_id(path, answer["chunk_id"], lineno, "answers.chunk_id", "passage", f"answers[{number}]: ")
            grade = answer["rel"]
            if isinstance(grade, bool) or not isinstance(grade, int) or grade not in (1, 2, 3):
                raise DataFormatError(path, f"answers[{number}]: grade {grade!r} is not 1, 2 or 3", lineno,
                                      "answers.rel")
            if chunk in judged:
                if judged[chunk] != grade:
                    raise DataFormatError(
                        path, f"passage {chunk!r} is judged twice with different grades: rel {judged[chunk]} in "
                        f"answers[{position[chunk]}], rel {grade} in answers[{number}]", lineno, "answers.rel"
                    )
                repeats.append(f"line {lineno} answers[{number}] = answers[{position[chunk]}]")
                continue
            judged[chunk], position[chunk] = grade, number
        if qid is not None:
            qrels[qid] = judged
    if not first:
        raise DataFormatError(path, "no queries (the file is empty or holds only blank lines)")
    if repeats:
        dropped.append(f"{path.name}: {len(repeats)} answer(s) repeat an earlier judgement of the same query "
                       f"exactly and were counted once (e.g. {', '.join(repeats[:3])})")
    return queries, qrels, types


@hookimpl
def register_tasks(register):
    register(UkStatutes)
