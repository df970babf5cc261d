"""A submission's model card on the board (issue 34 §4): every field in the row's details,
all of them shown as declared (the submitter's word, never checked), and the training a row
declares: zero-shot, trained on the task's training split, or test queries seen.

The card is the ``model_card.json`` beside a row's ``results.json`` in a results repository
(:mod:`~statbench.leaderboard.repo.submission`), read strictly (its schema and its agreement with the result: the same
reader as ``leaderboard check``). A results file elsewhere has no card: nothing is shown. A
card that does not read is one warning on the row, and no card is shown."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from statbench.errors import StatbenchError
from statbench.leaderboard.repo.submission import CARD_FILE, card_problems, read_json_strict

ZERO_SHOT, TRAINED, SEEN = "zero-shot", "trained", "test queries seen"


@dataclass(frozen=True)
class Card:
    """What a row shows of its card: ``fields`` as (name, text) in the card's order."""

    fields: tuple[tuple[str, str], ...]
    test_queries_seen: bool
    training_data: str


def card_file(results_path: Path) -> Path | None:
    """The model card beside a results file, when there is one."""
    path = os.path.join(os.path.dirname(os.fspath(results_path)), CARD_FILE)
    return Path(path) if os.path.isfile(path) else None


def read_card(results_path: Path, results) -> tuple[Card | None, str | None]:
    """The row's card and None, or (None, the one line why the card beside it is not shown)."""
    path = card_file(results_path)
    if path is None:
        return None, None
    try:
        card = read_json_strict(path)
        problems = card_problems(card, results)
    except (OSError, StatbenchError) as exc:
        return None, f"its model card is not shown: {str(exc).splitlines()[0]}"
    if problems:
        return None, f"its model card ({path}) is not shown: {'; '.join(problems[:3])}"
    return card_view(card), None


def card_view(card: dict) -> Card:
    """What a row shows of a model card that read and agrees with its result."""
    model = card["model"]
    source = card["source"]
    weights = "local (not on a hub)" if source == "local" else f"{source['hub_id']} at revision {source['revision']}"
    fields = [("model", f"{model['name']} {model['version']}"), ("weights", weights),
              ("authors", ", ".join(card["authors"])), ("licence", card["licence"]),
              ("training data", card["training_data"]),
              ("test queries seen", "yes" if card["test_queries_seen"] else "no"),
              ("hardware", card["hardware"])]
    if card.get("n_parameters") is not None:
        fields.append(("parameters (trained weights)", f"{card['n_parameters']:,}"))
    if card.get("paper"):
        fields.append(("paper", card["paper"]))
    if card.get("budget"):
        fields.append(("budget", card["budget"]))
    return Card(tuple(fields), bool(card["test_queries_seen"]), card["training_data"])


def training(trained: bool | None, card: Card | None) -> str:
    """The training column: what the card declares over what the run records (test queries
    seen, then trained on the task's training split, then zero-shot); "" when neither says."""
    if card is not None and card.test_queries_seen:
        return SEEN
    if trained is None:
        return ""
    return TRAINED if trained else ZERO_SHOT
