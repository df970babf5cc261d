"""A results repository and the submissions in it, read strictly.

Layout (like mteb/results: a pull request adds folders, never edits another's)::

    RESULTS_REPO/
      statbench-results.json        {"format": 1}: marks a results repository
      results/TASK/MODEL-LABEL/CONFIG/
        results.json                a byte copy of the output set's results.json
        run.trec.gz                 its run.trec, gzipped (run_file.sha256 is the sha256 of the
                                    uncompressed file)
        model_card.json             validated by schemas/model_card.schema.json
        source.json                 where the third-party plugins' code can be installed from
                                    (:mod:`statbench.leaderboard.repo.source`); absent in submissions
                                    made before it was recorded ("source not recorded")
        NAME-VERSION-….whl          a wheel source.json names, stored beside the run

TASK, MODEL-LABEL and CONFIG are what ``statbench run`` names its default output folder
after (:func:`location_of`): a folder says which result it holds, and
:func:`read_submission` refuses one whose path and results disagree. Everything that reads
a submission (the repository check, ``leaderboard build --verify``) reads it here."""

from __future__ import annotations

import errno
import functools
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from statbench.commands.cli import request_from_argv
from statbench.data.atomic import write_json
from statbench.data.gunzip import gunzipped_sha256 as bounded
from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.collect.identity import budget
from statbench.leaderboard.repo.source import SOURCE_FILE, SourceRecord, read_source, source_problems
from statbench.leaderboard.verify.claims import command_disagreement, command_words
from statbench.results.record import Results, parse_strict
from statbench.run.outputs import config_folder_name
from statbench.run.request import default_output_dir
from statbench.scoring.publishable import read_publishable

REPOSITORY_MARKER = "statbench-results.json"
REPOSITORY_FORMAT = 1
#: the folder of a repository holding the submissions
RESULTS_DIR = "results"
RESULTS_FILE, RUN_FILE, CARD_FILE = "results.json", "run.trec.gz", "model_card.json"
#: the files every submission holds (besides source.json and the wheels it names)
SUBMISSION_FILES = (RESULTS_FILE, RUN_FILE, CARD_FILE)
CARD_VERSION = 1
#: problems shown in one error line
SHOWN_PROBLEMS = 3


class SubmissionError(StatbenchError):
    """A submission (or a results repository) that cannot be accepted; one line."""

@dataclass(frozen=True)
class Submission:
    """One submitted result: its folder, the record, the gzipped run file, the model card
    and its code source (None: "source not recorded", a submission older than source.json)."""

    folder: Path
    results: Results
    run_path: Path
    model_card: dict
    source: SourceRecord | None = None

@dataclass(frozen=True)
class Location:
    """Where a result goes in a repository: ``results/TASK/LABEL/CONFIG``. ``config`` is
    None when it cannot be derived here (the recorded command names a task or model not
    installed on this machine): ``why`` says why, and only its label prefix is checked."""

    task: str
    label: str
    config: str | None
    why: str | None = None

    def path(self) -> Path:
        if self.config is None:
            raise SubmissionError(f"cannot name the configuration folder of this result: {self.why}")
        return Path(RESULTS_DIR, self.task, self.label, self.config)

# --- the repository -------------------------------------------------------------------------------

def write_repository_marker(root) -> None:
    """Mark ``root`` as a results repository (``statbench-results.json``)."""

    write_json(Path(root) / REPOSITORY_MARKER, {"format": REPOSITORY_FORMAT})

def check_repository(root) -> Path:
    """``root`` if it is a results repository of a format this statbench reads."""
    root = Path(root)
    marker = root / REPOSITORY_MARKER
    if not marker.is_file():
        raise SubmissionError(f"{root}: not a statbench results repository (no {REPOSITORY_MARKER}); "
                              f"create one with 'statbench leaderboard init-repo {root}'")
    obj = read_json_strict(marker)
    if obj != {"format": REPOSITORY_FORMAT}:
        raise DataFormatError(marker, f"expected {{\"format\": {REPOSITORY_FORMAT}}}: a results repository of "
                                      "another format or a damaged marker")
    return root

def is_submission_file_name(name: str) -> bool:
    """Whether a file of this name may be in a submission folder (which wheels may is for
    its source.json to say: :func:`read_submission`)."""
    return name in SUBMISSION_FILES or name == SOURCE_FILE or (name.endswith(".whl") and not name.startswith("."))

def submission_folders(root) -> list[Path]:
    """Every ``results/TASK/LABEL/CONFIG`` folder of a repository, sorted (hidden staging
    folders of an interrupted ``submit`` left out)."""
    base = Path(root) / RESULTS_DIR
    return sorted(p for p in base.glob("*/*/*") if p.is_dir() and not any(part.startswith(".") for part in
                                                                          p.relative_to(base).parts))

# --- where a result goes ----------------------------------------------------------------------------

def model_label(results: Results) -> str:
    """``MODEL``, ``MODEL+RERANKER`` or ``pool-NAME[+RERANKER]``: the run's label."""
    label = f"pool-{results.pool}" if results.pool else results.model.name
    return label + (f"+{results.reranker.name}" if results.reranker else "")

def location_of(results: Results) -> Location:
    """The folder ``statbench run`` names this result's default output folder by, from its
    recorded command (re-read by ``statbench run``'s own options, so the name is exactly
    ``statbench run``'s), checked against the record. A command that names what is not
    installed here gives a location without ``config``; one that disagrees with the record
    (another model, parameter value, reranker or pool), or that is not a ``statbench run``
    command line, is refused."""

    label = config_folder_name(model_label(results))
    fallback_task = config_folder_name(results.task.name)
    words = command_words(results.command)
    if words is None:
        raise SubmissionError(f"the recorded command {results.command!r} is not a 'statbench run' command line: "
                              "the result cannot be placed (a submission is a statbench run's output)")

    try:
        request = request_from_argv(words)
        folder = default_output_dir(request)
    except StatbenchError as exc:
        return Location(fallback_task, label, None, str(exc))
    disagreement = command_disagreement(request, results)
    if disagreement:
        raise SubmissionError(f"the recorded command {results.command!r} does not describe this result: {disagreement}")
    return Location(folder.parent.name, label, folder.name)

def location_problem(folder: Path, results: Results) -> str | None:
    """How ``folder`` (``.../TASK/LABEL/CONFIG``) disagrees with where ``results`` goes."""
    location = location_of(results)
    found = (folder.parent.parent.name, folder.parent.name, folder.name)
    if location.config is not None:
        wanted = (location.task, location.label, location.config)
        if found != wanted:
            return f"the folder is {'/'.join(found)} but this result's is {'/'.join(wanted)}"
        return None
    # not derivable here: the parts the record alone names
    task_ok = found[0] == location.task or found[0].startswith(location.task + "~")
    config_ok = found[2].startswith(location.label) and found[2][len(location.label):][:1] in ("", "@", ",", "~")
    if not (task_ok and found[1] == location.label and config_ok):
        return (f"the folder is {'/'.join(found)} but this result is task {location.task!r}, "
                f"label {location.label!r}")
    return None

# --- the model card ------------------------------------------------------------------------------

@functools.cache
def card_schema() -> dict:
    text = resources.files("statbench.leaderboard").joinpath("schemas/model_card.schema.json").read_text("utf-8")
    return json.loads(text)

@functools.cache
def _card_validator():
    import jsonschema

    return jsonschema.Draft202012Validator(card_schema())

def card_errors(card) -> list[str]:
    """Every schema violation of a model card, as 'path: message' (empty when valid)."""
    errors = sorted(_card_validator().iter_errors(card), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]

def card_parameters(results: Results) -> dict:
    """The card's ``parameters``: the run's configuration as results.json records it."""
    return {"model": dict(results.model.params),
            "reranker": dict(results.reranker.params) if results.reranker else None}

def card_problems(card, results: Results) -> list[str]:
    """The schema's problems, then the card's disagreements with the result: its
    ``parameters`` must be the recorded ones, its ``budget`` the reduced budget the result
    ran (absent when it ran the protocol's settings), its ``training_data`` not "none" for a
    model the result records as trained on the task's training queries. The rest of a card
    (source, licence, hardware, ...) is the submitter's word: declared."""
    problems = card_errors(card)
    if problems:
        return problems

    if card["parameters"] != card_parameters(results):
        problems.append("parameters: not the parameters results.json records")
    ran, said = budget(results), card.get("budget")
    if ran and said != ran:
        problems.append(f"budget: the result ran a reduced budget ({ran}) and the card "
                        + ("does not say so" if said is None else f"says {said!r}"))
    elif said and not ran:
        problems.append(f"budget: the card says {said!r} but the result ran the protocol's settings")
    if results.model.trained and card["training_data"].strip().lower() == "none":
        problems.append("training_data: 'none', but results.json records a model trained on the task's training "
                        "queries (model.trained)")
    return problems

def card_text(card: dict) -> str:
    """A model card as written in a repository (sorted keys: the same card, the same bytes)."""
    return json.dumps(card, ensure_ascii=False, indent=2, sort_keys=True) + "\n"

# --- reading ---------------------------------------------------------------------------------------

def read_json_strict(path: Path):
    """A JSON file read by the results' strict parser (no NaN, no duplicate key, UTF-8)."""

    try:
        return parse_strict(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    except (ValueError, RecursionError) as exc:
        raise DataFormatError(path, f"not valid JSON: {exc}") from None

def gunzipped_sha256(path: Path) -> str:
    """sha256 of a gzip file's content; a truncated, damaged or over-large one names itself
    (:mod:`statbench.data.gunzip`)."""

    return bounded(path)

def read_submission(folder, *, check_run: bool = True) -> Submission:
    """One submission folder, read strictly: exactly the three files, plus source.json and
    the wheels it names when there is one (regular files, no links); results.json by the
    strict reader plus the publishability checks; the model card by its schema and in
    agreement with the result; source.json strictly (each wheel hashed) and in agreement
    with the result's plugins; the folder where this result goes; and (``check_run``) the
    run file a complete gzip whose content hashes to ``run_file.sha256``. Any problem is
    one ``DataFormatError``/``SubmissionError`` line naming the folder or file."""

    folder = Path(folder)
    present, source = _listing(folder)
    results = read_publishable(present[RESULTS_FILE])
    card = _agreement(folder, present, source, results)
    run_path = present[RUN_FILE]
    if check_run:
        actual = gunzipped_sha256(run_path)
        if actual != results.run_file.sha256:
            raise DataFormatError(run_path, f"its content hashes to {actual[:12]}…, not to the "
                                            f"{results.run_file.sha256[:12]}… results.json records")
    return Submission(folder=folder, results=results, run_path=run_path, model_card=card, source=source)

def _listing(folder: Path) -> tuple[dict[str, Path], SourceRecord | None]:
    """The folder's files by name and its source record: exactly the three files, plus
    source.json and the wheels it names, all regular files."""
    if folder.is_symlink() or not folder.is_dir():
        raise SubmissionError(f"{folder}: not a submission folder")
    present = {p.name: p for p in folder.iterdir()}
    missing = [name for name in SUBMISSION_FILES if name not in present]
    if missing:
        raise SubmissionError(f"{folder}: missing {', '.join(missing)} (a submission holds {', '.join(SUBMISSION_FILES)})")
    for name in (*SUBMISSION_FILES, SOURCE_FILE):
        if name in present and (present[name].is_symlink() or not present[name].is_file()):
            raise SubmissionError(f"{present[name]}: not a regular file")
    source = read_source(folder) if SOURCE_FILE in present else None
    allowed = {*SUBMISSION_FILES, *((SOURCE_FILE, *source.wheel_files()) if source else ())}
    unexpected = sorted(set(present) - allowed)
    if unexpected:
        raise SubmissionError(f"{folder}: unexpected {', '.join(map(repr, unexpected))} (a submission holds only "
                              f"{', '.join(sorted(allowed))})")
    return present, source

def _agreement(folder: Path, present: dict[str, Path], source: SourceRecord | None, results: Results) -> dict:
    """The model card, once it and source.json agree with ``results`` and the folder is
    where ``results`` goes."""
    card = read_json_strict(present[CARD_FILE])
    problems = card_problems(card, results)
    if problems:
        raise DataFormatError(present[CARD_FILE], "; ".join(problems[:SHOWN_PROBLEMS]))
    problems = source_problems(source, results) if source else []
    if problems:
        raise DataFormatError(present[SOURCE_FILE], "; ".join(problems[:SHOWN_PROBLEMS]))
    where = location_problem(folder, results)
    if where:
        raise SubmissionError(f"{folder}: {where}")
    return card

def repository_holding(folder, known: dict | None = None) -> Path | None:
    """The results repository holding ``folder``: the nearest folder at or above it (as
    written, made absolute) with the marker, or None. ``known``: kept between calls (a build
    asks for every row): folder -> whether it holds the marker (each folder is looked at once),
    and ``(folder,)`` -> the repository holding it (a row's folder's parent is asked once)."""
    # strings, not Path objects: a build asks this for each of thousands of rows
    candidate = os.path.abspath(folder)
    visited = []
    while True:
        if known is not None and (candidate,) in known:
            holding = known[(candidate,)]
            break
        found = known.get(candidate) if known is not None else None
        if found is None:
            found = _is_file(os.path.join(candidate, REPOSITORY_MARKER))
            if known is not None:
                known[candidate] = found
        visited.append(candidate)
        if found:
            holding = candidate
            break
        parent = os.path.dirname(candidate)
        if parent == candidate:
            holding = None
            break
        candidate = parent
    if known is not None:
        for seen in visited:
            known[(seen,)] = holding
    return None if holding is None else Path(holding)


def _is_file(path: str) -> bool:
    """``Path(path).is_file()`` (a missing file or folder is no file; any other error is raised)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return False
        raise
    except ValueError:  # a NUL in the name, as pathlib says it
        return False


@dataclass(frozen=True)
class Accepted:
    """What a build shows of a submission its check accepts: its model card (as read and
    checked against the result) and its source record (None: an older one without)."""

    card: dict
    source: SourceRecord | None

def accepted_submission(results_path: Path, read_results: Callable[[], Results],
                        known: dict[str, bool] | None = None) -> Accepted | str | None:
    """A results file inside a results repository (:func:`repository_holding`), whose record
    ``read_results()`` gives (called only inside a repository: a build's other rows are not
    loaded): its :class:`Accepted` card and source when it is a submission
    :func:`read_submission` accepts (the run file aside: a build's verifier hashes it), else
    the one line why not; None when it is in no repository. A board built from a repository
    shows only its submissions: a results file outside a submission folder, or a folder whose
    model card is missing or does not read (its declared training, test queries seen or not,
    is then unknown), is what ``leaderboard check`` refuses."""
    absolute = os.path.abspath(results_path)
    repository = repository_holding(os.path.dirname(absolute), known)
    if repository is None:
        return None
    path = Path(absolute)
    parts = path.relative_to(repository).parts
    if len(parts) != 5 or parts[0] != RESULTS_DIR or parts[4] != RESULTS_FILE:
        return (f"{path}: not in a submission folder ({RESULTS_DIR}/TASK/LABEL/CONFIG/{RESULTS_FILE}) of the results "
                f"repository {repository}")
    try:
        present, source = _listing(path.parent)
        card = _agreement(path.parent, present, source, read_results())
    except (OSError, StatbenchError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return Accepted(card, source)
