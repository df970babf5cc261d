"""What distillation must never train on: the task's evaluation material.

ukstat-2025 (§4.1.5) reserves the evaluation instruments "solely for evaluation": they are
excluded from query generation, candidate retrieval, teacher scoring and student training.
:func:`evaluation_holdout` collects, for a loaded task:

- every passage judged for an evaluation query (any task: the judged passages themselves);
- for ukstat, the evaluation *instruments*: the anchoring instrument of each evaluation
  query (``query_instrument.tsv`` of the substitute layout, ``doc_id`` of the real
  evaluation set) and, with the real corpus, every passage of those instruments
  (``metadata.doc_id``). The task loader never reads these (a model that saw them would be
  told where the answer is); only this exclusion check does;
- the evaluation queries' texts.

:func:`read_training_queries` reads a training-query file and refuses (one line, exit 2)
any query anchored in that held-out material. Every training query must name its anchor
(``instrument`` and/or ``passages``), so the exclusion holds by construction rather than
by luck."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from statbench.api import (
    DataFormatError,
    Document,
    Query,
    StatbenchError,
    TaskData,
    id_value,
    read_json_list,
    read_jsonl,
    read_nonblank_lines,
    text_value,
)

#: Where ukstat's query -> instrument table is looked up, relative to the task's data folder.
QUERY_INSTRUMENT_FILES = ("query_instrument.tsv", "substitute/query_instrument.tsv")
REAL_EVAL_FILES = ("eval_statutory_100queries_approved.jsonl", "data/eval_statutory_100queries_approved.jsonl")
REAL_CORPUS_FILES = ("corpus_uklegislation.json", "data/corpus_uklegislation.json")


class ContaminationError(StatbenchError):
    """A training query is anchored in evaluation material."""


def normalise_query(text: str) -> str:
    """Case- and whitespace-insensitive form used to compare query texts."""
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass(frozen=True)
class Holdout:
    """The evaluation material of one task (see the module docstring)."""

    passages: frozenset[str]
    instruments: frozenset[str] = frozenset()
    query_texts: frozenset[str] = frozenset()
    #: passage id -> instrument, where the corpus says (the real ukstat corpus)
    passage_instrument: Mapping[str, str] = field(default_factory=dict)
    #: whether the evaluation instruments are known (else an ``instrument`` anchor cannot be checked)
    instruments_known: bool = False
    #: where the instruments came from (for the report)
    source: str = ""

    def describe(self) -> dict:
        return {"passages": len(self.passages), "instruments": len(self.instruments),
                "queries": len(self.query_texts), "instruments_from": self.source or None}


def evaluation_holdout(task_name: str, data: TaskData, data_folder: Path | None) -> Holdout:
    passages = {doc for judged in data.qrels.values() for doc in judged}
    texts = frozenset(normalise_query(q.text) for q in data.queries.values())
    if task_name != "ukstat" or data_folder is None:
        return Holdout(passages=frozenset(passages), query_texts=texts)
    instruments, source = _ukstat_instruments(Path(data_folder), set(data.queries))
    by_passage: dict[str, str] = {}
    corpus_file = _first(Path(data_folder), REAL_CORPUS_FILES)
    if corpus_file is not None and instruments:
        by_passage = _real_passage_instruments(corpus_file)
        passages |= {p for p, inst in by_passage.items() if inst in instruments}
    return Holdout(passages=frozenset(passages), instruments=frozenset(instruments), query_texts=texts,
                   passage_instrument=by_passage, instruments_known=bool(instruments), source=source)


def _first(root: Path, names) -> Path | None:
    return next((root / n for n in names if (root / n).is_file()), None)


def _ukstat_instruments(root: Path, query_ids: set[str]) -> tuple[set[str], str]:
    """The evaluation instruments: from the real evaluation set when the real corpus is
    there (its ``doc_id``), else from the substitute's ``query_instrument.tsv``."""
    real = _first(root, REAL_EVAL_FILES)
    if real is not None and _first(root, REAL_CORPUS_FILES) is not None:
        found = set()
        for lineno, obj in read_jsonl(real, required=("qid", "doc_id")):
            found.add(id_value(real, obj["doc_id"], lineno, "doc_id").strip())
        return found, str(real)
    table = _first(root, QUERY_INSTRUMENT_FILES)
    if table is None:
        return set(), ""
    found = set()
    for lineno, line in read_nonblank_lines(table):
        parts = line.rstrip("\r\n").split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise DataFormatError(table, "expected two tab-separated columns: query id, instrument", lineno)
        found.add(parts[1].strip())
    return found, str(table)


def _real_passage_instruments(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for _, _, item in read_json_list(path, "passages"):
        meta = item.get("metadata") if isinstance(item, dict) else None
        if isinstance(meta, dict) and "chunk_id" in meta and "doc_id" in meta:
            out[str(meta["chunk_id"]).strip()] = str(meta["doc_id"]).strip()
    return out


@dataclass(frozen=True)
class TrainingQuery:
    id: str
    text: str
    instrument: str = ""
    #: passages the query was written from (its anchor in the corpus)
    passages: tuple[str, ...] = ()

    def as_query(self) -> Query:
        return Query(id=self.id, text=self.text)


def training_corpus(corpus: Mapping[str, Document], holdout: Holdout) -> dict[str, Document]:
    """The corpus distillation may see: every passage but the held-out ones."""
    return {doc_id: doc for doc_id, doc in corpus.items() if doc_id not in holdout.passages}


def check_anchor(query: TrainingQuery, holdout: Holdout, corpus: Mapping[str, Document], where: str) -> None:
    """Refuse a query anchored in evaluation material, or whose anchor cannot be checked."""
    if not query.instrument and not query.passages:
        raise ContaminationError(
            f"{where}: training query {query.id!r} names no anchor; give \"instrument\" and/or \"passages\" "
            "(the passages it was written from) so that evaluation instruments can be excluded")
    if query.instrument:
        if not holdout.instruments_known:
            raise ContaminationError(
                f"{where}: training query {query.id!r} is anchored by instrument, but the task's evaluation "
                "instruments are unknown here (ukstat: put query_instrument.tsv in the data folder); anchor it by "
                "\"passages\" instead")
        if query.instrument in holdout.instruments:
            raise ContaminationError(
                f"{where}: training query {query.id!r} is anchored in evaluation instrument {query.instrument!r}; "
                "evaluation instruments are excluded from distillation")
    for passage in query.passages:
        if passage not in corpus:
            raise ContaminationError(f"{where}: training query {query.id!r}: anchor passage {passage!r} is not in "
                                     "the task's corpus")
        instrument = holdout.passage_instrument.get(passage)
        if passage in holdout.passages or (instrument and instrument in holdout.instruments):
            raise ContaminationError(
                f"{where}: training query {query.id!r} is anchored in passage {passage!r} of an evaluation "
                "instrument; evaluation instruments are excluded from distillation")
    if normalise_query(query.text) in holdout.query_texts:
        raise ContaminationError(f"{where}: training query {query.id!r} repeats an evaluation query's text")


def read_training_queries(path: Path, holdout: Holdout, corpus: Mapping[str, Document]) -> list[TrainingQuery]:
    """A JSON-lines file ``{"qid", "query", "instrument"?, "passages"?: [ids]}``, every
    query checked with :func:`check_anchor`; duplicate ids are an error."""
    path = Path(path)
    out: list[TrainingQuery] = []
    seen: dict[str, int] = {}
    for lineno, obj in read_jsonl(path, required=("qid", "query")):
        qid = id_value(path, obj["qid"], lineno, "qid").strip()
        if not qid:
            raise DataFormatError(path, "empty query id", lineno, "qid")
        if qid in seen:
            raise DataFormatError(path, f"duplicate query id {qid!r} (first on line {seen[qid]})", lineno, "qid")
        seen[qid] = lineno
        text = text_value(path, obj["query"], lineno, "query").strip()
        if not text:
            raise DataFormatError(path, f"query {qid} is empty", lineno, "query")
        instrument = obj.get("instrument") or ""
        if instrument:
            instrument = id_value(path, instrument, lineno, "instrument").strip()
        passages = obj.get("passages") or []
        if not isinstance(passages, list):
            raise DataFormatError(path, "expected a list of passage ids", lineno, "passages")
        anchors = tuple(id_value(path, p, lineno, "passages").strip() for p in passages)
        query = TrainingQuery(id=qid, text=text, instrument=instrument, passages=anchors)
        check_anchor(query, holdout, corpus, f"{path}, line {lineno}")
        out.append(query)
    if not out:
        raise DataFormatError(path, "no training queries (the file is empty or holds only blank lines)")
    return out
