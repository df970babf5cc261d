"""Readers for task data files that fail with the file, line and field at fault."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Iterator

from .errors import DataFormatError


def _open_text(path: Path):
    try:
        return open(path, encoding="utf-8-sig", newline="")  # a leading BOM is not data
    except FileNotFoundError:
        raise DataFormatError(path, "file not found") from None


def read_lines(path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` of a UTF-8 text file, decoded line by line so that a
    bad byte is reported on its own line (a text-mode file decodes in blocks and would
    fail lines too early)."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise DataFormatError(path, "file not found") from None
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataFormatError(path, f"not valid UTF-8 ({exc.reason} at byte {exc.start} of the line)", lineno) from None
            if lineno == 1:
                line = line.removeprefix("\ufeff")  # a leading BOM is not data
            yield lineno, line


def require_fields(path: Path, lineno: int, obj: dict, fields) -> None:
    for name in fields:
        if name not in obj:
            raise DataFormatError(path, "missing field", lineno, name)


def read_jsonl(path, required=()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, object)``; a truncated or non-object line is an error."""
    path = Path(path)
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc.msg} at column {exc.colno})", lineno) from None
        if not isinstance(obj, dict):
            raise DataFormatError(path, f"expected a JSON object, found {type(obj).__name__}", lineno)
        require_fields(path, lineno, obj, required)
        yield lineno, obj


def read_json(path):
    path = Path(path)
    with _open_text(path) as handle:
        try:
            return json.load(handle)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"invalid JSON ({exc.msg} at column {exc.colno})", exc.lineno) from None
        except UnicodeDecodeError as exc:
            raise DataFormatError(path, f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def read_csv(path, required=()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, row)`` from a CSV with a header naming ``required`` columns."""
    path = Path(path)
    reader = csv.DictReader(line for _, line in read_lines(path))
    try:
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise DataFormatError(path, f"missing column(s) {', '.join(missing)} in header", 1)
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise DataFormatError(path, f"malformed CSV ({exc})", reader.line_num) from None
