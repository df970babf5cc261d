"""What MTEB and statbench each call the same thing: a retrieval measure, a language, a
task, a model. Shared by the ``mteb:`` tasks (:mod:`statbench.tasks.mteb`), the ``mteb``
retriever (through :mod:`statbench.api`) and the export to MTEB's results format
(:mod:`statbench.leaderboard.export.mteb`).

MTEB scores retrieval with pytrec_eval (``ndcg_at_10`` is trec_eval's ``ndcg_cut.10``,
``map_at_100`` its ``map_cut.100``, ``recall_at_100`` its ``recall.100``, ``precision_at_10``
its ``P.10``) and its own reciprocal rank (``mrr_at_10``, relevance > 0). Those are the
ir-measures definitions ``nDCG@10``, ``AP@100``, ``R@100``, ``P@10`` and ``RR@10``: a
measure crosses the bridge by its *definition* (the ir-measures name), never by its label,
so a task's own nDCG (e.g. ukstat's exponential gain, a custom measure) is never exported
under MTEB's name.

``mteb`` is imported only inside the functions that use it (an optional extra)."""

from __future__ import annotations

import re

from statbench.contract.records import Measure

#: MTEB's retrieval metric prefix -> (ir-measures name prefix, statbench label prefix)
_PREFIXES = {"ndcg": ("nDCG", "nDCG"), "map": ("AP", "MAP"), "recall": ("R", "R"), "precision": ("P", "P"),
             "mrr": ("RR", "MRR")}
_MTEB = re.compile(r"^(ndcg|map|recall|precision|mrr)_at_([1-9][0-9]*)$")
_IR = re.compile(r"^(nDCG|AP|R|P|RR)@([1-9][0-9]*)$")
#: The cut-offs MTEB's retrieval evaluation reports (AbsTaskRetrieval.k_values).
MTEB_K_VALUES = (1, 3, 5, 10, 20, 100, 1000)
#: The measures an ``mteb:`` task reports besides its main score (MTEB reports them all).
TASK_MEASURES = ("ndcg_at_10", "ndcg_at_100", "map_at_100", "recall_at_10", "recall_at_100", "recall_at_1000",
                 "precision_at_10", "mrr_at_10")


def measure_from_mteb(name: str) -> Measure | None:
    """The statbench measure of an MTEB retrieval metric name (``None``: not one)."""
    match = _MTEB.match(name)
    if match is None:
        return None
    ir, label = _PREFIXES[match.group(1)]
    return Measure(f"{label}@{match.group(2)}", f"{ir}@{match.group(2)}")


def mteb_name(ir_measure: str) -> str | None:
    """MTEB's name of an ir-measures definition (``None``: MTEB has no such metric)."""
    match = _IR.match(ir_measure.strip())
    if match is None:
        return None
    prefix = next(m for m, (ir, _) in _PREFIXES.items() if ir == match.group(1))
    return f"{prefix}_at_{match.group(2)}"


#: ISO 639-3 -> ISO 639-1, for the languages statbench's analyzers know by their short code
_SHORT = {"eng": "en", "deu": "de", "fra": "fr", "zho": "zh", "ita": "it", "nld": "nl", "spa": "es", "por": "pt",
          "rus": "ru", "dan": "da", "swe": "sv", "nor": "no", "nob": "no", "tur": "tr", "fin": "fi", "kor": "ko",
          "vie": "vi", "jpn": "ja", "pol": "pl", "ara": "ar", "ces": "cs", "ell": "el", "hun": "hu"}


def language_of(mteb_language: str) -> str:
    """statbench's tag of an MTEB language (``eng-Latn`` -> ``en``, ``zho-Hans`` -> ``zh-Hans``)."""
    code, _, script = mteb_language.partition("-")
    short = _SHORT.get(code.lower(), code.lower())
    return f"{short}-{script}" if script and short == "zh" else short


def mteb_language(language: str) -> str:
    """MTEB's tag of a statbench language (``en`` -> ``eng-Latn``), for results written in its format."""
    code = language.split("-")[0].lower()
    long = next((k for k, v in _SHORT.items() if v == code), code)
    script = {"zh": "Hans", "ja": "Jpan", "ko": "Hang", "ru": "Cyrl", "ar": "Arab", "el": "Grek"}.get(code, "Latn")
    if code == "zh" and "-" in language:
        script = language.split("-", 1)[1]
    return f"{long}-{script}"


def mteb_metadata(task_name: str):
    """The metadata of the MTEB task behind ``mteb-NAME[-SUBSET]`` (``None``: not an ``mteb:`` task)."""
    if not task_name.startswith("mteb-"):
        return None
    import mteb

    rest = task_name[len("mteb-"):]
    candidates = [rest] + [rest[:i] for i in range(len(rest) - 1, 0, -1) if rest[i] == "-"]
    for name in candidates:
        try:
            return mteb.get_task(name).metadata
        except KeyError:
            continue
    return None


def registered_meta(name: str):
    """MTEB's registered ``ModelMeta`` of ``name`` (``None``: not in its registry)."""
    import mteb
    from mteb.models.get_model_meta import MODEL_REGISTRY

    renamed = getattr(mteb.models.get_model_meta, "_MODEL_RENAMES", {}).get(name, name)
    return MODEL_REGISTRY.get(renamed)
