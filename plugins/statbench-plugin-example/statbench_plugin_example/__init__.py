"""An example statbench plugin, packaged as its own distribution.

One module named by an entry point in the ``statbench`` group (see ``pyproject.toml``)
implements the hooks; each hands it a ``register`` callable:

- ``register_retrievers``: ``charngram``, cosine over character n-grams (``models.py``);
- ``register_rerankers``: ``length-prior``, a toy reranker (``models.py``);
- ``register_tasks``: ``example-civil``, a COLIEE-like task on a made-up civil code, with
  its data shipped in the package (``civil.py`` + ``example_civil.json`` + ``data/``);
- ``register_measures``: ``Jaccard``, a custom measure (``measures.py``), used by the
  task as ``Jaccard@3`` and available to every task (``statbench evaluate``...).

Keep this module light: ``statbench --help`` imports it. Heavy imports (torch...) belong
inside the models' methods.
"""

from __future__ import annotations

from statbench.api import hookimpl

from .civil import ExampleCivil
from .measures import Jaccard
from .models import CharNgram, LengthPrior

__all__ = ["CharNgram", "ExampleCivil", "Jaccard", "LengthPrior"]


@hookimpl
def register_retrievers(register):
    register(CharNgram)


@hookimpl
def register_rerankers(register):
    register(LengthPrior)


@hookimpl
def register_tasks(register):
    register(ExampleCivil)


@hookimpl
def register_measures(register):
    register(Jaccard)
