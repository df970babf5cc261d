"""The prices a paid reranking is costed at: data, each with its unit, source and date.

A run's ``efficiency.api.cost_usd`` is the units the provider reported billing (Cohere:
``meta.billed_units.search_units``; Voyage: ``total_tokens``) times the price recorded here
for the model, and ``price`` says which price, so a cost can be recomputed when prices
change. A model missing from this table gets no cost (null), never a guessed one. Prices
were copied from the providers' public pricing pages on the date given; update an entry
(new date) rather than editing a figure in place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    usd: float
    #: units the ``usd`` buys (e.g. 1,000 search units, 1,000,000 tokens)
    per: int
    unit: str
    source: str
    as_of: str

    def cost(self, units: float) -> float:
        return units * self.usd / self.per

    def text(self) -> str:
        return f"USD {self.usd:g} per {self.per:,} {self.unit}s ({self.source}, as of {self.as_of})"


_COHERE = Price(2.00, 1_000, "search unit", "https://cohere.com/pricing", "2025-06")
_VOYAGE = Price(0.05, 1_000_000, "token", "https://docs.voyageai.com/docs/pricing", "2025-06")
_VOYAGE_LITE = Price(0.02, 1_000_000, "token", "https://docs.voyageai.com/docs/pricing", "2025-06")

#: (provider, model) -> price; a search unit is one query with up to 100 documents (Cohere's definition)
PRICES: dict[tuple[str, str], Price] = {
    ("Cohere", "rerank-v3.5"): _COHERE,
    ("Cohere", "rerank-english-v3.0"): _COHERE,
    ("Cohere", "rerank-multilingual-v3.0"): _COHERE,
    ("Voyage", "rerank-2.5"): _VOYAGE,
    ("Voyage", "rerank-2"): _VOYAGE,
    ("Voyage", "rerank-2.5-lite"): _VOYAGE_LITE,
    ("Voyage", "rerank-2-lite"): _VOYAGE_LITE,
}


def price_of(provider: str, model: str) -> Price | None:
    return PRICES.get((provider, model))
