"""Results JSON: validated against the schema shipped in the package, written atomically."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path

from .atomic import write_json
from .errors import DataFormatError


@cache
def results_schema() -> dict:
    return json.loads(resources.files("statbench").joinpath("schemas/results.schema.json").read_text("utf-8"))


def validation_errors(obj) -> list[str]:
    """Every schema violation, as 'path: message' strings (empty when valid)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(results_schema())
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def write_results(path, obj) -> None:
    """Validate, then write atomically; invalid results are never written."""
    errors = validation_errors(obj)
    if errors:
        raise ValueError("results do not match the schema: " + "; ".join(errors[:5]))
    write_json(path, obj)


def load_results(path) -> dict:
    """Read and validate a results file; errors name the file and the offending field."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None
    errors = validation_errors(obj)
    if errors:
        raise DataFormatError(path, "does not match the results schema: " + "; ".join(errors[:5]))
    return obj
