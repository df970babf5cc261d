"""Seeded k-fold splits, identical for every model that runs on a task."""

from __future__ import annotations

import operator
import random

from statbench.contract.records import Split
from statbench.errors import StatbenchError, UnknownNameError


def kfold_assignment(query_ids, k: int, seed: int) -> dict[str, list[str]]:
    """``random.Random(seed).shuffle(sorted ids)``; fold i takes every k-th id from offset i.
    Only folds that get an id are made: with more folds than ids the others would be empty
    (and :func:`kfold_splits` leaves empty folds out), so ``k`` costs nothing beyond the ids."""
    try:
        folds = operator.index(k)  # an int, or a numpy integer
    except TypeError:
        folds = 0
    if isinstance(k, bool) or folds < 1:
        raise ValueError(f"k must be a whole number >= 1, not {k!r}")
    ids = sorted(query_ids, key=_natural)
    random.Random(seed).shuffle(ids)
    return {f"fold-{i + 1}": sorted(ids[i::folds], key=_natural) for i in range(min(folds, len(ids)))}


def kfold_splits(folds: dict[str, list[str]]) -> list[Split]:
    """Each fold is a test set; the other folds are its training queries (empty folds,
    possible when a small query set is laid over shipped folds, are left out)."""
    splits = []
    for name, test in folds.items():
        if not test:
            continue
        train = [q for other, ids in folds.items() if other != name for q in ids]
        splits.append(Split(name=name, test=tuple(test), train=tuple(sorted(train, key=_natural))))
    return splits


def _natural(qid: str):
    """Numeric ids in numeric order, then the others by text. A text ``str.isdigit`` accepts
    that ``int`` does not read (a superscript digit ``²``, or more digits than ``int`` reads:
    4300) sorts as text, rather than stopping the load with a traceback."""
    if qid.isdigit():
        try:
            return (0, int(qid), "")
        except ValueError:
            pass
    return (1, 0, qid)


def carve_dev(train_ids, dev_size: int, of: int, seed: int) -> tuple[list[str], list[str]]:
    """Split training ids into (train, dev): ``random.Random(seed).shuffle(sorted ids)``,
    then the first ``round(n * dev_size / of)`` ids are dev (exactly ``dev_size`` when n ==
    ``of``: BSARD's 886 -> 709/177). Both lists come back sorted."""
    ids = sorted(train_ids, key=_natural)
    random.Random(seed).shuffle(ids)
    n_dev = round(len(ids) * dev_size / of)
    return sorted(ids[n_dev:], key=_natural), sorted(ids[:n_dev], key=_natural)


def select_splits(info, data, wanted: list[str] | None = None, protocol: str | None = None) -> list:
    """The splits a run evaluates: those named (``--split``), else the protocol's (``--protocol``,
    else the task's default protocol), else, for a task that declares no protocol, the
    loader's ``splits``. Refused: unknown names, a split named twice, two splits testing
    the same query (a run file holds one ranking per query), a protocol whose splits the
    data lacks."""
    available = {s.name: s for s in data.all_splits()}
    if wanted and protocol:
        raise StatbenchError("give --split or --protocol, not both")
    if not wanted:
        chosen_protocol = info.protocol(protocol)
        if protocol and chosen_protocol is None:
            raise UnknownNameError(f"protocol of task {info.name}", protocol, [p.name for p in info.protocols])
        if chosen_protocol is None:
            return list(data.splits)
        missing = [n for n in chosen_protocol.splits if n not in available]
        if missing:
            raise StatbenchError(f"protocol {chosen_protocol.name!r} of task {info.name} needs split(s) "
                                 f"{', '.join(missing)}, which the loaded data lacks (optional files missing, or "
                                 "every query of the split dropped while loading: see the dropped items)")
        wanted = list(chosen_protocol.splits)
    for name in wanted:
        if name not in available:
            raise UnknownNameError(f"split of task {info.name}", name, available)
    if len(set(wanted)) != len(wanted):
        raise StatbenchError(f"--split: {next(n for n in wanted if wanted.count(n) > 1)!r} is named twice")
    chosen = [available[n] for n in wanted]
    seen: dict[str, str] = {}
    for split in chosen:
        for qid in split.test:
            if qid in seen:
                raise StatbenchError(f"--split {seen[qid]} and --split {split.name} both test query {qid!r}; "
                                     "run them separately")
            seen[qid] = split.name
    return chosen


def canonical_selection(info, protocol: str | None, splits) -> tuple[str | None, tuple[str, ...]]:
    """One spelling per set of evaluated splits, for every identity a run has (its output
    folder, its results' protocol): ``--split dev`` on a task whose ``official`` protocol
    is exactly ``dev`` is ``--protocol official``; the task's default protocol, named or
    not, is ``(None, ())``. Anything else (an unknown name, both options) is returned as
    given, for :func:`select_splits` to refuse."""
    splits = tuple(splits or ())
    if splits and not protocol and len(set(splits)) == len(splits):
        protocol = info.protocol_of(splits) or None
        if protocol is not None:
            splits = ()
    if protocol and not splits:
        chosen = info.protocol(protocol)
        if chosen is not None and chosen is info.protocol():
            protocol = None
    return protocol, splits
