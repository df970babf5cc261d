"""The bridge to MTEB: MTEB's models as the ``mteb`` retriever, with MTEB's retrieval tasks
(``--task mteb:NAME``, tests/tasks/test_tasks_mteb.py) end to end, and ``leaderboard export
--format mteb`` read back by mteb's own reader.

Offline: the MTEB task is a tiny ``AbsTaskRetrieval`` with in-memory data registered in
mteb's task registry for the test, the model a tiny random sentence-transformers folder.
The acceptance test on real data (a cut of STARD and of the UK substitute with the MiniLM
weights) is skipped when either is absent."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mteb")

import tiny_models  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from statbench.commands.cli import cli  # noqa: E402
from repo_paths import REPO_ROOT

DOCS = [("d1", "Title one", "the tenant must pay rent monthly"), ("d2", "", "the landlord repairs the roof"),
        ("d3", "Art 3", "a contract of sale transfers ownership"), ("d4", "", "taxes are due in april"),
        ("d5", "", "the buyer pays the price on delivery"), ("d6", "Lease", "rent may be raised once a year")]
QUERIES = [("q1", "who pays rent", {"d1": 1, "d6": 1}), ("q2", "who repairs the roof", {"d2": 1, "d4": 0}),
           ("q3", "sale transfers ownership", {"d3": 2}), ("q4", "when is the price paid", {"d5": 1})]
TEXTS = [x for _, _, x in DOCS] + [t for _, t, _ in DOCS] + [q for _, q, _ in QUERIES]
TASK_NAME = "TinyStatuteRetrieval"


def tiny_task_class(name=TASK_NAME, docs=DOCS, queries=QUERIES):
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata

    class Tiny(AbsTaskRetrieval):
        metadata = TaskMetadata(
            name=name, description="a tiny statute retrieval task built in the test", reference=None,
            dataset={"path": "statbench-tests/tiny", "revision": "0123abcd"}, type="Retrieval", category="t2t",
            modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"], main_score="ndcg_at_10", date=None,
            domains=["Legal"], task_subtypes=[], license=None, annotations_creators=None, dialect=None,
            sample_creation=None, bibtex_citation=None)

        def load_data(self, num_proc=None, **kwargs):
            self.dataset = {"default": {"test": RetrievalSplitData(
                corpus=Dataset.from_list([{"id": i, "title": t, "text": x} for i, t, x in docs]),
                queries=Dataset.from_list([{"id": i, "text": q} for i, q, _ in queries]),
                relevant_docs={i: dict(r) for i, _, r in queries}, top_ranked=None)}}
            self.data_loaded = True

    return Tiny


@pytest.fixture
def tiny_task(monkeypatch):
    """The tiny task in mteb's own registry, so ``mteb.get_task`` finds it as any MTEB task."""
    registry = importlib.import_module("mteb.get_tasks")._TASKS_REGISTRY
    cls = tiny_task_class()
    monkeypatch.setitem(registry, TASK_NAME, cls)
    return cls


@pytest.fixture(scope="module")
def st_model(tmp_path_factory):
    return tiny_models.sentence_transformer(tmp_path_factory.mktemp("mteb") / "st", TEXTS)


def run(args, env=None):
    return CliRunner().invoke(cli, args, env=env)


def run_ok(args):
    result = run(args)
    assert result.exit_code == 0, result.output
    return result


def mteb_own_scores(model_folder, task_cls) -> dict:
    """What ``mteb.evaluate`` itself reports for the model folder on the task."""
    import mteb
    from mteb.models import SentenceTransformerEncoderWrapper

    model = SentenceTransformerEncoderWrapper(str(model_folder), device="cpu")
    result = mteb.evaluate(model, task_cls(), cache=None, overwrite_strategy="always", show_progress_bar=False)
    return result.task_results[0].scores["test"][0]


def test_an_mteb_task_with_an_mteb_model_gives_mtebs_own_figures(tiny_task, st_model, tmp_path):
    out = tmp_path / "out"
    run_ok(["run", "--task", f"mteb:{TASK_NAME}", "--model", "mteb", "--param", f"name={st_model}",
            "--output", str(out), "--no-progress"])
    results = json.loads((out / "results.json").read_text("utf-8"))
    assert results["task"]["name"] == f"mteb-{TASK_NAME}"
    assert results["task"]["version"] == "mteb1-0123abcd"
    assert [m["label"] for m in results["measures"]][0] == "nDCG@10"  # MTEB's main score first
    assert results["model"]["family"] == "dense"
    own = mteb_own_scores(st_model, tiny_task)
    ours = results["splits"][0]["scores"]
    for label, name in (("nDCG@10", "ndcg_at_10"), ("MAP@100", "map_at_100"), ("R@10", "recall_at_10"),
                        ("P@10", "precision_at_10"), ("MRR@10", "mrr_at_10"), ("nDCG@100", "ndcg_at_100")):
        assert ours[label] == pytest.approx(own[name], abs=1e-5), label  # MTEB rounds to 5 decimals
    # the document text is MTEB's: title + " " + text
    run_text = (out / "run.trec").read_text("utf-8")
    assert run_text.count("\n") == 4 * 6


def test_the_corpus_encoding_is_cached_under_a_key_naming_the_weights(st_model, tmp_path, isolated_cache):
    import logging

    from statbench.api import Document, Query, RunContext
    from statbench.models.mteb_bridge.retriever import MtebRetriever

    corpus = [Document(id=i, text=f"{t} {x}".strip()) for i, t, x in DOCS]
    ctx = RunContext(task_name="stard", language="zh", cache_dir=tmp_path / "m", cache_root=isolated_cache,
                     data_checksum="0" * 64, log=logging.getLogger("statbench.test"))
    first = MtebRetriever(name=str(st_model))
    first.index(corpus, ctx)
    ranked = first.search([Query(id="q1", text="who pays rent")], 3, ctx)
    second = MtebRetriever(name=str(st_model))
    second.index(corpus, ctx)
    assert (first.stats["corpus_encoding_cached"], second.stats["corpus_encoding_cached"]) == (0, 1)
    assert second.search([Query(id="q1", text="who pays rent")], 3, ctx) == ranked
    assert len(ranked["q1"]) == 3
    identity = first.config()["mteb"]
    assert identity["weights"].startswith("dir:") and identity["version"]


def test_a_registered_model_keeps_mtebs_prompts_with_weights_from_a_local_copy(st_model, monkeypatch):
    import shutil

    from statbench.models.mteb_bridge.loading import load_model, pinned_revision
    from statbench.storage.weights import local_copy_dir

    name = "intfloat/multilingual-e5-small"
    shutil.copytree(st_model, local_copy_dir(name))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model(name, pinned_revision(name, ""), "cpu")
    assert model.model_prompts == {"query": "query: ", "document": "passage: "}  # MTEB's registered prompts
    assert model.mteb_model_meta.name == name and model.mteb_model_meta.revision == pinned_revision(name, "")


def test_a_registered_model_runs_with_its_prompts_end_to_end(st_model, stard_dir, tmp_path, monkeypatch):
    """``name=HUB_ID`` of a registered model, weights from the local copy: MTEB's e5 prompts are applied
    (the run differs from the same weights loaded as a plain folder, which has no prompts)."""
    import shutil

    from statbench.storage.weights import local_copy_dir

    name = "intfloat/multilingual-e5-small"
    shutil.copytree(st_model, local_copy_dir(name))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    common = ["run", "--task", "stard", "--data-dir", str(stard_dir), "--model", "mteb", "--split", "fold-1",
              "--no-progress"]
    run_ok([*common, "--param", f"name={name}", "--output", str(tmp_path / "e5")])
    run_ok([*common, "--param", f"name={local_copy_dir(name)}", "--output", str(tmp_path / "plain")])
    with_prompts = (tmp_path / "e5" / "run.trec").read_text("utf-8")
    assert with_prompts != (tmp_path / "plain" / "run.trec").read_text("utf-8")
    record = json.loads((tmp_path / "e5" / "results.json").read_text("utf-8"))
    assert record["model"]["params"]["name"] == name


def test_mteb_task_results_make_a_board_with_significance(tiny_task, st_model, tmp_path):
    results = tmp_path / "results"
    for model, params in (("mteb", ["--param", f"name={st_model}"]), ("bm25", [])):
        run_ok(["run", "--task", f"mteb:{TASK_NAME}", "--model", model, *params, "--output", str(results / model),
                "--no-progress"])
    run_ok(["leaderboard", "build", "--results", str(results), "--out", str(tmp_path / "site")])
    page = next((tmp_path / "site").glob(f"task-mteb-{TASK_NAME.lower()}*.html"))
    assert "nDCG@10" in page.read_text("utf-8")
    table = run_ok(["leaderboard", "export", str(results), "--board", f"mteb-{TASK_NAME}", "--format", "markdown"])
    assert "baseline" in table.output and "Wilcoxon" in table.output


def test_a_revision_other_than_mtebs_is_refused():
    result = run(["run", "--task", "stard", "--model", "mteb", "--param", "name=intfloat/multilingual-e5-small",
                  "--param", "revision=deadbeef"])
    assert result.exit_code == 2
    assert "pins revision" in result.output and "deadbeef" in result.output


def test_offline_a_missing_model_says_what_to_fetch_and_where(stard_dir):
    from statbench.storage.weights import local_copy_dir

    result = run(["run", "--task", "stard", "--model", "mteb", "--param", "name=statbench-tests/not-here",
                  "--data-dir", str(stard_dir)], env={"HF_HUB_OFFLINE": "1"})
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert "not available offline" in line and "huggingface-cli download statbench-tests/not-here" in line
    assert str(local_copy_dir("statbench-tests/not-here")) in line


def test_offline_an_mteb_dataset_not_in_the_cache_says_what_to_fetch(tmp_path, st_model):
    result = run(["run", "--task", "mteb:AILAStatutes", "--model", "mteb", "--param", f"name={st_model}"],
                 env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_CACHE": str(tmp_path / "ds")})
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert "mteb/AILA_statutes" in line and "--repo-type dataset" in line and "ebfcd844" in line


def export(results_dir, out, *extra):
    return run(["leaderboard", "export", str(results_dir), "--board", f"mteb-{TASK_NAME}", "--format", "mteb",
                "--output", str(out), *extra])


def test_export_writes_mtebs_results_layout_and_mtebs_reader_loads_it(tiny_task, st_model, tmp_path):
    from mteb import ResultCache, TaskResult

    results = tmp_path / "results"
    run_ok(["run", "--task", f"mteb:{TASK_NAME}", "--model", "mteb", "--param", f"name={st_model}",
            "--output", str(results / "mteb"), "--no-progress"])
    run_ok(["run", "--task", f"mteb:{TASK_NAME}", "--model", "bm25", "--output", str(results / "bm25"),
            "--no-progress"])
    out = tmp_path / "mteb-results"
    result = export(results, out)
    assert result.exit_code == 0, result.output
    ours = json.loads((results / "mteb" / "results.json").read_text("utf-8"))["splits"][0]["scores"]
    written = out / "results" / "local__st" / "no_revision_available" / f"{TASK_NAME}.json"
    loaded = TaskResult.from_disk(written)
    assert loaded.task_name == TASK_NAME and loaded.dataset_revision == "0123abcd"
    entry = loaded.scores["test"][0]
    assert entry["main_score"] == pytest.approx(ours["nDCG@10"], abs=1e-6)
    assert entry["map_at_100"] == pytest.approx(ours["MAP@100"], abs=1e-6) and entry["hf_subset"] == "default"
    assert (written.parent / "model_meta.json").is_file()
    bm25 = out / "results" / "statbench__bm25" / "no_revision_available" / f"{TASK_NAME}.json"
    assert TaskResult.from_disk(bm25).get_score() == pytest.approx(
        json.loads((results / "bm25" / "results.json").read_text("utf-8"))["aggregate"]["nDCG@10"]["mean"], abs=1e-6)
    benchmark = ResultCache(out).load_results(include_remote=False)
    assert {m.model_name for m in benchmark.model_results} == {"local/st", "statbench/bm25"}
    assert not [p for p in out.iterdir() if p.name.startswith(".mteb-export")]  # staging removed


def test_export_refuses_a_result_that_dropped_what_mteb_scores(monkeypatch, st_model, tmp_path):
    registry = importlib.import_module("mteb.get_tasks")._TASKS_REGISTRY
    broken = [*QUERIES[:3], ("q4", "when is the price paid", {"d99": 1})]  # judges a document not in the corpus
    monkeypatch.setitem(registry, TASK_NAME, tiny_task_class(queries=broken))
    results = tmp_path / "results"
    run_ok(["run", "--task", f"mteb:{TASK_NAME}", "--model", "bm25", "--output", str(results / "bm25"),
            "--no-progress"])
    result = export(results, tmp_path / "out")
    assert result.exit_code == 2
    assert "dropped" in result.output and "not MTEB's" in result.output
    assert not (tmp_path / "out" / "results").exists()


def test_export_in_mteb_format_needs_an_output_folder(tiny_task, tmp_path):
    results = tmp_path / "results"
    run_ok(["run", "--task", f"mteb:{TASK_NAME}", "--model", "bm25", "--output", str(results / "bm25"),
            "--no-progress"])
    no_output = run(["leaderboard", "export", str(results), "--board", f"mteb-{TASK_NAME}", "--format", "mteb"])
    assert no_output.exit_code == 2 and "--output DIR" in no_output.output


def test_help_does_not_import_mteb():
    code = ("import sys; from click.testing import CliRunner; from statbench.commands.cli import cli; "
            "CliRunner().invoke(cli, ['--help']); CliRunner().invoke(cli, ['leaderboard', 'export', '--help']); "
            "print([m for m in ('mteb', 'torch', 'datasets') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- acceptance: MiniLM through MTEB = MiniLM as statbench's bi-encoder, on cuts of real data ---------------

SHARED = REPO_ROOT.parent / "shared" / "data"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
#: MiniLM reads 256 tokens; articles of at most 254 (+ [CLS], [SEP]) are one window for the bi-encoder and
#: untruncated for MTEB, so both encode the same text
WINDOW = 254


def _minilm_tokenizer():
    """MiniLM's tokenizer; the weights (found in this test's cache, else where `statbench models fetch
    minilm` put them in the user's cache, or $STATBENCH_MINILM) are linked in as the hub id's local copy, so
    both models load them by the hub id (mteb with MiniLM's registered ModelMeta)."""
    import os

    from statbench.storage.weights import local_copy_dir, resolve

    folder = Path(resolve(MINILM))
    if not folder.is_dir():
        for candidate in (os.environ.get("STATBENCH_MINILM"), "~/.cache/statbench/models/minilm"):
            if candidate and (Path(candidate).expanduser() / "config.json").is_file():
                folder = Path(candidate).expanduser()
                local_copy_dir(MINILM).parent.mkdir(parents=True, exist_ok=True)
                local_copy_dir(MINILM).symlink_to(folder, target_is_directory=True)
                break
        else:
            pytest.skip("the MiniLM weights are not on disk (`statbench models fetch minilm`)")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _write_cut(folder: Path, language: str, corpus: dict[str, str], queries: dict[str, str], qrels: dict) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}, ensure_ascii=False) + "\n"
                                                 for i, t in corpus.items()), "utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}, ensure_ascii=False) + "\n"
                                                  for i, t in queries.items()), "utf-8")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{g}" for q, docs in qrels.items() for d, g in docs.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "statbench.json").write_text(json.dumps({"language": language}), "utf-8")
    return folder


def _clip(text: str, tokenizer) -> str:
    spans = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
    return text if len(spans) <= WINDOW else text[:spans[WINDOW - 8][1]]


def _cut(texts: dict[str, str], queries: dict[str, str], qrels: dict, n_queries: int, n_docs: int, tokenizer):
    """The first ``n_queries`` queries whose relevant articles all fit one window, their articles and
    the first short articles of the corpus up to ``n_docs``."""
    def fits(doc):
        return doc in texts and len(tokenizer(texts[doc], add_special_tokens=False)["input_ids"]) <= WINDOW

    chosen, docs = {}, {}
    for qid, judged in qrels.items():
        relevant = [d for d, g in judged.items() if g > 0]
        if qid in queries and relevant and all(fits(d) for d in judged):
            chosen[qid] = judged
            docs.update({d: texts[d] for d in judged})
        if len(chosen) == n_queries:
            break
    for doc in texts:
        if len(docs) >= n_docs:
            break
        if doc not in docs and fits(doc):
            docs[doc] = texts[doc]
    return docs, {q: queries[q] for q in chosen}, chosen


def stard_cut(folder: Path, tokenizer) -> Path:
    root = SHARED / "stard" / "rebuilt"
    if not (root / "corpus.jsonl").is_file():
        pytest.skip("STARD is not in ../shared/data/stard")
    texts = {d["id"]: d["content"] for d in _read_jsonl(root / "corpus.jsonl")}
    rows = _read_jsonl(root / "queries.jsonl")
    queries = {str(r["query_id"]): r["text"] for r in rows}
    qrels = {str(r["query_id"]): {d: 1 for d in r["relevant_names"]} for r in rows}
    return _write_cut(folder, "zh", *_cut(texts, queries, qrels, 120, 400, tokenizer))


def uk_cut(folder: Path, tokenizer) -> Path:
    root = SHARED / "uk_statuterank" / "substitute"
    if not (root / "corpus.jsonl").is_file():
        pytest.skip("the UK substitute is not in ../shared/data/uk_statuterank")
    texts = {d["id"]: d["content"] for d in _read_jsonl(root / "corpus.jsonl")}
    queries = {r["qid"]: r["query"] for r in _read_jsonl(root / "queries.jsonl")}
    judged = set()
    for line in (root / "qrels.tsv").read_text("utf-8").splitlines():
        judged.add(line.split("\t")[2])
    # UK passages are long: the cut keeps each one's first window (its text up to its 254th token)
    texts = {d: _clip(t, tokenizer) for i, (d, t) in enumerate(texts.items()) if d in judged or i < 600}
    qrels: dict[str, dict[str, int]] = {}
    for line in (root / "qrels.tsv").read_text("utf-8").splitlines():
        qid, _, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(grade)
    return _write_cut(folder, "en", *_cut(texts, queries, qrels, 60, 300, tokenizer))


@pytest.mark.slow
@pytest.mark.parametrize("make_cut", [stard_cut, uk_cut], ids=["stard", "uk"])
def test_minilm_through_mteb_gives_the_biencoders_figures(make_cut, tmp_path):
    cut = make_cut(tmp_path / "cut", _minilm_tokenizer())
    task = f"beir:{cut}"
    run_ok(["run", "--task", task, "--model", "mteb", "--param", f"name={MINILM}", "--output", str(tmp_path / "mteb"),
            "--no-progress"])
    run_ok(["run", "--task", task, "--model", "biencoder", "--param", f"model={MINILM}", "--param", "pooling=auto",
            "--param", f"chunk_size={WINDOW}", "--output", str(tmp_path / "bi"), "--no-progress"])
    ours = json.loads((tmp_path / "mteb" / "results.json").read_text("utf-8"))
    theirs = json.loads((tmp_path / "bi" / "results.json").read_text("utf-8"))
    assert ours["splits"][0]["n_queries"] == theirs["splits"][0]["n_queries"] >= 50
    print({label: (ours["aggregate"][label]["mean"], theirs["aggregate"][label]["mean"]) for label in ours["aggregate"]})
    for label, figure in theirs["aggregate"].items():
        assert ours["aggregate"][label]["mean"] == pytest.approx(figure["mean"], abs=1e-4), label
    # the exported MTEB result loads with mteb's reader
    from mteb import TaskResult

    board = ours["task"]["name"]
    result = run(["leaderboard", "export", str(tmp_path), "--board", board, "--format", "mteb", "--rows", "mteb",
                  "--output", str(tmp_path / "export")])
    assert result.exit_code == 0, result.output
    written = tmp_path / "export" / "results" / MINILM.replace("/", "__")
    [path] = list(written.glob(f"*/{board}.json"))
    assert TaskResult.from_disk(path).get_score() == pytest.approx(ours["aggregate"]["nDCG@10"]["mean"], abs=1e-6)
