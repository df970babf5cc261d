"""Shared by tests of the models (no tests here): small English and French corpora, a RunContext factory, hand-computed BM25 scores."""

from __future__ import annotations

import logging
from pathlib import Path

from statbench.api import Document, Query, RunContext

# Analysed (Snowball English, stop words removed):
#   d1 = tenant rent rent      d2 = landlord deposit      d3 = tenant deposit deposit deposit
EN_DOCS = [
    Document("d1", "The tenant rent rent."),
    Document("d2", "A landlord deposit."),
    Document("d3", "Tenant deposit, deposit and deposit."),
]

FR_DOCS = [
    Document("salaire", "L'employeur doit payer le salaire des travailleurs à la fin de chaque mois."),
    Document("loyer", "Le locataire paie le loyer au bailleur et l'entretien du logement loué."),
    Document("autorite", "Les enfants mineurs restent sous l'autorité de leurs parents jusqu'à la majorité."),
    Document("divorce", "Le divorce peut être prononcé par consentement mutuel des époux."),
]
FR_QUERIES = [
    Query("q-salaire", "Quand mon employeur doit-il me payer mon salaire ?"),
    Query("q-loyer", "Qui paie les loyers du logement ?"),
    Query("q-autorite", "Jusqu'à quel âge les enfants sont-ils sous l'autorité des parents ?"),
]


def context(tmp_path: Path, language: str = "en", checksum: str = "fixture", name: str = "model") -> RunContext:
    return RunContext(
        task_name="fixture", language=language, cache_dir=tmp_path / "models" / name, cache_root=tmp_path,
        data_checksum=checksum, log=logging.getLogger("statbench-test"),
    )


def top(ranking) -> list[str]:
    """Doc ids best first (ties by doc id, as the harness orders them)."""
    return [doc for doc, _ in sorted(ranking, key=lambda pair: (-pair[1], pair[0]))]


QUERY = [Query("q", "rent deposits")]


# BM25, bm25s "lucene" variant, k1=1.2 b=0.75, N=3, avgdl=3:
#   idf(rent) = ln(1 + 2.5/1.5), idf(deposit) = ln(1 + 1.5/2.5)
#   d1: idf(rent) * 2/(2 + 1.2*(0.25 + 0.75*3/3))
#   d2: idf(deposit) * 1/(1 + 1.2*(0.25 + 0.75*2/3))
#   d3: idf(deposit) * 3/(3 + 1.2*(0.25 + 0.75*4/3))
BM25_EXPECTED = {"d1": 0.613018283, "d3": 0.313335753, "d2": 0.247370331}
