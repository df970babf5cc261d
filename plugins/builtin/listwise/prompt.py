"""RankZephyr's prompt (rank-llm 0.25.7 ``rank_zephyr_template.yaml``, single-turn
listwise), built as rank-llm's ``SingleTurnListwiseInferenceHandler.generate_prompt`` and
``RankListwiseOSLLM.create_prompt`` do: passages cut to ``300 * 20 / window`` words, then
shortened until the prompt plus the answer fit the context.

Deviation: rank-llm passes each passage through ``ftfy.fix_text``; statbench does the same
when ``ftfy`` is installed and otherwise applies Unicode NFC only (identical for clean text)."""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from statbench.api import StatbenchError

SYSTEM = "You are RankLLM, an intelligent assistant that can rank passages based on their relevancy to the query"
PREFIX = ("I will provide you with {num} passages, each indicated by a numerical identifier []. "
          "Rank the passages based on their relevance to the search query: {query}.\n")
BODY = "[{rank}] {candidate}\n"
SUFFIX = ("Search Query: {query}.\n"
          "Rank the {num} passages above based on their relevance to the search query. All the passages should be "
          "included and listed using identifiers, in descending order of relevance. The output format should be "
          "[] > [], e.g., [2] > [1], Answer concisely and directly and only respond with the ranking results, "
          "do not say any word or explain.")


def fix_text(text: str) -> str:
    try:
        from ftfy import fix_text as ftfy_fix
    except ImportError:
        return unicodedata.normalize("NFC", text)
    return ftfy_fix(text)


def replace_number(text: str) -> str:
    """``[3]`` inside a text becomes ``(3)``, so it cannot pass for an identifier."""
    return re.sub(r"\[(\d+)\]", r"(\1)", text)


def passage_content(text: str, title: str, max_length: float) -> str:
    """``_convert_doc_to_prompt_content``: title, clean-up, the first ``max_length`` words."""
    content = f"Title: {title} Content: {text}" if title else text
    content = fix_text(content.strip())
    content = " ".join(content.split()[: int(max_length)])
    return replace_number(content)


def messages(query: str, passages: list[tuple[str, str]], max_length: float) -> list[dict]:
    """Chat messages for one window; ``passages``: ``(text, title)`` in window order."""
    query = replace_number(query)
    num = len(passages)
    body = "".join(BODY.format(rank=i + 1, candidate=passage_content(text, title, max_length))
                   for i, (text, title) in enumerate(passages))
    user = PREFIX.format(num=num, query=query) + body + SUFFIX.format(num=num, query=query)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def answer_template(window: int) -> str:
    """The full answer for a window, ``[1] > [2] > ...`` (its token count bounds generation)."""
    return " > ".join(f"[{i + 1}]" for i in range(window))


def fitted(query: str, passages: list[tuple[str, str]], count_tokens: Callable[[list[dict]], int],
           context_size: int, output_tokens: int) -> tuple[list[dict], int]:
    """``create_prompt``: the messages with passages shortened until prompt + answer fit;
    ``(messages, prompt tokens)``."""
    size = len(passages)
    max_length = 300 * (20 / size)
    while True:
        built = messages(query, passages, max_length)
        tokens = count_tokens(built)
        if tokens <= context_size - output_tokens:
            return built, tokens
        if max_length <= 1:  # rank-llm would loop for ever here
            raise StatbenchError(f"a window of {size} passages does not fit context_size={context_size} tokens even "
                                 f"at one word per passage ({tokens} prompt + {output_tokens} answer tokens); "
                                 f"use a smaller window or a larger context_size")
        max_length -= max(1, (tokens - context_size + output_tokens) // (size * 4))
