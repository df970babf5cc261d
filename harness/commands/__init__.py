"""The command line.

- :mod:`.cli`: the ``statbench`` group and the core commands (run, evaluate, list, plugins,
  task); every other command arrives through the ``register_commands`` hook;
- the built-in commands registered as plugins are: :mod:`.compare` (``statbench compare``;
  what it does with its two inputs in :mod:`.comparison`), :mod:`.pool` (``statbench pool``)
  and :mod:`.models` (``statbench models``);
- what the commands share: terminal tables (:mod:`.tables`, benchmarks in
  :mod:`.benchmark_table`), tables for a paper (:mod:`.table_formats`: LaTeX, Markdown, CSV),
  refusing an option given twice (:mod:`.repeated_options`) and the task plugin that
  ``statbench task new`` writes (:mod:`.scaffold`).

A command module stays light to import (``statbench --help`` imports every one of them): a
command's body imports its workflow.
"""
