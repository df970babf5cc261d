"""STARD loader: upstream ``queries.json`` + ``corpus.jsonl`` (or the rebuilt corpus).

Documents are keyed by article *name* (e.g. 建筑法第四十八条): upstream ``match_id``
lists are sorted while ``match_name`` lists are not, so ids cannot be trusted to align.

Legislative structure: when ``structure.jsonl`` lies next to the corpus (the rebuilt
corpus ships one: ``{id, law, category, headings}`` per article, headings 编 / 分编 / 章 / 节
outermost first), each article gets it in ``Document.fields`` with BSARD's field names:
``code`` (the law), ``category``, ``description`` (the headings joined), ``heading_path``
(law › headings) and one field per level (``book`` 编, ``part`` 分编, ``chapter`` 章,
``section`` 节). The file is read strictly (every article exactly once, nothing else) and
stays out of the data checksum: without it the task is exactly what it was."""

from __future__ import annotations

import json
import logging
import re
from importlib import resources
from pathlib import Path

from statbench import hookimpl
from statbench.api import Document, Query, Split, TaskData
from statbench.data.checksum import files_sha256
from statbench.data.dataio import (
    id_value,
    invisible_character,
    item_error,
    json_type,
    query_text,
    read_json_list,
    read_jsonl,
    read_lines,
    read_nonblank_lines,
    record_id,
    text_value,
)
from statbench.data.validation import check_qrels_against_corpus
from statbench.errors import DataFormatError
from statbench.loading.splits import kfold_assignment, kfold_splits
from statbench.loading.taskdef import DefinedTask

OFFICIAL_FILES = ("train.query.txt", "dev.query.txt")
STRUCTURE_FILE = "structure.jsonl"
PATH_SEPARATOR = " › "  # as in BSARD's heading_path
#: Heading level (the character the heading's number ends with) -> field name.
LEVELS = (("分编", "part"), ("编", "book"), ("章", "chapter"), ("节", "section"))
_LEVEL = re.compile(r"^第[^\s]*?(分编|编|章|节)")
_LEVEL_NAMES = dict(LEVELS)


class Stard(DefinedTask):
    definition_file = "stard.json"

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self.locate_files(data_dir, log)
        dropped: list[str] = []
        texts = _read_corpus_texts(files["corpus.jsonl"], dropped)
        # declared (optional) so that every cache keyed by the task's files covers it; read
        # only beside the corpus it describes
        structure = files.get(STRUCTURE_FILE)
        fields = None
        if structure is not None and structure.parent == files["corpus.jsonl"].parent:
            fields = read_structure_fields(structure, texts, dropped)
            log.info("stard: legislative structure read from %s", structure)
        elif structure is not None:
            log.warning("stard: %s ignored: it does not lie beside the corpus %s", structure, files["corpus.jsonl"])
        corpus = _documents(texts, fields)
        del texts
        queries, qrels = self._read_queries(files["queries.json"], dropped)
        check_qrels_against_corpus(qrels, corpus, queries, files["queries.json"], dropped)
        stopwords = None
        if "cn_stopwords.txt" in files:
            stopwords = _read_stopwords(files["cn_stopwords.txt"])
        official = self._official_split(files, queries, dropped)
        # the official split files define a protocol, not data: they stay out of the checksum
        # (split membership is part of every run's cache key anyway)
        # nor does the structure file: without it the task is exactly what it was
        data_files = [path for name, path in files.items() if name not in OFFICIAL_FILES and name != STRUCTURE_FILE]
        return TaskData(
            corpus=corpus,
            queries=queries,
            qrels=qrels,
            splits=kfold_splits(self._folds(list(queries), log)),
            files=data_files,
            checksum=files_sha256(data_files),
            dropped=dropped,
            stopwords=stopwords,
            extra_splits=official,
        )

    def _official_split(self, files: dict[str, Path], queries: dict[str, Query], dropped: list[str]) -> list[Split]:
        """The upstream train/dev split (tested on dev, trained on train): the one split of the
        ``official`` protocol the definition declares, built from the files ``splits.official`` names."""
        spec = self.definition["splits"]["official"]
        (name,) = self.task_info().protocol("official").splits
        if spec["train_file"] not in files or spec["dev_file"] not in files:
            return []
        train = _read_query_ids(files[spec["train_file"]], queries, dropped)
        dev = _read_query_ids(files[spec["dev_file"]], queries, dropped)
        overlap = sorted(set(train) & set(dev))
        if overlap:
            raise DataFormatError(files[spec["dev_file"]], f"{len(overlap)} query id(s) are also in "
                                  f"{spec['train_file']} (e.g. {', '.join(overlap[:3])})", field="id")
        return [Split(name=name, test=tuple(dev), train=tuple(train))]

    @staticmethod
    def _read_corpus(path: Path, dropped: list[str]) -> dict[str, Document]:
        return _documents(_read_corpus_texts(path, dropped))

    @staticmethod
    def _read_queries(path: Path, dropped: list[str]):
        """Errors name the item (its index in the list) and the line it starts on."""
        queries: dict[str, Query] = {}
        qrels: dict[str, dict[str, int]] = {}
        first_item: dict[str, int] = {}
        for index, line, item in read_json_list(path, "queries"):
            where = f"item {index}"

            def fail(message, field):
                return item_error(path, index, line, message, field)

            def checked(check, field):
                try:
                    return check(path, item[field], None, field)
                except DataFormatError as exc:
                    raise fail(exc.message, field) from None

            if not isinstance(item, dict):
                raise fail(f"expected a JSON object, found {json_type(item)}", None)
            for field in ("query_id", "问题", "match_name"):
                if field not in item:
                    raise fail("missing field", field)
            qid = checked(lambda *args: record_id(*args, what="query"), "query_id")
            text = checked(text_value, "问题")
            if qid in first_item:
                raise fail(f"duplicate query_id {qid!r} (first in item {first_item[qid]})", "query_id")
            first_item[qid] = index
            names = item["match_name"] if isinstance(item["match_name"], list) else [item["match_name"]]
            keys = []
            for name in names:
                try:
                    keys.append(_visible_key(path, _article_key(id_value(path, name, None, "match_name")), None,
                                             "match_name"))
                except DataFormatError as exc:
                    raise fail(f"article name: {exc.message}", "match_name") from None
            text = query_text(path, text, None, "问题", qid, dropped, where)
            if text is None:
                continue
            if not all(keys):
                dropped.append(f"{path.name} {where}: query {qid} lists an empty article name (ignored)")
            queries[qid] = Query(id=qid, text=text)
            qrels[qid] = {key: 1 for key in keys if key}  # an article listed twice is one judgement
        if not first_item:
            raise DataFormatError(path, "no queries (the list is empty)")
        return queries, qrels

    def _folds(self, query_ids: list[str], log: logging.Logger) -> dict[str, list[str]]:
        spec = self.definition["splits"]
        shipped = json.loads(resources.files(__package__).joinpath(spec["folds_file"]).read_text("utf-8"))
        known = {q for ids in shipped["folds"].values() for q in ids}
        if known.issuperset(query_ids):
            wanted = set(query_ids)
            return {name: [q for q in ids if q in wanted] for name, ids in shipped["folds"].items()}
        log.warning("queries differ from upstream STARD: folds derived from seed %s", spec["seed"])
        return kfold_assignment(query_ids, spec["k"], spec["seed"])


def _read_query_ids(path: Path, queries: dict[str, Query], dropped: list[str]) -> list[str]:
    """Query ids of an official split file (``id<TAB>question``); the text comes from queries.json."""
    ids: list[str] = []
    unknown: list[str] = []
    first_line: dict[str, int] = {}
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        if not line.split("\t", 1)[0].strip() or "\t" not in line:
            raise DataFormatError(path, "expected 'id<TAB>question'", lineno, "id")
        qid = record_id(path, line.split("\t", 1)[0], lineno, "id", "query")
        if qid in first_line:  # a query listed twice would be scored twice
            raise DataFormatError(path, f"query id {qid!r} listed twice (first on line {first_line[qid]})",
                                  lineno, "id")
        first_line[qid] = lineno
        (ids if qid in queries else unknown).append(qid)
    if not first_line:
        raise DataFormatError(path, "no query ids (the file is empty or holds only blank lines)")
    if unknown:
        dropped.append(f"{path.name}: {len(unknown)} query id(s) not among the loaded queries left out of the "
                       f"official split (e.g. {', '.join(unknown[:3])})")
    return ids


def _read_corpus_texts(path: Path, dropped: list[str]) -> dict[str, str]:
    """Article name -> text (the first of a repeated name is kept, the others are dropped)."""
    texts: dict[str, str] = {}
    for lineno, obj in read_jsonl(path, required=("name", "content")):
        name, text = obj["name"], obj["content"]
        key = "".join(name.split()) if type(name) is str else _article_key(id_value(path, name, lineno, "name"))
        _visible_key(path, key, lineno, "name")
        if not key:
            raise DataFormatError(path, "empty article name", lineno, "name")
        if type(text) is not str:
            text_value(path, text, lineno, "content")  # raises
        if key in texts:
            dropped.append(f"{path.name} line {lineno}: duplicate article name {key!r} (first kept)")
            continue
        texts[key] = text
    if not texts:
        raise DataFormatError(path, "no documents (the file is empty or holds only blank lines)")
    return texts


def _documents(texts: dict[str, str], fields: dict[str, dict[str, str]] | None = None) -> dict[str, Document]:
    """The corpus: id and title are the name (one string), fields the structure or one empty
    mapping shared by every article (fields are read-only: ``Document`` is frozen)."""
    if fields is None:
        none: dict[str, str] = {}
        return {name: Document(id=name, text=text, title=name, fields=none) for name, text in texts.items()}
    return {name: Document(id=name, text=text, title=name, fields=fields[name]) for name, text in texts.items()}


def read_structure_fields(path: Path, corpus, dropped: list[str]) -> dict[str, dict[str, str]]:
    """Article name -> its ``Document.fields``, for every article of ``corpus`` (names);
    strict: an unknown or repeated id, a malformed line, an article without a line is an
    error. An empty heading string (the shipped file has two, ``[""]``) names no division:
    it is left out and reported in ``dropped``. Articles under the same headings share one
    (read-only) fields mapping."""
    fields: dict[str, dict[str, str]] = {}
    first_line: dict[str, int] = {}
    #: (law, category, *headings) as read -> (fields, whether a heading was empty)
    seen: dict[tuple, tuple[dict[str, str], bool]] = {}
    for lineno, obj in read_jsonl(path, required=("id", "law", "category", "headings")):
        doc_id = _article_key(id_value(path, obj["id"], lineno, "id"))
        if doc_id not in corpus:
            raise DataFormatError(path, f"article {doc_id!r} is not in the corpus", lineno, "id")
        if doc_id in first_line:
            raise DataFormatError(path, f"article {doc_id!r} listed twice (first on line {first_line[doc_id]})",
                                  lineno, "id")
        first_line[doc_id] = lineno
        law, category, headings = obj["law"], obj["category"], obj["headings"]
        known = key = None
        if type(law) is str and type(category) is str and type(headings) is list:
            key = (law, category, *headings)
            try:
                known = seen.get(key)
            except TypeError:  # an unhashable heading: the checks below name it
                key = None
        if known is None:
            known = _checked_structure(path, lineno, law, category, headings)
            if key is not None:
                seen[key] = known
        if known[1]:
            dropped.append(f"{path.name} line {lineno}: article {doc_id} lists an empty heading (left out)")
        fields[doc_id] = known[0]
    missing = [d for d in corpus if d not in fields]
    if missing:
        raise DataFormatError(path, f"{len(missing)} corpus article(s) have no line (e.g. {', '.join(missing[:3])})")
    return fields


def _checked_structure(path: Path, lineno: int, law, category, headings) -> tuple[dict[str, str], bool]:
    """One line's fields, and whether it listed an empty heading (errors name the line)."""
    law = text_value(path, law, lineno, "law").strip()
    if not law:
        raise DataFormatError(path, "empty law", lineno, "law")
    category = text_value(path, category, lineno, "category").strip()
    if not isinstance(headings, list):
        raise DataFormatError(path, f"expected a list of headings, found {json_type(headings)}", lineno, "headings")
    headings = [text_value(path, h, lineno, "headings").strip() for h in headings]
    empty = not all(headings)
    if empty:
        headings = [h for h in headings if h]
    for heading in [law, *headings]:
        if "›" in heading:
            raise DataFormatError(path, f"heading {heading!r} contains '›' (the path separator)", lineno, "headings")
    return structure_fields(law, category, headings), empty


def structure_fields(law: str, category: str, headings: list[str]) -> dict[str, str]:
    """One article's ``Document.fields`` (BSARD's names; see the module docstring)."""
    out = {"code": law, "category": category, "description": PATH_SEPARATOR.join(headings),
           "heading_path": PATH_SEPARATOR.join([law, *headings])}
    for heading in headings:
        match = _LEVEL.match(heading)
        name = _LEVEL_NAMES.get(match.group(1)) if match else None
        if name and name not in out:
            out[name] = heading
    return out


def _read_stopwords(path: Path) -> frozenset[str]:
    words = frozenset(line for _, line in read_nonblank_lines(path))
    if not words:
        raise DataFormatError(path, "no stop words (the file is empty or holds only blank lines)")
    return words


def _visible_key(path: Path, key: str, lineno: int | None, field: str) -> str:
    """``key`` (an article name as a document id), refused when it holds an invisible
    character, as every loader refuses such an id (dataio.record_id): it would print as
    another article and never match it."""
    hidden = invisible_character(key)
    if hidden is not None:
        raise DataFormatError(path, f"article name {key!r} holds an invisible character ({hidden}): it would print "
                              "as another article and never match it", lineno, field)
    return key


def _article_key(name: str) -> str:
    """Article names serve as doc ids; TREC ids cannot hold whitespace, which is
    insignificant in Chinese names (51 rebuilt-corpus names contain double spaces)."""
    return "".join(name.split())


@hookimpl
def register_tasks(register):
    register(Stard)
