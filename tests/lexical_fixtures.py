"""Shared by the tests/test_lexical_*.py files (no tests here): small English and French corpora and a RunContext factory."""

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
