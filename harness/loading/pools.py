"""Frozen candidate pools: TREC run files (top-k per query) with a sha256 sidecar.

A pool ``NAME`` of task ``T`` lives in ``<data dir>/pools/NAME.trec`` (shipped with the
data) or ``<cache>/pools/T/NAME.trec`` (built by ``statbench pool build``), next to
``NAME.json``: its sha256, the retriever configuration, the command, the data checksum.
Rerankers compared on a pool therefore see identical candidates. A pool whose file no
longer matches its sidecar, or that was built on other data, is an error when it is used.

This module reads and verifies pools; building one runs a retriever, so it lives with the
runs (:mod:`statbench.run.pool_build`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from statbench.contract.records import Document, Query, Ranking
from statbench.data.checksum import file_sha256
from statbench.data.dataio import read_json
from statbench.data.runfile import read_run
from statbench.data.validation import EXAMPLES
from statbench.errors import DataFormatError, StatbenchError, one_line
from statbench.registry.plugins import get_registry
from statbench.storage.paths import cache_root

POOL_SUFFIX = ".trec"
SIDECAR_SUFFIX = ".json"


def cache_pool_dir(task_name: str) -> Path:
    return cache_root() / "pools" / task_name


def pool_files(task_name: str, data_folder: Path | None) -> dict[str, Path]:
    """Pool name -> file; a pool shipped in the data folder wins over a built one."""
    found: dict[str, Path] = {}
    for folder in (cache_pool_dir(task_name), *([data_folder / "pools"] if data_folder else [])):
        if folder.is_dir():
            for path in sorted(folder.glob(f"*{POOL_SUFFIX}")):
                found[path.stem] = path
    return found


def sidecar_path(pool_path: Path) -> Path:
    return pool_path.with_suffix(SIDECAR_SUFFIX)


class Pools(Mapping):
    """The task's pools, read and verified on first access (``TaskData.pools``).

    Every pool is listed (so ``--pool`` names it in errors) even when it is broken; using
    a broken one raises the reason, and an intact one is checked against the corpus."""

    def __init__(self, task_name: str, paths: dict[str, Path], corpus: Mapping[str, Document],
                 queries: Mapping[str, Query], data_checksum: str, log: logging.Logger,
                 declared: Mapping[str, int] | None = None):
        self.task_name, self._corpus, self._queries, self._log = task_name, corpus, queries, log
        #: pool name -> the depth the task declares for it (``TaskInfo.pools``)
        self._declared = dict(declared or {})
        self._data_checksum = data_checksum
        self.info: dict[str, dict] = {}
        self._errors: dict[str, str] = {}
        self._loaded: dict[str, dict[str, Ranking]] = {}
        for name, path in paths.items():
            self.info[name], error = self._describe(name, path)
            if error:
                self._errors[name] = error

    def _describe(self, name: str, path: Path) -> tuple[dict, str | None]:
        info = {"path": str(path), "sha256": None, "sidecar": None}
        try:
            actual = file_sha256(path)
        except OSError as exc:  # a folder named NAME.trec, an unreadable file: this pool only
            return info, f"pool {name!r}: {path} cannot be read ({exc.strerror or exc})"
        info["sha256"] = actual
        side = sidecar_path(path)
        built_here = path.parent == cache_pool_dir(self.task_name)  # `pool build` always writes a full sidecar
        if not side.is_file():
            if built_here:
                return info, (f"pool {name!r}: {path} has lost its sidecar {side.name}, so it cannot be verified; "
                              f"rebuild it with `statbench pool build --task {self.task_name} --name {name} ...`")
            return info, None  # a pool shipped without a sidecar: its checksum is recorded as found
        default = f"statbench pool build --task {self.task_name} --name {name} ..."
        try:  # a damaged sidecar breaks this pool only, never a run that does not use it
            meta = read_json(side, expect=dict)
        except (StatbenchError, OSError, RecursionError) as exc:
            return info, f"pool {name!r}: its sidecar {side} is unreadable ({one_line(exc)}); rebuild it with `{default}`"
        info.update({"sidecar": str(side), **{k: meta.get(k) for k in ("retriever", "depth", "command", "created", "n_queries")}})
        command = meta.get("command")
        rebuild = f"rebuild it with `{command if isinstance(command, str) and command else default}`"
        if meta.get("sha256") != actual:
            return info, (f"pool {name!r}: {path} has sha256 {actual} but its sidecar {side.name} records "
                          f"{str(meta.get('sha256'))[:80]}; the pool file was modified: restore it or {rebuild}")
        recorded = meta.get("data_checksum")
        if recorded is None and built_here:
            return info, (f"pool {name!r}: its sidecar {side.name} records no data checksum, so the data it was "
                          f"built on cannot be checked: {rebuild}")
        if recorded is not None and recorded != self._data_checksum:
            return info, (f"pool {name!r} ({path}) was built on other task data (data checksum "
                          f"{str(recorded)[:12]}…, now {self._data_checksum[:12]}…): {rebuild}")
        depth = meta.get("depth")
        if depth is not None and (type(depth) is not int or depth < 1) or (depth is None and built_here):
            return info, f"pool {name!r}: its sidecar {side.name} records depth {depth!r}, not a whole number >= 1: {rebuild}"
        return info, None

    def __getitem__(self, name: str) -> dict[str, Ranking]:
        if name in self._errors:
            raise StatbenchError(self._errors[name])
        if name not in self.info:
            raise KeyError(name)
        if name not in self._loaded:
            info = self.info[name]
            self._loaded[name] = self._read(name, Path(info["path"]))
            self._log.info("pool %s: %s (sha256 %s, %s)", name, info["path"], info["sha256"],
                           "verified against its sidecar" if info["sidecar"] else "no sidecar")
        return self._loaded[name]

    def __contains__(self, name) -> bool:
        return name in self.info  # a broken pool is listed; using it raises the reason

    def _read(self, name: str, path: Path) -> dict[str, Ranking]:
        rankings = read_run(path)
        info = self.info[name]
        deepest = max((len(r) for r in rankings.values()), default=0)
        if info["sidecar"] is not None:  # the file matches the sidecar's checksum: it must match its record too
            depth, n_queries = info.get("depth"), info.get("n_queries")
            if deepest > depth:
                raise DataFormatError(path, f"pool {name!r}: a query holds {deepest} candidates but its sidecar "
                                      f"records depth {depth}; the pool and its sidecar disagree: rebuild it")
            if type(n_queries) is int and n_queries != len(rankings):
                raise DataFormatError(path, f"pool {name!r}: {len(rankings)} queries but its sidecar records "
                                      f"{n_queries}; the pool and its sidecar disagree: rebuild it")
        declared = self._declared.get(name)
        if declared is not None and max(deepest, info.get("depth") or 0) < declared:
            self._log.warning("pool %s: top %d candidates per query, but task %s declares this pool with %d: "
                              "rerankers compared on it see fewer candidates than the task's figures assume",
                              name, max(deepest, info.get("depth") or 0), self.task_name, declared)
        for kind, ids, known in (
            ("query", list(rankings), self._queries),
            ("document", sorted({d for r in rankings.values() for d, _ in r}), self._corpus),
        ):
            unknown = [i for i in ids if i not in known]
            if unknown and kind == "document":
                raise DataFormatError(
                    path, f"pool {name!r}: {len(unknown)} document id(s) not in the corpus "
                    f"(e.g. {', '.join(unknown[:EXAMPLES])}); it was built on another corpus"
                )
            if unknown:  # queries dropped while loading (e.g. empty) are simply not reranked
                self._log.warning("pool %s: %d query id(s) not in the task ignored (e.g. %s)", name, len(unknown),
                                  ", ".join(unknown[:EXAMPLES]))
                for qid in unknown:
                    del rankings[qid]
        return rankings

    def __iter__(self):
        return iter(self.info)

    def __len__(self):
        return len(self.info)


def attach_pools(task_name: str, data, data_folder: Path | None, log: logging.Logger) -> None:
    """Fill ``data.pools`` from the pool files found (the runner does this after every
    load, for every task: pools built with ``statbench pool build`` and pools shipped in
    the data folder's ``pools/``)."""
    data.pools = Pools(task_name, pool_files(task_name, data_folder), data.corpus, data.queries, data.checksum, log,
                       _declared_depths(task_name))


def _declared_depths(task_name: str) -> dict[str, int]:
    """Pool name -> depth, of the pools the task declares (none when it cannot be told)."""
    try:
        return {p.name: int(p.depth) for p in get_registry().get("tasks", task_name).cls.task_info().pools}
    except Exception:  # noqa: BLE001 - an ambiguous or unknown name declares nothing here
        return {}
