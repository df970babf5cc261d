"""COLIEE Task 3 (statute law retrieval): the organisers' English files as they ship them.

- ``civil_code_en-1to724-2.txt``: the Civil Code, one line per heading (``Part I ...``,
  ``Chapter II ...``, ``Section 1 ...``, ``Subsection ...``, ``Division ...``), caption
  (``(Fundamental Principles)``, the line before its article) or article line
  (``Article 3-2  text``; following ``(2) ...`` / ``(i) ...`` lines continue it). Deleted
  articles (``Article 208  Deleted``, ``Articles 38 to 84  Deleted``) are not in the
  corpus: each such line is one item of ``TaskData.dropped``. A deleted range lies between
  the articles around it (it starts above every number read before it and ends below the
  next article; after the last article it names at most as many articles as the file
  holds), with numbers of at most 9 digits; anything else is refused with its line.
- ``riteval_<YEAR>_en.xml``, one per bar-exam year: ``<pair id=.. label=..>`` with ``<t1>``
  (the relevant articles' text, each starting a line with ``Article N``) and ``<t2>`` (the
  statement: the query). The relevant article numbers are read from ``<t1>``; the
  entailment label (Task 4's answer) is never read.

Each COLIEE test year (H30 = COLIEE 2019 ... R05 = COLIEE 2024) is a split and a protocol:
the year is tested, the year before it is the dev set and every earlier year the training
set; H18–H29 are training years only. The caption is part of the article's text (what
the organisers' ``<t1>`` shows); the task ``coliee-nocaptions`` is the same data without
them (the core has no task options, so the variant is a task of its own: its name is in
every result and its corpus checksum differs, so the two never share a board).
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import xml.parsers.expat
from dataclasses import dataclass
from pathlib import Path

from statbench import hookimpl
from statbench.api import Document, Query, Split, TaskData
from statbench.data.checksum import files_sha256
from statbench.data.dataio import query_text, read_text, record_id
from statbench.errors import DataFormatError
from statbench.loading.taskdef import DefinedTask
from statbench.storage.paths import data_root

CODE = "Civil Code"
CODE_FILE = "civil_code_en-1to724-2.txt"
PATH_SEPARATOR = " › "
#: Heading levels, outermost first: a heading resets every level below it.
LEVELS = ("part", "chapter", "section", "subsection", "division")
_NUMBER = r"\d+(?:-\d+)*"
_HEADING = re.compile(r"(Part|Chapter|Section|Subsection|Division)\s+(\S+)(?:\s+(.*))?")
_ARTICLE = re.compile(rf"Article\s+({_NUMBER})(?=[\s(]|$)\s*(.*)")
_DELETED = re.compile(rf"Articles?\s+({_NUMBER})(?:\s+(to|through|and)\s+({_NUMBER}))?\s+Deleted\.?")
#: A paragraph ``(2) ...`` or item ``(iv) ...`` marker: a line that starts with one is never a caption.
_MARKER = re.compile(r"\((?:\d+|[ivxlcdm]+)\)\s")
_CAPTION = re.compile(r"\(.*\)")
_YEAR = re.compile(r"riteval_([HR]\d{2})_en\.xml")
#: The relevant articles in ``<t1>``: a line starting with ``Article N``.
_T1_ARTICLE = re.compile(rf"Article\s+({_NUMBER})(?=[\s(]|$)")


#: digits of a number in a deleted range (the Code has about a thousand articles)
MAX_NUMBER_DIGITS = 9


class Deletions:
    """The articles the Code file says are deleted, each with the line saying so. A range
    (``Articles 38 to 84  Deleted``) is kept as a range, never expanded one number at a
    time, and is bounded by the articles around it (:func:`read_civil_code`): one line of
    the file can never make the reader allocate without bound."""

    def __init__(self):
        self.single: dict[str, int] = {}
        #: (first, last, line), in the file's order, which is increasing (:func:`_checked_range`)
        self.ranges: list[tuple[int, int, int]] = []

    def __getitem__(self, number: str) -> int:
        """The line deleting article ``number`` (``KeyError``: not deleted)."""
        if number in self.single:
            return self.single[number]
        if _plain(number) and self.ranges:
            value = int(number)
            at = bisect.bisect_right(self.ranges, (value, math.inf, math.inf)) - 1
            if at >= 0 and self.ranges[at][0] <= value <= self.ranges[at][1]:
                return self.ranges[at][2]
        raise KeyError(number)

    def __contains__(self, number: str) -> bool:
        try:
            self[number]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return len(self.single) + sum(last - first + 1 for first, last, _ in self.ranges)


def _plain(number: str) -> bool:
    """A number a range can hold: ASCII digits as ``str(int)`` writes them (``"5"``, not
    ``"05"`` nor ``"5-2"``), within :data:`MAX_NUMBER_DIGITS`."""
    return number.isascii() and number.isdigit() and len(number) <= MAX_NUMBER_DIGITS and str(int(number)) == number


def _main_number(number: str) -> int | None:
    """An article number's main part (``"3-2"`` -> 3); ``None`` when it is not a plain number."""
    head = number.split("-", 1)[0]
    return int(head) if _plain(head) else None


@dataclass(frozen=True)
class CivilCode:
    articles: dict[str, Document]
    #: article number -> the line saying it is deleted
    deleted: Deletions


def read_civil_code(path: Path, dropped: list[str], captions: bool = True) -> CivilCode:
    """The articles of the Civil Code file (see the module docstring), strictly: anything
    else than a title line, headings, captions, articles and their continuation lines is
    refused with its line."""
    lines = read_text(path).split("\n")
    articles: dict[str, Document] = {}
    first_line: dict[str, int] = {}
    deleted = Deletions()
    #: the highest (main) article number read so far, deleted or not, and its line
    highest: tuple[int, int] | None = None
    #: a deleted range whose upper end the next article bounds: (first, last, line)
    pending: tuple[int, int, int] | None = None
    headings: dict[str, str] = {}
    caption: tuple[int, str] | None = None
    current: dict | None = None  # the article being read: number, caption, lines, headings
    title_seen = False

    def finish():
        nonlocal current
        if current is not None:
            articles[current["number"]] = _article(current, captions)
            current = None

    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if caption is not None and not (_ARTICLE.fullmatch(line) or _DELETED.fullmatch(line)):
            raise DataFormatError(path, f"caption {caption[1]!r} (line {caption[0]}) is not followed by an article",
                                  lineno)
        deleted_match = _DELETED.fullmatch(line)
        if deleted_match:
            finish()
            numbers = _deleted_numbers(path, lineno, deleted_match)
            if isinstance(numbers, tuple):  # a range: bounded by the articles around it
                pending = _checked_range(path, lineno, numbers, highest, first_line, deleted)
                deleted.ranges.append((*numbers, lineno))
                count = numbers[1] - numbers[0] + 1
                highest = (numbers[1], lineno)
            else:
                for number in numbers:
                    if number in first_line or number in deleted:
                        raise DataFormatError(path, f"article {number} is deleted here but already read on line "
                                              f"{first_line.get(number) or deleted[number]}", lineno)
                    deleted.single[number] = lineno
                    highest = _higher(highest, number, lineno)
                count = len(numbers)
            what = " ".join(line.split()[:-1]) + (f" ({count} articles)" if count > 1 else "")
            with_caption = f", with its caption {caption[1]!r}" if caption else ""
            dropped.append(f"{path.name} line {lineno}: {what} deleted{with_caption}: not in the corpus")
            caption = None
            continue
        article = _ARTICLE.fullmatch(line)
        if article:
            finish()
            number, text = article.group(1), article.group(2).strip()
            if number in first_line or number in deleted:
                raise DataFormatError(path, f"duplicate article {number} (first on line "
                                      f"{first_line.get(number) or deleted[number]})", lineno)
            if pending is not None:
                _bounded_by_next(path, pending, number, lineno)
                pending = None
            highest = _higher(highest, number, lineno)
            if not text:
                raise DataFormatError(path, f"article {number} has no text", lineno)
            first_line[number] = lineno
            current = {"number": number, "caption": caption[1] if caption else "", "lines": [line],
                       "headings": dict(headings)}
            caption = None
            continue
        if line.startswith("Article"):
            raise DataFormatError(path, f"line starts with 'Article' but is not 'Article <number> <text>' nor a "
                                  f"deletion: {line[:60]!r}", lineno)
        heading = _HEADING.fullmatch(line)
        if heading:
            finish()
            level = heading.group(1).lower()
            headings[level] = line
            for below in LEVELS[LEVELS.index(level) + 1:]:
                headings.pop(below, None)
            continue
        if _CAPTION.fullmatch(line) and not _MARKER.match(line):
            finish()
            caption = (lineno, line)
            continue
        if current is not None:
            current["lines"].append(line)
            continue
        if not title_seen and not articles and not headings:
            title_seen = True  # "Civil Code (Part I, Part II and Part III)"
            continue
        raise DataFormatError(path, f"text outside any article: {line[:60]!r}", lineno)
    if caption is not None:
        raise DataFormatError(path, f"caption {caption[1]!r} is not followed by an article", caption[0])
    finish()
    if not articles:
        raise DataFormatError(path, "no articles (no line 'Article <number> <text>')")
    if pending is not None and pending[1] - pending[0] + 1 > len(articles):
        first, last, at = pending
        raise DataFormatError(path, f"the deleted range {first} to {last} follows the last article and names "
                              f"{last - first + 1} articles, more than the {len(articles)} articles of the file: a "
                              "range is bounded by the articles around it", at)
    return CivilCode(articles=articles, deleted=deleted)


def _higher(highest: tuple[int, int] | None, number: str, lineno: int) -> tuple[int, int] | None:
    main = _main_number(number)
    if main is None or (highest is not None and highest[0] >= main):
        return highest
    return main, lineno


def _checked_range(path: Path, lineno: int, numbers: tuple[int, int], highest: tuple[int, int] | None,
                   first_line: dict[str, int], deleted: Deletions) -> tuple[int, int, int]:
    """A deleted range must start above every article number read before it (the Code is
    in order); what is left to check once the next article is read (its upper end)."""
    first, last = numbers
    if highest is not None and first <= highest[0]:
        earlier = {**first_line, **deleted.single}
        hit = next((n for n in earlier if _plain(n) and first <= int(n) <= last), None)
        if hit is None:
            hit = next((str(max(a, first)) for a, b, _ in deleted.ranges if a <= last and first <= b), None)
        if hit is not None:
            line = earlier.get(hit) or deleted[hit]
            raise DataFormatError(path, f"article {hit} is deleted here but already read on line {line}", lineno)
        raise DataFormatError(path, f"the deleted range {first} to {last} does not follow the articles before it "
                              f"(article {highest[0]} on line {highest[1]}): a range is bounded by the articles "
                              "around it", lineno)
    return first, last, lineno


def _bounded_by_next(path: Path, pending: tuple[int, int, int], number: str, lineno: int) -> None:
    """The article after a deleted range must be numbered above it (one inside it is a
    duplicate, refused before this)."""
    first, last, at = pending
    main = _main_number(number)
    if main is None or main <= last:
        raise DataFormatError(path, f"the deleted range {first} to {last} (line {at}) is not below the next article, "
                              f"{number}: a range is bounded by the articles around it", lineno)


def _deleted_numbers(path: Path, lineno: int, match: re.Match) -> list[str] | tuple[int, int]:
    """The articles one deletion line names: a list of numbers, or ``(first, last)`` for a
    range (never expanded: see :class:`Deletions`)."""
    first, joiner, last = match.group(1), match.group(2), match.group(3)
    if joiner is None:
        return [first]
    if joiner == "and":
        return [first, last]
    if not (_plain(first) and _plain(last)) or int(last) <= int(first):
        too_long = max(len(first), len(last)) > MAX_NUMBER_DIGITS
        why = f" (more than {MAX_NUMBER_DIGITS} digits)" if too_long else ""
        shown = [n if len(n) <= 20 else f"{n[:12]}... ({len(n)} digits)" for n in (first, last)]
        raise DataFormatError(path, f"cannot read the deleted range {shown[0]} {joiner} {shown[1]}{why}", lineno)
    return int(first), int(last)


def _article(current: dict, captions: bool) -> Document:
    number, caption, headings = current["number"], current["caption"], current["headings"]
    body = "\n".join(current["lines"])
    fields = {"code": CODE, "article_no": number, **{level: headings[level] for level in LEVELS if level in headings},
              "heading_path": PATH_SEPARATOR.join([CODE, *(headings[level] for level in LEVELS if level in headings)])}
    if captions and caption:
        fields["caption"] = caption
    text = f"{caption}\n{body}" if captions and caption else body
    return Document(id=number, text=text, title=f"{CODE}, Article {number}", fields=fields)


class _Pairs:
    """The pairs of one ``riteval`` file, read with expat so that every error names its line.
    Only ``dataset`` > ``pair`` > ``t1``/``t2`` is accepted; a DOCTYPE (and with it any
    entity declaration) is refused."""

    def __init__(self, path: Path):
        self.path = path
        self.pairs: list[dict] = []
        self.stack: list[str] = []
        self.parser = xml.parsers.expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.text
        self.parser.StartDoctypeDeclHandler = self.doctype

    def error(self, message: str, field: str | None = None) -> DataFormatError:
        return DataFormatError(self.path, message, self.parser.CurrentLineNumber, field)

    def doctype(self, *_):
        raise self.error("a DOCTYPE is not accepted in a riteval file")

    def start(self, name: str, attrs: dict):
        parent = self.stack[-1] if self.stack else None
        allowed = {None: ("dataset",), "dataset": ("pair",), "pair": ("t1", "t2")}.get(parent, ())
        if name not in allowed:
            where = f"inside <{parent}>" if parent else "as the root"
            raise self.error(f"unexpected element <{name}> {where} (expected {' or '.join(f'<{a}>' for a in allowed) or 'text'})")
        if name == "pair":
            if "id" not in attrs:
                raise self.error("<pair> without an id attribute", "id")
            self.pairs.append({"id": record_id(self.path, attrs["id"], self.parser.CurrentLineNumber, "id", "pair"),
                               "line": self.parser.CurrentLineNumber})
        elif name in ("t1", "t2"):
            pair = self.pairs[-1]
            if name in pair:
                raise self.error(f"pair {pair['id']!r} has two <{name}> elements", name)
            pair[name] = ""
            pair[f"{name}_line"] = self.parser.CurrentLineNumber
        self.stack.append(name)

    def end(self, name: str):
        self.stack.pop()
        if name == "pair":
            pair = self.pairs[-1]
            for part in ("t1", "t2"):
                if part not in pair:
                    raise self.error(f"pair {pair['id']!r} has no <{part}>", part)

    def text(self, data: str):
        where = self.stack[-1] if self.stack else None
        if where in ("t1", "t2"):
            self.pairs[-1][where] += data
        elif data.strip():
            raise self.error(f"text outside <t1>/<t2>: {data.strip()[:40]!r}")

    def read(self) -> list[dict]:
        try:
            self.parser.Parse(read_text(self.path), True)
        except xml.parsers.expat.ExpatError as exc:
            raise DataFormatError(self.path, f"malformed XML: {xml.parsers.expat.ErrorString(exc.code)}",
                                  exc.lineno) from None
        if not self.pairs:
            raise DataFormatError(self.path, "no <pair> (the file holds no statement)")
        return self.pairs


def relevant_articles(path: Path, pair: dict, code: CivilCode) -> dict[str, int]:
    """The articles a pair's ``<t1>`` quotes: every line starting with ``Article N``. An
    article that is not in the Civil Code file (unknown, or deleted there) is refused."""
    numbers: list[str] = []
    for offset, line in enumerate(pair["t1"].split("\n")):
        match = _T1_ARTICLE.match(line.strip())
        if match:
            numbers.append(match.group(1))
            lineno = pair["t1_line"] + offset
            if match.group(1) not in code.articles:
                why = (f"deleted (line {code.deleted[match.group(1)]} of {CODE_FILE})" if match.group(1) in code.deleted
                       else f"not in {CODE_FILE}")
                raise DataFormatError(path, f"pair {pair['id']!r}: relevant article {match.group(1)} is {why}",
                                      lineno, "t1")
    if not numbers:
        raise DataFormatError(path, f"pair {pair['id']!r}: <t1> names no article (no line 'Article <number> ...')",
                              pair["t1_line"], "t1")
    return {number: 1 for number in numbers}  # an article quoted twice is one judgement


def year_order(year: str) -> tuple[int, int]:
    """Heisei years before Reiwa years (H30 is 2018, R01 is 2019)."""
    return (0 if year[0] == "H" else 1, int(year[1:]))


class Coliee(DefinedTask):
    definition_file = "coliee.json"
    #: whether an article's caption is part of its text (``coliee-nocaptions`` drops them)
    captions = True

    def load(self, data_dir: Path | None, log: logging.Logger) -> TaskData:
        files = self.locate_files(data_dir, log)
        dropped: list[str] = []
        code = read_civil_code(files[CODE_FILE], dropped, captions=self.captions)
        years = sorted((_YEAR.fullmatch(name).group(1) for name in files if _YEAR.fullmatch(name)), key=year_order)
        tested = {p.splits[0] for p in self.task_info().protocols}
        queries: dict[str, Query] = {}
        qrels: dict[str, dict[str, int]] = {}
        by_year: dict[str, list[str]] = {}
        seen: dict[str, str] = {}
        for year in years:
            path = files[f"riteval_{year}_en.xml"]
            by_year[year] = []
            for pair in _Pairs(path).read():
                qid = pair["id"]
                if qid in seen:
                    raise DataFormatError(path, f"duplicate pair id {qid!r} (first in {seen[qid]})", pair["line"], "id")
                seen[qid] = f"{path.name} line {pair['line']}"
                judged = relevant_articles(path, pair, code)
                text = query_text(path, pair["t2"], pair["t2_line"], "t2", qid, dropped)
                if text is None:
                    continue
                queries[qid] = Query(id=qid, text=" ".join(text.split()), fields={"year": year})
                qrels[qid] = judged
                by_year[year].append(qid)
        splits = []
        for i, year in enumerate(years):
            if year not in tested:
                continue  # a training year only
            dev = tuple(by_year[years[i - 1]]) if i >= 1 else ()
            train = tuple(q for earlier in years[:max(i - 1, 0)] for q in by_year[earlier])
            splits.append(Split(name=year, test=tuple(by_year[year]), train=train, dev=dev))
        default = self.task_info().default_protocol
        return TaskData(
            corpus=code.articles,
            queries=queries,
            qrels=qrels,
            splits=[s for s in splits if s.name == default],
            extra_splits=[s for s in splits if s.name != default],
            files=list(files.values()),
            checksum=files_sha256(files.values()),
            dropped=dropped,
        )


class ColieeNoCaptions(Coliee):
    """The same files and splits, each article without its caption."""

    name = "coliee-nocaptions"
    description = "COLIEE Task 3: Japanese Civil Code (English), bar-exam statements; article captions dropped"
    captions = False

    def data_folder(self, data_dir: Path | None) -> Path:
        """The files of ``coliee``: one copy serves both."""
        return Path(data_dir) if data_dir is not None else data_root() / "coliee"


@hookimpl
def register_tasks(register):
    register(Coliee)
    register(ColieeNoCaptions)
