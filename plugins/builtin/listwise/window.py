"""The sliding-window listwise reranking of castorini's rank-llm (0.25.7), ported line for line.

rank-llm cannot be imported without vLLM (``rank_llm.rerank.listwise/__init__`` imports
``vllm`` and torch at the top), so its pure-Python window logic lives here, with the
upstream function named beside each piece:

- :func:`windows` = ``ListwiseRankLLM.sliding_windows``: windows of ``window`` candidates
  walk from the bottom of the list to the top, ``stride`` at a time; the last one may be
  shorter, and a window that would only repeat the top ``stride`` is skipped.
- :func:`clean_response` = ``ListwiseInferenceHandler._clean_response``: text after
  ``</think>``; look-alike digits mapped to ASCII; everything but digits becomes a space.
- :func:`apply_permutation` = ``ListwiseRankLLM.receive_permutation``: 1-based ids to
  0-based, duplicates dropped (first kept), ids outside the window dropped, the window's
  missing candidates appended in their previous order; an unreadable answer leaves the
  window as it was.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

_LOOKALIKE_DIGITS = str.maketrans(
    "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉①②③④⑤⑥⑦⑧⑨❶❷❸❹❺❻❼❽❾０１２３４５６７８９🄀🄁🄂🄃🄄🄅🄆🄇🄈🄉",
    "0123456789012345678912345678912345678901234567890123456789",
)


def windows(n: int, window: int, stride: int, rank_start: int = 0, rank_end: int | None = None
            ) -> list[tuple[int, int]]:
    """The ``(start, end)`` slices rank-llm's ``sliding_windows`` reranks, in order."""
    rank_end = n if rank_end is None else min(rank_end, n)
    size = min(window, n)
    end_pos, start_pos = rank_end, rank_end - size
    out = []
    while end_pos > rank_start and start_pos + stride != rank_start:
        start_pos = max(start_pos, rank_start)
        out.append((start_pos, end_pos))
        end_pos -= stride
        start_pos -= stride
    return out


def clean_response(response: str, use_alpha: bool = False) -> str:
    """Digits of the answer separated by spaces (``_clean_response``)."""
    if "</think>" in response:
        response = response.split("</think>")[-1].strip()
    response = response.translate(_LOOKALIKE_DIGITS)
    if use_alpha:  # [A] > [B]: letters are 1-based ids, written without separators as upstream does
        return "".join(str(ord(c) - ord("A") + 1) if c.isalpha() else " " for c in response).strip()
    return "".join(c if c.isdigit() else " " for c in response).strip()


def parse_permutation(response: str, size: int) -> list[int]:
    """The window order an answer asks for (0-based, every position once) as
    ``receive_permutation`` builds it; the identity when the answer is unreadable."""
    original = list(range(size))
    try:
        order = [int(x) - 1 for x in clean_response(response).split()]
    except ValueError:  # rank-llm: any exception leaves the window unchanged
        return original
    seen: list[int] = []
    for item in order:
        if item not in seen:
            seen.append(item)
    kept = [i for i in seen if i in original]
    return kept + [i for i in original if i not in kept]


def apply_permutation(items: list[T], start: int, end: int, response: str) -> list[T]:
    """``items`` with ``items[start:end]`` reordered as ``response`` says."""
    cut = items[start:end]
    order = parse_permutation(response, len(cut))
    return items[:start] + [cut[i] for i in order] + items[end:]


def sliding_rerank(items: Sequence[T], window: int, stride: int, rank: Callable[[list[T], int, int], str],
                   rank_end: int | None = None) -> list[T]:
    """Rerank ``items`` window by window; ``rank(items, start, end)`` is the model's answer
    for the current order's slice."""
    current = list(items)
    for start, end in windows(len(current), window, stride, 0, rank_end):
        current = apply_permutation(current, start, end, rank(current, start, end))
    return current
