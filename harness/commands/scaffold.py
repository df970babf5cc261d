"""``statbench task new NAME --from-beir PATH``: write an installable task plugin for a
folder in BEIR's layout.

The distribution ``statbench-task-NAME/`` holds a pyproject (entry point ``NAME`` in group
``statbench``), a package ``statbench_task_NAME`` with the JSON definition (statbench's task
schema) and a loader (a :class:`~statbench.loading.taskdef.DefinedTask` that reads the files with
:func:`statbench.loading.beir.load_beir`, the reader of ``--task beir:PATH``), a README, and a test
running :func:`statbench.testing.check_task` on a small excerpt of the data. The folder is
read in full first, so a malformed file stops here with one line, not after installing.
Templates live in ``statbench/templates/beir-*.tmpl`` (``string.Template`` syntax).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from string import Template

from statbench import __version__
from statbench.data.dataio import read_jsonl, record_id
from statbench.errors import StatbenchError
from statbench.loading.beir import find_folder, load_beir, task_info
from statbench.registry.plugins import get_registry

NAME = re.compile(r"^[a-z][a-z0-9_-]*$")  # task.schema.json's pattern for a task name
#: queries per split and distractor documents copied into the test sample
SAMPLE_QUERIES, SAMPLE_DISTRACTORS = 3, 10


def _template(name: str) -> Template:
    return Template(resources.files("statbench").joinpath(f"templates/{name}").read_text("utf-8"))


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[-_]+", name) if part) + "Task"


def scaffold_from_beir(name: str, beir_path, out_dir, log: logging.Logger | None = None) -> Path:
    """Write ``out_dir/statbench-task-NAME/`` for the BEIR folder ``beir_path``; returns it."""
    log = log or logging.getLogger("statbench")
    if not NAME.match(name):
        raise StatbenchError(f"task name {name!r}: use lower-case letters, digits, '-' and '_', starting with a letter")
    taken = get_registry().tasks.get(name)
    if taken is not None:
        raise StatbenchError(f"task name {name!r} is already registered by plugin {taken.plugin.name!r} "
                             f"({taken.plugin.distribution or 'in-process'}): choose another name")
    out_dir = Path(out_dir)
    if out_dir.is_dir():  # a killed run's staging goes now, whatever stops this run below
        remove_stale_staging(out_dir, log)
    dist = f"statbench-task-{name}"
    target = out_dir / dist
    if target.exists() or target.is_symlink():
        raise StatbenchError(f"{target} already exists: remove it or choose another --out")
    found = find_folder(beir_path)
    info = task_info(found)
    data = load_beir(found.corpus, found.queries, found.qrels, title=found.title_mode, log=log)
    package = "statbench_task_" + name.replace("-", "_")
    values = {
        "name": name, "dist": dist, "package": package, "class_name": class_name(name),
        "title_mode": found.title_mode, "description": _one_line(info.description),
        "statbench_version": __version__, "source": str(beir_path), "checksum": data.checksum,
        "corpus_size": f"{len(data.corpus):,}", "primary": info.primary,
        "measures": ", ".join(f"{m.label} (`{m.ir_measure}`)" for m in info.measures),
        "qrels_rows": "\n".join(f"| `qrels/{s.name}.tsv` | split `{s.name}`: {len(s.test):,} judged queries |"
                                for s in data.splits),
        "protocol_lines": "\n".join(f"- `{p.name}`{' (default)' if p.name == info.protocol().name else ''}: "
                                    f"split(s) {', '.join(p.splits)}" for p in info.protocols),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(out_dir, log)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out_dir))
    try:
        (staging / package).mkdir()
        (staging / "tests").mkdir()
        (staging / "pyproject.toml").write_text(_template("beir-pyproject.toml.tmpl").substitute(values), "utf-8")
        (staging / "README.md").write_text(_template("beir-README.md.tmpl").substitute(values), "utf-8")
        (staging / package / "__init__.py").write_text(f'"""statbench task plugin {name} (see loader.py)."""\n',
                                                       "utf-8")
        (staging / package / "loader.py").write_text(_template("beir-loader.py.tmpl").substitute(values), "utf-8")
        (staging / package / f"{name}.json").write_text(
            json.dumps(definition(name, info, found, data), indent=2, ensure_ascii=False) + "\n", "utf-8")
        (staging / "tests" / "test_task.py").write_text(_template("beir-test_task.py.tmpl").substitute(values),
                                                        "utf-8")
        write_sample(found, data, staging / "tests" / "data")
        try:
            staging.rename(target)
        except OSError as exc:  # written meanwhile by another `task new` (a non-empty folder is never replaced)
            raise StatbenchError(f"{target} could not be written ({exc.strerror or exc}): it appeared while this "
                                 "plugin was being written (another `statbench task new`?); nothing was changed") \
                from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


#: A staging folder is ``<out>/.statbench-task-staging-<pid>-<random>``: the pid of the
#: process writing it, so that a later run can tell one left by a killed run from one in use.
STAGING_PREFIX = ".statbench-task-staging-"


def remove_stale_staging(out_dir: Path, log: logging.Logger) -> list[Path]:
    """Remove the staging folders under ``out_dir`` whose writer is no longer running (a
    ``task new`` that was killed cannot clean up after itself); returns them."""
    removed = []
    for path in sorted(out_dir.glob(f"{STAGING_PREFIX}*")):
        pid_text = path.name[len(STAGING_PREFIX):].split("-", 1)[0]
        is_pid = pid_text.isascii() and pid_text.isdigit() and len(pid_text) <= 20  # int() reads it
        if not is_pid or not path.is_dir() or path.is_symlink() or _running(int(pid_text)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            log.info("removed %s, left by an interrupted `statbench task new` (process %s)", path, pid_text)
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists (this one included; another user's counts too)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or a pid this system cannot hold: leave it alone
    return True


def _one_line(text: str) -> str:
    return " ".join(text.split())


def definition(name: str, info, found, data) -> dict:
    """The task definition (validated by task.schema.json when the plugin is imported)."""
    default = info.protocol()
    default_splits = set(default.splits) if default else set()
    files = [
        {"name": "corpus.jsonl", "locations": ["corpus.jsonl"], "note": "BEIR corpus: {_id, title, text} per line"},
        {"name": "queries.jsonl", "locations": ["queries.jsonl"], "note": "BEIR queries: {_id, text} per line"},
    ]
    for split in found.qrels:
        spec = {"name": f"qrels/{split}.tsv", "locations": [f"qrels/{split}.tsv"],
                "note": "BEIR qrels: header query-id, corpus-id, score; tab-separated"}
        if split not in default_splits:
            spec["optional"] = True
        files.append(spec)
    return {
        "name": name,
        "title": _one_line(info.description),
        "language": info.language,
        "paper": "",
        "licence": "",
        "protocol": info.evaluation,
        "version": "1",
        "protocols": {p.name: {"splits": list(p.splits), **({"description": p.description} if p.description else {})}
                      for p in info.protocols},
        "default_protocol": info.protocol().name,
        "primary_measure": info.primary,
        "files": files,
        "splits": {  # which splits run together is declared once, in "protocols"
            "subsets": {s.name: len(s.test) for s in data.splits},
            "corpus_size": len(data.corpus),
        },
        "relevance": {str(grade): meaning for grade, meaning in info.relevance.items()},
        "measures": [{"label": m.label, "ir_measure": m.ir_measure} for m in info.measures],
        "depth": info.depth,
    }


def write_sample(found, data, folder: Path) -> None:
    """A small folder in the same layout for the plugin's own test: the first few test
    queries of each split, the documents they judge, and a few other documents."""
    queries: list[str] = []
    for split in data.splits:
        queries.extend(q for q in split.test[:SAMPLE_QUERIES] if q not in queries)
    judged = {d for q in queries for d in data.qrels[q]}
    distractors = [d for d in data.corpus if d not in judged][:SAMPLE_DISTRACTORS]
    wanted = judged | set(distractors)
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        for lineno, obj in read_jsonl(found.corpus):
            doc_id = record_id(found.corpus, obj["_id"], lineno, "_id", "document")  # as the loader read it
            if doc_id in wanted:
                row = {"_id": doc_id, **({"title": obj["title"]} if "title" in obj else {}), "text": obj["text"]}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps({"_id": qid, "text": data.queries[qid].text}, ensure_ascii=False) + "\n" for qid in queries)
    for split in data.splits:
        chosen = split.test[:SAMPLE_QUERIES]
        lines = [f"{q}\t{d}\t{g}\n" for q in chosen for d, g in data.qrels[q].items()]
        (folder / "qrels" / f"{split.name}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(lines), "utf-8")
