"""A row's claims beyond its figures, checked against the local data, the run and the
recorded command (``leaderboard build --verify``, ``leaderboard check``), and the words
that say what a verified badge covers (``Verification.checked`` / ``declared``: the
constants below, :func:`declared_claims`).

- **Data facts** (:func:`data_fact_problems`): the language, the protocol, the data
  files, the items dropped, the corpus size and checksum a row states are the local
  data's (the data checksum, the loader version and the pool's sha256 are compared before
  re-scoring; the splits' query counts by re-scoring). The corpus size and query counts
  decide whether published figures are ranked beside a row: on a verified row they are
  the data's.
- **The run** (:class:`RunFacts`, :func:`run_problems`, :func:`pool_problem`): every
  document it ranks is a document of the corpus, every query a query of the task, no
  query deeper than the task's run depth (a reranked one: than its rerank depth); a
  reranking of a frozen pool ranks, for each query, only that pool's candidates (its
  top rerank-depth).
- **The command** (:func:`command_problem`): the recorded ``statbench run`` command and
  the record agree both ways (:func:`~statbench.leaderboard.repo.submission.
  command_disagreement`, which ``submit`` and ``leaderboard check`` refuse by too): what
  the record holds beyond the command is what the model made with the command's
  parameters holds (:func:`recorded_params_problem`), the splits are the command's.
- **Efficiency and cost** contradictions are refused for every row
  (:mod:`statbench.scoring.efficiency_checks`); here, the queries they count are at most
  the test queries of the row's splits, and exactly those when every split was computed
  in that run. The seconds, memory and machine measured cannot be checked: they are
  *declared* (:func:`declared_claims`).

A run's facts are computed with its figures, when it is re-scored, and cached with them
(``FACTS_FILE`` in the verification entry), so a build whose rows are all cached still
parses no run."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from statbench.commands.cli import request_from_argv
from statbench.data.runfile import order_ranking
from statbench.errors import StatbenchError
from statbench.leaderboard.collect.identity import canonical, record_budget
from statbench.loading.splits import canonical_selection
from statbench.registry.plugins import get_registry
from statbench.scoring.efficiency_checks import implied_queries
from statbench.storage.keys import keyed_entry
from statbench.storage.paths import cache_root

#: the file holding a run's facts in a verification cache entry
FACTS_FILE = "run_facts.json"
#: the file holding a run's check against a pool in its cache entry
POOL_FILE = "pool_check.json"
#: bumped when what :class:`RunFacts` holds changes (part of the verification key)
FACTS_FORMAT = 1

# the words of a badge: what was checked, what is only declared
FIGURES, DATA_FACTS, RUN_IN_CORPUS, RUN_IN_POOL, COMMAND, EFFICIENCY_AGREES = (
    "figures", "data facts", "run within corpus", "run within pool", "command", "efficiency consistency")
EFFICIENCY, COST, HARDWARE, TIMINGS, MODEL_CARD, POOL, PLUGINS, FUSED_RUNS = (
    "efficiency", "cost", "hardware", "timings", "model card", "pool", "plugin versions", "fused runs")

@dataclass(frozen=True)
class RunFacts:
    """What a run file says of itself against a task's data: the queries it ranks, those
    the task lacks and the documents the corpus lacks (a count and the first, sorted), the
    most documents it ranks for one query."""

    queries: int
    unknown_queries: int
    unknown_query: str | None
    foreign_documents: int
    foreign_document: str | None
    deepest: int

    @classmethod
    def of(cls, rankings: Mapping, query_ids, corpus) -> RunFacts:
        known = set(query_ids)
        unknown = sorted(q for q in rankings if q not in known)
        documents = {doc for ranking in rankings.values() for doc, _ in ranking}
        foreign = sorted(d for d in documents if d not in corpus)
        return cls(queries=len(rankings), unknown_queries=len(unknown), unknown_query=unknown[0] if unknown else None,
                   foreign_documents=len(foreign), foreign_document=foreign[0] if foreign else None,
                   deepest=max((len(r) for r in rankings.values()), default=0))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> RunFacts:
        return cls(**obj)

    @classmethod
    def read(cls, text: str) -> RunFacts:
        return cls.from_json(json.loads(text))

# --- the data facts ------------------------------------------------------------------------


def data_fact_problems(results, loaded) -> list[str]:
    """How the task facts ``results`` state differ from the local data's (``loaded``: the
    :class:`~statbench.loading.load.LoadedTask`, summary or full load); one line each."""
    task, info, summary = results.task, loaded.info, loaded.summary
    name = task.name
    problems = []
    if task.language != info.language:
        problems.append(f"task.language: claimed {task.language!r}, task {name} here is {info.language!r}")
    if task.corpus_size is not None and task.corpus_size != summary.n_documents:
        problems.append(f"task.corpus_size: claimed {task.corpus_size:,} documents, the data hold "
                        f"{summary.n_documents:,}")
    corpus = (loaded.identity or {}).get("corpus")
    if task.corpus_checksum is not None and corpus is not None and task.corpus_checksum != corpus:
        problems.append(f"task.corpus_checksum: claimed {task.corpus_checksum[:12]}…, the corpus as loaded here is "
                        f"{corpus[:12]}…")
    if sorted(task.files) != sorted(summary.files):
        problems.append(f"task.files: claimed {', '.join(sorted(task.files)) or 'none'}, the data files are "
                        f"{', '.join(sorted(summary.files)) or 'none'}")
    if task.dropped is not None and sorted(task.dropped) != sorted(loaded.dropped):
        problems.append(f"task.dropped: claimed {len(task.dropped)} item(s) dropped, the loader drops "
                        f"{len(loaded.dropped)} from these data")
    names = {p.name for p in info.protocols}
    # results written before protocols existed recorded a description here: only a name is a claim
    if task.protocol is not None and (task.protocol in names or task.protocol == ""):
        ran = info.protocol_of(s.name for s in results.splits)
        if task.protocol != ran:
            problems.append(f"task.protocol: claimed {task.protocol!r}, but its splits are "
                            f"{'protocol ' + repr(ran) if ran else 'no protocol'} of task {name}")
    return problems

def test_queries(results, loaded) -> int | None:
    """The test queries of the row's splits in the local data (None: a split is not there)."""
    splits = {s.name: s for s in loaded.summary.all_splits()}
    if any(s.name not in splits for s in results.splits):
        return None
    return sum(len(splits[s.name].test) for s in results.splits)

def efficiency_data_problems(results, loaded) -> list[str]:
    """Queries the efficiency figures count that the row's splits do not hold."""

    efficiency = results.efficiency
    total = test_queries(results, loaded)
    if efficiency is None or total is None:
        return []
    # every split computed in the process that wrote the results: it measured every test query
    every = bool(results.cache) and set(results.cache) == {s.name for s in results.splits} \
        and set(results.cache.values()) == {"miss"}
    problems = []
    latency = efficiency.query_latency
    if latency is not None and (latency.queries > total or (every and latency.queries != total)):
        problems.append(f"efficiency/query_latency: {latency.queries:,} queries measured, but the run's splits hold "
                        f"{total:,} test queries{', every split computed in that run' if every else ''}")
    span = implied_queries(efficiency)
    if span is not None and (span[0] > total or (every and not span[0] <= total <= span[1])):
        problems.append(f"efficiency/throughput_qps: {efficiency.throughput_qps!r} q/s over "
                        f"{efficiency.search_seconds!r} s is {span[0]:,.2f}-{span[1]:,.2f} queries, but the run's "
                        f"splits hold {total:,} test queries{', every split computed in that run' if every else ''}")
    return problems

# --- the run ------------------------------------------------------------------------------------


def run_problems(facts: RunFacts, results, info, rerank_depth: int | None) -> list[str]:
    """How the run contradicts the data and the configuration it claims (``rerank_depth``:
    the command's, for a reranked row; None when unknown)."""
    name = results.task.name
    problems = []
    if facts.foreign_documents:
        problems.append(f"its run ranks {facts.foreign_documents:,} document id(s) that are not documents of the "
                        f"corpus of task {name} (e.g. {facts.foreign_document!r}): it cannot come from these data")
    if facts.unknown_queries:
        problems.append(f"its run ranks {facts.unknown_queries:,} query id(s) that are not queries of task {name} "
                        f"(e.g. {facts.unknown_query!r})")
    if facts.deepest > info.depth:
        problems.append(f"its run ranks up to {facts.deepest:,} documents for a query, deeper than the run depth "
                        f"{info.depth} of task {name} (statbench run writes at most that many)")
    elif results.reranker is not None and rerank_depth is not None and facts.deepest > rerank_depth:
        problems.append(f"its run ranks up to {facts.deepest:,} documents for a query, but the reranker was handed "
                        f"{rerank_depth} candidates per query (--rerank-depth)")
    return problems

def pool_problem(rankings: Mapping, pool: Mapping, pool_name: str, rerank_depth: int | None) -> str | None:
    """Why ``rankings`` (a run) cannot be a reranking of ``pool`` (or the pool itself):
    for some query it ranks a document that is not among that query's candidates (the
    pool's top ``rerank_depth`` when reranked, by the harness's order), or ranks a query the
    pool has no candidates for. None when every ranking lies within."""

    outside, first = 0, None
    for qid in sorted(rankings):
        candidates = pool.get(qid, ())
        allowed = {doc for doc, _ in (order_ranking(candidates, rerank_depth) if rerank_depth else candidates)}
        extra = sorted(doc for doc, _ in rankings[qid] if doc not in allowed)
        if extra:
            outside += len(extra)
            first = first or (qid, extra[0])
    if not outside:
        return None
    top = f"its top {rerank_depth} candidates" if rerank_depth else "its candidates"
    return (f"its run ranks {outside:,} document(s) that pool {pool_name!r} does not hold for their query "
            f"(e.g. {first[1]!r} for query {first[0]!r}; a reranking of the pool ranks only {top}): it is not a "
            "reranking of that pool")

def pool_entry(task_name: str, run_sha256: str, pool_sha256: str, rerank_depth: int | None):
    """The cache entry of a run's check against a pool (the verdict is a function of its key)."""

    key = {"format": FACTS_FORMAT, "run": run_sha256, "pool": pool_sha256, "rerank_depth": rerank_depth}
    return keyed_entry(cache_root() / "verify" / task_name / "pools", "verification-pool", key,
                       required=(POOL_FILE,))

# --- the command ----------------------------------------------------------------------------------


def command_words(command: str) -> list[str] | None:
    """``run ...`` of a ``statbench run ...`` command line, or None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 2 or Path(words[0]).name != "statbench" or words[1] != "run":
        return None
    return words[1:]

def command_disagreement(request, results) -> str | None:
    """How the command and the record disagree, either way (names as registered): what
    the command asks for that the record does not hold (task, pool or model, reranker,
    each parameter, the splits), and what the record holds that the command does not
    give (a parameter other than the model's declared default, another budget:
    :func:`recorded_params_problem`)."""

    registry = get_registry()
    task = registry.get("tasks", request.task).name
    if task != results.task.name:
        return f"task {task!r}, not {results.task.name!r}"
    if request.pool:
        if request.pool != results.pool:
            return f"pool {request.pool!r}, not {results.pool!r}"
    else:
        model = registry.get("retrievers", request.model).name
        if results.pool or model != results.model.name:
            return f"model {model!r}, not {results.model.name!r}"
    reranker = registry.get("rerankers", request.reranker).name if request.reranker else None
    recorded = results.reranker.name if results.reranker else None
    if reranker != recorded:
        return f"reranker {reranker!r}, not {recorded!r}"
    for kind, asked, record in (("parameter", request.params, results.model),
                                ("reranker parameter", request.reranker_params, results.reranker)):
        for key, value in asked.items():
            held = record.params.get(key) if record is not None else None
            if canonical(held) != canonical(value):
                return f"{kind} {key}={value!r}, recorded as {held!r}"
    first_stage = None if request.pool else results.model  # a pool's record is no model's
    for kind, registered, asked, record in (("parameter", "retrievers", request.params, first_stage),
                                            ("reranker parameter", "rerankers", request.reranker_params,
                                             results.reranker)):
        problem = recorded_params_problem(kind, registered, asked, record) if record is not None else None
        if problem:
            return problem
    return selection_problem(request, results)

def command_request(results):
    """The request the recorded command makes, as ``statbench run`` reads it; None when it
    is not a ``statbench run`` command line this statbench can read (names not installed
    here, a ``statbench fuse`` or a script): the command is then only declared."""

    words = command_words(results.command)
    if words is None:
        return None
    try:
        return request_from_argv(words)
    except StatbenchError:
        return None

def command_problem(request, results) -> str | None:
    """How the record disagrees with what its command asks for (and with what the models it
    makes are: :func:`model_problem`), one line."""
    disagreement = command_disagreement(request, results) or model_problem(request, results)
    if disagreement:
        return f"the recorded command {results.command!r} does not describe this result: {disagreement}"
    return None

def installed_class(record, kind: str):
    """The installed class of a model record (``kind``: "retrievers" or "rerankers") when the
    installed one of its name comes from the distribution recorded; None otherwise."""

    entry = getattr(get_registry(), kind).get(record.name)
    if entry is None:
        return None
    recorded = record.plugin.distribution if record.plugin is not None else None
    installed = getattr(getattr(entry, "plugin", None), "distribution", None)

    def norm(dist):
        return (dist or "").strip().lower().replace("_", "-")

    if recorded and installed and norm(recorded) != norm(installed):
        return None
    return entry.cls

def command_model(cls, asked: Mapping):
    """The model the command makes (its class given the command's parameters), whose
    ``params`` and ``budget`` are what a run of it records (a preset may set other
    parameters); None when it cannot be made here (a plugin that needs a file or a key to
    start): its parameters are then only compared one way."""
    try:
        return cls(**dict(asked))
    except Exception:  # noqa: BLE001 - a plugin's own refusal: nothing is assumed of what it records
        return None

def recorded_params_problem(kind: str, registered: str, asked: Mapping, record) -> str | None:
    """The other way round from the command's parameters: a parameter the record holds but
    the command does not give must be the value the command makes (the model's declared
    default, or what a preset the command names sets), and one the model declares; the
    defaults the record states must be the model's; the budget the record states must be
    the one the command makes. Only for a model installed here from the distribution
    recorded (else nothing is known of its parameters: declared)."""

    cls = installed_class(record, registered)
    if cls is None:
        return None
    defaults = cls.defaults()
    stated = getattr(record, "defaults", None)
    if stated and record.version == cls.version:
        for key, value in sorted(stated.items()):
            if key in defaults and canonical(value) != canonical(defaults[key]):
                return (f"{kind} {key}: recorded as defaulting to {value!r}, but {record.name} declares "
                        f"{defaults[key]!r}")
    model = command_model(cls, asked)
    if model is None:
        return None
    made = dict(model.params)
    for key, held in sorted(record.params.items()):
        if key in asked:
            continue
        if key not in made and key not in defaults:
            return f"{kind} {key}={held!r} recorded, but {record.name} has no such parameter"
        value = made.get(key, defaults.get(key))
        if canonical(held) != canonical(value):
            how = "its default is" if key in defaults and canonical(value) == canonical(defaults[key]) else \
                "the command makes it"
            return f"{kind} {key}={held!r} recorded, but the command does not give it and {how} {value!r}"
    ran = model.budget
    # the record's own word; a record older than the field (no ``defaults`` either) by what
    # the board makes of it
    said = record.budget if record.budget or getattr(record, "defaults", None) is not None \
        else record_budget(record, registered)
    if (said or None) != (ran or None):
        return (f"budget: the command's parameters make {ran!r}, the record says {said!r}" if ran else
                f"budget: the record says {said!r}, but the command runs the protocol's settings")
    return None

def model_problem(request, results) -> str | None:
    """What the record says the models are that the installed ones (of the version
    recorded, made with the command's parameters) are not: their family, and whether the
    first stage learns from the task's training queries (the board filters rows by both)."""
    for registered, asked, record in (("retrievers", request.params, None if request.pool else results.model),
                                      ("rerankers", request.reranker_params, results.reranker)):
        cls = installed_class(record, registered) if record is not None else None
        model = command_model(cls, asked) if cls is not None and record.version == cls.version else None
        if model is None:
            continue
        if record.family != model.family:
            return f"family {record.family!r} recorded, but {record.name} is of family {model.family!r}"
        learns = bool(getattr(model, "trainable", False))
        if registered == "retrievers" and record.trained is not None and record.trained != learns:
            return (f"trained={str(record.trained).lower()} recorded, but {record.name} with these parameters "
                    f"{'learns' if learns else 'does not learn'} from the task's training queries")
        problem = reproducibility_problem(model, record)
        if problem:
            return problem
    return None

def reproducibility_problem(model, record) -> str | None:
    """What the record says a reproduction needs (``needs_gpu``, ``tolerance``) that the
    installed model does not declare: a bm25 recorded as needing a GPU would never be re-run,
    one recorded with a tolerance would be "reproduced" by any run within it. A record older
    than these fields (no ``needs_gpu``) says nothing of them."""

    if getattr(record, "needs_gpu", None) is None:
        return None
    try:
        declared = model.reproducibility()
    except StatbenchError:
        return None
    if record.needs_gpu != declared["needs_gpu"]:
        return (f"needs_gpu={str(record.needs_gpu).lower()} recorded, but {record.name} declares "
                f"needs_gpu={str(declared['needs_gpu']).lower()}")
    said, tolerance = getattr(record, "tolerance", None), declared["tolerance"]
    if (said is None) != (tolerance is None) or (said is not None and abs(float(said) - tolerance) > 0):
        return (f"tolerance {'absent' if said is None else repr(said)} recorded, but {record.name} declares "
                f"{'none (deterministic)' if tolerance is None else repr(tolerance)}")
    return None

def selection_problem(request, results) -> str | None:
    """The splits the command selects (its protocol, or its ``--split``s) are the record's."""

    info = get_registry().get("tasks", request.task).cls.task_info()
    protocol, splits = canonical_selection(info, request.protocol, request.splits)
    chosen = info.protocol(protocol) if not splits else None
    wanted = set(splits) if splits else set(getattr(chosen, "splits", ()) or ())
    ran = {s.name for s in results.splits}
    if wanted and wanted != ran:
        return f"splits {', '.join(sorted(wanted))}, not {', '.join(sorted(ran))}"
    return None

# --- what a badge covers ----------------------------------------------------------------------


def declared_claims(results, has_card: bool = False) -> list[str]:
    """What a row shows that statbench only read from the submitter (never re-measured)."""
    out = [TIMINGS, PLUGINS]
    efficiency = results.efficiency
    measured = efficiency.to_json() if efficiency is not None else {}
    if any(k not in ("hardware", "api") for k in measured):
        out.append(EFFICIENCY)
    if efficiency is not None and efficiency.api is not None:
        out.append(COST)
    if (efficiency is not None and efficiency.hardware is not None) or "accelerator" in (results.environment or {}):
        out.append(HARDWARE)
    if has_card:
        out.append(MODEL_CARD)
    if results.components:
        out.append(FUSED_RUNS)
    return out
