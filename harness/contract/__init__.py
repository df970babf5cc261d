"""The contract between the core and its plugins: the types both sides use.

- :mod:`.records`: the records they exchange (documents, queries, splits, a loaded task's
  data, a measure as a task reports it);
- :mod:`.taskinfo`: what a task declares about itself (:class:`~.taskinfo.TaskInfo`), and
  :mod:`.task`: the base class of a task plugin;
- :mod:`.model`: the base classes of retrievers and rerankers, and the run context they get;
- :mod:`.measure`: the base class of a custom measure;
- :mod:`.params`: declared model parameters (:class:`~.params.Param`), validated in one place;
- :mod:`.language`: a language tag reduced to what text analysis depends on;
- :mod:`.benchmark`: a declared benchmark (named, versioned tasks, each with its primary measure).

The bottom layer above :mod:`statbench.errors`: it imports nothing else of statbench.
"""
