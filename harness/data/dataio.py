"""Readers for task data files that fail with the file, line and field at fault.

Every reader of input data (task files, run and qrels files, pools, sidecars) opens its
file through :func:`open_data` and decodes it through the same strict UTF-8 rules, so the
readers agree with each other:

- a file that cannot be read (missing, a directory, a broken or looping symbolic link, a
  name too long, permission denied, a pipe or device) is one :class:`DataFormatError`
  ``cannot read: <reason>``;
- bytes that are not UTF-8 are an error naming the line; a byte order mark at the start
  of the file is not data and is dropped; one at the start of a later line (files joined
  with ``cat``) is an error, since it would silently become part of an id;
- JSON must be standard: an object with the same key twice is an error (the last value
  would win silently);
- a value where a string or an id is required is checked by :func:`text_value` /
  :func:`id_value`: ``null``, booleans, lists and objects are refused; numbers are
  accepted as ids (converted with ``str``).

Emptiness is for the callers to judge (they know whether a file holds documents,
queries or judgements) and they refuse an empty file with one line naming it.

What a loader keeps, drops and refuses is one rule for every loader, at the end of this
module (:func:`record_id`, :func:`query_text`; grades: :func:`statbench.data.runfile.check_grade`).
"""

from __future__ import annotations

import csv
import errno
import json
import math
import os
import re
import stat
import unicodedata
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from statbench.errors import DataFormatError

#: the paths :func:`open_data` opened inside :func:`recording_opened` (``None`` outside)
_OPENED: ContextVar[list[Path] | None] = ContextVar("statbench_opened", default=None)


@contextmanager
def recording_opened() -> Iterator[list[Path]]:
    """Collect every path :func:`open_data` opens inside the block: what a task load really
    read, so that a cache keyed by the declared files is never written when a loader read
    a file the key does not cover."""
    opened: list[Path] = []
    token = _OPENED.set(opened)
    try:
        yield opened
    finally:
        _OPENED.reset(token)

BOM = "\ufeff"


@contextmanager
def _paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while a task loads or a reader builds many small
    containers (documents, their fields, tuples) that hold no reference cycle: each full
    collection would walk every object built so far, for nothing (a tenth of a large
    load's time). Cyclic garbage made meanwhile is collected once it resumes."""
    import gc

    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_REASONS = {
    errno.ENOENT: "file not found",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.ELOOP: "too many levels of symbolic links (a symbolic link loop?)",
    errno.ENAMETOOLONG: "file name too long",
}


def os_reason(exc: OSError) -> str:
    """A short lower-case reason for an OS error (``permission denied``, ``is a directory``...)."""
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    return (exc.strerror or str(exc) or type(exc).__name__).lower()


def _cannot_read(path: Path, reason: str, line: int | None = None) -> DataFormatError:
    return DataFormatError(path, f"cannot read: {reason}", line)


def open_data(path) -> BinaryIO:
    """Open an input file for reading, in binary: the one opener every reader uses.

    Only regular files are read (a pipe or device would block, or be consumed before the
    file's checksum is recorded). OS errors become one :class:`DataFormatError`."""
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        reason = os_reason(exc)
        if exc.errno == errno.ENOENT and os.path.islink(path):
            reason = "broken symbolic link (its target does not exist)"
        raise _cannot_read(path, reason) from None
    except ValueError as exc:  # e.g. an embedded NUL byte in the name
        raise _cannot_read(path, f"invalid file name ({exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise _cannot_read(path, "is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise _cannot_read(path, "not a regular file (a pipe, socket or device)")
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise _cannot_read(path, os_reason(exc)) from None
    recorded = _OPENED.get()
    if recorded is not None:
        recorded.append(path)
    return handle


def _utf8_error(path: Path, exc: UnicodeDecodeError, line: int, start_of_line: int, raw: bytes) -> DataFormatError:
    hint = ""
    if line == 1 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        hint = "; the file looks like UTF-16: save it as UTF-8"
    return DataFormatError(
        path, f"not valid UTF-8 ({exc.reason} at byte {exc.start - start_of_line} of the line){hint}", line
    )


def _decode_line(path: Path, raw: bytes, lineno: int) -> str:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _utf8_error(path, exc, lineno, 0, raw) from None
    if line.startswith(BOM):
        if lineno != 1:
            raise DataFormatError(
                path, "byte order mark (U+FEFF) at the start of a line other than the first: were files "
                "joined together? (it would become part of the first value)", lineno
            )
        line = line[1:]  # a leading BOM is not data
    if "\x00" in line:
        raise DataFormatError(path, f"NUL byte at character {line.index(chr(0))} of the line: a binary or UTF-16 "
                              "file? (text files must be UTF-8)", lineno)
    return line


#: bytes read at a time by the line readers (:func:`read_lines`, :func:`read_jsonl`)
_LINE_CHUNK = 4 << 20


def _line_blocks(path: Path) -> Iterator[tuple[int, list[str], bool]]:
    """The lines of a UTF-8 file a block at a time: ``(number of the block's first line, its
    lines without their "\\n", whether its last line is an unterminated end of file)``.

    A block of whole lines is decoded at once (UTF-8 cannot split a character at a newline,
    so this is what decoding line by line gives); a block holding anything irregular (bytes
    that are not UTF-8, a NUL, a byte order mark after the start of the file) is decoded
    line by line, which raises the error on its own line, as it always did."""
    with open_data(path) as handle:
        lineno, first, pending = 1, True, []
        while True:
            try:
                raw = handle.read(_LINE_CHUNK)
            except OSError as exc:
                raise _cannot_read(path, os_reason(exc), lineno) from None
            if raw:
                cut = raw.rfind(b"\n") + 1
                if not cut:  # no line ends in this chunk: a long line, read on
                    pending.append(raw)
                    continue
                if pending:
                    pending.append(raw)
                    raw = b"".join(pending)
                    cut = raw.rfind(b"\n") + 1
                block, tail, pending = raw[:cut - 1], False, [raw[cut:]] if cut < len(raw) else []
            elif pending:
                block, tail, pending = b"".join(pending), True, []
            else:
                return
            lines, error = _decode_block(path, block, lineno, first, tail)
            yield lineno, lines, tail
            if error is not None:  # raised once the lines before it are used, as line by line
                raise error
            lineno += len(lines)
            first = False
            if tail:
                return


def _decode_block(path: Path, block: bytes, lineno: int, first: bool,
                  tail: bool) -> tuple[list[str], DataFormatError | None]:
    """The block's lines, and the error of its first irregular line (the lines before it
    are given)."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\x00" not in text and "\n\ufeff" not in text:
        if not text.startswith(BOM):
            return text.split("\n"), None
        if first:  # a leading byte order mark is not data
            return text[1:].split("\n"), None
    # irregular: line by line, each with its line end, for the exact error and line
    lines: list[str] = []
    raws = block.split(b"\n")
    for i, raw in enumerate(raws):
        last = tail and i == len(raws) - 1
        try:
            line = _decode_line(path, raw if last else raw + b"\n", lineno + i)
        except DataFormatError as exc:
            return lines, exc
        lines.append(line if last else line[:-1])
    return lines, None


def read_lines(path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` of a UTF-8 text file. A bad byte is reported on its own
    line (a text-mode file decodes in blocks and would fail lines too early). Lines keep
    their line ending."""
    path = Path(path)
    for start, lines, tail in _line_blocks(path):
        last = len(lines) - 1 if tail else -1
        for i, line in enumerate(lines):
            yield start + i, line if i == last else line + "\n"


def read_text(path) -> str:
    """The whole file as text, with the same rules as :func:`read_lines` (errors name the line)."""
    path = Path(path)
    with open_data(path) as handle:
        try:
            raw = handle.read()
        except OSError as exc:
            raise _cannot_read(path, os_reason(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise _utf8_error(path, exc, line, raw.rfind(b"\n", 0, exc.start) + 1, raw) from None
    del raw
    if text.startswith(BOM):
        text = text[1:]
    if "\n\ufeff" in text:
        line = text.count("\n", 0, text.index("\n\ufeff")) + 2
        raise DataFormatError(
            path, "byte order mark (U+FEFF) at the start of a line other than the first: were files "
            "joined together? (it would become part of the first value)", line
        )
    if "\x00" in text:
        at = text.index("\x00")
        raise DataFormatError(path, f"NUL byte at character {at - text.rfind(chr(10), 0, at) - 1} of the line: a "
                              "binary or UTF-16 file? (text files must be UTF-8)", text.count("\n", 0, at) + 1)
    return text


def read_nonblank_lines(path) -> Iterator[tuple[int, str]]:
    """:func:`read_lines` without blank lines, stripped of surrounding whitespace."""
    for lineno, line in read_lines(path):
        if line.strip():
            yield lineno, line.strip()


# --- JSON -----------------------------------------------------------------------------

class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def json_type(value: Any) -> str:
    """How a JSON value is named in error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _parse_json(path: Path, text: str, start: int, base_line: int = 0, value_line: int | None = None):
    """Decode one JSON value of ``text`` at ``start``; returns ``(value, end)``. ``base_line``
    is added to the decoder's line numbers (``text`` may be one line of a file);
    ``value_line`` is the line reported for errors the decoder cannot place."""
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"invalid JSON ({exc.msg} at column {exc.colno})", exc.lineno + base_line) from None
    except _DuplicateKey as exc:
        raise DataFormatError(path, f"key {exc.key!r} appears twice in one JSON object (the last value would "
                              "win silently)", value_line, exc.key) from None
    except RecursionError:
        raise DataFormatError(path, "JSON nested too deeply", value_line) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise DataFormatError(path, f"invalid JSON value ({exc})", value_line) from None


_WS = re.compile(r"[ \t\n\r]*")


def _loads(path: Path, text: str, line: int | None = None):
    """One whole JSON document, or one JSONL line when ``line`` is given (surrounding
    whitespace allowed, nothing else)."""
    start = _WS.match(text).end()
    if start == len(text):
        raise DataFormatError(path, "file is empty (no JSON value)" if line is None else "empty JSON", line)
    value, end = _parse_json(path, text, start, base_line=(line or 1) - 1, value_line=line)
    end = _WS.match(text, end).end()
    if end != len(text):
        at = line if line is not None else text.count("\n", 0, end) + 1
        raise DataFormatError(path, "invalid JSON (extra data after the value)", at)
    return value


def read_json(path, expect: type | None = None):
    """A whole JSON file; ``expect`` (``dict`` or ``list``) checks the top-level type."""
    path = Path(path)
    value = _loads(path, read_text(path))
    if expect is not None and not isinstance(value, expect):
        wanted = "an object" if expect is dict else "a list" if expect is list else expect.__name__
        raise DataFormatError(path, f"expected {wanted} at the top level, found {json_type(value)}", 1)
    return value


#: bytes read at a time by :func:`read_json_list`
JSON_LIST_CHUNK = 8 << 20


class _Irregular(Exception):
    """Something the streaming reader leaves to the whole-file reader to report exactly."""


def read_json_list(path, what: str = "items") -> Iterator[tuple[int, int, Any]]:
    """Yield ``(index, line number, item)`` for each item of a file holding one JSON list,
    so that errors can name the line an item starts on (``json.load`` would not tell).

    The file is read incrementally (a few megabytes at a time, one item decoded after the
    other), so a large corpus costs its items, not its text as well. Anything irregular
    (bytes that are not UTF-8, a NUL, a byte order mark after the start, invalid JSON) is
    reported by reading the whole file the strict way: the same one-line errors, with the
    same line numbers, as :func:`read_text` and the decoder give."""
    path = Path(path)
    try:
        yield from _stream_json_list(path, what)
    except _Irregular as irregular:
        done = irregular.args[0]
        for index, line, item in _whole_json_list(path, what):
            if index >= done:  # items already given are not given twice
                yield index, line, item
        raise DataFormatError(path, "changed while it was read (read it again)") from None


class _Window:
    """The decoded text of a file, read on demand: ``text[pos:]`` is what is left of what
    was read; ``line_at(pos)`` the line number of a position (newlines counted once)."""

    def __init__(self, handle, path: Path, done):
        import codecs

        self.handle, self.path, self.done = handle, path, done
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.text, self.eof, self.first, self.last = "", False, True, ""
        self._line, self._counted = 1, 0

    def more(self, keep: int) -> int:
        """Read on, keeping ``text[keep:]``; returns how far positions moved back (0 at the end)."""
        if self.eof:
            return -1
        try:
            raw = self.handle.read(JSON_LIST_CHUNK)
        except OSError as exc:
            raise _cannot_read(self.path, os_reason(exc)) from None
        try:
            chunk = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError:
            raise _Irregular(self.done()) from None
        self.eof = not raw
        if self.first and chunk:
            chunk, self.first = (chunk[1:] if chunk.startswith(BOM) else chunk), False
        if "\x00" in chunk or "\n\ufeff" in chunk or (self.last == "\n" and chunk.startswith(BOM)):
            raise _Irregular(self.done())
        if chunk:
            self.last = chunk[-1]
        self.line_at(keep)
        self.text = self.text[keep:] + chunk
        self._counted = 0
        return keep

    def line_at(self, pos: int) -> int:
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def skip_space(self, pos: int) -> int:
        """The next position after white space, reading on as needed."""
        while True:
            pos = _WS.match(self.text, pos).end()
            if pos < len(self.text):
                return pos
            moved = self.more(pos)
            if moved < 0:
                return pos
            pos -= moved


def _stream_json_list(path: Path, what: str) -> Iterator[tuple[int, int, Any]]:
    index = 0
    with open_data(path) as handle:
        window = _Window(handle, path, lambda: index)
        pos = window.skip_space(0)
        if pos == len(window.text) or window.text[pos] != "[":
            raise _Irregular(index)
        pos = window.skip_space(pos + 1)
        if window.text.startswith("]", pos):
            pos += 1
        else:
            while True:
                try:
                    item, end = _DECODER.raw_decode(window.text, pos)
                    # "12" of "123" decodes too: an item counts once what follows it is read
                    after = _WS.match(window.text, end).end()
                    cut = not window.eof and (after == len(window.text) or window.text[after] not in ",]")
                except (ValueError, RecursionError):
                    cut = True
                if cut:  # an item cut by the end of what was read: read on
                    moved = window.more(pos)
                    if moved < 0:
                        raise _Irregular(index) from None
                    pos -= moved
                    continue
                yield index, window.line_at(pos), item
                index += 1
                pos = window.skip_space(end)
                if window.text.startswith(",", pos):
                    pos = window.skip_space(pos + 1)
                    continue
                if window.text.startswith("]", pos):
                    pos += 1
                    break
                raise _Irregular(index)
        if window.skip_space(pos) < len(window.text):  # only white space may follow the list
            raise _Irregular(index)


def _whole_json_list(path: Path, what: str) -> Iterator[tuple[int, int, Any]]:
    """:func:`read_json_list` on the whole text at once: the reference for every error."""
    text = read_text(path)
    pos = _WS.match(text).end()
    if pos == len(text) or text[pos] != "[":
        value = _loads(path, text)  # reports an empty file or invalid JSON as such
        raise DataFormatError(path, f"expected a JSON list of {what}, found {json_type(value)}", 1)
    line, counted = 1, 0
    pos = _WS.match(text, pos + 1).end()
    index = 0
    if text.startswith("]", pos):
        end = _WS.match(text, pos + 1).end()
        if end != len(text):
            raise DataFormatError(path, "invalid JSON (extra data after the value)", text.count("\n", 0, end) + 1)
        return
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        item, pos = _parse_json(path, text, pos, value_line=line)
        yield index, line, item
        index += 1
        pos = _WS.match(text, pos).end()
        if text.startswith(",", pos):
            pos = _WS.match(text, pos + 1).end()
            continue
        if text.startswith("]", pos):
            end = _WS.match(text, pos + 1).end()
            if end != len(text):
                raise DataFormatError(path, "invalid JSON (extra data after the value)", text.count("\n", 0, end) + 1)
            return
        at = text.count("\n", 0, pos) + 1
        raise DataFormatError(path, "invalid JSON (expected ',' or ']' after a list item)"
                              if pos < len(text) else "invalid JSON (the list is not closed: truncated file?)", at)


def item_error(path, index: int, line: int, message: str, field: str | None = None) -> DataFormatError:
    """An error in item ``index`` of a file holding one JSON list: the message names the
    item and the line it starts on (``error.line`` holds the line too)."""
    error = DataFormatError(path, f"item {index}: {message} (the item starts on line {line})", field=field)
    error.line = line
    return error


def require_fields(path: Path, lineno: int, obj: dict, fields) -> None:
    for name in fields:
        if name not in obj:
            raise DataFormatError(path, "missing field", lineno, name)


def read_jsonl(path, required=()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, object)``; a truncated or non-object line is an error.

    A line holding exactly one JSON object is decoded by the C scanner directly; any other
    line (surrounding white space, an error) goes through the whole-value reader, which
    reports exactly what is wrong."""
    path = Path(path)
    scan = _DECODER.scan_once
    for start, lines, _ in _line_blocks(path):
        for lineno, line in enumerate(lines, start):
            try:
                obj, end = scan(line, 0)
                plain = end == len(line) and type(obj) is dict
            except Exception:  # noqa: BLE001 - the whole-value reader below says what is wrong
                plain = False
            if not plain:
                if not line.strip():
                    continue
                obj = _loads(path, line.rstrip("\r\n"), line=lineno)
                if not isinstance(obj, dict):
                    raise DataFormatError(path, f"expected a JSON object, found {type(obj).__name__}", lineno)
            for name in required:
                if name not in obj:
                    raise DataFormatError(path, "missing field", lineno, name)
            yield lineno, obj


# --- field values ---------------------------------------------------------------------

def id_value(path, value, line: int | None, field: str, message_prefix: str = "") -> str:
    """An id field as a string: strings as they are, numbers converted with ``str``;
    ``null``, booleans, lists and objects are refused (``str`` would make ids of them)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(value)
    found = "a non-finite number" if isinstance(value, float) else json_type(value)
    raise DataFormatError(path, f"{message_prefix}expected a string or number id, found {found}", line, field)


def text_value(path, value, line: int | None, field: str, message_prefix: str = "") -> str:
    """A text field: must be a string (``null`` would be indexed as the text "None")."""
    if isinstance(value, str):
        return value
    raise DataFormatError(path, f"{message_prefix}expected a string, found {json_type(value)}", line, field)


# --- CSV ------------------------------------------------------------------------------

def read_csv(path, required=()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, row)`` from a CSV with a header naming ``required`` columns.

    Every row must have as many fields as the header (a short row would otherwise read
    as empty values); blank lines are skipped; a file without any line yields nothing
    (the caller refuses it as empty). The line number is that of the row's last line."""
    path = Path(path)
    lines = read_lines(path)
    skipped = 0
    first = None
    for lineno, line in lines:
        if line.strip():
            first = (lineno, line)
            break
        skipped = lineno
    if first is None:
        return

    def source():
        yield first[1]
        for _, line in lines:
            yield line

    reader = csv.reader(source())
    at = lambda: reader.line_num + skipped  # noqa: E731
    try:
        header = next(reader)
        if len(set(header)) != len(header):
            twice = sorted({h for h in header if header.count(h) > 1})
            raise DataFormatError(path, f"column(s) {', '.join(twice)} appear twice in the header", at())
        missing = [c for c in required if c not in header]
        if missing:
            raise DataFormatError(path, f"missing column(s) {', '.join(missing)} in header", at())
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip() and len(header) > 1):
                continue  # a blank line
            if len(row) != len(header):
                raise DataFormatError(path, f"expected {len(header)} fields as in the header, found {len(row)}", at())
            yield at(), dict(zip(header, row))
    except csv.Error as exc:
        raise DataFormatError(path, f"malformed CSV ({exc})", at()) from None


# --- what every loader keeps, drops and refuses -----------------------------------------
#
# One rule for every task loader (STARD, UK, BSARD, BEIR folders, scaffolded plugins):
# - an id (document, query, or one named by a judgement) is a string or number, stripped
#   of surrounding white space; an id that is then empty or holds white space (which TREC
#   files cannot hold) or an invisible character (a control or format character such as
#   U+200B ZERO WIDTH SPACE: "q1\u200b" would print as "q1" and never match it) is
#   refused, naming the file, the line, the field and the id;
# - a query whose text is empty, white space only, or invisible characters only (control
#   and format characters: U+200B, U+FEFF...) is dropped and said in ``dropped`` with the
#   file and the line (it could only ever score zero);
# - a document whose text is empty is kept: it is part of the corpus (its judgements
#   still count, and no model can find it by its text);
# - a relevance grade is an integer within int64 (:func:`statbench.data.runfile.check_grade`).


def record_id(path, value, line: int | None, field: str, what: str = "", message_prefix: str = "") -> str:
    """An id as every loader reads it (see above): ``what`` names its kind in the message
    ("document", "query"...). Errors name the file, the line, the field and the id."""
    text = id_value(path, value, line, field, message_prefix).strip()
    if not text or any(c.isspace() for c in text):
        kind = f"{what} id" if what else "id"
        problem = "is empty" if not text else "holds white space"
        raise DataFormatError(path, f"{message_prefix}{kind} {text!r} {problem}, which TREC files cannot hold",
                              line, field)
    hidden = invisible_character(text)
    if hidden is not None:
        kind = f"{what} id" if what else "id"
        raise DataFormatError(path, f"{message_prefix}{kind} {text!r} holds an invisible character ({hidden}): it "
                              "would print as another id and never match it", line, field)
    return text


def invisible_character(text: str) -> str | None:
    """The first control or format character of ``text``, as ``U+200B ZERO WIDTH SPACE``,
    or ``None``: an id holding one prints as another id and never matches it."""
    if text.isprintable():  # the fast path: printable text holds no control or format character
        return None
    hidden = next((c for c in text if _invisible(c)), None)
    return None if hidden is None else f"U+{ord(hidden):04X} {unicodedata.name(hidden, 'control character')}"


def _invisible(char: str) -> bool:
    """A control (Cc) or format (Cf) character: zero width, nothing printed."""
    return unicodedata.category(char) in ("Cc", "Cf")


def query_text(path, value, line: int | None, field: str, qid: str, dropped: list[str],
               where: str | None = None) -> str | None:
    """A query's text, stripped; ``None`` (and a note in ``dropped`` naming the file and
    ``where``, by default the line) when it is empty or white space only."""
    text = text_value(path, value, line, field).strip()
    if text and (text.isprintable() or not all(c.isspace() or _invisible(c) for c in text)):
        return text
    where = where if where is not None else f"line {line}"
    hidden = next((c for c in text if not c.isspace()), None)
    why = ("empty or white space only" if hidden is None else
           f"white space and invisible characters only, e.g. U+{ord(hidden):04X} {unicodedata.name(hidden, 'control')}")
    dropped.append(f"{Path(path).name} {where}: query {qid} has no text ({why}): dropped")
    return None
