"""TREC run and qrels files.

A run line is ``qid Q0 docid rank score tag``. Evaluation tools do not agree on how to
order documents with equal scores (within ir-measures itself, the providers behind
``RR`` and ``P`` break ties in opposite directions), so the harness never writes a tie:
rankings are ordered by score, then doc id ascending, and a tied score is lowered to
the next representable float below its predecessor. Every evaluator then sees exactly
the order of the rank column, and re-scoring the file reproduces the harness's figures.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from pathlib import Path
from typing import Iterable, Mapping

from .api import Qrels, Ranking
from .atomic import atomic_open
from .dataio import read_lines
from .errors import DataFormatError


def order_ranking(ranking: Iterable[tuple[str, float]], depth: int | None = None) -> Ranking:
    """Sort by score (desc) then doc id (asc), cut to ``depth``, make scores strictly decreasing."""
    ordered = sorted(((str(d), float(s)) for d, s in ranking), key=lambda pair: (-pair[1], pair[0]))
    if depth is not None:
        ordered = ordered[:depth]
    strict: Ranking = []
    previous = math.inf
    for doc_id, score in ordered:
        if not math.isfinite(score):
            raise ValueError(f"non-finite score {score!r} for document {doc_id!r}")
        if score >= previous:
            score = math.nextafter(previous, -math.inf)
        strict.append((doc_id, score))
        previous = score
    return strict


def format_run(rankings: Mapping[str, Ranking], tag: str) -> Iterable[str]:
    tag = tag.replace(" ", "_") or "statbench"
    for qid in sorted(rankings):
        for rank, (doc_id, score) in enumerate(rankings[qid], start=1):
            yield f"{qid} Q0 {doc_id} {rank} {score!r} {tag}\n"


def write_run(path, rankings: Mapping[str, Ranking], tag: str) -> None:
    """Write an ordered run atomically (rankings must come from :func:`order_ranking`)."""
    with atomic_open(path) as handle:
        handle.writelines(format_run(rankings, tag))


_INTEGER = re.compile(r"[+-]?[0-9]+")


def read_run(path, *, allow_empty: bool = False) -> dict[str, Ranking]:
    """Read a TREC run (6 whitespace-separated columns); errors name the file, line and field.

    Strict, like every reader: the rank must be an integer and the score a finite number,
    a (query, document) pair may appear once, and a run without any line is an error
    (a broken or wrong file would otherwise score zero). ``allow_empty=True`` accepts an
    empty run: the harness's own verified split runs may be empty (a model that found
    nothing for any query of a split).
    Rankings keep the file's order.

    A file in the canonical layout (single spaces, ``\\n`` line ends, every rank an
    integer and every score a number: one regular-expression pass over the whole text) is
    split into columns at once; any other file, or one with a non-finite score or a
    repeated pair, is read line by line, which reports the first problem exactly."""
    path = Path(path)
    fast = _read_canonical_run(path)
    if fast is not None:
        if not fast and not allow_empty:
            raise DataFormatError(path, "no run lines (the file is empty or holds only blank lines)")
        return fast
    rankings: dict[str, Ranking] = {}
    first_line: dict[str, dict[str, int]] = {}
    for lineno, parts in _columns(path, 6, "qid Q0 docid rank score tag"):
        qid, _, doc_id, rank, score, _ = parts
        if not _INTEGER.fullmatch(rank):
            raise DataFormatError(path, f"rank {rank!r} is not an integer", lineno, "rank")
        if not _NUMBER.fullmatch(score):
            what = "is not a finite number" if score.strip("+-").lower() in ("nan", "inf", "infinity") else "is not a number"
            raise DataFormatError(path, f"score {score!r} {what}", lineno, "score")
        value = float(score)
        if not math.isfinite(value):
            raise DataFormatError(path, f"score {score!r} is not a finite number", lineno, "score")
        seen = first_line.setdefault(qid, {})
        if doc_id in seen:
            raise DataFormatError(path, f"query {qid!r} lists document {doc_id!r} twice (lines {seen[doc_id]} and "
                                  f"{lineno})", lineno, "docid")
        seen[doc_id] = lineno
        rankings.setdefault(qid, []).append((doc_id, value))
    if not rankings and not allow_empty:
        raise DataFormatError(path, "no run lines (the file is empty or holds only blank lines)")
    return rankings


def read_qrels(path, *, notes: list[str] | None = None) -> Qrels:
    """Read TREC qrels (``qid iter docid grade``); errors name the file, line and field.

    Grades must be integers. A (query, document) pair judged twice with different grades
    is an error naming both lines; a line repeating an earlier judgement exactly changes
    nothing and is kept once (said in ``notes`` when given, e.g. a task's dropped list).
    A file without any judgement is an error."""
    path = Path(path)
    qrels: Qrels = {}
    first_line: dict[tuple[str, str], int] = {}
    repeats: list[tuple[int, int]] = []
    for lineno, parts in _columns(path, 4, "qid iteration docid relevance"):
        qid, _, doc_id, grade = parts
        if not _INTEGER.fullmatch(grade):
            raise DataFormatError(path, f"relevance {grade!r} is not an integer", lineno, "relevance")
        value = int(grade)
        judged = qrels.setdefault(qid, {})
        if doc_id in judged:
            first = first_line[(qid, doc_id)]
            if judged[doc_id] != value:
                raise DataFormatError(
                    path, f"query {qid!r}, document {doc_id!r} is judged twice with different grades: "
                    f"{judged[doc_id]} on line {first}, {value} on line {lineno}", lineno, "relevance"
                )
            repeats.append((lineno, first))
            continue
        judged[doc_id] = value
        first_line[(qid, doc_id)] = lineno
    if not qrels:
        raise DataFormatError(path, "no judgements (the file is empty or holds only blank lines)")
    if repeats and notes is not None:
        shown = ", ".join(f"line {a} = line {b}" for a, b in repeats[:3])
        notes.append(f"{path.name}: {len(repeats)} line(s) repeat an earlier judgement exactly and were counted "
                     f"once (e.g. {shown})")
    return qrels


def format_qrels(qrels: Qrels) -> Iterable[str]:
    for qid in sorted(qrels):
        for doc_id in sorted(qrels[qid]):
            yield f"{qid} 0 {doc_id} {qrels[qid][doc_id]}\n"


def write_qrels(path, qrels: Qrels) -> None:
    with atomic_open(path) as handle:
        handle.writelines(format_qrels(qrels))


_SEPARATORS = re.compile(r"[ \t]+")
_COLUMN = r"[^\s]+"
#: a score as trec_eval reads one: ASCII digits, optional sign, point and exponent
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


_BOM_BYTES = "\ufeff".encode()
#: one line of a run in the canonical layout: six cells without white space, single spaces,
#: an ASCII integer rank, a score of the characters of :data:`_NUMBER`; groups: qid, doc, score
_CANONICAL_LINE = re.compile(r"^(\S+) \S+ (\S+) [0-9]+ ([0-9.eE+\-]+) \S+\n", re.MULTILINE)
_QID, _DOC, _SCORE_TEXT = operator.itemgetter(0), operator.itemgetter(1), operator.itemgetter(2)


def _read_canonical_run(path: Path) -> dict[str, Ranking] | None:
    """The rankings of a run in the canonical layout, or ``None`` (read it line by line).

    One regular-expression pass over the whole text (no numpy: its import alone costs more
    than reading a run): every line must be one match of :data:`_CANONICAL_LINE` (as many
    matches as lines, each anchored at a line's start and ending with its newline), every
    score must be one ``float`` reads as a finite number (with these characters, what
    ``float`` reads is exactly what :data:`_NUMBER` accepts), and no (query, document) pair
    may be repeated."""
    from .dataio import _paused_gc, open_data

    with open_data(path) as handle:  # one-line errors for anything but a readable file
        raw = handle.read()
    if not raw:
        return {}
    if not raw.endswith(b"\n") or b"\x00" in raw or _BOM_BYTES in raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    del raw
    with _paused_gc():  # hundreds of thousands of tuples, none of them in a cycle
        rows = _CANONICAL_LINE.findall(text)
        if len(rows) != text.count("\n"):
            return None
        del text
        try:
            scores = list(map(float, map(_SCORE_TEXT, rows)))
        except ValueError:
            return None
        if not all(map(math.isfinite, scores)):
            return None
        qids, docs = list(map(_QID, rows)), list(map(_DOC, rows))
        del rows
        pairs = list(zip(docs, scores))
        starts = [0, *itertools.compress(range(1, len(qids)), map(operator.ne, qids, qids[1:])), len(qids)]
        rankings: dict[str, Ranking] = {}
        for start, end in zip(starts, starts[1:]):  # one block of lines per query, in the file's order
            rankings.setdefault(qids[start], []).extend(pairs[start:end])
    if sum(len(set(map(_QID, ranking))) for ranking in rankings.values()) != len(docs):
        return None  # a pair listed twice: the line reader names both lines
    return rankings


def _columns(path: Path, expected: int, layout: str):
    """``(line number, columns)`` of each non-blank line (read like every other input file)."""
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        # columns are separated by spaces and tabs only, as trec_eval reads them; any other
        # white space (NBSP, vertical tab...) would split differently in other tools
        parts = _SEPARATORS.split(line.strip(" \t\r\n"))
        odd = next((c for part in parts for c in part if c.isspace()), None)
        if odd is not None:
            raise DataFormatError(path, f"white space {odd!r} inside a column (columns are separated by spaces "
                                  "and tabs only)", lineno)
        if len(parts) != expected:
            raise DataFormatError(path, f"expected {expected} columns ({layout}), found {len(parts)}", lineno)
        yield lineno, parts
