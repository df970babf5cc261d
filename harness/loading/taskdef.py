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

from statbench.contract.records import Measure, TaskData
from statbench.contract.task import Task
from statbench.contract.taskinfo import PoolInfo, Protocol, Published, PublishedData, TaskInfo
from statbench.data.checksum import bytes_sha256, text_sha256
from statbench.data.dataio import open_data, os_reason
from statbench.errors import DataFormatError, DownloadError, StatbenchError
from statbench.storage.paths import DATA_ENV, cache_root, data_root


@cache
def task_schema() -> dict:
    return json.loads(resources.files("statbench").joinpath("schemas/task.schema.json").read_text("utf-8"))


def load_definition(package: str, filename: str) -> dict:
    """Read and validate a task definition shipped in ``package``.

    Validation against task.schema.json needs jsonschema (a quarter of a second to import),
    and every task module is imported by ``statbench --help``: a definition that passed
    validation is therefore remembered by the sha256 of the schema and of its text (an empty
    stamp file in the cache), and only a definition never validated before imports
    jsonschema. A changed definition or schema has another digest and is validated again."""
    text = resources.files(package).joinpath(filename).read_text("utf-8")
    definition = json.loads(text)
    stamp = _validated_stamp(text)
    if stamp is None or not stamp.is_file():
        errors = list(_task_validator().iter_errors(definition))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "(root)"
            raise StatbenchError(f"task definition {package}/{filename}: {where}: {first.message}")
    problem = older_split_declarations_problem(definition)
    if problem:
        raise StatbenchError(f"task definition {package}/{filename}: {problem}")
    if stamp is not None and not stamp.is_file():
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        except OSError:  # a read-only cache: validate again next time
            pass
    return definition


def older_split_declarations_problem(d: dict) -> str:
    """What contradicts ``protocols`` in the split fields of an older definition ('' when
    nothing does). ``protocols`` is the one declaration of which splits run together; older
    definitions also said so in ``splits.default``, ``splits.optional`` and
    ``splits.official.split``, which are accepted only when they agree with it."""
    splits = d.get("splits", {})
    protocols = {name: list(spec["splits"]) for name, spec in d.get("protocols", {}).items()}
    if not protocols:
        return ""
    default = d.get("default_protocol") or next(iter(protocols))
    if "default" in splits and list(splits["default"]) != protocols.get(default):
        return (f"splits/default {splits['default']} is not the splits of the default protocol {default!r} "
                f"({protocols.get(default)}): declare the splits once, in protocols")
    declared = {name for names in protocols.values() for name in names}
    unknown = [name for name in splits.get("optional", []) if name not in declared]
    if unknown:
        return f"splits/optional names {unknown[0]!r}, a split of no protocol ({', '.join(sorted(declared))})"
    official = splits.get("official")
    if official:
        named = protocols.get("official", [])
        if len(named) != 1 or official.get("split", named[0]) != named[0]:
            wanted = f" ({official['split']!r})" if "split" in official else ""
            return f"splits/official needs a protocol 'official' of exactly one split{wanted}"
    return ""


@cache
def _task_validator():
    import jsonschema

    return jsonschema.Draft202012Validator(task_schema())


@cache
def _schema_digest() -> str:
    raw = resources.files("statbench").joinpath("schemas/task.schema.json").read_bytes()
    return bytes_sha256(raw)


def _validated_stamp(text: str) -> Path | None:
    try:
        digest = text_sha256(f"{_schema_digest()}\0{text}")
        return cache_root() / "validated-definitions" / digest
    except (OSError, ValueError):
        return None


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


def info_from_definition(d: dict) -> TaskInfo:
    """The :class:`TaskInfo` a JSON definition declares (validated by task.schema.json)."""
    splits = d.get("splits", {})
    protocols = tuple(Protocol(name=name, splits=tuple(spec["splits"]), description=spec.get("description", ""))
                      for name, spec in d.get("protocols", {}).items())
    sizes = dict(splits.get("subsets", {}))
    if splits.get("corpus_size"):
        sizes["corpus"] = splits["corpus_size"]
    return TaskInfo(
        name=d["name"],
        language=d["language"],
        analyzer=d.get("analyzer", ""),
        description=d["title"],
        version=str(d.get("version", "1")),
        measures=tuple(Measure(m["label"], m["ir_measure"]) for m in d["measures"]),
        primary_measure=d.get("primary_measure", ""),
        relevance={int(grade): meaning for grade, meaning in d["relevance"].items()},
        protocols=protocols,
        default_protocol=d.get("default_protocol", protocols[0].name if protocols else ""),
        depth=d["depth"],
        pools=tuple(PoolInfo(name=name, description=spec.get("description", ""), depth=spec.get("depth", 100),
                             retriever=spec.get("retriever", ""), build=spec.get("build", ""))
                    for name, spec in d.get("pools", {}).items()),
        published=tuple(Published(label=label, source=spec["source"], scores=dict(spec["scores"]),
                                  family=spec.get("family", ""), protocol=spec.get("protocol", ""),
                                  pool=spec.get("pool", ""),
                                  data=_figure_data(d.get("published_data"), spec.get("data")))
                        for label, spec in d.get("published", {}).items()),
        sizes=sizes,
        paper=d.get("paper", ""),
        licence=d.get("licence", ""),
        evaluation=d.get("protocol", ""),
        corpus_unit=d.get("corpus_unit", "documents"),
    )


def _figure_data(default: dict | None, own: dict | None):
    """The data one published figure was measured on: the task's ``published_data`` with
    the figure's own ``data`` fields over it (None when neither declares any)."""
    if default is None and own is None:
        return None
    return PublishedData.from_json({**(default or {}), **(own or {})})


class DefinedTask(Task):
    """A task whose metadata comes from a JSON definition next to its loader."""

    definition_file: ClassVar[str]
    definition: ClassVar[dict]

    def __init_subclass__(cls, **kwargs):
        if "definition_file" in cls.__dict__:
            d = load_definition(cls.__module__.rpartition(".")[0] or cls.__module__, cls.definition_file)
            cls.definition = d
            cls.info = info_from_definition(d)
        super().__init_subclass__(**kwargs)

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
            if "glob" in spec:
                continue  # a set of files: locate_file_sets
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

    def locate_file_sets(self, data_dir: Path | None) -> dict[str, list[Path]]:
        """Each declared file set (``"glob": "queries/R*.jsonl"``) -> its files, sorted by
        name. A required set that matches nothing raises the missing-files message; each
        match must be a readable regular file."""
        explicit = data_dir is not None
        root = self.data_folder(data_dir)
        if explicit:
            _check_folder(root)
        found: dict[str, list[Path]] = {}
        missing: list[dict] = []
        for spec in self.definition["files"]:
            if "glob" not in spec:
                continue
            paths = sorted(root.glob(spec["glob"])) if root.is_dir() else []
            for path in paths:
                with open_data(path):  # one line for a directory, a broken link, an unreadable file
                    pass
            if paths:
                found[spec["name"]] = paths
            elif not spec.get("optional"):
                missing.append(spec)
        if missing:
            raise DownloadError(self._missing_message(root, missing, explicit))
        return found

    def _download(self, spec: dict, root: Path, log: logging.Logger) -> Path | None:
        dest = root / spec["locations"][0]
        log.info("downloading %s from %s", spec["name"], spec["url"])
        from statbench.data.download import fetch  # urllib and ssl only when something is downloaded

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
            where = root / spec["locations"][0] if "locations" in spec else f"{root}/{spec['glob']} (one or more files)"
            lines.append(f"  - {spec['name']}: fetch {source}{checksum} and place it at {where}")
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
