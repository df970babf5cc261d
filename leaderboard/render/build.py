"""``statbench leaderboard build``: the static site from a folder of results JSON files.

Determinism: inputs are sorted, nothing time-dependent is written (dates shown are
those in the results), gzip headers carry no name or time: the same results give
byte-identical files. The site is built in a temporary folder beside ``out_dir`` and
swapped in only when complete; a board whose inputs did not change keeps its files
(.incremental)."""

from __future__ import annotations

import contextlib
import gc
import shutil
import sys
from importlib import resources
from pathlib import Path

from statbench import __version__
from statbench.data.atomic import reclaim, replace_dir, staging_dir
from statbench.errors import StatbenchError
from statbench.leaderboard.caches.incremental import (
    MARKER,
    board_digest,
    marker_text,
    read_manifest,
    read_states,
    reuse,
    write_states,
)
from statbench.leaderboard.caches.records import RecordCache
from statbench.leaderboard.caches.runcopies import RunDigests
from statbench.leaderboard.collect.reading import collect
from statbench.leaderboard.forkmap import start
from statbench.leaderboard.render.admitted import admit_rows
from statbench.leaderboard.render.board_files import render_board
from statbench.leaderboard.render.index_page import STATIC_FILES as INDEX_STATIC
from statbench.leaderboard.render.index_page import index_html, overview_sections
from statbench.leaderboard.render.overview_cache import SectionsCache, sections_digest
from statbench.leaderboard.render.report import BuildReport
from statbench.leaderboard.render.run_links import resolved_root
from statbench.leaderboard.render.task_page import PAGE_SIZE, start_tests
from statbench.leaderboard.render.templating import jinja_environment, slug, write_text
from statbench.storage.filedigests import file_digests
from statbench.storage.folder_locks import folder_lock

DEFAULT_BASELINE = "bm25"




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
    :class:`~statbench.leaderboard.verify.verify.Verifier` every row is verified by (``--verify``).
    ``explorer``: write each board's per-query explorer, with the task data it may show
    (:class:`.explorer.TaskTexts`; ``None``: no explorer)."""
    if page_size < 1:
        raise StatbenchError(f"page size {page_size} is not a positive number of rows")
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    resolved_root.cache_clear()  # a folder's real path may change between two builds
    with _no_gc_pauses():
        collected = collect(results_dir, verify=verify, records=RecordCache.default())
        gc.freeze()  # the records read: out of the cycle collector's sight (and its writes) in the forks too
        try:
            # one build at a time into one folder: a second waits, saying so (or stops in one line)
            with folder_lock(out_dir, what="another build", on_wait=lambda line: print(f"note: {line}", file=sys.stderr)):
                report = _build_from(collected, results_dir, out_dir, baseline, measure, copy_runs, page_size,
                                     explorer)
        finally:
            gc.unfreeze()
    file_digests("leaderboard").save()  # the inputs' digests this build took (.filedigests)
    return report


def _build_from(collected, results_dir: Path, out_dir: Path, baseline: str, measure: str | None, copy_runs: bool,
                page_size: int, explorer=None) -> BuildReport:
    """The site from the collected rows (see :func:`build_site`): the rows admitted, each board
    rendered or kept, the index and static files written, the new site swapped in."""
    tasks = collected.boards
    report = BuildReport(out_dir=out_dir, problems=collected.problems, notes=list(collected.notes),
                         skipped=list(collected.problems))
    admit_rows(tasks, report)
    _check_measure(tasks, measure)
    env = jinja_environment()
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
        # a board whose inputs are those of the previous build keeps its files (see .incremental)
        board_digests = {name: board_digest(name, slugs[name], rows, options, nav, results_dir)
                         for name, rows in tasks.items()}
        # the overview (every benchmark's rows across its boards, their ranks): kept from a build of
        # the same boards, else made once, in a fork, while the boards are rendered (it reads the
        # same rows, none of what boards write)
        sections = _OverviewSections(lambda: overview_sections(env, tasks, collected.keys, slugs), board_digests)
        forks.append(sections.fork)

        def render(name: str, digests: RunDigests, tests) -> dict:
            entry = render_board(env, context, name, tasks[name], baseline, measure, tmp, slugs[name], copy_runs,
                                 results_dir, page_size, digests, explorer, tests)
            entry["digest"] = board_digests[name]
            return entry

        entries, digests = _board_entries(tasks, board_digests, previous, known, out_dir, tmp, forks, render,
                                          lambda name: start_tests(tasks[name], baseline, measure),
                                          collected.run_digests)
        boards, summaries = _reported(report, tasks, entries, previous, out_dir)
        overview = sections.result()
        _write_site_files(env, tmp, summaries, boards, explorer is not None, overview)
        report.pages.insert(0, out_dir / "index.html")
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


class _OverviewSections:
    """The first page's overview sections: those a build of the same boards kept
    (:class:`~statbench.leaderboard.render.overview_cache.SectionsCache`), else ``make()`` begun in a
    fork (:attr:`fork`), kept once made."""

    def __init__(self, make, board_digests: dict[str, str]):
        self.make, self.kept = make, SectionsCache()
        self.digest = sections_digest(board_digests)
        self.found = self.kept.get(self.digest)
        self.fork = start(make) if self.found is None else None

    def result(self) -> tuple[str, list[str]]:
        if self.found is None:
            self.found = self.fork.result(died=self.make)
            self.kept.put(self.digest, self.found)
        return self.found


def _check_measure(tasks: dict, measure: str | None) -> None:
    """``--measure`` names a measure of some board (a board without it tests its primary one)."""
    if measure is not None and tasks:
        known = sorted({m.label for rows in tasks.values() for row in rows for m in row.results.measures})
        if measure not in known:
            raise StatbenchError(f"--measure {measure!r} is not a measure of any board (measures: {', '.join(known)})")


def _board_entries(tasks: dict, board_digests: dict, previous: dict, known: dict, out_dir: Path, tmp: Path,
                   forks: list, render, begin_tests, run_digests: dict) -> tuple[dict[str, dict], RunDigests | None]:
    """Every board's manifest entry: an unchanged board's files linked from the previous site
    (in a fork while the changed boards render), any other board rendered by ``render``. The
    run files' sha256 (``RunDigests``) are read when the first board is rendered (None: none was)."""
    names = list(tasks)
    same = [name for name in names if _entry_shape(previous.get(name))
            and previous[name].get("digest") == board_digests[name]]
    changed = [name for name in names if name not in same]
    entries: dict[str, dict] = {}
    tests: dict = {}
    digests = None

    def rendered(name: str) -> dict:
        nonlocal digests
        if digests is None:
            digests = RunDigests()
            digests.learn(run_digests)
        return render(name, digests, tests.pop(name, None))

    def reuse_unchanged() -> dict[str, bool]:
        return {name: reuse(previous[name], board_digests[name], out_dir, tmp, known) for name in same}

    if len(changed) == 1:
        # a rebuild's changed board: its tests (scipy's import, its new rows) begin at once in
        # a fork, beside the unchanged boards' linking and its own rows (a cold build, whose
        # boards all changed, tests each while a fork makes its rows: .forkmap)
        tests[changed[0]] = begin_tests(changed[0])
        forks.append(tests[changed[0]])
    # the unchanged boards' files are linked in a fork while the changed ones are rendered
    linking = start(reuse_unchanged) if same and changed else None
    forks.append(linking)
    reused = reuse_unchanged() if linking is None else {}
    for name in changed:
        entries[name] = rendered(name)
    if linking is not None:
        # a fork that died may have left some files: those boards are rendered over them
        reused = linking.result(died=lambda: dict.fromkeys(same, False))
    for name in same:
        entries[name] = previous[name] if reused.get(name) else rendered(name)
    return {name: entries[name] for name in names}, digests


def _reported(report: BuildReport, tasks: dict, entries: dict, previous: dict, out_dir: Path) -> tuple[dict, list]:
    """Each board's entry told in the report (pages, problems, notes, counts); the boards'
    entries for the manifest and their index lines, in the boards' order."""
    boards, summaries = {}, []
    without_run = 0
    for name, entry in entries.items():
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
    return boards, summaries


def _write_site_files(env, tmp: Path, summaries: list, boards: dict, with_explorer: bool, overview: tuple) -> None:
    """The index (with the overview sections: ``index_page.overview_sections``), the static files
    and the marker (with the manifest) into the staging folder."""
    write_text(tmp / "index.html", index_html(env, summaries, sections=overview))
    static = resources.files("statbench.leaderboard").joinpath("static")
    statics = ("leaderboard.css", "leaderboard.js", *(INDEX_STATIC if overview[1] else ()))  # no benchmark: no script
    for name in statics + (("explorer.css", "explorer.js") if with_explorer else ()):
        write_text(tmp / "static" / name, static.joinpath(name).read_text("utf-8"))
    write_text(tmp / MARKER, marker_text(boards))


@contextlib.contextmanager
def _no_gc_pauses():
    """Reading thousands of results allocates millions of objects, none in a cycle: the
    cycle collector's passes over an ever larger heap made 10,000 results quadratic. Rendering
    the boards (views, pages, the overview) makes no cycles of note either: at 10,000 results the
    collector's passes were ~1.3 s of a rebuild's CPU, and a build's peak memory is the same
    without them (645 MB)."""
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
