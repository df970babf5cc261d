"""`statbench distill` end to end with tiny random teacher/student cross-encoders on a
miniature ukstat (substitute layout): the data set, the evaluation exclusion, the teacher
cache, resumable training, and the student in the rerankers on a frozen pool."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

import tiny_models
from fixture_data import write_jsonl

# Two evaluation instruments (their judged passages e-*) and training passages t-*.
PASSAGES = {
    "e-1": "A person who contravenes a direction of the local authority commits an offence.",
    "e-2": "The local authority may give a direction to close premises.",
    "e-3": "The Landfill Regulations are amended by inserting a new regulation on waste.",
    "t-1": "The Scottish Ministers must prepare a circular economy strategy and publish it.",
    "t-2": "A charity trustee is disqualified if convicted of a specified offence.",
    "t-3": "The register of charities must record the disqualification of a trustee.",
    "t-4": "Regulations under this section may make provision about fees and charges.",
    "t-5": "A local authority must publish a strategy on waste and recycling of packaging.",
    "t-6": "This Act comes into force on the day after Royal Assent and extends to Scotland.",
    "t-7": "An offence under this section is punishable on summary conviction by a fine.",
}
EVAL = [("Q1", "What if a direction of the local authority is contravened?", "inst:eval-a"),
        ("Q2", "How are the Landfill Regulations amended?", "inst:eval-b")]
QRELS = "Q1\t0\te-1\t3\nQ1\t0\te-2\t2\nQ2\t0\te-3\t3\n"
TRAINING = [
    {"qid": "T1", "query": "Who must prepare a circular economy strategy?", "instrument": "inst:circ", "passages": ["t-1"]},
    {"qid": "T2", "query": "When is a charity trustee disqualified?", "passages": ["t-2"]},
    {"qid": "T3", "query": "What is the penalty for an offence on summary conviction?", "passages": ["t-7"]},
    {"qid": "T4", "query": "must a local authority publish a waste strategy", "instrument": "inst:waste"},
    {"qid": "T4b", "query": "Must a local authority  publish a waste strategy", "instrument": "inst:waste"},
]


def _texts():
    return list(PASSAGES.values()) + [q for _, q, _ in EVAL] + [t["query"] for t in TRAINING]


@pytest.fixture
def uk_dir(tmp_path) -> Path:
    root = tmp_path / "uk"
    sub = root / "substitute"
    write_jsonl(sub / "corpus.jsonl", [{"id": k, "content": v} for k, v in PASSAGES.items()])
    write_jsonl(sub / "queries.jsonl", [{"qid": q, "query": text} for q, text, _ in EVAL])
    (sub / "qrels.tsv").write_text(QRELS)
    (sub / "query_instrument.tsv").write_text("".join(f"{q}\t{inst}\n" for q, _, inst in EVAL))
    return root


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    base = tmp_path_factory.mktemp("distill-models")
    return {"teacher": tiny_models.cross_encoder(base / "teacher", _texts(), seed=1),
            "student": tiny_models.cross_encoder(base / "student", _texts(), seed=2)}


def _queries(tmp_path, rows=TRAINING, name="train.jsonl") -> Path:
    return write_jsonl(tmp_path / name, rows)


def _request(uk_dir, models, queries, output, **settings):
    from statbench.models.distillation.distill import DistillRequest
    from statbench.models.distillation.train import TrainSettings

    return DistillRequest(task="ukstat", teacher="cross-encoder", teacher_params={"model": str(models["teacher"])},
                          queries=queries, depth=3, student=str(models["student"]), data_dir=uk_dir, output=output,
                          val_share=0.34, settings=TrainSettings(epochs=2, batch_size=2, lr=1e-3, max_length=64,
                                                                 device="cpu", **settings))


def _distill(request):
    from statbench.models.distillation.distill import distill

    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    log = logging.getLogger("statbench.test.distill")
    log.setLevel(logging.INFO)
    handler = Collect(logging.INFO)
    log.addHandler(handler)
    train_log = logging.getLogger("statbench")
    train_log.addHandler(handler)
    try:
        report = distill(request, log, lambda description, total=None: (lambda n=1: None))
    finally:
        log.removeHandler(handler)
        train_log.removeHandler(handler)
    return report, lines


def test_distill_end_to_end_then_the_student_reranks_a_frozen_ukstat_pool(uk_dir, models, tmp_path, monkeypatch):
    import torch
    from sentence_transformers import CrossEncoder

    out = tmp_path / "out"
    report, lines = _distill(_request(uk_dir, models, _queries(tmp_path), out))
    assert sorted(p.name for p in out.iterdir()) == ["distill.json", "loss_curve.tsv", "model", "pairs.jsonl"]
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    # evaluation passages never reach the teacher or the student
    assert not {p["doc_id"] for p in pairs} & {"e-1", "e-2", "e-3"}
    # T4 and T4b differ only in case/space: their pairs are kept once
    assert {p["qid"] for p in pairs} == {"T1", "T2", "T3", "T4"}
    assert report["queries"]["duplicates_dropped"] == 1 and report["pairs"]["duplicates_dropped"] == 0
    assert len({(p["qid"], p["doc_id"]) for p in pairs}) == len(pairs) == report["pairs"]["total"]
    assert all(sum(p["qid"] == q for p in pairs) <= 3 for q in ("T1", "T2", "T3", "T4"))  # --depth 3
    # the scores are the teacher's raw logits for (query, passage)
    teacher = CrossEncoder(str(models["teacher"]), device="cpu")
    expected = teacher.predict([(p["query"], PASSAGES[p["doc_id"]]) for p in pairs], activation_fn=torch.nn.Identity())
    assert [p["score"] for p in pairs] == pytest.approx([float(x) for x in expected], abs=1e-5)
    # whole queries are held out for validation: no query on both sides
    by_split = {s: {p["qid"] for p in pairs if p["split"] == s} for s in ("train", "val")}
    assert by_split["val"] and not by_split["train"] & by_split["val"]
    assert report["pairs"]["val"] == sum(p["split"] == "val" for p in pairs)

    curve = (out / "loss_curve.tsv").read_text().splitlines()
    assert curve[0] == "epoch\tstep\tsplit\tmse"
    assert {row.split("\t")[2] for row in curve[1:]} == {"train", "val"}
    assert [row.split("\t")[0] for row in curve[1:] if "\tval\t" in row] == ["1.0", "2.0"]

    student = CrossEncoder(str(out / "model"), device="cpu")
    val = [p for p in pairs if p["split"] == "val"]
    predicted = [float(x) for x in student.predict([(p["query"], PASSAGES[p["doc_id"]]) for p in val],
                                                    activation_fn=torch.nn.Identity())]
    mse = sum((a - p["score"]) ** 2 for a, p in zip(predicted, val)) / len(val)
    assert report["agreement"]["val"]["mse"] == pytest.approx(mse, rel=1e-4)
    from scipy import stats

    assert report["agreement"]["val"]["pearson"] == pytest.approx(
        stats.pearsonr([p["score"] for p in val], predicted)[0], abs=1e-4)
    assert report["holdout"] == {"passages": 3, "instruments": 2, "queries": 2,
                                 "instruments_from": str(uk_dir / "substitute" / "query_instrument.tsv")}

    # the student in the cross-encoder reranker and in distilled-modernbert, on a frozen ukstat pool
    (uk_dir / "pools").mkdir()
    (uk_dir / "pools" / "hand.trec").write_text("Q1 Q0 t-5 1 3.0 hand\nQ1 Q0 e-2 2 2.0 hand\nQ1 Q0 e-1 3 1.0 hand\n"
                                                "Q2 Q0 e-3 1 1.0 hand\n")
    want = {d: float(s) for d, s in zip(["t-5", "e-2", "e-1"], student.predict(
        [(EVAL[0][1], PASSAGES[d]) for d in ["t-5", "e-2", "e-1"]], activation_fn=torch.nn.Identity()))}
    for reranker, model in (("cross-encoder", out / "model"), ("distilled-modernbert", out)):
        outcome, _ = tiny_models.run(uk_dir, task="ukstat", pool="hand", reranker=reranker,
                                     reranker_params={"model": str(model), "max_length": 64}, splits=None,
                                     output=tmp_path / f"run-{reranker}")
        got = {r.split()[2]: float(r.split()[4]) for r in outcome.run_path.read_text().splitlines()
               if r.startswith("Q1 ")}
        assert got == pytest.approx(want, abs=1e-4)

    # a rerun asks the teacher nothing and does not train again
    from statbench.models.cross_encoders import cross_encoder

    def refuse(*args, **kwargs):
        raise AssertionError("the teacher was queried again")

    monkeypatch.setattr(cross_encoder.CrossEncoderReranker, "rerank", refuse)
    again, lines = _distill(_request(uk_dir, models, _queries(tmp_path), out))
    assert again["teacher_queries_sent"] == 0 and report["teacher_queries_sent"] == 4
    assert any("distill: loaded after epoch 2" in line and "finished earlier" in line for line in lines)
    assert (out / "pairs.jsonl").read_text().splitlines() == [
        json.dumps(p, ensure_ascii=False) for p in pairs]


def test_training_resumes_from_the_last_sealed_epoch_and_ends_as_an_uninterrupted_run(
        uk_dir, models, tmp_path, monkeypatch):
    from safetensors.torch import load_file

    from statbench.models.dense import training

    request = _request(uk_dir, models, _queries(tmp_path), tmp_path / "whole")
    _distill(request)
    whole = load_file(str(tmp_path / "whole" / "model" / "model.safetensors"))

    monkeypatch.setenv("STATBENCH_CACHE", str(tmp_path / "cache2"))
    original = training.Checkpoints.save

    def save_then_die(self, epoch, *args, **kwargs):
        path = original(self, epoch, *args, **kwargs)
        if epoch == 1:
            raise KeyboardInterrupt("killed after epoch 1")
        return path

    monkeypatch.setattr(training.Checkpoints, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        _distill(_request(uk_dir, models, _queries(tmp_path), tmp_path / "resumed"))
    assert not (tmp_path / "resumed").exists()  # nothing half-written
    monkeypatch.setattr(training.Checkpoints, "save", original)
    report, lines = _distill(_request(uk_dir, models, _queries(tmp_path), tmp_path / "resumed"))
    assert any("distill: resuming after epoch 1" in line for line in lines)
    resumed = load_file(str(tmp_path / "resumed" / "model" / "model.safetensors"))
    assert resumed.keys() == whole.keys()
    for name in whole:
        assert resumed[name].float().allclose(whole[name].float(), atol=1e-5), name
    assert [r for r in report["loss_curve"] if "val_loss" in r][0]["epoch"] == 1.0


@pytest.mark.parametrize("row, message", [
    ({"qid": "X", "query": "who may close premises", "instrument": "inst:eval-a"},
     "training query 'X' is anchored in evaluation instrument 'inst:eval-a'; evaluation instruments are excluded"),
    ({"qid": "X", "query": "who may close premises", "passages": ["t-1", "e-2"]},
     "training query 'X' is anchored in passage 'e-2' of an evaluation instrument"),
    ({"qid": "X", "query": "who may close premises"}, "training query 'X' names no anchor"),
    ({"qid": "X", "query": "How are the LANDFILL Regulations amended?", "passages": ["t-4"]},
     "training query 'X' repeats an evaluation query's text"),
    ({"qid": "X", "query": "who may close premises", "passages": ["nope"]},
     "anchor passage 'nope' is not in the task's corpus"),
])
def test_distill_refuses_training_queries_anchored_in_evaluation_material(uk_dir, models, tmp_path, row, message):
    from statbench.commands.cli import cli

    queries = _queries(tmp_path, [TRAINING[0], row])
    result = CliRunner().invoke(cli, ["distill", "--task", "ukstat", "--data-dir", str(uk_dir), "--teacher",
                                      "cross-encoder", "--teacher-param", f"model={models['teacher']}", "--queries",
                                      str(queries), "--student", str(models["student"]), "--output",
                                      str(tmp_path / "out"), "--no-progress"])
    assert result.exit_code == 2, result.output
    error = result.output.strip()
    assert "\n" not in error and message in error and f"{queries}, line 2" in error
    assert not (tmp_path / "out").exists()


def test_an_instrument_anchor_needs_the_evaluation_instruments(uk_dir, models, tmp_path):
    from statbench.errors import StatbenchError

    (uk_dir / "substitute" / "query_instrument.tsv").unlink()
    with pytest.raises(StatbenchError, match="evaluation instruments are unknown here"):
        _distill(_request(uk_dir, models, _queries(tmp_path), tmp_path / "out"))


def test_queries_generated_with_doc2query_are_anchored_in_training_passages(uk_dir, models, tmp_path):
    generator = tiny_models.t5(tmp_path / "t5", _texts())
    request = _request(uk_dir, models, None, tmp_path / "out")
    request.generate, request.generator = 4, str(generator)
    report, _ = _distill(request)
    pairs = [json.loads(line) for line in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()]
    assert report["queries"]["generated"] >= 1 and report["queries"]["from_file"] == 0
    assert not {p["doc_id"] for p in pairs} & {"e-1", "e-2", "e-3"}


def test_distilled_student_reranker_without_a_student_says_how_to_make_one(tmp_path):
    from statbench.errors import StatbenchError
    from statbench.models.distillation.student import DistilledStudentReranker

    with pytest.raises(StatbenchError, match=r"^distilled-modernbert: no distilled student given; train one with "
                                             r"`statbench distill .*--reranker-param model=DIR$"):
        DistilledStudentReranker()
    with pytest.raises(StatbenchError, match="holds no distilled student"):
        DistilledStudentReranker(model=str(tmp_path))
