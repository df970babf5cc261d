"""ColBERTv2 on colbert-ai 0.2.22 with a tiny random checkpoint: the first stage builds and
searches colbert-ai's PLAID index (cached, verified, rebuilt when a setting changes), the
reranker scores with colbert-ai's Checkpoint and MaxSim.

colbert-ai compiles its C++ extensions on first use (about 2 minutes on a fresh machine,
then cached in torch's extension folder)."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
from pathlib import Path

import pytest

import tiny_models
from fixture_data import write_uk_pool
from lexical_fixtures import context
from statbench.storage import cache
from statbench.api import Document, Query
from statbench.storage.cache import MANIFEST, CacheEvent
from statbench.errors import StatbenchError, UnknownNameError
from statbench.contract.params import ParamError
from statbench.storage.paths import cache_root

WORDS = ("landlord tenant rent deposit employer wage contract licence council offence penalty direction premises "
         "vehicle school child pension tax court appeal notice planning water housing").split()


def _passages(n: int = 48) -> dict[str, str]:
    rng = random.Random(7)
    return {f"p{i:02d}": " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14))) + "." for i in range(n)}


PASSAGES = _passages()
QUERIES = {"Q1": "rent deposit of the tenant", "Q2": "council licence offence penalty", "Q3": "employer wage contract"}
QRELS = {"Q1": ("p00", "p01"), "Q2": ("p02",), "Q3": ("p03", "p04")}
PARAMS = {"doc_maxlen": 32, "query_maxlen": 16, "batch_size": 16}


@pytest.fixture(scope="module")
def colbert_dir(tmp_path_factory) -> Path:
    return tiny_models.colbert(tmp_path_factory.mktemp("m") / "colbert", [*PASSAGES.values(), *QUERIES.values()])


@pytest.fixture
def ukstat_dir(tmp_path) -> Path:
    """A ukstat data folder in the substitute layout, with a frozen pool ``hand``."""
    return write_uk_pool(
        tmp_path / "uk", PASSAGES, QUERIES,
        "".join(f"{q}\t0\t{d}\t{3 - i}\n" for q, docs in QRELS.items() for i, d in enumerate(docs)),
        "Q1 Q0 p05 1 3.0 hand\nQ1 Q0 p00 2 2.0 hand\nQ1 Q0 p09 3 1.0 hand\nQ3 Q0 p03 1 1.0 hand\n")


def _run(data_dir, **kwargs):
    return tiny_models.run(data_dir, task="ukstat", splits=None, **kwargs)


def _ranked(outcome) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for line in outcome.run_path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        out.setdefault(qid, []).append((doc, float(score)))
    return out


def _entries(root: Path | None = None) -> list[Path]:
    folder = (root or cache_root()) / "colbert-plaid"
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")) if folder.is_dir() else []


def _colbert_ai_search(entry: Path, checkpoint: Path, k: int, tmp: Path) -> dict[str, list[tuple[str, float]]]:
    """What colbert-ai's own Searcher answers over the cached index, mapped to corpus ids by hand."""
    from colbert import Searcher
    from colbert.infra import ColBERTConfig, Run, RunConfig

    ids = json.loads((entry / "ids.json").read_text())
    config = ColBERTConfig(query_maxlen=PARAMS["query_maxlen"], doc_maxlen=PARAMS["doc_maxlen"], dim=16)
    with Run().context(RunConfig(nranks=1, avoid_fork_if_possible=True, root=str(tmp))):
        searcher = Searcher(index="plaid", index_root=str(entry), checkpoint=str(checkpoint),
                            collection=list(PASSAGES.values()), config=config, verbose=0)
        out = {}
        for qid, text in QUERIES.items():
            pids, _, scores = searcher.search(text, k=k)
            out[qid] = [(ids[pid], score) for pid, score in zip(pids, scores)]
    return out


def test_first_stage_is_colbert_ai_plaid_search(ukstat_dir, colbert_dir, tmp_path, monkeypatch, capfd):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    method, environ = multiprocessing.get_start_method(), dict(os.environ)
    state = random.getstate()

    outcome, lines = _run(ukstat_dir, model="colbertv2", params={"model": str(colbert_dir), **PARAMS})
    # colbert-ai's prints, bars and faiss's k-means log: in the debug log; the console has only
    # statbench's own warning that the fixture's sizes differ from ukstat's declaration
    out, err = capfd.readouterr()
    assert out == "" and err.startswith("WARNING  ukstat: the loaded data differs from the task's declaration")
    assert all(line.startswith(" ") for line in err.splitlines()[1:]), err

    assert outcome.results["model"]["family"] == "late-interaction"
    [entry] = _entries()
    assert f"colbertv2: built PLAID index {entry} (48 passages" in "\n".join(lines)
    manifest = json.loads((entry / MANIFEST).read_text())
    assert manifest["kind"] == "colbert-plaid"
    assert {k: manifest["key"][k] for k in ("nbits", "doc_maxlen", "kmeans_niters", "colbert_ai")} == \
           {"nbits": 2, "doc_maxlen": 32, "kmeans_niters": 4, "colbert_ai": "0.2.22"}
    assert {"ids.json", "meta.json", "plaid/metadata.json", "plaid/centroids.pt", "plaid/ivf.pid.pt",
            "plaid/0.codes.pt", "plaid/0.residuals.pt", "plaid/doclens.0.json"} <= set(manifest["files"])
    assert json.loads((entry / "ids.json").read_text()) == list(PASSAGES)

    ranked = _ranked(outcome)
    assert set(ranked) == set(QUERIES) and all(doc in PASSAGES for r in ranked.values() for doc, _ in r)
    expected = _colbert_ai_search(entry, colbert_dir, 100, tmp_path / "reference")  # ukstat's depth
    for qid in QUERIES:
        assert [d for d, _ in ranked[qid]] == [d for d, _ in expected[qid]]
        assert [s for _, s in ranked[qid]] == pytest.approx([s for _, s in expected[qid]], abs=1e-5)

    assert list(cwd.iterdir()) == []  # colbert-ai wrote nothing where it was started
    assert multiprocessing.get_start_method() == method  # importing colbert-ai forces 'spawn'
    assert dict(os.environ) == environ  # nor CUDA_VISIBLE_DEVICES, TOKENIZERS_PARALLELISM...
    assert random.getstate() == state  # indexing reseeds the generators


def test_the_index_is_reused_and_rebuilt_when_nbits_changes(ukstat_dir, colbert_dir):
    params = {"model": str(colbert_dir), **PARAMS}
    first, _ = _run(ukstat_dir, model="colbertv2", params=params)
    [entry] = _entries()
    stamp = {p: p.stat().st_mtime_ns for p in entry.rglob("*")}

    shutil.rmtree(cache_root() / "runs")  # the run itself is cached too: search again
    again, lines = _run(ukstat_dir, model="colbertv2", params=params, output=first.results_path.parent / "again")
    assert f"colbertv2: reusing PLAID index {entry} (48 passages; no re-indexing)" in lines
    assert not any("built PLAID index" in line for line in lines)
    assert {p: p.stat().st_mtime_ns for p in entry.rglob("*")} == stamp
    assert _ranked(again) == _ranked(first)
    assert again.results["throughput"]["corpus_index_cached"] == 1

    shutil.rmtree(cache_root() / "runs")
    _, lines = _run(ukstat_dir, model="colbertv2", params={**params, "nbits": 1}, output=first.results_path.parent / "nb1")
    assert any(line.startswith("colbertv2: built PLAID index") and "nbits=1" in line for line in lines)
    assert len(_entries()) == 2


def _index(root: Path, checkpoint: Path, docs, log_name="model"):
    from statbench.models.late_interaction.colbert import ColBERTRetriever

    model, ctx = ColBERTRetriever(model=str(checkpoint), **PARAMS), context(root, name=log_name)
    model.index(docs, ctx)
    return model, ctx


DOCS = [Document(k, v) for k, v in PASSAGES.items()]


def test_a_damaged_index_is_rebuilt_never_searched(tmp_path, colbert_dir, caplog):
    model, ctx = _index(tmp_path, colbert_dir, DOCS)
    clean = model.search([Query(k, v) for k, v in QUERIES.items()], 10, ctx)
    [entry] = _entries(tmp_path)
    residuals = entry / "plaid" / "0.residuals.pt"
    data = bytearray(residuals.read_bytes())
    data[len(data) // 2] ^= 0x01
    residuals.write_bytes(bytes(data))
    cache.take_events()

    model, ctx = _index(tmp_path, colbert_dir, DOCS)
    assert cache.take_events() == [CacheEvent(str(entry), "plaid/0.residuals.pt: sha256 differs from the manifest "
                                                          "(corrupted)")]
    assert model.stats["corpus_index_cached"] == 0
    assert model.search([Query(k, v) for k, v in QUERIES.items()], 10, ctx) == clean


def test_an_index_sealed_for_other_passages_is_refused(tmp_path, colbert_dir):
    """A manifest re-sealed over a changed ids.json (a hand-edited entry) is not trusted."""
    from statbench.storage.cache import CacheEntry

    _index(tmp_path, colbert_dir, DOCS)
    [entry] = _entries(tmp_path)
    key = json.loads((entry / MANIFEST).read_text())["key"]
    (entry / "ids.json").write_text(json.dumps(list(PASSAGES)[::-1]))
    staging = entry.with_name("resealed")
    shutil.copytree(entry, staging)
    (staging / MANIFEST).unlink()
    CacheEntry(entry, "colbert-plaid", key)._seal(staging)
    shutil.rmtree(entry)
    staging.rename(entry)
    with pytest.raises(StatbenchError, match=r"^colbertv2: cached PLAID index .* does not match: its ids.json lists 48 "
                                             r"passages that are not the corpus's 48; delete that folder and run again$"):
        _index(tmp_path, colbert_dir, DOCS)


def test_a_passage_id_outside_the_index_is_one_clear_error(tmp_path, colbert_dir, monkeypatch):
    model, ctx = _index(tmp_path, colbert_dir, DOCS)
    [entry] = _entries(tmp_path)
    monkeypatch.setattr(type(model._searcher), "dense_search", lambda self, Q, k=10, **kw: ([3, 48], [1, 2], [2.0, 1.0]))
    with pytest.raises(StatbenchError) as caught:
        model.search([Query("Q1", QUERIES["Q1"])], 10, ctx)
    assert str(caught.value) == (f"colbertv2: colbert-ai returned passage id 48, not one of the 48 passages (0..47) "
                                 f"of index {entry}")
    for bad in (-1, True, 2.0):
        with pytest.raises(StatbenchError, match="colbert-ai returned passage id"):
            model._plaid.doc_id(bad)
    assert model._plaid.doc_id(47) == "p47"


def test_reranker_on_a_frozen_pool_is_maxsim_over_colbert_ai_checkpoint_tensors(ukstat_dir, colbert_dir):
    from colbert.infra import ColBERTConfig
    from colbert.modeling.checkpoint import Checkpoint

    outcome, _ = _run(ukstat_dir, pool="hand", reranker="colbertv2", reranker_params={"model": str(colbert_dir), **PARAMS})
    assert outcome.results["pool"] == "hand"
    ranked = _ranked(outcome)
    assert {q: sorted(d for d, _ in r) for q, r in ranked.items()} == {"Q1": ["p00", "p05", "p09"], "Q3": ["p03"]}

    config = ColBERTConfig(query_maxlen=PARAMS["query_maxlen"], doc_maxlen=PARAMS["doc_maxlen"], dim=16,
                           checkpoint=str(colbert_dir))
    reference = Checkpoint(str(colbert_dir), colbert_config=config, verbose=0)
    for qid, ranking in ranked.items():
        q = reference.queryFromText([QUERIES[qid]])[0]
        docs = reference.docFromText([PASSAGES[d] for d, _ in ranking], keep_dims=False)  # (tokens, dim) each
        by_hand = [float((q @ d.T).max(dim=1).values.sum()) for d in docs]
        assert [s for _, s in ranking] == pytest.approx(by_hand, abs=1e-5)
        assert by_hand == sorted(by_hand, reverse=True)


def test_too_small_a_corpus_for_plaid_kmeans_is_one_clear_error(tmp_path, colbert_dir):
    tiny = [Document(f"d{i}", PASSAGES[f"p{i:02d}"]) for i in range(4)]
    with pytest.raises(StatbenchError, match=r"^colbertv2: the corpus \(4 passages\) has too few token vectors for "
                                             r"colbert-ai's PLAID k-means"):
        _index(tmp_path, colbert_dir, tiny)
    assert not _entries(tmp_path)  # nothing half-built left as an entry


@pytest.mark.parametrize("params, message", [
    ({"nbits": 3}, "parameter nbits=3 for colbertv2: not an allowed value; expected one of 1, 2, 4, 8"),
    ({"ncells": -1}, "parameter ncells=-1 for colbertv2: below the minimum; expected an int >= 0"),
    ({"ndocs": "many"}, "parameter ndocs='many' for colbertv2: expected an int >= 0"),
    ({"kmeans_niters": 0}, "parameter kmeans_niters=0 for colbertv2: below the minimum; expected an int >= 1"),
    ({"centroid_score_threshold": "1.5"}, "parameter centroid_score_threshold='1.5' for colbertv2: not an allowed "
                                          "value; expected 'auto' or a number from 0 to 1"),
    ({"doc_maxlen": 2}, "parameter doc_maxlen=2 for colbertv2: below the minimum; expected an int >= 3"),
])
def test_bad_parameters_are_refused(params, message):
    from statbench.models.late_interaction.colbert import ColBERTRetriever

    with pytest.raises(ParamError) as caught:
        ColBERTRetriever(**params)
    assert str(caught.value) == message


def test_search_knobs_default_to_colbert_ai_choices():
    from statbench.models.late_interaction.colbert import ColBERTReranker, ColBERTRetriever

    assert ColBERTRetriever()._knobs() == {"ncells": None, "ndocs": None, "centroid_score_threshold": None}
    assert ColBERTRetriever(ncells=3, ndocs=512, centroid_score_threshold="0.3")._knobs() == \
           {"ncells": 3, "ndocs": 512, "centroid_score_threshold": 0.3}
    with pytest.raises(UnknownNameError):  # colbert-ai places the model itself
        ColBERTReranker(device="cpu")
    assert "nbits" not in ColBERTReranker.param_specs()


def test_nbits_the_checkpoint_cannot_pack_is_refused_before_indexing(tmp_path):
    from statbench.models.late_interaction.colbert import ColBERTRetriever

    folder = tiny_models.colbert(tmp_path / "dim8", list(PASSAGES.values()), dim=8)
    model = ColBERTRetriever(model=str(folder), nbits=2)
    with pytest.raises(ParamError) as caught:
        model.index(DOCS, context(tmp_path))
    assert str(caught.value) == ("parameter nbits=2 for colbertv2: the checkpoint's 8-dimensional vectors are not a "
                                 "multiple of 8*nbits; expected one of 1")
