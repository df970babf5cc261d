"""Find results JSON files, validate each, and turn them into leaderboard rows.

A file that fails validation is reported (file and reason) and skipped whole: a row is
rendered from a fully valid file or not at all. Several files for the same row (same
model, parameters, reranker and pool) keep the newest by ``created``; the others are
reported as superseded."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from statbench.errors import StatbenchError


@dataclass
class Row:
    """One scored configuration on one task."""

    key: str  #: short stable id derived from the identity
    identity: dict  #: model name + params, reranker name + params, pool
    path: Path  #: the results file
    results: dict
    problems: list[str] = field(default_factory=list)  #: non-fatal (e.g. run file missing)

    @property
    def task(self) -> str:
        return self.results["task"]["name"]

    @property
    def model(self) -> dict:
        return self.results["model"]

    @property
    def reranker(self) -> dict | None:
        return self.results.get("reranker")

    @property
    def pool(self) -> str | None:
        return self.results.get("pool")

    @property
    def family(self) -> str:
        """Rows with a reranker count as rerankers; otherwise the first stage's family."""
        return (self.reranker or self.model)["family"]

    @property
    def trained(self) -> bool:
        return bool(self.model.get("trained")) or bool((self.reranker or {}).get("trained"))

    @property
    def name(self) -> str:
        """Model, then ``→ reranker``; what significance tables and the baseline refer to."""
        parts = [self.model["name"]]
        if self.reranker:
            parts.append(self.reranker["name"])
        return " → ".join(parts)

    @property
    def sort_key(self) -> str:
        return json.dumps(self.identity, sort_keys=True, ensure_ascii=False)

    @property
    def multi_split(self) -> bool:
        return len(self.results["splits"]) > 1


def identity(results: dict) -> dict:
    reranker = results.get("reranker")
    return {
        "model": results["model"]["name"],
        "params": results["model"].get("params", {}),
        "reranker": None if reranker is None else {"name": reranker["name"], "params": reranker.get("params", {})},
        "pool": results.get("pool"),
    }


def row_key(ident: dict) -> str:
    text = json.dumps(ident, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def consistency_problems(results: dict) -> list[str]:
    """What the schema cannot say: every measure scored in the aggregate and each split."""
    labels = [m["label"] for m in results["measures"]]
    problems = []
    if len(set(labels)) != len(labels):
        problems.append("measures: duplicate labels")
    missing = [m for m in labels if m not in results["aggregate"]]
    if missing:
        problems.append(f"aggregate: no value for {', '.join(missing)}")
    for split in results["splits"]:
        lacking = [m for m in labels if m not in split["scores"]]
        if lacking:
            problems.append(f"splits/{split['name']}: no score for {', '.join(lacking)}")
    return problems


def find_results(root: Path) -> list[Path]:
    """Every ``*.json`` file below ``root``, in a stable order (hidden folders skipped)."""
    root = Path(root)
    if not root.is_dir():
        raise StatbenchError(f"results folder {root} does not exist")
    return sorted(
        p for p in root.rglob("*.json")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def collect(root: Path) -> tuple[dict[str, list[Row]], list[str]]:
    """Rows per board (sorted by identity) and the problems to report, one line each.

    A board is a task on one version of its data (``task.data_checksum``): scores on
    other data are not comparable, so they never share a table or a significance test.
    The version with the most rows keeps the task's name; any other gets its own board,
    named ``TASK @ data CHECKSUM[:8]``."""
    from statbench.errors import DataFormatError
    from statbench.results import load_results

    report: list[str] = []
    chosen: dict[tuple[str, str], Row] = {}
    for path in find_results(root):
        try:
            results = load_results(path)
        except DataFormatError as exc:
            report.append(f"skipped {exc}")
            continue
        problems = consistency_problems(results)
        if problems:
            report.append(f"skipped {path}: {'; '.join(problems)}")
            continue
        ident = identity(results)
        row = Row(key=row_key(ident), identity=ident, path=path, results=results)
        slot = (row.task, results["task"]["data_checksum"], row.key)
        previous = chosen.get(slot)
        if previous is None:
            chosen[slot] = row
            continue
        newer, older = (row, previous) if results["created"] > previous.results["created"] else (previous, row)
        chosen[slot] = newer
        report.append(f"skipped {older.path}: superseded by {newer.path} (same configuration, newer)")
    versions: dict[str, dict[str, int]] = {}
    for task, checksum, _ in chosen:
        versions.setdefault(task, {}).setdefault(checksum, 0)
        versions[task][checksum] += 1
    main = {task: min(counts, key=lambda c: (-counts[c], c)) for task, counts in versions.items()}
    tasks: dict[str, list[Row]] = {}
    for (task, checksum, _), row in sorted(chosen.items(), key=lambda item: (item[0][:2], item[1].sort_key)):
        board = task if checksum == main[task] else f"{task} @ data {checksum[:8]}"
        tasks.setdefault(board, []).append(row)
    return tasks, report
