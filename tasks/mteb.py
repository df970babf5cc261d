"""MTEB's retrieval tasks as statbench tasks: ``--task mteb:NAME`` (``mteb:NAME/SUBSET`` for a
task with several subsets, each its own corpus).

The task is MTEB's own: found by ``mteb.get_task(NAME)``, loaded by its ``load_data`` (the
dataset, revision and transformations MTEB declares), scored by MTEB's main score first
(mapped to its ir-measures definition, :mod:`statbench.loading.mteb_names`) and the
other figures MTEB reports. Each evaluation split is a protocol (``test`` the default).
Statute retrieval first: :data:`LEGAL_TASKS` lists MTEB(Law)'s retrieval tasks and the other
legal ones MTEB holds.

What statbench does that MTEB does not: a document's text is MTEB's (``title + " " + text``,
stripped, as MTEB's dataloader joins them; the title is kept in ``Document.fields["title"]``);
judgements of documents missing from the corpus and queries left without a relevant
document are dropped and listed in ``task.dropped`` (MTEB would score them as they are);
an export to MTEB's results format refuses such a result (:mod:`statbench.leaderboard.export.mteb`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

from statbench.api import (
    DataFormatError,
    Document,
    Protocol,
    Query,
    Split,
    StatbenchError,
    Task,
    TaskData,
    TaskInfo,
    check_grade,
    check_qrels_against_corpus,
    hookimpl,
    json_sha256,
    query_text,
    record_id,
    text_value,
)
from statbench.loading.mteb_names import TASK_MEASURES, language_of, measure_from_mteb
from statbench.registry.checks import PluginError, check_task_class
from statbench.storage.hub import FetchStalled, dataset_fetch_hint, fetch_within_bound, offline_if_unreachable

PREFIX = "mteb"
#: Bump whenever this loader builds anything differently from the same MTEB data.
LOADER_VERSION = "1"
#: MTEB(Law, v1)'s retrieval tasks, statute ones first, then the other legal retrieval tasks MTEB holds.
LEGAL_TASKS = ("AILAStatutes", "LegalSummarization", "LegalBenchCorporateLobbying", "GerDaLIRSmall", "LeCaRDv2",
               "AILACasedocs", "LegalBenchConsumerContractsQA", "LegalQuAD",
               "BarExamQA", "LawIRKo", "JuriFindITRetrieval", "LegalQANLRetrieval", "BSARDRetrieval.v2")


def mteb_task(name: str):
    """``mteb.get_task(name)``, a retrieval task, or one line saying why not."""
    import mteb
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    try:
        task = mteb.get_task(name)
    except KeyError as exc:
        message = str(exc.args[0]) if exc.args else str(exc)
        raise StatbenchError(f"--task mteb:{name}: no such MTEB task ({message.removeprefix('KeyError: ')}); "
                             f"MTEB's legal retrieval tasks: {', '.join(LEGAL_TASKS)}") from None
    if not isinstance(task, AbsTaskRetrieval):
        raise StatbenchError(f"--task mteb:{name}: MTEB task {name!r} is a {task.metadata.type} task; statbench runs "
                             "retrieval tasks")
    return task


def _subset(task, name: str, subset: str | None) -> str:
    subsets = list(task.hf_subsets)
    if subset is None:
        if len(subsets) != 1:
            raise StatbenchError(f"--task mteb:{name}: the task has {len(subsets)} subsets, each its own corpus; "
                                 f"name one: mteb:{name}/SUBSET (subsets: {', '.join(subsets[:10])})")
        return subsets[0]
    if subset not in subsets:
        raise StatbenchError(f"--task mteb:{name}/{subset}: no subset {subset!r} (subsets: {', '.join(subsets[:10])})")
    return subset


def task_info(task, subset: str) -> TaskInfo:
    """The statbench declaration of an MTEB task: its main score first and primary."""
    meta = task.metadata
    main = measure_from_mteb(meta.main_score)
    if main is None:
        raise StatbenchError(f"--task mteb:{meta.name}: its main score {meta.main_score!r} is not a retrieval measure "
                             "statbench knows")
    measures = [main] + [m for m in map(measure_from_mteb, TASK_MEASURES) if m is not None and m != main]
    langs = meta.hf_subsets_to_langscripts.get(subset) or list(meta.eval_langs)
    splits = list(task.eval_splits)
    revision = meta.dataset.get("revision") or "unversioned"
    suffix = "" if subset == "default" else f"-{subset}"
    description = " ".join(meta.description.split())
    return TaskInfo(
        name=f"mteb-{meta.name}{suffix}",
        language=language_of(langs[0]),
        measures=tuple(measures),
        primary_measure=main.label,
        description=f"MTEB {meta.name}: {description[:150]}{'...' if len(description) > 150 else ''}",
        version=f"mteb{LOADER_VERSION}-{revision}",
        relevance={1: "relevant"},
        protocols=tuple(Protocol(name=s, splits=(s,), description=f"MTEB's {s} split") for s in splits),
        default_protocol="test" if "test" in splits else splits[0],
        depth=max(task.k_values),
        evaluation=(f"MTEB task {meta.name} (dataset {meta.dataset.get('path')}@{revision}, subset {subset}), loaded "
                    f"by mteb's own loader; MTEB's main score {meta.main_score} is {main.ir_measure}"),
    )


class MtebTask(Task):
    """An MTEB retrieval task; :func:`task_class` builds one per ``NAME[/SUBSET]``."""

    mteb_name: ClassVar[str]
    mteb_subset: ClassVar[str]
    #: MTEB's dataset (path and revision): the data's identity
    mteb_dataset: ClassVar[dict]

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        if data_dir is not None:
            raise StatbenchError(f"--data-dir {data_dir}: task mteb:{self.mteb_name} is loaded by mteb from the Hugging "
                                 "Face hub (or its cache); drop --data-dir")
        return load_mteb(mteb_task(self.mteb_name), self.mteb_subset, log)


def task_class(task, subset: str) -> type[MtebTask]:
    info = task_info(task, subset)
    return type(f"MtebTask[{info.name}]", (MtebTask,),
                {"info": info, "mteb_name": task.metadata.name, "mteb_subset": subset,
                 "mteb_dataset": dict(task.metadata.dataset), "__module__": __name__})


def resolve(arg: str) -> type[MtebTask]:
    """The task class of ``--task mteb:NAME[/SUBSET]`` (registered as the ``mteb`` resolver)."""
    name, _, subset = arg.strip().partition("/")
    if not name:
        raise StatbenchError(f"--task mteb:NAME needs an MTEB task name (legal retrieval: {', '.join(LEGAL_TASKS)})")
    task = mteb_task(name)
    cls = task_class(task, _subset(task, name, subset or None))
    try:
        check_task_class(cls)
    except PluginError as exc:
        raise StatbenchError(f"--task mteb:{arg}: {exc}") from None
    return cls


@hookimpl
def register_task_resolvers(register):
    register(PREFIX, resolve)


# --- loading -------------------------------------------------------------------------------


def load_split_data(task, log: logging.Logger):
    """``task.dataset`` after MTEB's ``load_data``; offline, a miss says what to fetch."""
    meta = task.metadata
    if not task.data_loaded:
        with offline_if_unreachable() as offline:
            path, revision = meta.dataset.get("path"), meta.dataset.get("revision")
            try:
                if offline is None:  # the hub answers: one overall bound on the whole fetch
                    fetch_within_bound(task.load_data, f"mteb task {meta.name}'s dataset {path}")
                else:
                    task.load_data()
            except FetchStalled as stalled:
                raise StatbenchError(f"{stalled}: {dataset_fetch_hint(path, revision)}") from None
            except StatbenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - datasets and the hub raise many kinds
                why = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                where = f"offline ({offline})" if offline else "from the Hugging Face hub"
                raise StatbenchError(
                    f"mteb could not load task {meta.name}'s dataset {meta.dataset.get('path')} "
                    f"(revision {meta.dataset.get('revision')}) {where}: {why}; "
                    f"{dataset_fetch_hint(meta.dataset.get('path'), meta.dataset.get('revision'))}") from None
    if getattr(task, "dataset", None) is None and hasattr(task, "corpus"):
        task.convert_v1_dataset_format_to_v2(None)  # a task still in MTEB's v1 layout
    return task.dataset


def _rows(dataset) -> list[dict]:
    return dataset.to_list() if hasattr(dataset, "to_list") else list(dataset)


def _corpus(where: Path, rows: list[dict]) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    for i, row in enumerate(rows, 1):
        doc_id = record_id(where, row.get("id"), i, "id", "document")
        if doc_id in corpus:
            raise DataFormatError(where, f"duplicate document id {doc_id!r}", i, "id")
        body = text_value(where, row.get("text"), i, "text")
        title = row.get("title") or ""
        title = text_value(where, title, i, "title")
        text = f"{title} {body}".strip() if title else body.strip()  # as MTEB's dataloader joins them
        corpus[doc_id] = Document(id=doc_id, text=text, fields={"title": title} if title else {})
    return corpus


def _queries(where: Path, rows: list[dict], dropped: list[str]) -> dict[str, Query]:
    queries: dict[str, Query] = {}
    for i, row in enumerate(rows, 1):
        qid = record_id(where, row.get("id"), i, "id", "query")
        if qid in queries:
            raise DataFormatError(where, f"duplicate query id {qid!r}", i, "id")
        value = row.get("text")
        if isinstance(value, list):
            raise DataFormatError(where, "a conversation query (a list of turns): statbench runs text queries", i,
                                  "text")
        instruction = row.get("instruction")
        if isinstance(value, str) and isinstance(instruction, str):
            value = f"{value} {instruction}"  # as MTEB appends a query's instruction
        text = query_text(where, value, i, "text", qid, dropped, where=f"row {i}")
        if text is not None:
            queries[qid] = Query(id=qid, text=text)
    return queries


def _grade(value, where: Path) -> int:
    """A judgement's score: an integer (MTEB's datasets hold ints, some as ``1.0``)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataFormatError(where, f"relevance {value!r} is not an integer", None, "score")
    return check_grade(str(value), where, None, "score")


def _judgements(where: Path, relevant: dict, queries: dict) -> tuple[dict[str, dict[str, int]], list[str]]:
    """A split's ``relevant_docs`` as qrels of its ``queries``, and the ids of judged queries
    that are not among them. Two keys that are one id once read (``1`` and ``"1"``, ``"d1"``
    and ``" d1"``) are refused: the second would silently replace the first's judgements."""
    qrels: dict[str, dict[str, int]] = {}
    seen: dict[str, object] = {}
    unused: list[str] = []
    for key, docs in relevant.items():
        qid = record_id(where, key, None, "query-id", "query")
        if qid in seen:
            raise DataFormatError(where, f"query {qid!r} is judged twice (keys {seen[qid]!r} and {key!r})", None,
                                  "query-id")
        seen[qid] = key
        if not isinstance(docs, dict):
            raise DataFormatError(where, f"query {qid!r}: expected {{corpus-id: score}}, found {type(docs).__name__}",
                                  None, "query-id")
        if qid not in queries:
            unused.append(qid)
            continue
        judged: dict[str, int] = {}
        keys: dict[str, object] = {}
        for doc_key, grade in docs.items():
            doc = record_id(where, doc_key, None, "corpus-id", "document")
            if doc in judged:
                raise DataFormatError(where, f"query {qid!r} judges document {doc!r} twice (keys {keys[doc]!r} and "
                                      f"{doc_key!r})", None, "corpus-id")
            keys[doc] = doc_key
            judged[doc] = _grade(grade, where)
        qrels[qid] = judged
    return qrels, unused


def load_mteb(task, subset: str, log: logging.Logger) -> TaskData:
    """One subset of an MTEB retrieval task as :class:`TaskData`: a split per evaluation split."""
    meta = task.metadata
    dataset = load_split_data(task, log)
    if subset not in dataset:
        raise StatbenchError(f"mteb task {meta.name}: mteb loaded no subset {subset!r} (found: {', '.join(dataset)})")
    dropped: list[str] = []
    corpus: dict[str, Document] | None = None
    queries: dict[str, Query] = {}
    qrels: dict[str, dict[str, int]] = {}
    splits: list[Split] = []
    for split in task.eval_splits:
        data = dataset[subset].get(split)
        if data is None:
            raise StatbenchError(f"mteb task {meta.name}: mteb loaded no split {split!r} of subset {subset!r}")
        where = Path(f"mteb:{meta.name}/{subset}/{split}")
        split_corpus = _corpus(where / "corpus", _rows(data["corpus"]))
        if corpus is None:
            corpus = split_corpus
        elif split_corpus != corpus:
            raise StatbenchError(f"mteb task {meta.name}: split {split!r} has another corpus than {splits[0].name!r}; "
                                 "statbench holds one corpus per task")
        split_queries = _queries(where / "queries", _rows(data["queries"]), dropped)
        split_qrels, unused = _judgements(where / "relevant_docs", data["relevant_docs"] or {}, split_queries)
        if unused:  # as MTEB: judged queries the split does not hold are not scored (said, not dropped: no
            # difference from MTEB's own figures)
            log.warning("mteb:%s %s: judgements of %d query id(s) not among its queries with text are not used "
                        "(e.g. %s)", meta.name, where.name, len(unused), ", ".join(unused[:3]))
        unjudged = [q for q in split_queries if q not in split_qrels]
        if unjudged:
            dropped.append(f"{where.name}: {len(unjudged)} query(ies) without judgements (e.g. {', '.join(unjudged[:3])})")
        for qid in unjudged:
            del split_queries[qid]
        check_qrels_against_corpus(split_qrels, corpus, split_queries, where, dropped)
        for qid, docs in split_qrels.items():
            if qid in qrels and qrels[qid] != docs:
                raise StatbenchError(f"mteb task {meta.name}: query {qid!r} is judged differently in two splits")
            qrels[qid] = docs
        queries.update(split_queries)
        splits.append(Split(name=split, test=tuple(split_queries)))
    checksum = json_sha256({"mteb_task": meta.name, "subset": subset, "dataset": dict(meta.dataset),
                            "loader": LOADER_VERSION,
                            "corpus": [[d.id, d.text] for d in corpus.values()],
                            "queries": [[q.id, q.text] for q in queries.values()],
                            "qrels": qrels, "splits": [[s.name, list(s.test)] for s in splits]})
    log.info("mteb:%s: %d documents, %d queries (%s)", meta.name, len(corpus), len(queries),
             ", ".join(f"{s.name}: {len(s.test)}" for s in splits))
    return TaskData(corpus=corpus, queries=queries, qrels=qrels, splits=splits, files=[], checksum=checksum,
                    dropped=dropped)
