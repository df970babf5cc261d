"""TREC run and qrels files.

A run line is ``qid Q0 docid rank score tag``. Evaluation tools do not agree on how to
order documents with equal scores: trec_eval (behind pytrec_eval, hence ``P``, ``R``,
``nDCG``, ``AP`` in ir-measures) reads a score as a 32-bit float (``atof`` into a C
``float``) and orders ties by doc id descending; ir-measures' own ``RR`` and ranx follow
other rules. Two scores that differ in double precision only are a tie for trec_eval.

So the harness never writes a tie, **at 32-bit precision**: :func:`order_ranking` orders
a ranking by score (double precision) descending, then doc id ascending (the harness's
order), and writes each score unchanged when its float32 rounding is strictly below the
previous written score's; otherwise (a tie, or a score float32 rounds to the previous
one) it writes the next float32 below the previous one, in rank order. Every score
written therefore parses, in double or in single precision, to a strictly decreasing
sequence: every evaluator sees exactly the order of the rank column, and re-scoring the
file reproduces the harness's figures. A lowered score is written with the shortest
decimal text that parses (through a double, as ``atof`` then a cast do) back to that
float32, and held in memory as exactly the double that text parses to, so the file and
the rankings in memory are the same numbers.

Scores beyond float32's range (magnitude above 3.4e38: a model may legitimately give
1e300) are not refused: the ranking is made in double precision from the model's own
scores, and only their written encoding must fit 32 bits, so such a score is written as
±3.4028235e38 (and lowered from there like a tie). The score column of a statbench run
encodes the rank order; it is the model's score wherever that encoding allows. Scores
that would have to go below the lowest float32 (several documents at or below -3.4e38,
e.g. a mask value ``torch.finfo(torch.float32).min``) are raised instead, as little as
needed: the last document is written -3.4028235e38 and each one above it at least the
next float32 up. Only a ranking longer than the number of float32 values is refused.

A foreign run (``statbench evaluate``) is put into one declared order instead,
trec_eval's own (:data:`TIE_ORDER`, :func:`order_as_trec_eval`): score descending
compared at float32, then doc id descending; every measure, ir-measures' and custom ones,
then sees the figures trec_eval would give.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import struct
from array import array
from pathlib import Path
from typing import Iterable, Mapping

from statbench.contract.records import Qrels, Ranking
from statbench.data.atomic import atomic_open
from statbench.data.dataio import _paused_gc, invisible_character, open_data, read_lines
from statbench.errors import DataFormatError, StatbenchError

#: the one order ``statbench evaluate`` scores a foreign run in (recorded as
#: ``results.json`` ``tie_order`` when the run holds ties at 32-bit precision)
TIE_ORDER = "score desc at float32, then doc id desc (trec_eval)"

FLOAT32_MAX = 3.4028234663852886e38
_FLOAT32, _UINT32 = struct.Struct("<f"), struct.Struct("<I")


def order_ranking(ranking: Iterable[tuple[str, float]], depth: int | None = None) -> Ranking:
    """The harness's order: score (double) desc, then doc id asc; cut to ``depth``; scores
    made strictly decreasing at float32 (see the module's docstring)."""
    pairs = [(str(d), float(s)) for d, s in ranking]
    if strictly_decreasing_at_float32(pairs):
        # already in this order with no tie, even at float32: sorting and
        # _strict_at_float32 would keep every pair as it is (a retriever's top-k usually is)
        return pairs[:depth] if depth is not None else pairs
    ordered = sorted(pairs, key=lambda pair: (-pair[1], pair[0]))
    if depth is not None:
        ordered = ordered[:depth]
    for doc_id, score in ordered:
        if not math.isfinite(score):
            raise ValueError(f"non-finite score {score!r} for document {doc_id!r}")
    return _strict_at_float32(ordered)


def order_as_trec_eval(ranking: Iterable[tuple[str, float]]) -> Ranking:
    """:data:`TIE_ORDER`: score desc compared as trec_eval reads it (a float32), then doc id
    desc (by code point, which is UTF-8 byte order, as ``strcmp``); scores then made strictly
    decreasing at float32, so that every evaluator keeps this order. Scores must be finite."""
    pairs = [(str(d), float(s)) for d, s in ranking]
    by_doc = sorted(pairs, key=operator.itemgetter(0), reverse=True)
    keys = array("f", (s for _, s in by_doc))  # overflow reads as ±inf, as a C cast gives
    ordered = [pair for _, pair in sorted(zip(keys, by_doc), key=lambda item: -item[0])]  # stable: doc desc kept
    return _strict_at_float32(ordered)


def strictly_decreasing_at_float32(ranking: Ranking) -> bool:
    """Whether every reader, double or single precision, sees the ranking's order with no tie."""
    singles = array("f", map(operator.itemgetter(1), ranking))
    return all(map(math.isfinite, singles)) and all(map(operator.gt, singles, singles[1:]))


def float32_ties(ranking: Ranking) -> bool:
    """Whether two scores of a ranking are equal once read as float32 (a tie for trec_eval)."""
    singles = array("f", map(operator.itemgetter(1), ranking))
    return len(set(singles)) < len(singles)


def _strict_at_float32(ordered: list[tuple[str, float]]) -> Ranking:
    """Keep each score whose float32 is finite and below the previous written one's; else
    write the largest float32 that is (see the module's docstring). Where that would go
    below the lowest float32 (scores at or below -3.4e38 after one written as -3.4028235e38,
    e.g. a mask value ``torch.finfo(torch.float32).min`` given to many documents), the
    ranking is encoded by :func:`_strict_from_both_ends` instead."""
    singles = array("f", map(operator.itemgetter(1), ordered))
    strict: Ranking = []
    previous = math.inf  # the float32 value of the previous written score
    for (doc_id, score), single in zip(ordered, singles):
        if single < previous and math.isfinite(single):
            strict.append((doc_id, score))
            previous = single
            continue
        single = max(-FLOAT32_MAX, min(FLOAT32_MAX, single))
        if single >= previous:
            single = _float32_below(previous)
            if single == -math.inf:
                return _strict_from_both_ends(ordered, singles)
        strict.append((doc_id, _shortest_float32_text_value(single)))
        previous = single
    return strict


def _ordinal(single: float) -> int:
    """The float32 ``single``'s place among all finite float32 values (monotone; -0.0 and
    0.0 share 0; consecutive float32 values have consecutive ordinals)."""
    bits = _UINT32.unpack(_FLOAT32.pack(single))[0]
    return -(bits & 0x7FFFFFFF) if bits & 0x80000000 else bits


def _from_ordinal(ordinal: int) -> float:
    return _FLOAT32.unpack(_UINT32.pack(ordinal if ordinal >= 0 else 0x80000000 | -ordinal))[0]


_ORDINAL_MAX = 0x7F7FFFFF  # _ordinal(FLOAT32_MAX); -_ORDINAL_MAX is -FLOAT32_MAX's


def _strict_from_both_ends(ordered: list[tuple[str, float]], singles) -> Ranking:
    """The same encoding as :func:`_strict_at_float32` (each score kept where its float32 is
    finite and below the previous one, else the next float32 below), except that scores
    which would go below the lowest float32 are raised instead, as little as needed: the
    last document gets -3.4028235e38 and each one above it at least the next float32 up.
    Only a ranking of more documents than there are float32 values cannot be encoded."""
    wanted = [_ordinal(max(-FLOAT32_MAX, min(FLOAT32_MAX, single))) for single in singles]
    placed = []
    previous = _ORDINAL_MAX + 1
    for ordinal in wanted:  # from the top: strictly decreasing, each as high as allowed
        previous = min(ordinal, previous - 1)
        placed.append(previous)
    floor = -_ORDINAL_MAX
    for i in range(len(placed) - 1, -1, -1):  # from the bottom: nothing below the lowest float32
        placed[i] = floor = max(placed[i], floor)
        floor += 1
    if placed and placed[0] > _ORDINAL_MAX:
        raise StatbenchError(f"a ranking of {len(placed)} documents cannot be written with strictly decreasing "
                             "32-bit scores (there are fewer float32 values)")
    strict: Ranking = []
    for (doc_id, score), single, ordinal, at in zip(ordered, singles, wanted, placed):
        if at == ordinal and math.isfinite(single):
            strict.append((doc_id, score))
        else:
            strict.append((doc_id, _shortest_float32_text_value(_from_ordinal(at))))
    return strict


def _float32_below(value: float) -> float:
    """The next float32 below the float32 ``value`` (+inf gives the largest finite one)."""
    if value == math.inf:
        return FLOAT32_MAX
    if value == 0:
        return -math.ldexp(1.0, -149)  # the negative subnormal closest to zero
    bits = _UINT32.unpack(_FLOAT32.pack(value))[0]
    return _FLOAT32.unpack(_UINT32.pack(bits - 1 if value > 0 else bits + 1))[0]


#: ``format`` specs of 1 to 9 significant digits, in the order :func:`_shortest_float32_text_value` tries them
_DIGITS = tuple(f".{digits}g" for digits in range(1, 10))
#: float32 value -> its shortest text's double (a ranking's lowered scores repeat across queries);
#: emptied when full. Zero never enters it: 0.0 and -0.0 are one key
_SHORTEST: dict[float, float] = {}
_SHORTEST_MAX = 1 << 15


def _shortest_float32_text_value(single: float) -> float:
    """The double that the shortest decimal text of the float32 ``single`` parses to, where
    that double rounds back to ``single`` (parsing a run, trec_eval goes text -> double ->
    float); 9 significant digits always do. ``repr`` of the result is that short text."""
    value = _SHORTEST.get(single) if single else None
    if value is None:
        value = _shortest_uncached(single)
        if single:
            if len(_SHORTEST) >= _SHORTEST_MAX:
                _SHORTEST.clear()
            _SHORTEST[single] = value
    return value


def _shortest_uncached(single: float) -> float:
    pack, unpack = _FLOAT32.pack, _FLOAT32.unpack
    for spec in _DIGITS:
        value = float(format(single, spec))
        try:
            if unpack(pack(value))[0] == single:  # pack rounds to float32, as array("f") does
                return value
        except OverflowError:  # rounds beyond float32's range (array("f") would give inf: no match)
            continue
    return single  # not reached: 9 digits identify every float32


def run_tag(tag: str) -> str:
    """The tag column as run files are written: one column (no space, tab or line break)."""
    return re.sub(r"\s", "_", tag) or "statbench"


def format_run(rankings: Mapping[str, Ranking], tag: str) -> Iterable[str]:
    tag = run_tag(tag)
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
        _check_ids(path, lineno, qid, doc_id)
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

    Grades must be integers within int64 (:func:`check_grade`). A (query, document) pair
    judged twice with different grades is an error naming both lines; a line repeating an
    earlier judgement exactly changes nothing and is kept once (said in ``notes`` when given, e.g. a task's dropped list).
    A file without any judgement is an error."""
    path = Path(path)
    qrels: Qrels = {}
    first_line: dict[tuple[str, str], int] = {}
    repeats: list[tuple[int, int]] = []
    for lineno, parts in _columns(path, 4, "qid iteration docid relevance"):
        qid, _, doc_id, grade = parts
        _check_ids(path, lineno, qid, doc_id)
        value = check_grade(grade, path, lineno)
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


def _check_ids(path: Path, lineno: int, qid: str, doc_id: str) -> None:
    """Refuse a query or document id holding an invisible character, as every task loader
    does (dataio.record_id): ``d1\\u200b`` prints as ``d1`` and would never match it."""
    for field, text in (("qid", qid), ("docid", doc_id)):
        hidden = invisible_character(text)
        if hidden is not None:
            raise DataFormatError(path, f"{field} {text!r} holds an invisible character ({hidden}): it would print "
                                  "as another id and never match it", lineno, field)


#: the grades ir-measures and pytrec_eval (trec_eval's ``long``) can hold
GRADE_MIN, GRADE_MAX = -(2 ** 63), 2 ** 63 - 1


def check_grade(text: str, path, lineno: int | None, field: str = "relevance") -> int:
    """A judgement's grade as an int, or :class:`DataFormatError` naming the file, line and
    field: it must be an integer within int64 (a larger one would be an internal error, or
    silently wrapped, in the evaluators; Python's ``int`` also refuses more than 4300 digits)."""
    if not _INTEGER.fullmatch(text):
        raise DataFormatError(path, f"relevance {text!r} is not an integer", lineno, field)
    value = int(text) if len(text) <= 40 else None
    if value is None or not GRADE_MIN <= value <= GRADE_MAX:
        shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
        raise DataFormatError(path, f"relevance {shown} is outside the 64-bit integer range that evaluators "
                              f"hold ({GRADE_MIN} to {GRADE_MAX})", lineno, field)
    return value


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
    if not all(map(str.isprintable, rankings)) or not all(map(str.isprintable, set(docs))):
        return None  # perhaps an id with an invisible character: the line reader names it
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
