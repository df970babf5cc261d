"""Results JSON: validated against the schema shipped in the package (validator compiled
once), written atomically, read strictly: no NaN/Infinity, no number that overflows, no
duplicate key, no unpaired surrogate. The leaderboard and ``compare`` read through here."""

from __future__ import annotations

import functools
import json
import math
import re
from functools import cache
from importlib import resources
from pathlib import Path

from .atomic import write_json
from .errors import DataFormatError

#: Schema violations shown in one error line.
SHOWN_PROBLEMS = 5

@cache
def results_schema() -> dict:
    return json.loads(resources.files("statbench").joinpath("schemas/results.schema.json").read_text("utf-8"))


class _Rejected(ValueError):
    """A JSON text that the standard parser accepts but results must not contain."""

    def __init__(self, message: str, field: str | None = None, constant: bool = False):
        super().__init__(message)
        self.field, self.constant = field, constant


def _reject_constant(token: str):
    raise _Rejected(f"{token} is not a number (NaN, Infinity and -Infinity are not JSON)", constant=True)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Rejected(f"the number {text[:40]} is too large (it overflows to infinity)")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 300:
        raise _Rejected(f"the number {text[:20]}… is too large ({len(text)} digits)")
    return int(text)


def _unique_keys(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Rejected(f"duplicate key {duplicate!r} in an object", duplicate)
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_CONSTANT_OUTSIDE_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.){0,200})"\s*:\s*\[?\s*$')


def _unpaired_surrogate(obj) -> str | None:
    """A string (or key) holding a lone UTF-16 surrogate: not text, cannot be written as UTF-8."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
    return None


def parse_strict(text: str):
    """``json.loads`` that refuses what results must not hold: NaN/Infinity tokens, numbers
    that overflow to infinity, duplicate keys, unpaired surrogates (raises ``ValueError``;
    ``json.JSONDecodeError`` for text that is not JSON at all)."""
    obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int,
                     object_pairs_hook=_unique_keys)
    if _SURROGATE_ESCAPE.search(text):
        bad = _unpaired_surrogate(obj)
        if bad is not None:
            raise _Rejected(f"the string {ascii(bad[:40])} holds an unpaired UTF-16 surrogate (not text)")
    return obj


def _locate_constant(text: str) -> tuple[int | None, str | None]:
    """(line, key) of the first NaN/Infinity token outside a string, to point at it."""
    for match in _CONSTANT_OUTSIDE_STRINGS.finditer(text):
        if match.group(1):
            before = text[: match.start()]
            key = _KEY_BEFORE.search(before[-400:])
            return before.count("\n") + 1, key.group(1) if key else None
    return None, None


@functools.cache
def _validator():
    """The results schema's validator, compiled once per process."""
    import jsonschema

    return jsonschema.Draft202012Validator(results_schema())


def schema_errors(obj) -> list[str]:
    """Every schema violation, as 'path: message' strings (empty when valid)."""
    errors = sorted(_validator().iter_errors(obj), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def read_results(path) -> dict:
    """Read a results file strictly and check it against the schema; a ``DataFormatError``
    names the file (and line or field where known) otherwise."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFormatError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    try:
        obj = parse_strict(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
    except _Rejected as exc:
        line, key = _locate_constant(text) if exc.constant else (None, exc.field)
        raise DataFormatError(path, f"not valid JSON: {exc}", line, key) from None
    except RecursionError:
        raise DataFormatError(path, "not valid JSON: nested too deeply") from None
    errors = schema_errors(obj)
    if errors:
        raise DataFormatError(path, "does not match the results schema: " + "; ".join(errors[:SHOWN_PROBLEMS]))
    return obj




def validation_errors(obj) -> list[str]:
    """Every schema violation, as 'path: message' strings (empty when valid)."""
    return schema_errors(obj)


def write_results(path, obj) -> None:
    """Validate, then write atomically; invalid results are never written."""
    errors = schema_errors(obj)
    if errors:
        raise ValueError("results do not match the schema: " + "; ".join(errors[:5]))
    write_json(path, obj)


def load_results(path) -> dict:
    """Read a results file strictly (:func:`read_results`) and check it against the schema."""
    return read_results(path)
