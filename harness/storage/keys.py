"""Every cache key statbench builds, in one place.

A cache entry (:mod:`statbench.storage.cache`) is found by its key: a JSON value naming
everything that decides what the entry holds. The key's canonical text and digest are
:func:`statbench.data.checksum.canonical_json` and :func:`~statbench.data.checksum.config_key`
(the entry's folder name); the manifest holds the whole key and is checked on read. This
module writes each kind of key once:

- the identity of a loaded task (:func:`task_identity`: data, corpus, queries, stop words)
  and of a model (:func:`model_identity`: plugin, configuration, local weights);
- the summary of a task's load (:func:`task_summary_entry`), keyed by its data files, its
  definition and the *code version* of the loading code (:func:`code_version`: the source of
  the modules the loader imports, found by following imports, never by a list of file
  names, so a module moved or added is covered as soon as it is imported);
- a model's private folder (:func:`model_cache_dir`), a split's run (:func:`split_run_entry`)
  and its per-query scores (:func:`split_scores_entry`);
- any other entry named by its key (:func:`keyed_entry`), as the built-in models use.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import json
import keyword
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType

from statbench import __version__
from statbench.data.checksum import (
    canonical_json,
    config_key,
    file_sha256,
    json_sha256,
    records_digest,
    text_sha256,
)
from statbench.storage.cache import CacheEntry
from statbench.storage.ir_measures_version import ir_measures_version
from statbench.storage.paths import cache_root
from statbench.storage.weights import fingerprint

__all__ = [
    "canonical_json", "config_key", "json_sha256", "text_sha256", "records_digest", "ids_digest",
    "keyed_entry", "code_files", "code_version",
    "corpus_checksum", "queries_checksum", "task_identity", "identity_checksum", "plugin_identity",
    "weights_identity", "model_identity", "model_cache_dir",
    "task_summary_entry", "split_run_entry", "split_scores_entry",
    "SUMMARY_FORMAT_VERSION", "RUN_FORMAT_VERSION", "SCORES_FORMAT_VERSION",
    "verification_entry", "VERIFICATION_FORMAT_VERSION",
]

#: 2: the summary of a task's load (see :mod:`statbench.loading.loadcache`)
SUMMARY_FORMAT_VERSION = "2"
#: 3: run lines carry the output's tag, with index.json (each query's byte range): see splitruns.py;
#: 4: scores strictly decreasing at float32 (runfile.order_ranking), so no split run written
#: with ties at 32-bit precision is reused to assemble a run file
RUN_FORMAT_VERSION = "4"
SCORES_FORMAT_VERSION = "1"
#: 1: a run file's figures as re-scored by ``leaderboard build --verify`` (see leaderboard/verify/verify.py)
VERIFICATION_FORMAT_VERSION = "1"


# --- digests and entries named by their key -----------------------------------------------

def ids_digest(ids: Iterable[str]) -> str:
    """sha256 of document ids in order (cache keys cover which documents, in which order)."""
    return text_sha256("\x00".join(ids))


def keyed_entry(root: Path, kind: str, key, *, required: tuple[str, ...] = (), check=None,
                sharded: bool = False, seal: str | None = None, keep: tuple[str, ...] = ()) -> CacheEntry:
    """The entry of ``kind`` for ``key`` under ``root``: the folder ``root/config_key(key)``;
    when ``sharded`` (kinds with very many entries, e.g. one per API request),
    ``root/DI/DIGEST`` with the key's whole :func:`json_sha256`. ``check``, ``seal``,
    ``keep``: see :class:`~statbench.storage.cache.CacheEntry`."""
    if sharded:
        digest = json_sha256(key)
        folder = Path(root) / digest[:2] / digest
    else:
        folder = Path(root) / config_key(key)
    return CacheEntry(folder, kind, key, required=required, check=check, seal=seal, keep=keep)


# --- code version ---------------------------------------------------------------------------

def code_files(*modules: ModuleType) -> dict[str, Path]:
    """``{module name: source file}`` of ``modules`` and of every module they import,
    directly or not, within statbench and within each root's own top-level package
    (imports inside functions included: what the code can run, not what ran so far; the
    packages above each module too: importing it runs their ``__init__``)."""
    packages = {"statbench"} | {m.__name__.split(".")[0] for m in modules}
    found: dict[str, Path] = {}
    todo = [m.__name__ for m in modules]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        path = _source_file(name)
        if path is None:
            continue
        found[name] = path
        parents = [name.rsplit(".", n)[0] for n in range(1, name.count(".") + 1)]
        todo.extend(m for m in [*parents, *_imported(name, path)] if m.split(".")[0] in packages and m not in found)
    return found


def code_version(*modules: ModuleType) -> str:
    """sha256 over the name and source of every module :func:`code_files` finds: editing,
    adding or moving any module the given ones import gives another version."""
    return _code_version(tuple(sorted(m.__name__ for m in modules)))


@functools.cache
def _code_version(names: tuple[str, ...]) -> str:
    files = code_files(*(sys.modules[n] for n in names))
    return records_digest((name, file_sha256(path)) for name, path in sorted(files.items()))


def _source_file(name: str) -> Path | None:
    module = sys.modules.get(name)
    parent = sys.modules.get(name.rpartition(".")[0])
    if module is None and parent is not None and not hasattr(parent, "__path__"):
        return None  # a name inside a module (``from m import Name``), not a submodule: as find_spec finds
    try:
        where = getattr(module, "__file__", None) if module is not None else importlib.util.find_spec(name).origin
    except (ImportError, AttributeError, ValueError):
        return None
    return Path(where) if where and where.endswith(".py") else None


#: the import statements of a source (one per match; a parenthesised list may span lines)
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)", re.M)


def _imported(name: str, path: Path) -> set[str]:
    """The module names ``path`` (module ``name``) imports, submodules named in
    ``from X import Y`` included. Only the import statements are parsed (the whole file's
    statements when one cannot be parsed alone: continued with a backslash, or a line of a
    docstring that reads like one, which is why no line here starts with that word)."""
    source = path.read_bytes()
    try:
        nodes = [node for match in _IMPORT.finditer(source) for node in _statement(match.group(0).strip())]
    except SyntaxError:
        nodes = _statements(ast.parse(source, str(path)))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)  # kept when it is a module
    return {m for m in out if m}


_NAME = rb"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rb"%s(?:\.%s)*" % (_NAME, _NAME)
_ALIASES = rb"(?:%s)(?:[ \t]+as[ \t]+%s)?(?:[ \t]*,[ \t]*(?:%s)(?:[ \t]+as[ \t]+%s)?)*"
#: the one-line forms of the import statement (no parentheses, backslash, semicolon, star or
#: non-ASCII name), read without the parser; anything else is parsed
_SIMPLE_IMPORT = re.compile(rb"import[ \t]+(%s)[ \t]*(?:#[^\n]*)?" % (_ALIASES % (_DOTTED, _NAME, _DOTTED, _NAME)))
_SIMPLE_FROM = re.compile(rb"from[ \t]+(\.*)(%s)?[ \t]+import[ \t]+(%s)[ \t]*(?:#[^\n]*)?"
                          % (_DOTTED, _ALIASES % (_NAME, _NAME, _NAME, _NAME)))
_ALIAS = re.compile(rb"(%s)(?:[ \t]+as[ \t]+(%s))?" % (_DOTTED, _NAME))


@functools.lru_cache(maxsize=4096)
def _statement(text: bytes) -> tuple[ast.stmt, ...]:
    """The statements of one import statement's text, as :func:`ast.parse` gives them, once
    per text (most modules share most of their imports); ``SyntaxError`` when it cannot be
    parsed alone. A one-line form is read without the parser (a keyword where a name goes,
    or ``__future__``, is left to it)."""
    simple = _SIMPLE_IMPORT.fullmatch(text)
    if simple is not None:
        names = _aliases(simple.group(1))
        if names is not None:
            return (ast.Import(names=names),)
    simple = _SIMPLE_FROM.fullmatch(text)
    if simple is not None and simple.group(2) != b"__future__":
        names = _aliases(simple.group(3))
        module = simple.group(2).decode() if simple.group(2) else None
        if names is not None and (module is None or not any(map(keyword.iskeyword, module.split(".")))):
            return (ast.ImportFrom(module=module, names=names, level=len(simple.group(1))),)
    return tuple(ast.parse(text).body)


def _aliases(text: bytes) -> list[ast.alias] | None:
    """``a.b as c, d`` as the parser's aliases; None when a name is a keyword (not valid)."""
    names = []
    for part in text.split(b","):
        match = _ALIAS.fullmatch(part.strip())
        name, asname = match.group(1).decode(), match.group(2)
        if any(map(keyword.iskeyword, name.split("."))) or (asname and keyword.iskeyword(asname.decode())):
            return None
        names.append(ast.alias(name=name, asname=asname.decode() if asname else None))
    return names


def _statements(tree: ast.AST) -> list[ast.AST]:
    """Every statement of ``tree``, nested ones included (an import is a statement: the
    expressions, most of a module's nodes, are not walked)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr):
                out.append(child)
                todo.append(child)
    return out


# --- a loaded task ----------------------------------------------------------------------------

def corpus_checksum(corpus) -> str:
    """sha256 over every document as a model sees it (id, title, text, fields), in corpus
    order; ``corpus`` maps ids to documents, or is a sequence of documents."""
    docs = corpus.values() if isinstance(corpus, Mapping) else corpus
    dumped: dict[int, str] = {}  # a fields mapping shared by many documents (STARD's headings) is dumped once

    def record(doc) -> tuple[str, ...]:
        fields = ""
        if doc.fields:
            fields = dumped.get(id(doc.fields))
            if fields is None:
                fields = dumped[id(doc.fields)] = canonical_json(dict(doc.fields))
        return doc.id, doc.title, doc.text, fields, ""

    return records_digest(map(record, docs))


def queries_checksum(data) -> str:
    """sha256 over the queries (id, text, fields) and the judgements a trained model learns from."""
    records = [(q.id, q.text, canonical_json(dict(q.fields)) if q.fields else "", "") for q in data.queries.values()]
    return text_sha256(records_digest(records) + json.dumps(data.qrels, sort_keys=True, ensure_ascii=False))


def task_identity(entry, task, data) -> dict:
    """Everything about the task that changes what a model sees or learns from (``entry``:
    the task's registry entry, ``task``: its TaskInfo, ``data``: the loaded TaskData)."""
    return {
        "task": task.name,
        "plugin": plugin_identity(entry),
        "task_version": task.version,
        "language": task.language,
        "analyzer": task.analyzer,
        "data": data.checksum,
        "corpus": corpus_checksum(data.corpus),
        "queries": queries_checksum(data),
        "stopwords": text_sha256("\n".join(sorted(data.stopwords))) if data.stopwords is not None else None,
    }


def identity_checksum(identity: dict) -> str:
    """The task checksum split runs and model folders are keyed by."""
    return json_sha256(identity)


def plugin_identity(entry) -> dict:
    """A registry entry's distribution and version."""
    return {"plugin": entry.qualified, "version": entry.plugin.version}


def task_summary_entry(task, entry, files: dict, *, loading_code: tuple[ModuleType, ...],
                       required: tuple[str, ...] = ()) -> CacheEntry | None:
    """The entry of a task's load summary (kind ``task-summary``), for ``files``: each
    declared data file found now, ``{name: [path, sha256]}`` or ``{name: [[path, sha256], ...]}``;
    its code part is the :func:`code_version` of ``loading_code`` and the task's own module.
    ``None`` when the loader's source cannot be found (no summary is then kept)."""
    loader = _loader_digest(type(task))
    module = sys.modules.get(type(task).__module__)
    if loader is None or module is None:
        return None
    key = {
        "format": SUMMARY_FORMAT_VERSION,
        "task": task.name,
        "plugin": plugin_identity(entry),
        "version": task.version,
        "info": repr(type(task).task_info()),
        "definition": getattr(task, "definition", None),
        "state": _plain_state(task),
        "loader": loader,
        "code": [__version__, code_version(*loading_code, module)],
        "files": files,
    }
    return keyed_entry(cache_root() / "loads" / task.name, "task-summary", key, required=required)


def _loader_digest(cls) -> str | None:
    """sha256 of the task module and its sibling files named after it (``stard.py``,
    ``stard.json``, ``stard.folds.json``): a definition edited without a version bump still
    gets a new summary."""
    try:
        module = Path(inspect.getfile(cls))
        files = sorted(p for p in module.parent.glob(f"{module.stem}*") if p.is_file())
        return records_digest((p.name, file_sha256(p)) for p in files)
    except (OSError, TypeError):
        return None


def _plain_state(task) -> str:
    """The task's plain-data class and instance attributes (strings, numbers, lists,
    dicts...), e.g. a loader option set on the class: a loader configured otherwise at run
    time reads the same files into other data, so it gets another summary."""
    state = {}
    for klass in reversed(type(task).__mro__):
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if not name.startswith("__") and _is_plain(value):
                state[f"{klass.__qualname__}.{name}"] = _normal(value)
    for name, value in vars(task).items():
        if _is_plain(value):
            state[f"self.{name}"] = _normal(value)
    return json.dumps(state, sort_keys=True, ensure_ascii=False, default=repr)


def _normal(value):
    """Sets as sorted lists (their order differs from one process to the next)."""
    if isinstance(value, (set, frozenset)):
        return sorted(map(_normal, value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def _is_plain(value) -> bool:
    if isinstance(value, (str, int, float, bool, type(None))):
        return True
    if isinstance(value, (list, tuple, frozenset, set)):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False


# --- a model ----------------------------------------------------------------------------------

def weights_identity(params) -> dict[str, str]:
    """``{param: fingerprint}`` of each model parameter (``model``, ``*_model``) that names a
    local folder: given as a path, or a copy the harness finds for a hub id (``statbench
    models fetch``, ``$STATBENCH_CACHE/hf/ORG--NAME``), by the files' names, sizes and
    modification times (:func:`statbench.storage.weights.fingerprint`). A hub id the hub
    serves keeps its name only."""
    out: dict[str, str] = {}
    for name, value in sorted(params.items()):
        if not isinstance(value, str) or not value or not (name == "model" or name.endswith("_model")):
            continue
        try:
            found = fingerprint(value)
        except Exception:  # noqa: BLE001 - the load reports what is wrong with the model
            continue
        if found.startswith("dir:"):
            out[name] = found
    return out


def model_identity(entry, model) -> dict:
    """A model's configuration, plugin and (for local folders) weights."""
    identity = {**model.config(), **plugin_identity(entry)}
    weights = weights_identity(getattr(model, "params", None) or {})
    if weights:  # a model folder's files: weights replaced under the same path never reuse a run
        identity["weights"] = weights
    return identity


def model_cache_dir(entry, model, task_checksum: str, split) -> Path:
    """The folder private to one model configuration on one task (and split, when trained)."""
    key = config_key({"model": model_identity(entry, model), "task": task_checksum,
                      "split": split.name if split else None})
    return cache_root() / "models" / model.name / key


# --- a split's run and scores -----------------------------------------------------------------

def split_run_entry(task_name: str, task_checksum: str, split, *, retriever=None, retriever_entry=None,
                    pool: tuple[str, str | None] | None = None, reranker=None, reranker_entry=None,
                    rerank_depth: int | None = None, depth: int, tag: str = "statbench-cache",
                    required: tuple[str, ...] = (), check=None, seal: str | None = None,
                    keep: tuple[str, ...] = ()) -> CacheEntry:
    """The entry (kind ``split-run``) holding one split's ranked test queries."""
    trained = bool(retriever is not None and retriever.trainable)
    key = {
        "format": RUN_FORMAT_VERSION,
        "task": task_checksum,
        "split": [split.name, list(split.test), list(split.train) if trained else [], list(split.dev) if trained else []],
        "model": model_identity(retriever_entry, retriever) if retriever is not None else None,
        # a rebuilt pool of the same name has another checksum, so stale runs are not reused
        "pool": list(pool) if pool else None,
        "reranker": model_identity(reranker_entry, reranker) if reranker is not None else None,
        "rerank_depth": rerank_depth if reranker is not None else None,
        "depth": depth,
        # the tag column of the lines (it follows the --model/--reranker spelling, DIST:NAME or NAME)
        "tag": tag,
    }
    return keyed_entry(cache_root() / "runs" / task_name, "split-run", key, required=required, check=check,
                       seal=seal, keep=keep)


def split_scores_entry(task_name: str, run_sha256: str, test: list[str], qrels, measures, *,
                       required: tuple[str, ...] = (), check=None, keep: tuple[str, ...] = ()) -> CacheEntry:
    """The entry (kind ``split-scores``) of one split's per-query scores: keyed by the sha256
    of the split's run, the judgements of its test queries, the measures and the versions of
    the harness and ir-measures."""
    judged = {q: qrels[q] for q in test if q in qrels}
    key = {
        "format": SCORES_FORMAT_VERSION,
        "run": run_sha256,
        "test": list(test),
        "qrels": json_sha256(judged),
        "measures": [[m.label, m.ir_measure] for m in measures],
        "versions": [__version__, ir_measures_version()],
        # the queries scored: a scores file is checked to hold these, each on every measure
        "judged": sorted(judged),
    }
    return keyed_entry(cache_root() / "scores" / task_name, "split-scores", key, required=required, check=check,
                       keep=keep)


def verification_entry(task_name: str, task_version: str, run_sha256: str, data_checksum: str, measures,
                       splits: list[str], *, evaluation_version: str, required: tuple[str, ...] = ()) -> CacheEntry:
    """The entry (kind ``verification``) of a run file's figures as re-scored to verify a
    board row: keyed by the sha256 of the (uncompressed) run, the task data it was scored on
    (the data checksum covers the judgements and the splits) and the loader's version, the measures as defined
    (label and ir-measures spelling), the splits and the version of the evaluation code.
    The figures are cached, never the verdict: the claims are compared on every build."""
    key = {
        "format": VERIFICATION_FORMAT_VERSION,
        "run": run_sha256,
        "data": data_checksum,
        "task_version": task_version,
        "measures": [[m.label, m.ir_measure] for m in measures],
        "splits": list(splits),
        "evaluation": evaluation_version,
    }
    return keyed_entry(cache_root() / "verify" / task_name, "verification", key, required=required)
