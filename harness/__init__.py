"""statbench: a benchmark harness for statutory article retrieval.

The core (this package) knows nothing about particular models or tasks: those arrive as
plugins through the ``statbench`` entry-point group (see :mod:`statbench.registry.hookspecs`).
A plugin author imports from :mod:`statbench.api` only, and tests a plugin with
:mod:`statbench.testing`; both sit on top of the core, which never imports them.

The core's subpackages, bottom up: each imports only from those listed before it
(``tests/package_tree/test_layout.py`` reads this list and enforces it):

- :mod:`statbench.errors`: the one-line errors every layer raises;
- :mod:`statbench.contract`: the types shared by the core and every plugin (records,
  TaskInfo, Task, Retriever, Reranker, Measure, Param, Benchmark);
- :mod:`statbench.data`: strict readers and writers of the files (JSON, JSONL, CSV, TREC
  run and qrels files), atomic writes, digests, checksummed downloads, the lexical text
  analysis (data/analysis.py);
- :mod:`statbench.storage`: the cache folder, self-checking cache entries and every cache
  key, weight recipes and local weights;
- :mod:`statbench.terminal`: console logging and progress bars;
- :mod:`statbench.registry`: plugin discovery (pluggy), hook specifications, and the
  checks every plugin output passes;
- :mod:`statbench.loading`: task declarations (JSON, BEIR folders, ir_datasets),
  splits, frozen pools, the cached summary of a loaded task;
- :mod:`statbench.results`: the typed record of a run (results.json) and its generated
  JSON Schema;
- :mod:`statbench.scoring`: measures (ir-measures and custom), scoring, significance,
  comparison with published figures, publishability of a record;
- :mod:`statbench.run`: a run, its cache and its output set;
- :mod:`statbench.grid`: experiments as cells of runs, on local, Ray or Slurm executors;
- :mod:`statbench.commands`: the command line (core commands and command plugins).

Beside them: ``schemas/`` (the JSON Schemas of task definitions, results and experiment
files) and ``templates/`` (what ``statbench task new`` writes). Built-in models live in
:mod:`statbench.models`, tasks in :mod:`statbench.tasks`, the static site in
:mod:`statbench.leaderboard`; all three register as plugins do.
"""

__version__ = "0.1.0"

from statbench.registry.hookspecs import hookimpl  # noqa: E402  (re-exported for plugin authors)

__all__ = ["__version__", "hookimpl"]
