"""The bridge to MTEB's models (the ``mteb`` package, docs/models-mteb.md).

- :mod:`.retriever`: any MTEB model as the ``mteb`` retriever, loaded as MTEB loads it
  (:mod:`.loading`), with the task metadata it reads its prompts from (:mod:`.prompts`).

MTEB's tasks are statbench tasks in the tasks wing (:mod:`statbench.tasks.mteb`, ``--task
mteb:NAME``); what both sides call a measure, a language, a task or a model is the core's
(:mod:`statbench.loading.mteb_names`), and so is reaching the hub (:mod:`statbench.storage.hub`),
both taken through :mod:`statbench.api`.

``mteb`` is imported only inside the functions that use it.
"""
