"""STARD loader: upstream ``queries.json`` + ``corpus.jsonl`` (or the rebuilt corpus).

Documents are keyed by article *name* (e.g. 建筑法第四十八条): upstream ``match_id``
lists are sorted while ``match_name`` lists are not, so ids cannot be trusted to align."""

from __future__ import annotations

import json
import logging
from importlib import resources
from pathlib import Path

from statbench import hookimpl
from statbench.api import Document, Query, Split, TaskData
from statbench.checksum import files_sha256
from statbench.dataio import read_json, read_jsonl, read_lines
from statbench.errors import DataFormatError
from statbench.splits import kfold_assignment, kfold_splits
from statbench.taskdef import DefinedTask
from statbench.validation import check_qrels_against_corpus


OFFICIAL_FILES = ("train.query.txt", "dev.query.txt")


class Stard(DefinedTask):
    definition_file = "stard.json"

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self.locate_files(data_dir, log)
        dropped: list[str] = []
        corpus = self._read_corpus(files["corpus.jsonl"], dropped)
        queries, qrels = self._read_queries(files["queries.json"], dropped)
        check_qrels_against_corpus(qrels, corpus, queries, files["queries.json"], dropped)
        stopwords = None
        if "cn_stopwords.txt" in files:
            stopwords = frozenset(
                w.strip() for w in files["cn_stopwords.txt"].read_text("utf-8").splitlines() if w.strip()
            )
        official = self._official_split(files, queries, dropped)
        for item in dropped:
            log.warning("dropped: %s", item)
        # the official split files define a protocol, not data: they stay out of the checksum
        # (split membership is part of every run's cache key anyway)
        data_files = [path for name, path in files.items() if name not in OFFICIAL_FILES]
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
        """The upstream train/dev split as split ``dev`` (tested on dev, trained on train)."""
        spec = self.definition["splits"]["official"]
        if spec["train_file"] not in files or spec["dev_file"] not in files:
            return []
        train = _read_query_ids(files[spec["train_file"]], queries, dropped)
        dev = _read_query_ids(files[spec["dev_file"]], queries, dropped)
        overlap = sorted(set(train) & set(dev))
        if overlap:
            raise DataFormatError(files[spec["dev_file"]], f"{len(overlap)} query id(s) are also in "
                                  f"{spec['train_file']} (e.g. {', '.join(overlap[:3])})", field="id")
        return [Split(name=spec["split"], test=tuple(dev), train=tuple(train))]

    @staticmethod
    def _read_corpus(path: Path, dropped: list[str]) -> dict[str, Document]:
        corpus: dict[str, Document] = {}
        for lineno, obj in read_jsonl(path, required=("name", "content")):
            name = _article_key(obj["name"])
            if not name:
                raise DataFormatError(path, "empty article name", lineno, "name")
            if name in corpus:
                dropped.append(f"{path.name} line {lineno}: duplicate article name {name!r} (first kept)")
                continue
            corpus[name] = Document(id=name, text=str(obj["content"]), title=name)
        return corpus

    @staticmethod
    def _read_queries(path: Path, dropped: list[str]):
        data = read_json(path)
        if not isinstance(data, list):
            raise DataFormatError(path, f"expected a JSON list of queries, found {type(data).__name__}")
        queries: dict[str, Query] = {}
        qrels: dict[str, dict[str, int]] = {}
        for index, item in enumerate(data):
            where = f"item {index}"
            for field in ("query_id", "问题", "match_name"):
                if not isinstance(item, dict) or field not in item:
                    raise DataFormatError(path, f"{where}: missing field", field=field)
            qid, text = str(item["query_id"]), str(item["问题"]).strip()
            if qid in queries:
                raise DataFormatError(path, f"{where}: duplicate query_id {qid!r}", field="query_id")
            if not text:
                dropped.append(f"{path.name} {where}: query {qid} has an empty question")
                continue
            names = item["match_name"] if isinstance(item["match_name"], list) else [item["match_name"]]
            queries[qid] = Query(id=qid, text=text)
            qrels[qid] = {_article_key(n): 1 for n in names if _article_key(n)}
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
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        qid = line.split("\t", 1)[0].strip()
        if not qid or "\t" not in line:
            raise DataFormatError(path, "expected 'id<TAB>question'", lineno, "id")
        (ids if qid in queries else unknown).append(qid)
    if unknown:
        dropped.append(f"{path.name}: {len(unknown)} query id(s) not among the loaded queries left out of the "
                       f"official split (e.g. {', '.join(unknown[:3])})")
    return ids


def _article_key(name) -> str:
    """Article names serve as doc ids; TREC ids cannot hold whitespace, which is
    insignificant in Chinese names (51 rebuilt-corpus names contain double spaces)."""
    return "".join(str(name).split())


@hookimpl
def register_tasks(register):
    register(Stard)
