"""statbench grid: whole experiments as cells of ordinary runs (see docs/grid.md).

- :mod:`.spec`: the experiment file read strictly (or the ``--task``/``--model`` shortcut);
- :mod:`.cells`: the experiment expanded into cells, each holding one typed run request;
- :mod:`.executors`: where cells run (local workers, Ray, Slurm through :mod:`.slurm_task`),
  each cell one child process (:mod:`.cellrun`);
- :mod:`.done`: cells already done, told by content, skipped;
- :mod:`.tuning`: tuning searches resolved into tuned cells;
- :mod:`.experiment`: the run of a whole experiment and its summary, with the live board
  (:mod:`.board`) and the check against expected figures (:mod:`.check`);
- :mod:`.cli`: the ``grid`` command, registered as a plugin command.
"""
