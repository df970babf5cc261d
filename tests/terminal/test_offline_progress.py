"""Long work (issue 26): progress bars whose ETA works when advances are far apart, a
measured warning before an encoding or a reranking that will take minutes, and fine-tuned
models on a task with no training split saying so."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

import tiny_models
from fixture_data import write_uk_pool
from statbench.api import Document, Query, RunContext
from statbench.errors import StatbenchError


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_eta_is_known_after_the_first_advance_even_when_advances_are_minutes_apart():
    from rich.console import Console

    from statbench.terminal.progress import add_bar, make_progress

    clock = Clock()
    bars = make_progress(Console(file=io.StringIO()), get_time=clock)
    advance = add_bar(bars, "encoding corpus", 1000)
    task = bars.tasks[0]
    clock.now = 40.0  # a CPU encoding group: more than rich's default 30 s window
    advance(100)
    assert task.time_remaining == pytest.approx(360.0)
    clock.now = 80.0
    advance(100)
    assert task.time_remaining == pytest.approx(320.0)


def test_duration_text():
    from statbench.terminal.progress import duration_text

    assert [duration_text(s) for s in (45, 1260, 7500)] == ["about 45 s", "about 21 min", "about 2 h 05 min"]


class FakeEncoder:
    """Costs ``per_text`` seconds of the fake clock per text; records every call."""

    def __init__(self, clock: Clock, per_text: float, events: list):
        self.clock, self.per_text, self.events = clock, per_text, events

    def encode(self, texts, batch_size=32, **kwargs):
        import numpy as np

        self.events.append(("encode", len(texts)))
        self.clock.now += self.per_text * len(texts)
        return np.ones((len(texts), 4), dtype=np.float32)


def _ctx(tmp_path: Path, events: list) -> RunContext:
    log = logging.getLogger("statbench.test.forecast")

    class Record(logging.Handler):
        def emit(self, record):
            events.append((record.levelname, record.getMessage()))

    log.handlers[:] = [Record()]
    log.setLevel(logging.INFO)

    def progress(description, total=None):
        events.append(("bar", description, total))
        return lambda n=1: events.append(("advance", n))

    return RunContext(task_name="stard", language="zh", cache_dir=tmp_path, cache_root=tmp_path, data_checksum="x",
                      log=log, progress=progress)


@pytest.fixture
def encoder_model(tmp_path, monkeypatch):
    from statbench.models.dense import biencoder as dense

    clock = Clock()
    monkeypatch.setattr(dense, "_clock", clock)
    (tmp_path / "m").mkdir()
    return dense.BiEncoder(model=str(tmp_path / "m"), device="cpu"), clock


def test_a_long_encoding_says_so_before_it_starts_with_a_measured_estimate(encoder_model, tmp_path):
    model, clock = encoder_model
    events: list = []
    texts = [f"article {i} " * 5 for i in range(2000)]  # one length: the estimate is n x the sample's rate
    vectors = model._encode(FakeEncoder(clock, 0.25, events), texts, _ctx(tmp_path, events), "encoding corpus")
    assert vectors.shape == (2000, 4)
    warnings = [e for e in events if e[0] == "WARNING"]
    assert len(warnings) == 1
    assert warnings[0][1] == ("biencoder: encoding corpus (2000 texts on cpu) will take about 8 min (measured on a "
                              "warm-up batch of 32 texts: 8.0 s; the bar shows the ETA as it goes)")
    first_bar = next(i for i, e in enumerate(events) if e[0] == "bar")
    assert events.index(warnings[0]) < first_bar  # said before the work starts
    assert events[:2] == [("encode", 2), ("encode", 32)]  # the warm-up: setup, then the timed batch
    assert sum(e[1] for e in events if e[0] == "advance") == 2000


def test_short_encodings_do_no_warm_up_and_say_nothing(encoder_model, tmp_path):
    model, clock = encoder_model
    events: list = []
    model._encode(FakeEncoder(clock, 0.25, events), ["short text"] * 100, _ctx(tmp_path, events), "encoding queries")
    assert not [e for e in events if e[0] == "WARNING"]
    assert [e for e in events if e[0] == "encode"] == [("encode", 100)]


def test_a_fast_encoding_is_measured_but_not_announced(encoder_model, tmp_path):
    model, clock = encoder_model
    events: list = []
    model._encode(FakeEncoder(clock, 0.01, events), ["a text"] * 2000, _ctx(tmp_path, events), "encoding corpus")
    assert not [e for e in events if e[0] == "WARNING"]  # 20 s: under the 3-minute threshold


def test_a_long_reranking_says_so_after_its_first_group(tmp_path, monkeypatch):
    from statbench.models.cross_encoders import cross_encoder

    clock = Clock()
    monkeypatch.setattr(cross_encoder, "_clock", clock)

    class Slow(cross_encoder.CrossEncoderReranker):
        def ready(self):
            pass

        def score_pairs(self, pairs):
            clock.now += 0.1 * len(pairs)
            return [0.0] * len(pairs)

    (tmp_path / "m").mkdir()
    reranker = Slow(model=str(tmp_path / "m"), device="cpu")
    corpus = {f"d{i}": Document(f"d{i}", f"text {i}") for i in range(100)}
    queries = [Query(f"q{i}", f"query {i}") for i in range(30)]
    events: list = []
    reranker.rerank(queries, {q.id: list(corpus) for q in queries}, corpus, _ctx(tmp_path, events))
    warnings = [e[1] for e in events if e[0] == "WARNING"]
    assert warnings == ["cross-encoder: scoring 3000 pairs on cpu will take about 5 min (measured on the first 128 "
                        "pairs: 12.8 s; the bar shows the ETA as it goes)"]


def test_fine_tuning_on_a_task_without_training_split_says_so(tmp_path):
    passages = {"p-a": "A person who contravenes a direction commits an offence.",
                "p-b": "A local authority may give a direction to close premises."}
    query = "What if a direction is contravened?"
    root = write_uk_pool(tmp_path / "uk", passages, {"Q1": query}, "Q1\t0\tp-a\t3\n", "Q1 Q0 p-a 1 3.0 hand\n")
    folder = tiny_models.bert(tmp_path / "bert", list(passages.values()) + [query])
    with pytest.raises(StatbenchError) as caught:
        tiny_models.run(root, "biencoder-ft", {"model": str(folder), "chunk_size": 12, "chunk_overlap": 3},
                        task="ukstat", splits=None, output=tmp_path / "out")
    message = str(caught.value)
    assert "no training queries: task 'ukstat' has no training split" in message
    assert "no relevant article" not in message
    assert not (tmp_path / "out").exists()


def test_training_pairs_without_queries_names_the_missing_split():
    from statbench.models.dense.training import training_pairs

    with pytest.raises(StatbenchError, match=r"^no training queries: task 'ukstat' has no training split "):
        training_pairs([], {}, {"a"}, "ukstat")
    with pytest.raises(StatbenchError, match=r"no relevant article in the corpus"):
        training_pairs([Query("q", "text")], {"q": {"b": 1}}, {"a"}, "stard")
