"""The contract between the core and its plugins: the records they exchange (documents,
queries, splits, a loaded task), a task's typed declaration (:class:`TaskInfo`), the base
classes of tasks, retrievers and rerankers, and declared parameters (:class:`Param`).

The bottom layer above :mod:`statbench.errors`: it imports nothing else of statbench.
"""
