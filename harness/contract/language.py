"""A task's language tag reduced to what analysis depends on: its primary language.

Region and script subtags never change how statbench analyses text (Traditional and
Simplified Chinese both go through jieba, British and American English through one
stemmer), so models and parameters that depend on a language compare primary subtags."""

from __future__ import annotations

#: primary subtags that are another code for one language (Norwegian Bokmål / Nynorsk)
ALIASES = {"nb": "no", "nn": "no"}


def primary_language(tag: str) -> str:
    """The BCP 47 primary language subtag, lower case: ``en-GB`` -> ``en``, ``zh-Hans`` and
    ``zh_CN`` -> ``zh``, ``nb`` and ``nn`` -> ``no``."""
    primary = str(tag).strip().replace("_", "-").split("-", 1)[0].lower()
    return ALIASES.get(primary, primary)
