"""Every cache artefact of the built-in models proves itself on read.

For each artefact kind, on tiny fixtures: a truncated file, a flipped byte, a deleted
manifest or a staging folder left by a killed process is noticed on the next run, which
logs and records the invalid entry, rebuilds it exactly once, and ranks exactly as a run
on a clean cache. Two runs building the same entry at the same moment both succeed and
build it once. Parameter values outside their declaration are refused before any work."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
import tiny_models
from lexical_fixtures import EN_DOCS, FR_DOCS, FR_QUERIES, context
from statbench.storage import cache
from statbench.api import Document, Query, RunContext
from statbench.storage.cache import MANIFEST, CacheEntry, CacheEvent
from statbench.contract.params import ParamError

DAMAGES = ("truncate", "flip", "no-manifest", "stale-staging")


@pytest.fixture(autouse=True)
def no_stale_events():
    cache.take_events()
    yield
    cache.take_events()


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """The kind of every entry built (sealed and moved into place), in order."""
    built: list[str] = []
    original = CacheEntry.build

    def counting(self):
        built.append(self.kind)
        return original(self)

    monkeypatch.setattr(CacheEntry, "build", counting)
    return built


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    texts = tiny_models.stard_texts() + [d.text for d in FR_DOCS] + [q.text for q in FR_QUERIES]
    return tiny_models.bert(tmp_path_factory.mktemp("m") / "bert", texts)


# --- the artefacts ----------------------------------------------------------------------


def topical_corpus() -> list[Document]:
    housing, work = ["loyer", "bail", "locataire", "bailleur"], ["salaire", "employeur", "contrat", "emploi"]
    return [Document(f"{'h' if i % 2 == 0 else 'w'}{i:02d}",
                     " ".join((housing if i % 2 == 0 else work)[(i + j) % 4] for j in range(5))) for i in range(24)]


def _ctx(root: Path, language: str = "fr", name: str = "model") -> RunContext:
    return context(root, language, name=name)


def _bm25(root, bert_dir):
    from statbench.models.lexical.bm25 import BM25

    model, ctx = BM25(), _ctx(root)
    model.index(FR_DOCS, ctx)
    return model.search(FR_QUERIES, 10, ctx)


def _tokens(root, bert_dir):  # TF-IDF reads the tokenised corpus on every index
    from statbench.models.lexical.tfidf import TfIdf

    model, ctx = TfIdf(), _ctx(root)
    model.index(FR_DOCS, ctx)
    return model.search(FR_QUERIES, 10, ctx)


def _ql(root, bert_dir):
    from statbench.models.lexical.ql import QueryLikelihood

    model, ctx = QueryLikelihood(mu=50.0), _ctx(root)
    model.index(FR_DOCS, ctx)
    return model.search(FR_QUERIES, 10, ctx)


def _word2vec(root, bert_dir):
    from statbench.models.static.static_embeddings import Word2VecRetriever

    model, ctx = Word2VecRetriever(dim=8, epochs=20, min_count=1), _ctx(root)
    model.index(topical_corpus(), ctx)
    return model.search([Query("q", "loyer bail"), Query("r", "salaire")], 30, ctx)


def _fasttext(root, bert_dir):
    from statbench.models.static.static_embeddings import FastTextRetriever

    model, ctx = FastTextRetriever(dim=8, epochs=5, min_count=1, bucket=500), _ctx(root)
    model.index(topical_corpus(), ctx)
    return model.search([Query("q", "loyers"), Query("r", "salaires")], 30, ctx)


def _encodings(root, bert_dir):
    from statbench.models.dense.biencoder import BiEncoder

    model = BiEncoder(model=str(bert_dir), chunk_size=12, chunk_overlap=3, batch_size=4, device="cpu")
    ctx = _ctx(root)
    model.index(FR_DOCS, ctx)
    return model.search(FR_QUERIES, 10, ctx)


def _colbert_dir(root: Path) -> Path:
    folder = root.parent / "colbert-model"
    if not folder.exists():
        tiny_models.colbert(folder, [d.text for d in topical_corpus()] + ["loyer bail", "salaire"])
    return folder


def _colbert(root, bert_dir):
    """colbert-ai's PLAID index (its k-means wants a few hundred token vectors: the topical corpus)."""
    from statbench.models.late_interaction.colbert import ColBERTRetriever

    model = ColBERTRetriever(model=str(_colbert_dir(root)), doc_maxlen=24, query_maxlen=12, nbits=2)
    ctx = _ctx(root)
    model.index(topical_corpus(), ctx)
    return model.search([Query("q", "loyer bail"), Query("r", "salaire")], 30, ctx)


def fake_generate(self, tokenizer, model, texts, seed):
    """docT5query without a model: deterministic 'queries' from each text and the seed."""
    return [[f"{text.split()[-1]} {seed % 97}", text.split()[0].lower()] for text in texts]


def _expansions(root, bert_dir):
    from statbench.models.lexical import doct5query
    from statbench.models.lexical.doct5query import DocT5Query

    patch = pytest.MonkeyPatch()
    patch.setattr(doct5query, "load_model", lambda name, device: (None, None))
    patch.setattr(DocT5Query, "generate", fake_generate)
    try:
        model, ctx = DocT5Query(n=2, batch_size=2), _ctx(root)
        model.index(FR_DOCS, ctx)
        return model.search(FR_QUERIES, 10, ctx)
    finally:
        patch.undo()


def _lsi_train(root, bert_dir, **params):
    from statbench.models.lsi.lsi import LSIClassifier

    model = LSIClassifier(model=str(bert_dir), hidden=8, epochs=2, train_batch_size=2, warmup_steps=0, device="cpu",
                          **params)
    ctx = _ctx(root, name="lsi")
    queries = [Query(f"t{i}", q.text) for i, q in enumerate(FR_QUERIES * 2)]
    qrels = {f"t{i}": {q.id.removeprefix("q-"): 1} for i, q in enumerate(FR_QUERIES * 2)}
    model.train(queries, qrels, FR_DOCS, ctx)
    model.index(FR_DOCS, ctx)
    return model.search(FR_QUERIES, 10, ctx)


def _checkpoint(root, bert_dir):
    return _lsi_train(root, bert_dir)


def _lucene(root, bert_dir):
    from statbench.errors import StatbenchError
    from statbench.models.lexical.bm25 import BM25
    from statbench.models.lexical.lucene import start_jvm

    try:
        start_jvm()
    except StatbenchError as exc:
        pytest.skip(f"no JVM for the Lucene backend here: {exc}")
    model, ctx = BM25(backend="lucene"), _ctx(root, "en")
    model.index(EN_DOCS, ctx)
    return model.search([Query("q", "rent deposits"), Query("r", "landlord")], 10, ctx)


@dataclass
class Artefact:
    kind: str
    run: Callable  # (cache root, bert_dir) -> rankings
    entry: Callable[[Path], Path]  # cache root -> the entry's folder
    #: the entries a run after the damage builds (a damaged finished checkpoint: training
    #: starts again, writing epochs 1 and 2)
    rebuilt: tuple = ()

    def __post_init__(self):
        self.rebuilt = self.rebuilt or (self.kind,)


def _one(pattern: str) -> Callable[[Path], Path]:
    def find(root: Path) -> Path:
        found = [p for p in root.glob(pattern) if p.is_dir() and not p.name.startswith(".")]
        assert len(found) == 1, (pattern, found)
        return found[0]

    return find


ARTEFACTS = {
    "tokens": Artefact("tokens", _tokens, _one("tokens/*")),
    "bm25s-index": Artefact("bm25s-index", _bm25, _one("models/model/bm25s")),
    "ql-index": Artefact("ql-index", _ql, _one("models/model/ql-index")),
    "word-vectors": Artefact("word-vectors", _word2vec, _one("models/model/vectors")),
    "fasttext-vectors": Artefact("word-vectors", _fasttext, _one("models/model/vectors")),
    "encodings": Artefact("encodings", _encodings, _one("encodings/*")),
    "colbert-plaid": Artefact("colbert-plaid", _colbert, _one("colbert-plaid/*")),
    "doct5query-expansions": Artefact("doct5query-expansions", _expansions, _one("doct5query/*")),
    "checkpoint": Artefact("checkpoint", _checkpoint, _one("models/lsi/train/epoch-*"),
                           rebuilt=("checkpoint", "checkpoint")),
    "lucene-index": Artefact("lucene-index", _lucene, _one("models/model/lucene-index")),
}


def _largest_file(entry: Path) -> Path:
    files = [p for p in entry.rglob("*") if p.is_file() and p.name != MANIFEST]
    return max(files, key=lambda p: (p.stat().st_size, p.name))


def damage(entry: Path, how: str) -> str | None:
    """Damage ``entry`` as ``how`` says; the reason the next read must give (None: the
    entry is gone and a dead process's staging folder is left, nothing to report)."""
    if how == "no-manifest":
        (entry / MANIFEST).unlink()
        return "no manifest (an interrupted or foreign write)"
    victim = _largest_file(entry)
    name = victim.relative_to(entry).as_posix()
    data = victim.read_bytes()
    if how == "truncate":
        victim.write_bytes(data[: len(data) // 2])
        return f"{name}: {len(data) // 2} bytes, manifest records {len(data)} (truncated or overwritten)"
    if how == "flip":
        middle = len(data) // 2
        victim.write_bytes(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:])
        return f"{name}: sha256 differs from the manifest (corrupted)"
    assert how == "stale-staging"
    # a process killed while writing the entry: a half-written staging folder, no entry
    import shutil

    staging = entry.with_name(f".{entry.name}.staging-0123456789ab")
    shutil.copytree(entry, staging)
    (staging / MANIFEST).unlink()
    shutil.rmtree(entry)
    return None


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("name", list(ARTEFACTS))
def test_a_damaged_entry_is_noticed_recorded_and_rebuilt(name, how, tmp_path, bert_dir, builds, caplog):
    artefact = ARTEFACTS[name]
    clean = artefact.run(tmp_path / "clean", bert_dir)
    root = tmp_path / "damaged"
    first = artefact.run(root, bert_dir)
    assert first == clean
    entry = artefact.entry(root)
    assert CacheEntry(entry, artefact.kind, _manifest_key(entry)).verify() is None
    reason = damage(entry, how)
    builds.clear()
    cache.take_events()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="statbench"):
        again = artefact.run(root, bert_dir)

    assert again == clean  # identical rankings, scores included
    expected_events = [CacheEvent(entry=str(entry), reason=reason)] if reason else []
    assert cache.take_events() == expected_events
    messages = [r.getMessage() for r in caplog.records if r.name == "statbench"]
    if reason:
        assert f"cache entry {entry} is invalid ({reason}): rebuilding it" in messages
    else:
        assert any(m.startswith("removing ") and f".{entry.name}.staging-0123456789ab" in m for m in messages)
    assert builds == list(artefact.rebuilt)
    assert CacheEntry(entry, artefact.kind, _manifest_key(entry)).verify() is None
    assert not list(entry.parent.glob(f".{entry.name}.staging-*"))


def _manifest_key(entry: Path) -> dict:
    return json.loads((entry / MANIFEST).read_text("utf-8"))["key"]


def test_an_entry_of_another_configuration_is_never_read(tmp_path, builds):
    """A manifest whose key is not the model's (e.g. an index copied from another
    configuration) is invalid: rebuilt, never silently used."""
    from statbench.models.lexical.bm25 import BM25

    _bm25(tmp_path, None)
    entry = tmp_path / "models" / "model" / "bm25s"
    manifest = json.loads((entry / MANIFEST).read_text("utf-8"))
    manifest["key"]["k1"] = 2.5
    (entry / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    builds.clear()
    model, ctx = BM25(), _ctx(tmp_path)
    model.index(FR_DOCS, ctx)
    assert cache.take_events() == [CacheEvent(str(entry), "manifest of another configuration")]
    assert builds == ["bm25s-index"]


def test_unchanged_entries_are_reused_without_a_build(tmp_path, builds, caplog):
    from statbench.models.lexical.bm25 import BM25
    from statbench.models.lexical.ql import QueryLikelihood

    _bm25(tmp_path, None)
    _ql(tmp_path, None)
    assert builds == ["bm25s-index", "tokens", "ql-index"]  # the index builds the tokens it needs
    builds.clear()
    with caplog.at_level(logging.INFO, logger="statbench-test"):
        for model in (BM25(), QueryLikelihood(mu=50.0)):
            model.index(FR_DOCS, _ctx(tmp_path))
    assert builds == [] and cache.take_events() == []
    logged = [r.getMessage() for r in caplog.records]
    assert f"bm25: reusing index {tmp_path / 'models' / 'model' / 'bm25s'}" in logged
    assert f"ql: reusing index {tmp_path / 'models' / 'model' / 'ql-index'}" in logged


# --- checkpoints: resume from the newest valid one --------------------------------------


def test_training_resumes_from_the_last_valid_checkpoint(tmp_path, bert_dir, builds, caplog, monkeypatch):
    """Killed while writing epoch 2: epoch 1 is valid, epoch 2 has no manifest and a staging
    folder is left. The next run discards epoch 2, resumes after epoch 1 and ends with the
    very rankings of an uninterrupted training."""
    from statbench.models.dense import training

    clean = _lsi_train(tmp_path / "clean", bert_dir)
    root = tmp_path / "killed"
    original = training.Checkpoints.save

    def killed_at_epoch_2(self, epoch, *args, **kwargs):
        if epoch == 2:
            raise KeyboardInterrupt
        return original(self, epoch, *args, **kwargs)

    monkeypatch.setattr(training.Checkpoints, "save", killed_at_epoch_2)
    with pytest.raises(KeyboardInterrupt):
        _lsi_train(root, bert_dir)
    monkeypatch.setattr(training.Checkpoints, "save", original)
    train = root / "models" / "lsi" / "train"
    assert sorted(p.name for p in train.iterdir()) == ["epoch-1", "train_log.jsonl"]
    partial = train / "epoch-2"
    partial.mkdir()
    (partial / "model.pt").write_bytes(b"half a model")
    stale = train / ".epoch-2.staging-0123456789ab"
    stale.mkdir()
    (stale / "model.pt").write_bytes(b"half")
    builds.clear()
    cache.take_events()
    with caplog.at_level(logging.INFO):
        resumed = _lsi_train(root, bert_dir)

    assert resumed == clean
    assert cache.take_events() == [CacheEvent(str(partial), "no manifest (an interrupted or foreign write)")]
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("lsi: resuming after epoch 1 from ") for m in messages)
    assert builds == ["checkpoint"]  # epoch 2 only
    assert sorted(p.name for p in train.iterdir()) == ["epoch-2", "train_log.jsonl"]


def test_a_corrupted_finished_checkpoint_is_trained_again(tmp_path, bert_dir, builds, caplog):
    clean = _lsi_train(tmp_path, bert_dir)
    checkpoint = tmp_path / "models" / "lsi" / "train" / "epoch-2"
    reason = damage(checkpoint, "flip")
    builds.clear()
    with caplog.at_level(logging.INFO):
        again = _lsi_train(tmp_path, bert_dir)
    assert again == clean
    assert cache.take_events() == [CacheEvent(str(checkpoint), reason)]
    assert builds == ["checkpoint", "checkpoint"]  # from scratch: epochs 1 and 2
    assert not any("loaded after epoch" in r.getMessage() for r in caplog.records)


def test_fine_tuned_encodings_are_keyed_by_the_checkpoint_weights(tmp_path, bert_dir):
    """The bi-encoder's corpus encoding after fine-tuning is keyed by its checkpoint's file
    hashes, so retrained weights never reuse another training's encodings."""
    from statbench.models.dense.biencoder import all_retrievers
    from statbench.models.dense.training import Checkpoints

    cls = next(c for c in all_retrievers() if c.name == "biencoder-ft")
    model = cls(model=str(bert_dir), chunk_size=12, chunk_overlap=3, batch_size=4, epochs=1, train_batch_size=2,
                max_steps=1, warmup_steps=0, device="cpu")
    ctx = _ctx(tmp_path, name="ft")
    queries = [Query("a", FR_QUERIES[0].text), Query("b", FR_QUERIES[1].text)]
    model.train(queries, {"a": {"salaire": 1}, "b": {"loyer": 1}}, FR_DOCS, ctx)
    checkpoint = tmp_path / "models" / "ft" / "train" / "epoch-1"
    assert model._doc_fingerprint().endswith(f"+ft:{Checkpoints.fingerprint(checkpoint)}")


# --- concurrency ------------------------------------------------------------------------


def test_two_threads_build_each_entry_once(tmp_path, builds, monkeypatch):
    from statbench.models.lexical import analysis
    from statbench.models.lexical.bm25 import BM25

    original = analysis.analyse_texts

    def slow(*args, **kwargs):
        time.sleep(0.5)  # both threads are surely waiting on the same cold entry
        return original(*args, **kwargs)

    monkeypatch.setattr(analysis, "analyse_texts", slow)
    barrier = threading.Barrier(2)
    results, errors = [None, None], []

    def run(i):
        try:
            model, ctx = BM25(), _ctx(tmp_path)
            barrier.wait()
            model.index(FR_DOCS, ctx)
            results[i] = model.search(FR_QUERIES, 10, ctx)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results[0] == results[1] and results[0]
    assert sorted(builds) == ["bm25s-index", "tokens"]
    assert cache.take_events() == []


CHILD = textwrap.dedent("""
    import sys, time
    from statbench.storage.cache import CacheEntry
    log, start = sys.argv[1], float(sys.argv[2])
    original = CacheEntry.build
    def build(self):
        with open(log, "a") as handle:
            handle.write(self.kind + "\\n")
        time.sleep(0.5)  # the other process arrives while this one builds
        return original(self)
    CacheEntry.build = build
    while time.time() < start:
        time.sleep(0.01)
    from statbench.commands.cli import cli
    cli(sys.argv[3:])
""")


@pytest.mark.parametrize("model", ["bm25", "word2vec"])
def test_two_processes_started_together_on_a_cold_cache(stard_dir, tmp_path, model):
    """Two identical `statbench run`s at the same moment: both succeed with identical run
    files, and each model artefact is built once (the second process waits, then reuses)."""
    log = tmp_path / "builds.txt"
    start = time.time() + 3
    extra = ["--param", "min_count=1", "--param", "dim=8"] if model == "word2vec" else []
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(log), str(start), "run", "--task", "stard", "--model", model,
                          *extra, "--data-dir", str(stard_dir), "--output", str(tmp_path / f"out{i}"), "--no-progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "STATBENCH_WORKERS": "1"})
        for i in range(2)
    ]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err.decode()[-3000:]
    assert (tmp_path / "out0" / "run.trec").read_bytes() == (tmp_path / "out1" / "run.trec").read_bytes()
    built = log.read_text().split()
    mine = {"bm25": ["bm25s-index", "tokens"], "word2vec": ["tokens", "word-vectors"]}[model]
    assert sorted(kind for kind in built if kind in mine) == mine


# --- parameters -------------------------------------------------------------------------


def _cls(name: str):
    from statbench.registry.plugins import get_registry

    registry = get_registry()
    kind = "rerankers" if name in ("cross-encoder", "monot5", "minilm-ce") else "retrievers"
    return registry.get(kind, name).cls


REFUSED = [
    ("bm25", {"k1": math.nan}, "parameter k1=nan for bm25: not a finite number; expected a finite float >= 0"),
    ("bm25", {"k1": math.inf}, "parameter k1=inf for bm25: not a finite number; expected a finite float >= 0"),
    ("bm25", {"k1": -0.1}, "parameter k1=-0.1 for bm25: below the minimum; expected a finite float >= 0"),
    ("bm25", {"b": 1.5}, "parameter b=1.5 for bm25: above the maximum; expected a finite float >= 0 and <= 1"),
    ("bm25", {"method": "bm42"}, "parameter method='bm42' for bm25: not an allowed value; "
                                 "expected one of 'lucene', 'robertson', 'atire', 'bm25l', 'bm25+'"),
    ("bm25", {"analyzer": "icu"}, "parameter analyzer='icu' for bm25: not an allowed value; "
                                  "expected one of 'default', 'statbench'"),
    ("ql", {"mu": 0.0}, "parameter mu=0.0 for ql: too small; expected a finite float > 0"),
    ("ql", {"mu": -math.inf}, "parameter mu=-inf for ql: not a finite number; expected a finite float > 0"),
    ("ql", {"backend": "bm25s"}, "parameter backend='bm25s' for ql: not an allowed value; "
                                 "expected one of 'native', 'lucene'"),
    ("tfidf", {"segmenter": "pkuseg"}, "parameter segmenter='pkuseg' for tfidf: not an allowed value; "
                                       "expected one of 'jieba-rs', 'jieba'"),
    ("doct5query", {"n": 0}, "parameter n=0 for doct5query: below the minimum; expected an int >= 1"),
    ("doct5query", {"k1": math.nan}, "parameter k1=nan for doct5query: not a finite number; expected a finite float >= 0"),
    ("word2vec", {"dim": 0}, "parameter dim=0 for word2vec: below the minimum; expected an int >= 1"),
    ("word2vec", {"seed": -1}, "parameter seed=-1 for word2vec: below the minimum; expected an int >= 0 and <= 4294967295"),
    ("fasttext", {"min_n": 5, "max_n": 3}, "parameters min_n=5, max_n=3 for fasttext: min_n must not exceed max_n"),
    ("biencoder", {"pooling": "sum"}, "parameter pooling='sum' for biencoder: not an allowed value; "
                                      "expected one of 'auto', 'mean', 'cls', 'max'"),
    ("biencoder", {"device": "gpu"}, "parameter device='gpu' for biencoder: not an allowed value; "
                                     "expected one of 'auto', 'cpu', 'mps', 'cuda', 'cuda:N'"),
    ("biencoder", {"chunk_size": 20, "chunk_overlap": 20}, "parameter chunk_overlap=20 for biencoder: not below "
                                                           "chunk_size=20; expected an int >= 0 and < chunk_size"),
    ("biencoder", {"batch_size": 0}, "parameter batch_size=0 for biencoder: below the minimum; expected an int >= 1"),
    ("camembert", {"pooling": "sum"}, "parameter pooling='sum' for camembert: not an allowed value; "
                                      "expected one of 'auto', 'mean', 'cls', 'max'"),
    ("biencoder-ft", {"lr": 0.0}, "parameter lr=0.0 for biencoder-ft: too small; expected a finite float > 0"),
    ("biencoder-ft", {"epochs": 0}, "parameter epochs=0 for biencoder-ft: below the minimum; expected an int >= 1"),
    ("biencoder-ft", {"temperature": math.nan}, "parameter temperature=nan for biencoder-ft: not a finite number; "
                                                "expected a finite float > 0"),
    ("lsi", {"dropout": 1.0}, "parameter dropout=1.0 for lsi: too large; expected a finite float >= 0 and < 1"),
    ("lsi", {"dropout": -0.1}, "parameter dropout=-0.1 for lsi: below the minimum; expected a finite float >= 0 and < 1"),
    ("lsi", {"epochs": 0}, "parameter epochs=0 for lsi: below the minimum; expected an int >= 1"),
    ("colbertv2", {"nbits": 3}, "parameter nbits=3 for colbertv2: not an allowed value; expected one of 1, 2, 4, 8"),
    ("cross-encoder", {"max_length": 0}, "parameter max_length=0 for cross-encoder: below the minimum; "
                                         "expected an int >= 1"),
    ("minilm-ce", {"device": "tpu"}, "parameter device='tpu' for minilm-ce: not an allowed value; "
                                     "expected one of 'auto', 'cpu', 'mps', 'cuda', 'cuda:N'"),
]


@pytest.mark.parametrize("name, params, message", REFUSED, ids=[f"{n}-{'-'.join(p)}" for n, p, _ in REFUSED])
def test_bad_parameter_values_are_refused_naming_model_parameter_and_allowed_values(name, params, message):
    with pytest.raises(ParamError) as caught:
        _cls(name)(**params)
    assert str(caught.value) == message


def test_presets_keep_the_declared_constraints_and_defaults():
    lsi, minilm, monot5, camembert = _cls("lsi"), _cls("minilm-ce"), _cls("monot5"), _cls("camembert-ft")
    assert lsi.defaults()["epochs"] == 10 and lsi.param_specs()["epochs"].min == 1
    assert minilm.defaults()["model"] == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    assert monot5.defaults()["model"] == "castorini/monot5-base-msmarco"
    assert camembert.defaults()["pooling"] == "mean" and camembert.param_specs()["pooling"].choices
    assert _cls("bm25")(preset="gdsr").params == {**_cls("bm25").defaults(), "preset": "gdsr", "k1": 2.5, "b": 0.2}


def test_every_built_in_parameter_is_described():
    from statbench.registry.plugins import get_registry

    registry = get_registry()
    seen = 0
    for kind in ("retrievers", "rerankers"):
        for name in registry.names(kind):
            cls = registry.get(kind, name).cls
            if not cls.__module__.startswith("statbench.models."):
                continue
            for key, spec in cls.param_specs().items():
                assert spec.description, f"{name}: parameter {key} has no description"
                seen += 1
    assert seen > 200


def test_nan_from_the_command_line_is_refused_before_any_work(stard_dir, isolated_cache):
    from click.testing import CliRunner
    from statbench.commands.cli import cli

    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--param", "k1=nan",
                                      "--data-dir", str(stard_dir), "--no-progress"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: parameter k1='nan' for bm25: not a finite number; expected a finite float >= 0"]
    assert not any(p.name in ("tokens", "models", "runs") for p in Path(isolated_cache).iterdir())
