"""How ``leaderboard reproduce`` compares a re-run with the submission: **reproduced** when
the re-run's run file is byte-identical to the submitted one (its sha256 is the one
results.json records), or, for a model that declares itself non-deterministic
(``tolerance``, as the re-run records it from the installed code: results.json must record
the same), when every per-query figure is within that tolerance; else **not
reproduced**: the first query (the submission's order) and figure (the results' measure
order) that differ, and how many queries differ. A byte-identical run file whose claimed
per-query figures are not the re-run's (the same run scored on the same data) is not
reproduced either: the figures are not the run's."""

from __future__ import annotations

import gzip
from pathlib import Path

from statbench.data.checksum import file_sha256
from statbench.errors import StatbenchError
from statbench.leaderboard.repo.submission import gunzipped_sha256
from statbench.leaderboard.reproduce.run import NotAttempted
from statbench.leaderboard.reproduce.verdicts import Difference
from statbench.leaderboard.verify.verify import find_run_file
from statbench.results.record import Results

#: how a deterministic run is compared
RUN_FILE_IDENTICAL = "run file byte-identical"
#: two figures scored from one run on one data differ by float summation order at most
FIGURE_TOLERANCE = 1e-9

def declared_tolerance(results) -> float | None:
    """The absolute tolerance per per-query figure the run's models declare (the larger of
    the retriever's and the reranker's); None when both are deterministic."""
    declared = [getattr(r, "tolerance", None) for r in (results.model, results.reranker) if r is not None]
    declared = [float(t) for t in declared if t is not None]
    return max(declared) if declared else None


def compare_rerun(submission, output: Path):
    """(outcome, reason, compared, difference) of the re-run in ``output`` against the submission."""
    claimed = submission.results
    results_path = output / "results.json"
    if not results_path.is_file():
        return "not reproduced", "the re-run wrote no results.json", None, None
    try:
        rerun = Results.read(results_path)
    except StatbenchError as exc:
        return "not reproduced", f"the re-run's results.json does not read: {_first_line(exc)}", None, None
    run_path = find_run_file(results_path, rerun.run_file.path)
    if run_path is None or run_path.suffix == ".gz":
        return ("not reproduced", f"the re-run wrote no run file beside its results ({rerun.run_file.path!r})", None,
                None)
    if rerun.task.data_checksum != claimed.task.data_checksum:  # the data changed during the run
        raise NotAttempted("other data: the data changed while the submission was re-run")
    identical = file_sha256(run_path) == claimed.run_file.sha256
    if gunzipped_sha256(submission.run_path) != claimed.run_file.sha256:
        raise StatbenchError(f"{submission.run_path}: changed while it was reproduced")
    labels = claimed.labels
    exact = first_difference(claimed.per_query, rerun.per_query, labels, FIGURE_TOLERANCE)
    if identical:
        if exact is None:
            return "reproduced", None, RUN_FILE_IDENTICAL, None
        # the same run scored on the same data: the submission's figures are not its run's
        why = ("the run file is byte-identical, but the submission's figures are not the ones it scores: "
               + difference_text(exact))
        return "not reproduced", why, RUN_FILE_IDENTICAL, exact
    # the tolerance the models declare in the re-run (their installed code), never the one the
    # submitted results.json records: a submitter's word would reproduce any run within it
    tolerance, said = declared_tolerance(rerun), declared_tolerance(claimed)
    if said != tolerance:
        why = (f"results.json records {'no tolerance' if said is None else f'a tolerance of {said:g}'}, but the "
               f"re-run's models declare {'none (deterministic)' if tolerance is None else f'{tolerance:g}'}, and "
               "the run files differ")
        return "not reproduced", why, RUN_FILE_IDENTICAL if tolerance is None else \
            f"per-query figures within {tolerance:g}", exact
    if tolerance is not None:
        compared = f"per-query figures within {tolerance:g}"
        difference = first_difference(claimed.per_query, rerun.per_query, labels, tolerance)
        if difference is None:
            return "reproduced", None, compared, None
        return "not reproduced", difference_text(difference), compared, difference
    if exact is None:
        line = _first_differing_line(submission.run_path, run_path)
        why = f"the re-run's run file differs from the submitted one from line {line} on (no per-query figure differs)"
        return "not reproduced", why, RUN_FILE_IDENTICAL, Difference(None, None, None, None, 0)
    return "not reproduced", difference_text(exact), RUN_FILE_IDENTICAL, exact


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def first_difference(claimed: dict, rerun: dict, labels: list[str], tolerance: float) -> Difference | None:
    """The first query (the submission's order, then the re-run's) whose figures differ by
    more than ``tolerance`` (a query on one side only differs), its first such figure (in
    the order of ``labels``), and how many queries differ."""
    first, count = None, 0
    order = {label: i for i, label in reversed(list(enumerate(labels)))}
    for qid in [*claimed, *(q for q in rerun if q not in claimed)]:
        a, b = claimed.get(qid), rerun.get(qid)
        if a is None or b is None:
            count += 1
            if first is None:
                measure = next(iter(sorted((a or b), key=lambda m: (order.get(m, len(order)), m))), None)
                first = (qid, measure, None if a is None else a.get(measure), None if b is None else b.get(measure))
            continue
        differing = [m for m in sorted({*a, *b}, key=lambda m: (order.get(m, len(order)), m))
                     if m not in a or m not in b or abs(a[m] - b[m]) > tolerance]
        if differing:
            count += 1
            if first is None:
                m = differing[0]
                first = (qid, m, a.get(m), b.get(m))
    if first is None:
        return None
    return Difference(query=first[0], measure=first[1], claimed=first[2], rerun=first[3], queries=count)


def difference_text(d: Difference) -> str:
    """``query Q, R@5 claimed 0.5, re-run 0.25; 3 queries differ``."""
    claimed = "absent" if d.claimed is None else repr(d.claimed)
    rerun = "absent" if d.rerun is None else repr(d.rerun)
    many = f"{d.queries} quer{'y differs' if d.queries == 1 else 'ies differ'}"
    return f"query {d.query}, {d.measure} claimed {claimed}, re-run {rerun}; {many}"


def _first_differing_line(submitted_gz: Path, rerun: Path) -> int:
    with gzip.open(submitted_gz, "rt", encoding="utf-8", newline="") as a, \
            open(rerun, encoding="utf-8", newline="") as b:
        number = 0
        for number, (x, y) in enumerate(zip(a, b), start=1):
            if x != y:
                return number
        return number + 1
