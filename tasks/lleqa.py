"""LLeQA loader: ``articles.json`` + ``questions_{train,dev,test}.json`` (Hugging Face
``maastrichtlawtech/lleqa``, gated; the layout of the authors' ``data/lleqa/`` folder).

The format is the one the authors' code reads (github.com/maastrichtlawtech/lleqa,
``src/data/lleqa.py``): each file holds records, as a JSON list (``pd.read_json(orient=
'records')``) or as JSON Lines (what ``datasets.Dataset.to_json`` writes). Articles have an
``id``, the ``article`` text and their headings (``description``: one string, or a list of
headings; BSARD's structure handling, :mod:`statbench.tasks.belgian`); questions have an
``id``, the ``question``, the ``article_ids`` the experts' answer rests on, and the answer
itself, which is never read (a retriever must not see it).

Download on use: the dataset is gated, so a plain URL cannot fetch it. Without ``--data-dir``,
missing files are exported from the hub with ``datasets.load_dataset`` under the user's own
hub login (:func:`export_from_hub`) into the task's data folder; whatever fails is one warning,
and the missing-files message that follows says what to fetch and where to put it."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from statbench import hookimpl
from statbench.api import Document, Query, Split, TaskData
from statbench.data.atomic import atomic_open
from statbench.data.checksum import files_sha256
from statbench.data.dataio import (
    item_error,
    json_type,
    query_text,
    read_json_list,
    read_jsonl,
    read_nonblank_lines,
    record_id,
    text_value,
)
from statbench.data.deadline import DeadlinePassed, call_within
from statbench.data.validation import check_file_qrels
from statbench.errors import DataFormatError, DownloadError, one_line
from statbench.loading.taskdef import DefinedTask
from statbench.storage import hub
from statbench.tasks.belgian import PATH_SEPARATOR, article_title, heading_fields

HUB_ID = "maastrichtlawtech/lleqa"
#: file -> (hub configuration, split) it is exported from
HUB_EXPORTS = {"articles.json": ("corpus", "corpus"), "questions_train.json": ("questions", "train"),
               "questions_dev.json": ("questions", "validation"), "questions_test.json": ("questions", "test")}
QUESTION_FILES = {"train": "questions_train.json", "dev": "questions_dev.json", "test": "questions_test.json"}
#: optional article fields kept as structure, in the order upstream lists them
STRUCTURE_FIELDS = ("code", "reference", "article_no", "law_type", "book", "part", "act", "chapter", "section",
                    "subsection")
#: heading levels, in upstream's order, that make the heading path when there is no ``description``
HEADING_LEVELS = ("book", "part", "act", "chapter", "section", "subsection")


class Record:
    """One record of a file, and how its errors name it: ``item N`` (and the line it starts
    on) in a JSON list, the line in JSON Lines."""

    def __init__(self, path: Path, value, line: int, index: int | None):
        self.path, self.value, self.line, self.index = path, value, line, index
        self.where = f"item {index}" if index is not None else f"line {line}"

    def error(self, message: str, field: str | None = None) -> DataFormatError:
        if self.index is not None:
            return item_error(self.path, self.index, self.line, message, field)
        return DataFormatError(self.path, message, self.line, field)

    def field(self, name: str, check):
        """``check(path, value, line, field)`` on a required field, its error naming this record."""
        if name not in self.value:
            raise self.error("missing field", name)
        try:
            return check(self.path, self.value[name], None, name)
        except DataFormatError as exc:
            raise self.error(exc.message, name) from None

    def optional_text(self, name: str) -> str:
        """An optional string field: absent or ``null`` is empty; any other type is refused."""
        value = self.value.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.error(f"expected a string or null, found {json_type(value)}", name)
        return value.strip()

    def optional_texts(self, name: str) -> list[str]:
        """An optional field holding a string or a list of strings (``null``/absent: none)."""
        value = self.value.get(name)
        if value is None:
            return []
        if isinstance(value, str):
            return [value.strip()] if value.strip() else []
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value if v.strip()]
        found = json_type(value) if not isinstance(value, list) else "a list holding " + next(
            json_type(v) for v in value if not isinstance(v, str))
        raise self.error(f"expected a string or a list of strings, found {found}", name)


def read_records(path: Path, what: str) -> Iterator[Record]:
    """The records of a JSON list or of a JSON Lines file (told apart by the first character)."""
    first = next(read_nonblank_lines(path), None)
    if first is None:
        raise DataFormatError(path, f"no {what} (the file is empty)")
    if first[1].lstrip().startswith("["):
        for index, line, item in read_json_list(path, what):
            record = Record(path, item, line, index)
            if not isinstance(item, dict):
                raise record.error(f"expected a JSON object, found {json_type(item)}")
            yield record
    else:
        for line, obj in read_jsonl(path):
            yield Record(path, obj, line, None)


def read_articles(path: Path) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    first: dict[str, str] = {}
    for record in read_records(path, "articles"):
        doc_id = record.field("id", lambda *a: record_id(*a, what="article"))
        if doc_id in corpus:
            raise record.error(f"duplicate article id {doc_id!r} (first in {first[doc_id]})", "id")
        text = record.field("article", text_value).strip()
        structure = {name: record.optional_text(name) for name in STRUCTURE_FIELDS}
        headings = record.optional_texts("description")
        raw = record.value.get("description")
        fields = {name: value for name, value in structure.items() if value}
        if isinstance(raw, str):
            fields.update(heading_fields(structure["code"], raw))
            fields["description"] = raw.strip()
        else:
            levels = headings or [structure[name] for name in HEADING_LEVELS if structure[name]]
            fields.update(heading_fields(structure["code"], levels))
            if headings:
                fields["description"] = PATH_SEPARATOR.join(headings)
        title = structure["reference"] or article_title(structure["code"], structure["article_no"])
        corpus[doc_id] = Document(id=doc_id, text=text, title=title, fields=fields)
        first[doc_id] = record.where
    if not corpus:
        raise DataFormatError(path, "no documents (the file holds no article)")
    return corpus


def read_questions(path: Path, queries: dict[str, Query], qrels: dict[str, dict[str, int]],
                   topics: dict[str, str], dropped: list[str], seen: dict[str, str]) -> list[str]:
    """Add one file's questions; returns its question ids in file order (empty ones included).
    ``seen`` (id -> where it was read) is shared by the three files: one id is one question,
    never a training and a test question at once."""
    ids: list[str] = []
    for record in read_records(path, "questions"):
        qid = record.field("id", lambda *a: record_id(*a, what="question"))
        if qid in seen:
            raise record.error(f"duplicate question id {qid!r} (first in {seen[qid]})", "id")
        seen[qid] = f"{path.name} {record.where}"
        ids.append(qid)
        raw_text = record.field("question", text_value)
        if "article_ids" not in record.value:
            raise record.error("missing field", "article_ids")
        articles = record.value["article_ids"]
        if not isinstance(articles, list):
            raise record.error(f"expected a list of article ids, found {json_type(articles)}", "article_ids")
        judged: dict[str, int] = {}
        for position, value in enumerate(articles):
            try:
                judged[record_id(path, value, None, "article_ids", "article")] = 1  # listed twice: one judgement
            except DataFormatError as exc:
                raise record.error(f"article_ids[{position}]: {exc.message}", "article_ids") from None
        topic_path = record.optional_texts("topics")
        regions = record.optional_texts("regions")
        text = query_text(path, raw_text, None, "question", qid, dropped, record.where)
        if text is None:
            continue
        fields = {}
        if topic_path:
            fields["topics"] = PATH_SEPARATOR.join(topic_path)
            topics[qid] = topic_path[0]
        if regions:
            fields["regions"] = ", ".join(regions)
        queries[qid] = Query(id=qid, text=text, fields=fields)
        qrels[qid] = judged
    if not ids:
        raise DataFormatError(path, "no questions (the file holds no question)")
    return ids


def export_from_hub(root: Path, names: list[str], log: logging.Logger) -> str | None:
    """Write each named file into ``root`` from the hub (``HUB_EXPORTS``), as JSON Lines,
    atomically. Offline, without the ``datasets`` library, or refused by the hub (gated: the
    terms not accepted, no login), it stops and returns why (``None``: all written)."""
    # the one offline probe (HF_HUB_OFFLINE, 3 s) and the one overall bound on a fetch (looked up
    # on the module at each call: tests patch them there)
    page = f"https://huggingface.co/datasets/{HUB_ID}"
    reason = hub.offline_reason()
    if reason is not None:
        return f"not downloaded from the hub: {reason}"
    try:
        from datasets import load_dataset
    except ImportError:
        return "downloading from the hub needs the datasets library (pip install 'statbench[neural]')"
    bound = hub.fetch_timeout()
    deadline = time.monotonic() + bound  # one bound for every file: the whole export is one fetch
    for name in names:
        config, split = HUB_EXPORTS[name]
        dest = root / name
        log.info("downloading %s (configuration %s, split %s) from the hub into %s", HUB_ID, config, split, dest)
        try:
            dataset = call_within(max(deadline - time.monotonic(), 0.0),
                                  lambda: load_dataset(HUB_ID, config, split=split), f"hub export of {name}")
            with atomic_open(dest, "wb") as out:
                dataset.to_json(out, force_ascii=False)
        except DeadlinePassed:
            return f"not downloaded: {hub.FetchStalled(f'{name} ({HUB_ID}, {config}/{split})', bound)}"
        except Exception as exc:  # noqa: BLE001 - network, auth and library errors all mean: not downloaded
            return (f"could not download {name} from the hub ({one_line(exc)}); the dataset is gated: accept "
                    f"its terms at {page} and log in (huggingface-cli login, or HF_TOKEN)")
    return None


class Lleqa(DefinedTask):
    definition_file = "lleqa.json"

    def locate_files(self, data_dir: Path | None, log: logging.Logger, download: bool = True) -> dict[str, Path]:
        """As every task, plus the hub export of missing files when no ``--data-dir`` is given."""
        if data_dir is None and download:
            root = self.data_folder(None)
            missing = [spec["name"] for spec in self.definition["files"]
                       if not any(os.path.lexists(root / location) for location in spec["locations"])]
            failure = export_from_hub(root, missing, log) if missing else None
            if failure is not None:
                log.warning("lleqa: %s", failure)
                try:
                    return super().locate_files(data_dir, log, download)
                except DownloadError as exc:  # the missing-files message, with why the hub gave nothing
                    raise DownloadError(f"{exc}\n  (hub: {failure})") from None
        return super().locate_files(data_dir, log, download)

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self.locate_files(data_dir, log)
        dropped: list[str] = []
        corpus = read_articles(files["articles.json"])
        queries: dict[str, Query] = {}
        qrels: dict[str, dict[str, int]] = {}
        topics: dict[str, str] = {}
        seen: dict[str, str] = {}
        by_split = {split: read_questions(files[name], queries, qrels, topics, dropped, seen)
                    for split, name in QUESTION_FILES.items()}
        for split, ids in by_split.items():  # judgements checked file by file, so reports name the file
            check_file_qrels(ids, qrels, corpus, queries, files[QUESTION_FILES[split]], dropped)
        train, dev, test = (tuple(q for q in by_split[s] if q in queries) for s in ("train", "dev", "test"))
        # by the root of each question's topic path; "(none)" for a question without one
        groups = {"topic": {q: topics.get(q, "(none)") for q in queries}} if topics else {}
        return TaskData(
            corpus=corpus,
            queries=queries,
            qrels=qrels,
            splits=[Split(name="test", test=test, train=train, dev=dev)],
            extra_splits=[Split(name="dev", test=dev, train=train)],
            files=list(files.values()),
            checksum=files_sha256(files.values()),
            dropped=dropped,
            groups=groups,
        )


@hookimpl
def register_tasks(register):
    register(Lleqa)
