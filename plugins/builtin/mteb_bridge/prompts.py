"""The task metadata an MTEB model reads its prompts from.

MTEB models choose their prompt (instruction) by the task's name, then its type, then the
prompt type (query/document). An ``mteb:`` task passes MTEB's own metadata (its prompts are
exactly MTEB's); any other statbench task passes a retrieval task named ``statbench-NAME``
(no model registers prompts for it: the retrieval type's and the query/document ones apply)."""

from __future__ import annotations

from statbench.api import mteb_language, mteb_metadata


def task_metadata(task_name: str, language: str):
    """MTEB's metadata for the statbench task ``task_name``."""
    from mteb.abstasks.task_metadata import TaskMetadata

    own = mteb_metadata(task_name)
    if own is not None:
        return own
    return TaskMetadata(
        name=f"statbench-{task_name}", description=f"the statbench task {task_name}", reference=None,
        dataset={"path": f"statbench/{task_name}", "revision": "statbench"}, type="Retrieval", category="t2t",
        modalities=["text"], eval_splits=["test"], eval_langs=[mteb_language(language)], main_score="ndcg_at_10",
        date=None, domains=["Legal"], task_subtypes=[], license=None, annotations_creators=None, dialect=None,
        sample_creation=None, bibtex_citation=None)


def metadata_identity(metadata) -> dict:
    """What of the metadata a model's prompts may depend on (part of the encodings' key)."""
    return {"name": metadata.name, "type": metadata.type, "category": metadata.category,
            "langs": sorted(metadata.languages) if hasattr(metadata, "languages") else None,
            "prompt": metadata.prompt if isinstance(getattr(metadata, "prompt", None), (str, dict, type(None))) else
            str(metadata.prompt)}
