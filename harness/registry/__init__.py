"""The plugin system, bottom up: hook specifications (:mod:`.hookspecs`); the checks a
plugin's classes pass when registered (:mod:`.class_checks`); measure names, read against a
registry that is passed in (:mod:`.measure_names`); discovery of entry points and the
registry of named plugins and task name resolvers (:mod:`.plugins`); the checks a
declared benchmark passes once every plugin has registered (:mod:`.benchmarks`); and the
checks a plugin's output passes before anything uses it (:mod:`.checks`).

Nothing here imports loading, scoring or any model or task: ``--task beir:PATH`` is a
task resolver that :mod:`statbench.loading.beir` registers like any plugin.
"""
