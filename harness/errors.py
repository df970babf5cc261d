"""Errors the CLI turns into one clear line and exit code 2."""

from __future__ import annotations

from pathlib import Path


class StatbenchError(Exception):
    """A problem with the user's input: reported without a traceback, exit code 2."""

    exit_code = 2


class UnknownNameError(StatbenchError):
    """An unknown task, model or parameter name; the message lists the valid choices."""

    def __init__(self, kind: str, name: str, choices):
        self.kind, self.name, self.choices = kind, name, sorted(choices)
        shown = ", ".join(self.choices) if self.choices else "(none registered)"
        super().__init__(f"unknown {kind} {name!r}; valid choices: {shown}")


class DataFormatError(StatbenchError):
    """Malformed input data, located by file, line and field."""

    def __init__(self, path, message: str, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.message = Path(path), line, field, message
        where = str(self.path)
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class DownloadError(StatbenchError):
    """A file could not be fetched; the message says what to fetch and where to put it."""


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (a plugin's exception, reported without a traceback)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else f"{type(exc).__name__}: {exc!r}"
