"""The work of ``statbench submit`` (:mod:`.submit` is the command): finished runs into a results
repository, each checked before anything is written (one refused, none written), staged beside
its target and renamed into place under the target's lock."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from statbench.data.atomic import fsync_dir, reclaim, staging_dir
from statbench.data.checksum import file_sha256
from statbench.errors import DataFormatError, StatbenchError
from statbench.leaderboard.collect.identity import budget
from statbench.leaderboard.repo.source import SOURCE_FILE, read_source, source_text
from statbench.leaderboard.repo.source_finder import SourceFinder
from statbench.leaderboard.repo.submission import (
    CARD_FILE,
    CARD_VERSION,
    RESULTS_FILE,
    RUN_FILE,
    SUBMISSION_FILES,
    SubmissionError,
    card_parameters,
    card_problems,
    card_text,
    check_repository,
    gunzipped_sha256,
    location_of,
    model_label,
    read_json_strict,
)
from statbench.leaderboard.verify.claims import command_request, model_problem
from statbench.scoring.publishable import read_publishable
from statbench.storage.folder_locks import FolderBusyError, folder_lock

#: card fields a submitter must state (``paper``, ``n_parameters`` are optional)
REQUIRED_FIELDS = ("model.name", "model.version", "source", "training_data", "test_queries_seen", "hardware",
                   "licence", "authors")
_FLAG_OF = {"model.name": "--model-name", "model.version": "--model-version",
            "source": "--hub-id/--revision or --local",
            "training_data": "--training-data", "test_queries_seen": "--test-queries-seen/--no-test-queries-seen",
            "hardware": "--hardware", "licence": "--licence", "authors": "--author"}

@dataclass
class _Prepared:
    """One output set, checked, with where it goes."""

    output_dir: Path
    results_path: Path
    run_source: Path
    results: object  # Results
    target: Path
    budget: str | None


def submit_outputs(output_dirs: list[Path], repo: Path, *, card_file: Path | None = None, flags: dict | None = None,
                   budget_ok: bool = False, ask: bool = False, index_url: str | None = None,
                   on_wait=None) -> list[str]:
    """Check every output set, build the card, find the plugins' source, then write each
    submission as a unit. Returns what was done: one line per plugin distribution's
    source, one per output set and a summary. ``on_wait`` is told (one line) when another
    submit is writing the same folder and this one waits for it."""
    import tempfile

    repo = check_repository(repo)
    prepared = [_prepare(Path(d), repo) for d in output_dirs]
    labels = sorted({p.target.parent.name for p in prepared})
    if len(labels) > 1:
        raise SubmissionError(f"the output sets are of {len(labels)} models ({', '.join(labels)}): a model card "
                              "describes one model; submit each model on its own")
    targets = [p.target for p in prepared]
    for i, target in enumerate(targets):
        if target in targets[:i]:
            raise SubmissionError(f"{prepared[i].output_dir} and {prepared[targets.index(target)].output_dir} are one "
                                  f"configuration ({target.relative_to(repo)}); submit one of them")
    given = _read_card_file(card_file)
    _check_budgets(prepared, budget_ok or "budget" in given, ask)
    common = _card_fields(prepared[0].results, given, flags or {}, ask)
    cards = []
    for item in prepared:
        card = _card_for(common, item, budget_ok or ask)
        problems = card_problems(card, item.results)
        if problems:
            where = f"--card {card_file}" if card_file else "model card"
            raise SubmissionError(f"{where} for {item.output_dir}: {'; '.join(problems[:3])}")
        cards.append(card)
    for item, card in zip(prepared, cards):  # before anything is written: a refusal writes nothing
        _check_target(item, card, None)
    with tempfile.TemporaryDirectory(prefix="statbench-submit-") as work:
        finder = SourceFinder(Path(work), index_url)
        sources = [finder.sources_of(item.results) for item in prepared]
        lines = list(dict.fromkeys(f"source: {note}" for found in sources for note in found.notes))
        for item, card, found in zip(prepared, cards, sources):
            _check_target(item, card, found)
        added = 0
        for item, card, found in zip(prepared, cards, sources):
            done = _write(item, card, found, on_wait)
            added += done == "added"
            lines.append(f"{done}: {item.target.relative_to(repo).as_posix()} (from {item.output_dir})")
    lines.append(f"{added} submission(s) added to {repo}"
                 + ("; commit the new folders and open a pull request" if added else ""))
    return lines

# --- checking an output set ---------------------------------------------------------------------

def _prepare(output_dir: Path, repo: Path) -> _Prepared:
    """Read an output set strictly and check its run file; where it goes in ``repo``."""

    results_path = output_dir / "results.json"
    if not output_dir.is_dir():
        raise SubmissionError(f"{output_dir}: not a folder (give a statbench run output folder)")
    if not results_path.is_file():
        raise SubmissionError(f"{output_dir}: no results.json (not a finished statbench run output folder)")
    results = read_publishable(results_path)
    relative = Path(results.run_file.path)
    run_source = output_dir / relative
    if relative.is_absolute() or ".." in relative.parts:
        raise DataFormatError(results_path, f"run_file.path {results.run_file.path!r} is not inside the output folder")
    if run_source.is_symlink() or not run_source.is_file():
        raise SubmissionError(f"{run_source}: the run file results.json names is missing; a submission carries its "
                              "run file (it is re-scored before it is published)")
    actual = file_sha256(run_source)
    if actual != results.run_file.sha256:
        raise DataFormatError(run_source, f"hashes to {actual[:12]}…, not to the {results.run_file.sha256[:12]}… "
                                          "results.json records: not the run these results were scored from")
    target = repo / location_of(results).path()
    problem = _model_claims_problem(results)
    if problem:
        raise SubmissionError(f"{results_path}: {problem}")
    return _Prepared(output_dir, results_path, run_source, results, target, budget(results))

def _model_claims_problem(results) -> str | None:
    """What ``leaderboard check`` refuses of the record's models beyond its command's words
    (:func:`statbench.leaderboard.verify.claims.model_problem`: their family, training, and what a
    reproduction needs): refused here too, before a pull request is made of it."""

    request = command_request(results)
    return None if request is None else model_problem(request, results)

def _check_budgets(prepared: list[_Prepared], budget_ok: bool, ask: bool) -> None:
    reduced = [p for p in prepared if p.budget]
    if not reduced or budget_ok:
        return
    named = ", ".join(f"{p.output_dir} ({p.budget})" for p in reduced)
    if ask and click.confirm(f"reduced-budget results: {named}; submit them badged as such?", default=False):
        return
    raise SubmissionError(f"{named}: ran a reduced budget, not the protocol's settings; say so with --budget-ok "
                          "(or the card's \"budget\") to submit it badged as such")

def _check_target(item: _Prepared, card: dict, found) -> None:
    """A pull request adds folders, never edits another's: an existing folder must hold
    exactly what would be written (then it is left as it is). ``found`` (the sources, or
    None before they are looked for) is compared too."""

    target = item.target
    if target.exists() or target.is_symlink():
        same = _same_submission(item, card, found)
        if same is None:
            raise SubmissionError(f"{target}: holds this submission without its {SOURCE_FILE} (made by an older "
                                  "statbench); remove the folder and submit again to record its source")
        if not same:
            raise SubmissionError(f"{target}: already holds another submission of this configuration; a "
                                  "submission adds a folder and never replaces one (remove it first if it is yours)")

def _same_submission(item: _Prepared, card: dict, found) -> bool | None:
    """Whether ``item.target`` holds this very submission (its results, card, run and,
    once ``found``, source; a stored wheel by its name, not its bytes: a rebuild of the
    same code need not give the same bytes); None when it does, but without a source."""

    target = item.target
    if target.is_symlink() or not target.is_dir():
        return False
    names = {p.name for p in target.iterdir()}
    if not set(SUBMISSION_FILES) <= names:
        return False
    try:
        if not ((target / RESULTS_FILE).read_bytes() == item.results_path.read_bytes()
                and (target / CARD_FILE).read_text("utf-8") == card_text(card)
                and gunzipped_sha256(target / RUN_FILE) == item.results.run_file.sha256):
            return False
        if SOURCE_FILE not in names:
            return None if names == set(SUBMISSION_FILES) else False
        held = read_source(target)
    except (OSError, UnicodeDecodeError, StatbenchError):
        return False
    if names != {*SUBMISSION_FILES, SOURCE_FILE, *held.wheel_files()}:
        return False
    return found is None or _without_hashes(held) == _without_hashes(found.record)

def _without_hashes(record):
    import dataclasses

    return dataclasses.replace(record, distributions=tuple(dataclasses.replace(d, sha256=None)
                                                           for d in record.distributions))

# --- the model card ------------------------------------------------------------------------------

def _read_card_file(card_file: Path | None) -> dict:
    """The ``--card`` file's fields (strict JSON, an object; the schema is checked on the
    complete card), or none."""

    if card_file is None:
        return {}
    if not card_file.is_file():
        raise SubmissionError(f"--card {card_file}: no such file")
    card = read_json_strict(card_file)
    if not isinstance(card, dict):
        raise DataFormatError(card_file, "a model card is a JSON object")
    return card

def _card_fields(results, given: dict, flags: dict, ask: bool) -> dict:
    """The fields every card of this submission shares: the card file, then the flags,
    then what results.json records, then (on a terminal) answers; a required field still
    missing is one line naming its flag."""

    card = dict(given)
    raw = card.get("model")
    model = dict(raw) if isinstance(raw, dict) else ({} if raw is None else raw)
    if isinstance(model, dict):
        for key in ("name", "version"):
            if flags.get(f"model_{key}") is not None:
                model[key] = flags[f"model_{key}"]
    if flags.get("local") and flags.get("hub_id"):
        raise SubmissionError("--local and --hub-id: the weights are either on a hub or local, give one")
    if flags.get("revision") and not flags.get("hub_id"):
        raise SubmissionError("--revision: give the --hub-id it is a revision of")
    if flags.get("hub_id"):
        if not flags.get("revision"):
            raise SubmissionError("--hub-id: give the --revision (commit or tag) the weights were taken at")
        card["source"] = {"hub_id": flags["hub_id"], "revision": flags["revision"]}
    elif flags.get("local"):
        card["source"] = "local"
    for key in ("n_parameters", "training_data", "test_queries_seen", "hardware", "licence", "authors", "paper"):
        if flags.get(key) is not None:
            card[key] = flags[key]
    card["model"] = model
    # what results.json records (never estimated): defaults, offered in a prompt when asking
    defaults = {"model.name": model_label(results),
                "model.version": results.model.version if results.model.version and not results.reranker else None,
                "hardware": _recorded_hardware(results)}
    if ask:
        _ask_missing(card, defaults)
    for name, value in defaults.items():
        if value is not None and _get(card, name) in (None, ""):
            if name.startswith("model."):
                if isinstance(card["model"], dict):
                    card["model"][name.split(".", 1)[1]] = value
            else:
                card[name] = value
    missing = [name for name in REQUIRED_FIELDS if _get(card, name) in (None, "", [])]
    if missing:
        raise SubmissionError("model card: " + "; ".join(f"{name} missing (give {_FLAG_OF[name]})" for name in missing)
                              + ", or a --card file, or run on a terminal to be asked")
    return card

def _recorded_hardware(results) -> str | None:
    """``results.efficiency.hardware`` as one line, where the run measured it."""
    hardware = getattr(getattr(results, "efficiency", None), "hardware", None)
    if hardware is None:
        return None
    parts = [getattr(hardware, "cpu_model", None)]
    cores = getattr(hardware, "cpu_cores", None)
    if cores:
        parts.append(f"{cores} cores")
    gpu = getattr(hardware, "gpu", None)
    parts.append(gpu or None)
    text = ", ".join(str(p) for p in parts if p)
    return text or None

def _get(card: dict, name: str):
    if name.startswith("model."):
        model = card.get("model")
        return model.get(name.split(".", 1)[1]) if isinstance(model, dict) else None
    return card.get(name)

def _ask_missing(card: dict, defaults: dict) -> None:
    """Click prompts for every missing field (a terminal, or --interactive); what
    results.json records is the offered default."""
    model = card["model"]
    if isinstance(model, dict):
        for key, text in (("name", "Model name"), ("version", "Model version")):
            if not model.get(key):
                model[key] = click.prompt(text, default=defaults[f"model.{key}"])
    if "source" not in card:
        hub = click.prompt("Hub id of the weights ('local' if they are not on a hub)")
        card["source"] = "local" if hub.strip() == "local" else {"hub_id": hub.strip(),
                                                                 "revision": click.prompt("Hub revision").strip()}
    if not card.get("training_data"):
        card["training_data"] = click.prompt("Training data ('none' for an untrained model)")
    if card.get("test_queries_seen") is None:
        card["test_queries_seen"] = click.prompt("Was any test query of the task seen in training or tuning? (yes/no)",
                                                 type=click.BOOL)
    for key, text in (("hardware", "Hardware (CPU model and cores, GPU)"), ("licence", "Licence")):
        if not card.get(key):
            card[key] = click.prompt(text, default=defaults.get(key))
    if not card.get("authors"):
        answer = click.prompt("Authors (comma-separated)")
        card["authors"] = [a.strip() for a in answer.split(",") if a.strip()]
    if "paper" not in card:
        link = click.prompt("Paper link (empty for none)", default="", show_default=False).strip()
        if link:
            card["paper"] = link

def _card_for(common: dict, item: _Prepared, budget_said: bool) -> dict:
    """The card of one output set: the shared fields, its recorded parameters and, when
    the submitter acknowledged reduced budgets, its budget."""

    card = {**common, "card_version": common.get("card_version", CARD_VERSION)}
    card.setdefault("parameters", card_parameters(item.results))
    if item.budget and budget_said and "budget" not in common:
        card["budget"] = item.budget
    return card

# --- writing -------------------------------------------------------------------------------------

def _write(item: _Prepared, card: dict, found, on_wait=None) -> str:
    """Stage the files beside the target (results.json, run.trec.gz, model_card.json,
    source.json and the wheels it names), then, holding the target's lock, rename the
    folder into place: "added", or "unchanged" when the identical submission is already
    there. Leftovers of a killed submit of this folder are reclaimed first; a submit
    writing the same folder meanwhile is waited for."""
    import contextlib
    import gzip
    import hashlib
    import os
    import shutil

    target = item.target
    target.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(target, on_wait=on_wait, what="another submit"):
        reclaim(target)
        _reclaim_beside(target)
        if target.exists() or target.is_symlink():
            _check_target(item, card, found)  # another submit may have added it meanwhile
            return "unchanged"  # the identical submission is there
        staging = staging_dir(target)
        try:
            results_bytes = item.results_path.read_bytes()
            _write_file(staging / RESULTS_FILE, results_bytes)
            digest = hashlib.sha256()
            with open(staging / RUN_FILE, "wb") as raw:
                # no file name, time 0: the same run gives the same bytes
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz, \
                        open(item.run_source, "rb") as source:
                    for chunk in iter(lambda: source.read(1 << 20), b""):
                        digest.update(chunk)
                        gz.write(chunk)
                raw.flush()
                os.fsync(raw.fileno())
            if digest.hexdigest() != item.results.run_file.sha256:
                raise DataFormatError(item.run_source, "changed while it was being submitted; nothing was written")
            if item.results_path.read_bytes() != results_bytes:
                raise DataFormatError(item.results_path, "changed while it was being submitted; nothing was written")
            _write_file(staging / CARD_FILE, card_text(card).encode("utf-8"))
            for name, built in found.wheels.items():
                _write_file(staging / name, built.read_bytes())
            _write_file(staging / SOURCE_FILE, source_text(found.record).encode("utf-8"))
            read_source(staging)  # what is published reads back (each wheel hashed again)
            fsync_dir(staging)
            try:  # the target is absent (checked under the lock); a rename never replaces a folder with content
                os.rename(staging, target)
            except OSError:
                raise SubmissionError(f"{target}: appeared while this submission was written; nothing was "
                                      "replaced") from None
            fsync_dir(target.parent)
        finally:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(staging)
    return "added"

def _reclaim_beside(target: Path) -> None:
    """Reclaim what killed submits left beside the other configurations of this label
    (each under its own lock, skipped while another submit holds it)."""
    import re

    names = set()
    for entry in target.parent.iterdir():
        match = re.fullmatch(r"\.(.+)\.(?:staging|old|v|link)-[0-9a-f-]+", entry.name)
        if match and match.group(1) != target.name:
            names.add(match.group(1))
    for name in sorted(names):
        try:
            with folder_lock(target.parent / name, timeout=0):
                reclaim(target.parent / name)
        except FolderBusyError:
            continue

def _write_file(path: Path, data: bytes) -> None:
    import os

    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
