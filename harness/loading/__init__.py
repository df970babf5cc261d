"""Tasks and their data.

- :mod:`.load`: the one way to load a task, with every guard (every command, the
  ir_datasets adapter and the test kit use it);
- declarations read from JSON (:mod:`.taskdef`), BEIR folders (:mod:`.beir`, the
  ``beir:PATH`` task resolver) and ir_datasets (:mod:`.irds`);
- :mod:`.splits`: seeded k-fold splits, and the splits a run evaluates;
- :mod:`.pools`: frozen candidate pools, read and verified;
- :mod:`.loadcache`: the cached summary of a loaded task, with what scoring needs of its
  queries (:mod:`.queryfacts`: lengths and laws, never shown to a model);
- :mod:`.data_notes`: notes on the data, said once;
- :mod:`.mteb_names`: what MTEB and statbench each call a measure, a language, a task, a
  model (the ``mteb:`` tasks, the ``mteb`` retriever and the export to MTEB's format share it).
"""
