"""Any folder in BEIR's layout as a task, with no code: ``--task beir:PATH``.

The layout (https://github.com/beir-cellar/beir, ``GenericDataLoader``)::

    PATH/corpus.jsonl          {"_id": ..., "title": ..., "text": ...} per line ("title" optional)
    PATH/queries.jsonl         {"_id": ..., "text": ...} per line (other keys are ignored)
    PATH/qrels/<split>.tsv     a header "query-id<TAB>corpus-id<TAB>score", then one judgement a line
    PATH/statbench.json        optional: language, measures, primary_measure, protocols, name, ...

Each qrels file is a split and a protocol of its own (``test`` the default when present);
a split's test queries are the queries judged in its file. The training queries of a
split are those of ``train.tsv`` and its dev queries those of ``dev.tsv`` (BEIR's
``train``/``dev``/``test`` convention), never its own. Measures default to BEIR's
headline ones: nDCG@10 (primary), R@100, MAP@100, RR@10.

**Titles.** BEIR's BM25 baselines search the title with the text (Elasticsearch queries
both fields; the BM25S baseline and Pyserini's "flat" BEIR indexes concatenate
``title + " " + text``), and its dense models encode ``title + sep + text``. statbench's
lexical models index ``Document.text`` only, so by default (``"title": "prepend"``) the
text a model sees is ``title + " " + text`` and ``Document.title`` stays empty (the raw
title is kept in ``Document.fields["title"]``), so that a model's ``with_title`` option
cannot add the title a second time. ``"title": "separate"`` in statbench.json keeps
BEIR's two fields apart instead (``Document.title``, ``Document.text``).

Reading is strict (:mod:`statbench.data.dataio`): a malformed line, a duplicate id, an id with
whitespace, a judgement of a query missing from queries.jsonl, or a query judged
differently in two split files stops with one line naming the file, the line and the
field. Like every statbench task (and unlike BEIR, which scores them as they are),
judgements of documents missing from the corpus and queries left without a relevant
document are dropped, each said in the run's ``dropped`` list.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from statbench.contract.records import Document, Measure, Query, Split, TaskData
from statbench.contract.task import Task
from statbench.contract.taskinfo import Protocol, TaskInfo
from statbench.data.checksum import files_sha256, text_sha256
from statbench.data.dataio import query_text, read_json, read_jsonl, read_lines, record_id, text_value
from statbench.data.runfile import check_grade
from statbench.data.validation import check_qrels_against_corpus
from statbench.errors import DataFormatError, StatbenchError
from statbench.registry.checks import PluginError, check_task_class
from statbench.registry.hookspecs import hookimpl

_log = logging.getLogger("statbench")

PREFIX = "beir:"
SETTINGS_FILE = "statbench.json"
#: BEIR's headline measures (its evaluation reports NDCG@k, Recall@k, MAP@k and MRR@k).
DEFAULT_MEASURES = (
    Measure("nDCG@10", "nDCG@10"),
    Measure("R@100", "R@100"),
    Measure("MAP@100", "AP@100"),
    Measure("RR@10", "RR@10"),
)
DEFAULT_PRIMARY = "nDCG@10"
#: BEIR's evaluations retrieve the top 1000 documents per query.
DEFAULT_DEPTH = 1000
TITLE_MODES = ("prepend", "separate")
QRELS_HEADER = ("query-id", "corpus-id", "score")
#: Bump whenever this loader builds anything differently from the same files.
LOADER_VERSION = "1"
LAYOUT = "BEIR's layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
#: Longest task or protocol name (it names folders and files, whose names are bounded).
MAX_NAME = 100
_INTEGER = re.compile(r"[+-]?[0-9]+")
SETTINGS_KEYS = {
    "name": "the task name [default: beir-<folder name>]",
    "description": "one line shown in listings",
    "language": "ISO 639 code of the texts [default: en, with a warning]",
    "measures": "list of ir-measures names, or of {label, ir_measure}",
    "primary_measure": "label of the measure tests and summaries use",
    "protocols": "list of split names, or {name: {splits: [...], description}}",
    "default_protocol": "the protocol a plain run evaluates",
    "depth": "documents kept per query in a run",
    "title": "prepend (title + ' ' + text, the default) or separate",
    "relevance": "{grade: meaning}",
    "version": "bump when the files change meaning without changing bytes",
}


@dataclass(frozen=True)
class BeirFolder:
    """What resolving ``beir:PATH`` found: the files and the declared settings."""

    folder: Path
    corpus: Path
    queries: Path
    #: split name -> its qrels file, sorted by name
    qrels: Mapping[str, Path]
    settings: Mapping = field(default_factory=dict)

    @property
    def title_mode(self) -> str:
        return self.settings.get("title", "prepend")


# --- resolving a folder --------------------------------------------------------------


def find_folder(path) -> BeirFolder:
    """Check that ``path`` is a folder in BEIR's layout and read its ``statbench.json``;
    anything missing or malformed is one line naming the path."""
    folder = Path(path).expanduser()
    try:
        is_dir = folder.is_dir()
    except (OSError, ValueError) as exc:
        raise DataFormatError(folder, f"cannot read the folder ({exc})") from None
    if not is_dir:
        what = "is not a folder" if os.path.lexists(folder) else "no such folder"
        raise DataFormatError(folder, f"{what} (--task beir:PATH names a folder in {LAYOUT})")
    corpus, queries, qrels_dir = folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels"
    for required in (corpus, queries):
        if not os.path.lexists(required):
            raise DataFormatError(required, f"file not found ({LAYOUT})")
    if not qrels_dir.is_dir():
        raise DataFormatError(qrels_dir, f"no qrels folder ({LAYOUT})")
    qrels = {p.name[: -len(".tsv")]: p for p in sorted(qrels_dir.glob("*.tsv"))}
    if not qrels:
        raise DataFormatError(qrels_dir, f"no <split>.tsv file ({LAYOUT})")
    for split, split_file in qrels.items():
        if not _NAME.match(split):
            raise DataFormatError(split_file, "a split's file name must be letters, digits, '.', '_', '+', '-' then .tsv")
    settings_path = folder / SETTINGS_FILE
    settings = read_settings(settings_path, qrels) if os.path.lexists(settings_path) else {}
    return BeirFolder(folder=folder, corpus=corpus, queries=queries, qrels=qrels, settings=settings)


def read_settings(path: Path, qrels: Mapping[str, Path]) -> dict:
    """``statbench.json``, checked key by key (an unknown key is an error, not ignored)."""
    settings = read_json(path, expect=dict)

    def bad(key: str, message: str) -> DataFormatError:
        return DataFormatError(path, message, field=key)

    for key, value in settings.items():
        if key not in SETTINGS_KEYS:
            raise bad(key, f"unknown key {key!r} (known: {', '.join(SETTINGS_KEYS)})")
        textual = ("name", "description", "language", "primary_measure", "default_protocol", "version", "title")
        if key in textual and not isinstance(value, str):
            raise bad(key, f"expected a string, found {type(value).__name__}")
        if key in textual and not _one_line(value):
            raise bad(key, f"{_shown(value)} holds a line break or another control character (one line of text)")
        if key in ("primary_measure", "default_protocol") and not value.strip():
            raise bad(key, "expected a non-empty string (leave the key out for the default)")
    if "name" in settings and not _NAME.match(settings["name"]):
        raise bad("name", "a task name is letters, digits, '.', '_', '+', '-'")
    if len(settings.get("name", "")) > MAX_NAME:
        raise bad("name", f"a task name is at most {MAX_NAME} characters (found {len(settings['name'])}): it names "
                          "folders and files")
    if "version" in settings and settings["version"] and not _NAME.match(settings["version"]):
        raise bad("version", f"{_shown(settings['version'])}: a version is letters, digits, '.', '_', '+', '-'")
    if settings.get("title", "prepend") not in TITLE_MODES:
        raise bad("title", f"{settings['title']!r} is not one of {', '.join(TITLE_MODES)}")
    depth = settings.get("depth", DEFAULT_DEPTH)
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise bad("depth", f"expected an integer >= 1, found {depth!r}")
    if "measures" in settings:
        measures = settings["measures"]
        if not isinstance(measures, list) or not measures:
            raise bad("measures", "expected a non-empty list of measures")
        for item in measures:
            ok = isinstance(item, str) or (isinstance(item, dict) and set(item) == {"label", "ir_measure"}
                                           and all(isinstance(v, str) for v in item.values()))
            if not ok:
                raise bad("measures", f"{_shown(item)}: a measure is an ir-measures name or {{label, ir_measure}}")
            for text in ([item] if isinstance(item, str) else item.values()):
                if not text.strip() or text != text.strip() or not _one_line(text):
                    raise bad("measures", f"{_shown(item)}: a measure's label and name are non-empty, one line, "
                                          "without leading or trailing spaces")
    if "relevance" in settings:
        relevance = settings["relevance"]
        if not isinstance(relevance, dict) or not relevance or not all(
                _INTEGER.fullmatch(k) and isinstance(v, str) for k, v in relevance.items()):
            raise bad("relevance", "expected {grade: meaning}, e.g. {\"1\": \"relevant\"}")
        seen: dict[int, str] = {}
        for grade in relevance:
            check_grade(grade, path, None, "relevance")  # a grade fits in 64 bits
            if int(grade) in seen:
                raise bad("relevance", f"grades {seen[int(grade)]!r} and {grade!r} are the same grade {int(grade)}")
            seen[int(grade)] = grade
    if "protocols" in settings:
        protocols = settings["protocols"]
        if isinstance(protocols, list):
            names = [name for name in protocols if isinstance(name, str)]
            if len(names) != len(protocols) or len(set(names)) != len(names) or not names:
                raise bad("protocols", "expected a non-empty list of split names without repeats")
            protocols = {name: {"splits": [name]} for name in names}
        if not isinstance(protocols, dict) or not protocols:
            raise bad("protocols", "expected a list of split names or {name: {splits: [...]}}")
        for name, spec in protocols.items():
            if not _NAME.match(name) or len(name) > MAX_NAME:
                raise bad("protocols", f"protocol name {_shown(name)}: letters, digits, '.', '_', '+', '-' "
                                       f"(at most {MAX_NAME})")
            if not isinstance(spec, dict) or not set(spec) <= {"splits", "description"} or \
                    not isinstance(spec.get("splits"), list) or not spec["splits"] or \
                    not isinstance(spec.get("description", ""), str):
                raise bad("protocols", f"protocol {name!r}: expected {{splits: [...], description}}")
            splits = spec["splits"]
            for split in splits:
                if not isinstance(split, str):
                    raise bad("protocols", f"protocol {name!r}: split {_shown(split)} is not a split name (a string)")
                if split not in qrels:
                    raise bad("protocols", f"protocol {name!r} names split {split!r}, which has no qrels/{split}.tsv "
                                           f"(found: {', '.join(qrels)})")
            repeated = sorted({split for split in splits if splits.count(split) > 1})
            if repeated:
                raise bad("protocols", f"protocol {name!r} names split {repeated[0]!r} twice (its mean would count "
                                       "it twice)")
            if not _one_line(spec.get("description", "")):
                raise bad("protocols", f"protocol {name!r}: the description is one line of text")
        settings["protocols"] = protocols
    return settings


def _one_line(text: str) -> bool:
    """No line break nor other control character (text shown on one line, in tables)."""
    return not any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def task_info(found: BeirFolder) -> TaskInfo:
    """The task's declaration: statbench.json where it says something, BEIR's defaults elsewhere."""
    settings = found.settings
    name = settings.get("name") or default_name(found.folder)
    measures = tuple(Measure(m, m) if isinstance(m, str) else Measure(m["label"], m["ir_measure"])
                     for m in settings.get("measures", ())) or DEFAULT_MEASURES
    labels = [m.label for m in measures]
    primary = settings.get("primary_measure") or (DEFAULT_PRIMARY if DEFAULT_PRIMARY in labels else labels[0])
    if "protocols" in settings:
        protocols = tuple(Protocol(name=n, splits=tuple(spec["splits"]), description=spec.get("description", ""))
                          for n, spec in settings["protocols"].items())
    else:
        protocols = tuple(Protocol(name=split, splits=(split,), description=f"the queries judged in qrels/{split}.tsv")
                          for split in found.qrels)
    names = [p.name for p in protocols]
    default = settings.get("default_protocol") or next((n for n in ("test", "dev") if n in names), names[0])
    relevance = {int(k): v for k, v in settings["relevance"].items()} if "relevance" in settings else {1: "relevant"}
    return TaskInfo(
        name=name,
        language=settings.get("language", "en"),
        measures=measures,
        primary_measure=primary,
        description=settings.get("description") or f"BEIR-format folder {found.folder.name}",
        version=settings_version(settings),
        relevance=relevance,
        protocols=protocols,
        default_protocol=default,
        depth=settings.get("depth", DEFAULT_DEPTH),
        evaluation=(f"BEIR layout: each qrels/<split>.tsv is a protocol; training queries from train.tsv, dev "
                    f"queries from dev.tsv; title {found.title_mode}"),
    )


def settings_version(settings: Mapping) -> str:
    """The task version: the loader's, then each setting that changes the figures without
    being recorded as such in results (what models read: the title mode and the language;
    the depth of a run), when not the default (a language by its primary subtag, as the
    analyzers read it), then the folder's own ``version``. Runs of
    one folder under other settings are thus never compared as if alike."""
    parts = [f"beir-{LOADER_VERSION}"]
    if settings.get("title", "prepend") != "prepend":
        parts.append(f"title={settings['title']}")
    language = settings.get("language", "en").split("-")[0].lower()  # en-GB is analysed as en
    if language != "en":
        parts.append(f"language={language}")
    if settings.get("depth", DEFAULT_DEPTH) != DEFAULT_DEPTH:
        parts.append(f"depth={settings['depth']}")
    if settings.get("version"):
        parts.append(settings["version"])
    return "+".join(parts)


def default_name(folder: Path) -> str:
    """``beir-<folder name>``, characters a task name cannot hold replaced by '-'; a long
    name is cut and told apart by a hash of the whole."""
    whole = folder.resolve().name
    base = re.sub(r"[^A-Za-z0-9._+-]+", "-", whole).strip("-._+") or "folder"
    if len(base) > MAX_NAME - 20:
        base = base[:MAX_NAME - 31].rstrip("-._+") + "-" + text_sha256(whole)[:10]
    return f"beir-{base}"


class BeirTask(Task):
    """A task read from a folder in BEIR's layout; :func:`task_class` builds one per folder."""

    found: ClassVar[BeirFolder]

    def data_folder(self, data_dir: Path | None) -> Path:
        return self.found.folder

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        if data_dir is not None and Path(data_dir).expanduser().resolve() != self.found.folder.resolve():
            raise StatbenchError(f"--data-dir {data_dir} is not the folder named by --task beir:{self.found.folder}: "
                                 "the folder is the task's data; drop --data-dir")
        found = self.found
        return load_beir(found.corpus, found.queries, found.qrels, title=found.title_mode, log=log)


def task_class(found: BeirFolder) -> type[BeirTask]:
    info = task_info(found)
    # a folder name that had to change to make the task's name ('law qa', 'law/qa' and
    # 'law-qa' all give beir-law-qa) keeps its own output folder
    folder_name = Path(found.folder).resolve().name
    identity = None if found.settings.get("name") or info.name == f"beir-{folder_name}" else folder_name
    return type(f"BeirTask[{info.name}]", (BeirTask,),
                {"info": info, "found": found, "folder_identity": identity, "__module__": __name__})


_warned: set[Path] = set()


def resolve(path_text: str) -> type[BeirTask]:
    """The task class of ``--task beir:PATH``: this module registers it as the resolver of
    the ``beir`` prefix (:func:`register_task_resolvers`), so the registry knows nothing of BEIR."""
    if not path_text.strip():
        raise StatbenchError(f"--task beir:PATH needs the path of a folder in {LAYOUT} (e.g. beir:data/scifact)")
    found = find_folder(path_text)
    cls = task_class(found)
    try:
        check_task_class(cls)
    except PluginError as exc:
        where = found.folder / SETTINGS_FILE if found.settings else found.folder
        raise DataFormatError(where, str(exc)) from None
    folder = found.folder.resolve()
    if "language" not in found.settings and folder not in _warned:
        _warned.add(folder)
        _log.warning("%s: no language declared (%s); assuming English ('en')", found.folder, SETTINGS_FILE)
    return cls


@hookimpl
def register_task_resolvers(register):
    register("beir", resolve)


# --- reading the files ---------------------------------------------------------------


def read_corpus(path: Path, title: str = "prepend") -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    first: dict[str, int] = {}
    for lineno, obj in read_jsonl(path, required=("_id", "text")):
        doc_id = record_id(path, obj["_id"], lineno, "_id", "document")
        if doc_id in first:
            raise DataFormatError(path, f"duplicate document id {doc_id!r} (first on line {first[doc_id]})", lineno, "_id")
        first[doc_id] = lineno
        text = text_value(path, obj["text"], lineno, "text")
        heading = text_value(path, obj["title"], lineno, "title") if "title" in obj else ""
        if title == "separate":
            corpus[doc_id] = Document(id=doc_id, text=text, title=heading)
        elif heading:
            corpus[doc_id] = Document(id=doc_id, text=f"{heading} {text}", fields={"title": heading})
        else:
            corpus[doc_id] = Document(id=doc_id, text=text)
    if not corpus:
        raise DataFormatError(path, "no documents (the file is empty or holds only blank lines)")
    return corpus


def read_queries(path: Path, dropped: list[str]) -> tuple[dict[str, Query], set[str]]:
    """The queries, and the ids of those dropped for having no text (said in ``dropped``,
    as every loader does: :func:`statbench.data.dataio.query_text`)."""
    queries: dict[str, Query] = {}
    first: dict[str, int] = {}
    textless: set[str] = set()
    for lineno, obj in read_jsonl(path, required=("_id", "text")):
        qid = record_id(path, obj["_id"], lineno, "_id", "query")
        if qid in first:
            raise DataFormatError(path, f"duplicate query id {qid!r} (first on line {first[qid]})", lineno, "_id")
        first[qid] = lineno
        text = query_text(path, obj["text"], lineno, "text", qid, dropped)
        if text is None:
            textless.add(qid)
        else:
            queries[qid] = Query(id=qid, text=text)
    if not first:
        raise DataFormatError(path, "no queries (the file is empty or holds only blank lines)")
    return queries, textless


def read_beir_qrels(path: Path, dropped: list[str]) -> dict[str, dict[str, int]]:
    """One qrels file: the header, then ``query-id<TAB>corpus-id<TAB>score`` lines (integer
    scores). A pair judged twice with different scores is an error; an exact repeat is
    counted once (said in ``dropped``)."""
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    repeats: list[str] = []
    header_seen = False
    for lineno, line in read_lines(path):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        parts = line.split("\t")
        if not header_seen:
            header_seen = True
            if tuple(p.strip() for p in parts) != QRELS_HEADER:
                raise DataFormatError(path, f"expected the header {'<TAB>'.join(QRELS_HEADER)} (BEIR qrels), "
                                      f"found {line[:80]!r}", lineno)
            continue
        if len(parts) != 3:
            raise DataFormatError(path, f"expected 3 tab-separated columns (query-id, corpus-id, score), found "
                                  f"{len(parts)}", lineno)
        qid = record_id(path, parts[0], lineno, "query-id", "query")
        doc = record_id(path, parts[1], lineno, "corpus-id", "document")
        grade = check_grade(parts[2].strip(), path, lineno, "score")
        judged = qrels.setdefault(qid, {})
        if doc in judged:
            if judged[doc] != grade:
                raise DataFormatError(path, f"query {qid!r}, document {doc!r} is judged twice with different scores: "
                                      f"{judged[doc]} on line {first[(qid, doc)]}, {grade} on line {lineno}",
                                      lineno, "score")
            repeats.append(f"line {lineno} = line {first[(qid, doc)]}")
            continue
        judged[doc] = grade
        first[(qid, doc)] = lineno
    if not qrels:
        raise DataFormatError(path, "no judgements (the file is empty or holds only its header)")
    if repeats:
        dropped.append(f"{path.name}: {len(repeats)} line(s) repeat an earlier judgement exactly and were counted "
                       f"once (e.g. {', '.join(repeats[:3])})")
    return qrels


def load_beir(corpus_path: Path, queries_path: Path, qrels_paths: Mapping[str, Path], *, title: str = "prepend",
              log: logging.Logger | None = None) -> TaskData:
    """A BEIR-format dataset as :class:`TaskData`: one split per qrels file (its judged
    queries), ``train``/``dev`` queries as the training/dev queries of the other splits.
    The scaffolded task plugins (``statbench task new``) load through this function too."""
    log = log or _log
    if title not in TITLE_MODES:
        raise StatbenchError(f"title mode {title!r} is not one of {', '.join(TITLE_MODES)}")
    dropped: list[str] = []
    corpus = read_corpus(Path(corpus_path), title)
    all_queries, textless = read_queries(Path(queries_path), dropped)
    per_split: dict[str, dict[str, dict[str, int]]] = {}
    judged_in: dict[str, str] = {}
    for split, path in qrels_paths.items():
        path = Path(path)
        qrels = read_beir_qrels(path, dropped)
        for qid in textless.intersection(qrels):  # dropped (and said) when queries.jsonl was read
            del qrels[qid]
        unknown = [q for q in qrels if q not in all_queries]
        if unknown:
            raise DataFormatError(path, f"{len(unknown)} judged query id(s) are not in {Path(queries_path).name} "
                                  f"(e.g. {', '.join(map(repr, unknown[:3]))})", field="query-id")
        for qid, docs in qrels.items():
            other = judged_in.get(qid)
            if other is not None and per_split[other][qid] != docs:
                raise DataFormatError(path, f"query {qid!r} is judged in both {other}.tsv and {path.name}, "
                                      "differently: a query has one set of judgements", field="query-id")
            judged_in.setdefault(qid, split)
        per_split[split] = qrels
    merged: dict[str, dict[str, int]] = {}
    queries: dict[str, Query] = {}
    for split, qrels in per_split.items():
        split_queries = {q: all_queries[q] for q in qrels}
        check_qrels_against_corpus(qrels, corpus, split_queries, Path(qrels_paths[split]), dropped)
        merged.update(qrels)
        queries.update(split_queries)
    unused = len(all_queries) - len(judged_in)
    if unused:
        log.info("%s: %d query(ies) judged in no qrels file are not used", Path(queries_path).name, unused)
    splits = []
    for split, qrels in per_split.items():
        test = tuple(qrels)
        train = per_split.get("train", {}) if split != "train" else {}
        dev = per_split.get("dev", {}) if split not in ("train", "dev") else {}
        for name, pool in (("train", train), ("dev", dev)):
            shared = [q for q in pool if q in qrels]
            if shared:
                dropped.append(f"{name}.tsv: {len(shared)} query(ies) also judged in {split}.tsv are left out of the "
                               f"{name} queries of split {split} (e.g. {', '.join(shared[:3])})")
        splits.append(Split(name=split, test=test, train=tuple(q for q in train if q not in qrels),
                            dev=tuple(q for q in dev if q not in qrels)))
    files = [Path(corpus_path), Path(queries_path), *(Path(p) for p in qrels_paths.values())]
    return TaskData(corpus=corpus, queries=queries, qrels=merged, splits=splits, files=files,
                    checksum=files_sha256(files), dropped=dropped)
