"""The structure of a Belgian statutory article, shared by BSARD and LLeQA (both from the
Maastricht Law & Tech Lab, both over Belgian codes in French).

Upstream gives an article's headings as one ``description`` string (headings joined by
commas, and headings themselves contain commas), or, in LLeQA's files, possibly as a list of
headings. Either becomes ``heading_path`` = code › book › title › chapter › section ..., plus
one field per heading level found (``book``, ``title``, ``chapter``...)."""

from __future__ import annotations

import re

#: Heading keyword -> field name, longest keywords first so "Sous-section" wins over "Section".
LEVELS = (
    ("sous-section", "subsection"), ("sous-titre", "subtitle"), ("partie", "part"), ("livre", "book"),
    ("titre", "title"), ("chapitre", "chapter"), ("section", "section"), ("paragraphe", "paragraph"),
)
_KEYWORDS = "|".join(re.escape(k) for k, _ in LEVELS)
# Split only before a heading keyword: headings themselves contain commas. The white space
# around a separator is stripped from the parts afterwards, not matched here: a leading
# ``\s*`` would be tried from every space of a long run of spaces (quadratic time).
_SPLIT = re.compile(rf"[,;|›](?=\s*(?:{_KEYWORDS})\b)", re.IGNORECASE)
PATH_SEPARATOR = " › "


def split_description(description: str) -> list[str]:
    """The headings of one ``description`` string, in order (empty parts left out)."""
    parts = [p.strip() for p in _SPLIT.split(description.strip())] if description.strip() else []
    return [p for p in parts if p]


def heading_fields(code: str, description: str | list[str]) -> dict[str, str]:
    """The structure of one article: ``heading_path`` plus ``book``, ``title``, ... when present.
    ``description`` is the headings as one string (split before each heading keyword) or as a
    list of headings (taken as they are, one heading each)."""
    if isinstance(description, str):
        parts = split_description(description)
    else:
        parts = [p.strip() for p in description if p.strip()]
    fields: dict[str, str] = {}
    for part in parts:
        lowered = part.lower()
        for keyword, name in LEVELS:
            if lowered.startswith(keyword) and name not in fields:
                fields[name] = part
                break
    fields["heading_path"] = PATH_SEPARATOR.join([p for p in (code.strip(), *parts) if p])
    return fields


def article_title(code: str, number: str) -> str:
    """``"Code civil, art. 213"``; the code or the number alone when the other is unknown."""
    return f"{code}, art. {number}" if code and number else code or number
