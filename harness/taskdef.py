"""Tasks defined by data: a JSON file per task (validated by ``task.schema.json``) plus
a small loader class that turns the task's files into :class:`~statbench.api.TaskData`."""

from __future__ import annotations

import json
import logging
import os
import stat
from functools import cache
from importlib import resources
from pathlib import Path
from typing import ClassVar

from .api import Measure, Task, TaskData
from .download import fetch
from .dataio import open_data, os_reason
from .errors import DataFormatError, DownloadError, StatbenchError
from .paths import DATA_ENV, data_root


@cache
def task_schema() -> dict:
    return json.loads(resources.files("statbench").joinpath("schemas/task.schema.json").read_text("utf-8"))


def load_definition(package: str, filename: str) -> dict:
    """Read and validate a task definition shipped in ``package``."""
    import jsonschema

    text = resources.files(package).joinpath(filename).read_text("utf-8")
    definition = json.loads(text)
    errors = list(jsonschema.Draft202012Validator(task_schema()).iter_errors(definition))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        raise StatbenchError(f"task definition {package}/{filename}: {where}: {first.message}")
    return definition


def _check_folder(root: Path) -> None:
    """``--data-dir`` must be a readable folder (one line otherwise, not a list of files)."""
    try:
        info = os.stat(root)
    except (OSError, ValueError) as exc:
        reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
        raise DataFormatError(root, f"--data-dir cannot be read: {reason}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise DataFormatError(root, "--data-dir is not a folder")


def _first_present(root: Path, locations) -> Path | None:
    """The first location holding something. Whatever is there must be a readable regular
    file: a directory, a broken link or an unreadable file in a declared location is an
    error, never a reason to fall back silently (to another location or to no file)."""
    for location in locations:
        path = root / location
        if os.path.lexists(path):
            with open_data(path):  # one-line DataFormatError for anything but a readable file
                return path
    return None


class DefinedTask(Task):
    """A task whose metadata comes from a JSON definition next to its loader."""

    definition_file: ClassVar[str]
    definition: ClassVar[dict]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "definition_file" in cls.__dict__:
            d = load_definition(cls.__module__.rpartition(".")[0] or cls.__module__, cls.definition_file)
            cls.definition = d
            cls.name = d["name"]
            cls.language = d["language"]
            cls.description = d["title"]
            cls.depth = d["depth"]
            cls.measures = tuple(Measure(m["label"], m["ir_measure"]) for m in d["measures"])
            cls.published = {k: v["scores"] for k, v in d.get("published", {}).items()}

    def data_folder(self, data_dir: Path | None) -> Path:
        """``data_dir`` when given, else this task's folder in the data cache."""
        return Path(data_dir) if data_dir is not None else data_root() / self.name

    def locate_files(self, data_dir: Path | None, log: logging.Logger, download: bool = True) -> dict[str, Path]:
        """Find each declared file under ``data_dir`` (or the data cache, downloading
        what is missing unless ``download`` is false). Missing files raise one error
        saying what to fetch and where."""
        explicit = data_dir is not None
        root = self.data_folder(data_dir)
        if explicit:
            _check_folder(root)
        found: dict[str, Path] = {}
        missing: list[dict] = []
        for spec in self.definition["files"]:
            path = _first_present(root, spec["locations"])
            if path is None and not explicit and download and spec.get("url"):
                path = self._download(spec, root, log)
            if path is not None:
                found[spec["name"]] = path
            elif not spec.get("optional"):
                missing.append(spec)
        if missing:
            raise DownloadError(self._missing_message(root, missing, explicit))
        return found

    def _download(self, spec: dict, root: Path, log: logging.Logger) -> Path | None:
        dest = root / spec["locations"][0]
        log.info("downloading %s from %s", spec["name"], spec["url"])
        try:
            return fetch(spec["url"], dest, spec.get("sha256"))
        except DownloadError as exc:
            log.warning("%s", exc)
            return None

    def _missing_message(self, root: Path, missing: list[dict], explicit: bool) -> str:
        lines = [f"task {self.name!r}: required data files not found in {root}"]
        for spec in missing:
            source = spec.get("url") or "(no public download; see the task's README)"
            checksum = f" (sha256 {spec['sha256']})" if spec.get("sha256") else ""
            lines.append(f"  - {spec['name']}: fetch {source}{checksum} and place it at {root / spec['locations'][0]}")
            if spec.get("note"):
                lines.append(f"    note: {spec['note']}")
        hint = "--data-dir" if explicit else f"--data-dir DIR or ${DATA_ENV}"
        lines.append(f"  (offline: put the files in a folder and pass {hint})")
        return "\n".join(lines)

    def file_specs(self, names) -> list[dict]:
        by_name = {spec["name"]: spec for spec in self.definition["files"]}
        return [by_name[n] for n in names]

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        raise NotImplementedError
