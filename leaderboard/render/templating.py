"""The pages' shared means: the Jinja environment with its filters, JSON safe in a page, file-name
slugs, and writing a page's text."""

from __future__ import annotations

import json
import re
from pathlib import Path

from statbench.leaderboard.caches.fragments import signed
from statbench.scoring.significance import format_p


def json_for_html(obj) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&``
    (so ``</script>`` and ``<!--`` cannot occur), no raw U+2028/U+2029, and never NaN or
    Infinity (``ValueError``: neither is JSON, ``JSON.parse`` would fail on the page)."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, code)
    return text

def slug(name: str) -> str:
    """A file-name-safe form of a task name; names that had to change get a hash suffix."""
    import hashlib

    clean = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "task"
    if clean != name:
        clean += "-" + hashlib.sha256(name.encode()).hexdigest()[:6]
    return clean

def fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"

def budget_values(budget: str) -> str:
    """``preset=cpu-small`` -> ``cpu-small``: the badge shows the values, the details the keys."""
    return ", ".join(part.split("=", 1)[-1] for part in re.split(r"[,;]\s*", budget) if part)

def jinja_environment():
    import jinja2
    import markupsafe

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("statbench.leaderboard", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["fmt"] = fmt
    env.filters["json_for_html"] = lambda obj: markupsafe.Markup(json_for_html(obj))
    env.filters["budget_values"] = budget_values
    env.filters["signed"] = signed

    env.filters["p"] = format_p
    return env

def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
