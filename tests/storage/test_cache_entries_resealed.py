"""Red-team (R7): frozen pools, split-run cache entries, models fetch / progress."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError, StatbenchError
from statbench.storage.paths import cache_root
from statbench.run.runner import execute
from statbench.run.request import RunRequest

from recipe_fixtures import fake  # noqa: F401 - the fixture
from ukstat_fixtures import uk_dir  # noqa: F401 - the fixture

LOG = logging.getLogger("test")
NO_PROGRESS = lambda description, total=None: (lambda n=1: None)  # noqa: E731


def _build(stard_dir, name="small", depth=5, params=("k1=0.9",)):
    from statbench.run.pool_build import build_pool

    return build_pool("stard", "bm25", list(params), name, depth, stard_dir, LOG, NO_PROGRESS)


def _reseal(path: Path, **changes) -> None:
    """Edit a built pool's sidecar so that its checksum matches the (edited) pool file."""
    from statbench.data.checksum import file_sha256

    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["sha256"] = file_sha256(path)
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    side.write_text(json.dumps(meta))


# --- pools -------------------------------------------------------------------------------


@pytest.mark.parametrize("sidecar", ["{not json", "[1, 2]", {"data_checksum": 7}, {"depth": "5"}])
def test_a_damaged_pool_sidecar_breaks_its_pool_only(stard_dir, tmp_path, sidecar):
    path, _ = _build(stard_dir)
    if isinstance(sidecar, dict):
        _reseal(path, **sidecar)  # the checksum matches, a field is of the wrong type
    else:
        path.with_suffix(".json").write_text(sidecar)
    # a run that does not use the pool is not stopped by it
    outcome = execute(RunRequest(task="stard", model="bm25", data_dir=stard_dir, output=tmp_path / "a"), LOG,
                      NO_PROGRESS)
    assert outcome.record.all_queries
    # the pool itself is refused in one line
    with pytest.raises(StatbenchError, match="pool 'small'"):
        execute(RunRequest(task="stard", pool="small", data_dir=stard_dir, output=tmp_path / "b"), LOG, NO_PROGRESS)


def test_a_sidecar_whose_data_checksum_was_removed_is_not_trusted(stard_dir, tmp_path):
    path, _ = _build(stard_dir)
    _reseal(path, data_checksum=None)
    with pytest.raises(StatbenchError, match="records no data checksum"):
        execute(RunRequest(task="stard", pool="small", data_dir=stard_dir, output=tmp_path / "b"), LOG, NO_PROGRESS)


def test_a_pool_edited_with_its_checksum_resealed_must_still_match_its_record(stard_dir, tmp_path):
    path, meta = _build(stard_dir, depth=2)
    lines = path.read_text().splitlines()
    # one query's lines removed, the sidecar's checksum edited to match
    first = lines[0].split()[0]
    path.write_text("".join(line + "\n" for line in lines if line.split()[0] != first))
    _reseal(path)
    with pytest.raises(DataFormatError, match=f"queries but its sidecar records {meta['n_queries']}"):
        execute(RunRequest(task="stard", pool="small", data_dir=stard_dir, output=tmp_path / "b"), LOG, NO_PROGRESS)
    # a candidate added beyond the recorded depth
    extra = lines[0].split()
    doc_ids = {line.split()[2] for line in lines if line.split()[0] == first}
    from fixture_data import STARD_CORPUS

    other = next(str(d["id"]) for d in STARD_CORPUS if str(d["id"]) not in doc_ids)
    block = [line for line in lines if line.split()[0] == first]
    added = f"{first} Q0 {other} {len(block) + 1} -1000.0 {extra[5]}"
    rest = [line for line in lines if line.split()[0] != first]
    path.write_text("".join(line + "\n" for line in [*block, added, *rest]))
    _reseal(path)
    with pytest.raises(DataFormatError, match="holds 3 candidates but its sidecar records depth 2"):
        execute(RunRequest(task="stard", pool="small", data_dir=stard_dir, output=tmp_path / "c"), LOG, NO_PROGRESS)


def test_a_pool_shallower_than_the_task_declares_says_so(uk_dir, tmp_path, caplog):  # noqa: F811
    from statbench.run.pool_build import build_pool

    build_pool("ukstat", "bm25", [], None, 3, uk_dir, LOG, NO_PROGRESS)
    with caplog.at_level(logging.WARNING, logger="test"):
        execute(RunRequest(task="ukstat", pool="bm25", data_dir=uk_dir, output=tmp_path / "p"), LOG, NO_PROGRESS)
    assert "top 3 candidates per query, but task ukstat declares this pool with 100" in caplog.text


def test_two_builds_of_one_pool_at_once_leave_a_pool_and_sidecar_that_agree(stard_dir, monkeypatch):
    import statbench.run.pool_build as pools
    from statbench.data.checksum import file_sha256

    path = cache_root() / "pools" / "stard" / "small.trec"
    sha_of = {}
    for k1 in ("0.9", "1.5"):  # each alone first: its file's checksum (and its split runs cached: quick below)
        _build(stard_dir, params=(f"k1={k1}",))
        sha_of[file_sha256(path)] = float(k1)
    assert len(sha_of) == 2
    real = pools.write_run
    wrote_first = threading.Event()

    def slow_write(path, rankings, tag):
        real(path, rankings, tag)
        if not wrote_first.is_set():  # the first build dawdles between its pool and its sidecar
            wrote_first.set()
            threading.Event().wait(0.5)

    monkeypatch.setattr(pools, "write_run", slow_write)
    errors = []

    def build(k1):
        try:
            _build(stard_dir, params=(f"k1={k1}",))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    first = threading.Thread(target=build, args=("0.9",))
    first.start()
    assert wrote_first.wait(60)
    second = threading.Thread(target=build, args=("1.5",))
    second.start()
    first.join()
    second.join()
    assert not errors
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["sha256"] == file_sha256(path)
    assert meta["retriever"]["params"]["k1"] == sha_of[meta["sha256"]]  # the sidecar describes the file's build


def test_pool_list_shows_a_damaged_sidecar_as_a_row(stard_dir):
    path, _ = _build(stard_dir)
    _build(stard_dir, name="other")
    path.with_suffix(".json").write_text("{not json")
    result = CliRunner().invoke(cli, ["pool", "list", "--task", "stard", "--data-dir", str(stard_dir)])
    assert result.exit_code == 0, result.output
    assert "unreadable" in result.output and "other" in result.output and "ok" in result.output


# --- split-run cache entries -------------------------------------------------------------


def _reseal_entry(entry: Path, edit) -> None:
    """Edit an entry's files with ``edit(entry)``, then re-seal its manifest to match them."""
    from statbench.storage.cache import sha256_file

    edit(entry)
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"] = {p.name: {"size": p.stat().st_size, "sha256": sha256_file(p)}
                         for p in sorted(entry.iterdir()) if p.name != "manifest.json"}
    (entry / "manifest.json").write_text(json.dumps(manifest))


def _ties(entry: Path) -> None:  # what a run of format 3 could hold: equal scores at float32
    lines = (entry / "run.trec").read_text().splitlines()
    (entry / "run.trec").write_text("".join(" ".join([*line.split()[:4], "1.0", line.split()[5]]) + "\n"
                                            for line in lines))


def _tag(entry: Path) -> None:
    lines = (entry / "run.trec").read_text().splitlines()
    (entry / "run.trec").write_text("".join(" ".join([*line.split()[:5], "statbench-other"]) + "\n" for line in lines))


def _foreign_query(entry: Path) -> None:
    text = (entry / "run.trec").read_text()
    qid = text.split()[0]
    (entry / "run.trec").write_text(text.replace(f"{qid} Q0", "zz-other Q0"))
    (entry / "index.json").write_text(json.dumps([["zz-other", 0, len(text.encode())]]))


def _index_shape(entry: Path) -> None:
    (entry / "index.json").write_text(json.dumps({"not": "a list"}))


def _stats(entry: Path) -> None:
    (entry / "stats.json").write_text(json.dumps(["not", "a", "mapping"]))


def _deeper(entry: Path) -> None:  # past stard's run depth, 200
    lines = (entry / "run.trec").read_text().splitlines()
    qid, tag = lines[0].split()[0], lines[0].split()[5]
    more = [f"{qid} Q0 extra-{i} {len(lines) + i + 1} {-1000.0 - i!r} {tag}" for i in range(201 - len(lines))]
    data = "".join(line + "\n" for line in [*lines, *more])
    (entry / "run.trec").write_text(data)
    (entry / "index.json").write_text(json.dumps([[qid, 0, len(data.encode())]]))


@pytest.mark.parametrize("edit", [_ties, _tag, _foreign_query, _index_shape, _stats, _deeper])
def test_a_split_run_entry_resealed_over_edited_files_is_rebuilt(stard_dir, tmp_path, edit):
    request = dict(task="stard", model="bm25", data_dir=stard_dir, splits=["fold-1"])
    execute(RunRequest(**request, output=tmp_path / "a"), LOG, NO_PROGRESS)
    original = (tmp_path / "a" / "run.trec").read_bytes()
    (entry,) = [p for p in (cache_root() / "runs" / "stard").iterdir() if p.is_dir()]
    _reseal_entry(entry, edit)
    outcome = execute(RunRequest(**request, output=tmp_path / "b"), LOG, NO_PROGRESS)
    assert (tmp_path / "b" / "run.trec").read_bytes() == original
    assert outcome.record.cache == {"fold-1": "miss"}
    assert [e.entry for e in outcome.record.cache_invalid] == [str(entry)]


# --- models fetch / progress -------------------------------------------------------------


def test_models_fetch_writes_no_progress_garbage_when_not_on_a_terminal(fake):  # noqa: F811
    recipe, wheels, _ = fake
    result = CliRunner().invoke(cli, ["models", "fetch", "fake", "--from", str(wheels)])
    assert result.exit_code == 0, result.output
    # one result line; no bar redraws, escape codes or the blank line rich leaves behind
    assert result.output.splitlines() == [line for line in result.output.splitlines() if line.strip()]
    assert "\x1b" not in result.output and result.output.count("\n") == 1, repr(result.output)


def test_a_model_folder_whose_weights_were_replaced_does_not_reuse_a_cached_run(stard_dir, tmp_path):
    import shutil

    import tiny_models

    pytest.importorskip("sentence_transformers")
    texts = tiny_models.stard_texts()
    first = tiny_models.cross_encoder(tmp_path / "ce-a", texts, seed=0)
    second = tiny_models.cross_encoder(tmp_path / "ce-b", texts, seed=7)
    folder = tmp_path / "my-reranker"
    shutil.copytree(first, folder)
    ran = lambda out: tiny_models.run(stard_dir, model="bm25", reranker="cross-encoder",  # noqa: E731
                                      reranker_params={"model": str(folder)}, output=tmp_path / out)[0]
    assert ran("a").record.cache == {"fold-1": "miss"}
    assert ran("a2").record.cache == {"fold-1": "hit"}  # same weights: reused
    shutil.rmtree(folder)
    shutil.copytree(second, folder)  # other weights under the same path
    assert ran("b").record.cache == {"fold-1": "miss"}


def _score_edit(how):
    def edit(entry: Path) -> None:
        scores = json.loads((entry / "scores.json").read_text())
        qid = next(iter(scores))
        if how == "drop-query":
            del scores[qid]
        elif how == "drop-measure":
            scores[qid].pop(next(iter(scores[qid])))
        elif how == "negative":
            scores[qid][next(iter(scores[qid]))] = -0.5
        elif how == "shape":
            scores = [scores]
        (entry / "scores.json").write_text(json.dumps(scores))
    return edit


@pytest.mark.parametrize("how", ["drop-query", "drop-measure", "negative", "shape"])
def test_a_scores_entry_resealed_over_an_edited_file_is_recomputed(stard_dir, tmp_path, how):
    request = dict(task="stard", model="bm25", data_dir=stard_dir, splits=["fold-1"])
    first = execute(RunRequest(**request, output=tmp_path / "a"), LOG, NO_PROGRESS)
    (entry,) = [p for p in (cache_root() / "scores" / "stard").iterdir() if p.is_dir()]
    _reseal_entry(entry, _score_edit(how))
    again = execute(RunRequest(**request, output=tmp_path / "b"), LOG, NO_PROGRESS)
    assert again.record.per_query == first.record.per_query and again.record.all_queries == first.record.all_queries
    assert [e.entry for e in again.record.cache_invalid] == [str(entry)]


# --- the load's summary ------------------------------------------------------------------


def test_a_data_file_changed_with_the_same_size_and_mtime_is_loaded_again(stard_dir, tmp_path):
    import os

    request = dict(task="stard", model="bm25", data_dir=stard_dir, splits=["fold-1"])
    first = execute(RunRequest(**request, output=tmp_path / "a"), LOG, NO_PROGRESS)
    corpus = stard_dir / "corpus.jsonl"
    text, stat = corpus.read_text(), corpus.stat()
    # one character of one document's text swapped for another: same size, same modification time
    assert "监督" in text
    corpus.write_text(text.replace("监督", "督监", 1))
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert corpus.stat().st_size == stat.st_size and corpus.stat().st_mtime_ns == stat.st_mtime_ns
    again = execute(RunRequest(**request, output=tmp_path / "b"), LOG, NO_PROGRESS)
    assert again.record.task.data_checksum != first.record.task.data_checksum
    assert again.record.cache == {"fold-1": "miss"}


def test_a_summary_resealed_with_another_data_checksum_is_not_used(stard_dir, tmp_path):
    request = dict(task="stard", model="bm25", data_dir=stard_dir, splits=["fold-1"])
    first = execute(RunRequest(**request, output=tmp_path / "a"), LOG, NO_PROGRESS)
    (entry,) = [p for p in (cache_root() / "loads" / "stard").iterdir() if p.is_dir()]

    def edit(entry: Path) -> None:
        summary = json.loads((entry / "summary.json").read_text())
        summary["checksum"] = "0" * 64
        (entry / "summary.json").write_text(json.dumps(summary))

    _reseal_entry(entry, edit)
    again = execute(RunRequest(**request, output=tmp_path / "b"), LOG, NO_PROGRESS)
    assert again.record.task.data_checksum == first.record.task.data_checksum


# --- hub ---------------------------------------------------------------------------------


@pytest.mark.parametrize("local", [True, False])
def test_a_model_that_cannot_be_loaded_is_one_short_line(tmp_path, local, monkeypatch):
    from statbench.models.shared import hub

    monkeypatch.setattr(hub, "offline_reason", lambda: None)
    name = str(tmp_path) if local else "some-org/not-a-model"

    def loader(path):
        raise ValueError("Unrecognized model in " + path + ".\nShould have a `model_type` key: " + "bert, " * 500)

    with pytest.raises(StatbenchError) as caught:
        hub.load(name, loader)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 1000 and "Unrecognized model" in message


# --- encodings ---------------------------------------------------------------------------


def _ids_dropped(entry: Path) -> None:
    ids = json.loads((entry / "ids.json").read_text())
    (entry / "ids.json").write_text(json.dumps(ids[1:]))


def _ids_repeated(entry: Path) -> None:
    ids = json.loads((entry / "ids.json").read_text())
    (entry / "ids.json").write_text(json.dumps([ids[0], *ids[:-1]]))


def _meta_other(entry: Path) -> None:
    meta = json.loads((entry / "meta.json").read_text())
    meta["settings"] = {"model": "another"}
    (entry / "meta.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("edit", [_ids_dropped, _ids_repeated, _meta_other])
def test_encodings_resealed_over_an_edited_file_are_encoded_again(tmp_path, edit):
    np = pytest.importorskip("numpy")
    pytest.importorskip("faiss")
    from statbench.models.dense.encoding_cache import EncodingCache

    calls = []

    def encode():
        calls.append(1)
        return ["a", "b", "c"], np.eye(3, dtype=np.float32), {"articles": 3}, {}

    cache = EncodingCache(tmp_path, {"model": "m", "corpus": "x"})
    assert not cache.get(encode).reused
    _reseal_entry(cache.dir, edit)
    again = EncodingCache(tmp_path, {"model": "m", "corpus": "x"}).get(encode)
    assert len(calls) == 2 and not again.reused and again.ids == ["a", "b", "c"]
