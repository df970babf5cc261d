"""What scoring needs of a loaded task to break its figures down by query, beyond the
judgements: each query's length and the law of each relevant article.

Taken once from the loaded task (corpus structure, query texts, judgements) and kept with
its cached summary, never handed to a model: models see ids, texts and structure only, and
the law of a query's *relevant* articles reveals relevance. The breakdowns themselves
(attributes, buckets, rules) are computed at scoring time by
:mod:`statbench.scoring.breakdowns`.
"""

from __future__ import annotations

from dataclasses import dataclass

from statbench.contract.records import Document, TaskData

#: the field holding an article's heading path, the law first (docs/task-authors.md)
HEADING_FIELD = "heading_path"
HEADING_SEPARATOR = "›"
#: languages written without spaces between words: a query's length is counted in characters
CHARACTER_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my"})


def length_unit(language: str) -> str:
    """``"characters"`` for a language written without word spaces (by its primary subtag:
    ``zh-Hans`` is ``zh``), else ``"words"``."""
    primary = str(language).strip().replace("_", "-").split("-", 1)[0].lower()
    return "characters" if primary in CHARACTER_LANGUAGES else "words"


def query_length(text: str, unit: str) -> int:
    """Characters other than white space, or white-space-separated words."""
    return len("".join(text.split())) if unit == "characters" else len(text.split())


def law_of(doc: Document) -> str | None:
    """The root of an article's heading path (its law or code); ``None`` without structure."""
    value = doc.fields.get(HEADING_FIELD, "") if doc.fields else ""
    for part in str(value).split(HEADING_SEPARATOR):
        if part.strip():
            return part.strip()
    return None


@dataclass(frozen=True)
class QueryFacts:
    """``lengths``: query id -> length in ``unit``; ``laws``: relevant article id -> its law
    (only articles judged relevant somewhere and placed in a heading path; empty when the
    task has no structure)."""

    unit: str
    lengths: dict[str, int]
    laws: dict[str, str]

    @classmethod
    def of(cls, data: TaskData, language: str) -> QueryFacts:
        unit = length_unit(language)
        relevant = {doc for judged in data.qrels.values() for doc, grade in judged.items() if grade > 0}
        laws = {}
        for doc_id in sorted(relevant):
            doc = data.corpus.get(doc_id)
            law = law_of(doc) if doc is not None else None
            if law is not None:
                laws[doc_id] = law
        return cls(unit=unit, lengths={q: query_length(query.text, unit) for q, query in data.queries.items()},
                   laws=laws)

    def to_json(self) -> dict:
        return {"unit": self.unit, "lengths": self.lengths, "laws": self.laws}

    @classmethod
    def from_json(cls, obj: dict) -> QueryFacts:
        if obj["unit"] not in ("characters", "words"):
            raise ValueError(f"unknown length unit {obj['unit']!r}")
        return cls(unit=obj["unit"], lengths={str(q): int(n) for q, n in obj["lengths"].items()},
                   laws={str(d): str(law) for d, law in obj["laws"].items()})
