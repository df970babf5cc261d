"""``--param key=value`` parsing, coerced to the type of each parameter's default."""

from __future__ import annotations

from typing import Iterable, Mapping

from .errors import StatbenchError, UnknownNameError

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def parse_params(items: Iterable[str], defaults: Mapping[str, object], owner: str) -> dict:
    params: dict = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise StatbenchError(f"--param {item!r}: expected KEY=VALUE")
        if key not in defaults:
            raise UnknownNameError(f"parameter of {owner}", key, defaults)
        params[key] = _coerce(key, value.strip(), defaults[key], owner)
    return params


def _coerce(key: str, value: str, default, owner: str):
    try:
        if isinstance(default, bool):
            lowered = value.lower()
            if lowered not in _TRUE | _FALSE:
                raise ValueError
            return lowered in _TRUE
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise StatbenchError(
            f"--param {key}={value!r} for {owner}: expected a {type(default).__name__}"
        ) from None
    return value
