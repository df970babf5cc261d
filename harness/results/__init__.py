"""The record of a run, typed end to end.

- :mod:`.record`: the types (:class:`~.record.Results`, its scores part
  :class:`~.record.RunScores` that scoring returns, :class:`~.record.EvaluatedRun` that
  ``statbench evaluate`` returns), and ``results.json`` read strictly, validated, written
  atomically;
- :mod:`.jsonrecord`: how a typed record reads and writes its JSON, and its JSON Schema
  generated from the type (``harness/schemas/results.schema.json`` is the committed copy;
  ``python -m statbench.results`` rewrites it);
- :mod:`.schema_check`: the check of a record against that schema, exact for the keywords
  it uses, without building jsonschema's validator on every write;
- :mod:`.fastjson`: a results file's text written by orjson, byte for byte the standard
  form, when every value is one it writes alike.

What makes a record publishable (board rows, ``compare`` inputs) is checked on these
types by :mod:`statbench.scoring.publishable`, which knows the measures' ranges.
"""
