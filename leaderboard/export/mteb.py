"""``statbench leaderboard export --format mteb``: a board's results in MTEB's results format.

MTEB's results repository (github.com/embeddings-benchmark/results) holds, per model and
revision, one ``TaskResult`` JSON per task and the model's ``model_meta.json``::

    OUT/results/<model name, '/' as '__'>/<revision>/<TaskName>.json
    OUT/results/<model name, '/' as '__'>/<revision>/model_meta.json

``OUT`` is thus a result cache ``mteb.ResultCache(OUT)`` reads. Each exported row becomes
one such file: its splits as MTEB's splits (subset ``default``, or the ``mteb:`` task's),
its measures under MTEB's names *by definition* (:mod:`statbench.loading.mteb_names`:
a custom measure, e.g. an nDCG of another gain, is left out and said), ``main_score`` the
MTEB task's own main score (``mteb:`` tasks) or the board's tested measure (any other task;
``--measure`` names another). Nothing is written unless every file loads back with mteb's
own reader (``TaskResult.from_disk`` and ``ResultCache.load_results``) with the figures
written; files are then moved in place one by one, an existing file of the same model,
revision and task replaced.

What is refused (one line, exit 2): an ``mteb:`` task result whose loader dropped items
(statbench scored other queries or judgements than MTEB would) or of another dataset revision
than the installed mteb's task; a result without its task's main score; two rows that would
write one file (names compared case-blind, as a case-insensitive file system does).

**Paths.** The model name, revision and task name come from results files (a hostile one
may hold anything): each becomes one path component only if it is a plain file name
(:func:`path_component`: not empty, ``.``, ``..`` or hidden, no ``/ \\ : < > " | ? *``, no
control or invisible character, no leading or trailing space, no trailing ``.``, no Windows
device name, at most 200 bytes), and every file's final path, links in the existing part of
``--output`` followed, must lie inside ``--output``, and no existing entry may block one (a file
where a folder goes, a folder where a file goes). All of it is checked before anything is
written: a refused export leaves no file, and no folder it created."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import unicodedata
import warnings
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import click

from statbench.commands.compare import measure_label
from statbench.commands.table_formats import one_line
from statbench.data.atomic import nearest_existing
from statbench.errors import StatbenchError
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.render.board_info import task_info
from statbench.loading.mteb_names import mteb_language, mteb_metadata, mteb_name, registered_meta
from statbench.scoring.significance import primary_measure
from statbench.tasks.mteb import LOADER_VERSION

NO_REVISION = "no_revision_available"  # MTEB's own word for a model without a revision
#: the longest path component written (bytes of UTF-8; file systems allow 255)
MAX_COMPONENT = 200
_UNSAFE = frozenset('/\\:<>"|?*')
_WINDOWS_DEVICE = re.compile(r"(?i)(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?")


@dataclass
class MtebExport:
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", text).strip("_.") or "model"


def path_component(text: str, what: str, label: str) -> str:
    """``text`` when it is a plain file name (see the module), else one line naming the row."""
    problem = None
    bad = next((ch for ch in text if ch in _UNSAFE), None)
    if not text:
        problem = "is empty"
    elif text in (".", ".."):
        problem = "names a folder (. or ..)"
    elif bad is not None:
        problem = f"holds {bad!r}"
    elif any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text):
        problem = "holds a control or invisible character"
    elif text.startswith("."):
        problem = "starts with '.' (a hidden name)"
    elif text != text.strip() or text.endswith("."):
        problem = "starts or ends with a space, or ends with '.'"
    elif _WINDOWS_DEVICE.fullmatch(text):
        problem = "is a Windows device name"
    elif len(text.encode("utf-8")) > MAX_COMPONENT:
        problem = f"is longer than {MAX_COMPONENT} bytes"
    if problem is not None:
        raise StatbenchError(f"{one_line(label)}: its {what} {one_line(text)[:120]!r} {problem}: not a file name "
                             "under --output; nothing exported")
    return text


def relative_path(name: str, revision: str, task_name: str, label: str) -> Path:
    """``results/<name, '/' as '__'>/<revision>/<task>.json``, each part a checked file name."""
    folder = path_component(name.replace("/", "__").replace(" ", "_"), "model name", label)
    return (Path("results") / folder / path_component(revision, "revision", label)
            / path_component(f"{path_component(task_name, 'task name', label)}.json", "task name", label))


def check_inside(out: Path, relatives) -> None:
    """Every file to write (and its ``model_meta.json``) lies inside ``out``, links in its
    existing part followed; one line otherwise, before anything is written."""
    root = Path(out).resolve()
    for relative in relatives:
        for path in (out / relative, out / relative.parent / "model_meta.json"):
            resolved = path.resolve()
            if not resolved.is_relative_to(root):
                raise StatbenchError(f"--output {out}: {relative.parent / path.name} would be written to {resolved}, "
                                     "outside it (a link in the folder leads out): nothing exported")


def check_writable(out: Path, relatives) -> None:
    """No existing entry blocks a file to write: every file's place is free or a file (replaced),
    and its nearest existing folder above is a folder (not a file, nor a dangling link); one
    line otherwise, before anything is written (a move failing half way would leave some
    rows exported and not others)."""
    for relative in relatives:
        for path in (out / relative, out / relative.parent / "model_meta.json"):
            if path.is_dir():
                raise StatbenchError(f"--output {out}: {path} is a folder (a file of the export goes there): "
                                     "nothing exported")
            above = nearest_existing(path.parent)
            if not above.is_dir():
                raise StatbenchError(f"--output {out}: {above} is not a folder (the export writes {path}): "
                                     "nothing exported")


def model_identity(row, label: str) -> tuple[str, str, dict]:
    """``(model name, revision, model_meta.json)`` of a row: an MTEB model's own (its registered
    ModelMeta); any other statbench model ``statbench/<its label on the board>``."""
    from mteb.models import ModelMeta

    model = row.results.model
    if model.name == "mteb" and row.results.reranker is None:
        name = str(model.params.get("name") or "")
        if Path(name).expanduser().is_dir() or name.startswith((".", "/", "~")):
            name, meta = f"local/{_safe(Path(name).name)}", None
        else:
            meta = registered_meta(name)
        if meta is not None:
            revision = meta.revision or NO_REVISION
            return name, revision, meta.to_dict()
        revision = str(model.params.get("revision") or "") or NO_REVISION
    else:
        name, revision = f"statbench/{_safe(label)}", NO_REVISION
    empty = ModelMeta.create_empty(overwrites={"name": name, "revision": revision})
    return name, revision, empty.to_dict()


def _mteb_task_of(results):
    """``(MTEB metadata, subset)`` of an ``mteb:`` task's result (``None``: another task)."""
    name = results.task.name
    meta = mteb_metadata(name)
    if meta is None:
        return None
    rest = name[len("mteb-"):]
    subset = rest[len(meta.name) + 1:] if len(rest) > len(meta.name) else "default"
    return meta, subset


def task_result_json(row, main_label: str | None, notes: list[str], label: str) -> dict:
    """The TaskResult (as MTEB writes it) of one row."""
    results = row.results
    mapped = {m.label: mteb_name(m.ir_measure) for m in results.measures}
    left_out = sorted(label for label, name in mapped.items() if name is None)
    if left_out:
        notes.append(f"{label}: {', '.join(left_out)} left out (no MTEB metric of that definition)")
    found = _mteb_task_of(results)
    if found is not None:
        meta, subset = found
        revision = meta.dataset.get("revision") or "unversioned"
        if results.task.version != f"mteb{LOADER_VERSION}-{revision}":
            raise StatbenchError(f"{label}: task {results.task.name} was loaded as version {results.task.version}, not "
                                 f"this mteb's {meta.name} (mteb{LOADER_VERSION}-{revision}): other data, not exported "
                                 "under MTEB's name")
        if results.task.dropped:
            raise StatbenchError(f"{label}: the loader dropped {len(results.task.dropped)} item(s) of {meta.name} (e.g. "
                                 f"{results.task.dropped[0]}): statbench scored other queries or judgements than MTEB "
                                 "does, so the figures are not MTEB's")
        task_name, languages, main = meta.name, list(meta.hf_subsets_to_langscripts.get(subset) or meta.eval_langs), \
            meta.main_score
    else:
        subset = "default"
        task_name, languages = results.task.name, [mteb_language(results.task.language)]
        revision = f"statbench-{results.task.version or '1'}-{results.task.data_checksum[:12]}"
        main = mapped.get(main_label) if main_label else None
        if main is None:
            raise StatbenchError(f"{label}: the main score {main_label!r} has no MTEB metric of its definition; "
                                 f"--measure names another (MTEB-shaped: {', '.join(k for k, v in mapped.items() if v)})")
    if main not in mapped.values():
        raise StatbenchError(f"{label}: no figure for {task_name}'s main score {main} in the result (measures: "
                             f"{', '.join(mapped)})")
    mteb_ver = version("mteb")
    scores = {}
    for split in results.splits:
        entry = {name: float(split.scores[lab]) for lab, name in mapped.items() if name and lab in split.scores}
        entry.update({"main_score": entry[main], "hf_subset": subset, "languages": languages, "mteb_version": mteb_ver})
        scores[split.name] = [entry]
    timings = results.timings or {}
    return {"dataset_revision": revision, "task_name": task_name, "mteb_version": mteb_ver, "scores": scores,
            "evaluation_time": float(sum(timings.values())) if timings else None, "kg_co2_emissions": None}


def export_mteb(results_dir, board: str, out: Path, selectors=(), measures=(), include_budget: bool = False,
                verify=None, *, select, labels_of) -> MtebExport:
    """Write the rows of ``board`` (``selectors``: some of them) under ``out`` in MTEB's layout.
    ``select`` and ``labels_of``: how ``leaderboard export`` picks and labels rows
    (:func:`statbench.leaderboard.export.paper._select`, ``_board_labels``), handed in by it."""
    collected = collect(Path(results_dir), verify=verify)
    if board not in collected.boards:
        names = ", ".join(sorted(collected.boards)) or "none"
        raise StatbenchError(f"no board {board!r} in {results_dir} (boards: {names})")
    rows = collected.boards[board]
    labels = labels_of(rows)
    export = MtebExport()
    chosen = select(collected, board, rows, labels, selectors, include_budget, export.notes)
    info = task_info(rows[0].task, rows)
    all_labels = [m["label"] for m in info["measures"]]
    if measures:

        main_label = measure_label(rows[0].results.measures, measures[0])
    else:
        main_label = primary_measure(rows[0].task, all_labels, info["info"])
    files: dict[Path, tuple[str, dict, dict]] = {}
    for row in chosen:
        label = labels[row.key]
        name, revision, meta = model_identity(row, label)
        result = task_result_json(row, main_label, export.notes, label)
        relative = relative_path(name, revision, result["task_name"], label)
        same = next((r for r in files if str(r).casefold() == str(relative).casefold()), None)
        if same is not None:
            raise StatbenchError(f"rows {files[same][0]!r} and {label!r} would both be {relative} (one model, "
                                 "revision and task, names compared case-blind): export them one at a time (--rows)")
        files[relative] = (label, result, meta)
    if any(not row.results.task.name.startswith("mteb-") for row in chosen):
        export.notes.append(f"task {rows[0].task} is not an MTEB task: mteb's reader loads the files, MTEB's "
                            "leaderboard has no such task to show them under")
    out = Path(out)
    check_inside(out, files)
    check_writable(out, files)
    created = next((p for p in reversed([out, *out.parents]) if not p.exists()), None)  # removed if refused
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mteb-export-", dir=out))
    try:
        try:
            check_readable(_staged(staging, files), {rel: result for rel, (_, result, _) in files.items()})
        except BaseException:
            if created is not None:
                shutil.rmtree(created, ignore_errors=True)
            raise
        for relative in files:
            for name in (relative.name, "model_meta.json"):
                target = out / relative.parent / name
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / relative.parent / name, target)
            export.written.append(out / relative)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return export


def _staged(staging: Path, files: dict) -> Path:
    """Every file written under ``staging``, as it will be under the output."""
    for relative, (_, result, meta) in files.items():
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(result, indent=2, ensure_ascii=False), "utf-8")
        (target.parent / "model_meta.json").write_text(json.dumps(meta, indent=4, default=str), "utf-8")
    return staging


def check_readable(root: Path, expected: dict[Path, dict]) -> None:
    """Every file loads with mteb's own readers, with the figures written (to MTEB's 6 decimals)."""
    from mteb import ResultCache, TaskResult

    for relative, result in expected.items():
        try:
            loaded = TaskResult.from_disk(root / relative)
        except Exception as exc:  # noqa: BLE001 - whatever mteb's reader says is the problem
            raise StatbenchError(f"mteb's reader refuses the exported {relative}: {type(exc).__name__}: "
                                 f"{' '.join(str(exc).split())[:200]}") from None
        for split, entries in result["scores"].items():
            got = loaded.scores.get(split, [{}])[0]
            if abs(float(got.get("main_score", float("nan"))) - entries[0]["main_score"]) > 1e-6:
                raise StatbenchError(f"mteb's reader reads another main score from {relative} split {split}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        benchmark = ResultCache(root).load_results(include_remote=False, require_model_meta=True)
    found = {(m.model_name, t.task_name) for m in benchmark.model_results for t in m.task_results}
    if len(found) != len(expected):
        raise StatbenchError(f"mteb's ResultCache reads {len(found)} result(s) of the {len(expected)} exported")


def run_mteb_export(results_dir, board, output, rows, measures, include_budget, verifier, *, select,
                    labels_of) -> None:
    """The command's ``--format mteb`` branch: say what was written and any note."""
    if output is None:
        raise click.UsageError("--format mteb writes files: give the folder with --output DIR (a results repository "
                               "clone, or any folder mteb.ResultCache(DIR) then reads)")
    if output.exists() and not output.is_dir():
        raise click.BadParameter(f"{output} is a file (--format mteb writes a folder)", param_hint="--output")
    result = export_mteb(results_dir, board, output, rows, measures, include_budget, verify=verifier, select=select,
                         labels_of=labels_of)
    for note in result.notes:
        click.echo(f"note: {one_line(note)}", err=True)
    for path in result.written:
        click.echo(f"wrote {path}")
