"""Render the leaderboard: an index page and one page per task, plus the stylesheet,
the script and (gzipped) copies of the run files, so the folder is self-contained.

Determinism: inputs are sorted, nothing time-dependent is written (dates shown are
those in the results), gzip headers carry no name or time: the same results give
byte-identical files. The site is built in a temporary folder beside ``out_dir`` and
swapped in only when complete."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import os
import re
import shutil
import stat as stat_module
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath, PureWindowsPath

from statbench import __version__
from statbench.api import FAMILIES
from statbench.data.atomic import reclaim, replace_dir, staging_dir
from statbench.data.checksum import bytes_sha256, file_sha256
from statbench.errors import StatbenchError
from statbench.leaderboard.breakdowns import breakdown_sections
from statbench.leaderboard.cardview import card_file, card_view, read_card, training
from statbench.leaderboard.collect import FIRST_VERSION, Row, collect, is_bounded
from statbench.leaderboard.efficiency import COLUMNS as EFFICIENCY_COLUMNS
from statbench.leaderboard.efficiency import efficiency_cells
from statbench.leaderboard.forkmap import split_map, start
from statbench.leaderboard.fragments import signed
from statbench.leaderboard.incremental import (
    MARKER,
    board_digest,
    code_digest,
    files_of,
    marker_text,
    read_manifest,
    read_states,
    reuse,
    write_states,
)
from statbench.leaderboard.levels import DECLARED, LEVELS, MEANING, level_of
from statbench.leaderboard.pareto import pareto_charts, pareto_point
from statbench.leaderboard.plots import Series, recall_curves, recall_cutoffs
from statbench.leaderboard.records import RecordCache
from statbench.leaderboard.rowviews import RowViews
from statbench.leaderboard.runcopies import RunDigests, plain_content, write_gzipped
from statbench.leaderboard.source import (
    BUILTIN,
    NOT_PUBLISHED,
    SOURCE_FILE,
    SourceRecord,
    install_line,
    published,
    read_source,
    unpublished_reasons,
)
from statbench.leaderboard.submission import Accepted, accepted_submission
from statbench.leaderboard.verdicts import VerdictReader
from statbench.scoring.reproduction import copy_reproduction
from statbench.storage.filedigests import file_digests
from statbench.storage.folder_locks import folder_lock

DEFAULT_BASELINE = "bm25"
#: rows per page of a task's table: a board with more is written as several static pages
#: (every row on exactly one, each page complete without JavaScript); the script pages,
#: sorts and filters across all rows from the page's JSON
PAGE_SIZE = 50
#: series drawn at most per chart (the best rows by the tested measure, and the baseline):
#: every figure of every row is in the table, its per-category figures in its details
CHART_SERIES = 12


@dataclass
class BuildReport:
    out_dir: Path
    pages: list[Path] = field(default_factory=list)  #: every HTML file written, the index first
    rows: int = 0
    boards: int = 0  #: task tables (a board of many rows spans several pages)
    problems: list[str] = field(default_factory=list)  #: warnings: broken results, unlinked run files
    notes: list[str] = field(default_factory=list)  #: superseded results, files that are not results
    #: results files skipped as broken or inconsistent (``--strict`` fails on any, as ``check`` does)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  #: rows refused by ``--verify``
    #: rows of a results repository left off: not a submission ``leaderboard check`` accepts (``--strict`` fails)
    not_submissions: list[str] = field(default_factory=list)
    rendered: list[str] = field(default_factory=list)  #: boards rendered (the others kept the previous build's files)


def json_for_html(obj) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&``
    (so ``</script>`` and ``<!--`` cannot occur), no raw U+2028/U+2029, and never NaN or
    Infinity (``ValueError``: neither is JSON, ``JSON.parse`` would fail on the page)."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, code)
    return text


def slug(name: str) -> str:
    """A file-name-safe form of a task name; names that had to change get a hash suffix."""
    import hashlib

    clean = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "task"
    if clean != name:
        clean += "-" + hashlib.sha256(name.encode()).hexdigest()[:6]
    return clean


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def budget_values(budget: str) -> str:
    """``preset=cpu-small`` -> ``cpu-small``: the badge shows the values, the details the keys."""
    return ", ".join(part.split("=", 1)[-1] for part in re.split(r"[,;]\s*", budget) if part)


def _environment():
    import jinja2
    import markupsafe

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("statbench.leaderboard", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["fmt"] = _fmt
    env.filters["json_for_html"] = lambda obj: markupsafe.Markup(json_for_html(obj))
    env.filters["budget_values"] = budget_values
    env.filters["signed"] = signed
    from statbench.scoring.significance import format_p

    env.filters["p"] = format_p
    return env


# --- task view models -------------------------------------------------------------------


def board_data(rows: list[Row]) -> dict:
    """The data a board's rows were scored on: corpus size (as recorded; None for results
    written before it was), queries over its splits, data checksum."""
    sizes = [r.corpus_size for r in rows if r.corpus_size is not None]
    return {"corpus_size": sizes[0] if sizes else None, "queries": sum(n for _, n in rows[0].split_set),
            "checksum": rows[0].results.task.data_checksum}


def _data_words(data: dict, unit: str) -> str:
    size = data["corpus_size"]
    corpus = f"{size:,} {unit}" if size is not None else "corpus size not recorded"
    return f"{corpus}, {data['queries']:,} queries"


def _task_info(name: str, rows: list[Row]) -> dict:
    """Title, measures and published figures: from the registered task when installed,
    otherwise from the results themselves (then without published figures).

    The measures are the board's own (every row of a board defines each label alike);
    published figures are split into those measured on the board's data with the same
    measure definitions, when the board is of the installed task's version (``published``:
    ranked with the runs) and the others
    (``published_apart``: a block of their own, titled with both data, never ranked,
    tested or drawn)."""
    from statbench.registry.plugins import get_registry

    entry = get_registry().tasks.get(name)
    cls = entry.cls if entry else None
    board_measures = {m.label: m.ir_measure for m in rows[0].results.measures}
    task_measures = {m.label: m.ir_measure for m in cls.measures} if cls is not None and cls.measures else {}
    measures = [{"label": label, "ir_measure": board_measures[label]} for label in task_measures if label in board_measures]
    measures += [{"label": label, "ir_measure": spelling} for label, spelling in board_measures.items()
                 if label not in task_measures]
    redefined = sorted(label for label, spelling in board_measures.items()
                       if label in task_measures and task_measures[label] != spelling)
    info = cls.task_info() if cls is not None else None
    unit = getattr(info, "corpus_unit", "") or "documents"
    data = board_data(rows)
    # the protocol whose splits the board holds (results written before protocols existed
    # recorded a description here, so the split names decide)
    split_names = [s.name for s in rows[0].results.splits]
    protocol = (info.protocol_of(split_names) if info is not None else "") or rows[0].results.task.protocol or ""
    described = info.protocol(protocol) if info is not None and protocol else None
    if described is not None and set(described.splits) != set(split_names):
        described = None
    published, apart = {}, {}
    version = rows[0].results.task.version or FIRST_VERSION
    if info is not None and described is not None:
        # a published figure belongs to the board of its protocol (the default one when it
        # names none); a board of a hand-picked set of splits shows none
        default = info.protocol()
        for p in info.published:
            if (p.protocol or (default.name if default else "")) != described.name:
                continue
            figure = {"source": p.source, "family": p.family, "scores": dict(p.scores),
                      **({"pool": p.pool} if p.pool else {})}
            same = p.same_data(corpus_size=data["corpus_size"], queries=data["queries"], checksum=data["checksum"])
            if same and version == info.version and not any(label in redefined for label in p.scores):
                published[p.label] = figure
                continue
            if version != info.version:
                # the figures are the installed task's declaration: its version's board only
                title = f"Declared by version {info.version} of the task; this board: version {version}"
            elif not same:
                reported = p.data.words(unit) if p.data is not None else "data not declared by the task"
                title = f"Reported on {reported}; this board: {_data_words(data, unit)}"
            else:
                title = (f"Reported with the task's measure definitions; this board defines "
                         f"{', '.join(redefined)} otherwise")
            apart.setdefault(title, {})[p.label] = figure
    return {
        "cls": cls,
        "info": info,
        "title": (info.description if info is not None else "") or name,
        "language": rows[0].results.task.language,
        "protocol": f"{protocol}: {described.description}" if described else protocol,
        "paper": info.paper if info is not None else "",
        "measures": measures,
        "published": published,
        "published_apart": apart,
        "data": data,
        "unit": unit,
        "protocol_name": described.name if described else "",
    }


def board_words(task: str, info: dict) -> str:
    """A board in words, from what identifies it: ``stard · 58,279 articles, 1,543 queries
    · protocol 5-fold`` (checksums are in its details)."""
    parts = [task, _data_words(info["data"], info["unit"])]
    if info["protocol_name"]:
        parts.append(f"protocol {info['protocol_name']}")
    return " · ".join(parts)


def _pick_baseline(rows: list[Row], baseline: str) -> Row | None:
    """The row named ``baseline`` (model name, or ``model → reranker``); among several,
    plain first stages (no reranker, no pool) with the recorded default parameters first
    (statbench's own model before another distribution's of that name), then the stable
    identity order."""
    matches = [r for r in rows if baseline in (r.name, r.model.name)]
    matches.sort(key=lambda r: (r.reranker is not None, r.pool is not None, r.name != baseline,
                                "distribution" in r.identity, _short_params(r, "retrievers") != "", r.sort_key))
    return matches[0] if matches else None


#: from this many pairs to test, a board's tests are split between two processes
SPLIT_TESTS = 512


def _significance(rows, measure: str, base: Row | None) -> tuple[dict[str, object], list[tuple[Row, str]]]:
    """Comparisons by row key, and the rows not tested with the reason. A paired test needs
    exactly the same (non-empty) query set on both sides: any other row is left out of the
    tests (and of Holm's count), never shown as not significant."""
    from statbench.leaderboard.sigcache import PairCache
    from statbench.leaderboard.stats import pair_figures
    from statbench.scoring.significance import (
        ALPHA,
        BOOTSTRAP_RESAMPLES,
        BOOTSTRAP_SEED,
        query_set_difference,
        with_holm,
    )

    if base is None:
        return {}, []
    # each pair's figures are kept by the two rows' per-query scores (see .sigcache): a
    # board re-tests only the rows whose scores (or baseline) it has not tested before
    kept = PairCache.default(base.queries_sha256, measure, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
    tested = [r for r in rows if r is not base and measure in r.labels]
    outcomes = {r.key: kept.get(r.queries_sha256) for r in tested}
    fresh = [r for r in tested if outcomes[r.key] is None]
    if fresh:
        base_scores = base.query_scores(measure)

        def tested_half(half: list) -> tuple[dict, dict]:
            # each row's per-query scores read (from the record cache: a file each), paired
            # with the baseline's, and tested; a pair's figures do not depend on the others
            # tested with it (.stats), so a large board's rows are tested in two halves, one
            # in a fork (each half draws the bootstrap's resamples once)
            systems, refused = {}, {}
            order, placed = sorted(base_scores), {}
            for r in half:
                column = _aligned_column(r, measure, order, placed)
                if column is not None:  # the same queries as the baseline's, every one scored
                    systems[r.key] = column
                    continue
                scores = r.query_scores(measure)
                problem = query_set_difference(base_scores, scores)
                if problem is None:
                    systems[r.key] = scores
                else:
                    refused[r.key] = problem
            return pair_figures(base_scores, systems, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED), refused

        halves = [fresh[:len(fresh) // 2], fresh[len(fresh) // 2:]] if len(fresh) >= SPLIT_TESTS else [fresh]
        parts, _ = split_map(tested_half, halves, min_items=2)
        figures = {key: figure for part, _ in parts for key, figure in part.items()}
        refused = {key: problem for _, part in parts for key, problem in part.items()}
        for r in fresh:
            if r.key in refused:
                outcomes[r.key] = ("untested", refused[r.key])
                kept.put(r.queries_sha256, outcomes[r.key])
        for r in fresh:
            if r.key in figures:
                outcomes[r.key] = ("figures", figures[r.key])
                kept.put(r.queries_sha256, outcomes[r.key])
        kept.save()
    untested = [(r, outcomes[r.key][1]) for r in tested if outcomes[r.key][0] == "untested"]
    raw = [dict(system=key, baseline=base.key, measure=measure, **outcomes[key][1])
           for key in sorted(r.key for r in tested if outcomes[r.key][0] == "figures")]
    comparisons = with_holm(raw, ALPHA) if raw else []
    return {c.system: c for c in comparisons}, untested


def _aligned_column(row: Row, measure: str, order: list[str], placed: dict):
    """The row's per-query scores on ``measure`` as an array in the order of the baseline's
    query ids (``order``, sorted), taken from its cached table: what pairing the two as
    dicts gives, without building them (4 s of a 3,000-row STARD board). None when the row
    has no table, or its queries are not exactly the baseline's, or one has no score: the
    caller pairs it the careful way (and says why it cannot be tested). ``placed``: each
    table's query order -> where the baseline's queries are in it (shared by the rows)."""
    import numpy as np

    table = row.query_table()
    if table is None or measure not in table.labels:
        return None
    qids = tuple(table.qids)
    if qids not in placed:
        where = {qid: i for i, qid in enumerate(qids)}
        placed[qids] = (np.array([where[qid] for qid in order], dtype=np.intp)
                        if len(where) == len(order) and all(qid in where for qid in order) else None)
    index = placed[qids]
    if index is None:
        return None
    column = table.values[index, table.labels.index(measure)]
    return None if np.isnan(column).any() else column


def _short_params(row: Row, kind: str) -> str:
    """Parameters that differ from the defaults the result recorded (all of them in a result
    written before defaults were recorded): the row's identity, read from its record alone."""
    params = row.identity["params"] if kind == "retrievers" else (row.identity.get("reranker") or {}).get("params", {})
    shown = dict(sorted(params.items()))
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}" for k, v in shown.items())


def _row_view(row: Row, measures: list[dict], tested: str, run_href, results_root, reproduction=None) -> dict:
    """What a row's line shows; its comparison with the baseline is filled in by
    :func:`_compared` (the rows' views are made apart from the tests: .forkmap)."""
    res = row.results
    splits = res.splits
    cells = []
    for m in measures:
        label = m["label"]
        agg = res.aggregate.get(label)
        cell = {"label": label, "mean": None, "std": None, "folds": [], "marker": None}
        if agg is not None:
            cell["mean"], cell["std"] = agg.mean, agg.std
            if len(splits) > 1:
                cell["folds"] = [{"name": s.name, "n": s.n_queries, "value": s.scores.get(label)} for s in splits]
        cells.append(cell)
    breakdown = [
        {"group": group, "values": [(category, scores[tested]) for category, scores in sorted(values.items())
                                    if tested in scores]}
        for group, values in sorted((res.breakdown or {}).items())
        if len(values) > 1  # one value (UK: every query has 3 relevant articles) says nothing
    ]
    plugin = row.model.plugin
    rr = row.reranker
    try:
        results_rel = str(row.path.relative_to(results_root))
    except ValueError:
        results_rel = row.path.name
    return {
        "key": row.key,
        "reference": False,
        "name": row.model.name,
        "params": _short_params(row, "retrievers") if not row.model.name.startswith("pool:") else "",
        "reranker": None if rr is None else {"name": rr.name, "params": _short_params(row, "rerankers")},
        "pool": row.pool,
        "family": row.family,
        "trained": row.trained,
        "training": training(row.trained, getattr(row, "card", None)),
        "seen": bool(getattr(row, "card", None) and row.card.test_queries_seen),
        "budget": row.budget or "",
        "multi_split": len(splits) > 1,
        "cells": cells,
        "comparison": None,
        "is_baseline": False,
        "breakdown": [b for b in breakdown if b["values"]],
        "efficiency": efficiency_cells(res),
        "verification": verification_view(getattr(row, "verification", None)),
        "level": level_view(getattr(row, "level", None)),
        "card": None if getattr(row, "card", None) is None else [list(f) for f in row.card.fields],
        "provenance": {
            "statbench_version": res.statbench_version,
            "plugin": _plugin_text(plugin),
            "model_version": row.model.version or "",
            "params": json.dumps(row.model.params, sort_keys=True, ensure_ascii=False),
            "reranker": None if rr is None else {
                "plugin": _plugin_text(rr.plugin),
                "params": json.dumps(rr.params, sort_keys=True, ensure_ascii=False),
            },
            "data_checksum": res.task.data_checksum,
            # a fused run's inputs (statbench fuse): each one's model or path and run sha256
            "components": [{"what": c.model or c.source, "sha256": c.run_sha256, "command": c.command or ""}
                           for c in getattr(res, "components", None) or ()],
            "command": res.command,
            "reproduce": reproduce_line(res, getattr(row, "source", None)),
            "source": source_words(res, getattr(row, "source", None)),
            "run_sha256": res.run_file.sha256,
            "run_href": run_href,
            "reproduction": reproduction,
            "created": res.created,
            "results_file": results_rel,
            "splits": [{"name": s.name, "n": s.n_queries} for s in splits],
            "dropped": len(res.task.dropped or []),
            "total_seconds": res.timings.get("total"),
            "hardware": _hardware(res.environment or {}),
            "problems": list(row.problems),
            "notes": list(row.notes),
        },
    }


def level_view(level) -> dict | None:
    """The badge of a row's level (:mod:`.levels`): ``name`` and its tooltip ``title``."""
    return None if level is None else {"name": level.name, "title": level.title}


def levels_legend() -> list[dict]:
    """The levels' legend, highest first: what each one checked and did not."""
    return [{"name": name, "meaning": MEANING[name]} for name in LEVELS]


def verification_view(verification) -> dict | None:
    """The badge of a row's verification (None: the board was built without ``--verify``):
    ``status``, the badge's ``text`` and its tooltip ``title`` (the date and the statbench
    version that verified it, or why it could not be)."""
    if verification is None:
        return None
    if verification.status == "verified":
        title = (f"re-scored from its run file against the task's judgements on {verification.verified_on or '?'} "
                 f"by statbench {verification.statbench_version or '?'}: every figure agrees")
        covers = verification.covers()
        return {"status": "verified", "text": "verified", "title": f"{title}; {covers}" if covers else title,
                "checked": list(verification.checked), "declared": list(verification.declared)}
    return {"status": verification.status, "text": verification.status, "title": verification.reason or "",
            "checked": [], "declared": []}


#: what a reproduce command puts in place of the recorded ``--data-dir``: an absolute path
#: anyone can type, to be filled with the task's files (the board names the data checksum)
DATA_DIR_PLACEHOLDER = "$HOME/statbench-data/{task}"


def reproduce_line(res, source) -> str | None:
    """What a stranger types to reproduce a row: the ``pip install`` of its recorded source
    (``source``: the submission's :class:`~statbench.leaderboard.source.SourceRecord`, when
    it is published and holds any third-party distribution), then :func:`reproduce_command`.
    A source not published, or not recorded, installs nothing here: :func:`source_words` says
    so beside the command, never a ``pip install`` of a distribution no index may hold. None
    when the recorded command is not a statbench command line (nothing to offer a copy of)."""
    command = reproduce_command(res)
    if command is None:
        return None
    install = install_line(source, note=False) if isinstance(source, SourceRecord) else None
    return f"{install} && {command}" if install else command


def source_words(res, source) -> str:
    """What the row's details say of its code's source ("" when the run used only
    statbench's own plugins and nothing else is to be said)."""
    if isinstance(source, SourceRecord):
        if not published(source):
            return f"{NOT_PUBLISHED}: {'; '.join(unpublished_reasons(source))}"
        wheels = source.wheel_files()
        return f"the wheel{'s' if len(wheels) > 1 else ''} {', '.join(wheels)} stored in its submission folder" \
            if wheels else ""
    if isinstance(source, str):  # a source.json that did not read
        return f"{NOT_PUBLISHED}: {source}"
    third = sorted({f"{plugin.distribution} {plugin.version or ''}".strip()
                    for record in (res.task, res.model, res.reranker) if record is not None
                    for plugin in (getattr(record, "plugin", None),)
                    if plugin is not None and plugin.distribution and plugin.distribution != BUILTIN})
    if not third:
        return ""
    return (f"source not recorded: {', '.join(third)} (installed where it ran; submit it to a results repository "
            "with `statbench submit`, which records an installable source)")


def reproduce_command(res) -> str | None:
    """The recorded command as a stranger types it: ``--data-dir`` pointing at an explicit
    absolute folder instead of the author's path (the plugins it needs: :func:`reproduce_line`),
    and the stranger's own ``statbench`` instead of the path the author ran. None when the
    recorded command is not a statbench command line (not shell words, or its program not
    ``statbench``): every command statbench records is one, so anything else is not offered
    as what to type (the row's details still show it, as recorded)."""
    import shlex

    try:
        words = shlex.split(res.command)
    except ValueError:
        return None
    if not words or PurePosixPath(words[0]).name != "statbench" or PureWindowsPath(words[0]).name != "statbench":
        return None
    # the task's name from the results, quoted: only $HOME is left for the shell to expand
    placeholder = DATA_DIR_PLACEHOLDER.format(task=shlex.quote(res.task.name))
    out, skip = ["statbench"], False
    for word in words[1:]:
        if skip:
            out.append(placeholder)
            skip = False
        elif word == "--data-dir":
            out.append(shlex.quote(word))
            skip = True
        elif word.startswith("--data-dir="):
            out.append(f"--data-dir={placeholder}")
        else:
            out.append(shlex.quote(word))
    return " ".join(out)


def _plugin_text(plugin) -> str:
    """``name (distribution version)`` of a :class:`~statbench.results.record.PluginRecord`."""
    return f"{plugin.name} ({plugin.distribution or 'in-process'} {plugin.version or ''})".strip()


def _hardware(environment: dict) -> str:
    """Where the run's time was spent: the GPU when a model used one, else the platform."""
    accelerator = environment.get("accelerator")
    python = f"Python {environment['python']}" if environment.get("python") else ""
    return ", ".join(x for x in (accelerator or "CPU", environment.get("platform", ""), python) if x)


def _published_scores(label: str, scores: dict, measures: list[dict], problems: list[str]) -> dict:
    """The published figures that can be shown: numbers, finite, in [0, 1] when the measure
    is bounded; any other is left out with a problem line."""
    bounded = {m["label"]: is_bounded(m["ir_measure"]) for m in measures}
    kept = {}
    for measure, value in sorted(scores.items()):
        if value is None:
            continue
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok and bounded.get(measure, is_bounded(measure)) and not 0.0 <= value <= 1.0:
            ok = False
        if ok:
            kept[measure] = value
        else:
            problems.append(f"published figure {label!r}, {measure}: {value!r} is not a valid score: not shown")
    return kept


def _reference_views(published: dict, measures: list[dict], problems: list[str] | None = None,
                     prefix: str = "ref-") -> list[dict]:
    views = []
    problems = [] if problems is None else problems
    for i, (label, ref) in enumerate(sorted(published.items())):
        scores = _published_scores(label, ref.get("scores", {}), measures, problems)
        views.append({
            "key": f"{prefix}{i}",
            "label": label,
            "reference": True,
            "name": label,
            "source": ref.get("source", ""),
            "family": ref.get("family", ""),
            "trained": None,
            "pool": None,
            "cells": [{"label": m["label"], "mean": scores.get(m["label"]), "std": None, "folds": [], "marker": None}
                      for m in measures],
        })
    return views


#: what :func:`run_source` says of a run file that is simply absent (results published
#: without their run file: a note, not a warning)
NOT_FOUND = "not found"


@functools.lru_cache(maxsize=16)
def _resolved_root(results_root: str) -> Path:
    """The results folder's real path, once per build (:func:`build_site` forgets it)."""
    return Path(results_root).resolve()


def _beside(results_file: Path, rel: str, results_root: Path) -> Path | None:
    """The run file the quick way, when it can be told without resolving paths: a plain
    file name (no folder, no ``..``) beside a results file found by walking the results
    folder (which follows no link to a folder, so every folder it found is inside it), and
    a regular file, not a link (``rel``, else ``rel.gz``). None: any other case, which
    :func:`run_source` looks at the careful way (a tenth of a board's rendering at 3,000 rows)."""
    if "/" in rel or "\\" in rel or rel in (".", ".."):
        return None
    folder, root = os.path.dirname(os.fspath(results_file)), os.fspath(results_root)
    if not (folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)) or f"{os.sep}..{os.sep}" in folder + os.sep:
        return None
    for name in (rel, f"{rel}.gz"):
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            continue  # absent: the gzipped copy, if any
        return Path(path) if stat_module.S_ISREG(st.st_mode) else None
    return None


def run_source(row: Row, results_root: Path) -> tuple[Path | None, str | None]:
    """The run file a results file names (``run_file.path``, relative to the results file),
    or None and why not. Only a regular file inside the results folder being built is taken:
    no absolute path, nothing that leads (through ``..`` or a symbolic link) outside it."""
    rel = row.run_path or ""  # from the row's head when it has one: its record is not loaded
    field = f"(run_file.path of {row.path})"
    if not rel or "\x00" in rel:
        return None, f"run file {rel!r} is not a file name {field}: not linked"
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive \
            or rel.startswith(("/", "\\")):
        return None, (f"run file {rel!r} is an absolute path {field}; run files are only taken from inside "
                      f"the results folder: not copied")
    beside = _beside(row.path, rel, results_root)
    if beside is not None:
        return beside, None
    source = row.path.parent / rel
    if not source.exists() and (row.path.parent / f"{rel}.gz").is_file():
        source = row.path.parent / f"{rel}.gz"  # kept gzipped (a results repository): its content is the run
    root = _resolved_root(str(results_root))
    try:
        resolved = source.resolve(strict=True)
    except (OSError, RuntimeError):
        return None, f"run file {source} {NOT_FOUND} {field}: not linked"
    if not resolved.is_relative_to(root):
        return None, (f"run file {rel!r} leads outside the results folder {results_root} (to {resolved}) {field}: "
                      f"not copied")
    if not resolved.is_file():
        return None, f"run file {source} not found (not a regular file) {field}: not linked"
    return resolved, None


def _copy_run(row: Row, dest_root: Path, task_slug: str, results_root: Path, digests=None) -> str | None:
    """Gzip the run file into the site (fixed header: deterministic); None if it is
    outside the results folder, missing, or no longer matches the checksum in the results."""
    source, problem = run_source(row, results_root)
    run_path = row.run_path or ""
    if source is None:
        absent = problem.startswith(f"run file {row.path.parent / run_path} {NOT_FOUND} ")
        # results committed without their (large) run file: said once, not a warning per row
        (row.notes if absent else row.problems).append(problem)
        return None
    gzipped = source.name == f"{PurePosixPath(run_path).name}.gz"  # run_source's fallback
    try:
        content_sha256 = (bytes_sha256(plain_content(source, gzipped=True)) if gzipped
                          else file_sha256(source) if digests is None else digests.sha256(source))
    except StatbenchError as exc:  # a damaged or over-large gzip
        row.problems.append(f"{str(exc).splitlines()[0]}: not linked")
        return None
    if content_sha256 != row.run_sha256:
        row.problems.append(f"run file {row.path.parent / run_path} does not match the checksum "
                            f"in the results (run_file.sha256 of {row.path}): not linked")
        return None
    rel = f"runs/{task_slug}/{row.key}.trec.gz"
    target = dest_root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    write_gzipped(source, row.run_sha256, target, gzipped=gzipped)  # once per content (.runcopies)
    return rel


def _chart_rows(rows: list[Row], table: list[dict], base: Row | None) -> list[Row]:
    """The rows the charts draw: all of them up to :data:`CHART_SERIES`, else the best by
    the tested measure (the table's default order) and the baseline."""
    if len(rows) <= CHART_SERIES:
        return rows
    by_key = {r.key: r for r in rows}
    chosen = [by_key[v["key"]] for v in table if not v["reference"]][:CHART_SERIES]
    if base is not None and base not in chosen:
        chosen.append(base)
    return chosen


def _charts(rows: list[Row], refs: list[dict], measures: list[dict], tested: str, labels: dict[str, str]) -> list[str]:
    charts = []
    cutoffs = recall_cutoffs(measures)
    if len(cutoffs) >= 2:
        series = [
            Series(labels[r.key], {k: r.results.aggregate[lab].mean for k, lab in cutoffs if lab in r.results.aggregate})
            for r in rows
        ]
        series += [
            Series(f"{ref['name']} (published)", {k: ref_cells[lab] for k, lab in cutoffs if ref_cells.get(lab) is not None},
                   reference=True)
            for ref in refs
            for ref_cells in [{c["label"]: c["mean"] for c in ref["cells"]}]
        ]
        svg = recall_curves([s for s in series if s.values], "Recall@k (mean over splits)")
        if svg:
            charts.append(svg)
    return charts  # the breakdowns' bars: leaderboard/breakdowns.py


def _label(view: dict) -> str:
    text = view["name"]
    if view.get("params"):
        text += f" ({view['params']})"
    if view.get("reranker"):
        text += f" → {view['reranker']['name']}"
        if view["reranker"]["params"]:
            text += f" ({view['reranker']['params']})"
    if view.get("pool") and view["name"] != f"pool:{view['pool']}":
        text += f" [pool {view['pool']}]"
    return text


def _unique_labels(views: list[dict], rows: list[Row]) -> dict[str, str]:
    """Row key -> label; rows that would read alike (models of one name from two
    distributions) are told apart by their recorded distribution, and rows that still read
    alike (one distribution: a parameter recorded as text by one and as a number by the
    other, two pools of one name built differently) by their key, which is the
    same on every machine: two rows are two configurations and never share a label."""
    labels = {v["key"]: _label(v) for v in views}

    def counts() -> dict[str, int]:
        seen: dict[str, int] = {}
        for text in labels.values():
            seen[text] = seen.get(text, 0) + 1
        return seen

    seen = counts()
    for row in rows:
        if seen[labels[row.key]] > 1:
            dists = [d for d in (_distribution(row.model), _distribution(row.reranker) if row.reranker else "") if d]
            labels[row.key] += f" [{' → '.join(dists) or 'no distribution recorded'}]"
    seen = counts()
    for row in rows:
        if seen[labels[row.key]] > 1:
            labels[row.key] += f" [key {row.key}]"
    return labels


def _distribution(record) -> str:
    plugin = getattr(record, "plugin", None)
    return (plugin.distribution or "in-process") if plugin is not None else ""


def _page_files(task_slug: str, n_rows: int, page_size: int) -> list[str]:
    """The files of a task's table: ``task-SLUG.html``, then ``task-SLUG.p2.html``, ... (a
    dot cannot occur in a slug: no task's page is another's)."""
    count = max(1, -(-n_rows // page_size))
    return [f"task-{task_slug}.html"] + [f"task-{task_slug}.p{i}.html" for i in range(2, count + 1)]


def _trained_text(trained) -> str:
    return "" if trained is None else ("trained" if trained else "zero-shot")


def _row_data(v: dict) -> dict:
    """What the script needs to show a row that is not on the page it runs on (the page's
    JSON): sort keys, filter keys, the cells as the page prints them (so the script never
    formats a number), the marker, and the page that holds the row's details. The label,
    the comparison with the baseline and the page are :func:`_placed`'s to fill in."""
    return {
        "label": None, "family": v["family"], "pool": v["pool"] or "",
        "values": {c["label"]: c["mean"] for c in v["cells"]},
        "ref": v["reference"],
        "name": v["name"],
        "params": v.get("params") or "",
        "rr": None if not v.get("reranker") else [v["reranker"]["name"], v["reranker"]["params"]],
        "base": False,
        "source": v.get("source") or "",
        "trained": v.get("training", _trained_text(v["trained"])),
        "lvl": None if not v.get("level") else [v["level"]["name"], v["level"]["title"]],
        "seen": bool(v.get("seen")),
        "budget": v.get("budget") or "",
        "eff": [[c["text"], c["title"]] for c in v.get("efficiency") or []] or None,
        "effv": {c["key"]: c["value"] for c in v.get("efficiency") or [] if c["value"] is not None},
        "ver": None if not v.get("verification") else [v["verification"]["status"], v["verification"]["text"],
                                                         v["verification"]["title"]],
        "cells": [[_fmt(c["mean"]), _fmt(c["std"]) if c["folds"] else None,
                   [_fmt(f["value"]) for f in c["folds"]] or None, None] for c in v["cells"]],
        "p": None,
        "page": None,
    }


def _placed(data: dict, v: dict, page_index: int) -> dict:
    """A row's :func:`_row_data` with what is known only once the board is put together: its
    label, its comparison with the baseline (marker, p-value) and its page."""
    from statbench.scoring.significance import format_p

    comparison = v.get("comparison")
    data["label"] = v["label"]
    data["base"] = bool(v.get("is_baseline"))
    for cell, shown in zip(data["cells"], v["cells"]):
        cell[3] = shown["marker"]
    data["p"] = format_p(comparison.p_holm) if comparison is not None else None
    data["page"] = page_index
    return data


def _compared(view: dict, comparison, is_baseline: bool, tested: str) -> dict:
    """A row's view with its comparison against the baseline (None: not tested, or the
    baseline itself): the marker of the tested measure's cell when the difference is
    significant."""
    view["comparison"], view["is_baseline"] = comparison, is_baseline
    if comparison is not None and comparison.direction:
        for cell in view["cells"]:
            if cell["label"] == tested:
                cell["marker"] = "up" if comparison.direction > 0 else "down"
    return view


def _board_tests(rows: list[Row], baseline: str, measure: str | None) -> tuple[dict, str, Row | None]:
    """A board's task information, the measure its tests are on and its baseline row."""
    from statbench.scoring.significance import primary_measure

    info = _task_info(rows[0].task, rows)
    labels_all = [m["label"] for m in info["measures"]]
    tested = measure if measure in labels_all else primary_measure(rows[0].task, labels_all, info["info"])
    return info, tested, _pick_baseline(rows, baseline)


def start_tests(rows: list[Row], baseline: str, measure: str | None):
    """A board's significance tests begun in a fork (with scipy's import, and the tests of
    its new rows), while the build goes on with the rest; :func:`_task_page` takes them."""
    def tests() -> tuple[dict, list[tuple[str, str]]]:
        _, tested, base = _board_tests(rows, baseline, measure)
        comparisons, untested = _significance(rows, tested, base)
        return comparisons, [(row.key, why) for row, why in untested]

    return start(tests)


def _task_page(name: str, rows: list[Row], baseline: str, measure: str | None, dest: Path,
               task_slug: str, copy_runs: bool, results_root: Path, page_size: int = PAGE_SIZE,
               digests=None, tests=None) -> dict:
    """The board's page model. ``tests``: its significance tests begun earlier
    (:func:`start_tests`), else run here while a fork makes the rows."""
    info, tested, base = _board_tests(rows, baseline, measure)
    labels_all = [m["label"] for m in info["measures"]]

    kept = RowViews(f"{Path(results_root).resolve()}\0{task_slug}", code_digest())
    context = (info["measures"], tested, str(results_root))

    def row_product(row: Row) -> tuple[tuple[dict, dict, tuple | None], str | None, bool]:
        # what a row makes of itself, apart from the others (in this process or a fork of
        # it): its view, the script's data, its Pareto point; kept from the last build when
        # nothing it is made of changed (.rowviews: its record is then not even loaded)
        run_href = _copy_run(row, dest, task_slug, results_root, digests) if copy_runs else None
        reproduction, problem = copy_reproduction(row.path, dest)
        if problem:
            row.problems.append(problem)
        key = kept.key(row, context, run_href, reproduction)
        found = kept.get(key)
        if found is not None:
            return found, key, True
        view = _row_view(row, info["measures"], tested, run_href, results_root, reproduction)
        return (view, _row_data(view), pareto_point(row, tested)), key, False

    # the tests (with scipy's import, on a board with new rows) run while a fork makes rows
    if tests is None:
        products, (comparisons, untested) = split_map(row_product, rows,
                                                      meanwhile=lambda: _significance(rows, tested, base))
    else:
        products, _ = split_map(row_product, rows)
        by_key = {row.key: row for row in rows}
        comparisons, untested = tests.result(died=lambda: ({}, None))
        if untested is None:  # the fork died: the tests are run here
            comparisons, untested = _significance(rows, tested, base)
        else:
            untested = [(by_key[key], why) for key, why in untested]
    for product, key, hit in products:
        kept.keep(key, product, hit)  # before the views are changed below
    kept.save()
    made = [product for product, _, _ in products]
    views = [_compared(view, comparisons.get(row.key), row is base, tested) for row, (view, _, _) in zip(rows, made)]
    row_data = {view["key"]: data for view, data, _ in made}
    problems: list[str] = []
    refs = _reference_views(info["published"], info["measures"], problems)
    apart = [{"title": title, "rows": _reference_views(figures, info["measures"], problems, prefix=f"apart-{i}-")}
             for i, (title, figures) in enumerate(sorted(info["published_apart"].items()))]
    labels = _unique_labels(views, rows)
    for v in views + refs:
        v["label"] = labels.get(v["key"], v["name"])
    tested_index = labels_all.index(tested)

    def order(v):  # rows that saw test queries (declared) after the ranked ones
        value = v["cells"][tested_index]["mean"]
        return (bool(v.get("seen")), value is None, -(value or 0.0), v["reference"], v["label"])

    table = sorted(views + refs, key=order)
    sig_rows = sorted(
        ({"view": v, "c": v["comparison"]} for v in views if v["comparison"] is not None),
        key=lambda s: (-s["c"].mean_diff, s["view"]["label"]),
    )
    families = list(FAMILIES) + sorted({v["family"] for v in table if v["family"] and v["family"] not in FAMILIES})
    counts = {f: sum(1 for v in table if v["family"] == f) for f in families}
    files = _page_files(task_slug, len(table), page_size)
    sig_href = f"task-{task_slug}.significance.html" if len(files) > 1 and sig_rows else ""
    parts = [{"number": i + 1, "file": file, "rows": table[i * page_size:(i + 1) * page_size],
              "first": i * page_size + 1, "last": min(len(table), (i + 1) * page_size)}
             for i, file in enumerate(files)]
    blob = {
        "measures": labels_all,
        "order": [v["key"] for v in table],
        "page_size": page_size,
        "pages": files,
        "sig_href": sig_href,
        "splits": [[n, k] for n, k in rows[0].split_set],
        "has_pool": any(v["pool"] for v in table),
        "tested": tested,
        "baseline": base and labels[base.key],
        "eff_columns": len(EFFICIENCY_COLUMNS),
        "rows": {v["key"]: _placed(row_data.get(v["key"]) if not v["reference"] else _row_data(v), v, i // page_size)
                 for i, v in enumerate(table)},
    }
    # a board of several pages keeps its JSON in one script beside them (loaded once, not
    # repeated in every page); a board of one page keeps it inline
    data_src = f"data/task-{task_slug}.js" if len(files) > 1 else ""
    charted = _chart_rows(rows, table, base)
    for row, why in untested:
        problems.append(f"{labels[row.key]}: not tested against {labels[base.key]} on {tested} "
                        f"({row.path} vs {base.path}): {why}")
    return {
        "name": name,
        "slug": task_slug,
        "words": board_words(rows[0].task, info),
        "info": info,
        "published_apart": apart,
        "has_budget": any(v["budget"] for v in views),
        "problems": problems,
        "data_checksum": rows[0].results.task.data_checksum,
        "splits": [{"name": n, "n": k} for n, k in rows[0].split_set],
        "tested": tested,
        "baseline": base and labels[base.key],
        "baseline_wanted": baseline,
        "rows": table,
        "parts": parts,
        "sig_href": sig_href,
        "data_src": data_src,
        "n_results": len(views),
        "sig_rows": sig_rows,
        "families": [{"name": f, "count": counts[f]} for f in families],
        "has_refs": bool(refs),
        "has_pool": any(v["pool"] for v in table),
        "has_folds": any(v.get("multi_split") for v in views),
        "has_trained": any(v["trained"] for v in views),
        "has_seen": any(v.get("seen") for v in views),
        "has_levels": any(v.get("level") for v in views),
        "levels": levels_legend(),
        "declared": DECLARED,
        "charts": _charts(charted, refs, info["measures"], tested, labels),
        # rows whose card declares seen test queries are out of the ranking, so off the frontier too
        "pareto": pareto_charts([(row.key, None if view.get("seen") else point)
                                 for row, (view, _, point) in zip(rows, made)], tested, labels),
        "breakdowns": breakdown_sections(charted, labels, tested),
        "eff_columns": EFFICIENCY_COLUMNS,
        "charted": len(charted) if len(charted) < len(rows) else 0,
        "blob": blob,
        # the index names the best row that saw no test query (such rows are out of the ranking)
        "best": next((v for v in table if not v["reference"] and not v.get("seen")), None),
        "tested_index": tested_index,
    }


# --- writing ------------------------------------------------------------------------------


def _prepare_out(out_dir: Path) -> Path:
    """A fresh staging folder beside ``out_dir``, once what killed builds left there is
    reclaimed (``out_dir``'s lock held: :func:`build_site`); refuses to replace a folder
    that is neither empty nor a site built by this command."""
    if out_dir.exists():
        if not out_dir.is_dir():
            raise StatbenchError(f"{out_dir} exists and is not a folder")
        if any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
            raise StatbenchError(f"{out_dir} is not empty and was not built by `statbench leaderboard build`; "
                                 "refusing to replace it (choose another --out)")
    reclaim(out_dir)
    return staging_dir(out_dir)


def _swap_in(tmp: Path, out_dir: Path) -> None:
    """The new site in place of the old one in one step: never a moment without a site."""
    replace_dir(tmp, out_dir)


def build_site(results_dir, out_dir, baseline: str = DEFAULT_BASELINE, measure: str | None = None,
               copy_runs: bool = True, page_size: int = PAGE_SIZE, verify=None, explorer=None) -> BuildReport:
    """Build the site from every results JSON under ``results_dir`` into ``out_dir``; a
    task's table of more than ``page_size`` rows is written as several pages. ``verify``: a
    :class:`~statbench.leaderboard.verify.Verifier` every row is verified by (``--verify``).
    ``explorer``: write each board's per-query explorer, with the task data it may show
    (:class:`.explorer.TaskTexts`; ``None``: no explorer)."""
    if page_size < 1:
        raise StatbenchError(f"page size {page_size} is not a positive number of rows")
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    _resolved_root.cache_clear()  # a folder's real path may change between two builds
    with _no_gc_pauses():
        collected = collect(results_dir, verify=verify, records=RecordCache.default())
    gc.freeze()  # the records read: out of the cycle collector's sight while the boards are rendered
    try:
        # one build at a time into one folder: a second waits, saying so (or stops in one line)
        with folder_lock(out_dir, what="another build", on_wait=lambda line: print(f"note: {line}", file=sys.stderr)):
            report = _build_from(collected, results_dir, out_dir, baseline, measure, copy_runs, page_size, explorer)
    finally:
        gc.unfreeze()
    file_digests("leaderboard").save()  # the inputs' digests this build took (.filedigests)
    return report


def _build_from(collected, results_dir: Path, out_dir: Path, baseline: str, measure: str | None, copy_runs: bool,
                page_size: int, explorer=None) -> BuildReport:
    """The site from the collected rows (see :func:`build_site`)."""
    tasks = collected.boards
    report = BuildReport(out_dir=out_dir, problems=collected.problems, notes=list(collected.notes),
                         skipped=list(collected.problems))
    _drop_refused(tasks, report)
    if measure is not None and tasks:
        known = sorted({m.label for rows in tasks.values() for row in rows for m in row.results.measures})
        if measure not in known:
            raise StatbenchError(f"--measure {measure!r} is not a measure of any board (measures: {', '.join(known)})")
    env = _environment()
    previous = read_manifest(out_dir)
    known = read_states(out_dir) if previous else {}
    tmp = _prepare_out(out_dir)
    forks = []  # work begun in forks (.forkmap): waited for before the folder is removed on a failure
    try:
        slugs = _board_slugs(tasks)
        nav = [{"name": name, "slug": task_slug} for name, task_slug in slugs.items()]
        options = {"baseline": baseline, "measure": measure, "copy_runs": copy_runs, "page_size": page_size,
                   "explorer": explorer.identity({rows[0].task for rows in tasks.values()}) if explorer is not None
                   else None}
        context = {"version": __version__, "tasks": nav}
        boards, summaries = {}, []
        digests = None  # the run files' sha256 by state (.runcopies), read when a board is rendered
        without_run = 0
        # a board whose inputs are those of the previous build keeps its files (see .incremental)
        names = list(tasks)
        board_digests = {name: board_digest(name, slugs[name], tasks[name], options, nav, results_dir) for name in names}
        same = [name for name in names if _entry_shape(previous.get(name))
                and previous[name].get("digest") == board_digests[name]]
        entries: dict[str, dict] = {}

        tests: dict = {}

        def render(name: str) -> None:
            nonlocal digests
            if digests is None:
                digests = RunDigests()
                digests.learn(collected.run_digests)
            entries[name] = _render_board(env, context, name, tasks[name], baseline, measure, tmp, slugs[name],
                                          copy_runs, results_dir, page_size, digests, explorer, tests.pop(name, None))
            entries[name]["digest"] = board_digests[name]

        def reuse_unchanged() -> dict[str, bool]:
            return {name: reuse(previous[name], board_digests[name], out_dir, tmp, known) for name in same}

        changed = [name for name in names if name not in same]
        if len(changed) == 1:
            # a rebuild's changed board: its tests (scipy's import, its new rows) begin at once in
            # a fork, beside the unchanged boards' linking and its own rows (a cold build, whose
            # boards all changed, tests each while a fork makes its rows: .forkmap)
            tests[changed[0]] = start_tests(tasks[changed[0]], baseline, measure)
            forks.append(tests[changed[0]])
        # the unchanged boards' files are linked in a fork while the changed ones are rendered
        linking = start(reuse_unchanged) if same and changed else None
        forks.append(linking)
        reused = reuse_unchanged() if linking is None else {}
        for name in changed:
            render(name)
        if linking is not None:
            # a fork that died may have left some files: those boards are rendered over them
            reused = linking.result(died=lambda: dict.fromkeys(same, False))
        for name in same:
            if reused.get(name):
                entries[name] = previous[name]
            else:
                render(name)
        for name in names:
            entry = entries[name]
            if entry is not previous.get(name):
                report.rendered.append(name)
            report.problems.extend(entry["problems"])
            report.notes.extend(entry["notes"])
            without_run += entry["without_run"]
            report.pages.extend(out_dir / rel for rel in entry["pages"])
            summaries.append(entry["summary"])
            boards[name] = entry
            report.rows += len(tasks[name])
            report.boards += 1
        if without_run:
            report.notes.append(f"{without_run} result(s) without their run file (not linked; their figures are shown)")
        _write(tmp / "index.html", env.get_template("index.html").render(version=__version__, tasks=summaries))
        report.pages.insert(0, out_dir / "index.html")
        static = resources.files("statbench.leaderboard").joinpath("static")
        for name in ("leaderboard.css", "leaderboard.js") + (("explorer.css", "explorer.js") if explorer is not None else ()):
            _write(tmp / "static" / name, static.joinpath(name).read_text("utf-8"))
        _write(tmp / MARKER, marker_text(boards))
        _swap_in(tmp, out_dir)
    except BaseException:
        for fork in forks:
            if fork is not None:
                fork.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    write_states(out_dir, boards)
    if digests is not None:
        digests.save()
    return report


@contextlib.contextmanager
def _no_gc_pauses():
    """Reading thousands of results allocates millions of objects, none in a cycle: the
    cycle collector's passes over an ever larger heap made 10,000 results quadratic."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _board_slugs(tasks: dict) -> dict[str, str]:
    """Board name -> the slug of its files, unique among the boards."""
    slugs: dict[str, str] = {}
    used: set[str] = set()
    for name in tasks:
        task_slug = slug(name)
        while task_slug in used:  # only if two names slug alike, which the hash suffix makes unlikely
            task_slug += "-x"
        used.add(task_slug)
        slugs[name] = task_slug
    return slugs


def _entry_shape(entry) -> bool:
    """Whether a previous build's manifest entry holds what a reused board needs."""
    return (isinstance(entry, dict) and isinstance(entry.get("summary"), dict)
            and isinstance(entry.get("without_run"), int)
            and all(isinstance(entry.get(k), list) and all(isinstance(x, str) for x in entry[k])
                    for k in ("problems", "notes", "pages")))


def _render_board(env, context: dict, name: str, rows: list[Row], baseline: str, measure: str | None, tmp: Path,
                  task_slug: str, copy_runs: bool, results_dir: Path, page_size: int, digests=None,
                  explorer=None, tests=None) -> dict:
    """Test, copy and render one board into ``tmp``; its manifest entry (less its digest):
    the files it wrote with their sha256, what the build says about it, its index line."""
    page = _task_page(name, rows, baseline, measure, tmp, task_slug, copy_runs, results_dir, page_size, digests,
                      tests)
    problems = [f"{name}: {problem}" for problem in page["problems"]]
    notes = []
    without_run = 0
    files = []
    for view in page["rows"]:
        provenance = view.get("provenance") or {}
        for problem in provenance.get("problems", []):
            problems.append(f"{name}: {view['label']}: {problem}")
        without_run += bool(provenance.get("notes"))
        if provenance.get("run_href"):
            files.append(provenance["run_href"])
        if provenance.get("reproduction") is not None:
            files.append(provenance["reproduction"].href)
    if measure is not None and page["tested"] != measure:
        notes.append(f"{name}: no measure {measure!r} on this board: tested {page['tested']} instead")
    if page["baseline"] is None:
        notes.append(f"{name}: no results of baseline {baseline!r}: no significance tests")
    page["explorer"] = None
    if explorer is not None:  # the board's per-query explorer (.explorer)
        from statbench.leaderboard.explorer import explorer_files

        page["explorer"], written = explorer_files(env, context, page, rows, results_dir, explorer,
                                                   run_source=run_source, to_json=json_for_html)
        for rel, text in written.items():
            _write(tmp / rel, text)
            files.append(rel)
    bodies = _row_bodies(env, page, tmp, task_slug, results_dir)
    task_template = env.get_template("task.html")
    sig_template = env.get_template("significance.html")

    def write_file(job: tuple[str, dict | None]) -> str:
        # one file of the board: a page of the table, the comparisons' page, the table's script
        kind, part = job
        if kind == "part":
            _write(tmp / part["file"], task_template.render(page=page, part=part, bodies=bodies, **context))
            return part["file"]
        if kind == "significance":
            _write(tmp / page["sig_href"], sig_template.render(page=page, **context))
            return page["sig_href"]
        _write(tmp / page["data_src"], f"window.statbenchLeaderboard = {json_for_html(page['blob'])};\n")
        return page["data_src"]

    jobs = [("part", part) for part in page["parts"]]
    jobs += [("significance", None)] if page["sig_href"] else []
    jobs += [("data", None)] if page["data_src"] else []
    written_files, _ = split_map(write_file, jobs, min_items=4)
    pages = [rel for (kind, _), rel in zip(jobs, written_files) if kind != "data"]
    files += [rel for (kind, _), rel in zip(jobs, written_files) if kind == "data"]
    best = page["best"]
    summary = {
        "name": name, "slug": task_slug, "words": page["words"], "title": page["info"]["title"],
        "language": page["info"]["language"], "n_results": page["n_results"], "tested": page["tested"],
        "baseline": page["baseline"],
        "best": None if best is None else {"label": best["label"], "value": _fmt(best["cells"][page["tested_index"]]["mean"])},
    }
    return {"problems": problems, "notes": notes, "without_run": without_run, "pages": pages,
            "files": files_of(tmp, files + pages), "summary": summary}


def _row_bodies(env, page: dict, tmp: Path, task_slug: str, results_dir: Path) -> dict:
    """Row key -> the markup of its ``<tbody>``: kept from earlier builds where nothing it
    is made of changed (.fragments), else rendered (half of them in a fork: .forkmap)."""
    import markupsafe

    from statbench.leaderboard.fragments import Fragments, board_part, shown_comparison

    template = env.get_template("row.html")
    ncols = 4 + (1 if page["has_pool"] else 0) + len(page["info"]["measures"]) + len(page["eff_columns"])
    link = page["explorer"]
    explored = set(link["shown"]) if link else set()
    views = [dict(v, comparison=shown_comparison(v["comparison"])) if v.get("comparison") is not None else v
             for v in page["rows"]]
    parts = [board_part(page, ncols, link["href"] if v["key"] in explored else None) for v in views]
    kept = Fragments(f"{Path(results_dir).resolve()}\0{task_slug}", code_digest())
    keys = [kept.key(v, part) for v, part in zip(views, parts)]
    missing = [i for i, key in enumerate(keys) if kept.get(key) is None]
    made, _ = split_map(lambda i: template.render(v=views[i], board=parts[i]), missing)
    for i, html in zip(missing, made):
        kept.put(keys[i], html)
    kept.save()
    return {v["key"]: markupsafe.Markup(kept.used[key]) for v, key in zip(views, keys)}


def _drop_refused(tasks: dict[str, list[Row]], report: BuildReport) -> None:
    """A refused row (a figure its run file does not give) never reaches the site, whoever
    collected it, nor does a results repository's row that is not a submission its check
    accepts (a model card missing or unreadable leaves its declared training unknown): each
    is one problem line, and a board left empty is not written. Each row kept is given its
    level and its model card (:func:`_annotate`)."""
    verdicts = VerdictReader(report.notes, digests=file_digests("leaderboard"))
    markers: dict[str, bool] = {}  # folder -> whether it holds a results repository's marker
    for name in list(tasks):
        kept = []
        for row in tasks[name]:
            verification = getattr(row, "verification", None)
            if verification is not None and verification.status == "refused":
                report.problems.append(f"{name}: refused {row.path}: {verification.reason}")
                report.refused.append(str(row.path))
            elif isinstance(accepted := accepted_submission(row.path, lambda: row.results, markers), str):
                report.problems.append(f"{name}: left off {row.path}: not a submission 'leaderboard check' accepts: "
                                       f"{accepted}")
                report.not_submissions.append(str(row.path))
            else:
                _annotate(row, verdicts, accepted)
                kept.append(row)
        if kept:
            tasks[name] = kept
        else:
            del tasks[name]


def _annotate(row: Row, verdicts: VerdictReader, accepted: Accepted | None) -> None:
    """A row's level (what this build checked, with the reproduction verdict recorded for
    its files), its model card (a submission's, shown as declared) and its code's source (a
    submission's ``source.json``; a string: why it did not read): all part of what its view
    is made of (.rowviews, .incremental). ``accepted``: a repository's submission, its card
    and source as its check read them (not read again); None: a results file elsewhere."""
    row.level = level_of(getattr(row, "verification", None), verdicts.of(row.path))
    if accepted is not None:
        row.source, row.card = accepted.source, card_view(accepted.card)
        return
    row.source = None
    if os.path.isfile(os.path.join(os.path.dirname(os.fspath(row.path)), SOURCE_FILE)):
        try:
            row.source = read_source(row.path.parent)
        except StatbenchError as exc:
            row.source = str(exc).splitlines()[0]
            row.problems.append(f"its source is not shown: {row.source}")
    row.card = None
    if card_file(row.path) is not None:
        row.card, problem = read_card(row.path, row.results)
        if problem:
            row.problems.append(problem)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
